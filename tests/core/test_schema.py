"""The §13 JSON (``Document.to_dict()``) against its JSON Schema, and the tree invariants (§13.1)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest

from zonemark import parse, parse_file
from zonemark.core.text import printable

SCHEMA_PATH = Path(__file__).parents[2] / "src" / "zonemark" / "core" / "schema" / "parsed_file.schema.json"
FIXTURES_DIR = Path(__file__).parents[1] / "fixtures"
ALL_FIXTURES = sorted(FIXTURES_DIR.rglob("*.md"))


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def check_tree_invariants(doc) -> None:
    """Top-level blocks partition the source; children are ordered, non-overlapping
    sub-slices of their parent; ``line``/``end_line`` agree with the offsets."""
    src = doc.source
    assert "".join(b.raw_markdown for b in doc.blocks) == src
    pos = 0
    for b in doc.blocks:
        assert b.start == pos
        pos = b.end
    assert pos == len(src)

    def line_of(offset: int) -> int:
        return src.count("\n", 0, offset) + 1

    def check(block, parent):
        assert 0 <= block.start <= block.end <= len(src)
        assert block.raw_markdown == src[block.start:block.end]
        assert 1 <= block.line <= block.end_line
        if block.end > block.start:
            assert block.line == line_of(block.start)
            assert block.end_line == line_of(block.end - 1)
        if parent is not None:
            assert parent.start <= block.start and block.end <= parent.end
            assert parent.line <= block.line and block.end_line <= parent.end_line
        prev_end = block.start
        for child in block.children:
            assert child.start >= prev_end, "children overlap or are out of order"
            prev_end = child.end
            check(child, block)

    for b in doc.blocks:
        check(b, None)


def check_dict_invariants(data: dict, source: str) -> None:
    """The same invariants, read from the JSON alone."""
    assert "".join(b["rawMarkdown"] for b in data["blocks"]) == source

    def check(block):
        raw = block["rawMarkdown"]
        assert block["line"] <= block["endLine"]
        at = 0
        prev_end_line = block["line"]
        for child in block.get("children", []):
            found = raw.find(child["rawMarkdown"], at)
            assert found >= 0, "child rawMarkdown is not an ordered slice of its parent"
            at = found + len(child["rawMarkdown"])
            assert block["line"] <= child["line"] and child["endLine"] <= block["endLine"]
            assert child["line"] >= prev_end_line
            prev_end_line = child["endLine"]
            check(child)

    line = 1
    for b in data["blocks"]:
        assert b["line"] == line
        line += b["rawMarkdown"].count("\n")
        check(b)


def test_there_are_fixtures():
    assert len(ALL_FIXTURES) > 100


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: str(p.relative_to(FIXTURES_DIR)))
def test_fixture_output_matches_schema_and_tree_invariants(validator, path: Path):
    doc = parse_file(path)
    data = doc.to_dict()
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    assert not errors, f"{errors[0].message} at {list(errors[0].absolute_path)}"
    check_tree_invariants(doc)
    # JSON holds text: a byte that is not UTF-8 is the characters \xNN there (docs/conformance.md)
    check_dict_invariants(data, printable(doc.source) if doc.surrogate_escaped else doc.source)
    json.dumps(data, ensure_ascii=False).encode("utf-8")
    assert [d["code"] for d in data["errors"]] == [d.code for d in doc.errors]
    assert [d["code"] for d in data["warnings"]] == [d.code for d in doc.warnings]


@pytest.mark.parametrize("text", ["\n\n# T [external_module]\n", "\n\n<!-- c -->\n# T [reminder]\n", "\n> [!NOTE]"],
                         ids=["blank-lines-then-title", "blank-lines-then-comment", "blank-line-then-anchor"])
def test_leading_blank_lines_start_at_line_one(text):
    """The first block's ``line`` must be the line its ``rawMarkdown`` starts on (or the
    leading blank lines must be a block of their own): ``line`` and the offsets agree."""
    doc = parse(text)
    first = doc.blocks[0]
    assert first.line == text.count("\n", 0, first.start) + 1


def test_missing_file_type_is_null(validator):
    data = parse("no title here\n").to_dict()
    assert data["fileType"] is None
    validator.validate(data)


def test_version_pin_is_exposed(validator):
    data = parse("<!-- IllAIra-Standard: v1.13 -->\n# T [reminder]\n").to_dict()
    assert data["standardVersion"] == "v1.13"
    validator.validate(data)


def _sample():
    return parse_file(FIXTURES_DIR / "spec" / "14_1_minimal_reminder.md").to_dict()


@pytest.mark.parametrize("mutate", [
    lambda d: d.__setitem__("extra", 1),
    lambda d: d["blocks"][0].__setitem__("permission_level", 1),
    lambda d: d["blocks"][1].__setitem__("type", "topic"),
    lambda d: d["blocks"][1].__setitem__("permissionLevel", 6),
    lambda d: d.__setitem__("fileType", "ext_module"),
    lambda d: d["blocks"][0].pop("rawMarkdown"),
    lambda d: d["warnings"].append({"line": 1, "column": 1, "message": "m", "code": "X", "severity": "error"}),
], ids=["top-level-extra", "snake-case-key", "unknown-type", "level-6", "short-tag", "no-raw", "error-in-warnings"])
def test_schema_rejects_drift(validator, mutate):
    data = _sample()
    validator.validate(copy.deepcopy(data))
    mutate(data)
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(data)


def test_schema_is_shipped_with_the_package():
    from importlib import resources
    text = resources.files("zonemark.core").joinpath("schema/parsed_file.schema.json").read_text(encoding="utf-8")
    assert json.loads(text)["$schema"].endswith("2020-12/schema")


def test_content_of_each_block_type(validator):
    """`content` per block type, as docs/conformance.md "The §13 output" states it."""
    text = ("# Identità [reminder]\n\n[P1]\n## MODULE 042: Curiosità [NUCLEI: ]\n**Type:** libero — sì\n"
            "### FUNCTION\nPrima riga\nseconda riga\n\n* voce\n  + sotto\n> [!CAUTION]\n> Mai — never.\n\n"
            "> citazione\n\n## RULES:\n* R1: Titolo\n  + corpo\n---\n[/P1]\n\n[P4]\n"
            "###### LOG: 2026-05-03 — Voce\nCorpo della voce.\n###### LOG: 2026-02-30 — data impossibile\n"
            "###### LOG: oggi — senza data\n[/P4]\n")
    data = parse(text).to_dict()
    validator.validate(data)
    flat: list[dict] = []

    def walk(blocks):
        for b in blocks:
            flat.append(b)
            walk(b.get("children", []))
    walk(data["blocks"])
    got = [(b["type"], b["content"]) for b in flat]
    assert got == [
        ("section", "Identità [reminder]"),
        ("permission_block", text[text.index("[P1]"):text.index("[/P1]") + 5]),
        ("module", "MODULE 042: Curiosità [NUCLEI: ]"),
        ("paragraph", "**Type:** libero — sì"),
        ("section", "FUNCTION"),
        ("paragraph", "Prima riga\nseconda riga"),
        ("list", "voce"), ("list", "sotto"),
        ("attention_anchor", "Mai — never."),
        ("quote", "citazione"),
        ("section", "RULES:"),
        ("rule", "* R1: Titolo\n  + corpo"), ("list", "corpo"),
        ("separator", "---"),
        ("permission_block", text[text.index("[P4]"):text.index("[/P4]") + 5]),
        ("log", "LOG: 2026-05-03 — Voce"), ("paragraph", "Corpo della voce."),
        ("log", "LOG: 2026-02-30 — data impossibile"),
        ("log", "LOG: oggi — senza data"),
    ]
    logs = [b for b in flat if b["type"] == "log"]
    assert [(g.get("date"), g["title"]) for g in logs] == [
        ("2026-05-03", "Voce"), ("2026-02-30", "data impossibile"), (None, "oggi — senza data")]
    (rule,) = [b for b in flat if b["type"] == "rule"]
    assert (rule["title"], rule["body"]) == ("Titolo", "corpo")


@pytest.mark.parametrize("mutate", [
    lambda d: d["blocks"][0].pop("content"),
    lambda d: d["blocks"][0].pop("type"),
    lambda d: d["warnings"][0].pop("column"),
    lambda d: d["warnings"][0].pop("code"),
    lambda d: d.pop("errors"),
    lambda d: d["blocks"][0].__setitem__("level", "1"),
    lambda d: d["blocks"][1]["children"][0].__setitem__("assignedNuclei", ["1"]),
    lambda d: d["blocks"][1]["children"][0].__setitem__("nucleusId", 1),
], ids=["no-content", "no-type", "warning-without-column", "warning-without-code", "no-errors",
        "level-as-string", "nuclei-as-strings", "nucleus-id-on-a-module"])
def test_schema_requires_what_section_13_requires(validator, mutate):
    """§13 marks `type`, `content`, `rawMarkdown` and every field of ParsedIllAIraFile and
    ParserWarning as required, and types `level`, `assignedNuclei` as numbers."""
    data = parse("# E [external_module]\n\n[P1]\n## MODULE 7: X [NUCLEI: 1]\n[/P1]\n").to_dict()
    assert data["warnings"]
    validator.validate(copy.deepcopy(data))
    mutate(data)
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(data)


def test_invalid_utf8_bytes_appear_escaped_in_the_json(validator):
    from zonemark import parse_bytes, serialize_bytes
    data = "# Identità [reminder]\n\n[P5]\ncaffè \xff— ok\n[/P5]\n".encode("utf-8").replace(b"\xc3\xbf", b"\xff")
    doc = parse_bytes(data)
    out = doc.to_dict()
    validator.validate(out)
    json.dumps(out, ensure_ascii=False).encode("utf-8")  # no lone surrogate reaches the JSON
    assert [e["code"] for e in out["errors"]] == ["INVALID_UTF8"]
    (para,) = out["blocks"][1]["children"]
    assert para["content"] == "caffè \\xFF— ok"
    assert "".join(b["rawMarkdown"] for b in out["blocks"]) == data.decode("utf-8", "replace").replace("\ufffd", "\\xFF")
    assert serialize_bytes(doc) == data


def test_the_outline_of_a_file_with_invalid_utf8_serialises_to_json():
    """Like Document.to_dict(), the outline's dict holds each undecodable byte as the text \\xNN."""
    import json

    from zonemark import parse_bytes
    raw = "# Diario ".encode() + b"\xff" + " [external_memory]\n\n[P1]\n## TOPIC: Viaggi ".encode() + b"\xfe" + \
        " — 旅\n[/P1]\n\n[P4]\n###### LOG: 2026-04-01 — Kyoto ".encode() + b"\xfd" + b"\nTempli \xfc.\n[/P4]\n"
    out = parse_bytes(raw).outline().to_dict()
    text = json.dumps(out, ensure_ascii=False)
    text.encode("utf-8")  # no lone surrogate left
    topic = out["children"][0]
    assert topic["name"] == "Viaggi \\xFE — 旅" and "Kyoto \\xFD" in topic["entries"][0]["title"]
    assert out["name"] == "Diario \\xFF" and "\\udc" not in text


def test_block_type_vocabulary_is_the_schemas_enum():
    """§13: the ``type`` of a block is one of a closed vocabulary, typed as a Literal and the same as the schema's."""
    from typing import get_args

    from zonemark.core.nodes import BLOCK_TYPES, BlockType

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert get_args(BlockType) == BLOCK_TYPES
    assert list(BLOCK_TYPES) == schema["$defs"]["block"]["properties"]["type"]["enum"]
