"""Throughput and peak memory of ``zonemark import`` (the dry run) on generated ChatGPT exports, in one run.

    python bench/bench_import.py [--sizes 20,200] [--cache DIR]

For each size (MB), a ChatGPT ``conversations.json`` is generated under ``--cache`` (default
``out/bench-import``; seed fixed: the same bytes every run), written as it is generated (never held
whole): conversations of 12 turns — user, system and tool messages, a regenerated answer off the
kept branch, an image part — in English, Italian and Japanese, with a ``###### LOG:`` entry in one
assistant answer of every fourth conversation.  Each size is then imported as a dry run in a fresh
child process (``import_export`` into a small memory file), which reports its wall time and its
peak resident memory (``ru_maxrss``), and the interpreter's own peak after its imports, for scale;
its CPU time too, so that a machine busy with other work shows in the gap between the two rates.

Targets (issue 21): at least 20 MB/s for the dry run; peak memory under 200 MB whatever the size.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MEMORY = """# Bench [external_memory]

[P1]
## TOPIC: Diario
[/P1]

[P4]
[/P4]
"""
WORDS = ("the car was serviced perché il tagliando era scaduto — 東京で雨が降った and the tyres were"
         " checked before the trip to Kyoto; olio, filtri e pastiglie nuove").split()
T0 = 1_735_689_600.0  # 2025-01-01T00:00:00Z


def _prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def conversation(rng: random.Random, n: int) -> dict[str, Any]:
    """One conversation tree as the ChatGPT export has it (see the module docstring)."""
    t = T0 + n * 600.0
    nodes: dict[str, dict[str, Any]] = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
    parent = "root"

    def add(node: str, role: str, parts: list[Any], parent: str, content_type: str = "text",
            recipient: str = "all") -> str:
        nodes[node] = {"id": node, "parent": parent, "children": [], "message": {
            "id": node, "author": {"role": role, "name": None, "metadata": {}}, "create_time": t + len(nodes),
            "update_time": None, "content": {"content_type": content_type, "parts": parts},
            "status": "finished_successfully", "end_turn": True, "weight": 1.0,
            "metadata": {"model_slug": "gpt-4o"}, "recipient": recipient}}
        nodes[parent]["children"].append(node)
        return node

    parent = add(f"{n}-s", "system", [""], parent)
    for turn in range(5):
        parent = add(f"{n}-u{turn}", "user", [_prose(rng, 60)], parent)
        add(f"{n}-r{turn}", "assistant", [_prose(rng, 150)], parent)  # a regenerated answer, not kept
        text = _prose(rng, 150)
        if n % 4 == 0 and turn == 2:
            day = f"2025-{1 + n % 12:02d}-{1 + n % 28:02d}"
            text += f"\n\n###### LOG: {day} — Voce {n} perché 東京\n{_prose(rng, 40)}\n[/LOG]\n"
        parts: list[Any] = [text] if turn != 3 else [{"content_type": "image_asset_pointer",
                                                  "asset_pointer": f"file-service://{n}"}, text]
        parent = add(f"{n}-a{turn}", "assistant", parts, parent, "multimodal_text" if turn == 3 else "text")
    parent = add(f"{n}-t", "tool", [_prose(rng, 30)], parent)
    return {"title": f"Conversazione {n} — 東京", "create_time": t, "update_time": t + 500, "mapping": nodes,
            "current_node": parent, "conversation_id": f"conv-{n}", "id": f"conv-{n}", "is_archived": False}


def generate(path: Path, megabytes: int) -> int:
    """Write a ChatGPT export of about ``megabytes`` MB to ``path``, conversation by conversation; their count."""
    rng = random.Random(1)
    target = megabytes * 1_000_000
    written, n = 0, 0
    with open(path, "w", encoding="utf-8") as out:
        out.write("[")
        while written < target:
            chunk = ("," if n else "") + json.dumps(conversation(rng, n), ensure_ascii=False)
            out.write(chunk)
            written += len(chunk.encode("utf-8"))
            n += 1
        out.write("]")
    return n


def child(export: str, memory: str) -> None:
    """Run in a fresh process: the dry run, then its seconds, its peak memory and the base peak as JSON."""
    from zonemark.interchange.importing import import_export
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start, cpu = time.perf_counter(), time.process_time()
    report = import_export(export, memory, "Diario")
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "cpu": cpu, "peak_kb": peak, "base_kb": base,
                      "conversations": len(report.conversations), "found": report.total("found"),
                      "would_file": report.total("would_file")}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20,200", help="export sizes in MB, comma-separated")
    parser.add_argument("--cache", default=str(ROOT / "out" / "bench-import"))
    parser.add_argument("--child", nargs=2, metavar=("EXPORT", "MEMORY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    memory = cache / "bench[ext_memory].md"
    print("zonemark import --dry-run on generated ChatGPT exports (targets: >= 20 MB/s, peak < 200 MB)")
    print(f"{'size':>8} {'conversations':>13} {'entries':>8} {'seconds':>8} {'MB/s':>7} {'cpu s':>7} {'MB/cpu s':>8}"
          f" {'peak MB':>8} {'base MB':>8}")
    for size in (int(s) for s in args.sizes.split(",")):
        export = cache / f"conversations-{size}MB.json"
        if not export.exists():
            generate(export, size)
        memory.write_text(MEMORY, encoding="utf-8")
        out = subprocess.run([sys.executable, __file__, "--child", str(export), str(memory)], check=True,
                             capture_output=True, text=True).stdout
        r = json.loads(out)
        mb = export.stat().st_size / 1_000_000
        print(f"{mb:>6.1f}MB {r['conversations']:>13,} {r['found']:>8,} {r['seconds']:>8.2f}"
              f" {mb / r['seconds']:>7.1f} {r['cpu']:>7.2f} {mb / r['cpu']:>8.1f} {r['peak_kb'] / 1024:>8.1f}"
              f" {r['base_kb'] / 1024:>8.1f}")


if __name__ == "__main__":
    main()
