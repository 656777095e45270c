"""A frozen copy of zonemark.search.snippet before B26 (the snippets the streamed one is compared with).

One line of a hit's text around the words that matched, with the words marked.

Built from the stored text rather than by FTS5's ``snippet()``, which needs the query run
again for each hit (costly for prefix queries over a large index).  Tokens are read as the
FTS5 ``unicode61`` tokenizer reads them — runs of letters and digits, each CJK character on
its own (:func:`.rows.segment_cjk`) — and compared case- and accent-insensitively, as
``remove_diacritics 2`` does.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import unicodedata

from zonemark.search.query import terms
from zonemark.search.rows import ZWSP, segment_cjk, shown

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
    """``text`` cut to ``width`` tokens around the most matches, matches between ``markers``, one line.

    Linear in the text: one pass finds the matching tokens, the densest window of ``width`` tokens is
    found with two pointers over them, and a second pass reads only that window's tokens."""
    exact, prefixes = wanted

    def hit(tok: str) -> bool:
        f = fold(tok)
        return f in exact or any(f.startswith(p) for p in prefixes)

    marks: list[int] = []  # indexes of the matching tokens, in order
    count = 0
    for count, m in enumerate(_TOKEN.finditer(text), 1):
        if hit(m.group()):
            marks.append(count - 1)
    if not count:
        return _one_line(text[:EDGE_CHARS]) + ("…" if len(text) > EDGE_CHARS else "")
    start = 0
    if marks and count > width:
        best, best_count, j = marks[0], 0, 0
        for i, k in enumerate(marks):  # the first mark whose window [k, k + width) holds the most marks
            while j < len(marks) and marks[j] < k + width:
                j += 1
            if j - i > best_count:
                best, best_count = k, j - i
        start = max(0, min(best - width // 4, count - width))
    end = min(count, start + width)
    window = list(itertools.islice(_TOKEN.finditer(text), start, end))
    lo = window[0].start() if start > 0 else max(0, window[0].start() - EDGE_CHARS)
    hi = window[-1].end() if end < count else min(len(text), window[-1].end() + EDGE_CHARS)
    first = bisect.bisect_left(marks, start)
    marked = set(marks[first:bisect.bisect_left(marks, end, first)])
    out, pos = [], lo
    for k, m in enumerate(window, start):
        if k in marked:
            out += [text[pos:m.start()], markers[0], m.group(), markers[1]]
            pos = m.end()
    out.append(text[pos:hi])
    # characters of one CJK word are tokens of their own: one mark around the word, not one each
    joined = "".join(out).replace(markers[1] + ZWSP + markers[0], "")
    return ("…" if lo > 0 else "") + _one_line(joined) + ("…" if hi < len(text) else "")


def _one_line(text: str) -> str:
    return " ".join(shown(text).split())
