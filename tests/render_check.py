"""Checks that written AI content stays text for CommonMark, for zonemark and in the raw text (§5.5).

Shared by the render property test and the hostile-payload suite; independent of the
sanitiser's own code, so it can catch what the sanitiser misses.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from markdown_it import MarkdownIt

from zonemark import parse
from zonemark.core.nodes import Heading
from zonemark.writer.locate import ZoneIndex

MD = MarkdownIt("commonmark")


# -- the independent raw-text reader -----------------------------------------------------------

#: Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt), written out here on purpose:
#: this reader is the independent check and imports nothing of the writer's own table.
_IGNORABLE_RANGES = [(0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
                     (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
                     (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
                     (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF)]


def _unseen_ranges() -> list[tuple[int, int]]:
    """What a reader of the raw text passes over before a line's first character, as code point ranges:
    the categories Mn, Me, Cf and Zs (marks that draw on nothing, format controls, spaces), the
    default-ignorable code points, and the blank Braille cell U+2800 (it draws nothing)."""
    ignorable = {cp for a, b in _IGNORABLE_RANGES for cp in range(a, b + 1)}
    points = [cp for cp in range(0x110000) if (0xD800 > cp or cp > 0xDFFF)
              and (unicodedata.category(chr(cp)) in ("Mn", "Me", "Cf", "Zs") or cp in ignorable or cp == 0x2800)]
    ranges: list[tuple[int, int]] = []
    for cp in points:
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1] = (ranges[-1][0], cp)
        else:
            ranges.append((cp, cp))
    return ranges


_UNSEEN = "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in _unseen_ranges())
_BLANKS = "[\\s" + _UNSEEN + "]"

_RAW_STRUCTURE = [
    ("zone tag", re.compile(r"\[\s*/?\s*P\s*\d+\s*\]", re.IGNORECASE)),
    ("header", re.compile(r"#")),
    ("anchor", re.compile(r"\[!")),
    ("rule bullet", re.compile(r"[*+-]" + _BLANKS + r"*[A-Z]+\d+\s*:")),
    ("registry line", re.compile(r"[*+-]" + _BLANKS + r"*(?:ACTIVE|INACTIVE)\s*:")),
    ("connection", re.compile(r"[*+-]" + _BLANKS + r"*(?:MODULE|NUCLEUS)\b")),
    ("separator", re.compile(r"(?:([-*_])(?:[ \t]*\1){2,}|=+|-+)[ \t]*$")),
    ("fence", re.compile(r"`{3}|~{3}")),
]


def raw_reading(line: str) -> str | None:
    """What a reader of the raw text would take ``line`` for, or None."""
    if re.sub(_BLANKS, "", line) == "[/LOG]":
        return "[/LOG] marker"
    # read each stage: the whole line, then with one more marker set aside
    pos = 0
    while True:
        lead = re.match(r"" + _BLANKS + r"*", line[pos:]).end()
        rest = line[pos + lead:]
        for name, pattern in _RAW_STRUCTURE:
            if pattern.match(rest) and not (name == "fence" and pos + lead == 0):  # column-0 fences may pass
                return name
        m = re.match(r">|(?:[*+-]|\d{1,9}[.)])(?=" + _BLANKS + r"|$)", rest)
        if not m:
            return None
        pos += lead + m.end()


# -- CommonMark ---------------------------------------------------------------------------------

@functools.lru_cache(maxsize=16)
def blocks(text: str) -> tuple:
    return tuple(t for t in MD.parse(text) if t.map is not None)


def headings(tokens):
    return [(t.tag, t.map[0]) for t in tokens if t.type == "heading_open"]


def check_render(before: str, after: str, first: int, count: int, *, entry_headers: set[int]):
    """``after`` is ``before`` with ``count`` lines inserted at 0-based line ``first``."""
    last = first + count - 1
    old, new = blocks(before), blocks(after)

    def shift(n):
        return n if n < first else n + count

    # headings: the old ones (shifted) plus the entries' H6
    want = sorted([(tag, shift(line)) for tag, line in headings(old)] + [("h6", n) for n in entry_headers])
    assert sorted(headings(new)) == want
    for t in new:
        start, end = t.map
        if first <= start <= last:
            assert t.type not in ("html_block", "hr"), (t.type, t.map)
            if t.type in ("fence", "code_block"):
                assert end - 1 <= last, ("a code block runs past the written lines", t.map)
    assert not any(c.type == "html_inline" for t in new if t.type == "inline" for c in (t.children or ())
                   if first <= t.map[0] <= last + 1)
    # what starts after the written lines (and the closing-tag line they may absorb) is unchanged
    tail_new = [(t.type, t.map[0], t.map[1]) for t in new if t.map[0] > last + 1]
    tail_old = [(t.type, shift(t.map[0]), shift(t.map[1] - 1) + 1) for t in old if shift(t.map[0]) > last + 1]
    assert tail_new == tail_old
    # zone tag lines are text, never inside a code or HTML block
    hidden = set()
    for t in new:
        if t.type in ("fence", "code_block", "html_block"):
            hidden.update(range(*t.map))
    lines = after.split("\n")
    doc = parse(after)
    index = ZoneIndex.build(doc)
    tag_lines = {n - 1 for n in index.z_line} | {n - 1 for n in index.z_close_line if n is not None}
    assert not tag_lines & hidden
    # zonemark agrees with CommonMark on the headers and on the zone tags
    zm_heads = sorted(b.line - 1 for b in doc.walk() if isinstance(b, Heading))
    assert zm_heads == sorted(line for _tag, line in headings(new))
    cm_tags = {n for n, ln in enumerate(lines) if re.fullmatch(r"\[/?P\d\]", ln) and n not in hidden}
    assert cm_tags == tag_lines
    # the raw text
    for n in range(first, last + 1):
        if n in entry_headers:
            continue
        assert raw_reading(lines[n]) is None, (n, lines[n])
