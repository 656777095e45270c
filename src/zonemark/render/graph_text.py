"""Text formats of a layer graph (:class:`zonemark.layer.graph.LayerGraph`): JSON, Graphviz DOT, Mermaid."""

from __future__ import annotations

import json
from typing import Any

from ..layer.graph import GraphDiagnostic, GraphLink, GraphNode, LayerGraph


def _plain(value: object) -> dict[str, Any]:
    """A node, link or diagnostic as its JSON object, made when the encoder reaches it."""
    if isinstance(value, GraphNode | GraphLink | GraphDiagnostic):
        return value.to_dict()
    raise TypeError(f"{type(value).__name__} is not part of a layer graph")


def to_json(graph: LayerGraph, indent: int | None = 2) -> str:
    """``json.dumps(graph.to_dict(), indent=indent)``, byte for byte, without its peak: the indenting
    encoder (pure Python) holds every token of the whole graph as a string before it joins them — 80x
    the file for 100,000 entries.  Here each node and link is encoded on its own, its dict made only
    then (B4, W85)."""
    if indent is None:
        return json.dumps(graph.shallow(), ensure_ascii=False, default=_plain) + "\n"
    return _indented(graph.shallow(), indent, 0, "\n")


def _indented(value: object, indent: int, depth: int, end: str = "") -> str:
    """``value`` as ``json.dumps(..., indent=indent)`` writes it ``depth`` levels down."""
    if isinstance(value, GraphNode | GraphLink | GraphDiagnostic):
        value = value.to_dict()
    if (depth >= 2 or not isinstance(value, dict | list | tuple) or not value
            or (isinstance(value, dict) and not all(isinstance(k, str) for k in value))):
        text = json.dumps(value, ensure_ascii=False, indent=indent, default=_plain)
        return (text.replace("\n", "\n" + " " * (indent * depth)) if depth and "\n" in text else text) + end
    pad = "\n" + " " * (indent * (depth + 1))
    if isinstance(value, dict):
        parts = [json.dumps(k, ensure_ascii=False) + ": " + _indented(v, indent, depth + 1) for k, v in value.items()]
        open_, close = "{", "}"
    else:
        parts = [_indented(v, indent, depth + 1) for v in value]
        open_, close = "[", "]"
    parts[0] = open_ + pad + parts[0]
    parts[-1] += "\n" + " " * (indent * depth) + close + end
    return ("," + pad).join(parts)  # one copy of the whole: the parts, then the text


_DOT_SHAPE = {"file": "folder", "nucleus": "doublecircle", "module": "box", "sub_module": "box",
              "topic": "tab", "subtopic": "tab", "rules": "note", "entry": "plaintext"}
_DOT_EDGE = {"contains": "color=gray50", "governs": "color=firebrick, penwidth=2",
             "connects": "color=royalblue, style=dashed"}


def _dot_quote(text: str) -> str:
    text = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "")
    return f'"{text}"'


def to_dot(graph: LayerGraph) -> str:
    """Graphviz DOT (``dot -Tsvg``)."""
    out = [f"digraph {_dot_quote(graph.name)} {{", "  rankdir=LR;", "  node [fontname=Helvetica];"]
    if graph.left_out_note():  # B18
        out.insert(1, f"  // {graph.left_out_note()}")
    for n in graph.nodes:
        attrs = [f"label={_dot_quote(_short(n.label))}", f"shape={_DOT_SHAPE[n.kind]}"]
        if n.state == "inactive":
            attrs.append("style=dashed")
        if n.permanent:
            attrs.append("peripheries=2")
        out.append(f"  {_dot_quote(n.id)} [{', '.join(attrs)}];")
    for link in graph.links:
        label = "" if link.kind == "contains" else link.kind
        out.append(f"  {_dot_quote(link.source)} -> {_dot_quote(link.target)} "
                   f"[{_DOT_EDGE[link.kind]}, label={_dot_quote(label)}];")
    out.append("}")
    return "\n".join(out) + "\n"


def _short(label: str, limit: int = 60) -> str:
    label = " ".join(label.split())
    return label if len(label) <= limit else label[:limit - 1] + "…"


def _mermaid_text(text: str) -> str:
    text = _short(text)
    for ch, ent in (("&", "#amp;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;"), ("[", "#91;"), ("]", "#93;"),
                    ("|", "#124;"), ("`", "#96;")):
        text = text.replace(ch, ent)
    return text


_MERMAID_SHAPE = {"file": ('[/"', '"/]'), "nucleus": ('(("', '"))'), "module": ('["', '"]'),
                  "sub_module": ('["', '"]'), "topic": ('[["', '"]]'), "subtopic": ('[["', '"]]'),
                  "rules": ('{{"', '"}}'), "entry": ('("', '")')}
_MERMAID_ARROW = {"contains": "-->", "governs": "==>|governs|", "connects": "-.->|connects|"}


def to_mermaid(graph: LayerGraph) -> str:
    """A Mermaid ``flowchart`` (node ids are renumbered ``n0``, ``n1``, ... for Mermaid's syntax)."""
    ids = {n.id: f"n{i}" for i, n in enumerate(graph.nodes)}
    out = ["flowchart LR"]
    if graph.left_out_note():  # B18
        out.append(f"  %% {graph.left_out_note()}")
    for n in graph.nodes:
        left, right = _MERMAID_SHAPE[n.kind]
        out.append(f"  {ids[n.id]}{left}{_mermaid_text(n.label)}{right}")
    for link in graph.links:
        s, t = ids.get(link.source), ids.get(link.target)
        if s is not None and t is not None:
            out.append(f"  {s} {_MERMAID_ARROW[link.kind]} {t}")
    return "\n".join(out) + "\n"
