"""The extent of the construct a diagnostic points at (layer/spans.py): one rule for every face."""

from __future__ import annotations

from pathlib import Path

import pytest

from zonemark.core.parser import parse
from zonemark.layer.spans import SourceLines, construct_span

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "codes"


@pytest.mark.parametrize("line, column, code, expected, what", [
    ("## MODULE 042: X [NUCLEI: 1]", 1, None, "## MODULE 042: X [NUCLEI: 1]", "a header from column 1: the header"),
    ("   ## INDENTED", 1, "HEADER_INDENTED", "## INDENTED", "indentation is not part of the construct"),
    ("* MODULE 042   ", 1, None, "* MODULE 042", "a bullet, trailing spaces left out"),
    ("  + nested — più", 3, None, "+ nested — più", "an indented bullet from its marker"),
    ("[P7]", 1, "INVALID_PERMISSION_LEVEL", "[P7]", "a tag"),
    ("[P4] inline text", 1, "UNCLOSED_PERMISSION_BLOCK", "[P4]", "an inline opening tag: the tag only"),
    ("## MODULE 1: X [NUCLEI: a, b]", 16, "MALFORMED_NUCLEI_TAG", "[NUCLEI: a, b]", "a tag inside a header"),
    ("> [!XYZ] text", 3, "UNKNOWN_ANCHOR_KEYWORD", "[!XYZ]", "an anchor keyword"),
    ("### FUNCTION ###", 14, "HEADER_CLOSING_HASHES", "###", "the rest of the line"),
    ("* MODULE ~T3", 3, "TEMPORARY_ID_REFERENCE", "MODULE ~T3", "the rest of a CONNECTIONS bullet"),
    ("###### LOG: 2026-13-45 — titolo", 13, "INVALID_LOG_DATE", "2026-13-45", "a date token"),
    ("abc\x07def", 4, "CONTROL_CHARACTER", "\x07", "one character"),
    ("text\r", 5, "CARRIAGE_RETURN", "\r", "one character, even a carriage return"),
    ("\ufeff# T [reminder]", 1, "BYTE_ORDER_MARK", "\ufeff", "the byte order mark"),
    ("", 1, "UNCLOSED_HTML_COMMENT", "", "an empty line: one column past its end"),
    ("short", 40, None, "", "a column past the text: one column"),
])
def test_construct_span_shapes(line, column, code, expected, what):
    start, end = construct_span(line, column, code)
    assert 1 <= start < end, what
    assert line[start - 1:end - 1] == expected, what


def test_source_lines_number_lines_as_the_parser_does():
    text = "a\r\nb\rc\n\u2028d\n"
    lines = SourceLines(text)
    assert [lines.line(i) for i in range(1, 5)] == ["a\r", "b\rc", "\u2028d", ""]
    assert lines.offset(2, 3) == text.index("\rc") + 1
    assert lines.position(text.index("d")) == (3, 2)
    assert lines.offset(9, 1) == len(text) and lines.line(9) == ""


def test_every_fixture_diagnostic_gets_a_span_inside_its_line():
    """Over every failing code fixture: the span starts at the diagnostic's column (or at the
    tag holding it, or at the line's text) and never runs past the line."""
    seen = set()
    for path in sorted(FIXTURES.glob("*/fail_*.md")):
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        doc = parse(text)
        lines = SourceLines(text)
        for d in doc.diagnostics:
            line = lines.line(d.line)
            start, end = construct_span(line, d.column, d.code)
            assert start < end
            assert start <= max(d.column, 1) or line[start - 1] == "[" or not line[:start - 1].strip()
            assert end <= max(len(line.rstrip()), d.column) + 1, (path.name, d.code, line)
            seen.add(d.code)
    assert len(seen) > 30
