"""Safe writes of IllAIra Markdown Standard files: permissions (§5.2), structure (§5.5), storage.

``from zonemark.writer import append_entry, rewrite_registry, edit_zone, propose,
apply_proposal, history, undo, RefusedWrite, Store``.  See :mod:`.edit` for the permission
matrix, :mod:`.sanitize` and :mod:`.verify` for the two barriers, :mod:`.store` for durable
storage.
"""

from .edit import (ACTORS, WriteResult, append_entry, edit_zone, history, rewrite_registry, set_states,
                   undo)
from .proposals import Proposal, apply_proposal, propose
from .sanitize import RefusedWrite, sanitize_body, sanitize_title
from .store import Store, WriteConflict

__all__ = ["ACTORS", "WriteResult", "append_entry", "edit_zone", "history", "rewrite_registry", "set_states",
           "undo", "Proposal", "apply_proposal", "propose", "RefusedWrite", "sanitize_body", "sanitize_title",
           "Store", "WriteConflict"]
