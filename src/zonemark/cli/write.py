"""The write commands of the ``zonemark`` CLI (§5.2, §7.3.1): append, state, edit, propose, proposals, apply,
history, undo.

The actor is 'ai' unless ``--as user``.  A refused write exits 1 with one line on stderr
saying what was refused and why; a usage problem exits 2; in both cases the file is
untouched.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..writer import ACTOR_HELP, ACTORS, DATE_HELP  # the writer's own words (writer.rules imports nothing more)
from .common import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, CliError, Command, one_line, read_input

TYPE_CHECKING = False  # not imported from typing: a one-shot command imports only what it uses
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import TypeVar

    _T = TypeVar("_T")


def _actor(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--as", dest="actor", choices=ACTORS, default="ai", help=ACTOR_HELP)


def _read_stdin(what: str, *, required: bool = False) -> str:
    """The text piped on stdin ('' when none is piped and it is not ``required``)."""
    if not required and (sys.stdin is None or sys.stdin.isatty()):
        return ""
    return read_input(None, prefix="zonemark", what=what, missing=f"give the {what} with --content-file F or on "
                                                                   f"stdin")[0]


def _read_text_file(name: str, what: str) -> str:
    """The text of file ``name`` (``-`` reads stdin)."""
    return read_input(name, prefix="zonemark", what=what, missing=f"give the {what} on stdin")[0]


def _existing_file(name: str) -> Path:
    p = Path(name)
    if not p.exists():
        raise CliError(f"zonemark: no such file: {name}", EXIT_USAGE)
    if p.is_dir():
        raise CliError(f"zonemark: {name} is a folder; give a file", EXIT_USAGE)
    return p


def _run(action: Callable[[], _T]) -> _T:
    """Run a write, mapping every failure to one line and an exit code."""
    from ..writer import RefusedWrite, StoreError
    try:
        return action()
    except CliError:
        raise
    except RefusedWrite as exc:
        raise CliError(one_line(str(exc)), EXIT_REFUSED) from None
    except StoreError as exc:
        raise CliError(one_line(f"refused: {exc}"), EXIT_REFUSED) from None
    except (ValueError, TypeError) as exc:
        raise CliError(one_line(f"zonemark: {exc}"), EXIT_USAGE) from None
    except FileNotFoundError as exc:
        raise CliError(f"zonemark: no such file: {exc.filename or exc}", EXIT_USAGE) from None
    except IsADirectoryError as exc:
        raise CliError(f"zonemark: {exc.filename or exc} is not a regular file", EXIT_USAGE) from None
    except PermissionError as exc:
        raise CliError(f"zonemark: permission denied: {exc.filename or exc}", EXIT_USAGE) from None
    except OSError as exc:
        raise CliError(f"zonemark: {exc.strerror or exc}", EXIT_USAGE) from None
    except Exception as exc:  # a defect: still one line, never a traceback
        raise CliError(f"zonemark: internal error ({exc.__class__.__name__}: {exc})",
                       EXIT_USAGE) from None


def _notes(changes: Iterable[str]) -> None:
    for note in changes:
        print(f"note: {note}", file=sys.stderr)


def _rel(target: Path, where: Path) -> str:
    base = where.resolve() if where.is_dir() else where.resolve().parent
    try:
        return target.relative_to(base).as_posix()
    except ValueError:
        return str(target)


def _age(created: str) -> str:
    """'5 min', '3 h', '2 d' since an ISO timestamp ('?' when unreadable): the one rule the review page shows too."""
    from ..render.times import age
    return age(created)


def _states_now(target: Path) -> list[str]:
    """What ``zonemark state LAYER_OR_FILE`` prints with no flag (W31): the registry the flags would rewrite,
    as it is now, and the effective state of every module of the layer, with where it comes from (§7.3.1)."""
    from ..layer.loader import Layer, LayerError
    folder = target if target.is_dir() else target.parent
    try:
        layer = Layer.load(folder)
    except LayerError as exc:
        raise CliError(one_line(f"zonemark state: {exc}"), EXIT_USAGE) from None
    rel = layer.reminder if target.is_dir() else next(
        (f.rel for f in layer.files if f.path.resolve() == target.resolve()), target.name)
    file = next((f for f in layer.files if f.rel == rel), None) if rel else None
    registry = None if file is None else file.doc.registry
    if rel is None:
        out = [f"{target}: no [reminder] file, so no layer registry"]
    elif registry is None:
        out = [f"{rel}: no MODULE_STATE_REGISTRY"]
    else:
        out = [f"{rel}: MODULE_STATE_REGISTRY at line {registry.line}",
               "  ACTIVE: " + (", ".join(registry.active) or "\u2014"),
               "  INACTIVE: " + (", ".join(registry.inactive) or "\u2014")]
    modules = [m for m in layer.modules if m.is_module and not m.info.ignored]
    out.append(f"{len(modules)} module{'s' if len(modules) != 1 else ''} (effective state, from):")
    for m in modules:
        src = m.state_source
        source = "no state" if src is None else "declared" if src.registry is None else "registry of " + src.registry
        permanent = ", permanent" if m.info.permanent else ""
        ident = m.module_id if not m.temporary else "(no id)"
        out.append(f"  {ident}  {m.info.name}  {m.effective_state or 'unknown'} ({source}{permanent})  "
                   f"{m.file}:{m.info.line}")
    return out


def _proposal_path(args: argparse.Namespace, verb: str) -> Path:
    """The record ``apply``/``reject`` acts on: a proposal file, or an id looked up in ``--layer`` (a layer
    folder or a file; default the current folder).  With ``--layer``, a file too must be that layer's (W33)."""
    from ..writer import find_proposal
    given = Path(args.proposal)
    if given.is_dir():
        raise CliError(one_line(f"zonemark {verb}: {args.proposal} is a folder; give a proposal file or id "
                                 f"('zonemark proposals' lists them)"), EXIT_USAGE)
    if args.layer is None and given.is_file():
        return given
    where = Path(args.layer if args.layer is not None else ".")
    if not where.exists():
        raise CliError(one_line(f"zonemark: no such file or folder: {args.layer}"), EXIT_USAGE)
    return _run(lambda: find_proposal(where, args.proposal)).path


def run_append(args: argparse.Namespace) -> int:
    from ..writer import append_entry
    path = _existing_file(args.file)
    given = [x is not None for x in (args.body, args.body_file)]
    if sum(given) > 1:
        raise CliError("zonemark append: give --body or --body-file, not both", EXIT_USAGE)
    if args.timestamp and args.date is not None:
        raise CliError("zonemark append: give --date or --timestamp, not both", EXIT_USAGE)
    if args.body is not None:
        body = args.body
    elif args.body_file is not None:
        body = _read_text_file(args.body_file, "body")
    else:
        body = _read_stdin("body")
    r = _run(lambda: append_entry(path, args.container, args.title, body, actor=args.actor,
                                            date=args.date, timestamp=args.timestamp))
    _notes(r.changes)
    print(one_line(f"{path}: appended to {r.target} at line {r.line} (zone at line {r.zone}; "
                    f"history {r.history_id}; {r.method} check)"))
    return EXIT_OK

def run_state(args: argparse.Namespace) -> int:
    from ..writer import set_states
    target = Path(args.target)
    if not target.exists():
        raise CliError(f"zonemark: no such file or folder: {args.target}", EXIT_USAGE)
    if not args.activate and not args.deactivate:
        for line in _run(lambda: _states_now(target)):
            print(one_line(line))
        return EXIT_OK
    ids = [i.strip() for raw in (args.activate or []) + (args.deactivate or []) for i in raw.split(",")]
    if not any(ids):
        raise CliError("zonemark state: --activate/--deactivate name no module id (give ids such as 042,043)",
                       EXIT_USAGE)
    r = _run(lambda: set_states(target, args.activate or (), args.deactivate or (), actor=args.actor))
    if not r.changed:
        print(f"{r.path}: registry already says so; nothing written")
    else:
        print(f"{r.path}: MODULE_STATE_REGISTRY rewritten (history {r.history_id})")
    return EXIT_OK

def run_edit(args: argparse.Namespace) -> int:
    from ..writer import edit_zone
    path = _existing_file(args.file)
    content = (_read_text_file(args.content_file, "content") if args.content_file
               else _read_stdin("content", required=True))
    r = _run(lambda: edit_zone(path, args.zone, content, actor=args.actor))
    _notes(r.changes)
    print(f"{path}: zone at line {r.zone} {'rewritten' if r.changed else 'unchanged'}"
          + (f" (history {r.history_id})" if r.history_id else ""))
    return EXIT_OK

def run_propose(args: argparse.Namespace) -> int:
    from ..writer import propose
    path = _existing_file(args.file)
    if args.zone is not None and args.container is not None:
        raise CliError("zonemark propose: --zone and --container exclude each other; give one", EXIT_USAGE)
    if args.zone is None and args.container is None:
        raise CliError("zonemark propose: give --zone LINE or --container PATH", EXIT_USAGE)
    content = (_read_text_file(args.content_file, "content") if args.content_file
               else _read_stdin("content", required=True))
    target = args.zone if args.zone is not None else args.container
    p = _run(lambda: propose(path, target, content, actor=args.actor, reason=args.reason))
    _notes(p.changes)
    if p.would_add:
        n = len(p.would_add)
        print(one_line(f"note: the change would add {n} finding{'s' if n != 1 else ''} (first: {p.would_add[0]}); "
                        f"'zonemark proposals --show {p.id}' shows the change"), file=sys.stderr)
    print(f"{p.path}")
    return EXIT_OK

def run_apply(args: argparse.Namespace) -> int:
    from ..writer import apply_proposal
    proposal = _proposal_path(args, "apply")
    r = _run(lambda: apply_proposal(proposal, actor=args.actor))
    print(f"{r.path}: proposal applied" + (f" (history {r.history_id})" if r.history_id else " (no change)"))
    return EXIT_OK

def run_reject(args: argparse.Namespace) -> int:
    from ..writer import reject_proposal
    proposal = _proposal_path(args, "reject")
    p = _run(lambda: reject_proposal(proposal, actor=args.actor, reason=args.reason))
    print(f"{p.target}: proposal {p.id} rejected (the file is unchanged)")
    return EXIT_OK

def run_proposals(args: argparse.Namespace) -> int:
    from ..writer import find_proposal, list_proposals, show_proposal
    where = Path(args.target)
    if not where.exists():
        raise CliError(f"zonemark: no such file or folder: {args.target}", EXIT_USAGE)
    if args.show:
        proposal = _run(lambda: find_proposal(where, args.show))
        sys.stdout.write(_run(lambda: show_proposal(proposal)))
        return EXIT_OK
    pending = _run(lambda: list_proposals(where))
    if not pending:
        print(one_line(f"{args.target}: no pending proposals"))
        return EXIT_OK
    rows = [tuple(one_line(cell) for cell in (  # the cells as printed, so the widths hold
                p.id, _rel(p.proposal.target, where), f"[P{p.proposal.zone_level}] line "
                f"{p.zone_now if p.zone_now is not None else p.proposal.zone_line}",
                _age(p.proposal.created), "STALE" if p.stale else "ok", p.proposal.reason)) for p in pending]
    head = ("ID", "FILE", "ZONE", "AGE", "STATE", "REASON")
    widths = [max(len(r[k]) for r in rows + [head]) for k in range(5)]
    for row in [head] + rows:
        print(one_line("  ".join(cell.ljust(widths[k]) for k, cell in enumerate(row[:5])) + "  " + row[5]))
    print(one_line(f"{len(pending)} pending; 'zonemark proposals {args.target} --show ID' shows one, "
                    f"'zonemark apply ID --as user' applies it"), file=sys.stderr)
    return EXIT_OK

def run_history(args: argparse.Namespace) -> int:
    from ..writer import history
    path = _existing_file(args.file)
    entries = _run(lambda: history(path))
    if not entries:
        print(f"{path}: no saved versions")
        return EXIT_OK
    for e in entries:
        print(one_line(f"{e.id}  {e.timestamp}  {e.who:4}  {e.size:>9} B  {e.action}"))
    return EXIT_OK

def run_undo(args: argparse.Namespace) -> int:
    from ..writer import undo
    path = _existing_file(args.file)
    r = _run(lambda: undo(path, actor=args.actor))
    print(f"{path}: restored the previous version (history {r.history_id})")
    return EXIT_OK


def _arguments_append(a: argparse.ArgumentParser) -> None:
    a.add_argument("file", metavar="FILE")
    a.add_argument("--container", required=True, metavar="PATH",
                   help="topic path ('Maintenance/Tyres', '#2') or module id ('042', 'MODULE 042')")
    a.add_argument("--title", required=True, help="the entry's title, one line")
    a.add_argument("--body", help="entry body (else --body-file, else stdin)")
    a.add_argument("--body-file", metavar="F", help="read the body from F ('-': stdin)")
    a.add_argument("--date", help=DATE_HELP.replace("%", "%%") + " (default: today)")
    a.add_argument("--timestamp", action="store_true", help="date and time of now (not with --date)")
    _actor(a)


def _arguments_state(s: argparse.ArgumentParser) -> None:
    s.add_argument("target", metavar="LAYER_OR_FILE")
    s.add_argument("--activate", action="append", metavar="IDS", help="comma-separated module ids")
    s.add_argument("--deactivate", action="append", metavar="IDS", help="comma-separated module ids")
    _actor(s)


def _arguments_edit(e: argparse.ArgumentParser) -> None:
    e.add_argument("file", metavar="FILE")
    e.add_argument("--zone", type=int, required=True, metavar="LINE", help="the zone opened at (or holding) LINE")
    e.add_argument("--content-file", metavar="F", help="read the content from F ('-': stdin)")
    _actor(e)


def _arguments_propose(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE")
    p.add_argument("--zone", type=int, metavar="LINE", help="the zone opened at (or holding) LINE, any level")
    p.add_argument("--container", metavar="PATH",
                   help="the [P3] zone that pairs with this container (§7.1.2, §7.1.3); not with --zone")
    p.add_argument("--content-file", metavar="F", help="read the content from F ('-': stdin)")
    p.add_argument("--reason", required=True, help="one line saying why, for the user who applies or rejects it")
    _actor(p)


def _arguments_apply(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("proposal", metavar="PROPOSAL_OR_ID",
                    help="a proposal file, or its id or a unique start of it (looked up in --layer)")
    ap.add_argument("--layer", metavar="LAYER_OR_FILE",
                    help="the layer folder (or file) whose proposals to look in (default: the current folder)")
    _actor(ap)


def _arguments_reject(rj: argparse.ArgumentParser) -> None:
    rj.add_argument("proposal", metavar="PROPOSAL_OR_ID",
                    help="a proposal file, or its id or a unique start of it (looked up in --layer)")
    rj.add_argument("--layer", metavar="LAYER_OR_FILE",
                    help="the layer folder (or file) whose proposals to look in (default: the current folder)")
    rj.add_argument("--reason", help="one line saying why (kept in the proposal's record)")
    _actor(rj)


def _arguments_proposals(pr: argparse.ArgumentParser) -> None:
    pr.add_argument("target", metavar="LAYER_OR_FILE", nargs="?", default=".",
                    help="a layer folder or a file (default: the current folder)")
    pr.add_argument("--show", metavar="ID", help="print one proposal as a readable diff of the file as it is now")


def _arguments_history(h: argparse.ArgumentParser) -> None:
    h.add_argument("file", metavar="FILE")


def _arguments_undo(u: argparse.ArgumentParser) -> None:
    u.add_argument("file", metavar="FILE")
    _actor(u)


#: The write commands, in the order ``zonemark --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    Command("append", "append a LOG entry to a container's writable zone (§7.5)",
            _arguments_append, run_append),
    Command("state", "activate/deactivate modules in MODULE_STATE_REGISTRY (§7.3.1); with no "
                     "flag, print the registry and every module's effective state",
            _arguments_state, run_state),
    Command("edit", "replace a zone's content ([P5] for ai, any zone for the user)",
            _arguments_edit, run_edit),
    Command("propose", "propose a change to a zone for the user to apply (§5.2 [P3])",
            _arguments_propose, run_propose),
    Command("apply", "apply a proposal (--as user)",
            _arguments_apply, run_apply),
    Command("reject", "reject a proposal (--as user); the file is not touched",
            _arguments_reject, run_reject),
    Command("proposals", "list the pending proposals of a file or layer, or show one",
            _arguments_proposals, run_proposals),
    Command("history", "list the saved versions of a file",
            _arguments_history, run_history),
    Command("undo", "restore the version before zonemark's last write (--as user)",
            _arguments_undo, run_undo),
)


__all__ = ["COMMANDS", "run_append", "run_apply", "run_edit", "run_history", "run_proposals", "run_propose",
           "run_reject", "run_state", "run_undo"]
