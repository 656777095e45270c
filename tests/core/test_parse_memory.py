"""What a parse holds at its peak (issue 16): its findings once, each repeated message once, no empty
list per container (docs/conformance.md W92, W93)."""

from __future__ import annotations

from cost_support import peak as _peak
from zonemark.core.diagnostics import Pending, place_sorted, placed
from zonemark.core.parser import parse
from zonemark.core.scanner import Scanner


def _indented(n: int) -> str:
    return "# Titolo — 東京 [reminder]\n\n" + "  # indented — perché\n" * n


def test_a_repeated_finding_holds_its_message_once() -> None:
    doc = parse(_indented(300))
    assert len(doc.diagnostics) == 900
    for code in ("HEADER_INDENTED", "DUPLICATE_TITLE", "UNPROTECTED_LOGICAL_CONTENT"):
        found = [d for d in doc.diagnostics if d.code == code]
        assert len(found) == 300
        assert len({id(d.message) for d in found}) == 1, code


def test_a_file_of_many_findings_is_parsed_holding_each_finding_once() -> None:
    """90,000 findings: before, 59x the input at the peak (a pending tuple and a fresh message per finding,
    and the Diagnostic made of it, all alive at once); now ~35x."""
    text = _indented(30_000)
    size = len(text.encode())
    peak, doc = _peak(parse, text)
    assert len(doc.diagnostics) == 90_000 and doc.serialize() == text
    assert peak <= 42 * size, peak / size


def test_placing_sorted_findings_empties_their_list() -> None:
    text = "# T — 東京 [reminder]\n  ## perché\n"
    pending: list[Pending] = [("HEADER_INDENTED", 2, 1, "x — 東京", None, None, None),
                              ("CONTROL_CHARACTER", 2, 4, "y", None, None, None)]
    want = placed(pending, text)
    items = list(pending)
    assert place_sorted(items, text) == want and items == []


def test_a_container_without_connections_holds_no_list() -> None:
    text = ("# Motore — 東京 [external_module]\n\n[P1]\n## NUCLEUS 1: A\n"
            + "".join(f"## MODULE M{i}: Perché {i} — 東京 [NUCLEI: 1]\n" for i in range(50))
            + "### CONNECTIONS\n* MODULE M0\n* NUCLEUS 1\n[/P1]\n")
    scanner = Scanner(text, None)
    scanner.run()
    containers = scanner.facts.containers
    assert len(containers) == 50
    assert all(c.connections == () for c in containers[:-1])
    assert [c.target for c in containers[-1].connections] == ["M0", "1"]
    doc = parse(text)
    assert [m.connections for m in doc.modules[:-1]] == [()] * 49
    assert [(c.kind, c.target) for c in doc.modules[-1].connections] == [("module", "M0"), ("nucleus", "1")]


def test_repeated_header_texts_names_and_titles_are_one_string_each() -> None:
    text = "# Note — 東京 [external_memory]\n\n" + "".join(
        "[P1]\n## TOPIC: Stesso — perché\n[/P1]\n\n[P4]\n###### LOG: 2026-01-03 — titolo 東京\ncorpo\n[/P4]\n\n"
        for _ in range(200))
    doc = parse(text)
    topics = [b for b in doc.walk() if getattr(b, "keyword", None) == "TOPIC"]
    logs = [b for b in doc.walk() if b.type == "log"]
    assert len(topics) == 200 and len(logs) == 200
    for blocks, fields in ((topics, ("text", "name")), (logs, ("text", "title"))):
        for name in fields:
            assert len({id(getattr(b, name)) for b in blocks}) == 1, name
    assert logs[0].title == "titolo 東京" and topics[0].name == "Stesso — perché"


def test_the_string_table_of_a_parse_is_bounded() -> None:
    from zonemark.core.scanner import SHARED_MAX
    text = "# T — 東京 [reminder]\n\n" + "".join(f"  # indented {i} — perché\n" for i in range(SHARED_MAX + 500))
    scanner = Scanner(text, None)
    scanner.run()
    assert 0 < len(scanner.shared) <= SHARED_MAX and 0 < len(scanner.messages) <= SHARED_MAX
    assert parse(text).serialize() == text
