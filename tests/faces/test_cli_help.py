"""``zonemark --help`` and every command's ``--help``: placeholders in capitals as the README writes them,
and a usage line that reads as the command is used (one LAYER, not a repeatable pair)."""

from __future__ import annotations

import re

import pytest

from zonemark.cli.main import build_parser


def _commands() -> dict:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    return dict(sub.choices)


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_positional_has_a_capitalised_placeholder(name):
    command = _commands()[name]
    for action in command._actions:
        if not action.option_strings and action.dest != "help" and not action.choices:
            shown = action.metavar or action.dest
            assert re.fullmatch(r"[A-Z_|\[\] .-]+", shown), f"zonemark {name}: positional shown as {shown!r}"


@pytest.mark.parametrize("name, usage", [
    ("trace", "LAYER [FILE|-]"),
    ("ingest", "MEMORY_FILE --container PATH"),
    ("apply", "PROPOSAL_OR_ID"),
    ("reject", "PROPOSAL_OR_ID"),
    ("explain", "CODE"),
    ("parse", "FILE"),
])
def test_the_usage_line_reads_as_the_readme_writes_the_command(name, usage):
    text = _commands()[name].format_usage()
    assert usage in text, text
    assert "[LAYER" not in text and "...]" not in text.replace("[PATH ...]", ""), text


def test_codes_prints_one_aligned_line_per_code(capsys):
    from zonemark import CATALOGUE
    from zonemark.cli.main import main
    assert main(["codes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sorted(line.split()[0] for line in lines) == sorted(CATALOGUE)
    starts = {line.index(CATALOGUE[line.split()[0]].summary) for line in lines}
    assert len(starts) == 1, "the summaries start in one column"
