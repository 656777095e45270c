"""The sanitiser keeps its behaviour while its memory is made compact (§5.5, W20, W24).

``tests/sanitize_reference.py`` is a frozen copy of the sanitiser and of the bullet rewrite as they were
when every line was a string of its own; on random texts made of the hostile alphabet (tags, headers, rule
bullets, list and quote markers, fences, HTML, the [/LOG] marker, separators, every kind of line break,
invisible and bidi characters, look-alikes, Italian and Japanese text) the new code gives the same text, the
same notes in the same order and the same refusals — with the text read in chunks of every size, so that
each chunk boundary falls on every kind of line.
"""

from __future__ import annotations

import os

import pytest
import sanitize_reference as ref
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from zonemark.writer import bullets
from zonemark.writer import sanitize as sanitize_module
from zonemark.writer.refusals import RefusedWrite

EXAMPLES = int(os.environ.get("ZONEMARK_SANITIZE_EXAMPLES", "250"))

PIECES = [
    "#", "## ", "###### ", "###### LOG: 2026-01-01 — titolo", "###### x #", "###### <b>", "[P1]", "[/P4]", "[p1]",
    "[P 1]", "[!NOTE]", "[NUCLEI: 1]", "* R1: x", "*\tR0: x", "* R0:x", "* MODULE 1", "- NUCLEUS 2",
    "* ACTIVE: 001", "**STATE:** active", "**STATO:**", "- ", "* ", "+ ", "-", "*", "1. ", "2) ", "10. ", "> ", ">",
    "```", "~~~", "````", "``` py", "~~~ x", "`", "~", "<!--", "-->", "<div>", "</x>", "\\<!--", "<", "[/LOG]",
    "\\[/LOG]", "`[/LOG]`", "&#91;/LOG]", "**[/LOG]**", "[/log]", "***", "---", "- - -", "* * *", "___", "===",
    " ", "  ", "    ", "\t", "\u200b", "\u202e", "\u2066", "\u0301", "\u00ad", "\u200d", "\ufe0f", "\ufeff",
    "\u3000", "\u00a0", "\u2800", "\U000e0041", "＞", "＊", "［P1］", "［/P4］", "＃＃ x", "＃タグ", "［注］",
    "perché", "città — ", "東京", "見える", "—", "x", "a b", "\\", "&amp;", "&", "\x00", "\x07", "\x9b",
    "\U0001f600", "👍\ufe0f", "\u0645\u200c\u06cc",
]
BREAKS = ["\n", "\n", "\n", "\r\n", "\r", "\u2028", "\x85", "\n\n"]

line = st.lists(st.sampled_from(PIECES), max_size=5).map("".join)
text = st.lists(st.tuples(line, st.sampled_from(BREAKS)), max_size=14).map(
    lambda parts: "".join(a + b for a, b in parts)) | st.lists(line, max_size=14).map("\n".join)
#: '###### ' titles at column 0, for the entries mode (a title is sanitised as a title, or refused)
entries_text = st.lists(st.one_of(line, line.map(lambda t: "###### " + t)), max_size=14).map("\n".join)
#: the chunk sizes the text is read in: one character (a chunk per line), small, and the default
CHUNKS = st.sampled_from([1, 2, 3, 5, 8, 16, 40, None])


def outcome(fn, value):
    try:
        out = fn(value)
    except RefusedWrite as exc:
        return ("refused", str(exc), exc.code, exc.rule)
    return ("ok", out.text, out.changes)


def compare(new, old, value, chunk):
    saved = sanitize_module._CHUNK_CHARS
    if chunk is not None:
        sanitize_module._CHUNK_CHARS = chunk
    try:
        got = outcome(new, value)
    finally:
        sanitize_module._CHUNK_CHARS = saved
    assert got == outcome(old, value), repr(value)


SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(text, CHUNKS)
@example("```\n# x\n````\n[/P4]\n```\n<!-- a\n~~~\n", 1)
@example("\n\n  \n- a\n  - b\n      - c\n[/LOG]\n* R1: x\n\n", 2)
@example("perché\r\n\r\n- 東京\r\n\t* x\u200b\r\n", 3)
def test_the_body_is_sanitised_as_before(value, chunk):
    compare(sanitize_module.sanitize_body, ref.sanitize_body, value, chunk)


@SETTINGS
@given(st.one_of(entries_text, text), CHUNKS)
@example("###### LOG: x #\n```\n###### inside\n```\n###### <b> — 東京\n- a\n  - b", 1)
@example("###### \n[/P4]", None)
def test_the_entries_are_sanitised_as_before(value, chunk):
    compare(sanitize_module.sanitize_entries, ref.sanitize_entries, value, chunk)


@SETTINGS
@given(text, CHUNKS)
def test_a_proposal_and_its_characters_are_cleaned_as_before(value, chunk):
    compare(sanitize_module.clean_proposal, ref.clean_proposal, value, chunk)
    compare(sanitize_module.clean_characters, ref.clean_characters, value, chunk)


@SETTINGS
@given(st.lists(line, max_size=30), st.booleans())
def test_the_bullet_rewrite_of_a_list_is_as_before(lines, after_paragraph):
    new = bullets.canonical_bullets(list(lines), sanitize_module._reads_as_structure, after_paragraph=after_paragraph)
    assert new == ref.canonical_bullets(list(lines), ref._reads_as_structure, after_paragraph=after_paragraph)


@pytest.mark.parametrize("chunk", [1, 7, 64, None])
def test_long_texts_are_sanitised_as_before(chunk):
    """A few long texts, so that chunks of the default size are many and end on every kind of line."""
    import random

    rnd = random.Random(5)
    for _ in range(4):
        value = "".join(rnd.choice(PIECES) + (rnd.choice(BREAKS) if rnd.random() < 0.4 else "")
                        for _ in range(60_000))
        compare(sanitize_module.sanitize_body, ref.sanitize_body, value, chunk)
        compare(sanitize_module.sanitize_entries, ref.sanitize_entries, value.replace("###### ", "#"), chunk)
        compare(sanitize_module.clean_proposal, ref.clean_proposal, value, chunk)
