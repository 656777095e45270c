"""A writer killed (SIGKILL) at any instant leaves the old file or the new one, never a mix, and never a stuck lock.

Writer processes (forked, so they start in milliseconds) update a file in a loop with the real
code path (lock, history, temporary file, fsync, rename); the test kills them at random moments,
then checks the file byte for byte, the saved versions, and that the next writer gets the lock
and cleans what the killed ones left.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import signal
import time
from pathlib import Path

import filelock
import pytest

from zonemark.writer.store import TEMP_MARK, Store

# Two large complete versions of different lengths: a torn write could not pass for either.
VERSION_A = b"# Kill test A [external_memory]\n" + b"".join(b"line %07d alpha alpha alpha\n" % i for i in range(36000))
VERSION_B = b"# Kill test B [external_memory]\r\n" + b"".join(b"line %07d beta\r\n" % i for i in range(50000))

APPEND_HEAD = b"# Kill test log [external_memory]\n\n[P1]\n## TOPIC: Development\n[/P1]\n\n[P4]\n" + b"x" * 200_000 + b"\n"
APPEND_TAIL = b"[/P4]\n"
APPEND_LINE = re.compile(rb"###### LOG: 2026-01-01 \xe2\x80\x94 p(\d+)-(\d+)\n")


def flip(data: bytes) -> bytes:
    if data == VERSION_A:
        return VERSION_B
    if data == VERSION_B:
        return VERSION_A
    raise AssertionError("the file is neither complete version")


def append_transform(tag: bytes):
    def transform(data: bytes) -> bytes:
        at = data.rindex(APPEND_TAIL)
        return data[:at] + b"###### LOG: 2026-01-01 \xe2\x80\x94 " + tag + b"\n" + data[at:]
    return transform


def spawn(loop) -> int:
    """Fork a writer running ``loop`` forever; it only ever ends by being killed."""
    pid = os.fork()
    if pid == 0:  # child
        try:
            loop()
        finally:
            os._exit(3)
    return pid


def kill_all(pids: list[int], rng: random.Random) -> None:
    for pid in pids:
        time.sleep(rng.uniform(0, 0.01))
        os.kill(pid, signal.SIGKILL)
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, "a writer ended by itself"


def assert_lock_free(store: Store, path: Path) -> None:
    """The killed holders' flock is gone: the lock is taken at once, without waiting."""
    lock = filelock.FileLock(str(store.lock_path(path)), timeout=0)
    lock.acquire()
    lock.release()


def stray_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if TEMP_MARK in p.name or p.name.endswith(".pending")]


def check_history(store: Store, path: Path, allowed) -> None:
    for entry in store.history(path):
        data = store.version(path, entry.id)  # raises if the bytes do not match the recorded checksum
        assert allowed(data), f"saved version {entry.id} is not a complete version"


@pytest.mark.slow
def test_sigkill_flipping_writers_leave_one_complete_version(tmp_path):
    target = tmp_path / "big.md"
    target.write_bytes(VERSION_A)
    os.chmod(target, 0o640)
    rng = random.Random(20260101)
    store = Store(fsync=True, retention=4, lock_timeout=10)

    def writer():
        own = Store(fsync=True, retention=4, lock_timeout=30)
        while True:
            own.update(target, flip, actor="writer", action="flip")

    kills = rounds_with_leftovers = 0
    seen = set()
    deadline = time.monotonic() + 22
    while kills < 240 and time.monotonic() < deadline:
        pids = [spawn(writer), spawn(writer)]
        time.sleep(rng.uniform(0.0, 0.06))
        kill_all(pids, rng)
        kills += len(pids)
        current = target.read_bytes()
        assert current in (VERSION_A, VERSION_B), f"torn file after {kills} kills ({len(current)} bytes)"
        seen.add(current)
        assert_lock_free(store, target)
        rounds_with_leftovers += bool(stray_files(tmp_path))
        # the lock is not stuck: the next writer proceeds at once, and settles the leftovers
        started = time.monotonic()
        result = store.update(target, flip, actor="checker", action="flip")
        assert result.changed and time.monotonic() - started < 5
        assert target.read_bytes() == flip(current)
        assert stray_files(tmp_path) == []
        assert oct(os.stat(target).st_mode & 0o777) == oct(0o640)
    assert kills >= 100, f"only {kills} kills in the time budget"
    print(f"\nflipping writers: {kills} SIGKILLs survived, {rounds_with_leftovers} of them mid-write")
    assert seen == {VERSION_A, VERSION_B}
    assert rounds_with_leftovers > 0, "no kill ever landed in the middle of a write"
    check_history(store, target, lambda data: data in (VERSION_A, VERSION_B))
    assert store.history(target)[0].written_sha256 == hashlib.sha256(target.read_bytes()).hexdigest()


@pytest.mark.slow
def test_sigkill_appending_writers_lose_or_tear_nothing(tmp_path):
    target = tmp_path / "log.md"
    target.write_bytes(APPEND_HEAD + APPEND_TAIL)
    rng = random.Random(7)
    store = Store(fsync=True, retention=3, lock_timeout=10)
    counter = {"n": 0}

    def appender(number: int):
        def loop():
            own = Store(fsync=True, retention=3, lock_timeout=30)
            n = 0
            while True:
                own.update(target, append_transform(b"p%d-%d" % (number, n)), actor="writer", action="append_entry")
                n += 1
        return loop

    def entries(data: bytes) -> list[tuple[int, int]]:
        assert data.startswith(APPEND_HEAD) and data.endswith(APPEND_TAIL), "head or tail damaged"
        middle = data[len(APPEND_HEAD):-len(APPEND_TAIL)]
        found = [(int(m.group(1)), int(m.group(2))) for m in APPEND_LINE.finditer(middle)]
        assert sum(len(m.group(0)) for m in APPEND_LINE.finditer(middle)) == len(middle), "torn entry"
        return found

    kills = 0
    deadline = time.monotonic() + 12
    while kills < 80 and time.monotonic() < deadline:
        numbers = [counter["n"], counter["n"] + 1]
        counter["n"] += 2
        pids = [spawn(appender(numbers[0])), spawn(appender(numbers[1]))]
        time.sleep(rng.uniform(0.0, 0.05))
        kill_all(pids, rng)
        kills += 2
        assert_lock_free(store, target)
        found = entries(target.read_bytes())
        assert len(found) == len(set(found)), "an entry was written twice"
        for number in numbers:  # each writer's completed appends are all there, in order, without gaps
            own = [n for p, n in found if p == number]
            assert own == list(range(len(own)))
        before = len(found)
        store.update(target, append_transform(b"p999999-%d" % kills), actor="checker", action="append_entry")
        assert len(entries(target.read_bytes())) == before + 1
        assert stray_files(tmp_path) == []
    assert kills >= 50
    print(f"\nappending writers: {kills} SIGKILLs survived, no entry lost, torn or doubled")
    check_history(store, target, lambda data: entries(data) is not None)
