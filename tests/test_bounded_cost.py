"""Bounded cost on hostile input (docs/conformance.md, "Bounded cost", B1-B9).

Never a wall time: each test counts steps, calls or retained objects, or the bytes allocated at
the peak (tracemalloc), on inputs built to be the worst case of one entry point.
"""

from __future__ import annotations

import random
import tracemalloc

from zonemark.core import text as text_policy
from zonemark.core.parser import parse_bytes


def _peak(fn, *args):
    """The most bytes allocated at once while ``fn(*args)`` runs (its result included)."""
    tracemalloc.start()
    try:
        result = fn(*args)
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


def test_b1_counting_invalid_bytes_holds_no_copy_of_them():
    """Random bytes: about half of them are kept as escaped bytes; the count needs no list of them."""
    data = random.Random(7).randbytes(300_000)
    source = text_policy.decode(data)
    peak, (line, column, byte, count) = _peak(text_policy.first_escaped_byte, source)
    assert count == sum(1 for ch in source if "\udc80" <= ch <= "\udcff") > 100_000
    assert peak < 64_000  # before: a list of ~150,000 one-character strings, ~40x the file


def test_b1_parse_of_random_bytes_peaks_under_8x_the_file():
    data = random.Random(8).randbytes(300_000) + "\nperché — 東京\n".encode()
    peak, doc = _peak(parse_bytes, data)
    assert "INVALID_UTF8" in {d.code for d in doc.diagnostics}
    assert peak <= 8 * len(data)  # before: ~40x
