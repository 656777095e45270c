"""The review page's graph frame (W86): a small layer whole, a large one from its structure with its
entries collapsed, expanded per container and found by a search given from the review page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph_support import memory_layer
from zonemark.interchange.illuminate import illuminate
from zonemark.interchange.trace import read_trace
from zonemark.layer import Layer
from zonemark.layer.graph import build_graph
from zonemark.render import graph_html
from zonemark.render.graph_html import FrameView, frame_document, frame_html

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "layer"
VIEW = FrameView("/graph/frame?token=t", "/file?token=t")


def test_a_small_layer_is_the_whole_graph_with_the_view_beside_it():
    graph = build_graph(Layer.load(EXAMPLE))
    document = frame_document(graph, FrameView("/graph/frame?token=t", "/file?token=t", query="Tyres"))
    assert document["view"] == {"frameUrl": "/graph/frame?token=t", "fileUrl": "/file?token=t", "query": "Tyres",
                                "collapsed": {}, "note": ""}
    del document["view"]
    assert document == graph.to_dict()


def test_a_large_layer_keeps_its_structure_and_counts_what_is_collapsed(tmp_path, monkeypatch):
    monkeypatch.setattr(graph_html, "COLLAPSE_ENTRIES", 10)
    graph = build_graph(Layer.load(memory_layer(tmp_path / "l", 40)))
    document = frame_document(graph, VIEW)
    assert [n["kind"] for n in document["nodes"]] == ["file", "topic", "topic"]
    assert all(n["source"] == "" for n in document["nodes"])  # the file view shows the text
    topic, casa = (n["id"] for n in document["nodes"][1:])
    assert document["view"]["collapsed"] == {topic: 40, casa: 1}
    assert document["view"]["note"].startswith("41 of 41 entries collapsed")
    assert {(link["source"], link["target"]) for link in document["links"]} == {
        ("file:diario[ext_memory].md", topic), ("file:diario[ext_memory].md", casa)}
    assert document["graph"]["name"] == "l" and "trace" not in document


def test_expanding_a_container_and_searching_add_their_entries_up_to_the_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(graph_html, "COLLAPSE_ENTRIES", 10)
    monkeypatch.setattr(graph_html, "EXPAND_CAP", 25)
    graph = build_graph(Layer.load(memory_layer(tmp_path / "l", 40)))
    topic = next(n.id for n in graph.nodes if n.kind == "topic")
    opened = frame_document(graph, FrameView(VIEW.frame_url, VIEW.file_url, expand=topic))
    shown = [n for n in opened["nodes"] if n["kind"] == "entry"]
    assert [n["label"] for n in shown] == [f"2026-01-{i % 28 + 1:02d} voce {i} perché" for i in range(25)]
    assert opened["view"]["collapsed"][topic] == 15
    assert "the first 25 of its 40 entries" in opened["view"]["note"]
    assert sum(link["target"].startswith("entry:") for link in opened["links"]) == 25

    found = frame_document(graph, FrameView(VIEW.frame_url, VIEW.file_url, query="CAFFÈ"))
    assert [n["label"] for n in found["nodes"] if n["kind"] == "entry"] == ["2026-02-01 caffè"]
    assert found["view"]["query"] == "CAFFÈ"
    many = frame_document(graph, FrameView(VIEW.frame_url, VIEW.file_url, query="perché"))
    assert sum(n["kind"] == "entry" for n in many["nodes"]) == 25
    assert "the first 25 of 40 matching entries" in many["view"]["note"]


def test_the_entries_a_trace_lights_stay_in_a_collapsed_frame(monkeypatch):
    monkeypatch.setattr(graph_html, "COLLAPSE_ENTRIES", 3)
    layer = Layer.load(EXAMPLE)
    trace = read_trace((ROOT / "examples" / "chat" / "answer.txt").read_text(encoding="utf-8"), layer)
    graph = illuminate(build_graph(layer), layer, trace, source="answer.txt")
    lit = {m.node for m in graph.trace.lit if m.node is not None and m.node.startswith("entry:")}
    assert lit
    document = frame_document(graph, VIEW)
    assert {n["id"] for n in document["nodes"] if n["kind"] == "entry"} == lit
    assert document["trace"] == graph.trace.to_dict()


def test_a_collapsed_frame_does_not_grow_with_the_entries(tmp_path, monkeypatch):
    """Cost (W86): ten times the entries, the same nodes and links; only the counts' digits grow
    (below MAX_GRAPH_NODES: past it the note says how many nodes the graph left out, B18)."""
    monkeypatch.setattr(graph_html, "COLLAPSE_ENTRIES", 100)
    sizes = []
    for n in (900, 9_000):
        graph = build_graph(Layer.load(memory_layer(tmp_path / str(n), n)))
        document = frame_document(graph, VIEW)
        assert len(document["nodes"]) == 3 and len(document["links"]) == 2
        sizes.append(len(json.dumps(document)))
    assert sizes[1] - sizes[0] <= 10


def test_the_frame_page_embeds_the_collapsed_document(tmp_path, monkeypatch):
    monkeypatch.setattr(graph_html, "COLLAPSE_ENTRIES", 10)
    graph = build_graph(Layer.load(memory_layer(tmp_path / "l", 40)))
    page = frame_html(graph, VIEW)
    assert "voce 3" not in page and '"frameUrl":"/graph/frame?token=t"' in page
    assert "<title>l \u2014 zonemark layer graph</title>" in page


@pytest.mark.parametrize("query", ["", "   ", "zzz-none"])
def test_a_search_that_finds_nothing_adds_nothing(tmp_path, monkeypatch, query):
    monkeypatch.setattr(graph_html, "COLLAPSE_ENTRIES", 10)
    graph = build_graph(Layer.load(memory_layer(tmp_path / "l", 40)))
    document = frame_document(graph, FrameView(VIEW.frame_url, VIEW.file_url, query=query))
    assert [n["kind"] for n in document["nodes"]] == ["file", "topic", "topic"]
