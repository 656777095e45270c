"""What is at a place in a file, and where an id is declared and named across the layer.

The parser already decided which lines are declarations, ``[NUCLEI: ...]`` tags,
CONNECTIONS bullets and registry entries (§7.1, §7.3.1, §7.4.4, §7.6); this module only
locates the ids on those lines, so that any face (an editor, a review page) can answer
"what is under the cursor", "where is it declared" and "who names it" the same way.

An :class:`Occurrence` is one id on one line:

    kind      role         where
    module    declaration  ``## MODULE 042: NAME``       (the id)
    module    connection   ``* MODULE 042``              (CONNECTIONS, §7.6)
    module    registry     ``* ACTIVE: 042, 043``        (each id, §7.3.1)
    nucleus   declaration  ``## NUCLEUS 1: NAME``        (the id)
    nucleus   nuclei_tag   ``[NUCLEI: 1, 3]``            (each id, §7.4.4)
    nucleus   connection   ``* NUCLEUS 1``               (CONNECTIONS, §7.6)

Permission zones (§5.1) are listed by :func:`zones`; ids are compared as written
(nucleus ids as integers, so ``01`` names nucleus 1).
"""

from __future__ import annotations

import bisect
import re
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..core.document import Document
from ..core.nodes import Connection
from ..core.outline import headings
from .loader import Layer, LayerFile, LayerModule, LayerNucleus
from .spans import SourceLines, Span, source_lines

_CLOSING_TAG = re.compile(r"[ \t]*\[/P(\d+)\][ \t]*\r?")
_CONNECTION_TARGET = re.compile(r"(MODULE|NUCLEUS)[ \t]+(\S+)")
_NUCLEI_OPEN = "[NUCLEI:"


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One id on one line of a file (see the module docstring for kinds and roles)."""

    kind: str  # 'module' | 'nucleus'
    ident: str  # as written; nucleus ids normalised to str(int)
    role: str  # 'declaration' | 'connection' | 'registry' | 'nuclei_tag'
    span: Span


@dataclass(frozen=True, slots=True)
class Zone:
    """A permission block (§5.1): its level, opening line, closing line (None: never closed) and last line."""

    level: int
    line: int
    close_line: int | None
    end_line: int


@dataclass(frozen=True, slots=True)
class ZoneTag:
    """The ``[Pn]`` or ``[/Pn]`` tag of a zone, under a cursor."""

    zone: Zone
    closing: bool
    span: Span


# -- one document ------------------------------------------------------------------------

_occurrences_cache: "weakref.WeakKeyDictionary[Document, tuple[str, tuple[Occurrence, ...]]]" = (
    weakref.WeakKeyDictionary())
_zones_cache: "weakref.WeakKeyDictionary[Document, tuple[Zone, ...]]" = weakref.WeakKeyDictionary()
#: Records one id found on a line: (kind, ident, role, line, start, end), offsets 0-based.
_Add = Callable[[str, str, str, int, int, int], None]


def occurrences(doc: Document, rel: str = "") -> tuple[Occurrence, ...]:
    """Every module and nucleus id the parser recognised in ``doc``, in line order."""
    cached = _occurrences_cache.get(doc)
    if cached is not None and cached[0] == rel:
        return cached[1]
    lines = source_lines(doc)
    out: list[Occurrence] = []

    def add(kind: str, ident: str, role: str, line: int, start: int, end: int) -> None:
        out.append(Occurrence(kind, ident, role, Span(rel, line, start + 1, end + 1)))

    for m in doc.modules:
        if m.type == "module" and m.keyword is None and m.id is not None:
            found = _declared_id(lines.line(m.line), m.id)
            if found:
                add("module", m.id, "declaration", m.line, *found)
        if m.assigned_nuclei is not None:
            for ln in (m.line, m.line + 1):
                spans = _nuclei_ids(lines.line(ln))
                if spans:
                    for ident, start, end in spans:
                        add("nucleus", ident, "nuclei_tag", ln, start, end)
                    break
        _connections(m.connections, lines, add)
    for n in doc.nuclei:
        found = _declared_id(lines.line(n.line), str(n.nucleus_id), numeric=True)
        if found:
            add("nucleus", str(n.nucleus_id), "declaration", n.line, *found)
        _connections(n.connections, lines, add)
    if doc.registry is not None:
        seen_lines = sorted({ln for _, _, ln in doc.registry.entry_lines})
        ids = {mid for mid, _, _ in doc.registry.entry_lines}
        for ln in seen_lines:
            for ident, start, end in _registry_ids(lines.line(ln)):
                if ident in ids:
                    add("module", ident, "registry", ln, start, end)
    out.sort(key=lambda o: (o.span.line, o.span.start))
    result = tuple(out)
    _occurrences_cache[doc] = (rel, result)
    return result


def _declared_id(line: str, ident: str, numeric: bool = False) -> tuple[int, int] | None:
    """0-based [start, end) of ``ident`` as declared on a header line (``## KEYWORD <id>:``)."""
    pattern = r"\d+" if numeric else re.escape(ident)
    for m in re.finditer(rf"[ \t]({pattern})[ \t]*:", line):
        if not numeric or int(m.group(1)) == int(ident):
            return m.start(1), m.end(1)
    return None


def _nuclei_ids(line: str) -> list[tuple[str, int, int]]:
    """The integer ids of a ``[NUCLEI: ...]`` tag on ``line``: (id, start, end), 0-based."""
    at = line.find(_NUCLEI_OPEN)
    if at == -1:
        return []
    close = line.find("]", at)
    inner_start = at + len(_NUCLEI_OPEN)
    inner_end = close if close != -1 else len(line)
    return [(str(int(m.group())), m.start(), m.end())
            for m in re.compile(r"\d+").finditer(line, inner_start, inner_end)]


def _registry_ids(line: str) -> list[tuple[str, int, int]]:
    """The ids of a ``* ACTIVE: a, b`` line: (id, start, end), 0-based."""
    colon = line.find(":")
    if colon == -1:
        return []
    return [(m.group(), m.start(), m.end()) for m in re.compile(r"[^\s,]+").finditer(line, colon + 1)]


def _connections(connections: Iterable[Connection], lines: SourceLines, add: _Add) -> None:
    for c in connections:
        text = lines.line(c.line)
        m = _CONNECTION_TARGET.search(text)
        if m:
            ident = str(int(c.target)) if c.kind == "nucleus" and c.target.isdigit() else c.target
            add(c.kind, ident, "connection", c.line, m.start(2), m.end(2))


def zones(doc: Document) -> tuple[Zone, ...]:
    """The permission blocks of ``doc`` (§5.1), in order, with their closing lines."""
    cached = _zones_cache.get(doc)
    if cached is not None:
        return cached
    lines = source_lines(doc)
    out = []
    for b in doc.blocks:
        if b.type != "permission_block":
            continue
        assert b.permission_level is not None  # a permission block always has its level (core/tree.py)
        last = b.end_line
        while last > b.line and not lines.line(last).strip():
            last -= 1
        closing = _CLOSING_TAG.fullmatch(lines.line(last)) if last > b.line else None
        out.append(Zone(b.permission_level, b.line, last if closing else None, last))
    result = tuple(out)
    _zones_cache[doc] = result
    return result


def zone_at(doc: Document, line: int) -> Zone | None:
    """The permission block holding ``line`` (its tags included), or None."""
    zs = zones(doc)
    i = bisect.bisect_right([z.line for z in zs], line) - 1
    if i >= 0 and line <= zs[i].end_line:
        return zs[i]
    return None


def zone_tag_at(doc: Document, rel: str, line: int, column: int) -> ZoneTag | None:
    """The structural ``[Pn]``/``[/Pn]`` tag under (``line``, ``column``), or None."""
    z = zone_at(doc, line)
    if z is None or line not in (z.line, z.close_line):
        return None
    text = source_lines(doc).line(line)
    closing = line == z.close_line and line != z.line
    m = re.compile(r"\[/?P\d+\]").search(text)
    if m is None:
        return None
    span = Span(rel, line, m.start() + 1, m.end() + 1)
    return ZoneTag(z, closing, span) if span.contains(line, column) else None


def occurrence_at(doc: Document, rel: str, line: int, column: int) -> Occurrence | None:
    """The id under (``line``, ``column``): an exact hit, else the declaration of the header on that line."""
    on_line = [o for o in occurrences(doc, rel) if o.span.line == line]
    for o in on_line:
        if o.span.contains(line, column):
            return o
    for o in on_line:
        if o.role == "declaration":
            return o
    return None


# -- across the layer --------------------------------------------------------------------

def layer_occurrences(layer: Layer, kind: str, ident: str) -> list[Occurrence]:
    """Every occurrence of one id in every file of the layer, in layer order."""
    ident = _normal(kind, ident)
    return [o for f in layer.files for o in occurrences(f.doc, f.rel) if o.kind == kind and o.ident == ident]


def definitions(layer: Layer, kind: str, ident: str) -> list[Occurrence]:
    """Where an id is declared: the merged declaration first, then any in files an id conflict keeps out (§7.1.1)."""
    merged = {f.rel for f in layer.files if f.merged}
    found = [o for o in layer_occurrences(layer, kind, ident) if o.role == "declaration"]
    return sorted(found, key=lambda o: o.span.rel not in merged)


def references(layer: Layer, kind: str, ident: str, include_declaration: bool = False) -> list[Occurrence]:
    """Every place that names an id across the layer (CONNECTIONS, registry entries, ``[NUCLEI: ...]``)."""
    return [o for o in layer_occurrences(layer, kind, ident) if include_declaration or o.role != "declaration"]


def module(layer: Layer, ident: str) -> LayerModule | None:
    """The merged MODULE declared with ``ident`` (never a topic or a temporary id)."""
    m = layer.module(ident)
    return m if m is not None and m.is_module and not m.temporary else None


def nucleus(layer: Layer, ident: str) -> LayerNucleus | None:
    if not ident.isdigit():
        return None
    number = int(ident)
    return next((n for n in layer.nuclei if n.nucleus_id == number), None)


def governed_by(layer: Layer, nucleus_id: int) -> list[LayerModule]:
    """The modules a nucleus governs (their ``[NUCLEI: ...]`` names it, §7.4.4)."""
    by_pos = {(m.file, m.info.line): m for m in layer.modules}
    out = []
    for e in layer.edges:
        if e.kind == "governs" and e.target == str(nucleus_id) and (e.file, e.line) in by_pos:
            out.append(by_pos[(e.file, e.line)])
    return out


def file_of(layer: Layer, rel: str) -> LayerFile | None:
    return next((f for f in layer.files if f.rel == rel), None)


def _normal(kind: str, ident: str) -> str:
    return str(int(ident)) if kind == "nucleus" and ident.isdigit() else ident


# -- completion --------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class CompletionContext:
    """What may be typed at a cursor: ``kind`` is 'module', 'nucleus', 'connection' (either,
    as ``MODULE id`` / ``NUCLEUS n``), 'closing_tag' or 'opening_tag'; the typed prefix starts
    at 1-based column ``start`` of the cursor's line."""

    kind: str
    start: int
    prefix: str
    zone: Zone | None = None


_CONN_TYPED = re.compile(r"[ \t]*[*+-][ \t]+(MODULE|NUCLEUS)[ \t]+(\S*)")
_CONN_BARE = re.compile(r"[ \t]*[*+-][ \t]+([A-Z]*)")
_REGISTRY_TYPED = re.compile(r"[ \t]*\*[ \t]+(?:ACTIVE|INACTIVE):(?:[^,]*,)*[ \t]*([^\s,]*)")
_NUCLEI_TYPED = re.compile(r"(?:[^,]*,)*[ \t]*(\d*)")  # after the last "[NUCLEI:" of the line
_TAG_TYPED = re.compile(r"[ \t]*(\[/?(?:P\d*)?)")


def completion_context(doc: Document, line: int, before: str) -> CompletionContext | None:
    """What the text ``before`` the cursor on ``line`` is in the middle of, or None.

    ``before`` is the current text of the line up to the cursor (the editor's, which may be
    newer than ``doc`` by a keystroke); ``doc`` tells which section and zone the line is in.
    """
    at = before.rfind(_NUCLEI_OPEN)
    if at != -1 and "]" not in before[at:]:
        m = _NUCLEI_TYPED.fullmatch(before, at + len(_NUCLEI_OPEN))
        if m:
            return CompletionContext("nucleus", m.start(1) + 1, m.group(1))
    section = _section_at(doc, line)
    if section == "CONNECTIONS":
        m = _CONN_TYPED.fullmatch(before)
        if m:
            return CompletionContext(m.group(1).lower(), m.start(2) + 1, m.group(2))
        m = _CONN_BARE.fullmatch(before)
        if m:
            return CompletionContext("connection", m.start(1) + 1, m.group(1))
    if section == "REGISTRY":
        m = _REGISTRY_TYPED.fullmatch(before)
        if m:
            return CompletionContext("module", m.start(1) + 1, m.group(1))
    m = _TAG_TYPED.fullmatch(before)
    if m:
        z = zone_at(doc, line)
        open_zone = z if z is not None and z.line < line and (z.close_line is None or z.close_line >= line) else None
        if open_zone is not None:
            return CompletionContext("closing_tag", m.start(1) + 1, m.group(1), open_zone)
        if not m.group(1).startswith("[/"):
            return CompletionContext("opening_tag", m.start(1) + 1, m.group(1))
    return None


def _section_at(doc: Document, line: int) -> str | None:
    """'CONNECTIONS', 'REGISTRY' or another section name of the header governing ``line`` (H6 skipped)."""
    last = None
    for h in headings(doc):
        if h.line >= line:
            break
        if h.level < 6 and not h.refused:
            last = h
    if last is None:
        return None
    if last.type == "state_registry":
        return "REGISTRY"
    return last.section
