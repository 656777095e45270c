"""The README's 'Command line', 'Starting a layer' and 'Library' sections, as a new user runs them."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from zonemark import parse
from zonemark.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    """The text under ``## title`` up to the next H2 (a ``## `` line inside a code block is not one)."""
    out, fenced = [], False
    for line in README.split(f"\n## {title}\n", 1)[1].splitlines(keepends=True):
        if line.startswith("```"):
            fenced = not fenced
        elif line.startswith("## ") and not fenced:
            break
        out.append(line)
    return "".join(out)


def blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def commands() -> dict:
    (sub,) = [a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction"]
    return dict(sub.choices)


def test_the_command_list_names_every_command_with_flags_it_has():
    (block,) = blocks(section("Command line"), "sh")
    named: dict[str, set[str]] = {}
    current = None
    for line in block.splitlines():
        for part in re.split(r"\s+/\s+", line.split("  #", 1)[0]):
            part = part.strip()
            m = re.match(r"zonemark ([a-z-]+)", part)
            if m:
                current = m.group(1)
            if current:
                named.setdefault(current, set()).update(re.findall(r"(?<![\w-])(--[a-z-]+|-o)\b", part))
    parsers = commands()
    assert set(named) == set(parsers)
    for name, flags in named.items():
        options = {o for action in parsers[name]._actions for o in action.option_strings}
        assert flags <= options, f"zonemark {name}: {sorted(flags - options)} not in its --help"


def test_starting_a_layer_runs_as_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    text = section("Starting a layer")
    (sh,) = blocks(text, "sh")
    lines = [line.split("  #", 1)[0] for line in sh.splitlines() if line.startswith("zonemark ")]
    assert len(lines) == 5
    for line in lines:
        assert main(shlex.split(line)[1:]) == 0, (line, capsys.readouterr())
        if shlex.split(line)[1:3] == ["new", "memory"]:
            (sample,) = blocks(text, "markdown")
            created = (tmp_path / "my-layer" / "Cars[ext_memory].md").read_text(encoding="utf-8")
            assert created.startswith(sample), "the sample is what 'new memory' writes"
    capsys.readouterr()
    assert main(["check", "my-layer"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "3 files checked: 0 errors, 0 warnings; 3 clean"
    reminder = (tmp_path / "my-layer" / "Aria[reminder].md").read_text(encoding="utf-8")
    assert "## MODULE 001: CURIOSITY_DRIVE" in reminder  # the comment says MODULE 001
    module = (tmp_path / "my-layer" / "Curiosity[ext_module].md").read_text(encoding="utf-8")
    assert "## MODULE CURIOSITY: Curiosity [NUCLEI: ]" in module and "**STATE:** active" in module


@pytest.mark.parametrize("example", sorted((ROOT / "examples" / "layer").glob("*.md")), ids=lambda p: p.name)
def test_the_library_snippet_runs(example, capsys):
    (snippet,) = blocks(section("Library"), "python")
    text = example.read_text(encoding="utf-8")
    exec(compile(snippet, "README.md (Library)", "exec"), {"text": text, "path": example})
    printed = capsys.readouterr().out.splitlines()
    assert printed == [d.format() for d in parse(text).diagnostics]  # a file alone: its own findings
    assert all(re.match(r"<text>:\d+:\d+: [A-Z_]+ \S", line) for line in printed)
