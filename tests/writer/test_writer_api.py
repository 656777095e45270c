"""The permission-enforcing edit API (§5.2, §5.5, §7.1.2, §7.1.3, §7.3.1)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from zonemark import parse, parse_file
from zonemark.writer import (RefusedWrite, Store, WriteConflict, append_entry, apply_proposal, edit_zone, history,
                             propose, rewrite_registry, set_states, undo)
from zonemark.writer import snapshot as snapshot_module
from zonemark.writer.locate import ZoneIndex

SPEC = Path(__file__).parents[1] / "fixtures" / "spec"


@pytest.fixture
def store():
    return Store(fsync=False)


@pytest.fixture
def files(tmp_path):
    snapshot_module.forget()
    for name in ("14_1_minimal_reminder.md", "14_2_external_module.md", "14_3_external_memory_topics.md",
                 "14_4_external_memory_subtopics.md"):
        shutil.copy(SPEC / name, tmp_path / name)
    return tmp_path


def entries_of(path, *names):
    """Entries (date, title) of the outline node reached by names from the root."""
    node = parse_file(path).outline()
    for name in names:
        node = next(c for c in node.children if c.name == name or c.id == name)
    return [(e.date, e.title) for e in node.entries]


ZONES = """# Zones [reminder]

[P1]
## MODULE 001: ONE [NUCLEI: 1]
### STATE
active - permanent
[/P1]

[P2]
## MODULE 002: TWO [NUCLEI: 1]
[/P2]

[P3]
## MODULE 003: THREE [NUCLEI: 1]
[/P3]

[P3]
###### LOG: 2026-01-01 — three's journal
long-term
[/P3]

[P1]
## MODULE 004: FOUR [NUCLEI: 1]
[/P1]

[P4]
###### LOG: 2026-01-01 — first
kept
[/P4]

[P5]
scratch
[/P5]

[P1]
## NUCLEUS 1: CORE
[/P1]

[P4]
## MODULE_STATE_REGISTRY:
* ACTIVE: 002
* INACTIVE:
[/P4]
"""


@pytest.fixture
def zones(tmp_path):
    snapshot_module.forget()
    p = tmp_path / "zones.md"
    p.write_text(ZONES, encoding="utf-8")
    return p


def zone_line(path, level, nth=0):
    doc = parse_file(path)
    return [b.line for b in doc.blocks if b.type == "permission_block" and b.permission_level == level][nth]


# -- append ----------------------------------------------------------------------------------

def test_append_to_subtopic_lands_in_its_own_journal(files, store):
    p = files / "14_4_external_memory_subtopics.md"
    before = entries_of(p, "Maintenance", "Tyres")
    r = append_entry(p, "Maintenance/Tyres", "summer set stored", "In the garage.", date="2026-10-01", store=store)
    assert r.changed and r.method == "incremental"
    assert entries_of(p, "Maintenance", "Tyres") == before + [("2026-10-01", "summer set stored")]
    assert entries_of(p, "Maintenance") == [("2026-09-06", "general service")]
    lines = p.read_text(encoding="utf-8").split("\n")
    assert lines[r.line - 1] == "###### LOG: 2026-10-01 — summer set stored"
    assert lines[r.line] == "In the garage."
    # §14.4 layout: one blank line between entries, none before [/P4]
    assert lines[r.line - 2] == "" and lines[r.line + 1] == "[/P4]"
    assert not parse_file(p).diagnostics


def test_append_into_empty_zone_and_positional_address(files, store):
    p = files / "14_4_external_memory_subtopics.md"
    append_entry(p, "#2", "policy renewed", "", date="2026-10-02", store=store)
    assert entries_of(p, "Insurance") == [("2026-10-02", "policy renewed")]
    text = p.read_text(encoding="utf-8")
    assert text.endswith("[P4]\n###### LOG: 2026-10-02 — policy renewed\n[/P4]\n")
    append_entry(p, "Maintenance/#2", "dent", "rear door", date="2026-10-03", store=store)
    assert entries_of(p, "Maintenance", "Bodywork") == [("2026-10-03", "dent")]


def test_append_to_reminder_module_keeps_blank_line_layout(files, store):
    p = files / "14_1_minimal_reminder.md"
    old = p.read_text(encoding="utf-8")
    r = append_entry(p, "MODULE 043", "second", "text", date="2026-06-01", store=store)
    new = p.read_text(encoding="utf-8")
    # §14.1 layout: a blank line after [P4] and before [/P4]
    assert "\n###### LOG: 2026-06-01 — second\ntext\n\n[/P4]\n" in new
    assert new.replace("\n###### LOG: 2026-06-01 — second\ntext\n", "", 1) == old
    assert r.target.startswith("'MODULE 043")
    mod = next(c for c in parse_file(p).outline().children if c.id == "043")
    assert [e.title for e in mod.entries] == ["First production activation", "second"]


def test_append_default_date_and_timestamp(files, store):
    p = files / "14_3_external_memory_topics.md"
    import datetime
    append_entry(p, "Development", "today", "", store=store)
    last = parse_file(p).outline().children[0].entries[-1]
    assert last.date == datetime.date.today().isoformat()
    append_entry(p, "Development", "now", "", timestamp=True, store=store)
    last = parse_file(p).outline().children[0].entries[-1]
    assert len(last.date) == 19 and last.date[10] == "T"
    with pytest.raises(ValueError):
        append_entry(p, "Development", "bad", "", date="2026-13-01", store=store)


def test_successive_appends_use_the_shifted_index(files, store):
    p = files / "14_4_external_memory_subtopics.md"
    for i in range(5):
        for c in ("Maintenance", "Maintenance/Tyres/Pressures", "Insurance"):
            r = append_entry(p, c, f"{c} {i}", f"body {i}", date="2026-10-01", store=store)
            assert r.method == "incremental"
    doc = parse_file(p)
    assert not doc.diagnostics
    fresh = ZoneIndex.build(doc)
    cached = snapshot_module.cached_index(p, p.read_bytes())
    assert [fresh.zone(i) for i in range(len(fresh))] == [cached.zone(i) for i in range(len(cached))]
    assert fresh.h_line == cached.h_line and fresh.h_start == cached.h_start
    assert len(entries_of(p, "Maintenance", "Tyres", "Pressures")) == 6


def test_external_change_between_appends_is_seen(files, store):
    p = files / "14_3_external_memory_topics.md"
    append_entry(p, "Standard", "one", "", date="2026-10-01", store=store)
    text = p.read_text(encoding="utf-8")
    p.write_text("<!-- a comment -->\n" + text.replace("## TOPIC: Standard", "## TOPIC: Norms"), encoding="utf-8")
    with pytest.raises(RefusedWrite, match="no container 'Standard'"):
        append_entry(p, "Standard", "two", "", store=store)
    append_entry(p, "Norms", "two", "", date="2026-10-02", store=store)
    assert entries_of(p, "Norms")[-1] == ("2026-10-02", "two")
    assert not parse_file(p).diagnostics


def test_append_refusals_leave_bytes_untouched(files, store, zones):
    p = files / "14_4_external_memory_subtopics.md"
    old = p.read_bytes()
    cases = [
        ("Nope", "no container 'Nope'"),
        ("Maintenance/Nope", "no container 'Nope' under"),
        ("#9", "no container '#9'"),
        ("", "give a container"),
    ]
    for container, msg in cases:
        with pytest.raises(RefusedWrite, match=msg):
            append_entry(p, container, "t", "b", store=store)
        assert p.read_bytes() == old
    # a container whose journal is [P3] only: ai must propose
    z_old = zones.read_bytes()
    with pytest.raises(RefusedWrite, match=r"\[P3\] zone at line 17 .*propose"):
        append_entry(zones, "003", "t", "b", store=store)
    assert zones.read_bytes() == z_old
    # ... while the user may append there
    append_entry(zones, "003", "t", "b", actor="user", date="2026-02-02", store=store)
    assert "###### LOG: 2026-02-02 — t\nb\n[/P3]" in zones.read_text(encoding="utf-8")


def test_container_without_writable_zone_is_refused(tmp_path, store):
    p = tmp_path / "m.md"
    p.write_text("# M [external_memory]\n\n[P1]\n## TOPIC: A\n[/P1]\n\n[P1]\n## TOPIC: B\n[/P1]\n\n[P4]\n[/P4]\n",
                 encoding="utf-8")
    old = p.read_bytes()
    with pytest.raises(RefusedWrite, match="'TOPIC: A' .* has no writable zone of its own") as exc:
        append_entry(p, "A", "t", "", store=store)
    assert exc.value.rule == "§7.1.2"
    assert p.read_bytes() == old
    append_entry(p, "B", "t", "", date="2026-01-01", store=store)
    assert entries_of(p, "B") == [("2026-01-01", "t")]


def test_ambiguous_names_need_position(tmp_path, store):
    p = tmp_path / "m.md"
    p.write_text("# M [external_memory]\n\n[P1]\n## TOPIC: A\n[/P1]\n[P4]\n[/P4]\n\n"
                 "[P1]\n## TOPIC: A\n[/P1]\n[P4]\n[/P4]\n", encoding="utf-8")
    with pytest.raises(RefusedWrite, match="names 2 containers"):
        append_entry(p, "A", "t", "", store=store)
    append_entry(p, "#2", "t", "", date="2026-01-01", store=store)
    assert p.read_text(encoding="utf-8").endswith("[P4]\n###### LOG: 2026-01-01 — t\n[/P4]\n")


def test_sanitised_content_is_reported(files, store):
    p = files / "14_3_external_memory_topics.md"
    r = append_entry(p, "Standard", "x", "[/P4]\n## TOPIC: Evil\n[/LOG]", date="2026-01-01", store=store)
    assert "bracket tag escaped" in r.changes and "header escaped" in r.changes
    assert [c.name for c in parse_file(p).outline().children] == ["Development", "Standard", "Temporary notes"]


def test_second_barrier_refuses_list_marker_diagnostic(files, store):
    """Content the sanitiser keeps but the parser warns about is refused by the re-check (W24: after a quote in
    an item the parser starts a new list where CommonMark still nests the next item)."""
    p = files / "14_3_external_memory_topics.md"
    old = p.read_bytes()
    with pytest.raises(RefusedWrite, match="LIST_MARKER_MISMATCH") as exc:
        append_entry(p, "Standard", "x", "- dash bullet — ダッシュ\n  > citazione — 引用\n  - star bullet",
                     store=store)
    assert exc.value.rule == "§5.5" and exc.value.code == "NEW_DIAGNOSTIC"
    assert p.read_bytes() == old


# -- the §5.2 matrix for edit_zone --------------------------------------------------------

@pytest.mark.parametrize("level,msg", [(1, r"\[P1\] zone at line \d+ is user-only \(§5.2\); ai may not change it"),
                                       (2, r"\[P2\] zone .* read-only"),
                                       (3, r"\[P3\] zone .* proposals"),
                                       (4, r"\[P4\] zone .* append-only for ai")])
def test_ai_may_not_edit_p1_to_p4(zones, store, level, msg):
    old = zones.read_bytes()
    with pytest.raises(RefusedWrite, match=msg) as exc:
        edit_zone(zones, zone_line(zones, level), "changed\n", actor="ai", store=store)
    assert exc.value.rule == "§5.2" and exc.value.zone == zone_line(zones, level)
    assert zones.read_bytes() == old


def test_ai_edits_p5_freely_but_without_structure(zones, store):
    line = zone_line(zones, 5)
    r = edit_zone(zones, line, "###### LOG: 2026-03-03 — volatile\nnotes\n## MODULE 9: X\n", actor="ai", store=store)
    assert r.changed and r.method == "incremental"
    text = zones.read_text(encoding="utf-8")
    assert "[P5]\n###### LOG: 2026-03-03 — volatile\nnotes\n\\## MODULE 9: X\n[/P5]" in text
    assert not parse_file(zones).errors


def test_user_edits_any_zone_but_not_into_errors(zones, store):
    line = zone_line(zones, 1)
    edit_zone(zones, line, "## MODULE 001: ONE [NUCLEI: 1]\n### STATE\ninactive - permanent\n", actor="user",
              store=store)
    doc = parse_file(zones)
    assert next(m for m in doc.modules if m.id == "001").declared_state == "inactive"
    old = zones.read_bytes()
    with pytest.raises(RefusedWrite, match="NESTED_PERMISSION_BLOCK"):
        edit_zone(zones, line, "[P2]\n## MODULE 001: ONE\n", actor="user", store=store)
    assert zones.read_bytes() == old


def _zone_hash_now(path, line):
    from zonemark.writer import zone_base
    data = path.read_bytes()
    index = ZoneIndex.build(parse(data.decode("utf-8")))
    return zone_base(data, index, index.zone_at_line(line))


def test_edit_zone_with_a_base_hash_refuses_a_zone_changed_since(zones, store):
    """W9: under the lock, after the permission check, the zone's inner bytes must still hash to base_hash."""
    line = zone_line(zones, 5)
    base = _zone_hash_now(zones, line)
    r = edit_zone(zones, line, "appunti — メモ, perché sì\n", base_hash=base, store=store)
    assert r.changed and r.zone_hash == _zone_hash_now(zones, line) != base
    # the returned hash is the next base; the old one is stale now
    old = zones.read_bytes()
    with pytest.raises(RefusedWrite, match="changed since its hash was read") as exc:
        edit_zone(zones, line, "sovrascritto — 上書き", base_hash=base, store=store)
    assert (exc.value.code, exc.value.zone, exc.value.level, exc.value.rule) == ("STALE_ZONE", line, 5, "W9")
    assert zones.read_bytes() == old
    # a user's edit between the read and the write makes the agent's hash stale, and is kept
    current = r.zone_hash
    zones.write_text(zones.read_text(encoding="utf-8").replace("appunti — メモ", "scritto dall'utente — 利用者"),
                     encoding="utf-8")
    edited = zones.read_bytes()
    with pytest.raises(RefusedWrite) as exc:
        edit_zone(zones, line, "dell'agente — エージェント", base_hash=current, store=store)
    assert exc.value.code == "STALE_ZONE" and zones.read_bytes() == edited
    # the same edit with the hash read now goes through
    done = edit_zone(zones, line, "dell'agente — エージェント", base_hash=_zone_hash_now(zones, line), store=store)
    assert done.changed and "dell'agente — エージェント\n[/P5]" in zones.read_text(encoding="utf-8")


def test_a_zone_whose_lines_moved_keeps_its_hash(zones, store):
    line = zone_line(zones, 5)
    base = _zone_hash_now(zones, line)
    zones.write_text(zones.read_text(encoding="utf-8").replace("# Zones [reminder]\n",
                                                               "# Zones [reminder]\n\nriga in più — 追加\n"),
                     encoding="utf-8")
    assert _zone_hash_now(zones, line + 2) == base
    assert edit_zone(zones, line + 2, "spostato — 移動", base_hash=base, store=store).changed


def test_the_hash_is_checked_before_the_permission(zones, store):
    """W42: a hash that is not the zone's says the zone moved or changed, whatever the zone now at the line."""
    with pytest.raises(RefusedWrite) as exc:
        edit_zone(zones, zone_line(zones, 1), "x — エックス", base_hash="0" * 64, store=store)
    assert exc.value.code == "STALE_ZONE" and exc.value.level == 1
    # with the zone's own hash the permission answers
    with pytest.raises(RefusedWrite) as exc:
        edit_zone(zones, zone_line(zones, 1), "x — エックス", base_hash=_zone_hash_now(zones, zone_line(zones, 1)),
                  store=store)
    assert exc.value.code == "ZONE_READ_ONLY" and exc.value.level == 1


def test_a_stale_hash_says_where_the_zone_read_is_now(zones, store):
    """W42: lines written above a [P5] zone put its old line in the zone before it; the refusal is STALE_ZONE
    with the zone's new line (``zone``, ``level``), found by its hash, and the file is left as the user wrote it."""
    line = zone_line(zones, 5)
    base = _zone_hash_now(zones, line)
    text = zones.read_text(encoding="utf-8")
    lines = text.split("\n")
    before_zone = max(i for i, ln in enumerate(lines[:line - 1]) if ln.startswith("[P") and ln != "[P5]") + 1
    lines[before_zone:before_zone] = ["perché — 東京"] * (line - 1 - before_zone)  # the old line is inside it now
    zones.write_text("\n".join(lines), encoding="utf-8")
    edited = zones.read_bytes()
    moved = line + (line - 1 - before_zone)
    assert _zone_hash_now(zones, moved) == base and _zone_hash_now(zones, line) != base
    with pytest.raises(RefusedWrite, match=f"now the \\[P5\\] zone at line {moved}") as exc:
        edit_zone(zones, line, "spostato — 移動", base_hash=base, store=store)
    assert (exc.value.code, exc.value.zone, exc.value.level) == ("STALE_ZONE", moved, 5)
    assert zones.read_bytes() == edited


@pytest.mark.parametrize("bad", ["", "abc", "0" * 63, "Z" * 64, "A" * 64, 42])
def test_a_malformed_base_hash_is_a_bad_argument(zones, store, bad):
    old = zones.read_bytes()
    with pytest.raises(ValueError, match="base_hash"):
        edit_zone(zones, zone_line(zones, 5), "x — エックス", base_hash=bad, store=store)
    assert zones.read_bytes() == old


def test_edit_zone_unknown_line(zones, store):
    with pytest.raises(RefusedWrite, match="no permission zone"):
        edit_zone(zones, 1, "x", actor="user", store=store)


# -- registry (§7.3.1) ------------------------------------------------------------------------

def test_registry_rewrite_is_whole_block(zones, store):
    rewrite_registry(zones, active=["002", "003"], inactive=[], actor="ai", store=store)
    text = zones.read_text(encoding="utf-8")
    assert text.endswith("## MODULE_STATE_REGISTRY:\n* ACTIVE: 002, 003\n* INACTIVE:\n[/P4]\n")
    set_states(zones, activate=[], deactivate=["002"], actor="ai", store=store)
    reg = parse_file(zones).registry
    assert reg.active == ("003",) and reg.inactive == ("002",)
    assert not parse_file(zones).diagnostics


REGISTRY_WITH_NEIGHBOURS = """# R — 記憶 [reminder]

[P1]
## MODULE 001: UNO [NUCLEI: 1]
### STATE
active
## MODULE 002: DUE — 二 [NUCLEI: 1]
### STATE
inactive
## NUCLEUS 1: CORE
[/P1]

[P4]
## MODULE_STATE_REGISTRY:
{between}* ACTIVE: 001
* INACTIVE: 002
{after}[/P4]
"""


@pytest.mark.parametrize("between,after", [
    ("", "Nota libera dell'utente — 大事なメモ.\n"),
    ("<!-- keep me — 残す -->\n", ""),
    ("<!-- keep me -->\n", "testo dopo\n\naltro paragrafo — 段落\n"),
])
def test_registry_rewrite_replaces_only_the_registry_lines(tmp_path, store, between, after):
    """Issue 7 item 4: free text after the lines and a comment between header and lines are kept."""
    snapshot_module.forget()
    p = tmp_path / "r.md"
    p.write_text(REGISTRY_WITH_NEIGHBOURS.format(between=between, after=after), encoding="utf-8")
    set_states(p, activate=["002"], actor="ai", store=store)
    text = p.read_text(encoding="utf-8")
    assert text == REGISTRY_WITH_NEIGHBOURS.format(between=between, after=after).replace(
        "* ACTIVE: 001\n* INACTIVE: 002\n", "* ACTIVE: 001, 002\n* INACTIVE:\n")
    reg = parse_file(p).registry
    assert reg.active == ("001", "002") and reg.inactive == ()
    assert not parse_file(p).diagnostics


def test_registry_rewrite_keeps_line_endings_and_indentation(tmp_path, store):
    snapshot_module.forget()
    p = tmp_path / "r.md"
    src = REGISTRY_WITH_NEIGHBOURS.format(between="", after="fine\n").replace("* INACTIVE: 002", "* INACTIVE: 002")
    p.write_bytes(src.replace("\n", "\r\n").encode("utf-8"))
    rewrite_registry(p, active=["002"], inactive=["001"], actor="user", store=store)
    data = p.read_bytes()
    assert b"* ACTIVE: 002\r\n* INACTIVE: 001\r\nfine\r\n[/P4]\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")


def test_registry_refusals(zones, store):
    old = zones.read_bytes()
    with pytest.raises(RefusedWrite, match="module 001 has a permanent STATE"):
        rewrite_registry(zones, active=["001"], actor="ai", store=store)
    with pytest.raises(RefusedWrite, match="module 777 is not declared"):
        rewrite_registry(zones, active=["777"], actor="ai", store=store)
    with pytest.raises(RefusedWrite, match="both ACTIVE and INACTIVE"):
        rewrite_registry(zones, active=["002"], inactive=["002"], actor="ai", store=store)
    with pytest.raises(RefusedWrite, match="not a module id"):
        rewrite_registry(zones, active=["~T1"], actor="ai", store=store)
    assert zones.read_bytes() == old


def test_registry_creation_is_user_only(files, store):
    p = files / "14_1_minimal_reminder.md"
    old = p.read_bytes()
    with pytest.raises(RefusedWrite, match="only the user adds permission tags"):
        rewrite_registry(p, active=["042"], actor="ai", store=store)
    assert p.read_bytes() == old
    rewrite_registry(p, active=["042"], inactive=["043"], actor="user", store=store)
    doc = parse_file(p)
    assert doc.registry.permission_level == 4 and doc.registry.active == ("042",)
    assert p.read_bytes().startswith(old)
    assert not doc.errors


def test_layer_state_uses_the_reminder_and_other_files(tmp_path, store):
    snapshot_module.forget()
    shutil.copy(SPEC / "14_1_minimal_reminder.md", tmp_path / "agent.md")
    shutil.copy(SPEC / "14_2_external_module.md", tmp_path / "curiosity.md")
    rewrite_registry(tmp_path / "agent.md", active=["042"], actor="user", store=store)
    set_states(tmp_path, activate=["CURIOSITY_ENGINE"], deactivate=["042"], actor="ai", store=store)
    reg = parse_file(tmp_path / "agent.md").registry
    assert reg.active == ("CURIOSITY_ENGINE",) and reg.inactive == ("042",)


def test_layer_state_follows_the_layer_loader(tmp_path, store):
    """Issue 8: set_states finds the reminder and the ids with zonemark.layer.Layer (no rules of its own)."""
    snapshot_module.forget()
    (tmp_path / "agent.md").write_text(REGISTRY_WITH_NEIGHBOURS.format(between="", after=""), encoding="utf-8")
    # a reminder tag late in a long file, past any first-4-KB sniffing, is still the file's H1
    (tmp_path / "notes.md").write_text("x\n" * 3000, encoding="utf-8")
    # a module file clashing with the reminder's id 002 is not merged (§7.1.1)
    (tmp_path / "clash.md").write_text("# Clash [external_module]\n\n[P1]\n## MODULE 002: ALTRO\n### STATE\nactive\n"
                                       "## MODULE 077: SOLO\n### STATE\nactive\n[/P1]\n", encoding="utf-8")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "other[reminder].md").write_text("# Other [reminder]\n", encoding="utf-8")
    old = (tmp_path / "agent.md").read_bytes()
    with pytest.raises(RefusedWrite, match="module 077 is declared in clash.md, which the layer does not merge"):
        set_states(tmp_path, activate=["077"], store=store)
    assert (tmp_path / "agent.md").read_bytes() == old
    set_states(tmp_path, activate=["002"], store=store)
    assert parse_file(tmp_path / "agent.md").registry.active == ("001", "002")


def test_layer_state_refuses_a_folder_with_two_reminders(tmp_path, store):
    snapshot_module.forget()
    for name in ("a.md", "b.md"):
        (tmp_path / name).write_text(REGISTRY_WITH_NEIGHBOURS.format(between="", after=""), encoding="utf-8")
    with pytest.raises(RefusedWrite, match="holds 2 \\[reminder\\] files"):
        set_states(tmp_path, activate=["002"], store=store)


@pytest.mark.parametrize("ids", [[""], [",,"], [" , "]])
def test_state_needs_an_id(zones, store, ids):
    with pytest.raises(ValueError, match="at least one module id"):
        set_states(zones, activate=ids, store=store)


# -- proposals ------------------------------------------------------------------------------

def test_propose_and_apply(zones, store):
    line = zone_line(zones, 3)
    prop = propose(zones, line, "## MODULE 003: THREE [NUCLEI: 1]\n### STATE\ninactive\n", actor="ai",
                   reason="THREE should start inactive", store=store)
    record = json.loads(prop.path.read_text(encoding="utf-8"))
    assert (record["zone"]["line"], record["zone"]["level"]) == (line, 3) and record["proposed_by"] == "ai"
    assert record["status"] == "open" and "+### STATE" in record["diff"]
    assert prop.path.parent == zones.parent / ".zonemark" / "proposals"
    old = zones.read_bytes()
    with pytest.raises(RefusedWrite, match="only the user may apply"):
        apply_proposal(prop.path, actor="ai", store=store)
    assert zones.read_bytes() == old
    apply_proposal(prop.path, actor="user", store=store)
    assert next(m for m in parse_file(zones).modules if m.id == "003").declared_state == "inactive"
    assert json.loads(prop.path.read_text(encoding="utf-8"))["status"] == "applied"
    with pytest.raises(RefusedWrite, match="already applied"):
        apply_proposal(prop.path, actor="user", store=store)


def test_apply_after_unrelated_change_and_conflict(zones, store):
    line = zone_line(zones, 3)
    prop = propose(zones, line, "## MODULE 003: THREE [NUCLEI: 1]\nnew text\n", reason="more", store=store)
    append_entry(zones, "004", "unrelated", "x", date="2026-01-01", store=store)  # the [P4] zone after
    apply_proposal(prop.path, actor="user", store=store)
    assert "## MODULE 003: THREE [NUCLEI: 1]\nnew text\n[/P3]" in zones.read_text(encoding="utf-8")
    prop2 = propose(zones, line + 1, "## MODULE 003: THREE [NUCLEI: 1]\nother\n", reason="again", store=store)
    zones.write_text(zones.read_text(encoding="utf-8").replace("new text", "user wrote this"), encoding="utf-8")
    old = zones.read_bytes()
    with pytest.raises(RefusedWrite, match="stale: the \\[P3\\] zone at line 13 changed since the proposal"):
        apply_proposal(prop2.path, actor="user", store=store)
    assert zones.read_bytes() == old


# -- history / undo ---------------------------------------------------------------------------

def test_history_and_undo(files, store):
    p = files / "14_3_external_memory_topics.md"
    old = p.read_bytes()
    append_entry(p, "Standard", "a", "", date="2026-01-01", store=store)
    assert [h.actor for h in history(p, store=store)] == ["ai"]
    with pytest.raises(RefusedWrite, match="only the user may undo"):
        undo(p, actor="ai", store=store)
    undo(p, actor="user", store=store)
    assert p.read_bytes() == old
    # the cache does not hold the undone text: a new append sees the restored file
    append_entry(p, "Standard", "b", "", date="2026-01-02", store=store)
    assert entries_of(p, "Standard")[-1] == ("2026-01-02", "b")
    p.write_text(p.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    with pytest.raises(WriteConflict):
        undo(p, actor="user", store=store)


def test_a_file_that_is_not_utf8_is_refused_not_written_in_two_encodings(tmp_path, store):
    """W45: UTF-8 text appended to a file with an invalid byte would leave two encodings in one file."""
    p = tmp_path / "m.md"
    raw = (b"# M [external_memory]\n\nbad \xff byte\n\n[P1]\n## TOPIC: A\n[/P1]\n[P4]\n[/P4]\n")
    p.write_bytes(raw)
    with pytest.raises(RefusedWrite, match=r"not valid UTF-8 \(byte 28 is \\xFF") as exc:
        append_entry(p, "A", "perché — 東京", "", date="2026-01-01", store=store)
    assert (exc.value.code, exc.value.rule) == ("FILE_NOT_UTF8", "§1") and p.read_bytes() == raw


def test_actor_must_be_known(files, store):
    with pytest.raises(ValueError):
        append_entry(files / "14_3_external_memory_topics.md", "Standard", "t", "", actor="robot", store=store)


def test_non_ascii_offsets(tmp_path, store):
    p = tmp_path / "m.md"
    p.write_text("# Città [external_memory]\n\n[P1]\n## TOPIC: Perché\n[/P1]\n[P4]\n###### LOG: 2026-01-01 — "
                 "già fatto\nè così\n[/P4]\n\n[P1]\n## TOPIC: Più\n[/P1]\n[P4]\n[/P4]\n", encoding="utf-8")
    for i in range(3):
        append_entry(p, "Perché", f"ñ {i}", "ü", date="2026-01-02", store=store)
        append_entry(p, "Più", f"ø {i}", "ß", date="2026-01-02", store=store)
    assert [t for _, t in entries_of(p, "Perché")] == ["già fatto", "ñ 0", "ñ 1", "ñ 2"]
    assert [t for _, t in entries_of(p, "Più")] == ["ø 0", "ø 1", "ø 2"]
    assert not parse_file(p).diagnostics
    assert parse(p.read_text(encoding="utf-8")).serialize() == p.read_text(encoding="utf-8")


def test_ai_appends_to_a_p5_journal_when_there_is_no_p4(tmp_path, store):
    p = tmp_path / "m.md"
    p.write_text("# M [external_memory]\n\n[P1]\n## TOPIC: A\n[/P1]\n[P5]\nscratch\n[/P5]\n", encoding="utf-8")
    r = append_entry(p, "A", "t", "b", date="2026-01-01", store=store)
    assert p.read_text(encoding="utf-8").endswith("[P5]\nscratch\n\n###### LOG: 2026-01-01 — t\nb\n[/P5]\n")
    assert r.zone == 6


def test_zone_that_is_the_first_block_of_a_titleless_file(tmp_path, store):
    p = tmp_path / "m.md"
    p.write_text("\n[P1]\n## Notes\n[/P1]\n[P4]\n[/P4]\n", encoding="utf-8")
    before = [(d.code, d.line) for d in parse_file(p).diagnostics]
    edit_zone(p, 2, "## Notes\nmore\n", actor="user", store=store)
    assert p.read_text(encoding="utf-8") == "\n[P1]\n## Notes\nmore\n[/P1]\n[P4]\n[/P4]\n"
    append_entry(p, "Notes", "t", "", date="2026-01-01", store=store)
    assert p.read_text(encoding="utf-8").endswith("[P4]\n###### LOG: 2026-01-01 — t\n[/P4]\n")
    assert [(d.code, d.line) for d in parse_file(p).diagnostics] == before


def test_concurrent_appends_from_threads(files):
    import threading
    p = files / "14_4_external_memory_subtopics.md"
    errors = []

    def worker(name):
        st = Store(fsync=False)
        try:
            for i in range(10):
                append_entry(p, "Maintenance/Tyres", f"{name} {i}", "x", date="2026-01-01", store=st)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in ("a", "b", "c")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    titles = [t for _, t in entries_of(p, "Maintenance", "Tyres")]
    assert sorted(titles[1:]) == sorted(f"{n} {i}" for n in "abc" for i in range(10))
    assert not parse_file(p).diagnostics


def test_names_that_start_like_keywords(tmp_path, store):
    p = tmp_path / "m.md"
    p.write_text("# M [external_memory]\n\n[P1]\n## TOPIC: Module con then\n[/P1]\n[P4]\n[/P4]\n\n"
                 "[P1]\n## TOPIC 7: Seven\n[/P1]\n[P4]\n[/P4]\n", encoding="utf-8")
    append_entry(p, "Module con then", "a", "", date="2026-01-01", store=store)
    append_entry(p, "TOPIC: Module con then", "b", "", date="2026-01-01", store=store)
    append_entry(p, "7", "c", "", date="2026-01-01", store=store)
    append_entry(p, "TOPIC 7", "d", "", date="2026-01-01", store=store)
    assert [t for _, t in entries_of(p, "Module con then")] == ["a", "b"]
    assert [t for _, t in entries_of(p, "Seven")] == ["c", "d"]
    with pytest.raises(RefusedWrite, match="no container 'SUBTOPIC1: Seven'"):
        append_entry(p, "SUBTOPIC1: Seven", "e", "", store=store)


def test_append_to_a_crlf_file_keeps_its_line_endings(tmp_path, store):
    """The file belongs to the user: a CRLF file (already reported) stays CRLF, never mixed."""
    path = tmp_path / "crlf.md"
    original = (b"# M [external_memory]\r\n\r\n[P1]\r\n## TOPIC: T\r\n[/P1]\r\n\r\n[P4]\r\n"
                b"###### LOG: 2026-01-01 \xe2\x80\x94 a\r\nx\r\n[/P4]\r\n")
    path.write_bytes(original)
    append_entry(path, "T", "b", "y\nz", date="2026-02-02", store=store)
    data = path.read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n") == original.count(b"\r\n") + 4
    assert data.startswith(original[:original.index(b"[/P4]")])
    assert [e.title for e in parse_file(path).outline().children[0].entries] == ["a", "b"]


def test_an_edit_never_lands_in_a_look_alike_zone_of_another_container(tmp_path, store):
    """W9: the base covers the zone's container, so an empty journal of another topic that moved to the line
    the agent read (the user deleted the topic above) is never edited in its place."""
    from zonemark.writer import zone_base
    memory = tmp_path / "m.md"
    topic = "[P1]\n## TOPIC: {}\n[/P1]\n\n[P5]\n[/P5]\n\n"
    memory.write_text("# Diario [external_memory]\n\n" + topic.format("Viaggi — 旅") + topic.format("Lavoro"),
                      encoding="utf-8")
    data = memory.read_bytes()
    index = ZoneIndex.build(parse(data.decode("utf-8")))
    base = zone_base(data, index, index.zone_at_line(7))
    # the user deletes the first topic: the second topic's journal now opens at line 7, with the same bytes
    memory.write_text("# Diario [external_memory]\n\n" + topic.format("Lavoro"), encoding="utf-8")
    before = memory.read_bytes()
    with pytest.raises(RefusedWrite) as exc:
        edit_zone(memory, 7, "appunti — メモ, perché sì\n", base_hash=base, store=store)
    assert exc.value.code == "STALE_ZONE" and memory.read_bytes() == before
    # read again, the base names the journal that is there now, and the edit goes through
    data = memory.read_bytes()
    index = ZoneIndex.build(parse(data.decode("utf-8")))
    r = edit_zone(memory, 7, "appunti — メモ, perché sì\n", base_hash=zone_base(data, index, index.zone_at_line(7)),
                  store=store)
    data = memory.read_bytes()
    index = ZoneIndex.build(parse(data.decode("utf-8")))
    assert r.changed and r.zone_hash == zone_base(data, index, index.zone_at_line(7))
