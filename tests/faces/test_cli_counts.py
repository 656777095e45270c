"""Counts say "1 file", "1 hit", "1 error", never "1 files" (``render.formats.counted``), and ``new --dir`` that
cannot be created says so, never "no such file"."""

from __future__ import annotations

from pathlib import Path

import pytest

from zonemark.cli.main import main

MEMORY = """# Viaggi — 東京 [external_memory]

[P1]
## TOPIC: Tokyo
[/P1]

[P4]
###### LOG: 2026-05-03 — perché il treno
Il treno è arrivato — 東京.

###### LOG: 2026-05-04 — perché il treno di nuovo
Il treno è ripartito — 東京.
[/P4]
"""


def test_counted_is_singular_for_exactly_one():
    from zonemark.render.formats import counted
    assert [counted(n, "file") for n in (0, 1, 2)] == ["0 files", "1 file", "2 files"]
    assert counted(1, "entry", "entries") == "1 entry" and counted(3, "entry", "entries") == "3 entries"


@pytest.fixture
def memory(tmp_path) -> Path:
    f = tmp_path / "layer" / "viaggi[ext_memory].md"
    f.parent.mkdir()
    f.write_text(MEMORY, encoding="utf-8")
    return f


def test_status_of_a_one_file_layer_says_1_file(memory, capsys):
    main(["status", str(memory.parent)])
    assert "(1 file; reminder" in capsys.readouterr().out


def test_search_notes_say_1_hit_and_1_file(memory, capsys):
    assert main(["search", str(memory.parent), "treno", "--limit", "1"]) == 0
    err = capsys.readouterr().err
    assert "more than 1 hit;" in err, err
    assert main(["search", str(memory.parent), "nessunaparola"]) == 1
    assert "in 1 file" in capsys.readouterr().err


def test_roundtrip_and_outline_counts(tmp_path, capsys):
    one = tmp_path / "one.md"
    one.write_bytes(b"x")
    main(["roundtrip", str(one)])
    assert "(1 byte)" in capsys.readouterr().out
    main(["outline", str(one)])
    assert "1 error, 0 warnings" in capsys.readouterr().err


def test_review_source_page_of_a_one_line_file_says_1_line():
    pytest.importorskip("starlette")
    from zonemark.review.pages import Site, file_page
    page = file_page(Site("t" * 32, "strato — 東京"), "viaggi[ext_memory].md",
                     "# Viaggi — 東京 [external_memory]\n".encode("utf-8"), None, None, counts={})
    assert "(1 line)" in page


def test_new_dir_that_cannot_be_created_says_so(tmp_path, capsys):
    blocker = tmp_path / "appunti — 東京.txt"
    blocker.write_text("un file, non una cartella — perché\n", encoding="utf-8")
    dangling = tmp_path / "link"
    dangling.symlink_to(tmp_path / "missing")
    for folder, why in ((blocker, f"{blocker} is a file, not a folder"),
                        (blocker / "sub" / "東京", f"{blocker} is a file, not a folder"),
                        (dangling / "sub", f"{dangling} is a dangling symbolic link")):
        assert main(["new", "memory", "Viaggi", "--dir", str(folder)]) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert line == f"zonemark new: cannot create the folder {folder} (--dir): {why}"
        assert "no such file" not in line.lower()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["appunti — 東京.txt", "link"]  # nothing was made


def test_mcp_ingest_with_its_one_entry_refused_says_the_log_entry():
    pytest.importorskip("mcp")
    from types import SimpleNamespace

    from zonemark.mcp.server import _nothing_filed
    item = {"code": "NO_JOURNAL", "reason": "no journal — 東京", "title": "perché", "headerLine": 1}
    text = _nothing_filed({"items": [item], "dryRun": False}, SimpleNamespace(rel="viaggi[ext_memory].md"), "Tokyo")
    assert "the log entry was refused" in text and "1 log entries" not in text
    two = _nothing_filed({"items": [item, dict(item, title="di nuovo")], "dryRun": True},
                         SimpleNamespace(rel="viaggi[ext_memory].md"), "Tokyo")
    assert "all 2 log entries refused" in two
