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

Then, on the same layer, the latency an agent sees (p50 and p95 of --latency-calls calls) of
``layer_status``, ``search_memory`` and ``append_entry`` through the real server process, over stdio
(``zonemark mcp LAYER``) and over HTTP (``zonemark mcp LAYER --http --port 0``, a bearer token of
scopes read,append; the SDK's Streamable HTTP client), side by side, with the ratio HTTP/stdio.

    python bench/bench_mcp.py [--calls 5] [--latency-calls 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

import anyio  # noqa: E402
import httpx2  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

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
    ap.add_argument("--latency-calls", type=int, default=30)
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
        if args.latency_calls > 0:
            latency(folder, memory.relative_to(folder).as_posix(), topic, args.latency_calls)
    return 0


#: The calls whose latency is measured, with their arguments (append_entry's title is numbered per call).
def _calls(memory: str, topic: str) -> list[tuple[str, dict]]:
    return [("layer_status", {}), ("search_memory", {"query": "memoria"}),
            ("append_entry", {"file": memory, "container": topic, "title": "voce — 記録", "body": "perché — 東京"})]


async def _measure(client: Client, memory: str, topic: str, calls: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {}
    for name, arguments in _calls(memory, topic):
        await client.call_tool(name, arguments)  # warm: the first call parses or indexes the layer
        for k in range(calls):
            if name == "append_entry":
                arguments = {**arguments, "title": f"voce {k} — 記録"}
            t = time.perf_counter()
            result = await client.call_tool(name, arguments)
            times.setdefault(name, []).append(time.perf_counter() - t)
            if result.is_error:
                raise SystemExit(f"{name} failed: {result.content[0].text[:200]}")
    return times


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def latency(folder: Path, memory: str, topic: str, calls: int) -> None:
    """p50/p95 of three tools over stdio and over HTTP, each through its own server process."""
    env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src")}
    zonemark = [sys.executable, "-m", "zonemark"]
    stdio = StdioServerParameters(command=sys.executable, args=["-m", "zonemark", "mcp", str(folder)], env=env)

    async def over_stdio() -> dict[str, list[float]]:
        async with Client(stdio) as client:
            return await _measure(client, memory, topic, calls)

    made = subprocess.run([*zonemark, "access", str(folder), "add-token", "bench", "--scope", "read,append"],
                          capture_output=True, text=True, env=env, check=True)
    token = made.stdout.strip().splitlines()[-1]
    proc = subprocess.Popen([*zonemark, "mcp", str(folder), "--http", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        url = (proc.stdout.readline() if proc.stdout else "").strip()

        async def over_http() -> dict[str, list[float]]:
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    return await _measure(client, memory, topic, calls)

        by_http = anyio.run(over_http)
    finally:
        proc.terminate()
        proc.wait(30)
    by_stdio = anyio.run(over_stdio)
    print(f"tool latency through the server process, {calls} calls each (ms): stdio p50 / p95, HTTP p50 / p95")
    for name, _ in _calls(memory, topic):
        s, h = by_stdio[name], by_http[name]
        print(f"  {name:14} {_p(s, .5) * 1000:8.1f} / {_p(s, .95) * 1000:8.1f}   {_p(h, .5) * 1000:8.1f} / "
              f"{_p(h, .95) * 1000:8.1f}   HTTP/stdio p50 {_p(h, .5) / _p(s, .5):5.2f}x")


if __name__ == "__main__":
    raise SystemExit(main())
