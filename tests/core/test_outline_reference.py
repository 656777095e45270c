"""``zonemark outline`` and ``--json`` write, from the outline's columns (B21), the bytes the outline of objects
gave: the frozen copy of the old code (tests/outline_reference.py) is the reference, on every fixture and
example and on generated files, whether the document was parsed with its tree, without it or with its outline;
``Document.outline()``, read from the columns, is the old tree of nodes."""

from __future__ import annotations

import contextlib
import dataclasses
import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import outline_reference as reference
from test_roundtrip_property import SETTINGS, arbitrary_text, markdown_like
from zonemark.cli.main import main
from zonemark.core.document import Document
from zonemark.core.parser import parse, parse_bytes
from zonemark.core.text import escape_controls
from zonemark.render.outline_text import outline_json, outline_text, render_outline, write_outline

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "tests" / "fixtures").rglob("*.md")) + sorted((ROOT / "examples").rglob("*.md"))


def _fields(root: Any) -> list[tuple[object, ...]]:
    """Every node's fields, its entries' included, depth first: the old and the new dataclasses compared."""
    return [(n.name, n.kind, n.level, n.line, n.permission_level, n.keyword, n.id, n.section, n.ignored, n.text,
             len(n.children), [dataclasses.astuple(e) for e in n.entries]) for n in root.walk()]


def _written(doc: Document, as_json: bool) -> str:
    out = io.StringIO()
    write_outline(doc.outline_table(), out.write, as_json=as_json)
    return out.getvalue()


def _same_as_the_reference(data: bytes) -> None:
    old_text, old_json = (reference.outline_stdout(parse_bytes(data), as_json) for as_json in (False, True))
    old_nodes = _fields(reference.build_outline(parse_bytes(data)))
    for doc in (parse_bytes(data), parse_bytes(data, outline=True), parse_bytes(data, tree=True)):
        assert _written(doc, False) == old_text
        assert _written(doc, True) == old_json
        assert _fields(doc.outline()) == old_nodes
    doc = parse_bytes(data)
    assert escape_controls(render_outline(doc.outline())) + "\n" == old_text
    assert "".join(outline_text(doc.outline_table())) == reference.render_outline(reference.build_outline(doc)) + "\n"
    assert "".join(outline_json(doc.outline_table())) == old_json


def test_every_fixture_and_example_is_written_as_before():
    assert len(FILES) > 300
    for path in FILES:
        _same_as_the_reference(path.read_bytes())


@pytest.mark.parametrize("as_json", [False, True])
def test_the_command_writes_the_bytes_it_wrote_before(tmp_path, as_json):
    """The CLI itself, on a fixture of each kind and on a file of invalid bytes and control characters."""
    odd = tmp_path / "odd.md"
    odd.write_bytes("# Diario \x1b[31m [external_memory]\r\n\r\n[P1]\r\n## TOPIC: Viaggi ".encode() + b"\xfe"
                    + " — 旅\x07\r\n[/P1]\r\n\r\n[P4]\r\n###### LOG: 2026-04-01 — Kyoto ".encode() + b"\xfd\r\n[/P4]\r\n")
    for path in [*FILES[::40], odd]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            main(["outline", str(path), *(["--json"] if as_json else [])])
        assert out.getvalue() == reference.outline_stdout(parse_bytes(path.read_bytes()), as_json), path


_NAMES = st.sampled_from(["Viaggi — 東京", "Città", "perché sì", "京都の寺", "Same", "Alpha", "caffè ☕", "", "x"])
_ZONE = st.integers(1, 5)


@st.composite
def _outline_line(draw) -> str:
    name = draw(_NAMES)
    return draw(st.sampled_from([
        f"## TOPIC: {name}", f"### SUBTOPIC1: {name}", f"#### SUBTOPIC2: {name}", f"##### SUBTOPIC3: {name}",
        f"###### SUBTOPIC4: {name}", f"## MODULE 00{draw(st.integers(1, 3))}: {name} [NUCLEI: 1]",
        f"### SUB-MODULE: {name}", f"## NUCLEUS {draw(st.integers(1, 3))}: {name}", "## RULES:", "### FUNCTION",
        "### STATE", "## MODULE_STATE_REGISTRY:", f"## {name}", f"### {name}", f"###### {name}",
        f"###### LOG: 2026-0{draw(st.integers(1, 9))}-0{draw(st.integers(1, 9))} — {name}",
        f"###### LOG: 2026-13-40 — {name}", f"###### {name} 2026-01-02", "  ## indented — sì", "\t### tab",
        f"# second — {name} [external_memory]", "# altro [reminder]", "[NUCLEI: 1, 2]", "* ACTIVE: 001",
        f"testo — {name}", "```", "<!--", "-->", "",
    ]))


@st.composite
def outline_files(draw) -> bytes:
    """Files of zones holding headers of every kind: mixed topics, plain sections, refused headers in [P4] and
    [P5], nuclei, sub-modules, bare H6 entries, Italian and Japanese names; CRLF, a byte order mark, no final
    line feed, an invalid byte."""
    title = draw(st.sampled_from(["# Note — perché [external_memory]", "# Regole — 東京 [reminder]",
                                  "# Modulo [external_module]", "# senza tipo", "## no title", ""]))
    lines = [title, ""]
    for _ in range(draw(st.integers(0, 12))):
        zone = draw(st.one_of(st.none(), _ZONE))
        body = draw(st.lists(_outline_line(), max_size=6))
        lines += ([f"[P{zone}]", *body, f"[/P{zone}]", ""] if zone is not None else body)
    eol = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    text = eol.join(lines) + draw(st.sampled_from([eol, ""]))
    data = (("\ufeff" if draw(st.booleans()) else "") + text).encode()
    if draw(st.booleans()) and data:
        at = draw(st.integers(0, len(data)))
        data = data[:at] + b"\xff" + data[at:]
    return data


@SETTINGS
@given(outline_files())
def test_a_generated_file_of_every_header_is_written_as_before(data):
    _same_as_the_reference(data)


@SETTINGS
@given(markdown_like())
def test_a_markdown_like_text_is_written_as_before(text):
    _same_as_the_reference(text.encode("utf-8", "surrogatepass"))


@SETTINGS
@given(arbitrary_text)
def test_any_text_is_written_as_before(text):
    _same_as_the_reference(text.encode("utf-8", "surrogatepass"))


def test_an_entry_owned_above_a_later_child_is_listed_after_that_childs_subtree():
    """The order of the readable tree is not the file's: an entry owned by a module, read under its section,
    comes after the section's own children (line order among the module's items, §7.1.3)."""
    text = ("# Regole — perché [reminder]\n\n[P1]\n## MODULE 001: ANCORA\n### FUNCTION\n###### LOG: 2026-01-02 — sì\n"
            "#### dettaglio — 東京\n[/P1]\n")
    doc = parse(text)
    lines = _written(doc, False).splitlines()
    assert lines == ["Regole — perché  [file]",
                     "└── MODULE 001: ANCORA  [H2, P1, line 4, 1 entry]",
                     "    ├── FUNCTION  [H3, P1, line 5]",
                     "    │   └── dettaglio — 東京  [H4, P1, line 7]",
                     "    └── • 2026-01-02 sì  [line 6]"]
    assert _written(doc, False) == reference.outline_stdout(parse(text), False)

