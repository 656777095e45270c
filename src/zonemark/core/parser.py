"""Parse one file: its text to a lossless tree, its diagnostics and derived facts.

The work is done in three steps, each in its own module:

1. :mod:`.scanner` reads the lines once (§2.4), classifying headers with :mod:`.headers`
   and building the block tree with :mod:`.tree`; it records what only the whole file
   can tell in :class:`~.facts.Facts`;
2. :mod:`.checks` runs the cross-block checks over those facts, in the order of
   :data:`~.checks.CHECKS`;
3. the result is frozen into a :class:`~.document.Document`.

Nothing raises on a ``str``: every problem is a diagnostic, in line order.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from operator import itemgetter

from . import gcpause
from . import text as text_policy
from .checks import run_checks
from .diagnostics import place_sorted, placed
from .syntax import conflict_regions
from .document import Document
from .outline import OutlineBuilder
from .scanner import Scanner
from .nodes import Block
from .tree import HeadingFrame, ZoneFrame, pruning

#: A pending finding's (line, column): the order of ``Document.diagnostics``.
_LINE_COLUMN = itemgetter(1, 2)
#: The most header strings a pruned parse (``keep``) shares at once: the headers it leaves out of its tree are
#: not kept alive by the sharing table (B27).
PRUNED_SHARED_MAX = 64


def parse(text: str, *, path: str | None = None, tree: bool = False, outline: bool = False,
          on_header: Callable[[HeadingFrame], None] | None = None,
          on_zone: Callable[[ZoneFrame], None] | None = None,
          keep: Callable[[Block], bool] | None = None) -> Document:
    """Parse one file's text.  Never raises on a ``str``; see ``Document.diagnostics``.

    ``tree=True`` builds the block tree in the same scan, for a caller that reads ``blocks`` at
    once; otherwise it is built on first use of ``Document.blocks``.  ``outline=True`` reads the
    outline in the same scan, for a caller that reads ``outline()`` at once (W96).  ``on_header`` is
    told of each header as the scan opens it (the title's excepted), ``on_zone`` of each top-level
    permission zone as the scan ends it, for a caller that needs them and not the tree (W98): the
    frames of :func:`.scanner.scan_structure`, in the parse's own scan.  ``keep``, with ``tree=True``, is told of
    each block below the top level as it is built, and a block it returns False for is left out of the tree (its
    subtree is the caller's: :func:`.tree.pruning`, B25)."""
    if not isinstance(text, str):
        raise TypeError(f"parse() takes str, not {type(text).__name__}; use parse_file() for bytes")
    return _run(text, path, None, tree, outline, on_header, on_zone, keep)


def parse_bytes(data: bytes, *, path: str | None = None, tree: bool = False, outline: bool = False) -> Document:
    """Parse raw bytes: invalid UTF-8 is reported (``INVALID_UTF8``) and kept for round-trip (:mod:`.text`)."""
    source, bad_byte = _decoded(data)
    return _run(source, path, bad_byte, tree, outline)


def parse_file(path: str | os.PathLike[str], *, tree: bool = False, outline: bool = False) -> Document:
    """Read and parse a file (bytes: encoding problems become diagnostics)."""
    with open(path, "rb") as f:
        data = f.read()
    source, bad_byte = _decoded(data)
    del data  # the text is what the parse reads: the bytes are not held beside it (B21)
    return _run(source, str(path), bad_byte, tree, outline)


def _decoded(data: bytes) -> tuple[str, tuple[int, int, int, int] | None]:
    """The text of ``data`` (invalid bytes kept for round-trip, :mod:`.text`) and its first invalid byte."""
    source, invalid = text_policy.decode_reporting(data)
    return source, text_policy.first_escaped_byte(source) if invalid else None


def _run(source: str, path: str | None, bad_byte: tuple[int, int, int, int] | None, tree: bool,
         outline: bool, on_header: Callable[[HeadingFrame], None] | None = None,
         on_zone: Callable[[ZoneFrame], None] | None = None,
         keep: Callable[[Block], bool] | None = None) -> Document:
    """Parse with the cyclic GC paused: the tree has no reference cycles, and the scanner's
    working state is released (by reference counting) before the GC resumes."""
    with gcpause.paused():
        return _parse(source, path, bad_byte, tree, outline, on_header, on_zone, keep)


def _parse(source: str, path: str | None, bad_byte: tuple[int, int, int, int] | None, tree: bool,
           outline: bool, on_header: Callable[[HeadingFrame], None] | None,
           on_zone: Callable[[ZoneFrame], None] | None,
           keep: Callable[[Block], bool] | None = None) -> Document:
    """Scan, check and freeze; ``bad_byte`` is the first invalid UTF-8 byte (line, column, value, count)."""
    scanner = Scanner(source, path, tree=tree)
    if keep is not None and tree:
        scanner.add_child = pruning(keep)
        scanner.shared_max = PRUNED_SHARED_MAX
    scanner.on_zone = on_zone
    builder = OutlineBuilder(scanner) if outline else None
    if builder is not None and on_header is not None:
        scanner.on_header = _both(builder.add_frame, on_header)
    else:
        scanner.on_header = builder.add_frame if builder is not None else on_header
    if bad_byte is not None:
        line, col, byte, count = bad_byte
        scanner.diag("INVALID_UTF8", line, col,
                     f"invalid UTF-8 byte 0x{byte:02X}"
                     f" ({count} undecodable byte{'s' if count != 1 else ''} in the file)", count=count)
    scanner.run()
    facts = scanner.facts
    run_checks(facts, scanner.diag)
    ignored = scanner.ignored_lines
    ignored |= facts.superseded
    conflicts = conflict_regions(source)
    if conflicts:  # one diagnostic per region, instead of the cascade the markers cause
        diagnostics = placed([("MERGE_CONFLICT", first, 1,
                               f"unresolved merge conflict at lines {first}-{last} (git's conflict markers); keep "
                               f"one side, or merge them by hand, and delete the marker lines", path, last, None)
                              for first, last in conflicts], source)
    else:
        pending, scanner.diags = scanner.diags, []
        pending.sort(key=_LINE_COLUMN)
        diagnostics = place_sorted(pending, source)  # empties pending: each finding freed as it is placed
    scanner.messages = scanner.shared = {}
    scanner.logical = []  # the open containers: nothing but the facts holds them now
    scanner.last_decl = scanner.pending_state = None
    scanner.container_names = {}
    doc = Document(
        source=source, path=path, file_type=scanner.file_type or scanner.recover_type, title=scanner.title,
        title_line=scanner.title_line, tree=tuple(scanner.top) if tree else None, diagnostics=tuple(diagnostics),
        modules=facts.module_infos(), nuclei=facts.nucleus_infos(), registry=facts.registry_info(),
        standard_version=scanner.standard_version, frontmatter=scanner.frontmatter,
        ignored_lines=frozenset(ignored), h6_owner=scanner.h6_owner, line_count=scanner.line_count,
        surrogate_escaped=bad_byte is not None)
    if builder is not None:  # the outline read in this scan, kept as Document.outline_table() keeps its own
        object.__setattr__(doc, "_outline_table", builder.finish(source, doc.title, doc.title_line, doc.h6_owner,
                                                                 doc.ignored_lines))
    return doc


def _both(first: Callable[[HeadingFrame], None], second: Callable[[HeadingFrame], None]
          ) -> Callable[[HeadingFrame], None]:
    """One header hook that calls two."""
    def both(frame: HeadingFrame) -> None:
        first(frame)
        second(frame)
    return both
