"""Scaffolding in canonical shape: ``zonemark new`` and ``zonemark add-container`` (issue 10, part 3)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from zonemark import parse_file
from zonemark.cli.main import main
from zonemark.writer import RefusedWrite, append_entry, history, undo
from zonemark.writer import snapshot as snapshot_module
from zonemark.writer.locate import ZoneIndex, journal_zones
from zonemark.writer.scaffold import _create_exclusive, add_container, filename_for, new_file
from zonemark.writer.store import Store

SPEC = Path(__file__).parents[1] / "fixtures" / "spec"
FAST = Store(fsync=False)


@pytest.fixture(autouse=True)
def _fresh_cache():
    snapshot_module.forget()


def check_clean(capsys, *paths) -> None:
    """`zonemark check` passes with no error and no warning."""
    code = main(["check", *map(str, paths)])
    out, err = capsys.readouterr()
    assert code == 0 and "0 errors, 0 warnings" in out, out + err


def canonical(path: Path) -> list[tuple[str, int, int]]:
    """Every container: its address, header line, and the line of its own [P4] journal (must exist)."""
    doc = parse_file(path)
    index = ZoneIndex.build(doc)
    out = []
    for node in doc.outline().walk():
        if node.kind == "file" or not node.is_container or node.kind == "nucleus" or node.kind == "section":
            continue
        address = node.id if node.keyword is None and node.id else None
        cid = next(h.index for h in index.headers if index.header_line(h.index) == node.line)
        journals = journal_zones(index, cid, (4,))
        assert journals, f"container at line {node.line} has no [P4] journal of its own"
        zone = index.zone_at_line(node.line)
        assert zone.level == 1, f"container at line {node.line} is not declared in [P1]"
        out.append((address or node.name, node.line, journals[-1].line))
    return out


# -- new ---------------------------------------------------------------------------------------

def test_new_memory_has_each_container_in_p1_with_its_own_empty_p4(tmp_path, capsys):
    made = new_file("memory", "Auto — 車", tmp_path, topics=["Manutenzione/Gomme/Pressioni", "Assicurazione"])
    assert made.path == tmp_path / "Auto_—_車[ext_memory].md"
    assert made.containers == ("Manutenzione", "Manutenzione/Gomme", "Manutenzione/Gomme/Pressioni", "Assicurazione")
    text = made.path.read_text(encoding="utf-8")
    assert text == ("# Auto — 車 [external_memory]\n\n"
                    "[P1]\n## TOPIC: Manutenzione\n[/P1]\n\n[P4]\n[/P4]\n\n"
                    "[P1]\n### SUBTOPIC1: Gomme\n[/P1]\n\n[P4]\n[/P4]\n\n"
                    "[P1]\n#### SUBTOPIC2: Pressioni\n[/P1]\n\n[P4]\n[/P4]\n\n"
                    "[P1]\n## TOPIC: Assicurazione\n[/P1]\n\n[P4]\n[/P4]\n")
    assert [c[0] for c in canonical(made.path)] == ["Manutenzione", "Gomme", "Pressioni", "Assicurazione"]
    check_clean(capsys, made.path)
    # an appending agent lands in the sub-topic's own journal
    r = append_entry(made.path, "Manutenzione/Gomme", "cambio gomme — タイヤ", "Quattro nuove.", actor="ai",
                     date="2026-10-01", store=FAST)
    assert r.zone == 14 and parse_file(made.path).h6_owner == {r.line: 11}


def test_new_memory_without_topics_gets_one(tmp_path, capsys):
    made = new_file("memory", "note", tmp_path)
    assert made.containers == ("General",) and made.path.name == "note[ext_memory].md"
    check_clean(capsys, made.path)


def test_new_reminder_and_module_check_clean_alone_and_as_a_layer(tmp_path, capsys):
    reminder = new_file("reminder", "Aria", tmp_path)
    module = new_file("module", "Curiosità — 好奇心", tmp_path)
    assert reminder.path.name == "Aria[reminder].md" and module.path.name == "Curiosità_—_好奇心[ext_module].md"
    doc = parse_file(module.path)
    assert [(m.id, m.name, m.declared_state, m.assigned_nuclei) for m in doc.modules] == [
        ("CURIOSITÀ_好奇心", "Curiosità — 好奇心", "active", ())]
    assert canonical(module.path) == [("CURIOSITÀ_好奇心", 4, 11)]
    registry = parse_file(reminder.path).registry
    assert registry is not None and registry.permission_level == 4
    check_clean(capsys, reminder.path)
    check_clean(capsys, module.path)
    check_clean(capsys, tmp_path)
    with_id = new_file("module", "altro", tmp_path, module_id="OTHER_01")
    assert parse_file(with_id.path).modules[0].id == "OTHER_01"


def test_new_never_overwrites(tmp_path):
    target = tmp_path / "note[ext_memory].md"
    target.write_text("il mio file — 私のファイル\n", encoding="utf-8")
    with pytest.raises(RefusedWrite, match="already exists; zonemark never overwrites"):
        new_file("memory", "note", tmp_path)
    assert target.read_text(encoding="utf-8") == "il mio file — 私のファイル\n"
    dangling = tmp_path / "x[ext_memory].md"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(RefusedWrite, match="already exists"):
        new_file("memory", "x", tmp_path)
    assert dangling.is_symlink() and not (tmp_path / "nowhere").exists()


def test_the_exclusive_create_loses_a_race_without_overwriting(tmp_path):
    target = tmp_path / "race[ext_memory].md"
    target.write_bytes(b"written by someone else a moment ago\n")
    with pytest.raises(RefusedWrite, match="already exists"):
        _create_exclusive(target, b"# race [external_memory]\n")
    assert target.read_bytes() == b"written by someone else a moment ago\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["race[ext_memory].md"]  # no temporary file left


def test_new_refuses_a_second_reminder_and_a_taken_module_id(tmp_path):
    new_file("reminder", "Aria", tmp_path)
    with pytest.raises(RefusedWrite, match="already has a reminder, Aria\\[reminder\\].md"):
        new_file("reminder", "Beta", tmp_path)
    new_file("module", "curiosity", tmp_path)
    with pytest.raises(RefusedWrite, match="MODULE CURIOSITY is already declared in curiosity\\[ext_module\\].md:4"):
        new_file("module", "Curiosity!", tmp_path / ".")
    assert len(list(tmp_path.glob("*.md"))) == 2


def test_new_creates_the_folder_and_names_files_by_the_convention(tmp_path):
    made = new_file("reminder", "My AI: v2", tmp_path / "layer" / "deep")
    assert made.path == tmp_path / "layer" / "deep" / "My_AI_v2[reminder].md"
    assert parse_file(made.path).title == "My AI: v2"
    assert filename_for("module", " spaced  name ") == "spaced_name[ext_module].md"


@pytest.mark.parametrize("name,message", [
    ("", "is empty"), ("   ", "is empty"), ("a\nb", "line break"), ("a\u2028b", "line break"),
    ("x\x00y", "control character U+0000"), ("x [P1] y", "zone tag"), ("x [/p4]", "zone tag"),
    ("Casa [NUCLEI: 1]", "[NUCLEI: ...] tag"), ("x [external_memory]", "file-type tag"), ("x [ext_module]", "file-type tag"),
    ("fine [/LOG]", "[/LOG]"), ("a <!-- b", "HTML comment"), ("tag #", "ends in '#'"), ("x" * 121, "at most 120"),
])
def test_names_that_would_make_structure_are_refused(tmp_path, name, message):
    with pytest.raises(RefusedWrite, match=re.escape(message)):
        new_file("memory", name, tmp_path)
    path = new_file("memory", "ok", tmp_path).path
    before = path.read_bytes()
    with pytest.raises(RefusedWrite):
        add_container(path, f"General/{name}" if name.strip() else "General/", store=FAST)
    assert path.read_bytes() == before
    assert not history(path, store=FAST)


# -- add-container -----------------------------------------------------------------------------

@pytest.fixture
def cars(tmp_path) -> Path:
    path = tmp_path / "cars[ext_memory].md"
    shutil.copy(SPEC / "14_4_external_memory_subtopics.md", path)
    return path


def owners_by_title(path: Path) -> dict[str, str]:
    doc = parse_file(path)
    index = ZoneIndex.build(doc)
    names = {index.header_line(h.index): h.name for h in index.headers}
    return {b.title: names.get(doc.h6_owner[b.line], "file") for b in doc.walk() if b.type == "log"}


def test_a_sub_topic_becomes_the_last_child_and_takes_nothing(cars, capsys):
    owners = owners_by_title(cars)
    added = add_container(cars, "Maintenance/Tyres/Tread — 溝", store=FAST)
    assert (added.header, added.line, added.journal_line, added.address) == (
        "#### SUBTOPIC2: Tread — 溝", 31, 34, "Maintenance/Tyres/Tread — 溝")
    lines = cars.read_text(encoding="utf-8").split("\n")
    assert lines[21:37] == ["#### SUBTOPIC2: Pressures", "[/P1]", "", "[P4]",
                            "###### LOG: 2026-09-06 — measured cold",
                            "2.4 front, 2.6 rear. The rear left loses about 0.1 a month.", "[/P4]", "",
                            "[P1]", "#### SUBTOPIC2: Tread — 溝", "[/P1]", "", "[P4]", "[/P4]", "", "[P1]"]
    assert lines[37] == "### SUBTOPIC1: Bodywork"  # the next sibling of Tyres follows
    assert owners_by_title(cars) == owners
    check_clean(capsys, cars)
    r = append_entry(cars, "Maintenance/Tyres/Tread — 溝", "misurato", "3 mm", actor="ai", date="2026-10-02",
                     store=FAST)
    assert r.zone == 34 and parse_file(cars).h6_owner[r.line] == 31


def test_a_topic_goes_at_the_end_and_history_keeps_the_old_file(cars, capsys):
    before = cars.read_bytes()
    added = add_container(cars, "Viaggi", store=FAST)
    assert added.line == 45 and cars.read_bytes().startswith(before + b"\n[P1]\n## TOPIC: Viaggi\n[/P1]")
    check_clean(capsys, cars)
    assert [e.action for e in history(cars, store=FAST)] == ["add container Viaggi"]
    undo(cars, store=FAST)
    assert cars.read_bytes() == before


def test_add_container_is_for_the_user_only(cars):
    before = cars.read_bytes()
    with pytest.raises(RefusedWrite, match="only the user may"):
        add_container(cars, "Viaggi", actor="ai", store=FAST)
    assert cars.read_bytes() == before


@pytest.mark.parametrize("path,message", [
    ("Maintenance/Tyres", "a container 'Tyres' already exists under 'Maintenance'"),
    ("Insurance", "a container 'Insurance' already exists at the top of the file"),
    ("Nope/Sub", "no container 'Nope' at the top of the file"),
    ("Maintenance/Tyres/Pressures/Cold/Colder", "SUBTOPIC3 \\(H5\\), the deepest"),
    ("Maintenance/Tyres/Pressures/Cold", "a container 'Cold' already exists"),
    ("", "give a topic name"),
])
def test_add_container_refusals_leave_the_file_untouched(cars, path, message):
    # SUBTOPIC3 (H5) is allowed, one level deeper is not
    assert add_container(cars, "Maintenance/Tyres/Pressures/Cold", store=FAST).header == "##### SUBTOPIC3: Cold"
    before = cars.read_bytes()
    with pytest.raises(RefusedWrite, match=message):
        add_container(cars, path, store=FAST)
    assert cars.read_bytes() == before


@pytest.mark.parametrize("written", ["NFC", "NFD"])
def test_add_container_compares_names_after_nfc_normalisation(tmp_path, written):
    """'Città' typed (NFC) or pasted in decomposed form (NFD) is one name (issue 7, item 12)."""
    import unicodedata
    path = tmp_path / "viaggi[ext_memory].md"
    path.write_text(unicodedata.normalize(written, "# Viaggi — 旅行 [external_memory]\n\n[P1]\n## TOPIC: Città\n"
                                                   "[/P1]\n\n[P4]\n[/P4]\n"), encoding="utf-8")
    add_container(path, "Città/Kyōto — 京都", store=FAST)
    before = path.read_bytes()
    for typed in ("NFC", "NFD"):
        with pytest.raises(RefusedWrite, match="already exists at the top of the file"):
            add_container(path, unicodedata.normalize(typed, "Città"), store=FAST)
        with pytest.raises(RefusedWrite, match="already exists under"):
            add_container(path, unicodedata.normalize(typed, "Città/Kyōto — 京都"), store=FAST)
    assert path.read_bytes() == before


def test_a_file_that_does_not_pair_zones_is_refused_not_guessed(tmp_path):
    path = tmp_path / "flat[ext_memory].md"
    path.write_text("# flat [external_memory]\n\n[P1]\n## TOPIC: A\n## TOPIC: B\n[/P1]\n\n[P4]\n[/P4]\n",
                    encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(RefusedWrite, match="header at line 5 does not open a \\[P1\\]-\\[P3\\] zone"):
        add_container(path, "A/Sub", store=FAST)
    assert path.read_bytes() == before


def test_a_broken_file_is_refused(tmp_path):
    path = tmp_path / "broken[ext_memory].md"
    path.write_text("# broken [external_memory]\n\n[P1]\n## TOPIC: A\n", encoding="utf-8")
    with pytest.raises(RefusedWrite, match="UNCLOSED_PERMISSION_BLOCK at line 3"):
        add_container(path, "B", store=FAST)


def test_modules_go_before_the_registry_with_the_next_free_id(tmp_path, capsys):
    reminder = tmp_path / "main[reminder].md"
    shutil.copy(SPEC / "14_1_minimal_reminder.md", reminder)
    text = reminder.read_text(encoding="utf-8") + "\n[P4]\n## MODULE_STATE_REGISTRY:\n* ACTIVE: 042\n* INACTIVE:\n[/P4]\n"
    reminder.write_text(text, encoding="utf-8")
    added = add_container(reminder, "MEMORIA — 記憶", store=FAST)
    assert (added.header, added.address) == ("## MODULE 045: MEMORIA — 記憶 [NUCLEI: ]", "045")
    after = reminder.read_text(encoding="utf-8")
    assert after.index("## MODULE 045") < after.index("## MODULE_STATE_REGISTRY:")
    assert after.endswith("[P4]\n[/P4]\n\n[P4]\n## MODULE_STATE_REGISTRY:\n* ACTIVE: 042\n* INACTIVE:\n[/P4]\n")
    assert add_container(reminder, "MODULE 099: ALTRO", store=FAST).address == "099"
    assert add_container(reminder, "X", module_id="A7", store=FAST).address == "A7"
    with pytest.raises(RefusedWrite, match="MODULE 042 is already declared in main\\[reminder\\].md:43"):
        add_container(reminder, "042: DUP", store=FAST)
    with pytest.raises(RefusedWrite, match="sub-modules are added by hand"):
        add_container(reminder, "042/CHILD", store=FAST)
    r = append_entry(reminder, "045", "prima", "nota — メモ", actor="ai", date="2026-10-03", store=FAST)
    assert parse_file(reminder).h6_owner[r.line] == added.line


def test_an_external_module_gets_an_id_from_the_name_unique_in_the_layer(tmp_path, capsys):
    new_file("reminder", "Aria", tmp_path)
    mod = new_file("module", "curiosity", tmp_path).path
    added = add_container(mod, "Second drive", store=FAST)
    assert added.address == "SECOND_DRIVE" and added.header == "## MODULE SECOND_DRIVE: Second drive [NUCLEI: ]"
    other = new_file("module", "other", tmp_path).path
    with pytest.raises(RefusedWrite, match="MODULE SECOND_DRIVE is already declared in curiosity\\[ext_module\\].md"):
        add_container(other, "Second drive", store=FAST)
    check_clean(capsys, tmp_path)


def test_a_file_without_a_final_newline(tmp_path, capsys):
    path = tmp_path / "cut[ext_memory].md"
    path.write_bytes("# cut — 切 [external_memory]\n\n[P1]\n## TOPIC: A\n[/P1]\n\n[P4]\n[/P4]".encode())
    added = add_container(path, "B", store=FAST)
    assert path.read_bytes().endswith(b"[/P4]\n\n[P1]\n## TOPIC: B\n[/P1]\n\n[P4]\n[/P4]\n") and added.line == 11
    check_clean(capsys, path)


def test_a_crlf_file_keeps_its_line_endings(tmp_path):
    path = tmp_path / "win[ext_memory].md"
    path.write_bytes(b"# win [external_memory]\r\n\r\n[P1]\r\n## TOPIC: A\r\n[/P1]\r\n\r\n[P4]\r\n[/P4]\r\n")
    add_container(path, "A/B", store=FAST)
    data = path.read_bytes()
    assert b"\n" not in data.replace(b"\r\n", b"") and b"### SUBTOPIC1: B\r\n" in data


# -- the command line --------------------------------------------------------------------------

def run(capsys, argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_new_and_add_container(tmp_path, capsys):
    code, out, err = run(capsys, ["new", "memory", "Diario — 日記", "--dir", tmp_path, "--topic", "Viaggi/Treni"])
    path = tmp_path / "Diario_—_日記[ext_memory].md"
    assert code == 0 and err == "" and out == f"created {path}: external memory with 'Viaggi', 'Viaggi/Treni'\n"
    code, out, err = run(capsys, ["add-container", path, "Viaggi/Aerei", "--as", "user"])
    assert code == 0 and out == (f"{path}: added '### SUBTOPIC1: Aerei' at line 18 with its [P4] journal at line 21 "
                                 "(address 'Viaggi/Aerei'; history 00000001)\n")
    code, out, err = run(capsys, ["new", "reminder", "Aria", "--dir", tmp_path])
    assert code == 0 and "reminder with 'Center of Gravity', 'RULES:', 'NUCLEUS 1' and a MODULE_STATE_REGISTRY" in out


@pytest.mark.parametrize("argv,code,message", [
    (["add-container", "{memory}", "Casa"], 1, "only the user may (use --as user)"),
    (["add-container", "{memory}", "x [P1]", "--as", "user"], 1, "zone tag"),
    (["add-container", "{missing}", "Casa", "--as", "user"], 2, "no such file"),
    (["add-container", "{dir}", "Casa", "--as", "user"], 2, "is a folder"),
    (["new", "memory", "note", "--dir", "{dir}"], 1, "already exists; zonemark never overwrites"),
    (["new", "reminder", "x", "--topic", "A", "--dir", "{dir}"], 2, "--topic is for a memory"),
    (["new", "memory", "y", "--id", "A", "--dir", "{dir}"], 2, "--id is for a module"),
    (["new", "memory", "z", "--dir", "{memory}"], 2, "is a file, not a folder"),
    (["new", "notes", "z"], 2, "invalid choice"),
])
def test_cli_failures_are_one_line(tmp_path, capsys, argv, code, message):
    memory = new_file("memory", "note", tmp_path).path
    before = memory.read_bytes()
    subs = {"{memory}": str(memory), "{missing}": str(tmp_path / "nope.md"), "{dir}": str(tmp_path)}
    got, out, err = run(capsys, [subs.get(a, a) for a in argv])
    assert got == code and out == "" and message in err and len(err.strip().splitlines()) == 1
    assert memory.read_bytes() == before
    assert sorted(p.name for p in tmp_path.glob("*.md")) == ["note[ext_memory].md"]


def test_cli_new_in_the_current_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, ["new", "module", "curiosità"])
    assert code == 0 and (tmp_path / "curiosità[ext_module].md").is_file()
    assert os.listdir(tmp_path) == ["curiosità[ext_module].md"]
