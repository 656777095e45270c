"""The derived logical tree of a file (§2.2, §7.1.2, §7.1.3).

Headers nest by their level — never by block type (§7.1.3 WARNING) — and a
permission-zone boundary closes nothing (§2.3).  Every H6 entry is owned by
the nearest preceding open container (module, topic, sub-topic, sub-module,
nucleus or a plain H2 section); with none, by the file.  Headers refused by
§5.5 (structure in a writable zone) are left out: they declare nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .nodes import Heading
from .text import printable

if TYPE_CHECKING:  # the document holds its outline and serialisation, not the reverse
    from .document import Document

_KINDS = {"module": "module", "sub_module": "sub_module", "nucleus": "nucleus",
          "state_registry": "state_registry", "section": "section"}


@dataclass(eq=False)
class Entry:
    """An H6 node (log entry or mnemonic node)."""

    line: int
    title: str | None
    date: str | None
    permission_level: int | None
    text: str
    block: Heading = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        # JSON holds text: a byte kept from invalid UTF-8 as the characters \xNN, as in Document.to_dict()
        d: dict[str, Any] = {"line": self.line, "title": None if self.title is None else printable(self.title),
             "permissionLevel": self.permission_level, "text": printable(self.text)}
        if self.date is not None:
            d["date"] = self.date
        return d


@dataclass(eq=False)
class OutlineNode:
    """A header of the logical tree (the root stands for the file, level 1)."""

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
    block: Heading | None = field(default=None, repr=False)

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


def build_outline(doc: Document) -> OutlineNode:
    root = OutlineNode(name=doc.title or "", kind="file", level=1, line=doc.title_line or 1,
                       permission_level=None, keyword=None)
    by_line = {0: root}
    stack = [root]
    for h in headings(doc):
        if h.refused:
            continue
        if h.level == 6 and h.type == "log":
            owner = by_line.get(doc.h6_owner.get(h.line, 0), root)
            owner.entries.append(Entry(h.line, h.title, h.date, h.permission_level, h.text, h))
            continue
        if h.level == 1:
            continue
        node = OutlineNode(name=h.name if h.name is not None else h.text, kind=_KINDS.get(h.type, "section"),
                           level=h.level, line=h.line, permission_level=h.permission_level, keyword=h.keyword,
                           id=h.id, section=h.section, ignored=h.line in doc.ignored_lines, block=h)
        while len(stack) > 1 and stack[-1].level >= h.level:
            stack.pop()
        stack[-1].children.append(node)
        stack.append(node)
        by_line[h.line] = node
    return root
