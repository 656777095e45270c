"""Merge time of ``zonemark merge-file`` against ``git merge-file`` on the same three files, in one run.

    python bench/bench_merge.py [--size 10MB] [--entries 1000] [--journals 10] [--rounds 3] [--cache DIR]

BASE is the repository's generated memory (``bench/corpus.py``, kind ``memory``, seed 1: the same bytes every
run).  OURS and THEIRS each add ``--entries`` new journal entries (Italian and Japanese text) at the end of
journals picked at random (seeds 1 and 2), as two devices' AIs would append them, in two cases: the journals
picked among all of them (nearly every journal of the file changes on both sides) and all in the same
``--journals`` journals.  Both take the path of rulings G13 and G33: the zone index from the structural lines
(one parse shared by the three files), and the merged new entries parsed once.  Each round times, taking
turns so that a busy machine slows them alike:

  git merge-file            the named peer: ``git merge-file -p OURS BASE THEIRS`` (a line merge; it leaves a
                            conflict wherever both sides appended to one journal);
  zonemark merge-file       ``python -m zonemark merge-file BASE OURS THEIRS`` on a fresh copy of OURS, as git
                            runs the driver (start, read, merge by zones, the re-check, atomic write);
  plan_merge                the merge in one process (``zonemark.writer.merge.plan_merge``), no start, no write.

Target (issue 19 §3): the zonemark command at most 3x ``git merge-file`` (medians).
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from corpus import generate  # noqa: E402

T = TypeVar("T")
TARGET_RATIO = 3.0
_CLOSE = re.compile(r"^\[/P4\]$", re.MULTILINE)


def size_arg(text: str) -> int:
    m = re.fullmatch(r"(\d+)(KB|MB)?", text.strip().upper())
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text}")
    return int(m.group(1)) * {"KB": 1000, "MB": 1_000_000, None: 1}[m.group(2)]


def with_entries(base: str, entries: int, seed: int, who: str, journals: int | None) -> str:
    """``base`` with ``entries`` new entries, each at the end of a journal picked at random (dates after base's)
    among ``journals`` journals (the same ones on both sides; None: among all of them)."""
    closes = [m.start() for m in _CLOSE.finditer(base)]
    if journals is not None:
        closes = random.Random("merge-bench-journals").sample(closes, min(journals, len(closes)))
    rng = random.Random(f"merge-bench-{seed}")
    at: dict[int, list[str]] = {}
    for k in range(entries):
        day = 1 + k % 28
        at.setdefault(rng.choice(closes), []).append(
            f"\n###### LOG: 2030-01-{day:02d}T{k % 24:02d}:{k % 60:02d} — {who} nota {k}\n"
            f"Perché il treno per 東京 — {who}, voce {k}.\n")
    parts, pos = [], 0
    for close in sorted(at):
        parts.append(base[pos:close])
        parts.append("".join(at[close]).lstrip("\n") if base[close - 2:close] == "]\n" else "".join(at[close]))
        pos = close
    parts.append(base[pos:])
    return "".join(parts)


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=size_arg, default=size_arg("10MB"))
    ap.add_argument("--entries", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--journals", type=int, default=10, help="the second case: every new entry in this many journals")
    ap.add_argument("--cache", type=Path, default=None)
    args = ap.parse_args(argv)
    if shutil.which("git") is None:
        print("bench_merge: git is not on PATH; nothing to compare against")
        return 2
    folder = args.cache or Path(tempfile.mkdtemp(prefix="zonemark-bench-merge-"))
    folder.mkdir(parents=True, exist_ok=True)
    base = generate("memory", args.size, seed=1)
    from zonemark.writer.merge import plan_merge
    met = True
    for journals in (None, args.journals):
        ours = with_entries(base, args.entries, 1, "A", journals)
        theirs = with_entries(base, args.entries, 2, "B", journals)
        met &= scenario(folder, base, ours, theirs, args, journals, plan_merge)
    if args.cache is None:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


def scenario(folder: Path, base: str, ours: str, theirs: str, args: argparse.Namespace, journals: int | None,
             plan_merge: Callable[[bytes, bytes, bytes], object]) -> bool:
    """One case timed in rounds: git merge-file, zonemark merge-file, plan_merge; the medians and the ratio."""
    paths = {name: folder / f"{name}.md" for name in ("base", "ours", "theirs", "work")}
    for name, text in (("base", base), ("ours", ours), ("theirs", theirs)):
        paths[name].write_bytes(text.encode("utf-8"))
    data = {name: paths[name].read_bytes() for name in ("base", "ours", "theirs")}
    git_s, cli_s, plan_s = [], [], []
    outcome = ""
    git_conflicts = 0
    for _ in range(args.rounds):
        t, line = timed(lambda: subprocess.run(["git", "merge-file", "-p", str(paths["ours"]), str(paths["base"]),
                                                str(paths["theirs"])], capture_output=True, check=False))
        git_s.append(t)
        git_conflicts = line.returncode
        shutil.copyfile(paths["ours"], paths["work"])
        t, done = timed(lambda: subprocess.run([sys.executable, "-m", "zonemark", "merge-file", str(paths["base"]),
                                                str(paths["work"]), str(paths["theirs"])],
                                               capture_output=True, text=True, check=False))
        cli_s.append(t)
        if done.returncode != 0:
            print(f"bench_merge: zonemark merge-file exit {done.returncode}: {done.stdout}{done.stderr}")
            return False
        t, plan = timed(lambda: plan_merge(data["base"], data["ours"], data["theirs"]))
        plan_s.append(t)
        outcome = f"{plan.outcome}, {plan.entries_added} entries from theirs"
    g, c, p = statistics.median(git_s), statistics.median(cli_s), statistics.median(plan_s)
    where = "journals picked among all" if journals is None else f"all in the same {journals} journals"
    print(f"merge    base {len(data['base']) / 1e6:.1f} MB, {args.entries} new entries on each side, {where}, "
          f"{args.rounds} rounds (medians)")
    print(f"  git merge-file       {g:6.2f} s   ({git_conflicts} conflicts{'+' if git_conflicts == 127 else ''})")
    print(f"  zonemark merge-file  {c:6.2f} s   ({outcome})")
    print(f"  plan_merge           {p:6.2f} s   (in one process)")
    ratio = c / g
    verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
    print(f"  ratio zonemark / git {ratio:6.2f}x  (target <= {TARGET_RATIO:.0f}x: {verdict})")
    return ratio <= TARGET_RATIO


if __name__ == "__main__":
    sys.exit(main())
