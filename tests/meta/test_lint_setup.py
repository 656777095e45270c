"""The lint step (docs/conformance.md W78): ruff pinned in the test extra, configured in pyproject.toml, and run by
``make test`` before mypy and pytest."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _test_recipe() -> list[str]:
    """The command lines of the Makefile's ``test`` target, in order."""
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("test:"))
    recipe: list[str] = []
    for line in lines[start + 1:]:
        if not line.startswith("\t"):
            break
        recipe.append(line.strip())
    return recipe


def test_ruff_is_pinned_in_the_test_extra_and_configured() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "ruff>=0.8,<1" in project["project"]["optional-dependencies"]["test"]
    lint = project["tool"]["ruff"]["lint"]
    assert {"E", "W", "F", "B", "C90"} <= set(lint["select"])
    assert isinstance(lint["mccabe"]["max-complexity"], int)


def test_make_test_runs_ruff_before_mypy_and_pytest() -> None:
    recipe = _test_recipe()
    ruff = next(i for i, c in enumerate(recipe) if re.search(r"\bruff check src tests\b", c))
    mypy = next(i for i, c in enumerate(recipe) if re.search(r"\bmypy\b", c))
    pytest_ = next(i for i, c in enumerate(recipe) if re.search(r"\bpytest\b", c))
    assert ruff < mypy < pytest_
