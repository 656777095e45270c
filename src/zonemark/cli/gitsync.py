"""The git commands of the ``zonemark`` CLI (issue 19 §2): ``git setup``, ``sync``, and the commit each
write makes when its layer has ``--commit-writes`` (:func:`run_with_commits`, run by ``main``)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable

from .common import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, CliError, Command, one_line

#: the commands whose writes become one git commit each (when the layer has commit_writes)
WRITE_COMMANDS = frozenset({"append", "edit", "state", "propose", "apply", "reject", "undo", "add-container",
                            "new", "ingest", "import"})


def run_git_setup(args: argparse.Namespace) -> int:
    """``zonemark git setup LAYER``: print what it wrote, or that nothing needed writing."""
    from ..gitlayer.git import GitError
    from ..gitlayer.setup import setup_layer
    if args.commit_writes and args.no_commit_writes:
        raise CliError("zonemark git setup: give --commit-writes or --no-commit-writes, not both", EXIT_USAGE)
    commit_writes = True if args.commit_writes else False if args.no_commit_writes else None
    try:
        done = setup_layer(args.layer, init=args.init, commit_writes=commit_writes)
    except GitError as exc:
        raise CliError(one_line(f"zonemark git setup: {exc}"), EXIT_USAGE) from None
    except OSError as exc:
        raise CliError(one_line(f"zonemark git setup: {exc.strerror or exc}"), EXIT_USAGE) from None
    for change in done.changes:
        print(one_line(change))
    if not done.changes:
        print(one_line(f"{args.layer}: already set up; nothing written"))
    state = "on" if done.commit_writes else "off"
    print(one_line(f"commit-writes: {state} (each clone runs 'zonemark git setup' once: git does not carry config)"),
          file=sys.stderr)
    return EXIT_OK


def run_sync(args: argparse.Namespace) -> int:
    """``zonemark sync LAYER``: what came in and went out; exit 1 when a conflict needs the user."""
    from ..gitlayer.git import GitError
    from ..gitlayer.sync import SyncRefused, sync_layer
    try:
        r = sync_layer(args.layer)
    except SyncRefused as exc:
        raise CliError(one_line(f"zonemark sync: {exc}"), EXIT_FINDINGS) from None
    except GitError as exc:
        raise CliError(one_line(f"zonemark sync: {exc}"), EXIT_USAGE) from None
    print(one_line(f"{r.branch} <- {r.upstream}: {r.incoming} commit{'s' if r.incoming != 1 else ''} in"))
    for rel, address, added in r.entries:
        print(one_line(f"  {rel}: {address}: +{added} entr{'ies' if added != 1 else 'y'}"))
    counted = {rel for rel, _, _ in r.entries}
    for rel in r.changed:
        if rel not in counted:
            print(one_line(f"  {rel}: changed"))
    if r.conflicts:
        for rel in r.conflicts:
            print(one_line(f"  conflict: {rel}"))
        print(one_line(f"zonemark sync: {len(r.conflicts)} file{'s' if len(r.conflicts) != 1 else ''} in conflict; "
                    "resolve them (zonemark check shows the regions), git commit, then sync again "
                    "(or git merge --abort); nothing was pushed"), file=sys.stderr)
        return EXIT_FINDINGS
    if r.push_error is not None:
        print(one_line(f"zonemark sync: the push was refused ({r.push_error}); nothing was forced: sync again to "
                    "merge what arrived meanwhile"), file=sys.stderr)
        return EXIT_FINDINGS
    print(one_line(f"{r.branch} -> {r.upstream}: {r.outgoing} commit{'s' if r.outgoing != 1 else ''} out"
                + (" (pushed)" if r.pushed else "")))
    return EXIT_OK


def run_with_commits(args: argparse.Namespace, func: Callable[[argparse.Namespace], int]) -> int:
    """Run a command; for a write command in a layer with commit_writes, commit exactly the files it wrote
    (after the write returned; a commit that fails is one warning line and never undoes the write).  The
    layer's commit lock is held from before the write to its commit, so each write is its own commit."""
    if getattr(args, "command", None) not in WRITE_COMMANDS:
        return func(args)
    from ..gitlayer.commits import writes_to_commit
    with writes_to_commit(_where(args)) as seen:
        try:
            return func(args)
        finally:
            if seen:
                _commit(args, [w.path for w in seen], next((w.actor for w in seen if w.actor), ""))


def _where(args: argparse.Namespace) -> str:
    """The file or folder a write command names (its layer's settings decide about the commit)."""
    operands = getattr(args, "operands", None)
    if isinstance(operands, list) and operands and isinstance(operands[0], str):
        return operands[0]
    for name in ("file", "target", "into", "layer", "dir", "proposal"):
        value = getattr(args, name, None)
        if isinstance(value, str) and value and value != "-":
            return value
    return "."


def _commit(args: argparse.Namespace, paths: list[Any], actor: str) -> None:
    from .. import __version__
    from ..gitlayer.commits import commit_written
    actor = actor or getattr(args, "actor", "") or "ai"
    outcome = commit_written(paths, "zonemark: " + commit_subject(args, actor), actor=actor,
                             client=f"zonemark-cli {__version__}")
    if outcome is not None and outcome.warning:
        print(one_line(outcome.warning), file=sys.stderr)


def commit_subject(args: argparse.Namespace, actor: str) -> str:
    """The one-line message of a write's commit, from what the command was asked to do."""
    command = args.command
    file = os.path.basename(os.path.normpath(str(getattr(args, "file", None) or getattr(args, "target", "") or "")))
    if command == "append":
        return f"{actor} appended \"{args.title}\" to {args.container}"
    if command == "edit":
        return f"{actor} edited the zone at line {args.zone} of {file}"
    if command == "state":
        parts = [f"activated {','.join(args.activate)}" if args.activate else "",
                 f"deactivated {','.join(args.deactivate)}" if args.deactivate else ""]
        return f"{actor} {' and '.join(p for p in parts if p)} in {file}"
    if command == "propose":
        return f"{actor} proposed a change to {file}: {args.reason}"
    if command in ("apply", "reject"):
        return f"{actor} {'applied' if command == 'apply' else 'rejected'} proposal {args.proposal}"
    if command == "undo":
        return f"{actor} undid the last write of {file}"
    if command == "add-container":
        return f"{actor} added {args.path} to {file}"
    if command == "new":
        return f"{actor} created the {args.kind} {args.name}"
    if command == "ingest":
        return f"{actor} filed chat entries into {args.container}"
    if command == "import":
        return f"{actor or 'user'} imported chat entries into {args.container}"
    return f"{actor} ran {command}"



def _arguments_git(s: argparse.ArgumentParser) -> None:
    s.add_argument("action", choices=("setup",), metavar="setup", help="the one action: setup")
    s.add_argument("layer", metavar="LAYER")
    s.add_argument("--init", action="store_true", help="create a git repository in LAYER when it is in none")
    s.add_argument("--commit-writes", action="store_true",
                   help="make every zonemark write one git commit of exactly the files it wrote (kept in "
                        "LAYER/.zonemark/settings.json)")
    s.add_argument("--no-commit-writes", action="store_true", help="turn --commit-writes off again")


def _arguments_sync(y: argparse.ArgumentParser) -> None:
    y.add_argument("layer", metavar="LAYER")


COMMANDS: tuple[Command, ...] = (
    Command("git", "git setup LAYER: register the zone-aware merge driver in this clone, "
                   "*.md merge=zonemark, the ignores of .zonemark/ (once per clone; a "
                   "second run changes nothing)", _arguments_git, run_git_setup),
    Command("sync", "fetch, merge with the zonemark driver, push; exit 1 when a conflict "
                    "needs you (refuses a dirty tree, never force-pushes)", _arguments_sync, run_sync),
)


__all__ = ["WRITE_COMMANDS", "commit_subject", "COMMANDS", "run_git_setup", "run_sync", "run_with_commits"]
