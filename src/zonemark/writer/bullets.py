"""Lists of AI content in the canonical shape of §8: ``*``, ``+``, ``-`` at levels 1, 2, 3 (rulings W10, W24-W26).

A chat writes its lists as it likes: ``- item``, ``* a`` then ``- b``, children under two, three or
four spaces, one space, a tab.  A file wants ``*`` at level 1, ``+`` at level 2 and ``-`` at level 3
(§8), and the parser reports any other marker (``LIST_MARKER_MISMATCH``, ``MIXED_LIST_MARKERS``,
``UNIFORM_LIST_MARKER_WARNING``), which the writer's re-check would refuse.  So every list of the
content is written again:

* the **level** of an item is its CommonMark nesting depth: an item is the child of the open item
  whose text column its marker reaches, otherwise it closes that item (W24);
* each item is written at the **canonical indentation** of its level — column 0, then the text
  column of its parent as written (``* `` → 2, ``+ `` → 4, ``1. `` → 3) — with one space after the
  marker, which is its level's ``*`` ``+`` ``-`` (ordered items keep their number and delimiter);
* the lines that belong to an item (a second paragraph, a quote, indented code) move with it, by
  the same number of columns; a lazy continuation line is left as it is;
* an item deeper than level 3 (§8 has three levels) is written at level 3, a sibling of the item
  it was under (W25).

What is kept is every item's text and its depth; what may change is the marker, a presentation
detail §8 fixes: two adjacent lists that CommonMark told apart by their marker character become one
list (W24).  The reading is made *segment* by segment (the lines between column-0 lines that end
every list: a line after a blank line, a quote, a code fence, an entry header); a segment the
small CommonMark reading below is unsure of (an empty item, a second marker on an item's line,
an ordered item other than ``1.`` inside a paragraph, an item whose text starts as code, a tab
that the move would widen, text after a flattened item that CommonMark gives to the item above
it) is left as it was, and the re-check judges it.  A rewritten line the sanitiser would read as
structure (``- * *`` would become a separator) leaves its segment as it was too.  Lists inside a
block quote are not lists to the parser and are kept as written.  One pass over the lines, each
open item pushed and popped once: linear in the content (W26).  The sanitiser's lines are
:class:`LineChunks` (a few long strings, not a string per line), and a segment's rewritten lines
are folded into them as the reading passes them (W20).
"""

from __future__ import annotations

import bisect
import re
from array import array
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import overload

CANONICAL = {1: "*", 2: "+", 3: "-"}
_DEEPEST = 3
_ITEM = re.compile(r"([ \t]*)([*+-]|\d{1,9}[.)])([ \t]+|$)(.*)")
_MAYBE = re.compile(r"[ \t]*[*+-](?:[ \t]|$)")
_NESTED = re.compile(r"(?:[*+-]|\d{1,9}[.)])(?:[ \t]|$)")
_SEGMENT_START = re.compile(r"[>#]|`{3}|~{3}")
_FENCE = re.compile(r"(`{3,}|~{3,})")


@dataclass
class _Open:
    """An open list item: its text column as read and as written, and the level it is written at."""

    read_col: int
    write_col: int
    level: int
    child_indent: int  # where a child item is written (its own indentation at the deepest level)
    flattened: bool


def _columns(text: str, start: int = 0) -> int:
    """The column reached after ``text`` written from column ``start`` (tabs to the next multiple of 4)."""
    col = start
    for c in text:
        col = col + 4 - col % 4 if c == "\t" else col + 1
    return col


def _segments(lines: Sequence[str]) -> Iterator[tuple[range, bool]]:
    """The content cut at column-0 lines that end every open list, each with whether it may be rewritten
    (in order, each non-empty; a generator, so that no list of them is held).

    A fence the sanitiser let through opens at column 0 and closes at column 0 (W4): its lines are
    a segment of their own that is never rewritten.
    """
    start = 0
    blank = False
    k = 0
    n = len(lines)
    while k < n:
        line = lines[k]
        if not line.strip():
            blank = True
            k += 1
            continue
        fence = _FENCE.match(line)
        if fence is not None:
            run = fence.group(1)
            end = k + 1
            while end < n and not (lines[end].startswith(run[0] * len(run))
                                   and not lines[end].lstrip(run[0]).strip(" \t")):
                end += 1
            if k > start:
                yield range(start, k), True
            yield range(k, min(end + 1, n)), False
            start = k = min(end + 1, n)
            blank = False
            continue
        if k > start and line[:1] not in (" ", "\t") and _ITEM.fullmatch(line) is None and (
                blank or _SEGMENT_START.match(line)):
            yield range(start, k), True
            start = k
        blank = False
        k += 1
    if n > start:
        yield range(start, n), True


def _quote_block(text: str) -> str | None:
    """What a quote line leaves open for the next line: a paragraph (``'quote'``) or nothing to continue."""
    inner = text[1:]
    if inner.startswith(" "):
        inner = inner[1:]
    if not inner.strip() or "\t" in inner or _columns(inner[:len(inner) - len(inner.lstrip(" "))]) >= 4:
        return None
    return "quote"


def _normalise(lines: Sequence[str], segment: range, after_paragraph: bool) -> Generator[tuple[int, str], None, bool]:
    """The rewritten lines of ``segment`` (index, line), in order; returns False where the reading is unsure (the
    lines yielded are then not to be written; module docstring).  A generator, so that a long list's rewritten
    lines are not all held at once."""
    stack: list[_Open] = []
    blank = False
    # the open leaf of the innermost item (or the top): None, 'para', 'code' or 'quote'
    block: str | None = "para" if after_paragraph and segment.start == 0 else None

    def close_to(indent: int) -> tuple[bool, int | None]:
        """Close the items the line is not indented into: whether a flattened one was among them, and the
        text column the outermost closed one is written at (None: none closed)."""
        flat = False
        closed: int | None = None
        while stack and indent < stack[-1].read_col:
            item = stack.pop()
            flat = flat or item.flattened
            closed = item.write_col
        return flat, closed

    for k in segment:
        line = lines[k]
        if not line.strip():
            blank = True
            continue
        lead = line[:len(line) - len(line.lstrip(" \t"))]
        indent = _columns(lead)
        stripped = line[len(lead):]
        m = _ITEM.fullmatch(line)
        base = stack[-1].read_col if stack else 0
        if m is not None and block == "para" and not blank and (indent - base >= 4 or (
                m.group(2)[0] not in "*+-" and int(m.group(2)[:-1]) != 1 and (not stack or indent >= base))):
            # deep under an open paragraph, or an ordered list other than 1. inside one: continuation text to
            # CommonMark, an item to the parser; a backslash before the marker makes it text to both (W24)
            m = None
            cut = 0 if stripped[0] in "*+-" else len(stripped) - len(stripped.lstrip("0123456789"))
            stripped = stripped[:cut] + "\\" + stripped[cut:]
        if m is None:
            if stripped.startswith("#"):  # an entry's header (the only one left unescaped): it closes every list
                stack.clear()
                block = None
                blank = False
                continue
            quote = stripped.startswith(">")
            if quote or blank or block in (None, "code"):
                flat, closed = close_to(indent)
                if flat and stack and stack[-1].level == _DEEPEST:
                    return False  # text of the item above a flattened one would join the flattened one
                base = stack[-1].read_col if stack else 0
                if quote and indent - base > 3:
                    return False  # '>' this far in is not a quote to CommonMark: unsure, no
                block = _quote_block(stripped) if quote else "code" if indent - base >= 4 else "para"
                at = indent + (stack[-1].write_col if stack else 0) - base
                if closed is not None and at >= closed:
                    if block == "code":
                        return False  # the code would fall into the item it closed
                    at -= indent - base  # a paragraph or a quote reads the same at its item's text column
            elif not stack or indent < stack[-1].read_col:
                at = indent  # a lazy continuation line (or one at the top): it reads the same where it stands
            else:
                at = indent + stack[-1].write_col - stack[-1].read_col
            if at == indent and stripped == line[len(lead):]:
                blank = False
                continue
            blank = False
            new = " " * at + stripped
            if new != line:
                if "\t" in line and (block != "para" or "\t" in stripped):
                    return False  # a tab the move would widen or narrow
                yield k, new
            continue
        _lead, marker, gap, text = m.groups()
        if not text:
            return False  # an empty item
        if _NESTED.match(text):
            # a second list opened on the item's line (`* * x`, `1. 2. x`): CommonMark nests it, as deep as
            # the markers run, the parser reads one item; the inner marker becomes text (W27)
            text = _escape_marker(text)
        ordered = marker[0] not in "*+-"
        close_to(indent)
        base = stack[-1].read_col if stack else 0
        if indent - base > 3:
            return False  # indented code to CommonMark
        after_marker = _columns(marker, indent)
        width = _columns(gap, after_marker) - after_marker
        if not 1 <= width <= 4:
            return False  # the item's text starts as indented code
        if text.startswith(">") and "\t" in text:
            return False
        parent = stack[-1] if stack else None
        level = min(len(stack) + 1, _DEEPEST)
        at = parent.child_indent if parent is not None else 0
        written = marker if ordered else CANONICAL[level]
        write_col = at + len(written) + 1
        stack.append(_Open(after_marker + width, write_col, level,
                           write_col if level < _DEEPEST else at, len(stack) >= _DEEPEST))
        new = " " * at + written + " " + text
        if new != line:
            yield k, new
        block = _quote_block(text) if text.startswith(">") else "para"
        blank = False
    return True


def _escape_marker(text: str) -> str:
    """``text`` whose list marker (``*``, ``+``, ``-``, ``1.``, ``1)``) is escaped to read as itself (W27)."""
    if text[0] in "*+-":
        return "\\" + text
    digits = len(text) - len(text.lstrip("0123456789"))
    return text[:digits] + "\\" + text[digits:]


class LineChunks(Sequence[str]):
    """Lines held as a few long strings ("runs"), run ``i`` holding ``counts[i]`` lines (at least one), each
    ended by ``\\n`` but the last line of all: a text of short lines held as one string per line costs ten
    times the text, this about the text (W20), and a run is a slice of the text as it was read.  A line is
    read by splitting its run, kept for the next reads: the reads of :func:`canonical_bullets` go forward, so
    each run is split about once per pass."""

    def __init__(self, chunks: list[str], counts: Sequence[int]):
        self._chunks = chunks
        self._starts = array("q", [0])
        for count in counts:
            self._starts.append(self._starts[-1] + count)
        self._cache: list[tuple[int, list[str]]] = []  # (run, its lines) of the last two runs read

    def __len__(self) -> int:
        return self._starts[-1]

    def run_of(self, k: int) -> int:
        """The run that holds line ``k``."""
        return bisect.bisect_right(self._starts, k) - 1

    def run_lines(self, c: int) -> list[str]:
        """The lines of run ``c`` (a list shared with the next reads: not to be changed)."""
        for run, lines in self._cache:
            if run == c:
                return lines
        lines = self._split(c, self._chunks)
        self._cache = [(c, lines), *self._cache[:1]]
        return lines

    def _split(self, c: int, runs: list[str]) -> list[str]:
        lines = runs[c].split("\n")
        if len(lines) > self._starts[c + 1] - self._starts[c]:
            lines.pop()  # the empty string after the line feed that ends the run
        return lines

    def _line(self, k: int) -> str:
        if not 0 <= k < len(self):
            raise IndexError(k)
        for run, lines in self._cache:
            if self._starts[run] <= k < self._starts[run + 1]:
                return lines[k - self._starts[run]]
        c = self.run_of(k)
        return self.run_lines(c)[k - self._starts[c]]

    @overload
    def __getitem__(self, k: int) -> str: ...

    @overload
    def __getitem__(self, k: slice) -> list[str]: ...

    def __getitem__(self, k: int | slice) -> str | list[str]:
        if isinstance(k, slice):
            return [self._line(i) for i in range(*k.indices(len(self)))]
        return self._line(k + len(self) if k < 0 else k)

    def __iter__(self) -> Iterator[str]:
        for c in range(len(self._chunks)):
            yield from self._split(c, self._chunks)

    def rewritten(self, c: int, rewrites: dict[int, str], runs: list[str] | None = None) -> str:
        """Run ``c`` (as it stands in ``runs``, by default as held) with those lines of ``rewrites`` it holds."""
        first, end = self._starts[c], self._starts[c + 1]
        runs = self._chunks if runs is None else runs
        lines = self._split(c, runs)
        for k, new in rewrites.items():
            if first <= k < end:
                lines[k - first] = new
        return "\n".join(lines) + ("\n" if runs[c].endswith("\n") and runs[c].count("\n") == len(lines) else "")

    def with_runs(self, runs: list[str]) -> LineChunks:
        """The same lines, run by run, as ``runs`` (as many lines in each)."""
        return LineChunks(runs, [b - a for a, b in zip(self._starts, self._starts[1:])])

    def text(self) -> str:
        """The lines joined by ``\\n`` (a text of one run is that run)."""
        return "".join(self._chunks)


class _Folding:
    """The runs of :class:`LineChunks` as the rewrite writes them: the lines of the segments let through are folded
    into their runs as soon as the reading has passed them, those of the segment being read are folded
    tentatively and kept only if the whole segment is let through — so that what is held besides the runs is
    the rewritten lines of about one run, never one string per line of a long list (W20, W26)."""

    def __init__(self, lines: LineChunks):
        self.lines = lines
        self.runs = list(lines._chunks)
        self.kept: dict[int, str] = {}  # rewritten lines let through, not folded yet (of the last run or two read)
        self.changed = False

    def _fold_before(self, c: int) -> None:
        """Fold the kept lines of the runs before run ``c`` (the reading has passed them)."""
        done: dict[int, dict[int, str]] = {}
        rest: dict[int, str] = {}
        for k, new in self.kept.items():
            r = self.lines.run_of(k)
            if r < c:
                done.setdefault(r, {})[k] = new
            else:
                rest[k] = new
        for r, rewrites in done.items():
            self.runs[r] = self.lines.rewritten(r, rewrites, self.runs)
        self.kept = rest

    def segment(self, rewrites: Generator[tuple[int, str], None, bool],
                reads_as_structure: Callable[[str], bool]) -> None:
        """Read one segment's rewritten lines and keep them when the segment is let through."""
        pending: dict[int, str] = {}  # the segment's lines in its current run
        tentative: dict[int, str] = {}  # run -> written again with the segment's lines (runs the segment left)
        run = -1
        while True:
            try:
                k, new = next(rewrites)
            except StopIteration as stop:
                if not stop.value:
                    return  # unsure: the segment stays as it was
                break
            if reads_as_structure(new):
                return
            c = self.lines.run_of(k)
            if c != run:
                if run < 0:
                    self._fold_before(c)
                elif pending:
                    tentative[run] = self.lines.rewritten(run, {**self.kept, **pending}, self.runs)
                pending, run = {}, c
            pending[k] = new
        if not pending and not tentative:
            return
        self.changed = True
        for c, text in tentative.items():
            self.runs[c] = text
        if tentative:
            done = max(tentative)
            self.kept = {k: v for k, v in self.kept.items() if self.lines.run_of(k) > done}
        self.kept.update(pending)

    def result(self) -> LineChunks:
        self._fold_before(len(self.runs))
        return self.lines.with_runs(self.runs)


@overload
def canonical_bullets(lines: list[str], reads_as_structure: Callable[[str], bool], *,
                      after_paragraph: bool = False) -> tuple[list[str], bool]: ...


@overload
def canonical_bullets(lines: LineChunks, reads_as_structure: Callable[[str], bool], *,
                      after_paragraph: bool = False) -> tuple[LineChunks, bool]: ...


def canonical_bullets(lines: list[str] | LineChunks, reads_as_structure: Callable[[str], bool], *,
                      after_paragraph: bool = False) -> tuple[list[str] | LineChunks, bool]:
    """``lines`` with every list written in the §8 shape (see the module docstring), and whether any line changed.

    ``reads_as_structure(line)`` is the sanitiser's own test; a segment whose rewritten lines it
    would flag is left as it was.  ``after_paragraph``: the line before the content is paragraph
    text to CommonMark (a zone's opening tag line), not a header (an entry's).  ``lines`` is a list (a new
    list is returned when a line changed) or :class:`LineChunks` (new runs where a line changed).
    """
    if not any(_MAYBE.match(line) for line in lines):
        return lines, False
    if isinstance(lines, LineChunks):
        folding = _Folding(lines)
        for segment, open_to_rewrite in _segments(lines):
            if open_to_rewrite:
                folding.segment(_normalise(lines, segment, after_paragraph), reads_as_structure)
        return (folding.result(), True) if folding.changed else (lines, False)
    out = list(lines)
    changed = False
    for segment, open_to_rewrite in _segments(lines):
        if not open_to_rewrite:
            continue
        rewrites = _normalise(lines, segment, after_paragraph)
        rewritten: dict[int, str] = {}
        while True:
            try:
                k, new = next(rewrites)
            except StopIteration as stop:
                sure = stop.value
                break
            rewritten[k] = new
        if not sure or not rewritten or any(reads_as_structure(new) for new in rewritten.values()):
            continue
        for k, new in rewritten.items():
            out[k] = new
        changed = True
    return out, changed
