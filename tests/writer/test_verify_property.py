"""The zone-local re-check gives the verdict of a full re-parse (§5.5 second barrier).

Files are generated with containers (modules, topics, sub-topics, sections such as
CONNECTIONS, STATE and the registry) in [P1]-[P3] and writable [P4]/[P5] journals holding
benign and hostile lines; the edit appends an entry with a raw (unsanitised) or sanitised
body at the end of a writable zone, or replaces a zone's content.  For every case the
mini-document verdict (accept/refuse and the new diagnostics' codes and lines) equals the
one from parsing both whole files, and whenever the writer would accept on the fast path,
the full parse accepts too.
"""

from __future__ import annotations

from hypothesis import HealthCheck, assume, event, example, given, settings
from hypothesis import strategies as st

from zonemark import parse
from zonemark.core.text import decode
from zonemark.writer.append import _end_of_content
from zonemark.writer.locate import ZoneIndex
from zonemark.writer.sanitize import sanitize_body
from zonemark.writer.verify import Edit, Expect, full_check, incremental_check, mini_check

LINES = [
    "plain text", "more words here", "", "* bullet", "  + sub bullet", "    - deep", "- dash bullet", "+ plus",
    "1. ordered", "> quote", "> [!NOTE] anchor", "> [!FOO] odd", "# h1", "## MODULE 7: SEVEN", "## TOPIC: Z",
    "### SUBTOPIC1: Y", "#### x", "###### LOG: 2026-01-01 — e", "###### LOG: 2026-13-45 — bad date",
    "###### free node", "[P1]", "[/P4]", "[/P5]", "[/P1]", "[P4] inline", "* R1: rule", "* MODULE 7",
    "* MODULE ~T1", "* NUCLEUS 1", "* ACTIVE: 7", "* INACTIVE: 8", "**STATE:** inactive", "[NUCLEI: 1]",
    "```", "~~~", "<!--", "-->", "<!-- IllAIra-Standard: v9.0 -->", "---", "***", "[/LOG]", "tab\there",
    "ctl\x07char", "cr\rinside", "crlf ending\r", "trailing ##", "## x ##", "<!-- IllAIra-Standard: v1.13 -->",
    "\\# escaped", "\ufeffbom inside",
]
CONTEXT = ["### CONNECTIONS", "### STATE", "### FUNCTION", "## MODULE_STATE_REGISTRY:", "## RULES:",
           "**STATE:** active - permanent"]

line = st.sampled_from(LINES)
lines = st.lists(line, max_size=5)
# Existing content that keeps its own zone closed (no tags, fences or comments that swallow).
CLOSED = [x for x in LINES if not x.startswith(("[P", "[/P", "```", "~~~", "<!--"))]
closed_lines = st.lists(st.sampled_from(CLOSED), max_size=5)


@st.composite
def files(draw):
    memory = draw(st.booleans())
    ft = "external_memory" if memory else "reminder"
    out = [f"# F [{ft}]", ""]
    if draw(st.booleans()):
        out.insert(0, draw(st.sampled_from(["<!-- IllAIra-Standard: v1.13 -->", "<!-- IllAIra-Standard: v9.9 -->"])))
    if draw(st.booleans()):
        out += ["[P1]", "## NUCLEUS 1: N", "[/P1]", ""]
    for k in range(draw(st.integers(1, 4))):
        level = draw(st.sampled_from([1, 1, 2, 3]))
        if memory:
            depth = draw(st.integers(2, 4))
            head = "## TOPIC: T%d" % k if depth == 2 else "%s SUBTOPIC%d: S%d" % ("#" * depth, depth - 2, k)
        else:
            head = draw(st.sampled_from(["## MODULE %d: M%d [NUCLEI: 1]", "## MODULE %d: M%d",
                                         "### SUB-MODULE: S%d%d", "## Plain %d %d"])) % (k, k)
        out += [f"[P{level}]", head]
        out += draw(st.lists(st.sampled_from(CONTEXT), max_size=2))
        out += draw(closed_lines)
        out += [f"[/P{level}]", ""]
        for j in range(draw(st.integers(0 if k else 1, 2))):
            w = draw(st.sampled_from([4, 4, 5, 3])) if (k or j) else draw(st.sampled_from([4, 5]))
            out += [f"[P{w}]"] + draw(closed_lines) + [f"[/P{w}]", ""]
    return "\n".join(out) + "\n"


def writable(index):
    return [index.zone(i) for i in range(len(index))
            if index.zone(i).level in (4, 5) and index.zone(i).close_start is not None and not index.zone(i).inline]


def verdicts(text, zone_pick, insert_lines, mode, sanitise):
    doc = parse(text)
    index = ZoneIndex.build(doc)
    zones = writable(index)
    assume(zones)
    zone = zones[zone_pick % len(zones)]
    data = text.encode("utf-8", "surrogateescape")
    old_zone = decode(data[zone.start:zone.close_end])
    inner = len(decode(data[zone.start:zone.inner_start]))
    close = inner + len(decode(data[zone.inner_start:zone.close_start]))
    body = "\n".join(insert_lines)
    if sanitise:
        body = sanitize_body(body).text
    if mode == "append":
        pos = _end_of_content(old_zone, inner, close)
        insert = ("\n" if pos > inner else "") + "###### LOG: 2026-02-02 — new\n" + (body + "\n" if body else "")
        rel_start, rel_old = pos, 0
        line = zone.close_line - old_zone.count("\n", pos, close)
        owner_line = 0 if zone.owner is None else index.header_line(zone.owner)
        expect = Expect(entries=1, owner_line=owner_line)
    else:
        insert = body + "\n" if body else ""
        rel_start, rel_old = inner, close - inner
        line = zone.line + 1
        expect = Expect(entries=None)
    new_zone = old_zone[:rel_start] + insert + old_zone[rel_start + rel_old:]
    edit = Edit(rel_start, rel_old, len(insert), line, old_zone.count("\n", rel_start, rel_start + rel_old),
                insert.count("\n"))
    abs_start = len(text.encode()[:zone.start].decode()) + rel_start
    new_text = text[:abs_start] + insert + text[abs_start + rel_old:]
    full = full_check(text, new_text, Edit(abs_start, rel_old, len(insert), line, edit.old_lines, edit.new_lines),
                      expect, before=doc)
    mini = mini_check(index, zone, old_zone, new_zone, edit, expect, owner=zone.owner)
    fast = incremental_check(index, zone, old_zone, new_zone, edit, expect, owner=zone.owner)
    return full, mini, fast


def key(v):
    return v.ok, sorted({(d.code, d.line) for d in v.new_diagnostics})


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.filter_too_much,
                                                                   HealthCheck.too_slow])
@given(files(), st.integers(0, 10), lines, st.sampled_from(["append", "replace"]), st.booleans())
# an appended closing tag ends the zone early and the fence after it swallows the rest of the file
@example(text="# F [reminder]\n\n[P2]\n## MODULE 0: M0 [NUCLEI: 1]\n## RULES:\n## RULES:\n[/P2]\n\n[P4]\n[/P4]\n\n"
              "[P1]\n## MODULE 1: M1 [NUCLEI: 1]\n[/P1]\n\n[P1]\n## MODULE 2: M2 [NUCLEI: 1]\n## RULES:\n[/P1]\n\n",
         zone_pick=0, insert_lines=["[/P4]", "```"], mode="append", sanitise=False)
def test_incremental_equals_full(text, zone_pick, insert_lines, mode, sanitise):
    full, mini, fast = verdicts(text, zone_pick, insert_lines, mode, sanitise)
    event(f"{mode}: full {'accepts' if full.ok else 'refuses'}, mini {mini.method if not mini.ok else 'accepts'}")
    # soundness of the fast path: an incremental accept is a full accept
    if fast is not None:
        assert fast.ok and full.ok and not full.new_diagnostics
    # and the verdicts agree: accept/refuse, and the new diagnostics (code, line); "undecided" is
    # the mini check's own admission that the full check must decide (a once-per-file diagnostic
    # whose first occurrence is inside the replaced lines)
    if mini.method == "undecided":
        assert not mini.ok
    else:
        assert key(mini) == key(full), (mini, full)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much,
                                                                   HealthCheck.too_slow])
@given(files(), st.integers(0, 10), lines)
def test_sanitised_appends_are_accepted_on_the_fast_path(text, zone_pick, insert_lines):
    """Whatever a full parse accepts after sanitising, the fast path accepts too — except in the
    registry's own zone, where the mini check defers by design."""
    full, mini, fast = verdicts(text, zone_pick, insert_lines, "append", True)
    if full.ok:
        assert fast is not None or mini.problems == ("the zone continues a MODULE_STATE_REGISTRY",)
