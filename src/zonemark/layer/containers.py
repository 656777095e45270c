"""The containers of a file and the entries they own, as plain data (§7.1.2, §7.1.3, §7.5).

A *container* is a header that owns H6 entries: a ``MODULE``, ``SUB-MODULE`` or ``NUCLEUS``,
a ``TOPIC`` or ``SUBTOPICn`` of an external memory, or a plain H2 section — the same set the
parser uses to give every H6 entry its owner (the nearest preceding open container, §5.5
v1.10, §7.1.3) and the writer uses to find where an entry goes.  The list is read from the
outline (:meth:`zonemark.core.document.Document.outline`): containers nest by header level,
never by block type (§7.1.3 WARNING), and a zone boundary closes nothing (§2.3).  One container
and its entries (:func:`read_journal`, :func:`container_entries`) are read from a scan of the
headers and zones that builds neither the outline nor the block tree, and hold no object per
container or entry (B16); what they give is what the outline and the tree give (tested).

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
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..core.document import Document
from ..core.headers import spelled_keyword
from ..core.outline import OutlineNode
from ..core.scanner import scan_structure
from ..core.tree import HeadingFrame, ZoneFrame

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
    body_from: int = 0  # where ``body`` starts in the whole body (characters): past 0 on a page that continues it
    body_chars: int | None = None  # the whole body's length when ``body`` is only part of it (a cut page), else None


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
                      limit: int | None = None, before: int | None = None, max_chars: int | None = None,
                      resume: tuple[int, int] | None = None) -> ContainerEntries | None:
    """The entries of the container declared on ``line``: those on or after ``since``, the last ``limit``.

    None when no container is declared on ``line``.  ``limit`` keeps the most recent entries
    (the end of the journal, where appends land); ``before`` keeps only entries whose header is above
    that line (the page before one already read), found by bisection: entries are in document order.
    ``max_chars`` and ``resume`` bound the bodies of a page (see :meth:`Journal.page`).  Read from one
    scan of the file that builds neither its tree nor its outline (:func:`read_journal`).
    """
    journal = read_journal(doc, line)
    if journal is None:
        return None
    return journal.page(since=since, limit=limit, before=before, max_chars=max_chars, resume=resume)
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
        addresses[id(node)] = _address(prefix, node, groups[id(parent)], named)
    for node, parent in ordered:
        dates = [e.date for e in node.entries if e.date]
        yield ContainerSummary(
            address=addresses[id(node)], kind=_kind(node), keyword=_keyword(node), id=node.id, name=node.name,
            level=node.level, line=node.line, zone=node.permission_level,
            parent=None if parent is None else addresses[id(parent)], entries=len(node.entries),
            last_entry_date=max(dates) if dates else None, ignored=node.ignored), node


class _Named(Protocol):
    """What naming a container reads of it (an outline node, or a row of :class:`_Columns`)."""

    @property
    def kind(self) -> str: ...
    @property
    def id(self) -> str | None: ...
    @property
    def keyword(self) -> str | None: ...
    @property
    def name(self) -> str: ...


class _Names(Protocol):
    """Every container of a file, asked whether one other than ``node`` has ``text`` as its id or name."""

    def names_other(self, text: str, node: Any) -> bool: ...


class _Siblings(_Names, Protocol):
    """The containers a segment must tell its container from (see :func:`_segment`)."""

    def has_id(self, text: str) -> bool: ...
    def has_name(self, text: str) -> bool: ...
    def only_id(self, text: str, node: Any) -> bool: ...
    def only_name(self, text: str, node: Any) -> bool: ...
    def only_nucleus(self, ident: str, node: Any) -> bool: ...
    def position_of(self, node: Any) -> int: ...


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

    def names_other(self, text: str, node: Any) -> bool:
        """Whether some other node's id or name is ``text``."""
        return any(c is not node for c in self.by_id.get(text, ())[:2]) or any(
            c is not node for c in self.by_name.get(text, ())[:2])

    def has_id(self, text: str) -> bool:
        return text in self.by_id

    def has_name(self, text: str) -> bool:
        return text in self.by_name

    def only_id(self, text: str, node: Any) -> bool:
        return self.only(self.by_id, text, node)

    def only_name(self, text: str, node: Any) -> bool:
        return self.only(self.by_name, text, node)

    def only_nucleus(self, ident: str, node: Any) -> bool:
        return self.only(self.nuclei, ident, node)

    def position_of(self, node: Any) -> int:
        return self.position[id(node)]


def _address(prefix: str, node: _Named, group: _Siblings, named: _Names) -> str:
    """The address of ``node`` under the parent addressed ``prefix`` (``""`` or ending in ``/``): its segment
    among its siblings (``group``), positional when the whole address is another container's id or name
    (``named``: every container of the file) — a whole-address match wins first in the writer."""
    address = prefix + _segment(node, group)
    if "/" in address and named.names_other(address, node):
        address = prefix + f"#{group.position_of(node)}"
    return address


def _segment(node: _Named, group: _Siblings) -> str:
    """The shortest segment naming ``node`` among its siblings (``group``), as the writer resolves it."""
    if node.kind == "nucleus" and node.id is not None:
        word = f"NUCLEUS {node.id}"
        if not group.has_id(word) and not group.has_name(word) and group.only_nucleus(node.id, node):
            return word
    candidates = [node.id] if node.id is not None and node.keyword is None and node.kind != "nucleus" else []
    candidates.append(node.name)
    for text in candidates:
        if not text or text != text.strip() or "/" in text or _POSITIONAL.fullmatch(text):
            continue
        if group.has_id(text):
            if group.only_id(text, node):
                return text
            continue
        if group.only_name(text, node):
            return text
    return f"#{group.position_of(node)}"


def _kind(node: OutlineNode | _Row) -> str:
    if node.kind == "module" and node.keyword == "TOPIC":
        return "topic"
    if node.kind == "module" and node.keyword == "SUBTOPIC":
        return "subtopic"
    return node.kind


def _keyword(node: OutlineNode | _Row) -> str | None:
    if node.keyword is not None:
        return spelled_keyword(node.keyword, node.level)
    return {"module": "MODULE", "sub_module": "SUB-MODULE", "nucleus": "NUCLEUS"}.get(node.kind, node.section)




# -- one container read from a scan: no tree, no outline (B16) ------------------------------

#: An absent index in the integer columns below.
_NONE = -1
#: Outline kinds (:data:`zonemark.core.outline._KINDS`): a header's kind as the outline names it.
_OUTLINE_KINDS = {"module": "module", "sub_module": "sub_module", "nucleus": "nucleus",
                  "state_registry": "state_registry", "section": "section"}
_NONBLANK = re.compile(r"\S")
#: What ``rstrip("\r")`` of each line removes from a text of lines joined by ``\n``.
_LINE_END_CR = re.compile(r"\r+(?=\n)|\r+\Z")


class _Texts:
    """A column of optional strings: their UTF-8 in one buffer and where each ends (no object per string)."""

    __slots__ = ("_buf", "_ends", "_absent")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._ends = array("q")
        self._absent = bytearray()

    def append(self, value: str | None) -> None:
        if value is None:
            self._absent.append(1)
        else:
            self._buf += value.encode("utf-8", "surrogatepass")
            self._absent.append(0)
        self._ends.append(len(self._buf))

    def __len__(self) -> int:
        return len(self._ends)

    def __getitem__(self, i: int) -> str | None:
        if self._absent[i]:
            return None
        return self._buf[self._ends[i - 1] if i else 0:self._ends[i]].decode("utf-8", "surrogatepass")

    def equals(self, i: int, text: bytes) -> bool:
        """Whether string ``i`` is ``text`` (UTF-8, ``surrogatepass``), decoding nothing."""
        if self._absent[i]:
            return False
        start = self._ends[i - 1] if i else 0
        end = self._ends[i]
        return end - start == len(text) and self._buf[start:end] == text


@dataclass(frozen=True, slots=True)
class _Row:
    """One container as naming reads it (:class:`_Named`); ``level`` and ``section`` are set for the container
    read, the only one whose keyword is shown."""

    index: int
    kind: str
    id: str | None
    keyword: str | None
    name: str
    level: int = 0
    section: str | None = None


class _Columns:
    """Every container of a file in document order, as naming reads them (the outline's, §7.1.3): its kind,
    keyword, id, name and the enclosing module, sub-module or nucleus (:data:`_NONE`: none)."""

    __slots__ = ("parent", "kind", "keyword", "ids", "names", "_words", "_codes")

    def __init__(self) -> None:
        self.parent = array("q")
        self.kind = bytearray()
        self.keyword = bytearray()
        self.ids = _Texts()
        self.names = _Texts()
        self._words: list[str | None] = []
        self._codes: dict[str | None, int] = {}

    def _code(self, word: str | None) -> int:
        code = self._codes.get(word)
        if code is None:
            code = self._codes[word] = len(self._words)
            self._words.append(word)
        return code

    def append(self, parent: int, kind: str, keyword: str | None, id_: str | None, name: str) -> int:
        self.parent.append(parent)
        self.kind.append(self._code(kind))
        self.keyword.append(self._code(keyword))
        self.ids.append(id_)
        self.names.append(name)
        return len(self.parent) - 1

    def __len__(self) -> int:
        return len(self.parent)

    def row(self, i: int) -> _Row:
        kind = self._words[self.kind[i]]
        assert kind is not None  # every container has a kind
        return _Row(i, kind, self.ids[i], self._words[self.keyword[i]], self.names[i] or "")

    def is_nucleus(self, i: int) -> bool:
        return self._words[self.kind[i]] == "nucleus"


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


class _Counted:
    """:class:`_Siblings` of one container read from :class:`_Columns` by counting, not by tables: the
    containers under ``parent`` (or every container, ``parent`` None) in one pass for the texts a segment
    asks about, so that naming one container of n holds nothing per container (B16)."""

    def __init__(self, columns: _Columns, parent: int | None, node: _Row, texts: tuple[str, ...]) -> None:
        self.columns = columns
        self.parent = parent
        self.node = node
        self.ids: dict[str, tuple[int, int]] = {}  # text -> (how many have it as id, the first of them)
        self.named: dict[str, tuple[int, int]] = {}
        self.position = 0
        self.nuclei = (0, _NONE)
        wanted = [(t, _utf8(t)) for t in dict.fromkeys(texts)]
        ids: dict[str, list[int]] = {t: [0, _NONE] for t, _ in wanted}
        names: dict[str, list[int]] = {t: [0, _NONE] for t, _ in wanted}
        own = _utf8(node.id) if node.id is not None else None
        nuclei = [0, _NONE]
        seen = 0
        col_ids, col_names, col_parent = columns.ids, columns.names, columns.parent
        for j in range(len(columns)):
            if parent is not None and col_parent[j] != parent:
                continue
            seen += 1
            if j == node.index:
                self.position = seen
            for text, raw in wanted:
                if col_ids.equals(j, raw):
                    count = ids[text]
                    count[0] += 1
                    if count[1] == _NONE:
                        count[1] = j
                if col_names.equals(j, raw):
                    count = names[text]
                    count[0] += 1
                    if count[1] == _NONE:
                        count[1] = j
            if own is not None and columns.is_nucleus(j) and col_ids.equals(j, own):
                nuclei[0] += 1
                if nuclei[1] == _NONE:
                    nuclei[1] = j
        self.ids = {t: (c[0], c[1]) for t, c in ids.items()}
        self.named = {t: (c[0], c[1]) for t, c in names.items()}
        self.nuclei = (nuclei[0], nuclei[1])

    def _only(self, count: tuple[int, int], node: Any) -> bool:
        return count[0] == 1 and count[1] == node.index

    def has_id(self, text: str) -> bool:
        return self.ids[text][0] > 0

    def has_name(self, text: str) -> bool:
        return self.named[text][0] > 0

    def only_id(self, text: str, node: Any) -> bool:
        return self._only(self.ids[text], node)

    def only_name(self, text: str, node: Any) -> bool:
        return self._only(self.named[text], node)

    def only_nucleus(self, ident: str, node: Any) -> bool:
        assert ident == self.node.id
        return self._only(self.nuclei, node)

    def position_of(self, node: Any) -> int:
        assert node.index == self.node.index
        return self.position

    def names_other(self, text: str, node: Any) -> bool:
        return _names_other(self.columns, self.parent, text, node)


def _names_other(columns: _Columns, parent: int | None, text: str, node: Any) -> bool:
    """Whether a container other than ``node`` (under ``parent``; None: any) has ``text`` as its id or name."""
    raw = _utf8(text)
    ids, names, parents = columns.ids, columns.names, columns.parent
    return any(j != node.index and (parent is None or parents[j] == parent)
               and (ids.equals(j, raw) or names.equals(j, raw)) for j in range(len(columns)))


def _row_address(columns: _Columns, i: int, row: _Row | None = None) -> str:
    """The address :func:`list_containers` gives container ``i`` (its parents' first), by counting."""
    chain = []
    j = i
    while j != _NONE:
        chain.append(j)
        j = columns.parent[j]
    address = ""
    everyone = _Everyone(columns)
    for j in reversed(chain):
        node = row if (row is not None and j == i) else columns.row(j)
        texts = tuple(t for t in (f"NUCLEUS {node.id}" if node.id is not None else None, node.id, node.name)
                      if t is not None)
        group = _Counted(columns, columns.parent[j], node, texts)
        address = _address(address + "/" if address else "", node, group, everyone)
    return address


class _Everyone:
    """Every container of the file (:class:`_Names`): one pass for each whole address asked about."""

    def __init__(self, columns: _Columns) -> None:
        self.columns = columns

    def names_other(self, text: str, node: Any) -> bool:
        return _names_other(self.columns, None, text, node)


class _Reader:
    """One scan of a file's headers and zones (:func:`zonemark.core.scanner.scan_structure`): its containers as
    columns and the entries the container on ``want`` owns, each with its extent — the header block the tree
    would hold (an H6 ends at the next header; in a zone, at the zone's closing tag; outside, where a zone opens)."""

    def __init__(self, doc: Document, want: int) -> None:
        self.src = doc.source
        self.owners = doc.h6_owner
        self.want = want
        self.columns = _Columns()
        self.stack: list[tuple[int, int]] = []  # the outline's open headers: (level, the parent of what nests in it)
        self.target: _Row | None = None
        self.target_index = _NONE
        self.target_plevel: int | None = None
        self.lines = array("q")
        self.starts = array("q")
        self.ends = array("q")
        self.plevels = bytearray()  # 0: outside any zone
        self.dates: list[str | None] = []
        self.titles = _Texts()
        self.pending: list[int] = []  # entries whose end is not known yet (at most one in a zone, one outside)

    def header(self, frame: HeadingFrame) -> None:
        if self.pending:
            self._ended_by(frame)
        if frame.refused or frame.level == 1:
            return
        h = frame.header
        level = frame.level
        if level == 6 and h.kind == "log":
            if self.owners.get(frame.line, 0) == self.want:
                self.lines.append(frame.line)
                self.starts.append(frame.start)
                self.ends.append(len(self.src))
                self.plevels.append(frame.plevel or 0)
                self.dates.append(h.date)
                self.titles.append(frame.title)
                self.pending.append(len(self.lines) - 1)
            return
        kind = _OUTLINE_KINDS.get(h.kind, "section")
        stack = self.stack
        while stack and stack[-1][0] >= level:
            stack.pop()
        parent = stack[-1][1] if stack else _NONE
        inherit = parent
        if kind in _PARENT_KINDS or (kind == "section" and level == 2):
            name = frame.name if frame.name is not None else frame.text
            index = self.columns.append(parent, kind, h.keyword, h.id, name)
            if frame.line == self.want:
                self.target = _Row(index, kind, h.id, h.keyword, name, level, h.section)
                self.target_index = index
                self.target_plevel = frame.plevel
            if kind in _PARENT_KINDS:
                inherit = index
        stack.append((level, inherit))

    def _ended_by(self, frame: HeadingFrame) -> None:
        """A header ends every pending entry, but one outside the zones when it lies in a zone opened since."""
        kept = []
        for k in self.pending:
            if self.plevels[k] or frame.plevel is None:
                self.ends[k] = frame.start
            else:
                kept.append(k)
        self.pending = kept

    def zone(self, frame: ZoneFrame) -> None:
        for k in self.pending:
            if self.plevels[k]:  # in this zone: it ends at the closing tag (the end of the file without one)
                self.ends[k] = frame.tail if frame.tail is not None else len(self.src)
            else:  # before it, outside any zone: it ends where the zone opens
                self.ends[k] = frame.start
        self.pending = []


def read_journal(doc: Document, line: int) -> Journal | None:
    """The container declared on ``line`` and its entries, read in one scan that builds neither the tree nor
    the outline (B16); None when no container is declared there.  What it gives is what :func:`list_containers`
    and the outline's entries give (tested on every fixture and on generated files)."""
    reader = _Reader(doc, line)
    scan_structure(doc.source, reader.header, reader.zone)
    target = reader.target
    if target is None:
        return None
    columns = reader.columns
    parent = columns.parent[target.index]
    dates = [d for d in reader.dates if d]
    summary = ContainerSummary(
        address=_row_address(columns, target.index, target), kind=_kind(target), keyword=_keyword(target),
        id=target.id, name=target.name, level=target.level, line=line, zone=reader.target_plevel,
        parent=None if parent == _NONE else _row_address(columns, parent), entries=len(reader.lines),
        last_entry_date=max(dates) if dates else None, ignored=line in doc.ignored_lines)
    return Journal(summary, doc.source, reader.lines, reader.starts, reader.ends, reader.plevels, reader.dates,
                   reader.titles)


class Journal:
    """One container and the extents of the entries it owns (:func:`read_journal`), as columns: a page of them is
    read from the file's text when asked (:meth:`page`)."""

    def __init__(self, summary: ContainerSummary, source: str, lines: "array[int]", starts: "array[int]",
                 ends: "array[int]", plevels: bytearray, dates: list[str | None], titles: _Texts) -> None:
        self.summary = summary
        self.source = source
        self.lines = lines
        self.starts = starts
        self.ends = ends
        self.plevels = plevels
        self.dates = dates
        self.titles = titles

    def __len__(self) -> int:
        return len(self.lines)

    def page(self, *, since: str | None = None, limit: int | None = None, before: int | None = None,
             max_chars: int | None = None, resume: tuple[int, int] | None = None) -> ContainerEntries:
        """The entries on or after ``since``, the last ``limit`` above line ``before`` (see
        :func:`container_entries`), their bodies at most ``max_chars`` characters in all: the newest are kept
        while their bodies fit, and the newest alone is cut when its body does not.  ``resume`` (an entry's line,
        a character of its body) continues a cut body: the page is that entry from there, at most ``max_chars``;
        when the entry is gone, or its body ends before that character, the page is the one above its line."""
        dates, lines = self.dates, self.lines
        kept: range | list[int] = range(len(lines)) if since is None else [
            k for k in range(len(lines)) if dates[k] is not None and on_or_after(dates[k] or "", since)]
        matching = len(kept)
        if resume is not None:
            at, offset = resume
            i = bisect.bisect_left(kept, at, key=lambda k: lines[k])
            if i < len(kept) and lines[kept[i]] == at and max_chars is not None and offset < self.body_length(kept[i]):
                entry = self.entry(kept[i], offset, offset + max_chars)
                return ContainerEntries(self.summary, (entry,), matching, len(lines), earlier=i)
            before = at
        end = len(kept) if before is None else bisect.bisect_left(kept, before, key=lambda k: lines[k])
        start = 0 if limit is None else max(0, end - limit)
        if max_chars is None:
            return ContainerEntries(self.summary, tuple(self.entry(k) for k in kept[start:end]), matching,
                                    len(lines), earlier=start)
        chosen: list[ContainerEntry] = []
        room = max_chars
        for i in range(end - 1, start - 1, -1):
            length = self.body_length(kept[i])
            if length <= room:
                chosen.append(self.entry(kept[i]))
                room -= length
                continue
            if not chosen:
                chosen.append(self.entry(kept[i], 0, room))
            break
        chosen.reverse()
        return ContainerEntries(self.summary, tuple(chosen), matching, len(lines), earlier=end - len(chosen))

    def _parts(self, k: int) -> tuple[str, int, int, bool]:
        """Entry ``k``'s header line (without its line break), where its body starts and ends in the text
        (trailing blank lines left out), and whether a ``\\r`` is in it."""
        src, start, end = self.source, self.starts[k], self.ends[k]
        eol = src.find("\n", start, end)
        if eol < 0:
            return src[start:end].rstrip("\r"), end, end, False
        first = eol + 1
        last = end
        while True:  # drop the blank lines at the end, reading each from its end (no copy of the body)
            at = src.rfind("\n", first, last) + 1 or first
            if _NONBLANK.search(src, at, last):
                break
            if at == first:
                last = first
                break
            last = at - 1
        return src[start:eol].rstrip("\r"), first, last, src.find("\r", first, last) >= 0

    def body_length(self, k: int) -> int:
        """The length of entry ``k``'s body (characters; each line's trailing ``\\r`` removed)."""
        _heading, first, last, cr = self._parts(k)
        if not cr:
            return last - first
        return last - first - sum(len(m.group()) for m in _LINE_END_CR.finditer(self.source, first, last))

    def entry(self, k: int, start: int = 0, end: int | None = None) -> ContainerEntry:
        """Entry ``k``; with ``start``/``end``, only those characters of its body (``body_chars`` says how many
        it has when they are not all of it)."""
        heading, first, last, cr = self._parts(k)
        if cr:
            whole = _LINE_END_CR.sub("", self.source[first:last])
            length = len(whole)
            body = whole if start == 0 and (end is None or end >= length) else whole[start:end]
        else:
            length = last - first
            stop = last if end is None else min(last, first + end)
            body = self.source[first + start:stop] if start < length else ""
        part = start > 0 or (end is not None and end < length)
        return ContainerEntry(self.lines[k], self.dates[k], self.titles[k], heading, body, self.plevels[k] or None,
                              body_from=start, body_chars=length if part else None)
