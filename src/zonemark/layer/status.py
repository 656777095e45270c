"""What ``zonemark status`` shows of a layer, as plain data (modules, states, nuclei, memories)."""

from __future__ import annotations

from ..core.diagnostics import Diagnostic, Severity
from .loader import Layer


def status_data(layer: Layer, diagnostics: list[Diagnostic] | None = None) -> dict:
    """Everything ``zonemark status`` shows, as plain data.

    ``diagnostics`` are the ones to count (default: the whole layer's); for a single file the
    CLI passes the file's own, so ``status`` counts what ``check`` lists
    (:func:`zonemark.layer.check.reported_diagnostics`).
    """
    by_pos = {(m.file, m.info.line): m for m in layer.modules}
    governed: dict[int, list[str | None]] = {}
    for e in layer.edges:
        m = by_pos.get((e.file, e.line))
        if e.kind == "governs" and m is not None:
            governed.setdefault(int(e.target), []).append(m.module_id)
    modules = []
    for m in layer.modules:
        if not m.is_module:
            continue
        info = m.info
        declared = None if info.declared_state is None else info.declared_state + (
            " - permanent" if info.permanent else "")
        modules.append({"id": m.module_id, "temporary": m.temporary, "name": info.name, "file": m.file,
                        "line": info.line, "declaredState": declared, "effectiveState": m.effective_state,
                        "stateSource": None if m.state_source is None else str(m.state_source), "permanent": info.permanent,
                        "nuclei": list(info.assigned_nuclei or ()), "ignored": info.ignored})
    nuclei = [{"id": n.nucleus_id, "name": n.info.name, "file": n.file, "line": n.info.line,
               "modules": governed.get(n.nucleus_id, [])} for n in layer.nuclei]
    memories = []
    for f in layer.merged_files:
        if f.file_type != "external_memory":
            continue
        root = f.doc.outline()
        temp = {m.info.line: m.module_id for m in layer.modules if m.file == f.rel}
        memories.append({"file": f.rel, "title": f.doc.title, "entries": _count_entries(root),
                         "topics": [_topic(c, temp) for c in root.children if c.kind == "module"]})
    diags = layer.all_diagnostics() if diagnostics is None else diagnostics
    return {
        "layer": layer.name, "root": str(layer.root), "reminder": layer.reminder,
        "files": [{"file": f.rel, "type": f.file_type, "merged": f.merged} for f in layer.files],
        "modules": modules, "nuclei": nuclei, "memories": memories,
        "diagnostics": {"errors": sum(d.severity is Severity.ERROR for d in diags),
                        "warnings": sum(d.severity is Severity.WARNING for d in diags)},
    }


def _count_entries(node) -> int:
    return len(node.entries) + sum(_count_entries(c) for c in node.children)


def _topic(node, temp) -> dict:
    keyword = node.keyword or "MODULE"
    if keyword == "SUBTOPIC":
        keyword = f"SUBTOPIC{node.level - 2}"
    return {"name": node.name, "keyword": keyword, "id": temp.get(node.line, node.id),
            "line": node.line, "entries": len(node.entries),
            "children": [_topic(c, temp) for c in node.children if c.kind == "module"]}
