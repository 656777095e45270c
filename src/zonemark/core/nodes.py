"""The lossless block tree (§13) and the facts derived from it.

Every block keeps the offsets of its exact source text: ``raw_markdown`` is a
slice of the document's source, so ``serialize(parse(x)) == x`` holds by
construction (§13.1).  The top-level blocks partition the whole text; the
children of a block are ordered, non-overlapping sub-slices of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields

from . import syntax as sx

_TRAILING_BLANK = re.compile(r"(?:\n[ \t\r]*)+\Z")


#: The §13 block types.
BLOCK_TYPES = (
    "module", "sub_module", "section", "rule", "log", "attention_anchor", "quote", "list",
    "paragraph", "permission_block", "separator", "nucleus", "state_registry",
)


@dataclass(frozen=True, slots=True, eq=False)
class Block:
    """A block of the §13 tree. ``line``/``end_line`` are 1-based and inclusive."""

    type: str
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
        """The block's own text, without trailing blank lines."""
        return _TRAILING_BLANK.sub("", self.source[self.start:self.end])

    def walk(self):
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

    kind: str  # "module" or "nucleus"
    target: str
    line: int


@dataclass(frozen=True, slots=True)
class ModuleInfo:
    """A declared container (module, topic, sub-topic, sub-module) and its derived facts."""

    type: str  # module | sub_module
    keyword: str | None  # None (MODULE), 'TOPIC', 'SUBTOPIC'
    id: str | None
    name: str
    level: int
    line: int
    permission_level: int | None
    assigned_nuclei: tuple[int, ...] | None
    declared_state: str | None  # 'active' | 'inactive' | None
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


def fast_constructor(cls):
    """A positional constructor for a frozen, slotted node class, for the parser.

    It gives exactly what ``cls(*values)`` gives (same fields, same order, tested),
    without the per-field ``object.__setattr__`` round trip of a frozen
    dataclass's ``__init__`` — the parser builds ~10^5 nodes per 10 MB, and that
    round trip was a third of the parse time.
    """
    setters = tuple(getattr(cls, f.name).__set__ for f in fields(cls))
    new = object.__new__

    def construct(*values):
        if len(values) != len(setters):
            raise TypeError(f"{cls.__name__} takes {len(setters)} values, got {len(values)}")
        node = new(cls)
        for set_field, value in zip(setters, values):
            set_field(node, value)
        return node

    construct.__name__ = f"new_{cls.__name__.lower()}"
    return construct
