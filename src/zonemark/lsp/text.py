"""Text as the Language Server Protocol counts it: lines and position units.

LSP lines end at ``\\n``, ``\\r\\n`` or ``\\r`` (nothing else: not U+2028, not a form feed),
and a position's character counts UTF-16 code units unless the client agreed on UTF-8 or
UTF-32.  The parser numbers lines split on ``\\n`` and columns in code points
(:class:`zonemark.layer.spans.SourceLines`); both meet at offsets into the text.
"""

from __future__ import annotations

import bisect
import re
from array import array
from collections.abc import Sequence

from lsprotocol import types

_BREAK = re.compile(r"\r\n|\r|\n")

#: A notification with more changes than this is applied to a list of lines and joined once
#: (each change then costs its line, not the whole text; see :meth:`TextBuffer.apply_all`).
FEW_CHANGES = 4


def lsp_lines(text: str) -> list[str]:
    """``text`` cut after each LSP line break: every piece but the last ends with its break, the last is
    what follows the last break ('' when the text ends with one), so ``"".join`` gives the text back."""
    out: list[str] = []
    pos = 0
    for m in _BREAK.finditer(text):
        out.append(text[pos:m.end()])
        pos = m.end()
    out.append(text[pos:])
    return out


def _content(line: str) -> str:
    """A piece of :func:`lsp_lines` without its line break."""
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith(("\n", "\r")):
        return line[:-1]
    return line


class LspText:
    """A text and its LSP line starts, converting offsets to positions and back."""

    def __init__(self, text: str, encoding: str = "utf-16"):
        self.text = text
        self.encoding = encoding
        self._starts: "array[int] | None" = None

    @property
    def starts(self) -> "array[int]":
        """The offset where each LSP line starts: integers in one array, not an object per line (B16)."""
        if self._starts is None:
            text = self.text
            starts = array("q", (0,))
            if "\r" in text:
                starts.extend(m.end() for m in _BREAK.finditer(text))
            else:
                find = text.find
                pos = find("\n")
                while pos != -1:
                    starts.append(pos + 1)
                    pos = find("\n", pos + 1)
            self._starts = starts
        return self._starts

    def line_text(self, line: int) -> str:
        """LSP line ``line`` (0-based) without its line break; '' past the end."""
        starts = self.starts
        if not 0 <= line < len(starts):
            return ""
        end = starts[line + 1] if line + 1 < len(starts) else len(self.text)
        return _content(self.text[starts[line]:end])

    def units(self, s: str) -> int:
        """How many position units (of the agreed encoding) ``s`` takes."""
        if self.encoding == types.PositionEncodingKind.Utf32 or s.isascii():
            return len(s)
        if self.encoding == types.PositionEncodingKind.Utf8:
            return len(s.encode("utf-8", "surrogatepass"))
        return len(s) + sum(1 for ch in s if ord(ch) > 0xFFFF)

    def position(self, offset: int) -> types.Position:
        """The LSP position of an offset (clamped to the text)."""
        offset = min(max(offset, 0), len(self.text))
        starts = self.starts
        line = bisect.bisect_right(starts, offset) - 1
        start = starts[line]
        if self.encoding == types.PositionEncodingKind.Utf32:
            head_length = offset - start
            head = None
        else:
            head = self.text[start:offset]
            if head.isascii():
                head_length, head = len(head), None
        if head is None:
            text = self.text
            # An offset on the line break itself (or between \r and \n) is the end of the line.
            while head_length and text[start + head_length - 1] in "\r\n":
                head_length -= 1
            return types.Position(line=line, character=head_length)
        return types.Position(line=line, character=self.units(head.rstrip("\r\n")))

    def offset(self, position: types.Position) -> int:
        """The offset of an LSP position; a character past the line's end means its end (LSP 3.17)."""
        starts = self.starts
        if position.line >= len(starts):
            return len(self.text)
        if position.line < 0:
            return 0
        return starts[position.line] + self._index(self.line_text(position.line), position.character)

    def _index(self, line: str, character: int) -> int:
        """The index into ``line`` (without its break) of an LSP character; past the line's end: its end."""
        want = max(character, 0)
        if self.encoding == types.PositionEncodingKind.Utf32 or line.isascii():
            return min(want, len(line))
        count = 0
        for i, ch in enumerate(line):
            if count >= want:
                return i
            count += self.units(ch)
        return len(line)

    def range(self, start: int, end: int) -> types.Range:
        return types.Range(start=self.position(start), end=self.position(end))


class TextBuffer(LspText):
    """An open document: its text, the client's version, and the edits the client sends."""

    def __init__(self, text: str, version: int | None, encoding: str = "utf-16"):
        super().__init__(text, encoding)
        self.version = version

    def apply_all(self, changes: Sequence[types.TextDocumentContentChangeEvent]) -> None:
        """Apply a notification's changes in order, each to the text the one before left (LSP).

        A few are applied one by one (each copies the text once and shifts the line starts); more
        are applied to the text as a list of lines, so that each costs the lines it touches, and
        the text is joined once: a notification of k changes to a text of n characters costs
        about n + k line lengths, not k times n."""
        changes = list(changes)
        if len(changes) <= FEW_CHANGES:
            for change in changes:
                self.apply(change)
            return
        lines = lsp_lines(self.text)
        for change in changes:
            rng = getattr(change, "range", None)
            if rng is None:
                lines = lsp_lines(change.text)
                continue
            a = self._line_position(lines, rng.start)
            b = self._line_position(lines, rng.end)
            if b < a:
                a, b = b, a
            (l1, i1), (l2, i2) = a, b
            piece = lines[l1][:i1] + change.text + lines[l2][i2:]
            # a \r that now meets a \n across the edit's borders makes one \r\n break
            if piece.endswith("\r") and l2 + 1 < len(lines) and lines[l2 + 1].startswith("\n"):
                l2 += 1
                piece += lines[l2]
            if piece.startswith("\n") and l1 > 0 and lines[l1 - 1].endswith("\r"):
                l1 -= 1
                piece = lines[l1] + piece
            new_lines = lsp_lines(piece)
            if l2 + 1 < len(lines):
                new_lines.pop()  # the piece ends with the break of line l2: nothing follows it
            lines[l1:l2 + 1] = new_lines
        self.text = "".join(lines)
        self._starts = None

    def _line_position(self, lines: list[str], position: types.Position) -> tuple[int, int]:
        """(line, index into that piece) of an LSP position on ``lines``, clamped as :meth:`offset`."""
        if position.line < 0:
            return 0, 0
        if position.line >= len(lines):
            return len(lines) - 1, len(lines[-1])
        return position.line, self._index(_content(lines[position.line]), position.character)

    def apply(self, change: types.TextDocumentContentChangeEvent) -> None:
        """Apply one ``TextDocumentContentChangeEvent`` (a range edit, or the whole text)."""
        rng = getattr(change, "range", None)
        if rng is None:
            self.text = change.text
            self._starts = None
            return
        a, b = self.offset(rng.start), self.offset(rng.end)
        if b < a:
            a, b = b, a
        new = change.text
        old_starts = self._starts
        self.text = self.text[:a] + new + self.text[b:]
        if old_starts is None or "\r" in new or "\r" in self.text[max(a - 1, 0):a + len(new) + 1]:
            self._starts = None  # a \r near the edit may join or split a \r\n: count again
            return
        # Only \n breaks around the edit: keep the line starts before it, add those of the new
        # text, shift those after it (a 1 MB file is not scanned again on every keystroke).
        head = old_starts[:bisect.bisect_right(old_starts, a)]
        tail = old_starts[bisect.bisect_right(old_starts, b):]
        delta = len(new) - (b - a)
        pos = new.find("\n")
        while pos != -1:
            head.append(a + pos + 1)
            pos = new.find("\n", pos + 1)
        if delta:
            for k in range(len(tail)):  # in place: the tail is this edit's own copy
                tail[k] += delta
        head.extend(tail)
        self._starts = head
