"""Bullet markers of AI content in the canonical shape of §8: ``*``, ``+``, ``-`` for levels 1, 2, 3 (ruling W10).

A chat log writes its lists with ``- item``; in a file, §8 wants ``*`` at level 1, ``+`` at
level 2 and ``-`` at level 3, and the parser reports any other marker (``LIST_MARKER_MISMATCH``,
``UNIFORM_LIST_MARKER_WARNING``) — which the writer's re-check would refuse.  So the sanitiser
rewrites the marker character of every bullet of the content to the one of its level, **when the
rewrite cannot change what a CommonMark renderer shows**; otherwise it leaves the lines alone
and the re-check refuses them with the parser's diagnostic, as before.

The levels are the parser's own (the content is parsed in a zone of its own, where the list
state starts fresh as it does after an entry header).  The marker character matters to
CommonMark in one way only: consecutive items of one list share it, and a new character starts a
new list.  The rewrite keeps every list the same list when, in each *segment* of the content (the
lines between column-0 lines that end every list in both readers: a line after a blank line, a
quote, a code fence, an entry header),

* every bullet of one parser level uses one character (no ``MIXED_LIST_MARKERS``);
* the parser's level of every item is its CommonMark nesting depth (an item indented under the
  content of the one above, at most three columns further; tabs at four-column stops);
* no item is empty and none opens a second list on its own line (``- * x``);
* (a bullet deeper than level 3 has no canonical marker and keeps its own: the parser's
  ``LIST_TOO_DEEP`` then refuses the text, §8 has three levels);

and no rewritten line reads as structure (``* * *`` would be a separator).  Ordered items
(``1.``) are never rewritten; they count as a level, as the parser counts them.
"""

from __future__ import annotations

import re

from ..core.nodes import ListItem
from ..core.parser import parse

CANONICAL = {1: "*", 2: "+", 3: "-"}
_HEAD = "# x [external_memory]\n\n[P5]\n"
_FIRST = _HEAD.count("\n") + 1  # the file line of the content's first line
_ITEM = re.compile(r"([ \t]*)([*+-]|\d{1,9}[.)])([ \t]*)(.*)")
_MAYBE = re.compile(r"[ \t]*[*+-](?:[ \t]|$)")
_NESTED = re.compile(r"(?:[*+-]|\d{1,9}[.)])(?:[ \t]|$)")
_SEGMENT_START = re.compile(r"[>#]|`{3}|~{3}")


def _columns(text: str, start: int = 0) -> int:
    """The column reached after ``text`` written from column ``start`` (tabs to the next multiple of 4)."""
    col = start
    for c in text:
        col = col + 4 - col % 4 if c == "\t" else col + 1
    return col


def _items(lines: list[str]) -> tuple[dict[int, ListItem], bool]:
    """Content line index -> the parser's list item there; and whether a rule bullet was read (never expected)."""
    doc = parse(_HEAD + "\n".join(lines) + "\n[/P5]\n")
    found: dict[int, ListItem] = {}
    rule = False
    for b in doc.walk():
        k = b.line - _FIRST
        if 0 <= k < len(lines):
            if isinstance(b, ListItem):
                found[k] = b
            elif b.type == "rule":
                rule = True
    return found, rule


def _segments(lines: list[str], items: dict[int, ListItem]) -> list[range]:
    """The content cut at column-0 lines that end every open list for the parser and for CommonMark."""
    cuts = [0]
    blank = False
    for k, line in enumerate(lines):
        if not line.strip():
            blank = True
            continue
        if k and k not in items and line[:1] not in (" ", "\t") and (blank or _SEGMENT_START.match(line)):
            cuts.append(k)
        blank = False
    cuts.append(len(lines))
    return [range(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]


def _safe(lines: list[str], segment: range, items: dict[int, ListItem], after_paragraph: bool) -> bool:
    """Whether rewriting the bullets of ``segment`` leaves every CommonMark list as it is (module docstring).

    A small CommonMark reading of the lists alone: the stack of open items (their content
    columns), and whether a paragraph is open in the innermost one — a list that would start
    inside an open paragraph must start with a bullet or with ``1.`` (else the line is paragraph
    text to CommonMark, while the parser counts an item).  Where unsure, the answer is no.
    """
    stack: list[int] = []  # content columns of the open items, outermost first
    chars: dict[int, set[str]] = {}
    blank = False
    # the open leaf of the innermost item (or the top): None, 'para', 'code' or 'quote'
    block = "para" if after_paragraph and segment.start == 0 else None

    def close_to(indent: int) -> bool:
        """Close the items the line is not indented into; whether any was closed."""
        popped = False
        while stack and indent < stack[-1]:
            stack.pop()
            popped = True
        return popped

    for k in segment:
        line = lines[k]
        if not line.strip():
            blank = True
            continue
        item = items.get(k)
        m = _ITEM.fullmatch(line) if item is not None else None
        indent = _columns(line[:len(line) - len(line.lstrip(" \t"))])
        if item is None:
            stripped = line.lstrip(" \t")
            quote = stripped.startswith(">")
            if stripped.startswith("#"):  # an entry's header (the only one left unescaped): it closes every list
                close_to(0)
                block = None
            elif quote or blank or block in (None, "code"):
                close_to(indent)
                base = stack[-1] if stack else 0
                if quote and indent - base > 3:
                    return False  # '>' this far in is not a quote to CommonMark: unsure, no
                block = "quote" if quote else "code" if indent - base >= 4 and block != "para" else "para"
            # else: a continuation line of the open paragraph or quote (lazy or not): nothing closes
            blank = False
            continue
        if m is None:
            return False
        _lead, marker, gap, text = m.groups()
        if not text or _NESTED.match(text):
            return False
        popped = close_to(indent)
        if block == "para" and not blank and not popped and marker not in "*+-" and int(marker[:-1]) != 1:
            return False  # an ordered list other than 1. cannot interrupt a paragraph: CommonMark reads text
        base = stack[-1] if stack else 0
        if indent - base > 3 or len(stack) + 1 != item.level:
            return False
        after_marker = _columns(marker, indent)
        width = _columns(gap, after_marker) - after_marker
        if not 1 <= width <= 4:
            return False  # the item's text starts as indented code
        stack.append(after_marker + width)
        block = "quote" if text.startswith(">") else "para"
        blank = False
        if marker in "*+-" and item.level in CANONICAL:
            chars.setdefault(item.level, set()).add(marker)
    return all(len(c) == 1 for c in chars.values())


def canonical_bullets(lines: list[str], reads_as_structure, *, after_paragraph: bool = False
                      ) -> tuple[list[str], bool]:
    """``lines`` with the bullet markers rewritten to their level's (see the module docstring), and whether any was.

    ``reads_as_structure(line)`` is the sanitiser's own test; a segment whose rewritten lines it
    would flag is left as it was.  ``after_paragraph``: the line before the content is paragraph
    text to CommonMark (a zone's opening tag line), not a header (an entry's).
    """
    if not any(_MAYBE.match(line) for line in lines):
        return lines, False
    items, rule = _items(lines)
    if rule or not items:
        return lines, False
    out = list(lines)
    changed = False
    for segment in _segments(lines, items):
        if not any(k in items for k in segment) or not _safe(lines, segment, items, after_paragraph):
            continue
        rewritten = {}
        for k in segment:
            item = items.get(k)
            m = _ITEM.fullmatch(lines[k]) if item is not None else None
            if item is None or m is None or m.group(2) not in "*+-" or item.level not in CANONICAL:
                continue
            want = CANONICAL[item.level]
            if m.group(2) != want:
                pos = len(m.group(1))
                rewritten[k] = lines[k][:pos] + want + lines[k][pos + 1:]
        if any(reads_as_structure(new) for new in rewritten.values()):
            continue
        for k, new in rewritten.items():
            out[k] = new
        changed = changed or bool(rewritten)
    return out, changed
