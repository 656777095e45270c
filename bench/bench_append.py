"""Append latency of the safe writer, with and without fsync, against a plain unsafe overwrite, in one run.

    python bench/bench_append.py [--sizes 1MB,10MB] [--appends 40] [--cache DIR]

Files come from bench/corpus.py (``generate("memory", size)``, seed 1: same bytes).  For
each size, each mode starts from a fresh copy of the file and appends ``--appends`` entries
(after 2 unmeasured warm-up appends), one call per entry, timing each call (wall clock).  The
modes take turns (one append each, round after round) so that a busy machine slows them alike:

  plain overwrite   the named peer: read, insert, ``open(path, "wb").write`` — no lock, no
                    temporary file, no history, no fsync (what an unsafe tool does);
  store, no fsync   ``Store.update`` with a plain insert-before-the-last-``[/P4]`` transform:
                    lock, history (retention 50), temporary file, re-check, rename — no fsync;
  store, fsync      the same with every fsync on (the default): the cost of durability;
  append_entry, no fsync / append_entry, fsync
                    the real edit API ``zonemark.writer.append_entry`` (permission checks,
                    sanitising, verification) on top of the same store — when it is available.

Targets (issue "Safe writes"), append with fsync: p50 <= 50 ms at 1 MB and <= 200 ms at 10 MB;
judged on ``append_entry, fsync`` when the edit API exists, else on ``store, fsync`` (the output
says which).
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from corpus import generate, parse_size  # noqa: E402  (bench/corpus.py)
from zonemark.writer.store import Store  # noqa: E402

try:
    from zonemark.writer import append_entry  # noqa: E402
except ImportError:
    append_entry = None

TARGET_P50_MS = {"1MB": 50.0, "10MB": 200.0}
TOPIC = re.compile(rb"^## TOPIC: (.+?)\s*$", re.MULTILINE)


def corpus(size: str, cache: Path) -> Path:
    path = cache / f"memory-{size}.md"
    cache.mkdir(parents=True, exist_ok=True)
    path.write_bytes(generate("memory", parse_size(size)).encode("utf-8"))  # fresh each run: 0.5 s for 10 MB
    return path


def entry_line(n: int) -> bytes:
    return f"###### LOG: 2026-01-01 — bench entry {n}\nAppended by the benchmark, number {n}.\n\n".encode("utf-8")


def insert(data: bytes, n: int) -> bytes:
    """Add one entry before the last ``[/P4]``, copying the bytes once."""
    at = data.rindex(b"[/P4]")
    view = memoryview(data)
    return b"".join((view[:at], entry_line(n), view[at:]))


def plain_overwrite(path: Path, n: int) -> None:
    with open(path, "rb") as handle:
        data = handle.read()
    with open(path, "wb") as handle:
        handle.write(insert(data, n))


def store_append(store: Store):
    def run(path: Path, n: int) -> None:
        store.update(path, lambda data: insert(data, n), actor="ai", action="append_entry")
    return run


def api_append(store: Store, container: str | None):
    def run(path: Path, n: int) -> None:
        append_entry(path, container, f"bench entry {n}", f"Appended by the benchmark, number {n}.",
                     actor="ai", date="2026-01-01", store=store)
    return run


def measure(source: Path, workdir: Path, modes: list, appends: int) -> dict[str, list[float]]:
    """Milliseconds per append for each mode, the modes taking turns; each mode has its own copy."""
    targets = {}
    for label, append in modes:
        target = workdir / re.sub(r"\W+", "_", label) / "memory.md"
        target.parent.mkdir(parents=True)
        shutil.copyfile(source, target)
        for n in range(2):
            append(target, -1 - n)
        targets[label] = target
    times: dict[str, list[float]] = {label: [] for label, _ in modes}
    for n in range(appends):
        for label, append in modes:
            started = time.perf_counter()
            append(targets[label], n)
            times[label].append((time.perf_counter() - started) * 1000)
    return times


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1MB,10MB")
    parser.add_argument("--appends", type=int, default=30)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "zonemark-bench")
    args = parser.parse_args()

    judged = "append_entry, fsync" if append_entry is not None else "store, fsync"
    print("edit API: " + ("zonemark.writer.append_entry measured" if append_entry is not None
                          else "zonemark.writer.append_entry NOT available: only Store.update measured"))
    print(f"appends per mode: {args.appends} (after 2 warm-up appends); history retention 50; "
          f"folder: {args.cache}")
    print()
    header = f"{'size':>6}  {'mode':<23} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8} {'appends/s':>10} {'p50 vs peer':>12}"
    print(header)
    print("-" * len(header))
    verdicts = []
    for size in args.sizes.split(","):
        source = corpus(size, args.cache)
        topics = TOPIC.findall(source.read_bytes())
        container = topics[-1].decode("utf-8") if topics else None
        with tempfile.TemporaryDirectory(dir=args.cache) as workdir:
            modes = [("plain overwrite", plain_overwrite),
                     ("store, no fsync", store_append(Store(fsync=False))),
                     ("store, fsync", store_append(Store(fsync=True)))]
            if append_entry is not None:
                modes += [("append_entry, no fsync", api_append(Store(fsync=False), container)),
                          ("append_entry, fsync", api_append(Store(fsync=True), container))]
            measured = measure(source, Path(workdir), modes, args.appends)
            peer_p50 = None
            for label, _ in modes:
                times = measured[label]
                p50, p95 = percentile(times, 0.5), percentile(times, 0.95)
                peer_p50 = peer_p50 or p50
                print(f"{size:>6}  {label:<23} {p50:8.1f} {p95:8.1f} {statistics.fmean(times):8.1f} "
                      f"{1000 / statistics.fmean(times):10.1f} {p50 / peer_p50:11.1f}x")
                if label == judged and size in TARGET_P50_MS:
                    verdicts.append((size, p50, TARGET_P50_MS[size]))
    print()
    for size, p50, target in verdicts:
        print(f"target {size}: {judged} p50 {p50:.1f} ms <= {target:.0f} ms: "
              f"{'met' if p50 <= target else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
