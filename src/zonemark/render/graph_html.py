"""Self-contained interactive HTML page of a layer graph (§13 output, node-link JSON).

When the graph carries a ``trace`` object (:mod:`zonemark.interchange.illuminate`, §N.18)
the page lights the nodes a neural trace names, lists them in activation order with the
trace's warnings, and offers a heat view over the recorded traces.

The page works offline: the vendored cytoscape.js library (MIT, see
static/cytoscape.LICENSE), the page script, its style sheet and the graph JSON
are all inlined. Node labels and sources are file content and are treated as
hostile: the JSON is embedded in a non-executed ``application/json`` script with
``<``, ``>``, ``&``, U+2028 and U+2029 escaped, the page script only writes it
through ``textContent`` or the canvas, and a Content-Security-Policy allows no
network access and only the page's own scripts (by hash).  Every string of the graph
goes through :func:`zonemark.core.text.reveal` first, so an invisible or
direction-changing character shows as ``⟨U+202E⟩`` (W30).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from ..core.text import reveal
from ..layer.graph import GraphNode, LayerGraph

LIBRARY_FILE = "cytoscape.min.js"
LIBRARY_LICENSE_FILE = "cytoscape.LICENSE"
SCRIPT_FILE = "graph_page.js"
STYLE_FILE = "graph_page.css"

_JSON_ESCAPES = (
    ("&", "\\u0026"),
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)
# Text that would end or confuse a raw-text <script>/<style> element (HTML §13.2.6.4.4).
_RAW_TEXT_HAZARD = re.compile(r"</(script|style)|<!--|<script", re.IGNORECASE)

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="zonemark">
<title>{title}</title>
<style>
{style}
</style>
</head>
<body>
<header>
<h1 id="page-title" title="{title}">{title}</h1>
<div class="counts" id="counts">
<span><span class="count" id="node-count">0</span> nodes</span>
<span>(<span class="count" id="visible-count">0</span> shown)</span>
<span><span class="count" id="edge-count">0</span> edges</span>
<span class="errors"><span class="count" id="error-count">0</span> errors</span>
<span class="warnings"><span class="count" id="warning-count">0</span> warnings</span>
<span class="hint" id="skipped-note"></span>
</div>
<input id="search" type="search" placeholder="Search label or module" autocomplete="off" spellcheck="false"
 aria-label="Search nodes">
<span id="search-count"></span>
<label>Layout <select id="layout">
<option value="auto" selected>auto</option>
<option value="outline">outline</option>
<option value="tree">tree</option>
<option value="radial">radial</option>
<option value="force">force</option>
<option value="rings">rings</option>
</select></label>
<span id="layout-used" class="hint"></span>
<button type="button" id="fit">Fit</button>
<label id="heat-control" hidden><input type="checkbox"
 id="heat-toggle"> heat (<span id="heat-records">0</span> recorded traces)</label>
<div id="filter-row"><div id="filters"
 aria-label="Show node kinds"></div><span id="hidden-note" class="hint"></span></div>
</header>
<main id="graph-area">
<div id="cy"></div>
<div id="legend">
<div class="row" id="legend-permissions"><strong>Border:</strong></div>
<div class="row" id="legend-edges"><strong>Edges:</strong></div>
<div class="row" id="legend-halos"><strong>Halo:</strong></div>
<div class="row" id="legend-trace" hidden><strong>Trace:</strong></div>
</div>
<div id="load-error" role="alert"></div>
</main>
<aside>
<section id="trace-panel" hidden><h2>Trace</h2><p id="trace-summary"></p>
<label><input type="checkbox" id="trace-dim" checked> dim the nodes the trace does not name</label>
<ol id="trace-lit"></ol><h3 id="trace-warnings-title">Warnings</h3><ul class="plain" id="trace-warnings"></ul></section>
<section id="details" aria-live="polite"><p class="hint">Click a node to see its details and source.</p></section>
<section id="diagnostics-panel"><h2>Diagnostics</h2><ul class="plain" id="diagnostics"></ul></section>
</aside>
<script type="application/json" id="graph-data">{data}</script>
<script>{library}</script>
<script>{script}</script>
</body>
</html>
"""


def revealed(value: object) -> object:
    """``value`` (node-link JSON) with every string — keys too, so ids still match — through
    :func:`~zonemark.core.text.reveal`: a label's invisible and direction-changing characters show as
    ``⟨U+202E⟩`` on the canvas and in the panels as on every other view (W30)."""
    if isinstance(value, str):
        return reveal(value)
    if isinstance(value, Mapping):
        return {reveal(k) if isinstance(k, str) else k: revealed(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [revealed(v) for v in value]
    return value


def embed_json(value: object) -> str:
    """JSON text safe inside an HTML ``<script>`` element: no ``<``, ``>``, ``&``, U+2028/9."""
    text = json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    for character, escape in _JSON_ESCAPES:
        text = text.replace(character, escape)
    return text


def _asset(name: str) -> str:
    """Text of a vendored file under ``zonemark/render/static``; refuses text unsafe to inline."""
    text = resources.files("zonemark.render").joinpath("static", name).read_text(encoding="utf-8")
    if _RAW_TEXT_HAZARD.search(text):
        raise RuntimeError(f"static/{name} cannot be inlined: it contains a script or comment delimiter")
    return text


@lru_cache(maxsize=1)
def _assets() -> tuple[str, str, str]:
    return _asset(LIBRARY_FILE), _asset(SCRIPT_FILE), _asset(STYLE_FILE)


def _script_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _check_graph(graph: object) -> None:
    if not isinstance(graph, Mapping):
        raise TypeError(f"graph must be a node-link mapping, not {type(graph).__name__}")
    for key in ("nodes", "links"):
        if key in graph and not isinstance(graph[key], list | tuple):
            raise ValueError(f"graph[{key!r}] must be a list")
    if "graph" in graph and not isinstance(graph["graph"], Mapping):
        raise ValueError("graph['graph'] must be a mapping")


def _title(name: object) -> str:
    return f"{name} \u2014 zonemark layer graph" if isinstance(name, str) and name else "zonemark layer graph"


def content_security_policy() -> str:
    """The page's Content-Security-Policy (its ``<meta>``; a server may send it as a header too):
    no network access, only the page's own two scripts (by hash)."""
    library, script, _style = _assets()
    return "; ".join(
        (
            "default-src 'none'",
            f"script-src {_script_hash(library)} {_script_hash(script)}",
            "style-src 'unsafe-inline'",
            "img-src data: blob:",
            "base-uri 'none'",
            "form-action 'none'",
        )
    )


def render_html(graph: LayerGraph, *, title: str | None = None) -> str:
    """One offline HTML page showing ``graph`` (the layer's node-link document, §13).

    ``title`` defaults to the graph's name.
    """
    if not isinstance(graph, LayerGraph):
        raise TypeError(f"graph must be a LayerGraph, not {type(graph).__name__}")
    document = graph.to_dict()
    if graph.left_out_note():  # B18: the page says what it does not show
        document["view"] = {"note": graph.left_out_note()}
    return page_html(document, title=title)


def page_html(graph: Mapping[str, Any], *, title: str | None = None) -> str:
    """The page around a node-link JSON document as it is (the page script reads whatever it is given).

    ``title`` defaults to the document's ``graph.name``. Raises TypeError/ValueError
    (one-line message) for a value that is not node-link JSON.
    """
    _check_graph(graph)
    try:
        data = embed_json(revealed(graph))
    except (TypeError, ValueError) as error:
        raise ValueError(f"graph is not JSON-serialisable: {error}") from None
    library, script, style = _assets()
    if title is None:
        meta = graph.get("graph") or {}
        title = _title(meta.get("name"))
    return _PAGE.format(
        csp=content_security_policy(),
        title=html.escape(reveal(title), quote=True),
        style=style,
        data=data,
        library=library,
        script=script,
    )


#: Above this many entries the review page's graph frame starts from the structure (W86): files,
#: nuclei, modules and the other containers, each with the count of its entries left out.
COLLAPSE_ENTRIES = 1000
#: Entries one expansion or one search adds to a collapsed frame.
EXPAND_CAP = 500
#: Diagnostics a collapsed frame lists (the Check page lists them all).
DIAGNOSTICS_CAP = 500
#: The longest search and node id a frame request may carry (longer ones are ignored).
QUERY_LIMIT = 200
ID_LIMIT = 2000


@dataclass(frozen=True, slots=True)
class FrameView:
    """What the review page's frame shows of a graph (W86).

    ``frame_url`` is the frame's own address (with its token; the page adds ``expand`` and ``q``),
    ``file_url`` the file view's (the page adds ``path`` and ``line``); ``expand`` the id of the node
    whose entries are shown, ``query`` a search given from the review page.
    """

    frame_url: str
    file_url: str
    expand: str | None = None
    query: str = ""


def _matches(node: GraphNode, needle: str) -> bool:
    """The page's own search rule: the label or the module id holds the words (case folded)."""
    return needle in node.label.lower() or needle in (node.module_id or "").lower()


def frame_document(graph: LayerGraph, view: FrameView) -> dict[str, Any]:
    """The JSON document the frame embeds: the whole graph when it is small, else its structure.

    A collapsed document keeps every node that is not an entry, without sources (the page links
    each node to its place in the file view), and of the entries only those the view asks for: the
    children of ``view.expand`` and the matches of ``view.query`` (each at most EXPAND_CAP) and the
    ones a trace lights or heats.  ``view.collapsed`` gives, per node, how many of its entries are
    left out.  One pass over the nodes and one over the links.
    """
    needle = view.query.strip().lower()
    entries = sum(1 for n in graph.nodes if n.kind == "entry")
    page: dict[str, Any] = {"frameUrl": view.frame_url, "fileUrl": view.file_url, "query": view.query,
                            "collapsed": {}, "note": ""}
    if entries <= COLLAPSE_ENTRIES:
        document = graph.to_dict()
        page["note"] = graph.left_out_note()
        document["view"] = page
        return document
    parent = {link.target: link.source for link in graph.links if link.kind == "contains"}
    wanted: set[str] = set()
    if graph.trace is not None:
        wanted.update(m.node for m in graph.trace.lit if m.node is not None)
        wanted.update(node for node, _ in graph.trace.heat)
    expanded = matched = 0
    found = 0
    for n in graph.nodes:
        if n.kind != "entry":
            continue
        if view.expand is not None and parent.get(n.id) == view.expand:
            expanded += 1
            if expanded <= EXPAND_CAP:
                wanted.add(n.id)
        if needle and _matches(n, needle):
            found += 1
            if matched < EXPAND_CAP:
                matched += 1
                wanted.add(n.id)
    nodes: list[dict[str, Any]] = []
    kept: set[str] = set()
    collapsed: dict[str, int] = {}
    shown = 0
    for n in graph.nodes:
        if n.kind == "entry" and n.id not in wanted:
            owner = parent.get(n.id)
            if owner is not None:
                collapsed[owner] = collapsed.get(owner, 0) + 1
            continue
        item = n.to_dict()
        item["source"] = ""
        nodes.append(item)
        kept.add(n.id)
        shown += n.kind == "entry"
    links = [link.to_dict() for link in graph.links if link.source in kept and link.target in kept]
    notes = [f"{entries - shown} of {entries} entries collapsed into their containers: "
             "select a container to show its entries."]
    if expanded > EXPAND_CAP:
        notes.append(f"Showing the first {EXPAND_CAP} of its {expanded} entries.")
    if found > EXPAND_CAP:
        notes.append(f"Search: the first {EXPAND_CAP} of {found} matching entries are shown.")
    diagnostics = graph.diagnostics[:DIAGNOSTICS_CAP]
    if len(graph.diagnostics) > DIAGNOSTICS_CAP:
        found_in_all = len(graph.diagnostics) + graph.diagnostics_left_out
        notes.append(f"The first {DIAGNOSTICS_CAP} of {found_in_all} diagnostics are listed "
                     "(the Check page lists them all).")
    if graph.nodes_left_out:  # B18 (the diagnostics left out are counted in the note above)
        notes.append(graph.nodes_note())
    page.update(collapsed=collapsed, note=" ".join(notes))
    meta = graph.meta()
    meta["diagnostics"] = [d.to_dict() for d in diagnostics]
    document = {"directed": True, "multigraph": True, "graph": meta, "nodes": nodes, "links": links, "view": page}
    if graph.trace is not None:
        document["trace"] = graph.trace.to_dict()
    return document


def frame_html(graph: LayerGraph, view: FrameView, *, title: str | None = None) -> str:
    """The review page's graph frame: :func:`frame_document` in the page (W86)."""
    return page_html(frame_document(graph, view), title=title if title is not None else _title(graph.name))
