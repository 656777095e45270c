"""The package layout of docs/architecture.md, checked against the imports of every module.

Imports flow one way: core <- layer <- writer <- services <- faces.  A face never imports
another face; services may use each other, but the packages form no cycle; nothing but the
root's lazy export table names a package above its own.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "zonemark"
DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"

RANK = {"core": 0, "layer": 1, "writer": 2, "render": 3, "interchange": 3, "search": 3, "context": 3, "gitlayer": 3,
        "cli": 4, "mcp": 4, "lsp": 4, "review": 4, "access": 3}
FACES = {name for name, rank in RANK.items() if rank == 4}
ENTRY_POINTS = {"__main__": "cli"}  # ``python -m zonemark`` runs the CLI
#: The CLI starts another face's server (``zonemark mcp LAYER``, ``zonemark lsp``) through that face's ``serve``
#: module, and imports nothing else of it.
LAUNCHER = "cli"


def _package_of(module: str) -> str | None:
    """'zonemark.core.parser' -> 'core'; the root package itself -> None."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "zonemark" else None


def _modules():
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def _imports(module: str, path: Path):
    """Every zonemark module ``module`` imports (top level, in functions, or for type checking)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("zonemark"):
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("zonemark"):
                for alias in node.names:  # 'from .core import parser' imports a module, 'from . import x' a name
                    sub = f"{target}.{alias.name}"
                    yield (sub if _is_module(sub) else target), node.lineno


def _is_module(name: str) -> bool:
    path = SRC.parent.joinpath(*name.split("."))
    return path.is_dir() or path.with_suffix(".py").is_file()


def _edges():
    for module, path in _modules():
        source = _package_of(module)
        for target, line in _imports(module, path):
            yield module, source, target, _package_of(target), f"{path.relative_to(SRC.parent)}:{line}"


def test_every_package_has_a_rank():
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages <= set(RANK), f"add {sorted(packages - set(RANK))} to RANK and to docs/architecture.md"
    modules = {p.stem for p in SRC.glob("*.py")} - {"__init__"}
    assert modules <= set(ENTRY_POINTS), f"{sorted(modules - set(ENTRY_POINTS))}: new code goes in a package"


def test_imports_flow_downward_only():
    wrong = []
    for _module, source, target, dest, where in _edges():
        if source is None or dest is None or source == dest:
            continue  # the root package (version, lazy export table) is imported by all
        if source in ENTRY_POINTS:
            assert dest == ENTRY_POINTS[source], f"{where}: {source} may only start {ENTRY_POINTS[source]}"
            continue
        if RANK[dest] > RANK[source]:
            wrong.append(f"{where}: {source} imports {target} ({dest} is above it)")
        elif source == LAUNCHER and dest in FACES and target == f"zonemark.{dest}.serve":
            continue
        elif source in FACES and dest in FACES:
            wrong.append(f"{where}: face {source} imports face {dest} (a rule two faces need lives below them)")
    assert not wrong, "\n".join(wrong)


def test_packages_form_no_cycle():
    graph: dict[str, set[str]] = {}
    for _m, source, _t, dest, _w in _edges():
        if source and dest and source != dest:
            graph.setdefault(source, set()).add(dest)

    def visit(node, trail):
        if node in trail:
            raise AssertionError(" -> ".join(trail[trail.index(node):] + [node]))
        for nxt in graph.get(node, ()):
            visit(nxt, trail + [node])

    for start in graph:
        visit(start, [])


def _type_checking_lines(path: Path) -> set[int]:
    """The lines of ``path`` inside an ``if TYPE_CHECKING:`` block."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def _module_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (a list of nodes, the first repeated at the end), or None; iterative, linear."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if state.get(start):
            continue
        path, stack = [start], [iter(sorted(graph.get(start, ())))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


@pytest.mark.parametrize("package", sorted(RANK))
def test_modules_form_no_cycle_inside_a_package(package):
    """Inside one package the modules form no cycle either (imports at use count too; an import only for the
    type checker does not, as it never runs); the package's own ``__init__`` (at most a lazy table of its public
    names) is left out."""
    init = f"zonemark.{package}"
    graph: dict[str, set[str]] = {}
    typing_only: dict[str, set[int]] = {}
    for module, source, target, dest, where in _edges():
        if source != package or dest != package or init in (module, target) or module == target:
            continue
        path = SRC.parent / where.rsplit(":", 1)[0]
        if module not in typing_only:
            typing_only[module] = _type_checking_lines(path)
        if int(where.rsplit(":", 1)[1]) not in typing_only[module]:
            graph.setdefault(module, set()).add(target)
    cycle = _module_cycle(graph)
    assert cycle is None, "modules import one another in a cycle: " + " -> ".join(cycle or ())


def test_the_cycle_finder_finds_a_cycle_and_passes_a_tree():
    assert _module_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _module_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_core_uses_the_standard_library_only():
    allowed_third_party: set[str] = set()
    for module, path in _modules():
        if _package_of(module) != "core":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and not node.level else [])
            for name in names:
                top = (name or "").split(".")[0]
                if top and top != "zonemark" and top not in allowed_third_party:
                    assert top in _stdlib(), f"{path.name} imports {name}, not in the standard library"


def _stdlib():
    import sys
    return set(sys.stdlib_module_names)


def test_the_catalogue_is_whole_without_importing_the_layer():
    import subprocess
    import sys
    code = ("import zonemark, sys; n = len(zonemark.CATALOGUE); import zonemark.layer, zonemark.writer; "
            "print(n, len(zonemark.CATALOGUE))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == out[1], "importing a package added codes to the catalogue (registration by side effect)"


@pytest.mark.parametrize("package", sorted(RANK))
def test_the_architecture_doc_names_every_package(package):
    text = DOC.read_text(encoding="utf-8")
    if (SRC / package).is_dir():
        assert re.search(rf"`{package}/`", text), f"docs/architecture.md does not describe {package}/"


def test_the_writer_is_used_through_its_public_names():
    """A service or a face imports from ``zonemark.writer`` only names the package exports (``_EXPORTS``): the
    writer's API is one table, and a helper of one of its modules is not reached from outside."""
    from zonemark import writer
    public = set(writer._EXPORTS)
    wrong = []
    for module, path in _modules():
        if _package_of(module) == "writer":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".")
                target = ".".join(base[:len(base) - (node.level - 1)] + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "zonemark" and any(a.name == "writer" for a in node.names):
                continue  # 'from .. import writer': the package itself
            if target == "zonemark.writer" or target.startswith("zonemark.writer."):
                for alias in node.names:
                    if alias.name not in public:
                        wrong.append(f"{path.relative_to(SRC.parent)}:{node.lineno}: {target}.{alias.name}")
    assert not wrong, "not a public name of zonemark.writer (add it to _EXPORTS if it is API):\n" + "\n".join(wrong)


def test_every_public_name_of_the_writer_resolves():
    from zonemark import writer
    for name in writer._EXPORTS:
        assert getattr(writer, name) is not None, name
    assert set(writer.__all__) == set(writer._EXPORTS)


def test_no_module_of_the_writer_shares_a_name_with_a_public_name():
    """Importing ``writer.x`` sets the package's attribute ``x`` to the module: a module named like a public name
    (``history``) would turn ``zonemark.writer.history`` into that module once anything imported it."""
    from zonemark import writer
    modules = {p.stem for p in (SRC / "writer").glob("*.py")}
    assert not modules & set(writer._EXPORTS), sorted(modules & set(writer._EXPORTS))
    for module in set(writer._EXPORTS.values()):
        __import__(f"zonemark.writer.{module}")
    assert not [name for name in writer._EXPORTS if type(getattr(writer, name)).__name__ == "module"]
