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
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Literal, NamedTuple, get_args

from ..core import gcpause
from ..core.diagnostics import Diagnostic
from ..core.document import Document
from ..core.headers import spelled_keyword
from ..core.nodes import Heading, State
from ..core.outline import close_to
from ..core.outline import headings as headings_of
from ..core.scanner import scan_structure
from ..core.tree import HeadingFrame
from .loader import Layer, LayerFile, LayerModule, LayerNucleus

SOURCE_CAP = 4000
#: The nodes a graph lists besides its files (B18): the containers first, then the entries, each in
#: layer order (:class:`_Budget`); the rest are counted (``nodesLeftOut``).  A graph is a picture: 10,000
#: nodes is a page a browser still lays out, and a file of 200,000 headers made a document of 40 MB.
MAX_GRAPH_NODES = 10_000
#: The findings a graph places on its nodes (B18): the first ones; the rest are counted
#: (``diagnosticsLeftOut``), and ``zonemark check`` lists them all.
MAX_GRAPH_DIAGNOSTICS = 1_000
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
    nodes_left_out: int = 0  # nodes past MAX_GRAPH_NODES, counted, not listed (B18)
    diagnostics_left_out: int = 0  # findings past MAX_GRAPH_DIAGNOSTICS, counted, not listed (B18)

    def meta(self) -> dict[str, Any]:
        """The ``graph`` key of the document (``nodesLeftOut``, ``diagnosticsLeftOut`` only when some are, B18)."""
        out: dict[str, Any] = {"name": self.name, "root": self.root, "files": list(self.files),
                               "diagnostics": [d.to_dict() for d in self.diagnostics]}
        self._left_out(out)
        return out

    def _left_out(self, meta: dict[str, Any]) -> None:
        if self.nodes_left_out:
            meta["nodesLeftOut"] = self.nodes_left_out
        if self.diagnostics_left_out:
            meta["diagnosticsLeftOut"] = self.diagnostics_left_out

    def left_out_note(self) -> str:
        """What the document leaves out, for a reader (B18); the empty string when it is whole."""
        return " ".join(note for note in (self.nodes_note(), self.diagnostics_note()) if note)

    def nodes_note(self) -> str:
        if not self.nodes_left_out:
            return ""
        listed = len(self.nodes) - len(self.files)
        return (f"The graph shows {listed:,} of its {listed + self.nodes_left_out:,} nodes besides the files "
                f"(MAX_GRAPH_NODES = {MAX_GRAPH_NODES:,}); zonemark outline lists them all.")

    def diagnostics_note(self) -> str:
        if not self.diagnostics_left_out:
            return ""
        listed = len(self.diagnostics)
        return (f"It places {listed:,} of {listed + self.diagnostics_left_out:,} diagnostics on its nodes "
                f"(MAX_GRAPH_DIAGNOSTICS = {MAX_GRAPH_DIAGNOSTICS:,}); zonemark check lists them all.")

    def shallow(self) -> dict[str, Any]:
        """The document's top level with its nodes, links and diagnostics still typed: a writer that
        encodes them one at a time (``render.graph_text.to_json``) never holds all their dicts."""
        graph: dict[str, Any] = {"name": self.name, "root": self.root, "files": self.files,
                                 "diagnostics": self.diagnostics}
        self._left_out(graph)
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


#: ``Layer.module_at``: the module declared on a line of a file, found by bisection (B12), or None
_ModuleAt = Callable[[str, int], "LayerModule | None"]
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

    def keep_entries(self, room: int) -> int:
        """Keep the file's first ``room`` entry nodes and drop the others (B18); returns how many it kept.
        An entry is a leaf, so every kept node's parent is kept."""
        drafts = self.drafts
        kept: list[int] = []
        new = [-1] * len(drafts)
        entries = 0
        for i, draft in enumerate(drafts):
            if draft[1] == "entry":
                if entries >= room:
                    continue
                entries += 1
            new[i] = len(kept)
            kept.append(i)
        if len(kept) < len(drafts):
            parent, children = self.parent, self.children
            self.drafts = [drafts[i] for i in kept]
            self.lines = [self.lines[i] for i in kept]
            self.spans = [self.spans[i] for i in kept]
            self.parent = [new[parent[i]] if parent[i] >= 0 else -1 for i in kept]
            self.children = [[new[k] for k in children[i] if new[k] >= 0] for i in kept]
        return entries

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


class _Budget:
    """The nodes a graph lists (B18: ``MAX_GRAPH_NODES``), taken as the headers are read.

    The structure comes first: when the layer holds more nodes than the limit, the containers
    (modules, nuclei, topics, ...) are listed first, in layer order, and the entries share what is
    left, in layer order; a node whose parent is left out is left out too. The walk takes the first
    ``limit`` containers and the first ``limit`` entries; :meth:`entries_listed` says how many of
    those entries the graph keeps once every container is known. ``met`` counts every node but the files'.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.containers = self.entries = self.met = 0

    def take_container(self, parent_listed: bool) -> bool:
        self.met += 1
        if parent_listed and self.containers < self.limit:
            self.containers += 1
            return True
        return False

    def take_entry(self, parent_listed: bool) -> bool:
        self.met += 1
        if parent_listed and self.entries < self.limit:
            self.entries += 1
            return True
        return False

    def entries_listed(self) -> int:
        return min(self.entries, self.limit - self.containers)


class _Head(NamedTuple):
    """What the graph reads of one header, from the block tree or from a scan of the headers (B18)."""

    line: int
    level: int
    start: int
    type: str
    refused: bool
    permission_level: int | None
    text: str
    name: str | None
    title: str | None
    date: str | None
    keyword: str | None
    id: str | None
    section: str | None


def _head_of_block(h: Heading) -> _Head:
    return _Head(h.line, h.level, h.start, h.type, h.refused, h.permission_level, h.text, h.name, h.title, h.date,
                 h.keyword, h.id, h.section)


def _head_of_frame(f: HeadingFrame) -> _Head:
    h = f.header
    return _Head(f.line, f.level, f.start, h.kind, f.refused, f.plevel, f.text, f.name, f.title, h.date, h.keyword,
                 h.id, h.section)


def _walk_headers(doc: Document, on_head: Callable[[_Head], None]) -> None:
    """Every header after the title, in document order: from the tree when it is built, else from one
    scan of the headers that builds no block (B18, as the outline and the status read them)."""
    if doc.tree is None:
        scan_structure(doc.source, lambda frame: on_head(_head_of_frame(frame)))
    else:
        for h in headings_of(doc):
            on_head(_head_of_block(h))


def _is_entry(h: _Head) -> bool:
    return h.level == 6 and h.type == "log"


def build_graph(layer: Layer, diagnostics: list[Diagnostic] | None = None, *,
                max_nodes: int = MAX_GRAPH_NODES) -> LayerGraph:
    """The node-link document of the layer (see the module docstring); ``.to_dict()`` is its JSON.

    ``diagnostics`` are the findings to place on the nodes, by default the whole layer's; for a
    file given alone, what ``zonemark check`` lists for it (:func:`zonemark.layer.check.reported_diagnostics`).
    Every file node is listed, and at most ``max_nodes`` others, the structure first (:class:`_Budget`);
    ``nodes_left_out`` counts the rest (B18).
    """
    with gcpause.paused():  # ~10^4 small objects, no reference cycles
        return _build_graph(layer, layer.all_diagnostics() if diagnostics is None else diagnostics, max_nodes)


_ID_KINDS = frozenset(("module", "nucleus", "sub_module", "topic", "subtopic"))


def _build_graph(layer: Layer, all_diagnostics: list[Diagnostic], max_nodes: int) -> LayerGraph:
    module_at = layer.module_at  # no map of every module (B18): 100,000 topics held 9x the file in it
    nucleus_by_pos = {(n.file, n.info.line): n for n in layer.nuclei}
    budget = _Budget(max_nodes)
    nodes: list[GraphNode] = []
    links: list[GraphLink] = []
    per_file: dict[str, _FileNodes] = {}
    id_of: dict[tuple[str, int], str] = {}
    files_with_diagnostics = {d.path for d in all_diagnostics}
    # undecodable bytes (INVALID_UTF8) must not leak into the document as lone surrogates
    clean = _valid_text if any(f.doc.surrogate_escaped for f in layer.files) else None

    walked: list[_FileNodes] = []
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
            tree = _FileTree(fn, lf.rel, module_at, nucleus_by_pos, budget)
            _walk_headers(doc, tree.head)
            tree.finish()
        walked.append(fn)

    room = budget.entries_listed()
    for fn in walked:
        room -= fn.keep_entries(room)
        rel, drafts, parent = fn.lf.rel, fn.drafts, fn.parent
        for i, draft in enumerate(drafts):
            source = fn.own_source(i)
            if clean is not None:
                draft = (*draft[:2], clean(draft[2]), *draft[3:])
                source = clean(source)
            nodes.append(_new_node(draft, source))
            if i:
                links.append(_new_link(drafts[parent[i]][0], draft[0], "contains"))
            if draft[1] in _ID_KINDS:
                id_of[(rel, draft[4])] = draft[0]
        fn.spans, fn.children = [], []  # only needed for the sources
    del walked

    left_out = budget.met - (len(nodes) - len(layer.files))
    listed = {node.id for node in nodes} if left_out else None
    for e in layer.edges:
        source_id = id_of.get((e.file, e.line))
        target_id = f"{e.target_kind}:{e.target}"
        if source_id is not None and (listed is None or target_id in listed):
            links.append(_new_link(source_id, target_id, e.kind))

    diags: list[GraphDiagnostic] = []
    for d in all_diagnostics[:MAX_GRAPH_DIAGNOSTICS]:
        owner = per_file.get(d.path) if d.path is not None else None
        diags.append(GraphDiagnostic(d.path, d.line, d.column, d.code, d.severity.value, _valid_text(d.message),
                                     owner.node_at(d.line) if owner is not None else None))
    return LayerGraph(layer.name, str(layer.root), tuple(f.rel for f in layer.files), tuple(diags), tuple(nodes),
                      tuple(links), nodes_left_out=left_out,
                      diagnostics_left_out=max(0, len(all_diagnostics) - MAX_GRAPH_DIAGNOSTICS))


class _Nest(NamedTuple):
    """An open header while a file's headers are read: its level, and the graph node at or above it (-1: left out)."""

    level: int
    anchor: int


class _FileTree:
    """Nodes and ``contains`` links of one merged file, nested exactly as ``doc.outline()`` nests them,
    made as its headers are read in document order (:meth:`head`), with their logical extents (§2.3):
    up to the next header of the same or a higher level (H6 entries count as level 6, so an entry ends
    at the next header of any level). A node the budget leaves out (B18) is not made, and neither is
    any node under it; only the open headers are held, at most one per level."""

    def __init__(self, fn: _FileNodes, rel: str, module_at: _ModuleAt, nucleus_by_pos: _NucleusByPos,
                 budget: _Budget) -> None:
        self.fn, self.rel, self.budget = fn, rel, budget
        self.module_at, self.nucleus_by_pos = module_at, nucleus_by_pos
        doc = fn.lf.doc
        self.owner_of, self.ignored = doc.h6_owner, doc.ignored_lines
        # header line -> index of the nearest graph node at or above it; a header under a node left out is not
        # kept (the headers after the first container left out, ``cut``, would fill it for nothing)
        self.anchor_of_line = {0: 0}
        self.cut: int | None = None
        self.stack = [_Nest(1, 0)]
        self.open: list[tuple[int, int]] = []  # (level, line) of the headers whose extent is still open
        self.placed: dict[int, int] = {}  # header line -> index of its node, while its extent is open

    def _close(self, line: int, last: int, end: int) -> None:
        index = self.placed.pop(line, None)
        if index is not None:
            fn = self.fn
            fn.lines[index] = (line, last)
            fn.spans[index] = (fn.spans[index][0], end)

    def head(self, h: _Head) -> None:
        if h.refused or h.level <= 1:
            return
        line, level, fn = h.line, h.level, self.fn
        while self.open and self.open[-1][0] >= level:
            self._close(self.open.pop()[1], line - 1, h.start)
        self.open.append((level, line))
        if _is_entry(h):
            owner = self.owner_of.get(line, 0)
            parent = self.anchor_of_line.get(owner, -1 if self.cut is not None and owner >= self.cut else 0)
            if not self.budget.take_entry(parent >= 0):
                return
            label = h.title or h.text or "(entry)"
            if h.date and h.title:
                label = f"{h.date} {h.title}"
            entry = _node(f"entry:{self.rel}:{line}", "entry", label, self.rel, line, h.permission_level)
            self.placed[line] = fn.add(entry, (line, line), (h.start, h.start), parent)
            return
        stack = self.stack
        close_to(stack, level)  # the outline's own nesting rule (§7.1.3)
        anchor = stack[-1].anchor
        if _makes_node(h, self.rel, self.module_at):
            if not self.budget.take_container(anchor >= 0):
                anchor = -1
            else:
                node = _container_node(h, self.rel, self.module_at, self.nucleus_by_pos, line in self.ignored)
                anchor = fn.add(node, (line, line), (h.start, h.start), anchor)
                self.placed[line] = anchor
        stack.append(_Nest(level, anchor))
        if anchor >= 0:
            self.anchor_of_line[line] = anchor
        elif self.cut is None:
            self.cut = line

    def finish(self) -> None:
        fn = self.fn
        for _, line in self.open:
            self._close(line, fn.last_line, len(fn.source))


_SURROGATE = re.compile("[\ud800-\udfff]")


def _valid_text(text: str) -> str:
    """Text with lone surrogates (bytes that were not UTF-8, kept by the parser) replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def _node(node_id: str, kind: NodeKind, label: str, rel: str, line: int, permission_level: int | None, *,
          state: State | None = None, permanent: bool = False, module_id: str | None = None) -> _Draft:
    return (node_id, kind, label, rel, line, permission_level, state, permanent, module_id)


def _makes_node(h: _Head, rel: str, module_at: _ModuleAt) -> bool:
    """Whether a header that is not an entry is a node of the graph (:func:`_container_node`'s kinds)."""
    if h.type == "module":
        return module_at(rel, h.line) is not None
    return h.type in ("sub_module", "nucleus") or (h.type == "section" and h.section == "RULES" and h.level == 2)


def _container_node(h: _Head, rel: str, module_at: _ModuleAt, nucleus_by_pos: _NucleusByPos,
                    ignored: bool) -> _Draft:
    """The node of a header :func:`_makes_node` accepts."""
    line = h.line
    pos = (rel, line)
    container_id = f"container:{rel}:{line}"
    name = h.name if h.name is not None else h.text
    if h.type == "module":
        lm = module_at(rel, line)
        assert lm is not None, "a module header _makes_node accepts"
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
    raise ValueError(f"line {line}: a {h.type} header is no node of the graph")
