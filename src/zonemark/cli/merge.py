"""``zonemark merge-file``: the zone-aware git merge driver, and its two-way form (issue 19 §1, §2).

Git runs it as ``zonemark merge-file %O %A %B %P``: BASE, OURS, THEIRS and the path.  The result is written
into OURS (atomically); exit 0 merged, 1 conflict regions remain, 2 it could not run.  A file with no type tag
on any side is merged by the machine's ``git merge-file``.  ``--two-way OURS THEIRS`` merges two copies without a
base (a sync folder's conflict copy) by the same rules.
"""

from __future__ import annotations

import argparse

from .common import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, CliError, Command

_PREFIX = "zonemark merge-file"


def _arguments_merge_file(m: argparse.ArgumentParser) -> None:
    m.add_argument("files", nargs="+", metavar="FILE",
                   help="BASE OURS THEIRS [PATH] (git's %%O %%A %%B %%P); with --two-way: OURS THEIRS")
    m.add_argument("--two-way", action="store_true", help="merge two copies without a base (OURS THEIRS)")
    m.add_argument("-L", dest="labels", action="append", default=None, metavar="LABEL",
                   help="a conflict marker label (ours, base, theirs, in that order; up to three)")


def run_merge_file(args: argparse.Namespace) -> int:
    """Read the inputs, plan the merge (``writer.plan_merge``), write OURS; one line says what happened."""
    from pathlib import Path

    from ..core.text import printable
    from ..writer.atomic import replace_file
    from ..writer.merge import MergeInputError, plan_merge
    files: list[str] = list(args.files)
    labels: list[str] = list(args.labels or [])
    if len(labels) > 3:
        raise CliError(f"{_PREFIX}: at most three -L labels (ours, base, theirs)", EXIT_USAGE)
    if args.two_way:
        if len(files) != 2:
            raise CliError(f"{_PREFIX}: --two-way takes two files, OURS THEIRS", EXIT_USAGE)
        base_name, ours_name, theirs_name, shown = None, files[0], files[1], files[0]
    else:
        if len(files) not in (3, 4):
            raise CliError(f"{_PREFIX}: give BASE OURS THEIRS [PATH] (or --two-way OURS THEIRS)", EXIT_USAGE)
        base_name, ours_name, theirs_name = files[0], files[1], files[2]
        shown = files[3] if len(files) == 4 else ours_name
    base = None if base_name is None else _read(base_name)
    ours, theirs = _read(ours_name), _read(theirs_name)
    try:
        plan = plan_merge(base, ours, theirs, labels=labels or ("ours", "base", "theirs"))
    except MergeInputError as exc:
        raise CliError(f"{_PREFIX}: {printable(shown)}: {exc}", EXIT_USAGE) from None
    if plan.outcome == "not_layer":
        return _git_merge_file(ours_name, base_name, theirs_name, labels)
    if plan.data != ours:
        try:
            replace_file(Path(ours_name), plan.data)
        except OSError as exc:
            raise CliError(f"{_PREFIX}: cannot write {printable(ours_name)}: {exc.strerror or exc}",
                           EXIT_USAGE) from None
    if plan.outcome == "merged":
        added = f", {plan.entries_added} journal entr{'y' if plan.entries_added == 1 else 'ies'} from theirs" \
            if plan.entries_added else ""
        print(f"{printable(shown)}: merged by zones{added}")
        return EXIT_OK
    regions = "; ".join(f"lines {c.line}-{c.end_line}: {c.what}" for c in plan.conflicts)
    why = f" ({plan.reason})" if plan.reason else ""
    n = len(plan.conflicts)
    print(f"{printable(shown)}: {n} conflict region{'s' if n != 1 else ''}{why}: {regions}")
    return EXIT_FINDINGS


def _read(name: str) -> bytes:
    from pathlib import Path

    from ..core.text import printable
    try:
        return Path(name).read_bytes()
    except FileNotFoundError:
        raise CliError(f"{_PREFIX}: no such file: {printable(name)}", EXIT_USAGE) from None
    except IsADirectoryError:
        raise CliError(f"{_PREFIX}: {printable(name)} is a folder; give a file", EXIT_USAGE) from None
    except OSError as exc:
        raise CliError(f"{_PREFIX}: cannot read {printable(name)}: {exc.strerror or exc}", EXIT_USAGE) from None


def _git_merge_file(ours: str, base: str | None, theirs: str, labels: list[str]) -> int:
    """A file that is not a layer file: git's own line merge, in place on OURS (an empty base for --two-way)."""
    import os
    import tempfile

    from ..gitlayer.git import GitError, run_git
    empty = None
    if base is None:
        fd, empty = tempfile.mkstemp(prefix="zonemark-merge-base-")
        os.close(fd)
        base = empty
    command = ["merge-file"]
    for label in labels:
        command += ["-L", label]
    try:
        done = run_git([*command, ours, base, theirs], os.getcwd())  # the one way git runs: a timeout, no prompt
    except (GitError, OSError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise CliError(f"{_PREFIX}: not a layer file, and git cannot run for its line merge: {reason}",
                       EXIT_USAGE) from None
    finally:
        if empty is not None:
            os.unlink(empty)
    if done.returncode < 0 or done.returncode > 127:
        message = (done.stderr.strip().splitlines() or ["git merge-file failed"])[0]
        raise CliError(f"{_PREFIX}: {message}", EXIT_USAGE)
    return EXIT_FINDINGS if done.returncode else EXIT_OK


COMMANDS: tuple[Command, ...] = (
    Command("merge-file", "merge three versions of a layer file by zones (a git merge driver)",
            _arguments_merge_file, run_merge_file,
            description="Merge THEIRS into OURS over BASE by permission zones and write the "
                        "result into OURS: exit 0 merged, 1 conflicts remain, 2 could not run."),
)
