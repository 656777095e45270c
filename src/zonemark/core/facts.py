"""What the scan records about a file for the cross-block checks and the derived facts.

The scanner fills a :class:`Facts` while it reads the lines; the checks of :mod:`.checks`
read it (only :func:`.checks.duplicate_declarations` writes, the lines it supersedes); the
parser then freezes it into the ``Document``'s ``modules``, ``nuclei`` and ``registry``.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

from .nodes import Connection, ModuleInfo, ModuleType, NucleusInfo, RegistryInfo, State
from .rows import RowSequence


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
    CONNECTIONS bullets (§7.6); ``parent_line`` the enclosing container's line.  ``row`` is its
    row of the :class:`ContainerTable` that keeps it (-1: none keeps it); the scanner hands the
    table what it learns after the header (:meth:`ContainerTable.keep`), so that only the open
    containers live as objects; ``child_names`` the names of the topics and sub-topics under it, while it
    is open (DUPLICATE_CONTAINER_NAME).
    """

    __slots__ = ("type", "keyword", "id", "name", "level", "line", "plevel", "nuclei", "nuclei_line",
                 "nuclei_column", "state", "permanent", "state_line", "connections", "parent_line", "row",
                 "child_names")

    def __init__(self, type_: str, keyword: str | None, id_: str | None, name: str | None, level: int, line: int,
                 plevel: int | None, parent_line: int | None, row: int = -1) -> None:
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
        self.row = row
        self.child_names: dict[str | None, int] | None = None  # its topics' and sub-topics' names -> line


#: The container types of a table row, by code (§7.1).
_TYPES: tuple[ModuleType, ...] = ("module", "sub_module")


class ContainerTable(RowSequence[ModuleInfo]):
    """The modules, topics, sub-topics and sub-modules of a file (``Document.modules``), in document order.

    One row per container in integer and pointer columns; what only some containers have (a ``[NUCLEI: ...]``
    tag, a STATE, CONNECTIONS) in small maps by row.  A :class:`ModuleInfo` is made when a row is read: a file
    of 100,000 headers held 100,000 of them (about 144 bytes and two int objects each, 4.4x the text) and as many
    scanner objects before them (B11).  Equal to any sequence of the same :class:`ModuleInfo` values."""

    __slots__ = ("_types", "_keyword_codes", "_keywords", "_ids", "_names", "_levels", "_lines", "_plevels",
                 "_parents", "_nuclei", "_states", "_connections", "_superseded")

    def __init__(self) -> None:
        self._types = array("b")
        self._keyword_codes = array("b")
        self._keywords: list[str | None] = [None]  # code -> keyword
        self._ids: list[str | None] = []
        self._names: list[str] = []
        self._levels = array("b")
        self._lines = array("q")
        self._plevels = array("b")  # -1: outside every zone
        self._parents = array("q")  # -1: no enclosing container
        self._nuclei: dict[int, tuple[tuple[int, ...], int, int]] = {}  # row -> (ids, line, column)
        self._states: dict[int, tuple[State, bool, int]] = {}  # row -> (state, permanent, line)
        self._connections: dict[int, Sequence[Connection]] = {}
        self._superseded: frozenset[int] | set[int] = frozenset()  # container lines ignored (§5.5 Invariant 4)

    def add(self, type_: ModuleType, keyword: str | None, id_: str | None, name: str | None, level: int,
            line: int, plevel: int | None, parent_line: int | None) -> Container:
        """A new last row, and the scanner's object for it while it is open."""
        if self._lines and line <= self._lines[-1]:
            raise ValueError(f"container line {line} is not after line {self._lines[-1]}")
        keywords = self._keywords
        try:
            code = keywords.index(keyword)
        except ValueError:
            code = len(keywords)
            keywords.append(keyword)
        self._types.append(_TYPES.index(type_))
        self._keyword_codes.append(code)
        self._ids.append(id_)
        self._names.append(name or "")
        self._levels.append(level)
        self._lines.append(line)
        self._plevels.append(-1 if plevel is None else plevel)
        self._parents.append(-1 if parent_line is None else parent_line)
        return Container(type_, keywords[code], id_, name, level, line, plevel, parent_line, len(self._lines) - 1)

    def keep(self, c: Container) -> None:
        """What the scanner learnt of ``c`` after its header: its tag, STATE and CONNECTIONS (kept by row)."""
        if c.row < 0:
            return
        if c.nuclei is not None:
            self._nuclei[c.row] = (c.nuclei, c.nuclei_line, c.nuclei_column)
        if c.state is not None and c.state_line is not None:
            self._states[c.row] = (cast(State, c.state), c.permanent, c.state_line)
        if c.connections:
            self._connections[c.row] = c.connections  # the scanner's list: its later bullets are seen

    def freeze(self, superseded: set[int]) -> None:
        """The scan is over: ``superseded`` holds the lines §5.5 Invariant 4 ignores (the checks' verdict)."""
        lines = self._lines
        self._superseded = frozenset(ln for ln in superseded if self.row_of(ln) >= 0) if lines else frozenset()
        self._connections = {row: tuple(conns) for row, conns in self._connections.items()}

    # -- reading --------------------------------------------------------------------------------------------
    def row_of(self, line: int) -> int:
        """The row of the container declared on ``line``, or -1."""
        lines = self._lines
        i = bisect_left(lines, line)
        return i if i < len(lines) and lines[i] == line else -1

    def line(self, row: int) -> int:
        return self._lines[row]

    def declared_module(self, row: int) -> bool:
        """Whether the row is a ``## MODULE`` (not a topic, sub-topic or sub-module)."""
        return self._types[row] == 0 and self._keywords[self._keyword_codes[row]] is None

    def id_of(self, row: int) -> str | None:
        return self._ids[row]

    def name_of(self, row: int) -> str:
        return self._names[row]

    def nuclei_of(self, row: int) -> tuple[tuple[int, ...], int, int] | None:
        """The row's ``[NUCLEI: ...]`` ids and where the tag is (line, column), or None."""
        return self._nuclei.get(row)

    def connections_of(self, row: int) -> Sequence[Connection]:
        return self._connections.get(row, ())

    def rows_with_connections(self) -> list[int]:
        """The rows that have CONNECTIONS bullets (§7.6), in document order."""
        return sorted(self._connections)

    def permanent_ids(self, superseded: set[int]) -> set[str]:
        """The ids of the containers whose STATE is permanent (§7.3.1), but those on a ``superseded`` line."""
        lines = self._lines
        return {i for row, (_, permanent, _) in self._states.items()
                if permanent and (i := self._ids[row]) is not None and lines[row] not in superseded}

    def _item(self, row: int) -> ModuleInfo:
        line = self._lines[row]
        nuclei = self._nuclei.get(row)
        state = self._states.get(row)
        plevel = self._plevels[row]
        parent = self._parents[row]
        return ModuleInfo(_TYPES[self._types[row]], self._keywords[self._keyword_codes[row]], self._ids[row],
                          self._names[row], self._levels[row], line, None if plevel < 0 else plevel,
                          None if nuclei is None else nuclei[0], None if state is None else state[0],
                          False if state is None else state[1], None if state is None else state[2],
                          tuple(self._connections.get(row, ())), line in self._superseded,
                          None if parent < 0 else parent)

    def __len__(self) -> int:
        return len(self._lines)


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
    containers: ContainerTable = field(default_factory=ContainerTable)
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

    def module_infos(self) -> ContainerTable:
        """The containers, frozen (the parser calls it once, after the checks)."""
        table, self.containers = self.containers, ContainerTable()
        table.freeze(self.superseded)
        return table

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
