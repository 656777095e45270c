"""One line of a hit's text around the words that matched, with the words marked.

Built from the stored text rather than by FTS5's ``snippet()``, which needs the query run
again for each hit (costly for prefix queries over a large index).  Tokens are read as the
FTS5 ``unicode61`` tokenizer reads them — runs of letters and digits, each CJK character on
its own (:func:`.rows.segment_cjk`) — and compared case- and accent-insensitively, as
``remove_diacritics 2`` does.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections import deque
from collections.abc import Callable, Iterable, Iterator

from .query import terms
from .rows import ZWSP, segment_cjk, shown

_TOKEN = re.compile(r"[^\W_]+")
_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})
_RAW_WORD = re.compile(r"([^\W_]+)(\*?)(?!\s*:)")


@functools.lru_cache(maxsize=8192)
def fold(token: str) -> str:
    """A token as the index compares it: case-folded, accents removed."""
    decomposed = unicodedata.normalize("NFKD", token.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def query_tokens(query: str, *, raw: bool = False) -> tuple[frozenset[str], tuple[str, ...]]:
    """The folded tokens a query looks for, and the prefixes (``word*``)."""
    exact: set[str] = set()
    prefixes: list[str] = []
    if raw:
        for m in _RAW_WORD.finditer(segment_cjk(query)):
            if m.group(1) in _OPERATORS:
                continue
            (prefixes.append if m.group(2) else exact.add)(fold(m.group(1)))
        return frozenset(exact), tuple(prefixes)
    for text, prefix in terms(query):
        tokens = [fold(t) for t in _TOKEN.findall(segment_cjk(text))]
        if not tokens:
            continue
        if prefix:
            prefixes.append(tokens.pop())
        exact.update(tokens)
    return frozenset(exact), tuple(prefixes)


#: At most this many characters of text before the first or after the last token shown (a row of punctuation
#: or spaces around its words never makes a long snippet).
EDGE_CHARS = 80


def snippet(text: str, wanted: tuple[frozenset[str], tuple[str, ...]], *, markers: tuple[str, str] = ("«", "»"),
            width: int = 24) -> str:
    """``text`` cut to ``width`` tokens around the most matches, matches between ``markers``, one line."""
    return snippet_of(lambda: (text,), wanted, markers=markers, width=width)


def snippet_of(pieces: Callable[[], Iterable[str]], wanted: tuple[frozenset[str], tuple[str, ...]], *,
               markers: tuple[str, str] = ("«", "»"), width: int = 24) -> str:
    """:func:`snippet` of the text that ``pieces()`` gives in pieces, read again for each pass (B26).

    Linear in the text, and no copy of it is made: one pass counts the tokens and finds the densest window
    of ``width`` tokens with two pointers over the matches (only the matches of one window are held), a
    second reads that window's tokens, a third the text they span.  A hit's long body is read from the
    index a slice at a time, not held whole as a string."""
    exact, prefixes = wanted

    def hit(tok: str) -> bool:
        f = fold(tok)
        return f in exact or any(f.startswith(p) for p in prefixes)

    size: list[int] = []
    count, marks, best, best_count = 0, 0, 0, 0
    pending: deque[tuple[int, int]] = deque()  # (token index, mark index) of the marks whose window is open
    for count, (_s, _e, tok) in enumerate(_tokens(pieces(), size), 1):
        if hit(tok):
            k = count - 1
            while pending and pending[0][0] + width <= k:  # the window [k0, k0 + width) holds marks i0..marks-1
                k0, i0 = pending.popleft()
                if marks - i0 > best_count:
                    best, best_count = k0, marks - i0
            pending.append((k, marks))
            marks += 1
    for k0, i0 in pending:
        if marks - i0 > best_count:
            best, best_count = k0, marks - i0
    length = size[0]
    if not count:
        return _one_line(_slice(pieces(), 0, EDGE_CHARS)) + ("…" if length > EDGE_CHARS else "")
    start = 0
    if marks and count > width:
        start = max(0, min(best - width // 4, count - width))
    end = min(count, start + width)
    window = list(itertools.islice(_tokens(pieces(), []), start, end))
    lo = window[0][0] if start > 0 else max(0, window[0][0] - EDGE_CHARS)
    hi = window[-1][1] if end < count else min(length, window[-1][1] + EDGE_CHARS)
    text = _slice(pieces(), lo, hi)
    out, pos = [], lo
    for s, e, tok in window:
        if hit(tok):
            out += [text[pos - lo:s - lo], markers[0], tok, markers[1]]
            pos = e
    out.append(text[pos - lo:])
    # characters of one CJK word are tokens of their own: one mark around the word, not one each
    joined = "".join(out).replace(markers[1] + ZWSP + markers[0], "")
    return ("…" if lo > 0 else "") + _one_line(joined) + ("…" if hi < length else "")


def _tokens(pieces: Iterable[str], size: list[int]) -> Iterator[tuple[int, int, str]]:
    """The tokens of the text given in ``pieces``: (start, end, token), offsets in the whole text.

    A token at the end of a piece may go on in the next: it is held back and read with it. Once every
    piece is read, the text's length is appended to ``size``."""
    base, carry = 0, ""
    for piece in pieces:
        buf = carry + piece if carry else piece
        held = None
        for m in _TOKEN.finditer(buf):
            if held is not None:
                yield base + held.start(), base + held.end(), held.group()
            held = m
        cut = len(buf)
        if held is not None:
            if held.end() == len(buf):
                cut = held.start()
            else:
                yield base + held.start(), base + held.end(), held.group()
        carry = buf[cut:]
        base += cut
        del buf, held
    if carry:
        yield base, base + len(carry), carry
    size.append(base + len(carry))


def _slice(pieces: Iterable[str], lo: int, hi: int) -> str:
    """Characters ``[lo, hi)`` of the text given in ``pieces``."""
    out, pos = [], 0
    for piece in pieces:
        if pos >= hi:
            break
        end = pos + len(piece)
        if end > lo:
            out.append(piece[max(lo - pos, 0):hi - pos])
        pos = end
    return "".join(out)


def _one_line(text: str) -> str:
    return " ".join(shown(text).split())
