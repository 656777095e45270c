"""``zonemark merge-file``: the zone-aware merge driver, with real git (issue 19 §1, §3) and alone (G1-G12).

Two clones of one bare repository play two devices; each registers the driver in its own config
(``merge.zonemark.driver``) and the layer's ``.gitattributes`` says ``*.md merge=zonemark``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from zonemark.core.document import Document
from zonemark.core.parser import parse
from zonemark.writer.append import append_entry
from zonemark.writer import merge as merge_module
from zonemark.writer.merge import plan_merge

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="the merge driver tests need git")

MEMORY = """# Cars — perché 東京 [external_memory]

[P1]
## TOPIC: Maintenance
[/P1]

[P4]
###### LOG: 2026-09-06 — general service
Oil and filters changed at 84 300 km.
[/P4]

[P1]
### SUBTOPIC1: Tyres
[/P1]

[P4]
###### LOG: 2026-09-06 — winter set mounted
Four of them; 3 mm left on the summer set.
[/P4]

[P1]
## TOPIC: Viaggi
[/P1]

[P4]
###### LOG: 2026-09-07 — Tokyo
東京 in primavera — perché no.
[/P4]
"""

REMINDER = """# ARIA — perché [reminder]

[P1]
## RULES:

* R0: Answer in Italian when asked in Italian — sempre.
* R1: Keep 東京 spelled in kanji.

## MODULE 001: ANCHOR [NUCLEI: ]

### FUNCTION
Keep the voice stable.

### STATE
active
[/P1]

[P4]
###### LOG: 2026-05-03 — first activation
The anchor held — perché sì.
[/P4]

[P1]
## MODULE 002: PLANNER [NUCLEI: ]

### FUNCTION
Track the projects.

### STATE
inactive
[/P1]

[P5]
Current focus: the parser — perché è urgente.
[/P5]

[P1]
## MODULE 003: MIRROR [NUCLEI: ]

### FUNCTION
Adapt the length of answers.

### STATE
active
[/P1]

[P4]
## MODULE_STATE_REGISTRY:
* ACTIVE: 003
* INACTIVE: 002
[/P4]
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_AUTHOR_NAME="Device", GIT_AUTHOR_EMAIL="device@example.org",
               GIT_COMMITTER_NAME="Device", GIT_COMMITTER_EMAIL="device@example.org", LC_ALL="C.UTF-8")
    return env


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=_env(), check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stdout}{done.stderr}")
    return done


def zonemark(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zonemark", *args], cwd=cwd, capture_output=True, text=True,
                          env=_env(), check=False)


def _register_driver(clone: Path) -> None:
    git(clone, "config", "merge.zonemark.driver", f'"{sys.executable}" -m zonemark merge-file %O %A %B %P')
    git(clone, "config", "merge.zonemark.name", "zonemark zone-aware merge")
    git(clone, "config", "pull.rebase", "false")


def devices(tmp_path: Path, files: dict[str, bytes]) -> tuple[Path, Path]:
    """A bare repository holding ``files`` and ``.gitattributes``, and two clones (devices A and B) set up."""
    bare = tmp_path / "layer.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "-q", str(bare), str(seed))
    for name, data in files.items():
        (seed / name).write_bytes(data)
    (seed / ".gitattributes").write_text("*.md merge=zonemark\n", encoding="utf-8")
    (seed / ".gitignore").write_text(".zonemark/\n", encoding="utf-8")  # the write history stays on its device
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "the layer")
    git(seed, "push", "-q", "origin", "HEAD:main")
    out = []
    for name in ("a", "b"):
        clone = tmp_path / name
        git(tmp_path, "clone", "-q", str(bare), str(clone))
        _register_driver(clone)
        out.append(clone)
    return out[0], out[1]


def commit_all(clone: Path, message: str) -> None:
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", message)


def sync(clone: Path) -> subprocess.CompletedProcess[str]:
    """Fetch and merge (with the driver), then push when the merge went through."""
    done = git(clone, "pull", "-q", "--no-edit", "origin", "main", check=False)
    if done.returncode == 0:
        git(clone, "push", "-q", "origin", "HEAD:main")
    return done


def entry_titles(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("###### ")]


MEM, REM = "cars[ext_memory].md", "aria[reminder].md"


def _tyres(text: str, entry: str) -> str:
    end = "3 mm left on the summer set.\n"
    return text.replace(end, end + "\n" + entry)


# -- with real git -----------------------------------------------------------------------------
def test_two_devices_append_to_one_journal_and_toggle_a_module_merge_without_conflict(tmp_path: Path) -> None:
    a, b = devices(tmp_path, {MEM: MEMORY.encode(), REM: REMINDER.encode()})
    append_entry(a / MEM, "Maintenance/Tyres", "pressione — perché", "2.4 davanti, 東京 dopo.", date="2026-10-03")
    done = zonemark("state", str(a / REM), "--activate", "002", "--as", "user")
    assert done.returncode == 0, done.stderr
    commit_all(a, "device A")
    assert sync(a).returncode == 0
    append_entry(b / MEM, "Maintenance/Tyres", "rotazione", "Gomme ruotate — 東京.", date="2026-10-02")
    append_entry(b / MEM, "Viaggi", "biglietti", "Treno per 東京 prenotato — perché no.", date="2026-10-04")
    commit_all(b, "device B")
    pulled = sync(b)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    assert sync(a).returncode == 0
    text_a, text_b = (a / MEM).read_text(encoding="utf-8"), (b / MEM).read_text(encoding="utf-8")
    assert text_a == text_b
    assert entry_titles(text_a) == [
        "###### LOG: 2026-09-06 — general service", "###### LOG: 2026-09-06 — winter set mounted",
        "###### LOG: 2026-10-02 — rotazione", "###### LOG: 2026-10-03 — pressione — perché",
        "###### LOG: 2026-09-07 — Tokyo", "###### LOG: 2026-10-04 — biglietti"]
    reminder = parse((b / REM).read_text(encoding="utf-8"))
    assert reminder.registry is not None and "002" in reminder.registry.active
    check = zonemark("check", str(b))
    assert check.returncode == 0, check.stdout + check.stderr
    assert "<<<<<<<" not in text_b


def test_both_edit_one_p5_zone_one_conflict_region_around_it_and_the_rest_merged(tmp_path: Path) -> None:
    a, b = devices(tmp_path, {REM: REMINDER.encode()})
    (a / REM).write_text(REMINDER.replace("the parser — perché è urgente", "the merge driver — 東京"), encoding="utf-8")
    commit_all(a, "A focus")
    assert sync(a).returncode == 0
    (b / REM).write_text(REMINDER.replace("the parser — perché è urgente", "the release — perché"), encoding="utf-8")
    append_entry(b / REM, "001", "second activation", "Held again — 東京.", date="2026-05-04")
    commit_all(b, "B focus")
    pulled = sync(b)
    assert pulled.returncode != 0
    text = (b / REM).read_text(encoding="utf-8")
    assert text.count("<<<<<<< ") == 1 and text.count("||||||| ") == 1 and text.count(">>>>>>> ") == 1
    region = text[text.index("<<<<<<< "):text.index(">>>>>>> ")]
    assert "the merge driver — 東京" in region and "the release — perché" in region
    assert "the parser — perché è urgente" in region  # the base, diff3 style
    assert "## MODULE" not in region and "###### LOG" not in region  # that zone only
    assert "###### LOG: 2026-05-04 — second activation" in text  # everything else merged
    check = zonemark("check", str(b / REM))
    assert check.returncode == 1 and check.stdout.count("MERGE_CONFLICT") == 1


def test_both_change_a_p1_rule_is_a_conflict(tmp_path: Path) -> None:
    a, b = devices(tmp_path, {REM: REMINDER.encode()})
    (a / REM).write_text(REMINDER.replace("sempre.", "sempre, anche a 東京."), encoding="utf-8")
    commit_all(a, "A rule")
    assert sync(a).returncode == 0
    (b / REM).write_text(REMINDER.replace("sempre.", "quasi sempre — perché."), encoding="utf-8")
    commit_all(b, "B rule")
    assert sync(b).returncode != 0
    text = (b / REM).read_text(encoding="utf-8")
    region = text[text.index("<<<<<<< "):text.index(">>>>>>> ")]
    assert "anche a 東京" in region and "quasi sempre — perché" in region and "## RULES:" in region
    assert text.count("<<<<<<< ") == 1


def test_a_duplicate_module_id_that_a_line_merge_would_make_is_a_conflict_never_half_merged(tmp_path: Path) -> None:
    new_a = "\n[P1]\n## MODULE 050: FIRST — perché [NUCLEI: ]\n\n### FUNCTION\nOne.\n[/P1]\n"
    new_b = "\n[P1]\n## MODULE 050: SECOND — 東京 [NUCLEI: ]\n\n### FUNCTION\nTwo.\n[/P1]\n"
    ours = REMINDER.replace("[P5]\n", new_a.lstrip("\n") + "\n[P5]\n")
    theirs = REMINDER + new_b
    for name, text in (("base.md", REMINDER), ("ours.md", ours), ("theirs.md", theirs), ("line.md", ours)):
        (tmp_path / name).write_text(text, encoding="utf-8")
    line = git(tmp_path, "merge-file", "line.md", "base.md", "theirs.md", check=False)
    assert line.returncode == 0  # git's line merge goes through ...
    assert "DUPLICATE_BLOCK_CONFLICT" in {d.code for d in parse((tmp_path / "line.md").read_text()).diagnostics}
    done = zonemark("merge-file", "base.md", "ours.md", "theirs.md", "aria[reminder].md", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr  # ... ours does not
    text = (tmp_path / "ours.md").read_text(encoding="utf-8")
    assert text.startswith("<<<<<<< ours\n" + ours) and text.endswith("=======\n" + theirs + ">>>>>>> theirs\n")


def test_a_merge_whose_result_would_read_as_structure_is_a_conflict_never_half_merged(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The re-check (§5.5) stands behind every rule: a journal merged into text that the parser reads as one more
    header than the sides hold (here forced; no diagnostic) makes the whole file one conflict region, the sides
    kept verbatim."""
    base = MEMORY.encode()
    ours = _tyres(MEMORY, "###### LOG: 2026-10-03 — perché\nuno\n").encode()
    theirs = _tyres(MEMORY, "###### LOG: 2026-10-02 — 東京\ndue\n").encode()
    real = merge_module._merge_entries  # every path composes a merged journal with it

    def joined_into_structure(*args: object) -> tuple[str, int, tuple[str, ...]]:
        done = real(*args)  # type: ignore[arg-type]
        return done[0].replace("due\n", "due\n\n###### LOG: 2026-10-09 — ghost 東京\n"), done[1], done[2]
    monkeypatch.setattr(merge_module, "_merge_entries", joined_into_structure)
    plan = plan_merge(base, ours, theirs)
    assert plan.outcome == "conflict" and len(plan.conflicts) == 1 and plan.conflicts[0].what == "the whole file"
    assert plan.reason is not None and "structure" in plan.reason
    assert plan.data == b"<<<<<<< ours\n" + ours + b"||||||| base\n" + base + b"=======\n" + theirs + \
        b">>>>>>> theirs\n"


def test_a_hostile_journal_body_on_one_side_stays_text(tmp_path: Path) -> None:
    a, b = devices(tmp_path, {MEM: MEMORY.encode()})
    append_entry(a / MEM, "Maintenance/Tyres", "nota", "Normale — perché.", date="2026-10-03")
    commit_all(a, "A")
    assert sync(a).returncode == 0
    hostile = "[/P4]\n[P1]\n## TOPIC: Owned\n[/P1]\n[P4]\n<!-- hide\n# Evil [reminder]\n```\n東京"
    append_entry(b / MEM, "Maintenance/Tyres", "ostile", hostile, date="2026-10-02")
    commit_all(b, "B")
    assert sync(b).returncode == 0
    text = (b / MEM).read_text(encoding="utf-8")
    doc = parse(text)
    assert [m.name for m in doc.modules] == ["Maintenance", "Tyres", "Viaggi"] and not doc.diagnostics
    tokens = MarkdownIt("commonmark").parse(text)
    assert [t.tag for t in tokens if t.type == "heading_open"].count("h2") == 2  # the two topics, no third
    assert "###### LOG: 2026-10-03 — nota" in text and "###### LOG: 2026-10-02 — ostile" in text


def test_crlf_files_with_italian_and_japanese_merge_and_keep_crlf(tmp_path: Path) -> None:
    base = MEMORY.replace("\n", "\r\n")
    add_o = "###### LOG: 2026-10-03 — perché\r\nuno — 東京\r\n"
    add_t = "###### LOG: 2026-10-02 — 東京\r\ndue — perché\r\n"
    end = "3 mm left on the summer set.\r\n"
    ours = base.replace(end, end + "\r\n" + add_o)
    theirs = base.replace(end, end + "\r\n" + add_t)
    for name, text in (("base.md", base), ("ours.md", ours), ("theirs.md", theirs)):
        (tmp_path / name).write_bytes(text.encode())
    done = zonemark("merge-file", "base.md", "ours.md", "theirs.md", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    merged = (tmp_path / "ours.md").read_bytes().decode()
    assert merged == base.replace(end, end + "\r\n" + add_t + "\r\n" + add_o)
    assert "\n" not in merged.replace("\r\n", "")


def test_a_non_layer_file_gets_git_line_merge(tmp_path: Path) -> None:
    (tmp_path / "base.md").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (tmp_path / "ours.md").write_text("uno — perché\ntwo\nthree\n", encoding="utf-8")
    (tmp_path / "theirs.md").write_text("one\ntwo\n東京\n", encoding="utf-8")
    done = zonemark("merge-file", "base.md", "ours.md", "theirs.md", "notes.md", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "ours.md").read_text(encoding="utf-8") == "uno — perché\ntwo\n東京\n"


# -- the planner alone -------------------------------------------------------------------------
def test_an_entry_new_on_both_sides_is_merged_once() -> None:
    same = "###### LOG: 2026-10-02 — 東京\nstesso — perché\n"
    ours = _tyres(MEMORY, same)
    theirs = _tyres(MEMORY, same).replace("Tokyo\n東京 in primavera — perché no.\n",
                                          "Tokyo\n東京 in primavera — perché no.\n\n###### LOG: 2026-10-05 — x\ny\n")
    plan = plan_merge(MEMORY.encode(), ours.encode(), theirs.encode())
    assert plan.outcome == "merged" and plan.entries_added == 1
    assert plan.data.decode().count("stesso — perché") == 1


def test_a_journal_entry_edited_in_place_on_both_sides_is_a_conflict_of_that_zone() -> None:
    ours = MEMORY.replace("3 mm left", "2 mm left — perché")
    theirs = _tyres(MEMORY, "###### LOG: 2026-10-02 — 東京\nnuovo\n")
    plan = plan_merge(MEMORY.encode(), ours.encode(), theirs.encode())
    assert plan.outcome == "conflict" and [c.level for c in plan.conflicts] == [4]
    assert plan.conflicts[0].what == "the [P4] zone of ### SUBTOPIC1: Tyres"


def test_the_registry_merges_per_module_and_one_module_set_differently_is_a_conflict() -> None:
    ours = REMINDER.replace("* ACTIVE: 003\n* INACTIVE: 002\n", "* ACTIVE: 003, 002\n* INACTIVE:\n")
    theirs = REMINDER.replace("* ACTIVE: 003\n* INACTIVE: 002\n", "* ACTIVE: 003, 001\n* INACTIVE: 002\n")
    plan = plan_merge(REMINDER.encode(), ours.encode(), theirs.encode())
    assert plan.outcome == "merged", plan.reason
    reg = parse(plan.data.decode()).registry
    assert reg is not None and set(reg.active) == {"001", "002", "003"} and reg.inactive == ()
    clash = REMINDER.replace("* ACTIVE: 003\n* INACTIVE: 002\n", "* ACTIVE:\n* INACTIVE: 002, 003\n")
    plan = plan_merge(REMINDER.encode(), ours.replace("* ACTIVE: 003, 002", "* ACTIVE: 002, 003").encode(),
                      clash.encode())
    assert plan.outcome == "merged"  # 003 set on one side only, 002 on the other
    clash2 = REMINDER.replace("* ACTIVE: 003\n* INACTIVE: 002\n", "* ACTIVE: 003\n* INACTIVE: 002 — 東京\n")
    plan = plan_merge(REMINDER.encode(), ours.encode(), clash2.encode())
    assert plan.outcome == "conflict" and [c.level for c in plan.conflicts] == [4]


def test_two_way_unites_the_journals_and_marks_other_differences_without_a_base() -> None:
    ours = _tyres(MEMORY, "###### LOG: 2026-10-03 — perché\nuno\n")
    theirs = _tyres(MEMORY, "###### LOG: 2026-10-02 — 東京\ndue\n").replace("Oil and filters", "Olio e filtri")
    plan = plan_merge(None, ours.encode(), theirs.encode())
    assert plan.outcome == "conflict" and len(plan.conflicts) == 1
    text = plan.data.decode()
    assert "||||||| " not in text and "Olio e filtri" in text and "Oil and filters" in text
    assert text.index("2026-10-02 — 東京") < text.index("2026-10-03 — perché")


def test_merge_file_two_way_on_a_sync_folder_conflict_copy(tmp_path: Path) -> None:
    ours = _tyres(MEMORY, "###### LOG: 2026-10-03 — perché\nuno\n")
    theirs = _tyres(MEMORY, "###### LOG: 2026-10-02 — 東京\ndue\n")
    (tmp_path / MEM).write_text(ours, encoding="utf-8")
    copy = "cars[ext_memory].sync-conflict-20261003-101010-ABCDEFG.md"
    (tmp_path / copy).write_text(theirs, encoding="utf-8")
    done = zonemark("merge-file", "--two-way", MEM, copy, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert entry_titles((tmp_path / MEM).read_text(encoding="utf-8"))[2:4] == [
        "###### LOG: 2026-10-02 — 東京", "###### LOG: 2026-10-03 — perché"]


def test_every_bad_input_is_one_line_and_exit_2_and_ours_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "ours.md").write_text(MEMORY, encoding="utf-8")
    (tmp_path / "bad.md").write_bytes(b"# T [reminder]\n\xff\n")
    for args in (("base.md", "ours.md", "theirs.md"), ("ours.md",), ("--two-way", "ours.md"),
                 ("bad.md", "ours.md", "ours.md"), ("-L", "a", "-L", "b", "-L", "c", "-L", "d", "ours.md", "ours.md",
                                                    "ours.md")):
        done = zonemark("merge-file", *args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert (tmp_path / "ours.md").read_text(encoding="utf-8") == MEMORY


def _counted_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = parse

    def counted(text: str, **kwargs: bool) -> Document:
        calls.append(len(text))
        return real(text, **kwargs)
    monkeypatch.setattr(merge_module, "parse", counted)
    return calls


def _many_topics(count: int) -> str:
    many = MEMORY
    for k in range(count):
        many = many.replace("[P1]\n## TOPIC: Viaggi", f"[P1]\n## TOPIC: T{k} — 東京\n[/P1]\n\n[P4]\n"
                                                      f"###### LOG: 2026-01-01 — {k}\nperché\n[/P4]\n\n"
                                                      "[P1]\n## TOPIC: Viaggi", 1)
    return many


def test_journal_appends_parse_only_the_changed_journals(monkeypatch: pytest.MonkeyPatch) -> None:
    """G13, G33: two devices' appends to one journal of a large file parse only the merged new entries (one small
    parse: the re-check), never the whole file nor the whole journal."""
    calls = _counted_parses(monkeypatch)
    many = _many_topics(300)
    ours = _tyres(many, "###### LOG: 2026-10-03 — perché\nuno\n")
    theirs = _tyres(many, "###### LOG: 2026-10-02 — 東京\ndue\n")
    plan = plan_merge(many.encode(), ours.encode(), theirs.encode())
    assert plan.outcome == "merged" and plan.entries_added == 1
    assert len(calls) == 1 and max(calls) < 300
    assert plan.data.decode() == _tyres(many, "###### LOG: 2026-10-02 — 東京\ndue\n\n"
                                              "###### LOG: 2026-10-03 — perché\nuno\n")


def test_a_merge_beyond_journals_parses_each_input_once_and_the_result_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """G13: any other merge is four linear parses (base, ours, theirs, the re-check), however many units."""
    calls = _counted_parses(monkeypatch)
    many = _many_topics(200)
    ours = _tyres(many, "###### LOG: 2026-10-03 — perché\nuno\n").replace("## TOPIC: T7 — 東京", "## TOPIC: Sette")
    theirs = _tyres(many, "###### LOG: 2026-10-02 — 東京\ndue\n")
    plan = plan_merge(many.encode(), ours.encode(), theirs.encode())
    assert plan.outcome == "merged" and len(calls) == 4 and min(calls) > len(many) // 2


def test_check_reports_each_conflict_region_once_with_its_lines() -> None:
    """Two regions (one diff3, one two-way) give two MERGE_CONFLICT diagnostics and nothing of their cascade."""
    ours = _tyres(MEMORY, "###### LOG: 2026-10-03 — perché\nuno\n")
    text = ours.replace("[P4]\n###### LOG: 2026-09-06 — general",
                        "<<<<<<< ours\n[P4]\n||||||| base\n[P5]\n=======\n[P3]\n>>>>>>> theirs\n"
                        "###### LOG: 2026-09-06 — general")
    text = text.replace("## TOPIC: Viaggi\n", "<<<<<<< ours\n## TOPIC: Viaggi\n=======\n## TOPIC: 東京\n>>>>>>> b\n")
    doc = parse(text)
    assert [(d.code, d.line, d.related_line) for d in doc.diagnostics] == [
        ("MERGE_CONFLICT", 7, 13), ("MERGE_CONFLICT", 31, 35)]
    assert "lines 7-13" in doc.diagnostics[0].message


# -- containers added on both sides (G34) --------------------------------------------------------
def _topic(name: str, entry: str) -> str:
    return f"[P1]\n## TOPIC: {name}\n[/P1]\n\n[P4]\n{entry}[/P4]\n\n"


def test_containers_added_on_both_sides_at_one_place_are_one_conflict_region_and_the_rest_merged() -> None:
    """G34: two devices added a topic at the same place: a conflict region around the added zones only (diff3, the
    base's part empty), every journal append of either side merged outside it; taking either side's part makes a
    clean file with all the entries."""
    casa = _topic("Casa — perché", "###### LOG: 2026-10-01 — caldaia\nRevisione fatta — perché sì.\n")
    tokyo = _topic("東京 — viaggio", "###### LOG: 2026-10-01 — 東京\nVolo prenotato — 東京.\n")
    ours = _tyres(MEMORY, "###### LOG: 2026-10-03 — pressione\n2.4 bar — perché.\n").replace(
        "[P1]\n## TOPIC: Viaggi", casa + "[P1]\n## TOPIC: Viaggi")
    theirs = MEMORY.replace("[P1]\n## TOPIC: Viaggi", tokyo + "[P1]\n## TOPIC: Viaggi") + \
        "\n[P4]\n###### LOG: 2026-10-04 — ritorno\nDa 東京 — perché no.\n[/P4]\n"
    plan = plan_merge(MEMORY.encode(), ours.encode(), theirs.encode())
    assert plan.outcome == "conflict", plan.reason
    assert [(c.level, c.what) for c in plan.conflicts] == [
        (None, "the containers added or removed on both sides before the [P1] zone of ## TOPIC: Viaggi")]
    text = plan.data.decode()
    region = text[text.index("<<<<<<< ours\n"):text.index(">>>>>>> theirs\n")]
    assert "## TOPIC: Casa — perché" in region and "## TOPIC: 東京 — viaggio" in region
    assert "||||||| base\n=======\n" in region  # the base had nothing there
    assert "Maintenance" not in region and "Viaggi" not in region and "LOG: 2026-10-03" not in region
    outside = text.replace(region, "")
    assert "###### LOG: 2026-10-03 — pressione" in outside and "###### LOG: 2026-10-04 — ritorno" in outside
    doc = parse(text)
    assert [(d.code, d.line) for d in doc.diagnostics] == [("MERGE_CONFLICT", plan.conflicts[0].line)]
    take_ours = text.replace(region[region.index("||||||| base\n"):] + ">>>>>>> theirs\n", "").replace(
        "<<<<<<< ours\n", "")
    resolved = parse(take_ours)
    assert not resolved.diagnostics and [m.name for m in resolved.modules] == [
        "Maintenance", "Tyres", "Casa — perché", "Viaggi"]
    assert len(entry_titles(take_ours)) == 6


def test_containers_added_on_both_sides_at_different_places_merge_without_conflict() -> None:
    """G34: a topic added on each side at another place: each region changed on one side only takes that side."""
    casa = _topic("Casa — perché", "###### LOG: 2026-10-01 — caldaia\nRevisione — perché sì.\n")
    tokyo = _topic("東京 — viaggio", "###### LOG: 2026-10-01 — 東京\nVolo — 東京.\n")
    ours = MEMORY.replace("[P1]\n## TOPIC: Viaggi", casa + "[P1]\n## TOPIC: Viaggi")
    theirs = MEMORY + "\n" + tokyo.rstrip("\n") + "\n"
    plan = plan_merge(MEMORY.encode(), ours.encode(), theirs.encode())
    assert plan.outcome == "merged", plan.reason
    doc = parse(plan.data.decode())
    assert not doc.diagnostics
    assert [m.name for m in doc.modules] == ["Maintenance", "Tyres", "Casa — perché", "Viaggi", "東京 — viaggio"]


def test_a_container_added_on_one_side_where_the_other_removed_one_is_a_region_conflict() -> None:
    """G34: at one place OURS removed the Viaggi topic while THEIRS added one after it: a conflict region there
    only, THEIRS' journal append elsewhere merged."""
    viaggi = MEMORY[MEMORY.index("[P1]\n## TOPIC: Viaggi"):]
    ours = MEMORY.replace(viaggi, "").rstrip("\n") + "\n"
    tokyo = _topic("東京 — viaggio", "###### LOG: 2026-10-01 — 東京\nVolo — perché.\n")
    theirs = _tyres(MEMORY, "###### LOG: 2026-10-02 — rotazione\nGomme — 東京.\n") + "\n" + tokyo.rstrip("\n") + "\n"
    plan = plan_merge(MEMORY.encode(), ours.encode(), theirs.encode())
    assert plan.outcome == "conflict" and len(plan.conflicts) == 1, plan.reason
    text = plan.data.decode()
    region = text[text.index("<<<<<<< ours\n"):]
    assert "## TOPIC: 東京 — viaggio" in region and "## TOPIC: Viaggi" in region  # theirs and base
    assert "###### LOG: 2026-10-02 — rotazione" in text[:text.index("<<<<<<< ours\n")]


def test_two_devices_adding_a_container_at_one_place_sync_to_one_region_and_check_names_it(tmp_path: Path) -> None:
    """G34 with real git: both devices add a topic before Viaggi and append to a journal; the pull leaves one
    conflict region around the added zones, both appends merged, and ``check`` reports that region once."""
    a, b = devices(tmp_path, {MEM: MEMORY.encode()})
    (a / MEM).write_text(MEMORY.replace("[P1]\n## TOPIC: Viaggi", _topic(
        "Casa — perché", "###### LOG: 2026-10-01 — caldaia\nFatto — perché.\n") + "[P1]\n## TOPIC: Viaggi"),
        encoding="utf-8")
    append_entry(a / MEM, "Viaggi", "biglietti", "Treno per 東京 — perché no.", date="2026-10-04")
    commit_all(a, "A")
    assert sync(a).returncode == 0
    (b / MEM).write_text(MEMORY.replace("[P1]\n## TOPIC: Viaggi", _topic(
        "東京 — viaggio", "###### LOG: 2026-10-01 — 東京\nVolo — 東京.\n") + "[P1]\n## TOPIC: Viaggi"),
        encoding="utf-8")
    append_entry(b / MEM, "Maintenance/Tyres", "rotazione", "Gomme ruotate — 東京.", date="2026-10-02")
    commit_all(b, "B")
    assert sync(b).returncode != 0
    text = (b / MEM).read_text(encoding="utf-8")
    assert text.count("<<<<<<< ") == 1 and text.count(">>>>>>> ") == 1
    region = text[text.index("<<<<<<< "):text.index(">>>>>>> ")]
    assert "Casa — perché" in region and "東京 — viaggio" in region and "###### LOG: 2026-10-0" in region
    assert "rotazione" not in region and "biglietti" not in region
    assert "###### LOG: 2026-10-02 — rotazione" in text and "###### LOG: 2026-10-04 — biglietti" in text
    check = zonemark("check", str(b / MEM))
    assert check.returncode == 1 and check.stdout.count("MERGE_CONFLICT") == 1


def test_two_way_copies_whose_containers_differ_get_a_region_without_a_base() -> None:
    """G10, G34: without a base a topic on one copy only may be added or removed: a conflict region around it (no
    ``|||||||`` part), the journals of both copies united outside it."""
    casa = _topic("Casa — perché", "###### LOG: 2026-10-01 — caldaia\nFatto — 東京.\n")
    ours = _tyres(MEMORY, "###### LOG: 2026-10-03 — perché\nuno\n").replace(
        "[P1]\n## TOPIC: Viaggi", casa + "[P1]\n## TOPIC: Viaggi")
    theirs = _tyres(MEMORY, "###### LOG: 2026-10-02 — 東京\ndue\n")
    plan = plan_merge(None, ours.encode(), theirs.encode())
    assert [(c.level, c.what) for c in plan.conflicts] == [
        (None, "the containers that differ before the [P1] zone of ## TOPIC: Viaggi")]
    text = plan.data.decode()
    region = text[text.index("<<<<<<< ours\n"):text.index(">>>>>>> theirs\n")]
    assert "## TOPIC: Casa — perché" in region and "||||||| " not in text and region.endswith("=======\n")
    before = text[:text.index("<<<<<<< ours\n")]
    assert before.index("2026-10-02 — 東京") < before.index("2026-10-03 — perché")
