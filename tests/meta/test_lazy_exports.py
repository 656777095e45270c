"""The lazy exports of ``zonemark`` and ``zonemark.writer``: a literal ``__all__`` a type checker reads, the same
names as the table the package imports from on first use, every name imported for the type checker from the module
the table names, and every name resolving at run time."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "zonemark"
PACKAGES = {"zonemark": SRC / "__init__.py", "zonemark.writer": SRC / "writer" / "__init__.py"}
EXTRA = {"zonemark": {"__version__", "STANDARD_VERSION"}, "zonemark.writer": set()}


def _literal_all(path: Path) -> list[str] | None:
    """The value of ``__all__`` when it is a literal list of strings, else None."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            value = node.value
            if not isinstance(value, ast.List):
                return None
            names = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            return names if len(names) == len(value.elts) else None
    return None


def _type_checking_imports(path: Path, package: str) -> dict[str, str]:
    """name -> module of each ``from .x import name`` inside the ``if TYPE_CHECKING:`` block."""
    found: dict[str, str] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for inner in node.body:
                if isinstance(inner, ast.ImportFrom) and inner.level == 1:
                    for alias in inner.names:
                        found[alias.asname or alias.name] = f"{package}.{inner.module}"
    return found


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_all_is_a_literal_list_equal_to_the_lazy_table(package: str) -> None:
    names = _literal_all(PACKAGES[package])
    assert names is not None, f"{package}.__all__ is not a literal list of strings (a type checker cannot read it)"
    assert len(names) == len(set(names)), "a name twice in __all__"
    module = importlib.import_module(package)
    assert set(names) == set(module._EXPORTS) | EXTRA[package]


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_lazy_name_is_imported_for_the_type_checker_from_its_module(package: str) -> None:
    module = importlib.import_module(package)
    seen = _type_checking_imports(PACKAGES[package], package)
    table = {name: (target if target.startswith("zonemark") else f"{package}.{target}")
             for name, target in module._EXPORTS.items()}
    assert seen == table


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_name_in_all_resolves(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
        assert name in dir(module)
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018 (the attribute lookup is the test)
