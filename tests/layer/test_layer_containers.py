"""Containers of a file and their entries (layer/containers.py, §7.1.2, §7.1.3, §7.5)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zonemark import parse, parse_file
from zonemark.core.document import Document
from zonemark.layer import containers as containers_module
from zonemark.layer.containers import (ContainerEntry, container_at, container_entries, list_containers, on_or_after,
                                       on_or_before, read_journal)
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


# -- one container read from a scan (B16): what the outline and the tree give -----------------------------

def _tree_entries(doc: Document, line: int) -> list[ContainerEntry] | None:
    """The entries of the container on ``line`` as they were read before B16: the outline's, each body cut from
    the header block of the tree (``Document.heading_at``)."""
    for summary, node in containers_module._walk(doc):
        if summary.line != line:
            continue
        out = []
        for e in node.entries:
            block = doc.heading_at(e.line)
            raw = block.raw_markdown if block is not None else ""
            eol = raw.find("\n")
            heading = (raw if eol < 0 else raw[:eol]).rstrip("\r")
            lines = [ln.rstrip("\r") for ln in ("" if eol < 0 else raw[eol + 1:]).split("\n")]
            while lines and not lines[-1].strip():
                lines.pop()
            out.append(ContainerEntry(e.line, e.date, e.title, heading, "\n".join(lines), e.permission_level))
        return out
    return None


def _walked(doc: Document, line: int, limit: int, most: int) -> list[ContainerEntry]:
    """Every entry of the container on ``line``, newest page first, each page at most ``limit`` entries and
    ``most`` body characters, a cut body continued until it is whole: put back together, oldest first."""
    pages: list[list[ContainerEntry]] = []
    before, resume = None, None
    for _ in range(10_000):
        page = container_entries(doc, line, limit=limit, before=before, max_chars=most, resume=resume)
        assert page is not None and len(page.entries) <= limit
        assert sum(len(e.body) for e in page.entries) <= most or len(page.entries) == 1
        pages.append(list(page.entries))
        first = page.entries[0] if page.entries else None
        if first is not None and first.body_chars is not None and first.body_from + len(first.body) < first.body_chars:
            assert len(page.entries) == 1 and len(first.body) == most
            before, resume = None, (first.line, first.body_from + len(first.body))
        elif first is not None and page.earlier:
            before, resume = first.line, None
        else:
            break
    whole: dict[int, ContainerEntry] = {}
    for page in pages:
        for e in page:
            if e.line in whole:  # only the next part of a cut body comes again
                last = whole[e.line]
                assert e.body_from == len(last.body) > 0 and e.body_chars is not None
                e = ContainerEntry(e.line, e.date, e.title, e.heading, last.body + e.body, e.zone)
            whole[e.line] = ContainerEntry(e.line, e.date, e.title, e.heading, e.body, e.zone)
    return [whole[line] for line in sorted(whole)]


def _same_as_the_outline(text: str) -> None:
    doc = parse(text)
    listed = list_containers(doc)
    for c in listed:
        journal = read_journal(doc, c.line)
        assert journal is not None and journal.summary == c, (c, text)
        expected = _tree_entries(doc, c.line)
        found = container_entries(doc, c.line)
        assert found is not None and list(found.entries) == expected, (c, text)
        assert _walked(doc, c.line, 2, 5) == expected, (c, text)
    lines = {c.line for c in listed}
    for line in range(1, doc.line_count + 2):
        if line not in lines:
            assert read_journal(doc, line) is None and container_entries(doc, line) is None


_NAMES = st.sampled_from(["A", "B", "A/B", "#2", "NUCLEUS 1", "042", " x", "東京", "perché"])
_LINES = st.one_of(
    st.sampled_from(["[P1]", "[/P1]", "[P2]", "[/P2]", "[P3]", "[/P3]", "[P4]", "[/P4]", "[P5]", "[/P5]",
                     "[P4] testo — 東京", "[/P4] x", "```", "~~~", "<!--", "-->", "<!-- nota -->", "", "   ", "\t",
                     "testo — perché", "* voce", "  - sotto", "> citazione", "---", "# Altro titolo",
                     "## RULES:", "## MODULE_STATE_REGISTRY:", "### FUNCTION", "###### Nota senza data",
                     "###### SUBTOPIC: x", "######", "###### LOG: 2026-05-03 — t", "###### LOG: 2026-05-04T10:00 — u",
                     "###### LOG: 2026-02-30 — data sbagliata", "    ###### indentato", "x\r", "\r",
                     "## NUCLEUS 1: N", "## MODULE 042: X", "## MODULE: X", "### SUB-MODULE: S"]),
    st.builds(lambda level, kw, name: f"{'#' * level} {kw}{name}", st.integers(2, 5),
              st.sampled_from(["TOPIC: ", "SUBTOPIC1: ", "SUBTOPIC2: ", "SUBTOPIC3: ", "MODULE 1: ", "NUCLEUS 2: ",
                               ""]), _NAMES))
_TITLES = st.sampled_from(["# Note — 東京 [external_memory]\n", "# Aria [reminder]\n", "# M [external_module]\n",
                           "", "---\na: b\n---\n# Note [external_memory]\n", "\ufeff# Note [external_memory]\n"])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TITLES, st.lists(_LINES, max_size=40), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_one_container_read_from_a_scan_is_the_one_the_outline_and_the_tree_give(title, lines, eol, last):
    """B16: the summary, the entries and their bodies of one container, read without the tree or the outline,
    are list_containers' and the tree's; its pages, bodies cut and continued, put back together are all of them."""
    _same_as_the_outline((title + eol.join(lines) + (eol if last else "")).replace("\n", eol))


@pytest.mark.parametrize("path", EVERY_FILE, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_file_s_containers_read_from_a_scan_are_the_outline_s(path):
    _same_as_the_outline(parse_file(path).source)


@pytest.mark.parametrize("text", [MEMORY, REMINDER, MEMORY.replace("\n", "\r\n")])
def test_the_crafted_files_containers_read_from_a_scan_are_the_outline_s(text):
    _same_as_the_outline(text)


def test_a_page_keeps_the_newest_entries_whose_bodies_fit_and_cuts_the_newest_alone():
    body = "perché — 東京 " * 10
    text = MEMORY.replace("Colosseo.", body.strip())
    doc = parse(text)
    page = container_entries(doc, 4, max_chars=len("Solo testo.") + 5)
    assert [e.title for e in page.entries] == ["Nota senza data"] and page.earlier == 2  # Roma's body does not fit beside it
    cut = container_entries(doc, 4, before=13, max_chars=20)
    entry = cut.entries[0]
    assert (entry.title, entry.body, entry.body_from, entry.body_chars) == ("Roma", body[:20], 0, len(body.strip()))
    rest = container_entries(doc, 4, max_chars=1000, resume=(11, 20))
    assert [(e.body, e.body_from, e.body_chars) for e in rest.entries] == [(body.strip()[20:], 20, len(body.strip()))]
    assert rest.earlier == 1
    gone = container_entries(doc, 4, max_chars=1000, resume=(12, 3))  # no entry on that line: the page above it
    assert [e.title for e in gone.entries] == ["Kyoto", "Roma"] and gone.earlier == 0
