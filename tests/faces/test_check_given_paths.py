"""``zonemark check`` on the paths pre-commit passes one by one (W50) and ``--fail-on`` (W51)."""

from __future__ import annotations

from pathlib import Path

import pytest

from zonemark.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
UNRESOLVED = ROOT / "tests" / "fixtures" / "layers" / "unresolved"


def _layer_after_a_write(tmp_path: Path) -> Path:
    layer = tmp_path / "layer"
    assert main(["new", "memory", "Viaggi", "--dir", str(layer), "--topic", "Tokyo"]) == 0
    assert main(["append", str(layer / "Viaggi[ext_memory].md"), "--container", "Tokyo", "--title", "東京 — perché",
                 "--body", "Il treno è arrivato — 東京."]) == 0
    return layer


def test_files_under_zonemark_state_and_non_md_files_given_by_name_are_left_out(tmp_path, capsys):
    layer = _layer_after_a_write(tmp_path)
    state = sorted(str(p) for p in (layer / ".zonemark").rglob("*") if p.is_file())
    assert state, "the write keeps its history and lock under .zonemark/"
    (layer / "notes.txt").write_text("[P9] non markdown — 東京\n", encoding="utf-8")
    (layer / ".zonemark" / "stray.md").write_text("no header — perché\n", encoding="utf-8")
    capsys.readouterr()
    given = [*state, str(layer / ".zonemark" / "stray.md"), str(layer / "notes.txt"), str(layer / "Viaggi[ext_memory].md")]
    assert main(["check", *given]) == 0
    out, err = capsys.readouterr()
    assert "MISSING_FILE_TYPE" not in out
    assert out.splitlines()[-1] == "1 file checked: 0 errors, 0 warnings; 1 clean"
    (note,) = err.splitlines()
    assert note.startswith(f"note: {len(given) - 1} paths left out") and ".zonemark/" in note


def test_a_zonemark_folder_given_as_a_path_is_never_read_in_any_case(tmp_path, capsys):
    layer = _layer_after_a_write(tmp_path)
    (layer / ".zonemark" / "stray.md").write_text("no header — 東京\n", encoding="utf-8")
    upper = tmp_path / "other" / ".ZoneMark"
    upper.mkdir(parents=True)
    (upper / "stray.md").write_text("no header — perché\n", encoding="utf-8")
    (layer / "x").mkdir()
    capsys.readouterr()
    assert main(["check", str(layer / ".zonemark"), str(upper / "stray.md"), str(layer / ".zonemark" / ".." / "x"
                                                                                   / ".." / ".zonemark")]) == 0
    out, err = capsys.readouterr()
    assert "MISSING_FILE_TYPE" not in out and out.startswith("0 files checked")
    assert "3 paths left out" in err


def test_a_file_named_by_the_user_is_still_checked_when_it_is_md(tmp_path, capsys):
    f = tmp_path / "broken[ext_memory].md"
    f.write_text("no header — 東京\n", encoding="utf-8")
    assert main(["check", str(f)]) == 1
    assert "MISSING_FILE_TYPE" in capsys.readouterr().out


def test_fail_on_warning_fails_on_the_layer_s_cross_file_warnings(capsys):
    assert main(["check", str(UNRESOLVED)]) == 0
    assert main(["check", "--fail-on", "warning", str(UNRESOLVED)]) == 1
    assert main(["check", "--fail-on", "LAYER_UNRESOLVED_CONNECTION", str(UNRESOLVED)]) == 1
    assert main(["check", "--fail-on", "layer_id_conflict,LAYER_MULTIPLE_REMINDERS", str(UNRESOLVED)]) == 0
    assert main(["check", "--fail-on", "error", str(UNRESOLVED)]) == 0
    out = capsys.readouterr().out
    assert "LAYER_UNRESOLVED_CONNECTION" in out


@pytest.mark.parametrize("value", ["NO_SUCH_CODE", ",", "warning,NO_SUCH_CODE"])
def test_fail_on_an_unknown_code_is_one_line_and_exit_2(value, capsys):
    assert main(["check", "--fail-on", value, str(UNRESOLVED)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--fail-on" in err
