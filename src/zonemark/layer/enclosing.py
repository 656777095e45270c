"""Which container a line of a file belongs to (§7.1.3, §2.3), for saying *where* a change landed.

A line belongs to the innermost header still open at it — headers nest by level and a zone
boundary closes nothing (§2.3), the rule the outline and the writer follow — and, among the
headers open there, to the nearest one that is a *container* (a module, sub-module, nucleus,
topic, sub-topic or plain H2 section, as :mod:`zonemark.layer.containers` lists them) or the
``MODULE_STATE_REGISTRY`` (§7.3.1).  A line under none of them belongs to the file itself.

The review page uses it to say which container a write of the history touched (the first
changed line of the version written) and which container a proposal's zone pairs with.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.document import Document
from ..core.nodes import Heading
from ..core.outline import headings
from .containers import ContainerSummary, list_containers


@dataclass(frozen=True)
class Enclosing:
    """The container a line belongs to.

    ``kind``: ``topic``, ``subtopic``, ``module``, ``sub_module``, ``nucleus``, ``section``,
    ``registry`` (the MODULE_STATE_REGISTRY) or ``file`` (no container open at the line).
    ``address`` names it to the writer's ``--container`` (None for the registry and the file);
    ``label`` is what a person reads; ``line`` is its header line (the title line for the file).
    """

    kind: str
    label: str
    address: str | None
    line: int


def enclosing_container(doc: Document, line: int) -> Enclosing:
    """The container that holds ``line`` of ``doc`` (see the module docstring)."""
    return enclosing_containers(doc, [line])[0]


def enclosing_containers(doc: Document, lines: list[int]) -> list[Enclosing]:
    """The container of each of ``lines`` of ``doc``, in their order: one walk of the headers for them all."""
    containers = {c.line: c for c in list_containers(doc)}
    registries = {node.line for node in doc.outline().walk() if node.kind == "state_registry"}
    title = doc.title or ""
    in_file = Enclosing("file", title or "(the file)", None, doc.title_line or 1)
    found: dict[int, Enclosing] = {}
    wanted = sorted(set(lines))
    k = 0
    open_headers: list[Heading] = []

    def owner() -> Enclosing:
        for heading in reversed(open_headers):
            summary = containers.get(heading.line)
            if summary is not None:
                return Enclosing(summary.kind, _label(summary), summary.address, summary.line)
            if heading.line in registries:
                return Enclosing("registry", "MODULE_STATE_REGISTRY", None, heading.line)
        return in_file

    for heading in headings(doc):
        while k < len(wanted) and wanted[k] < heading.line:
            found[wanted[k]] = owner()
            k += 1
        if k == len(wanted):
            break
        if heading.refused or heading.level >= 6:
            continue
        while open_headers and open_headers[-1].level >= heading.level:
            open_headers.pop()
        open_headers.append(heading)
    for line in wanted[k:]:
        found[line] = owner()
    return [found[line] for line in lines]


def _label(summary: ContainerSummary) -> str:
    """``MODULE 042: NAME``, ``NUCLEUS 1: NAME``, ``TOPIC: Name``, ``SUBTOPIC1: Name``, or a section's title."""
    if summary.kind == "section" or not summary.keyword:
        return summary.name
    if summary.id and summary.kind in ("module", "sub_module", "nucleus"):
        return f"{summary.keyword} {summary.id}: {summary.name}"
    return f"{summary.keyword}: {summary.name}"


__all__ = ["Enclosing", "enclosing_container", "enclosing_containers"]
