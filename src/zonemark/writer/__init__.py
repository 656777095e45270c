"""Safe writes of IllAIra Markdown Standard files: permissions (§5.2), structure (§5.5), storage.

``from zonemark.writer import append_entry, rewrite_registry, edit_zone, propose,
apply_proposal, history, undo, RefusedWrite, Store``.  Every name a service or a face uses is
public here (``tests/meta/test_architecture.py`` checks that nothing outside the writer imports a name
of its modules that this table does not list).  See :mod:`.rules` for the permission matrix and the
date rule, :mod:`.snapshot` for the one read of a file every planner works on, one module per
operation for its planner (:mod:`.append`, :mod:`.zone_edit`, :mod:`.registry`, :mod:`.proposals`,
:mod:`.scaffold`), :mod:`.sanitize` and :mod:`.verify` for the two barriers, :mod:`.refusals` for the
refusal codes, :mod:`.store` for durable storage (``Store.commit``) and :mod:`.versions` for history and undo.
The names below are imported on first use, so that a one-shot command (``zonemark
append``) loads only the modules it runs.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False

#: public name -> the module of this package that defines it
_EXPORTS = {
    **dict.fromkeys(("ACTOR_HELP", "ACTORS", "DATE_HELP", "check_date"), "rules"),
    **dict.fromkeys(("AppendResult", "ApplyResult", "RegistryResult", "WriteResult", "ZoneEditResult"), "results"),
    **dict.fromkeys(("FileSnapshot", "Plan"), "snapshot"),
    **dict.fromkeys(("history", "undo"), "versions"),
    **dict.fromkeys(("edit_zone", "plan_edit_zone"), "zone_edit"),
    **dict.fromkeys(("plan_registry", "rewrite_registry", "set_states"), "registry"),
    **dict.fromkeys(("MAX_REASON_CHARS", "PendingProposal", "Proposal", "apply_proposal", "find_proposal",
                     "list_proposals", "plan_apply", "plan_proposal", "preview_inner", "preview_proposal",
                     "propose", "reject_proposal", "show_proposal", "stored_proposals"), "proposals"),
    **dict.fromkeys(("REFUSALS", "InvalidDate", "Refusal", "RefusedWrite"), "refusals"),
    **dict.fromkeys(("MAX_BODY_CHARS", "MAX_TITLE_CHARS", "sanitize_body", "sanitize_title"), "sanitize"),
    **dict.fromkeys(("STATE_DIR_NAME", "Committed", "HistoryEntry", "Store", "StoreError", "WriteConflict"), "store"),
    **dict.fromkeys(("ZoneIndex", "ZoneView", "journal_for", "resolve_container", "zone_base", "zone_hash"),
                   "locate"),
    **dict.fromkeys(("add_container", "new_file", "plan_container"), "scaffold"),
    **dict.fromkeys(("replace_file",), "atomic"),
    **dict.fromkeys(("ConflictRegion", "MergeInputError", "MergePlan", "plan_merge"), "merge"),
    **dict.fromkeys(("Written", "record_written", "watching"), "observe"),
    **dict.fromkeys(("Via", "acting_for", "current_via"), "attribution"),
    **dict.fromkeys(("AppendPlan", "BatchResult", "EntryOutcome", "NewEntry", "append_entries", "append_entry",
                     "find_container", "plan_append", "plan_entries"), "append"),
}

#: the same names written out, so that a type checker sees them (tests/meta/test_lazy_exports.py keeps the two equal)
__all__ = [
    "ACTOR_HELP", "ACTORS", "DATE_HELP", "check_date", "AppendResult", "ApplyResult", "RegistryResult",
    "WriteResult", "ZoneEditResult", "FileSnapshot", "Plan", "history", "undo", "edit_zone",
    "plan_edit_zone", "plan_registry", "rewrite_registry", "set_states", "MAX_REASON_CHARS",
    "PendingProposal", "Proposal", "apply_proposal", "find_proposal", "list_proposals", "plan_apply",
    "plan_proposal", "preview_inner", "preview_proposal", "propose", "reject_proposal", "show_proposal",
    "stored_proposals",
    "REFUSALS", "InvalidDate", "Refusal", "RefusedWrite", "MAX_BODY_CHARS", "MAX_TITLE_CHARS",
    "sanitize_body", "sanitize_title", "STATE_DIR_NAME", "Committed", "HistoryEntry", "Store", "StoreError",
    "WriteConflict", "ZoneIndex", "ZoneView", "journal_for", "resolve_container", "zone_base", "zone_hash",
    "add_container", "new_file", "plan_container", "replace_file", "AppendPlan", "BatchResult",
    "EntryOutcome", "NewEntry", "append_entries", "append_entry", "find_container", "plan_append",
    "plan_entries", "ConflictRegion", "MergeInputError", "MergePlan", "plan_merge", "Written",
    "record_written", "watching", "Via", "acting_for", "current_via",
]


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
    from .attribution import Via, acting_for, current_via
    from .merge import ConflictRegion, MergeInputError, MergePlan, plan_merge
    from .observe import Written, record_written, watching
    from .append import (AppendPlan, BatchResult, EntryOutcome, NewEntry, append_entries, append_entry,
                         find_container, plan_append, plan_entries)
    from .versions import history, undo
    from .locate import ZoneIndex, ZoneView, journal_for, resolve_container, zone_base, zone_hash
    from .proposals import (MAX_REASON_CHARS, PendingProposal, Proposal, apply_proposal, find_proposal,
                            list_proposals, plan_apply, plan_proposal, preview_inner, preview_proposal, propose,
                            reject_proposal, show_proposal, stored_proposals)
    from .refusals import REFUSALS, InvalidDate, Refusal, RefusedWrite
    from .registry import plan_registry, rewrite_registry, set_states
    from .results import AppendResult, ApplyResult, RegistryResult, WriteResult, ZoneEditResult
    from .rules import ACTOR_HELP, ACTORS, DATE_HELP, check_date
    from .sanitize import MAX_BODY_CHARS, MAX_TITLE_CHARS, sanitize_body, sanitize_title
    from .scaffold import add_container, new_file, plan_container
    from .snapshot import FileSnapshot, Plan
    from .store import STATE_DIR_NAME, Committed, HistoryEntry, Store, StoreError, WriteConflict
    from .zone_edit import edit_zone, plan_edit_zone
