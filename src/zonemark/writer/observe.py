"""Which files a run of zonemark wrote: each write, once on disk, is recorded for whoever is watching.

A face that acts after a write (``--commit-writes``: one git commit of exactly the files written) wraps the
command in :func:`watching` and gets the list; nothing is recorded when no one watches.  The record is made
after the rename that puts the new bytes in place, never inside a planner.
"""

from __future__ import annotations

import contextlib
import os
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator


@dataclass(frozen=True)
class Written:
    """One file a write put on disk: its path, and for a write of the store who made it and what it was."""

    path: Path
    actor: str = ""
    action: str = ""


_WATCH: ContextVar[list[Written] | None] = ContextVar("zonemark_written", default=None)


def record_written(path: str | os.PathLike[str], *, actor: str = "", action: str = "") -> None:
    """Record that ``path`` was written (a no-op when no one watches)."""
    seen = _WATCH.get()
    if seen is not None:
        seen.append(Written(Path(os.path.abspath(os.fspath(path))), actor, action))


@contextlib.contextmanager
def watching() -> Iterator[list[Written]]:
    """Collect, in order, every file written inside the ``with`` block."""
    seen: list[Written] = []
    token = _WATCH.set(seen)
    try:
        yield seen
    finally:
        _WATCH.reset(token)


__all__ = ["Written", "record_written", "watching"]
