"""What one header line declares (§4, §7, §9, §12): the pure functions of ``core.headers``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from zonemark import parse
from zonemark.core.headers import (Finding, Header, classify_header, container_keyword, read_header,
                                   spelled_keyword)


def codes(header: Header) -> list[str]:
    return [f.code for f in header.findings]


# -- read_header: §4.1 syntax ------------------------------------------------------------------

@pytest.mark.parametrize("line", ["#hashtag", "#1 first", "####### seven", "#é"])
def test_text_that_starts_with_hashes_is_not_a_header(line):
    assert read_header(line, line, 0)[0] == 0


def test_header_level_text_and_clean_findings():
    assert read_header("###### LOG: 2026-05-03 — t", "###### LOG: 2026-05-03 — t", 0) == (
        6, "LOG: 2026-05-03 — t", 8, ())


def test_syntax_findings_in_order_with_columns():
    line = "  ##MODULE 1: X ##"
    level, text, text_column, findings = read_header(line, line.lstrip(), 2)
    assert (level, text, text_column) == (2, "MODULE 1: X", 5)
    assert [(f.code, f.column) for f in findings] == [
        ("HEADER_INDENTED", 1), ("HEADER_MISSING_SPACE", 5), ("HEADER_CLOSING_HASHES", 17)]


def test_the_title_line_keeps_a_lowercase_word_glued_to_its_hash():
    assert read_header("#title [reminder]", "#title [reminder]", 0)[0] == 0
    level, text, _, findings = read_header("#title [reminder]", "#title [reminder]", 0, hashtag_is_text=False)
    assert (level, text, [f.code for f in findings]) == (1, "title [reminder]", ["HEADER_MISSING_SPACE"])


# -- classify_header ---------------------------------------------------------------------------

def test_module_declaration_with_inline_nuclei():
    h = classify_header(2, "MODULE 042: Engine [NUCLEI: 1, 3]", 1, memory=False, reminder=True)
    assert (h.kind, h.id, h.name, h.nuclei, h.nuclei_column, h.findings) == (
        "module", "042", "Engine", (1, 3), 23, ())


def test_the_nuclei_tag_column_counts_from_where_the_text_starts():
    h = classify_header(2, "MODULE 1: X [NUCLEI: 9]", 1, memory=False, reminder=False, text_column=5)
    assert h.nuclei_column == 5 + len("MODULE 1: X ")


def test_module_without_id_in_a_reminder_and_a_reserved_id():
    assert codes(classify_header(2, "MODULE: X", 1, memory=False, reminder=True)) == ["MISSING_MODULE_ID"]
    assert codes(classify_header(2, "MODULE: X", 1, memory=False, reminder=False)) == []
    assert codes(classify_header(2, "MODULE ~T1: X", 1, memory=False, reminder=False)) == ["RESERVED_ID"]


def test_a_malformed_declaration_is_an_ordinary_section_named_by_its_text():
    h = classify_header(2, "MODULE 1 broken", 3, memory=False, reminder=False)
    assert (h.kind, h.name, h.findings) == ("section", "MODULE 1 broken", (Finding(
        "MALFORMED_DECLARATION", 3, "module declaration must read '## MODULE <id>: <name>'"),))


@pytest.mark.parametrize("level, text, memory, want", [
    (2, "TOPIC: Tyres", True, ("module", "TOPIC", "Tyres", [])),
    (2, "TOPIC: Tyres", False, ("section", None, "TOPIC: Tyres", ["TOPIC_OUTSIDE_EXTERNAL_MEMORY"])),
    (3, "TOPIC: Tyres", True, ("section", None, "TOPIC: Tyres", ["MISPLACED_TOPIC"])),
    (3, "SUBTOPIC1: Winter", True, ("module", "SUBTOPIC", "Winter", [])),
    (4, "SUBTOPIC1: Winter", True, ("module", "SUBTOPIC", "Winter", ["SUBTOPIC_LEVEL_MISMATCH"])),
    (2, "SUBTOPIC1: Winter", True, ("module", "TOPIC", "Winter", ["SUBTOPIC_LEVEL_MISMATCH"])),
    (3, "SOTTOMODULO: Parte", False, ("sub_module", None, "Parte", ["DEPRECATED_ITALIAN_KEYWORD"])),
])
def test_memory_containers_and_sub_modules(level, text, memory, want):
    h = classify_header(level, text, 1, memory=memory, reminder=False)
    assert (h.kind, h.keyword, h.name, codes(h)) == want


@pytest.mark.parametrize("level, text, want", [
    (3, "STATE", ("STATE", None, None)),
    (3, "STATE: active - permanent", ("STATE", "active - permanent", "active - permanent")),
    (3, "**STATE:**", ("STATE", "", "")),  # a value that is there but empty: reported by the scanner
    (3, "STATO: attivo", ("STATE", "attivo", "attivo")),
    (2, "RULES: core", ("RULES", "core", None)),
    (3, "CONNECTIONS", ("CONNECTIONS", None, None)),
    (4, "Free words", (None, "Free words", None)),
])
def test_sections_and_state_values(level, text, want):
    h = classify_header(level, text, 1, memory=False, reminder=False)
    assert (h.section, h.name, h.state_value) == want
    assert h.kind == "section"


@pytest.mark.parametrize("text, memory, want", [
    ("LOG: 2026-05-03 — Title", False, ("log", "2026-05-03", "Title", [])),
    ("LOG: 2026-02-30 — Bad", False, ("log", "2026-02-30", "Bad", ["INVALID_LOG_DATE"])),
    ("[LOG IA – ILLAIRA] 2025-01-01 x", False, ("log", "2025-01-01", "x", [])),
    ("Free node", True, ("log", None, "Free node", [])),
    ("Free node", False, ("section", None, None, [])),
    ("SUBTOPIC4: deep", True, ("log", None, "SUBTOPIC4: deep", ["SUBTOPIC_TOO_DEEP"])),
])
def test_h6_entries(text, memory, want):
    h = classify_header(6, text, 1, memory=memory, reminder=False)
    assert (h.kind, h.date, h.title, codes(h)) == want


def test_classification_is_pure_and_agrees_with_the_parsed_block():
    line = "## MODULE 7: Seven [NUCLEI: 2]"
    first = classify_header(2, line[3:], 1, memory=False, reminder=True)
    assert classify_header(2, line[3:], 1, memory=False, reminder=True) == first  # no hidden state
    doc = parse(f"# R [reminder]\n\n[P1]\n{line}\n[/P1]\n")
    (block,) = [b for b in doc.walk() if b.type == "module"]
    assert (block.id, block.name, block.assigned_nuclei, block.level) == (first.id, first.name, first.nuclei, 2)


# -- container_keyword: the one derivation of the SUBTOPIC level digit (§7.1.3) ---------------

def test_the_container_keyword_follows_the_header_depth():
    assert [container_keyword(level) for level in (2, 3, 4, 5)] == ["TOPIC", "SUBTOPIC1", "SUBTOPIC2", "SUBTOPIC3"]
    assert spelled_keyword("SUBTOPIC", 4) == "SUBTOPIC2"
    assert [spelled_keyword(k, 3) for k in ("TOPIC", "MODULE", None)] == ["TOPIC", "MODULE", None]


def test_every_package_reads_the_subtopic_digit_from_the_core():
    """A sub-topic parsed at H4 reads ``SUBTOPIC2`` in the symbols, the containers and the
    writer's labels, all from :func:`container_keyword`."""
    from zonemark.layer.containers import list_containers
    from zonemark.layer.symbols import document_symbols
    from zonemark.writer.locate import ZoneIndex

    text = ("# Viaggi — 東京 [external_memory]\n\n[P1]\n## TOPIC: Viaggi — perché\n### SUBTOPIC1: Treni\n"
            "#### SUBTOPIC2: Orari — 東京\n[/P1]\n\n[P4]\n[/P4]\n")
    doc = parse(text)
    assert not [d for d in doc.diagnostics if d.code.startswith("SUBTOPIC")]
    details = [s.detail for s in _flatten(document_symbols(doc))]
    assert details == ["TOPIC [P1]", "SUBTOPIC1 [P1]", "SUBTOPIC2 [P1]"]
    keywords = [c.keyword for c in list_containers(doc)]
    assert keywords[:3] == ["TOPIC", "SUBTOPIC1", "SUBTOPIC2"]
    index = ZoneIndex.build(doc)
    labels = [index.label(i) for i, h in enumerate(index.headers) if h.keyword == "SUBTOPIC"]
    assert labels == ["'SUBTOPIC1: Treni' (line 5)", "'SUBTOPIC2: Orari — 東京' (line 6)"]


def _flatten(symbols):
    for s in symbols:
        yield s
        yield from _flatten(s.children)


_DIGIT_DERIVATION = re.compile(r"SUBTOPIC\{[^}]*level|[\"']SUBTOPIC[\"']\s*[+%]|SUBTOPIC%d")


def test_the_subtopic_digit_is_derived_in_one_place():
    """§7.1.3 ``SUBTOPICn`` lives at H(n+2): only ``core.headers.container_keyword`` turns a level into the
    digit; any other module composing ``SUBTOPIC`` with a level is a second derivation."""
    src = Path(__file__).resolve().parents[2] / "src" / "zonemark"
    found = [(str(p.relative_to(src)), n, line.strip())
             for p in sorted(src.rglob("*.py"))
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if _DIGIT_DERIVATION.search(line)]
    assert [(rel, line) for rel, _, line in found] == [
        ("core/headers.py", 'return "TOPIC" if level == 2 else f"SUBTOPIC{level - 2}"')], found
