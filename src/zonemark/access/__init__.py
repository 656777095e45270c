"""Who may reach a layer over HTTP, and what each may do (issue 20 §2): the scopes and the store.

:mod:`.scopes` names the four scopes (``read``, ``append``, ``propose``, ``edit``) and the one scope each MCP
tool needs; no scope reaches apply, undo or a ``[P1]``/``[P2]`` write, because no tool does.  :mod:`.store` is
the SQLite file ``.zonemark/access.sqlite3`` of a layer: registered clients, bearer tokens, OAuth authorization
codes, access and refresh tokens (each kept only as its SHA-256), and the one pending pairing code.  The MCP
server's HTTP face (:mod:`zonemark.mcp.http`) and the ``zonemark access`` command both use it; neither imports
the other.  Standard library only.  The store's names are imported on first use, so the CLI's help (which
names the scopes) loads no ``sqlite3``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .scopes import SCOPES, TOOL_SCOPES, Scope, ScopeError, allows, parse_scopes, required_scope

_STORE_NAMES = ("ACCESS_TTL", "CODE_TTL", "MAX_CLIENTS", "MAX_NAME_CHARS", "PAIRING_TRIES", "PAIRING_TTL",
                "REFRESH_TTL", "AccessError", "AccessStore", "AccessUnavailable", "Grant", "Listed", "Pairing",
                "store_path")

__all__ = ["SCOPES", "TOOL_SCOPES", "Scope", "ScopeError", "allows", "parse_scopes", "required_scope",
           "ACCESS_TTL", "CODE_TTL", "MAX_CLIENTS", "MAX_NAME_CHARS", "PAIRING_TRIES", "PAIRING_TTL",
           "REFRESH_TTL", "AccessError", "AccessStore", "AccessUnavailable", "Grant", "Listed", "Pairing",
           "store_path"]


def __getattr__(name: str) -> Any:
    if name not in _STORE_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.store"), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from .store import (ACCESS_TTL, CODE_TTL, MAX_CLIENTS, MAX_NAME_CHARS, PAIRING_TRIES, PAIRING_TTL, REFRESH_TTL,
                        AccessError, AccessStore, AccessUnavailable, Grant, Listed, Pairing, store_path)
