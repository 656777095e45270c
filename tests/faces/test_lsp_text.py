"""The LSP view of a text (lsp/text.py): line breaks, position encodings, incremental edits."""

from __future__ import annotations

import random

import pytest
from lsprotocol import types

from zonemark.lsp.text import LspText, TextBuffer


def pos(line, character):
    return types.Position(line=line, character=character)


def edit(a, b, c, d, text):
    return types.TextDocumentContentChangePartial(range=types.Range(start=pos(a, b), end=pos(c, d)), text=text)


def test_lines_end_only_at_lsp_line_breaks():
    text = "a\r\nb\rc\nd\u2028e\x0cf\x85g"
    t = LspText(text)
    assert [t.line_text(i) for i in range(5)] == ["a", "b", "c", "d\u2028e\x0cf\x85g", ""]
    assert t.position(text.index("e")) == pos(3, 2)


@pytest.mark.parametrize("encoding, column", [("utf-16", 4), ("utf-8", 9), ("utf-32", 3)])
def test_position_units_follow_the_agreed_encoding(encoding, column):
    text = "x\né😀日z\n"  # é: 1/2/1 units, 😀: 2/4/1, 日: 1/3/1 (utf-16/utf-8/utf-32)
    t = LspText(text, encoding)
    z = text.index("z")
    assert t.position(z) == pos(1, column)
    assert t.offset(pos(1, column)) == z
    assert t.offset(pos(1, 999)) == len(text) - 1  # past the end of a line: its end
    assert t.offset(pos(99, 0)) == len(text)


@pytest.mark.parametrize("words", [
    ["MODULE", " ", "\n", "\r\n", "—", "😀", "[P1]", "日本", "x"],
    ["MODULE", " ", "\n", "\n\n", "—", "😀", "[P1]", "日本", "x"],  # \n only: line starts kept up to date
])
def test_incremental_edits_match_applying_them_to_the_string(words):
    rng = random.Random(7)
    text = "".join(rng.choice(words) for _ in range(200))
    buf = TextBuffer(text, 1)
    for version in range(2, 200):
        a, b = sorted(rng.randrange(len(text) + 1) for _ in range(2))
        new = "".join(rng.choice(words) for _ in range(rng.randrange(4)))
        if "\r" in text[a - 1:a + 1] or "\r" in text[b - 1:b + 1]:
            continue  # a position cannot fall between \r and \n
        start, end = buf.position(a), buf.position(b)
        buf.apply(edit(start.line, start.character, end.line, end.character, new))
        buf.version = version
        text = text[:a] + new + text[b:]
        assert buf.text == text
        assert buf.starts == LspText(text).starts
    full = types.TextDocumentContentChangeWholeDocument(text="whole")
    buf.apply(full)
    assert buf.text == "whole" and buf.line_text(0) == "whole"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
@pytest.mark.parametrize("seed", range(6))
def test_a_notification_of_many_changes_gives_the_text_of_applying_them_one_by_one(encoding, seed):
    """apply_all (many changes: a list of lines joined once) is apply, change after change: positions past a
    line's end or the text's, reversed ranges, \\r that meets \\n across an edit, a whole-text change."""
    rng = random.Random(seed)
    words = ["perché", " ", "\n", "\r\n", "\r", "—", "😀", "[P4]", "東京", "x", "\n\n"]
    text = "".join(rng.choice(words) for _ in range(300))
    changes = []
    for _ in range(120):
        if rng.random() < 0.02:
            changes.append(types.TextDocumentContentChangeWholeDocument(text="".join(rng.choices(words, k=40))))
            continue
        a, b = (pos(rng.randrange(80), rng.randrange(12)) for _ in range(2))
        new = "".join(rng.choice(words) for _ in range(rng.randrange(4)))
        changes.append(types.TextDocumentContentChangePartial(range=types.Range(start=a, end=b), text=new))
    one_by_one = TextBuffer(text, 1, encoding)
    for change in changes:
        one_by_one.apply(change)
    together = TextBuffer(text, 1, encoding)
    together.apply_all(changes)
    assert together.text == one_by_one.text
    assert together.starts == LspText(one_by_one.text).starts


def test_a_notification_of_many_changes_never_copies_the_whole_text_per_change(monkeypatch):
    """k changes to a long text: none goes through the one-change path (a copy of the whole text each)."""
    text = "###### LOG: 2026-01-01 — perché\nTesto — 東京.\n" * 20_000
    buf = TextBuffer(text, 1)
    copies = []
    monkeypatch.setattr(TextBuffer, "apply", lambda self, change: copies.append(change))
    changes = [edit(i * 2, 0, i * 2, 0, "x") for i in range(1_000)]
    buf.apply_all(changes)
    assert copies == []
    assert buf.text.count("x###### LOG") == 1_000
