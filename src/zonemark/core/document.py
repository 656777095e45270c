"""The parsed file: its block tree, diagnostics and derived facts."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from functools import cached_property

from .diagnostics import Diagnostic, Severity
from .nodes import Block, ModuleInfo, NucleusInfo, RegistryInfo
from .outline import OutlineNode, build_outline
from .serialize import document_to_dict, serialize


@dataclass(frozen=True, eq=False)
class Document:
    """Result of :func:`zonemark.parse`.

    ``blocks`` partition ``source`` exactly (§13.1).  ``diagnostics`` holds
    every problem in line order; ``errors`` and ``warnings`` split them.
    ``modules``, ``nuclei`` and ``registry`` are derived facts used by the
    layer, the graph and the writer.
    """

    source: str
    path: str | None
    file_type: str | None
    title: str | None
    title_line: int | None
    blocks: tuple[Block, ...]
    diagnostics: tuple[Diagnostic, ...]
    modules: tuple[ModuleInfo, ...] = ()
    nuclei: tuple[NucleusInfo, ...] = ()
    registry: RegistryInfo | None = None
    standard_version: str | None = None
    frontmatter: str | None = None
    ignored_lines: frozenset[int] = frozenset()
    h6_owner: dict[int, int] = field(default_factory=dict, repr=False)  # H6 line -> container line (0 = file)
    line_count: int = 0
    surrogate_escaped: bool = False  # decoded from bytes with invalid UTF-8 kept as-is

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
    def _outline(self) -> OutlineNode:
        return build_outline(self)

    def outline(self) -> OutlineNode:
        """The derived logical tree (containers nested by header level, §7.1.3)."""
        return self._outline

    def serialize(self) -> str:
        return serialize(self)
