"""Conflict copies of a sync folder in a layer (issue 19 §2, G30): one LAYER_SYNC_CONFLICT_COPY per copy,
naming the original and the two-way merge command, and the copy left out of the layer."""

from __future__ import annotations

from pathlib import Path

import pytest

from zonemark.cli.main import main
from zonemark.core.diagnostics import CATALOGUE
from zonemark.layer.copies import conflict_copy
from zonemark.layer.loader import Layer

LAYERS = Path(__file__).resolve().parents[1] / "fixtures" / "layers"
REMINDER = "# Principale — 東京 [reminder]\n\n[P1]\n## MODULE 001: BASE [NUCLEI: ]\n\n### STATE\nactive\n[/P1]\n"


@pytest.mark.parametrize("name, original, tool", [
    ("Garage.sync-conflict-20260301-101500-ABCDEF7.md", "Garage.md", "Syncthing"),
    ("sub/Diario — 東京.sync-conflict-20260301-101500-7QX2AB3.md", "sub/Diario — 東京.md", "Syncthing"),
    ("Garage (conflicted copy 2026-03-01).md", "Garage.md", "Dropbox"),
    ("Garage (Maria's conflicted copy 2026-03-01).md", "Garage.md", "Dropbox"),
    ("Garage (conflicted copy 2026-03-01 101500).md", "Garage.md", "Nextcloud"),
    ("Garage_conflict-20260301-101500.md", "Garage.md", "Nextcloud"),
    ("Garage-DESKTOP-AB12CD3.md", "Garage.md", "OneDrive"),
    ("Garage-LAPTOP.md", "Garage.md", "OneDrive"),
])
def test_each_public_form_names_its_original(name: str, original: str, tool: str) -> None:
    copy = conflict_copy(name, {name, original})
    assert copy is not None and (copy.original, copy.tool) == (original, tool)


@pytest.mark.parametrize("name, present", [
    ("Garage.md", set()),
    ("note-LAPTOP.md", set()),  # OneDrive form only beside its original
    ("note-2026.md", {"note.md"}),  # no capital: a date, not a computer name
    ("note-laptop.md", {"note.md"}),  # Windows computer names are capitals
    ("note-ABCDEFGHIJKLMNOP.md", {"note.md"}),  # longer than 15 characters
    ("perché (copy).md", set()),
    ("Garage.sync-conflict.md", set()),
])
def test_ordinary_names_are_not_copies(name: str, present: set[str]) -> None:
    assert conflict_copy(name, present | {name}) is None


def test_check_reports_one_finding_per_copy_naming_the_merge_command(capsys: pytest.CaptureFixture[str]) -> None:
    folder = LAYERS / "sync_conflicts"
    assert main(["check", str(folder)]) == 0
    out = capsys.readouterr().out.splitlines()
    findings = [line for line in out if "LAYER_SYNC_CONFLICT_COPY" in line]
    assert len(findings) == 2
    assert all("zonemark merge-file --two-way 'Garage[ext_memory].md' '" in line for line in findings)
    assert any("Syncthing conflict copy of Garage[ext_memory].md" in line for line in findings)
    assert any("Dropbox conflict copy" in line for line in findings)
    codes = {line.split(": ", 1)[1].split(" ", 1)[0] for line in out if line.startswith(str(folder))}
    assert codes == {"LAYER_SYNC_CONFLICT_COPY"}  # no cascade of the copies' ids, reminders or zones
    layer = Layer.load(folder)
    assert sorted(f.rel for f in layer.files) == ["Garage[ext_memory].md", "main[reminder].md"]
    assert CATALOGUE["LAYER_SYNC_CONFLICT_COPY"].scope == "layer"


def test_a_copy_of_the_reminder_is_no_second_reminder_nor_an_id_conflict(tmp_path: Path) -> None:
    (tmp_path / "main[reminder].md").write_text(REMINDER, encoding="utf-8")
    (tmp_path / "main[reminder].sync-conflict-20260301-101500-ABCDEF7.md").write_text(
        REMINDER.replace("BASE", "BASE — perché"), encoding="utf-8")
    layer = Layer.load(tmp_path)
    assert [d.code for d in layer.all_diagnostics()] == ["LAYER_SYNC_CONFLICT_COPY"]
    assert "main[reminder].md" in layer.diagnostics[0].message


def test_a_long_hyphenated_name_is_looked_up_at_most_sixteen_times() -> None:
    class Counting(set[str]):
        lookups = 0

        def __contains__(self, item: object) -> bool:
            Counting.lookups += 1
            return False
    name = "A-" * 50_000 + "B.md"
    assert conflict_copy(name, Counting()) is None
    assert Counting.lookups <= 16
