"""Durable, locked and versioned writes of a user's file (the storage layer of the safe writer).

The edit layer decides *what* may change (§5 permission zones, §7 modules and topics); this
module only guarantees *how* a change reaches the disk:

* durability: the new bytes go to a temporary file in the target's folder, which is fsynced,
  renamed over the target with ``os.replace`` and followed by an fsync of the folder, so a
  process killed at any instant leaves the old file or the new one, never a mix;
* concurrency: one lock per file (an ``flock`` held through :mod:`filelock`, released by the
  OS when its holder dies); a change made on disk by someone who does not take the lock is
  detected (stat and content) before the rename, and the transform is run again on the fresh
  bytes a bounded number of times before giving up with :class:`WriteConflict` (an unlocked
  save landing between that last check and the rename — microseconds — cannot be detected:
  POSIX has no compare-and-rename);
* history: the version a write replaces is kept, with its metadata (time, actor, action,
  sha256 of the saved and of the written bytes), in a history folder with bounded retention —
  as a hard link to the replaced file, which the rename detaches (no copy), or as a copy when
  the file has other links; :meth:`Store.undo` restores it as a new write;
* the file belongs to the user: the bytes are never decoded, re-encoded or normalised, the
  file keeps its mode (and owner where permitted), and a symbolic link is written through,
  not replaced.

Layout for ``DIR/notes.md`` (no file or folder the store creates ends in ``.md``, so a
recursive ``*.md`` scan of ``DIR`` never picks one up)::

    DIR/.zonemark/locks/notes.md.lock                   the per-file lock
    DIR/.zonemark/history/notes.md.versions/00000007.orig   a saved version (raw bytes)
    DIR/.zonemark/history/notes.md.versions/00000007.json   its metadata (commit marker)
    DIR/.notes.md.zonemark-tmp.<pid>.<hex>              a temporary file, only during a write

A write stages the replaced version (``.orig`` plus a ``.pending`` metadata file) before the
rename and turns ``.pending`` into ``.json`` after it.  Leftovers of a writer killed midway
(temporary files, staged versions) are recognised by their names and settled by the next
writer of the same file, under the lock.
"""

from __future__ import annotations

import datetime
import errno
import hashlib
import json
import os
import stat
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Generic, TypeVar

import filelock

from .atomic import TEMP_MARK, sync_dir, unlink_quietly, write_temp
from .attribution import current_via
from .observe import record_written
from .snapshot import FileSnapshot, Plan, adopt, hand_over

R = TypeVar("R")

__all__ = ["Store", "StoreError", "WriteConflict", "NothingToUndo", "HistoryCorrupt", "UpdateResult",
           "HistoryEntry", "Committed", "STATE_DIR_NAME", "TEMP_MARK"]

STATE_DIR_NAME = ".zonemark"
LOCKS_DIR_NAME = "locks"
HISTORY_DIR_NAME = "history"
HISTORY_FOLDER_SUFFIX = ".versions"
LOCK_SUFFIX = ".lock"
VERSION_SUFFIX = ".orig"
META_SUFFIX = ".json"
PENDING_SUFFIX = ".pending"
ID_WIDTH = 8
#: How many bytes :meth:`Store._still` reads at a time.
STILL_BLOCK = 1 << 18


class StoreError(Exception):
    """Base class of the store's refusals; the message is one line meant for the user.

    ``code`` is a key of :data:`zonemark.writer.refusals.REFUSALS`, as for every refusal.
    """

    code = "FILE_NOT_WRITABLE"

    def __init__(self, reason: str, *, code: str | None = None, path: str | os.PathLike[str] | None = None):
        super().__init__(reason if path is None else f"{path}: {reason}")
        self.reason = reason
        self.path = None if path is None else Path(path)
        if code is not None:
            self.code = code

    def describe(self, where: str | None) -> str:
        """The message with the file named as ``where`` (a face's own name for it, e.g. relative to the layer
        folder), built from the fields, never by editing the text."""
        return self.reason if where is None else f"{where}: {self.reason}"

    def __reduce__(self) -> tuple[Any, ...]:  # the code and the path survive pickling (multiprocessing)
        return _rebuild_store_error, (type(self), self.reason, self.code, self.path)


def _rebuild_store_error(cls: type[StoreError], reason: str, code: str, path: Path | None = None) -> StoreError:
    return cls(reason, code=code, path=path)


class WriteConflict(StoreError):
    """The write was refused so as not to overwrite a change someone else made."""

    code = "WRITE_CONFLICT"


class NothingToUndo(WriteConflict):
    """:meth:`Store.undo` found no saved version to restore."""

    code = "NOTHING_TO_UNDO"


class HistoryCorrupt(StoreError):
    """A saved version no longer matches the checksum recorded when it was saved."""

    code = "HISTORY_CORRUPT"


@dataclass(frozen=True)
class UpdateResult:
    """Outcome of :meth:`Store.update` or :meth:`Store.undo`; ``history_id`` is None when nothing changed.
    ``undone`` is, for :meth:`Store.undo`, the saved write it reverted."""

    path: Path
    changed: bool
    old_size: int
    new_size: int
    history_id: str | None
    undone: "HistoryEntry | None" = None


@dataclass(frozen=True)
class Committed(Generic[R]):
    """Outcome of :meth:`Store.commit`: the plan that was written (or that changed nothing) and the write."""

    plan: Plan[R]
    changed: bool
    history_id: str | None
    update: UpdateResult

    @property
    def result(self) -> R:
        return self.plan.result


@dataclass(frozen=True)
class HistoryEntry:
    """One saved version: the bytes a write replaced (``size``, ``sha256``) and what it wrote instead."""

    id: str
    timestamp: str
    actor: str
    action: str
    size: int
    sha256: str = ""
    written_size: int = 0
    written_sha256: str = ""
    undoes: str | None = None
    #: The client the write was made for (``name (token id)``, :mod:`.attribution`), when a face named one.
    via: str | None = None
    #: The container the write changed, as a person reads it (``TOPIC: Viaggi``), when the planner named one (RV27).
    container: str | None = None

    @property
    def who(self) -> str:
        """The actor, and through whom: ``ai via ChatGPT (3f9a2b1c)``, or ``ai``."""
        return f"{self.actor} via {self.via}" if self.via else self.actor


@dataclass(frozen=True)
class _Snapshot:
    """The bytes of the target as read, with the stat fields that change whenever it is rewritten."""

    data: bytes
    signature: tuple[int, ...]
    mode: int
    uid: int
    gid: int
    links: int


def _well_formed(meta: object) -> bool:
    """Whether a history record holds its fields with the types the store writes."""
    if not isinstance(meta, dict):
        return False
    texts = ("timestamp", "actor", "action", "sha256", "written_sha256")
    sizes = ("size", "written_size")
    undoes = meta.get("undoes")
    via = meta.get("via")
    container = meta.get("container")
    return ((via is None or isinstance(via, str)) and (container is None or isinstance(container, str))
            and all(isinstance(meta.get(k, ""), str) for k in texts)
            and all(type(meta.get(k, 0)) is int for k in sizes)
            and (undoes is None or (isinstance(undoes, str) and undoes.isdigit())))


def _signature(st: os.stat_result) -> tuple[int, ...]:
    """Identity, size and modification time; not ctime, which the store's own hard link changes."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _as_bytes(value: object) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(f"transform must return bytes, not {type(value).__name__}")
    return bytes(value)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds")


class _Digest:
    """The sha256 of some bytes; for large ones computed in a helper thread while the caller goes on
    (hashlib releases the GIL): the old bytes' while the transform runs, the new bytes' while the
    temporary file is written."""

    IN_THREAD_FROM = 1 << 19

    def __init__(self, data: bytes):
        self._value: str | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if len(data) < self.IN_THREAD_FROM:
            self._value = _sha256(data)
        else:
            self._thread = threading.Thread(target=self._run, args=(data,), daemon=True)
            self._thread.start()

    def _run(self, data: bytes) -> None:
        try:
            self._value = _sha256(data)
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def result(self) -> str:
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value


def _holds(fd: int, data: bytes) -> bool:
    """Whether what is left to read of ``fd`` is exactly ``data``, read :data:`STILL_BLOCK` bytes at a time."""
    expected = memoryview(data)
    done = 0
    while True:
        block = os.read(fd, STILL_BLOCK)
        if not block:
            return done == len(expected)
        if expected[done:done + len(block)] != block:
            return False
        done += len(block)


class Store:
    """Locked, durable, versioned read-modify-write of files (see the module docstring).

    ``fsync=False`` skips only the fsync calls (for tests and benchmarks); every other step is
    the same.  ``retention`` is the number of saved versions kept per file.  ``lock_timeout``
    (seconds, negative = wait forever) bounds the wait for another writer of the same file.
    ``max_attempts`` bounds how often a write is retried when the file keeps changing under it.
    """

    def __init__(self, *, fsync: bool = True, retention: int = 50, lock_timeout: float = 60.0,
                 max_attempts: int = 5):
        if retention < 1:
            raise ValueError("retention must be at least 1 saved version")
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.fsync = fsync
        self.retention = retention
        self.lock_timeout = lock_timeout
        self.max_attempts = max_attempts

    # -- paths -------------------------------------------------------------------------------

    @staticmethod
    def _target(path: str | os.PathLike[str]) -> Path:
        """The real file behind ``path`` (a symbolic link is written through, not replaced)."""
        return Path(os.path.realpath(os.fspath(path)))

    def _existing(self, path: str | os.PathLike[str]) -> Path:
        """The real file behind ``path``, refused before anything is created when it is missing, not
        a regular file, or read-only (no write bit, or not writable by this user): the rename could
        replace it anyway, but the user has said it must not change."""
        target = self._target(path)
        if not target.is_file():
            if target.exists():
                raise IsADirectoryError(errno.EISDIR, "not a regular file", os.fspath(path))
            raise FileNotFoundError(errno.ENOENT, "no such file", os.fspath(path))
        mode = stat.S_IMODE(target.stat().st_mode)
        if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(target, os.W_OK):
            raise StoreError(f"the file is read-only (mode {mode:04o}); zonemark does not write it", path=path)
        return target

    def lock_path(self, path: str | os.PathLike[str]) -> Path:
        """Where the lock of ``path`` lives."""
        target = self._target(path)
        return target.parent / STATE_DIR_NAME / LOCKS_DIR_NAME / (target.name + LOCK_SUFFIX)

    def history_dir(self, path: str | os.PathLike[str]) -> Path:
        """The folder holding the saved versions of ``path``."""
        target = self._target(path)
        return target.parent / STATE_DIR_NAME / HISTORY_DIR_NAME / (target.name + HISTORY_FOLDER_SUFFIX)

    # -- public API --------------------------------------------------------------------------

    def read(self, path: str | os.PathLike[str]) -> bytes:
        """The current bytes of ``path``, exactly as on disk."""
        with open(self._target(path), "rb") as handle:
            return handle.read()

    def commit(self, path: str | os.PathLike[str], planner: Callable[[FileSnapshot], Plan[R]], *, actor: str,
               action: str) -> Committed[R]:
        """Under the file's lock, snapshot its current bytes, run ``planner`` on them and write the plan's bytes
        atomically (:meth:`update`).  ``planner`` is pure (it runs again when the file changed while the write
        was prepared; on the same bytes its plan is used again) and refuses by raising; a plan of the same bytes
        writes nothing.  What the plan knows of its new bytes is kept for the next write (:func:`.snapshot.adopt`).
        """
        made: list[tuple[bytes, Plan[R]]] = []  # the last plan, and the bytes it was made from

        def transform(data: bytes) -> bytes:
            if not made or made[0][0] != data:  # the same bytes again (a first write's second run): the same plan
                made[:] = [(data, planner(FileSnapshot(path, data)))]
                hand_over(path, data, made[0][1])
            else:  # kept with the bytes of this read: the earlier read's copy is freed (W99)
                made[:] = [(data, made[0][1])]
            return made[0][1].data

        update = self.update(path, transform, actor=actor, action=action, where=lambda: made[0][1].where)
        plan = made[0][1]
        if update.changed:
            adopt(path, plan)
        return Committed(plan, update.changed, update.history_id, update)

    def update(self, path: str | os.PathLike[str], transform: Callable[[bytes], bytes], *, actor: str,
               action: str, where: Callable[[], str | None] | None = None) -> UpdateResult:
        """Apply ``transform`` to the current bytes of ``path`` under the file's lock and write the result.

        ``transform`` may raise to refuse (nothing is written, the exception propagates) and may be
        called more than once — on fresh bytes each time — when the file changes on disk while the
        write is prepared, so it must not have side effects.  Returning the same bytes writes nothing.
        ``where``, asked after the transform ran, names the container the change is in for the history (RV27).
        """
        target = self._existing(path)
        seen: _Snapshot | None = None
        if not self.lock_path(target).exists():
            # Nothing of zonemark's is beside this file yet: try the change once without the lock, so a
            # refusal (or a change that changes nothing) leaves no .zonemark/ folder behind.  The
            # transform runs again, on fresh bytes, under the lock.
            first = self._snapshot(target)
            if _as_bytes(transform(first.data)) == first.data:
                return UpdateResult(Path(path), False, len(first.data), len(first.data), None)
            seen = first
        with self._locked(target):
            self._settle_leftovers(target)
            return self._write(path, target, transform, actor=actor, action=action, undoes=None, where=where,
                               seen=seen)

    def writable(self, path: str | os.PathLike[str]) -> Path:
        """The real file behind ``path`` when :meth:`update` would write it, else the refusal it would raise
        (missing, not a regular file, read-only); creates nothing (a dry run's check)."""
        return self._existing(path)

    def history(self, path: str | os.PathLike[str]) -> list[HistoryEntry]:
        """The saved versions of ``path``, newest first (empty when zonemark never wrote it); read-only."""
        return list(reversed(self._committed(self.history_dir(path))))

    def version(self, path: str | os.PathLike[str], history_id: str) -> bytes:
        """The bytes of one saved version, checked against the checksum recorded when it was saved."""
        folder = self.history_dir(path)
        entries = {entry.id: entry for entry in self._committed(folder)}
        if history_id not in entries:
            raise StoreError(f"no saved version {history_id!r} in the history", code="NO_SUCH_VERSION", path=path)
        return self._load_version(folder, entries[history_id], path)

    def undo(self, path: str | os.PathLike[str], *, actor: str) -> UpdateResult:
        """Restore the newest saved version not already undone, as a new write kept in history.

        Refused with :class:`WriteConflict` when the file is not what zonemark last wrote (it was
        edited since), and with :class:`NothingToUndo` when there is no saved version left.
        """
        target = self._existing(path)
        if not self.history_dir(target).is_dir():  # refused before anything is created
            raise NothingToUndo("zonemark has no saved version of this file; nothing to undo", path=path)
        with self._locked(target):
            self._settle_leftovers(target)
            folder = self.history_dir(target)
            entries = self._committed(folder)
            if not entries:
                raise NothingToUndo("zonemark has no saved version of this file; nothing to undo", path=path)
            expected = entries[-1].written_sha256
            current = self._snapshot(target).data
            if _sha256(current) != expected:
                raise WriteConflict(f"the file changed since zonemark last wrote it "
                                    f"(history {entries[-1].id}); undo refused so that change is not lost", path=path)
            chosen = self.undo_candidate(entries)
            if chosen is None:
                raise NothingToUndo(f"every saved version still kept has already been undone "
                                    f"(retention {self.retention}); nothing to undo", path=path)
            if chosen.written_sha256 != expected:
                raise WriteConflict(f"the file is not the version history {chosen.id} wrote; "
                                    "undo refused", path=path)
            restored = self._load_version(folder, chosen, path)

            def restore(data: bytes) -> bytes:
                if _sha256(data) != expected:
                    raise WriteConflict("the file changed while undo was running; undo refused", path=path)
                return restored

            return replace(self._write(path, target, restore, actor=actor, action="undo", undoes=chosen.id),
                           undone=chosen)

    # -- the write ---------------------------------------------------------------------------

    def _write(self, path: str | os.PathLike[str], target: Path, transform: Callable[[bytes], bytes], *,
               actor: str, action: str, undoes: str | None,
               where: Callable[[], str | None] | None = None, seen: _Snapshot | None = None) -> UpdateResult:
        """Read, transform and replace, retried while the file changes; ``seen`` is a read made before the lock,
        whose bytes are kept when the file still holds them (the plan made of them keeps them: one copy, W99)."""
        for _ in range(self.max_attempts):
            before = self._snapshot(target, seen)
            seen = None
            old_digest = _Digest(before.data)
            after = _as_bytes(transform(before.data))
            if after == before.data:
                return UpdateResult(Path(path), False, len(before.data), len(after), None)
            history_id = self._replace(target, before, old_digest, after, actor=actor, action=action,
                                       undoes=undoes, container=None if where is None else where())
            if history_id is not None:
                return UpdateResult(Path(path), True, len(before.data), len(after), history_id)
        raise WriteConflict(f"the file kept changing on disk while zonemark was writing it "
                            f"({self.max_attempts} attempts); nothing was written", path=path)

    def _replace(self, target: Path, before: _Snapshot, old_digest: _Digest, after: bytes, *, actor: str,
                 action: str, undoes: str | None, container: str | None = None) -> str | None:
        """Stage the old version, write ``after`` durably and rename it over ``target``.

        Returns the history id, or None (having undone every step) when ``target`` no longer holds
        ``before`` just before the rename — someone else changed it.
        """
        folder = self.history_dir(target)
        folder.mkdir(parents=True, exist_ok=True)
        history_id = self._next_id(folder)
        new_digest = _Digest(after)
        meta = {"id": history_id, "timestamp": _now(), "actor": actor, "action": action,
                "size": len(before.data), "written_size": len(after), "undoes": undoes, "file": target.name}
        via = current_via()
        if via is not None:
            meta["via"] = via
        if container is not None:
            meta["container"] = container
        temp: Path | None = None
        renamed = False
        try:
            self._save_version(folder, history_id, target, before)
            temp = self._write_temp(target.parent, "." + target.name + TEMP_MARK, after, before)
            meta["sha256"], meta["written_sha256"] = old_digest.result(), new_digest.result()
            self._save_pending(folder, history_id, before, meta)
            if not self._still(target, before):
                return None
            os.replace(temp, target)
            renamed = True
            temp = None
            self._sync_dir(target.parent)
            os.replace(folder / (history_id + PENDING_SUFFIX), folder / (history_id + META_SUFFIX))
            record_written(target, actor=actor, action=action)
        finally:
            if temp is not None:
                unlink_quietly(temp)
            if not renamed:
                self._drop(folder, history_id)
        self._prune(folder)
        return history_id

    def _still(self, target: Path, before: _Snapshot) -> bool:
        """Whether ``target`` still holds exactly what was read (stat signature and content), compared a block at a
        time: a second copy of the file was held at the write's peak (W99)."""
        try:
            fd = os.open(target, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            return False
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "not a regular file", str(target))
            return _signature(st) == before.signature and _holds(fd, before.data)
        finally:
            os.close(fd)

    @staticmethod
    def _snapshot(target: Path, seen: _Snapshot | None = None) -> _Snapshot:
        """The target's bytes and stat fields now; ``seen``'s bytes when it still holds exactly those (compared a
        block at a time, W99: a read before the lock and one under it held two copies of the file)."""
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "not a regular file", str(target))
            if seen is not None and len(seen.data) == st.st_size and _holds(fd, seen.data):
                data = seen.data
            else:
                if seen is not None:
                    os.lseek(fd, 0, os.SEEK_SET)
                data = os.read(fd, st.st_size + 1)  # one allocation, one copy, in the usual case
                if len(data) > st.st_size:  # the file grew while being read: read the rest
                    chunks = [data]
                    while chunk := os.read(fd, 1 << 20):
                        chunks.append(chunk)
                    data = b"".join(chunks)
            return _Snapshot(data, _signature(st), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, st.st_nlink)
        finally:
            os.close(fd)

    def _write_temp(self, folder: Path, prefix: str, data: bytes, like: _Snapshot, mode: int | None = None) -> Path:
        """Write ``data`` to a new, uniquely named file in ``folder``, with ``like``'s owner and mode, fsynced."""
        return write_temp(folder, prefix, data, mode=like.mode if mode is None else mode, owner=(like.uid, like.gid),
                          fsync=self.fsync)

    def _sync_dir(self, folder: Path) -> None:
        if self.fsync:
            sync_dir(folder)

    # -- history -----------------------------------------------------------------------------

    def _save_version(self, folder: Path, history_id: str, target: Path, before: _Snapshot) -> None:
        """Keep the replaced version as ``<id>.orig`` (a hard link to the old file, or a copy), durably."""
        saved = folder / (history_id + VERSION_SUFFIX)
        if not self._link_version(target, before, saved):
            temp = self._write_temp(folder, TEMP_MARK, before.data, before, before.mode & 0o666 or 0o600)
            os.replace(temp, saved)

    def _save_pending(self, folder: Path, history_id: str, before: _Snapshot, meta: dict[str, Any]) -> None:
        """Write the metadata as ``<id>.pending`` (committed to ``.json`` after the rename), durably."""
        metadata = json.dumps(meta, sort_keys=True).encode("utf-8") + b"\n"
        temp = self._write_temp(folder, TEMP_MARK, metadata, before, before.mode & 0o666 or 0o600)
        os.replace(temp, folder / (history_id + PENDING_SUFFIX))
        self._sync_dir(folder)

    def _link_version(self, target: Path, before: _Snapshot, saved: Path) -> bool:
        """Keep the replaced version without copying it: hard-link the old file, which the rename detaches.

        Only for a file with no other link (else a later in-place edit through that link would alter
        the saved version); False, to copy instead, when the link is refused or is not the file read.
        """
        if before.links != 1:
            return False
        try:
            os.link(target, saved, follow_symlinks=False)
        except OSError:
            return False
        st = os.lstat(saved)
        if (st.st_dev, st.st_ino) != before.signature[:2]:
            unlink_quietly(saved)
            return False
        if self.fsync:  # the user's own write of these bytes may still be only in the page cache
            fd = os.open(saved, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        return True

    @staticmethod
    def _drop(folder: Path, history_id: str) -> None:
        """Remove a staged version whose write did not happen (metadata first: it is what counts)."""
        unlink_quietly(folder / (history_id + PENDING_SUFFIX))
        unlink_quietly(folder / (history_id + VERSION_SUFFIX))

    @staticmethod
    def _ids(folder: Path, suffix: str) -> list[str]:
        try:
            names = os.listdir(folder)
        except FileNotFoundError:
            return []
        return sorted(name[: -len(suffix)] for name in names
                      if name.endswith(suffix) and name[: -len(suffix)].isdigit())

    def _next_id(self, folder: Path) -> str:
        used = [int(name.split(".", 1)[0]) for name in os.listdir(folder) if name.split(".", 1)[0].isdigit()]
        return str(max(used, default=0) + 1).zfill(ID_WIDTH)

    def _committed(self, folder: Path) -> list[HistoryEntry]:
        """Committed entries, oldest first."""
        entries = []
        for history_id in sorted(self._ids(folder, META_SUFFIX), key=int):
            try:
                meta = json.loads((folder / (history_id + META_SUFFIX)).read_text("utf-8"))
            except (OSError, ValueError):
                continue
            if not _well_formed(meta):  # edited by hand: as unreadable as a broken one
                continue
            entries.append(HistoryEntry(
                id=history_id, timestamp=meta.get("timestamp", ""), actor=meta.get("actor", ""),
                action=meta.get("action", ""), size=meta.get("size", 0), sha256=meta.get("sha256", ""),
                written_size=meta.get("written_size", 0), written_sha256=meta.get("written_sha256", ""),
                undoes=meta.get("undoes"), via=meta.get("via"), container=meta.get("container")))
        return entries

    @staticmethod
    def _load_version(folder: Path, entry: HistoryEntry, path: str | os.PathLike[str]) -> bytes:
        try:
            data = (folder / (entry.id + VERSION_SUFFIX)).read_bytes()
        except FileNotFoundError:
            raise HistoryCorrupt(f"saved version {entry.id} is missing from the history folder", path=path) from None
        if _sha256(data) != entry.sha256:
            raise HistoryCorrupt(f"saved version {entry.id} does not match its recorded checksum", path=path)
        return data

    @staticmethod
    def undo_candidate(entries: list[HistoryEntry]) -> HistoryEntry | None:
        """The write :meth:`undo` would revert, of ``entries`` oldest first: the newest entry that is neither
        an undo nor already undone (undo walks back step by step)."""
        undone = set()
        for entry in reversed(entries):
            if entry.undoes is not None:
                undone.add(entry.undoes)
            elif entry.id not in undone:
                return entry
        return None

    def _prune(self, folder: Path) -> None:
        ids = self._ids(folder, META_SUFFIX)
        for history_id in sorted(ids, key=int)[: max(0, len(ids) - self.retention)]:
            unlink_quietly(folder / (history_id + META_SUFFIX))
            unlink_quietly(folder / (history_id + VERSION_SUFFIX))

    # -- leftovers of killed writers ---------------------------------------------------------

    def _settle_leftovers(self, target: Path) -> None:
        """Under the lock: delete temporary files and settle staged versions a killed writer left.

        A staged version whose write reached the disk (the target no longer holds the staged
        bytes) is committed; one whose write never happened is dropped.
        """
        prefix = "." + target.name + TEMP_MARK
        for entry in os.scandir(target.parent):
            if entry.name.startswith(prefix):
                unlink_quietly(Path(entry.path))
        folder = self.history_dir(target)
        if not folder.is_dir():
            return
        for entry in os.scandir(folder):
            if entry.name.startswith(TEMP_MARK):
                unlink_quietly(Path(entry.path))
        pending = self._ids(folder, PENDING_SUFFIX)
        if pending:
            try:
                current_sha = _sha256(self._snapshot(target).data)
            except FileNotFoundError:
                current_sha = None
            for history_id in pending:
                try:
                    meta = json.loads((folder / (history_id + PENDING_SUFFIX)).read_text("utf-8"))
                except (OSError, ValueError):
                    meta = {}
                if not (folder / (history_id + VERSION_SUFFIX)).exists() or meta.get("sha256") in (None, current_sha):
                    self._drop(folder, history_id)
                else:
                    os.replace(folder / (history_id + PENDING_SUFFIX), folder / (history_id + META_SUFFIX))
        committed = set(self._ids(folder, META_SUFFIX))
        for history_id in self._ids(folder, VERSION_SUFFIX):
            if history_id not in committed:
                unlink_quietly(folder / (history_id + VERSION_SUFFIX))

    # -- locking -----------------------------------------------------------------------------

    def _locked(self, target: Path) -> "_Held":
        lock_file = self.lock_path(target)
        lock_file.parent.mkdir(parents=True, exist_ok=True)
        return _Held(filelock.FileLock(str(lock_file), timeout=self.lock_timeout), target)


class _Held:
    """Context manager holding a file's lock; a timeout becomes a one-line :class:`WriteConflict`."""

    def __init__(self, lock: filelock.BaseFileLock, target: Path):
        self.lock = lock
        self.target = target

    def __enter__(self) -> "_Held":
        try:
            self.lock.acquire()
        except filelock.Timeout:
            raise WriteConflict(f"another zonemark process has held its lock for more than "
                                f"{self.lock.timeout:g} s; try again later", path=self.target) from None
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.lock.release()

