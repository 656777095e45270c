"""Where things are on a line: the text of a parsed file's lines and the extent of a construct.

A :class:`~zonemark.core.diagnostics.Diagnostic` carries a 1-based line and column (in code
points, lines split on ``\\n`` as the parser splits them).  An editor, a SARIF region or a
review page also wants where the construct *ends*; :func:`construct_span` gives it, one rule
for every face:

* a column inside a bracketed tag (``[P4]``, ``[/P2]``, ``[NUCLEI: 1, 3]``, ``[!XYZ]``,
  ``[ext_memory]``) spans the tag;
* a column at the start of the line's text (only indentation before it) spans the whole
  construct the line holds: the header, the bullet, the rule, the registry line;
* a column inside the line spans from there to the end of the line's text (closing ``###``,
  the rest of a malformed CONNECTIONS bullet), except for the codes that name one character
  (a control character, a bare carriage return, an undecodable byte) or one token (a log date);
* a column past the text of the line spans one character.

Trailing whitespace and a ``\\r`` before the ``\\n`` are never part of a span.
"""

from __future__ import annotations

import bisect
import re
import weakref
from dataclasses import dataclass

_TAG = re.compile(r"\[[^\[\]\n]*\]")
#: Codes whose column names a single character (§1 text policy).
CHAR_CODES = frozenset(("CONTROL_CHARACTER", "CARRIAGE_RETURN", "INVALID_UTF8", "BYTE_ORDER_MARK"))
#: Codes whose column names one whitespace-free token (§7.5 log dates).
TOKEN_CODES = frozenset(("INVALID_LOG_DATE",))


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


def construct_span(line: str, column: int, code: str | None = None) -> tuple[int, int]:
    """The 1-based ``(start, end)`` columns, end exclusive, of the construct at ``column`` of ``line``.

    ``line`` is one line of text without its ``\\n``; ``code`` (a diagnostic code) picks the
    one-character and one-token shapes (see the module docstring).
    """
    column = max(column, 1)
    i = column - 1
    text_end = len(line.rstrip())
    if code in CHAR_CODES:
        return column, column + 1
    if i >= text_end:
        return column, column + 1
    if code in TOKEN_CODES:
        m = re.compile(r"\S+").match(line, i)
        return column, (m.end() if m else i + 1) + 1
    for m in _TAG.finditer(line):
        if m.start() <= i < m.end():
            return m.start() + 1, m.end() + 1
        if m.start() > i:
            break
    indent = len(line) - len(line.lstrip())
    if i <= indent:
        return indent + 1, text_end + 1
    return column, text_end + 1


class SourceLines:
    """The lines of a parsed text as the parser numbers them (split on ``\\n`` only)."""

    __slots__ = ("text", "starts", "__weakref__")

    def __init__(self, text: str, starts: list[int] | None = None):
        """``starts``: the offsets after every ``\n`` of ``text`` with 0 first, when already known."""
        self.text = text
        if starts is not None:
            self.starts = starts
            return
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self.starts = starts

    def __len__(self) -> int:
        return len(self.starts)

    def line(self, number: int) -> str:
        """Line ``number`` (1-based) without its ``\\n``; '' past the end."""
        starts = self.starts
        if not 1 <= number <= len(starts):
            return ""
        if number < len(starts):
            return self.text[starts[number - 1]:starts[number] - 1]
        return self.text[starts[number - 1]:]

    def offset(self, line: int, column: int) -> int:
        """The offset of (1-based ``line``, 1-based ``column``), clamped to the line."""
        if line < 1:
            return 0
        if line > len(self.starts):
            return len(self.text)
        start = self.starts[line - 1]
        return start + min(max(column - 1, 0), len(self.line(line)))

    def position(self, offset: int) -> tuple[int, int]:
        """The 1-based (line, column) of an offset."""
        offset = min(max(offset, 0), len(self.text))
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1

    def span(self, rel: str, line: int, column: int, code: str | None = None) -> Span:
        """The :class:`Span` of the construct a diagnostic at (``line``, ``column``) points at."""
        start, end = construct_span(self.line(line), column, code)
        return Span(rel, line, start, end)


_lines_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def source_lines(doc, starts: list[int] | None = None) -> SourceLines:
    """The :class:`SourceLines` of a parsed document, computed once per document (or from
    ``starts``, the line starts of the same text split on ``\n``, when the caller has them)."""
    lines = _lines_cache.get(doc)
    if lines is None:
        lines = _lines_cache[doc] = SourceLines(doc.source, starts)
    return lines
