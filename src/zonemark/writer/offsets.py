"""Two kinds of offset the writer handles, kept apart by their types.

A user's file is bytes (§1: UTF-8, invalid bytes kept as they are, :mod:`zonemark.core.text`).
The zone index (:mod:`.locate`) points into those bytes, so a write splices bytes without
decoding the whole file: :data:`ByteOffset`.  The re-check (:mod:`.verify`) compares parsed
*text*, whose positions are characters: :data:`CharOffset`.  After any non-ASCII character
the two differ, and slicing text with a byte offset (or bytes with a character offset) cuts
the wrong region.  Every conversion goes through the functions below, which only ever cut
at line starts (a newline is one byte and one character, so a line start is a boundary in
both views).
"""

from __future__ import annotations

from typing import NewType

from ..core.text import decode, encode

#: An offset into the file's bytes.
ByteOffset = NewType("ByteOffset", int)
#: An offset into the file's decoded text (characters; an invalid byte is one character).
CharOffset = NewType("CharOffset", int)


def chars_before(data: bytes, at: ByteOffset) -> CharOffset:
    """The character offset of byte offset ``at`` (a line start) of ``data``."""
    return CharOffset(len(decode(data[:at])))


def bytes_before(text: str, at: CharOffset) -> ByteOffset:
    """The byte offset of character offset ``at`` (a line start) of ``text``."""
    return ByteOffset(len(encode(text[:at])))


def text_between(data: bytes, start: ByteOffset, end: ByteOffset) -> str:
    """The decoded text of ``data[start:end]`` (both line starts)."""
    return decode(data[start:end])
