"""``zonemark search LAYER QUERY``: full-text search over a layer's entries, modules and topics.

Exit codes follow grep: 0 when something matched, 1 when nothing did, 2 when the search could
not run (bad query or filter, missing path); the message is one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING

from .common import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, CliError, Command

if TYPE_CHECKING:
    from ..search.results import Hit


def _arguments_search(s: argparse.ArgumentParser) -> None:
    s.add_argument("layer", metavar="LAYER", help="a layer folder (or a single file)")
    s.add_argument("query", nargs="+", metavar="QUERY", help="the words to find (joined by spaces)")
    s.add_argument("--raw", action="store_true", help="read QUERY as FTS5 syntax (AND, OR, NOT, NEAR, column:)")
    s.add_argument("--file", metavar="FILE", help="only this file (path relative to LAYER, or a glob)")
    s.add_argument("--container", metavar="PATH", help="only this container and what is under it "
                                                       "('Maintenance/Tyres', '042')")
    s.add_argument("--since", metavar="DATE", help="only entries dated on or after DATE (YYYY-MM-DD)")
    s.add_argument("--until", metavar="DATE", help="only entries dated on or before DATE")
    s.add_argument("--zone", action="append", metavar="N", help="only permission level N (1-5 or P1-P5; repeatable)")
    s.add_argument("--limit", type=int, default=10, metavar="N", help="at most N hits (default 10)")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.add_argument("--rank-all", action="store_true", help="rank every match, however many (slower on broad queries)")
    s.add_argument("--rebuild", action="store_true", help="discard the cached index and build it again")


def _visible(text: str) -> str:
    """A file name or text for one output line: control characters (a newline in a name) as escapes."""
    return "".join(f"\\x{ord(c):02x}" if ord(c) < 32 or ord(c) == 127 else c for c in text)


def _label(hit: Hit) -> str:
    zone = f"[P{hit.zone}]" if hit.zone else "(no zone)"
    what = hit.date if hit.kind == "entry" and hit.date else hit.kind
    where = hit.container or "(file)"
    title = f" — {hit.title}" if hit.title and hit.title != where.rsplit("/", 1)[-1] else ""
    return f"{_visible(hit.location)}: {zone} {what}  {_visible(where)}{_visible(title)}"


def run_search(args: argparse.Namespace) -> int:
    from ..core.text import printable
    from ..render.formats import counted
    from ..search import SearchError, search
    if (args.file and not any(c in args.file for c in "*?") and not os.path.isabs(args.file)
            and os.path.isdir(args.layer) and os.path.lexists(os.path.join(args.layer, args.file))):
        from ..layer.loader import left_out
        why = left_out(args.layer, args.file.removeprefix("./"))  # W40: the layer's files, as every face sees them
        if why is not None:
            raise CliError(printable(f"zonemark search: --file {why}: not a file of the layer"), EXIT_USAGE)
    try:
        result = search(args.layer, " ".join(args.query), file=args.file, container=args.container,
                        since=args.since, until=args.until, zone=args.zone, limit=args.limit, raw=args.raw,
                        rebuild=args.rebuild, rank_all=args.rank_all)
    except SearchError as exc:
        raise CliError(f"zonemark search: {exc}", EXIT_USAGE) from None
    except OSError as exc:
        raise CliError(f"zonemark search: {exc.strerror or exc}", EXIT_USAGE) from None
    except Exception as exc:  # a defect: still one line, never a traceback
        raise CliError(f"zonemark search: internal error ({exc.__class__.__name__}: {exc})", EXIT_USAGE) from None
    for note in result.skipped:
        print(f"note: cannot read {note}; left out of this search", file=sys.stderr)
    if result.cache is None:
        print("note: the index could not be saved in the layer's .zonemark/ folder; it was built in memory",
              file=sys.stderr)
    if args.json:
        sys.stdout.write(printable(json.dumps(result.to_dict(), ensure_ascii=False, indent=2)) + "\n")
    else:
        lines = []
        for hit in result.hits:
            lines.append(_label(hit))
            if hit.snippet:
                lines.append(f"    {hit.snippet}")
        if lines:
            sys.stdout.write(printable("\n".join(lines)) + "\n")
        if result.ranked_window:
            print(f"note: more than {result.ranked_window} matches: ranked the {result.ranked_window} most recent "
                  f"(add words, a filter, or --rank-all)", file=sys.stderr)
        elif result.more:
            print(f"note: more than {counted(args.limit, 'hit')}; raise --limit or narrow the search", file=sys.stderr)
        if not result.hits:
            print(f"no match for {' '.join(args.query)!r} in {counted(result.files, 'file')}", file=sys.stderr)
    return EXIT_OK if result.hits else EXIT_FINDINGS


#: The commands of this module, in the order ``zonemark --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    Command("search", "full-text search over a layer's entries, modules and topics",
            _arguments_search, run_search,
            description="Words are ANDed; \"a phrase\" in double quotes; word* for a prefix. "
                        "The index is a cache in LAYER/.zonemark/, refreshed before each search."),
)

__all__ = ["COMMANDS", "run_search"]
