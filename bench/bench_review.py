"""Server time and HTML size of every review page, on a 20 MB layer with a long history and on the example layer.

    python bench/bench_review.py [--layer DIR] [--writes 1000] [--proposals 50] [--runs 5] [--timeout 120]

The big layer is bench/corpus.py's (``generate_layer``, seed 1): a 10 MB reminder, 50 external modules and 50
external memories of 100 KB each.  On it the AI makes ``--writes`` appends through the writer API (one in ten
to a module's journal in the reminder, the rest across the other files' journals) and ``--proposals`` proposals
for [P3] zones of the reminder, so the history and the Proposals page hold what a layer of years holds.
``--layer DIR`` keeps that folder (built once, reused while its marker says the same arguments): before and
after a change are then measured on the same bytes.  The small layer is ``examples/layer`` with the review
tests' activity (tests/review_support.py), in a temporary folder.

Each page is requested through the review application itself (its ASGI callable, behind the security gate,
as the browser reaches it), in a fresh process for each page: once to warm the layer cache, then ``--runs``
times; the table gives the median (p50) server time and the HTML size.  A page whose requests take longer than
``--timeout`` seconds is stopped and shown as ``> TIMEOUT``.  Pages:
Activity, a write's diff (the newest write of the reminder; five older writes of it, each viewed once: a
first view reads and compares two versions; then one of them again, from the page's cache), Proposals,
Modules, Check, Graph, the graph frame (the graph page's engineer owns its size) and the file view of the
reminder (its first page).

Targets (issue 18 §1): p50 at most 300 ms and at most 2 MB of HTML a page (the graph frame excepted).

``--browser`` then starts ``zonemark review`` on the big layer (a real server) and opens every page except
the graph frame in the system's headless Chromium (tests/headless_chromium.py) at 1280 px wide: each must
be loaded (``readyState`` complete) within ``--browser-budget`` seconds and scroll no wider than the window
(``scrollWidth`` at most ``clientWidth``); the same at 400 px is shown, not counted (the narrow layout is
another part of the issue).  The table gives the load time and the widths; it is a
budget checked here, never a timed assertion of the test suite.

The script exits 1 when a page of the big layer misses a target or a budget, 0 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "src"), str(HERE), str(ROOT / "tests")]

from corpus import generate_layer  # noqa: E402  (bench/corpus.py)
from zonemark.core.parser import parse_file  # noqa: E402
from zonemark.review.app import Review, build_app  # noqa: E402
from zonemark.writer import Store, ZoneIndex, append_entry, propose  # noqa: E402

LAYER = dict(modules=50, memories=50, reminder_size=10_000_000, ext_size=100_000, seed=1)
PORT = 8765
TOKEN = "bench-token"
TARGET_SECONDS = 0.300
TARGET_BYTES = 2_000_000
EXEMPT = {"graph frame"}  # the graph page's own budget (another part of the issue)


def _journal_containers(path: Path) -> list[str]:
    """Addresses of containers of ``path`` the AI may append to (modules by id, topics by name)."""
    index = ZoneIndex.build(parse_file(path))
    out = []
    for h in index.containers():
        if h.type == "module" and h.id:
            out.append(h.id)
        elif h.keyword == "TOPIC":
            out.append(h.name)
    return out


def build_big(folder: Path, writes: int, proposals: int) -> None:
    """The 20 MB layer with ``writes`` appends and ``proposals`` open proposals (see the module docstring)."""
    marker = folder / ".bench-review.json"
    wanted = {"layer": LAYER, "writes": writes, "proposals": proposals}
    if marker.is_file() and json.loads(marker.read_text(encoding="utf-8")) == wanted:
        return
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    generate_layer(folder, **LAYER)
    store = Store(fsync=False)
    reminder = next(folder.glob("*[[]reminder].md"))
    others = sorted(p for p in folder.glob("*.md") if p != reminder)
    targets = {p: _journal_containers(p) for p in [reminder, *others]}
    t = time.perf_counter()
    for k in range(writes):
        path = reminder if k % 10 == 0 else others[k % len(others)]
        pool = targets[path]
        container = pool[k % len(pool)]
        append_entry(path, container, f"nota {k} — perché 東京", f"Scritto dall'AI — voce {k}, 記録.",
                     actor="ai", date="2026-11-30", store=store)
    print(f"{writes} writes in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    data = reminder.read_bytes()
    index = ZoneIndex.build(parse_file(reminder))
    zones = [index.zone(i) for i in range(len(index)) if index.zone(i).level == 3
             and index.zone(i).close_start is not None]
    for k, zone in enumerate(zones[:proposals]):
        assert zone.close_start is not None
        inner = data[zone.inner_start:zone.close_start].decode("utf-8")
        propose(reminder, zone.line, inner + f"Nota proposta {k} — perché, 東京.\n",
                reason=f"aggiunge una nota — {k}", actor="ai", store=store)
    past = time.time() - 60  # outside the layer cache's racy window
    for p in folder.glob("*.md"):
        os.utime(p, (past, past))
    marker.write_text(json.dumps(wanted), encoding="utf-8")


def build_small(folder: Path) -> None:
    from review_support import add_ai_activity, make_layer
    layer = make_layer(folder)
    add_ai_activity(layer)
    past = time.time() - 60
    for p in layer.glob("*.md"):
        os.utime(p, (past, past))


async def _get(app, path: str, params: dict[str, str]) -> tuple[int, bytes]:
    query = urlencode({"token": TOKEN, **params})
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": query.encode(), "root_path": "",
             "headers": [(b"host", f"127.0.0.1:{PORT}".encode())], "client": ("127.0.0.1", 40000),
             "server": ("127.0.0.1", PORT)}
    status, body = 0, []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            body.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, b"".join(body)


def _one_page(folder: Path, route: str, params: dict[str, str], first: bool, runs: int, out) -> None:
    """In a child process: a page requested once to warm the layer cache (Activity when ``first``: the page's
    own first view is then timed once), then the page timed ``runs`` times."""
    app = build_app(folder, token=TOKEN, port=PORT)
    asyncio.run(_get(app, "/activity" if first else route, params if not first else {}))
    times, status, size = [], 0, 0
    ids = params.get("id", "").split(",")
    for k in range(len(ids) if first else runs):  # a first view: each of several writes once
        t = time.perf_counter()
        status, body = asyncio.run(_get(app, route, {**params, "id": ids[k]} if first else params))
        times.append(time.perf_counter() - t)
        size = max(size, len(body))
    out.send((statistics.median(times), size, status))


def timed(folder: Path, route: str, params: dict[str, str], first: bool, runs: int,
          timeout: float) -> tuple[float, int, int]:
    """(p50 seconds, bytes, status) of a page, measured in a fresh process; seconds is inf past ``timeout``."""
    ctx = multiprocessing.get_context("fork")
    receiving, sending = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_one_page, args=(folder, route, params, first, runs, sending))
    child.start()
    try:
        if receiving.poll(timeout * (runs + 2)):
            return receiving.recv()
        return float("inf"), 0, 0
    finally:
        if child.is_alive():
            child.kill()
        child.join()


def pages(folder: Path) -> list[tuple[str, str, dict[str, str], bool]]:
    """(name, route, parameters, first view) of the pages measured on ``folder``."""
    files = sorted(p.name for p in folder.glob("*.md"))
    biggest = max(files, key=lambda name: (folder / name).stat().st_size)
    out = [("activity", "/activity", {}, False), ("proposals", "/proposals", {}, False),
           ("modules", "/modules", {}, False), ("check", "/check", {}, False), ("graph", "/graph", {}, False),
           ("graph frame", "/graph/frame", {}, False), ("file view", "/file", {"path": biggest}, False)]
    history = Store().history(folder / biggest)
    if history and hasattr(Review, "write_diff"):  # the page has a diff page per write
        out.append(("diff, newest write", "/activity/diff", {"file": biggest, "id": history[0].id}, False))
        older = history[len(history) // 2].id
        firsts = ",".join(h.id for h in history[1:len(history) // 2][:5])  # five other older writes
        out.append(("diff, older writes (first view)", "/activity/diff", {"file": biggest, "id": firsts}, True))
        out.append(("diff, older write (again)", "/activity/diff", {"file": biggest, "id": older}, False))
    return out


def measure(folder: Path, runs: int, timeout: float) -> dict[str, tuple[float, int, int]]:
    return {name: timed(folder, route, params, first, runs, timeout)
            for name, route, params, first in pages(folder)}


def browse(folder: Path, budget: float) -> int:
    """Every page of ``folder`` in headless Chromium, wide and narrow (see the module docstring); pages missed."""
    from headless_chromium import find_chromium, running_chromium
    from review_support import ReviewServer
    files = sorted(folder.glob("*.md"), key=lambda p: p.stat().st_size)
    history = Store().history(files[-1])
    routes = [("activity", "/activity", {}), ("proposals", "/proposals", {}), ("modules", "/modules", {}),
              ("check", "/check", {}), ("file view", "/file", {"path": files[-1].name}),
              ("file view, last page", "/file", {"path": files[-1].name, "page": "999999"})]
    if history:
        routes.append(("diff, newest write", "/activity/diff", {"file": files[-1].name, "id": history[0].id}))
    missed = 0
    print(f"\n{'page in Chromium':32} {'width':>6} {'loaded in':>10} {'scrollWidth':>12}  budget")
    with tempfile.TemporaryDirectory(prefix="zonemark-bench-chromium-") as work, ReviewServer(folder) as server, \
            running_chromium(find_chromium(), Path(work)) as browser:
        for width in (1280, 400):
            browser.call("Emulation.setDeviceMetricsOverride", width=width, height=800, deviceScaleFactor=1,
                         mobile=False)
            server.get("/activity")  # the first request reads and parses the layer: not a page's load time
            for name, route, params in routes:
                url = server.url(route, **params)
                t = time.perf_counter()
                browser.call("Page.navigate", url=url)
                loaded = False
                while time.perf_counter() - t < budget:
                    try:
                        loaded = browser.evaluate(f"location.href === {json.dumps(url)} && "
                                                  "document.readyState === 'complete'")
                    except (AssertionError, RuntimeError):
                        loaded = False
                    if loaded:
                        break
                    time.sleep(0.05)
                seconds = time.perf_counter() - t
                scroll = browser.evaluate("[document.documentElement.scrollWidth, "
                                          "document.documentElement.clientWidth]") if loaded else [0, 0]
                ok = loaded and scroll[0] <= scroll[1]
                if width == 1280:
                    missed += not ok
                    verdict = "met" if ok else "MISSED"
                else:  # the narrow layout is the page's looks (issue 18 §3): shown, not counted here
                    verdict = "(narrow: shown only)" if ok else "(narrow: scrolls; shown only)"
                shown = f"{seconds:.2f} s" if loaded else f"> {budget:.0f} s"
                print(f"{name:32} {width:>6} {shown:>10} {scroll[0]:>6} / {scroll[1]:<5}  {verdict}")
    return missed


def _fmt(seconds: float, timeout: float) -> str:
    return f"> {timeout:.0f} s" if seconds == float("inf") else f"{seconds * 1000:.0f} ms"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layer", type=Path, help="keep the big layer in this folder (built once)")
    ap.add_argument("--writes", type=int, default=1000)
    ap.add_argument("--proposals", type=int, default=50)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--browser", action="store_true", help="open the big layer's pages in headless Chromium too")
    ap.add_argument("--browser-budget", type=float, default=10.0)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="zonemark-bench-review-") as tmp:
        big = args.layer or Path(tmp) / "big"
        build_big(big, args.writes, args.proposals)
        small_root = Path(tmp) / "small"
        small_root.mkdir()
        build_small(small_root)
        small = next(small_root.iterdir())
        size = sum(p.stat().st_size for p in big.glob("*.md"))
        print(f"big layer: {size / 1e6:.1f} MB in {len(list(big.glob('*.md')))} files, {args.writes} writes, "
              f"{args.proposals} proposals; example layer: {len(list(small.glob('*.md')))} files; "
              f"p50 of {args.runs} runs")
        small_found = measure(small, args.runs, args.timeout)
        big_found = measure(big, args.runs, args.timeout)
        browser_missed = browse(big, args.browser_budget) if args.browser else 0
    print(f"{'page':32} {'example p50':>12} {'example HTML':>13} {'big p50':>10} {'big HTML':>11}  target")
    missed = 0
    for name, (seconds, size, status) in big_found.items():
        small_s, small_size, _ = small_found.get(name, (float("nan"), 0, 0))
        ok = seconds <= TARGET_SECONDS and size <= TARGET_BYTES and status == 200
        if name in EXEMPT:
            verdict = "(graph page's own budget)"
        else:
            verdict = "met" if ok else "MISSED"
            missed += not ok
        small_text = "-" if small_s != small_s else _fmt(small_s, args.timeout)
        print(f"{name:32} {small_text:>12} {small_size / 1e3:>10.1f} KB {_fmt(seconds, args.timeout):>10} "
              f"{size / 1e6:>8.2f} MB  {verdict}")
    print(f"targets: p50 <= {TARGET_SECONDS * 1000:.0f} ms, HTML <= {TARGET_BYTES / 1e6:.0f} MB a page; "
          f"{'all met' if not missed else f'{missed} missed'}")
    return 1 if missed or browser_missed else 0


if __name__ == "__main__":
    sys.exit(main())
