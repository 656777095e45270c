"""§13.1 round-trip as a property: ``serialize(parse(x)) == x`` for any text, and for any bytes."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_schema import check_tree_invariants
from zonemark import parse, parse_bytes, serialize, serialize_bytes

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Arbitrary text: surrogate-free unicode, with \r, \x00, tabs and lone newlines made likely.
arbitrary_text = st.text(
    alphabet=st.one_of(
        st.characters(blacklist_categories=("Cs",)),
        st.sampled_from(["\n", "\r", "\x00", "\t", " ", "#", "[", "]", "*", "\ufeff"]),
    ),
    max_size=300,
)

_name = st.text(alphabet="abcXYZ_ 019-", min_size=0, max_size=12)
_tag = st.sampled_from(["reminder", "external_module", "external_memory", "ext_module", "Reminder", ""])
_keyword = st.sampled_from([
    "MODULE 042: X", "MODULE: X", "MODULE ~T1: X", "MODULE 1 X", "NUCLEUS 1: N", "NUCLEUS A: N", "TOPIC: T",
    "TOPIC t1: T", "SUBTOPIC1: S", "SUBTOPIC2: S", "SUBTOPIC3: S", "SUBTOPIC4: S", "SUBTOPIC: S", "SUBTOPIC 1: S",
    "SUB-MODULE: C", "SOTTOMODULO: C", "RULES:", "REGOLE:", "STATE", "**STATE:** active - permanent", "FUNCTION",
    "FUNZIONE", "CONNECTIONS", "ROUTINE: R", "SUBROUTINE: S", "MODULE_STATE_REGISTRY:", "LOG: 2026-05-03 — t",
    "LOG: 2026-02-30 — bad", "LOGISTICA", "log - qualcosa", "[LOG IA – ILLAIRA]", "MODULE 1: M [NUCLEI: 1, 2]",
    "TOPIC: T [NUCLEI: 1]", "Free title", "FUNCTION ###", "",
])


@st.composite
def _header(draw):
    hashes = "#" * draw(st.integers(1, 7))
    space = draw(st.sampled_from([" ", "", "\t", "  "]))
    indent = draw(st.sampled_from(["", "", "", " ", "   ", "    "]))
    return f"{indent}{hashes}{space}{draw(_keyword)}"


@st.composite
def _h1(draw):
    tag = draw(_tag)
    where = draw(st.sampled_from(["first", "last", "middle", "none", "two"]))
    name = draw(_name)
    return {"first": f"# [{tag}] {name}", "last": f"# {name} [{tag}]", "middle": f"# a [{tag}] b",
            "none": f"# {name}", "two": f"# {name} [reminder] [external_memory]"}[where]


@st.composite
def _list_item(draw):
    indent = draw(st.sampled_from(["", "  ", "    ", "      ", "\t", "\t\t", "        "]))
    marker = draw(st.sampled_from(["*", "+", "-", "1.", "2)"]))
    body = draw(st.sampled_from(["item", "R0: rule text", "C1: conduct", "X9: other", "MODULE 042", "NUCLEUS 1",
                                 "MODULE ~T2", "ACTIVE: 001, 002", "INACTIVE: 001", "ENABLED: x", "R1:glued", ""]))
    return f"{indent}{marker} {body}" if body else f"{indent}{marker}"


structural_line = st.one_of(
    _h1(),
    st.builds(lambda n, closing, rest: f"[{'/' if closing else ''}P{n}]{rest}",
              st.integers(0, 7), st.booleans(), st.sampled_from(["", " text", "x", "  "])),
    _header(),
    _list_item(),
    st.sampled_from([
        "> [!NOTE]", "> [!CAUTION] inline", "> [!XYZ]", "> [!note]", "> plain quote", "> \"The map\"", ">",
        "```", "```markdown", "~~~", "````", "<!--", "-->", "<!-- one line -->", "<!-- IllAIra-Standard: v1.13 -->",
        "<!-- IllAIra-Standard: v9.0 -->", "---", "***", "___", "- - -", "[NUCLEI: 1, 3]", "[NUCLEI: x]",
        "**STATE:** active", "**STATE:** inactive - permanent", "**STATO:** attivo", "**Type:** Autonomous",
        "[/LOG]", "active - permanent", "", "", "", "   ", "\t",
    ]),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=30),
)


@st.composite
def markdown_like(draw):
    lines = draw(st.lists(structural_line, max_size=40))
    eol = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    text = eol.join(lines)
    if draw(st.booleans()):
        text += eol
    return text


def _check(text: str) -> None:
    doc = parse(text)
    assert serialize(doc) == text
    check_tree_invariants(doc)
    doc.to_dict()
    doc.outline()


@SETTINGS
@given(arbitrary_text)
def test_arbitrary_text_round_trips(text):
    _check(text)


@SETTINGS
@given(markdown_like())
def test_generated_markdown_like_text_round_trips(text):
    _check(text)


@SETTINGS
@given(st.lists(structural_line, max_size=30), st.sampled_from(["# T [reminder]", "# T [external_module]",
                                                                 "# T [external_memory]"]))
def test_generated_text_under_a_valid_title_round_trips(lines, title):
    _check("\n".join([title, *lines]) + "\n")


@SETTINGS
@given(st.binary(max_size=300))
def test_arbitrary_bytes_round_trip(data):
    doc = parse_bytes(data)
    assert serialize_bytes(doc) == data
    check_tree_invariants(doc)


@SETTINGS
@given(markdown_like(), st.binary(max_size=8))
def test_markdown_with_invalid_utf8_round_trips(text, junk):
    data = text.encode("utf-8") + junk + text.encode("utf-8")
    doc = parse_bytes(data)
    assert serialize_bytes(doc) == data
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        assert "INVALID_UTF8" in {d.code for d in doc.diagnostics}
