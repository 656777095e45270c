"""The text table of ``zonemark status`` (from :func:`zonemark.layer.status.layer_status`)."""

from __future__ import annotations

from ..layer.status import LayerStatus, StatusTopic
from .formats import counted


def _table(rows: list[list[str]], header: list[str]) -> list[str]:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    fmt = "  ".join(f"{{:{w}}}" for w in widths)
    return [fmt.format(*header).rstrip()] + [fmt.format(*map(str, r)).rstrip() for r in rows]


def _entries(n: int) -> str:
    return f"{n} entr{'y' if n == 1 else 'ies'}"


def render_status(status: LayerStatus, path: str) -> str:
    """The text of ``zonemark status`` for ``path`` (§7.3.1 states, §7.4.4 nuclei, §9 memories)."""
    out = [f"Layer '{status.layer}' ({counted(len(status.files), 'file')}; reminder: {status.reminder or 'none'})"]
    unmerged = [f.file for f in status.files if not f.merged]
    if unmerged:
        out.append("Not merged (id conflict): " + ", ".join(unmerged))
    out.append("")
    out.append(f"MODULES ({len(status.modules)})")
    if status.modules:
        rows = []
        for m in status.modules:
            eff: str = m.effective_state or "unknown"
            if m.state_source is not None and not m.state_source.declared:
                eff += " (registry)"
            ident = m.id or "-"  # an ignored second declaration of an id has none of its own
            rows.append([ident + (" (ignored)" if m.ignored else ""), m.name, m.file,
                         m.declared_state or "-", eff, ", ".join(map(str, m.nuclei)) or "-"])
        out += ["  " + r for r in _table(rows, ["ID", "NAME", "FILE", "DECLARED", "EFFECTIVE", "NUCLEI"])]
    out.append("")
    out.append(f"NUCLEI ({len(status.nuclei)})")
    if status.nuclei:
        rows = [[str(n.id), n.name, n.file, ", ".join(map(str, n.modules)) or "-"] for n in status.nuclei]
        out += ["  " + r for r in _table(rows, ["ID", "NAME", "FILE", "GOVERNS"])]
    out.append("")
    out.append(f"MEMORIES ({len(status.memories)})")
    for mem in status.memories:
        out.append(f"  {mem.file}  \"{mem.title}\"  {_entries(mem.entries)}")

        def walk(topics: tuple[StatusTopic, ...], depth: int) -> None:
            for t in topics:
                out.append(f"  {'  ' * depth}{t.keyword} {t.id}: {t.name}  ({_entries(t.entries)})")
                walk(t.children, depth + 1)
        walk(mem.topics, 1)
        if mem.topics_left_out:
            out.append(f"    … and {counted(mem.topics_left_out, 'more topic')} (zonemark outline lists them all)")
    out.append("")
    errors, warnings = status.errors, status.warnings
    out.append(f"Diagnostics: {errors} error{'s' if errors != 1 else ''}, "
               f"{warnings} warning{'s' if warnings != 1 else ''} (zonemark check {path} lists them)")
    return "\n".join(out) + "\n"
