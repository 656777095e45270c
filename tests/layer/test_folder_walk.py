"""Which files a folder holds (issue 7 item 11): skipped folders, ignore patterns, symbolic links."""

from __future__ import annotations

import os

import pytest

from zonemark.cli.main import main
from zonemark.layer import Layer, discover

MEMORY = "# Note — メモ [external_memory]\n\n[P1]\n## TOPIC: Città\n[/P1]\n\n[P4]\n[/P4]\n"
BROKEN = "# Broken [external_memory]\n\n[P4]\n"  # UNCLOSED_PERMISSION_BLOCK: an error if it is read


def run(capsys, argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "layer"
    root.mkdir()
    (root / "note.md").write_text(MEMORY, encoding="utf-8")
    for skipped in (".venv/lib", ".git", "node_modules/pkg", ".hidden", "sub/.cache"):
        (root / skipped).mkdir(parents=True)
        (root / skipped / "readme.md").write_text(BROKEN, encoding="utf-8")
    (root / "sub" / "kept.md").write_text(MEMORY, encoding="utf-8")
    (root / ".draft.md").write_text(BROKEN, encoding="utf-8")
    return root


def test_hidden_and_tool_folders_are_skipped(folder):
    _root, found = discover(folder)
    assert [rel for rel, _ in found] == ["note.md", "sub/kept.md"]


def test_zonemarkignore_and_exclude(folder, capsys):
    (folder / "drafts").mkdir()
    (folder / "drafts" / "wip.md").write_text(BROKEN, encoding="utf-8")
    (folder / "old.md").write_text(BROKEN, encoding="utf-8")
    code, out, _ = run(capsys, ["check", folder])
    assert code == 1 and "drafts/wip.md" in out and "old.md" in out
    (folder / ".zonemarkignore").write_text("# not ours\ndrafts/\n", encoding="utf-8")
    code, out, _ = run(capsys, ["check", folder])
    assert code == 1 and "drafts/wip.md" not in out and "old.md" in out
    code, out, _ = run(capsys, ["check", folder, "--exclude", "old.md"])
    assert code == 0 and "old.md" not in out and "2 files checked: 0 errors, 1 warning" in out


@pytest.mark.parametrize("pattern", ["drafts", "drafts/", "./drafts", "drafts/**"])
def test_a_pattern_that_names_a_folder_leaves_out_everything_under_it(folder, capsys, pattern):
    (folder / "drafts" / "deep — 深い").mkdir(parents=True)
    (folder / "drafts" / "wip.md").write_text(BROKEN, encoding="utf-8")
    (folder / "drafts" / "deep — 深い" / "bozza.md").write_text(BROKEN, encoding="utf-8")
    code, out, _ = run(capsys, ["check", folder, "--exclude", pattern])
    assert code == 0 and "drafts" not in out and "2 files checked" in out
    (folder / ".zonemarkignore").write_text(pattern + "\n", encoding="utf-8")
    assert [rel for rel, _ in discover(folder)[1]] == ["note.md", "sub/kept.md"]
    # a trailing '/' names a folder only: a file called drafts.md stays
    (folder / "drafts.md").write_text(MEMORY, encoding="utf-8")
    if pattern == "drafts/":
        assert "drafts.md" in [rel for rel, _ in discover(folder)[1]]


def test_a_symlinked_file_is_read_once(folder, capsys):
    os.symlink(folder / "note.md", folder / "alias.md")
    os.symlink(folder / "sub", folder / "linked-folder")  # a folder link is not followed
    _root, found = discover(folder)
    assert [rel for rel, _ in found] == ["note.md", "sub/kept.md"]
    layer = Layer.load(folder)
    assert [f.rel for f in layer.files] == ["note.md", "sub/kept.md"]


def test_a_dangling_symlink_is_reported_and_the_rest_checked(folder, capsys):
    os.symlink(folder / "gone.md", folder / "dangling.md")
    (folder / "bad.md").write_text(BROKEN, encoding="utf-8")
    code, out, _ = run(capsys, ["check", folder])
    assert code == 1
    assert "dangling.md:1:1: LAYER_UNREADABLE_FILE a dangling symbolic link" in out
    assert "bad.md:3:1: UNCLOSED_PERMISSION_BLOCK" in out
    assert "note.md" not in out.replace("4 files", "")  # the clean files were checked, with nothing to say
    assert "4 files checked" in out


def test_a_dangling_symlink_given_alone_says_so(tmp_path, capsys):
    os.symlink(tmp_path / "gone.md", tmp_path / "dangling.md")
    code, _, err = run(capsys, ["status", tmp_path / "dangling.md"])
    assert code == 2 and "dangling symbolic link" in err and len(err.strip().split("\n")) == 1
