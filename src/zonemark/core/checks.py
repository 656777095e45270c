"""Cross-block checks: the rules that need more of the file than the line being read.

Each check is a function ``check(facts, report)`` over the :class:`~.facts.Facts` of one
scan; it calls ``report(code, line, column, message, related=..., count=...)`` for each
problem.  :data:`CHECKS` lists them in the order they run — the order is part of the
output (diagnostics on the same line and column keep the order they were reported in) —
with the codes each may report, so a language server can list them or run them itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from .facts import Facts


class Report(Protocol):
    def __call__(self, code: str, line: int, col: int, message: str, *, related: int | None = None,
                 count: int | None = None) -> None: ...


def list_markers(facts: Facts, report: Report) -> None:
    """§8, §8.1: each list level has its marker (``*`` root, ``+`` second, ``-`` third), one per level.

    A list with one marker at several levels gets one UNIFORM_LIST_MARKER_WARNING (its
    hierarchy comes from the indentation); otherwise each level reports its first item
    that differs from the level's first marker and its first item that is not the
    canonical marker.
    """
    for items in facts.list_runs:
        if all(lv <= 3 and mk == _CANONICAL_MARKERS[lv] for lv, mk, _, _ in items):
            continue  # every item has its level's marker: nothing to report
        markers = {mk for _, mk, _, _ in items}
        levels = {lv for lv, _, _, _ in items}
        if len(markers) == 1 and len(levels) > 1:
            lv, mk, ln, col = items[0]
            report("UNIFORM_LIST_MARKER_WARNING", ln, col,
                   f"every level of this list uses '{mk}': hierarchy inferred from indentation"
                   " (canonical markers: * + -)")
            continue
        by_level: dict[int, list[tuple[str, int, int]]] = {}
        for lv, mk, ln, col in items:
            by_level.setdefault(lv, []).append((mk, ln, col))
        for lv, entries in sorted(by_level.items()):
            if len({mk for mk, _, _ in entries}) > 1:
                first = entries[0][0]
                for mk, ln, col in entries:
                    if mk != first:
                        report("MIXED_LIST_MARKERS", ln, col,
                               f"level-{lv} items of this list use both '{first}' and '{mk}'")
                        break
            want = _CANONICAL_MARKERS.get(lv)
            if want is None:
                continue
            for mk, ln, col in entries:
                if mk != want:
                    report("LIST_MARKER_MISMATCH", ln, col,
                           f"'{mk}' at list level {lv}: the level-{lv} marker is '{want}'")
                    break


_CANONICAL_MARKERS = {1: "*", 2: "+", 3: "-"}


def line_endings(facts: Facts, report: Report) -> None:
    """§1: lines end in ``\\n`` only — once per file for ``\\r\\n`` endings and once for bare ``\\r``, with counts."""
    if facts.crlf_first is not None:
        n = facts.crlf_count
        report("CRLF_LINE_ENDING", facts.crlf_first, 1,
               f"\\r\\n line ending ({n} line{'s' if n != 1 else ''} in the file); files must use \\n", count=n)
    if facts.bare_cr_first is not None:
        n = facts.bare_cr_count
        report("CARRIAGE_RETURN", facts.bare_cr_first[0], facts.bare_cr_first[1],
               f"bare carriage return inside a line ({n} line{'s' if n != 1 else ''} in the file)", count=n)


def duplicate_declarations(facts: Facts, report: Report) -> None:
    """§5.4, §5.5 Invariant 4: one MODULE id, NUCLEUS id or ``## RULES:`` section per file; lower n wins.

    The declaration in the lowest-numbered zone (the first one among equals) is used; each
    other one is ignored (its line goes to ``facts.superseded``) and reported: an error when
    it ties with the winner's level, a warning when it is in a higher-numbered zone.
    """
    for (kind, ident), decls in facts.declarations.items():
        if len(decls) < 2:
            continue
        what = {"module": f"MODULE {ident}", "nucleus": f"NUCLEUS {ident}", "rules": "RULES section"}[kind]
        rank = sorted(decls, key=lambda d: (d.plevel if d.plevel is not None else 6, d.line))
        win = rank[0]
        win_level = win.plevel if win.plevel is not None else 6
        for d in rank[1:]:
            facts.superseded.add(d.line)
            if (d.plevel if d.plevel is not None else 6) == win_level:
                report("DUPLICATE_BLOCK_CONFLICT", d.line, d.column,
                       f"{what} is declared again at the same permission level (first on line {win.line});"
                       " this declaration is ignored", related=win.line)
            else:
                report("DUPLICATE_BLOCK_CONFLICT_WARNING", d.line, d.column,
                       f"{what} in [P{d.plevel if d.plevel is not None else '-'}] duplicates the [P{win.plevel}]"
                       f" declaration on line {win.line}: the lower-n version is used, this one is ignored",
                       related=win.line)


def nucleus_governance(facts: Facts, report: Report) -> None:
    """§7.4.4: every ``## MODULE`` names its governing nuclei in ``[NUCLEI: ...]``, each declared in the file.

    Modules ignored under Invariant 4 are not checked (run after :func:`duplicate_declarations`).
    """
    nucleus_ids = {int(n.id or 0) for n in facts.nuclei}
    superseded = facts.superseded
    table = facts.containers
    for row in range(len(table)):
        line = table.line(row)
        if not table.declared_module(row) or line in superseded:
            continue
        tag = table.nuclei_of(row)
        if tag is None:
            report("UNGOVERNED_MODULE", line, 1,
                   f"MODULE {table.id_of(row) or table.name_of(row)} has no [NUCLEI: ...] tag: it is ungoverned")
            continue
        ids, tag_line, tag_column = tag
        for nid in ids:
            if nid not in nucleus_ids:
                report("UNRESOLVED_NUCLEUS_REFERENCE", tag_line, tag_column,
                       f"nucleus {nid} is not declared in this file")


def connection_targets(facts: Facts, report: Report) -> None:
    """§7.6: a ``* MODULE <id>`` / ``* NUCLEUS <n>`` edge to a target the file does not declare warns.

    "Non-existent target => non-blocking warning, no edge." Only declared MODULE ids are
    targets (topics and sub-topics carry no address, §7.1.2); nucleus ids compare as numbers.
    A layer looks the target up in every file instead (``LAYER_UNRESOLVED_CONNECTION``).
    """
    table = facts.containers
    modules = {i for row in range(len(table)) if table.declared_module(row) and (i := table.id_of(row)) is not None}
    nuclei = {int(n.id) for n in facts.nuclei if n.id is not None and n.id.isdigit()}
    superseded = facts.superseded
    owners = [(table.line(row), table.connections_of(row)) for row in table.rows_with_connections()]
    owners += [(n.line, n.connections) for n in facts.nuclei]
    for line, connections in owners:
        if line in superseded:
            continue  # ignored under Invariant 4: draws nothing (run after duplicate_declarations)
        for conn in connections:
            if conn.kind == "module":
                if conn.target in modules:
                    continue
            elif conn.target.isdigit() and int(conn.target) in nuclei:
                continue
            report("UNRESOLVED_CONNECTION", conn.line, 1,
                   f"{conn.kind.upper()} {conn.target} is not declared in this file: no edge")


def registry_states(facts: Facts, report: Report) -> None:
    """§7.3.1: registry entries never override a ``- permanent`` STATE, and name a module once.

    An entry for a module whose declared STATE is permanent is ignored; a module listed
    both ACTIVE and INACTIVE has both entries ignored (reported once, at the second).
    Modules ignored under Invariant 4 do not count (run after :func:`duplicate_declarations`).
    """
    superseded = facts.superseded
    permanent = facts.containers.permanent_ids(superseded)
    first_state: dict[str, tuple[str, int]] = {}
    for mid, state, ln in facts.registry_entries:
        if mid in permanent:
            report("PERMANENT_STATE_OVERRIDE_ATTEMPT", ln, 1,
                   f"module {mid} has a permanent STATE: its registry entry is ignored")
            continue
        seen = first_state.setdefault(mid, (state, ln))
        if seen[0] != state and seen[0] != "reported":
            first_state[mid] = ("reported", ln)
            report("CONTRADICTORY_STATE_REGISTRY", ln, 1,
                   f"module {mid} is listed as both {seen[0].upper()} (line {seen[1]}) and {state.upper()}:"
                   " both entries are ignored", related=seen[1])


@dataclass(frozen=True, slots=True)
class Check:
    """A named cross-block check and the codes it may report."""

    name: str
    codes: tuple[str, ...]
    run: Callable[[Facts, Report], None]


#: Every cross-block check, in the order the parser runs them.
CHECKS: tuple[Check, ...] = (
    Check("list_markers", ("UNIFORM_LIST_MARKER_WARNING", "MIXED_LIST_MARKERS", "LIST_MARKER_MISMATCH"), list_markers),
    Check("line_endings", ("CRLF_LINE_ENDING", "CARRIAGE_RETURN"), line_endings),
    Check("duplicate_declarations", ("DUPLICATE_BLOCK_CONFLICT", "DUPLICATE_BLOCK_CONFLICT_WARNING"),
          duplicate_declarations),
    Check("nucleus_governance", ("UNGOVERNED_MODULE", "UNRESOLVED_NUCLEUS_REFERENCE"), nucleus_governance),
    Check("connection_targets", ("UNRESOLVED_CONNECTION",), connection_targets),
    Check("registry_states", ("PERMANENT_STATE_OVERRIDE_ATTEMPT", "CONTRADICTORY_STATE_REGISTRY"), registry_states),
)


def run_checks(facts: Facts, report: Report) -> None:
    """Run every check of :data:`CHECKS` in order."""
    for check in CHECKS:
        check.run(facts, report)
