"""Fast paths of ``core.syntax`` give exactly what the patterns they stand in for give."""

from __future__ import annotations

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
