"""The repository's corpus generator (bench/corpus.py): deterministic, sized, valid, realistic.

The tests and the benchmarks build their large files and layers with it, so its promises are
pinned here: same arguments give the same bytes (across processes too), a file lands at or just
above its target size, every kind parses with zero diagnostics, a layer loads with none, and
the shapes the spec asks for are there (§7.1.2/§7.1.3 pairing, §7.3.1 registry, §3.4 names).
"""

from __future__ import annotations

import collections
import datetime
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import corpus
import pytest

import zonemark
from zonemark.core.outline import headings
from zonemark.layer import Layer
from zonemark.layer.graph import build_graph

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "corpus.py"

ZONE_TAG = re.compile(r"\[(/?)P([1-5])\]")
CONTAINER = re.compile(r"(#{2,5}) (TOPIC|SUBTOPIC([1-3])): (.+)")
LOG_HEADER = re.compile(r"###### LOG: (\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2})?) — \S")


def unfenced(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line outside a code fence (and not a fence line itself)."""
    out, fence = [], False
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("```"):
            fence = not fence
        elif not fence:
            out.append((number, line))
    assert not fence, "a fence is left open"
    return out


def zones(text: str) -> list[tuple[int, int, list[str]]]:
    """(level, line of the opening tag, unfenced lines inside) of every zone, read without the parser."""
    out, current = [], None
    for number, line in unfenced(text):
        if current is not None:
            if line == f"[/P{current[0]}]":
                out.append(current)
                current = None
            else:
                current[2].append(line)
        elif ZONE_TAG.fullmatch(line):
            current = (int(line[2]), number, [])
    assert current is None, "a zone is left open"
    return out


def log_dates(text: str) -> list[str]:
    return [m.group(1) for _, line in unfenced(text) if (m := LOG_HEADER.match(line))]


def sizes_ok(text: str, target: int) -> bool:
    return target <= len(text.encode("utf-8")) <= target + corpus.MAX_OVERSHOOT


# -- determinism ------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", corpus.KINDS)
def test_same_arguments_give_the_same_text(kind):
    first = corpus.generate(kind, 40_000, seed=5)
    assert corpus.generate(kind, 40_000, seed=5) == first
    assert corpus.generate(kind, 40_000, seed=6) != first
    assert corpus.generate(kind, 41_000, seed=5) != first


def test_the_command_line_writes_the_same_bytes_in_any_process(tmp_path):
    """Two processes with different hash seeds: no set or dict-hash order leaks into the output."""
    digests = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"mixed-{hash_seed}.md"
        layer = tmp_path / f"layer-{hash_seed}"
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        for argv in (["--kind", "mixed", "--size", "30KB", "--seed", "3", "-o", str(out)],
                     ["--layer", str(layer), "--modules", "2", "--memories", "2", "--size", "20KB",
                      "--ext-size", "5KB", "--seed", "3"]):
            run = subprocess.run([sys.executable, str(SCRIPT), *argv], env=env, capture_output=True, text=True)
            assert run.returncode == 0, run.stderr
            assert run.stderr.count("\n") == 1 and run.stderr.startswith("wrote ")
        digest = hashlib.sha256(out.read_bytes())
        for path in sorted(layer.iterdir()):
            digest.update(path.name.encode() + path.read_bytes())
        digests.append(digest.hexdigest())
    assert digests[0] == digests[1]
    assert out.read_bytes() == corpus.generate("mixed", 30_000, seed=3).encode("utf-8")


def test_a_layer_is_the_same_twice(tmp_path):
    args = dict(modules=3, memories=2, reminder_size=30_000, ext_size=8_000, seed=2)
    first = corpus.generate_layer(tmp_path / "a", **args)
    second = corpus.generate_layer(tmp_path / "b", **args)
    assert [p.name for p in first] == [p.name for p in second]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(first, second))


# -- sizes and validity -----------------------------------------------------------------------

SIZES = (1_000, 1_700, 4_000, 5_999, 6_000, 12_000, 39_999, 60_000, 250_000)


@pytest.mark.parametrize("kind", corpus.KINDS)
def test_every_kind_lands_on_its_size_and_parses_clean(kind):
    for size in SIZES:
        for seed in (1, 2, 3):
            text = corpus.generate(kind, size, seed)
            assert sizes_ok(text, size), (size, seed, len(text.encode("utf-8")))
            doc = zonemark.parse(text)
            assert list(doc.diagnostics) == [], (size, seed, [d.format() for d in doc.diagnostics[:5]])
            assert doc.file_type == {"module": "external_module", "memory": "external_memory"}.get(kind, "reminder")
            assert text.endswith("\n") and not text.endswith("\n\n") and "\r" not in text


@pytest.mark.slow
@pytest.mark.parametrize("kind", corpus.KINDS)
def test_ten_megabytes_land_on_size_and_parse_clean(kind):
    text = corpus.generate(kind, 10_000_000)
    assert sizes_ok(text, 10_000_000)
    doc = zonemark.parse(text)
    assert list(doc.diagnostics) == []
    assert zonemark.serialize(doc) == text


def test_sizes_and_arguments_are_checked():
    assert corpus.parse_size("1KB") == 1_000
    assert corpus.parse_size("1.5 mb") == 1_500_000
    assert corpus.parse_size("100MB") == 100_000_000
    assert corpus.parse_size("750") == 750
    for bad in ("", "ten", "1TB", "-1KB"):
        with pytest.raises(ValueError):
            corpus.parse_size(bad)
    with pytest.raises(ValueError, match="unknown kind"):
        corpus.generate("novel", 10_000)
    with pytest.raises(ValueError, match="below"):
        corpus.generate("memory", corpus.MIN_SIZE - 1)
    with pytest.raises(TypeError):
        corpus.generate("memory", 1e6)


@pytest.mark.parametrize("argv", [["--kind", "memory", "--size", "lots", "-o", "x.md"],
                                  ["--kind", "memory", "--size", "10KB"],
                                  ["--kind", "memory", "--size", "10", "-o", "x.md"]])
def test_the_command_line_refuses_bad_arguments_in_one_line(argv, tmp_path, capsys):
    argv = [str(tmp_path / a) if a == "x.md" else a for a in argv]
    try:
        code = corpus.main(argv)
    except SystemExit as exit_info:  # argparse's own refusals
        code = exit_info.code
    assert code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("corpus: ") or ": error: " in error
    assert not list(tmp_path.iterdir())


# -- shapes -----------------------------------------------------------------------------------

def test_memory_pairs_every_container_with_its_own_journal():
    """§7.1.2/§7.1.3: one [P1]/[P2] declaration and one [P4] journal per topic and sub-topic."""
    text = corpus.generate("memory", 300_000, seed=4)
    found = zones(text)
    depths, empty_journals, journals = collections.Counter(), 0, 0
    for (level, line, body), following in zip(found, found[1:] + [None]):
        declarations = [CONTAINER.fullmatch(x) for x in body if x.startswith("#") and not x.startswith("######")]
        if level in (1, 2, 3):
            assert len(declarations) == 1 and declarations[0], (line, body)
            match = declarations[0]
            depth = 0 if match.group(2) == "TOPIC" else int(match.group(3))
            assert len(match.group(1)) == depth + 2  # the digit agrees with the depth
            depths[depth] += 1
            assert following is not None and following[0] == 4, f"container at line {line} has no journal"
        else:
            assert level == 4 and not declarations
            journals += 1
            empty_journals += body == []
    assert journals == sum(depths.values()) and set(depths) == {0, 1, 2, 3}
    assert 0 < empty_journals < journals

    # the parser agrees: each container owns exactly the entries of the journal after it
    doc = zonemark.parse(text)
    own = collections.defaultdict(list)
    openings = [line for _, line, _ in found]
    for number, line in unfenced(text):
        if line.startswith("######"):  # any H6 is a node in a memory, `######[LOG …]` too (§5.5 v1.7)
            own[max(x for x in openings if x < number)].append(number)
    containers = [n for n in doc.outline().walk() if n.keyword in ("TOPIC", "SUBTOPIC")]
    assert len(containers) == journals
    for node in containers:
        declared_in = max(x for x in openings if x < node.line)
        journal = openings[openings.index(declared_in) + 1]
        assert [e.line for e in node.entries] == own[journal], node.name
    assert sum(len(n.entries) for n in containers) > 300
    free_nodes = [x for x in text.split("\n") if x.startswith("######") and not x.startswith("###### LOG:")]
    assert free_nodes, "§5.5 v1.7: an external memory holds some H6 nodes that are not LOGs"


@pytest.mark.parametrize("kind", ["reminder", "mixed"])
def test_reminder_shape(kind):
    text = corpus.generate(kind, 200_000, seed=2)
    doc = zonemark.parse(text)
    found = zones(text)
    lines = text.split("\n")
    assert lines[0 if kind == "reminder" else 1].endswith("[reminder]")
    head = found[0][2]
    assert "## RULES:" in head and any(x.startswith("## NUCLEUS ") for x in head)
    prefixes = {re.match(r"\* ([A-Z]+)\d+: ", x).group(1) for x in head if re.match(r"\* [A-Z]+\d+: ", x)}
    assert prefixes == {"R", "C", "S"}
    # every module declaration zone is followed by its [P4] journal; the registry comes last, in [P4]
    for (level, line, body), following in zip(found, found[1:]):
        if any(x.startswith("## MODULE ") and not x.startswith("## MODULE_STATE") for x in body):
            assert level in (1, 2, 3) and following[0] == 4, line
    assert found[-1][0] == 4 and found[-1][2][0] == "## MODULE_STATE_REGISTRY:"
    assert lines[-2] == "[/P4]" and lines[-1] == ""
    assert doc.registry is not None
    # the optional constructs of the mixed kind (and only there)
    optional = {
        "version pin": lines[0] == "<!-- IllAIra-Standard: v1.13 -->",
        "sub-module": any(x.startswith("### SUB-MODULE: ") for x in lines),
        "subroutine at H5": any(x.startswith("##### SUBROUTINE: ") for x in lines),
        "[NUCLEI] on its own line": any(x.startswith("[NUCLEI: ") for x in lines),
        "free-text CONNECTIONS": any(x.startswith("Linked to MODULE ") for x in lines),
        "quote": any(x.startswith('> "') for x in lines),
        "[P5] zone": any(level == 5 for level, _, _ in found),
        "*** separator": "***" in lines,
        "fenced header lookalike": "## MODULE 999: EXAMPLE_ONLY [NUCLEI: 1]" in lines,
    }
    if kind == "mixed":
        assert all(optional.values()), optional
        assert len([h for h in headings(doc)]) < len([x for x in lines if x.startswith("#")])  # fences hold '#'
    else:
        assert not any(optional.values()), optional
        assert "---" in lines


def test_module_kind_is_an_external_module_with_its_own_nuclei():
    text = corpus.generate("module", 120_000, seed=3)
    doc = zonemark.parse(text)
    assert doc.file_type == "external_module"
    modules = [m for m in doc.modules if m.type == "module" and m.keyword is None]
    assert len(modules) >= 5
    assert all(re.fullmatch(r"[A-Z]+(_[A-Z]+)+", m.id) for m in modules)  # §7.1: alphanumeric ids
    assert all(m.assigned_nuclei for m in modules) and doc.nuclei


@pytest.mark.parametrize("kind", corpus.KINDS)
def test_prose_is_realistic(kind):
    text = corpus.generate(kind, 120_000, seed=1)
    assert re.search(r"[àèéìòù]", text), "Italian with accents"
    assert re.search(r"\b(the|and)\b", text) and re.search(r"\b(il|la|che|non)\b", text)
    logs = log_dates(text)
    assert len(logs) > 50 and sum(x.startswith("###### LOG: ") for _, x in unfenced(text)) == len(logs)
    stamps = [datetime.datetime.fromisoformat(x) for x in logs]
    assert [s.date() for s in stamps] == sorted(s.date() for s in stamps), "dates in document order"
    timed = [s for s, raw in zip(stamps, logs) if "T" in raw]
    assert timed == sorted(timed) and 0 < len(timed) < len(logs)
    assert "**" in text and "`" in text and "](https://" in text
    if kind != "memory":
        for pattern in (r"\n> \[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]\n", r"\n\*\*Type:\*\* ", r"\n  \+ \S",
                        r"\n    - \S", r"\n1\. \*\*\w+:\*\* ", r"\n### (FUNCTION|STATE|TRIGGER|CONNECTIONS)\n",
                        r"\n### ROUTINE"):
            assert re.search(pattern, text), pattern


# -- layers -----------------------------------------------------------------------------------

def test_a_layer_loads_clean_and_resolves_across_files(tmp_path):
    paths = corpus.generate_layer(tmp_path, modules=4, memories=3, reminder_size=80_000, ext_size=20_000, seed=3)
    assert sorted(paths) == sorted(tmp_path.iterdir())
    names = [p.name for p in paths]
    assert names[0].endswith("[reminder].md") and re.fullmatch(r"[a-z]+\[reminder\]\.md", names[0])
    assert sum(n.endswith("[ext_module].md") for n in names) == 4
    assert sum(n.endswith("[ext_memory].md") for n in names) == 3
    for path in paths:
        size = 80_000 if path == paths[0] else 20_000
        assert size <= path.stat().st_size <= size + corpus.MAX_OVERSHOOT, path.name
        tag = re.search(r"\[(\w+)\]\.md$", path.name).group(1)
        doc = zonemark.parse_file(path)  # §3.4: the H1 says what the name says
        assert doc.file_type == {"ext_module": "external_module", "ext_memory": "external_memory"}.get(tag, tag)
        codes = {d.code for d in doc.diagnostics}
        # documented: an external module names the reminder's nuclei, and CONNECTIONS name modules of
        # other files, unresolved when a file is read alone
        allowed = {"ext_module": {"UNRESOLVED_NUCLEUS_REFERENCE", "UNRESOLVED_CONNECTION"},
                   "reminder": {"UNRESOLVED_CONNECTION"}}.get(tag, set())
        assert codes <= allowed, (path.name, codes)

    layer = Layer.load(tmp_path)
    assert layer.all_diagnostics() == []
    assert layer.reminder == names[0]
    external_ids = {m.module_id for m in layer.modules if m.is_module and m.file != names[0]}
    assert len(external_ids) == 4
    governs = [e for e in layer.edges if e.kind == "governs" and e.file != names[0]]
    assert {e.file for e in governs} == {n for n in names if n.endswith("[ext_module].md")}
    connects = [e for e in layer.edges if e.kind == "connects"]
    assert any(e.file == names[0] and e.target in external_ids for e in connects)
    assert any(e.file != names[0] and e.target_kind == "module" and e.target not in external_ids for e in connects)
    bullets = sum(len(re.findall(r"^\* (MODULE|NUCLEUS) \S+$", p.read_text("utf-8"), re.MULTILINE)) for p in paths)
    assert len(connects) == bullets  # every CONNECTIONS bullet resolves to an edge
    registry = layer.file(names[0]).doc.registry
    assert set(registry.active + registry.inactive) & external_ids
    graph = build_graph(layer)
    assert collections.Counter(n.kind for n in graph.nodes)["entry"] > 300


def test_layer_arguments_are_checked(tmp_path):
    with pytest.raises(ValueError):
        corpus.generate_layer(tmp_path, modules=-1, memories=0, reminder_size=10_000, ext_size=10_000)
    with pytest.raises(ValueError):
        corpus.generate_layer(tmp_path, modules=1, memories=1, reminder_size=10_000, ext_size=10)
    paths = corpus.generate_layer(tmp_path / "bare", modules=0, memories=0, reminder_size=1_000, ext_size=1_000)
    assert len(paths) == 1 and Layer.load(tmp_path / "bare").all_diagnostics() == []
