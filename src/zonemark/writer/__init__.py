"""Safe writes of IllAIra Markdown Standard files: permissions (§5.2), structure (§5.5), storage.

``from zonemark.writer import append_entry, rewrite_registry, edit_zone, propose,
apply_proposal, history, undo, RefusedWrite, Store``.  Every name a service or a face uses is
public here (``tests/test_architecture.py`` checks that nothing outside the writer imports a name
of its modules that this table does not list).  See :mod:`.edit` for the permission matrix,
:mod:`.sanitize` and :mod:`.verify` for the two barriers, :mod:`.refusals` for the refusal codes,
:mod:`.store` for durable storage.  The names below are imported on first use, so that a one-shot command (``zonemark
append``) loads only the modules it runs.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False

#: public name -> the module of this package that defines it
_EXPORTS = {
    **dict.fromkeys(("ACTORS", "DATE_HELP", "WriteResult", "append_entry", "check_date", "edit_zone",
                     "find_container", "history", "rewrite_registry", "set_states", "undo"), "edit"),
    **dict.fromkeys(("MAX_REASON_CHARS", "PendingProposal", "Proposal", "apply_proposal", "find_proposal", "list_proposals",
                     "preview_proposal", "propose", "reject_proposal", "show_proposal", "stored_proposals"),
                    "proposals"),
    **dict.fromkeys(("REFUSALS", "InvalidDate", "Refusal", "RefusedWrite"), "refusals"),
    **dict.fromkeys(("MAX_BODY_CHARS", "MAX_TITLE_CHARS", "sanitize_body", "sanitize_title"), "sanitize"),
    **dict.fromkeys(("STATE_DIR_NAME", "HistoryEntry", "Store", "StoreError", "WriteConflict"), "store"),
    **dict.fromkeys(("ZoneIndex", "ZoneView", "journal_for", "resolve_container", "zone_base", "zone_hash"),
                   "locate"),
    **dict.fromkeys(("add_container", "new_file"), "scaffold"),
    **dict.fromkeys(("replace_file",), "atomic"),
    **dict.fromkeys(("AppendPlan", "BatchResult", "EntryOutcome", "NewEntry", "append_entries", "plan_entries"),
                    "batch"),
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

    from .atomic import replace_file
    from .batch import AppendPlan, BatchResult, EntryOutcome, NewEntry, append_entries, plan_entries
    from .edit import (ACTORS, DATE_HELP, WriteResult, append_entry, check_date, edit_zone, find_container, history,
                       rewrite_registry, set_states, undo)
    from .locate import ZoneIndex, ZoneView, journal_for, resolve_container, zone_base, zone_hash
    from .proposals import (MAX_REASON_CHARS, PendingProposal, Proposal, apply_proposal, find_proposal, list_proposals,
                            preview_proposal, propose, reject_proposal, show_proposal, stored_proposals)
    from .refusals import REFUSALS, InvalidDate, Refusal, RefusedWrite
    from .sanitize import MAX_BODY_CHARS, MAX_TITLE_CHARS, sanitize_body, sanitize_title
    from .scaffold import add_container, new_file
    from .store import STATE_DIR_NAME, HistoryEntry, Store, StoreError, WriteConflict
