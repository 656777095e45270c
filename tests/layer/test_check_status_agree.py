"""``status``, ``graph`` and ``check`` count the same findings for the same path (issue 7 items 6, 12, 13)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from zonemark.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "layer"
LAYERS = Path(__file__).parents[1] / "fixtures" / "layers"


def run(capsys, argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def check_counts(capsys, path) -> tuple[int, int]:
    _code, out, _ = run(capsys, ["check", path, "--format", "json"])
    summary = json.loads(out)["summary"]
    return summary["errors"], summary["warnings"]


def status_counts(capsys, path) -> tuple[int, int]:
    _code, out, _ = run(capsys, ["status", path, "--json"])
    d = json.loads(out)["diagnostics"]
    return d["errors"], d["warnings"]


@pytest.mark.parametrize("path", [
    EXAMPLE / "cars[ext_memory].md", EXAMPLE / "curiosity[ext_module].md", EXAMPLE / "aria[reminder].md",
    LAYERS / "no_reminder" / "tool[ext_module].md", LAYERS / "unresolved" / "hub[ext_module].md",
    EXAMPLE, LAYERS / "registry", LAYERS / "no_reminder", LAYERS / "two_reminders",
])
def test_status_counts_what_check_lists(capsys, path):
    """A single memory file has no LAYER_NO_REMINDER in check; status must not count one either."""
    assert status_counts(capsys, path) == check_counts(capsys, path)


def graph_counts(capsys, path) -> tuple[int, int]:
    _code, out, _ = run(capsys, ["graph", path, "--format", "json"])
    diags = json.loads(out)["graph"]["diagnostics"]
    return (sum(d["severity"] == "error" for d in diags), sum(d["severity"] == "warning" for d in diags))


@pytest.mark.parametrize("path", [
    EXAMPLE / "cars[ext_memory].md", LAYERS / "no_reminder" / "tool[ext_module].md",
    LAYERS / "unresolved" / "hub[ext_module].md", EXAMPLE, LAYERS / "no_reminder", LAYERS / "two_reminders",
])
def test_the_graph_lists_what_check_lists(capsys, path):
    """The graph's diagnostics (JSON, and the page's panel) of a single file are the file's own, as in check:
    a memory file given alone has no LAYER_NO_REMINDER."""
    assert graph_counts(capsys, path) == check_counts(capsys, path)


def test_several_files_of_one_folder_say_once_that_layer_findings_need_the_folder(capsys):
    files = sorted((LAYERS / "registry").glob("*.md"))
    assert len(files) >= 2
    code, out, err = run(capsys, ["check", *files])
    notes = [ln for ln in err.split("\n") if ln.startswith("note: ")]
    assert notes == [f"note: files given one by one are checked as files; cross-file (layer) findings need the "
                     f"folder: zonemark check {LAYERS / 'registry'}"]
    _code, out, err = run(capsys, ["check", files[0]])
    assert "note:" not in err


def test_graph_says_why_it_exits_1(tmp_path, capsys):
    shutil.copytree(EXAMPLE, tmp_path / "l")
    (tmp_path / "l" / "broken.md").write_text("# Rotto — 壊れた [external_memory]\n\n[P4]\n", encoding="utf-8")
    code, out, err = run(capsys, ["graph", tmp_path / "l", "--format", "json"])
    assert code == 1 and json.loads(out)
    assert err.strip() == (f"zonemark graph: 1 error in {tmp_path / 'l'} (zonemark check {tmp_path / 'l'} lists "
                           f"them); exit 1")
    code, out, err = run(capsys, ["graph", EXAMPLE, "--format", "json"])
    assert code == 0 and err == ""


def test_undecodable_bytes_print_as_hex_escapes(tmp_path, capsys):
    """Item 12: an invalid byte shows as \\xNN in outlines, JSON and messages, never as \\udcNN."""
    f = tmp_path / "m.md"
    f.write_bytes("# Mem \xff [external_memory]\n\n[P1]\n## TOPIC: Citt\xe0 \xff\n[/P1]\n\n[P4]\n[/P4]\n"
                  .encode("latin-1").replace(b"\xe0", "à".encode()).replace("—".encode(), b""))
    code, out, err = run(capsys, ["outline", f])
    assert "\\xFF" in out and "\\udc" not in out + err
    code, out, err = run(capsys, ["outline", f, "--json"])
    assert "\\\\xFF" in out and "\\udc" not in out + err and json.loads(out)
    code, out, err = run(capsys, ["parse", f])
    assert json.loads(out) and "\\udc" not in out + err
    code, out, err = run(capsys, ["check", f])
    assert "\\udc" not in out + err
    code, out, err = run(capsys, ["append", f, "--container", "Nope", "--title", "t", "--body", "b"])
    assert code == 1 and "\\xFF" in err and "\\udc" not in err
