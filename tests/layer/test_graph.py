"""The layer graph: JSON node-link contract, DOT, Mermaid (§7.1.2, §7.1.3, §7.4.4, §7.6)."""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import corpus
import jsonschema
import pytest

from zonemark.layer.graph import SOURCE_CAP, GraphLink, build_graph
from zonemark.render.graph_text import to_dot, to_json, to_mermaid
from zonemark.layer import Layer

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ROOT / "tests" / "fixtures" / "layers"
EXAMPLE = ROOT / "examples" / "layer"

# The contract with the HTML page, written down as a schema.
SCHEMA = {
    "type": "object",
    "required": ["directed", "multigraph", "graph", "nodes", "links"],
    "additionalProperties": False,
    "properties": {
        "directed": {"const": True},
        "multigraph": {"const": True},
        "graph": {
            "type": "object", "additionalProperties": False,
            "required": ["name", "root", "files", "diagnostics"],
            "properties": {
                "name": {"type": "string"}, "root": {"type": "string"},
                "files": {"type": "array", "items": {"type": "string"}},
                "nodesLeftOut": {"type": "integer", "minimum": 1},  # only when some are (B18)
                "diagnosticsLeftOut": {"type": "integer", "minimum": 1},  # only when some are (B18)
                "diagnostics": {"type": "array", "items": {
                    "type": "object", "additionalProperties": False,
                    "required": ["path", "line", "column", "code", "severity", "message", "node"],
                    "properties": {"path": {"type": "string"}, "line": {"type": "integer"},
                                   "column": {"type": "integer"}, "code": {"type": "string"},
                                   "severity": {"enum": ["error", "warning"]}, "message": {"type": "string"},
                                   "node": {"type": ["string", "null"]}}}},
            },
        },
        "nodes": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["id", "kind", "label", "file", "line", "permissionLevel", "state", "permanent",
                         "moduleId", "source"],
            "properties": {
                "id": {"type": "string"},
                "kind": {"enum": ["file", "nucleus", "module", "sub_module", "topic", "subtopic", "rules", "entry"]},
                "label": {"type": "string"}, "file": {"type": "string"}, "line": {"type": "integer"},
                "permissionLevel": {"type": ["integer", "null"]},
                "state": {"enum": ["active", "inactive", None]},
                "permanent": {"type": "boolean"},
                "moduleId": {"type": ["string", "null"]},
                "source": {"type": "string", "maxLength": SOURCE_CAP},
            }}},
        "links": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["source", "target", "kind"],
            "properties": {"source": {"type": "string"}, "target": {"type": "string"},
                           "kind": {"enum": ["contains", "governs", "connects"]}}}},
        # Optional: the marks of a neural trace and the heat of recorded traces (§N.18,
        # zonemark.interchange.illuminate).
        "trace": {
            "type": "object", "additionalProperties": False,
            "required": ["file", "enabled", "lit", "warnings", "heat"],
            "properties": {
                "file": {"type": ["string", "null"]},
                "enabled": {"type": ["boolean", "null"]},
                "lit": {"type": "array", "items": {
                    "type": "object", "additionalProperties": False,
                    "required": ["step", "node", "kind", "label", "order", "state", "action", "ref"],
                    "properties": {
                        "step": {"type": "integer", "minimum": 1}, "node": {"type": ["string", "null"]},
                        "kind": {"enum": ["nucleus", "module", "memory", "entry", "topic"]},
                        "label": {"type": "string"}, "order": {"type": ["integer", "null"]},
                        "state": {"enum": ["active", "queried", "suppressed", None]},
                        "action": {"enum": ["generated", "queried", "touched", "appended", None]},
                        "ref": {"type": ["string", "null"]}}}},
                "warnings": {"type": "array", "items": {
                    "type": "object", "additionalProperties": False, "required": ["code", "message", "line"],
                    "properties": {"code": {"type": "string"}, "message": {"type": "string"},
                                   "line": {"type": "integer", "minimum": 0}}}},
                "heat": {"type": "object", "additionalProperties": False, "required": ["records", "counts"],
                         "properties": {"records": {"type": "integer", "minimum": 0},
                                        "counts": {"type": "object",
                                                   "additionalProperties": {"type": "integer", "minimum": 1}}}},
            },
        },
    },
}


def graph_of(path, **kw):
    g = build_graph(Layer.load(path, **kw))
    jsonschema.validate(g.to_dict(), SCHEMA)
    return g


def check_structure(g):
    """Ids unique, every link endpoint exists, every non-file node has exactly one container."""
    ids = [n.id for n in g.nodes]
    assert len(ids) == len(set(ids))
    known = set(ids)
    for link in g.links:
        assert link.source in known and link.target in known, link
    parents = collections.Counter(link.target for link in g.links if link.kind == "contains")
    for n in g.nodes:
        assert parents[n.id] == (0 if n.kind == "file" else 1), n.id
    for d in g.diagnostics:
        assert d.node is None or d.node in known


def node(g, node_id):
    return next(n for n in g.nodes if n.id == node_id)


def links(g, kind):
    return {(link.source, link.target) for link in g.links if link.kind == kind}


# -- the example layer --------------------------------------------------------------------

def test_example_graph_counts():
    g = graph_of(EXAMPLE)
    check_structure(g)
    kinds = collections.Counter(n.kind for n in g.nodes)
    assert kinds == {"file": 5, "nucleus": 3, "module": 6, "sub_module": 1, "topic": 4, "subtopic": 4,
                     "rules": 1, "entry": 10}
    assert g.name == "layer"
    assert g.files[0] == "aria[reminder].md"
    assert g.diagnostics == ()


def test_example_governs_and_connects():
    g = graph_of(EXAMPLE)
    assert links(g, "governs") == {
        ("module:001", "nucleus:1"), ("module:001", "nucleus:3"), ("module:002", "nucleus:1"),
        ("module:003", "nucleus:2"), ("module:CURIOSITY_ENGINE", "nucleus:1"),
        ("module:CURIOSITY_ENGINE", "nucleus:3"), ("module:EMPATHY_LAYER", "nucleus:2")}
    assert links(g, "connects") == {
        ("module:001", "module:002"), ("module:001", "nucleus:1"), ("module:002", "module:CURIOSITY_ENGINE"),
        ("module:003", "module:EMPATHY_LAYER"), ("module:003", "nucleus:2"),
        ("module:CURIOSITY_ENGINE", "module:001"), ("module:CURIOSITY_ENGINE", "module:EMPATHY_LAYER"),
        ("module:EMPATHY_LAYER", "module:003"), ("module:EMPATHY_LAYER", "module:CURIOSITY_ENGINE")}


def test_example_containment_follows_the_outline():
    g = graph_of(EXAMPLE)
    contains = links(g, "contains")
    cars = "cars[ext_memory].md"
    assert (f"file:{cars}", f"container:{cars}:4") in contains  # TOPIC Maintenance
    assert (f"container:{cars}:4", f"container:{cars}:13") in contains  # SUBTOPIC1 Tyres
    assert (f"container:{cars}:13", f"container:{cars}:22") in contains  # SUBTOPIC2 Pressures
    assert (f"container:{cars}:22", f"entry:{cars}:26") in contains  # its own entry, not the topic's
    assert (f"container:{cars}:4", f"entry:{cars}:8") in contains
    assert ("module:003", "container:aria[reminder].md:96") in contains  # SUB-MODULE
    assert ("file:aria[reminder].md", "nucleus:2") in contains
    assert ("module:001", "entry:aria[reminder].md:60") in contains  # the log in its [P4] journal


def test_example_node_fields():
    g = graph_of(EXAMPLE)
    anchor = node(g, "module:001")
    assert (anchor.state, anchor.permanent, anchor.permission_level, anchor.module_id) == \
        ("active", True, 1, "001")
    assert node(g, "module:002").state == "active"  # registry ACTIVE over declared inactive
    assert node(g, "module:EMPATHY_LAYER").state == "inactive"
    topic = node(g, "container:cars[ext_memory].md:4")
    assert (topic.kind, topic.label, topic.module_id, topic.state) == \
        ("topic", "TOPIC: Maintenance", "~T1", None)
    sub = node(g, "container:cars[ext_memory].md:22")
    assert (sub.kind, sub.label) == ("subtopic", "SUBTOPIC2: Pressures")
    entry = node(g, "entry:cars[ext_memory].md:26")
    assert (entry.kind, entry.permission_level, entry.file) == ("entry", 4, "cars[ext_memory].md")
    assert entry.label == "2026-09-06 measured cold"
    assert node(g, "entry:journal[ext_memory].md:20").label == "Nota personale"  # any H6 in a memory
    assert entry.source.startswith("###### LOG: 2026-09-06 — measured cold\n2.4 front")
    assert node(g, "file:cars[ext_memory].md").label == "Cars"
    assert node(g, "container:aria[reminder].md:8").kind == "rules"


def test_source_is_the_node_own_text():
    g = graph_of(EXAMPLE)
    src = node(g, "module:003").source
    assert src.startswith("## MODULE 003: MOOD_MIRROR [NUCLEI: 2]\n")
    assert "### STATE\nactive" in src and "### CONNECTIONS\n* MODULE EMPATHY_LAYER" in src
    assert "SHORT_MODE" not in src  # the sub-module is its own node
    assert node(g, "container:aria[reminder].md:96").source.startswith("### SUB-MODULE: SHORT_MODE\n")
    file_src = node(g, "file:aria[reminder].md").source
    assert file_src.startswith("# ARIA IDENTITY PROTOCOL [reminder]\n")
    assert "## Center of Gravity" in file_src  # a plain H2 section is not a node: it stays with the file
    assert "## MODULE_STATE_REGISTRY:" in file_src
    assert "## MODULE 001" not in file_src
    # every line of a file is in exactly one node's source
    for rel in g.files:
        text = (EXAMPLE / rel).read_text(encoding="utf-8")
        pieces = sorted((n.line, n.source) for n in g.nodes if n.file == rel)
        assert sum(len(s) for _, s in pieces) == len(text)


def test_source_is_capped(tmp_path):
    body = "\n".join(f"Line {i} of a very long module body." for i in range(400))
    (tmp_path / "big[reminder].md").write_text(
        f"# BIG [reminder]\n\n[P1]\n## MODULE 001: BIG [NUCLEI: ]\n\n### STATE\nactive\n\n{body}\n[/P1]\n",
        encoding="utf-8")
    g = graph_of(tmp_path)
    src = node(g, "module:001").source
    assert len(src) == SOURCE_CAP and src.startswith("## MODULE 001: BIG")


def test_entries_under_a_plain_section_hang_from_the_file(tmp_path):
    (tmp_path / "r[reminder].md").write_text(
        "# R [reminder]\n\n[P1]\n## Notes\nFree text.\n[/P1]\n\n[P4]\n###### LOG: 2026-01-01 — note\nText.\n[/P4]\n",
        encoding="utf-8")
    g = graph_of(tmp_path)
    check_structure(g)
    assert links(g, "contains") == {("file:r[reminder].md", "entry:r[reminder].md:9")}


def test_ignored_duplicate_is_a_container_node(tmp_path):
    (tmp_path / "r[reminder].md").write_text(
        "# R [reminder]\n\n[P1]\n## NUCLEUS 1: A\n### FUNCTION\n* a\n\n## MODULE 001: X [NUCLEI: 1]\n### STATE\n"
        "active\n[/P1]\n\n[P2]\n## MODULE 001: Y [NUCLEI: 1]\n### STATE\ninactive\n[/P2]\n", encoding="utf-8")
    g = graph_of(tmp_path)
    check_structure(g)
    dup = node(g, "container:r[reminder].md:14")
    assert dup.kind == "module" and "ignored" in dup.label and dup.module_id is None
    assert node(g, "module:001").line == 8
    assert links(g, "governs") == {("module:001", "nucleus:1")}
    diag = next(d for d in g.diagnostics if d.code == "DUPLICATE_BLOCK_CONFLICT_WARNING")
    assert diag.node == "container:r[reminder].md:14"


# -- fixture layers -----------------------------------------------------------------------

def test_rejected_file_is_a_lone_node():
    g = graph_of(LAYERS / "collision_declared")
    check_structure(g)
    rejected = "a_clash[ext_module].md"
    mine = [n for n in g.nodes if n.file == rejected]
    assert [n.kind for n in mine] == ["file"] and "not merged" in mine[0].label
    assert node(g, "module:042").file == "z_main[reminder].md"
    conflict = next(d for d in g.diagnostics if d.code == "LAYER_ID_CONFLICT")
    assert conflict.node == f"file:{rejected}" and conflict.path == rejected
    assert ("module:LISTENER", "module:042") in links(g, "connects")


def test_diagnostics_point_at_their_node():
    g = graph_of(LAYERS / "unresolved")
    by_line = {(d.path, d.line, d.code): d.node for d in g.diagnostics}
    assert by_line[("main[reminder].md", 14, "LAYER_UNRESOLVED_CONNECTION")] == "module:001"
    assert by_line[("hub[ext_module].md", 13, "LAYER_UNRESOLVED_CONNECTION")] == "module:HUB"
    g = graph_of(LAYERS / "no_reminder")
    assert [(d.path, d.node) for d in g.diagnostics if d.code == "LAYER_NO_REMINDER"] == \
        [(".", None)]


def test_temporary_ids_in_the_graph():
    g = graph_of(LAYERS / "collision_temporary")
    check_structure(g)
    assert {n.id for n in g.nodes if n.kind == "module"} == {"module:001", "module:~T1", "module:~T2",
                                                                     "module:~T3"}
    assert node(g, "module:~T1").file == "r_reserved[ext_module].md"  # the declared one keeps it
    assert links(g, "connects") == set()  # `* MODULE ~T2` draws nothing


def test_floating_hub_has_only_its_containment():
    g = graph_of(LAYERS / "floating")
    touching = [link for link in g.links if "module:LONER" in (link.source, link.target)]
    assert touching == [GraphLink("file:loner[ext_module].md", "module:LONER", "contains")]


# -- DOT and Mermaid ------------------------------------------------------------------------

def test_dot_output():
    g = graph_of(EXAMPLE)
    dot = to_dot(g)
    lines = dot.splitlines()
    assert lines[0] == 'digraph "layer" {' and lines[-1] == "}"
    assert sum(" -> " in ln for ln in lines) == len(g.links)
    assert sum(re.match(r'  "[^"]+" \[label=', ln) is not None for ln in lines) == len(g.nodes)
    assert '  "module:CURIOSITY_ENGINE" -> "nucleus:1" [color=firebrick, penwidth=2, label="governs"];' in lines


def test_dot_escapes_hostile_labels(tmp_path):
    (tmp_path / 'q"uote.md').write_text('# Say "hi" \\ there [external_memory]\n\n[P1]\n## TOPIC: a "b"\n[/P1]\n',
                                        encoding="utf-8")
    dot = to_dot(graph_of(tmp_path))
    assert '"file:q\\"uote.md" [label="Say \\"hi\\" \\\\ there"' in dot
    assert 'label="TOPIC: a \\"b\\""' in dot


def test_mermaid_output(tmp_path):
    g = graph_of(EXAMPLE)
    text = to_mermaid(g)
    lines = text.splitlines()
    assert lines[0] == "flowchart LR"
    arrows = [ln for ln in lines if re.match(r"  n\d+ (-->|==>\|governs\||-\.->\|connects\|) n\d+$", ln)]
    assert len(arrows) == len(g.links)
    assert len(lines) == 1 + len(g.nodes) + len(g.links)
    (tmp_path / "m.md").write_text('# A "quoted" [x] <b> [external_memory]\n', encoding="utf-8")
    label_line = to_mermaid(graph_of(tmp_path)).splitlines()[1]
    inner = label_line[label_line.index('"') + 1:label_line.rindex('"')]
    assert not any(ch in inner for ch in '"[]<>')


def test_json_is_serializable_and_stable():
    a = to_json(graph_of(EXAMPLE))
    b = to_json(graph_of(EXAMPLE))
    assert a == b and json.loads(a)["directed"] is True


# -- scale: a generated layer, counted independently from its text ---------------------------

def test_generated_layer_counts(tmp_path):
    out = tmp_path / "gen"
    corpus.generate_layer(out, modules=5, memories=3, reminder_size=60_000, ext_size=15_000)
    layer = Layer.load(out)
    g = build_graph(layer)
    jsonschema.validate(g.to_dict(), SCHEMA)
    check_structure(g)
    assert layer.all_diagnostics() == []

    expected = collections.Counter(file=0)
    governs = connects = 0
    in_fence = False
    for path in sorted(out.glob("*.md")):
        expected["file"] += 1
        after_untagged_module = False
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("```"):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            # §7.4.4: the tag on the declaration line, or alone on the line after it
            if line.startswith("## MODULE "):
                tag = re.search(r"\[NUCLEI: ([\d, ]*)\]", line)
            else:
                tag = re.fullmatch(r"\[NUCLEI: ([\d, ]*)\]", line) if after_untagged_module else None
            governs += len(set(tag.group(1).replace(" ", "").split(","))) if tag else 0
            after_untagged_module = line.startswith("## MODULE ") and tag is None
            if line.startswith("## MODULE "):
                expected["module"] += 1
            elif line.startswith("## NUCLEUS "):
                expected["nucleus"] += 1
            elif line.startswith("## TOPIC"):
                expected["topic"] += 1
            elif re.match(r"#{3,5} SUBTOPIC", line):
                expected["subtopic"] += 1
            elif line.startswith("## RULES:"):
                expected["rules"] += 1
            elif line.startswith("######"):  # any H6 of a memory is a node, `######[LOG …]` too (§5.5)
                expected["entry"] += 1
            elif re.fullmatch(r"\* (MODULE|NUCLEUS) \S+", line):
                connects += 1
    assert expected["module"] >= 10 and expected["topic"] >= 3 and expected["subtopic"] >= 3
    assert expected["entry"] > 50 and governs > expected["module"] and connects > expected["module"]
    assert collections.Counter(n.kind for n in g.nodes) == expected
    kinds = collections.Counter(link.kind for link in g.links)
    assert kinds["governs"] == governs
    assert kinds["connects"] == connects
    assert kinds["contains"] == len(g.nodes) - expected["file"]


# -- the fast header walk and nesting agree with the outline ----------------------------------

def _outline_containment(layer):
    """The contains pairs expected from doc.outline(), mapped to graph ids by (file, line)."""
    g = build_graph(layer)
    by_pos = {(n.file, n.line): n.id for n in g.nodes if n.kind != "file"}
    expected = set()
    for f in layer.merged_files:
        def walk(onode, anchor, f=f):
            for child in onode.children:
                own = by_pos.get((f.rel, child.line))
                if own is not None:
                    expected.add((anchor, own))
                walk(child, own or anchor, f)
            for e in onode.entries:
                expected.add((anchor, by_pos[(f.rel, e.line)]))
        walk(f.doc.outline(), f"file:{f.rel}")
    return expected, links(g, "contains")


def test_containment_matches_the_outline_on_every_fixture():
    for folder in [EXAMPLE, *sorted(p for p in LAYERS.iterdir() if p.is_dir()), ROOT / "tests" / "fixtures" / "spec"]:
        expected, actual = _outline_containment(Layer.load(folder))
        assert expected == actual, folder


def test_fast_heading_walk_matches_a_walk_of_every_block(tmp_path):
    """outline.headings skips lists, quotes and paragraphs: it must still find every header."""
    from zonemark import parse_file
    from zonemark.core.nodes import Heading
    from zonemark.core.outline import headings

    def every_header(doc):
        return [b for b in doc.walk() if isinstance(b, Heading) and b.line != doc.title_line]

    generated = []
    for kind, seed in (("mixed", 1), ("mixed", 2), ("mixed", 3), ("memory", 1), ("module", 1)):
        path = tmp_path / f"{kind}-{seed}.md"
        path.write_text(corpus.generate(kind, 150_000, seed), encoding="utf-8")
        generated.append(path)
    files = [*generated, *sorted((ROOT / "tests" / "fixtures").rglob("*.md")), *sorted(EXAMPLE.glob("*.md"))]
    for path in files:
        doc = parse_file(path)
        assert [h.line for h in every_header(doc)] == [h.line for h in headings(doc)], path
    for path in generated:
        doc = parse_file(path)
        assert len(every_header(doc)) > 100, path
        if path.name.startswith("mixed"):  # sub-modules at H3-H5, and '#' lines inside fences to skip
            assert {h.level for h in every_header(doc)} == {2, 3, 4, 5, 6}, path
            assert "\n## MODULE 999: EXAMPLE_ONLY" in path.read_text(encoding="utf-8"), path


def test_generated_mixed_reminder_matches_the_outline(tmp_path):
    mixed = tmp_path / "lay" / "mixed.md"
    mixed.parent.mkdir()
    mixed.write_text(corpus.generate("mixed", 150_000), encoding="utf-8")
    layer = Layer.load(mixed.parent)
    expected, actual = _outline_containment(layer)
    assert expected == actual and len(actual) > 100
    g = build_graph(layer)
    check_structure(g)
    assert any(n.kind == "sub_module" for n in g.nodes)


def test_invalid_utf8_never_reaches_the_document(tmp_path):
    (tmp_path / "bad.md").write_bytes(b"# Caf\xe9 [external_memory]\n\n[P1]\n## TOPIC: na\xefve\n[/P1]\n")
    g = graph_of(tmp_path)
    text = to_json(g)
    text.encode("utf-8")  # no lone surrogate left
    assert "\ufffd" in node(g, "file:bad.md").label


def test_node_and_link_kinds_are_the_typed_vocabularies():
    """§7.4, §7.6: every node and link kind of the graph is one of ``NodeKind`` and ``LinkKind``."""
    from typing import get_args

    from zonemark.layer.graph import LINK_KINDS, NODE_KINDS, LinkKind, NodeKind

    assert get_args(NodeKind) == NODE_KINDS and get_args(LinkKind) == LINK_KINDS
    assert list(NODE_KINDS) == SCHEMA["properties"]["nodes"]["items"]["properties"]["kind"]["enum"]
    assert list(LINK_KINDS) == SCHEMA["properties"]["links"]["items"]["properties"]["kind"]["enum"]
    g = build_graph(Layer.load(EXAMPLE))
    assert {n.kind for n in g.nodes} <= set(NODE_KINDS)
    assert {link.kind for link in g.links} == set(LINK_KINDS)


def test_the_fast_constructors_give_what_the_dataclasses_give():
    """W85: nodes and links are built without the frozen __init__; each equals the dataclass built from its fields."""
    import dataclasses

    from zonemark.layer.graph import GraphNode

    g = build_graph(Layer.load(EXAMPLE))
    for n in g.nodes:
        assert type(n) is GraphNode and n == GraphNode(*dataclasses.astuple(n))
    for link in g.links:
        assert type(link) is GraphLink and link == GraphLink(*dataclasses.astuple(link))
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.nodes[0].label = "perché — 東京"  # type: ignore[misc]


# -- B18: a graph reads the headers without a tree, and lists at most MAX_GRAPH_NODES nodes ---------

def _fixture_folders():
    return [EXAMPLE, *sorted(p for p in LAYERS.iterdir() if p.is_dir()), ROOT / "tests" / "fixtures" / "spec"]


def _generated_layer(folder: Path) -> Path:
    """Topics under plain sections, refused headers in [P4], nuclei, sub-modules, bare H6 entries."""
    folder.mkdir()
    (folder / "mixed[reminder].md").write_text(corpus.generate("mixed", 60_000, 4), encoding="utf-8")
    (folder / "diario[ext_memory].md").write_text(
        "# Diario [external_memory]\n\n## Note libere — 東京\n\n[P1]\n## TOPIC: Viaggi — 京都\n[/P1]\n\n"
        "[P4]\n###### LOG: 2026-01-02 — partenza\nperché sì\n## TOPIC: rifiutato\n[/P4]\n\n"
        "[P1]\n### SUBTOPIC: Treni\n[/P1]\n\n[P4]\n###### LOG: 2026-01-03 — Shinkansen\nveloce\n[/P4]\n\n"
        "###### una voce senza zona\n\n[P1]\n## TOPIC: Viaggi — 京都\n[/P1]\n", encoding="utf-8")
    return folder


def test_b18_the_graph_of_a_scan_is_the_graph_of_the_tree(tmp_path):
    """The headers read from a scan (no block tree) give the document the tree gives, on every fixture."""
    folders = [*_fixture_folders(), _generated_layer(tmp_path / "gen")]
    for folder in folders:
        scanned = build_graph(Layer.load(folder))
        assert all(f.doc.tree is None for f in Layer.load(folder).files)
        built = build_graph(Layer.load(folder, tree=True))
        assert to_json(scanned) == to_json(built), folder
        assert scanned.nodes_left_out == 0
    assert len(build_graph(Layer.load(tmp_path / "gen")).nodes) > 100


def test_b18_build_graph_keeps_no_tree(tmp_path):
    layer = Layer.load(_generated_layer(tmp_path / "gen"))
    build_graph(layer)
    assert all(f.doc.tree is None for f in layer.files)  # Document.blocks was never asked for


def _topics_layer(folder: Path, topics: int, entries: int) -> Layer:
    folder.mkdir()
    (folder / "note[ext_memory].md").write_text(
        "# Note [external_memory]\n\n" + "".join(
            f"[P1]\n## TOPIC: Tema {t} — 東京\n[/P1]\n\n[P4]\n"
            + "".join(f"###### LOG: 2026-01-0{1 + e % 9} — voce {t}.{e}\nperché\n" for e in range(entries))
            + "[/P4]\n\n" for t in range(topics)), encoding="utf-8")
    return Layer.load(folder)


def test_b18_past_the_limit_the_structure_comes_first_and_the_rest_is_counted(tmp_path):
    layer = _topics_layer(tmp_path / "l", 6, 5)  # 6 topics, 30 entries
    full = build_graph(layer)
    assert full.nodes_left_out == 0 and "nodesLeftOut" not in full.to_dict()["graph"]
    g = build_graph(layer, max_nodes=10)
    check_structure(g)
    jsonschema.validate(g.to_dict(), SCHEMA)
    kinds = collections.Counter(n.kind for n in g.nodes)
    assert kinds == {"file": 1, "topic": 6, "entry": 4}
    assert [n.label for n in g.nodes if n.kind == "entry"] == [n.label for n in full.nodes if n.kind == "entry"][:4]
    assert g.nodes_left_out == 26 and g.to_dict()["graph"]["nodesLeftOut"] == 26
    assert "26" not in g.left_out_note() and "36" in g.left_out_note() and "10" in g.left_out_note()
    # the listed nodes are the full graph's own (same fields), save the sources of the ones whose
    # children are left out: their text then holds the left-out children's
    same = {n.id: n for n in full.nodes}
    for n in g.nodes:
        assert (n.id, n.kind, n.label, n.line) == (same[n.id].id, same[n.id].kind, same[n.id].label, same[n.id].line)
    assert json.loads(to_json(g))["graph"]["nodesLeftOut"] == 26


def test_b18_past_the_limit_of_structure_no_entry_is_listed(tmp_path):
    layer = _topics_layer(tmp_path / "l", 8, 2)
    g = build_graph(layer, max_nodes=5)
    check_structure(g)
    assert [n.label for n in g.nodes if n.kind != "file"] == [f"TOPIC: Tema {t} — 東京" for t in range(5)]
    assert g.nodes_left_out == 3 + 16


def test_b18_a_diagnostic_on_a_left_out_node_sits_on_its_listed_container(tmp_path):
    layer = _topics_layer(tmp_path / "l", 3, 3)
    text = (tmp_path / "l" / "note[ext_memory].md").read_text(encoding="utf-8")
    last_entry = text.count("\n", 0, text.rindex("###### LOG")) + 1
    g = build_graph(layer, [d for d in layer.all_diagnostics()], max_nodes=4)  # 3 topics, 1 entry
    assert g.nodes_left_out == 8
    fn_nodes = [n for n in g.nodes if n.kind == "topic"]
    from zonemark.core.diagnostics import Diagnostic, Severity
    diag = Diagnostic(code="X", severity=Severity.WARNING, message="m", path="note[ext_memory].md",
                      line=last_entry, column=1)
    placed = build_graph(layer, [diag], max_nodes=4).diagnostics[0]
    assert placed.node == fn_nodes[-1].id


def test_b18_the_formats_say_what_is_left_out(tmp_path):
    from zonemark.render.graph_html import render_html

    g = build_graph(_topics_layer(tmp_path / "l", 4, 4), max_nodes=6)
    note = g.left_out_note()
    assert note.startswith("The graph shows 6 of its 20 nodes")
    assert f"// {note}" in to_dot(g) and f"%% {note}" in to_mermaid(g)
    from zonemark.render.graph_html import embed_json
    assert embed_json({"note": note}) in render_html(g)  # the page's view note (graph_page.js shows it)
    assert "view" not in build_graph(_topics_layer(tmp_path / "m", 1, 1)).to_dict()


def test_b18_the_graph_places_its_first_diagnostics_and_counts_the_rest(tmp_path, monkeypatch):
    from zonemark.layer import graph as graph_module

    folder = tmp_path / "l"
    folder.mkdir()
    (folder / "note[ext_memory].md").write_text("# Note [external_memory]\n\n" + "".join(
        f"[P1]\n## TOPIC: Stesso — 東京\n[/P1]\n\n[P4]\n###### LOG: 2026-01-03 — voce {i}\nperché\n[/P4]\n\n"
        for i in range(12)), encoding="utf-8")
    layer = Layer.load(folder)
    found = layer.all_diagnostics()
    assert len(found) == 12  # LAYER_NO_REMINDER, and DUPLICATE_CONTAINER_NAME on every topic after the first
    whole = build_graph(layer)
    assert whole.diagnostics_left_out == 0 and "diagnosticsLeftOut" not in whole.to_dict()["graph"]
    monkeypatch.setattr(graph_module, "MAX_GRAPH_DIAGNOSTICS", 4)
    g = build_graph(layer)
    assert g.diagnostics == whole.diagnostics[:4] and g.diagnostics_left_out == 8
    assert g.to_dict()["graph"]["diagnosticsLeftOut"] == 8
    assert json.loads(to_json(g))["graph"]["diagnosticsLeftOut"] == 8
    assert "4 of 12 diagnostics" in g.left_out_note() and g.nodes_note() == ""
    jsonschema.validate(g.to_dict(), SCHEMA)
