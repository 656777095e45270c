"""The parsed file: its block tree, diagnostics and derived facts."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from functools import cached_property

from . import gcpause
from .diagnostics import Diagnostic, Severity
from .facts import EntryOwners
from .nodes import Block, Heading, ModuleInfo, NucleusInfo, RegistryInfo
from .scanner import scan_blocks
from .outline import OutlineNode, OutlineTable, headings, outline_table
from .serialize import document_to_dict, serialize


@dataclass(frozen=True, eq=False)
class Document:
    """Result of :func:`zonemark.parse`.

    ``blocks`` partition ``source`` exactly (§13.1).  ``diagnostics`` holds
    every problem in line order; ``errors`` and ``warnings`` split them.
    ``modules``, ``nuclei`` and ``registry`` are derived facts used by the
    layer, the graph and the writer.

    The block tree is built on first use of ``blocks`` (a second scan of ``source``) unless
    the parse was asked for it (``parse(..., tree=True)``): a parse read for its diagnostics
    and facts holds no tree, so its memory stays a small multiple of the text (issue 16).
    """

    source: str
    path: str | None
    file_type: str | None
    title: str | None
    title_line: int | None
    tree: tuple[Block, ...] | None = field(repr=False)  # the blocks, when built (see ``blocks``)
    diagnostics: tuple[Diagnostic, ...] = ()
    modules: Sequence[ModuleInfo] = ()  # a ContainerTable when parsed (B11)
    nuclei: tuple[NucleusInfo, ...] = ()
    registry: RegistryInfo | None = None
    standard_version: str | None = None
    frontmatter: str | None = None
    ignored_lines: frozenset[int] = frozenset()
    h6_owner: Mapping[int, int] = field(default_factory=EntryOwners, repr=False)  # H6 line -> container line (0 = file)
    line_count: int = 0
    surrogate_escaped: bool = False  # decoded from bytes with invalid UTF-8 kept as-is

    @property
    def blocks(self) -> tuple[Block, ...]:
        """The top-level blocks (§13): built on first use and kept."""
        tree = self.tree
        if tree is None:
            with _TREE_LOCK:  # two threads asking at once get one tree
                tree = self.tree
                if tree is None:
                    with gcpause.paused():  # the tree has no cycles (as in the parse)
                        tree = scan_blocks(self.source)
                    object.__setattr__(self, "tree", tree)
        return tree

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.WARNING]

    @property
    def ok(self) -> bool:
        return not any(d.severity is Severity.ERROR for d in self.diagnostics)

    def walk(self) -> Iterator[Block]:
        """Every block, depth first, in document order."""
        for block in self.blocks:
            yield from block.walk()

    def to_dict(self) -> dict[str, Any]:
        """The §13 ``ParsedIllAIraFile`` (camelCase keys)."""
        return document_to_dict(self)

    @cached_property
    def _outline_table(self) -> OutlineTable:
        return outline_table(self)

    @cached_property
    def _outline(self) -> OutlineNode:
        return self._outline_table.tree()

    @cached_property
    def _headings_by_line(self) -> dict[int, Heading]:
        return {h.line: h for h in headings(self)}

    def heading_at(self, line: int) -> Heading | None:
        """The header block on ``line`` (the block of an outline node or entry), or None."""
        return self._headings_by_line.get(line)

    def outline(self) -> OutlineNode:
        """The derived logical tree (containers nested by header level, §7.1.3)."""
        return self._outline

    def outline_table(self) -> OutlineTable:
        """The outline as columns, read as nodes row by row (B21): what ``zonemark outline`` writes out."""
        return self._outline_table

    def serialize(self) -> str:
        return serialize(self)


_TREE_LOCK = threading.Lock()
