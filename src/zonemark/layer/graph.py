"""The graph of a continuity layer (§2.2, §7.1.2, §7.1.3, §7.4.4, §7.6) as a node-link document.

Nodes: files, nuclei, modules, sub-modules, topics, sub-topics, ``## RULES:``
sections and H6 entries (logs, mnemonic nodes).  Edges:

* ``contains`` -- file to its top containers, container to child container,
  container to entry, following the outline's header nesting (§7.1.3);
* ``governs`` -- module to nucleus, from ``[NUCLEI: ...]`` (§7.4.4);
* ``connects`` -- from CONNECTIONS bullets (§7.6).  An external hub with no
  declaration floats: no fallback edge is ever drawn (F-CONN-A).

Headers that are not nodes (FUNCTION, TRIGGER, a free H2 section, the state
registry...) stay inside the ``source`` of the nearest node above them, and
their H6 entries hang from that node.  A file that is not merged (§7.1.1 id
conflict) is a lone file node.

The JSON document (:func:`build_graph`) is a node-link document whose shape is
a contract with the HTML page: change it only together with ``zonemark.render.graph_html``.
Node ids: ``file:<rel>``, ``module:<id>`` (declared id or ``~Tn``),
``nucleus:<n>``, ``container:<rel>:<line>`` (sub-modules, topics, sub-topics,
rules sections, ignored duplicates) and ``entry:<rel>:<line>``.

One optional top-level key belongs to the same contract: ``trace``, added by
:func:`zonemark.interchange.illuminate.illuminate` (``zonemark graph --trace``, and the heat
of the traces recorded in ``.zonemark/traces``): the nodes a neural trace lights up, in
activation order, its warnings and per-node counts over the recorded traces (§N.18).  The
nodes and links are the same with or without it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal, get_args

from ..core import gcpause
from ..core.diagnostics import Diagnostic
from ..core.headers import spelled_keyword
from ..core.nodes import Heading, State
from ..core.outline import headings as headings_of
from .loader import Layer, LayerFile, LayerModule, LayerNucleus

SOURCE_CAP = 4000
#: The kind of a node of the graph document.
NodeKind = Literal["file", "nucleus", "module", "sub_module", "topic", "subtopic", "rules", "entry"]
#: The kind of a link of the graph document (§7.4, §7.6).
LinkKind = Literal["contains", "governs", "connects"]
NODE_KINDS: tuple[NodeKind, ...] = get_args(NodeKind)
LINK_KINDS: tuple[LinkKind, ...] = get_args(LinkKind)




@dataclass(frozen=True, slots=True)
class GraphNode:
    """One node of the graph: a file, a nucleus, a module or another container, or an H6 entry."""

    id: str
    kind: NodeKind
    label: str
    file: str
    line: int
    permission_level: int | None
    state: State | None = None  # a module's effective state (§7.2); None for the other kinds
    permanent: bool = False
    module_id: str | None = None
    source: str = ""  # the node's own text, without its child nodes', capped at SOURCE_CAP

    def to_dict(self) -> dict[str, Any]:
        """The node as the JSON document writes it (camelCase keys, the page's contract)."""
        return {"id": self.id, "kind": self.kind, "label": self.label, "file": self.file, "line": self.line,
                "permissionLevel": self.permission_level, "state": self.state, "permanent": self.permanent,
                "moduleId": self.module_id, "source": self.source}


@dataclass(frozen=True, slots=True)
class GraphLink:
    """One edge: ``contains`` (§7.1.3), ``governs`` (§7.4.4) or ``connects`` (§7.6)."""

    source: str
    target: str
    kind: LinkKind

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "kind": self.kind}


@dataclass(frozen=True, slots=True)
class GraphDiagnostic:
    """A finding placed on the innermost node whose extent holds its line (``node`` None: no node)."""

    path: str | None
    line: int
    column: int
    code: str
    severity: Literal["error", "warning"]
    message: str
    node: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "column": self.column, "code": self.code,
                "severity": self.severity, "message": self.message, "node": self.node}


@dataclass(frozen=True, slots=True)
class TraceMark:
    """One item a neural trace names (§N.18), in trace order; ``node`` None when it has no node."""

    step: int
    node: str | None
    kind: str  # 'nucleus' | 'module' | 'memory' | 'entry' | 'topic' (interchange.trace.Target)
    label: str
    order: int | None
    state: str | None
    action: str | None
    ref: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "node": self.node, "kind": self.kind, "label": self.label, "order": self.order,
                "state": self.state, "action": self.action, "ref": self.ref}


@dataclass(frozen=True, slots=True)
class TraceWarning:
    """A warning of the trace or of an unreadable record (its code of ``interchange.notices``)."""

    code: str
    message: str
    line: int

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "line": self.line}


@dataclass(frozen=True, slots=True)
class GraphTrace:
    """The optional ``trace`` of the document (:func:`zonemark.interchange.illuminate.illuminate`).

    ``heat`` is (node id, records naming it) in the order the counts were first met.
    """

    file: str | None
    enabled: bool | None
    lit: tuple[TraceMark, ...]
    warnings: tuple[TraceWarning, ...]
    records: int
    heat: tuple[tuple[str, int], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "enabled": self.enabled, "lit": [m.to_dict() for m in self.lit],
                "warnings": [w.to_dict() for w in self.warnings],
                "heat": {"records": self.records, "counts": dict(self.heat)}}


@dataclass(frozen=True, slots=True)
class LayerGraph:
    """The node-link document of a layer (the module docstring); ``to_dict()`` is its JSON."""

    name: str
    root: str
    files: tuple[str, ...]
    diagnostics: tuple[GraphDiagnostic, ...]
    nodes: tuple[GraphNode, ...]
    links: tuple[GraphLink, ...]
    trace: GraphTrace | None = None

    def meta(self) -> dict[str, Any]:
        """The ``graph`` key of the document."""
        return {"name": self.name, "root": self.root, "files": list(self.files),
                "diagnostics": [d.to_dict() for d in self.diagnostics]}

    def shallow(self) -> dict[str, Any]:
        """The document's top level with its nodes, links and diagnostics still typed: a writer that
        encodes them one at a time (``render.graph_text.to_json``) never holds all their dicts."""
        graph = {"name": self.name, "root": self.root, "files": self.files, "diagnostics": self.diagnostics}
        out: dict[str, Any] = {"directed": True, "multigraph": True, "graph": graph, "nodes": self.nodes,
                               "links": self.links}
        if self.trace is not None:
            out["trace"] = self.trace.to_dict()
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON document, byte for byte the node-link contract with the page (W85)."""
        out: dict[str, Any] = {"directed": True, "multigraph": True, "graph": self.meta(),
                               "nodes": [n.to_dict() for n in self.nodes],
                               "links": [link.to_dict() for link in self.links]}
        if self.trace is not None:
            out["trace"] = self.trace.to_dict()
        return out


_ModuleByPos = dict[tuple[str, int], LayerModule]
_NucleusByPos = dict[tuple[str, int], LayerNucleus]


#: A node before its source is cut: every field of :class:`GraphNode` but the last.
_Draft = tuple[str, NodeKind, str, str, int, "int | None", "State | None", bool, "str | None"]

# A frozen dataclass's __init__ sets each field through object.__setattr__: for ~10^5 nodes and
# links that doubles the cost of the graph.  These set the slots through their descriptors and give
# exactly what GraphNode(*draft, source) and GraphLink(source, target, kind) give (tested).
_NODE_SLOTS = tuple(getattr(GraphNode, f.name).__set__ for f in fields(GraphNode))
_LINK_SLOTS = tuple(getattr(GraphLink, f.name).__set__ for f in fields(GraphLink))
_new = object.__new__


def _new_node(draft: _Draft, source: str) -> GraphNode:
    """``GraphNode(*draft, source)``, without the frozen ``__init__``."""
    s0, s1, s2, s3, s4, s5, s6, s7, s8, s9 = _NODE_SLOTS
    node: GraphNode = _new(GraphNode)
    s0(node, draft[0])
    s1(node, draft[1])
    s2(node, draft[2])
    s3(node, draft[3])
    s4(node, draft[4])
    s5(node, draft[5])
    s6(node, draft[6])
    s7(node, draft[7])
    s8(node, draft[8])
    s9(node, source)
    return node


def _new_link(source: str, target: str, kind: LinkKind) -> GraphLink:
    """``GraphLink(source, target, kind)``, without the frozen ``__init__``."""
    s0, s1, s2 = _LINK_SLOTS
    link: GraphLink = _new(GraphLink)
    s0(link, source)
    s1(link, target)
    s2(link, kind)
    return link


class _FileNodes:
    """The nodes of one file, with their logical extents (lines and offsets)."""

    def __init__(self, lf: LayerFile):
        self.lf = lf
        self.source = lf.doc.source
        self.last_line = max(lf.doc.line_count, 1)
        self.drafts: list[_Draft] = []
        self.lines: list[tuple[int, int]] = []  # (first line, last line) per node
        self.spans: list[tuple[int, int]] = []  # (start offset, end offset) per node
        self.parent: list[int] = []  # index of the parent node, -1 for the file node
        self.children: list[list[int]] = []
        self._firsts: list[int] | None = None
        self._order: list[int] = []

    def add(self, draft: _Draft, lines: tuple[int, int], span: tuple[int, int], parent: int) -> int:
        index = len(self.drafts)
        self.drafts.append(draft)
        self.lines.append(lines)
        self.spans.append(span)
        self.parent.append(parent)
        self.children.append([])
        if parent >= 0:
            self.children[parent].append(index)
        return index

    def own_source(self, index: int) -> str:
        """The node's text minus its child nodes' text, capped at SOURCE_CAP characters."""
        start, end = self.spans[index]
        src = self.source
        kids = self.children[index]
        if not kids:
            return src[start:min(end, start + SOURCE_CAP)]
        pieces: list[str] = []
        size, cursor = 0, start
        for a, b in sorted(self.spans[k] for k in kids) + [(end, end)]:
            if a > cursor:
                piece = src[cursor:min(a, cursor + SOURCE_CAP - size)]
                pieces.append(piece)
                size += len(piece)
                if size >= SOURCE_CAP:
                    break
            cursor = max(cursor, b)
        return "".join(pieces)

    def node_at(self, line: int) -> str:
        """Id of the innermost node whose extent holds ``line`` (the file node at worst)."""
        if self._firsts is None:
            self._order = sorted(range(len(self.drafts)), key=lambda k: (self.lines[k][0], -self.lines[k][1]))
            self._firsts = [self.lines[k][0] for k in self._order]
        pos = bisect.bisect_right(self._firsts, line) - 1
        k = self._order[pos] if pos >= 0 else 0
        while k > 0 and not (self.lines[k][0] <= line <= self.lines[k][1]):
            k = self.parent[k]
        return self.drafts[k][0]


def _extents(heads: Sequence[Heading], last_line: int, size: int) -> dict[int, tuple[int, int]]:
    """Logical extent of each header: up to the next header of the same or a higher level (§2.3).

    H6 entries count as level 6, so an entry ends at the next header of any level.
    Returns {line: (last line, end offset)}.
    """
    out: dict[int, tuple[int, int]] = {}
    stack: list[tuple[int, int]] = []  # (level, line)
    for h in heads:
        level, line = h.level, h.line
        while stack and stack[-1][0] >= level:
            _, ln = stack.pop()
            out[ln] = (line - 1, h.start)
        stack.append((level, line))
    for _, ln in stack:
        out[ln] = (last_line, size)
    return out


def build_graph(layer: Layer, diagnostics: list[Diagnostic] | None = None) -> LayerGraph:
    """The node-link document of the layer (see the module docstring); ``.to_dict()`` is its JSON.

    ``diagnostics`` are the findings to place on the nodes, by default the whole layer's; for a
    file given alone, what ``zonemark check`` lists for it (:func:`zonemark.layer.check.reported_diagnostics`).
    """
    with gcpause.paused():  # ~10^5 small objects, no reference cycles
        return _build_graph(layer, layer.all_diagnostics() if diagnostics is None else diagnostics)


_ID_KINDS = frozenset(("module", "nucleus", "sub_module", "topic", "subtopic"))


def _build_graph(layer: Layer, all_diagnostics: list[Diagnostic]) -> LayerGraph:
    module_by_pos = {(m.file, m.info.line): m for m in layer.modules}
    nucleus_by_pos = {(n.file, n.info.line): n for n in layer.nuclei}
    nodes: list[GraphNode] = []
    links: list[GraphLink] = []
    per_file: dict[str, _FileNodes] = {}
    id_of: dict[tuple[str, int], str] = {}
    files_with_diagnostics = {d.path for d in all_diagnostics}
    # undecodable bytes (INVALID_UTF8) must not leak into the document as lone surrogates
    clean = _valid_text if any(f.doc.surrogate_escaped for f in layer.files) else None

    for lf in layer.files:
        fn = _FileNodes(lf)
        if lf.rel in files_with_diagnostics:
            per_file[lf.rel] = fn  # kept to place each diagnostic on its node
        doc = lf.doc
        label = doc.title or lf.rel
        if not lf.merged:
            label += " (not merged: id conflict)"
        fn.add(_node(f"file:{lf.rel}", "file", label, lf.rel, doc.title_line or 1, None),
               (1, fn.last_line), (0, len(doc.source)), -1)
        if lf.merged:
            _file_tree(fn, lf.rel, module_by_pos, nucleus_by_pos, links)
        for i, draft in enumerate(fn.drafts):
            source = fn.own_source(i)
            if clean is not None:
                draft = (*draft[:2], clean(draft[2]), *draft[3:])
                source = clean(source)
            nodes.append(_new_node(draft, source))
            if draft[1] in _ID_KINDS:
                id_of[(lf.rel, draft[4])] = draft[0]
        fn.spans, fn.children = [], []  # only needed for the sources

    for e in layer.edges:
        source_id = id_of.get((e.file, e.line))
        if source_id is not None:
            links.append(_new_link(source_id, f"{e.target_kind}:{e.target}", e.kind))

    diags: list[GraphDiagnostic] = []
    for d in all_diagnostics:
        owner = per_file.get(d.path) if d.path is not None else None
        diags.append(GraphDiagnostic(d.path, d.line, d.column, d.code, d.severity.value, _valid_text(d.message),
                                     owner.node_at(d.line) if owner is not None else None))
    return LayerGraph(layer.name, str(layer.root), tuple(f.rel for f in layer.files), tuple(diags), tuple(nodes),
                      tuple(links))


def _file_tree(fn: _FileNodes, rel: str, module_by_pos: _ModuleByPos, nucleus_by_pos: _NucleusByPos,
               links: list[GraphLink]) -> None:
    """Nodes and ``contains`` links of one merged file, nested exactly as ``doc.outline()`` nests them."""
    doc = fn.lf.doc
    heads = [h for h in headings_of(doc) if not h.refused and h.level > 1]
    ext = _extents(heads, fn.last_line, len(doc.source))
    owner_of = doc.h6_owner
    anchor_of_line = {0: 0}  # header line -> index of the nearest graph node at or above it
    stack = [(1, 0)]  # (level, anchor)
    add, drafts = fn.add, fn.drafts
    for h in heads:
        line = h.line
        last, end = ext[line]
        if h.level == 6 and h.type == "log":
            parent = anchor_of_line.get(owner_of.get(line, 0), 0)
            label = h.title or h.text or "(entry)"
            if h.date and h.title:
                label = f"{h.date} {h.title}"
            entry = _node(f"entry:{rel}:{line}", "entry", label, rel, line, h.permission_level)
            add(entry, (line, last), (h.start, end), parent)
            links.append(_new_link(drafts[parent][0], entry[0], "contains"))
            continue
        while len(stack) > 1 and stack[-1][0] >= h.level:
            stack.pop()
        anchor = stack[-1][1]
        node = _container_node(h, rel, module_by_pos, nucleus_by_pos, line in doc.ignored_lines)
        if node is not None:
            links.append(_new_link(drafts[anchor][0], node[0], "contains"))
            anchor = add(node, (line, last), (h.start, end), anchor)
        stack.append((h.level, anchor))
        anchor_of_line[line] = anchor


_SURROGATE = re.compile("[\ud800-\udfff]")


def _valid_text(text: str) -> str:
    """Text with lone surrogates (bytes that were not UTF-8, kept by the parser) replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def _node(node_id: str, kind: NodeKind, label: str, rel: str, line: int, permission_level: int | None, *,
          state: State | None = None, permanent: bool = False, module_id: str | None = None) -> _Draft:
    return (node_id, kind, label, rel, line, permission_level, state, permanent, module_id)


def _container_node(h: Heading, rel: str, module_by_pos: _ModuleByPos, nucleus_by_pos: _NucleusByPos,
                    ignored: bool) -> _Draft | None:
    line = h.line
    pos = (rel, line)
    container_id = f"container:{rel}:{line}"
    name = h.name if h.name is not None else h.text
    if h.type == "module":
        lm = module_by_pos.get(pos)
        if lm is None:
            return None
        info = lm.info
        if h.keyword in ("TOPIC", "SUBTOPIC"):
            kind: NodeKind = "topic" if h.keyword == "TOPIC" else "subtopic"
            word = spelled_keyword(h.keyword, h.level)
            ident = f" {info.id}" if info.id else ""
            return _node(container_id, kind, f"{word}{ident}: {info.name}", rel, line, h.permission_level,
                         module_id=lm.module_id)
        if info.ignored or lm.module_id is None:
            return _node(container_id, "module", f"MODULE {info.id}: {info.name} (ignored duplicate)", rel,
                         line, h.permission_level, permanent=info.permanent)
        return _node(f"module:{lm.module_id}", "module", f"MODULE {lm.module_id}: {info.name}", rel, line,
                     h.permission_level, state=lm.effective_state, permanent=info.permanent,
                     module_id=lm.module_id)
    if h.type == "sub_module":
        ident = f" {h.id}" if h.id else ""
        return _node(container_id, "sub_module", f"SUB-MODULE{ident}: {name}", rel, line, h.permission_level,
                     module_id=h.id)
    if h.type == "nucleus":
        ln = nucleus_by_pos.get(pos)
        if ln is None:
            return _node(container_id, "nucleus", f"NUCLEUS {h.id}: {name} (ignored duplicate)", rel, line,
                         h.permission_level)
        return _node(f"nucleus:{ln.nucleus_id}", "nucleus", f"NUCLEUS {ln.nucleus_id}: {ln.info.name}", rel,
                     line, h.permission_level)
    if h.type == "section" and h.section == "RULES" and h.level == 2:
        label = "RULES" + (f": {h.name}" if h.name else "")
        return _node(container_id, "rules", label + (" (ignored duplicate)" if ignored else ""), rel, line,
                     h.permission_level)
    return None
