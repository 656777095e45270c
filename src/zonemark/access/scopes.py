"""The scopes a client of the HTTP server holds, and the scope each tool needs (issue 20 §2).

``read`` reaches every read tool and resource, ``append`` the tools that add entries to a [P4] journal
(``append_entry``, ``ingest_log``), ``propose`` ``propose_change`` ([P3], for the user to apply), ``edit``
the [P5] rewrite and the module-state registry (``edit_volatile``, ``set_module_state``).  A tool that is not
in :data:`TOOL_SCOPES` needs a scope nobody holds: a new tool stays hidden over HTTP until it is given one
(``tests/services/test_access.py`` checks that every tool of the server has one).  The writer still decides
every write (§5.2); a scope only narrows what a client may ask.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, get_args

Scope = Literal["read", "append", "propose", "edit"]

#: The scopes, in the order they are listed.
SCOPES: tuple[Scope, ...] = get_args(Scope)

#: Tool name -> the scope that reaches it.
TOOL_SCOPES: dict[str, Scope] = {
    "layer_status": "read", "list_containers": "read", "read_container": "read", "list_zones": "read",
    "read_zone": "read", "check": "read", "search_memory": "read", "build_context": "read",
    "parse_trace": "read",
    "append_entry": "append", "ingest_log": "append",
    "propose_change": "propose",
    "edit_volatile": "edit", "set_module_state": "edit",
}


class ScopeError(ValueError):
    """A scope list that names something other than the four scopes."""


def parse_scopes(text: str | Iterable[str]) -> tuple[Scope, ...]:
    """``"read,append"`` (commas or spaces) or a list of names -> the scopes, in :data:`SCOPES` order, each once.
    Raises :class:`ScopeError` naming the first unknown one, or when none is given."""
    words = text.replace(",", " ").split() if isinstance(text, str) else [str(w) for w in text]
    unknown = [w for w in words if w not in SCOPES]
    if unknown:
        raise ScopeError(f"unknown scope {unknown[0][:40]!r}; the scopes are {', '.join(SCOPES)}")
    if not words:
        raise ScopeError(f"give at least one scope of {', '.join(SCOPES)}")
    return tuple(s for s in SCOPES if s in words)


def required_scope(tool: str) -> Scope | None:
    """The scope that reaches ``tool``; None when no scope does."""
    return TOOL_SCOPES.get(tool)


def allows(scopes: Iterable[str], tool: str) -> bool:
    """Whether a client holding ``scopes`` may see and call ``tool``."""
    needed = required_scope(tool)
    return needed is not None and needed in set(scopes)
