"""The lossless block tree (§13) and the facts derived from it.

Every block keeps the offsets of its exact source text: ``raw_markdown`` is a
slice of the document's source, so ``serialize(parse(x)) == x`` holds by
construction (§13.1).  The top-level blocks partition the whole text; the
children of a block are ordered, non-overlapping sub-slices of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from typing import Any, Literal, TypeVar, get_args

from . import syntax as sx

_TRAILING_BLANK = re.compile(r"(?:\n[ \t\r]*)+\Z")
#: A frozen, slotted node class that `fast_constructor` builds: a `Block` or a `Connection`.
_B = TypeVar("_B", bound="Block | Connection")


#: A §13 block type.
BlockType = Literal[
    "module", "sub_module", "section", "rule", "log", "attention_anchor", "quote", "list",
    "paragraph", "permission_block", "separator", "nucleus", "state_registry",
]
#: The §13 block types, in the order of the schema's enum.
BLOCK_TYPES: tuple[BlockType, ...] = get_args(BlockType)
#: What a CONNECTIONS bullet or a resolved edge points at (§7.6).
TargetKind = Literal["module", "nucleus"]
#: What a container of ``Document.modules`` is (§7.1; topics are modules with a keyword).
ModuleType = Literal["module", "sub_module"]
#: A module's state, declared or effective (§7.3).
State = Literal["active", "inactive"]


@dataclass(frozen=True, slots=True, eq=False)
class Block:
    """A block of the §13 tree. ``line``/``end_line`` are 1-based and inclusive."""

    type: BlockType
    line: int
    end_line: int
    start: int
    end: int
    permission_level: int | None
    children: tuple["Block", ...]
    source: str = field(repr=False)

    @property
    def raw_markdown(self) -> str:
        """The exact source text of the block, trailing blank lines included."""
        return self.source[self.start:self.end]

    @property
    def content(self) -> str:
        """The block's own text, without trailing blank lines; a CRLF line ending reads as LF (R18)."""
        text = self.source[self.start:self.end]
        if "\r" in text:
            text = text.replace("\r\n", "\n")
        return _TRAILING_BLANK.sub("", text)

    def walk(self) -> Iterator[Block]:
        """This block and all its descendants, in document order."""
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass(frozen=True, slots=True, eq=False)
class Heading(Block):
    """Any header line H1-H6 and the blocks it governs.

    ``type`` is ``module`` (``keyword`` None for MODULE, 'TOPIC' or 'SUBTOPIC'),
    ``sub_module``, ``nucleus``, ``state_registry``, ``log`` or ``section``.
    """

    level: int = 0
    text: str = ""
    id: str | None = None
    name: str | None = None
    keyword: str | None = None
    section: str | None = None  # FUNCTION, STATE, RULES, SUBROUTINE, ... for sections
    assigned_nuclei: tuple[int, ...] | None = None
    date: str | None = None
    title: str | None = None
    refused: bool = False  # a structural header in a zone that may not hold it (§5.5)

    @property
    def content(self) -> str:
        return self.text

    @property
    def nucleus_id(self) -> int | None:
        """The integer id of a ``## NUCLEUS n:`` declaration (§7.4.1)."""
        return int(self.id) if self.type == "nucleus" and self.id is not None else None

    @property
    def active_modules(self) -> tuple[str, ...] | None:
        """For a state registry: the ids of its ``* ACTIVE:`` lines (§7.3.1)."""
        return self._registry_ids("ACTIVE")

    @property
    def inactive_modules(self) -> tuple[str, ...] | None:
        """For a state registry: the ids of its ``* INACTIVE:`` lines (§7.3.1)."""
        return self._registry_ids("INACTIVE")

    def _registry_ids(self, state: str) -> tuple[str, ...] | None:
        if self.type != "state_registry":
            return None
        ids: list[str] = []
        for item in self.children:
            if isinstance(item, ListItem) and item.level == 1 and item.marker == "*":
                m = sx.REGISTRY_ENTRY.fullmatch("* " + item.text.split("\n", 1)[0].strip())
                if m and m.group(1) == state:
                    ids.extend(x.strip() for x in m.group(2).split(",")
                               if x.strip() and not sx.TEMPORARY_ID.fullmatch(x.strip()))
        return tuple(ids)


@dataclass(frozen=True, slots=True, eq=False)
class Rule(Block):
    """A rule bullet ``* Xn: definition`` (§9.4)."""

    prefix: str = ""
    rule_number: int = 0
    category: str = "general"
    title: str = ""
    body: str | None = None


@dataclass(frozen=True, slots=True, eq=False)
class ListItem(Block):
    """One list item; ``level`` is its list level (1-3, §8), ``children`` its sub-items."""

    level: int = 1
    marker: str = "*"
    text: str = ""

    @property
    def content(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True, eq=False)
class Quote(Block):
    """A blockquote: an attention anchor when ``severity`` is set (§6)."""

    severity: str | None = None
    text: str = ""

    @property
    def content(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True, eq=False)
class Paragraph(Block):
    """Free text, or one of the opaque constructs named by ``syntax``.

    ``syntax`` is None for prose, else 'title-less' constructs that §13 has no
    type for: 'frontmatter', 'html_comment', 'code_fence', 'nuclei_tag'.
    """

    syntax: str | None = None
    field_name: str | None = None
    field_value: str | None = None


@dataclass(frozen=True, slots=True)
class Connection:
    """A declarative CONNECTIONS bullet (§7.6)."""

    kind: TargetKind
    target: str
    line: int


@dataclass(frozen=True, slots=True)
class ModuleInfo:
    """A declared container (module, topic, sub-topic, sub-module) and its derived facts."""

    type: ModuleType
    keyword: str | None  # None (MODULE), 'TOPIC', 'SUBTOPIC'
    id: str | None
    name: str
    level: int
    line: int
    permission_level: int | None
    assigned_nuclei: tuple[int, ...] | None
    declared_state: State | None
    permanent: bool
    state_line: int | None
    connections: tuple[Connection, ...]
    ignored: bool
    parent_line: int | None  # the enclosing module's line, for sub-modules


@dataclass(frozen=True, slots=True)
class NucleusInfo:
    nucleus_id: int
    name: str
    line: int
    permission_level: int | None
    connections: tuple[Connection, ...]
    ignored: bool


@dataclass(frozen=True, slots=True)
class RegistryInfo:
    """The ``## MODULE_STATE_REGISTRY:`` of a file (§7.3.1)."""

    line: int
    permission_level: int | None
    active: tuple[str, ...]
    inactive: tuple[str, ...]
    entry_lines: tuple[tuple[str, str, int], ...]  # (module id, 'active'|'inactive', line)


def fast_constructor(cls: type[_B]) -> Callable[..., _B]:
    """A positional constructor for a frozen, slotted node class, for the parser.

    It gives exactly what ``cls(*values)`` gives (same fields, same order, tested),
    without the per-field ``object.__setattr__`` round trip of a frozen dataclass's
    ``__init__``: it sets each slot through its descriptor.  The parser builds ~10^5
    nodes per 10 MB; for the field counts of its node classes (8, 11 and 18) the calls
    are written out, which halves the cost of a loop over the fields.
    """
    setters = tuple(getattr(cls, f.name).__set__ for f in fields(cls))
    unrolled = _UNROLLED.get(len(setters))
    construct = unrolled(cls, setters) if unrolled is not None else _looped(cls, setters)
    construct.__name__ = f"new_{cls.__name__.lower()}"
    return construct


_Setter = Callable[[Any, Any], None]
_new = object.__new__


def _looped(cls: type[_B], setters: tuple[_Setter, ...]) -> Callable[..., _B]:
    def construct(*values: Any) -> _B:
        if len(values) != len(setters):
            raise TypeError(f"{cls.__name__} takes {len(setters)} values, got {len(values)}")
        node = _new(cls)
        for set_field, value in zip(setters, values):
            set_field(node, value)
        return node
    return construct


def _eight(cls: type[_B], setters: tuple[_Setter, ...]) -> Callable[..., _B]:
    s0, s1, s2, s3, s4, s5, s6, s7 = setters

    def construct(v0: Any, v1: Any, v2: Any, v3: Any, v4: Any, v5: Any, v6: Any, v7: Any) -> _B:
        node = _new(cls)
        s0(node, v0)
        s1(node, v1)
        s2(node, v2)
        s3(node, v3)
        s4(node, v4)
        s5(node, v5)
        s6(node, v6)
        s7(node, v7)
        return node
    return construct


def _eleven(cls: type[_B], setters: tuple[_Setter, ...]) -> Callable[..., _B]:
    s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10 = setters

    def construct(v0: Any, v1: Any, v2: Any, v3: Any, v4: Any, v5: Any, v6: Any, v7: Any, v8: Any, v9: Any,
                  v10: Any) -> _B:
        node = _new(cls)
        s0(node, v0)
        s1(node, v1)
        s2(node, v2)
        s3(node, v3)
        s4(node, v4)
        s5(node, v5)
        s6(node, v6)
        s7(node, v7)
        s8(node, v8)
        s9(node, v9)
        s10(node, v10)
        return node
    return construct


def _eighteen(cls: type[_B], setters: tuple[_Setter, ...]) -> Callable[..., _B]:
    s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15, s16, s17 = setters

    def construct(v0: Any, v1: Any, v2: Any, v3: Any, v4: Any, v5: Any, v6: Any, v7: Any, v8: Any, v9: Any,
                  v10: Any, v11: Any, v12: Any, v13: Any, v14: Any, v15: Any, v16: Any, v17: Any) -> _B:
        node = _new(cls)
        s0(node, v0)
        s1(node, v1)
        s2(node, v2)
        s3(node, v3)
        s4(node, v4)
        s5(node, v5)
        s6(node, v6)
        s7(node, v7)
        s8(node, v8)
        s9(node, v9)
        s10(node, v10)
        s11(node, v11)
        s12(node, v12)
        s13(node, v13)
        s14(node, v14)
        s15(node, v15)
        s16(node, v16)
        s17(node, v17)
        return node
    return construct


#: Written-out constructors by field count: Block (8), Paragraph and ListItem (11), Heading (18).
_UNROLLED = {8: _eight, 11: _eleven, 18: _eighteen}
