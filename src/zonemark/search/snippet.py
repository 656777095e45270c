"""One line of a hit's text around the words that matched, with the words marked.

Built from the stored text rather than by FTS5's ``snippet()``, which needs the query run
again for each hit (costly for prefix queries over a large index).  Tokens are read as the
FTS5 ``unicode61`` tokenizer reads them — runs of letters and digits, each CJK character on
its own (:func:`.rows.segment_cjk`) — and compared case- and accent-insensitively, as
``remove_diacritics 2`` does.
"""

from __future__ import annotations

import functools
import re
import unicodedata

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


def snippet(text: str, wanted: tuple[frozenset[str], tuple[str, ...]], *, markers: tuple[str, str] = ("«", "»"),
            width: int = 24) -> str:
    """``text`` cut to ``width`` tokens around the most matches, matches between ``markers``, one line."""
    exact, prefixes = wanted
    tokens = list(_TOKEN.finditer(text))
    if not tokens:
        return " ".join(shown(text).split())

    def hit(tok: str) -> bool:
        f = fold(tok)
        return f in exact or any(f.startswith(p) for p in prefixes)

    marks = [k for k, m in enumerate(tokens) if hit(m.group())]
    start = 0
    if marks and len(tokens) > width:
        best, best_count = marks[0], 0
        for k in marks:
            count = sum(1 for x in marks if k <= x < k + width)
            if count > best_count:
                best, best_count = k, count
        start = max(0, min(best - width // 4, len(tokens) - width))
    end = min(len(tokens), start + width)
    lo = tokens[start].start() if start > 0 else 0
    hi = tokens[end - 1].end() if end < len(tokens) else len(text)
    marked = set(marks)
    out, pos = [], lo
    for k in range(start, end):
        m = tokens[k]
        if k in marked:
            out += [text[pos:m.start()], markers[0], m.group(), markers[1]]
            pos = m.end()
    out.append(text[pos:hi])
    # characters of one CJK word are tokens of their own: one mark around the word, not one each
    joined = "".join(out).replace(markers[1] + ZWSP + markers[0], "")
    line = " ".join(shown(joined).split())
    return ("…" if lo > 0 else "") + line + ("…" if hi < len(text) else "")
