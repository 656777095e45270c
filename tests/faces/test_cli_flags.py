"""Messages and flags of the write commands (issue 7 items 6-9): one line, clear, nothing left behind."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zonemark import parse
from zonemark.cli.main import main
from zonemark.cli.write import DATE_HELP as CLI_DATE_HELP
from zonemark.writer import append_entry
from zonemark.writer import snapshot as snapshot_module
from zonemark.writer.rules import DATE_HELP, check_date

MEMORY = """# Piani — 計画 [external_memory]

[P1]
## TOPIC: Plans
[/P1]

[P3]
###### LOG: 2026-01-01 — idea
Forse Kyōto — in primavera.
[/P3]

[P1]
## TOPIC: Open
[/P1]

[P4]
###### LOG: 2026-01-01 — x
y
"""


@pytest.fixture
def memory(tmp_path):
    snapshot_module.forget()
    f = tmp_path / "piani.md"
    f.write_text(MEMORY, encoding="utf-8")
    return f


def run(capsys, monkeypatch, argv, stdin: bytes | None = None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = err.rstrip("\n").split("\n")
    assert len(lines) == 1 and lines[0], err
    return lines[0]


# -- item 6 --------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["--date", "2026-11-02\n## X"], ["--container", "No\n[P1]"], ["--title", "a\nb"],
    ["--container", "Città\u2028x"],
])
def test_a_refusal_quoting_a_value_is_one_line(memory, capsys, monkeypatch, argv):
    base = {"--container": "Open", "--title": "t", "--body": "b"}
    args = dict(base)
    args.update(dict(zip(argv[::2], argv[1::2])))
    old = memory.read_bytes()
    code, _, err = run(capsys, monkeypatch, ["append", memory] + [x for kv in args.items() for x in kv])
    assert code in (1, 2)
    line = one_line(err)
    if argv[0] != "--title":  # a title with a break is refused without quoting it
        assert "\\n" in line or "\\u2028" in line
    assert memory.read_bytes() == old


def test_propose_prints_one_summary_line_of_findings(memory, capsys, monkeypatch, tmp_path):
    content = tmp_path / "c.md"
    content.write_text("###### LOG: 2026-01-01 — idea\n###### LOG: 2026-13-01 — bad\n###### LOG: 2026-14-01 — worse\n",
                       encoding="utf-8")
    code, out, err = run(capsys, monkeypatch, ["propose", memory, "--zone", "7", "--reason", "r",
                                               "--content-file", content])
    assert code == 0
    line = one_line(err)
    assert line.startswith("note: the change would add 2 findings (first: ") and "INVALID_LOG_DATE" in line
    assert "zonemark proposals --show " in line


# -- item 7 --------------------------------------------------------------------------------

def test_timestamp_with_date_is_an_error(memory, capsys, monkeypatch):
    old = memory.read_bytes()
    code, _, err = run(capsys, monkeypatch, ["append", memory, "--container", "Open", "--title", "t", "--body", "b",
                                             "--date", "2026-01-02", "--timestamp"])
    assert code == 2 and "give --date or --timestamp, not both" in one_line(err)
    assert memory.read_bytes() == old
    with pytest.raises(ValueError, match="not both"):
        append_entry(memory, "Open", "t", "b", date="2026-01-02", timestamp=True)


@pytest.mark.parametrize("ids", ["", ",,", " , "])
def test_state_without_an_id_is_an_error(memory, capsys, monkeypatch, ids):
    code, _, err = run(capsys, monkeypatch, ["state", memory, "--activate", ids])
    assert code == 2 and "name no module id" in one_line(err)


def test_propose_zone_and_container_exclude_each_other(memory, capsys, monkeypatch, tmp_path):
    content = tmp_path / "c.md"
    content.write_text("x\n", encoding="utf-8")
    code, _, err = run(capsys, monkeypatch, ["propose", memory, "--zone", "17", "--container", "Plans",
                                             "--reason", "r", "--content-file", content])
    assert code == 2 and "--zone and --container exclude each other" in one_line(err)


def test_body_file_and_content_file_dash_read_stdin(memory, capsys, monkeypatch):
    code, out, err = run(capsys, monkeypatch, ["append", memory, "--container", "Plans", "--title", "da stdin",
                                               "--body-file", "-", "--as", "user", "--date", "2026-02-02"],
                         stdin="corpo — 本文\n".encode())
    assert code == 0, err
    assert "###### LOG: 2026-02-02 — da stdin\ncorpo — 本文\n[/P3]" in memory.read_text(encoding="utf-8")
    code, out, err = run(capsys, monkeypatch, ["propose", memory, "--container", "Plans", "--reason", "r",
                                               "--content-file", "-"], stdin="nuovo — 新しい\n".encode())
    assert code == 0, err
    assert Path(out.strip()).is_file()


def test_apply_a_folder_says_it_is_a_folder(memory, capsys, monkeypatch):
    code, _, err = run(capsys, monkeypatch, ["apply", memory.parent, "--as", "user"])
    assert code == 2 and "is a folder" in one_line(err)


def test_date_help_is_the_parser_rule():
    assert CLI_DATE_HELP == DATE_HELP
    for accepted in ("2026-05-03", "2026-05-03T10:00Z", "2026-05-03T10:00:59", "2026-05-03T10:00+02:00",
                     "2026-05-03T10:00:00.5-0100"):
        assert check_date(accepted) == accepted


DATE_PART = st.sampled_from(["2026-05-03", "2026-02-29", "2028-02-29", "2026-13-01", "2026-1-01", "26-05-03",
                             "2026-05-32", "0000-01-01", "9999-12-31"])
TIME_PART = st.sampled_from(["", "T10:00", "T23:59:59", "T24:00", "T10:60", "T1:00", "T10:00:00.123", "T10",
                             "T10:00:00:00", " 10:00"])
ZONE_PART = st.sampled_from(["", "Z", "+02:00", "-0130", "+2", "z", "+24:00", " UTC"])
TAIL = st.sampled_from(["", "", " ", "x", " — t", "\n## X"])


@settings(max_examples=300, deadline=None)
@given(date=st.tuples(DATE_PART, TIME_PART, ZONE_PART, TAIL).map("".join))
def test_date_accepts_exactly_what_the_parser_reads_as_a_log_date(date):
    """One date rule: --date takes a date iff the parser reads the written header back with it, no finding."""
    try:
        written = check_date(date)
    except ValueError:
        written = None
    if "\n" in date:
        assert written is None
        return
    doc = parse(f"# M [external_memory]\n\n[P1]\n## TOPIC: T\n[/P1]\n\n[P4]\n###### LOG: {date.strip()} — t\n[/P4]\n")
    entry = doc.outline().children[0].entries[0]
    parser_ok = entry.date == date.strip() and not any(d.code == "INVALID_LOG_DATE" for d in doc.diagnostics)
    assert (written is not None) == parser_ok, (date, written, entry.date, [d.code for d in doc.diagnostics])


# -- item 8 --------------------------------------------------------------------------------

def test_append_to_an_unclosed_p4_says_it_is_never_closed(memory, capsys, monkeypatch):
    old = memory.read_bytes()
    code, _, err = run(capsys, monkeypatch, ["append", memory, "--container", "Open", "--title", "t", "--body", "b"])
    line = one_line(err)
    assert code == 1 and "the [P4] zone at line 16 that pairs with 'TOPIC: Open' (line 13) is never closed" in line
    assert "add an empty" not in line
    assert memory.read_bytes() == old


# -- item 9 --------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["append", "{f}", "--container", "Open", "--title", "t", "--body", "b"],
    ["append", "{f}", "--container", "Nope", "--title", "t", "--body", "b"],
    ["append", "{f}", "--container", "Plans", "--title", "t", "--body", "b"],
    ["edit", "{f}", "--zone", "3", "--content-file", "{c}"],
    ["state", "{f}", "--activate", "042"],
    ["undo", "{f}", "--as", "user"],
    ["propose", "{f}", "--container", "Open", "--reason", "r", "--content-file", "{c}"],
])
def test_a_refused_write_leaves_nothing_behind(memory, capsys, monkeypatch, tmp_path, argv):
    content = tmp_path / "content.txt"
    content.write_text("x\n", encoding="utf-8")
    before = sorted(p.name for p in memory.parent.iterdir())
    old = memory.read_bytes()
    code, _, err = run(capsys, monkeypatch, [a.format(f=memory, c=content) for a in argv])
    assert code == 1, err
    assert sorted(p.name for p in memory.parent.iterdir()) == before
    assert memory.read_bytes() == old


HUGE = "9" * 20_000


@pytest.mark.parametrize("argv", [
    ["state", "{file}", "--activate", HUGE], ["edit", "{file}", "--zone", HUGE, "--content-file", "{file}"],
    ["apply", HUGE, "--as", "user"], ["reject", HUGE, "--as", "user"], ["explain", HUGE], ["outline", HUGE],
    ["check", HUGE], ["undo", HUGE, "--as", "user"], ["history", HUGE], ["trace", "{dir}", HUGE],
    ["search", "{dir}", "x", "--container", HUGE], ["append", "{file}", "--container", "Città\n" + HUGE, "--title", "t"],
    # a path longer than a file name may be (ENAMETOOLONG): one line, never a traceback, for every command
    *[[cmd, "{dir}/" + HUGE] for cmd in ("check", "outline", "parse", "roundtrip", "status", "graph", "context",
                                          "history", "proposals")],
    ["append", "{dir}/" + HUGE, "--container", "Plans", "--title", "t", "--body", "b"],
    ["append", "{file}", "--container", "Plans", "--title", "t", "--body-file", HUGE],
    ["edit", "{dir}/" + HUGE, "--zone", "7", "--content-file", "{file}"], ["state", "{dir}/" + HUGE, "--activate", "1"],
    ["propose", "{file}", "--zone", "7", "--reason", "r", "--content-file", HUGE],
    ["search", "{dir}/" + HUGE, "x"], ["ingest", "{file}", "--container", "Plans", HUGE],
    ["ingest", "{dir}/" + HUGE, "--container", "Plans", "{file}"], ["ingest", "--extract", HUGE],
    ["new", "memory", "x", "--dir", "{dir}/" + HUGE], ["add-container", "{dir}/" + HUGE, "T", "--as", "user"],
    ["context", "{dir}", "-o", "{dir}/" + HUGE], ["graph", "{dir}", "-o", "{dir}/" + HUGE],
])
def test_a_message_quoting_a_huge_argument_stays_a_short_line(memory, capsys, monkeypatch, argv):
    """A message is one line a person can read: a value it quotes is shortened in the middle (its start
    and its end kept), whatever the command and whoever builds the message."""
    old = memory.read_bytes()
    argv = [a.replace("{dir}", str(memory.parent)).replace("{file}", str(memory)) for a in argv]
    code, _, err = run(capsys, monkeypatch, argv, stdin=b"")
    assert code in (1, 2)
    line = one_line(err)
    assert len(line) <= 600, (argv[0], len(line))
    assert "999" in line or "Citt" in line or "too long" in line
    assert memory.read_bytes() == old


def test_an_unexpected_error_is_one_line_and_exit_2(memory, capsys, monkeypatch):
    """The last resort of the command line: a defect in a command is one line on stderr, never a traceback."""
    import dataclasses

    from zonemark.cli import core

    def broken(args):
        raise KeyError("città — 東京\n[/P4]")
    monkeypatch.setattr(core, "COMMANDS", tuple(dataclasses.replace(c, run=broken) if c.name == "outline" else c
                                                for c in core.COMMANDS))
    code, out, err = run(capsys, monkeypatch, ["outline", memory])
    assert code == 2 and out == ""
    assert one_line(err).startswith("zonemark: internal error (KeyError: ")


def test_a_byte_order_mark_of_a_body_or_content_file_is_not_written(memory, capsys, monkeypatch, tmp_path):
    """Editors on Windows save UTF-8 with a BOM: it marks the encoding, it is not text (as for ingest)."""
    body = tmp_path / "body.txt"
    body.write_bytes("\ufeffcorpo con BOM — 本文\n".encode())
    code, _, err = run(capsys, monkeypatch, ["append", memory, "--container", "Plans", "--title", "da file",
                                               "--body-file", body, "--as", "user"])
    assert code == 0, err
    code, _, err = run(capsys, monkeypatch, ["append", memory, "--container", "Plans", "--title", "da stdin",
                                               "--as", "user"],
                       stdin="\ufeffda stdin — 標準入力\n".encode())
    assert code == 0, err
    text = memory.read_text(encoding="utf-8")
    assert "— da file\ncorpo con BOM — 本文\n" in text and "— da stdin\nda stdin — 標準入力\n" in text
    assert "\ufeff" not in text
    code, out, err = run(capsys, monkeypatch, ["propose", memory, "--container", "Plans", "--reason", "r",
                                               "--content-file", body])
    assert code == 0, err
    assert "\ufeff" not in Path(out.strip()).read_text(encoding="utf-8")
