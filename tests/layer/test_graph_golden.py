"""The graph document is a contract: its JSON, DOT and Mermaid text stay byte-identical (W85).

``graph_golden.json`` holds the SHA-256 and length of each output as it was written before the
graph became typed data, for the example layer, every fixture layer, a single file's findings,
a lit trace with recorded heat, and a file with bytes that are not UTF-8 and non-ASCII text.
The layer's absolute root is written as ``<ROOT>`` so the figures do not depend on the checkout.

``ZONEMARK_WRITE_GRAPH_GOLDEN=1`` writes the file anew (only when the contract changes on purpose).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from zonemark.interchange.illuminate import illuminate
from zonemark.interchange.records import load_records, record_trace
from zonemark.interchange.trace import read_trace
from zonemark.layer import Layer
from zonemark.layer.check import reported_diagnostics
from zonemark.layer.graph import build_graph
from zonemark.render.graph_text import to_dot, to_json, to_mermaid

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).with_name("graph_golden.json")
EXAMPLE = ROOT / "examples" / "layer"
LAYERS = ROOT / "tests" / "fixtures" / "layers"
INTERCHANGE = ROOT / "tests" / "fixtures" / "interchange"

FORMATS: dict[str, Callable[[Any], str]] = {
    "json": to_json,
    "json-compact": lambda g: to_json(g, None),
    "dot": to_dot,
    "mermaid": to_mermaid,
}

UNDECODABLE = (b"# Caf\xe9 perch\xc3\xa9 [external_memory]\n\n[P4]\n## TOPIC: \xe6\x9d\xb1\xe4\xba\xac \xe2\x80\x94 na\xefve\n"
               b"###### 2026-01-02 \xe2\x80\x94 perch\xc3\xa9 <b>\n\ntext \xff\n[/P4]\n")


def _graph(case: str, tmp_path: Path) -> tuple[Any, Path]:
    """The graph (a lit one where the case says so) and the root to write as ``<ROOT>``."""
    if case == "example":
        layer = Layer.load(EXAMPLE)
        return build_graph(layer), layer.root
    if case == "example-one-file":
        layer = Layer.load(EXAMPLE / "aria[reminder].md")
        return build_graph(layer, reported_diagnostics(layer, single_file=True)), layer.root
    if case == "example-trace":
        layer = Layer.load(EXAMPLE)
        trace = read_trace((ROOT / "examples" / "chat" / "answer.txt").read_text(encoding="utf-8"), layer)
        return illuminate(build_graph(layer), layer, trace, source="answer.txt"), layer.root
    if case == "interchange-heat":
        target = tmp_path / "layer"
        shutil.copytree(INTERCHANGE / "layer", target)
        layer = Layer.load(target)
        for name in ("n7b.txt", "n7c.txt", "n5.txt"):
            past = (INTERCHANGE / "spec" / name).read_text(encoding="utf-8")
            record_trace(layer, past, read_trace(past, layer))
        records, skipped = load_records(layer)
        text = (INTERCHANGE / "spec" / "n7a.txt").read_text(encoding="utf-8")
        return (illuminate(build_graph(layer), layer, read_trace(text, layer), source="answer.txt",
                           records=records, record_warnings=skipped), layer.root)
    if case == "undecodable":
        folder = tmp_path / "perché-東京"  # the layer's name is its folder's
        folder.mkdir()
        (folder / "bad[ext_memory].md").write_bytes(UNDECODABLE)
        layer = Layer.load(folder)
        return build_graph(layer), layer.root
    layer = Layer.load(LAYERS / case.removeprefix("fixture-"))
    return build_graph(layer), layer.root


CASES = ["example", "example-one-file", "example-trace", "interchange-heat", "undecodable",
         *(f"fixture-{p.name}" for p in sorted(LAYERS.iterdir()) if p.is_dir())]


def _figures(case: str, tmp_path: Path) -> dict[str, list[object]]:
    graph, root = _graph(case, tmp_path)
    placeholder = json.dumps(str(root), ensure_ascii=False)[1:-1]
    out: dict[str, list[object]] = {}
    for name, render in FORMATS.items():
        data = render(graph).replace(placeholder, "<ROOT>").encode("utf-8")
        out[name] = [hashlib.sha256(data).hexdigest(), len(data)]
    return out


@pytest.mark.parametrize("case", CASES)
def test_graph_text_is_byte_identical_to_the_recorded_output(case, tmp_path):
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert _figures(case, tmp_path) == golden[case]


def test_golden_covers_every_case_and_writes_anew_on_request(tmp_path):
    if os.environ.get("ZONEMARK_WRITE_GRAPH_GOLDEN") == "1":
        figures = {}
        for case in CASES:
            folder = tmp_path / case
            folder.mkdir()
            figures[case] = _figures(case, folder)
        GOLDEN.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    assert sorted(json.loads(GOLDEN.read_text(encoding="utf-8"))) == sorted(CASES)
