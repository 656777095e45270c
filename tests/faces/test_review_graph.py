"""The review page's graph (W86): a search from the page itself, run over the whole layer by the
frame, and a container's collapsed entries shown on request."""

from __future__ import annotations

import html
import json
import re
from types import SimpleNamespace

import pytest

from graph_support import memory_layer
from zonemark.render import graph_html

pytest.importorskip("starlette")
from zonemark.review.app import Review  # noqa: E402


def frame_data(review: Review, **params: str) -> dict:
    body = review.graph_frame(SimpleNamespace(query_params=params)).body.decode("utf-8")
    return json.loads(re.search(r'<script type="application/json" id="graph-data">(.*?)</script>', body).group(1))


def test_the_graph_page_searches_from_the_page_into_the_frame(tmp_path):
    review = Review(memory_layer(tmp_path / "l", 3), "tok")
    page = review.graph(SimpleNamespace(query_params={})).body.decode("utf-8")
    form = re.search(r'<form method="get" action="/graph/frame" target="graph-frame"[^>]*>(.*?)</form>', page)
    assert form is not None
    assert '<input type="hidden" name="token" value="tok">' in form.group(1)
    assert 'name="q"' in form.group(1) and 'maxlength="200"' in form.group(1)
    assert '<iframe name="graph-frame"' in page


def test_the_frame_takes_the_search_and_the_container_to_expand(tmp_path, monkeypatch):
    monkeypatch.setattr(graph_html, "COLLAPSE_ENTRIES", 10)
    review = Review(memory_layer(tmp_path / "l", 40), "tok")
    plain = frame_data(review)
    assert [n["kind"] for n in plain["nodes"]] == ["file", "topic", "topic"]
    assert plain["view"]["frameUrl"] == "/graph/frame?token=tok" and plain["view"]["fileUrl"] == "/file?token=tok"
    found = frame_data(review, q="caffè")
    assert [n["label"] for n in found["nodes"] if n["kind"] == "entry"] == ["2026-02-01 caffè"]
    assert found["view"]["query"] == "caffè"
    topic = plain["nodes"][1]["id"]
    opened = frame_data(review, expand=topic)
    assert sum(n["kind"] == "entry" for n in opened["nodes"]) == 40
    assert frame_data(review, q="x" * 201)["view"]["query"] == ""  # over QUERY_LIMIT: ignored
    assert frame_data(review, expand="y" * 2001)["nodes"] == plain["nodes"]  # over ID_LIMIT: ignored


def test_the_frame_escapes_a_hostile_search(tmp_path):
    review = Review(memory_layer(tmp_path / "l", 3), "tok")
    hostile = "</script><script>window.__pwned=1</script> — 東京"
    body = review.graph_frame(SimpleNamespace(query_params={"q": hostile})).body.decode("utf-8")
    assert hostile not in body and html.escape(hostile) not in body
    assert frame_data(review, q=hostile)["view"]["query"] == hostile
