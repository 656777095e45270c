"""One test per ruling of docs/conformance.md: where the spec is ambiguous or contradicts
itself, these pin down what zonemark does (and the doc says why)."""

from __future__ import annotations

import pytest

import zonemark
from zonemark.core.outline import build_outline


def codes(text: str) -> list[str]:
    return [d.code for d in zonemark.parse(text).diagnostics]


def at(text: str, code: str) -> list[int]:
    return [d.line for d in zonemark.parse(text).diagnostics if d.code == code]


REMINDER = "# R [reminder]\n\n"
MEMORY = "# M [external_memory]\n\n"


def test_r1_section_2_3_example_h3_in_p4_is_refused():
    """§2.3's overlap example puts `### ASSOCIATED MEMORY` in [P4]; §5.5 Invariant 1 wins."""
    text = REMINDER + ("[P1]\n## MODULE 1: LOGICAL_OPERATIVE [NUCLEI: ]\n### FUNCTION\n* Synthesize complexity.\n[/P1]\n\n"
                       "[P4]\n### ASSOCIATED MEMORY\n* Log entry: user prefers concise answers.\n[/P4]\n")
    doc = zonemark.parse(text)
    assert [(d.code, d.line) for d in doc.errors] == [("INVALID_HEADER_IN_WRITABLE_ZONE", 10)]
    # The refused header declares nothing: it is not in the logical tree.
    names = [n.name for n in build_outline(doc).walk()]
    assert "ASSOCIATED MEMORY" not in names


def test_r2_duplicate_conflict_warning_across_levels_error_within_a_level():
    base = REMINDER + "[P1]\n## MODULE 7: A [NUCLEI: ]\n[/P1]\n\n"
    across = base + "[P3]\n## MODULE 7: B [NUCLEI: ]\n[/P3]\n"
    same = base + "[P1]\n## MODULE 7: C [NUCLEI: ]\n[/P1]\n"
    assert codes(across) == ["DUPLICATE_BLOCK_CONFLICT_WARNING"]
    assert codes(same) == ["DUPLICATE_BLOCK_CONFLICT"]
    # lower n wins even when the stricter copy comes second
    first_p3 = REMINDER + "[P3]\n## MODULE 7: B [NUCLEI: ]\n[/P3]\n\n[P1]\n## MODULE 7: A [NUCLEI: ]\n[/P1]\n"
    doc = zonemark.parse(first_p3)
    assert [(d.code, d.line) for d in doc.diagnostics] == [("DUPLICATE_BLOCK_CONFLICT_WARNING", 4)]
    assert [m.name for m in doc.modules if not m.ignored] == ["A"]


@pytest.mark.parametrize("level,code", [(2, "RULE_OUTSIDE_P1"), (3, "RULE_OUTSIDE_P1"),
                                        (4, "INVALID_HEADER_IN_WRITABLE_ZONE"),
                                        (5, "INVALID_HEADER_IN_WRITABLE_ZONE")])
def test_r3_rule_bullet_code_per_zone(level, code):
    text = REMINDER + f"[P1]\n## RULES:\n[/P1]\n\n[P{level}]\n* R1: obey\n[/P{level}]\n"
    assert codes(text) == [code]


def test_r3_rule_bullet_outside_every_zone():
    assert codes(REMINDER + "* R1: obey\n") == ["UNPROTECTED_LOGICAL_CONTENT"]


def test_r4_nested_tag_and_its_own_closing_are_text():
    text = REMINDER + "[P4]\nfree text\n[P1]\n## MODULE 9: EVIL\n[/P1]\nmore\n[/P4]\n"
    doc = zonemark.parse(text)
    assert [(d.code, d.line) for d in doc.errors] == [("NESTED_PERMISSION_BLOCK", 5),
                                                       ("INVALID_HEADER_IN_WRITABLE_ZONE", 6)]
    zones = [b for b in doc.blocks if b.type == "permission_block"]
    assert len(zones) == 1 and zones[0].permission_level == 4 and zones[0].end_line == 9


def test_r4_mismatched_closing_closes_in_read_controlled_zone_but_is_text_in_writable_zone():
    typo = REMINDER + "[P1]\n## RULES:\n[/P3]\n\n[P4]\nnote\n[/P4]\n"
    assert codes(typo) == ["MISMATCHED_PERMISSION_BLOCK"]
    hostile = REMINDER + "[P4]\nnote\n[/P1]\n## MODULE 9: X\n[/P4]\n"
    assert codes(hostile) == ["MISMATCHED_PERMISSION_BLOCK", "INVALID_HEADER_IN_WRITABLE_ZONE"]


def test_r5_h6_log_after_h2_or_h3_is_not_a_hierarchy_jump():
    text = REMINDER + ("[P1]\n## MODULE 1: A [NUCLEI: ]\n### FUNCTION\nx\n[/P1]\n[P4]\n"
                       "###### LOG: 2026-05-03 — first\nbody\n[/P4]\n")
    assert codes(text) == []
    jump = REMINDER + "[P1]\n## MODULE 1: A [NUCLEI: ]\n#### SUBROUTINE\nx\n[/P1]\n"
    assert codes(jump) == ["HIERARCHY_VIOLATION"]


def test_r6_external_files_unresolved_nucleus_is_a_file_level_warning():
    text = "# E [external_module]\n\n[P1]\n## MODULE X: Y [NUCLEI: 1]\n[/P1]\n"
    assert codes(text) == ["UNRESOLVED_NUCLEUS_REFERENCE"]


def test_r7_spaceless_h6_is_a_tolerated_log_form_but_not_h2():
    text = MEMORY + "[P1]\n## TOPIC: T\n[/P1]\n\n[P4]\n######[LOG IA – ILLAIRA]\nbody\n[/P4]\n"
    doc = zonemark.parse(text)
    assert doc.diagnostics == ()
    assert [e.title for e in doc.outline().children[0].entries] == ["IA – ILLAIRA"]
    assert codes(REMINDER + "[P1]\n##MODULE 1: A [NUCLEI: ]\n[/P1]\n") == ["HEADER_MISSING_SPACE"]


def test_r8_separator_inside_a_zone_is_not_reported():
    text = REMINDER + "[P1]\n## A\nx\n\n---\n\n## B\ny\n\n***\n[/P1]\n"
    assert codes(text) == []
    doc = zonemark.parse(text)
    assert [b.type for b in doc.blocks[1].walk()].count("separator") == 2


def test_r9_dashes_under_text_are_a_separator_not_a_setext_heading():
    doc = zonemark.parse(REMINDER + "[P4]\nsome text\n---\n[/P4]\n")
    assert doc.diagnostics == ()
    assert [b.type for b in doc.blocks[1].children] == ["paragraph", "separator"]


@pytest.mark.parametrize("h1,expected", [
    ("# Title [reminder]", []), ("# [reminder] Title", []), ("# [reminder]", []),
    ("# Title [reminder] more", ["MISSING_FILE_TYPE"]),
    ("# Title [ext_module]", ["MISSING_FILE_TYPE"]),
    ("# Title [Reminder]", ["MISSING_FILE_TYPE"]),
    ("# Title [reminder] [external_module]", ["MULTIPLE_FILE_TYPES"]),
    ("## [reminder] Wrong level", ["MISSING_FILE_TYPE", "UNPROTECTED_LOGICAL_CONTENT"]),
])
def test_r10_h1_tag_position(h1, expected):
    assert codes(h1 + "\n") == expected


def test_r10_misplaced_tag_still_gives_the_file_its_type():
    doc = zonemark.parse("# Title [external_memory] notes\n\n[P1]\n### SUBTOPIC1: x\n[/P1]\n")
    assert doc.file_type == "external_memory"
    assert "SUBTOPIC_OUTSIDE_EXTERNAL_MEMORY" not in codes("# Title [external_memory] notes\n\n[P1]\n### SUBTOPIC1: x\n[/P1]\n")


def test_r10_the_recovered_type_comes_with_its_title():
    """Where a tagged H1 gives the file its type for recovery, it gives the §13 `title` too, the
    tag taken out as in a well-placed H1."""
    doc = zonemark.parse("# Diario [external_memory] di bordo\n")
    assert (doc.file_type, doc.to_dict()["title"]) == ("external_memory", "Diario di bordo")
    late = zonemark.parse("[P1]\n# Identità — io [reminder]\n## RULES:\n[/P1]\n")
    assert [d.code for d in late.diagnostics] == ["MISSING_FILE_TYPE"]
    assert (late.file_type, late.title, late.to_dict()["title"]) == ("reminder", "Identità — io", "Identità — io")


def test_r11_second_h1():
    assert codes(REMINDER + "[P1]\n# Another\n[/P1]\n") == ["DUPLICATE_TITLE"]
    # §5.4 "headers # through ######": outside every zone it is also unprotected, in [P4]/[P5] refused
    assert codes(REMINDER + "# Another [external_module]\n") == ["MULTIPLE_FILE_TYPES", "UNPROTECTED_LOGICAL_CONTENT"]
    text = REMINDER + "[P5]\n# Another\n[/P5]\n"
    assert codes(text) == ["DUPLICATE_TITLE", "INVALID_HEADER_IN_WRITABLE_ZONE"]
    assert 4 in zonemark.parse(text).ignored_lines


def test_r12_state_written_in_a_writable_zone_is_ignored():
    text = REMINDER + ("[P1]\n## MODULE 1: A [NUCLEI: ]\n**STATE:** inactive\n[/P1]\n\n"
                       "[P4]\n**STATE:** active - permanent\n[/P4]\n")
    doc = zonemark.parse(text)
    assert codes(text) == ["STATE_IN_WRITABLE_ZONE"]
    assert (doc.modules[0].declared_state, doc.modules[0].permanent) == ("inactive", False)


def test_r13_registry_placement():
    p4 = REMINDER + "[P1]\n## MODULE 1: A [NUCLEI: ]\n[/P1]\n\n[P4]\n## MODULE_STATE_REGISTRY:\n* ACTIVE: 1\n[/P4]\n"
    assert codes(p4) == []
    assert codes(p4.replace("[P4]", "[P5]").replace("[/P4]", "[/P5]")) == ["INVALID_HEADER_IN_WRITABLE_ZONE"]
    assert codes(p4.replace("[P4]", "[P2]").replace("[/P4]", "[/P2]")) == ["STATE_REGISTRY_NOT_IN_P4"]
    assert codes(p4 + "\n[P4]\n## MODULE_STATE_REGISTRY:\n* INACTIVE: 1\n[/P4]\n") == ["DUPLICATE_STATE_REGISTRY"]


def test_r14_each_bold_field_line_is_its_own_field():
    doc = zonemark.parse(REMINDER + "[P1]\n## MODULE 1: A [NUCLEI: ]\n**Type:** x\n**STATE:** active\n[/P1]\n")
    fields = [(b.field_name, b.field_value) for b in doc.walk() if getattr(b, "field_name", None)]
    assert fields == [("Type", "x"), ("STATE", "active")]


def test_r15_h6_owned_by_nearest_open_container_and_plain_h2_sections_own_entries():
    text = REMINDER + ("[P1]\n## MODULE 1: A [NUCLEI: ]\n### ROUTINE\nx\n[/P1]\n[P4]\n###### LOG: 2026-01-01 — a\n[/P4]\n"
                       "[P1]\n## Notes\n[/P1]\n[P4]\n###### LOG: 2026-01-02 — b\n[/P4]\n")
    root = zonemark.parse(text).outline()
    module, notes = root.children
    assert [e.title for e in module.entries] == ["a"]
    assert [e.title for e in notes.entries] == ["b"]


def test_r16_rule_reports_its_real_zone_level():
    doc = zonemark.parse(REMINDER + "[P1]\n## RULES:\n[/P1]\n[P2]\n* R1: obey\n[/P2]\n")
    rule = next(b for b in doc.walk() if b.type == "rule")
    assert rule.permission_level == 2
    assert doc.to_dict()["blocks"][2]["children"][0]["permissionLevel"] == 2


def test_r17_inline_opening_tag_starts_a_paragraph():
    doc = zonemark.parse(REMINDER + "[P4] Remember the user's birthday.\n[/P4]\n")
    assert doc.diagnostics == ()
    zone = doc.blocks[1]
    assert zone.permission_level == 4 and zone.children[0].content == "Remember the user's birthday."


def test_r17_the_inline_tag_needs_a_space_and_the_rest_of_the_line_is_text():
    """`[P4]testo` (no space) is text, like the CommonMark link forms `[P4]: url` and `[P4](url)`;
    after `[P4] ` a header or bullet is paragraph text, not structure."""
    glued = zonemark.parse(REMINDER + "[P4]testo\n[/P4]\n")
    assert [b.type for b in glued.blocks] == ["section", "paragraph"]
    assert [d.code for d in glued.diagnostics] == ["MISMATCHED_PERMISSION_BLOCK"]
    doc = zonemark.parse(REMINDER + "[P4] ###### LOG: 2026-01-01 — voce\n[/P4]\n[P4] * elenco\n[/P4]\n")
    assert doc.diagnostics == ()
    assert [(b.type, b.content) for z in doc.blocks[1:] for b in z.children] == [
        ("paragraph", "###### LOG: 2026-01-01 — voce"), ("paragraph", "* elenco")]


def test_r18_crlf_is_reported_once_and_parsing_goes_on():
    doc = zonemark.parse("# R [reminder]\r\n\r\n[P1]\r\n## RULES:\r\n* R1: x\r\n[/P1]\r\n")
    assert [(d.code, d.line) for d in doc.diagnostics] == [("CRLF_LINE_ENDING", 1)]
    assert doc.file_type == "reminder"
    assert [b.type for b in doc.walk()].count("rule") == 1


def test_r19_log_marker_inside_a_file_is_text():
    text = MEMORY + "[P1]\n## TOPIC: T\n[/P1]\n\n[P4]\n###### LOG: 2026-09-03 — booked\nCalled.\n[/LOG]\n[/LOG]\n[/P4]\n"
    doc = zonemark.parse(text)
    assert doc.diagnostics == ()
    assert "[/LOG]" in doc.heading_at(doc.outline().children[0].entries[0].line).raw_markdown


def test_r20_topic_and_subtopic_skipped_levels_are_tolerated():
    text = MEMORY + "[P1]\n## TOPIC: T\n[/P1]\n[P4]\n[/P4]\n[P1]\n#### SUBTOPIC2: deep\n[/P1]\n[P4]\n[/P4]\n"
    assert codes(text) == []


def test_r21_unclosed_frontmatter_recovers_at_the_h1():
    doc = zonemark.parse("---\ntitle: x\n# R [reminder]\n\n[P1]\n## RULES:\n[/P1]\n")
    assert [d.code for d in doc.diagnostics] == ["UNCLOSED_FRONTMATTER"]
    assert doc.file_type == "reminder"


def test_r22_bullets_in_journal_entries_or_writable_zones_draw_no_connections():
    text = REMINDER + ("[P1]\n## MODULE 1: A [NUCLEI: ]\n### CONNECTIONS\n* MODULE 2\n[/P1]\n\n"
                       "[P4]\n###### LOG: 2026-01-01 — x\n* MODULE 3\n[/P4]\n[P4]\n* MODULE 4\n[/P4]\n")
    doc = zonemark.parse(text)
    assert [c.target for c in doc.modules[0].connections] == ["2"]


def test_r23_registry_entries_live_in_the_registry_zone_before_any_entry():
    text = REMINDER + ("[P1]\n## MODULE 2: A [NUCLEI: ]\n[/P1]\n[P4]\n## MODULE_STATE_REGISTRY:\n* ACTIVE: 2\n"
                       "###### LOG: 2026-01-01 — x\n* INACTIVE: 2\n[/P4]\n[P4]\n* INACTIVE: 2\n[/P4]\n")
    doc = zonemark.parse(text)
    assert (doc.registry.active, doc.registry.inactive) == (("2",), ())
    assert doc.diagnostics == ()


def test_r24_deep_nesting_is_reported_once_and_kept_shallow():
    """No input may make the tree deep enough to break its consumers (walk, to_dict, outline)."""
    text = REMINDER + "[P1]\n## A\n" + "".join(" " * i + "* x\n" for i in range(3000)) + "[/P1]\n"
    doc = zonemark.parse(text)
    assert codes(text) == ["UNIFORM_LIST_MARKER_WARNING", "LIST_TOO_DEEP"]
    assert zonemark.serialize(doc) == text
    depth = lambda b: 1 + max((depth(c) for c in b.children), default=0)  # noqa: E731
    assert max(depth(b) for b in doc.blocks) <= 20
    assert doc.to_dict()["blocks"] and list(doc.walk())


def test_r22_an_entry_ends_at_its_zone_so_later_user_bullets_still_count():
    text = REMINDER + ("[P1]\n## MODULE 1: A [NUCLEI: ]\n### CONNECTIONS\n[/P1]\n\n"
                       "[P4]\n###### LOG: 2026-01-01 — x\n[/P4]\n\n[P3]\n* MODULE 7\n[/P3]\n")
    assert [c.target for c in zonemark.parse(text).modules[0].connections] == ["7"]


def test_r25_a_connection_to_an_undeclared_target_warns_in_the_file_and_once_in_the_layer(tmp_path):
    """§7.6: non-existent target => a warning (never an error) and no edge; the layer looks it up everywhere."""
    text = REMINDER + ("[P1]\n## NUCLEUS 1: N\n## MODULE 1: A [NUCLEI: 1]\n### CONNECTIONS\n"
                       "* MODULE 1\n* NUCLEUS 01\n* MODULE ENGINE\n* NUCLEUS 9\n[/P1]\n")
    doc = zonemark.parse(text)
    assert [(d.code, d.line, d.severity.value) for d in doc.diagnostics] == [
        ("UNRESOLVED_CONNECTION", 9, "warning"), ("UNRESOLVED_CONNECTION", 10, "warning")]
    (tmp_path / "main[reminder].md").write_text(text, encoding="utf-8")
    (tmp_path / "engine[ext_module].md").write_text(
        "# Engine [external_module]\n\n[P1]\n## MODULE ENGINE: Engine [NUCLEI: 1]\n### STATE\nactive\n[/P1]\n",
        encoding="utf-8")
    (tmp_path / "main[reminder].md").write_text(text.replace("### CONNECTIONS", "### STATE\nactive\n### CONNECTIONS"),
                                               encoding="utf-8")
    layer = zonemark.Layer.load(tmp_path)
    assert [(d.path, d.code, d.line) for d in layer.all_diagnostics()] == [
        ("main[reminder].md", "LAYER_UNRESOLVED_CONNECTION", 12)]


def test_r26_lines_and_columns_count_from_one():
    """§13 line/column: the first character of the file is line 1, column 1; a tab counts one column."""
    assert [(d.code, d.line, d.column) for d in zonemark.parse("").diagnostics] == [("MISSING_FILE_TYPE", 1, 1)]
    doc = zonemark.parse(REMINDER + "[P1]\n\t\t## MODULE 1: A [NUCLEI: 9]\n[/P1]\n## B\n")
    assert [(d.code, d.line, d.column) for d in doc.diagnostics] == [("UNPROTECTED_LOGICAL_CONTENT", 6, 1)]
    doc = zonemark.parse(REMINDER + "[P1]\n## MODULE 1: A\t[NUCLEI: 9]\n[/P1]\n")
    assert [(d.code, d.line, d.column) for d in doc.diagnostics] == [("UNRESOLVED_NUCLEUS_REFERENCE", 4, 16)]


def test_r27_a_module_id_without_a_name_is_a_module():
    """§4.2 calls `## MODULE 042` valid: a module with that id and no name; `## MODULE 042 X` stays malformed."""
    doc = zonemark.parse(REMINDER + "[P1]\n## NUCLEUS 1: N\n## MODULE 042 [NUCLEI: 1]\n### FUNCTION\n"
                                    "## MODULE 043\n## MODULE 044 CURIOSITY\n[/P1]\n")
    assert [(m.id, m.name, m.assigned_nuclei) for m in doc.modules] == [("042", "", (1,)), ("043", "", None)]
    assert [(d.code, d.line) for d in doc.diagnostics] == [("UNGOVERNED_MODULE", 7), ("MALFORMED_DECLARATION", 8)]


def test_r28_one_file_parsed_alone_carries_no_temporary_ids(tmp_path):
    """§7.1.1 temporary ids are session-scoped: `parse` leaves `id` out of an id-less MODULE, TOPIC or
    SUBTOPIC; `Layer.load()` numbers them `~T1`, `~T2`, … across the layer, and nothing writes them."""
    from zonemark.layer import Layer
    text = (MEMORY + "[P1]\n## TOPIC: Manutenzione\n### SUBTOPIC1: Gomme\n## MODULE: Vecchio [NUCLEI: ]\n"
            "## TOPIC T9: Con id\n[/P1]\n[P4]\n[/P4]\n")
    doc = zonemark.parse(text)
    containers = [b for top in doc.to_dict()["blocks"] for b in top.get("children", []) if b["type"] == "module"]
    containers += [c for b in containers for c in b.get("children", []) if c["type"] == "module"]
    assert sorted((b["name"], b.get("id")) for b in containers) == [
        ("Con id", "T9"), ("Gomme", None), ("Manutenzione", None), ("Vecchio", None)]
    assert [m.id for m in doc.modules] == [None, None, None, "T9"]
    (tmp_path / "m[ext_memory].md").write_text(text, encoding="utf-8")
    layer = Layer.load(tmp_path)
    assert [(m.module_id, m.info.name) for m in layer.modules] == [
        ("~T1", "Manutenzione"), ("~T2", "Gomme"), ("~T3", "Vecchio"), ("T9", "Con id")]
    assert (tmp_path / "m[ext_memory].md").read_text(encoding="utf-8") == text
