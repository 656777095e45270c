"""Short Markdown descriptions of what sits under a cursor: a zone, a module, a nucleus, a code.

Any face that points at a place in a file (the language server's hover, a review page's
tooltip) calls these; each takes the facts from the layer and the catalogue, never decides
a rule itself.
"""

from __future__ import annotations

from ..core.diagnostics import CATALOGUE
from ..layer.loader import Layer, LayerModule, LayerNucleus
from ..layer.navigate import Zone, governed_by, nucleus

#: §5.2 memory zones: (name, what the user may do, what the AI may do, how zonemark lets it).
ZONE_RIGHTS = {
    1: ("Genetic Memory", "edit by hand: only the user changes it",
        "nothing: no change of any kind", "every AI write is refused"),
    2: ("Permanent Memory", "change it by an explicit command",
        "read only", "every AI write is refused; `--as user` edits"),
    3: ("Long-Term Memory", "change it, and approve or reject the AI's proposals",
        "propose a change; the user must approve it", "`zonemark propose`, then `zonemark apply --as user`"),
    4: ("Short-Term Memory", "anything; changing or deleting entries is the user's call",
        "append freely (new entries, the state registry rewritten whole, §7.3.1);"
        " changing or deleting needs the user's permission", "`zonemark append`, `zonemark state`"),
    5: ("Volatile Memory", "anything", "change it freely", "`zonemark edit`, `zonemark append`"),
}

#: §5.5 Invariant 1: what each zone may hold.
ZONE_CONTENT = {
    1: "structure (headers, declarations, anchors) and the rule bullets, which live only here",
    2: "structure (headers, declarations, anchors); no rule bullets",
    3: "structure (headers, declarations, anchors); no rule bullets",
    4: "free text, root bullets, H6 entries and the MODULE_STATE_REGISTRY; no other header",
    5: "free text, root bullets and H6 entries; no other header",
}


def zone_markdown(zone: Zone, closing: bool = False) -> str:
    """What the user and the AI may do in a zone (§5.2) and what it may hold (§5.5)."""
    name, user, ai, how = ZONE_RIGHTS.get(zone.level, ("?", "?", "?", "?"))
    tag = f"[/P{zone.level}]" if closing else f"[P{zone.level}]"
    where = (f"lines {zone.line}–{zone.close_line}" if zone.close_line is not None
             else f"from line {zone.line}, never closed (add `[/P{zone.level}]`)")
    return (f"**`{tag}` {name}** (§5.2)\n\n"
            f"- **user:** {user}\n- **AI:** {ai}\n- **zonemark:** {how}\n- **holds:** "
            f"{ZONE_CONTENT.get(zone.level, '?')} (§5.5)\n\nZone {where}.")


def code_markdown(code: str) -> str:
    """A diagnostic code's catalogue entry: severity, spec section, summary and explanation."""
    info = CATALOGUE.get(code)
    if info is None:
        return f"**{code}**"
    origin = "named by the standard" if info.origin == "spec" else "added by zonemark"
    return f"**{info.code}** ({info.severity.value}, {info.section}, {origin})\n\n{info.summary}\n\n{info.explanation}"


def module_markdown(layer: Layer, m: LayerModule) -> str:
    """Name, file, declared and effective state and nuclei of a module (§7.1, §7.3.1, §7.4.4)."""
    info = m.info
    lines = [f"**MODULE {m.module_id}: {info.name}**", "",
             f"- **file:** `{m.file}` line {info.line}" + (f", [P{info.permission_level}]"
                                                           if info.permission_level else "")]
    declared = "none" if info.declared_state is None else info.declared_state + (
        " - permanent" if info.permanent else "")
    src = m.state_source
    source = "" if src is None else "declared" if src.registry is None else f"registry of `{src.registry}`"
    effective = m.effective_state or "unknown"
    lines.append(f"- **state:** declared `{declared}`, effective **{effective}**" + (f" ({source})" if source else ""))
    if info.assigned_nuclei:
        named = []
        for nid in info.assigned_nuclei:
            n = nucleus(layer, str(nid))
            named.append(f"{nid} {n.info.name}" if n else f"{nid} (declared nowhere)")
        lines.append("- **nuclei:** " + ", ".join(named))
    else:
        lines.append("- **nuclei:** none (ungoverned, §7.4.4)")
    summary = _function_summary(layer, m.file, info.line)
    if summary:
        lines += ["", "> " + summary]
    return "\n".join(lines)


def nucleus_markdown(layer: Layer, n: LayerNucleus) -> str:
    """Name, file and governed modules of a nucleus (§7.4)."""
    modules = governed_by(layer, n.nucleus_id)
    lines = [f"**NUCLEUS {n.nucleus_id}: {n.info.name}**", "",
             f"- **file:** `{n.file}` line {n.info.line}" + (f", [P{n.info.permission_level}]"
                                                             if n.info.permission_level else ""),
             "- **governs:** " + (", ".join(f"{m.module_id} {m.info.name}" for m in modules) or "no module")]
    summary = _function_summary(layer, n.file, n.info.line)
    if summary:
        lines += ["", "> " + summary]
    return "\n".join(lines)


def unresolved_markdown(kind: str, ident: str) -> str:
    return (f"**{kind.upper()} {ident}** is declared nowhere in the layer: no edge (§7.6)."
            if kind in ("module", "nucleus") else f"**{ident}**")


def _function_summary(layer: Layer, rel: str, line: int, limit: int = 300) -> str | None:
    """The first paragraph of the container's ``### FUNCTION`` section, if it has one (§7.2)."""
    f = next((f for f in layer.files if f.rel == rel), None)
    if f is None:
        return None
    node = next((n for n in f.doc.outline().walk() if n.line == line), None)
    if node is None:
        return None
    section = next((c for c in node.children if c.section == "FUNCTION"), None)
    block = None if section is None else f.doc.heading_at(section.line)
    if block is None:
        return None
    raw = block.raw_markdown
    body = raw.split("\n", 1)[1] if "\n" in raw else ""
    paragraph: list[str] = []
    for text in body.splitlines():
        text = text.strip()
        if not text:
            if paragraph:
                break
            continue
        if text.startswith("[/P") or text.startswith("#"):
            break
        paragraph.append(text)
    summary = " ".join(paragraph)
    if len(summary) > limit:
        summary = summary[:limit - 1].rstrip() + "…"
    return summary or None
