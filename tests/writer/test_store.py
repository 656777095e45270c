"""Storage layer of the safe writer: durable, locked, versioned writes that keep the user's bytes."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import threading
from pathlib import Path

import filelock
import pytest

from zonemark.writer.store import (HistoryCorrupt, HistoryEntry, NothingToUndo, Store, StoreError, TEMP_MARK,
                                   UpdateResult, WriteConflict)

FIXTURE = Path(__file__).parents[1] / "fixtures" / "spec" / "14_3_external_memory_topics.md"


def insert_before_last_close(line: bytes):
    """A transform that adds ``line`` before the last ``[/P4]`` and leaves every other byte alone."""
    def transform(data: bytes) -> bytes:
        at = data.rindex(b"[/P4]")
        return data[:at] + line + data[at:]
    return transform


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def leftovers(folder: Path) -> list[Path]:
    """Every temporary or staged file the store may leave behind, anywhere under ``folder``."""
    return [p for p in folder.rglob("*") if TEMP_MARK in p.name or p.name.endswith(".pending")]


def saved_versions(store: Store, path: Path) -> list[str]:
    folder = store.history_dir(path)
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


@pytest.fixture
def memory_file(tmp_path: Path) -> Path:
    target = tmp_path / "memory.md"
    shutil.copyfile(FIXTURE, target)
    return target


@pytest.fixture
def store() -> Store:
    return Store(fsync=True, retention=50)


def test_update_writes_transform_result_and_records_history(store, memory_file):
    original = memory_file.read_bytes()
    line = b"###### LOG: 2026-01-01 \xe2\x80\x94 one\nBody.\n\n"
    result = store.update(memory_file, insert_before_last_close(line), actor="ai", action="append_entry")
    expected = insert_before_last_close(line)(original)
    assert memory_file.read_bytes() == expected
    assert result == UpdateResult(memory_file, True, len(original), len(expected), result.history_id)
    assert result.history_id is not None
    [entry] = store.history(memory_file)
    assert isinstance(entry, HistoryEntry)
    assert (entry.id, entry.actor, entry.action, entry.size) == (result.history_id, "ai", "append_entry", len(original))
    assert entry.sha256 == sha(original) and entry.written_sha256 == sha(expected)
    assert entry.written_size == len(expected) and entry.timestamp.endswith("+00:00")
    assert store.version(memory_file, entry.id) == original
    assert leftovers(memory_file.parent) == []


def test_history_is_newest_first(store, memory_file):
    ids = [store.update(memory_file, insert_before_last_close(b"x%d\n" % n), actor="ai", action=f"a{n}").history_id
           for n in range(3)]
    history = store.history(memory_file)
    assert [e.id for e in history] == ids[::-1]
    assert [e.action for e in history] == ["a2", "a1", "a0"]
    assert len(set(ids)) == 3


def test_unchanged_result_writes_nothing(store, memory_file):
    before = os.stat(memory_file)
    result = store.update(memory_file, lambda data: data, actor="ai", action="noop")
    after = os.stat(memory_file)
    assert result.changed is False and result.history_id is None
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)
    assert store.history(memory_file) == []


def test_refusing_transform_propagates_and_writes_nothing(store, memory_file):
    original = memory_file.read_bytes()
    inode = os.stat(memory_file).st_ino

    def refuse(data: bytes) -> bytes:
        raise PermissionError("zone P1 is read-only")

    with pytest.raises(PermissionError, match="read-only"):
        store.update(memory_file, refuse, actor="ai", action="append_entry")
    assert memory_file.read_bytes() == original and os.stat(memory_file).st_ino == inode
    assert store.history(memory_file) == [] and saved_versions(store, memory_file) == []
    assert leftovers(memory_file.parent) == []


def test_transform_must_return_bytes(store, memory_file):
    original = memory_file.read_bytes()
    with pytest.raises(TypeError, match="bytes"):
        store.update(memory_file, lambda data: data.decode("utf-8") + "x", actor="ai", action="bad")
    assert memory_file.read_bytes() == original


def test_odd_bytes_and_mode_are_kept(store, tmp_path):
    """No line-ending normalisation, no re-encoding, no trailing newline added; mode 0o640 kept."""
    target = tmp_path / "odd.md"
    odd = (b"\xef\xbb\xbf# Odd [external_memory]\r\n\r\n[P4]\r\n###### LOG: 2026-01-01 \x97 latin-1 dash\r\n"
           b"caf\xe9 \xff\xfe raw bytes\ttab  \r\nmixed\nendings\r\n[/P4]\r\ntrailing text without newline")
    target.write_bytes(odd)
    os.chmod(target, 0o640)
    insert = b"###### LOG: 2026-02-02 \xe2\x80\x94 added\r\n"
    result = store.update(target, insert_before_last_close(insert), actor="ai", action="append_entry")
    at = odd.rindex(b"[/P4]")
    assert target.read_bytes() == odd[:at] + insert + odd[at:]
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert result.new_size - result.old_size == len(insert)
    assert store.version(target, result.history_id) == odd


def test_owner_is_kept_where_permitted(store, memory_file):
    uid, gid = (4321, 4322) if os.geteuid() == 0 else (os.getuid(), os.getgid())
    os.chown(memory_file, uid, gid)
    store.update(memory_file, insert_before_last_close(b"x\n"), actor="ai", action="append_entry")
    st = os.stat(memory_file)
    assert (st.st_uid, st.st_gid) == (uid, gid)


def test_symlink_is_written_through(store, memory_file):
    link = memory_file.parent / "link.md"
    link.symlink_to(memory_file.name)
    store.update(link, insert_before_last_close(b"via link\n"), actor="ai", action="append_entry")
    assert link.is_symlink() and os.readlink(link) == memory_file.name
    assert b"via link\n" in memory_file.read_bytes()
    assert len(store.history(memory_file)) == 1


def test_saved_version_of_a_multiply_linked_file_is_a_copy(store, memory_file):
    """A file with a second hard link is copied, not linked, into history: edits through the other
    name cannot alter the saved version."""
    other_name = memory_file.parent / "same-inode.txt"
    os.link(memory_file, other_name)
    original = memory_file.read_bytes()
    result = store.update(memory_file, insert_before_last_close(b"one\n"), actor="ai", action="append_entry")
    saved = store.history_dir(memory_file) / f"{result.history_id}.orig"
    assert os.stat(saved).st_ino != os.stat(other_name).st_ino
    with open(other_name, "r+b") as handle:
        handle.write(b"XXXX")
    assert store.version(memory_file, result.history_id) == original


def test_saved_version_of_a_single_file_is_the_old_inode(store, memory_file):
    """No copy needed: the rename detaches the old file, which history keeps by a hard link."""
    old_inode = os.stat(memory_file).st_ino
    result = store.update(memory_file, insert_before_last_close(b"one\n"), actor="ai", action="append_entry")
    saved = store.history_dir(memory_file) / f"{result.history_id}.orig"
    assert os.stat(saved).st_ino == old_inode != os.stat(memory_file).st_ino
    assert os.stat(saved).st_nlink == 1


def test_no_md_files_created_outside_the_users(store, memory_file):
    for n in range(3):
        store.update(memory_file, insert_before_last_close(b"x%d\n" % n), actor="ai", action="append_entry")
    store.undo(memory_file, actor="user")
    found = sorted(p.relative_to(memory_file.parent) for p in memory_file.parent.rglob("*.md"))
    assert found == [Path("memory.md")]
    assert store.lock_path(memory_file).exists()
    assert len(saved_versions(store, memory_file)) == 8  # 4 writes x (.orig + .json)


def test_missing_file_is_refused_without_creating_anything(store, tmp_path):
    with pytest.raises(FileNotFoundError):
        store.update(tmp_path / "absent.md", lambda d: d + b"x", actor="ai", action="append_entry")
    with pytest.raises(IsADirectoryError):
        store.update(tmp_path, lambda d: d + b"x", actor="ai", action="append_entry")
    assert list(tmp_path.iterdir()) == []


def test_read_only_file_is_refused(store, memory_file):
    original = memory_file.read_bytes()
    os.chmod(memory_file, 0o444)
    with pytest.raises(StoreError, match="read-only"):
        store.update(memory_file, insert_before_last_close(b"x\n"), actor="ai", action="append_entry")
    assert memory_file.read_bytes() == original and stat.S_IMODE(os.stat(memory_file).st_mode) == 0o444
    assert not (memory_file.parent / ".zonemark").exists()


def test_external_edit_during_transform_is_not_lost(store, memory_file):
    """A user saves the file (without the lock) while the transform runs: the write is redone on fresh bytes."""
    calls = []
    user_line = b"###### LOG: 2026-03-03 \xe2\x80\x94 typed by the user\n"
    insert = insert_before_last_close(b"###### LOG: 2026-04-04 \xe2\x80\x94 by zonemark\n")

    def transform(data: bytes) -> bytes:
        calls.append(data)
        if len(calls) == 1:
            with open(memory_file, "ab") as handle:  # an editor that ignores the lock
                handle.write(user_line)
        return insert(data)

    original = memory_file.read_bytes()
    result = store.update(memory_file, transform, actor="ai", action="append_entry")
    assert len(calls) == 2 and calls[1] == original + user_line
    assert memory_file.read_bytes() == insert(original + user_line)
    [entry] = store.history(memory_file)
    assert entry.id == result.history_id and store.version(memory_file, entry.id) == original + user_line
    assert saved_versions(store, memory_file) == [entry.id + ".json", entry.id + ".orig"]
    assert leftovers(memory_file.parent) == []


def test_same_size_same_second_external_edit_is_detected(store, memory_file):
    """The recheck compares content, not only the stat signature."""
    calls = []

    def transform(data: bytes) -> bytes:
        calls.append(data)
        if len(calls) == 1:
            st = os.stat(memory_file)
            changed = data.replace(b"Sprint 1", b"Sprint 9")
            with open(memory_file, "r+b") as handle:
                handle.write(changed)
            os.utime(memory_file, ns=(st.st_atime_ns, st.st_mtime_ns))
        return data + b"tail\n"

    store.update(memory_file, transform, actor="ai", action="append_entry")
    assert len(calls) == 2
    assert memory_file.read_bytes().endswith(b"tail\n") and b"Sprint 9" in memory_file.read_bytes()


def test_file_that_keeps_changing_raises_conflict_and_keeps_the_users_change(memory_file):
    store = Store(fsync=False, max_attempts=3)
    calls = []

    def transform(data: bytes) -> bytes:
        calls.append(data)
        with open(memory_file, "ab") as handle:
            handle.write(b"user edit %d\n" % len(calls))
        return data + b"zonemark\n"

    with pytest.raises(WriteConflict, match="kept changing"):
        store.update(memory_file, transform, actor="ai", action="append_entry")
    # one try before the lock (nothing of zonemark's is beside the file yet), then three under it
    assert len(calls) == 1 + 3
    assert memory_file.read_bytes().endswith(b"user edit 4\n")
    assert b"zonemark\n" not in memory_file.read_bytes()
    assert store.history(memory_file) == [] and saved_versions(store, memory_file) == []
    assert leftovers(memory_file.parent) == []


def test_retention_prunes_oldest(memory_file):
    store = Store(fsync=False, retention=3)
    ids = [store.update(memory_file, insert_before_last_close(b"x%d\n" % n), actor="ai", action="append").history_id
           for n in range(6)]
    assert [e.id for e in store.history(memory_file)] == ids[:2:-1]
    assert len(saved_versions(store, memory_file)) == 6


def test_undo_restores_previous_versions_step_by_step(store, memory_file):
    v0 = memory_file.read_bytes()
    store.update(memory_file, insert_before_last_close(b"one\n"), actor="ai", action="append_entry")
    v1 = memory_file.read_bytes()
    store.update(memory_file, insert_before_last_close(b"two\n"), actor="ai", action="append_entry")
    v2 = memory_file.read_bytes()

    first = store.undo(memory_file, actor="user")
    assert memory_file.read_bytes() == v1 and first.changed and (first.old_size, first.new_size) == (len(v2), len(v1))
    newest = store.history(memory_file)[0]
    assert (newest.action, newest.actor, newest.id) == ("undo", "user", first.history_id)
    assert store.version(memory_file, newest.id) == v2  # the undone write is itself kept

    store.undo(memory_file, actor="user")
    assert memory_file.read_bytes() == v0
    with pytest.raises(NothingToUndo, match="nothing to undo"):
        store.undo(memory_file, actor="user")
    assert memory_file.read_bytes() == v0
    assert len(store.history(memory_file)) == 4


def test_undo_after_new_write_undoes_that_write(store, memory_file):
    v0 = memory_file.read_bytes()
    store.update(memory_file, insert_before_last_close(b"one\n"), actor="ai", action="append_entry")
    store.undo(memory_file, actor="user")
    store.update(memory_file, insert_before_last_close(b"two\n"), actor="ai", action="append_entry")
    store.undo(memory_file, actor="user")
    assert memory_file.read_bytes() == v0
    with pytest.raises(NothingToUndo):
        store.undo(memory_file, actor="user")


def test_undo_refused_after_user_edit(store, memory_file):
    store.update(memory_file, insert_before_last_close(b"one\n"), actor="ai", action="append_entry")
    with open(memory_file, "ab") as handle:
        handle.write(b"the user's own line\n")
    edited = memory_file.read_bytes()
    with pytest.raises(WriteConflict, match="changed since zonemark last wrote it"):
        store.undo(memory_file, actor="user")
    assert memory_file.read_bytes() == edited
    assert len(store.history(memory_file)) == 1


def test_no_history(store, memory_file):
    assert store.history(memory_file) == []
    assert store.history(memory_file.parent / "never-written.md") == []
    with pytest.raises(NothingToUndo, match="no saved version"):
        store.undo(memory_file, actor="user")
    assert issubclass(NothingToUndo, WriteConflict)


def test_corrupt_saved_version_is_reported_not_restored(store, memory_file):
    store.update(memory_file, insert_before_last_close(b"one\n"), actor="ai", action="append_entry")
    current = memory_file.read_bytes()
    [entry] = store.history(memory_file)
    (store.history_dir(memory_file) / f"{entry.id}.orig").write_bytes(b"tampered")
    with pytest.raises(HistoryCorrupt, match="checksum"):
        store.version(memory_file, entry.id)
    with pytest.raises(HistoryCorrupt):
        store.undo(memory_file, actor="user")
    assert memory_file.read_bytes() == current


@pytest.mark.parametrize("forged", ['{"size": "x"}', '{"written_size": [1]}', '[]', '"text"', '{"undoes": 7}',
                                    '{"sha256": null}', '{"timestamp": {"a": 1}}'])
def test_a_history_record_edited_by_hand_is_set_aside_like_an_unreadable_one(store, memory_file, forged):
    """A record whose fields are not what the store writes is read as a corrupt one: the history lists the
    others, undo refuses with a StoreError (one line for every face), and the file is untouched."""
    import json
    store.update(memory_file, insert_before_last_close("uno — 一\n".encode()), actor="ai", action="append_entry")
    store.update(memory_file, insert_before_last_close("due — 二\n".encode()), actor="ai", action="append_entry")
    newest, older = store.history(memory_file)
    meta = store.history_dir(memory_file) / f"{newest.id}.json"
    record = json.loads(meta.read_text("utf-8"))
    value = json.loads(forged)
    meta.write_text(json.dumps(dict(record, **value) if isinstance(value, dict) else value), "utf-8")
    current = memory_file.read_bytes()
    assert [e.id for e in store.history(memory_file)] == [older.id]
    with pytest.raises(StoreError):
        store.undo(memory_file, actor="user")
    assert memory_file.read_bytes() == current


def test_leftovers_of_a_killed_writer_are_settled(store, memory_file):
    """Temp files are removed; a staged version is committed if its write landed, dropped if not."""
    store.update(memory_file, insert_before_last_close(b"one\n"), actor="ai", action="append_entry")
    folder = store.history_dir(memory_file)
    current = memory_file.read_bytes()
    stray_temp = memory_file.parent / f".memory.md{TEMP_MARK}999.abcdef"
    stray_temp.write_bytes(b"half a file")
    other_temp = memory_file.parent / f".other.md{TEMP_MARK}999.abcdef"  # belongs to another file's writer
    other_temp.write_bytes(b"not ours")
    (folder / f"{TEMP_MARK}999.abc").write_bytes(b"half a version")
    # a write that never reached the target: staged bytes == current bytes
    (folder / "00000007.orig").write_bytes(current)
    (folder / "00000007.pending").write_text(
        '{"sha256": "%s", "written_sha256": "%s", "actor": "ai", "action": "lost"}' % (sha(current), sha(b"new")))
    # an orphan version whose metadata was never written
    (folder / "00000008.orig").write_bytes(b"orphan")
    store.update(memory_file, insert_before_last_close(b"two\n"), actor="ai", action="append_entry")
    assert not stray_temp.exists() and other_temp.exists()
    assert [e.action for e in store.history(memory_file)] == ["append_entry", "append_entry"]
    assert sorted(p.name for p in folder.iterdir() if not p.name.endswith((".json", ".orig"))) == []
    assert not (folder / "00000007.orig").exists() and not (folder / "00000008.orig").exists()


def test_staged_version_whose_write_landed_is_committed(store, memory_file):
    folder = store.history_dir(memory_file)
    folder.mkdir(parents=True)
    before = memory_file.read_bytes()
    after = insert_before_last_close(b"landed\n")(before)
    memory_file.write_bytes(after)  # the rename happened, then the writer died before committing
    (folder / "00000001.orig").write_bytes(before)
    (folder / "00000001.pending").write_text(
        '{"sha256": "%s", "written_sha256": "%s", "written_size": %d, "size": %d, "actor": "ai", '
        '"action": "append_entry", "timestamp": "t", "undoes": null}' % (sha(before), sha(after), len(after), len(before)))
    store.undo(memory_file, actor="user")
    assert memory_file.read_bytes() == before


@pytest.mark.parametrize("second_link", [False, True], ids=["linked-version", "copied-version"])
def test_failure_at_any_filesystem_step_leaves_old_or_new(tmp_path, monkeypatch, second_link):
    """Inject an OSError at each link/write/fchmod/fsync/replace call of one update in turn (a refused
    link falls back to a copy): every time the file holds the old or the new bytes, never a mix, and
    the next write settles what was left."""
    real = {name: getattr(os, name) for name in ("link", "write", "fchmod", "fsync", "replace")}
    steps_failed = 0
    while True:
        target = tmp_path / f"run{steps_failed}" / "memory.md"
        target.parent.mkdir()
        shutil.copyfile(FIXTURE, target)
        store = Store(fsync=True)
        store.update(target, insert_before_last_close(b"zero\n"), actor="ai", action="append_entry")
        if second_link:
            os.link(target, target.parent / "second-name")
        old = target.read_bytes()
        new = insert_before_last_close(b"one\n")(old)
        calls = {"n": 0}

        def failing(name):  # noqa: B023 -- built and used within this iteration of the loop
            def call(*args, **kwargs):
                calls["n"] += 1  # noqa: B023 -- this iteration's counter, on purpose
                if calls["n"] == steps_failed + 1:  # noqa: B023 -- this iteration's step
                    raise OSError(28, "No space left on device (injected)")
                return real[name](*args, **kwargs)
            return call

        for name in real:
            monkeypatch.setattr(os, name, failing(name))
        try:
            store.update(target, insert_before_last_close(b"one\n"), actor="ai", action="append_entry")
            failed = False
        except OSError:
            failed = True
        finally:
            monkeypatch.undo()
        assert target.read_bytes() in (old, new)
        store.update(target, insert_before_last_close(b"two\n"), actor="ai", action="append_entry")
        assert leftovers(target.parent) == []
        history = store.history(target)
        assert history[0].written_sha256 == sha(target.read_bytes())
        for entry in history:
            assert sha(store.version(target, entry.id)) == entry.sha256
        if calls["n"] <= steps_failed:  # the update ran through before the step to fail: all covered
            assert not failed
            break
        steps_failed += 1
    assert steps_failed >= 12


def test_fsync_flag_controls_file_and_folder_syncs(memory_file, monkeypatch):
    synced = []
    real_fsync = os.fsync

    def record(fd):
        synced.append(stat.S_ISDIR(os.fstat(fd).st_mode))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", record)
    Store(fsync=False).update(memory_file, insert_before_last_close(b"a\n"), actor="ai", action="append_entry")
    assert synced == []
    Store(fsync=True).update(memory_file, insert_before_last_close(b"b\n"), actor="ai", action="append_entry")
    assert synced.count(False) == 3  # saved version, its metadata, the new file
    assert synced.count(True) == 2  # history folder, target folder


def test_lock_is_per_file_and_times_out_with_a_conflict(memory_file, tmp_path):
    store = Store(fsync=False, lock_timeout=0.2)
    other = tmp_path / "other.md"
    other.write_bytes(b"# Other [external_memory]\n[P4]\n[/P4]\n")
    holder = filelock.FileLock(str(store.lock_path(memory_file)))
    errors = []

    def contender():
        try:
            store.update(memory_file, lambda d: d + b"x", actor="ai", action="append_entry")
        except WriteConflict as exc:
            errors.append(str(exc))

    with holder:
        thread = threading.Thread(target=contender)
        thread.start()
        thread.join()
        store.update(other, insert_before_last_close(b"free\n"), actor="ai", action="append_entry")
    assert len(errors) == 1 and "lock" in errors[0]
    assert not memory_file.read_bytes().endswith(b"x")
    assert b"free\n" in other.read_bytes()
    store.update(memory_file, lambda d: d + b"x", actor="ai", action="append_entry")
    assert memory_file.read_bytes().endswith(b"x")


def test_retention_must_be_positive():
    with pytest.raises(ValueError):
        Store(retention=0)


def test_a_refused_write_leaves_nothing_behind(memory_file):
    """Issue 7 item 9: no .zonemark/locks/ folder (or anything else) created by a refusal."""
    store = Store(fsync=False)
    before = sorted(p.name for p in memory_file.parent.iterdir())

    def refuse(data: bytes) -> bytes:
        raise ValueError("refused")

    with pytest.raises(ValueError):
        store.update(memory_file, refuse, actor="ai", action="append_entry")
    assert store.update(memory_file, lambda data: data, actor="ai", action="nothing").changed is False
    with pytest.raises(NothingToUndo):
        store.undo(memory_file, actor="user")
    assert sorted(p.name for p in memory_file.parent.iterdir()) == before
