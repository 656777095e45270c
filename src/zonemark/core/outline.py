"""The derived logical tree of a file (§2.2, §7.1.2, §7.1.3).

Headers nest by their level — never by block type (§7.1.3 WARNING) — and a
permission-zone boundary closes nothing (§2.3).  Every H6 entry is owned by
the nearest preceding open container (module, topic, sub-topic, sub-module,
nucleus or a plain H2 section); with none, by the file.  Headers refused by
§5.5 (structure in a writable zone) are left out: they declare nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .nodes import Heading
from .scanner import scan_structure
from .text import printable
from .tree import HeadingFrame

if TYPE_CHECKING:  # the document holds its outline and serialisation, not the reverse
    from .document import Document

_KINDS = {"module": "module", "sub_module": "sub_module", "nucleus": "nucleus",
          "state_registry": "state_registry", "section": "section"}


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
    level: int


_L = TypeVar("_L", bound=_Leveled)


def close_to(stack: list[_L], level: int) -> None:
    """Close the open headers a header of ``level`` ends: every one at its level or deeper (§7.1.3: headers
    nest by level, never by block type); ``stack[0]`` stands for the file and is never closed."""
    while len(stack) > 1 and stack[-1].level >= level:
        stack.pop()


class OutlineBuilder:
    """Nests headers, given in document order, into the outline (§7.1.3); :meth:`finish` places
    the entries with their owners and marks the ignored declarations, known once the file is read."""

    __slots__ = ("root", "by_line", "stack", "entries")

    def __init__(self) -> None:
        self.root = OutlineNode(name="", kind="file", level=1, line=1, permission_level=None, keyword=None)
        self.by_line = {0: self.root}
        self.stack = [self.root]
        self.entries: list[Entry] = []

    def add(self, line: int, level: int, kind: str, refused: bool, plevel: int | None, text: str,
            name: str | None, title: str | None, date: str | None, keyword: str | None, id_: str | None,
            section: str | None) -> None:
        if refused or level == 1:
            return
        if level == 6 and kind == "log":
            self.entries.append(Entry(line, title, date, plevel, text))
            return
        node = OutlineNode(name=name if name is not None else text, kind=_KINDS.get(kind, "section"),
                           level=level, line=line, permission_level=plevel, keyword=keyword, id=id_,
                           section=section, text=text)
        stack = self.stack
        close_to(stack, level)
        stack[-1].children.append(node)
        stack.append(node)
        self.by_line[line] = node

    def add_frame(self, frame: HeadingFrame) -> None:
        """A header as the scanner opens it (the scanner's ``on_header``: no tree is needed)."""
        h = frame.header
        self.add(frame.line, frame.level, h.kind, frame.refused, frame.plevel, frame.text, frame.name, frame.title,
                 h.date, h.keyword, h.id, h.section)

    def finish(self, title: str | None, title_line: int | None, h6_owner: Mapping[int, int],
               ignored_lines: frozenset[int]) -> OutlineNode:
        """The outline, once the file's title, entry owners and ignored lines are known."""
        root, by_line = self.root, self.by_line
        root.name, root.line = title or "", title_line or 1
        for entry in self.entries:  # document order: each owner's entries stay in order
            by_line.get(h6_owner.get(entry.line, 0), root).entries.append(entry)
        if ignored_lines:
            for node in root.walk():
                node.ignored = node is not root and node.line in ignored_lines
        self.entries, self.by_line, self.stack = [], {}, []
        return root


def build_outline(doc: Document) -> OutlineNode:
    """The outline: from the block tree when it is built, else from a scan of the headers alone,
    which builds no block (so the outline of a large file never holds its tree, issue 16)."""
    builder = OutlineBuilder()
    if doc.tree is None:
        scan_structure(doc.source, builder.add_frame)
    else:
        add = builder.add
        for h in headings(doc):
            add(h.line, h.level, h.type, h.refused, h.permission_level, h.text, h.name, h.title, h.date, h.keyword,
                h.id, h.section)
    return builder.finish(doc.title, doc.title_line, doc.h6_owner, doc.ignored_lines)
