"""One fixture pair per diagnostic code (§3-§15, §N.19.3.5): the conformance suite.

Each ``tests/fixtures/codes/<CODE>/{fail,pass}_<what>.md`` has a sidecar
``<same name>.expect.json`` listing EVERY diagnostic (errors and warnings) the
file must produce as ``{"code", "line", "column"}``.  A fail fixture reports
its code; a pass fixture is a near miss that must not.  Expectations are
written from the spec, not from the parser's output.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zonemark import CATALOGUE, parse_file

CODES_DIR = Path(__file__).parents[1] / "fixtures" / "codes"
FIXTURES = sorted(CODES_DIR.glob("*/*.md"))


def _expected(fixture: Path) -> list[tuple[str, int, int]]:
    sidecar = fixture.with_name(fixture.name[: -len(".md")] + ".expect.json")
    items = json.loads(sidecar.read_text(encoding="utf-8"))
    return sorted((d["code"], d["line"], d["column"]) for d in items)


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fixture_reports_exactly_the_expected_diagnostics(fixture: Path):
    code = fixture.parent.name
    expected = _expected(fixture)
    doc = parse_file(fixture)
    actual = sorted((d.code, d.line, d.column) for d in doc.diagnostics)
    assert actual == expected
    codes = {c for c, _, _ in expected}
    if fixture.name.startswith("fail_"):
        assert code in codes, "a fail fixture must expect its own code"
    else:
        assert fixture.name.startswith("pass_"), fixture.name
        assert code not in codes, "a pass fixture must not expect its own code"


def test_every_fixture_has_a_sidecar():
    for fixture in FIXTURES:
        assert fixture.with_name(fixture.name[: -len(".md")] + ".expect.json").is_file(), fixture


def test_every_fixture_folder_is_a_catalogue_code():
    assert {p.name for p in CODES_DIR.iterdir() if p.is_dir()} <= set(CATALOGUE)


@pytest.mark.parametrize("code", sorted(c for c, info in CATALOGUE.items() if info.scope == "file"))
def test_every_file_scope_code_has_a_failing_and_a_passing_fixture(code: str):
    names = [p.name for p in (CODES_DIR / code).glob("*.md")]
    assert any(n.startswith("fail_") for n in names), f"{code}: no fail_ fixture"
    assert any(n.startswith("pass_") for n in names), f"{code}: no pass_ fixture"


#: §13: the codes the spec lists under ParserError and under ParserWarning.
SPEC_ERRORS = ["MISSING_FILE_TYPE", "UNCLOSED_PERMISSION_BLOCK", "MULTIPLE_FILE_TYPES", "MISMATCHED_PERMISSION_BLOCK",
               "NESTED_PERMISSION_BLOCK", "UNPROTECTED_LOGICAL_CONTENT", "DUPLICATE_BLOCK_CONFLICT",
               "INVALID_HEADER_IN_WRITABLE_ZONE"]
SPEC_WARNINGS = ["HIERARCHY_VIOLATION", "UNKNOWN_ANCHOR_KEYWORD", "DEPRECATED_ITALIAN_KEYWORD", "UNKNOWN_RULE_PREFIX",
                 "DUPLICATE_BLOCK_CONFLICT_WARNING", "UNRESOLVED_NUCLEUS_REFERENCE", "UNGOVERNED_MODULE",
                 "PERMANENT_STATE_OVERRIDE_ATTEMPT", "SUBTOPIC_LEVEL_MISMATCH", "SUBTOPIC_TOO_DEEP",
                 "SUBTOPIC_WITHOUT_TOPIC", "SUBTOPIC_OUTSIDE_EXTERNAL_MEMORY", "UNIFORM_LIST_MARKER_WARNING"]


@pytest.mark.parametrize("code", SPEC_ERRORS + SPEC_WARNINGS)
def test_spec_named_codes_have_the_spec_severity(code: str):
    """§4.2 (hierarchy is a warning), §7.1.3 (sub-topic problems are warnings, never errors), §13."""
    info = CATALOGUE[code]
    assert info.origin == "spec"
    assert info.severity.value == ("error" if code in SPEC_ERRORS else "warning")
    fixtures = sorted((CODES_DIR / code).glob("fail_*.md"))
    doc = parse_file(fixtures[0])
    assert {d.severity.value for d in doc.diagnostics if d.code == code} == {info.severity.value}


def test_musts_table_names_only_existing_tests():
    """docs/musts.md maps every MUST/SHOULD of the spec to tests: every id it names must exist."""
    import re

    root = Path(__file__).parents[2]
    table = (root / "docs" / "musts.md").read_text(encoding="utf-8")
    ids = re.findall(r"`(tests/(?:\w+/)?test_\w+\.py::test_\w+(?:\[[^`]*\])?)`", table)
    assert len(ids) > 100
    for node in ids:
        path, _, rest = node.partition("::")
        name, _, param = rest.partition("[")
        assert re.search(rf"^def {name}\(", (root / path).read_text(encoding="utf-8"), re.M), node
        if name == "test_fixture_reports_exactly_the_expected_diagnostics":
            assert (CODES_DIR / (param[:-1] + ".md")).is_file(), node
    rows = [line for line in table.splitlines() if re.match(r"\| \d+ \|", line)]
    assert all("`tests/" in line for line in rows), "every row names at least one test"
