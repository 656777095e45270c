"""Where things are on a line: the text of a parsed file's lines and the extent of a construct.

A :class:`~zonemark.core.diagnostics.Diagnostic` carries its 1-based line and column (in code
points, lines split on ``\\n`` as the parser splits them) and the end of its extent, set where
the parser and the layer hand it out.  The one span rule is the core's
(:func:`zonemark.core.diagnostics.construct_span`); :class:`SourceLines` applies it to the
other places a face shows: a tag, an id, a related line.
"""

from __future__ import annotations

import bisect
import weakref
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.diagnostics import CHAR_CODES, TOKEN_CODES, construct_span

if TYPE_CHECKING:
    from ..core.document import Document


@dataclass(frozen=True, slots=True)
class Span:
    """A place in a file: 1-based ``line``, columns ``start`` (inclusive) to ``end`` (exclusive)."""

    rel: str
    line: int
    start: int
    end: int

    def contains(self, line: int, column: int) -> bool:
        """Whether a cursor at (``line``, ``column``) touches the span (its end included)."""
        return line == self.line and self.start <= column <= self.end


class SourceLines:
    """The lines of a parsed text as the parser numbers them (split on ``\\n`` only)."""

    __slots__ = ("text", "_starts", "__weakref__")

    def __init__(self, text: str, starts: Sequence[int] | None = None):
        """``starts``: the offsets after every ``\n`` of ``text`` with 0 first, when already known."""
        self.text = text
        if starts is None:
            found = array("q", (0,))  # integers in one array, not an object per line (B16)
            find = text.find
            pos = find("\n")
            while pos != -1:
                found.append(pos + 1)
                pos = find("\n", pos + 1)
            starts = found
        self._starts: Sequence[int] = starts

    @property
    def starts(self) -> list[int]:
        """The offset after every ``\n`` with 0 first, as a list of its own."""
        return list(self._starts)

    def __len__(self) -> int:
        return len(self._starts)

    def line(self, number: int) -> str:
        """Line ``number`` (1-based) without its ``\\n``; '' past the end."""
        starts = self._starts
        if not 1 <= number <= len(starts):
            return ""
        if number < len(starts):
            return self.text[starts[number - 1]:starts[number] - 1]
        return self.text[starts[number - 1]:]

    def offset(self, line: int, column: int) -> int:
        """The offset of (1-based ``line``, 1-based ``column``), clamped to the line."""
        if line < 1:
            return 0
        if line > len(self._starts):
            return len(self.text)
        start = self._starts[line - 1]
        return start + min(max(column - 1, 0), len(self.line(line)))

    def position(self, offset: int) -> tuple[int, int]:
        """The 1-based (line, column) of an offset."""
        offset = min(max(offset, 0), len(self.text))
        index = bisect.bisect_right(self._starts, offset) - 1
        return index + 1, offset - self._starts[index] + 1

    def span(self, rel: str, line: int, column: int, code: str | None = None) -> Span:
        """The :class:`Span` of the construct a diagnostic at (``line``, ``column``) points at."""
        start, end = construct_span(self.line(line), column, code)
        return Span(rel, line, start, end)


_lines_cache: "weakref.WeakKeyDictionary[Document, SourceLines]" = weakref.WeakKeyDictionary()

__all__ = ["CHAR_CODES", "TOKEN_CODES", "SourceLines", "Span", "construct_span", "source_lines"]


def source_lines(doc: Document, starts: Sequence[int] | None = None) -> SourceLines:
    """The :class:`SourceLines` of a parsed document, computed once per document (or from
    ``starts``, the line starts of the same text split on ``\n``, when the caller has them)."""
    lines = _lines_cache.get(doc)
    if lines is None:
        lines = _lines_cache[doc] = SourceLines(doc.source, starts)
    return lines
