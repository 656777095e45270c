"""The chat loop's rulings in docs/conformance.md name tests that exist, and every warning code is listed."""

from __future__ import annotations

import re
from pathlib import Path

from zonemark.interchange.notices import CODES

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
SECTION = DOC.split("## The chat loop (§N.18, §N.19)", 1)[1].split("\n## ", 1)[0]


def test_every_cited_test_exists():
    cited = re.findall(r"`(test_[a-z_]+\.py)::(test_\w+)`", SECTION)
    assert len(cited) >= 40
    for file, name in cited:
        source = next((ROOT / "tests").rglob(file)).read_text(encoding="utf-8")
        assert re.search(rf"^def {name}\(", source, re.M), f"{file}::{name} is cited but does not exist"


def test_every_ruling_is_pinned_and_every_pinning_test_is_cited():
    rulings = [int(n) for n in re.findall(r"^\*\*CL(\d+) — ", SECTION, re.M)]
    assert rulings == list(range(1, len(rulings) + 1)) and len(rulings) >= 25
    cited = set(re.findall(r"::(test_cl\d+_\w+)`", SECTION))
    for n in rulings:
        body = SECTION.split(f"**CL{n} — ", 1)[1].split("\n\n", 1)[0]
        assert re.search(rf"::test_cl{n}_\w+`", body), f"CL{n} names no test_cl{n}_ test"
    defined = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        defined |= set(re.findall(r"^def (test_cl\d+_\w+)\(", path.read_text(encoding="utf-8"), re.M))
    assert defined == cited, f"not cited: {sorted(defined - cited)}; cited, not defined: {sorted(cited - defined)}"


def test_every_warning_code_is_listed_with_its_section():
    rows = dict(re.findall(r"^\| `([A-Z_]+)` \| ([^|]+) \|", SECTION, re.M))
    assert {code: section.strip() for code, section in rows.items()} == {c: s for c, (s, _) in CODES.items()}


def test_every_code_the_sources_use_is_in_the_table():
    used = set()
    for path in (ROOT / "src" / "zonemark" / "interchange").glob("*.py"):
        used |= set(re.findall(r'notice\(\s*"([A-Z_]+)"', path.read_text(encoding="utf-8")))
    assert used and used <= set(CODES)
    assert set(CODES) - used == set(), f"codes never used: {sorted(set(CODES) - used)}"
