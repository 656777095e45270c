"""The CLI's commands as rows of a table (W62): plain module-level run functions, importable and callable alone."""

from __future__ import annotations

import argparse
import importlib

from zonemark.cli import write
from zonemark.cli.common import Command, CliError
from zonemark.cli.main import build_parser
from zonemark.cli.write import run_append, run_history

LOG = """# Diario — perché [P2]

## MODULE 042: 東京 [P3]

[P4]
###### 2026-01-01 Inizio
— prima voce
[/P4]
"""


def test_w62_a_run_function_runs_alone_on_a_namespace(tmp_path, capsys):
    md = tmp_path / "diario[ext_memory].md"
    md.write_text(LOG, encoding="utf-8")
    args = argparse.Namespace(file=str(md), container="042", title="Viaggio a 東京", body="perché — sì",
                              body_file=None, date="2026-02-03", timestamp=False, actor="ai")
    assert run_append(args) == 0
    assert "appended to" in capsys.readouterr().out
    text = md.read_text(encoding="utf-8")
    assert "###### LOG: 2026-02-03 — Viaggio a 東京\nperché — sì\n[/P4]\n" in text and text.startswith(LOG.split("[/P4]")[0])
    assert run_history(argparse.Namespace(file=str(md))) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1  # one saved version: the one before the append
    try:
        run_history(argparse.Namespace(file=str(tmp_path / "東京.md")))
    except CliError as exc:
        assert exc.code == 2 and "no such file" in str(exc)
    else:
        raise AssertionError("a missing file must be refused")


def test_w62_the_parser_is_built_from_the_command_table():
    assert all(isinstance(c, Command) for c in write.COMMANDS)
    assert [c.name for c in write.COMMANDS] == ["append", "state", "edit", "propose", "apply", "reject",
                                                "proposals", "history", "undo"]
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    groups = [importlib.import_module(f"zonemark.cli.{m}") for m in
              ("core", "layer", "write", "search", "scaffold", "mcp", "access", "lsp", "context", "interchange", "imports",
               "review", "merge", "gitsync")]
    rows = [c for g in groups for c in g.COMMANDS]
    assert [c.name for c in rows] == list(sub.choices)  # every command is a row, in the order of --help
    for g in groups:
        assert not hasattr(g, "register")
    for c in rows:
        assert sub.choices[c.name].get_default("func") is c.run and c.run.__name__.startswith("run_" + c.name.replace("-", "_"))
        assert next(a.help for a in sub._choices_actions if a.dest == c.name) == c.help
