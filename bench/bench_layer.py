"""Cost of reading a folder as a layer (§3, §7): Layer.load + graph build vs parsing the same files.

Generates a ~20 MB layer with bench/corpus.py (``generate_layer``, seed 1: the same
bytes on every run) in a temporary folder, or in --dir (which must be new or empty): a
10 MB reminder, 50 external modules and 50 external memories of 100 KB each.  Then, in
one run, measures wall time (best of --repeat) and tracemalloc peak of

  parse    parse_file(tree=True) on every file, all documents kept alive (as a layer keeps them)
  layer    Layer.load(tree=True) + build_graph() on the same folder (the graph walks the trees, W96)

and prints the overhead of the layer over parsing (target: at most +30% time,
judged on process CPU time, which a busy machine disturbs less than wall time).

    python bench/bench_layer.py [--repeat 2] [--dir DIR]
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

from corpus import generate_layer  # noqa: E402  (bench/corpus.py)
from zonemark import parse_file  # noqa: E402
from zonemark.layer.graph import build_graph  # noqa: E402
from zonemark.layer import Layer, discover  # noqa: E402

LAYER = dict(modules=50, memories=50, reminder_size=10_000_000, ext_size=100_000, seed=1)


def parse_all(paths):
    return [parse_file(p, tree=True) for p in paths]


def load_layer(folder):
    layer = Layer.load(folder, tree=True)  # the graph walks every file's headers, as `zonemark graph` loads it
    return layer, build_graph(layer)


def timed(fn, *args, repeat):
    """Best wall time and best CPU time of the process over ``repeat`` runs (CPU time resists a busy machine)."""
    best_wall = best_cpu = float("inf")
    for _ in range(repeat):
        gc.collect()
        w, c = time.perf_counter(), time.process_time()
        result = fn(*args)
        best_cpu = min(best_cpu, time.process_time() - c)
        best_wall = min(best_wall, time.perf_counter() - w)
        del result
    return best_wall, best_cpu


def peak(fn, *args):
    """tracemalloc peak of one run, and the run's result summarised by ``describe``."""
    gc.collect()
    tracemalloc.start()
    result = fn(*args)
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top, result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=2, help="timed runs per side (best is kept)")
    ap.add_argument("--dir", type=Path, help="write the layer here (new or empty folder) and keep it")
    args = ap.parse_args(argv)
    if args.dir is not None:
        if args.dir.exists() and any(args.dir.iterdir()):
            print(f"bench_layer: --dir {args.dir} is not empty", file=sys.stderr)
            return 2
        return measure(args.dir, args.repeat)
    with tempfile.TemporaryDirectory(prefix="zonemark-bench-layer-") as folder:
        return measure(Path(folder), args.repeat)


def measure(folder: Path, repeat: int) -> int:
    """Generates the layer in ``folder``, measures both sides and prints the table."""
    generate_layer(folder, **LAYER)
    _, found = discover(folder)
    paths = [p for _, p in found]
    size = sum(p.stat().st_size for p in paths)

    t_parse = timed(parse_all, paths, repeat=repeat)
    t_layer = timed(load_layer, folder, repeat=repeat)
    m_parse, docs = peak(parse_all, paths)
    del docs
    m_layer, (layer, graph) = peak(load_layer, folder)
    print(f"layer: {folder}  {len(paths)} files, {size / 1e6:.1f} MB; graph: {len(graph.nodes)} nodes, "
          f"{len(graph.links)} links, {len(graph.diagnostics)} diagnostics")
    del layer, graph

    print(f"{'':8}{'wall (best of ' + str(repeat) + ')':>22}{'cpu (best)':>14}{'MB/s (cpu)':>12}"
          f"{'tracemalloc peak':>20}")
    for name, (wall, cpu), m in (("parse", t_parse, m_parse), ("layer", t_layer, m_layer)):
        print(f"{name:8}{wall:>20.3f} s{cpu:>12.3f} s{size / 1e6 / cpu:>12.1f}{m / 1e6:>17.1f} MB")
    over_wall = (t_layer[0] / t_parse[0] - 1) * 100
    over_cpu = (t_layer[1] / t_parse[1] - 1) * 100
    over_m = (m_layer / m_parse - 1) * 100
    verdict = "OK" if over_cpu <= 30 else "OVER TARGET"
    print(f"overhead of Layer.load + build_graph over parsing: cpu {over_cpu:+.1f}% (target <= +30%: {verdict}),"
          f" wall {over_wall:+.1f}%, memory peak {over_m:+.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
