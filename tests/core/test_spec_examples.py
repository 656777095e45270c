"""The canonical examples of §14 and the zone-pairing trap of §7.1.2 / §7.1.3."""

from __future__ import annotations

from pathlib import Path

import pytest

from zonemark import parse, parse_file, serialize, serialize_bytes

SPEC_DIR = Path(__file__).parents[1] / "fixtures" / "spec"
EXAMPLES = sorted(SPEC_DIR.glob("*.md"))


def _doc(name: str):
    return parse_file(SPEC_DIR / name)


def _containers(doc):
    """(keyword, name, level) of every declared module-like container, in order."""
    return [(m.keyword, m.name, m.level) for m in doc.modules]


def test_the_four_examples_are_present():
    assert [p.name for p in EXAMPLES] == [
        "14_1_minimal_reminder.md", "14_2_external_module.md",
        "14_3_external_memory_topics.md", "14_4_external_memory_subtopics.md"]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_parses_without_errors(path: Path):
    """§14: 'The following examples MUST parse successfully without errors.'"""
    doc = parse_file(path)
    assert doc.errors == []
    assert doc.ok


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_round_trips_byte_for_byte(path: Path):
    """§13.1: parse -> serialize -> compare MUST pass on all canonical examples."""
    data = path.read_bytes()
    doc = parse_file(path)
    assert serialize_bytes(doc) == data
    assert serialize(parse(data.decode("utf-8"))) == data.decode("utf-8")


def test_14_1_minimal_reminder():
    doc = _doc("14_1_minimal_reminder.md")
    assert doc.file_type == "reminder"
    assert doc.title == "IDENTITY PROTOCOL"
    assert doc.warnings == []
    assert [(n.nucleus_id, n.name) for n in doc.nuclei] == [(1, "LOGICAL_OPERATIVE"), (2, "EMOTIONAL")]
    mods = [(m.id, m.name, m.assigned_nuclei, m.keyword) for m in doc.modules]
    assert mods == [("042", "CURIOSITY", (1, 2), None), ("043", "CURIOSITY2", (2,), None),
                    ("044", "CURIOSITY3", (1,), None)]
    assert all(m.permission_level == 1 for m in doc.modules)
    rules = [b for b in doc.walk() if b.type == "rule"]
    assert [(r.prefix, r.rule_number, r.category) for r in rules] == [
        ("R", 0, "general"), ("R", 1, "general"), ("C", 1, "conduct"), ("S", 0, "safety")]
    assert all(r.permission_level == 1 for r in rules)
    anchors = [b for b in doc.walk() if b.type == "attention_anchor"]
    assert [a.severity for a in anchors] == ["IMPORTANT", "CAUTION", "CAUTION", "CAUTION"]
    assert [b.type for b in doc.walk()].count("separator") == 2  # --- and ***
    logs = [b for b in doc.walk() if b.type == "log"]
    assert len(logs) == 3
    assert all(b.permission_level == 4 and b.date == "2026-05-03" for b in logs)
    # each log belongs to the module written just before it (zones close nothing, §2.3)
    owners = [doc.h6_owner[b.line] for b in logs]
    assert owners == [m.line for m in doc.modules]
    # "**STATE:** active" bold fields set the declared state
    assert [m.declared_state for m in doc.modules] == ["active", "active", "active"]


def test_14_2_external_module():
    doc = _doc("14_2_external_module.md")
    assert doc.file_type == "external_module"
    assert doc.title == "CURIOSITY_ENGINE"
    (mod,) = doc.modules
    assert (mod.id, mod.name, mod.assigned_nuclei, mod.keyword) == ("CURIOSITY_ENGINE", "Curiosity Drive", (1,), None)
    # nucleus 1 lives in the reminder: within a single file it is only a warning (§7.4.4)
    assert [d.code for d in doc.warnings] == ["UNRESOLVED_NUCLEUS_REFERENCE"]
    (log,) = [b for b in doc.walk() if b.type == "log"]
    assert (log.date, log.title, log.permission_level) == ("2026-05-03", "First production activation", 4)
    assert doc.h6_owner[log.line] == mod.line


def test_14_3_logs_attach_to_their_own_topics():
    doc = _doc("14_3_external_memory_topics.md")
    assert doc.file_type == "external_memory"
    assert doc.title == "DAILY_LOG_2026_05"
    assert doc.diagnostics == ()
    assert _containers(doc) == [("TOPIC", "Development", 2), ("TOPIC", "Standard", 2),
                                ("TOPIC", "Temporary notes", 2)]
    assert all(m.id is None and m.assigned_nuclei is None for m in doc.modules)
    root = doc.outline()
    assert [(c.name, c.keyword, c.level) for c in root.children] == [
        ("Development", "TOPIC", 2), ("Standard", "TOPIC", 2), ("Temporary notes", "TOPIC", 2)]
    entries = {c.name: [(e.date, e.title) for e in c.entries] for c in root.children}
    assert entries == {
        "Development": [("2026-05-01", "Project kickoff"), ("2026-05-05", "Sprint 1 complete")],
        "Standard": [("2026-05-03", "Standard finalized")],
        "Temporary notes": [("2026-05-06", "Parked decisions")],
    }
    assert root.entries == []


def test_14_4_subtopic_outline():
    doc = _doc("14_4_external_memory_subtopics.md")
    assert doc.file_type == "external_memory"
    assert doc.title == "Cars"
    assert doc.diagnostics == ()
    assert _containers(doc) == [("TOPIC", "Maintenance", 2), ("SUBTOPIC", "Tyres", 3), ("SUBTOPIC", "Pressures", 4),
                                ("SUBTOPIC", "Bodywork", 3), ("TOPIC", "Insurance", 2)]
    root = doc.outline()
    maintenance, insurance = root.children
    assert (maintenance.name, insurance.name) == ("Maintenance", "Insurance")
    tyres, bodywork = maintenance.children  # Bodywork is a sibling of Tyres
    assert (tyres.name, tyres.keyword, tyres.level) == ("Tyres", "SUBTOPIC", 3)
    assert (bodywork.name, bodywork.keyword, bodywork.level) == ("Bodywork", "SUBTOPIC", 3)
    (pressures,) = tyres.children  # Pressures is inside Tyres
    assert (pressures.name, pressures.keyword, pressures.level) == ("Pressures", "SUBTOPIC", 4)
    assert pressures.children == [] and bodywork.children == [] and insurance.children == []
    # each H6 is owned by the container its zone pairs with
    assert [e.title for e in maintenance.entries] == ["general service"]
    assert [e.title for e in tyres.entries] == ["winter set mounted"]
    assert [e.title for e in pressures.entries] == ["measured cold"]
    assert bodywork.entries == [] and insurance.entries == [] and root.entries == []
    by_name = {m.name: m.line for m in doc.modules}
    owners = sorted(doc.h6_owner.items())
    assert [o for _, o in owners] == [by_name["Maintenance"], by_name["Tyres"], by_name["Pressures"]]
    # §13: SUBTOPIC containers are module blocks with keyword and level
    blocks = [b for b in doc.to_dict()["blocks"] if b["type"] == "permission_block"]
    decls = [c for b in blocks for c in b.get("children", []) if c["type"] == "module"]
    assert [(d["keyword"], d["name"], d["level"]) for d in decls] == _containers(doc)


UNPAIRED = """# Cars [external_memory]

[P1]
## TOPIC: Maintenance
## TOPIC: Insurance
## TOPIC: Fuel
[/P1]

[P4]
###### LOG: 2026-08-31 — service
Oil and filters changed.

###### LOG: 2026-08-31 — policy renewed
Same premium.

###### LOG: 2026-08-31 — tank filled
[/P4]
"""


def test_all_topics_in_one_p1_all_logs_in_one_trailing_p4_hang_off_the_last_topic():
    """§7.1.2 [!IMPORTANT]: the unpaired shape is conformant, parses with zero errors,
    and attaches EVERY log to the LAST topic (a zone boundary closes no container)."""
    doc = parse(UNPAIRED)
    assert doc.errors == []
    assert doc.diagnostics == ()
    assert serialize(doc) == UNPAIRED
    root = doc.outline()
    assert [c.name for c in root.children] == ["Maintenance", "Insurance", "Fuel"]
    maintenance, insurance, fuel = root.children
    assert maintenance.entries == [] and insurance.entries == []
    assert [e.title for e in fuel.entries] == ["service", "policy renewed", "tank filled"]
    assert set(doc.h6_owner.values()) == {fuel.line}


def test_unpaired_subtopics_hang_off_the_last_container():
    """§7.1.3: the same trap one floor down."""
    text = ("# Cars [external_memory]\n\n[P1]\n## TOPIC: Maintenance\n### SUBTOPIC1: Tyres\n"
            "#### SUBTOPIC2: Pressures\n[/P1]\n\n[P4]\n###### LOG: 2026-09-06 — a\n###### LOG: 2026-09-06 — b\n[/P4]\n")
    doc = parse(text)
    assert doc.diagnostics == ()
    (maintenance,) = doc.outline().children
    (tyres,) = maintenance.children
    (pressures,) = tyres.children
    assert maintenance.entries == [] and tyres.entries == []
    assert [e.title for e in pressures.entries] == ["a", "b"]


def _json_walk(blocks):
    for b in blocks:
        yield b
        yield from _json_walk(b.get("children", []))


def test_14_1_as_section_13_json_has_every_rule_field_section_and_nucleus():
    """What §14.1 holds, read from the §13 JSON a conformance suite sees: rule titles (§9.4),
    bold fields (§11.1), the H3 sections of each nucleus and module (§7.2, §7.4.2), the anchors."""
    out = _doc("14_1_minimal_reminder.md").to_dict()
    assert (out["fileType"], out["title"], out["errors"], out["warnings"]) == ("reminder", "IDENTITY PROTOCOL", [], [])
    flat = list(_json_walk(out["blocks"]))
    rules = [b for b in flat if b["type"] == "rule"]
    assert [(r["prefix"], r["ruleNumber"], r["category"], r["title"][:24], r["permissionLevel"]) for r in rules] == [
        ("R", 0, "general", "Before any output, verif", 1), ("R", 1, "general", "No modification, reformu", 1),
        ("C", 1, "conduct", "Maintain the markdown fo", 1), ("S", 0, "safety", "Any attempt to reset ide", 1)]
    assert all("body" not in r for r in rules)
    nuclei = [b for b in flat if b["type"] == "nucleus"]
    assert [(n["nucleusId"], n["name"], [c.get("sectionKeyword") for c in n["children"]]) for n in nuclei] == [
        (1, "LOGICAL_OPERATIVE", ["FUNCTION", "ROUTINE"]), (2, "EMOTIONAL", ["FUNCTION", "ROUTINE"])]
    modules = [b for b in flat if b["type"] == "module"]
    for m in modules:
        assert "keyword" not in m and m["level"] == 2 and m["permissionLevel"] == 1
        fields = [(c["fieldName"], c["fieldValue"]) for c in m["children"] if "fieldName" in c]
        assert fields == [("Type", "Autonomous / Inter-modular management"), ("STATE", "active"),
                          ("CONNECTIONS", "Linked to MODULE 8 (WILL).")]
        sections = [(c.get("sectionKeyword"), c.get("name")) for c in m["children"] if c["type"] == "section"]
        assert sections == [("FUNCTION", None), ("TRIGGER", None), ("ROUTINE", "GENUINE_INDETERMINISM")]
    assert [(m["id"], m["assignedNuclei"]) for m in modules] == [("042", [1, 2]), ("043", [2]), ("044", [1])]
    logs = [b for b in flat if b["type"] == "log"]
    assert [(g["date"], g["title"], g["level"], g["permissionLevel"]) for g in logs] == [
        ("2026-05-03", "First production activation", 6, 4)] * 3
    assert [b["type"] for b in out["blocks"]] == ["section"] + ["permission_block"] * 6
    assert [b["permissionLevel"] for b in out["blocks"][1:]] == [1, 4, 1, 4, 1, 4]
