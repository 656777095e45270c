"""Focused unit tests of the §13 block output and of ``validate()``'s typed exceptions."""

from __future__ import annotations

import pytest

import zonemark
from zonemark import (DuplicateBlockConflictError, InvalidHeaderInWritableZoneError, MismatchedPermissionBlockError,
                      MissingFileTypeError, MultipleFileTypeError, NestedPermissionBlockError,
                      UnclosedPermissionBlockError, UnprotectedLogicalContentError, ZonemarkError, parse, parse_bytes,
                      serialize, serialize_bytes, validate)

REM = "# Identity [reminder]\n\n"
MEM = "# Cars [external_memory]\n\n"
MOD = "# Engine [external_module]\n\n"


def blocks(doc, type_):
    return [b for b in doc.walk() if b.type == type_]


def one(doc, type_):
    (b,) = blocks(doc, type_)
    return b


def codes(doc):
    return [d.code for d in doc.diagnostics]


# -- §9 rules ---------------------------------------------------------------------------------

RULES = REM + """[P1]
## RULES:

* R0: Before any output, verify modules. If coherence is missing, suspend generation.
* C1: Maintain the markdown formatting style defined by the user at all times.
* S12: Flag impersonation.
* Q7: A custom prefix.
* R1: No modification of relevant content without user authorization
  + This includes reformulation, compression, or paraphrasing of stored content
  + The AI may propose changes but MUST NOT apply them autonomously
[/P1]
"""


def test_rule_fields():
    doc = parse(RULES)
    rules = blocks(doc, "rule")
    assert [(r.prefix, r.rule_number, r.category) for r in rules] == [
        ("R", 0, "general"), ("C", 1, "conduct"), ("S", 12, "safety"), ("Q", 7, "general"), ("R", 1, "general")]
    assert rules[0].title == "Before any output, verify modules. If coherence is missing, suspend generation."
    assert rules[0].body is None
    assert rules[4].title == "No modification of relevant content without user authorization"
    assert rules[4].body.splitlines() == [
        "This includes reformulation, compression, or paraphrasing of stored content",
        "The AI may propose changes but MUST NOT apply them autonomously"]
    assert all(r.permission_level == 1 for r in rules)
    assert codes(doc) == ["UNKNOWN_RULE_PREFIX"]
    d = [b for b in doc.to_dict()["blocks"][1]["children"][0]["children"] if b["type"] == "rule"][4]
    assert (d["prefix"], d["ruleNumber"], d["category"], d["permissionLevel"]) == ("R", 1, "general", 1)
    assert d["body"].startswith("This includes")


def test_rule_title_is_the_first_line_only():
    """§9.4: ``title`` is the full text after the colon on the FIRST line."""
    doc = parse(REM + "[P1]\n## RULES:\n* S0: Protect.\ncontinued line\n[/P1]\n")
    assert one(doc, "rule").title == "Protect."


@pytest.mark.parametrize("line", ["*  R0: two spaces", "* R0:no space", "* r0: lowercase", "* R: no number",
                                  "  * R0: indented", "+ R0: plus marker", "* R0: "],
                         ids=["two-spaces", "no-space-after-colon", "lowercase", "no-number", "indented", "plus-marker",
                              "empty-definition"])
def test_not_a_rule(line):
    """§9.4: the pattern is ``^\\* [A-Z]+\\d+:\\s+.+`` on a root-level bullet."""
    doc = parse(REM + "[P1]\n## RULES:\n* R9: anchor rule\n" + line + "\n[/P1]\n")
    assert [r.rule_number for r in blocks(doc, "rule")] == [9]


def test_rule_permission_level_comes_from_its_zone():
    """§5.5 Invariant 3: the zone decides the permission level, not the block's type."""
    doc = parse(REM + "[P2]\n## RULES:\n* R0: Verify.\n[/P2]\n")
    rule = one(doc, "rule")
    assert rule.permission_level == 2
    assert codes(doc) == ["RULE_OUTSIDE_P1"]


# -- §6 anchors and quotes ------------------------------------------------------------------------

def test_anchor_and_quote():
    doc = parse(REM + "[P1]\n> [!IMPORTANT]\n> Before any output, verify.\n> Second line.\n\n"
                "> \"The map is not the territory.\" — Alfred Korzybski\n\n> [!CAUTION] Inline content\n[/P1]\n")
    anchors = blocks(doc, "attention_anchor")
    assert [a.severity for a in anchors] == ["IMPORTANT", "CAUTION"]
    assert anchors[0].content == "Before any output, verify.\nSecond line."
    assert anchors[1].content == "Inline content"
    quote = one(doc, "quote")
    assert quote.severity is None
    assert quote.content == "\"The map is not the territory.\" — Alfred Korzybski"
    assert all(b.permission_level == 1 for b in anchors + [quote])
    out = [b for b in doc.to_dict()["blocks"][1]["children"] if b["type"] in ("quote", "attention_anchor")]
    assert [(b["type"], b.get("severity")) for b in out] == [
        ("attention_anchor", "IMPORTANT"), ("quote", None), ("attention_anchor", "CAUTION")]


def test_unknown_anchor_keyword_is_a_quote():
    doc = parse(REM + "[P1]\n> [!DANGER]\n> text\n[/P1]\n")
    assert blocks(doc, "attention_anchor") == []
    assert one(doc, "quote").severity is None
    assert codes(doc) == ["UNKNOWN_ANCHOR_KEYWORD"]


# -- §7 modules, nuclei, topics ---------------------------------------------------------------------

def test_nucleus_and_module_assignment():
    doc = parse(REM + "[P1]\n## NUCLEUS 1: LOGICAL_OPERATIVE\n## NUCLEUS 3: CRITICAL_OBSERVER\n\n"
                "## MODULE 042: CURIOSITY_ENGINE [NUCLEI: 1, 3]\n\n## MODULE CORE_001: IDENTITY_ANCHOR\n[NUCLEI: 3]\n[/P1]\n")
    nuclei = blocks(doc, "nucleus")
    assert [(n.nucleus_id, n.name) for n in nuclei] == [(1, "LOGICAL_OPERATIVE"), (3, "CRITICAL_OBSERVER")]
    mods = blocks(doc, "module")
    assert [(m.id, m.name, m.assigned_nuclei, m.keyword, m.level) for m in mods] == [
        ("042", "CURIOSITY_ENGINE", (1, 3), None, 2), ("CORE_001", "IDENTITY_ANCHOR", (3,), None, 2)]
    assert [(m.id, m.assigned_nuclei) for m in doc.modules] == [("042", (1, 3)), ("CORE_001", (3,))]
    assert doc.diagnostics == ()
    dicts = [b for b in doc.to_dict()["blocks"][1]["children"] if b["type"] in ("module", "nucleus")]
    assert [b.get("nucleusId") for b in dicts] == [1, 3, None, None]
    assert [b.get("assignedNuclei") for b in dicts] == [None, None, [1, 3], [3]]
    assert "keyword" not in dicts[2]  # absent keyword means MODULE (§13)


def test_topic_and_subtopic_blocks_carry_keyword_and_level():
    doc = parse(MEM + "[P1]\n## TOPIC: Maintenance\n#### SUBTOPIC2: Pressures\n### SUBTOPIC1: Tyres\n"
                "##### SUBTOPIC3: Winter\n[/P1]\n")
    mods = blocks(doc, "module")
    assert [(m.keyword, m.name, m.level, m.id) for m in mods] == [
        ("TOPIC", "Maintenance", 2, None), ("SUBTOPIC", "Pressures", 4, None), ("SUBTOPIC", "Tyres", 3, None),
        ("SUBTOPIC", "Winter", 5, None)]
    assert doc.diagnostics == ()  # skipped level TOPIC -> SUBTOPIC2 is tolerated, no warning (§7.1.3)
    (topic,) = doc.outline().children
    assert [c.name for c in topic.children] == ["Pressures", "Tyres"]  # the skipped level nests under the topic
    assert [c.name for c in topic.children[1].children] == ["Winter"]


def test_subtopic_digit_mismatch_depth_wins():
    doc = parse(MEM + "[P1]\n## TOPIC: Maintenance\n#### SUBTOPIC1: Tyres\n[/P1]\n")
    sub = blocks(doc, "module")[1]
    assert (sub.keyword, sub.level) == ("SUBTOPIC", 4)
    assert codes(doc) == ["SUBTOPIC_LEVEL_MISMATCH"]


def test_subtopic4_at_h6_is_a_mnemonic_node():
    doc = parse(MEM + "[P1]\n## TOPIC: Maintenance\n[/P1]\n\n[P4]\n###### SUBTOPIC4: Winter tyres\nNotes.\n[/P4]\n")
    node = one(doc, "log")
    assert node.level == 6 and node.permission_level == 4
    assert [m.name for m in doc.modules] == ["Maintenance"]
    assert doc.h6_owner[node.line] == doc.modules[0].line
    assert codes(doc) == ["SUBTOPIC_TOO_DEEP"]


def test_subtopic_outside_memory_is_a_section():
    doc = parse(MOD + "[P1]\n## MODULE X: Y [NUCLEI: ]\n### SUBTOPIC1: Tyres\n[/P1]\n")
    assert [b.type for b in doc.walk() if getattr(b, "level", 0) == 3] == ["section"]
    assert [m.name for m in doc.modules] == ["Y"]


@pytest.mark.parametrize("text, header", [
    (MOD + "[P1]\n## MODULE X: Y [NUCLEI: ]\n### SUBTOPIC1: Gomme — inverno\n[/P1]\n", "SUBTOPIC1: Gomme — inverno"),
    (REM + "[P1]\n## TOPIC: Viaggi\n[/P1]\n", "TOPIC: Viaggi"),
    (MEM + "[P1]\n## TOPIC: T\n### TOPIC: Annidato\n[/P1]\n", "TOPIC: Annidato"),
    (REM + "[P1]\n## MODULE 044 CURIOSITÀ\n[/P1]\n", "MODULE 044 CURIOSITÀ"),
], ids=["subtopic-outside-memory", "topic-outside-memory", "topic-not-at-h2", "malformed-module"])
def test_a_keyword_header_read_as_an_ordinary_section_is_shaped_like_one(text, header):
    """§7.1.3 "parses it as an ordinary section": the same §13 block as `## Notes` — a `section`
    whose `name` is its text — not a nameless one."""
    def flat(doc):
        out, todo = [], list(doc.to_dict()["blocks"])
        while todo:
            b = todo.pop(0)
            out.append(b)
            todo[:0] = b.get("children", [])
        return out
    (block,) = [b for b in flat(parse(text)) if b["content"] == header]
    assert (block["type"], block.get("name"), "keyword" not in block) == ("section", header, True)
    (plain,) = [b for b in flat(parse(text.replace(header, "Notes"))) if b["content"] == "Notes"]
    assert (plain["type"], plain.get("name")) == ("section", "Notes")


def test_nuclei_tag_on_topic_is_inert_text():
    doc = parse(MEM + "[P1]\n## TOPIC: Cars [NUCLEI: 1]\n[/P1]\n")
    (topic,) = doc.modules
    assert topic.assigned_nuclei is None
    assert "[NUCLEI: 1]" in topic.name
    assert "assignedNuclei" not in doc.to_dict()["blocks"][1]["children"][0]


def test_connections_bullets():
    doc = parse(MOD + "[P1]\n## NUCLEUS 1: A\n## MODULE OTHER: Other [NUCLEI: 1]\n## MODULE X: Y [NUCLEI: 1]\n"
                "### CONNECTIONS\n* MODULE OTHER\n* NUCLEUS 1\nLinked to MODULE 8 (WILL).\n* MODULE 8 (WILL)\n[/P1]\n")
    x = doc.modules[1]
    assert [(c.kind, c.target) for c in x.connections] == [("module", "OTHER"), ("nucleus", "1")]
    assert codes(doc) == ["MALFORMED_CONNECTION"]


# -- §7.3.1 state and registry -----------------------------------------------------------------------

@pytest.mark.parametrize("state_lines, expected", [
    ("### STATE\nactive\n", ("active", False)),
    ("### STATE\ninactive - permanent\n", ("inactive", True)),
    ("**STATE:** active - permanent\n", ("active", True)),
    ("### **STATE:** inactive - permanent\n", ("inactive", True)),
    ("### STATE: inactive\n", ("inactive", False)),
    ("", (None, False)),
], ids=["h3-then-value-line", "h3-then-permanent-value", "bold-field-permanent", "bold-h3-permanent", "h3-inline-value",
        "absent"])
def test_state_forms(state_lines, expected):
    doc = parse(MOD + "[P1]\n## MODULE X: Y [NUCLEI: ]\n" + state_lines + "[/P1]\n")
    (m,) = doc.modules
    assert (m.declared_state, m.permanent) == expected
    assert doc.diagnostics == ()


def test_state_registry_block_lists_modules():
    doc = parse(REM + "[P1]\n## NUCLEUS 1: N\n## MODULE 001: A [NUCLEI: 1]\n## MODULE 002: B [NUCLEI: 1]\n"
                "## MODULE 003: C [NUCLEI: 1]\n[/P1]\n\n[P4]\n## MODULE_STATE_REGISTRY:\n* ACTIVE: 001, 002\n"
                "* INACTIVE: 003\n[/P4]\n")
    assert doc.diagnostics == ()
    assert doc.registry.active == ("001", "002") and doc.registry.inactive == ("003",)
    assert doc.registry.permission_level == 4
    reg = one(doc, "state_registry")
    assert reg.permission_level == 4
    d = doc.to_dict()["blocks"][2]["children"][0]
    assert d["type"] == "state_registry"
    assert d["activeModules"] == ["001", "002"]  # §13: activeModules on the state_registry block
    assert d["inactiveModules"] == ["003"]


def test_permanent_state_blocks_registry_override():
    doc = parse(REM + "[P1]\n## NUCLEUS 1: N\n## MODULE 001: A [NUCLEI: 1]\n### **STATE:** active - permanent\n"
                "[/P1]\n\n[P4]\n## MODULE_STATE_REGISTRY:\n* INACTIVE: 001\n[/P4]\n")
    (m,) = doc.modules
    assert (m.declared_state, m.permanent) == ("active", True)
    assert codes(doc) == ["PERMANENT_STATE_OVERRIDE_ATTEMPT"]


# -- §5.5 Invariant 4 ---------------------------------------------------------------------------------

def test_invariant_4_lower_n_wins_and_higher_n_is_ignored():
    doc = parse(REM + "[P1]\n## NUCLEUS 1: N\n[/P1]\n\n[P3]\n## MODULE 001: IN_P3 [NUCLEI: 1]\n[/P3]\n\n"
                "[P1]\n## MODULE 001: IN_P1 [NUCLEI: 1]\n[/P1]\n")
    by_name = {m.name: m for m in doc.modules}
    assert by_name["IN_P3"].ignored and not by_name["IN_P1"].ignored
    assert [(d.code, d.line) for d in doc.diagnostics] == [("DUPLICATE_BLOCK_CONFLICT_WARNING", by_name["IN_P3"].line)]
    dicts = {b["name"]: b for top in doc.to_dict()["blocks"] for b in top.get("children", []) if b["type"] == "module"}
    assert dicts["IN_P3"].get("ignored") is True
    assert "ignored" not in dicts["IN_P1"]


# -- §7.5 logs ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("header, date, title", [
    ("###### LOG: 2026-05-03 — First activation", "2026-05-03", "First activation"),
    ("###### LOG: 2026-05-03T14:30:00 — Timed", "2026-05-03T14:30:00", "Timed"),
    ("######[LOG IA – ILLAIRA]", None, "IA – ILLAIRA"),
    ("###### log - qualcosa", None, "qualcosa"),
    ("###### LOG titolo", None, "titolo"),
    ("###### [LOG 2026-05-03] bracketed date", "2026-05-03", "bracketed date"),
    ("######[LOG 2026-05-03 — tutto tra parentesi]", "2026-05-03", "tutto tra parentesi"),
    ("###### LOG 2026-05-03: colon after the date", "2026-05-03", "colon after the date"),
    ("###### Nota sul LOG di ieri", None, "Nota sul LOG di ieri"),
    ("###### — LOG — titolo", None, "titolo"),
    ("###### LOG", None, None),
], ids=["canonical", "timestamp", "bracketed-no-space", "lowercase-dash", "no-colon", "bracketed-date",
        "bracketed-date-dash", "date-colon", "log-word-inside-title", "log-word-after-dash", "bare-log"])
def test_log_date_and_title(header, date, title):
    doc = parse(REM + "[P4]\n" + header + "\nBody.\n[/P4]\n")
    log = one(doc, "log")
    assert (log.date, log.title, log.level, log.permission_level) == (date, title, 6, 4)
    assert doc.diagnostics == ()


@pytest.mark.parametrize("word", ["LOGISTICA", "CATALOGO", "BLOG post", "LOGS"])
def test_isolated_log_word_only(word):
    doc = parse(REM + "[P1]\n###### " + word + "\n[/P1]\n")
    assert blocks(doc, "log") == []


def test_any_h6_in_external_memory_is_a_node():
    doc = parse(MEM + "[P1]\n## TOPIC: Life\n[/P1]\n\n[P3]\n###### Nota personale\n[/P3]\n")
    node = one(doc, "log")
    assert node.permission_level == 3 and node.title == "Nota personale"
    assert doc.diagnostics == ()


def test_log_transport_marker_is_ordinary_text():
    """§N.19.3.5: ``[/LOG]`` in a file is ordinary text, never structure or an error."""
    text = MEM + "[P1]\n## TOPIC: Garage\n[/P1]\n\n[P4]\n###### LOG: 2026-09-03 — Service booked\nCalled.\n[/LOG]\n[/P4]\n"
    doc = parse(text)
    assert doc.diagnostics == ()
    log = one(doc, "log")
    assert "[/LOG]" in log.raw_markdown
    (body,) = log.children
    assert body.type == "paragraph" and body.content == "Called.\n[/LOG]"  # part of the entry's text
    assert serialize(doc) == text


# -- §11.1 fields, §8 lists, permission levels ----------------------------------------------------------

def test_bold_field_labels():
    doc = parse(MOD + "[P1]\n## MODULE X: Y [NUCLEI: ]\n\n**Type:** Autonomous / Inter-modular management\n\n"
                "**FUNCTION:** Map user context.\n[/P1]\n")
    fields = [(b.field_name, b.field_value) for b in blocks(doc, "paragraph") if b.field_name]
    assert fields == [("Type", "Autonomous / Inter-modular management"), ("FUNCTION", "Map user context.")]
    out = [b for b in doc.walk() if getattr(b, "field_name", None)]
    assert all(b.permission_level == 1 for b in out)


def test_bold_field_value_runs_to_the_end_of_its_paragraph():
    """§11.1: `field_value` is the text after the colon — the whole paragraph, continuation lines included."""
    text = (MOD + "[P1]\n## MODULE X: Y [NUCLEI: ]\n\n**FUNCTION:** Map user context,\nperceive undeclared"
            " variables — è così.\n**Type:** one line\n\n**Empty:**\n[/P1]\n")
    doc = parse(text)
    fields = [(b.field_name, b.field_value) for b in blocks(doc, "paragraph") if b.field_name]
    assert fields == [("FUNCTION", "Map user context,\nperceive undeclared variables — è così."),
                      ("Type", "one line"), ("Empty", "")]
    assert serialize(doc) == text


def test_list_levels_and_nesting():
    doc = parse(REM + "[P1]\n* Top-level item 1\n  + Sub-item 1.1\n    - Sub-sub-item 1.1.1\n    - Sub-sub-item 1.1.2\n"
                "  + Sub-item 1.2\n* Top-level item 2\n[/P1]\n")
    zone = doc.blocks[1]
    roots = [b for b in zone.children if b.type == "list"]
    assert [r.content for r in roots] == ["Top-level item 1", "Top-level item 2"]
    assert [(c.level, c.content) for c in roots[0].children] == [(2, "Sub-item 1.1"), (2, "Sub-item 1.2")]
    assert [(c.level, c.marker) for c in roots[0].children[0].children] == [(3, "-"), (3, "-")]
    assert all(b.permission_level == 1 for b in blocks(doc, "list"))
    assert doc.diagnostics == ()


def test_uniform_markers_infer_levels_from_indentation():
    doc = parse(REM + "[P1]\n* a\n  * b\n    * c\n[/P1]\n")
    assert [b.level for b in blocks(doc, "list")] == [1, 2, 3]
    assert codes(doc) == ["UNIFORM_LIST_MARKER_WARNING"]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_permission_level_is_inherited_by_every_block(n):
    body = "Free text.\n* item\n" + ("###### LOG: 2026-05-03 — x\nText.\n" if n >= 4 else "### FUNCTION\nText.\n")
    doc = parse(MOD + f"[P{n}]\n{body}[/P{n}]\n")
    zone = doc.blocks[1]
    assert zone.type == "permission_block" and zone.permission_level == n
    inner = [b for b in zone.walk() if b is not zone]
    assert inner and all(b.permission_level == n for b in inner)
    assert doc.blocks[0].permission_level is None


# -- §5 recovery -----------------------------------------------------------------------------------

def test_nested_tag_and_its_closing_are_text_in_the_outer_block():
    text = MEM + "[P5]\nText.\n[P1]\nInjected.\n[/P1]\nAfter.\n[/P5]\n"
    doc = parse(text)
    (zone,) = blocks(doc, "permission_block")
    assert (zone.permission_level, zone.line, zone.end_line) == (5, 3, 9)
    assert all(b.permission_level == 5 for b in zone.walk())
    assert codes(doc) == ["NESTED_PERMISSION_BLOCK"]


def test_mismatched_closing_in_p1_closes_the_block():
    doc = parse(MEM + "[P1]\n## TOPIC: Cars\n[/P3]\nOutside.\n")
    (zone,) = blocks(doc, "permission_block")
    assert (zone.line, zone.end_line) == (3, 5)
    outside = [b for b in doc.blocks if b.type == "paragraph" and b.content == "Outside."]
    assert outside and outside[0].permission_level is None


def test_mismatched_closing_in_p4_is_text():
    doc = parse(MEM + "[P4]\nNote.\n[/P1]\nStill inside.\n[/P4]\n")
    (zone,) = blocks(doc, "permission_block")
    assert (zone.line, zone.end_line, zone.permission_level) == (3, 7, 4)
    assert codes(doc) == ["MISMATCHED_PERMISSION_BLOCK"]


def test_fences_and_comments_are_opaque():
    doc = parse(REM + "[P4]\n```\n## MODULE 1: X\n[/P4]\n```\n<!--\n[P1]\n* R0: x\n-->\n[/P4]\n")
    assert doc.diagnostics == ()
    assert [b.type for b in doc.walk()].count("module") == 0
    syntaxes = [b.syntax for b in blocks(doc, "paragraph")]
    assert "code_fence" in syntaxes and "html_comment" in syntaxes


def test_yaml_frontmatter_is_skipped():
    text = "---\ntitle: x\n## MODULE 1: hidden\n---\n# T [external_memory]\n\n[P1]\n---\n[/P1]\n"
    doc = parse(text)
    assert doc.diagnostics == ()
    assert doc.frontmatter == "title: x\n## MODULE 1: hidden"
    assert doc.blocks[0].syntax == "frontmatter"
    assert doc.title == "T" and doc.file_type == "external_memory"
    assert len(blocks(doc, "separator")) == 1  # a later --- is a separator (§10.2)


def test_version_pin():
    assert parse("<!-- IllAIra-Standard: v1.13 -->\n# T [reminder]\n").standard_version == "v1.13"
    assert parse("# T [reminder]\n").standard_version is None


@pytest.mark.parametrize("h1, file_type, title", [
    ("# IDENTITY PROTOCOL [reminder]", "reminder", "IDENTITY PROTOCOL"),
    ("# [reminder] ALPHA_TEST_PROTOCOL", "reminder", "ALPHA_TEST_PROTOCOL"),
    ("# [external_module] CURIOSITY_ENGINE_v3", "external_module", "CURIOSITY_ENGINE_v3"),
    ("# [external_memory] DAILY_LOG_2026_04", "external_memory", "DAILY_LOG_2026_04"),
])
def test_h1_title_and_file_type(h1, file_type, title):
    doc = parse(h1 + "\n")
    assert (doc.file_type, doc.title, doc.title_line) == (file_type, title, 1)
    assert doc.to_dict()["fileType"] == file_type


def test_ext_module_short_form_in_h1_is_missing_file_type():
    doc = parse("# CURIOSITY [ext_module]\n")
    assert codes(doc) == ["MISSING_FILE_TYPE"]
    assert doc.to_dict()["fileType"] is None


def test_filename_is_never_read(tmp_path):
    f = tmp_path / "curiosity[ext_module].md"
    f.write_text("# Curiosity [reminder]\n", encoding="utf-8")
    assert zonemark.parse_file(f).file_type == "reminder"


def test_italian_aliases_map_to_english():
    doc = parse(MOD + "[P1]\n## MODULE X: Y [NUCLEI: ]\n### FUNZIONE\n### CONNESSIONI\n* MODULE X\n[/P1]\n")
    sections = [b.section for b in doc.walk() if b.type == "section" and getattr(b, "level", 0) == 3]
    assert sections == ["FUNCTION", "CONNECTIONS"]
    assert [c.target for c in doc.modules[0].connections] == ["X"]
    assert codes(doc) == ["DEPRECATED_ITALIAN_KEYWORD", "DEPRECATED_ITALIAN_KEYWORD"]


# -- §1 encoding ------------------------------------------------------------------------------------

LF = MEM + "[P1]\n## TOPIC: Cars\n### SUBTOPIC1: Tyres\n[/P1]\n\n[P4]\n###### LOG: 2026-05-01 — service\n[/P4]\n"


def test_crlf_parses_like_lf_and_round_trips():
    data = LF.replace("\n", "\r\n").encode("utf-8")
    doc = parse_bytes(data)
    ref = parse(LF)
    assert [(m.keyword, m.name, m.level) for m in doc.modules] == [(m.keyword, m.name, m.level) for m in ref.modules]
    assert [(b.type, b.line) for b in doc.walk()] == [(b.type, b.line) for b in ref.walk()]
    assert codes(doc) == ["CRLF_LINE_ENDING"]
    assert serialize_bytes(doc) == data


def test_crlf_count_includes_the_frontmatter_lines():
    """§1 binds every line of the file: the frontmatter's line endings are counted too."""
    data = ("---\ntitle: x\n---\n" + LF).replace("\n", "\r\n").encode("utf-8")
    doc = parse_bytes(data)
    (d,) = doc.diagnostics
    assert (d.code, d.line, d.count) == ("CRLF_LINE_ENDING", 1, data.count(b"\r\n"))
    assert serialize_bytes(doc) == data


def test_bom_is_ignored_for_parsing_and_kept():
    data = b"\xef\xbb\xbf" + LF.encode("utf-8")
    doc = parse_bytes(data)
    assert doc.file_type == "external_memory" and doc.title == "Cars"
    assert codes(doc) == ["BYTE_ORDER_MARK"]
    assert serialize_bytes(doc) == data


def test_invalid_utf8_is_reported_and_kept(tmp_path):
    data = LF.encode("utf-8").replace(b"service", b"servic\xe9")
    doc = parse_bytes(data)
    assert [(d.code, d.line) for d in doc.diagnostics] == [("INVALID_UTF8", 9)]
    assert [m.name for m in doc.modules] == ["Cars", "Tyres"]
    assert serialize_bytes(doc) == data
    f = tmp_path / "x.md"
    f.write_bytes(data)
    assert serialize_bytes(zonemark.parse_file(f)) == data


def test_parse_never_raises_on_str_but_rejects_bytes():
    with pytest.raises(TypeError):
        parse(b"# T [reminder]\n")  # type: ignore[arg-type]


# -- validate() and the typed exceptions ---------------------------------------------------------------

CASES = [
    (MissingFileTypeError, "# Untagged Title\n", 1),
    (MultipleFileTypeError, "# Title [reminder] [external_module]\n", 1),
    (UnclosedPermissionBlockError, MEM + "[P4]\nA note.\n", 3),
    (MismatchedPermissionBlockError, MEM + "[P1]\n## TOPIC: A\n[/P3]\n", 5),
    (NestedPermissionBlockError, MEM + "[P5]\nText.\n[P1]\nX.\n[/P1]\n[/P5]\n", 5),
    (UnprotectedLogicalContentError, MEM + "## TOPIC: A\n", 3),
    (InvalidHeaderInWritableZoneError, MEM + "[P4]\n## TOPIC: A\n[/P4]\n", 4),
    (DuplicateBlockConflictError, REM + "[P1]\n## NUCLEUS 1: A\n[/P1]\n\n[P1]\n## NUCLEUS 1: B\n[/P1]\n", 8),
]


@pytest.mark.parametrize("exc, text, line", CASES, ids=[c[0].__name__ for c in CASES])
def test_validate_raises_the_spec_named_exception(exc, text, line):
    assert issubclass(exc, ZonemarkError)
    with pytest.raises(exc) as info:
        validate(text)
    assert info.value.diagnostic.code == exc.code
    assert info.value.diagnostic.line == line
    assert isinstance(info.value, ZonemarkError)


def test_validate_returns_the_document_when_clean():
    doc = validate(MEM + "[P1]\n## TOPIC: A\n[/P1]\n")
    assert doc.ok and doc.file_type == "external_memory"


def test_validate_warnings_only_when_asked():
    text = REM + "[P1]\n## MODULE 001: M\n[/P1]\n"
    assert validate(text).warnings
    with pytest.raises(zonemark.UngovernedModuleWarning) as info:
        validate(text, warnings_as_errors=True)
    assert info.value.diagnostic.code == "UNGOVERNED_MODULE"


def test_every_catalogue_code_has_an_exception_class():
    for code in zonemark.CATALOGUE:
        cls = zonemark.exception_for(code)
        assert issubclass(cls, ZonemarkError) and cls.code == code


def test_separator_only_on_its_own_line():
    """§10.1: ``---``/``***`` are separators only alone on their line."""
    doc = parse(REM + "[P1]\n---\n\n***\n\n--- not alone\n\n*** neither\n[/P1]\n")
    assert [b.line for b in blocks(doc, "separator")] == [4, 6]


@pytest.mark.parametrize("text", [
    REM + "[P1]\n## module 001: lowercase\n[/P1]\n",
    REM + "[P1]\n## Nucleus 1: mixed case\n[/P1]\n",
    MEM + "[P1]\n## Topic: mixed case\n[/P1]\n",
    MEM + "[P1]\n## TOPIC: Cars\n### subtopic1: lowercase\n[/P1]\n",
    REM + "[P1]\n## rules:\n[/P1]\n",
], ids=["module", "nucleus", "topic", "subtopic", "rules"])
def test_reserved_keywords_are_case_sensitive(text):
    """§7.1, §7.4.1, §12: keywords are case-sensitive and uppercase; anything else is a plain section."""
    doc = parse(text)
    last = [b for b in doc.walk() if b.type in ("section", "module", "nucleus")][-1]
    assert last.type == "section" and last.section is None
    assert doc.diagnostics == ()


def test_orphan_subtopic_is_attached_to_the_file():
    """§7.1.3: a sub-topic with no topic above it is attached to the file; entries before any
    container belong to the file."""
    doc = parse(MEM + "[P4]\n###### LOG: 2026-01-01 — early\n[/P4]\n\n[P1]\n### SUBTOPIC1: Orphan\n[/P1]\n\n"
                "[P4]\n###### LOG: 2026-01-02 — later\n[/P4]\n")
    root = doc.outline()
    assert [e.title for e in root.entries] == ["early"]
    (orphan,) = root.children
    assert (orphan.name, orphan.keyword, orphan.level) == ("Orphan", "SUBTOPIC", 3)
    assert [e.title for e in orphan.entries] == ["later"]
    assert codes(doc) == ["SUBTOPIC_WITHOUT_TOPIC"]


@pytest.mark.parametrize("header", ["## MODULE 1: X [NUCLEI: 9]", "##  MODULE 1: X [NUCLEI: 9]",
                                    "##\tMODULE 1: X [NUCLEI: x]", "##MODULE 1: X [NUCLEI: 9]",
                                    "  ##   MODULE 1: X [NUCLEI: x]"])
def test_nuclei_tag_diagnostics_point_at_the_tag_whatever_the_spacing(header):
    doc = parse(REM + "[P1]\n" + header + "\n[/P1]\n")
    found = [(d.code, d.column) for d in doc.diagnostics
             if d.code in ("UNRESOLVED_NUCLEUS_REFERENCE", "MALFORMED_NUCLEI_TAG")]
    assert found and all(col == header.index("[NUCLEI:") + 1 for _, col in found)


def test_an_unclosed_zone_names_the_closing_tag_that_has_text_after_it():
    """§5.1: '[/P1] testo' closes nothing; the UNCLOSED_PERMISSION_BLOCK of its zone says where the near miss is."""
    doc = zonemark.parse("# Identità — 身元 [reminder]\n\n[P1]\n## NUCLEUS 1: LOGICA\n[/P1] fine — 終わり\n")
    [d] = doc.diagnostics
    assert (d.code, d.line, d.column, d.related_line) == ("UNCLOSED_PERMISSION_BLOCK", 3, 1, 5)
    assert "[/P1] on line 5 has text after it" in d.message
    plain = zonemark.parse("# Identità [reminder]\n\n[P1]\n## NUCLEUS 1: LOGICA\n")
    assert plain.diagnostics[0].related_line is None and "before the end of the file" in plain.diagnostics[0].message


def test_crlf_file_content_reads_as_if_the_carriage_returns_were_absent():
    """R18: a CRLF file is parsed as if each `\\r` before `\\n` were absent — in every block's `content`
    too — while `rawMarkdown` keeps every byte (§13.1)."""
    text = ("# Identità [reminder]\r\n\r\n[P1]\r\n## MODULE 1: A [NUCLEI: ]\r\n**Type:** x — y\r\n### FUNCTION\r\n"
            "testo\r\nancora\r\n\r\n## RULES:\r\n* R1: regola\r\n  + dettaglio\r\n> [!NOTE]\r\n> nota\r\n[/P1]\r\n"
            "[P4]\r\n###### LOG: 2026-01-01 — voce\r\ncorpo\r\n[/P4]\r\n")
    doc = parse(text)
    for b in doc.walk():
        assert "\r" not in b.content, (b.type, b.content)
    out = doc.to_dict()
    assert "".join(b["rawMarkdown"] for b in out["blocks"]) == text
    para = [b for b in blocks(doc, "paragraph") if not b.field_name]
    assert [p.content for p in para] == ["testo\nancora", "corpo"]
    assert one(doc, "rule").body == "dettaglio"
    assert serialize(doc) == text
