"""zonemark's write history across a whole layer, newest first, with what each write changed.

The writer keeps, for every file it writes, the version each write replaced and its metadata
(:class:`zonemark.writer.store.HistoryEntry`: time, actor, action, checksums of the replaced and
of the written bytes).  This module puts the histories of all the files of a layer together.
Listing them (:func:`layer_activity`, :func:`file_activity`) reads the metadata and one checksum
of each file now, never a saved version, and both again only when the history folder or the file
changed (RV8); what one write changed is read on demand (:func:`write_change`):

* ``before`` is the version a write replaced (from the history folder);
* ``after`` is the version it wrote: the saved version of a later write whose replaced bytes
  have the checksum this write recorded for what it wrote, or the file as it is now when it
  has that checksum; ``None`` when neither is kept any more (bounded retention, or the file
  was edited by hand since);
* ``container`` is the container holding the first changed line (:mod:`zonemark.layer.enclosing`),
  found by comparing the two versions' shared start and end (:func:`~.diff_html.changed_region`);
* ``undoable`` (on the listed item) says whether :func:`zonemark.writer.undo` of that file would
  restore exactly this write's ``before`` now: it is the newest write that is neither an undo nor
  undone, and the file is still what zonemark last wrote (the store refuses otherwise).

Everything here only reads: no lock is taken, nothing is created.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..core.document import Document
from ..core.parser import parse_bytes
from ..core.text import decode
from ..layer.enclosing import Enclosing, enclosing_container
from ..layer.loader import Layer
from ..writer import HistoryEntry, Store, StoreError
from .diff_html import changed_region


@dataclass(frozen=True)
class ActivityItem:
    """One write of the layer's history (see the module docstring); no version is read to list it."""

    file: str  # path relative to the layer root
    path: Path
    entry: HistoryEntry
    after_ids: tuple[str, ...]  # later writes whose saved version is what this write wrote, oldest first
    after_is_current: bool  # the file now is what this write wrote
    undoable: bool

    @property
    def id(self) -> str:
        return self.entry.id


@dataclass(frozen=True)
class WriteChange:
    """What one write changed: the two versions (texts) and the container of the first changed line."""

    item: ActivityItem
    before: str | None
    after: str | None
    container: Enclosing | None


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


#: A folder or file changed less than this long before it was read is read again even when its stat is unchanged
#: (the rule of :mod:`zonemark.layer.cache`: a second change inside the timestamp granularity leaves it alike).
RACY_NS = 2_000_000_000
_KEPT = 4096
_histories: dict[tuple[str, str], tuple[tuple[int, ...], list[HistoryEntry]]] = {}
_checksums: dict[str, tuple[tuple[int, ...], str]] = {}
_lock = threading.Lock()


def _signature(where: str | Path) -> tuple[int, ...] | None:
    """The stat fields every change of ``where`` moves, or None when it is too fresh to be trusted (or gone)."""
    try:
        st = os.stat(where)
    except OSError:
        return None
    if time.time_ns() - st.st_mtime_ns <= RACY_NS:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _history(store: Store, path: Path) -> list[HistoryEntry]:
    """``store.history(path)``, read again only when the history folder changed (RV8: an entry is added, renamed
    or removed only by a rename or an unlink in it, which moves the folder's times)."""
    folder = store.history_dir(path)
    key = (str(folder), str(path))
    signature = _signature(folder)
    with _lock:
        kept = _histories.get(key)
    if signature is not None and kept is not None and kept[0] == signature:
        return list(kept[1])
    entries = store.history(path)
    if signature is not None:
        with _lock:
            if len(_histories) >= _KEPT:
                _histories.clear()
            _histories[key] = (signature, entries)
    return list(entries)


def _current_sha(store: Store, path: Path) -> str | None:
    """The checksum of the file now, hashed again only when its stat changed."""
    key = os.path.realpath(path)
    signature = _signature(key)
    with _lock:
        kept = _checksums.get(key)
    if signature is not None and kept is not None and kept[0] == signature:
        return kept[1]
    try:
        digest = _sha(store.read(path))
    except OSError:
        return None
    if signature is not None and signature == _signature(key):  # unchanged while it was read
        with _lock:
            if len(_checksums) >= _KEPT:
                _checksums.clear()
            _checksums[key] = (signature, digest)
    return digest


def file_activity(path: Path, rel: str, *, store: Store | None = None) -> list[ActivityItem]:
    """The writes of one file, newest first: its history's metadata and the checksum of the file now."""
    store = store or Store()
    newest_first = _history(store, path)
    if not newest_first:
        return []
    entries = list(reversed(newest_first))
    current_sha = _current_sha(store, path)
    candidate = Store.undo_candidate(entries)
    reverts = (candidate is not None and current_sha is not None and entries[-1].written_sha256 == current_sha
               and candidate.written_sha256 == current_sha)
    later: dict[str, list[str]] = {}  # replaced checksum -> ids of the writes that replaced those bytes
    items = []
    for entry in reversed(entries):  # newest first: the writes after each one are seen before it
        items.append(ActivityItem(rel, path, entry, tuple(reversed(later.get(entry.written_sha256, ()))),
                                  current_sha == entry.written_sha256, reverts and entry is candidate))
        later.setdefault(entry.sha256, []).append(entry.id)
    return items


def layer_activity(layer: Layer, *, store: Store | None = None, limit: int | None = None) -> list[ActivityItem]:
    """Every write zonemark kept in the history of the layer's files, newest first (``limit``: the newest)."""
    store = store or Store()
    items: list[ActivityItem] = []
    for f in sorted(layer.files, key=lambda f: f.rel):
        items.extend(file_activity(f.path, f.rel, store=store))
    items.sort(key=lambda item: (item.entry.timestamp, item.file, int(item.entry.id)), reverse=True)
    return items if limit is None else items[:limit]


def _version(store: Store, path: Path, history_id: str) -> bytes | None:
    try:
        return store.version(path, history_id)
    except (StoreError, OSError):
        return None


def write_versions(item: ActivityItem, *, store: Store | None = None) -> tuple[bytes | None, bytes | None]:
    """The bytes a write replaced and the bytes it wrote (None where they are no longer kept)."""
    store = store or Store()
    before = _version(store, item.path, item.entry.id)
    for later in item.after_ids:
        after = _version(store, item.path, later)
        if after is not None:
            return before, after
    if item.after_is_current:
        try:
            data = store.read(item.path)
        except OSError:
            return before, None
        return before, data if _sha(data) == item.entry.written_sha256 else None
    return before, None


def _parse(data: bytes, path: Path) -> Document:
    return parse_bytes(data, path=str(path))


def write_change(item: ActivityItem, *, store: Store | None = None,
                 document: Callable[[bytes, Path], Document | None] = _parse) -> WriteChange:
    """The two versions of one write, decoded, and the container of its first changed line; ``document``
    parses a version's bytes (a face passes the parse it already holds of the file now), or says None: the
    container is then not looked up."""
    before_bytes, after_bytes = write_versions(item, store=store)
    before = None if before_bytes is None else decode(before_bytes)
    after = None if after_bytes is None else decode(after_bytes)
    container = None
    if before is not None and after is not None:
        region = changed_region(before, after, context=0)
        data = before_bytes if region.removed_only else after_bytes
        assert data is not None
        doc = document(data, item.path)
        container = None if doc is None else enclosing_container(doc, region.first_changed)
    return WriteChange(item, before, after, container)


__all__ = ["ActivityItem", "WriteChange", "file_activity", "layer_activity", "write_change", "write_versions"]
