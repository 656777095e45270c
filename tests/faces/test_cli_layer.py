"""``zonemark graph`` / ``zonemark status`` and the layer part of ``zonemark check``."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from zonemark.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ROOT / "tests" / "fixtures" / "layers"
EXAMPLE = ROOT / "examples" / "layer"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# -- graph ------------------------------------------------------------------------------

def test_graph_json_to_stdout(capsys):
    code, out, err = run(capsys, "graph", EXAMPLE)
    assert code == 0 and err == ""
    g = json.loads(out)
    assert g["graph"]["name"] == "layer" and len(g["nodes"]) == 34


@pytest.mark.parametrize("fmt, start", [("dot", 'digraph "layer" {'), ("mermaid", "flowchart LR")])
def test_graph_text_formats(capsys, fmt, start):
    code, out, _ = run(capsys, "graph", EXAMPLE, "--format", fmt)
    assert code == 0 and out.splitlines()[0] == start


def test_graph_to_file(capsys, tmp_path):
    target = tmp_path / "g.json"
    code, out, err = run(capsys, "graph", EXAMPLE, "-o", target)
    assert (code, out, err) == (0, "", "")
    assert json.loads(target.read_text(encoding="utf-8"))["directed"] is True
    assert [p.name for p in tmp_path.iterdir()] == ["g.json"]  # no temporary file left behind


def test_graph_refuses_to_write_over_markdown(capsys, tmp_path):
    layer = tmp_path / "lay"
    layer.mkdir()
    md = layer / "main[reminder].md"
    original = (EXAMPLE / "aria[reminder].md").read_bytes()
    md.write_bytes(original)
    for target in (md, tmp_path / "new.md"):
        code, out, err = run(capsys, "graph", layer, "-o", target)
        assert code == 2 and "refusing" in one_line(err)
    assert md.read_bytes() == original and not (tmp_path / "new.md").exists()


def test_graph_output_errors(capsys, tmp_path):
    code, _, err = run(capsys, "graph", EXAMPLE, "-o", tmp_path)
    assert code == 2 and "is a folder" in one_line(err)
    code, _, err = run(capsys, "graph", EXAMPLE, "-o", tmp_path / "missing" / "g.json")
    assert code == 2 and "cannot write" in one_line(err)


def test_graph_html_unavailable(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "zonemark.render.graph_html", None)  # import raises ImportError
    code, out, err = run(capsys, "graph", EXAMPLE, "--format", "html")
    assert code == 2 and out == ""
    assert "html format is unavailable" in one_line(err)


def test_graph_html_uses_render_html(capsys, monkeypatch):
    seen = {}

    def render_html(graph):
        seen["graph"] = graph
        return "<!doctype html><title>ok</title>\n"
    monkeypatch.setitem(sys.modules, "zonemark.render.graph_html", types.SimpleNamespace(render_html=render_html))
    code, out, _ = run(capsys, "graph", EXAMPLE, "--format", "html")
    assert code == 0 and out.startswith("<!doctype html>")
    assert seen["graph"].name == "layer"


def test_graph_html_failure_is_one_line(capsys, monkeypatch):
    def render_html(graph):
        raise ValueError("boom")
    monkeypatch.setitem(sys.modules, "zonemark.render.graph_html", types.SimpleNamespace(render_html=render_html))
    code, _, err = run(capsys, "graph", EXAMPLE, "--format", "html")
    assert code == 2 and "boom" in one_line(err)


def test_graph_only_and_exclude(capsys):
    code, out, _ = run(capsys, "graph", EXAMPLE, "--only", "*[reminder].md", "--only", "cars[ext_memory].md")
    assert json.loads(out)["graph"]["files"] == ["aria[reminder].md", "cars[ext_memory].md"]
    code, out, _ = run(capsys, "graph", EXAMPLE, "--exclude", "*[ext_memory].md")
    assert all("memory" not in f for f in json.loads(out)["graph"]["files"])
    code, out, err = run(capsys, "graph", EXAMPLE, "--only", "zzz*.md")
    assert code == 2 and out == "" and "after --only/--exclude" in one_line(err)


def test_graph_exit_code_reflects_errors(capsys):
    code, out, _ = run(capsys, "graph", LAYERS / "two_reminders")
    assert code == 1
    assert any(d["code"] == "LAYER_MULTIPLE_REMINDERS" for d in json.loads(out)["graph"]["diagnostics"])


# -- status -----------------------------------------------------------------------------

def test_status_text(capsys):
    code, out, _ = run(capsys, "status", EXAMPLE)
    assert code == 0
    assert out.startswith("Layer 'layer' (5 files; reminder: aria[reminder].md)")
    row = next(ln for ln in out.splitlines() if ln.strip().startswith("002 "))
    assert "inactive" in row and "active (registry)" in row and row.rstrip().endswith("1")
    assert "SUBTOPIC2 ~T3: Pressures  (1 entry)" in out
    assert "Diagnostics: 0 errors, 0 warnings" in out


def test_status_json(capsys):
    code, out, _ = run(capsys, "status", LAYERS / "registry", "--json")
    data = json.loads(out)
    assert code == 0
    mods = {m["id"]: m for m in data["modules"]}
    assert mods["LOCKED"]["declaredState"] == "active - permanent" and mods["LOCKED"]["effectiveState"] == "active"
    assert mods["LOCAL"]["stateSource"] == "registry:local[ext_module].md"
    assert data["nuclei"] == [{"id": 1, "name": "LOGIC", "file": "main[reminder].md", "line": 4,
                               "modules": ["001", "002", "003", "LOCAL", "SCOUT", "LOCKED"]}]  # layer order
    assert data["diagnostics"] == {"errors": 0, "warnings": 3}


def test_status_memories_and_unmerged(capsys):
    code, out, _ = run(capsys, "status", EXAMPLE, "--json")
    mem = json.loads(out)["memories"]
    assert [(m["file"], m["entries"]) for m in mem] == [("cars[ext_memory].md", 4), ("journal[ext_memory].md", 3)]
    assert [t["name"] for t in mem[0]["topics"]] == ["Maintenance", "Insurance"]
    assert mem[0]["topics"][0]["children"][0]["keyword"] == "SUBTOPIC1"
    code, out, _ = run(capsys, "status", LAYERS / "collision_declared")
    assert "Not merged (id conflict): a_clash[ext_module].md" in out


def test_status_of_a_file_declaring_one_module_id_twice(capsys, tmp_path):
    """The second declaration of an id is ignored (its id is none of the layer's): status lists it as such
    instead of failing."""
    f = tmp_path / "m[ext_module].md"
    f.write_text("# Moduli — モジュール [external_module]\n\n[P1]\n## MODULE 042: PRIMO\n### STATE\nactive\n\n"
                 "## MODULE 042: SECONDO — 二\n### STATE\nactive\n[/P1]\n", encoding="utf-8")
    for target in (tmp_path, f):
        code, out, err = run(capsys, "status", target)
        assert code == 1 and "Traceback" not in err and "internal error" not in err, err
        rows = [ln.split() for ln in out.splitlines() if "PRIMO" in ln or "SECONDO" in ln]
        assert rows[0][:2] == ["042", "PRIMO"]
        assert rows[1][:3] == ["-", "(ignored)", "SECONDO"]


# -- bad inputs -----------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["graph", "status"])
def test_missing_folder(capsys, tmp_path, command):
    code, out, err = run(capsys, command, tmp_path / "nope")
    assert code == 2 and out == "" and "no such file or folder" in one_line(err)


@pytest.mark.parametrize("command", ["graph", "status"])
def test_folder_without_markdown(capsys, tmp_path, command):
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    code, out, err = run(capsys, command, tmp_path)
    assert code == 2 and out == "" and "no .md files" in one_line(err)


@pytest.mark.parametrize("argv", [["graph", "--bogus", "x"], ["graph", "x", "--format", "svg"], ["status"],
                                  ["status", "x", "--json=3"]])
def test_bad_flags(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    one_line(err)


def test_subprocess_has_no_traceback(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "zonemark", "graph", str(tmp_path / "missing")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert one_line(proc.stderr).startswith("zonemark graph: no such file or folder")


def test_hostile_file_content_does_not_crash(capsys, tmp_path):
    (tmp_path / "bin.md").write_bytes(b"\xff\xfe# \x00 [reminder]\n[P1]\n## MODULE \xc3(: x\n")
    (tmp_path / "crlf.md").write_bytes(b"# A [external_memory]\r\n[P1]\r\n## TOPIC: t\r\n[/P1]\r\n")
    for command in (["graph"], ["graph", "--format", "dot"], ["graph", "--format", "mermaid"], ["status"]):
        code, out, err = run(capsys, *command, tmp_path)
        assert code in (0, 1) and out and "Traceback" not in err


# -- check ----------------------------------------------------------------------------------

def test_check_folder_reports_layer_diagnostics(capsys):
    code, out, _ = run(capsys, "check", LAYERS / "registry")
    assert code == 0
    assert f"{LAYERS / 'registry' / 'local[ext_module].md'}:12:1: LAYER_REGISTRY_OUT_OF_SCOPE" in out
    code, out, _ = run(capsys, "check", LAYERS / "two_reminders")
    assert code == 1 and "LAYER_MULTIPLE_REMINDERS" in out


def test_check_example_layer_has_no_errors(capsys):
    code, out, _ = run(capsys, "check", EXAMPLE)
    assert code == 0 and " 0 errors" in out
    assert "LAYER_" not in out


def test_outline_and_status_never_send_a_file_s_escape_sequences_to_the_terminal(capsys, tmp_path):
    """A file shared with the user may hold ESC sequences (to retitle or clear the terminal): `check`
    reports them (CONTROL_CHARACTER); the text views show them as \\xNN, like every message."""
    f = tmp_path / "m[ext_memory].md"
    f.write_bytes("# Memo\x1b]0;T\x07 [external_memory]\n\n[P1]\n## TOPIC: Ro\x1b[31mma — ローマ\n[/P1]\n\n[P4]\n"
                  "###### LOG: 2026-01-01 — ti\x1b[2Jtle\ncorpo\n[/P4]\n".encode())
    for argv in (("outline", f), ("status", tmp_path), ("status", f)):
        code, out, err = run(capsys, *argv)
        assert code in (0, 1), err
        assert not any(c in out + err for c in "\x1b\x07"), (argv, ascii(out))
        assert "\\x1B" in out
