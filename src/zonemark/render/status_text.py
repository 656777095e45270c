"""The text table of ``zonemark status`` (from :func:`zonemark.layer.status.status_data`)."""

from __future__ import annotations

from .formats import counted


def _table(rows: list[list[str]], header: list[str]) -> list[str]:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    fmt = "  ".join(f"{{:{w}}}" for w in widths)
    return [fmt.format(*header).rstrip()] + [fmt.format(*map(str, r)).rstrip() for r in rows]


def _entries(n: int) -> str:
    return f"{n} entr{'y' if n == 1 else 'ies'}"


def render_status(data: dict, path: str) -> str:
    out = [f"Layer '{data['layer']}' ({counted(len(data['files']), 'file')}; reminder: {data['reminder'] or 'none'})"]
    unmerged = [f["file"] for f in data["files"] if not f["merged"]]
    if unmerged:
        out.append("Not merged (id conflict): " + ", ".join(unmerged))
    out.append("")
    out.append(f"MODULES ({len(data['modules'])})")
    if data["modules"]:
        rows = []
        for m in data["modules"]:
            eff = m["effectiveState"] or "unknown"
            if m["stateSource"] and m["stateSource"].startswith("registry:"):
                eff += " (registry)"
            ident = m["id"] or "-"  # an ignored second declaration of an id has none of its own
            rows.append([ident + (" (ignored)" if m["ignored"] else ""), m["name"], m["file"],
                         m["declaredState"] or "-", eff, ", ".join(map(str, m["nuclei"])) or "-"])
        out += ["  " + r for r in _table(rows, ["ID", "NAME", "FILE", "DECLARED", "EFFECTIVE", "NUCLEI"])]
    out.append("")
    out.append(f"NUCLEI ({len(data['nuclei'])})")
    if data["nuclei"]:
        rows = [[n["id"], n["name"], n["file"], ", ".join(n["modules"]) or "-"] for n in data["nuclei"]]
        out += ["  " + r for r in _table(rows, ["ID", "NAME", "FILE", "GOVERNS"])]
    out.append("")
    out.append(f"MEMORIES ({len(data['memories'])})")
    for mem in data["memories"]:
        out.append(f"  {mem['file']}  \"{mem['title']}\"  {_entries(mem['entries'])}")

        def walk(topics, depth):
            for t in topics:
                out.append(f"  {'  ' * depth}{t['keyword']} {t['id']}: {t['name']}  ({_entries(t['entries'])})")
                walk(t["children"], depth + 1)
        walk(mem["topics"], 1)
    out.append("")
    d = data["diagnostics"]
    out.append(f"Diagnostics: {d['errors']} error{'s' if d['errors'] != 1 else ''}, "
               f"{d['warnings']} warning{'s' if d['warnings'] != 1 else ''} (zonemark check {path} lists them)")
    return "\n".join(out) + "\n"
