"""The split parser gives exactly the ``Document`` of the parser before the split.

``tests/parser_before_split.py`` is a frozen copy of ``core/parser.py`` from before it was
split into ``headers``, ``scanner``, ``tree``, ``checks`` and ``facts`` (kept under
``tests/`` for this test only).  For generated IllAIra-like text — whole files built from
containers, sections, zones, entries, registries, lists and the broken forms of each, and
free soups of structural lines — and for every fixture file, both parsers must give the
same §13 JSON, the same diagnostics (every field: code, line, column, message, path,
related line, count), the same derived facts (modules, nuclei, registry, H6 owners, ignored
lines, title, version pin, frontmatter) and the same node objects, field by field.

Why a frozen copy rather than recorded golden outputs: it compares the two on any input
hypothesis finds, not only on a corpus chosen in advance, and it stays small.  When a later
change alters the parser's output on purpose, delete this test and the frozen copy together.

One difference is intended and corrected for before comparing (:func:`_with_fixed_bugs`):
the frozen copy put the column of a ``[NUCLEI: ...]`` problem on a module header one off
when the hashes were followed by no space or by more than one (a bug fixed with the split,
pinned by ``test_parser_rules.py::test_nuclei_tag_diagnostics_point_at_the_tag_whatever_the_spacing``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parser_before_split as before
from test_roundtrip_property import markdown_like, structural_line
from zonemark.core import parser as after

FIXTURES = sorted((Path(__file__).parent / "fixtures").rglob("*.md")) + sorted(
    (Path(__file__).parent.parent / "examples").rglob("*.md"))

SETTINGS = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _node(block) -> tuple:
    """Every field of a block (its source excepted) and its children, recursively."""
    values = tuple(getattr(block, f.name) for f in dataclasses.fields(block) if f.name not in ("source", "children"))
    return (type(block).__name__, values, tuple(_node(child) for child in block.children))


def _snapshot(doc) -> dict:
    return {
        "dict": doc.to_dict(),
        "diagnostics": [dataclasses.astuple(d) for d in doc.diagnostics],
        "nodes": [_node(b) for b in doc.blocks],
        "modules": doc.modules,
        "nuclei": doc.nuclei,
        "registry": doc.registry,
        "h6_owner": doc.h6_owner,
        "ignored_lines": doc.ignored_lines,
        "facts": (doc.file_type, doc.title, doc.title_line, doc.standard_version, doc.frontmatter,
                  doc.line_count, doc.surrogate_escaped, doc.path),
        "outline": doc.outline().to_dict(),
    }


_NUCLEI_CODES = ("MALFORMED_NUCLEI_TAG", "UNRESOLVED_NUCLEUS_REFERENCE")


def _with_fixed_bugs(doc):
    """The frozen copy's Document with the one bug fixed since: a ``[NUCLEI: ...]`` problem on a
    header line is at the tag's column (re-sorted as the parser sorts: by line and column)."""
    lines = doc.source.split("\n")
    fixed = []
    for d in doc.diagnostics:
        line = lines[d.line - 1] if d.line <= len(lines) else ""
        if d.code in _NUCLEI_CODES and line.lstrip().startswith("#") and "[NUCLEI:" in line:
            d = dataclasses.replace(d, column=line.index("[NUCLEI:") + 1)
        fixed.append(d)
    return dataclasses.replace(doc, diagnostics=tuple(sorted(fixed, key=lambda d: (d.line, d.column))))


def assert_same(text: str, path: str | None = None) -> None:
    assert _snapshot(after.parse(text, path=path)) == _snapshot(_with_fixed_bugs(before.parse(text, path=path)))


def assert_same_bytes(data: bytes) -> None:
    new, old = after.parse_bytes(data, path="f.md"), _with_fixed_bugs(before.parse_bytes(data, path="f.md"))
    assert _snapshot(new) == _snapshot(old)


# -- whole files: a title, then zones holding containers, sections, entries and lists ----------

_IDS = st.sampled_from(["001", "002", "042", "7", "~T1", "A-1"])
_NUCLEI = st.sampled_from(["1", "2", "9", "1, 2", "x", "", "1,,3"])


@st.composite
def _container(draw) -> list[str]:
    i, n = draw(_IDS), draw(_NUCLEI)
    head = draw(st.sampled_from([
        f"## MODULE {i}: M", f"## MODULE {i}: M [NUCLEI: {n}]", "## MODULE: Nameless", f"## MODULE {i} broken",
        f"## NUCLEUS {draw(st.sampled_from(['1', '2', '9', '01']))}: N", "## NUCLEUS x: N", "## TOPIC: T",
        "## TOPIC: T [NUCLEI: 1]", "### SUBTOPIC1: S", "#### SUBTOPIC2: S", "##### SUBTOPIC3: S", "### SUBTOPIC: S",
        "## SUBTOPIC1: S", "#### SUBTOPIC1: S", "### SUB-MODULE: C", "### SOTTOMODULO: C", "### TOPIC: T",
        "## RULES:", "## REGOLE:", "### RULES: more", "## MODULE_STATE_REGISTRY:", "## Plain", "### MODULE 1: M",
    ]))
    hashes, rest = head.split(" ", 1)
    head = hashes + draw(st.sampled_from([" ", " ", " ", "", "  ", "\t"])) + rest  # §4.1 spacing, good and bad
    out = [draw(st.sampled_from(["", "", "", " ", "   "])) + head]
    if draw(st.booleans()):
        out.append(f"[NUCLEI: {n}]")
    return out


@st.composite
def _section(draw) -> list[str]:
    head = draw(st.sampled_from([
        "### STATE", "### STATE: active", "### STATE: inactive - permanent", "### STATO: attivo", "### **STATE:** x",
        "**STATE:** active - permanent", "### FUNCTION", "### FUNZIONE", "### CONNECTIONS", "### CONNESSIONI",
        "### TRIGGER", "#### ROUTINE", "##### SUBROUTINE: S", "### Free", "#### deeper", "##### deepest",
    ]))
    body = draw(st.lists(st.sampled_from([
        "active", "inactive - permanent", "maybe", "* active", "* MODULE 001", "* MODULE ~T1", "* NUCLEUS 1",
        "* NUCLEUS x", "- MODULE 2", "* MODULE 1 extra", "* ACTIVE: 001, 002", "* INACTIVE: 001, ~T2",
        "* ENABLED: 3", "  + ACTIVE: 7", "text line", "",
    ]), max_size=4))
    return [head, *body]


@st.composite
def _entries(draw) -> list[str]:
    out: list[str] = []
    for _ in range(draw(st.integers(0, 3))):
        out.append(draw(st.sampled_from([
            "###### LOG: 2026-05-03 — title", "###### LOG: 2026-02-30 — bad", "###### LOG: 2026-05-03T10:00Z",
            "###### LOG: 2026-05-03", "###### [LOG IA – ILLAIRA] 2025-01-01 x", "###### log - qualcosa",
            "###### free node", "###### SUBTOPIC4: deep", "######LOG: spaceless", "###### x ##",
        ])))
        out += draw(st.lists(st.sampled_from(["entry text", "* bullet", "  + sub", "", "more"]), max_size=3))
    return out


@st.composite
def _list(draw) -> list[str]:
    items = draw(st.lists(st.tuples(st.sampled_from(["", "  ", "    ", "      ", "\t", "        "]),
                                    st.sampled_from(["*", "+", "-", "1.", "2)"]),
                                    st.sampled_from(["item", "R1: rule", "S2: safety", "Q3: odd", "R1: again",
                                                     "MODULE 001", "ACTIVE: 001", ""])),
                          min_size=1, max_size=8))
    return [f"{indent}{marker} {text}".rstrip() for indent, marker, text in items]


_LEAF = st.sampled_from([
    ["text"], ["two", "lines"], [""], ["---"], ["***"], ["> quote", "> more"], ["> [!NOTE] n"], ["> [!WARNING]"],
    ["> [!ODD] x"], ["```", "## MODULE 1: in fence", "```"], ["~~~", "[P1]"], ["<!-- c", "## x", "-->"],
    ["<!-- IllAIra-Standard: v1.13 -->"], ["<!-- IllAIra-Standard: v2.0 -->"], ["**Type:** Autonomous"],
    ["**STATE:** inactive"], ["[NUCLEI: 3]"], ["# Second H1"], ["# Again [reminder]"], ["#hashtag"], ["   ## indented"],
    ["## closing ##"], ["[/LOG]"], ["\ttabbed"], ["[P9]"], ["[/P2]"], ["[P1] inline start"],
])


@st.composite
def _zone(draw) -> list[str]:
    level = draw(st.sampled_from([1, 1, 2, 3, 4, 4, 5]))
    parts: list[str] = [draw(st.sampled_from([f"[P{level}]", f"[P{level}] text after the tag"]))]
    for _ in range(draw(st.integers(0, 5))):
        parts += draw(st.one_of(_container(), _section(), _entries(), _list(), _LEAF))
    closing = draw(st.sampled_from([f"[/P{level}]", f"[/P{level}]", f"[/P{level}]", f"[/P{(level % 5) + 1}]", None]))
    if closing is not None:
        parts.append(closing)
    return parts


@st.composite
def illaira_files(draw) -> str:
    lines: list[str] = []
    if draw(st.integers(0, 9)) == 0:
        lines += ["---", "a: b", "---"]
    if draw(st.booleans()):
        lines.append(draw(st.sampled_from(["<!-- IllAIra-Standard: v1.13 -->", "<!-- note -->", ""])))
    lines.append(draw(st.sampled_from([
        "# Name [reminder]", "# Name [external_module]", "# Cars [external_memory]", "# [external_memory] Cars",
        "# Name", "# Name [ext_memory]", "# a [reminder] b", "# A [reminder] [external_memory]", "## Not a title",
        "text first",
    ])))
    for _ in range(draw(st.integers(0, 6))):
        lines += draw(st.one_of(_zone(), _zone(), _LEAF, _list()))
    eol = draw(st.sampled_from(["\n", "\n", "\n", "\r\n"]))
    text = eol.join(lines) + draw(st.sampled_from(["\n", "", eol]))
    return ("\ufeff" + text) if draw(st.integers(0, 19)) == 0 else text


@SETTINGS
@given(illaira_files())
def test_same_document_for_generated_files(text):
    assert_same(text)


@SETTINGS
@given(markdown_like())
def test_same_document_for_generated_line_soup(text):
    assert_same(text, path="soup.md")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(structural_line, max_size=30), st.sampled_from(["# T [reminder]", "# T [external_memory]"]))
def test_same_document_under_a_valid_title(lines, title):
    assert_same("\n".join([title, *lines]) + "\n")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(illaira_files(), st.binary(max_size=6))
def test_same_document_for_bytes_with_invalid_utf8(text, junk):
    assert_same_bytes(text.encode("utf-8") + junk + b"\n" + text.encode("utf-8"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(p.parents[2])))
def test_same_document_for_every_fixture(path):
    data = path.read_bytes()
    assert_same_bytes(data)
