"""The block tree is built on use (issue 16): a parse read for its findings and facts holds no tree,
the tree built later is the one a parse with ``tree=True`` builds, and the outline read from a scan of
the headers alone, or in the parse's own scan, is the outline read from the tree (docs/conformance.md W96)."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import pytest
from hypothesis import given

from cost_support import peak as _peak
from test_roundtrip_property import SETTINGS, arbitrary_text, markdown_like
from zonemark.core.outline import OutlineNode, build_outline
from zonemark.core.parser import parse, parse_bytes, parse_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _outline_fields(root: OutlineNode) -> list[tuple[object, ...]]:
    return [dataclasses.astuple(node) for node in root.walk()]


def _same(text: str) -> None:
    eager = parse(text, tree=True)
    lazy = parse(text)
    assert eager.tree is not None and lazy.tree is None
    assert lazy.diagnostics == eager.diagnostics
    assert (lazy.modules, lazy.nuclei, lazy.registry) == (eager.modules, eager.nuclei, eager.registry)
    assert lazy.h6_owner == eager.h6_owner and lazy.ignored_lines == eager.ignored_lines
    from_scan = lazy.outline()
    assert lazy.tree is None  # the outline was read without building the tree
    assert _outline_fields(from_scan) == _outline_fields(eager.outline())
    assert lazy.to_dict() == eager.to_dict()
    assert lazy.tree is not None and lazy.blocks is lazy.blocks  # built once, then kept
    assert _outline_fields(build_outline(lazy)) == _outline_fields(from_scan)
    in_scan = parse(text, outline=True)
    assert in_scan.tree is None and _outline_fields(in_scan.outline()) == _outline_fields(from_scan)
    assert in_scan.outline() is in_scan.outline() and in_scan.diagnostics == eager.diagnostics


@SETTINGS
@given(markdown_like())
def test_a_lazy_tree_is_the_tree_of_a_parse_that_built_it(text):
    _same(text)


@SETTINGS
@given(arbitrary_text)
def test_a_lazy_tree_of_any_text_is_the_eager_one(text):
    _same(text)


def test_every_fixture_reads_alike_with_the_tree_built_at_once_or_on_use():
    files = sorted(FIXTURES.rglob("*.md"))
    assert len(files) > 100
    for path in files:
        data = path.read_bytes()
        eager, lazy = parse_bytes(data, tree=True), parse_file(path)
        assert lazy.tree is None and lazy.diagnostics == tuple(
            dataclasses.replace(d, path=str(path)) for d in eager.diagnostics), path
        assert _outline_fields(lazy.outline()) == _outline_fields(eager.outline()), path
        assert _outline_fields(parse_file(path, outline=True).outline()) == _outline_fields(eager.outline()), path
        assert lazy.to_dict()["blocks"] == eager.to_dict()["blocks"], path


def test_an_entry_and_a_node_find_their_header_block_in_the_document():
    text = ("# Note — perché [external_memory]\n\n[P1]\n## TOPIC: Viaggi — 東京\n[/P1]\n\n[P4]\n"
            "###### LOG: 2026-01-02 — Kyoto\nperché sì — 京都\n[/P4]\n")
    doc = parse(text)
    topic = doc.outline().children[0]
    entry = topic.entries[0]
    assert (topic.text, entry.title, entry.text) == ("TOPIC: Viaggi — 東京", "Kyoto", "LOG: 2026-01-02 — Kyoto")
    block = doc.heading_at(entry.line)
    assert block is not None and block.raw_markdown == "###### LOG: 2026-01-02 — Kyoto\nperché sì — 京都\n"
    assert doc.heading_at(topic.line).name == "Viaggi — 東京" and doc.heading_at(1) is None


def test_threads_asking_for_the_tree_at_once_get_one_tree():
    doc = parse("# T — 東京 [reminder]\n\n[P1]\n## RULES:\n* R0: sì\n[/P1]\n" * 200)
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(doc.blocks)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(g is got[0] for g in got)


def _dense(n: int) -> str:
    """Containers of one name, each with an entry: 5 blocks every 70 bytes (bench_worst_case's same-name)."""
    return "# Note — perché [external_memory]\n\n" + "".join(
        "[P1]\n## TOPIC: Same\n[/P1]\n\n[P4]\n###### LOG: 2026-01-03 — x\ny\n[/P4]\n\n" for _ in range(n))


def test_a_parse_holds_no_tree_and_its_outline_none_either():
    """Before: the parse of this text peaked at ~26x its size (the tree of every block) and its outline
    built that tree and held it (an outline node held its header block); now neither builds a block."""
    text = _dense(4000)
    size = len(text.encode())
    parse_peak, doc = _peak(parse, text)
    assert doc.tree is None and len(doc.modules) == 4000
    assert parse_peak <= 9 * size, parse_peak / size
    outline_peak, root = _peak(doc.outline)
    assert doc.tree is None and len(root.children) == 4000 and sum(len(c.entries) for c in root.children) == 4000
    assert outline_peak <= 11 * size, outline_peak / size
    both_peak, both = _peak(lambda: parse(text, outline=True))
    assert both.tree is None and len(both.outline().children) == 4000
    assert both_peak <= 15 * size, both_peak / size
    tree_peak, _ = _peak(lambda: doc.blocks)
    assert tree_peak > 10 * size  # the tree itself is what was held before: a test that can fail


def test_a_parse_without_the_tree_builds_no_block(monkeypatch):
    """The scan for findings and facts never calls a node constructor; asking for the tree does."""
    import zonemark.core.tree as tree_module

    def refuse(*_args: object) -> None:
        raise AssertionError("a block was built")
    text = ("# Note — perché [external_memory]\n\n[P1]\n## TOPIC: Viaggi — 東京\n### SUBTOPIC1: Kyoto\n[/P1]\n\n"
            "[P4]\n###### LOG: 2026-01-02 — Kyoto\n* perché sì — 京都\n  - sotto\n> citazione\n**Campo:** valore\n[/P4]\n")
    for name in ("_new_block", "_new_heading", "_new_paragraph", "_new_list_item"):
        monkeypatch.setattr(tree_module, name, refuse)
    doc = parse(text)
    assert doc.tree is None and [m.name for m in doc.modules] == ["Viaggi — 東京", "Kyoto"]
    assert [n.name for n in doc.outline().walk()][1:] == ["Viaggi — 東京", "Kyoto"]
    with pytest.raises(AssertionError, match="a block was built"):
        _ = doc.blocks
