"""The rulings of docs/conformance.md: numbered in order within their section, each cited test defined."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def conformance() -> str:
    return (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")


def sources_of_tests() -> str:
    """Every test module's text, for looking up a cited test by its ``def``."""
    return "".join(f.read_text(encoding="utf-8") for f in sorted((ROOT / "tests").rglob("test_*.py")))


def assert_rulings_pinned(heading: str, prefix: str) -> None:
    """The section under ``### heading`` numbers its ``**PREFIXn — `` rulings 1, 2, … and every test it
    cites is defined."""
    section = conformance().split(f"### {heading}", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    numbers = re.findall(rf"^\*\*{prefix}(\d+) — ", section, re.M)
    assert numbers == [str(i) for i in range(1, len(numbers) + 1)] and numbers
    here = sources_of_tests()
    for name in re.findall(r"`(test_\w+)`", section):
        assert f"def {name}(" in here, name
