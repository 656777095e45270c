"""Log entries in chat text (§7.5, §N.19): extraction only — what `zonemark ingest --extract --json` prints.

The chat corpus (tests/fixtures/interchange/chats/*.txt) holds texts as users copy them — copy
button or screen selection, UI labels, the next user turn, code fences, CR LF, no-break
spaces, English, Italian and Japanese — each with its expected extraction (*.json).
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from zonemark.cli.main import main
from zonemark.interchange.logs import extract_logs, is_marker

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "interchange"
CHATS = sorted((FIXTURES / "chats").glob("*.txt"))

#: The exact shape the issue asks for.
EXTRACT_SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["count", "entries", "warnings"],
    "properties": {
        "count": {"type": "integer", "minimum": 0},
        "entries": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["headerLine", "header", "date", "title", "end", "endLine", "body"],
            "properties": {"headerLine": {"type": "integer", "minimum": 1}, "header": {"type": "string"},
                           "date": {"type": ["string", "null"]}, "title": {"type": "string"},
                           "end": {"enum": ["marker", "next_header", "end_of_text"]},
                           "endLine": {"type": ["integer", "null"], "minimum": 1}, "body": {"type": "string"}}}},
        "warnings": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["code", "message", "line"],
            "properties": {"code": {"type": "string"}, "message": {"type": "string"},
                           "line": {"type": "integer", "minimum": 0}}}},
    },
}


def extract(text: str) -> dict:
    out = extract_logs(text).to_dict()
    jsonschema.validate(out, EXTRACT_SCHEMA)
    assert out["count"] == len(out["entries"])
    for e in out["entries"]:
        assert (e["end"] == "end_of_text") == (e["endLine"] is None)
    return out


def test_the_corpus_is_big_and_varied_enough():
    assert len(CHATS) >= 30
    raw = b"".join(p.read_bytes() for p in CHATS)
    assert b"\r\n" in raw and "\u00a0".encode() in raw and "è".encode() in raw and "東京".encode() in raw
    assert b"```" in raw and b"Copy" in raw and b"Copia" in raw and b"You said:" in raw


@pytest.mark.parametrize("path", CHATS, ids=[p.stem for p in CHATS])
def test_chat_corpus(path, capsys):
    expected = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    text = path.read_bytes().decode("utf-8")
    assert extract(text) == expected
    # the command prints the very same JSON and exits 0
    assert main(["ingest", "--extract", "--json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == expected


def test_spec_example_n19_2():
    text = (FIXTURES / "spec" / "n19_2.txt").read_text(encoding="utf-8")
    assert extract(text) == {"count": 1, "entries": [{
        "headerLine": 1, "header": "###### LOG: 2026-09-03 — Service booked", "date": "2026-09-03",
        "title": "Service booked", "end": "marker", "endLine": 3,
        "body": "Called the garage; slot on Friday morning."}], "warnings": []}


# -- §N.19.2 the marker ---------------------------------------------------------------------

@pytest.mark.parametrize("line", ["[/LOG]", "  [/LOG]", "[/LOG]   ", "\t[/LOG]\t", "\u00a0[/LOG]\u00a0",
                                  "\u202f[/LOG]", "[/LOG]\r", "\u200b[/LOG]\ufeff", " \u2060[/LOG] "])
def test_cl1_marker_tolerates_whitespace_around_it(line):
    assert is_marker(line)
    out = extract(f"###### LOG: 2026-01-02 — città\nCorpo — sì.\n{line}\nCopy\n")
    assert out["entries"][0]["end"] == "marker" and out["entries"][0]["endLine"] == 3
    assert out["entries"][0]["body"] == "Corpo — sì."


@pytest.mark.parametrize("line", ["[/log]", "[/Log]", "[/LOG] done", "**[/LOG]**", "`[/LOG]`", "> [/LOG]",
                                  "[ /LOG]", "[/LOG]]", "x [/LOG]"])
def test_cl1_anything_else_on_the_line_is_not_the_marker(line):
    assert not is_marker(line)
    out = extract(f"###### LOG: 2026-01-02 — Titolo\nriga\n{line}\n")
    assert out["entries"][0]["end"] == "end_of_text"
    assert line in out["entries"][0]["body"]


def test_marker_closes_the_nearest_open_entry_and_the_scan_goes_on():
    text = ("###### LOG: 2026-01-01 — uno\nA\n[/LOG]\nchat between\n###### LOG: 2026-01-02 — due\nB\n[/LOG]\n"
            "###### LOG: 2026-01-03 — tre\nC\n")
    out = extract(text)
    assert [(e["title"], e["end"], e["endLine"], e["body"]) for e in out["entries"]] == [
        ("uno", "marker", 3, "A"), ("due", "marker", 7, "B"), ("tre", "end_of_text", None, "C")]
    assert out["count"] == 3


def test_duplicated_and_stray_markers_are_dropped_never_body_never_fatal():
    text = "[/LOG]\n###### LOG: 2026-01-01 — t\nbody\n[/LOG]\n[/LOG]\n\u00a0[/LOG]\n"
    out = extract(text)
    assert [e["body"] for e in out["entries"]] == ["body"]
    assert [(w["code"], w["line"]) for w in out["warnings"]] == [
        ("LOG_MARKER_STRAY", 1), ("LOG_MARKER_DUPLICATE", 5), ("LOG_MARKER_DUPLICATE", 6)]


# -- §N.19.3.2 no marker --------------------------------------------------------------------

def test_without_marker_the_body_runs_over_other_headings_to_the_next_log_header():
    text = "###### LOG: 2026-01-01 — a\nline\n## Heading\n### Sub\n###### Note\nmore\n###### LOG: 2026-01-02 — b\nx\n"
    out = extract(text)
    assert out["entries"][0]["body"] == "line\n## Heading\n### Sub\n###### Note\nmore"
    assert (out["entries"][0]["end"], out["entries"][0]["endLine"]) == ("next_header", 7)
    assert (out["entries"][1]["end"], out["entries"][1]["endLine"]) == ("end_of_text", None)


def test_crlf_text_gives_lf_bodies_and_blank_lines_around_a_body_are_dropped_only():
    text = "###### LOG: 2026-01-01 — a\r\n\r\n  first  \r\n\r\n\u00a0\r\nlast\t\r\n\r\n[/LOG]\r\n"
    body = extract(text)["entries"][0]["body"]
    assert body == "  first  \n\n\u00a0\nlast\t"
    assert "\r" not in body


def test_lone_cr_inside_a_line_is_left_to_the_writer():
    assert extract("###### LOG: 2026-01-01 — a\nx\ry\n")["entries"][0]["body"] == "x\ry"


# -- which headers start an entry (§7.5) ----------------------------------------------------

@pytest.mark.parametrize("header, date, title", [
    ("###### LOG: 2026-09-15 — Tagliando prenotato", "2026-09-15", "Tagliando prenotato"),
    ("######[LOG IA – ILLAIRA]", None, "IA – ILLAIRA"),
    ("###### LOG titolo", None, "titolo"),
    ("###### log - qualcosa", None, "qualcosa"),
    ("###### LOG: 2026-06-11T14:30Z — orario", "2026-06-11T14:30Z", "orario"),
    ("###### Diario LOG 2026-09-15 — voce", "2026-09-15", "voce"),
    ("   ###### LOG: 2026-09-15 — rientrato", "2026-09-15", "rientrato"),
])
def test_cl3_h6_forms_that_start_an_entry(header, date, title):
    e = extract(header + "\ncorpo\n")["entries"][0]
    assert (e["date"], e["title"], e["body"]) == (date, title, "corpo")


@pytest.mark.parametrize("header", ["###### LOGISTICA", "###### CATALOGO", "### LOG: 2026-01-01 — h3",
                                    "## LOG: 2026-01-01 — h2", "####### LOG: 2026-01-01 — seven",
                                    "> ###### LOG: 2026-01-01 — quoted", "Log: 2026-01-01 without dash",
                                    "LOG titolo", "The LOG: 2026-01-01 — inside a sentence"])
def test_cl3_lines_that_do_not_start_an_entry(header):
    assert extract(header + "\ncorpo\n")["count"] == 0


def test_h3_log_header_gets_a_warning():
    out = extract("### LOG: 2026-01-01 — h3\n")
    assert [w["code"] for w in out["warnings"]] == ["LOG_HEADER_WRONG_LEVEL"]


# -- rulings --------------------------------------------------------------------------------

def test_cl2_a_hashless_canonical_header_from_the_screen_starts_an_entry_with_a_warning():
    out = extract("Copy\nLOG: 2026-09-15 — Tagliando\nvenerdì\n[/LOG]\nRetry\n")
    assert [(e["headerLine"], e["date"], e["title"], e["body"]) for e in out["entries"]] == [
        (2, "2026-09-15", "Tagliando", "venerdì")]
    assert [w["code"] for w in out["warnings"]] == ["LOG_HEADER_WITHOUT_HASHES"]
    # only the canonical shape: a valid date, a dash, a title
    for line in ("LOG: 2026-02-30 — bad date", "LOG: 2026-09-15", "LOG: oggi — niente data", "LOG titolo",
                 "log: 2026-09-15 — lower case", "LOG: 2026-09-15 title without dash"):
        assert extract(line + "\nbody\n")["count"] == 0, line
    assert extract("**LOG: 2026-09-15 — grassetto**\nx\n")["entries"][0]["title"] == "grassetto"


def test_cl4_an_entry_inside_a_code_fence_ends_at_the_fence():
    text = "Sure:\n```markdown\n###### LOG: 2026-06-01 — Trasloco\nChiavi ritirate.\n```\nAnything else?\n"
    out = extract(text)
    assert [(e["end"], e["endLine"], e["body"]) for e in out["entries"]] == [("end_of_text", None, "Chiavi ritirate.")]
    assert [w["code"] for w in out["warnings"]] == ["LOG_ENDS_AT_FENCE"]
    # the opening fence of the next entry is not part of the previous body
    text = "###### LOG: 2026-06-01 — a\nA\n~~~\n###### LOG: 2026-06-02 — b\nB\n~~~\n"
    assert [e["body"] for e in extract(text)["entries"]] == ["A", "B"]
    # a fence opened and closed inside a body stays in the body
    text = "###### LOG: 2026-06-01 — a\n```\ncode\n```\nafter\n"
    assert extract(text)["entries"][0]["body"] == "```\ncode\n```\nafter"


def test_cl5_body_is_what_is_handed_to_the_writer_not_yet_escaped():
    out = extract("###### LOG: 2026-01-01 — a\n## MODULE 9: X\n[P1]\n")
    assert out["entries"][0]["body"] == "## MODULE 9: X\n[P1]"


def test_cl6_header_without_title_or_with_an_invalid_date_is_extracted_with_a_warning():
    out = extract("###### LOG: 2026-01-01\nx\n###### LOG: 2026-13-01 — bad\ny\n")
    assert [(e["date"], e["title"]) for e in out["entries"]] == [("2026-01-01", ""), ("2026-13-01", "bad")]
    assert [w["code"] for w in out["warnings"]] == ["LOG_WITHOUT_TITLE", "LOG_INVALID_DATE"]


@pytest.mark.parametrize("text", ["", "\n", "\r", "[/LOG]", "######", "###### ", "LOG:", "\x00\ud800", "```",
                                  "###### LOG: \ud800 — x\n\ud800"])
def test_any_string_is_extracted_without_error(text):
    extract(text)


def test_extract_rejects_non_text():
    with pytest.raises(TypeError):
        extract_logs(b"bytes")
