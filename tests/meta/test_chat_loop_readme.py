"""The README's walk through the chat loop runs as written, on a copy of the example layer."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from zonemark import parse
from zonemark.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[list[str]]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The chat loop", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    return [shlex.split(line)[1:] for line in block.splitlines() if line.startswith("zonemark ")]


def test_the_readme_walk_runs(tmp_path, monkeypatch, capsys):
    commands = readme_commands()
    assert [c[0] for c in commands] == ["context", "ingest", "trace", "graph"]
    shutil.copytree(ROOT / "examples" / "layer", tmp_path / "my-layer")
    shutil.copytree(ROOT / "examples" / "chat", tmp_path / "examples" / "chat")
    (tmp_path / "out").mkdir()
    monkeypatch.chdir(tmp_path)
    outputs = []
    for args in commands:
        assert main(args) == 0, (args, capsys.readouterr())
        outputs.append(capsys.readouterr().out)
    context = (tmp_path / "out" / "context.md").read_text(encoding="utf-8")
    assert context.startswith("<!-- IllAIra-Standard: v1.13 -->") and "DEFERRED_NEURAL_TRACING" in context
    assert outputs[1].splitlines() == [
        "line 3: filed: LOG 2026-10-12 — pressures after the motorway trip -> cars[ext_memory].md:29",
        "found 1 log entry: 1 filed"]
    memory = (tmp_path / "my-layer" / "cars[ext_memory].md").read_text(encoding="utf-8")
    assert "[/LOG]" not in memory and "Retry" not in memory and parse(memory).diagnostics == ()
    assert "nuclei (activation order): 1 -> 3" in outputs[2]
    assert len(list((tmp_path / "my-layer" / ".zonemark" / "traces").glob("*.json"))) == 1
    page = (tmp_path / "out" / "layer-graph.html").read_text(encoding="utf-8")
    assert '"lit":[{"step":1,"node":"nucleus:1"' in page and '"heat":{"records":1' in page
    # pasting the same answer again files nothing and records nothing new
    assert main(commands[1]) == 0 and "found 1 log entry: 0 filed, 1 duplicate" in capsys.readouterr().out
    assert main(commands[2]) == 0 and "already recorded" in capsys.readouterr().out
