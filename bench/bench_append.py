"""Append latency of the safe writer — in one process and as one-shot commands — against named peers, in one run.

    python bench/bench_append.py [--sizes 1MB,10MB] [--appends 30] [--oneshot 20] [--only inprocess|oneshot]
                                 [--cache DIR]

The memory files come from the repository's generator (``bench/corpus.py``, kind ``memory``, seed 1:
the same bytes every run), written under ``--cache`` afresh on every run.

**In one process.**  For each size, each mode starts from a fresh copy of the file and appends
``--appends`` entries (after 2 unmeasured warm-up appends), one call per entry, timing each call
(wall clock).  The modes take turns (one append each, round after round) so that a busy machine
slows them alike:

  plain overwrite   the named peer: read, insert, ``open(path, "wb").write`` — no lock, no
                    temporary file, no history, no fsync (what an unsafe tool does);
  store, no fsync   ``Store.update`` with a plain insert-before-the-last-``[/P4]`` transform:
                    lock, history (retention 50), temporary file, re-check, rename — no fsync;
  store, fsync      the same with every fsync on (the default): the cost of durability;
  append_entry, no fsync / append_entry, fsync
                    the real edit API ``zonemark.writer.append_entry`` (permission checks,
                    sanitising, verification) on top of the same store.

Targets (issue "Safe writes"), ``append_entry, fsync``: p50 <= 50 ms at 1 MB and <= 200 ms at 10 MB.

**One-shot commands.**  What an agent or a script pays when it calls the CLI once per entry:
each measurement is a fresh process, the modes taking turns, ``--oneshot`` runs each after 2
warm-up runs:

  python -c plain append    the named peer: a fresh ``python -c`` that reads the file, inserts the
                            same entry before the last ``[/P4]``, rewrites it and fsyncs it;
  zonemark append           ``zonemark append FILE --container C --title T --body B --date D``:
                            lock, sanitising, the zone re-check, fsync and history all on;
  python -c pass            the named peer of ``--version``: the bare interpreter starting;
  zonemark --version        the command line starting (it imports only what it runs).

Child processes get a bytecode cache folder (``PYTHONPYCACHEPREFIX`` under ``--cache``, and
``PYTHONDONTWRITEBYTECODE`` removed), as an installed zonemark has one; the warm-up runs fill it.
Targets (issue "Foundations", item 5), p50: ``zonemark append`` <= 120 ms at 1 MB and <= 300 ms at
10 MB, ``zonemark --version`` <= 60 ms.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
sys.path.insert(0, str(SRC))
sys.path.insert(0, str(HERE))

from corpus import generate, parse_size  # noqa: E402

from zonemark.writer import append_entry  # noqa: E402
from zonemark.writer.store import Store  # noqa: E402

TARGET_P50_MS = {"1MB": 50.0, "10MB": 200.0}
ONESHOT_TARGET_P50_MS = {"1MB": 120.0, "10MB": 300.0}
VERSION_TARGET_P50_MS = 60.0
DATE = "2026-01-01"
TOPIC = re.compile(rb"^## TOPIC: (.+?)\s*$", re.MULTILINE)

#: The peer of a one-shot append: the same entry, written plainly (no lock, no temporary file, no
#: history, no check), with an fsync.  argv: FILE N.
PLAIN_APPEND = """\
import os, sys
path, n = sys.argv[1], sys.argv[2]
with open(path, "rb") as f:
    data = f.read()
at = data.rindex(b"[/P4]")
entry = f"\\n###### LOG: 2026-01-01 \\u2014 bench entry {n}\\nAppended by the benchmark, number {n}.\\n".encode()
with open(path, "wb") as f:
    f.write(data[:at] + entry + data[at:])
    f.flush()
    os.fsync(f.fileno())
"""


def corpus(size: str, cache: Path) -> Path:
    path = cache / f"corpus-memory-{size}.md"
    cache.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(".tmp")
    temp.write_bytes(generate("memory", parse_size(size), seed=1).encode("utf-8"))  # fresh each run
    temp.replace(path)
    return path


def container_of(source: Path) -> str:
    """The last topic whose name is unique in the file (an ambiguous name would be refused)."""
    names = TOPIC.findall(source.read_bytes())
    unique = [n for n in names if names.count(n) == 1]
    if not unique:
        sys.exit(f"bench_append: {source} has no topic with a unique name")
    return unique[-1].decode("utf-8")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


# -- in one process -------------------------------------------------------------------------------

def entry_line(n: int) -> bytes:
    return f"###### LOG: {DATE} — bench entry {n}\nAppended by the benchmark, number {n}.\n\n".encode("utf-8")


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


def api_append(store: Store, container: str):
    def run(path: Path, n: int) -> None:
        append_entry(path, container, f"bench entry {n}", f"Appended by the benchmark, number {n}.",
                     actor="ai", date=DATE, store=store)
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


def in_process(sizes: list[str], appends: int, cache: Path) -> list[str]:
    judged = "append_entry, fsync"
    print(f"IN ONE PROCESS: {appends} appends per mode (after 2 warm-up appends); history retention 50")
    header = (f"{'size':>6}  {'mode':<23} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8} {'appends/s':>10} "
              f"{'p50 vs peer':>12}")
    print(header)
    print("-" * len(header))
    verdicts = []
    for size in sizes:
        source = corpus(size, cache)
        container = container_of(source)
        with tempfile.TemporaryDirectory(dir=cache) as workdir:
            modes = [("plain overwrite", plain_overwrite),
                     ("store, no fsync", store_append(Store(fsync=False))),
                     ("store, fsync", store_append(Store(fsync=True))),
                     ("append_entry, no fsync", api_append(Store(fsync=False), container)),
                     ("append_entry, fsync", api_append(Store(fsync=True), container))]
            measured = measure(source, Path(workdir), modes, appends)
            peer_p50 = None
            for label, _ in modes:
                times = measured[label]
                p50, p95 = percentile(times, 0.5), percentile(times, 0.95)
                peer_p50 = peer_p50 or p50
                print(f"{size:>6}  {label:<23} {p50:8.1f} {p95:8.1f} {statistics.fmean(times):8.1f} "
                      f"{1000 / statistics.fmean(times):10.1f} {p50 / peer_p50:11.1f}x")
                if label == judged and size in TARGET_P50_MS:
                    target = TARGET_P50_MS[size]
                    verdicts.append(f"target in one process {size}: {judged} p50 {p50:.1f} ms <= {target:.0f} ms: "
                                    f"{'met' if p50 <= target else 'MISSED'}")
    print()
    return verdicts


# -- one-shot commands ------------------------------------------------------------------------------

def zonemark_command() -> list[str]:
    """The ``zonemark`` console script beside this interpreter, else ``python -m zonemark``."""
    script = Path(sys.executable).with_name("zonemark")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "zonemark"]


def child_environment(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(cache / "pycache")
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [env.get("PYTHONPATH")])])
    return env


def run_once(command: list[str], env: dict[str, str]) -> float:
    """Wall-clock milliseconds of one process, which must succeed."""
    started = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        sys.exit(f"bench_append: {' '.join(command)} failed ({done.returncode}): "
                 f"{done.stderr.decode('utf-8', 'replace').strip()}")
    return elapsed


def take_turns(modes: list, runs: int, env: dict[str, str]) -> dict[str, list[float]]:
    """Milliseconds per run of each mode (``(label, make_command(n))``), after 2 warm-up runs each."""
    for n in range(2):
        for _label, make in modes:
            run_once(make(-1 - n), env)
    times: dict[str, list[float]] = {label: [] for label, _ in modes}
    for n in range(runs):
        for label, make in modes:
            times[label].append(run_once(make(n), env))
    return times


def one_shot(sizes: list[str], runs: int, cache: Path) -> list[str]:
    env = child_environment(cache)
    zonemark = zonemark_command()
    print(f"ONE-SHOT COMMANDS: a fresh process per run, {runs} runs per mode (after 2 warm-up runs), modes taking "
          f"turns; bytecode cache {env['PYTHONPYCACHEPREFIX']}")
    header = f"{'size':>6}  {'command':<27} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8} {'p50 vs peer':>12}"
    print(header)
    print("-" * len(header))
    verdicts = []

    def report(size: str, measured: dict[str, list[float]], peer: str, judged: str, target: float) -> None:
        peer_p50 = percentile(measured[peer], 0.5)
        for label, times in measured.items():
            p50 = percentile(times, 0.5)
            print(f"{size:>6}  {label:<27} {p50:8.1f} {percentile(times, 0.95):8.1f} {statistics.fmean(times):8.1f} "
                  f"{p50 / peer_p50:11.1f}x")
        p50 = percentile(measured[judged], 0.5)
        verdicts.append(f"target one-shot {size}: {judged} p50 {p50:.1f} ms <= {target:.0f} ms: "
                        f"{'met' if p50 <= target else 'MISSED'} ({p50 / peer_p50:.1f}x {peer}, "
                        f"p50 {peer_p50:.1f} ms)")

    for size in sizes:
        source = corpus(size, cache)
        container = container_of(source)
        with tempfile.TemporaryDirectory(dir=cache) as workdir:
            plain, safe = Path(workdir) / "plain" / "memory.md", Path(workdir) / "zonemark" / "memory.md"
            for copy in (plain, safe):
                copy.parent.mkdir()
                shutil.copyfile(source, copy)
            modes = [("python -c plain append", lambda n, plain=plain: [sys.executable, "-c", PLAIN_APPEND, str(plain),
                                                                     str(n)]),
                     ("zonemark append", lambda n, safe=safe, container=container: [
                         *zonemark, "append", str(safe), "--container", container,
                                                    "--title", f"bench entry {n}",
                                                    "--body", f"Appended by the benchmark, number {n}.",
                                                    "--date", DATE])]
            measured = take_turns(modes, runs, env)
        if size in ONESHOT_TARGET_P50_MS:
            report(size, measured, "python -c plain append", "zonemark append", ONESHOT_TARGET_P50_MS[size])
    modes = [("python -c pass", lambda n: [sys.executable, "-c", "pass"]),
             ("zonemark --version", lambda n: [*zonemark, "--version"])]
    report("-", take_turns(modes, runs, env), "python -c pass", "zonemark --version", VERSION_TARGET_P50_MS)
    print()
    return verdicts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1MB,10MB")
    parser.add_argument("--appends", type=int, default=30, help="appends per mode in one process")
    parser.add_argument("--oneshot", type=int, default=20, help="runs per one-shot command")
    parser.add_argument("--only", choices=("inprocess", "oneshot"), help="run one of the two parts")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "zonemark-bench")
    args = parser.parse_args()
    sizes = args.sizes.split(",")
    print(f"files: generated memory files, seed 1; folder {args.cache}")
    print()
    verdicts = []
    if args.only != "oneshot":
        verdicts += in_process(sizes, args.appends, args.cache)
    if args.only != "inprocess":
        verdicts += one_shot(sizes, args.oneshot, args.cache)
    for line in verdicts:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
