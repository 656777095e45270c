"""The snippet of a hit is linear in its row and bounded (issue 16): the densest window of matches is
found with two pointers (it was a count over every pair of matches), only the window's tokens are
kept, and the text shown around them is at most EDGE_CHARS on each side (docs/conformance.md S9)."""

from __future__ import annotations

import importlib
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zonemark.search.snippet import EDGE_CHARS, query_tokens, snippet

snippet_module = importlib.import_module("zonemark.search.snippet")

_TOKEN = re.compile(r"[^\W_]+")


def _reference(text: str, wanted: tuple[frozenset[str], tuple[str, ...]], width: int = 24) -> str:
    """The snippet as it was chosen before: every match counted against every other (quadratic)."""
    exact, prefixes = wanted
    tokens = list(_TOKEN.finditer(text))
    hit = [k for k, m in enumerate(tokens) if snippet_module.fold(m.group()) in exact
           or any(snippet_module.fold(m.group()).startswith(p) for p in prefixes)]
    start = 0
    if hit and len(tokens) > width:
        best, best_count = hit[0], 0
        for k in hit:
            count = sum(1 for x in hit if k <= x < k + width)
            if count > best_count:
                best, best_count = k, count
        start = max(0, min(best - width // 4, len(tokens) - width))
    end = min(len(tokens), start + width)
    lo = tokens[start].start() if start > 0 else 0
    hi = tokens[end - 1].end() if end < len(tokens) else len(text)
    out, pos = [], lo
    for k in range(start, end):
        if k in hit:
            out += [text[pos:tokens[k].start()], "«", tokens[k].group(), "»"]
            pos = tokens[k].end()
    out.append(text[pos:hi])
    line = " ".join(snippet_module.shown("".join(out).replace("»" + snippet_module.ZWSP + "«", "")).split())
    return ("…" if lo > 0 else "") + line + ("…" if hi < len(text) else "")


_words = st.lists(st.sampled_from(["perché", "Perche", "caffè", "東京", "tokyo", "notte", "x1", "—", ",", "perchéx"]),
                  min_size=1, max_size=120)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_words, st.sampled_from(["perché", "caffè notte", "perch*", "東京", "assente"]))
def test_the_window_is_the_one_every_pair_of_matches_chose(words, query):
    text = " ".join(words)
    wanted = query_tokens(query)
    assert snippet(text, wanted) == _reference(text, wanted)


def test_a_row_of_matches_only_gives_a_window_of_them():
    text = "perché " * 200_000
    got = snippet(text, query_tokens("perché"))
    assert got.count("«perché»") == 24 and len(got) < 400 and got.endswith("…")


def test_text_around_the_words_is_cut_to_a_bounded_edge():
    text = "—" * 3_000_000 + " Kyoto perché 京都 " + "·" * 3_000_000
    got = snippet(text, query_tokens("perché"))
    assert "«perché»" in got and got.startswith("…") and got.endswith("…")
    assert len(got) <= 2 * EDGE_CHARS + 40
    assert snippet("—" * 1_000_000, query_tokens("perché")) == "—" * EDGE_CHARS + "…"
