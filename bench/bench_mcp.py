"""The MCP server's read tools on a large layer: parsed once per content, against re-reading it at every call.

Generates a ~20 MB layer with bench/corpus.py (``generate_layer``, seed 1): a 10 MB reminder,
50 external modules and 50 external memories of 100 KB each, in a temporary folder.  Then, in
one run, through the SDK's in-memory client (the MCP protocol, as an agent calls it), measures
the wall time (median of --calls) of

  reload   what the server did before its cache: Layer.load() and status_data() at every call
  cached   the layer_status tool, its files unchanged since the call before
  edited   the layer_status tool after one append to a 100 KB memory between two calls

and prints the ratios of reload to cached and to edited.  ``layer_status``, ``check`` and
``list_containers`` read the same cache; the test suite checks that every call sees edits
made on disk between calls.

    python bench/bench_mcp.py [--calls 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

import anyio  # noqa: E402
from mcp import Client  # noqa: E402

from corpus import generate_layer  # noqa: E402  (bench/corpus.py)
from zonemark.layer import Layer  # noqa: E402
from zonemark.layer.status import status_data  # noqa: E402
from zonemark.mcp.server import build_server  # noqa: E402
from zonemark.writer import ZoneIndex, append_entry  # noqa: E402
from zonemark.core.parser import parse_file  # noqa: E402

LAYER = dict(modules=50, memories=50, reminder_size=10_000_000, ext_size=100_000, seed=1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=5)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="zonemark-bench-mcp-") as tmp:
        folder = Path(tmp)
        generate_layer(folder, **LAYER)
        past = time.time() - 60  # outside the cache's racy window, as files an agent reads usually are
        for p in folder.rglob("*.md"):
            os.utime(p, (past, past))
        size = sum(p.stat().st_size for p in folder.rglob("*.md"))
        memory = sorted(folder.glob("*[[]ext_memory].md"))[0]
        index = ZoneIndex.build(parse_file(memory))
        topic = next(h for h in index.containers() if h.keyword == "TOPIC").name

        reload_times = []
        for _ in range(args.calls):
            t = time.perf_counter()
            status_data(Layer.load(folder))
            reload_times.append(time.perf_counter() - t)

        server = build_server(folder)
        cached, edited = [], []

        async def session():
            async with Client(server, raise_exceptions=True) as client:
                await client.call_tool("layer_status", {})  # the first call parses everything
                for k in range(args.calls):
                    t = time.perf_counter()
                    await client.call_tool("layer_status", {})
                    cached.append(time.perf_counter() - t)
                    append_entry(memory, topic, f"voce {k} — 記録", "corpo", date="2026-10-01")
                    os.utime(memory, (past, past))
                    t = time.perf_counter()
                    await client.call_tool("layer_status", {})
                    edited.append(time.perf_counter() - t)

        anyio.run(session)
    r, c, e = (statistics.median(x) for x in (reload_times, cached, edited))
    print(f"layer of {size / 1e6:.1f} MB, {args.calls} calls each (median wall time)")
    print(f"  reload (Layer.load + status at every call): {r * 1000:8.1f} ms")
    print(f"  layer_status, files unchanged:               {c * 1000:8.1f} ms   {r / c:6.1f}x faster")
    print(f"  layer_status after one append:               {e * 1000:8.1f} ms   {r / e:6.1f}x faster")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
