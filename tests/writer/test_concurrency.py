"""No lost updates: many processes (and threads) appending to one file through the per-file lock.

The processes use the real edit API (``append_entry`` to the "Development" topic of the §14.3
example); the thread test drives :class:`Store` directly with a plain insert transform.
"""

from __future__ import annotations

import multiprocessing
import re
import shutil
import threading
from collections import Counter
from pathlib import Path

import pytest

from zonemark.writer import append_entry
from zonemark.writer.store import Store

FIXTURE = Path(__file__).parents[1] / "fixtures" / "spec" / "14_3_external_memory_topics.md"
PROCESSES = 8
APPENDS = 50
ENTRY = re.compile(r"^###### LOG: 2026-01-01 — p(\d+)-(\d+)$", re.MULTILINE)


def append(path: Path, proc: int, n: int, store: Store) -> None:
    """Append one entry ``p<proc>-<n>`` at the end of the file's last [P4] zone (Store only)."""
    line = f"###### LOG: 2026-01-01 — p{proc}-{n}\nEntry {n} of process {proc}.\n\n".encode("utf-8")

    def transform(data: bytes) -> bytes:
        at = data.rindex(b"[/P4]")
        return data[:at] + line + data[at:]

    store.update(path, transform, actor="ai", action="append_entry")


def appender(path: str, proc: int, start: multiprocessing.synchronize.Event) -> None:
    store = Store(fsync=False, retention=5)  # same code path; only the fsync calls are skipped
    start.wait(30)
    for n in range(APPENDS):
        append_entry(path, "Development", f"p{proc}-{n}", f"Entry {n} of process {proc}.", actor="ai",
                     date="2026-01-01", store=store)


def entries(path: Path) -> Counter:
    return Counter((int(m.group(1)), int(m.group(2))) for m in ENTRY.finditer(path.read_text("utf-8")))


@pytest.fixture
def memory_file(tmp_path: Path) -> Path:
    target = tmp_path / "memory.md"
    shutil.copyfile(FIXTURE, target)
    return target


@pytest.mark.slow
def test_parallel_processes_lose_no_update(memory_file):
    original = FIXTURE.read_bytes()
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    start = context.Event()
    workers = [context.Process(target=appender, args=(str(memory_file), proc, start)) for proc in range(PROCESSES)]
    for worker in workers:
        worker.start()
    start.set()
    for worker in workers:
        worker.join(60)
    assert [worker.exitcode for worker in workers] == [0] * PROCESSES
    found = entries(memory_file)
    expected = {(proc, n) for proc in range(PROCESSES) for n in range(APPENDS)}
    assert set(found) == expected, f"missing: {sorted(expected - set(found))[:5]}"
    assert all(count == 1 for count in found.values())
    text = memory_file.read_bytes()
    # every entry went into the Development journal; the rest of the file is untouched
    development_end = original.index(b"[/P4]")
    assert text.startswith(original[:development_end])
    assert text.endswith(original[development_end:])
    for proc in range(PROCESSES):  # each process's entries appear in the order it wrote them
        own = [int(m.group(2)) for m in ENTRY.finditer(text.decode("utf-8")) if int(m.group(1)) == proc]
        assert own == list(range(APPENDS))
    history = Store().history(memory_file)
    assert len(history) == 5 and all(entry.action.startswith("append to Development") for entry in history)


def test_parallel_threads_lose_no_update(memory_file):
    errors = []

    def run(proc: int) -> None:
        store = Store(fsync=False)
        try:
            for n in range(25):
                append(memory_file, proc, n, store)
        except Exception as exc:  # reported below; a thread's exception would otherwise be lost
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(proc,)) for proc in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    found = entries(memory_file)
    assert set(found) == {(proc, n) for proc in range(4) for n in range(25)}
    assert all(count == 1 for count in found.values())
    assert len(Store().history(memory_file)) == 50  # default retention
