"""Bounded cost on hostile input (docs/conformance.md, "Bounded cost", B1-B22).

Never a wall time: each test counts steps, calls or retained objects, or the bytes allocated at
the peak (tracemalloc), on inputs built to be the worst case of one entry point.
"""

from __future__ import annotations

import json
import random
import sys
import tracemalloc
from pathlib import Path

import pytest

import zonemark
from cost_support import peak as _peak
from rulings_support import assert_rulings_pinned
from zonemark.core import text as text_policy
from zonemark.core.parser import parse, parse_bytes
from zonemark.layer import Layer
from zonemark.layer.containers import list_containers
from zonemark.layer.graph import build_graph
from zonemark.render.graph_text import to_json
from zonemark.search import index as index_module
from zonemark.search import search


def test_b1_counting_invalid_bytes_holds_no_copy_of_them():
    """Random bytes: about half of them are kept as escaped bytes; the count needs no list of them."""
    data = random.Random(7).randbytes(300_000)
    source = text_policy.decode(data)
    peak, (line, column, byte, count) = _peak(text_policy.first_escaped_byte, source)
    assert count == sum(1 for ch in source if "\udc80" <= ch <= "\udcff") > 100_000
    assert peak < 64_000  # before: a list of ~150,000 one-character strings, ~40x the file


def test_b1_parse_of_random_bytes_peaks_under_8x_the_file():
    data = random.Random(8).randbytes(300_000) + "\nperché — 東京\n".encode()
    peak, doc = _peak(parse_bytes, data)
    assert "INVALID_UTF8" in {d.code for d in doc.diagnostics}
    assert peak <= 8 * len(data)  # before: ~40x


@pytest.mark.parametrize("head", ["", "---\ntitle: Città — 東京\n---\n"], ids=["plain", "frontmatter"])
def test_b8_the_scan_copies_none_of_the_text(head):
    """The scan slices lines, never the whole text: the frontmatter's first line was found by splitting the
    file in two (a second text of 4 bytes a character for invalid UTF-8), the control characters counted
    in a list of every one."""
    data = head.encode() + random.Random(9).randbytes(2_000_000) + "\nperché — 東京\n".encode()
    source = text_policy.decode(data)
    peak, doc = _peak(parse, source)
    assert "CONTROL_CHARACTER" in {d.code for d in doc.diagnostics}
    assert doc.frontmatter == ("title: Città — 東京" if head else None)
    # the source's one 256 K-character slice at a time and the findings; before: 1.3x (a copy, a list)
    assert peak <= 0.4 * sys.getsizeof(source), peak / sys.getsizeof(source)


def _entries(n: int) -> str:
    return "# Notes — 東京 [external_memory]\n\n[P4]\n" + "".join(
        f"###### LOG: 2026-01-03 — entry {i}\nbody perché\n" for i in range(n)) + "[/P4]\n"


def _topic_groups(n: int) -> str:
    group = ("[P1]\n## TOPIC: T{i}\n[/P1]\n\n[P1]\n### SUBTOPIC1: A\n[/P1]\n\n[P1]\n#### SUBTOPIC2: B\n[/P1]\n\n"
             "[P1]\n##### SUBTOPIC3: C — perché\n[/P1]\n\n[P4]\n[/P4]\n\n")
    return "# Notes — 東京 [external_memory]\n\n" + "".join(group.format(i=i) for i in range(n))


def test_b6_parse_of_many_entries_in_one_zone_holds_no_frame_of_the_built_ones():
    """10,000 entries in one [P4]: each frame is built when its next sibling starts (B6)."""
    text = _entries(10_000)
    size = len(text.encode())
    peak, doc = _peak(parse, text)
    assert len(doc.blocks[-1].children) == 10_000 and doc.serialize() == text
    assert peak <= 16 * size, peak / size  # before: ~24x (every frame alive until the zone closed)


def test_b6_parse_of_many_containers_frees_each_as_it_is_frozen():
    text = _topic_groups(2_000)
    size = len(text.encode())
    peak, doc = _peak(parse, text)
    assert len(doc.modules) == 8_000 and doc.serialize() == text
    assert peak <= 29 * size, peak / size  # before: ~31x (containers and their frozen infos at once)


def test_b9_the_entry_owners_are_two_integer_arrays():
    """Each entry's owner is a mapping read like the dict it was (get, [], in, items, ==), held as two arrays."""
    text = _entries(20_000).replace("[P4]\n", "[P1]\n## TOPIC: Città — 東京\n[/P1]\n\n[P4]\n", 1)
    doc = parse(text)
    topic = doc.modules[0].line
    lines = [b.line for b in doc.walk() if b.type == "log"]
    owners = doc.h6_owner
    assert len(lines) == len(owners) == 20_000 and list(owners) == lines
    assert dict(owners.items()) == {line: topic for line in lines} == owners
    assert owners[lines[-1]] == topic and lines[0] in owners and lines[0] - 1 not in owners
    assert owners.get(lines[0] + 1) is None and "x" not in owners
    with pytest.raises(KeyError):
        owners[lines[0] + 1]
    with pytest.raises(ValueError):
        owners.add(lines[0], 0)  # the scan adds entries in line order only
    # 16 bytes an entry; the dict held a hash table slot and two int objects (~100 bytes an entry)
    assert sys.getsizeof(owners._lines) + sys.getsizeof(owners._owners) <= 20 * 20_000


def test_b10_a_scan_that_keeps_no_finding_keeps_no_container():
    """``scan_structure`` (the zone index's, the skeleton's and the outline's scan) reads the headers and zones and
    feeds no check: the containers, declarations and list runs that only the checks read are not kept."""
    from zonemark.core.scanner import scan_structure

    text = _topic_groups(5_000)
    from array import array

    headers, zones = array("q"), array("q")
    used, (file_type, title) = _peak(scan_structure, text, lambda f: headers.append(f.line),
                                     lambda f: zones.append(f.line))
    assert (file_type, len(headers), len(zones)) == ("external_memory", 20_000, 25_000)
    doc = parse(text)
    assert len(doc.modules) == 20_000 and not doc.errors  # the parse keeps every container for its checks
    # the open stack and the lines the hooks keep; every container kept held 9.2x the text
    assert used <= 3 * len(text.encode()), used / len(text.encode())


def test_b11_a_parse_holds_its_containers_as_columns():
    """``Document.modules`` is a table of columns, its ``ModuleInfo`` made when read (B11); the names under a
    parent are kept by the parent while it is open, not in one map of every (parent, name) pair."""
    from zonemark.core.facts import ContainerTable
    from zonemark.core.nodes import ModuleInfo

    text = _topic_groups(5_000)
    size = len(text.encode())
    used, doc = _peak(parse, text)
    assert isinstance(doc.modules, ContainerTable) and len(doc.modules) == 20_000 and not doc.errors
    # the source (2 bytes a character: one is CJK), the findings, the columns; before: 11.6x (a ModuleInfo, a
    # scanner object and a (parent, name) key of every container at once)
    assert used <= 5 * size, used / size
    first, last = doc.modules[0], doc.modules[-1]
    assert isinstance(first, ModuleInfo) and (first.keyword, first.name, first.level) == ("TOPIC", "T0", 2)
    assert (last.keyword, last.name, last.level, last.parent_line) == ("SUBTOPIC", "C — perché", 5, last.line - 4)
    assert list(doc.modules)[-1] == last and doc.modules[-2:] == tuple(doc.modules)[-2:]
    assert doc.modules == tuple(doc.modules) and doc.modules != tuple(doc.modules)[1:]


def test_b11_the_table_reads_what_the_scan_learnt_after_each_header():
    """NUCLEI tags, STATE and CONNECTIONS arrive on later lines: the table keeps them by row (B11)."""
    text = ("# Motore — 東京 [external_module]\n\n[P1]\n## NUCLEUS 1: Nucleo\n\n"
            "## MODULE 001: Perché — 東京\n[NUCLEI: 1]\n### STATE\nactive - permanent\n"
            "### CONNECTIONS\n* MODULE 002\n* NUCLEUS 1\n\n## MODULE 002: Altro — città [NUCLEI: 1, 7]\n"
            "### STATE\ninactive\n\n## MODULE 001: Doppione\n[NUCLEI: 1]\n[/P1]\n")
    doc = parse(text)
    m1, m2, dup = doc.modules
    assert (m1.assigned_nuclei, m1.declared_state, m1.permanent, m1.state_line) == ((1,), "active", True, 9)
    assert [(c.kind, c.target) for c in m1.connections] == [("module", "002"), ("nucleus", "1")]
    assert (m2.assigned_nuclei, m2.declared_state, m2.permanent, m2.connections) == ((1, 7), "inactive", False, ())
    assert dup.ignored and not m1.ignored and dup.name == "Doppione"
    codes = {(d.code, d.line) for d in doc.diagnostics}
    assert ("UNRESOLVED_NUCLEUS_REFERENCE", 14) in codes


def _layer_of(tmp_path: Path, memory: str) -> Path:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "aria[reminder].md").write_text("# Aria — 東京 [reminder]\n\n[P1]\n## NUCLEUS 1: Nucleo\n[/P1]\n",
                                                encoding="utf-8")
    (tmp_path / "notes[ext_memory].md").write_text(memory, encoding="utf-8")
    return tmp_path


def test_b12_a_layer_holds_no_object_per_container(tmp_path):
    """``Layer.modules`` makes each ``LayerModule`` when it is read, from the files' tables (B12): the same
    values, ids and ~Tn numbers as the list it was, and none of them kept by the layer."""
    from zonemark.layer.loader import LayerModules

    folder = _layer_of(tmp_path, _topic_groups(5_000) + "[P1]\n## TOPIC: Ultimo — città\n[/P1]\n")
    size = (folder / "notes[ext_memory].md").stat().st_size
    used, layer = _peak(Layer.load, folder)
    modules = layer.modules
    assert isinstance(modules, LayerModules) and len(modules) == 20_001
    # the text, the table of its containers; before: 14.4x (a LayerModule, its ModuleInfo and a ~Tn key each)
    assert used <= 7 * size, used / size
    ids = [m.module_id for m in modules]
    assert ids[:3] == ["~T1", "~T2", "~T3"] and ids[-1] == "~T20001" and len(set(ids)) == 20_001
    assert modules[-1] == list(modules)[-1] and modules[-1].info.name == "Ultimo — città" and modules[-1].temporary
    assert layer.module_at("notes[ext_memory].md", modules[4].info.line) == modules[4]
    assert layer.module_at("notes[ext_memory].md", modules[4].info.line + 1) is None
    assert layer.module_at("aria[reminder].md", modules[4].info.line) is None
    assert modules == tuple(modules) and modules[1:3] == tuple(modules)[1:3]


def test_b13_a_status_lists_its_first_topics_and_counts_the_rest(tmp_path):
    """A memory file's status lists MAX_STATUS_TOPICS topics and sub-topics, depth first, and says how many are
    left out (B13): a file of 20,000 made an answer ten times the file."""
    from zonemark.layer.status import MAX_STATUS_TOPICS, layer_status
    from zonemark.render.status_text import render_status

    folder = _layer_of(tmp_path, _topic_groups(5_000))
    layer = Layer.load(folder, outline=True)
    status = layer_status(layer)
    (memory,) = status.memories

    def count(topics):
        return sum(1 + count(t.children) for t in topics)

    assert count(memory.topics) == MAX_STATUS_TOPICS and memory.topics_left_out == 20_000 - MAX_STATUS_TOPICS
    assert [t.keyword for t in (memory.topics[0], memory.topics[0].children[0])] == ["TOPIC", "SUBTOPIC1"]
    assert memory.topics[0].id == "~T1" and memory.topics[-1].id == f"~T{MAX_STATUS_TOPICS - 3}"
    assert memory.to_dict()["topicsLeftOut"] == 19_000
    assert "… and 19000 more topics (zonemark outline lists them all)" in render_status(status, str(folder))
    small = layer_status(Layer.load(_layer_of(tmp_path / "small", _topic_groups(3)), outline=True)).memories[0]
    assert count(small.topics) == 12 and small.topics_left_out == 0


def test_b17_status_reads_topics_without_an_outline(tmp_path):
    """The status of a memory file scans its headers and holds no outline (B17): the outline of a file of short
    topics was ten times the file.  Its answer is the outline's: topics nest by level (§7.1.3), a topic under a
    plain section or a refused header is no topic of the status, each entry counts for its owner."""
    from zonemark.layer.status import layer_status

    text = ("# Note — città [external_memory]\n\n[P1]\n## TOPIC: Viaggi — 東京\n[/P1]\n\n"
            "[P4]\n###### LOG: 2026-01-02 — partenza\nperché sì\n[/P4]\n\n"
            "[P1]\n### SUBTOPIC1: Treni\n[/P1]\n\n[P4]\n###### LOG: 2026-01-03 — Roma\nx\n"
            "###### LOG: 2026-01-04 — Kyoto\ny\n[/P4]\n\n"
            "[P4]\n## TOPIC: rifiutato\n[/P4]\n\n"
            "## Sezione\n\n### SUBTOPIC1: sotto la sezione\n\n"
            "[P1]\n## TOPIC: Casa\n[/P1]\n")
    folder = _layer_of(tmp_path, text)
    layer = Layer.load(folder)
    (memory,) = layer_status(layer).memories
    doc = next(f.doc for f in layer.merged_files if f.file_type == "external_memory")
    assert "_outline" not in doc.__dict__  # no outline was built for the status
    topics = [(t.name, t.entries, [(c.name, c.entries) for c in t.children]) for t in memory.topics]
    assert topics == [("Viaggi — 東京", 1, [("Treni", 2)]), ("Casa", 0, [])], topics
    assert memory.entries == 3 and memory.topics_left_out == 0
    assert [t.id for t in memory.topics] == ["~T1", "~T4"]  # ~T3: the sub-topic under the section, a container


# -- step counts: line events of zonemark's own code (sys.settrace), at n and 10n -------------------

SRC = str(Path(zonemark.__file__).resolve().parent)


def steps(fn, *args, **kwargs) -> int:
    """How many lines of zonemark's code run for ``fn(*args)`` (comprehension loops count per item)."""
    count = 0

    def local(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return local

    def call(frame, event, arg):
        return local if frame.f_code.co_filename.startswith(SRC) else None

    sys.settrace(call)
    try:
        fn(*args, **kwargs)
    finally:
        sys.settrace(None)
    return count


def linear(make, run, n: int = 100) -> tuple[int, int]:
    """Steps of ``run(make(n))`` and of ``run(make(10 n))``; the second must stay within 12x the first."""
    small, big = steps(run, make(n)), steps(run, make(10 * n))
    assert big <= 12 * small, (small, big)
    return small, big


MEMORY = "# Note — perché [external_memory]\n\n[P1]\n## TOPIC: Alpha\n[/P1]\n\n[P4]\n[/P4]\n\n"


def same_name(n: int) -> str:
    return MEMORY + "[P1]\n## TOPIC: Città — 東京\n[/P1]\n\n[P4]\n###### LOG: 2026-01-03 — x\ny\n[/P4]\n\n" * n


def nested(n: int) -> str:
    group = ("[P1]\n## TOPIC: T{i}\n[/P1]\n\n[P1]\n### SUBTOPIC1: A\n[/P1]\n\n[P1]\n#### SUBTOPIC2: B\n[/P1]\n\n"
             "[P4]\n[/P4]\n\n")
    return MEMORY + "".join(group.format(i=i) for i in range(n))


@pytest.mark.parametrize("make", [same_name, nested], ids=["same-name", "header-nesting"])
def test_b2_naming_containers_is_linear_in_their_number(make):
    """Each container's address was found by scanning all its siblings (and all containers): n²."""
    def run(text):
        found = list_containers(parse(text))
        assert len(found) > 100
    linear(make, run)


def test_b2_same_name_addresses_are_positional():
    names = [c.address for c in list_containers(parse(same_name(3)))]
    assert names == ["Alpha", "#2", "#3", "#4"]


@pytest.mark.parametrize("make", [same_name, nested], ids=["same-name", "header-nesting"])
def test_b3_the_search_index_of_many_stacks_is_built_in_linear_steps(tmp_path, monkeypatch, make):
    """Each new header stack was looked up by an unindexed scan of the file's stored stacks: n²
    (a step count of SQLite's virtual machine, counted by its progress handler)."""
    def run(n):
        folder = tmp_path / f"l{n}"
        folder.mkdir()
        (folder / "notes[ext_memory].md").write_text(make(n), encoding="utf-8")
        con_steps = [0]
        real = index_module._connect

        def counted(path, busy_timeout):
            con = real(path, busy_timeout)
            con.set_progress_handler(lambda: con_steps.__setitem__(0, con_steps[0] + 1) or 0, 100)
            return con
        monkeypatch.setattr(index_module, "_connect", counted)
        search(folder, "perché")
        monkeypatch.undo()
        return con_steps[0]
    small, big = run(100), run(1000)
    assert big <= 12 * small, (small, big)


def _entries_layer(folder: Path, n: int) -> Layer:
    folder.mkdir()
    (folder / "notes[ext_memory].md").write_text(
        MEMORY.replace("[P4]\n[/P4]", "[P4]\n" + "".join(f"###### LOG: 2026-01-03 — voce {i}\nperché 東京\n"
                                                         for i in range(n)) + "[/P4]"), encoding="utf-8")
    return Layer.load(folder)


def test_b4_graph_json_is_the_indented_dump_without_its_peak(tmp_path):
    graph = build_graph(_entries_layer(tmp_path / "l", 3_000))
    peak, text = _peak(to_json, graph)
    assert text == json.dumps(graph.to_dict(), ensure_ascii=False, indent=2) + "\n"
    assert json.loads(text)["nodes"][-1]["label"].endswith("voce 2999")
    # The result and one list of its node-sized parts; the indenting encoder held every token
    # of the graph (keys, values, separators) as a string at once: 3.4x the result.
    assert peak <= 2.5 * sys.getsizeof(text), peak / sys.getsizeof(text)


def test_the_bounded_cost_rulings_cite_tests_that_exist():
    assert_rulings_pinned("Bounded cost", "B")


# -- the sanitiser: the text and what it writes, held as one string per chunk of lines (W20) -----------------

def _zones(n: int) -> str:
    return "[P5]\nnota — 東京 perché\n[/P5]\n" * n


def _titled(n: int) -> str:
    return "".join(f"###### LOG: 2026-01-03 — voce {i} — 東京\ncorpo perché\n" for i in range(n))


@pytest.mark.parametrize("sanitize, text", [
    ("sanitize_body", _zones(17_000)),  # two lines in three escaped
    ("sanitize_entries", _titled(9_000)),  # every other line a title, sanitised as a title
    ("sanitize_body", random.Random(3).randbytes(450_000).decode("utf-8", "replace")),  # 4 bytes a character
    ("sanitize_body", "- perché\n  - 東京\n" * 25_000),  # every line rewritten by the bullet rewrite
    ("clean_proposal", "- perché\n  - 東京\n" * 25_000),
], ids=["zones", "entries", "random-bytes", "list", "proposal-list"])
def test_the_sanitiser_holds_about_two_copies_of_the_text(sanitize, text):
    """A line of a body was a string, a skeleton, a tuple and four list slots at once (18x the text for short
    escaped lines); the text is now read in chunks of lines, and what is held for all of it is the cleaned text
    and the written text, one string per chunk — the written text joined at the end is the second copy."""
    from zonemark.writer import sanitize as sanitize_module

    fn = getattr(sanitize_module, sanitize)
    peak, out = _peak(fn, text)
    assert out.text and len(out.text) >= 0.85 * len(text)
    bound = 3.2 if sanitize == "clean_proposal" else 2.6  # a proposal's rewritten runs beside the read ones
    assert peak <= bound * sys.getsizeof(text), peak / sys.getsizeof(text)  # before: 7.8x to 28x


def test_the_sanitiser_holds_no_string_per_line_of_a_long_list():
    """A list of 120,000 short items, each rewritten (``- x`` -> ``* x``): a segment's rewritten lines are
    folded into their chunk as the reading passes it, not kept in a dict of every line (before: 84x)."""
    from zonemark.writer.sanitize import sanitize_body

    text = "- x — 東京\n" * 48_000
    peak, out = _peak(sanitize_body, text)
    assert out.text == text.replace("- x", "* x")[:-1]
    assert peak <= 2.6 * sys.getsizeof(text), peak / sys.getsizeof(text)


# -- the chat readers: one line of the text at a time, a row of integers per trace block (CL30) --------------

@pytest.mark.parametrize("reader", ["parse_trace", "extract_logs"])
def test_the_chat_readers_hold_no_list_of_the_lines(reader):
    """Ingest's log extraction and the trace reader split the whole text into a list of lines (a string per
    line, 4.8x a text of short lines, 10x its UTF-8 bytes); they now read one line at a time."""
    from zonemark.interchange import logs, trace

    fn = trace.parse_trace if reader == "parse_trace" else logs.extract_logs
    text = "[P5]\nnota — 東京 perché\n[/P5]\n" * 30_000
    peak, found = _peak(fn, text)
    assert not (found.blocks if reader == "parse_trace" else found.entries)
    assert peak <= 0.05 * sys.getsizeof(text), peak / sys.getsizeof(text)


TRACING = ("# Aria — perché [reminder]\n\n[P1]\n## NUCLEUS 1: LOGICAL — 東京\n[/P1]\n\n[P1]\n"
           "## MODULE 001: ANCHOR [NUCLEI: 1]\n### STATE\nactive\n[/P1]\n\n[P1]\n"
           "## MODULE 002: DEFERRED_NEURAL_TRACING [NUCLEI: 1]\n### STATE\nactive\n[/P1]\n")


def test_a_trace_of_many_blocks_keeps_a_row_of_integers_per_block(tmp_path):
    """8,000 blocks: each was a TraceBlock with its parsed content and a second, validated content in
    ``accepted`` (8.7x the text); the blocks after the first MAX_LISTED_BLOCKS are rows of integers, parsed
    again from their own lines when asked for, and each accepted one is validated when asked for."""
    from zonemark.interchange.trace import MAX_LISTED_BLOCKS, read_trace

    (tmp_path / "aria[reminder].md").write_text(TRACING, encoding="utf-8")
    layer = Layer.load(tmp_path)
    text = "".join(f"[NTRACE: v1]\nNUCLEI: 1\nMODULE 001: ANCHOR active\nLOG 001: 2026-01-0{i % 9 + 1} — generated —"
                   f" perché 東京 {i}\n[/NTRACE]\n" for i in range(8_000))
    peak, result = _peak(read_trace, text, layer)
    assert result.enabled and len(result.blocks) == len(result.accepted) == 8_000
    assert len(result.result.logs) == 8_000 and len(result.to_dict()["blocks"]) == MAX_LISTED_BLOCKS
    last, content = result.accepted[-1]
    assert last == result.blocks[7_999] and (last.open_line, last.close_line) == (39_996, 40_000)
    assert content.logs[0].text == "perché 東京 7999" and content.logs[0].line == 39_999
    # the union of the 8,000 distinct LOG lines is the answer itself (with the set that finds them distinct)
    assert peak <= 3 * sys.getsizeof(text), peak / sys.getsizeof(text)


# -- B16: the MCP server's read tools and the language server's change handling -----------------------------

_B16_TOPIC = "[P1]\n## TOPIC: Città — 東京\n[/P1]\n\n[P4]\n"


def _b16_layer(folder: Path, memory: str) -> tuple[Path, int]:
    """A layer of a small reminder and ``memory`` (its bytes counted)."""
    folder.mkdir()
    (folder / "aria[reminder].md").write_text("# Aria — perché [reminder]\n\n[P1]\n## RULES:\n* R0: Sì — 東京.\n"
                                              "[/P1]\n", encoding="utf-8")
    (folder / "notes[ext_memory].md").write_text(memory, encoding="utf-8")
    return folder, len(memory.encode())


def _b16_zones(n: int) -> str:
    return "# Notes — 東京 [external_memory]\n\n" + _B16_TOPIC + "[/P4]\n\n" + "".join(
        "[P5]\nnote — 東京\n[/P5]\n" for _ in range(n))


@pytest.mark.parametrize("make, container, most", [
    (lambda: _entries(20_000).replace("[P4]\n", _B16_TOPIC, 1), "Città — 東京", 8),
    (lambda: _b16_zones(20_000), "Città — 東京", 8),
    (lambda: _topic_groups(2_000), "T0", 20),  # the parse's own modules (Document.modules) are most of it
], ids=["entries", "zones", "header-nesting"])
def test_b16_read_container_builds_neither_the_tree_nor_the_outline(tmp_path, make, container, most):
    """read_container parsed the file with its tree, walked every container's outline node and cut each entry from
    the tree (``Document.heading_at``): 20x the file for many entries or zones, 77x for deep headers."""
    from zonemark.mcp.server import read_container, tool_context

    folder, size = _b16_layer(tmp_path / "l", make())
    used, answer = _peak(lambda: read_container(tool_context(folder), file="notes[ext_memory].md",
                                                container=container))
    assert answer["container"]["name"] == container and answer["shown"] == min(20, answer["total"])
    assert used <= most * size, used / size


def test_b16_a_page_holds_at_most_max_page_body_chars_of_bodies_and_says_what_it_cut(tmp_path):
    """One entry of 1.2 million characters: the page holds its first MAX_PAGE_BODY_CHARS (before: all of it, in
    several copies on the way out), says where the part starts and how long the body is, and the cursor gives the
    rest, part by part, then the entries before it."""
    from mcp_support import Agent
    from zonemark.mcp import server as server_module
    from zonemark.mcp.server import build_server, read_container, tool_context

    MAX_PAGE_BODY_CHARS = 100_000
    body = "".join(f"riga {i} — perché 東京\n" for i in range(60_000)).rstrip("\n")
    memory = ("# Notes — 東京 [external_memory]\n\n" + _B16_TOPIC + "###### LOG: 2026-01-02 — prima\ncorta — sì\n"
              "###### LOG: 2026-01-03 — lunga\n" + body + "\n\n[/P4]\n")
    folder, size = _b16_layer(tmp_path / "l", memory)
    agent = Agent(build_server(folder))
    first = agent.call("read_container", file="notes[ext_memory].md", container="Città — 東京")
    assert len(first["entries"]) == 1  # before: both entries, the long one whole
    entry = first["entries"][0]
    assert entry["title"] == "lunga" and entry["body"] == body[:MAX_PAGE_BODY_CHARS]
    assert (entry["body_from"], entry["body_chars"]) == (0, len(body)) and first["matching"] == first["total"] == 2
    parts, cursor, older = [entry["body"]], first["next_cursor"], []
    while cursor is not None:
        page = agent.call("read_container", file="notes[ext_memory].md", container="Città — 東京", cursor=cursor)
        for e in page["entries"]:
            if e["title"] == "lunga":
                assert e["body_from"] == sum(map(len, parts)) and e["body_chars"] == len(body)
                assert len(e["body"]) <= MAX_PAGE_BODY_CHARS
                parts.append(e["body"])
            else:
                assert "body_from" not in e and "body_chars" not in e
                older.append(e["body"])
        cursor = page["next_cursor"]
    assert "".join(parts) == body and older == ["corta — sì"] and len(parts) == -(-len(body) // MAX_PAGE_BODY_CHARS)
    used, answer = _peak(lambda: read_container(tool_context(folder), file="notes[ext_memory].md",
                                                container="Città — 東京"))
    assert len(answer["entries"][0]["body"]) == MAX_PAGE_BODY_CHARS and used <= 8 * size, used / size
    assert server_module.MAX_PAGE_BODY_CHARS == MAX_PAGE_BODY_CHARS


def _b16_same_name(n: int) -> str:
    return "# Notes — 東京 [external_memory]\n\n" + "".join(
        "[P1]\n## TOPIC: Stessa — 東京\n[/P1]\n\n[P4]\n###### LOG: 2026-01-03 — x\ny\n[/P4]\n\n" for _ in range(n))


@pytest.mark.parametrize("make, most", [
    (lambda: _entries(20_000), 8), (lambda: _b16_zones(20_000), 8),
    (lambda: _b16_same_name(20_000), 7),  # a finding for each topic: the parse's own findings are 1.6x of it
], ids=["entries", "zones", "same-name"])
def test_b16_the_check_tool_reads_the_layer_without_trees(tmp_path, make, most):
    """The MCP server's layer cache parsed every file with its block tree, which no tool needs whole (20x), and
    the check copied every finding of the layer to list 200 of them."""
    from zonemark.mcp.server import check, tool_context

    folder, size = _b16_layer(tmp_path / "l", make())
    used, answer = _peak(lambda: check(tool_context(folder)))
    assert len(answer["diagnostics"]) == min(200, answer["errors"] + answer["warnings"])
    assert used <= most * size, used / size


def _b16_session(folder: Path):
    from zonemark.lsp.session import Session

    session = Session()
    session.set_folders([folder])
    memory = folder / "notes[ext_memory].md"
    uri = memory.resolve().as_uri()
    session.open(uri, memory.read_text(encoding="utf-8"), 1)
    assert session.context(uri) is not None
    return session, uri


def _b16_keystroke(session, uri: str):
    from types import SimpleNamespace as NS

    at = NS(line=2, character=0)
    session.change(uri, [NS(range=NS(start=at, end=at), text="è")], 2)
    return session.context(uri)


@pytest.mark.parametrize("make", [lambda: _entries(20_000), lambda: _b16_zones(20_000)], ids=["entries", "zones"])
def test_b16_a_change_in_the_editor_parses_without_the_tree(tmp_path, make):
    """A change was parsed with its block tree, and each line start was an int object in a list: 25x the file."""
    folder, size = _b16_layer(tmp_path / "l", make())
    session, uri = _b16_session(folder)
    used, ctx = _peak(_b16_keystroke, session, uri)
    assert ctx.doc.source.startswith("# Notes — 東京 [external_memory]\n\nè[P")
    assert used <= 8 * size, used / size
    assert ctx.doc.tree is None  # built if a request asks for it (symbols, folds, hover)


def test_b16_a_change_lets_go_of_the_parse_it_replaces_before_parsing_again(tmp_path, monkeypatch):
    """The live layer held the parse of the text before the change (and the layer built with it) while it parsed
    the new text: two parses of a large file at once."""
    import gc
    import weakref

    from zonemark.layer import live

    folder, _ = _b16_layer(tmp_path / "l", _entries(200))
    session, uri = _b16_session(folder)
    old = weakref.ref(session.context(uri).doc)
    seen = []
    real = live.parse

    def parse_again(text, **kwargs):
        gc.collect()
        seen.append(old() is None)
        return real(text, **kwargs)

    monkeypatch.setattr(live, "parse", parse_again)
    assert _b16_keystroke(session, uri).doc.source.count("è") == 1
    assert seen == [True]


def test_b16_lsp_line_starts_are_one_integer_array():
    """The line starts of an open text were an int object in a list each (~36 bytes a line): 4x a file of short
    lines, twice over while a change shifted them."""
    from zonemark.lsp.text import TextBuffer

    text = "[P5]\nnota — 東京\n[/P5]\n" * 30_000
    buf = TextBuffer(text, 1)
    used, starts = _peak(lambda: buf.starts)
    assert len(starts) == text.count("\n") + 1
    assert used <= 9 * len(starts), used / len(starts)

def _journal(body: str) -> bytes:
    return ("# Note — perché [external_memory]\n\n[P1]\n## TOPIC: Alpha — 東京\n[/P1]\n\n[P4]\n"
            "###### LOG: 2026-01-02 — voce\n" + body + "[/P4]\n").encode()


@pytest.mark.parametrize("body", [
    "".join("- " * (50 + i % 50) + "x\n" for i in range(4_000)),  # one entry: a list of 4,000 bullets
    "".join(f"###### LOG: 2026-01-03 — voce {i}\nperché 東京\n" for i in range(8_000)),  # 8,000 entries
], ids=["one-long-entry", "many-entries"])
def test_an_append_rechecks_the_end_of_its_zone_not_the_zone(tmp_path, body):
    """W99: an entry appended to a long journal is re-checked from the zone's opening line and its last lines
    (its lines before cannot change what the scan of those makes of them), and the zone is never decoded whole:
    the plan holds the file's bytes, the new bytes and the index.  Before: the whole zone was decoded four times
    and parsed twice with its tree, 16x the file (one long entry) and 37x (many entries)."""
    from zonemark.writer import snapshot
    from zonemark.writer.append import append_request, plan_append

    path = tmp_path / "notes[ext_memory].md"
    data = _journal(body)
    path.write_bytes(data)
    req = append_request("Alpha — 東京", "nuovo — 東京", "corpo — perché", date="2026-02-01")
    snapshot.forget()
    peak, plan = _peak(plan_append, snapshot.FileSnapshot(path, data), req)
    assert plan.result.method == "incremental" and plan.data.endswith(
        "###### LOG: 2026-02-01 — nuovo — 東京\ncorpo — perché\n[/P4]\n".encode())
    assert peak <= 3 * len(data), peak / len(data)


def test_a_write_holds_the_old_bytes_once_and_the_new_ones(tmp_path):
    """W99: a write holds one copy of the bytes it read and the new bytes: the read made before the lock (when
    nothing of zonemark's is beside the file yet) is kept instead of the equal read under it, and the check that
    the file did not change before the rename reads it a block at a time.  Before: four copies (two reads, the
    new bytes and the check's read of the whole file) on a first write, three on the next."""
    from zonemark.writer import Store

    path = tmp_path / "notes.md"
    path.write_bytes(("riga — perché 東京\n" * 100_000).encode())
    store = Store(fsync=False)
    size = path.stat().st_size
    for first in (True, False):  # no lock file yet (read before the lock, then under it), then with one
        peak, result = _peak(lambda: store.update(path, lambda data: data + "nuova — 東京\n".encode(), actor="ai",
                                                  action="append"))
        assert result.changed and (tmp_path / ".zonemark").is_dir()
        assert peak <= 2.3 * size, (first, peak / size)


def test_the_zone_index_holds_4_byte_columns_and_the_skeleton_only_line_starts():
    """W99: the zone index of a file below 2 GiB holds its offsets, lines and header numbers in 4-byte integers
    (moved to 8 bytes when a write would outgrow them), and the skeleton keeps only the start of each structural
    line (its end and line number are found again for the lines the index names) and drops the compact text's
    bytes once decoded.  8,000 nested topic groups: the skeleton peaked at 11.8x the file and kept 5.3x; now
    under 7.5x and 3.5x."""
    from zonemark.writer.locate import NARROW, NARROW_MAX
    from zonemark.writer.skeleton import skeleton_index

    group = ("[P1]\n## TOPIC: T{i}\n[/P1]\n\n[P1]\n### SUBTOPIC1: A\n[/P1]\n\n[P1]\n#### SUBTOPIC2: B\n[/P1]\n\n"
             "[P1]\n##### SUBTOPIC3: C\n[/P1]\n\n[P4]\n[/P4]\n\n")
    data = ("# Note — perché 東京 [external_memory]\n\n" + "".join(group.format(i=i) for i in range(8_000))).encode()
    tracemalloc.start()
    try:
        index = skeleton_index(data)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(index) == 40_000 and index.zone(39_999).close_line == data.count(b"\n") - 1
    assert index.z_close_end.typecode == index.headers.parent.typecode == NARROW
    assert peak <= 7.5 * len(data) and kept <= 3.5 * len(data), (peak / len(data), kept / len(data))
    moved = index.shifted(index.zone(1).start, index.zone(1).line, NARROW_MAX, 0)
    assert moved.z_close_end[-1] == index.z_close_end[-1] + NARROW_MAX and moved.z_close_end.typecode == "q"
    assert moved.z_start[0] == index.z_start[0] and moved.z_line == index.z_line


# -- the context export: the layer without its tree, the text joined once (B20) ------------------------------

def _b20_layer(folder: Path, n: int) -> Path:
    folder.mkdir()
    (folder / "aria[reminder].md").write_text("# Aria [reminder]\n\n[P1]\n## RULES:\n* R0: sempre — perché.\n[/P1]\n",
                                              encoding="utf-8")
    memory = folder / "notes[ext_memory].md"
    memory.write_text("# Note — perché [external_memory]\n\n[P1]\n## TOPIC: Alpha — 東京\n[/P1]\n\n"
                      + "[P5]\nnota — 東京\n[/P5]\n" * n
                      + "[P4]\n" + "".join(f"###### LOG: 2026-01-03 — voce {i}\ncorpo perché\n" for i in range(n))
                      + "[/P4]\n", encoding="utf-8")
    return memory


@pytest.mark.parametrize("budget", [None, "half"])
def test_b20_the_export_of_many_small_zones_and_entries_holds_no_tree(tmp_path, budget):
    """The export loaded its layer with the block tree and held every file as a tuple of its lines, then each
    section and the text: 26x a file of small zones and entries, 32x with a budget that leaves entries out.  It
    now loads the layer without the tree (the parse's own peak, 6x this file, is the export's), joins the text
    once from each file's own string, and reads what a budget leaves out in one scan of the headers and zones."""
    from zonemark.context import context, estimate_tokens

    folder = tmp_path / "layer"
    size = _b20_layer(folder, 6_000).stat().st_size
    limit = None if budget is None else context(folder).tokens // 2
    peak, result = _peak(context, folder, limit)
    assert result.tokens == estimate_tokens(result.text) and result.text.endswith("corpo perché\n[/P4]\n")
    if limit is None:
        assert result.text.count("nota — 東京") == 6_000 and result.entries_left_out == 0
        assert peak <= 7 * size, peak / size
    else:
        assert result.tokens <= limit and 0 < result.entries_left_out < 6_000
        assert peak <= 12 * size, peak / size


def test_b20_the_export_of_a_loaded_layer_holds_the_text_and_little_else(tmp_path):
    """Given the layer (the MCP server's cache holds one without its tree), the export holds the text it makes
    and each file's own string: before, a tuple of every line of each file and every section besides."""
    from zonemark.context import context

    folder = tmp_path / "layer"
    size = _b20_layer(folder, 6_000).stat().st_size
    layer = Layer.load(folder)
    peak, result = _peak(context, layer)
    assert result.text.count("###### LOG: 2026-01-03") == 6_000
    assert peak <= 2.5 * size, peak / size
    assert all(lf.doc.tree is None for lf in layer.files)

# -- the outline: columns, written row by row (B21) ---------------------------------------------------------

def _outline_groups(n: int) -> str:
    group = ("[P1]\n## TOPIC: Viaggi {i} — 東京\n[/P1]\n\n[P1]\n### SUBTOPIC1: A\n[/P1]\n\n[P1]\n#### SUBTOPIC2: B\n"
             "[/P1]\n\n[P1]\n##### SUBTOPIC3: C\n[/P1]\n\n[P4]\n###### LOG: 2026-01-03 — perché\nx\n[/P4]\n\n")
    return "# Note — perché [external_memory]\n\n" + "".join(group.format(i=i) for i in range(n))


@pytest.mark.parametrize("as_json", [False, True])
def test_b21_zonemark_outline_holds_columns_and_writes_them_row_by_row(as_json):
    """``zonemark outline`` (text and JSON) of 3,000 topic groups (12,000 nodes, 3,000 entries): the outline is a
    row of integers per node and entry, its strings read again from the header line as each row is written, and
    the text is written in chunks.  Before: the tree of nodes beside the parse and the whole text (20x the file;
    the JSON's indenting dump of the outline's dict, 80x); now the parse's own peak."""
    import io

    import outline_reference
    from zonemark.render.outline_text import write_outline

    text = _outline_groups(3_000)
    size = len(text.encode())
    out = io.StringIO()
    total = [0]

    def count(chunk: str) -> None:  # what is written is counted, never kept
        total[0] += len(chunk)
        assert len(chunk) < 400_000
    peak, doc = _peak(lambda: parse(text, outline=True))
    table = doc.outline_table()
    assert len(table) == 15_001 and "_outline" not in doc.__dict__  # no OutlineNode is held
    held = sum(len(c) * c.itemsize for c in (table.lines, table.offsets, table.first, table.next, table.counts))
    held += sum(len(c) for c in (table.levels, table.kinds, table.plevels, table.flags))
    assert held <= 24 * len(table) and table.heads is None, held / len(table)
    written_peak, _ = _peak(lambda: write_outline(table, count, as_json=as_json))
    written = total[0]
    small = parse(_outline_groups(600), outline=True).outline_table()
    small_peak, _ = _peak(lambda: write_outline(small, count, as_json=as_json))
    assert written_peak - small_peak <= 0.05 * size, (written_peak, small_peak)  # a chunk at a time, at any size
    whole, _ = _peak(lambda: write_outline(parse(text, outline=True).outline_table(), count, as_json=as_json))
    assert whole <= 4.5 * size, whole / size
    write_outline(table, out.write, as_json=as_json)
    old = outline_reference.outline_stdout(parse(text), as_json)
    assert out.getvalue() == old and written == len(old)
    old_peak, _ = _peak(lambda: outline_reference.outline_stdout(parse(text), as_json))
    assert old_peak > 15 * size  # what was held before: a test that can fail

# -- the search index: a full index built a window of the text at a time (B19) --------------------------------

def _b19_memory(groups: int) -> bytes:
    """A memory file of many small containers, each with an entry and a zone of text (the hostile case of B19)."""
    group = ("[P1]\n## TOPIC: Città {i}\n### SUBTOPIC: 東京\n[/P1]\n\n[P4]\n###### LOG: 2026-01-03 — voce {i}\n"
             "corpo perché — 東京\n[/P4]\n\n[P5]\nnota — perché\n[/P5]\n\n")
    return ("# Note — perché [external_memory]\n\n" + "".join(group.format(i=i) for i in range(groups))).encode()


def _b19_index(folder: Path, rel: str) -> tuple[list[object], list[object], tuple[object, ...]]:
    """Every stored row, the stored pieces and the file's stored facts, from a fresh in-memory index."""
    with index_module.Index.open(folder, in_memory=True) as index:
        index.refresh([(rel, folder / rel)])
        stored = index._stored(rel)
        assert stored is not None
        return (index.rows(rel), index.pieces(rel),
                (stored.file_type, stored.title, stored.incremental, stored.size, stored.digest))


def test_b19_the_full_index_of_many_small_containers_holds_no_tree(tmp_path):
    """B19: a typed file is indexed a window of about ``WINDOW_CHARS`` at a time, each window's tree and rows
    freed before the next, and the file's bytes freed once decoded.  Before: the whole file's tree, its split
    points (a tuple of header lines each) and every row were alive at once, 50x the file."""
    rel = "notes[ext_memory].md"
    data = _b19_memory(4_000)
    (tmp_path / rel).write_bytes(data)
    windowed: list[bool] = []
    real = index_module.Index._windowed

    def spy(self, *args):
        windowed.append(real(self, *args))
        return windowed[-1]

    def build():
        with index_module.Index.open(tmp_path, in_memory=True) as index:
            index.refresh([(rel, tmp_path / rel)])
            return index.con.execute("SELECT count(*) FROM entries").fetchone()[0]

    index_module.Index._windowed = spy
    try:
        peak, count = _peak(build)
    finally:
        index_module.Index._windowed = real
    assert windowed == [True] and count == 4 * 4_000  # a topic, its sub-topic, its entry, its zone's text
    assert peak <= 6 * len(data), peak / len(data)


def _b19_files() -> list[tuple[str, bytes]]:
    """The repository's Markdown files and generated ones: many zones, entries, nested topics, one long entry,
    a refused header in a journal, text between zones, an unclosed zone, an untyped file."""
    root = Path(__file__).resolve().parents[2]
    found = [(str(p.relative_to(root)), p.read_bytes()) for base in ("tests/fixtures", "examples")
             for p in sorted((root / base).rglob("*.md"))]
    head = "# Note — perché [external_memory]\n\n"
    made = {
        "zones": head + "[P5]\nnota — 東京\n[/P5]\n" * 300,
        "entries": head + "[P4]\n" + "".join(f"###### LOG: 2026-01-03 — voce {i}\ncorpo perché\n\n"
                                              for i in range(300)) + "[/P4]\n",
        "nested": _b19_memory(60).decode(),
        "long": head + "[P4]\n###### LOG: 2026-01-02 — lunga\n" + "- voce — 東京\n" * 2_000 + "[/P4]\n",
        "refused": head + "[P4]\n" + "".join(f"## TOPIC: rifiutato {i}\n###### LOG: 2026-01-03 — voce {i}\nx\n"
                                              for i in range(200)) + "[/P4]\n",
        "between": head + "".join(f"testo {i} — perché\n\n[P3]\nproposta — 東京\n[/P3]\n\n" for i in range(200)),
        "unclosed": head + "[P5]\nnota\n[/P5]\n" * 200 + "[P4]\n###### LOG: 2026-01-03 — aperta\nx\n",
        "untyped": "# Senza tipo — 東京\n\n" + "[P5]\nnota\n[/P5]\n" * 200,
    }
    return found + [(f"generated/{name}[ext_memory].md", text.encode()) for name, text in made.items()]


@pytest.mark.parametrize("window", [64, 4_096, None])
def test_b19_a_windowed_index_is_the_index_of_the_whole_parse(tmp_path, monkeypatch, window):
    """B19: the rows (line, kind, container, zone, date, title, body, context), the pieces a refresh cuts at and
    the search answers of a windowed index are those of the whole file's parse, at windows of 64 characters (a
    cut at nearly every split point, and cuts that fail and are moved on), 4 KiB and the default."""
    if window is not None:
        monkeypatch.setattr(index_module, "WINDOW_CHARS", window)
    real = index_module.Index._windowed
    taken: dict[str, bool] = {}
    for number, (name, data) in enumerate(_b19_files()):
        folder = tmp_path / str(number)
        folder.mkdir()
        rel = Path(name).name
        (folder / rel).write_bytes(data)

        def spy(self, *args, name=name):
            taken[name] = real(self, *args)
            return taken[name]

        results: list[object] = []
        for whole in (False, True):
            monkeypatch.setattr(index_module.Index, "_windowed", (lambda self, *args: False) if whole else spy)
            answers = [search(folder, q, in_memory=True, limit=50).hits for q in ("perché", "東京", "voce", "nota")]
            results.append((_b19_index(folder, rel), answers))
        monkeypatch.setattr(index_module.Index, "_windowed", real)
        assert results[0] == results[1], name
    generated = {name.split("/")[1].split("[")[0]: used for name, used in taken.items() if name.startswith("generated/")}
    # an unclosed zone (a structural error) and a file of no type are parsed whole; the others are cut
    assert generated == {"zones": True, "entries": True, "nested": True, "long": True, "refused": True,
                         "between": True, "unclosed": False, "untyped": False}, generated


def test_b19_a_long_body_is_handed_to_sqlite_as_its_bytes_and_stored_as_the_same_text(tmp_path):
    """B19: a body longer than ``LONG_TEXT`` that is not ASCII is encoded a slice at a time and stored through
    ``CAST(? AS TEXT)``: the stored value is text, equal to the row the parse gives, and the insert holds no
    buffer of three bytes per character (the sqlite3 module's encoding of the whole string); its CJK characters
    are segmented a slice at a time.  Before: 16x the file (a piece of the substitution per CJK character)."""
    from zonemark.search.rows import rows_of

    rel = "notes[ext_memory].md"
    text = ("# Note — perché [external_memory]\n\n[P4]\n###### LOG: 2026-01-02 — lunga\n"
            + "riga — perché 東京 " * 40_000 + "\n[/P4]\n")
    (tmp_path / rel).write_text(text, encoding="utf-8")
    expected = [r.body for r in rows_of(parse(text, tree=True)) if r.kind == "entry"]
    assert len(expected[0]) > index_module.LONG_TEXT and not expected[0].isascii()
    assert isinstance(index_module._bound(expected[0]), bytes)
    with index_module.Index.open(tmp_path, in_memory=True) as index:
        peak, _ = _peak(index.refresh, [(rel, tmp_path / rel)])
        stored = index.con.execute("SELECT typeof(body), body FROM fts WHERE length(body) > ?",
                                   (index_module.LONG_TEXT,)).fetchall()
    assert stored == [("text", expected[0])]
    assert peak <= 7 * len(text.encode()), peak / len(text.encode())

# -- B22: a proposal's re-check, read_container's address -----------------------------------------------------

_B22_HEAD = "# Note — perché 東京 [external_memory]\n\n[P1]\n## TOPIC: Alpha\n[/P1]\n\n[P3]\nNota — 東京.\n[/P3]\n\n"


def _same_name(n: int) -> str:
    """``n`` topics of one name (a DUPLICATE_CONTAINER_NAME each), each with an entry, after a [P3] at line 7."""
    return _B22_HEAD + "".join("[P1]\n## TOPIC: Same\n[/P1]\n\n[P4]\n###### LOG: 2026-01-03 — x\ny perché\n[/P4]\n\n"
                               for _ in range(n))


def test_b22_a_proposal_parses_the_new_text_holding_no_old_diagnostic_nor_index(tmp_path, monkeypatch):
    """While the new text is parsed, the re-check held every diagnostic of the file's parse (1,999 here), the
    file's zone index (the snapshot's and the kept one) and the new bytes; now four integers per diagnostic and
    the zones' levels and lines."""
    import gc

    from zonemark.core.diagnostics import Diagnostic
    from zonemark.writer import Store, propose
    from zonemark.writer import proposals as proposals_module
    from zonemark.writer.locate import ZoneIndex

    path = tmp_path / "note[ext_memory].md"
    path.write_text(_same_name(2_000), encoding="utf-8")
    seen: list[tuple[int, int]] = []
    real = proposals_module.parse

    def alive() -> tuple[int, int]:  # Diagnostic and ZoneIndex objects alive (other tests' may be, too)
        gc.collect()
        objects = gc.get_objects()
        return sum(type(o) is Diagnostic for o in objects), sum(type(o) is ZoneIndex for o in objects)

    def counting(text: str, **kwargs: object):  # type: ignore[no-untyped-def]
        seen.append(alive())
        return real(text, **kwargs)  # type: ignore[arg-type]
    monkeypatch.setattr(proposals_module, "parse", counting)
    before = alive()
    proposal = propose(path, 7, "Nuova — 東京.", reason="una nota — perché", store=Store(fsync=False))
    assert proposal.would_add == () and "+Nuova — 東京." in proposal.diff
    assert seen == [before], (seen, before)  # before B22: 1,999 more diagnostics and one more index


def test_b22_a_proposal_peaks_under_9x_the_file(tmp_path):
    """4,000 nested topic groups (a text of two bytes a character, as 東京 makes it): the proposal peaked at 11.3x
    the file (the old parse's index built beside its working state, then the old diagnostics, the index, the new
    bytes and the zones after beside the new parse); now 7.9x."""
    from zonemark.writer import Store, propose

    path = tmp_path / "note[ext_memory].md"
    path.write_text(_B22_HEAD + _topic_groups(4_000).split("\n\n", 1)[1], encoding="utf-8")
    size = path.stat().st_size
    peak, proposal = _peak(lambda: propose(path, 7, "Nuova — 東京.", reason="una nota — perché",
                                           store=Store(fsync=False)))
    assert proposal.zone_line == 7 and proposal.would_add == ()
    assert peak <= 9 * size, peak / size


def _added_before_b22(before, after, edit):  # type: ignore[no-untyped-def]
    """The old re-check's comparison (writer.verify.added_diagnostics, a Counter of every old key)."""
    from zonemark.writer.verify import added_diagnostics

    return added_diagnostics(before, after, edit)


def test_b22_added_to_gives_what_added_diagnostics_gives():
    """The new diagnostics from the old ones' keys, walked a line at a time, are those of the Counter of every key,
    in order: on random diagnostics (lines, columns, related lines, in and around the edited region), sorted as the
    parser sorts them and not."""
    from zonemark.core.diagnostics import Diagnostic, Severity
    from zonemark.writer.verify import DiagnosticKeys, Edit, added_to

    rng = random.Random(22)
    codes = ("DUPLICATE_CONTAINER_NAME", "LIST_INDENT", "UNCLOSED_FENCE")
    for trial in range(400):
        edit = Edit(0, 5, 7, rng.randint(1, 30), rng.randint(0, 4), rng.randint(0, 4))  # type: ignore[arg-type]

        def diags(count: int, trial: int = trial) -> list[Diagnostic]:
            out = [Diagnostic(code=rng.choice(codes), severity=Severity.WARNING, line=rng.randint(1, 40),
                              column=rng.randint(1, 3), message="perché — 東京",
                              related_line=rng.choice((None, rng.randint(1, 40))))
                   for _ in range(count)]
            return out if trial % 5 == 0 else sorted(out, key=lambda d: (d.line, d.column))
        before, after = diags(rng.randint(0, 30)), diags(rng.randint(0, 30))
        assert added_to(DiagnosticKeys.of(before), after, edit) == _added_before_b22(before, after, edit), trial


def _verdict_before_b22(path: Path, data: bytes, zone, new_inner: bytes):  # type: ignore[no-untyped-def]
    """The re-check of a proposal as it was: one parse of the file and its index, the diagnostics compared by a
    Counter, the zones after collected and compared with the index's."""
    from zonemark.core.text import decode
    from zonemark.writer.locate import ZoneIndex
    from zonemark.writer.offsets import chars_before
    from zonemark.writer.verify import Edit, user_verdict

    doc, index = ZoneIndex.parse(decode(data), str(path))
    old_inner = data[zone.inner_start:zone.close_start]
    new_data = data[:zone.inner_start] + new_inner + data[zone.close_start:]
    edit = Edit(chars_before(data, zone.inner_start), len(decode(old_inner)), len(decode(new_inner)), zone.line + 1,
                old_inner.count(b"\n"), new_inner.count(b"\n"))
    after: list[tuple[int, int]] = []
    new_doc = parse(decode(new_data), path=str(path), on_zone=lambda f: after.append((f.plevel, f.line)))
    found = tuple(_added_before_b22(doc.diagnostics, new_doc.diagnostics, edit))
    same = after == [(level, edit.map_line(line)) for level, line in zip(index.zones.level, index.z_line)]
    return user_verdict(found, True), () if same else ("the zones of the file would change",), found


_B22_CONTENTS = ("Nuova nota — 東京.\n", "", "## TOPIC: Nuovo — perché\n", "- uno\n   - due\n", "```\naperto\n",
                 "[/P3]\n\n[P5]\naltro\n", "###### LOG: 2026-01-01 — x\ncorpo\n", "<!-- aperto\n")


def _b22_files() -> list[Path]:
    root = Path(__file__).resolve().parents[2]
    return sorted(p for p in [*(root / "tests" / "fixtures").rglob("*.md"), *(root / "examples").rglob("*.md")])


def test_b22_the_recheck_of_a_proposal_answers_as_before_on_the_fixtures_and_generated_files():
    """Every closed zone of every fixture and example, and of generated files, given contents that add warnings,
    errors, a fence or a comment left open, a closing tag: the verdict, the zones' problem and every diagnostic it
    adds are the old re-check's; and the index from the parse and a scan of its own is the one of the parse's own
    scan."""
    from zonemark.writer.locate import ZoneIndex
    from zonemark.writer.proposals import _verdict
    from zonemark.writer.snapshot import FileSnapshot

    files = [(p, p.read_bytes()) for p in _b22_files()]
    files += [(Path("gen[ext_memory].md"), t.encode()) for t in (_same_name(30), _B22_HEAD + _entries(40),
                                                                 _topic_groups(20))]
    checked = 0
    for path, data in files:
        snap = FileSnapshot(path, data)
        index = snap.full_index
        old = ZoneIndex.parse(snap.text, str(path))[1]
        assert [index.zone(i) for i in range(len(index))] == [old.zone(i) for i in range(len(old))], path
        assert list(index.headers) == list(old.headers) and index.h_line == old.h_line, path
        assert (index.h_start, index.global_first, index.file_type, index.title) == (
            old.h_start, old.global_first, old.file_type, old.title), path
        zones = [index.zone(i) for i in range(len(index))]
        for zone in zones[:6]:
            if zone.close_start is None or zone.inline:
                continue
            for content in _B22_CONTENTS:
                new_inner = content.encode()
                got = _verdict(FileSnapshot(path, data), new_inner, zone)
                assert got == _verdict_before_b22(path, data, zone, new_inner), (path, zone.line, content)
                checked += 1
    assert checked > 500


def test_b22_read_container_builds_no_zone_index_and_answers_as_before(tmp_path):
    """read_container found the container's line in the file's whole zone index, built and kept beside the scan of
    its entries (3x the file for deep headers): 9.7x the file at its peak; 7.4x now, in an index of the headers alone, dropped at once, and the line
    is kept for the pages that follow.  The answers are those of the whole index's line."""
    from zonemark.mcp.server import read_container, tool_context
    from zonemark.writer.locate import ZoneIndex, resolve_container

    folder, size = _b16_layer(tmp_path / "l", _topic_groups(4_000))
    ctx = tool_context(folder)
    used, answer = _peak(lambda: read_container(ctx, file="notes[ext_memory].md", container="T3999/A/B"))
    assert answer["container"]["name"] == "B" and ctx.indexes == {}
    assert used <= 8.5 * size, used / size  # before: 9.7x; now 7.4x
    doc = ctx.cache.document(folder / "notes[ext_memory].md")
    for address in ("T0", "T17/A", "T3999/A/B/C — perché", "T12/A/B/#1"):
        whole = ZoneIndex.build(doc)
        assert ctx.container_line(doc, address) == whole.header_line(resolve_container(whole, address)), address
    for bad in ("T4000", "T1/Z"):
        with pytest.raises(Exception) as refused:
            read_container(ctx, file="notes[ext_memory].md", container=bad)
        assert "UNKNOWN_CONTAINER" in str(refused.value) or "no container" in str(refused.value), bad


def test_b19_an_index_no_cache_keeps_is_sqlites_temporary_database(tmp_path):
    """``in_memory`` (and a folder that cannot hold a cache) index in SQLite's private temporary database, whose
    pages past the page cache spill to a file SQLite deletes: ``":memory:"`` held the whole index in RAM."""
    from zonemark.search import index as index_module

    (tmp_path / "note[ext_memory].md").write_text(
        "# Note [external_memory]\n\n[P4]\n###### LOG: 2026-01-03 — voce\nperché 東京\n[/P4]\n", encoding="utf-8")
    with index_module.Index.open(tmp_path, in_memory=True) as index:
        assert index.cache is None
        assert [row[2] for row in index.con.execute("PRAGMA database_list")] == [""]  # no file of its own
        assert index.con.execute("PRAGMA journal_mode").fetchone()[0] != "memory"  # ':memory:' answers "memory"
        assert index.con.execute("PRAGMA temp_store").fetchone()[0] in (0, 1)  # the default: a file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["note[ext_memory].md"]

# -- B24: a proposal reads the zone at its line and the zones' levels, not the zone index ---------------------

_B24_GENERATED = (
    _same_name(30), _topic_groups(12), _entries(20),
    "# Note — 東京 [external_memory]\n\n[P1]\n## TOPIC: Alpha — perché\n[/P1]\n\n[P3] inline — 東京\n\n[P3]\nuno\n",
    "# Note [external_memory]\r\n\r\n[P1]\r\n## TOPIC: Viaggi\r\n### SUBTOPIC1: Roma — perché\r\n[/P1]\r\n\r\n"
    "[P3]\r\nNota 東京\r\n[/P3]\r\n\r\n[P5]\r\naltro\r\n[/P5]\r\n",
    "# Modulo — perché [reminder]\n\n[P1]\n## MODULE 042: NOME\n### FUNCTION\nx\n[/P1]\n\n[P3]\n\n\n[/P3]\n"
    "\n[P4]\n###### LOG: 2026-01-01 — a\nb\n[/P4]\n[P5]\n[/P5]\n",
)


def _b24_files() -> list[tuple[Path, bytes]]:
    files = [(p, p.read_bytes()) for p in _b22_files()]
    return files + [(Path(f"gen{k}[ext_memory].md"), t.encode()) for k, t in enumerate(_B24_GENERATED)]


def test_b24_the_sketch_at_every_line_is_what_the_zone_index_gives():
    """At every line of every fixture and example and of generated files (CR LF, inline and unclosed zones, nested
    topics, a module), the sketch read in the parse's own scan holds the zone ``zone_at_line`` gives, its
    container's lines, its owner's name and every zone's level and line, as the full zone index has them; the
    diagnostics' keys are the parse's."""
    from zonemark.core.text import decode
    from zonemark.writer.locate import SketchReader, ZoneIndex, ZoneSketch
    from zonemark.writer.snapshot import FileSnapshot
    from zonemark.writer.verify import DiagnosticKeys

    checked = 0
    for path, data in _b24_files():
        text = decode(data)
        doc, index = ZoneIndex.parse(text, str(path))
        lines = range(0, text.count("\n") + 3)
        readers = [SketchReader(text, line) for line in lines]
        parse(text, on_header=lambda f, rs=readers: [r.header_frame(f) for r in rs],
              on_zone=lambda f, rs=readers: [r.zone_frame(f) for r in rs])
        for line, reader in zip(lines, readers):
            got, want = reader.finish(), ZoneSketch.of_index(index, line)
            assert (got.zone, got.context, got.owner_name) == (want.zone, want.context, want.owner_name), (path, line)
            assert list(got.levels) == list(index.zones.level) and list(got.lines) == list(index.z_line), path
            checked += got.zone is not None
        keys, sketch = FileSnapshot(path, data).sketch(7)
        old = DiagnosticKeys.of(doc.diagnostics)
        assert keys.codes == old.codes and sketch == ZoneSketch.of_index(index, 7), path
        assert [list(c) for c in (keys.code, keys.line, keys.column, keys.related)] == [
            list(c) for c in (old.code, old.line, old.column, old.related)], path
    assert checked > 2_000


def _plan_before_b24(path: Path, data: bytes, line: int, content: str):  # type: ignore[no-untyped-def]
    """plan_proposal of a zone line as it was: the file's whole zone index, the B22 re-check, the splice copied."""
    from zonemark.core.text import encode, printable
    from zonemark.writer.locate import container_lines, zone_hash
    from zonemark.writer.proposals import ProposalPlan, _content_for, _zone_for_target
    from zonemark.writer.refusals import RefusedWrite
    from zonemark.writer.snapshot import FileSnapshot

    snap = FileSnapshot(path, data)
    snap.refuse_not_utf8()
    index = snap.full_index
    zone = _zone_for_target(index, line)
    if zone.close_start is None or zone.inline:
        raise RefusedWrite("unclosed or inline", code="UNCLOSED_ZONE" if zone.close_start is None else "INLINE_ZONE")
    inner = _content_for(content, data, zone)
    new_inner = encode(inner)
    if new_inner == data[zone.inner_start:zone.close_start]:
        raise RefusedWrite("no change", code="NO_CHANGE")
    verdict, problems, found = _verdict_before_b22(path, data, zone, new_inner)
    would_add = tuple(printable(d.format()) for d in found) + verdict.problems + problems
    return ProposalPlan(zone, container_lines(index, zone), zone_hash(data, zone), inner,
                        data[:zone.inner_start] + new_inner + data[zone.close_start:], would_add)


def test_b24_a_proposal_to_a_zone_line_plans_as_before_on_the_fixtures_and_generated_files():
    """The lines of the first zones (their opening, inner and next lines) of every fixture, example and generated file, with contents that add
    warnings, change the zones or change nothing: the same plan (zone, context, hash, content, new bytes, what it
    would add) or the same refusal as the zone index and the re-check before B24 gave."""
    from zonemark.writer.proposals import plan_proposal
    from zonemark.writer.refusals import RefusedWrite
    from zonemark.writer.snapshot import FileSnapshot

    checked = 0
    for path, data in _b24_files():
        index = FileSnapshot(path, data).full_index
        zones = [index.zone(i) for i in range(min(len(index), 8))]
        lines = {0, 1, 2, data.count(b"\n") + 2, *(z.line for z in zones), *(z.line + 1 for z in zones),
                 *(z.close_line + 1 for z in zones if z.close_line is not None)}
        for line in sorted(lines):
            for content in (*_B22_CONTENTS[:5], "Nota — 東京.", "uno\n"):
                try:
                    want = _plan_before_b24(path, data, line, content)
                except RefusedWrite as exc:
                    with pytest.raises(RefusedWrite) as refused:
                        plan_proposal(FileSnapshot(path, data), line, content)
                    assert refused.value.code == exc.code, (path, line, content)
                    if exc.code in ("NO_ZONE", "CONTENT_REFUSED", "FILE_NOT_UTF8"):
                        assert str(refused.value) == str(exc), (path, line, content)
                    continue
                assert plan_proposal(FileSnapshot(path, data), line, content) == want, (path, line, content)
                checked += 1
    assert checked > 400


def test_b24_apply_plans_as_the_zone_index_plans_it(tmp_path, monkeypatch):
    """apply_proposal reads the proposal's zone from the sketch at its line; the plan (new bytes, result, verdict,
    where) is the one the zone index gives (the way a zone that moved is still found), and a stale proposal is
    refused the same way."""
    from zonemark.writer import Store, propose
    from zonemark.writer.locate import ZoneSketch
    from zonemark.writer.proposals import plan_apply
    from zonemark.writer.refusals import RefusedWrite
    from zonemark.writer.snapshot import FileSnapshot

    def by_index(snap: FileSnapshot, proposal):  # type: ignore[no-untyped-def]
        with monkeypatch.context() as m:  # no zone in the sketch: the zone index is read, as before B24
            m.setattr(FileSnapshot, "sketch", lambda self, line: (
                self.diagnostic_keys, ZoneSketch(bytearray(), ZoneSketch.of_index(self.full_index, 0).lines,
                                                 None, (), None)))
            return plan_apply(snap, proposal)

    store, checked = Store(fsync=False), 0
    for k, (source, data) in enumerate(_b24_files()[-len(_B24_GENERATED):] + _b24_files()[:12]):
        path = tmp_path / f"n{k}" / source.name
        path.parent.mkdir()
        path.write_bytes(data)
        snap = FileSnapshot(path, data)
        zones = [snap.full_index.zone(i) for i in range(len(snap.full_index))]
        for zone in [z for z in zones if z.close_start is not None and not z.inline][:4]:
            for content in ("Nuova nota — 東京.", "## TOPIC: Nuovo — perché\n"):
                try:
                    proposal = propose(path, zone.line, content, reason="una nota — perché", store=store)
                except RefusedWrite:
                    continue
                for now in (data, data.replace(b"\n", b"\n\n", 1), data + b"\n[P5]\nin fondo\n[/P5]\n"):
                    try:
                        want = by_index(FileSnapshot(path, now), proposal)
                    except RefusedWrite as exc:
                        with pytest.raises(RefusedWrite) as refused:
                            plan_apply(FileSnapshot(path, now), proposal)
                        assert (refused.value.code, str(refused.value)) == (exc.code, str(exc))
                        continue
                    assert plan_apply(FileSnapshot(path, now), proposal) == want, (path, zone.line, content)
                    checked += 1
    assert checked > 40


def test_b24_decode_pieces_is_decode(monkeypatch):
    """The pieces of a splice decoded a slice at a time give the text the whole bytes decode to, a character cut
    by a slice's end included; bytes that are not UTF-8 give None (the caller decodes them whole)."""
    from zonemark.core.text import decode
    from zonemark.writer import snapshot as snapshot_module

    data = ("Nota — perché 東京 𝄞 " * 40).encode()
    for step in (1, 2, 3, 5, 64):
        monkeypatch.setattr(snapshot_module, "DECODE_CHUNK", step)
        for cut in range(0, len(data), 7):
            for cut2 in (cut, min(cut + 5, len(data))):
                got = snapshot_module.decode_pieces((data[:cut], memoryview(data)[cut:cut2], data[cut2:]))
                assert got == decode(data), (step, cut)
        assert snapshot_module.decode_pieces((data[:5], b"\xe6", data[5:])) is None
        assert snapshot_module.decode_pieces((b"x", "東".encode()[:2])) is None  # a character cut at the end
    assert snapshot_module.decode_pieces((b"abc", b"\xff")) is None and snapshot_module.decode_pieces(()) == ""


def test_b24_a_proposal_and_its_apply_build_no_zone_index_and_peak_lower(tmp_path, monkeypatch):
    """4,000 nested topic groups (their zone index three times the file): a proposal to a zone line peaked at
    7.9x the file (the index built beside the text and the bytes) and its apply at 7.9x; now 7.0x each, and
    neither builds a zone index.  The file's diagnostics' keys are a few bytes each (32 before)."""
    from zonemark.writer import Store, apply_proposal, propose
    from zonemark.writer import snapshot as snapshot_module
    from zonemark.writer.locate import ZoneIndex

    path = tmp_path / "note[ext_memory].md"
    path.write_text(_B22_HEAD + _topic_groups(4_000).split("\n\n", 1)[1], encoding="utf-8")
    size = path.stat().st_size
    built: list[int] = []
    real_init = ZoneIndex.__init__

    def counting(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        built.append(1)
        real_init(self, *args, **kwargs)
    monkeypatch.setattr(ZoneIndex, "__init__", counting)
    snapshot_module.forget()
    peak, proposal = _peak(lambda: propose(path, 7, "Nuova — 東京.", reason="una nota — perché",
                                           store=Store(fsync=False)))
    assert proposal.zone_line == 7 and proposal.would_add == () and proposal.zone_context == ("## TOPIC: Alpha",)
    assert built == [] and peak <= 7.4 * size, (built, peak / size)  # before: an index, 7.9x; now 7.0x
    applied, result = _peak(lambda: apply_proposal(proposal.path, actor="user", store=Store(fsync=False)))
    assert result.changed and b"Nuova \xe2\x80\x94 \xe6\x9d\xb1\xe4\xba\xac." in path.read_bytes()
    assert built == [] and applied <= 7.4 * size, (built, applied / size)  # before: 7.9x; now 7.0x
    keys, _sketch = snapshot_module.FileSnapshot(path, _same_name(500).encode()).sketch(7)
    held = sum(c.itemsize * len(c) for c in (keys.code, keys.line, keys.column, keys.related))
    assert len(keys) > 0 and held <= 12 * len(keys), held / len(keys)


def test_b24_the_new_text_of_the_recheck_is_decoded_from_the_pieces_of_the_splice():
    """The re-check decodes the new text from the file's bytes and the zone's new inner bytes a slice at a time:
    the same text as the splice decoded whole, with no copy of the file's bytes held for it (the splice and the
    decoder's buffer of a byte a character were two more blocks of the file's size)."""
    from zonemark.core.text import decode
    from zonemark.writer.locate import ZoneIndex
    from zonemark.writer.proposals import _spliced, _spliced_text

    text = _same_name(3_000)
    data = text.encode()
    zone = ZoneIndex.parse(text)[1].zone_at_line(7)
    assert zone is not None
    for inner in ("Nuova — 東京 𝄞.\n".encode(), b"", "perch\udce9\n".encode("utf-8", "surrogateescape")):
        before, want = _peak(lambda b=inner: decode(_spliced(data, zone, b)))
        peak, got = _peak(_spliced_text, data, zone, inner)
        assert got == want
        if b"\xe9" not in inner:  # UTF-8 (a splice that is not is decoded whole, as before)
            assert peak < 0.97 * before, (peak / len(data), before / len(data))  # 4.0x -> 3.9x, 7.0x -> 5.8x
    assert _spliced(data, zone, b"x\n") == data[:zone.inner_start] + b"x\n" + data[zone.close_start:]


def _b25_ingest_case(tmp_path, family):
    """The bench's ingest case of ``family`` at its largest N: the layer, the chat text and the call."""
    import bench_worst_case as bench
    from zonemark.interchange.ingest import ingest

    n = bench.fitting("ingest", family, bench.FAMILIES[family][1])[0] * 10
    _, bulk = bench.build(tmp_path / "case", family, n)
    text = bulk.read_text(encoding="utf-8")
    reminder = tmp_path / "case" / "aria[reminder].md"
    ingest(reminder, "001", text[:2000], dry_run=True, today="2026-02-01")  # imports and caches warmed
    return text, lambda: ingest(reminder, "001", text, dry_run=True, today="2026-02-01")


@pytest.mark.parametrize("family, bound", [("entries", 24.0), ("same-name", 10.5)])
def test_b25_ingest_holds_no_chain_of_objects_per_entry(tmp_path, family, bound):
    """``ingest`` of 3,000 entries holds the extraction and the report as columns, the writer's keys as digests let
    go of once checked, and the re-check's new parse without the inserted entries' blocks: before B25 the peak
    (tracemalloc) was 45x the chat text on entries and 18.7x on same-name."""
    text, call = _b25_ingest_case(tmp_path, family)
    used, result = _peak(call)
    size = len(text.encode("utf-8"))
    assert result.found == result.count("would_file") + result.count("duplicate") + result.count("refused") > 2_000
    assert used <= bound * size, used / size  # now 20.8x, 9.3x


def test_b25_ingest_answers_and_writes_what_it_did_before(tmp_path):
    """The JSON report and the bytes written of 59 ingestions (generated chats in Italian and Japanese, em dashes,
    duplicates of the file's entries and of the text's, refused dates, titles and zones, entries without a date or
    without their hashes, and the repo's chat fixtures), as the code before B25 gave them
    (``tests/fixtures/interchange/b25_golden.json``, made with ``ingest_reference.run`` at 3ad5582)."""
    import ingest_reference
    from zonemark.interchange.ingest import ingest

    golden = json.loads(ingest_reference.GOLDEN.read_text(encoding="utf-8"))
    answers = ingest_reference.run(ingest, tmp_path)
    assert answers.keys() == golden.keys()
    for name, answer in answers.items():
        assert answer == golden[name], name
    statuses = {i["status"] for a in answers.values() for i in a["report"].get("items", ())}
    assert statuses == {"filed", "would_file", "duplicate", "refused"}


def test_b25_report_columns_give_the_items(tmp_path):
    """``IngestResult.items``, ``count`` and ``to_dict`` made from the report's columns are those of the items one
    by one, the rare reasons, codes and changes in place."""
    import ingest_reference
    from zonemark.interchange.ingest import DUPLICATE, FILED, REFUSED, WOULD_FILE, ingest

    memory = tmp_path / "casa[ext_memory].md"
    memory.write_text(ingest_reference.MEMORY, encoding="utf-8")
    result = ingest(memory, "Macchina", ingest_reference.chat(3, 40), today="2026-02-01")
    items = result.items
    assert result.found == len(items) and [i.to_dict() for i in items] == result.to_dict()["items"]
    for status in (FILED, WOULD_FILE, DUPLICATE, REFUSED):
        assert result.count(status) == sum(1 for i in items if i.status == status)
    assert any(i.code for i in items) and any(i.changes for i in items)
    assert any(i.reason and "line" in i.reason for i in items if i.status == DUPLICATE)


def test_b25_digest_keys_are_equal_as_the_triples_are():
    """A duplicate key is a digest of (date, stripped title, normal body): equal exactly when those are."""
    from zonemark.writer.duplicates import entry_key, normal_body

    rnd = random.Random(25)
    parts = ("", "a", "ab", "a\n", "\n", "東京", "perché —", " a ", "\r\n", "\udcff")
    triples = [(rnd.choice((None, "2026-01-03", "2026-01-0")), "".join(rnd.choices(parts, k=2)),
                "".join(rnd.choices(parts, k=3))) for _ in range(400)]
    for a in triples:
        for b in triples[:60]:
            same = (a[0], a[1].strip(), normal_body(a[2])) == (b[0], b[1].strip(), normal_body(b[2]))
            assert (entry_key(*a) == entry_key(*b)) == same, (a, b)
    assert entry_key(None, "", "") != entry_key("", "", "")


def test_b25_the_streamed_recheck_accepts_what_the_tree_accepts():
    """The insertion re-check whose new parse leaves the inserted entries' blocks out of its tree
    (:class:`verify.Taken`) accepts exactly the insertions the re-check on the whole tree accepts — entries, and
    inserts with headers, rules, anchors, zones, fences and lists in them — and holds less while it parses."""
    from dataclasses import replace

    from zonemark.writer import verify
    from zonemark.writer.offsets import CharOffset
    from zonemark.writer.locate import resolve_container
    from zonemark.writer.snapshot import FileSnapshot

    memory = ("# Casa — perché [external_memory]\n\n[P1]\n## TOPIC: Macchina\n[/P1]\n\n[P4]\n"
              "###### LOG: 2026-09-06 — Tagliando\nOlio — sì.\n\n[/P4]\n")
    snap = FileSnapshot("casa[ext_memory].md", memory.encode("utf-8"))
    index = snap.index
    zone = index.zone(1)
    data = snap.data
    at = data.index(b"\n\n[/P4]") + 1
    line = data.count(b"\n", 0, at) + 1
    owner = resolve_container(index, "Macchina")
    pieces = ("###### LOG: 2026-01-03 — voce {i}\nperché 東京\n", "###### LOG: 2026-01-03 — x\n- a\n  - b\n",
              "###### LOG: 2026-01-03 — y\n## TOPIC: Nuovo\n", "###### LOG: 2026-01-03 — z\n* R1: regola\n",
              "###### LOG: 2026-01-03 — w\n> [!WARNING] attenzione\n", "###### LOG: 2026-01-03 — f\n```\n[/P4]\n",
              "###### LOG: 2026-01-03 — g\n[P5]\n", "###### LOG: 2026-01-03 — h\n##### SUBTOPIC4: no\n",
              "###### LOG: 2026-01-03 — k\n###### entry senza LOG\n", "###### LOG: 2026-02-30 — data\n")
    rnd = random.Random(7)
    seen = set()
    for trial in range(120):
        parts = [rnd.choice(pieces[:2] if trial % 3 else pieces).format(i=k) for k in range(rnd.randint(1, 30))]
        insert = "\n".join(parts)
        expect = verify.Expect(entries=len(parts), owner_line=index.header_line(owner))
        streamed = verify.insertion_check(index, zone, data, at, insert.encode(), line, expect, owner=owner)
        opening, rest = verify._window(index, zone, data, at, insert)
        edit = verify.Edit(CharOffset(len(opening)), 0, len(insert), line, 0, insert.count("\n"))
        whole = verify.incremental_check(index, replace(zone, line=line - 1), opening + rest, opening + insert + rest,
                                         edit, expect, owner=owner)
        assert streamed == whole, insert
        seen.add(whole is None)
    assert seen == {True, False}
    insert = "\n".join(pieces[0].format(i=k) for k in range(2_000))
    expect = verify.Expect(entries=2_000, owner_line=index.header_line(owner))
    opening, rest = verify._window(index, zone, data, at, insert)
    edit = verify.Edit(CharOffset(len(opening)), 0, len(insert), line, 0, insert.count("\n"))
    insert_b = insert.encode()
    streamed_peak, accepted = _peak(lambda: verify.insertion_check(index, zone, data, at, insert_b, line, expect,
                                                                   owner=owner))
    whole_peak, also = _peak(lambda: verify.incremental_check(index, replace(zone, line=line - 1), opening + rest,
                                                              opening + insert + rest, edit, expect, owner=owner))
    assert accepted is not None and accepted == also
    assert streamed_peak * 3 <= whole_peak * 2, (streamed_peak, whole_peak)  # now 1.17 MB and 2.05 MB


# -- B23: an untyped file's full index; a long row's text ------------------------------------------------------

def _b23_files() -> list[tuple[str, bytes]]:
    """B19's files, random bytes (untyped, kept bytes), a long line of Italian and Japanese text with em dashes
    (typed and untyped), an untyped file of sections with control characters."""
    rng = random.Random("b23")
    line = "perché — 東京 *c* [d] " * 9_000
    made = {
        "random": rng.randbytes(300_000),
        "random-small": rng.randbytes(5_000),
        "long-typed": ("# Nota — perché [external_memory]\n\n[P4]\n###### LOG: 2026-01-02 — lunga\n" + line
                       + "\n[/P4]\n").encode(),
        "long-untyped": ("# Senza tipo — 東京\n\n" + line + "\n\n## Sezione\n" + line + "\n").encode(),
        "sections": ("".join(f"## Sezione {i} — 東京\ntesto\x07 perché\n\n" for i in range(300))).encode(),
    }
    return _b19_files() + [(f"generated/b23-{name}[ext_memory].md", data) for name, data in made.items()]


def _b23_expected(data: bytes) -> tuple[list[object], list[object]]:
    """The rows and pieces of the previous code's whole parse: ``parse_bytes`` and the frozen rows module."""
    import search_rows_reference as reference

    doc = parse_bytes(data, tree=True)
    rows = sorted(((r.line, r.kind, r.container, r.names, r.zone, r.date, r.title, r.body, r.context)
                   for r in reference.rows_of(doc)), key=lambda r: r[0])
    pieces = [(len(text_policy.encode(doc.source[:sp.offset])), sp.line, sp.level, sp.stack)
              for sp in reference.split_points(doc, 0)]
    return rows, pieces


def test_b23_the_index_is_the_previous_whole_parse_on_every_file(tmp_path):
    """B23: the stored rows (line, kind, container, names, zone, date, title, body, context) and pieces of every
    file, untyped (parsed whole, its rows handed to SQLite a few at a time, each long body cleaned a slice at a
    time) or typed (windowed), are those of the previous code's whole parse; the hits follow from them."""
    for number, (name, data) in enumerate(_b23_files()):
        folder = tmp_path / str(number)
        folder.mkdir()
        rel = Path(name).name
        (folder / rel).write_bytes(data)
        rows, pieces, _facts = _b19_index(folder, rel)
        expected_rows, expected_pieces = _b23_expected(data)
        assert [tuple(r) for r in rows] == expected_rows, name
        assert [(s, ln, lv, tuple(st)) for s, ln, lv, st in pieces] == expected_pieces, name
        hits = search(folder, "perché", in_memory=True, limit=50).hits
        assert all(h.line in {r[0] for r in expected_rows} for h in hits), name


def test_b23_the_index_of_random_bytes_peaks_at_a_few_times_the_file(tmp_path):
    """B23: an untyped file of random bytes (a kept byte every other character, its text four bytes a character)
    is parsed from its text, not encoded again, and its rows reach SQLite a few at a time, each body cleaned and
    encoded a slice at a time.  Before: 26x the file (every row listed, and each body's bytes escaped at once,
    a piece per byte); the rest is the decoding of the file (its text at four bytes a character)."""
    rel = "notes[ext_memory].md"
    data = random.Random("b23-peak").randbytes(2_000_000)
    (tmp_path / rel).write_bytes(data)
    with index_module.Index.open(tmp_path, in_memory=True) as index:
        peak, _ = _peak(index.refresh, [(rel, tmp_path / rel)])
        count = index.con.execute("SELECT count(*) FROM entries").fetchone()[0]
    assert count > 1
    assert peak <= 11 * len(data), peak / len(data)


def test_b23_a_long_line_without_cjk_is_indexed_without_a_copy_a_slice_at_a_time(tmp_path):
    """B23: a long body with no CJK character and nothing to clean is stored as it is: segment_cjk no longer
    joins it again a slice at a time (three copies of the line at once)."""
    from zonemark.search.rows import segment_cjk

    body = "ab *c* [d] — perché " * 20_000
    assert segment_cjk(body) is body
    rel = "notes[ext_memory].md"
    text = "# Nota — perché [external_memory]\n\n[P4]\n###### LOG: 2026-01-02 — lunga\n" + body + "\n[/P4]\n"
    (tmp_path / rel).write_text(text, encoding="utf-8")
    size = len(text.encode())
    with index_module.Index.open(tmp_path, in_memory=True) as index:
        peak, _ = _peak(index.refresh, [(rel, tmp_path / rel)])
    assert peak <= 7 * size, peak / size


def test_b23_kept_bytes_are_decoded_a_slice_at_a_time_as_the_whole(monkeypatch):
    """B23: a file that is not UTF-8 is decoded in slices cut after a line feed, the bytes freed before the
    slices are joined: the text is the whole decoding's, and the decoding peaks under 8x the file (8.5x
    before: the string grown from one to two to four bytes a character, over-allocated, beside the bytes)."""
    rng = random.Random("b23-decode")
    for size in (0, 1, 7, 300, 5_000):
        data = rng.randbytes(size) + "perché — 東京\r\n".encode() + rng.randbytes(size)
        for cut in (1, 2, 64, 1 << 20):
            monkeypatch.setattr(index_module, "DECODE_SLICE", cut)
            assert index_module._decoded([data]) == text_policy.decode(data), (size, cut)
    monkeypatch.undo()
    data = rng.randbytes(3_000_000)
    peak, text = _peak(index_module._decoded, [data])
    assert text == text_policy.decode(data)
    assert peak <= 8 * len(data), peak / len(data)


def test_b23_a_long_list_in_one_entry_counts_its_bytes_a_slice_at_a_time(tmp_path):
    """B23: the pieces' byte lengths of a window that is not ASCII are counted a slice at a time, not from a
    copy of each piece and its bytes (3x the window of one long entry of list items). Before: 9.7x."""
    rel = "notes[ext_memory].md"
    text = ("# Nota — perché [external_memory]\n\n[P4]\n###### LOG: 2026-01-02 — elenco\n"
            + "".join("- " * (50 + i % 50) + "x\n" for i in range(8_000)) + "[/P4]\n")
    (tmp_path / rel).write_text(text, encoding="utf-8")
    size = len(text.encode())
    with index_module.Index.open(tmp_path, in_memory=True) as index:
        peak, _ = _peak(index.refresh, [(rel, tmp_path / rel)])
    assert peak <= 7 * size, peak / size


def test_b23_a_windows_parse_is_freed_before_its_rows_reach_sqlite(tmp_path, monkeypatch):
    """B23: when SQLite is handed a window's rows, the window's tree and text are gone (the tuple the parse was
    unpacked from held them while SQLite copied one long entry's row): what Python holds then is the row."""
    rel = "notes[ext_memory].md"
    text = ("# Nota — perché [external_memory]\n\n[P5]\nprima — 東京\n[/P5]\n\n[P4]\n###### LOG: 2026-01-02 — elenco\n"
            + "".join("- " * (50 + i % 50) + "x\n" for i in range(8_000)) + "[/P4]\n")
    (tmp_path / rel).write_text(text, encoding="utf-8")
    size = len(text.encode())
    held: list[int] = []
    real = index_module.Index._insert_rows

    def spy(self, fid, rows):
        held.append(tracemalloc.get_traced_memory()[0])
        real(self, fid, rows)

    monkeypatch.setattr(index_module.Index, "_insert_rows", spy)
    with index_module.Index.open(tmp_path, in_memory=True) as index:
        tracemalloc.start()
        try:
            index.refresh([(rel, tmp_path / rel)])
        finally:
            tracemalloc.stop()
    assert held and max(held) <= 2 * size, max(held) / size


# -- B26: a hit's snippet reads its body a slice at a time; an untyped file that is not UTF-8 is indexed in windows --

def _b26_mixed(rng: random.Random, count: int) -> bytes:
    """An untyped file of random bytes among lines of Italian and Japanese text with em dashes, headers, zones,
    entries, fences, comments and lists (what a window may be cut next to)."""
    parts = ["# Titolo — perché\n", "## Sezione 東京\n", "testo perché — caffè\n", "\n", "### Sotto\n", "[P4]\n",
             "[/P4]\n", "###### LOG: 2026-01-02 — voce\n", "```\n", "> citazione — 東京\n", "- elenco\n", "#x\n",
             "---\n", "<!--\n", "-->\n", "## MODULE 001: ANCHOR\n", "## TOPIC: Alpha\n", "[P1]\n", "[/P1]\n",
             "1. uno\n", "===\n", "\t codice\n", "# Altro — 日本語\n"]
    chunks = [b"\xff\n"] if rng.random() < 0.3 else []
    for _ in range(count):
        chunks.append(rng.randbytes(rng.randint(1, 200)) if rng.random() < 0.3 else rng.choice(parts).encode())
    return b"".join(chunks)


def _b26_files() -> list[tuple[str, bytes]]:
    """B23's files, and untyped files that are not UTF-8: random bytes, mixed ones, a long line of Italian and
    Japanese text with em dashes behind a kept byte."""
    rng = random.Random("b26")
    line = "perché — 東京 *c* [d] caffè — notte " * 6_000
    made = {f"mixed-{k}": _b26_mixed(rng, 120) for k in range(40)}
    made["random"] = rng.randbytes(200_000)
    made["long-kept"] = ("# Senza tipo — perché\n\n" + line + "\n\n## Sezione — 東京\n" + line + "\n").encode() + b"\xfe\n"
    return _b23_files() + [(f"generated/b26-{name}[ext_memory].md", data) for name, data in made.items()]


def test_b26_an_untyped_file_not_utf8_is_indexed_in_windows_as_the_whole_parse(tmp_path, monkeypatch):
    """B26: the rows and pieces of every file are the previous code's whole parse (``parse_bytes`` and the
    frozen rows module), the untyped files that are not UTF-8 now indexed a window of bytes at a time (windows
    of 64 bytes and of 4 KiB here, so that every file is cut many times)."""
    from zonemark.search.rows import _clean

    files = _b26_files()
    used: list[bool] = []
    real = index_module.Index._untyped_windows

    def spy(self, *args):
        used.append(real(self, *args))
        return used[-1]

    monkeypatch.setattr(index_module.Index, "_untyped_windows", spy)
    for cut in (64, 1 << 12):
        monkeypatch.setattr(index_module, "DECODE_SLICE", cut)
        for number, (name, data) in enumerate(files):
            folder = tmp_path / f"{cut}-{number}"
            folder.mkdir()
            rel = Path(name).name
            (folder / rel).write_bytes(data)
            rows, pieces, facts = _b19_index(folder, rel)
            expected_rows, expected_pieces = _b23_expected(data)
            assert [tuple(r) for r in rows] == expected_rows, (cut, name)
            assert [(s, ln, lv, tuple(st)) for s, ln, lv, st in pieces] == expected_pieces, (cut, name)
            title = parse_bytes(data).title
            assert facts[1] == (None if title is None else _clean(title)), (cut, name)  # a kept byte escaped
    assert used.count(True) >= 70, used


def test_b26_random_bytes_are_never_decoded_or_parsed_whole(tmp_path, monkeypatch):
    """B26: an untyped file of random bytes is parsed a window at a time: no text given to the parser is half
    the file (before: the whole text, four bytes a character, 0.96 of the file in characters), and the index
    peaks lower (tracemalloc: 8.0x the file before, 6.8x now)."""
    rel = "notes[ext_memory].md"
    data = random.Random("b26-random").randbytes(4_000_000)
    (tmp_path / rel).write_bytes(data)
    seen: list[int] = []
    real = index_module.parse

    def spy(text, **kwargs):
        seen.append(len(text))
        return real(text, **kwargs)

    monkeypatch.setattr(index_module, "parse", spy)
    with index_module.Index.open(tmp_path, in_memory=True) as index:
        peak, _ = _peak(index.refresh, [(rel, tmp_path / rel)])
        count = index.con.execute("SELECT count(*) FROM entries").fetchone()[0]
    assert count > 1 and len(seen) > 2
    assert max(seen) * 2 < len(data), max(seen) / len(data)
    assert peak <= 7.5 * len(data), peak / len(data)


def _b26_layer(folder: Path) -> None:
    """A layer whose long entries are hits: a long line of Italian and Japanese text with em dashes (typed), and
    an untyped file that is not UTF-8 with the same lines among random bytes."""
    import os

    folder.mkdir()
    line = ("ab *c* [d] — caffè notte 東京 " * 80_000)
    (folder / "notes[ext_memory].md").write_text(
        "# Note — perché [external_memory]\n\n[P4]\n###### LOG: 2026-01-02 — lunga\n" + line + " perché fine\n"
        "[/P4]\n", encoding="utf-8")
    rng = random.Random("b26-layer")
    (folder / "misto.md").write_bytes(b"".join(rng.randbytes(300) + "\nperché — 東京 caffè\n\n".encode()
                                               for _ in range(400)))
    for p in folder.iterdir():
        os.utime(p, (1_700_000_000, 1_700_000_000))  # not racily new: a second search reads no file again


def test_b26_a_hits_long_body_is_read_a_slice_at_a_time_for_its_snippet(tmp_path):
    """B26: the snippet of a hit whose body is 2.6 MB reads the body from the index a slice at a time: the query
    holds no string of the body (before: read back whole, two bytes a character, 2x the body; now 0.75x)."""
    folder = tmp_path / "layer"
    _b26_layer(folder)
    search(folder, "perché")  # the cache is built
    body = len("ab *c* [d] — caffè notte 東京 ".encode()) * 80_000
    peak, result = _peak(lambda: search(folder, "perché", file="notes[ext_memory].md"))
    assert result.reindexed == 0 and any(h.line == 4 and "«perché»" in h.snippet for h in result.hits)
    assert peak < body, peak / body  # now 0.75x (the pieces of three passes); before 2x and more


def test_b26_snippets_and_hits_are_the_previous_codes(tmp_path, monkeypatch):
    """B26: the hits and their snippets, on the repository's files and the generated ones, are those of the
    previous code: each body read whole (``SELECT body``) and cut by the frozen snippet module."""
    import search_snippet_reference as reference

    import zonemark.search as search_package

    folder = tmp_path / "layer"
    _b26_layer(folder)
    for number, (name, data) in enumerate(_b26_files()[::3]):
        (folder / f"{number}-{Path(name).name}").write_bytes(data)
    queries = ["perché", "東京", "caffè notte", "perch*", "ab", "notte fine", "日本語", "voce"]

    def answers() -> list[object]:
        return [[(h.file, h.line, h.kind, h.snippet, h.score) for h in search(folder, q, limit=50).hits]
                for q in queries]

    new = answers()

    def whole(pieces, wanted, *, markers):
        index, rowid = pieces.func.__self__, pieces.args[0]
        body = index.con.execute("SELECT body FROM fts WHERE rowid = ?", (rowid,)).fetchone()[0]
        assert "".join(pieces()) == body
        return reference.snippet(body, wanted, markers=markers)

    monkeypatch.setattr(search_package, "snippet_of", whole)
    assert answers() == new
    assert any(len(hits) > 5 for hits in new) and any(any("«" in h[3] for h in hits) for hits in new)


def test_b26_the_streamed_snippet_is_the_whole_ones_at_every_cut():
    """B26: :func:`snippet_of` over the pieces of a text, cut anywhere (inside a token, a CJK word, a mark), is
    the frozen snippet of the whole text."""
    import search_snippet_reference as reference

    from zonemark.search.snippet import query_tokens, snippet_of

    rng = random.Random("b26-snippet")
    words = ["perché", "Perche", "caffè", "東\u200b京\u200b", "tokyo", "notte", "x1", "—", ",", "perchéx", "ab",
             "*c*", "\n", "  ", "perchè—tokyo", "日本語"]
    for _ in range(3_000):
        text = "".join(rng.choice(words) + rng.choice(["", " ", "—", "\n"]) for _ in range(rng.randint(0, 150)))
        wanted = query_tokens(rng.choice(["perché", "caffè notte", "perch*", "東京", "assente", "tokyo x1"]))
        bounds = [0, *sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randint(0, 8)))), len(text)]
        width = rng.randint(1, 30)
        pieces = [text[x:y] for x, y in zip(bounds, bounds[1:])]
        assert (snippet_of(lambda pieces=pieces: pieces, wanted, width=width)
                == reference.snippet(text, wanted, width=width)), (text, bounds)

# -- B27: a batch of entries is columns; the re-check holds the insertion once ----------------------------------

_B27_BODIES = ("perché — sì", "会議は午後三時に始まります。", "", "- uno\n- due\n  - tre", "## TOPIC: Falso\n[P4]\n[/P4]",
               "* a perché\n  > citazione — 引用\n  - b", "riga\r\naltra riga — fine", "<!-- IllAIra-Standard: v1.13 -->",
               "```\ncodice — 東京\n```", "> [!WARNING] attenzione — qui")


def _b27_batch(seed: int, n: int):
    """``n`` entries: Italian, Japanese and em-dash titles and bodies, bodies the re-check refuses (a quote in a
    list item), repeats of earlier entries, bad dates and empty titles."""
    from zonemark.writer import NewEntry
    rnd = random.Random(f"b27-{seed}")
    out: list = []
    for i in range(n):
        pick = rnd.random()
        if out and pick < 0.12:
            out.append(rnd.choice(out))
        elif pick < 0.16:
            out.append(NewEntry("2026-02-30", f"data — {i}", "x"))
        elif pick < 0.19:
            out.append(NewEntry(None, "", "senza titolo"))
        else:
            out.append(NewEntry(rnd.choice((None, "2026-10-01", "2026-11-1" + str(i % 10))),
                                rnd.choice(("voce", "東京の会議", "Gomme — invernali")) + f" {i}",
                                rnd.choice(_B27_BODIES)))
    return out


@pytest.mark.parametrize("crlf", [False, True])
def test_b27_the_batch_plan_is_the_old_plan(tmp_path, crlf):
    """The plan of a batch (new bytes, each outcome, label, zone, re-checks) is the frozen pre-B27 planner's, on LF
    and CRLF files, for each container and actor of the ingest cases, with refused runs split and bisected."""
    import append_reference
    import ingest_reference
    from zonemark.writer.append import plan_batch
    from zonemark.writer.snapshot import FileSnapshot

    memory = tmp_path / "casa[ext_memory].md"
    text = ingest_reference.MEMORY.replace("\n", "\r\n") if crlf else ingest_reference.MEMORY
    memory.write_bytes(text.encode())
    data = memory.read_bytes()
    seen = {"refused": 0, "bisected": 0, "appended": 0, "duplicate": 0}
    for seed in range(8):
        entries = _b27_batch(seed, 6 + 11 * seed)
        for container, actor in (("Macchina", "ai"), ("日記", "ai"), ("Archivio", "user"), ("Archivio", "ai")):
            answers = []
            for planner in (plan_batch, append_reference.plan_batch):
                try:
                    answers.append(planner(FileSnapshot(memory, data), container, entries, actor=actor,
                                           default_date="2026-10-01"))
                except Exception as exc:  # a refusal of the whole batch is an answer too
                    answers.append((type(exc).__name__, str(exc)))
            new, old = answers
            assert new == old, (seed, container, actor)
            if not isinstance(new, tuple):
                for o in new.outcomes:
                    seen[o.status] += 1
                seen["bisected"] += new.rechecks > 1
    assert all(seen.values()), seen  # every path was taken


def test_b27_a_batch_holds_its_entries_as_columns_and_the_insertion_once(tmp_path):
    """B27: 3,000 short entries planned into one zone.  Before: an object and a string per entry, their lines all
    split out by the version-pin test, the insertion as a string and as bytes and the new file's bytes beside the
    parse (9.6x the text under tracemalloc, with B27's parse); now the columns, the insertion once and the parse
    (5.9x)."""
    import append_reference
    import ingest_reference
    from zonemark.writer import NewEntry
    from zonemark.writer.append import plan_batch
    from zonemark.writer.snapshot import FileSnapshot

    memory = tmp_path / "casa[ext_memory].md"
    memory.write_text(ingest_reference.MEMORY, encoding="utf-8")
    data = memory.read_bytes()
    entries = [NewEntry("2026-01-03", f"voce {i} — 東京", "corpo perché") for i in range(3_000)]
    size = sum(len(f"###### LOG: {e.date} — {e.title}\n{e.body}\n".encode()) for e in entries)
    plan_batch(FileSnapshot(memory, data), "Macchina", entries[:5], default_date="2026-10-01")  # a first plan's
    # imports and caches are not this plan's
    peak, plan = _peak(lambda: plan_batch(FileSnapshot(memory, data), "Macchina", entries, default_date="2026-10-01"))
    assert plan.rechecks == 1 and {o.status for o in plan.outcomes} == {"appended"}
    assert peak <= 7 * size, peak / size
    old_peak, old = _peak(lambda: append_reference.plan_batch(FileSnapshot(memory, data), "Macchina", entries,
                                                              default_date="2026-10-01"))
    assert old == plan and old_peak > 1.4 * peak, (old_peak / size, peak / size)  # a test that can fail


def test_b27_a_pruned_parse_does_not_hold_the_headers_it_leaves_out(monkeypatch):
    """A parse whose tree leaves every entry out (``keep``) holds none of their header strings: its sharing table
    is small (``PRUNED_SHARED_MAX``), not one string per header of the text (0.5x the text, and 2.9x with the
    table of a whole parse)."""
    from zonemark.core import parser as parser_module
    from zonemark.core.scanner import SHARED_MAX

    text = "# Note [external_memory]\n\n[P4]\n" + "".join(
        f"###### LOG: 2026-01-03 — voce {i} perché — 東京\ncorpo\n\n" for i in range(4_000)) + "[/P4]\n"
    size = len(text.encode())
    pruned, _ = _peak(lambda: parse(text, tree=True, keep=lambda b: False))
    kept, doc = _peak(lambda: parse(text, tree=True))
    assert len(doc.blocks[-1].children) == 4_000  # the same text, its tree whole
    assert pruned * 3 < kept and pruned <= 1.2 * size, (pruned / size, kept / size)
    monkeypatch.setattr(parser_module, "PRUNED_SHARED_MAX", SHARED_MAX)
    whole_table, _ = _peak(lambda: parse(text, tree=True, keep=lambda b: False))
    assert whole_table > 2 * pruned, (whole_table / size, pruned / size)  # what the table held: a test that can fail


def test_b27_the_version_pin_test_reads_only_the_pin_lines():
    """``_has_version_pin`` answers as a test of every line does, on texts with pins, near-pins, carriage returns
    and non-ASCII lines."""
    from zonemark.core import syntax as sx
    from zonemark.writer.verify import _has_version_pin

    rnd = random.Random("b27-pin")
    lines = ("<!-- IllAIra-Standard: v1.13 -->", "  <!--IllAIra-Standard:v2-->  \r", "x <!-- IllAIra-Standard: v1 -->",
             "IllAIra-Standard:", "perché — 東京", "", "\r", "<!-- illaira-standard: v1 -->",
             "<!-- IllAIra-Standard: v1.13 --> dopo")
    for _ in range(3_000):
        text = "\n".join(rnd.choice(lines) for _ in range(rnd.randrange(0, 6)))
        old = any(sx.VERSION_PIN.fullmatch(ln.rstrip("\r")) for ln in text.split("\n"))
        assert _has_version_pin(text) == old, repr(text)


def test_b27_a_body_compared_drops_its_blank_lines_by_position():
    """``duplicates.normal_body`` answers as dropping the blank lines one by one did, and 200,000 leading blank
    lines are read once (popping the first line each time moved every other line: quadratic in them)."""
    from zonemark.writer.duplicates import normal_body

    def old(text: str) -> str:
        lines = text.replace("\r\n", "\n").split("\n")
        while lines and not lines[0].strip():
            lines.pop(0)
        while lines and not lines[-1].strip():
            lines.pop()
        return "\n".join(lines)

    rnd = random.Random("b27-body")
    pieces = ("", " ", "\t", "\r", "perché — 東京", "  riga", "\u3000", "x\r")
    for _ in range(3_000):
        text = rnd.choice(("\n", "\r\n")).join(rnd.choice(pieces) for _ in range(rnd.randrange(0, 7)))
        assert normal_body(text) == old(text), repr(text)
    text = "\n" * 200_000 + "corpo — 東京" + "\n" * 200_000  # the old one by one: 640 GB of moved pointers
    assert normal_body(text) == "corpo — 東京"
