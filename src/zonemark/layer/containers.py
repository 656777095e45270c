"""The containers of a file and the entries they own, as plain data (§7.1.2, §7.1.3, §7.5).

A *container* is a header that owns H6 entries: a ``MODULE``, ``SUB-MODULE`` or ``NUCLEUS``,
a ``TOPIC`` or ``SUBTOPICn`` of an external memory, or a plain H2 section — the same set the
parser uses to give every H6 entry its owner (the nearest preceding open container, §5.5
v1.10, §7.1.3) and the writer uses to find where an entry goes.  Everything here is read
from the outline (:meth:`zonemark.core.document.Document.outline`): containers nest by header
level, never by block type (§7.1.3 WARNING), and a zone boundary closes nothing (§2.3).

Each container gets an *address*: the text that names it to the writer's ``--container``
(:func:`zonemark.writer.locate.resolve_container`) — a module id (``042``), ``NUCLEUS 1``,
a topic path of names (``Maintenance/Tyres``), or ``#n`` (the n-th container under the same
parent, document order) where a name alone would be ambiguous.  Topics carry no id and are
addressed positionally or by name (§7.1.2).  A test resolves every address back through the
writer, so the two cannot drift apart.

Dates are compared as the ISO 8601 text they are (§7.5), at the precision both sides have:
``since="2026-05-03"`` keeps ``2026-05-03T08:00`` and a date-only ``2026-05-03`` entry;
time zones are not converted.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.document import Document
from ..core.headers import spelled_keyword
from ..core.outline import Entry, OutlineNode

#: Outline kinds whose header is the parent of the containers below it (the writer's rule).
_PARENT_KINDS = ("module", "sub_module", "nucleus")
_POSITIONAL = re.compile(r"#\d+")


@dataclass(frozen=True)
class ContainerSummary:
    """One container of a file: what it is, where it is, and how much it holds."""

    address: str  # names it to the writer (see the module docstring)
    kind: str  # 'topic' | 'subtopic' | 'module' | 'sub_module' | 'nucleus' | 'section'
    keyword: str | None  # 'TOPIC', 'SUBTOPIC2', 'MODULE', 'SUB-MODULE', 'NUCLEUS', a section keyword, or None
    id: str | None  # the declared id (None for topics by convention, §7.1.2)
    name: str
    level: int  # header level
    line: int  # line of the declaration
    zone: int | None  # permission level of the declaration (§5.2); None outside any zone
    parent: str | None  # address of the enclosing container; None at the top of the file
    entries: int  # H6 entries it owns directly (not those of its sub-containers)
    last_entry_date: str | None  # latest ISO date among those entries (None when none has a date)
    ignored: bool  # a duplicate declaration a stricter zone overrides (§5.5 Invariant 4)


@dataclass(frozen=True)
class ContainerEntry:
    """One H6 entry of a container (§7.5; any H6 in an external memory, §5.5 v1.7)."""

    line: int
    date: str | None
    title: str | None
    heading: str  # the header line as written, without the newline
    body: str  # the lines after the header up to the entry's end, trailing blank lines removed
    zone: int | None  # permission level of the zone holding the entry


@dataclass(frozen=True)
class ContainerEntries:
    """The entries of one container, oldest first (document order), after ``since`` and ``limit``."""

    container: ContainerSummary
    entries: tuple[ContainerEntry, ...]
    matching: int  # entries on or after ``since`` (all when no ``since``), before ``limit``
    total: int  # every entry the container owns
    earlier: int = 0  # entries on or after ``since`` before the first one shown (the next page, oldest side)


def list_containers(doc: Document) -> list[ContainerSummary]:
    """Every container of ``doc`` in document order (state registries are not containers)."""
    return [summary for summary, _node in _walk(doc)]


def container_at(doc: Document, line: int) -> ContainerSummary | None:
    """The container declared on ``line``, or None."""
    for summary, _node in _walk(doc):
        if summary.line == line:
            return summary
    return None


def container_entries(doc: Document, line: int, *, since: str | None = None,
                      limit: int | None = None, before: int | None = None) -> ContainerEntries | None:
    """The entries of the container declared on ``line``: those on or after ``since``, the last ``limit``.

    None when no container is declared on ``line``.  ``limit`` keeps the most recent entries
    (the end of the journal, where appends land); ``before`` keeps only entries whose header is above
    that line (the page before one already read), found by bisection: entries are in document order.
    """
    for summary, node in _walk(doc):
        if summary.line != line:
            continue
        kept = node.entries if since is None else [e for e in node.entries
                                                   if e.date is not None and on_or_after(e.date, since)]
        end = len(kept) if before is None else bisect.bisect_left(kept, before, key=lambda e: e.line)
        start = 0 if limit is None else max(0, end - limit)
        return ContainerEntries(summary, tuple(_entry(doc, e) for e in kept[start:end]), len(kept), len(node.entries),
                                earlier=start)
    return None


def on_or_after(date: str, since: str) -> bool:
    """Whether ISO date ``date`` is on or after ``since``, compared at the precision both have."""
    n = min(len(date), len(since))
    return date[:n] >= since[:n]


def on_or_before(date: str, until: str) -> bool:
    """Whether ISO date ``date`` is on or before ``until``, compared at the precision both have."""
    n = min(len(date), len(until))
    return date[:n] <= until[:n]


# -- the walk -----------------------------------------------------------------------------

def _is_container(node: OutlineNode) -> bool:
    return node.kind in _PARENT_KINDS or (node.kind == "section" and node.level == 2)


def _walk(doc: Document) -> Iterator[tuple[ContainerSummary, OutlineNode]]:
    """(summary, outline node) for every container, in document order."""
    root = doc.outline()
    ordered: list[tuple[OutlineNode, OutlineNode | None]] = []  # (container, its parent container)

    def visit(node: OutlineNode, parent: OutlineNode | None) -> None:
        for child in node.children:
            if _is_container(child):
                ordered.append((child, parent))
            visit(child, child if child.kind in _PARENT_KINDS else parent)

    visit(root, None)
    siblings: dict[int, list[OutlineNode]] = {}
    for node, parent in ordered:
        siblings.setdefault(id(parent), []).append(node)
    groups = {key: _Group(nodes) for key, nodes in siblings.items()}
    named = _Group([node for node, _ in ordered])  # every container, by id and by name
    addresses: dict[int, str] = {}
    for node, parent in ordered:
        prefix = "" if parent is None else addresses[id(parent)] + "/"
        group = groups[id(parent)]
        address = prefix + _segment(node, group)
        if "/" in address and named.names_other(address, node):  # whole-address match wins first
            address = prefix + f"#{group.position[id(node)]}"
        addresses[id(node)] = address
    for node, parent in ordered:
        dates = [e.date for e in node.entries if e.date]
        yield ContainerSummary(
            address=addresses[id(node)], kind=_kind(node), keyword=_keyword(node), id=node.id, name=node.name,
            level=node.level, line=node.line, zone=node.permission_level,
            parent=None if parent is None else addresses[id(parent)], entries=len(node.entries),
            last_entry_date=max(dates) if dates else None, ignored=node.ignored), node


class _Group:
    """Containers (siblings, or all of a file) looked up by id and by name: one pass, so that naming
    each of n siblings costs O(1), not O(n) (B2)."""

    def __init__(self, nodes: list[OutlineNode]):
        self.by_id: dict[str, list[OutlineNode]] = {}
        self.by_name: dict[str, list[OutlineNode]] = {}
        self.nuclei: dict[str | None, list[OutlineNode]] = {}
        self.position: dict[int, int] = {}
        for i, node in enumerate(nodes):
            self.position[id(node)] = i + 1
            if node.id is not None:
                self.by_id.setdefault(node.id, []).append(node)
            self.by_name.setdefault(node.name, []).append(node)
            if node.kind == "nucleus":
                self.nuclei.setdefault(node.id, []).append(node)

    def only(self, table: Mapping[Any, list[OutlineNode]], key: object, node: OutlineNode) -> bool:
        """Whether ``node`` is the one node under ``key`` in ``table``."""
        found = table.get(key, ())
        return len(found) == 1 and found[0] is node

    def names_other(self, text: str, node: OutlineNode) -> bool:
        """Whether some other node's id or name is ``text``."""
        return any(c is not node for c in self.by_id.get(text, ())[:2]) or any(
            c is not node for c in self.by_name.get(text, ())[:2])


def _segment(node: OutlineNode, group: _Group) -> str:
    """The shortest segment naming ``node`` among its siblings (``group``), as the writer resolves it."""
    if node.kind == "nucleus" and node.id is not None:
        word = f"NUCLEUS {node.id}"
        if word not in group.by_id and word not in group.by_name and group.only(group.nuclei, node.id, node):
            return word
    candidates = [node.id] if node.id is not None and node.keyword is None and node.kind != "nucleus" else []
    candidates.append(node.name)
    for text in candidates:
        if not text or text != text.strip() or "/" in text or _POSITIONAL.fullmatch(text):
            continue
        if text in group.by_id:
            if group.only(group.by_id, text, node):
                return text
            continue
        if group.only(group.by_name, text, node):
            return text
    return f"#{group.position[id(node)]}"


def _kind(node: OutlineNode) -> str:
    if node.kind == "module" and node.keyword == "TOPIC":
        return "topic"
    if node.kind == "module" and node.keyword == "SUBTOPIC":
        return "subtopic"
    return node.kind


def _keyword(node: OutlineNode) -> str | None:
    if node.keyword is not None:
        return spelled_keyword(node.keyword, node.level)
    return {"module": "MODULE", "sub_module": "SUB-MODULE", "nucleus": "NUCLEUS"}.get(node.kind, node.section)


def _entry(doc: Document, entry: Entry) -> ContainerEntry:
    block = doc.heading_at(entry.line)
    raw = block.raw_markdown if block is not None else ""
    eol = raw.find("\n")
    heading = (raw if eol < 0 else raw[:eol]).rstrip("\r")
    body = "" if eol < 0 else raw[eol + 1:]
    lines = [ln.rstrip("\r") for ln in body.split("\n")]
    while lines and not lines[-1].strip():
        lines.pop()
    return ContainerEntry(entry.line, entry.date, entry.title, heading, "\n".join(lines), entry.permission_level)
