"""A nesting-depth guard in front of the streaming JSON parser (ruling I18).

ijson builds each event's prefix from the whole path, so a file nested 10,000 deep costs
gigabytes before any object is handed over.  :class:`DepthGuard` reads the bytes on their way to
the parser and refuses, in one line, a file nested deeper than :data:`MAX_JSON_DEPTH`: strings are
skipped (brackets inside them do not count), the brackets outside them are counted.  The work per
chunk is done by ``bytes`` methods (replace, split, translate): linear in the bytes.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any, BinaryIO

from .model import DamagedExport

#: The deepest nesting of arrays and objects a JSON export may have (a ChatGPT export nests about 12 deep).
MAX_JSON_DEPTH = 200
_STEP = bytes.maketrans(b"[{]}", b"\x01\x01\x02\x02")
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")


class DepthGuard:
    """A binary stream that raises :class:`DamagedExport` once the JSON it carries nests over the limit."""

    def __init__(self, raw: BinaryIO, limit: int = MAX_JSON_DEPTH) -> None:
        self._raw, self._limit = raw, limit
        self.depth = 0
        self._in_string = False
        self._carry = b""  # the last chunk's trailing backslash, when its escape ends in the next chunk

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        if data:
            self._scan(data)
        return data

    def _scan(self, data: bytes) -> None:
        """Count the brackets of ``data`` outside strings: escapes made harmless, then split at the quotes."""
        data = self._carry + data
        odd = (len(data) - len(data.rstrip(b"\\"))) % 2  # a run of backslashes pairs from its start
        data, self._carry = (data[:-1], b"\\") if odd else (data, b"")
        plain = data.replace(b"\\\\", b"__").replace(b'\\"', b"__")
        pieces = plain.split(b'"')
        outside = b"".join(pieces[1::2] if self._in_string else pieces[0::2])
        if len(pieces) % 2 == 0:
            self._in_string = not self._in_string
        brackets = outside.translate(_STEP, _NOT_BRACKET)
        if not brackets:
            return
        deepest = self._deepest(brackets)
        opens = brackets.count(1)
        self.depth += opens - (len(brackets) - opens)
        if deepest > self._limit:
            raise DamagedExport(f"nested deeper than {self._limit} arrays and objects (MAX_JSON_DEPTH)")

    def _deepest(self, brackets: bytes) -> int:
        """The deepest nesting reached in ``brackets`` (opening 1, closing 2) from the depth before them.

        Matched pairs are removed innermost first, one level per pass (each pass at C speed); ``k`` passes
        leave closers then openers, so the depth reached is at most the start plus the openers left and ``k``.
        Only when that bound is over the limit is the exact walk taken (linear).
        """
        start = self.depth
        rest, passes = brackets, 0
        while passes <= self._limit:
            shorter = rest.replace(b"\x01\x02", b"")
            if len(shorter) == len(rest):
                break
            rest, passes = shorter, passes + 1
        else:
            passes = self._limit + 1
        openers = len(rest.lstrip(b"\x02"))
        bound = start + openers + passes  # a place's depth: the unmatched openers before it, plus the pairs around it
        if bound <= self._limit:
            return bound
        steps = itertools.accumulate((1 if b == 1 else -1 for b in brackets), initial=start)
        return max(steps)


def array_objects(stream: BinaryIO) -> Iterator[dict[str, Any]]:
    """Every object of the file's top-level JSON array, one at a time, behind the depth guard (ijson: the
    file is never loaded whole); invalid JSON is :class:`DamagedExport`."""
    import ijson  # type: ignore[import-untyped]
    try:
        for raw in ijson.items(DepthGuard(stream), "item", use_float=True, buf_size=262_144):
            if isinstance(raw, dict):
                yield raw
    except ijson.JSONError as exc:
        raise DamagedExport(f"not valid JSON ({exc})") from None
