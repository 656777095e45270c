"""No dead code: every function and class defined at the top of a module of the package (or in a class of it)
is used somewhere in the package, the tests or the benchmarks (in code, not only in a docstring)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "zonemark"
#: dead, in a module being reworked on another branch right now: deleted there or after the merge (then empty this)
LEFT_TO_ITS_OWNER: set[str] = set()
#: methods of a standard protocol, called by the standard library, not by our code
PROTOCOL_METHODS = {"interchange/importing.py: readable", "interchange/importing.py: readinto",
                    # the SDK's OAuthAuthorizationServerProvider, called by its auth routes
                    *(f"mcp/http.py: {name}" for name in (
                        "get_client", "register_client", "authorize", "load_authorization_code",
                        "exchange_authorization_code", "load_refresh_token", "exchange_refresh_token",
                        "load_access_token", "revoke_token"))}


def _names(path: Path) -> list[str]:
    """Every name ``path``'s code uses: names, attributes and imported names (f-strings included; docstrings and
    comments are not code)."""
    out: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Name):
            out.append(node.id)
        elif isinstance(node, ast.Attribute):
            out.append(node.attr)
        elif isinstance(node, ast.alias):
            out.append(node.name.rsplit(".", 1)[-1])
    return out


def _definitions(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = list(tree.body) + [n for c in tree.body if isinstance(c, ast.ClassDef) for n in c.body]
    # a decorated function is used by its decorator (a server's handler, a property)
    return [(n.lineno, n.name) for n in nodes
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not n.name.startswith("__")
            and not (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.decorator_list)]


def test_every_function_and_class_of_the_package_is_used() -> None:
    files = sorted(SRC.rglob("*.py"))
    used = Counter(name for p in [*files, *(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").rglob("*.py")]
                   for name in _names(p))
    dead = [f"{p.relative_to(SRC)}:{line}: {name}" for p in files for line, name in _definitions(p)
            if used[name] == 0 and f"{p.relative_to(SRC)}: {name}" not in LEFT_TO_ITS_OWNER | PROTOCOL_METHODS]
    assert not dead, "defined and never used (delete it, or use it):\n" + "\n".join(dead)
