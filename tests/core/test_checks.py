"""The cross-block checks: one ordered table of named rules (``core.checks.CHECKS``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from zonemark import parse_file
from zonemark.core.checks import CHECKS, duplicate_declarations, run_checks
from zonemark.core.diagnostics import CATALOGUE
from zonemark.core.scanner import Scanner
from zonemark.core.text import decode

FIXTURES = sorted((Path(__file__).parents[1] / "fixtures").rglob("*.md"))


def scan(text: str) -> Scanner:
    scanner = Scanner(text, None)
    scanner.run()
    return scanner


def test_the_table_names_each_check_once_in_its_running_order():
    assert [c.name for c in CHECKS] == ["list_markers", "line_endings", "duplicate_declarations",
                                        "nucleus_governance", "connection_targets", "registry_states"]
    assert all(c.run.__name__ == c.name for c in CHECKS)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.name)
def test_each_check_cites_its_section_and_reports_catalogue_codes(check):
    assert re.search(r"§\d", check.run.__doc__ or "")
    assert check.codes and all(CATALOGUE[code].scope == "file" for code in check.codes)


def test_checks_report_only_the_codes_the_table_lists_for_them():
    """Over every fixture: what each check reports is among its listed codes, and every listed code is seen."""
    seen: dict[str, set[str]] = {c.name: set() for c in CHECKS}
    for path in FIXTURES:
        scanner = scan(decode(path.read_bytes()))
        for check in CHECKS:
            def report(code, line, col, message, *, related=None, count=None, _name=check.name):
                seen[_name].add(code)
            check.run(scanner.facts, report)
    for check in CHECKS:
        assert seen[check.name] <= set(check.codes), check.name
        assert seen[check.name] == set(check.codes), f"{check.name}: no fixture shows {set(check.codes) - seen[check.name]}"


def test_a_language_server_can_run_one_check_on_a_scan():
    scanner = scan("# R [reminder]\n\n[P1]\n## MODULE 1: A [NUCLEI: 1]\n[/P1]\n[P3]\n## MODULE 1: B [NUCLEI: 1]\n[/P3]\n")
    found = []
    duplicate_declarations(scanner.facts, lambda code, line, col, message, **kw: found.append((code, line, kw)))
    assert found == [("DUPLICATE_BLOCK_CONFLICT_WARNING", 7, {"related": 4})]
    assert scanner.facts.superseded == {7}


def test_run_checks_is_what_parse_reports_after_the_scan():
    path = Path(__file__).parents[1] / "fixtures" / "codes" / "CONTRADICTORY_STATE_REGISTRY"
    for fixture in sorted(path.glob("*.md")):
        scanner = scan(decode(fixture.read_bytes()))
        before = len(scanner.diags)
        run_checks(scanner.facts, scanner.diag)
        from_checks = {(code, line) for code, line, *_ in scanner.diags[before:]}  # (code, line, column, ...)
        assert from_checks <= {(d.code, d.line) for d in parse_file(fixture).diagnostics}
