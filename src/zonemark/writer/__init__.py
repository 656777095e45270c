"""Safe writes of IllAIra Markdown Standard files: permissions (§5.2), structure (§5.5), storage.

``from zonemark.writer import append_entry, rewrite_registry, edit_zone, propose,
apply_proposal, history, undo, RefusedWrite, Store``.  See :mod:`.edit` for the permission
matrix, :mod:`.sanitize` and :mod:`.verify` for the two barriers, :mod:`.store` for durable
storage.  The names below are imported on first use, so that a one-shot command (``zonemark
append``) loads only the modules it runs.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False

#: public name -> the module of this package that defines it
_EXPORTS = {
    **dict.fromkeys(("ACTORS", "WriteResult", "append_entry", "edit_zone", "history", "rewrite_registry",
                     "set_states", "undo"), "edit"),
    **dict.fromkeys(("Proposal", "apply_proposal", "propose", "reject_proposal"), "proposals"),
    **dict.fromkeys(("RefusedWrite", "sanitize_body", "sanitize_title"), "sanitize"),
    **dict.fromkeys(("Store", "WriteConflict"), "store"),
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # what a type checker and an IDE see
    from typing import Any

    from .edit import ACTORS, WriteResult, append_entry, edit_zone, history, rewrite_registry, set_states, undo
    from .proposals import Proposal, apply_proposal, propose, reject_proposal
    from .sanitize import RefusedWrite, sanitize_body, sanitize_title
    from .store import Store, WriteConflict
