"""Containers of a file and their entries (layer/containers.py, §7.1.2, §7.1.3, §7.5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from zonemark import parse, parse_file
from zonemark.layer.containers import (container_at, container_entries, list_containers, on_or_after,
                                       on_or_before)
from zonemark.writer.locate import ZoneIndex, resolve_container

ROOT = Path(__file__).resolve().parents[2]
EVERY_FILE = sorted([*(ROOT / "examples").rglob("*.md"), *(ROOT / "tests" / "fixtures").rglob("*.md")])

MEMORY = """# Diario [external_memory]

[P1]
## TOPIC: Viaggi
[/P1]

[P4]
###### LOG: 2026-04-01 — Kyoto
Templi — 寺.

###### LOG: 2026-06-10T18:30 — Roma
Colosseo.
###### Nota senza data
Solo testo.
[/P4]

[P1]
### SUBTOPIC1: 日本
[/P1]

[P4]
[/P4]

[P1]
#### SUBTOPIC2: 京都
[/P1]

[P4]
###### LOG: 2026-04-02 — 金閣寺
Oro.
[/P4]

[P1]
## TOPIC: Viaggi
[/P1]

[P4]
[/P4]

[P1]
## TOPIC: A/B
### SUBTOPIC1: C
## TOPIC: A
### SUBTOPIC1: B
## TOPIC: #2
[/P1]
"""

REMINDER = """# ARIA [reminder]

[P1]
## RULES:
* R1: Never invent memories.

## NUCLEUS 1: LOGICAL
### FUNCTION
Reason.

## MODULE 001: ANCHOR [NUCLEI: 1]
### STATE
active
### SUB-MODULE: SHORT_MODE
#### FUNCTION
Short.
[/P1]

[P4]
###### LOG: 2026-05-03 — prima attivazione
Tutto bene.
[/P4]
"""


def by_name(doc):
    return {(c.keyword, c.name): c for c in list_containers(doc)}


def test_a_memory_lists_topics_and_subtopics_with_zone_entries_and_last_date():
    doc = parse(MEMORY)
    got = [(c.address, c.kind, c.keyword, c.zone, c.entries, c.last_entry_date, c.parent)
           for c in list_containers(doc)]
    assert got[:4] == [
        ("#1", "topic", "TOPIC", 1, 3, "2026-06-10T18:30", None),
        ("#1/日本", "subtopic", "SUBTOPIC1", 1, 0, None, "#1"),
        ("#1/日本/京都", "subtopic", "SUBTOPIC2", 1, 1, "2026-04-02", "#1/日本"),
        ("#2", "topic", "TOPIC", 1, 0, None, None),
    ]


def test_ambiguous_names_fall_back_to_positions_and_a_whole_address_never_collides():
    doc = parse(MEMORY)
    addresses = {(c.name, c.line): c.address for c in list_containers(doc)}
    # 'A/B' is itself a topic name, so the sub-topic B of topic A cannot be 'A/B'.
    assert addresses[("B", 44)] == "A/#1"
    assert addresses[("A/B", 41)] == "#3"  # a name holding '/' is never a segment
    assert addresses[("#2", 45)] == "#5"  # a name reading like a position is never a segment


def test_a_reminder_lists_modules_sub_modules_nuclei_and_h2_sections():
    doc = parse(REMINDER)
    got = [(c.address, c.kind, c.keyword, c.parent) for c in list_containers(doc)]
    assert got == [("RULES:", "section", "RULES", None), ("NUCLEUS 1", "nucleus", "NUCLEUS", None),
                   ("001", "module", "MODULE", None), ("001/SHORT_MODE", "sub_module", "SUB-MODULE", "001")]
    # The [P4] journal after the [P1] block belongs to the innermost open container (§7.1.3): the sub-module.
    assert container_at(doc, 11).entries == 0
    short = container_at(doc, 14)
    assert short is not None and short.entries == 1 and short.last_entry_date == "2026-05-03"


@pytest.mark.parametrize("path", EVERY_FILE, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_address_resolves_back_through_the_writer(path):
    """The addresses are the writer's own language: each one finds exactly its container."""
    doc = parse_file(path)
    index = ZoneIndex.build(doc)
    for c in list_containers(doc):
        assert index.header_line(resolve_container(index, c.address)) == c.line, c


@pytest.mark.parametrize("text", [MEMORY, REMINDER])
def test_the_crafted_files_resolve_back_too(text):
    doc = parse(text)
    index = ZoneIndex.build(doc)
    for c in list_containers(doc):
        assert index.header_line(resolve_container(index, c.address)) == c.line, c


def test_entries_oldest_first_with_heading_body_and_zone():
    doc = parse(MEMORY)
    found = container_entries(doc, 4)
    assert found is not None and found.total == 3 and found.matching == 3
    first = found.entries[0]
    assert (first.line, first.date, first.title, first.zone) == (8, "2026-04-01", "Kyoto", 4)
    assert first.heading == "###### LOG: 2026-04-01 — Kyoto"
    assert first.body == "Templi — 寺."  # the blank line before the next entry is not part of it
    assert found.entries[2].date is None and found.entries[2].body == "Solo testo."


def test_since_keeps_dated_entries_on_or_after_and_limit_keeps_the_most_recent():
    doc = parse(MEMORY)
    since = container_entries(doc, 4, since="2026-06-10")
    assert [e.title for e in since.entries] == ["Roma"] and since.matching == 1 and since.total == 3
    limited = container_entries(doc, 4, limit=2)
    assert [e.line for e in limited.entries] == [11, 13] and limited.matching == 3
    assert container_entries(doc, 4, since="2026-06-11").entries == ()


def test_before_gives_the_page_above_a_line_and_earlier_counts_what_is_left_above_it():
    doc = parse(MEMORY)
    newest = container_entries(doc, 4, limit=1)
    assert [e.line for e in newest.entries] == [13] and newest.earlier == 2
    page = container_entries(doc, 4, limit=1, before=13)
    assert [e.line for e in page.entries] == [11] and page.earlier == 1 and page.matching == 3
    last = container_entries(doc, 4, limit=5, before=11)
    assert [e.title for e in last.entries] == ["Kyoto"] and last.earlier == 0
    assert container_entries(doc, 4, before=8).entries == ()
    dated = container_entries(doc, 4, since="2026-04-01", limit=1, before=13)  # the undated entry never matches
    assert [e.title for e in dated.entries] == ["Roma"] and dated.earlier == 1 and dated.matching == 2


def test_no_container_on_that_line_is_none():
    doc = parse(MEMORY)
    assert container_entries(doc, 5) is None and container_at(doc, 5) is None


def test_crlf_files_give_clean_lines():
    doc = parse(MEMORY.replace("\n", "\r\n"))
    entry = container_entries(doc, 4).entries[0]
    assert entry.heading == "###### LOG: 2026-04-01 — Kyoto" and entry.body == "Templi — 寺."


@pytest.mark.parametrize("date, bound, after, before", [
    ("2026-05-03", "2026-05-03", True, True),
    ("2026-05-03T08:00", "2026-05-03", True, True),  # same day, compared at the shorter precision
    ("2026-05-02T23:59", "2026-05-03", False, True),
    ("2026-05-04", "2026-05-03T12:00", True, False),
])
def test_dates_compare_at_the_precision_both_have(date, bound, after, before):
    assert on_or_after(date, bound) is after
    assert on_or_before(date, bound) is before
