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

#: What a reader of the raw text does not see before a line's first character: whitespace, format
#: controls (category Cf: bidi marks, zero-width characters, the tag characters of U+E0000) and the
#: characters that draw nothing (variation selectors, grapheme joiner, fillers, the blank Braille cell).
_UNSEEN = "".join(c for c in map(chr, range(0x110000)) if unicodedata.category(c) == "Cf") + \
    "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u2800\u3164\uffa0" + \
    "".join(map(chr, range(0xFE00, 0xFE10))) + "".join(map(chr, range(0xE0100, 0xE01F0)))
_BLANKS = "[\\s" + re.escape(_UNSEEN) + "]"

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
