"""An append's re-check from the zone's last lines decides as the re-check of the whole zone (§5.5, W99).

:func:`zonemark.writer.verify.insertion_check` re-checks an entry inserted at the end of a zone's content from the
zone's opening line and its lines from there on, when the lines before cannot change what the scan of those makes
of them.  Here generated files hold a target zone whose earlier lines are anything the parser reads (fences,
comments, nested and mismatched tags, refused headers and declarations, the registry, lists of every marker,
quotes, STATE fields, rules, version pins, control characters, CR and CRLF line ends, conflict markers, non-ASCII
text), and the insertion is an entry with any body; for every case the verdict equals
:func:`~zonemark.writer.verify.incremental_check` of the whole zone, which the writer ran before.
"""

from __future__ import annotations

from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from zonemark.core.text import decode, encode
from zonemark.writer.append import _content_end
from zonemark.writer.skeleton import skeleton_index
from zonemark.writer.verify import Edit, Expect, _window, incremental_check, insertion_check

PREFIX = [
    "testo — perché", "東京の メモ", "", "  ", "\u3000", "* bullet", "  + sub", "    - deep", "- dash", "+ plus",
    "1. ordered", "  continued", "> quote", "> [!NOTE] anchor", "> [!FOO] odd", "# h1 again", "## MODULE 7: SEVEN",
    "## MODULE_STATE_REGISTRY:", "* ACTIVE: 7", "## TOPIC: Z", "### SUBTOPIC1: Y", "#### x", "##### five",
    "###### LOG: 2026-01-01 — voce", "###### LOG: 2026-13-45 — bad date", "###### free node", "[P1]", "[/P1]",
    "[P4]", "[/P4]", "[/P5]", "[P9]", "[P4] inline", "[P4[P4[P4", "[[[", "[x](", "* R1: rule", "* MODULE 7",
    "* NUCLEUS 1", "**STATE:** inactive", "**STATO:** attivo", "[NUCLEI: 1]", "```", "```py", "~~~", "   ```",
    "\t```", "<!--", "<!-- one line -->", "-->", "text --> after", "<!-- IllAIra-Standard: v9.0 -->",
    "<!-- IllAIra-Standard: v1.13 -->", "---", "***", "tab\there", "ctl\x07char", "vt\x0b", "cr\rinside",
    "<<<<<<< ours", "=======", ">>>>>>> theirs", "|||||||", ">>>>>>>>>>>> q", "\\# escaped", "\ufeffbom",
    "## x ##", "#hashtag", "####### seven",
]
BODY = [
    "corpo — perché", "東京", "", "* a", "- b", "  + c", "> q", "> [!WARNING] w", "[/P4]", "[/P5]", "[P1]", "[/P1]",
    "```", "~~~", "<!--", "-->", "* R2: rule", "**STATE:** active", "## MODULE 8: X", "#### refused",
    "###### LOG: 2026-01-02 — second", "<!-- IllAIra-Standard: v1.13 -->", "ctl\x07", "cr\rin", "* MODULE 7",
    "<<<<<<< a", "=======", ">>>>>>> b", "[NUCLEI: 1]",
]
CONTEXT = ["### CONNECTIONS", "### STATE", "### FUNCTION", "## RULES:", "* R1: first", "**STATE:** active",
           "## MODULE_STATE_REGISTRY:"]


@st.composite
def cases(draw):
    memory = draw(st.booleans())
    ft = "external_memory" if memory else "reminder"
    out = [f"# F — perché [{ft}]", ""]
    if draw(st.booleans()):
        out.insert(0, draw(st.sampled_from(["<!-- IllAIra-Standard: v1.13 -->", "<!-- IllAIra-Standard: v9.9 -->"])))
    if draw(st.booleans()):
        out += ["[P1]", "## NUCLEUS 1: N", "[/P1]", ""]
    head = "## TOPIC: Alpha — 東京" if memory else draw(st.sampled_from(["## MODULE 7: M7 [NUCLEI: 1]",
                                                                          "## MODULE 3: M3", "## Plain"]))
    opening = draw(st.sampled_from([1, 2, 3]))
    out += [f"[P{opening}]", head] + draw(st.lists(st.sampled_from(CONTEXT), max_size=2)) + [f"[/P{opening}]", ""]
    level = draw(st.sampled_from([4, 4, 5, 3]))
    prefix = draw(st.lists(st.sampled_from(PREFIX), max_size=8))
    trailing = draw(st.integers(0, 2))
    out += [f"[P{level}]"] + prefix + [""] * trailing + [f"[/P{level}]", ""]
    if draw(st.booleans()):
        out += ["[P5]", "after — dopo", "[/P5]", ""]
    text = "\n".join(out) + "\n"
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    bodies = draw(st.lists(st.lists(st.sampled_from(BODY), max_size=4), min_size=1, max_size=3))
    return text, level, bodies, draw(st.integers(0, 1))


def checks(text, level, bodies, trail=0):
    data = encode(text)
    index = skeleton_index(data)
    target = [index.zone(i) for i in range(len(index)) if index.zone(i).level == level]
    zone = next((z for z in target if z.close_start is not None), None)
    if zone is None:
        return None
    at = _content_end(data, zone.inner_start, zone.close_start)
    crlf = data.endswith(b"\r\n", zone.start, zone.close_end)
    entries = ["###### LOG: 2026-02-02 — nuovo 東京 %d\n" % k + "".join(b + "\n" for b in body)
               for k, body in enumerate(bodies)]
    insert = ("\n" if at > zone.inner_start else "") + "\n".join(entries) + "\n" * trail
    insert = insert.replace("\n", "\r\n") if crlf else insert
    line = zone.close_line - data.count(b"\n", at, zone.close_start)
    owner = zone.owner
    expect = Expect(entries=len(bodies), owner_line=0 if owner is None else index.header_line(owner))
    old_zone = decode(data[zone.start:zone.close_end])
    rel = len(decode(data[zone.start:at]))
    edit = Edit(rel, 0, len(insert), line, 0, insert.count("\n"))
    whole = incremental_check(index, zone, old_zone, old_zone[:rel] + insert + old_zone[rel:], edit, expect,
                              owner=owner)
    windowed = insertion_check(index, zone, data, at, encode(insert), line, expect, owner=owner)
    used = _window(index, zone, data, at, insert) is not None
    return whole, windowed, used, at > zone.inner_start


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.filter_too_much,
                                                                    HealthCheck.too_slow])
@given(cases())
# a nested tag before the end, closed by the entry's body; a fence, a conflict region, the registry, CRLF line ends
@example(("# F [external_memory]\n\n[P1]\n## TOPIC: Alpha\n[/P1]\n\n[P4]\n[P1]\n[/P4]\n\n", 4, [["[/P1]"]], 0))
@example(("# F [external_memory]\n\n[P1]\n## TOPIC: Alpha\n[/P1]\n\n[P4]\n```\n[/P4]\n\n", 4, [["```"]], 0))
@example(("# F [external_memory]\n\n[P1]\n## TOPIC: Alpha\n[/P1]\n\n[P4]\n<<<<<<< a\n=======\n[/P4]\n\n", 4,
          [[">>>>>>> b"]], 0))
@example(("# F [reminder]\n\n[P1]\n## MODULE 7: M\n[/P1]\n\n[P4]\n## MODULE_STATE_REGISTRY:\n[/P4]\n\n", 4,
          [["* ACTIVE: 7"]], 0))
@example(("# F [external_memory]\r\n\r\n[P1]\r\n## TOPIC: A\r\n[/P1]\r\n\r\n[P4]\r\nx\r\n[/P4]\r\n", 4,
          [["y"]], 0))
def test_the_window_decides_as_the_whole_zone(case):
    got = checks(*case)
    if got is None:
        return
    whole, windowed, used, filled = got
    event(f"{'window' if used else 'whole zone'}, {'accepted' if whole is not None else 'to the full check'}")
    assert windowed == whole, (whole, windowed)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([x for x in PREFIX if x and x[0] not in "[<`~\t -" and "\r" not in x
                                 and "\x07" not in x and "\x0b" not in x and "-->" not in x
                                 and "REGISTRY" not in x]), min_size=1,
                max_size=8), st.lists(st.sampled_from(["corpo — perché", "東京", "* a", ""]), max_size=3))
def test_an_ordinary_journal_is_rechecked_from_its_last_lines(prefix, body):
    """A journal of prose, lists, quotes and headers is re-checked from its last lines (what keeps the cost of an
    append bounded by the entry, not the zone)."""
    text = "# F [external_memory]\n\n[P1]\n## TOPIC: Alpha\n[/P1]\n\n[P4]\n" + "\n".join(prefix) + "\n[/P4]\n"
    whole, windowed, used, _filled = checks(text, 4, [body])
    assert used
    assert windowed == whole
