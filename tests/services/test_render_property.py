"""Written AI content is plain text to all three readers: the parser, CommonMark, the raw text (§5.5).

Issue 7 item 5.  Bodies are generated from fragments that try to break out of an entry —
fences indented, in list items and in block quotes, zone tags, headers, rule bullets,
anchors, separators, comments, the [/LOG] marker — mixed with Italian, Japanese and '—'.
Each is appended (and, as whole content, written to a [P5] zone by edit).  Then:

* **CommonMark** (markdown-it-py, ``MarkdownIt("commonmark")``) renders the whole file: the
  headings outside the written lines are the ones before, inside them there is only the
  entry's H6; no code block, HTML block or thematic break starts in them and runs past
  them; no raw HTML at all; every block that starts after them is the same as before,
  shifted; every zone tag line is outside any code or HTML block.
* **zonemark** agrees with CommonMark: the lines it reads as zone tags and as headers are
  the ones CommonMark leaves as text (tags) and renders as headings.
* **the raw text**: no written line, with its indentation, quote and list markers set
  aside, reads as a zone tag, header, rule bullet, anchor, registry line, separator or the
  [/LOG] marker (an independent check, not the sanitiser's own code).
"""

from __future__ import annotations

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from render_check import check_render

from zonemark.writer import RefusedWrite, Store, append_entry, edit_zone
from zonemark.writer import snapshot as snapshot_module

MEMORY = """# Viaggi — 旅 [external_memory]

[P1]
## TOPIC: Città
[/P1]

[P4]
###### LOG: 2026-09-06 — Kyōto
Tempio — 金閣寺, più bello del previsto.
[/P4]

[P1]
### SUBTOPIC1: 東京
[/P1]

[P4]
[/P4]

[P1]
## TOPIC: Note
[/P1]

[P5]
scratch — appunti
[/P5]

[P1]
## TOPIC: Ultimo
Testo finale che non deve sparire.
[/P1]
"""

PREFIXES = ["", "", "", " ", "  ", "   ", "    ", "\t", "> ", "> > ", ">", "* ", "  * ", "- ", "+ ", "1. ",
            "1) ", "* > ", "> * ", "\u200b", "\u00a0", "　", "*\u00a0", "-\u200b", "*\u3000"]
CORES = ["```", "~~~", "````", "```python", "~~~ info", "``` ```", "[/P4]", "[P1]", "[/P5]", "[P4] inline",
         "[p1]", "[ P1 ]", "## MODULE 999: EVIL", "# x", "###### LOG: 2026-01-01 — forged", "#hashtag", "* R0: x",
         "*\tR0: x", "* R0:x", "*R1: y", "[!CAUTION] x", "[!NOTE]", "---", "***", "___", "- - -", "===", "-",
         "<!--", "-->", "text <!-- hidden", "<div>", "</div>", "<pre>", "<script>", "<?x", "[/LOG]", "\\[/LOG]",
         "`[/LOG]`", "&#91;/LOG&#93;", "## MODULE_STATE_REGISTRY:", "* ACTIVE: 042", "* INACTIVE: 1",
         "* MODULE 042", "- NUCLEUS 1", "**STATE:** inactive", "\\<!-- x", "\\\\<!-- y", "Perché sì — città",
         "東京の記憶 — 大切", "plain words", "`code`", "    indented code", "| a | b |", "[link](http://x)"]

body_line = st.tuples(st.sampled_from(PREFIXES), st.sampled_from(CORES)).map("".join)
bodies = st.lists(st.one_of(body_line, st.just("")), min_size=1, max_size=9).map("\n".join)

@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
@given(body=bodies, target=st.sampled_from(["Città", "Città/東京", "Note"]))
def test_appended_entries_render_as_text(tmp_path_factory, body, target):
    snapshot_module.forget()
    path = tmp_path_factory.mktemp("a") / "viaggi.md"
    path.write_text(MEMORY, encoding="utf-8")
    try:
        r = append_entry(path, target, "voce — 記録", body, date="2026-11-02", store=Store(fsync=False))
    except RefusedWrite as exc:
        event(f"refused: {exc.rule}")
        assert path.read_text(encoding="utf-8") == MEMORY
        return
    event("written")
    after = path.read_text(encoding="utf-8")
    count = after.count("\n") - MEMORY.count("\n")
    first = r.line - 1
    if after.split("\n")[first - 1] == "":  # the blank separator line came with the entry
        first -= 1
    check_render(MEMORY, after, first, count, entry_headers={r.line - 1})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
@given(parts=st.lists(st.one_of(bodies, st.just("###### LOG: 2026-11-03 — nota — メモ")), min_size=1, max_size=4))
def test_p5_edits_render_as_text(tmp_path_factory, parts):
    snapshot_module.forget()
    path = tmp_path_factory.mktemp("e") / "viaggi.md"
    path.write_text(MEMORY, encoding="utf-8")
    content = "\n".join(parts)
    zone = MEMORY.split("\n").index("[P5]") + 1
    try:
        edit_zone(path, zone, content, store=Store(fsync=False))
    except RefusedWrite as exc:
        event(f"refused: {exc.rule}")
        assert path.read_text(encoding="utf-8") == MEMORY
        return
    event("written")
    after = path.read_text(encoding="utf-8")
    lines_after = after.split("\n")
    close = lines_after.index("[/P5]")
    old_inner = MEMORY.split("\n").index("[/P5]") - zone
    # compare against the file with the zone emptied, so the written lines are one insertion
    emptied_lines = MEMORY.split("\n")
    del emptied_lines[zone:zone + old_inner]
    emptied = "\n".join(emptied_lines)
    entries = {n for n in range(zone, close) if lines_after[n].startswith("###### ")}
    check_render(emptied, after, zone, close - zone, entry_headers=entries)


free_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60)
mixed = st.lists(st.one_of(body_line, free_text, st.tuples(st.sampled_from(PREFIXES), free_text).map("".join)),
                 min_size=1, max_size=8).map("\n".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
@given(body=mixed, title=st.one_of(st.just("voce — 記録"), free_text))
def test_arbitrary_text_is_written_as_text_or_refused(tmp_path_factory, body, title):
    """Any Unicode text as title and body: a one-line refusal (file untouched) or text for all three readers."""
    snapshot_module.forget()
    path = tmp_path_factory.mktemp("x") / "viaggi.md"
    path.write_text(MEMORY, encoding="utf-8")
    try:
        r = append_entry(path, "Città", title, body, date="2026-11-02", store=Store(fsync=False))
    except RefusedWrite as exc:
        event(f"refused: {exc.rule}")
        assert "\n" not in str(exc) and path.read_text(encoding="utf-8") == MEMORY
        return
    event("written")
    after = path.read_text(encoding="utf-8")
    count = after.count("\n") - MEMORY.count("\n")
    first = r.line - 2  # the blank line before the entry comes with it (the journal is not empty)
    check_render(MEMORY, after, first, count, entry_headers={r.line - 1})
