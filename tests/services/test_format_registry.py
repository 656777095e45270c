"""One table of rows per format family (W61): the faces take choices, help and the renderer from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zonemark.cli.main import build_parser, main
from zonemark.render import formats, graph_formats
from zonemark.render.registry import Format, names, row, spoken

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "layer"


def test_w61_the_tables_hold_today_s_formats_in_order():
    assert names(graph_formats.GRAPH_FORMATS) == ("json", "dot", "mermaid", "html")
    assert names(formats.DIAGNOSTICS_FORMATS) == ("text", "json", "sarif", "github")
    assert [f.name for f in graph_formats.GRAPH_FORMATS if f.carries_trace] == ["json", "html"]
    assert row(formats.DIAGNOSTICS_FORMATS, "sarif").media_type == "application/sarif+json"
    with pytest.raises(KeyError):
        row(graph_formats.GRAPH_FORMATS, "svg")
    assert spoken(["a", "b", "c"]) == "a, b or c" and spoken(["a", "b", "c"], serial_comma=True) == "a, b, or c"
    assert spoken(["perché", "東京"], serial_comma=True) == "perché or 東京"


def test_w61_a_new_graph_format_is_one_row(monkeypatch, capsys):
    seen: list[int] = []

    def count(graph):
        seen.append(len(graph.nodes if hasattr(graph, "nodes") else graph["nodes"]))
        return "nodes — perché\n"
    extra = Format("count", count, "text/plain", "count (the nodes)")
    monkeypatch.setattr(graph_formats, "GRAPH_FORMATS", (*graph_formats.GRAPH_FORMATS, extra))
    assert "html (a page that works offline), or count (the nodes)" in " ".join(
        build_parser()._subparsers._group_actions[0].choices["graph"].format_help().split())
    assert main(["graph", str(EXAMPLE), "--format", "count"]) == 0
    assert capsys.readouterr().out == "nodes — perché\n" and len(seen) == 1 and seen[0] > 0
    assert main(["graph", str(EXAMPLE), "--format", "count", "--trace", "-"]) == 2
    assert "--trace works with --format json or html, not count" in capsys.readouterr().err


def test_w61_a_new_diagnostics_format_is_one_row(monkeypatch, capsys, tmp_path):
    md = tmp_path / "東京[reminder].md"
    md.write_text("# 東京 — perché\n", encoding="utf-8")
    extra = Format("codes", lambda results: json.dumps([d.code for _, ds in results for d in ds]) + "\n",
                   "application/json", "codes")
    monkeypatch.setattr(formats, "DIAGNOSTICS_FORMATS", (*formats.DIAGNOSTICS_FORMATS, extra))
    code = main(["check", str(md), "--format", "codes"])
    out = capsys.readouterr().out
    assert isinstance(json.loads(out), list) and code in (0, 1)
    help_text = " ".join(build_parser()._subparsers._group_actions[0].choices["check"].format_help().split())
    assert "sarif, github annotations or codes" in help_text


def test_w61_a_new_context_format_is_one_row(monkeypatch, capsys):
    from zonemark.render import context_formats
    assert names(context_formats.CONTEXT_FORMATS) == ("markdown", "json")
    help_text = " ".join(build_parser()._subparsers._group_actions[0].choices["context"].format_help().split())
    assert "markdown (the text to paste; the default) or json (the text and what was left out)" in help_text
    seen: list[int] = []

    def words(result):
        seen.append(len(result.text.split()))
        return "parole — 東京\n"
    extra = Format("words", words, "text/plain", "words (how many)")
    monkeypatch.setattr(context_formats, "CONTEXT_FORMATS", (*context_formats.CONTEXT_FORMATS, extra))
    assert "or words (how many)" in " ".join(
        build_parser()._subparsers._group_actions[0].choices["context"].format_help().split())
    assert main(["context", str(EXAMPLE), "--format", "words"]) == 0
    assert capsys.readouterr().out == "parole — 東京\n" and len(seen) == 1 and seen[0] > 0
    assert main(["context", str(EXAMPLE), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["text"]
