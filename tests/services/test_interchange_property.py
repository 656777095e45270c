"""Property: whatever the chat text, ingestion never writes a marker, never creates structure, and
files each entry once (§N.19.3.4, §5.5).

The texts mix log headers (canonical, tolerant, hashless, with Italian and Japanese titles),
markers with every kind of whitespace around them, lines that look like structure (zone tags,
headers, rule bullets, registry lines, fences, anchors, separators), CR LF and no-break spaces.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from zonemark import parse
from zonemark.interchange.ingest import FILED, ingest
from zonemark.interchange.logs import is_marker
from zonemark.writer import Store, sanitize_title

MEMORY = """# Diario [external_memory]

[P1]
## TOPIC: Giornate
[/P1]

[P4]
###### LOG: 2026-01-01 — Capodanno
Pranzo dai nonni.
[/P4]

[P1]
## TOPIC: Altro
[/P1]

[P4]
[/P4]
"""

WORDS = st.sampled_from(["città", "perché", "東京", "新幹線", "garage", "Friday", "—", "\u00a0", "Log", "LOG",
                         "[/LOG]", "[P4]", "##", "*", "-", "`", "|", "über", "naïve", "🙂", "LOGISTICA", "ok"])
TITLE = st.lists(WORDS, min_size=0, max_size=4).map(" ".join)
DATE = st.sampled_from(["2026-09-15", "2026-02-30", "2026-06-11T14:30Z", "2026-9-1", "", "2026-12-31T23:59:59"])
SPACE = st.sampled_from(["", " ", "\t", "\u00a0", "\u202f", "\u200b", "  \t"])
HEADER = st.one_of(
    st.builds(lambda d, t: f"###### LOG: {d} — {t}", DATE, TITLE),
    st.builds(lambda d, t: f"LOG: {d} — {t}", DATE, TITLE),
    st.builds(lambda t: f"######[LOG {t}]", TITLE),
    st.builds(lambda t: f"###### log - {t}", TITLE),
    st.builds(lambda t: f"### LOG: 2026-01-01 — {t}", TITLE),
)
MARKER = st.builds(lambda a, b: f"{a}[/LOG]{b}", SPACE, SPACE)
STRUCTURE = st.sampled_from([
    "[P1]", "[/P4]", "[P5] testo", "## MODULE 999: INJECTED", "## TOPIC: Nuovo", "### SUBTOPIC1: X",
    "* R1: nuova regola", "* ACTIVE: 042", "**STATE:** active - permanent", "> [!CAUTION]", "---", "***", "===",
    "```", "~~~", "<!-- commento", "<script>x</script>", "    ## indentato", "#hashtag", "[NUCLEI: 1]",
    "## MODULE_STATE_REGISTRY:", "###### Nota", "* MODULE 042", "[/LOG] ma non solo", "**[/LOG]**", "Copy", "10:42",
])
LINE = st.one_of(HEADER, MARKER, STRUCTURE, st.lists(WORDS, max_size=6).map(" ".join),
                 st.text(max_size=30))
TEXT = st.tuples(st.lists(LINE, max_size=24), st.sampled_from(["\n", "\r\n"])).map(lambda p: p[1].join(p[0]))


def _structure(text: str):
    """What the parser and a CommonMark renderer see as structure, entries aside."""
    doc = parse(text)
    ours = [(b.type, getattr(b, "level", None), getattr(b, "text", None)) for b in doc.walk()
            if b.type in ("module", "sub_module", "nucleus", "section", "state_registry", "permission_block",
                          "rule", "attention_anchor", "separator")]
    md = MarkdownIt("commonmark")
    theirs = [(t.type, t.tag) for t in md.parse(text) if t.type in ("heading_open", "hr", "html_block", "fence")
              and t.tag != "h6"]
    return ours, theirs, sorted(d.code for d in doc.diagnostics)


def _entries(text: str) -> list[tuple]:
    doc = parse(text)
    out = []
    for node in doc.outline().walk():
        for e in node.entries:
            raw = doc.heading_at(e.line).raw_markdown
            body = raw.split("\n", 1)[1] if "\n" in raw else ""
            out.append((node.name, e.date, e.title, body.strip("\n")))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT)
def test_ingestion_never_writes_a_marker_never_creates_structure_files_each_entry_once(text):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "diario[ext_memory].md"
        path.write_text(MEMORY, encoding="utf-8")
        before = path.read_text(encoding="utf-8")
        result = ingest(path, "Altro", text, store=Store(fsync=False), today="2026-10-10")
        after = path.read_text(encoding="utf-8")

        assert not any(is_marker(line) for line in after.split("\n")), "a [/LOG] marker reached the file"
        assert _structure(after) == _structure(before), "the ingested text created structure"

        filed = [i for i in result.items if i.status == FILED]
        new = _entries(after)
        assert len(new) == len(_entries(before)) + len(filed)
        assert len(new) == len(set(new)), "an entry was filed twice"
        assert [(e[1], e[2]) for e in new if e[0] == "Altro"] == [(i.date, sanitize_title(i.title).text) for i in filed]

        again = ingest(path, "Altro", text, store=Store(fsync=False), today="2026-10-10")
        assert not [i for i in again.items if i.status == FILED], "pasting the same text twice filed something twice"
        assert path.read_text(encoding="utf-8") == after
