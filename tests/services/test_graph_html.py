"""The interactive layer graph page: static checks of render_html and a real headless chromium.

The browser is the system's chromium, driven over the DevTools protocol by
tests/headless_chromium.py (the ``browser`` fixture of conftest.py); no browser is downloaded
and none is installed here. Without one the browser tests are skipped with the reason, and
they are marked slow.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import html.parser
import json
import re
import urllib.parse
from pathlib import Path

import corpus
import pytest
from headless_chromium import DevTools

from zonemark.core.text import reveal
from zonemark.render import graph_html
from zonemark.layer.graph import GraphDiagnostic, GraphLink, GraphNode, LayerGraph
from zonemark.render.graph_html import page_html, render_html

REPO_ROOT = Path(__file__).resolve().parents[2]
HOSTILE_LABEL = "</script><script>window.__pwned=1</script>"
HOSTILE_SOURCE = (
    "## MODULE X1: EVIL\n<!-- <script>window.__pwned=2</script>\n"
    '<img src=x onerror="window.__pwned=3"> & &amp; \u2028line\u2029sep ]]> </style>\n'
)
HOSTILE_TITLE = '<b>"layer" & </title><script>window.__pwned=4</script>'


def make_document() -> dict:
    """A small layer as its JSON document: a reminder, an external module, an external memory, all node kinds."""
    files = ["aria[reminder].md", "curiosity[ext_module].md", "cars[ext_memory].md"]
    nodes = [
        {"id": "f:rem", "kind": "file", "label": files[0], "file": files[0], "line": 1},
        {"id": "f:mod", "kind": "file", "label": files[1], "file": files[1], "line": 1},
        {"id": "f:mem", "kind": "file", "label": files[2], "file": files[2], "line": 1},
        {"id": "n:1", "kind": "nucleus", "label": "NUCLEUS 1: GROWTH", "file": files[0], "line": 12,
         "permissionLevel": 1, "source": "## NUCLEUS 1: GROWTH\nDrive to learn.\n"},
        {"id": "r:1", "kind": "rules", "label": "RULES", "file": files[0], "line": 5,
         "permissionLevel": 1, "source": "## RULES:\n- R1 be kind\n"},
        {"id": "m:042", "kind": "module", "label": "MODULE 042: ALPHA_ENGINE", "file": files[0], "line": 20,
         "permissionLevel": 2, "state": "active", "permanent": True, "moduleId": "042",
         "source": "## MODULE 042: ALPHA_ENGINE [NUCLEI: 1]\n### FUNCTION\nKeeps the alpha signal.\n"},
        {"id": "m:042.1", "kind": "sub_module", "label": "SUB-MODULE 042.1: ALPHA_CACHE", "file": files[0],
         "line": 31, "permissionLevel": 2, "state": "inactive", "moduleId": "042.1",
         "source": "### SUB-MODULE 042.1: ALPHA_CACHE\n"},
        {"id": "m:CUR7", "kind": "module", "label": "MODULE CUR7: CURIOSITY", "file": files[1], "line": 3,
         "permissionLevel": 3, "state": "active", "moduleId": "CUR7",
         "source": "## MODULE CUR7: CURIOSITY\n### CONNECTIONS\n- MODULE 042\n"},
        {"id": "m:X1", "kind": "module", "label": HOSTILE_LABEL, "file": files[1], "line": 40,
         "permissionLevel": 5, "state": None, "moduleId": "X1", "source": HOSTILE_SOURCE},
        {"id": "t:maint", "kind": "topic", "label": "TOPIC: Maintenance", "file": files[2], "line": 4,
         "permissionLevel": 1, "source": "## TOPIC: Maintenance\n"},
        {"id": "t:tyres", "kind": "subtopic", "label": "SUBTOPIC1: Tyres", "file": files[2], "line": 9,
         "permissionLevel": 1, "source": "### SUBTOPIC1: Tyres\n"},
        {"id": "e:1", "kind": "entry", "label": "LOG: 2026-05-03 \u2014 alpha check", "file": files[0],
         "line": 26, "permissionLevel": 4, "moduleId": "042",
         "source": "###### LOG: 2026-05-03 \u2014 alpha check\nAll fine, citt\u00e0 ok.\n"},
        {"id": "e:2", "kind": "entry", "label": "LOG: 2026-09-06 \u2014 winter set", "file": files[2],
         "line": 12, "permissionLevel": 4, "source": "###### LOG: 2026-09-06 \u2014 winter set\n"},
        {"id": "e:3", "kind": "entry", "label": "LOG: 2026-09-07 \u2014 service", "file": files[2],
         "line": 6, "permissionLevel": 4, "source": "###### LOG: 2026-09-07 \u2014 service\n"},
    ]
    for node in nodes:
        node.setdefault("permissionLevel", None)
        node.setdefault("state", None)
        node.setdefault("permanent", False)
        node.setdefault("moduleId", None)
        node.setdefault("source", "")
    contains = [
        ("f:rem", "r:1"), ("f:rem", "n:1"), ("f:rem", "m:042"), ("m:042", "m:042.1"), ("m:042", "e:1"),
        ("f:mod", "m:CUR7"), ("f:mod", "m:X1"), ("f:mem", "t:maint"), ("t:maint", "t:tyres"),
        ("t:tyres", "e:2"), ("t:maint", "e:3"),
    ]
    links = [{"source": s, "target": t, "kind": "contains"} for s, t in contains]
    links += [
        {"source": "n:1", "target": "m:042", "kind": "governs"},
        {"source": "m:CUR7", "target": "m:042", "kind": "connects"},
        {"source": "m:CUR7", "target": "m:042", "kind": "connects"},  # multigraph: parallel link
    ]
    diagnostics = [
        {"path": files[1], "line": 40, "column": 1, "code": "ZM-LAYER-DUP", "severity": "error",
         "message": "module X1 is declared twice <b>bold?</b>", "node": "m:X1"},
        {"path": files[2], "line": 2, "column": 3, "code": "W-STYLE", "severity": "warning",
         "message": "no node for this one", "node": None},
    ]
    return {
        "directed": True,
        "multigraph": True,
        "graph": {"name": "aria", "root": "/tmp/aria", "files": files, "diagnostics": diagnostics},
        "nodes": nodes,
        "links": links,
    }


_FIELDS = {"permissionLevel": "permission_level", "moduleId": "module_id"}


def typed(document: dict) -> LayerGraph:
    """The typed graph of a JSON document made here (its fields renamed as the dataclasses name them)."""
    meta = document["graph"]
    return LayerGraph(meta["name"], meta["root"], tuple(meta["files"]),
                      tuple(GraphDiagnostic(**d) for d in meta["diagnostics"]),
                      tuple(GraphNode(**{_FIELDS.get(k, k): v for k, v in n.items()}) for n in document["nodes"]),
                      tuple(GraphLink(**link) for link in document["links"]))


def make_graph() -> LayerGraph:
    """:func:`make_document` as the typed graph render_html takes."""
    return typed(make_document())


class _ScriptCollector(html.parser.HTMLParser):
    """Collects every <script>/<link> start tag with its attributes and text."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[tuple[dict, str]] = []
        self.tags: list[tuple[str, dict]] = []
        self._current: dict | None = None
        self._text: list[str] = []
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if tag == "script":
            self._current, self._text = attributes, []
        elif tag == "title":
            self._in_title = True

    def handle_endtag(self, tag):
        if tag == "script" and self._current is not None:
            self.scripts.append((self._current, "".join(self._text)))
            self._current = None
        elif tag == "title":
            self._in_title = False

    def handle_data(self, data):
        if self._current is not None:
            self._text.append(data)
        elif self._in_title:
            self.title += data


def parse_page(page: str) -> _ScriptCollector:
    collector = _ScriptCollector()
    collector.feed(page)
    collector.close()
    return collector


# ---------------------------------------------------------------- static checks


def test_page_is_self_contained():
    page = render_html(make_graph())
    parsed = parse_page(page)
    assert page.startswith("<!DOCTYPE html>")
    assert [attrs.get("type") for attrs, _ in parsed.scripts] == ["application/json", None, None]
    for tag, attrs in parsed.tags:
        assert tag != "link", "no external style sheets"
        for name in ("src", "href"):
            assert name not in attrs or not re.match(r"\s*(https?:)?//", attrs[name] or ""), (tag, attrs)
    assert all("src" not in attrs for attrs, _ in parsed.scripts)
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.IGNORECASE)
    library = (Path(graph_html.__file__).parent / "static" / graph_html.LIBRARY_FILE).read_text("utf-8")
    assert parsed.scripts[1][1] == library
    assert "cytoscape" in library


def test_csp_blocks_network_and_allows_only_the_inlined_scripts():
    page = render_html(make_graph())
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)
    assert "default-src 'none'" in csp
    assert "unsafe-inline" not in csp.split("script-src", 1)[1].split(";", 1)[0]
    for attrs, text in parse_page(page).scripts:
        digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()
        allowed = f"'sha256-{digest}'" in csp
        assert allowed == (attrs.get("type") is None), attrs


def test_json_round_trips_out_of_the_page():
    graph = make_graph()
    page = render_html(graph)
    data = parse_page(page).scripts[0]
    document = graph.to_dict()
    assert data[0] == {"type": "application/json", "id": "graph-data"}
    shown = json.loads(data[1])
    assert shown == graph_html.revealed(document)  # W30: every string as reveal() shows it, nothing else changed
    hostile = next(n for n in shown["nodes"] if n["id"] == "m:X1")
    assert "\u27e8U+2028\u27e9line\u27e8U+2029\u27e9sep" in hostile["source"]
    assert [n for n in shown["nodes"] if n["id"] != "m:X1"] == [n for n in document["nodes"] if n["id"] != "m:X1"]


def test_hostile_strings_cannot_leave_their_script_element():
    graph = make_graph()
    page = render_html(graph, title=HOSTILE_TITLE)
    # Only the three script elements of the page open and close; the hostile label does not.
    assert len(re.findall(r"<script", page, re.IGNORECASE)) == 3
    assert len(re.findall(r"</script", page, re.IGNORECASE)) == 3
    assert "<!--" not in page
    assert "\u2028" not in page and "\u2029" not in page
    assert "window.__pwned" in page  # the text is there, only escaped
    assert "\\u003c/script\\u003e\\u003cscript\\u003ewindow.__pwned=1" in page
    parsed = parse_page(page)
    assert parsed.title == HOSTILE_TITLE
    assert "<title>&lt;b&gt;&quot;layer&quot; &amp; &lt;/title&gt;" in page


def test_default_title_comes_from_the_graph_name():
    assert parse_page(render_html(make_graph())).title == "aria \u2014 zonemark layer graph"
    assert parse_page(page_html({"nodes": [], "links": []})).title == "zonemark layer graph"
    assert parse_page(render_html(make_graph(), title="Mine")).title == "Mine"


def test_embed_json_escapes_markup_and_line_separators():
    text = graph_html.embed_json({"a": "<>&\u2028\u2029\u00e0\ud800"})
    assert not set("<>&\u2028\u2029") & set(text)
    assert text.isascii()
    assert json.loads(text) == {"a": "<>&\u2028\u2029\u00e0\ud800"}


def test_rendering_is_deterministic():
    assert render_html(make_graph()) == render_html(make_graph())


@pytest.mark.parametrize(
    ("graph", "error"),
    [
        ([], TypeError),
        ("nodes", TypeError),
        ({"nodes": "abc", "links": []}, ValueError),
        ({"nodes": [], "links": {}}, ValueError),
        ({"graph": [], "nodes": []}, ValueError),
        ({"nodes": [{"id": "a", "line": float("nan")}], "links": []}, ValueError),
        ({"nodes": [{"id": object()}], "links": []}, ValueError),
    ],
)
def test_invalid_graph_is_refused_with_a_clear_error(graph, error):
    with pytest.raises(error) as info:
        page_html(graph)
    assert "graph" in str(info.value)
    with pytest.raises(TypeError, match="graph must be a LayerGraph"):
        render_html(graph)


def test_an_asset_that_would_end_its_element_is_refused(monkeypatch, tmp_path):
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "unsafe.js").write_text("var a = '</SCRIPT>';", encoding="utf-8")
    monkeypatch.setattr(graph_html.resources, "files", lambda package: tmp_path)
    with pytest.raises(RuntimeError, match="cannot be inlined"):
        graph_html._asset("unsafe.js")


def test_vendored_library_ships_its_licence():
    static = Path(graph_html.__file__).parent / "static"
    licence = (static / graph_html.LIBRARY_LICENSE_FILE).read_text("utf-8")
    assert "Cytoscape Consortium" in licence and "Permission is hereby granted" in licence
    library = (static / graph_html.LIBRARY_FILE).read_bytes()
    assert b"Cytoscape Consortium" in library[:400]
    note = (static / "VENDORED.txt").read_text("utf-8")
    assert f"sha256 of cytoscape.min.js: {hashlib.sha256(library).hexdigest()}" in note


# ---------------------------------------------------------------- real browser

def open_page(devtools: DevTools, path: Path) -> None:
    """Loads a page file and waits until the graph is drawn."""
    url = path.as_uri()
    devtools.events.clear()
    devtools.call("Page.navigate", url=url)
    devtools.wait_for(
        f"location.href === {json.dumps(url)} && document.readyState === 'complete'"
        " && !!window.zonemarkGraph && (window.zonemarkGraph.ready || !!window.zonemarkGraph.error)"
    )
    error = devtools.evaluate("window.zonemarkGraph.error")
    assert error is None, error
    devtools.next_frames()


def page_problems(devtools: DevTools) -> list[dict]:
    """Uncaught exceptions, console errors/warnings and dialogs seen since the page was opened."""
    problems = []
    for event in devtools.events:
        method = event["method"]
        if method in ("Runtime.exceptionThrown", "Page.javascriptDialogOpening"):
            problems.append(event)
        elif method == "Runtime.consoleAPICalled" and event["params"]["type"] in ("error", "warning", "assert"):
            problems.append(event)
    return problems


def click_node(devtools: DevTools, node_id: str) -> None:
    """A real mouse click at the node's rendered position (after centring it in the canvas)."""
    point = devtools.evaluate(
        "(() => { const g = window.zonemarkGraph, n = g.nodeById(%s);"
        " g.cy.zoom(1.5); g.cy.center(n);"
        " const p = n.renderedPosition(), r = g.cy.container().getBoundingClientRect();"
        " return {x: r.left + p.x, y: r.top + p.y}; })()" % json.dumps(node_id)
    )
    devtools.next_frames()
    devtools.click(point["x"], point["y"])


def save_screenshot(devtools: DevTools, tmp_path: Path, name: str) -> None:
    """PNG of the page into the test's tmp dir and the git-ignored out/ folder of the repository."""
    shot = base64.b64decode(devtools.call("Page.captureScreenshot", format="png")["data"])
    assert shot.startswith(b"\x89PNG")
    (tmp_path / name).write_bytes(shot)
    out = REPO_ROOT / "out"
    out.mkdir(exist_ok=True)
    (out / name).write_bytes(shot)


def write_page(directory: Path, graph: LayerGraph | dict, name: str = "graph.html") -> Path:
    """The page of a typed graph, or of a JSON document as it is (malformed ones too)."""
    path = directory / name
    path.write_text(render_html(graph) if isinstance(graph, LayerGraph) else page_html(graph), encoding="utf-8")
    return path


def test_browser_draws_every_node_and_click_shows_details(browser, tmp_path):
    graph = make_graph()
    open_page(browser, write_page(tmp_path, graph))
    counts = browser.evaluate(
        "(() => { const cy = window.zonemarkGraph.cy; return {nodes: cy.nodes().length,"
        " visible: cy.nodes(':visible').length, edges: cy.edges().length,"
        " shown: document.getElementById('node-count').textContent,"
        " errors: document.getElementById('error-count').textContent,"
        " warnings: document.getElementById('warning-count').textContent}; })()"
    )
    assert counts == {"nodes": len(graph.nodes), "visible": len(graph.nodes), "edges": len(graph.links),
                      "shown": str(len(graph.nodes)), "errors": "1", "warnings": "1"}
    # Every node lies inside the canvas after the layout.
    assert browser.evaluate(
        "(() => { const cy = window.zonemarkGraph.cy, w = cy.width(), h = cy.height();"
        " return cy.nodes().every(n => { const p = n.renderedPosition();"
        " return p.x >= 0 && p.y >= 0 && p.x <= w && p.y <= h; }); })()"
    )

    click_node(browser, "m:042")
    details = browser.evaluate("document.getElementById('details').innerText")
    module = next(n for n in graph.nodes if n.id == "m:042")
    assert browser.evaluate("document.getElementById('details-title').textContent") == module.label
    assert browser.evaluate("document.getElementById('details-file').textContent") == module.file
    assert browser.evaluate("document.getElementById('details-line').textContent") == str(module.line)
    assert browser.evaluate("document.getElementById('details-source').textContent") == module.source
    assert "P2" in details and "active" in details
    assert browser.evaluate("window.zonemarkGraph.cy.nodes(':selected').map(n => n.data('label'))") == [
        module.label
    ]
    browser.evaluate("window.zonemarkGraph.cy.fit(undefined, 30) && true")
    browser.next_frames()
    save_screenshot(browser, tmp_path, "graph-page.png")
    assert page_problems(browser) == []


def test_browser_search_and_kind_filters(browser, tmp_path):
    graph = make_graph()
    open_page(browser, write_page(tmp_path, graph))
    browser.click_element("#search")
    browser.call("Input.insertText", text="alpha")
    expected = sorted(
        n.label for n in graph.nodes
        if "alpha" in n.label.lower() or "alpha" in (n.module_id or "").lower()
    )
    assert len(expected) == 3
    found = browser.evaluate("window.zonemarkGraph.cy.nodes('.match').map(n => n.data('label'))")
    assert sorted(found) == expected
    assert browser.evaluate("document.getElementById('search-count').textContent") == "3 matches"
    assert browser.evaluate("window.zonemarkGraph.cy.nodes('.faded').length") == len(graph.nodes) - 3

    # A module id matches as well as a label.
    browser.evaluate("document.getElementById('search').select()")
    browser.call("Input.insertText", text="cur7")
    found = browser.evaluate("window.zonemarkGraph.cy.nodes('.match').map(n => n.data('label'))")
    assert found == ["MODULE CUR7: CURIOSITY"]

    # Unticking a kind hides its nodes (a real click on the checkbox).
    entries = sum(1 for n in graph.nodes if n.kind == "entry")
    browser.click_element("#filter-kind-entry")
    assert browser.evaluate("document.getElementById('filter-kind-entry').checked") is False
    assert browser.evaluate("window.zonemarkGraph.cy.nodes(':visible').length") == len(graph.nodes) - entries
    assert browser.evaluate("document.getElementById('visible-count').textContent") == str(
        len(graph.nodes) - entries
    )
    browser.click_element("#filter-kind-entry")
    assert browser.evaluate("window.zonemarkGraph.cy.nodes(':visible').length") == len(graph.nodes)
    assert page_problems(browser) == []


def test_browser_diagnostic_click_selects_its_node(browser, tmp_path):
    graph = make_graph()
    open_page(browser, write_page(tmp_path, graph))
    items = browser.evaluate(
        "Array.from(document.querySelectorAll('#diagnostics li')).map(li => li.textContent)"
    )
    assert items == [
        "curiosity[ext_module].md:40:1 ZM-LAYER-DUP module X1 is declared twice <b>bold?</b>",
        "cars[ext_memory].md:2:3 W-STYLE no node for this one",
    ]
    assert browser.evaluate("document.querySelectorAll('#diagnostics b').length") == 0
    browser.click_element("#diagnostics li button")
    assert browser.evaluate("document.getElementById('details-title').textContent") == HOSTILE_LABEL
    assert browser.evaluate(
        "window.zonemarkGraph.cy.nodes(':selected').map(n => n.same(window.zonemarkGraph.nodeById('m:X1')))"
    ) == [True]
    assert page_problems(browser) == []


def test_browser_keeps_hostile_content_as_text(browser, tmp_path):
    graph = make_graph()
    path = tmp_path / "hostile.html"
    path.write_text(render_html(graph, title=HOSTILE_TITLE), encoding="utf-8")
    open_page(browser, path)
    click_node(browser, "m:X1")
    assert browser.evaluate("document.getElementById('details-title').textContent") == HOSTILE_LABEL
    # W30: the line and paragraph separators of the source show as marks, the rest as it is
    assert browser.evaluate("document.getElementById('details-source').textContent") == reveal(HOSTILE_SOURCE)
    assert browser.evaluate("document.title") == HOSTILE_TITLE
    assert browser.evaluate("typeof window.__pwned") == "undefined"
    assert browser.evaluate("document.querySelectorAll('img, b').length") == 0
    assert browser.evaluate("document.scripts.length") == 3
    assert page_problems(browser) == []


def test_browser_shows_a_generated_layer(browser, tmp_path):
    """A real layer (about 2,000 nodes): its entries start hidden, one tick shows them all.

    With the entries hidden it still shows over 150 nodes (the page's ROWS_LIMIT), so the page
    must switch from rows to the radial layout.
    """
    from zonemark.layer.graph import build_graph
    from zonemark.layer import Layer

    layer_dir = tmp_path / "layer"
    corpus.generate_layer(layer_dir, modules=80, memories=4, reminder_size=250_000, ext_size=5_000)
    graph = build_graph(Layer.load(layer_dir))
    nodes = graph.nodes
    entries = sum(1 for n in nodes if n.kind == "entry")
    assert len(nodes) > 1000 and entries > 300 and len(nodes) - entries > 150 + 50  # ROWS_LIMIT + a margin
    open_page(browser, write_page(tmp_path, graph))
    state = browser.evaluate(
        "(() => { const cy = window.zonemarkGraph.cy; return {nodes: cy.nodes().length, edges: cy.edges().length,"
        " visible: cy.nodes(':visible').length, note: document.getElementById('hidden-note').textContent,"
        " layout: window.zonemarkGraph.layout}; })()"
    )
    assert state["nodes"] == len(nodes) and state["edges"] == len(graph.links)
    assert state["visible"] == len(nodes) - entries
    assert state["note"].startswith(f"{entries} entries hidden")
    assert state["layout"] == "radial"
    save_screenshot(browser, tmp_path, "graph-layer-page.png")

    browser.click_element("#filter-kind-entry")
    assert browser.evaluate("window.zonemarkGraph.cy.nodes(':visible').length") == len(nodes)
    assert browser.evaluate("document.getElementById('hidden-note').textContent") == ""

    module = next(n for n in nodes if n.kind == "module" and n.source)
    click_node(browser, module.id)
    assert browser.evaluate("document.getElementById('details-file').textContent") == module.file
    assert browser.evaluate("document.getElementById('details-line').textContent") == str(module.line)
    assert browser.evaluate("document.getElementById('details-source').textContent") == module.source

    browser.click_element("#search")
    browser.call("Input.insertText", text=module.module_id)
    needle = module.module_id.lower()
    expected = sum(1 for n in nodes if needle in n.label.lower() or needle in (n.module_id or "").lower())
    assert browser.evaluate("window.zonemarkGraph.cy.nodes('.match').length") == expected >= 1
    assert page_problems(browser) == []


def test_browser_survives_malformed_and_empty_graphs(browser, tmp_path):
    graph = {
        "graph": {"name": 7, "diagnostics": [None, {"severity": "error", "node": "ghost", "code": "X"}]},
        "nodes": [
            {"id": "a", "kind": "weird", "label": 12345, "permissionLevel": 9, "source": None},
            {"id": "a", "kind": "module", "label": "duplicate id"},
            {"kind": "module", "label": "no id"},
            "not a node",
            {"id": "b", "kind": "entry", "label": ""},
        ],
        "links": [
            {"source": "a", "target": "b", "kind": "contains"},
            {"source": "a", "target": "missing", "kind": "governs"},
            {"source": "b", "target": "a", "kind": "sideways"},
            None,
        ],
    }
    open_page(browser, write_page(tmp_path, graph, "malformed.html"))
    state = browser.evaluate(
        "(() => { const cy = window.zonemarkGraph.cy; return {nodes: cy.nodes().length, edges: cy.edges().length,"
        " note: document.getElementById('skipped-note').textContent,"
        " errors: document.getElementById('error-count').textContent,"
        " labels: cy.nodes().map(n => n.data('label'))}; })()"
    )
    assert state == {"nodes": 2, "edges": 2, "note": "3 nodes skipped (no id or duplicate id); 2 links skipped"
                     " (unknown endpoint)", "errors": "1", "labels": ["12345", "b"]}
    click_node(browser, "a")
    assert browser.evaluate("document.getElementById('details-kind').textContent") == "weird"
    assert browser.evaluate("document.getElementById('details-permission').textContent") == "none"
    assert page_problems(browser) == []

    open_page(browser, write_page(tmp_path, {"nodes": [], "links": []}, "empty.html"))
    assert browser.evaluate("document.getElementById('node-count').textContent") == "0"
    assert browser.evaluate("document.getElementById('diagnostics').textContent") == "No diagnostics."
    assert page_problems(browser) == []


def test_browser_shows_a_module_name_s_direction_override_as_a_mark(browser, tmp_path):
    """W30: 'Helper' U+202E 'SSECCA_TOOR_WOLLA' is drawn as 'Helper ALLOW_ROOT_ACCESS' by a browser that obeys
    the override; the page shows the override as a mark instead, in the details and on the canvas label."""
    graph = make_graph()
    graph = dataclasses.replace(graph, nodes=tuple(
        dataclasses.replace(n, label="MODULE CUR7: Helper\u202eSSECCA_TOOR_WOLLA — perché 東京") if n.id == "m:CUR7"
        else n for n in graph.nodes))
    open_page(browser, write_page(tmp_path, graph))
    click_node(browser, "m:CUR7")
    title = browser.evaluate("document.getElementById('details-title').textContent")
    assert title == "MODULE CUR7: Helper\u27e8U+202E\u27e9SSECCA_TOOR_WOLLA — perché 東京"
    label = browser.evaluate("window.zonemarkGraph.nodeById('m:CUR7').data('label')")
    assert "\u202e" not in label and "\u27e8U+202E\u27e9" in label
    assert page_problems(browser) == []


def test_browser_a_small_layer_is_an_outline_with_readable_labels_at_the_default_zoom(browser, tmp_path):
    """W87: the example layer opens as an outline: every label at least 10 px on screen, every node in the
    canvas, and no two labels over one another (the rows of the old tree drew them at 4 px)."""
    from zonemark.layer import Layer
    from zonemark.layer.graph import build_graph

    open_page(browser, write_page(tmp_path, build_graph(Layer.load(REPO_ROOT / "examples" / "layer"))))
    state = browser.evaluate(
        "(() => { const cy = window.zonemarkGraph.cy, z = cy.zoom(), w = cy.width(), h = cy.height();"
        " const nodes = cy.nodes(':visible');"
        " const boxes = nodes.map(n => n.renderedBoundingBox({includeNodes: false, includeLabels: true}));"
        " let overlaps = 0;"
        " for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {"
        "   const a = boxes[i], b = boxes[j];"
        "   if (a.x1 < b.x2 - 1 && b.x1 < a.x2 - 1 && a.y1 < b.y2 - 1 && b.y1 < a.y2 - 1) overlaps++; }"
        " return {layout: window.zonemarkGraph.layout, nodes: nodes.length, overlaps: overlaps,"
        "  smallest: Math.min(...nodes.map(n => parseFloat(n.style('font-size')) * z)),"
        "  inside: nodes.every(n => { const p = n.renderedPosition(); return p.x >= 0 && p.y >= 0 && p.x <= w"
        "   && p.y <= h; })}; })()")
    assert state["layout"] == "outline" and state["nodes"] == 34
    assert state["smallest"] >= 10, state
    assert state["inside"] and state["overlaps"] == 0, state
    assert page_problems(browser) == []


def test_browser_a_collapsed_frame_links_each_container_to_its_entries_and_its_file(browser, tmp_path,
                                                                                     monkeypatch):
    """W86: a large layer's frame shows its containers with their collapsed entries counted; the details
    link to the frame with that container expanded (and the search kept) and to the file view, and a search
    given from the review page is already applied."""
    from test_graph_frame import memory_layer

    from zonemark.layer import Layer
    from zonemark.layer.graph import build_graph
    from zonemark.render.graph_html import FrameView, frame_html

    monkeypatch.setattr(graph_html, "COLLAPSE_ENTRIES", 10)
    graph = build_graph(Layer.load(memory_layer(tmp_path / "big", 40)))
    topic = next(n for n in graph.nodes if n.kind == "topic")
    page = tmp_path / "frame.html"
    page.write_text(frame_html(graph, FrameView("/graph/frame?token=t", "/file?token=t", query="caffè")),
                    encoding="utf-8")
    open_page(browser, page)
    labels = browser.evaluate("window.zonemarkGraph.cy.nodes().map(n => n.data('label'))")
    assert "TOPIC: Viaggi — 東京 (+40)" in labels and "2026-02-01 caffè" in labels and len(labels) == 4
    assert browser.evaluate("document.getElementById('search').value") == "caffè"
    assert browser.evaluate("window.zonemarkGraph.cy.nodes('.match').map(n => n.data('label'))") == [
        "2026-02-01 caffè"]
    assert browser.evaluate("document.getElementById('hidden-note').textContent").startswith(
        "40 of 41 entries collapsed")
    assert browser.evaluate(f"window.zonemarkGraph.select({json.dumps(topic.id)})") is True
    link = browser.evaluate("(() => { const a = document.getElementById('details-expand');"
                            " return {text: a.textContent, href: a.getAttribute('href')}; })()")
    assert link == {"text": "Show its 40 entries",
                    "href": "/graph/frame?token=t&expand=" + urllib.parse.quote(topic.id, safe="()*!'")
                    + "&q=caff%C3%A8"}
    opened = browser.evaluate("(() => { const a = document.getElementById('details-open');"
                              " return {href: a.getAttribute('href'), target: a.target}; })()")
    assert opened == {"href": f"/file?token=t&path=diario%5Bext_memory%5D.md&line={topic.line}#L{topic.line}",
                      "target": "_top"}
    assert page_problems(browser) == []
