"""The derived logical tree of a file (§2.2, §7.1.2, §7.1.3).

Headers nest by their level — never by block type (§7.1.3 WARNING) — and a
permission-zone boundary closes nothing (§2.3).  Every H6 entry is owned by
the nearest preceding open container (module, topic, sub-topic, sub-module,
nucleus or a plain H2 section); with none, by the file.  Headers refused by
§5.5 (structure in a writable zone) are left out: they declare nothing.

The outline is held as columns, a row of integers per node and entry (:class:`OutlineTable`, B21); its
:class:`OutlineNode` tree is made from them when asked (``Document.outline()``).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .nodes import Heading
from .scanner import Scanner, header_at
from .text import printable
from .tree import HeadingFrame

if TYPE_CHECKING:  # the document holds its outline and serialisation, not the reverse
    from .document import Document

#: A row's kind in the outline's table: an entry (0), or a node of one of these kinds (its index); row 0, the file.
_ENTRY = 0
_NODE_KINDS = ("", "file", "module", "sub_module", "nucleus", "section", "state_registry")
#: A header's kind -> its row's; any other header is a section.
_KIND_CODES = {"module": 2, "sub_module": 3, "nucleus": 4, "section": 5, "state_registry": 6}
_SECTION = 5
#: A row's flags: the file's kind when the scan read the header (what ``header_at`` reads it again with), and
#: whether the node is an ignored declaration.
_MEMORY, _REMINDER, _IGNORED = 1, 2, 4


@dataclass(eq=False, slots=True)
class Entry:
    """An H6 node (log entry or mnemonic node); its block is ``Document.heading_at(line)``."""

    line: int
    title: str | None
    date: str | None
    permission_level: int | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        # JSON holds text: a byte kept from invalid UTF-8 as the characters \xNN, as in Document.to_dict()
        d: dict[str, Any] = {"line": self.line, "title": None if self.title is None else printable(self.title),
             "permissionLevel": self.permission_level, "text": printable(self.text)}
        if self.date is not None:
            d["date"] = self.date
        return d


@dataclass(eq=False, slots=True)
class OutlineNode:
    """A header of the logical tree (the root stands for the file, level 1); its block is
    ``Document.heading_at(line)``, ``text`` the header as written (the root's: None)."""

    name: str
    kind: str  # file | module | sub_module | nucleus | section | state_registry
    level: int
    line: int
    permission_level: int | None
    keyword: str | None = None
    id: str | None = None
    section: str | None = None
    ignored: bool = False
    children: list["OutlineNode"] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    text: str | None = None

    @property
    def is_container(self) -> bool:
        return self.kind in ("module", "sub_module", "nucleus", "file") or (
            self.kind == "section" and self.level == 2)

    def walk(self) -> Iterator[OutlineNode]:
        """This node and every node under it, in document order."""
        yield self
        for c in self.children:
            yield from c.walk()

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": printable(self.name), "kind": self.kind}
        if self.keyword is not None:
            d["keyword"] = self.keyword
        elif self.kind == "module":
            d["keyword"] = "MODULE"
        elif self.kind == "nucleus":
            d["keyword"] = "NUCLEUS"
        elif self.kind == "sub_module":
            d["keyword"] = "SUB-MODULE"
        elif self.section is not None:
            d["keyword"] = self.section
        if self.id is not None:
            d["id"] = printable(self.id)
        d.update(level=self.level, line=self.line, permissionLevel=self.permission_level)
        if self.ignored:
            d["ignored"] = True
        d["children"] = [c.to_dict() for c in self.children]
        d["entries"] = [e.to_dict() for e in self.entries]
        return d


def headings(doc: Document) -> Iterator[Heading]:
    """Every header block after the title, in document order.

    Headers only ever sit at the top level, inside a permission block or under
    another header, so the walk skips lists, quotes and paragraphs (several
    times faster than walking every block on a large file).
    """
    title_line = doc.title_line
    stack = list(reversed(doc.blocks))
    while stack:
        block = stack.pop()
        if isinstance(block, Heading):
            if block.line != title_line:
                yield block
        elif block.type != "permission_block":
            continue
        if block.children:
            stack.extend(reversed(block.children))


class _Leveled(Protocol):
    @property
    def level(self) -> int: ...  # read only: an open header of a slotted class or of a NamedTuple


_L = TypeVar("_L", bound=_Leveled)


def close_to(stack: list[_L], level: int) -> None:
    """Close the open headers a header of ``level`` ends: every one at its level or deeper (§7.1.3: headers
    nest by level, never by block type); ``stack[0]`` stands for the file and is never closed."""
    while len(stack) > 1 and stack[-1].level >= level:
        stack.pop()


class OutlineTable:
    """The outline as columns (B21): a row per node and per entry, in document order, row 0 the file.

    Each row holds its header's line, offset, level, kind, zone and flags as integers, and the rows are linked
    in the order the readable outline lists them: ``items(row)`` gives a node's children and entries in line
    order.  A header's strings are not held: they are read again from its line when a row is read (``node``,
    ``entry``), or from the header block when the outline was read from the block tree (``heads``).  ``tree()``
    gives the :class:`OutlineNode` tree of ``Document.outline()``."""

    __slots__ = ("source", "title", "heads", "lines", "offsets", "levels", "kinds", "plevels", "flags", "first",
                 "next", "counts")

    def __init__(self, source: str, title: str | None, heads: list[Heading | None] | None, lines: array[int],
                 offsets: array[int], levels: bytearray, kinds: bytearray, plevels: bytearray, flags: bytearray,
                 first: array[int], next_: array[int], counts: array[int]) -> None:
        self.source, self.title, self.heads = source, title, heads
        self.lines, self.offsets, self.levels, self.kinds, self.plevels, self.flags = (
            lines, offsets, levels, kinds, plevels, flags)
        self.first, self.next, self.counts = first, next_, counts

    def __len__(self) -> int:
        return len(self.lines)

    def is_entry(self, row: int) -> bool:
        return self.kinds[row] == _ENTRY

    def entry_count(self, row: int) -> int:
        """How many entries the node of ``row`` owns."""
        return self.counts[row]

    def items(self, row: int) -> Iterator[int]:
        """The rows of the node's children and entries, in line order."""
        following = self.next
        r = self.first[row]
        while r >= 0:
            yield r
            r = following[r]

    def _strings(self, row: int) -> tuple[str, str | None, str | None, str | None, str | None, str | None,
                                          str | None]:
        """The text, name, title, date, keyword, id and section of the row's header."""
        h = self.heads[row] if self.heads is not None else None
        if h is None:
            flags = self.flags[row]
            got = header_at(self.source, self.offsets[row], bool(flags & _MEMORY), bool(flags & _REMINDER))
            return got.text, got.name, got.title, got.date, got.keyword, got.id, got.section
        return h.text, h.name, h.title, h.date, h.keyword, h.id, h.section

    def node(self, row: int) -> OutlineNode:
        """The node of ``row``, without its children and entries."""
        if row == 0:
            return OutlineNode(name=self.title or "", kind="file", level=1, line=self.lines[0], permission_level=None)
        text, name, _, _, keyword, id_, section = self._strings(row)
        return OutlineNode(name=name if name is not None else text, kind=_NODE_KINDS[self.kinds[row]],
                           level=self.levels[row], line=self.lines[row], permission_level=self.plevels[row] or None,
                           keyword=keyword, id=id_, section=section, ignored=bool(self.flags[row] & _IGNORED),
                           text=text)

    def entry(self, row: int) -> Entry:
        text, _, title, date, _, _, _ = self._strings(row)
        return Entry(self.lines[row], title, date, self.plevels[row] or None, text)

    def tree(self) -> OutlineNode:
        """The outline as :class:`OutlineNode` objects (``Document.outline()``)."""
        root = self.node(0)
        self._fill(0, root)
        return root

    def _fill(self, row: int, node: OutlineNode) -> None:
        for r in self.items(row):
            if self.kinds[r] == _ENTRY:
                node.entries.append(self.entry(r))
            else:
                child = self.node(r)
                node.children.append(child)
                self._fill(r, child)  # as deep as header levels go: H2-H6


class _Open:
    """An open node while the headers are read: its level and row."""

    __slots__ = ("level", "row")

    def __init__(self, level: int, row: int) -> None:
        self.level = level
        self.row = row


class OutlineBuilder:
    """Nests headers, given in document order, into the outline's table (§7.1.3); :meth:`finish` places the
    entries with their owners and marks the ignored declarations, known once the file is read.

    Given the scanner whose headers it is told of (``add_frame``, its ``on_header``), a row keeps the header's
    offset and the file's kind the scanner read it with; without one, it keeps the header block (``add_heading``,
    from the tree)."""

    __slots__ = ("scanner", "heads", "lines", "offsets", "levels", "kinds", "plevels", "flags", "parents", "stack")

    def __init__(self, scanner: Scanner | None = None) -> None:
        self.scanner = scanner
        self.heads: list[Heading | None] | None = None if scanner is not None else [None]
        self.lines = array("i", [1])
        self.offsets = array("I" if scanner is None or len(scanner.src) <= 0xFFFFFFFF else "Q", [0])
        self.levels, self.kinds = bytearray(b"\1"), bytearray(b"\1")  # the file: level 1, kind "file"
        self.plevels, self.flags = bytearray(1), bytearray(1)
        self.parents = array("i", [-1])
        self.stack = [_Open(1, 0)]

    def add(self, line: int, level: int, kind: str, refused: bool, plevel: int | None, offset: int,
            flags: int) -> bool:
        """One header; False when it is no row (the title's level, a refused header)."""
        if refused or level == 1:
            return False
        row = len(self.lines)
        if level == 6 and kind == "log":
            code, parent = _ENTRY, -1  # its owner is known at the end
        else:
            code = _KIND_CODES.get(kind, _SECTION)
            stack = self.stack
            close_to(stack, level)
            parent = stack[-1].row
            stack.append(_Open(level, row))
        self.lines.append(line)
        self.offsets.append(offset)
        self.levels.append(level)
        self.kinds.append(code)
        self.plevels.append(plevel or 0)
        self.flags.append(flags)
        self.parents.append(parent)
        return True

    def add_frame(self, frame: HeadingFrame) -> None:
        """A header as the scanner opens it (the scanner's ``on_header``: no tree is needed)."""
        sc = self.scanner
        assert sc is not None
        flags = (_MEMORY if sc.memory else 0) | (_REMINDER if (sc.file_type or sc.recover_type) == "reminder" else 0)
        self.add(frame.line, frame.level, frame.header.kind, frame.refused, frame.plevel, frame.start, flags)

    def add_heading(self, h: Heading) -> None:
        """A header block of the tree."""
        if self.add(h.line, h.level, h.type, h.refused, h.permission_level, h.start, 0):
            assert self.heads is not None
            self.heads.append(h)

    def finish(self, source: str, title: str | None, title_line: int | None, h6_owner: Mapping[int, int],
               ignored_lines: frozenset[int]) -> OutlineTable:
        """The outline, once the file's title, entry owners and ignored lines are known: the items of each
        node linked in line order (a node's parent from the nesting; an entry's, its owner, §7.1.3)."""
        lines, kinds, flags = self.lines, self.kinds, self.flags
        n = len(lines)
        lines[0] = title_line or 1
        first, counts = array("i", [-1]) * n, array("i", [0]) * n
        following = self.parents  # read at each row once, from the last: then it holds the row after it
        for r in range(n - 1, 0, -1):
            if kinds[r] == _ENTRY:
                parent = 0
                owner = h6_owner.get(lines[r], 0)
                if owner:  # the node on the owner's line; the file when there is none
                    i = bisect_left(lines, owner, 1)
                    if i < n and lines[i] == owner and kinds[i] != _ENTRY:
                        parent = i
                counts[parent] += 1
            else:
                parent = following[r]
                if lines[r] in ignored_lines:
                    flags[r] |= _IGNORED
            following[r] = first[parent]
            first[parent] = r
        following[0] = -1
        table = OutlineTable(source, title, self.heads, lines, self.offsets, self.levels, kinds, self.plevels, flags,
                             first, following, counts)
        self.scanner = self.heads = None
        self.stack = []
        return table


def outline_table(doc: Document) -> OutlineTable:
    """The outline's table: from the block tree when it is built, else from a scan of the headers alone,
    which builds no block (so the outline of a large file never holds its tree, issue 16)."""
    if doc.tree is None:
        scanner = Scanner(doc.source, None, tree=False, report=False)  # as scan_structure reads the headers
        builder = OutlineBuilder(scanner)
        scanner.on_header = builder.add_frame
        scanner.run()
    else:
        builder = OutlineBuilder()
        for h in headings(doc):
            builder.add_heading(h)
    return builder.finish(doc.source, doc.title, doc.title_line, doc.h6_owner, doc.ignored_lines)


def build_outline(doc: Document) -> OutlineNode:
    """The outline as :class:`OutlineNode` objects."""
    return outline_table(doc).tree()
