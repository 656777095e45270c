"""What ``zonemark status`` shows of a layer, as plain data (modules, states, nuclei, memories)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.diagnostics import Diagnostic, Severity
from ..core.headers import spelled_keyword
from ..core.nodes import State
from ..core.outline import OutlineNode
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
        if f.file_type != "external_memory":
            continue
        root = f.doc.outline()
        budget = [MAX_STATUS_TOPICS]
        topics = _topics(root, layer, f.rel, budget)
        memories.append(StatusMemory(f.rel, f.doc.title, _count_entries(root), topics,
                                     _count_topics(root) - (MAX_STATUS_TOPICS - budget[0])))
    diags = layer.all_diagnostics() if diagnostics is None else diagnostics
    return LayerStatus(layer.name, str(layer.root), layer.reminder,
                       tuple(StatusFile(f.rel, f.file_type, f.merged) for f in layer.files), tuple(modules), nuclei,
                       tuple(memories), sum(d.severity is Severity.ERROR for d in diags),
                       sum(d.severity is Severity.WARNING for d in diags))


def status_data(layer: Layer, diagnostics: list[Diagnostic] | None = None) -> dict[str, Any]:
    """The ``status --json`` form of :func:`layer_status` (what the MCP server returns)."""
    return layer_status(layer, diagnostics).to_dict()


def _count_entries(node: OutlineNode) -> int:
    return len(node.entries) + sum(_count_entries(c) for c in node.children)


def _count_topics(node: OutlineNode) -> int:
    return sum(1 + _count_topics(c) for c in node.children if c.kind == "module")


def _topics(node: OutlineNode, layer: Layer, rel: str, budget: list[int]) -> tuple[StatusTopic, ...]:
    """The topics under ``node``, depth first, while ``budget[0]`` lasts (each one listed spends one)."""
    out = []
    for c in node.children:
        if c.kind != "module":
            continue
        if budget[0] <= 0:
            break
        budget[0] -= 1
        keyword = spelled_keyword(c.keyword, c.level) or "MODULE"
        m = layer.module_at(rel, c.line)
        topic_id = c.id if m is None else m.module_id  # ~Tn for an id-less topic (§7.1.1)
        out.append(StatusTopic(c.name, keyword, topic_id, c.line, len(c.entries), _topics(c, layer, rel, budget)))
    return tuple(out)
