"""Bounded cost on hostile input (docs/conformance.md, "Bounded cost", B1-B9).

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
