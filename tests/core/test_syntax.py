"""Fast paths of ``core.syntax`` give exactly what the patterns they stand in for give."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zonemark.core import syntax as sx

_line_chars = st.sampled_from(["*", "+", "-", " ", "\t", "a", "R", "1", "9", ".", ")", "\r", "\u2028", "é", "#",
                               "\x00", "\x1f", "\x7f", "\x85", "\u3000"])
lines = st.text(alphabet=_line_chars, max_size=12)


@settings(max_examples=2000, deadline=None)
@given(lines)
def test_list_item_equals_the_list_item_pattern(line):
    m = sx.LIST_ITEM.match(line)
    assert sx.list_item(line) == (None if m is None else (m.group(1), m.group(2), m.group(3) or ""))


@settings(max_examples=1000, deadline=None)
@given(st.text(max_size=40) | st.text(alphabet=_line_chars, max_size=40))
def test_first_control_char_equals_the_pattern_search(text):
    found, want = sx.first_control_char(text), sx.CONTROL_CHARS.search(text)
    if want is None:
        assert found is None
    else:
        assert found is not None and (found.start(), found.group()) == (want.start(), want.group())


def test_the_control_characters_are_exactly_the_patterns():
    assert [c for c in map(chr, range(0x110000)) if sx.CONTROL_CHARS.fullmatch(c)] == list(sx._CONTROL_LIST)


@pytest.mark.parametrize("at", [0, 1, sx.CONTROL_SCAN_CHUNK - 1, sx.CONTROL_SCAN_CHUNK, sx.CONTROL_SCAN_CHUNK + 1,
                                3 * sx.CONTROL_SCAN_CHUNK + 7])
def test_the_first_control_character_is_found_in_any_slice_of_the_scan(at):
    """W97: the control-character test reads the text a slice at a time; the first one is found wherever it sits,
    the one regular-expression search of the whole text gives the same match, and a clean text has none."""
    text = "Città — 東京 " * (4 * sx.CONTROL_SCAN_CHUNK // 11)
    assert sx.first_control_char(text) is None
    dirty = text[:at] + "\x07" + text[at:] + "\x01"
    m = sx.first_control_char(dirty)
    assert m is not None and m.start() == at and m.group() == "\x07"
    assert m.start() == sx.CONTROL_CHARS.search(dirty).start()
