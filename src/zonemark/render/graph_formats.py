"""The output formats of a layer graph (:class:`zonemark.layer.graph.LayerGraph`), one row each.

Every face reads this table: ``zonemark graph --format`` takes its choices and its help from it.
The renderers are imported when a row is used, so reading the table costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .registry import Format, spoken

if TYPE_CHECKING:
    from ..layer.graph import LayerGraph


def _json(graph: LayerGraph) -> str:
    from .graph_text import to_json
    return to_json(graph)


def _dot(graph: LayerGraph) -> str:
    from .graph_text import to_dot
    return to_dot(graph)


def _mermaid(graph: LayerGraph) -> str:
    from .graph_text import to_mermaid
    return to_mermaid(graph)


def _html(graph: LayerGraph) -> str:
    from .graph_html import render_html
    return render_html(graph)


GRAPH_FORMATS: tuple[Format[LayerGraph], ...] = (
    Format("json", _json, "application/json", "json (node-link; the default)", carries_trace=True),
    Format("dot", _dot, "text/vnd.graphviz", "dot"),
    Format("mermaid", _mermaid, "text/plain", "mermaid"),
    Format("html", _html, "text/html", "html (a page that works offline)", carries_trace=True),
)


def graph_formats_help() -> str:
    """The help of ``--format``: every row's label, in the table's order."""
    return spoken([f.label for f in GRAPH_FORMATS], serial_comma=True)
