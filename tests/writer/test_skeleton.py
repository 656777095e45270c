"""The skeleton index (writer/skeleton.py) equals the full parse's, field for field.

``skeleton_index(data)`` parses only the lines that can change the writer's index (tags,
H1-H5 headers, fences, comments, the head up to the title) and maps them back to the file.
Generated IllAIra-like files — valid and broken: nested, mismatched, unclosed and invalid
tags, fences and comments that swallow tags and headers, frontmatter (closed or not),
comments and blank lines before the title, a BOM, CRLF and bare CR, control characters,
undecodable bytes, non-ASCII text, headers refused in writable zones, sub-topics, H6 entries
— must give exactly ``ZoneIndex.build(parse(decode(data)))``, and an append must write the
same bytes (or be refused with the same message) whichever index it starts from.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import corpus
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zonemark import parse
from zonemark.core.text import decode
from zonemark.writer import RefusedWrite, Store, append_entry
from zonemark.writer import locate as locate_module
from zonemark.writer import snapshot as snapshot_module
from zonemark.writer import skeleton as skeleton_module
from zonemark.writer.locate import ZoneIndex
from zonemark.writer.skeleton import skeleton_index

TAGS = ["[P1]", "[P2]", "[P3]", "[P4]", "[P5]", "[/P1]", "[/P2]", "[/P3]", "[/P4]", "[/P5]", "[P4] inline text",
        "[P5]trailing", "[/P4] after", "[P0]", "[P9]", "[/P7]", "[P12]", "  [P4]", " [/P4]", "\t[P4]", "\t[/P4]",
        "    [P4]", "[p4]", "[P4]\t", "[/P4]  ", "[P3] testo — città"]
HEADERS = ["# T [reminder]", "# T [external_memory]", "# T [external_module]", "# Untagged", "# [reminder] x",
           "## MODULE 7: SETTE", "## MODULE 8: OTTO [NUCLEI: 1]", "## MODULE: NOID", "## MODULE ~T1: TMP",
           "## TOPIC: Città", "## TOPIC: Città", "### SUBTOPIC1: Sotto", "#### SUBTOPIC2: Più giù",
           "##### SUBTOPIC3: 日本語", "### SUBTOPIC2: off by one", "## SUBTOPIC1: wrong level", "### TOPIC: misplaced",
           "### SUB-MODULE: S", "### SOTTOMODULO: S2", "## NUCLEUS 1: N", "## NUCLEUS x: bad",
           "## MODULE_STATE_REGISTRY:", "## RULES:", "## REGOLE:", "### STATE", "### CONNECTIONS: —", "## Plain",
           "#### deep", "#hashtag", "#Upper", "#[x]", "   ## indented", "\t## tabbed", " \t## mixed", "    ## code",
           "## trailing ##", "##", "#", "###### LOG: 2026-01-01 — voce", "###### LOG: 2026-13-45 — bad",
           "###### nodo libero", "####### seven", "##\tTOPIC: tab", "## TOPIC: Città\r"]
FENCES = ["```", "```json", "~~~", "````", "~~~~ info", "  ```", "   ~~~", "    ```", "```x`y", "\t```", "``", "~~"]
COMMENTS = ["<!--", "-->", "<!-- one line -->", "<!-- IllAIra-Standard: v1.13 -->", "<!-- IllAIra-Standard: v9.9 -->",
            "text --> after", "<!-- open [P4]", "  <!--", "    <!--", "<div>", "<!-- a --> b", "--> [P1]", "<"]
DASHES = ["---", "--- ", "---x", "***", "- - -", "---\r"]
TEXT = ["plain text", "Città è perché — 日本語", "* bullet", "  + sub bullet", "    - deep", "> quote",
        "> [!NOTE] anchor", "> [P4]", "* [P4]", "[NUCLEI: 1]", "**STATE:** active", "active - permanent",
        "* ACTIVE: 7", "* R1: rule", "1. ordered", "[link](https://example.org)", "[/LOG]", "", "", "   ", "\t",
        "\ufeffbom inside", "ctl\x07char", "cr\rinside", "crlf line\r", "\\# escaped", "\u3000", "x\x0c# ff"]
VOCAB = TAGS + HEADERS + FENCES + COMMENTS + DASHES + TEXT

line = st.sampled_from(VOCAB)
#: A few lines of raw bytes that are not UTF-8 (kept and mapped byte for byte).
raw_line = st.sampled_from([b"bad \xff byte", b"\xc3", b"## TOPIC: \xe8 latin-1", b"[P4] \xfe"])


@st.composite
def block(draw, memory):
    """A container with its zones (mostly well formed), or a run of arbitrary lines."""
    kind = draw(st.integers(0, 4))
    if kind == 0:
        return draw(st.lists(line, max_size=6))
    level = draw(st.sampled_from([1, 1, 2, 3]))
    if memory:
        depth = draw(st.integers(2, 5))
        head = "## TOPIC: T%d" % kind if depth == 2 else "%s SUBTOPIC%d: S — %d" % ("#" * depth, depth - 2, kind)
    else:
        head = draw(st.sampled_from(["## MODULE %d: M", "## MODULE %d: M [NUCLEI: 1]", "### SUB-MODULE: S%d",
                                     "## Plain %d", "## NUCLEUS %d: N"])) % kind
    out = [f"[P{level}]", head] + draw(st.lists(line, max_size=3)) + [f"[/P{level}]", ""]
    for _ in range(draw(st.integers(0, 2))):
        w = draw(st.sampled_from([4, 4, 5, 3]))
        out += [f"[P{w}]"] + draw(st.lists(st.sampled_from(TEXT + HEADERS[-8:]), max_size=4)) + [f"[/P{w}]", ""]
    return out


@st.composite
def files(draw) -> bytes:
    memory = draw(st.booleans())
    lines: list[str | bytes] = []
    if draw(st.integers(0, 3)) == 0:  # frontmatter, closed or not
        lines += ["---", "name: x"] + draw(st.lists(st.sampled_from(["a: 1", "---x", "# not a title", "", "---"]),
                                                     max_size=3))
    lines += draw(st.lists(st.sampled_from(["", "   ", "<!--", "comment body", "-->", "<!-- c -->", "\r"]),
                           max_size=4))
    if draw(st.integers(0, 5)):
        lines.append(draw(st.sampled_from([f"# Title [{'external_memory' if memory else 'reminder'}]",
                                           "# Title", "## Not a title", "plain first line", "[P1]"])))
    for _ in range(draw(st.integers(0, 6))):
        lines += draw(block(memory))
        if draw(st.integers(0, 4)) == 0:
            lines.append(draw(raw_line))
    if draw(st.integers(0, 6)) == 0:  # a byte order mark
        first = lines[0] if lines else ""
        lines[:1] = [("\ufeff" + first) if isinstance(first, str) else b"\xef\xbb\xbf" + first]
    crlf = draw(st.integers(0, 5)) == 0
    data = b"\n".join(x if isinstance(x, bytes) else x.encode("utf-8") for x in lines)
    if crlf:
        data = data.replace(b"\n", b"\r\n")
    ending = draw(st.sampled_from([b"\n", b"\n", b"", b"\r\n"]))
    return data + ending


def full_index(data: bytes) -> ZoneIndex:
    return ZoneIndex.build(parse(decode(data)))


def fields(index: ZoneIndex) -> dict:
    return {"file_type": index.file_type, "title": index.title, "headers": list(index.headers),
            "h_line": list(index.h_line), "h_start": list(index.h_start),
            "zones": [index.zone(i) for i in range(len(index))], "global_first": index.global_first}


def assert_same_index(data: bytes) -> None:
    got, want = fields(skeleton_index(data)), fields(full_index(data))
    for name in want:
        assert got[name] == want[name], (name, got[name], want[name])


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files())
def test_skeleton_index_equals_full_parse(data):
    assert_same_index(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(line, raw_line), max_size=40), st.sampled_from([b"\n", b"", b"\r\n"]))
def test_skeleton_index_equals_full_parse_on_arbitrary_lines(lines, ending):
    """No structure assumed at all: any sequence of the vocabulary's lines."""
    data = b"\n".join(x if isinstance(x, bytes) else x.encode("utf-8") for x in lines) + ending
    assert_same_index(data)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files())
def test_the_index_from_a_scan_equals_the_index_from_the_tree(data):
    """W97: ``ZoneIndex.build`` of a document without its tree (one scan, no block built) and of the same document
    with its tree (the walk of the blocks) are the same index, field for field."""
    text = decode(data)
    with_tree = parse(text, tree=True)
    assert with_tree.tree is not None
    without = parse(text)
    assert without.tree is None
    assert fields(ZoneIndex.build(without)) == fields(ZoneIndex.build(with_tree))
    assert without.tree is None  # the index did not build the tree
    # W98: the index read in the parse's own scan is the same, and so is that parse
    doc, index = ZoneIndex.parse(text)
    assert fields(index) == fields(ZoneIndex.build(with_tree))
    assert doc.tree is None and doc.diagnostics == with_tree.diagnostics and doc.modules == with_tree.modules


# -- the append writes the same bytes either way ----------------------------------------------

def address(index: ZoneIndex, target: int) -> str:
    """A positional address ('#2/#1') of the container ``target``: it resolves whatever the names."""
    containers = index.containers()
    chain = []
    node = target
    while node is not None:
        chain.append(node)
        node = index.headers[node].parent
    parts, parent = [], None
    for node in reversed(chain):
        siblings = [h.index for h in containers if h.parent == parent]
        parts.append(f"#{siblings.index(node) + 1}")
        parent = node
    return "/".join(parts)


def append_with(monkeypatch, folder: Path, data: bytes, container: str, actor: str, use_skeleton: bool):
    path = folder / ("skeleton.md" if use_skeleton else "full.md")
    path.write_bytes(data)
    snapshot_module.forget()
    with monkeypatch.context() as m:
        if not use_skeleton:
            m.setattr(snapshot_module, "skeleton_index", lambda data: full_index(data))
        try:
            r = append_entry(path, container, "Nota — città", "Testo: [P4] e ## TOPIC: x", actor=actor,
                             date="2026-05-03", store=Store(fsync=False))
            outcome = ("written", r.line, r.zone, r.target, r.method)
        except RefusedWrite as exc:
            outcome = ("refused", str(exc).replace(str(path), "FILE"))
    return outcome, path.read_bytes()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(files(), st.integers(0, 50), st.sampled_from(["ai", "user"]))
def test_append_writes_the_same_bytes_with_either_index(monkeypatch, data, pick, actor):
    containers = full_index(data).containers()
    container = address(full_index(data), containers[pick % len(containers)].index) if containers else "#1"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        fast = append_with(monkeypatch, folder, data, container, actor, use_skeleton=True)
        slow = append_with(monkeypatch, folder, data, container, actor, use_skeleton=False)
    assert fast == slow
    snapshot_module.forget()


# -- pinned cases --------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "",
    "\n\n",
    "# T [external_memory]",
    "---\ntitle: x\n---\n# T [external_memory]\n[P1]\n## TOPIC: A\n[/P1]\n[P4]\n[/P4]\n",
    "---\nunclosed\n# T [external_memory]\n[P1]\n## TOPIC: A\n[/P1]\n",
    "---\nunclosed and no title\n[P1]\n## TOPIC: A\n[/P1]\n",
    "<!--\nplain line in a comment\n-->\nplain first line\n# T [external_memory]\n[P1]\n## TOPIC: A\n[/P1]\n",
    "\n\n<!-- c -->\n\n# T [reminder]\n[P1]\n## MODULE 1: A\n[/P1]\n",
    "\ufeff\nplain first line\n# T [external_memory]\n[P1]\n## TOPIC: A\n[/P1]\n",
    "\ufeff   \n<!--\n# T [reminder]\n-->\n[P1]\n## MODULE 1: A\n[/P1]\n",
    "\ufeff# T [external_memory]\r\n[P1]\r\n## TOPIC: A\r\n[/P1]\r\n[P4]\r\n[/P4]\r\n",
    "# T [external_memory]\n[P1]\n## TOPIC: A\n```\n[/P1]\n## TOPIC: hidden\n```\n[/P1]\n[P4]\n[/P4]\n",
    "# T [external_memory]\n[P1]\n## TOPIC: A\n<!-- [/P1]\n## TOPIC: hidden\n--> x\n[/P1]\n[P4]\n[P4]\n[/P4]\n[/P4]\n",
    "# T [reminder]\n[P4]\n## MODULE 1: refused here\n###### LOG: 2026-01-01 — e\n[/P4]\n[P1]\n## MODULE 2: B\n",
    "# T [external_memory]\n[P1]\n## TOPIC: A\nprose\n[/P3]\n[P4]\nx\x07y\nbare\rcr\n[/P4]\n",
])
def test_pinned_files(text):
    assert_same_index(text.encode("utf-8"))


@pytest.mark.parametrize("kind", ["memory", "reminder", "mixed", "module"])
def test_generated_corpus_files(kind):
    """Realistic files of every kind (the mixed reminder hides headers and tags in code fences)."""
    for seed in (1, 2):
        assert_same_index(corpus.generate(kind, 300_000, seed=seed).encode("utf-8"))


def test_a_cold_cache_parses_only_the_skeleton(monkeypatch, tmp_path):
    """``cached_index`` on bytes it has not seen scans a compact text, not the file."""
    topic = "[P1]\n## TOPIC: Città {n}\n[/P1]\n\n[P4]\n" + "###### LOG: 2026-01-01 — voce\nTesto lungo — è.\n\n" * 20 + "[/P4]\n\n"
    text = "# Memoria [external_memory]\n\n" + "".join(topic.format(n=n) for n in range(30))
    path = tmp_path / "memoria.md"
    path.write_text(text, encoding="utf-8")
    parsed = []
    real_scan = locate_module.scan_structure
    monkeypatch.setattr(locate_module, "scan_structure", lambda t, *hooks: parsed.append(len(t)) or real_scan(t, *hooks))
    snapshot_module.forget()
    index = snapshot_module.cached_index(path, path.read_bytes())
    assert parsed and parsed[0] < len(text) / 10
    assert fields(index) == fields(full_index(path.read_bytes()))
    r = append_entry(path, "Città 29", "ultima", "fine", date="2026-05-03", store=Store(fsync=False))
    assert r.method == "incremental" and r.target.startswith("'TOPIC: Città 29'")
    assert not parse(path.read_text(encoding="utf-8")).diagnostics
    snapshot_module.forget()


def test_the_skeleton_asks_the_core_where_the_frontmatter_comments_and_title_are(monkeypatch):
    """The head of the file (frontmatter, comments before the title, the title line) is decided by the
    core's own predicates (``core.syntax``), the ones the scanner uses: no copy of the rules in the writer."""
    from zonemark.core import syntax as sx

    calls: dict[str, int] = {}
    for name in ("is_frontmatter_fence", "comment_left_open", "takes_the_title"):
        real = getattr(sx, name)
        monkeypatch.setattr(sx, name, lambda line, real=real, name=name: (
            calls.__setitem__(name, calls.get(name, 0) + 1), real(line))[1])
    data = ("---\nluogo: 東京\n---\n\n<!-- perché\n — nota -->\n# Viaggi — 東京 [external_memory]\n"
            "[P1]\n## TOPIC: A\n[/P1]\n[P4]\n[/P4]\n").encode("utf-8")
    head_lines = skeleton_module._head(data)
    assert head_lines == (3, data.index(b"[P1]"))
    assert set(calls) == {"is_frontmatter_fence", "comment_left_open", "takes_the_title"}, calls
    assert_same_index(data)


def test_the_skeleton_source_holds_no_copy_of_the_comment_and_frontmatter_markers():
    source = Path(skeleton_module.__file__).read_text(encoding="utf-8")
    code = source.split('"""', 2)[2]  # after the module docstring
    for marker in ('"-->"', "b\"-->\"", 'rb"-->"', '"<!--"', '"---"', 'rb"\\n---"', 'rb"\\n# "'):
        assert marker not in code, marker
