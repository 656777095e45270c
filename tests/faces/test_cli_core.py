"""The core commands of the ``zonemark`` CLI.

Most tests call ``main(argv)`` in this process (a subprocess per case cost a Python start-up
each); the streams they write to are UTF-8 text streams like a console's, so the CLI's own
stream set-up runs as it does for a user. The tests at the end run the real thing: the
installed console script and ``python -m zonemark``, their exit codes and their one-line stderr.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from zonemark.cli.main import main

FIXTURES = Path(__file__).parents[1] / "fixtures"
SPEC = FIXTURES / "spec"
CODES = FIXTURES / "codes"
CONSOLE_SCRIPT = Path(sys.executable).parent / "zonemark"

CLEAN = "# Notes [external_memory]\n\n[P1]\n## TOPIC: Cars\n[/P1]\n\n[P4]\n###### LOG: 2026-05-01 — service\nOil.\n[/P4]\n"
WARNING_ONLY = "# Identity [reminder]\n\n[P1]\n## MODULE 001: M\n[/P1]\n"  # UNGOVERNED_MODULE
ERRORS = "# Notes [external_memory]\n\n## TOPIC: Cars\n\n[P4]\n## TOPIC: Bikes\n[/P4]\n"


def run(*args) -> subprocess.CompletedProcess:
    """``zonemark ARGS`` in this process: its exit code and what it wrote to stdout and stderr."""
    argv = [str(a) for a in args]
    streams = [io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="") for _ in range(2)]
    with contextlib.redirect_stdout(streams[0]), contextlib.redirect_stderr(streams[1]):
        try:
            code = main(argv)
        except SystemExit as stop:  # argparse's --version and --help
            code = stop.code
    stdout, stderr = (s.flush() or s.buffer.getvalue().decode("utf-8") for s in streams)
    return subprocess.CompletedProcess(["zonemark", *argv], code, stdout, stderr)


def run_process(*args, entry=(sys.executable, "-m", "zonemark")) -> subprocess.CompletedProcess:
    """``zonemark ARGS`` as a user runs it: a new process."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8", NO_COLOR="1")
    return subprocess.run([*entry, *map(str, args)], capture_output=True, text=True, encoding="utf-8", env=env,
                          timeout=60)


def assert_clean_failure(proc: subprocess.CompletedProcess) -> None:
    """Non-zero exit, exactly one clear line on stderr, no traceback."""
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("zonemark")


@pytest.fixture
def layer(tmp_path: Path) -> Path:
    (tmp_path / "clean.md").write_text(CLEAN, encoding="utf-8")
    sub = tmp_path / "deeper" / "still"
    sub.mkdir(parents=True)
    (sub / "warn.md").write_text(WARNING_ONLY, encoding="utf-8")
    (sub / "bad.md").write_text(ERRORS, encoding="utf-8")
    (sub / "ignored.txt").write_text("## not markdown\n", encoding="utf-8")
    return tmp_path


# -- check ------------------------------------------------------------------------------

def test_check_clean_file_exits_0(tmp_path: Path):
    f = tmp_path / "clean.md"
    f.write_text(CLEAN, encoding="utf-8")
    proc = run("check", f)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 errors" in proc.stdout


def test_check_warnings_only_exits_0(tmp_path: Path):
    f = tmp_path / "warn.md"
    f.write_text(WARNING_ONLY, encoding="utf-8")
    proc = run("check", f)
    assert proc.returncode == 0
    assert f"{f}:4:1: UNGOVERNED_MODULE" in proc.stdout


def test_check_errors_exit_1_text_format(tmp_path: Path):
    f = tmp_path / "bad.md"
    f.write_text(ERRORS, encoding="utf-8")
    proc = run("check", f)
    assert proc.returncode == 1
    assert f"{f}:3:1: UNPROTECTED_LOGICAL_CONTENT" in proc.stdout
    assert f"{f}:6:1: INVALID_HEADER_IN_WRITABLE_ZONE" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_check_folder_recurses_into_md_files_only(layer: Path):
    proc = run("check", layer, "--format", "json")
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    files = [f for f in data["files"] if Path(f["path"]).is_file()]  # layer-level entries may name the folder
    paths = sorted(Path(f["path"]).name for f in files)
    assert paths == ["bad.md", "clean.md", "warn.md"]
    codes = {Path(f["path"]).name: [d["code"] for d in f["diagnostics"]] for f in files}
    assert not [c for c in codes["clean.md"] if not c.startswith("LAYER_")]
    assert "UNGOVERNED_MODULE" in codes["warn.md"]
    assert {"UNPROTECTED_LOGICAL_CONTENT", "INVALID_HEADER_IN_WRITABLE_ZONE"} <= set(codes["bad.md"])
    assert data["summary"]["errors"] >= 2


def test_check_json_diagnostics_have_position_and_severity(tmp_path: Path):
    f = tmp_path / "bad.md"
    f.write_text(ERRORS, encoding="utf-8")
    data = json.loads(run("check", f, "--format", "json").stdout)
    (entry,) = data["files"]
    for d in entry["diagnostics"]:
        assert set(d) >= {"line", "column", "code", "message", "severity"}


def test_check_json_splits_each_file_into_section_13_errors_and_warnings(tmp_path: Path):
    """§13 ParserError[] / ParserWarning[]: each file entry also lists its findings by severity."""
    f = tmp_path / "bad.md"
    f.write_text(ERRORS + "\n[P1]\n## MODULE: Ungoverned\n[/P1]\n", encoding="utf-8")
    (entry,) = json.loads(run("check", f, "--format", "json").stdout)["files"]
    assert entry["errors"] and entry["warnings"]
    assert entry["errors"] + entry["warnings"] == sorted(
        entry["diagnostics"], key=lambda d: d["severity"] != "error")
    for key, severity in (("errors", "error"), ("warnings", "warning")):
        for d in entry[key]:
            assert d["severity"] == severity
            assert isinstance(d["line"], int) and isinstance(d["column"], int)
            assert isinstance(d["message"], str) and isinstance(d["code"], str)


def test_check_sarif_structure(tmp_path: Path):
    f = tmp_path / "bad.md"
    f.write_text(ERRORS, encoding="utf-8")
    proc = run("check", f, "--format", "sarif")
    assert proc.returncode == 1
    sarif = json.loads(proc.stdout)
    assert sarif["version"] == "2.1.0"
    run0 = sarif["runs"][0]
    assert run0["tool"]["driver"]["name"] == "zonemark"
    rule_ids = {r["id"] for r in run0["tool"]["driver"]["rules"]}
    results = run0["results"]
    assert results
    for r in results:
        assert r["ruleId"] in rule_ids
        assert r["level"] in ("error", "warning")
        assert r["message"]["text"]
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"].endswith("bad.md")
        assert loc["region"]["startLine"] >= 1 and loc["region"]["startColumn"] >= 1
    assert {"UNPROTECTED_LOGICAL_CONTENT", "INVALID_HEADER_IN_WRITABLE_ZONE"} <= {r["ruleId"] for r in results}


def test_check_github_annotations(tmp_path: Path):
    f = tmp_path / "bad.md"
    f.write_text(ERRORS, encoding="utf-8")
    proc = run("check", f, "--format", "github")
    assert proc.returncode == 1
    lines = [x for x in proc.stdout.splitlines() if x.startswith("::")]
    assert any(x.startswith(f"::error file={f},line=3,col=1") and "::" in x[2:] for x in lines), proc.stdout
    assert any(x.startswith(f"::error file={f},line=6,col=1") for x in lines)


def test_check_reports_invalid_utf8_without_crashing(tmp_path: Path):
    f = tmp_path / "latin1.md"
    f.write_bytes("# Caffè [external_memory]\n\n[P4]\ncaffè\n[/P4]\n".encode("latin-1"))
    proc = run("check", f)
    assert proc.returncode == 1
    assert "INVALID_UTF8" in proc.stdout
    assert "Traceback" not in proc.stderr
    assert f.read_bytes() == "# Caffè [external_memory]\n\n[P4]\ncaffè\n[/P4]\n".encode("latin-1")


# -- explain ------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [("check", "--explain", "UNGOVERNED_MODULE"), ("explain", "UNGOVERNED_MODULE"),
                                  ("explain", "ungoverned_module")])
def test_explain(argv):
    proc = run(*argv)
    assert proc.returncode == 0
    assert proc.stdout.startswith("UNGOVERNED_MODULE")
    assert "§7.4.4" in proc.stdout


def test_explain_unknown_code():
    assert_clean_failure(run("explain", "NOT_A_CODE"))


# -- parse / outline / roundtrip -------------------------------------------------------------

def test_parse_prints_section_13_json():
    proc = run("parse", SPEC / "14_3_external_memory_topics.md")
    assert proc.returncode == 0
    data = json.loads(proc.stdout)
    assert data["fileType"] == "external_memory"
    assert data["title"] == "DAILY_LOG_2026_05"
    assert data["errors"] == []
    assert "".join(b["rawMarkdown"] for b in data["blocks"]) == (SPEC / "14_3_external_memory_topics.md").read_text(
        encoding="utf-8")


def test_parse_exits_1_on_errors_and_still_prints_json(tmp_path: Path):
    f = tmp_path / "bad.md"
    f.write_text(ERRORS, encoding="utf-8")
    proc = run("parse", f)
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert {e["code"] for e in data["errors"]} >= {"UNPROTECTED_LOGICAL_CONTENT"}


def test_outline_json_nodes_and_entries():
    proc = run("outline", SPEC / "14_4_external_memory_subtopics.md", "--json")
    assert proc.returncode == 0
    root = json.loads(proc.stdout)
    assert root["name"] == "Cars"

    def check(node):
        assert {"name", "level", "line", "permissionLevel", "children", "entries"} <= set(node)
        for e in node["entries"]:
            assert {"line", "title", "date", "permissionLevel"} <= set(e)
        for c in node["children"]:
            check(c)

    check(root)
    maintenance, insurance = root["children"]
    assert (maintenance["keyword"], maintenance["level"], maintenance["permissionLevel"]) == ("TOPIC", 2, 1)
    assert "id" not in maintenance  # topics carry no id by convention (§7.1.2)
    tyres, bodywork = maintenance["children"]
    assert (tyres["name"], tyres["keyword"], tyres["level"]) == ("Tyres", "SUBTOPIC", 3)
    assert [c["name"] for c in tyres["children"]] == ["Pressures"]
    assert bodywork["name"] == "Bodywork"
    (entry,) = tyres["entries"]
    assert entry == {**entry, "title": "winter set mounted", "date": "2026-09-06", "permissionLevel": 4,
                     "line": 17}


def test_outline_json_module_ids():
    root = json.loads(run("outline", SPEC / "14_1_minimal_reminder.md", "--json").stdout)
    mods = [c for c in root["children"] if c.get("keyword") == "MODULE"]
    assert [(m["id"], m["name"]) for m in mods] == [("042", "CURIOSITY"), ("043", "CURIOSITY2"),
                                                     ("044", "CURIOSITY3")]
    nuclei = [c for c in root["children"] if c.get("keyword") == "NUCLEUS"]
    assert [n["id"] for n in nuclei] == ["1", "2"]


def test_outline_text():
    proc = run("outline", SPEC / "14_4_external_memory_subtopics.md")
    assert proc.returncode == 0
    assert "Pressures" in proc.stdout and "measured cold" in proc.stdout


@pytest.mark.parametrize("name", sorted(p.name for p in SPEC.glob("*.md")))
def test_roundtrip_spec_examples(name):
    proc = run("roundtrip", SPEC / name)
    assert proc.returncode == 0
    assert "exact" in proc.stdout


def test_roundtrip_crlf_bom_and_invalid_utf8(tmp_path: Path):
    f = tmp_path / "odd.md"
    data = b"\xef\xbb\xbf# T [reminder]\r\n\r\n[P4]\r\ncaf\xe9\rx\x00\r\n[/P4]"
    f.write_bytes(data)
    proc = run("roundtrip", f)
    assert proc.returncode == 0, proc.stderr
    assert f.read_bytes() == data


# -- bad inputs ----------------------------------------------------------------------------

def test_missing_path():
    assert_clean_failure(run("check", "/definitely/not/here.md"))


def test_folder_without_md(tmp_path: Path):
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    assert_clean_failure(run("check", tmp_path))


@pytest.mark.parametrize("argv", [("check", "--no-such-flag", "x.md"), ("check", "--format", "xml", "x.md"),
                                  ("frobnicate",), ("parse",), ("outline", "--json")])
def test_wrong_usage(argv):
    proc = run(*argv)
    assert proc.returncode == 2
    assert_clean_failure(proc)


def test_no_arguments():
    proc = run()
    assert proc.returncode == 2
    assert_clean_failure(proc)


def test_check_without_paths():
    assert_clean_failure(run("check"))


@pytest.mark.parametrize("command", ["parse", "outline", "roundtrip"])
def test_file_commands_on_missing_file_and_on_folder(command, tmp_path: Path):
    assert_clean_failure(run(command, tmp_path / "missing.md"))
    assert_clean_failure(run(command, tmp_path))


@pytest.mark.parametrize("command,code", [("check", 1), ("parse", 1), ("outline", 1), ("roundtrip", 0)])
def test_non_utf8_file_gets_one_clear_stderr_line(command, code, tmp_path: Path):
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"# R [reminder]\n\xff\xfe bad\n")
    proc = run(command, bad)
    assert proc.returncode == code
    assert "Traceback" not in proc.stderr
    notes = [ln for ln in proc.stderr.splitlines() if "is not valid UTF-8" in ln]
    assert len(notes) == 1 and "line 2, column 1" in notes[0]
    assert bad.read_bytes() == b"# R [reminder]\n\xff\xfe bad\n"


# -- the real entry points, in their own process ---------------------------------------------

def test_installed_console_script(tmp_path: Path):
    assert CONSOLE_SCRIPT.exists(), "the console script is installed next to the interpreter"
    f = tmp_path / "bad.md"
    f.write_text(ERRORS, encoding="utf-8")
    proc = run_process("check", f, entry=(str(CONSOLE_SCRIPT),))
    assert proc.returncode == 1 and proc.stderr == ""
    assert f"{f}:3:1: UNPROTECTED_LOGICAL_CONTENT" in proc.stdout
    assert shutil.which("zonemark", path=str(CONSOLE_SCRIPT.parent)) is not None


@pytest.mark.parametrize("case", ["clean", "errors", "non-utf8", "no-arguments", "missing-path", "bad-flag",
                                  "unknown-code", "version"])
def test_python_m_zonemark_exit_codes_and_one_line_stderr(case, tmp_path: Path):
    files = {"clean": CLEAN.encode(), "errors": ERRORS.encode(), "non-utf8": b"# R [reminder]\n\xff\xfe bad\n"}
    for name, data in files.items():
        (tmp_path / f"{name}.md").write_bytes(data)
    argv, code, stdout_has, stderr_has = {
        "clean": (["check", tmp_path / "clean.md"], 0, "0 errors", None),
        "errors": (["check", tmp_path / "errors.md"], 1, "UNPROTECTED_LOGICAL_CONTENT", None),
        "non-utf8": (["parse", tmp_path / "non-utf8.md"], 1, '"INVALID_UTF8"', "is not valid UTF-8"),
        "no-arguments": ([], 2, None, "give a command"),
        "missing-path": (["check", tmp_path / "missing.md"], 2, None, "missing.md"),
        "bad-flag": (["check", "--no-such-flag", "x.md"], 2, None, "--no-such-flag"),
        "unknown-code": (["explain", "NOT_A_CODE"], 2, None, "NOT_A_CODE"),
        "version": (["--version"], 0, "IllAIra Markdown Standard v1.13", None),
    }[case]
    proc = run_process(*argv)
    assert proc.returncode == code, proc.stderr
    if stdout_has is not None:
        assert stdout_has in proc.stdout
    if stderr_has is None:
        assert proc.stderr == ""
    else:
        assert "Traceback" not in proc.stderr
        (line,) = proc.stderr.strip().splitlines()
        assert line.startswith("zonemark") and stderr_has in line
    assert proc.returncode == run(*argv).returncode  # the in-process runner agrees with the real process



def test_check_reads_a_file_on_stdin_as_dash(tmp_path: Path):
    """`zonemark check -` checks the bytes piped on stdin (an editor's buffer, a generated file), named '-'."""
    text = ERRORS.replace("Cars", "Macchine — 車")
    proc = subprocess.run([sys.executable, "-m", "zonemark", "check", "-"], input=text.encode("utf-8"),
                          capture_output=True, timeout=60, env=dict(os.environ, PYTHONIOENCODING="utf-8"))
    out = proc.stdout.decode("utf-8")
    assert proc.returncode == 1 and out.startswith("-:3:1: UNPROTECTED_LOGICAL_CONTENT"), out
    (tmp_path / "a.md").write_text(CLEAN, encoding="utf-8")
    both = subprocess.run([sys.executable, "-m", "zonemark", "check", "--format", "json", "-", str(tmp_path)],
                          input=WARNING_ONLY.encode("utf-8"), capture_output=True, timeout=60)
    report = json.loads(both.stdout)
    files = report["files"]
    assert both.returncode == 0 and report["summary"]["files"] == 2  # the piped file and a.md (and the layer)
    assert sorted(f["path"] for f in files) == sorted(["-", str(tmp_path), str(tmp_path / "a.md")])
    assert [d["code"] for f in files if f["path"] == "-" for d in f["diagnostics"]] == ["UNGOVERNED_MODULE"]


def test_check_dash_twice_or_from_a_terminal_is_a_usage_error(monkeypatch):
    proc = run("check", "-", "-")
    assert proc.returncode == 2 and "once" in proc.stderr and proc.stderr.count("\n") == 1
    monkeypatch.setattr(sys, "stdin", type("Tty", (io.StringIO,), {"isatty": lambda self: True})())
    proc = run("check", "-")
    assert proc.returncode == 2 and "stdin" in proc.stderr and proc.stderr.count("\n") == 1


def test_check_hands_the_printer_the_diagnostics_it_found(tmp_path, diagnostics_made):
    """``check FILE``: the file is parsed once and its diagnostics reach the printer as they are, not copied on
    the way (a message with no control character is shown as it is)."""
    path = tmp_path / "perché[ext_memory].md"
    path.write_text(ERRORS.replace("Bikes", "東京 — Bikes"), encoding="utf-8")
    made = diagnostics_made
    result = run("check", path)
    assert result.returncode == 1
    assert [line.split(" ")[1] for line in result.stdout.splitlines()[:-1]] == [
        "UNPROTECTED_LOGICAL_CONTENT", "INVALID_HEADER_IN_WRITABLE_ZONE"]
    assert made[0] == 2  # the parser's two findings, and no copy of them
