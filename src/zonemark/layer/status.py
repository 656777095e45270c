"""What ``zonemark status`` shows of a layer, as plain data (modules, states, nuclei, memories)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core.diagnostics import Diagnostic, severity_counts
from ..core.headers import spelled_keyword
from ..core.nodes import State
from ..core.document import Document
from ..core.outline import close_to
from ..core.scanner import scan_structure
from ..core.tree import HeadingFrame
from .loader import Layer, StateSource


@dataclass(frozen=True, slots=True)
class StatusFile:
    file: str
    type: str | None
    merged: bool

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "type": self.type, "merged": self.merged}


@dataclass(frozen=True, slots=True)
class StatusModule:
    """A module with its declared and effective state (§7.3.1) and the nuclei it names (§7.4.4)."""

    id: str | None
    temporary: bool
    name: str
    file: str
    line: int
    declared_state: str | None  # 'active', 'inactive', either with ' - permanent', or None
    effective_state: State | None
    state_source: StateSource | None
    permanent: bool
    nuclei: tuple[int, ...]
    ignored: bool

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "temporary": self.temporary, "name": self.name, "file": self.file,
                "line": self.line, "declaredState": self.declared_state, "effectiveState": self.effective_state,
                "stateSource": None if self.state_source is None else str(self.state_source),
                "permanent": self.permanent, "nuclei": list(self.nuclei), "ignored": self.ignored}


@dataclass(frozen=True, slots=True)
class StatusNucleus:
    id: int
    name: str
    file: str
    line: int
    modules: tuple[str | None, ...]  # the modules it governs

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "file": self.file, "line": self.line, "modules": list(self.modules)}


@dataclass(frozen=True, slots=True)
class StatusTopic:
    """A topic of a memory file (§9) with its entry count and sub-topics."""

    name: str | None
    keyword: str  # MODULE, TOPIC, SUBTOPICn
    id: str | None
    line: int
    entries: int
    children: tuple[StatusTopic, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "keyword": self.keyword, "id": self.id, "line": self.line,
                "entries": self.entries, "children": [c.to_dict() for c in self.children]}


#: The topics and sub-topics a memory file's status lists, depth first; the rest are counted (the outline lists
#: every one): a status is a summary, and a file of 100,000 topics made an answer ten times the file (B13).
MAX_STATUS_TOPICS = 1_000


@dataclass(frozen=True, slots=True)
class StatusMemory:
    """A memory file (§9): its entry count and its first :data:`MAX_STATUS_TOPICS` topics and sub-topics."""

    file: str
    title: str | None
    entries: int
    topics: tuple[StatusTopic, ...]
    topics_left_out: int = 0  # topics and sub-topics past MAX_STATUS_TOPICS

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "title": self.title, "entries": self.entries,
                "topics": [t.to_dict() for t in self.topics], "topicsLeftOut": self.topics_left_out}


@dataclass(frozen=True, slots=True)
class LayerStatus:
    """Everything ``zonemark status`` shows; :meth:`to_dict` is its ``--json`` form."""

    layer: str
    root: str
    reminder: str | None
    files: tuple[StatusFile, ...]
    modules: tuple[StatusModule, ...]
    nuclei: tuple[StatusNucleus, ...]
    memories: tuple[StatusMemory, ...]
    errors: int
    warnings: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "layer": self.layer, "root": self.root, "reminder": self.reminder,
            "files": [f.to_dict() for f in self.files],
            "modules": [m.to_dict() for m in self.modules], "nuclei": [n.to_dict() for n in self.nuclei],
            "memories": [m.to_dict() for m in self.memories],
            "diagnostics": {"errors": self.errors, "warnings": self.warnings},
        }


def layer_status(layer: Layer, diagnostics: list[Diagnostic] | None = None) -> LayerStatus:
    """Everything ``zonemark status`` shows, as data.

    ``diagnostics`` are the ones to count (default: the whole layer's); for a single file the
    CLI passes the file's own, so ``status`` counts what ``check`` lists
    (:func:`zonemark.layer.check.reported_diagnostics`).
    """
    governed: dict[int, list[str | None]] = {}
    for e in layer.edges:
        m = layer.module_at(e.file, e.line) if e.kind == "governs" else None
        if m is not None:
            governed.setdefault(int(e.target), []).append(m.module_id)
    modules = []
    for m in layer.modules:
        if not m.is_module:
            continue
        info = m.info
        declared = None if info.declared_state is None else info.declared_state + (
            " - permanent" if info.permanent else "")
        modules.append(StatusModule(m.module_id, m.temporary, info.name, m.file, info.line, declared,
                                    m.effective_state, m.state_source, info.permanent,
                                    tuple(info.assigned_nuclei or ()), info.ignored))
    nuclei = tuple(StatusNucleus(n.nucleus_id, n.info.name, n.file, n.info.line,
                                 tuple(governed.get(n.nucleus_id, []))) for n in layer.nuclei)
    memories = []
    for f in layer.merged_files:
        if f.file_type == "external_memory":
            memories.append(_memory(layer, f.rel, f.doc))
    errors, warnings = layer.severity_counts() if diagnostics is None else severity_counts(diagnostics)
    return LayerStatus(layer.name, str(layer.root), layer.reminder,
                       tuple(StatusFile(f.rel, f.file_type, f.merged) for f in layer.files), tuple(modules), nuclei,
                       tuple(memories), errors, warnings)


def status_data(layer: Layer, diagnostics: list[Diagnostic] | None = None) -> dict[str, Any]:
    """The ``status --json`` form of :func:`layer_status` (what the MCP server returns)."""
    return layer_status(layer, diagnostics).to_dict()


class _Open:
    """A header open while :class:`_TopicScan` reads a file: a topic it lists (``frame``), or one it only counts
    (no frame), or any other header (``chain`` False: no topic under it is listed, as the outline's topics are the
    MODULE/TOPIC/SUBTOPIC headers under the file or under another of them)."""

    __slots__ = ("level", "chain", "frame", "entries", "children")

    def __init__(self, level: int, chain: bool, frame: HeadingFrame | None = None) -> None:
        self.level, self.chain, self.frame = level, chain, frame
        self.entries = 0
        self.children: list[_Open] = []


class _TopicScan:
    """The topics of a memory file a status lists, read from a scan of its headers (``on_header``): the first
    :data:`MAX_STATUS_TOPICS` topics and sub-topics depth first, with their own entries (§7.1.3, each entry's
    owner is ``Document.h6_owner``); the others and every entry only counted.  No outline is held: one of a file of
    100,000 headers was ten times the file (B17)."""

    def __init__(self, owners: Mapping[int, int]) -> None:
        self.root = _Open(1, True)
        self.stack = [self.root]
        self.listed: dict[int, _Open] = {}
        self.owners = owners
        self.topics = 0
        self.entries = 0

    def header(self, frame: HeadingFrame) -> None:
        level, kind = frame.level, frame.header.kind
        if frame.refused or level == 1:  # a refused header declares nothing (§5.5); the title is the file
            return
        if level == 6 and kind == "log":
            self.entries += 1
            owner = self.listed.get(self.owners.get(frame.line, 0))
            if owner is not None:
                owner.entries += 1
            return
        close_to(self.stack, level)
        parent = self.stack[-1]
        chain = parent.chain and kind == "module"
        listed = chain and self.topics < MAX_STATUS_TOPICS
        self.topics += chain
        node = _Open(level, chain, frame if listed else None)
        if listed:
            parent.children.append(node)
            self.listed[frame.line] = node
        self.stack.append(node)


def _memory(layer: Layer, rel: str, doc: Document) -> StatusMemory:
    """A memory file's status: its entries, and its topics read in one scan of its headers."""
    scan = _TopicScan(doc.h6_owner)
    scan_structure(doc.source, scan.header)

    def topic(node: _Open) -> StatusTopic:
        frame = node.frame
        assert frame is not None
        h = frame.header
        m = layer.module_at(rel, frame.line)
        return StatusTopic(frame.name if frame.name is not None else frame.text,
                           spelled_keyword(h.keyword, frame.level) or "MODULE",
                           h.id if m is None else m.module_id,  # ~Tn for an id-less topic (§7.1.1)
                           frame.line, node.entries, tuple(topic(c) for c in node.children))

    topics = tuple(topic(c) for c in scan.root.children)
    return StatusMemory(rel, doc.title, scan.entries, topics, scan.topics - len(scan.listed))
