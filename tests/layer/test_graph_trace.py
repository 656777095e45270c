"""Illumination (§N.18): `zonemark graph --trace`, the heat of recorded traces, and the page in Chromium.

The browser is Debian's ``chromium`` driven over the DevTools protocol, as in
tests/services/test_graph_html.py.  The launch lines are copied here until the shared ``chromium_path``
fixture lands in tests/conftest.py; then the local fixture below goes.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from headless_chromium import DevTools
from test_graph import SCHEMA
from zonemark.cli.main import main
from zonemark.interchange.illuminate import illuminate
from zonemark.interchange.records import load_records, record_trace
from zonemark.interchange.trace import read_trace
from zonemark.layer import Layer
from zonemark.layer.graph import LayerGraph, build_graph
from zonemark.render.graph_html import render_html

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "interchange"
LAYER = FIXTURES / "layer"
SPEC = FIXTURES / "spec"
HOSTILE = "<img src=x onerror=window.__pwned=1></script>"


@pytest.fixture
def layer_dir(tmp_path) -> Path:
    target = tmp_path / "layer"
    shutil.copytree(LAYER, target)
    return target


def lit_graph(layer_dir: Path, text: str, *, record: list[str] = ()) -> LayerGraph:
    layer = Layer.load(layer_dir)
    for past in record:
        record_trace(layer, past, read_trace(past, layer))
    records, skipped = load_records(layer)
    graph = illuminate(build_graph(layer), layer, read_trace(text, layer), source="answer.txt", records=records,
                       record_warnings=skipped)
    jsonschema.validate(graph.to_dict(), SCHEMA)
    return graph


def test_cl20_trace_marks_nuclei_in_order_modules_memory_and_resolved_entries(layer_dir):
    g = lit_graph(layer_dir, (SPEC / "n7a.txt").read_text(encoding="utf-8"))
    t = g.trace
    assert (t.file, t.enabled, t.warnings) == ("answer.txt", True, ())
    assert [(x.step, x.node, x.order, x.state, x.action) for x in t.lit] == [
        (1, "nucleus:1", 1, None, None), (2, "nucleus:3", 2, None, None),
        (3, "module:CORE_001", None, "active", None), (4, "module:042", None, "queried", None),
        (5, "file:daily[ext_memory].md", None, None, "queried"), (6, "file:daily[ext_memory].md", None, None, "touched"),
        (7, "entry:daily[ext_memory].md:11", None, None, "touched"),
        (8, "entry:daily[ext_memory].md:20", None, None, "touched")]
    ids = {n.id for n in g.nodes}
    assert all(x.node in ids for x in t.lit)
    assert dataclasses.replace(g, trace=None) == build_graph(Layer.load(layer_dir))


def test_cl20_a_topic_ref_lights_the_topic_and_a_reminder_section_has_no_node(layer_dir):
    text = "[NTRACE: v1]\nMEMORY DAILY_LOG_2026_04 @ Viaggi: queried\nMEMORY Center of Gravity: queried\n[/NTRACE]\n"
    lit = lit_graph(layer_dir, text).trace.lit
    assert [(x.kind, x.node) for x in lit] == [("memory", "file:daily[ext_memory].md"),
                                                    ("topic", "container:daily[ext_memory].md:25"),
                                                    ("memory", None)]


def test_a_disabled_layer_lights_nothing_and_says_why(layer_dir):
    reminder = layer_dir / "mind[reminder].md"
    reminder.write_text(reminder.read_text(encoding="utf-8").replace("DEFERRED_NEURAL_TRACING", "OTHER"),
                        encoding="utf-8")
    t = lit_graph(layer_dir, (SPEC / "n7a.txt").read_text(encoding="utf-8")).trace
    assert t.enabled is False and t.lit == () and [w.code for w in t.warnings] == ["TRACE_DISABLED"]


def test_cl19_heat_counts_each_node_once_per_recorded_trace(layer_dir):
    a = (SPEC / "n7a.txt").read_text(encoding="utf-8")
    b = (SPEC / "n5.txt").read_text(encoding="utf-8")
    g = lit_graph(layer_dir, a, record=[a, b, b, "[NTRACE: v1]\nMODULE 999: GHOST queried\n[/NTRACE]\n"])
    assert g.trace.records == 2  # b twice is one record; a trace that lights nothing is not recorded
    counts = dict(g.trace.heat)
    assert counts["module:042"] == 2 and counts["nucleus:1"] == 2
    assert counts["module:CORE_001"] == 1 and counts["file:daily[ext_memory].md"] == 2
    assert counts["entry:daily[ext_memory].md:11"] == 1
    assert "nucleus:2" not in counts


def test_cl19_a_record_whose_identifiers_are_gone_still_counts_what_remains(layer_dir):
    a = (SPEC / "n7a.txt").read_text(encoding="utf-8")
    layer = Layer.load(layer_dir)
    record_trace(layer, a, read_trace(a, layer))
    reminder = layer_dir / "mind[reminder].md"
    reminder.write_text(reminder.read_text(encoding="utf-8").replace("MODULE 042: CURIOSITY", "MODULE 044: CURIOSITY")
                        .replace("* ACTIVE: 042", "* ACTIVE: 044"), encoding="utf-8")
    layer = Layer.load(layer_dir)
    records, _ = load_records(layer)
    g = illuminate(build_graph(layer), layer, None, records=records)
    jsonschema.validate(g.to_dict(), SCHEMA)
    assert "module:042" not in dict(g.trace.heat) and dict(g.trace.heat)["nucleus:3"] == 1
    assert (g.trace.file, g.trace.enabled, g.trace.lit) == (None, None, ())


def test_cl20_cli_graph_json_with_and_without_trace(layer_dir, capsys):
    assert main(["graph", str(layer_dir), "--format", "json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert "trace" not in plain  # nothing recorded, no --trace: the graph as before
    assert main(["trace", str(layer_dir), str(SPEC / "n7b.txt")]) == 0
    capsys.readouterr()
    assert main(["graph", str(layer_dir), "--format", "json"]) == 0
    heat_only = json.loads(capsys.readouterr().out)
    jsonschema.validate(heat_only, SCHEMA)
    assert heat_only["trace"]["heat"]["counts"]["module:EMPATHY_LAYER"] == 1 and heat_only["trace"]["lit"] == []
    assert main(["graph", str(layer_dir), "--format", "json", "--trace", str(SPEC / "n7a.txt")]) == 0
    g = json.loads(capsys.readouterr().out)
    jsonschema.validate(g, SCHEMA)
    assert g["trace"]["file"] == "n7a.txt" and len(g["trace"]["lit"]) == 8


# ---------------------------------------------------------------- the page in Chromium

def open_page(devtools: DevTools, path: Path) -> None:
    url = path.as_uri()
    devtools.events.clear()
    devtools.call("Page.navigate", url=url)
    devtools.wait_for(f"location.href === {json.dumps(url)} && document.readyState === 'complete'"
                      " && !!window.zonemarkGraph && (window.zonemarkGraph.ready || !!window.zonemarkGraph.error)")
    assert devtools.evaluate("window.zonemarkGraph.error") is None
    devtools.next_frames()


def test_browser_shows_lit_nodes_in_order_warnings_and_heat(browser, layer_dir, tmp_path):
    text = (SPEC / "n7a.txt").read_text(encoding="utf-8").replace(
        "[/NTRACE]", f"MODULE 999: GHOST queried\nMEMORY DAILY_LOG_2026_04 @ {HOSTILE}: touched\n[/NTRACE]")
    g = lit_graph(layer_dir, text, record=[(SPEC / name).read_text(encoding="utf-8")
                                           for name in ("n5.txt", "n7a.txt", "n7b.txt")])
    page = tmp_path / "lit.html"
    page.write_text(render_html(g), encoding="utf-8")
    open_page(browser, page)

    lit = browser.evaluate("window.zonemarkGraph.lit()")
    assert lit == [{"step": x.step, "node": x.node} for x in g.trace.lit]
    marked = browser.evaluate("window.zonemarkGraph.cy.nodes('.lit').map(n => n.data('label'))")
    assert sorted(marked) == sorted([
        "1 \u25b8 NUCLEUS 1: LOGICAL_OPERATIVE", "2 \u25b8 NUCLEUS 3: CRITICAL_OBSERVER",
        "3 \u25b8 MODULE CORE_001: LOGICAL_OPERATIVE", "4 \u25b8 MODULE 042: CURIOSITY",
        "5,6,9 \u25b8 DAILY_LOG_2026_04", "7 \u25b8 2026-04-12 Parser milestone", "8 \u25b8 2026-04-12T18:30 Evening note"])
    unlit = browser.evaluate("window.zonemarkGraph.cy.nodes('.unlit').length")
    assert unlit == len(g.nodes) - 7
    items = browser.evaluate("Array.from(document.querySelectorAll('#trace-lit li')).map(li => li.textContent)")
    assert items[:2] == ["NUCLEUS 1: LOGICAL_OPERATIVE \u2014 activation 1", "NUCLEUS 3: CRITICAL_OBSERVER \u2014 activation 2"]
    assert items[3] == "MODULE 042: CURIOSITY \u2014 queried"
    assert browser.evaluate("document.getElementById('trace-summary').textContent") == "answer.txt: 9 items lit, in trace order."
    warnings = browser.evaluate("Array.from(document.querySelectorAll('#trace-warnings li')).map(li => li.textContent)")
    assert any(w.startswith("TRACE_UNRESOLVED_REF") and HOSTILE in w for w in warnings)
    assert any(w == "TRACE_UNKNOWN_IDENTIFIERS 1 unknown identifier skipped" for w in warnings)

    # a click on a listed item selects its node
    browser.click_element("#trace-lit li:nth-child(4) button")
    assert browser.evaluate("document.getElementById('details-title').textContent") == "MODULE 042: CURIOSITY"
    assert browser.evaluate("document.getElementById('details-trace').textContent") == "4. MODULE 042: CURIOSITY \u2014 queried"
    assert browser.evaluate("document.getElementById('details-heat').textContent") == "lit in 2 of 3 recorded traces"

    # un-dimming, then the heat view over the three recorded traces
    browser.click_element("#trace-dim")
    assert browser.evaluate("window.zonemarkGraph.cy.nodes('.unlit').length") == 0
    assert browser.evaluate("document.getElementById('heat-control').hidden") is False
    assert browser.evaluate("document.getElementById('heat-records').textContent") == "3"
    browser.click_element("#heat-toggle")
    heat = browser.evaluate(
        "(() => { const g = window.zonemarkGraph; const f = id => { const n = g.nodeById(id);"
        " return [n.classes().filter(c => c.startsWith('heat-')), n.data('label'), n.style('background-color')]; };"
        " return {m042: f('module:042'), core: f('module:CORE_001'), empathy: f('module:EMPATHY_LAYER'),"
        " n2: f('nucleus:2')}; })()")
    assert heat["m042"][0] == ["heat-5"] and heat["m042"][1] == "4 \u25b8 MODULE 042: CURIOSITY \u00d72"
    assert heat["core"][0] == ["heat-3"] and heat["core"][1].endswith("\u00d71")
    assert heat["empathy"][0] == ["heat-3"] and heat["empathy"][1] == "MODULE EMPATHY_LAYER: Empathic Response Layer \u00d71"
    assert heat["n2"][0] == ["heat-3"]
    assert heat["m042"][2] != heat["core"][2]
    assert browser.evaluate("window.zonemarkGraph.nodeById('module:043').classes().filter(c => c.startsWith('heat'))") == []
    browser.evaluate("window.zonemarkGraph.setHeat(false)")
    assert browser.evaluate("window.zonemarkGraph.cy.nodes('[label *= \"\u00d7\"]').length") == 0
    assert browser.evaluate("typeof window.__pwned") == "undefined"
    assert browser.evaluate("document.querySelectorAll('img').length") == 0
    assert browser.problems() == []


def test_browser_page_without_trace_is_unchanged_and_disabled_trace_says_so(browser, layer_dir, tmp_path):
    layer = Layer.load(layer_dir)
    page = tmp_path / "plain.html"
    page.write_text(render_html(build_graph(layer)), encoding="utf-8")
    open_page(browser, page)
    assert browser.evaluate("document.getElementById('trace-panel').hidden") is True
    assert browser.evaluate("document.getElementById('heat-control').hidden") is True
    assert browser.evaluate("window.zonemarkGraph.cy.nodes('.lit, .unlit').length") == 0

    reminder = layer_dir / "mind[reminder].md"
    reminder.write_text(reminder.read_text(encoding="utf-8").replace("DEFERRED_NEURAL_TRACING", "OTHER"),
                        encoding="utf-8")
    g = lit_graph(layer_dir, (SPEC / "n7a.txt").read_text(encoding="utf-8"))
    page = tmp_path / "off.html"
    page.write_text(render_html(g), encoding="utf-8")
    open_page(browser, page)
    assert browser.evaluate("document.getElementById('trace-summary').textContent") == \
        "Tracing is not enabled in this layer: nothing is lit."
    assert browser.evaluate("window.zonemarkGraph.cy.nodes('.lit, .unlit').length") == 0
    assert browser.evaluate("document.querySelector('#trace-warnings li').textContent").startswith("TRACE_DISABLED")
    assert browser.problems() == []


def test_w60_one_composition_of_graph_and_recorded_traces_is_called_by_cli_and_review(layer_dir, monkeypatch,
                                                                                       capsys):
    from zonemark.interchange import illuminate as module
    layer = Layer.load(layer_dir)
    graph = build_graph(layer)
    assert module.with_recorded_traces(graph, layer) is graph  # no trace, no records: the graph itself
    a = (SPEC / "n7a.txt").read_text(encoding="utf-8")
    record_trace(layer, a, read_trace(a, layer))
    heated = module.with_recorded_traces(graph, layer)
    assert heated.trace.records == 1 and heated.trace.lit == ()
    calls: list[str] = []
    real = module.with_recorded_traces

    def counted(*args, **kwargs):
        calls.append("call")
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "with_recorded_traces", counted)
    assert main(["graph", str(layer_dir), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["trace"]["heat"] == heated.trace.to_dict()["heat"]
    pytest.importorskip("starlette")
    from zonemark.review.app import Review
    frame = Review(layer_dir, "token").graph_frame(None).body.decode("utf-8")
    assert calls == ["call", "call"] and '"records":1' in frame.replace(" ", "")
