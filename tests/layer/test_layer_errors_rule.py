"""W52: every command that reads a layer treats a layer with errors alike (``cli.common.layer_errors``).

A layer holding two reminders (LAYER_MULTIPLE_REMINDERS, an error): the command still does its work, one
line on stderr says how many errors and where ``check`` lists them, and a one-shot command exits 1; a server
(mcp, review) says the same at startup and serves the layer.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from zonemark.cli.main import main

LAYERS = Path(__file__).resolve().parents[1] / "fixtures" / "layers"


@pytest.fixture
def layer(tmp_path) -> Path:
    """The two_reminders layer and a memory with non-ASCII text (a copy: trace records into .zonemark/)."""
    root = tmp_path / "strato — 東京"
    shutil.copytree(LAYERS / "two_reminders", root)
    (root / "viaggi[ext_memory].md").write_text(
        "# Viaggi — 東京 [external_memory]\n\n[P1]\n## TOPIC: Tokyo\n[/P1]\n\n[P4]\n"
        "###### LOG: 2026-05-03 — perché\nIl treno — 東京.\n[/P4]\n", encoding="utf-8")
    return root


def _the_line(command: str, layer: Path, err: str, *, then: str = "exit 1") -> None:
    lines = [line for line in err.splitlines() if line.startswith(f"zonemark {command}: ") and " error" in line]
    assert lines == [f"zonemark {command}: 1 error in {layer} (zonemark check {layer} lists them); {then}"], err


@pytest.mark.parametrize("command", [["status"], ["status", "--json"], ["graph"], ["graph", "--format", "dot"],
                                     ["context"], ["context", "--format", "json"]])
def test_one_shot_commands_say_so_and_exit_1_with_their_output(command, layer, capsys):
    assert main(["check", str(layer)]) == 1
    capsys.readouterr()
    assert main([*command, str(layer)]) == 1
    out, err = capsys.readouterr()
    assert out.strip(), "the output is still produced"
    _the_line(command[0], layer, err)


def test_context_of_a_clean_layer_is_silent_and_exits_0(capsys):
    assert main(["context", str(LAYERS / "registry")]) == 0
    assert "error" not in capsys.readouterr().err


def test_trace_says_so_and_exits_1(layer, tmp_path, capsys):
    chat = tmp_path / "chat.txt"
    chat.write_text("nessuna traccia — 東京\n", encoding="utf-8")
    assert main(["trace", str(layer), str(chat)]) == 1
    _the_line("trace", layer, capsys.readouterr().err)


@pytest.mark.parametrize("face", ["mcp", "review"])
def test_servers_say_so_at_startup_and_serve_the_layer(face, layer, monkeypatch, capsys):
    import importlib
    served = []
    module = importlib.import_module(f"zonemark.{face}.serve")
    monkeypatch.setattr(module, "serve", lambda root, **kw: served.append(Path(root)))
    assert main([face, str(layer)]) == 0
    assert served == [layer]
    _the_line(face, layer, capsys.readouterr().err, then="serving it as it is")


def test_a_file_given_alone_counts_its_own_errors_only(layer, capsys):
    """The count is check's for the same path (W6): a reminder given alone has none."""
    (reminder, *_) = sorted(layer.glob("*reminder*.md"))
    assert main(["context", str(reminder)]) == 0
    assert main(["status", str(reminder)]) == 0
    assert "error" not in capsys.readouterr().err
