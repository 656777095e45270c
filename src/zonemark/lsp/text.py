"""Text as the Language Server Protocol counts it: lines and position units.

LSP lines end at ``\\n``, ``\\r\\n`` or ``\\r`` (nothing else: not U+2028, not a form feed),
and a position's character counts UTF-16 code units unless the client agreed on UTF-8 or
UTF-32.  The parser numbers lines split on ``\\n`` and columns in code points
(:class:`zonemark.layer.spans.SourceLines`); both meet at offsets into the text.
"""

from __future__ import annotations

import bisect
import re

from lsprotocol import types

_BREAK = re.compile(r"\r\n|\r|\n")


class LspText:
    """A text and its LSP line starts, converting offsets to positions and back."""

    def __init__(self, text: str, encoding: str = "utf-16"):
        self.text = text
        self.encoding = encoding
        self._starts: list[int] | None = None

    @property
    def starts(self) -> list[int]:
        if self._starts is None:
            text = self.text
            starts = [0]
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
        text = self.text[starts[line]:end]
        if text.endswith("\r\n"):
            return text[:-2]
        if text.endswith(("\n", "\r")):
            return text[:-1]
        return text

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
        start = starts[position.line]
        line = self.line_text(position.line)
        want = max(position.character, 0)
        if self.encoding == types.PositionEncodingKind.Utf32 or line.isascii():
            return start + min(want, len(line))
        count = 0
        for i, ch in enumerate(line):
            if count >= want:
                return start + i
            count += self.units(ch)
        return start + len(line)

    def range(self, start: int, end: int) -> types.Range:
        return types.Range(start=self.position(start), end=self.position(end))


class TextBuffer(LspText):
    """An open document: its text, the client's version, and the edits the client sends."""

    def __init__(self, text: str, version: int | None, encoding: str = "utf-16"):
        super().__init__(text, encoding)
        self.version = version

    def apply(self, change) -> None:
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
        head.extend([s + delta for s in tail] if delta else tail)
        self._starts = head
