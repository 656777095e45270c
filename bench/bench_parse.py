"""Parse throughput of zonemark against markdown-it-py, on the same generated files, in one run.

    python bench/bench_parse.py [--kinds reminder,module,memory,mixed] [--repeat 3]

Files come from bench/corpus.py (``generate(kind, size)``, seed 1: same bytes on every run) at
1 MB and 10 MB, generated in memory.
For each file it prints:
  * zonemark ``parse(tree=True)`` (full §13 block tree and every diagnostic) and markdown-it-py
    ``MarkdownIt('commonmark').parse`` throughput in MB/s (best of --repeat runs, CPU time,
    the two alternating; markdown-it-py runs once at 10 MB) and the ratio zonemark / markdown-it-py;
  * the growth ratio: time(10 MB) / time(1 MB) (linear growth means about 10);
  * peak memory during ``parse()`` (tracemalloc, the input text excluded) as a multiple of
    the file size, with markdown-it-py's at 1 MB for comparison.
Targets (issue: core parser): ratio >= 5x, growth <= 11, zonemark peak <= 8x the file size.
"""

from __future__ import annotations

import argparse
import functools
import gc
import sys
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

import zonemark  # noqa: E402
from corpus import generate, parse_size  # noqa: E402  (bench/corpus.py)
from markdown_it import MarkdownIt  # noqa: E402


def best_cpu(fns, text: str, repeats) -> list[float]:
    """The best CPU time of each function over its number of runs.

    Runs alternate between the functions (one of each per round), so that a busy machine
    slows all of them alike instead of whichever happened to run at the wrong moment.
    """
    best = [float("inf")] * len(fns)
    for round_ in range(max(repeats)):
        for i, (fn, repeat) in enumerate(zip(fns, repeats)):
            if round_ < repeat:
                gc.collect()
                t0 = time.process_time()
                fn(text)
                best[i] = min(best[i], time.process_time() - t0)
    return best


def peak_multiple(fn, text: str, size: int) -> float:
    gc.collect()
    tracemalloc.start()
    result = fn(text)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del result
    return peak / size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kinds", default="reminder,module,memory,mixed")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    md = MarkdownIt("commonmark")
    full = functools.partial(zonemark.parse, tree=True)  # the whole §13 tree, as markdown-it builds its tokens
    print(f"{'file':16} {'zonemark MB/s':>14} {'markdown-it MB/s':>17} {'ratio':>6} "
          f"{'zm peak':>8} {'mdit peak':>9}")
    worst_ratio, worst_growth, worst_peak = float("inf"), 0.0, 0.0
    for kind in args.kinds.split(","):
        times = {}
        for size in ("1MB", "10MB"):
            text = generate(kind, parse_size(size))
            nbytes = len(text.encode("utf-8"))
            doc = zonemark.parse(text)
            assert zonemark.serialize(doc) == text and not doc.errors, f"{kind}-{size}: corpus must parse clean"
            zm, mdit = best_cpu([full, md.parse], text, [args.repeat, 1 if size == "10MB" else args.repeat])
            times[size] = zm
            zm_peak = peak_multiple(full, text, nbytes)
            md_peak = peak_multiple(md.parse, text, nbytes) if size == "1MB" else float("nan")
            ratio = mdit / zm
            worst_ratio = min(worst_ratio, ratio)
            worst_peak = max(worst_peak, zm_peak)
            print(f"{kind + '-' + size:16} {nbytes / 1e6 / zm:14.2f} {nbytes / 1e6 / mdit:17.2f} {ratio:5.1f}x "
                  f"{zm_peak:7.2f}x {md_peak:8.1f}x")
        growth = times["10MB"] / times["1MB"]
        worst_growth = max(worst_growth, growth)
        print(f"{'':16} time(10MB)/time(1MB) = {growth:.2f}")
    print(f"\nworst ratio vs markdown-it-py: {worst_ratio:.1f}x (target >= 5x); "
          f"worst growth 10MB/1MB: {worst_growth:.2f} (target <= 11); "
          f"worst peak: {worst_peak:.2f}x file size (target <= 8x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
