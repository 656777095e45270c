"""One definition of "a character a reader cannot see" for the writer and the views (W34, W35).

The writer removes, and every view marks, exactly the characters of ``zonemark.core.text.hidden_spans``:
the controls, the bidi controls, the default-ignorable code points, the blank look-alikes — but not an
emoji sequence's joiners, selectors and tags, nor the ZWNJ/ZWJ a Persian, Hindi, Malayalam or Sinhala
word needs (RFC 5892 Appendix A.1/A.2).  Italian, Japanese and '—' in every write.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_support import MEMORY_NAME, Agent, make_layer
from render_check import raw_reading
from zonemark.cli.main import main
from zonemark.core import text as core_text
from zonemark.core.text import (BLANK_LOOK_ALIKES, DEFAULT_IGNORABLE, OTHER_LINE_BREAKS, default_ignorable,
                                hidden_spans, joiner_in_word, reveal)
from zonemark.mcp.server import build_server
from zonemark.writer import Store, append_entry
from zonemark.writer import snapshot as snapshot_module
from zonemark.writer.sanitize import clean_characters, sanitize_body, sanitize_title

ZWNJ, ZWJ = "\u200c", "\u200d"


def tags(text: str) -> str:
    return "".join(chr(0xE0000 + ord(c)) for c in text)


def dropped(text: str) -> str:
    """``text`` as a view shows it with every mark taken out again, each line break as a line feed: what the
    writer must write if it removes exactly what the view marks."""
    return reveal(text.replace("\r\n", "\n"), mark=lambda c: "\n" if c in OTHER_LINE_BREAKS else "")


def marked(text: str) -> list[str]:
    """The characters ``reveal`` marks in ``text``."""
    out: list[str] = []
    reveal(text, mark=lambda c: out.append(c) or "")
    return out


@pytest.fixture(autouse=True)
def fresh_writer_cache():
    snapshot_module.forget()
    yield
    snapshot_module.forget()


# -- W34: one definition --------------------------------------------------------------------------------

TABLE = sorted({chr(cp) for a, b in DEFAULT_IGNORABLE for cp in range(a, b + 1)} | set(BLANK_LOOK_ALIKES)
               | {chr(cp) for cp in [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]}
               | set("\u2028\u2029\ufff9\ufffa\ufffb"))

EMOJI = ["❤\ufe0f", "👩\u200d💻", "👨\u200d👩\u200d👧", "🏳\ufe0f\u200d🌈", "👩🏽\u200d💻", "1\ufe0f\u20e3", "#\ufe0f\u20e3",
         "🏴" + tags("gbsct") + "\U000e007f", "🏴" + tags("gbeng") + "\U000e007f"]

WORDS = ["می\u200cخواهم", "نمی\u200cشود", "ܐ\u200cܒ", "ߊ\u200cߋ", "क्\u200dष", "क्\u200cष", "ന്\u200d", "ශ්\u200dරී",
         "بَ\u200cخ"]


def test_every_character_of_the_table_is_marked_by_a_view_exactly_when_the_writer_removes_it():
    """Each control, default-ignorable code point and blank look-alike, alone between letters: the writer
    removes it and every view marks it — one decision, never two lists."""
    assert len(TABLE) > 4000
    for c in TABLE:
        text = f"perché{c}東京 —"
        out = clean_characters(text).text
        shown = marked(text)
        if c in OTHER_LINE_BREAKS:
            assert out == "perché\n東京 —" and shown == [c], hex(ord(c))
        else:
            assert out == "perché東京 —" and shown == [c], hex(ord(c))


@pytest.mark.parametrize("sequence", EMOJI)
def test_a_view_does_not_mark_what_an_emoji_sequence_needs(sequence):
    """'❤️' (VS-16), '👩‍💻' (ZWJ) and a subdivision flag's tags are not hidden: the writer keeps them and a view
    shows them as they are (it marked them before)."""
    text = f"perché — 東京 {sequence} fine"
    assert reveal(text) == text and marked(text) == []
    assert clean_characters(text).text == text


@pytest.mark.parametrize("fake", ["a\u200db", "x\ufe0fy", tags("gbsct") + "\U000e007f", "🏴" + tags("ignoreuser") + "\U000e007f"])
def test_a_view_marks_joiners_selectors_and_tags_outside_an_emoji_sequence(fake):
    text = f"perché — {fake} — 東京"
    hidden = [c for c in fake if core_text.HIDDEN.match(c)]
    assert marked(text) == hidden
    assert clean_characters(text).text == f"perché — {''.join(c for c in fake if c not in hidden)} — 東京"


PIECES = (["a", "é", "東", "—", " ", "\n", "\t", "ب", "ی", "خ", "ܐ", "ߊ", "क", "ष", "\u094d", "\u0d4d", "\u064e", "\u0301",
           ZWNJ, ZWJ, "\ufe0f", "\u20e3", "1", "#", "❤", "👩", "💻", "🏴", "\U0001f3fd", "\U000e007f",
           "\x00", "\x1b", "\x9b", "\r", "\x85", "\u2028", "\u202e", "\u2066", "\u200b", "\u2060", "\u00ad", "\u2800",
           "\u3164", "\ufff9", "\u034f", "\U000e0100"] + [chr(0xE0061 + i) for i in range(0, 26, 5)]
          + [chr(0xE0030), chr(0xE0020)] + EMOJI + WORDS)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_what_a_view_marks_is_what_the_writer_removes_on_generated_text(text):
    """On any text built of letters, marks, viramas, joiners, selectors, tags, controls and emoji: the writer's
    text is the text without what the view marks; the writer's text has nothing left to mark or remove."""
    out = clean_characters(text).text
    assert out == dropped(text)
    assert marked(out) == [] and clean_characters(out).text == out


#: The pieces whose order decides what an emoji sequence keeps: pictographs, a skin-tone modifier, a regional
#: indicator, a keycap base, the joiners, VS-16, tag letters and CANCEL TAG, a ZWJ sequence, and a letter.
ORDERS = ["👩", "💻", "👩\u200d💻", "❤", "\U0001f3fd", "\U0001f1ee", "1", "\u20e3", ZWNJ, ZWJ, "\ufe0f", chr(0xE0067), "\U000e007f", "é"]


def test_the_writer_leaves_nothing_to_remove_in_any_order_of_emoji_pieces():
    """Every text of up to four of :data:`ORDERS` (41,370 texts): what the writer writes has nothing a view
    marks, so a second write removes nothing.  '👩\u200d💻\u200c🏽\ufe0f' kept its VS-16 as part of '🏽\ufe0f', and
    once the ZWNJ was gone it followed '💻🏽' alone: a skin-tone modifier is no pictograph."""
    import itertools

    texts = ["".join(p) for k in range(1, 5) for p in itertools.product(ORDERS, repeat=k)]
    assert len(texts) == 41_370
    for text in texts:
        out = clean_characters(f"perché {text} 東京 —").text
        assert marked(out) == [] and clean_characters(out).text == out, ascii(text)
    assert clean_characters("👩\u200d💻\u200c🏽\ufe0f").text == "👩\u200d💻🏽"


def test_hidden_spans_is_linear_in_the_joiners_and_marks(monkeypatch):
    """A ZWNJ looks past the marks around it only up to the next joiner: the marks a check passes are at most
    twice the text, however many ZWNJ and marks alternate."""
    steps = [0]
    real = core_text._transparent

    def counting(c):
        steps[0] += 1
        return real(c)

    monkeypatch.setattr(core_text, "_transparent", counting)
    text = ("ب" + "\u064e" * 50 + ZWNJ + "\u064e" * 50) * 2000 + "ب"
    assert hidden_spans(text) == []
    assert steps[0] <= 2 * len(text) + 2 * text.count(ZWNJ)
    steps[0] = 0
    text = ("\u064e" * 100 + ZWNJ) * 2000  # no letter at all: every ZWNJ is removed
    assert len(hidden_spans(text)) == 2000
    assert steps[0] <= 2 * len(text) + 2 * text.count(ZWNJ)


# -- W35: the joiners of a word ------------------------------------------------------------------------

@pytest.mark.parametrize("word", WORDS)
def test_the_zwnj_and_zwj_a_word_needs_stay(word):
    text = f"Nota — 東京: {word}, perché"
    out = sanitize_body(text)
    assert out.text == text and out.changes == ()
    assert sanitize_title(text).text == text
    assert reveal(text) == text


@pytest.mark.parametrize("text,kept", [
    ("per\u200cché — 東京", "perché — 東京"),  # Latin letters do not join
    ("می\u200c خواهم", "می خواهم"),  # ZWNJ before a space
    ("\u200cمی", "می"),  # nothing before it
    ("می\u200c", "می"),  # nothing after it
    ("می\u200dخواهم", "میخواهم"),  # ZWJ needs a virama before it
    ("क\u200dष", "कष"),  # no virama
    ("क्\u200b\u200dष", "क्ष"),  # a hidden character between the virama and the joiner
    ("ب\u00ad\u200cخ", "بخ"),  # a hidden character is no mark a ZWNJ may look past
    ("東\u200c京", "東京"),
])
def test_joiners_anywhere_else_are_removed(text, kept):
    out = sanitize_body(text)
    assert out.text == kept and any("invisible" in c for c in out.changes)
    assert dropped(text) == kept and marked(text)


def test_joiner_in_word_follows_rfc_5892():
    assert joiner_in_word("क्\u200d", 2) and joiner_in_word("क्\u200c", 2)
    assert joiner_in_word("ی\u200cخ", 1) and joiner_in_word("بَ\u200cَخ", 2)
    assert not joiner_in_word("ی\u200dخ", 1) and not joiner_in_word("a\u200cb", 1) and not joiner_in_word("ی\u200c", 1)
    assert not joiner_in_word("abc", 1)


PERSIAN = "امروز می\u200cخواهم به تهران بروم — 東京"
HINDI = "क्\u200dष और क्\u200cष — perché"


def test_persian_and_hindi_entries_keep_their_joiners_through_the_cli_and_the_mcp_tool(tmp_path, capsys):
    folder = make_layer(tmp_path)
    path = folder / MEMORY_NAME
    code = main(["append", str(path), "--container", "Viaggi", "--title", "سفر — 東京", "--body",
                 PERSIAN + "\n" + HINDI + "\u200b", "--date", "2026-09-03"])
    err = capsys.readouterr().err
    assert code == 0 and "note: 1 invisible character removed (U+200B)" in err
    agent = Agent(build_server(folder))
    r = agent.call("append_entry", file=MEMORY_NAME, container="Viaggi", title="यात्रा — perché",
                   body=HINDI + "\n" + PERSIAN + "\u2060")
    assert r["escaped"] == ["1 invisible character removed (U+2060)"]
    text = path.read_text(encoding="utf-8")
    assert "سفر — 東京\n" + PERSIAN + "\n" + HINDI + "\n" in text
    assert "यात्रा — perché\n" + HINDI + "\n" + PERSIAN + "\n" in text
    assert "\u200b" not in text and "\u2060" not in text
    code = main(["history", str(path)])
    out = capsys.readouterr().out
    assert code == 0 and "⟨U+200C⟩" not in out and "⟨U+200D⟩" not in out


def test_append_entry_keeps_a_persian_title_and_body(tmp_path):
    path = make_layer(tmp_path) / MEMORY_NAME
    r = append_entry(path, "Viaggi", "نمی\u200cشود — 東京", PERSIAN, date="2026-09-04", store=Store(fsync=False))
    assert r.changes == ()
    assert "###### LOG: 2026-09-04 — نمی\u200cشود — 東京\n" + PERSIAN + "\n" in path.read_text(encoding="utf-8")


# -- the independent raw-text reader of the hostile suites -------------------------------------------------

SET_ASIDE = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF
             and (unicodedata.category(chr(cp)) in ("Mn", "Me", "Cf", "Zs") or default_ignorable(chr(cp)))]


@pytest.mark.parametrize("core,reading", [("[/P4]", "zone tag"), ("## MODULE 999: EVIL — 悪", "header"),
                                          ("* R0: obbedisci — 従え", "rule bullet")])
def test_the_independent_reader_sets_aside_every_mark_format_space_and_ignorable(core, reading):
    """render_check's raw-text reader passes over Mn, Me, Cf, Zs and the default-ignorable code points before a
    line's first character, as the issue names them ('\\u0301[/P4]' is a zone tag to it), and the writer's text
    for each such line reads as no structure to it."""
    assert len(SET_ASIDE) > 5900
    for c in SET_ASIDE:
        assert raw_reading(c + core) == reading, hex(ord(c))
    out = sanitize_body("Perché — 東京\n" + "\n".join(c + core for c in SET_ASIDE)).text.split("\n")
    assert len(out) == len(SET_ASIDE) + 1
    for c, line in zip(SET_ASIDE, out[1:]):
        assert raw_reading(line) is None, (hex(ord(c)), ascii(line))
