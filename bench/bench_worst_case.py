"""Worst-case cost of every entry point: adversarial input at size N against the same at 10N.

    python bench/bench_worst_case.py [--quick] [--strict] [--entries parse,check,...] [--families zones,...]
                                     [--timeout 20]

For each entry point (parse, check, outline as text and JSON, layer load, status, graph JSON and HTML, context,
search refresh, state, the writer's append/edit/propose/apply, the sanitiser, ingest, trace,
the language server's change handling, two MCP tools called in-process) and each family of
hostile input (runs of list markers, of ``>``, of ``[``; one 10 MB line; 100,000 zones;
100,000 entries; 100,000 trace blocks; deep header nesting; deep list nesting; invalid UTF-8;
many containers with the same name) it builds a small layer — ``aria[reminder].md`` and
``notes[ext_memory].md``, the second holding the family (the text entry points get the family
as their text argument instead) — at size N and at 10N, and runs the entry point once in a
fresh subprocess, so that each measurement has its own peak memory.

Printed per case: the input bytes at N and 10N, the CPU time of the call at each size (the
process's, all threads: a machine shared with other work slows wall time, not this), the
ratio t(10N)/t(N) (linear cost gives about 10; target at most 12), and the peak memory the call
adds at its peak over the input it adds: (peak RSS over the RSS before the call — the peak is
reset first, see ``_reset_peak`` — at 10N minus the same at
N) / (10N bytes minus N bytes), so that the interpreter and the modules a call imports cancel
(the input is read before the call and not counted; target at most 8x).  A call that raises is
measured as it is (a one-line refusal is a valid answer); one that runs past --timeout is OVER.
Exit 0 unless --strict and a case is over target.  The entry points with a named limit on their text (the sanitiser's
``MAX_BODY_CHARS``, ingest's ``MAX_CHAT_CHARS`` and ``MAX_ENTRIES``, trace's ``MAX_TRACE_CHARS``)
are measured on the largest N whose 10N fits the limit (noted on the row); over it they refuse in
one line.  --quick runs every case at a tenth of the sizes (a smoke run: ratios of
such short calls are noise).  A call that takes under ``SHORT_CALL`` at N is run ``REPEATS``
times at each size and the least time and peak of each size kept; one that changes no file is also
timed ``REPEATS`` times within each run (its first run also pays for fresh memory pages).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"

RATIO_TARGET = 12.0
MEMORY_TARGET = 8.0

REMINDER = """# Aria — identity protocol [reminder]

[P1]
## RULES:
* R0: Answer plainly — perché conta.

## NUCLEUS 1: LOGICAL_OPERATIVE
[/P1]

[P1]
## MODULE 001: ANCHOR [NUCLEI: 1]
### FUNCTION
Keeps the notes of 東京.
### STATE
active
[/P1]

[P4]
###### LOG: 2026-01-01 — inizio
First entry — perché.
[/P4]

[P4]
## MODULE_STATE_REGISTRY:
* ACTIVE: 001
* INACTIVE:
[/P4]
"""

#: The head of the memory file: the container the writer cases use (Alpha), its [P3] zone
#: (line 7, proposed to) and a [P5] zone (line 16, edited).
HEAD = """# Notes — perché [external_memory]

[P1]
## TOPIC: Alpha
[/P1]

[P3]
Proposed note — 東京.
[/P3]

[P4]
###### LOG: 2026-01-01 — inizio
First entry — perché.
[/P4]

[P5]
Scratch — 東京.
[/P5]

"""
P3_LINE, P5_LINE = 7, 16


def _entry(body: str) -> str:
    return f"[P4]\n###### LOG: 2026-01-02 — bulk\n{body}\n[/P4]\n"


def fam_list_markers(n: int) -> str:
    return _entry("".join("- " * (50 + i % 50) + "x\n" for i in range(n)))


def fam_gt_runs(n: int) -> str:
    return _entry("".join(("> " * 60 if i % 2 else ">" * 120) + " q\n" for i in range(n)))


def fam_bracket_runs(n: int) -> str:
    return _entry("".join(("[" * 120 if i % 3 == 0 else "[P4" * 40 if i % 3 == 1 else "[x](" * 30) + "\n"
                          for i in range(n)))


def fam_long_line(n: int) -> str:
    return _entry(("ab *c* [d] — " * (n // 15 + 1))[:n])


def fam_zones(n: int) -> str:
    return "".join("[P5]\nnote — 東京\n[/P5]\n" for _ in range(n))


def fam_entries(n: int) -> str:
    return "[P4]\n" + "".join(f"###### LOG: 2026-01-03 — entry {i}\nbody perché\n" for i in range(n)) + "[/P4]\n"


def fam_trace_blocks(n: int) -> str:
    return _entry("".join("[NTRACE: v1]\nMODULE 001: ANCHOR active\nMEMORY Alpha: queried\n[/NTRACE]\n"
                          for _ in range(n)))


def fam_header_nesting(n: int) -> str:
    group = ("[P1]\n## TOPIC: T{i}\n[/P1]\n\n[P1]\n### SUBTOPIC1: A\n[/P1]\n\n[P1]\n#### SUBTOPIC2: B\n[/P1]\n\n"
             "[P1]\n##### SUBTOPIC3: C\n[/P1]\n\n[P4]\n[/P4]\n\n")
    return "".join(group.format(i=i) for i in range(n))


def fam_list_nesting(n: int) -> str:
    return _entry("".join("  " * (i % 200) + "- x\n" for i in range(n)))


def fam_same_name(n: int) -> str:
    return "".join("[P1]\n## TOPIC: Same\n[/P1]\n\n[P4]\n###### LOG: 2026-01-03 — x\ny\n[/P4]\n\n" for _ in range(n))


#: family -> (generator, N units, the text it is made of: str, or random bytes)
FAMILIES = {
    "list-markers": (fam_list_markers, 2_000),
    "gt-runs": (fam_gt_runs, 2_000),
    "bracket-runs": (fam_bracket_runs, 2_000),
    "long-line": (fam_long_line, 1_000_000),
    "zones": (fam_zones, 10_000),
    "entries": (fam_entries, 10_000),
    "trace-blocks": (fam_trace_blocks, 10_000),
    "header-nesting": (fam_header_nesting, 2_000),
    "list-nesting": (fam_list_nesting, 1_000),
    "invalid-utf8": (None, 1_000_000),
    "same-name": (fam_same_name, 10_000),
}

ENTRIES = ("parse", "check", "outline", "outline-json", "layer-load", "status", "graph-json", "graph-html", "context",
           "search", "state", "append", "edit", "propose", "apply", "sanitize", "ingest", "trace", "lsp-change",
           "mcp-check", "mcp-read")
#: entry points whose input is the family as text (the others read it as the memory file)
TEXT_ENTRIES = ("sanitize", "ingest", "trace")


def text_limits(entry: str) -> tuple[int | None, int | None, str]:
    """The named limits of a text entry point: (characters, log entries, their names); None where there is none.

    Those entry points refuse a larger text in one line (that refusal is measured apart, by the tests);
    their growth is measured on texts that fit, so that 10N is real work, not the refusal."""
    sys.path.insert(0, str(SRC))
    if entry == "sanitize":
        from zonemark.writer.sanitize import MAX_BODY_CHARS
        return MAX_BODY_CHARS, None, "MAX_BODY_CHARS"
    if entry == "ingest":
        from zonemark.interchange.ingest import MAX_CHAT_CHARS, MAX_ENTRIES
        return MAX_CHAT_CHARS, MAX_ENTRIES, "MAX_CHAT_CHARS, MAX_ENTRIES"
    if entry == "trace":
        from zonemark.interchange.trace import MAX_TRACE_CHARS
        return MAX_TRACE_CHARS, None, "MAX_TRACE_CHARS"
    return None, None, ""


def fitting(entry: str, family: str, n: int) -> tuple[int, str]:
    """``n``, or the largest smaller n found whose 10N text fits the entry point's named limits, and a note."""
    chars, entries, names = text_limits(entry)
    if chars is None:
        return n, ""
    m = n
    for _ in range(40):
        text = family_bytes(family, 10 * m).decode("utf-8", "replace")
        count = text.count("LOG:") if entries is not None else 0
        if len(text) <= chars and (entries is None or count <= entries):
            return m, ("" if m == n else f"N scaled to fit {names}")
        shrink = min(chars / max(len(text), 1), (entries / count) if entries and count else 1.0)
        m = max(1, min(m - 1, int(m * shrink * 0.97)))
    return m, f"N scaled to fit {names}"


def family_bytes(family: str, n: int) -> bytes:
    gen, _ = FAMILIES[family]
    if gen is None:
        return random.Random(f"worst-case-{n}").randbytes(n)
    return gen(n).encode("utf-8")


def build(folder: Path, family: str, n: int) -> tuple[int, Path]:
    """The layer of one case in ``folder``; returns the input size in bytes and the family file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "aria[reminder].md").write_text(REMINDER, encoding="utf-8")
    body = family_bytes(family, n)
    bulk = folder.parent / f"{folder.name}.txt"
    bulk.write_bytes(body)
    memory = folder / "notes[ext_memory].md"
    memory.write_bytes(body if FAMILIES[family][0] is None else HEAD.encode("utf-8") + body)
    return memory.stat().st_size, bulk


# --------------------------------------------------------------------------------- the child

def _status_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for row in f:
            if row.startswith(field + ":"):
                return int(row.split()[1])
    raise OSError(f"no {field} in /proc/self/status")


def _reset_peak() -> int:
    """Reset the process's peak resident memory to what it holds now, and return that (bytes).

    Linux's ``/proc/self/clear_refs`` (``5``) resets the high-water mark, so the peak read after the
    call is the call's own, even below an earlier peak (the imports', the input's reading);
    ``ru_maxrss`` never goes down, so a call that peaks lower than the imports showed no memory at all.
    Elsewhere the lifetime peak is the fallback."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return _status_kb("VmHWM") * 1024
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux


def _peak() -> int:
    """The peak resident memory since :func:`_reset_peak` (bytes)."""
    try:
        return _status_kb("VmHWM") * 1024
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child(entry: str, folder: Path, bulk: Path) -> dict:
    """Run one entry point once on the layer at ``folder``: its time, and how far it raised the peak RSS."""
    sys.path.insert(0, str(SRC))
    memory = folder / "notes[ext_memory].md"
    reminder = folder / "aria[reminder].md"
    import zonemark  # noqa: F401

    setup = None
    if entry in TEXT_ENTRIES:
        raw = bulk.read_bytes()
        text = raw.decode("utf-8", "replace")
        del raw
    if entry == "parse":
        from zonemark.core.parser import parse_bytes
        data = memory.read_bytes()

        def run():
            return parse_bytes(data)
    elif entry == "check":
        from zonemark.layer.check import check_paths

        def run():
            return check_paths([str(memory)])
    elif entry in ("outline", "outline-json"):
        from zonemark.core.parser import parse_file
        from zonemark.render.outline_text import write_outline

        def run():  # as `zonemark outline` (--json) reads and writes it: the outline in the parse's own scan
            with open(os.devnull, "w", encoding="utf-8") as out:
                write_outline(parse_file(memory, outline=True).outline_table(), out.write,
                              as_json=entry == "outline-json")
    elif entry == "layer-load":
        from zonemark.layer import Layer

        def run():
            return Layer.load(folder)
    elif entry in ("status", "graph-json", "graph-html"):
        from zonemark.layer import Layer
        from zonemark.layer.graph import build_graph
        from zonemark.layer.status import status_data
        from zonemark.render.graph_html import render_html
        from zonemark.render.graph_text import to_json

        def run():  # as `zonemark status` and `zonemark graph` load the layer
            layer = Layer.load(folder)
            if entry == "status":
                return status_data(layer)
            graph = build_graph(layer)
            return to_json(graph) if entry == "graph-json" else render_html(graph)
    elif entry == "context":
        from zonemark.context import context

        def run():
            return context(folder)
    elif entry == "search":
        from zonemark.search import search

        def run():
            return search(folder, "perché", in_memory=True)
    elif entry in ("state", "append", "edit", "propose", "apply"):
        from zonemark.writer import (Store, append_entry, apply_proposal, edit_zone, propose,
                                     set_states)
        store = Store(fsync=False)
        if entry == "apply":  # one proposal, the one the measured call applies (each propose parses the file)
            try:
                setup = [propose(memory, P3_LINE, "Nuova nota — 東京.", reason="bench — perché", store=store)]
            except Exception as exc:  # nothing to apply: the call is measured as that refusal
                setup = exc

        def run():
            if entry == "state":
                return set_states(folder, deactivate=["001"], store=store)
            if entry == "append":
                return append_entry(memory, "Alpha", "nuovo — 東京", "corpo — perché", date="2026-02-01",
                                    store=store)
            if entry == "edit":
                return edit_zone(memory, P5_LINE, "Scratch — modificato 東京.", store=store)
            if entry == "propose":
                return propose(memory, P3_LINE, "Nuova nota — 東京.", reason="bench — perché", store=store)
            if isinstance(setup, Exception):
                raise setup
            return apply_proposal(setup.pop().path, actor="user", store=store)
    elif entry == "sanitize":
        from zonemark.writer import sanitize_body

        def run():
            return sanitize_body(text)
    elif entry == "ingest":
        from zonemark.interchange.ingest import ingest

        def run():
            return ingest(reminder, "001", text, dry_run=True, today="2026-02-01")
    elif entry == "trace":
        from zonemark.interchange.trace import parse_trace, validate_trace
        from zonemark.layer import Layer
        small = Layer.load(folder, only=["aria[reminder].md"])

        def run():
            return validate_trace(parse_trace(text), small)
    elif entry == "lsp-change":
        from zonemark.lsp.session import Session
        session = Session()
        session.set_folders([folder])
        uri = memory.resolve().as_uri()
        source = memory.read_bytes().decode("utf-8", "replace")
        session.open(uri, source, 1)
        session.context(uri)
        from types import SimpleNamespace as NS
        at = NS(line=2, character=0)
        change = NS(range=NS(start=at, end=at), text="x")

        def run():
            session.change(uri, [change], 2)
            return session.context(uri)
    elif entry in ("mcp-check", "mcp-read"):
        import anyio

        from zonemark.mcp.server import build_server
        server = build_server(folder)

        def run():
            if entry == "mcp-check":
                return anyio.run(server.call_tool, "check", {})
            return anyio.run(server.call_tool, "read_container", {"file": memory.name, "container": "Alpha"})
    else:
        raise SystemExit(f"unknown entry point {entry!r}")
    error = None
    gc.collect()
    before = _reset_peak()
    t0 = time.process_time()
    try:
        run()
    except Exception as exc:  # a refusal is an answer: measured like any other
        error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:80] if str(exc) else ''}"
    seconds = time.process_time() - t0
    peak = max(0, _peak() - before)
    if seconds < SHORT_CALL and entry in READ_ONLY:
        # a short call that changes nothing is timed again in this process (the peak is the first run's):
        # the first run of a few milliseconds also pays for fresh memory pages, which 10N pays ten times over
        for _ in range(REPEATS - 1):
            t0 = time.process_time()
            try:
                run()
            except Exception:
                pass
            seconds = min(seconds, time.process_time() - t0)
    return {"seconds": seconds, "peak": peak, "error": error}


# --------------------------------------------------------------------------------- the parent

def measure(entry: str, family: str, n: int, work: Path, timeout: float) -> dict:
    folder = work / f"{entry}-{family}-{n}"
    size, bulk = build(folder, family, n)
    if entry in TEXT_ENTRIES:
        size = bulk.stat().st_size
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        proc = subprocess.run([sys.executable, __file__, "--child", entry, str(folder), str(bulk)], env=env,
                              capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            out = {"seconds": float("nan"), "peak": 0, "error": "child failed: "
                   + (proc.stderr.strip().splitlines() or ["?"])[-1][:80]}
        else:
            out = json.loads(proc.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        out = {"seconds": float("inf"), "peak": 0, "error": f"over --timeout {timeout:g} s"}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        bulk.unlink(missing_ok=True)
    out["size"] = size
    return out


#: A call at N shorter than this is timed again (both sizes, REPEATS runs in all, the least of
#: each kept): a few milliseconds of a shared machine's noise would otherwise make its ratio.
SHORT_CALL = 0.2
REPEATS = 3
#: The entry points that change no file and keep nothing between calls: a short one is also timed again within
#: its child (see ``child``).  Not the MCP tools: the server's second call is answered from its cache.
READ_ONLY = ("parse", "check", "outline", "outline-json", "layer-load", "status", "graph-json", "graph-html", "context",
             "search", "sanitize", "ingest", "trace")


def best_of(small: dict, big: dict, entry: str, family: str, n: int, work: Path, timeout: float
            ) -> tuple[dict, dict]:
    """The least time and peak of ``REPEATS`` runs at N and at 10N (the first runs are ``small``, ``big``)."""
    for _ in range(REPEATS - 1):
        for best, size in ((small, n), (big, 10 * n)):
            again = measure(entry, family, size, work, timeout)
            if again.get("error") == best.get("error"):
                best["seconds"] = min(best["seconds"], again["seconds"])
                best["peak"] = min(best["peak"], again["peak"])
    return small, big


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a tenth of the sizes (smoke run)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a case is over target")
    ap.add_argument("--entries", default=",".join(ENTRIES))
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds one child may take (default 20)")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        entry, folder, bulk = args.child
        print(json.dumps(child(entry, Path(folder), Path(bulk))))
        return 0
    entries = [e for e in args.entries.split(",") if e]
    families = [f for f in args.families.split(",") if f]
    for name in entries:
        if name not in ENTRIES:
            ap.error(f"unknown entry point {name!r}; known: {', '.join(ENTRIES)}")
    for name in families:
        if name not in FAMILIES:
            ap.error(f"unknown family {name!r}; known: {', '.join(FAMILIES)}")
    print(f"{'entry point':12} {'family':15} {'N bytes':>10} {'10N bytes':>11} {'t(N) s':>8} {'t(10N) s':>9} "
          f"{'ratio':>6} {'peak/in':>8}  verdict", flush=True)
    over = 0
    with tempfile.TemporaryDirectory(prefix="zonemark-worst-") as tmp:
        work = Path(tmp)
        for entry in entries:
            for family in families:
                n, scaled = fitting(entry, family, FAMILIES[family][1] // (10 if args.quick else 1))
                small = measure(entry, family, n, work, args.timeout)
                big = (measure(entry, family, 10 * n, work, args.timeout) if small["seconds"] != float("inf")
                       else {"seconds": float("inf"), "peak": 0, "size": 0, "error": "skipped"})
                if small["seconds"] < SHORT_CALL and big["seconds"] != float("inf"):
                    small, big = best_of(small, big, entry, family, n, work, args.timeout)
                ratio = big["seconds"] / max(small["seconds"], 1e-3)
                # marginal: what 9N more bytes added to the peak (the interpreter and the modules
                # a call imports cost both sizes alike, and cancel)
                memory = max(0, big["peak"] - small["peak"]) / max(big["size"] - small["size"], 1)
                ok = ratio <= RATIO_TARGET and memory <= MEMORY_TARGET and big["seconds"] != float("inf")
                over += not ok
                note = big.get("error") or small.get("error") or scaled
                print(f"{entry:12} {family:15} {small['size']:>10} {big['size']:>11} {small['seconds']:8.3f} "
                      f"{big['seconds']:9.3f} {ratio:6.1f} {memory:7.1f}x  {'OK' if ok else 'OVER'}"
                      f"{'  (' + note + ')' if note else ''}", flush=True)
    print(f"\n{over} case(s) over target (ratio <= {RATIO_TARGET:g}, peak <= {MEMORY_TARGET:g}x the input)")
    return 1 if args.strict and over else 0


if __name__ == "__main__":
    sys.exit(main())
