"""The README's 'Search' section: its sample output and its example query, on a copy of the example layer."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from zonemark.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SECTION = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Search\n", 1)[1].split("\n## ", 1)[0]


def test_the_sample_output_is_what_search_prints(tmp_path, monkeypatch, capsys):
    shutil.copytree(ROOT / "examples" / "layer", tmp_path / "my-layer")
    monkeypatch.chdir(tmp_path)
    command = re.search(r"`(zonemark search my-layer [^`]+)`:\n\n```\n(.*?)```", SECTION, re.S)
    assert command, "the README names the command of its sample"
    assert main(command.group(1).split()[1:]) == 0
    assert capsys.readouterr().out == command.group(2)


def test_container_names_find_an_entry_whose_text_names_neither_word(tmp_path, monkeypatch, capsys):
    shutil.copytree(ROOT / "examples" / "layer", tmp_path / "my-layer")
    monkeypatch.chdir(tmp_path)
    query = re.search(r"so `([^`]+)` finds the entry \*([^*]+)\*", SECTION)
    assert query
    words, title = query.group(1), query.group(2)
    assert main(["search", "my-layer", *words.split()]) == 0
    out = capsys.readouterr().out
    assert f" — {title}\n" in out
    entry = out.split(f" — {title}\n", 1)[1].split("\n", 1)[0].lower()
    assert not any(word in entry for word in words.split())
