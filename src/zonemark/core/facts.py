"""What the scan records about a file for the cross-block checks and the derived facts.

The scanner fills a :class:`Facts` while it reads the lines; the checks of :mod:`.checks`
read it (only :func:`.checks.duplicate_declarations` writes, the lines it supersedes); the
parser then freezes it into the ``Document``'s ``modules``, ``nuclei`` and ``registry``.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import cast

from .nodes import Connection, ModuleInfo, ModuleType, NucleusInfo, RegistryInfo, State


class EntryOwners(Mapping[int, int]):
    """Each H6 entry's line -> the line of the container that owns it (0: the file, §7.1.3), in line order.

    Two integer arrays, looked up by bisection: a dict of 100,000 entries held a hash table and two int
    objects per entry, about a tenth of a file of short entries at the parse's peak (B9)."""

    __slots__ = ("_lines", "_owners")

    def __init__(self) -> None:
        self._lines = array("q")
        self._owners = array("q")

    def add(self, line: int, owner: int) -> None:
        """The entry on ``line``, after every entry added so far (the scan reads the lines in order)."""
        if self._lines and line <= self._lines[-1]:
            raise ValueError(f"entry line {line} is not after line {self._lines[-1]}")
        self._lines.append(line)
        self._owners.append(owner)

    def _at(self, line: object) -> int:
        if not isinstance(line, int):
            return -1
        i = bisect_left(self._lines, line)
        return i if i < len(self._lines) and self._lines[i] == line else -1

    def __getitem__(self, line: int) -> int:
        i = self._at(line)
        if i < 0:
            raise KeyError(line)
        return self._owners[i]

    def __contains__(self, line: object) -> bool:
        return self._at(line) >= 0

    def __iter__(self) -> Iterator[int]:
        return iter(self._lines)

    def __len__(self) -> int:
        return len(self._lines)

    def __repr__(self) -> str:
        return f"EntryOwners({dict(self)!r})"


class Container:
    """A declared container (module, topic, sub-topic, sub-module or nucleus) while scanning.

    ``nuclei_line``/``nuclei_column`` locate its ``[NUCLEI: ...]`` tag (§7.4.4); ``state``,
    ``permanent`` and ``state_line`` its declared STATE (§7.2); ``connections`` its
    CONNECTIONS bullets (§7.6); ``parent_line`` the enclosing container's line.
    """

    __slots__ = ("type", "keyword", "id", "name", "level", "line", "plevel", "nuclei", "nuclei_line",
                 "nuclei_column", "state", "permanent", "state_line", "connections", "parent_line")

    def __init__(self, type_: str, keyword: str | None, id_: str | None, name: str | None, level: int, line: int,
                 plevel: int | None, parent_line: int | None) -> None:
        self.type = type_
        self.keyword = keyword
        self.id = id_
        self.name = name
        self.level = level
        self.line = line
        self.plevel = plevel
        self.nuclei: tuple[int, ...] | None = None
        self.nuclei_line = line
        self.nuclei_column = 1
        self.state: str | None = None
        self.permanent = False
        self.state_line: int | None = None
        self.connections: list[Connection] | tuple[()] = ()  # a list from its first bullet on
        self.parent_line = parent_line


@dataclass(frozen=True, slots=True)
class Declaration:
    """One declaration that §5.5 Invariant 4 compares across zones: where it is and its zone's level."""

    plevel: int | None
    line: int
    column: int


#: A list item as the §8.1 marker check sees it: (list level, marker, line, column).
ListItemMark = tuple[int, str, int, int]


@dataclass(eq=False)
class Facts:
    """Everything the cross-block checks and the derived facts need from one scan."""

    #: Modules, topics, sub-topics and sub-modules, in document order.
    containers: list[Container] = field(default_factory=list)
    #: ``## NUCLEUS n:`` declarations, in document order.
    nuclei: list[Container] = field(default_factory=list)
    #: ('module', id), ('nucleus', id) or ('rules', '') -> its declarations, in document order.
    declarations: dict[tuple[str, str], list[Declaration]] = field(default_factory=dict)
    #: The file's ``## MODULE_STATE_REGISTRY:`` (line, zone level), the first one only.
    registry: tuple[int, int | None] | None = None
    #: (module id, 'active' | 'inactive', line) for each id of the registry's entries.
    registry_entries: list[tuple[str, str, int]] = field(default_factory=list)
    #: The bullet items of each list (ordered items are not marked), list by list; lists whose
    #: every bullet has its level's canonical marker are left out (§8.1 has nothing to say about them).
    list_runs: list[list[ListItemMark]] = field(default_factory=list)
    #: First line ending in ``\r\n`` and how many do; first bare ``\r`` (line, column) and how many lines hold one.
    crlf_first: int | None = None
    crlf_count: int = 0
    bare_cr_first: tuple[int, int] | None = None
    bare_cr_count: int = 0
    #: Lines of declarations that lose under §5.5 Invariant 4 (written by the duplicates check).
    superseded: set[int] = field(default_factory=set)

    def module_infos(self) -> tuple[ModuleInfo, ...]:
        """The frozen containers; it empties ``containers``, each freed as soon as it is frozen, so
        that a file of many containers does not hold both forms at once (the parser calls it once)."""
        superseded = self.superseded
        containers, self.containers = self.containers, []
        containers.reverse()
        out: list[ModuleInfo] = []
        while containers:
            c = containers.pop()
            # the scanner files containers of these two types here and states its patterns match
            out.append(ModuleInfo(cast(ModuleType, c.type), c.keyword, c.id, c.name or "", c.level, c.line,
                                  c.plevel, c.nuclei, cast("State | None", c.state), c.permanent, c.state_line,
                                  tuple(c.connections), c.line in superseded, c.parent_line))
        return tuple(out)

    def nucleus_infos(self) -> tuple[NucleusInfo, ...]:
        superseded = self.superseded
        return tuple(NucleusInfo(int(c.id or 0), c.name or "", c.line, c.plevel, tuple(c.connections),
                                 c.line in superseded) for c in self.nuclei)

    def registry_info(self) -> RegistryInfo | None:
        if self.registry is None:
            return None
        line, plevel = self.registry
        entries = self.registry_entries
        return RegistryInfo(line, plevel, tuple(m for m, s, _ in entries if s == "active"),
                            tuple(m for m, s, _ in entries if s == "inactive"), tuple(entries))
