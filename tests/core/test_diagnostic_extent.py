"""A diagnostic carries the end of its extent, computed once where it is made (``core.diagnostics.placed``):
the language server and SARIF read it and compute no second span; the §13 JSON does not show it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from zonemark.core import diagnostics as diagnostics_module
from zonemark.core.diagnostics import Pending, construct_span, placed
from zonemark.core.parser import parse
from zonemark.layer import Layer
from zonemark.layer.spans import SourceLines

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

MEMORY = ("# Viaggi — 東京 [external_memory]\n\n[P1]\n## TOPIC: Viaggi — perché\n   ### SUBTOPIC1: 東京 — treni\n"
          "[/P1]\n\n[P4]\n###### LOG: 2026-13-45 — perché no\n[/P4]\n[P7]\n")


def test_every_diagnostic_of_a_parse_ends_where_its_construct_ends() -> None:
    """Over every failing code fixture: one line, from the diagnostic's column to the end of the construct
    the column points at (the span rule of E4), never empty."""
    seen = set()
    for path in sorted((FIXTURES / "codes").glob("*/fail_*.md")):
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        lines = SourceLines(text)
        for d in parse(text).diagnostics:
            assert d.end_line == d.line, (path.name, d)
            assert d.end_column == construct_span(lines.line(d.line), d.column, d.code)[1], (path.name, d)
            assert d.end_column > d.column
            seen.add(d.code)
    assert len(seen) > 30


def test_non_ascii_lines_end_in_code_points() -> None:
    doc = parse(MEMORY)
    ends = {d.code: (d.line, d.column, d.end_line, d.end_column) for d in doc.diagnostics}
    header = "   ### SUBTOPIC1: 東京 — treni"
    assert ends["HEADER_INDENTED"] == (5, 1, 5, len(header) + 1)
    assert ends["INVALID_LOG_DATE"] == (9, 13, 9, 13 + len("2026-13-45"))
    assert ends["INVALID_PERMISSION_LEVEL"][2:] == (11, len("[P7]") + 1)


def test_the_findings_of_a_layer_carry_their_extent_in_their_file() -> None:
    for name in ("unresolved", "no_reminder", "collision_declared", "no_state"):
        layer = Layer.load(FIXTURES / "layers" / name)
        assert layer.diagnostics
        for d in layer.diagnostics:
            source = layer.file(d.path).doc.source if d.path and d.path != "." else ""
            assert d.end_line == d.line
            assert d.end_column == construct_span(SourceLines(source).line(d.line), d.column, d.code)[1], d
            assert d.end_column > d.column


def test_many_findings_on_one_line_look_at_that_line_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cost: placing d findings reads each line that holds one once, whatever d is."""
    made: list[str] = []
    real = diagnostics_module._LineShape.__init__

    def counted(self: diagnostics_module._LineShape, line: str) -> None:
        made.append(line)
        real(self, line)
    monkeypatch.setattr(diagnostics_module._LineShape, "__init__", counted)
    text = "# T — 東京 [reminder]\n" + "[NUCLEI: 1] perché " * 2000 + "\n\nfine\n"
    pending: list[Pending] = [("MALFORMED_NUCLEI_TAG", 2, 1 + 19 * k, "x", None, None, None) for k in range(2000)]
    pending += [("HEADER_INDENTED", 1, 1, "y", None, None, None), ("CONTROL_CHARACTER", 4, 2, "z", None, None, None)]
    out = placed(pending, text)
    assert len(made) == 3
    assert [d.end_column for d in out[:3]] == [12, 31, 50]  # each on its own [NUCLEI: 1] tag
    assert [(d.code, d.line) for d in out] == [p[:2] for p in pending]  # the order is kept
    assert (out[-1].end_line, out[-1].end_column) == (4, 3)


def test_a_finding_past_the_end_of_the_text_spans_one_character() -> None:
    out = placed([("UNCLOSED_HTML_COMMENT", 9, 1, "x", None, None, None),
                  ("LAYER_NO_REMINDER", 1, 1, "y", None, None, None)], "a\n")
    assert [(d.end_line, d.end_column) for d in out] == [(9, 2), (1, 2)]


def test_the_13_json_of_a_diagnostic_holds_no_extent() -> None:
    d = parse(MEMORY).diagnostics[0]
    assert set(d.to_dict()) == {"line", "column", "message", "code", "severity"}


def test_sarif_regions_end_where_the_diagnostics_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from zonemark.cli.main import main
    path = tmp_path / "viaggi[ext_memory].md"
    path.write_text(MEMORY, encoding="utf-8")
    assert main(["check", "--format", "sarif", str(path)]) == 1
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    regions = [r["locations"][0]["physicalLocation"]["region"] for r in run["results"]]
    want = [{"startLine": d.line, "startColumn": d.column, "endLine": d.end_line, "endColumn": d.end_column}
            for d in parse(MEMORY).diagnostics]
    assert regions == want


def test_the_language_server_reads_the_extent_and_computes_no_span(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Published ranges are the diagnostics' own extents (in UTF-16 units); no span is computed for a
    file's own findings."""
    from lsprotocol import types

    from zonemark.layer import spans
    from zonemark.lsp.server import build_server

    layer = tmp_path / "strato"
    layer.mkdir()
    (layer / "aria[reminder].md").write_text("# Aria — 東京 [reminder]\n", encoding="utf-8")
    path = layer / "viaggi[ext_memory].md"
    path.write_text(MEMORY, encoding="utf-8")
    published: dict[str, types.PublishDiagnosticsParams] = {}
    server = build_server()
    server.text_document_publish_diagnostics = lambda p: published.__setitem__(p.uri, p)
    server.session.set_folders([layer])
    computed: list[tuple[object, ...]] = []
    real = spans.SourceLines.span

    def counted(self: spans.SourceLines, *args: Any) -> spans.Span:
        computed.append(args)
        return real(self, *args)
    monkeypatch.setattr(spans.SourceLines, "span", counted)
    uri = path.as_uri()
    server.session.open(uri, MEMORY, 1)
    server.schedule(uri)
    assert computed == []
    lines = MEMORY.split("\n")

    def utf16(line: int, column: int) -> int:
        return len(lines[line - 1][:column - 1].encode("utf-16-le")) // 2
    got = [(d.code, d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character)
           for d in published[uri].diagnostics]
    want = [(d.code, d.line - 1, utf16(d.line, d.column), d.end_line - 1, utf16(d.end_line, d.end_column))
            for d in parse(MEMORY).diagnostics]
    assert got == want
    assert ("HEADER_INDENTED", 4, 0, 4, len("   ### SUBTOPIC1: 東京 — treni")) in got


def test_the_fast_constructor_makes_the_same_diagnostic_as_the_dataclass() -> None:
    from zonemark.core.diagnostics import CATALOGUE, Diagnostic, _new_diagnostic
    values = ("HEADER_INDENTED", CATALOGUE["HEADER_INDENTED"].severity, 3, 2, "perché — 東京", "a/東京.md", 7, None, 3, 9)
    fast, slow = _new_diagnostic(*values), Diagnostic(*values)
    assert fast == slow and repr(fast) == repr(slow) and fast.to_dict() == slow.to_dict()
    assert hash(fast) == hash(slow)


def test_findings_on_lines_without_tags_take_their_end_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cost (W91): a file of many findings on lines that hold no tag calls the span rule for none of them;
    their ends are still the rule's ends."""
    calls: list[int] = []
    real = diagnostics_module._LineShape.span

    def counted(self: diagnostics_module._LineShape, column: int, code: str | None) -> tuple[int, int]:
        calls.append(column)
        return real(self, column, code)
    monkeypatch.setattr(diagnostics_module._LineShape, "span", counted)
    text = "# Titolo — 東京 [reminder]\n\n" + "  # indented — perché 東京\n" * 300
    doc = parse(text)
    assert len(doc.diagnostics) == 900
    assert calls == []
    lines = SourceLines(text)
    monkeypatch.setattr(diagnostics_module._LineShape, "span", real)
    for d in doc.diagnostics:
        assert (d.end_line, d.end_column) == (d.line, construct_span(lines.line(d.line), d.column, d.code)[1])


def test_the_fast_constructor_gives_a_frozen_diagnostic() -> None:
    from dataclasses import FrozenInstanceError

    from zonemark.core.diagnostics import CATALOGUE, Diagnostic, _new_diagnostic
    d = _new_diagnostic("HEADER_INDENTED", CATALOGUE["HEADER_INDENTED"].severity, 3, 2, "perché — 東京", None, None,
                        None, 3, 9)
    assert type(d) is Diagnostic
    with pytest.raises(FrozenInstanceError):
        d.line = 4  # type: ignore[misc]
