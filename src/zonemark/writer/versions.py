"""The saved versions of a file, and undo (§5.2: undo is the user's).

The store keeps the version each write replaced (:class:`~.store.Store`); :func:`undo` restores the
newest one not already undone, as a new write, and reopens the proposal whose applying it reverted (W19).
"""

from __future__ import annotations

import os

from .proposals import reopen_undone_proposal
from .rules import refuse_unless_user
from .store import HistoryEntry, Store, UpdateResult


def history(path: str | os.PathLike[str], *, store: Store | None = None) -> list[HistoryEntry]:
    """The saved versions of ``path`` (newest first), from the store."""
    return (store or Store()).history(path)


def undo(path: str | os.PathLike[str], *, actor: str = "user", store: Store | None = None) -> UpdateResult:
    """Restore the version before zonemark's last write; 'user' only."""
    refuse_unless_user(actor, "undo restores a previous version of the whole file; only the user may undo")
    result = (store or Store()).undo(path, actor=actor)
    if result.changed and result.undone is not None:
        reopen_undone_proposal(path, result.undone)
    return result
