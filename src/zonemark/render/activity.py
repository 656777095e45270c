"""zonemark's write history across a whole layer, newest first, with what each write changed.

The writer keeps, for every file it writes, the version each write replaced and its metadata
(:class:`zonemark.writer.store.HistoryEntry`: time, actor, action, checksums of the replaced and
of the written bytes).  This module puts the histories of all the files of a layer together:

* ``before`` is the version a write replaced (from the history folder);
* ``after`` is the version it wrote: the saved version of a later write whose replaced bytes
  have the checksum this write recorded for what it wrote, or the file as it is now when it
  has that checksum; ``None`` when neither is kept any more (bounded retention, or the file
  was edited by hand since);
* ``container`` is the container holding the first changed line (:mod:`zonemark.layer.enclosing`);
* ``undoable`` says whether :func:`zonemark.writer.undo` of that file would restore exactly this
  write's ``before`` now: it is the newest write that is neither an undo nor undone, and the
  file is still what zonemark last wrote (the store refuses otherwise).

Everything here only reads: no lock is taken, nothing is created.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass
from pathlib import Path

from ..core.parser import parse
from ..core.text import decode
from ..layer.enclosing import Enclosing, enclosing_container
from ..layer.loader import Layer
from ..writer import HistoryEntry, Store, StoreError


@dataclass(frozen=True)
class ActivityItem:
    """One write of the layer's history (see the module docstring)."""

    file: str  # path relative to the layer root
    path: Path
    entry: HistoryEntry
    before: str | None
    after: str | None
    container: Enclosing | None
    undoable: bool

    @property
    def id(self) -> str:
        return self.entry.id


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _first_changed_line(old: str, new: str) -> tuple[str, int]:
    """('new', line) of the first line ``new`` changed, or ('old', line) when lines were only removed."""
    a, b = old.split("\n"), new.split("\n")
    for tag, i1, _i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if j2 > j1:
            return "new", j1 + 1
        return "old", i1 + 1
    return "new", 1


def _container(before: str | None, after: str | None, path: Path) -> Enclosing | None:
    if before is None or after is None:
        return None
    side, line = _first_changed_line(before, after)
    text = after if side == "new" else before
    return enclosing_container(parse(text, path=str(path)), line)


def file_activity(path: Path, rel: str, *, store: Store | None = None) -> list[ActivityItem]:
    """The writes of one file, newest first."""
    store = store or Store()
    newest_first = store.history(path)
    if not newest_first:
        return []
    entries = list(reversed(newest_first))
    try:
        current: bytes | None = store.read(path)
    except OSError:
        current = None
    current_sha = None if current is None else _sha(current)
    saved: dict[str, bytes | None] = {}

    def version(entry: HistoryEntry) -> bytes | None:
        if entry.id not in saved:
            try:
                saved[entry.id] = store.version(path, entry.id)
            except (StoreError, OSError):
                saved[entry.id] = None
        return saved[entry.id]

    candidate = Store.undo_candidate(entries)
    reverts = (candidate is not None and current_sha is not None and entries[-1].written_sha256 == current_sha
               and candidate.written_sha256 == current_sha)
    items = []
    for k, entry in enumerate(entries):
        before_bytes = version(entry)
        after_bytes = None
        for later in entries[k + 1:]:
            if later.sha256 == entry.written_sha256:
                after_bytes = version(later)
                if after_bytes is not None:
                    break
        if after_bytes is None and current_sha == entry.written_sha256:
            after_bytes = current
        before = None if before_bytes is None else decode(before_bytes)
        after = None if after_bytes is None else decode(after_bytes)
        items.append(ActivityItem(rel, path, entry, before, after, _container(before, after, path),
                                  reverts and entry is candidate))
    items.reverse()
    return items


def layer_activity(layer: Layer, *, store: Store | None = None, limit: int | None = None) -> list[ActivityItem]:
    """Every write zonemark kept in the history of the layer's files, newest first (``limit``: the newest)."""
    store = store or Store()
    items: list[ActivityItem] = []
    for f in sorted(layer.files, key=lambda f: f.rel):
        items.extend(file_activity(f.path, f.rel, store=store))
    items.sort(key=lambda item: (item.entry.timestamp, item.file, int(item.entry.id)), reverse=True)
    return items if limit is None else items[:limit]


__all__ = ["ActivityItem", "file_activity", "layer_activity"]
