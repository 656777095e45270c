"""Diffs of two versions of a file as HTML tables: side by side, or unified (one column).

Both texts are file content and are treated as hostile: every character reaches the page
through :func:`html.escape`, invalid bytes show as ``\\xNN`` (§1, :func:`printable`), and
characters that would make a line look other than it is — control characters, bidirectional
overrides and isolates, zero-width and the other default-ignorable characters, tag characters —
show as a visible ``⟨U+202E⟩`` mark (:func:`zonemark.core.text.reveal`, W30). The
tables carry no script, no style attribute and no link: a page can show them under a strict
Content-Security-Policy.

Rows come from :class:`difflib.SequenceMatcher` on lines, with ``context`` unchanged lines
around each change; within a changed pair of lines the changed words are marked
``<del>``/``<ins>``.  The HTML tables compare only the changed region (:func:`changed_region`: the
text both versions share at the start and at the end is found by comparing slices, linear in the
size of the file, and skipped, a few lines of context kept), so a one-line change of a 10 MB file
costs a scan of it, not a line matching of 200,000 lines against 200,000 (RV7).  A region larger than
:data:`REGION_LINES` lines or :data:`REGION_CHARS` characters on either side is not matched line by
line: the table says how large the change is and names the limit.
"""

from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass, replace
from typing import AnyStr

from ..core.text import hidden_mark, printable, reveal

_INLINE_LIMIT = 500  # longer changed lines are not compared word by word
_INLINE_BUDGET = 10_000  # characters of changed lines a table compares word by word, in all (RV7)
#: The largest changed region, on either side, that a diff table matches line by line.
REGION_LINES = 1000
REGION_CHARS = 100_000
_CHUNK = 1 << 16
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


@dataclass(frozen=True)
class DiffRow:
    """One row of a diff: ``tag`` is equal, delete, insert, replace or gap (skipped unchanged lines)."""

    tag: str
    old_line: int | None
    old_text: str | None
    new_line: int | None
    new_text: str | None


def _mark(char: str) -> str:
    return f'<span class="mark">{hidden_mark(char)}</span>'


def _escape(text: str) -> str:
    return html.escape(text, quote=True)


def _visible(text: str) -> str:
    """``text`` escaped for HTML, with invisible and direction-changing characters shown (W30)."""
    return reveal(printable(text), mark=_mark, plain=_escape)


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def diff_rows(old: str, new: str, *, context: int = 3) -> list[DiffRow]:
    """The rows of the diff of ``old`` and ``new`` (texts), ``context`` unchanged lines around changes."""
    a, b = _lines(old), _lines(new)
    rows: list[DiffRow] = []
    groups = difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context)
    previous_end = (0, 0)
    for group in groups:
        first = group[0]
        if (first[1], first[3]) != previous_end:
            rows.append(DiffRow("gap", None, None, None, None))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows.extend(DiffRow("equal", i + 1, a[i], j1 + (i - i1) + 1, b[j1 + (i - i1)]) for i in range(i1, i2))
            elif tag == "delete":
                rows.extend(DiffRow("delete", i + 1, a[i], None, None) for i in range(i1, i2))
            elif tag == "insert":
                rows.extend(DiffRow("insert", None, None, j + 1, b[j]) for j in range(j1, j2))
            else:
                for k in range(max(i2 - i1, j2 - j1)):
                    i, j = i1 + k, j1 + k
                    rows.append(DiffRow("replace", i + 1 if i < i2 else None, a[i] if i < i2 else None,
                                        j + 1 if j < j2 else None, b[j] if j < j2 else None))
        last = group[-1]
        previous_end = (last[2], last[4])
    if rows and previous_end != (len(a), len(b)):
        rows.append(DiffRow("gap", None, None, None, None))
    return rows


@dataclass(frozen=True)
class Region:
    """The changed lines of two versions with ``context`` lines around them (RV7).

    ``old_text``/``new_text`` are whole lines of each version, starting at line ``first`` of both (the
    versions agree before it); ``old_lines``/``new_lines`` count the lines of each that differ;
    ``at_start``/``at_end`` say whether the region starts at the first line and reaches the end.
    """

    first: int
    old_text: str
    new_text: str
    old_lines: int
    new_lines: int
    at_start: bool
    at_end: bool
    changed: bool
    first_changed: int  # line of the first line that differs (of the new version; of the old one when
    #                     lines were only removed, see ``removed_only``)
    removed_only: bool


def _common_prefix(a: AnyStr, b: AnyStr) -> int:
    """The length of the longest common prefix: chunks compared, then halved inside the first unequal one."""
    n = min(len(a), len(b))
    lo = 0
    while lo < n:
        hi = min(n, lo + _CHUNK)
        if a[lo:hi] != b[lo:hi]:
            while hi - lo > 1:  # a[:lo] == b[:lo]; they differ in [lo, hi)
                mid = (lo + hi) // 2
                if a[lo:mid] == b[lo:mid]:
                    lo = mid
                else:
                    hi = mid
            return lo
        lo = hi
    return n


def _common_suffix(a: AnyStr, b: AnyStr, limit: int) -> int:
    """The length (at most ``limit``) of the longest common suffix."""
    la, lb = len(a), len(b)
    lo = 0
    while lo < limit:
        hi = min(limit, lo + _CHUNK)
        if a[la - hi:la - lo] != b[lb - hi:lb - lo]:
            while hi - lo > 1:  # the last lo agree; they differ within the hi - lo before them
                mid = (lo + hi) // 2
                if a[la - mid:la - lo] == b[lb - mid:lb - lo]:
                    lo = mid
                else:
                    hi = mid
            return lo
        lo = hi
    return limit


def _line_end(text: str, pos: int) -> bool:
    return pos == len(text) or pos == 0 or text[pos - 1] == "\n"


def _count_lines(text: str, start: int, stop: int) -> int:
    if stop <= start:
        return 0
    return text.count("\n", start, stop) + (text[stop - 1] != "\n")


def changed_region(old: str, new: str, *, context: int = 3) -> Region:
    """Where ``new`` differs from ``old``, in whole lines with ``context`` lines around (linear in the size)."""
    start = _common_prefix(old, new)
    tail = _common_suffix(old, new, min(len(old), len(new)) - start)
    if start == len(old) == len(new):
        return Region(1, "", "", 0, 0, True, True, False, 1, False)
    begin = old.rfind("\n", 0, start) + 1  # the start of the line holding the first difference
    old_end, new_end = len(old) - tail, len(new) - tail
    if not (_line_end(old, old_end) and _line_end(new, new_end)):
        stop = old.find("\n", old_end)  # on to the end of the line: the same characters in both (the suffix)
        grow = (len(old) if stop < 0 else stop + 1) - old_end
        old_end, new_end = old_end + grow, new_end + grow
    first_changed = old.count("\n", 0, begin) + 1
    old_lines, new_lines = _count_lines(old, begin, old_end), _count_lines(new, begin, new_end)
    for _ in range(context):
        if begin == 0:
            break
        begin = old.rfind("\n", 0, begin - 1) + 1
    for _ in range(context):
        if old_end >= len(old):
            break
        stop = old.find("\n", old_end)
        grow = (len(old) if stop < 0 else stop + 1) - old_end
        old_end, new_end = old_end + grow, new_end + grow
    return Region(old.count("\n", 0, begin) + 1, old[begin:old_end], new[begin:new_end], old_lines, new_lines,
                  begin == 0, old_end >= len(old), True, first_changed, new_lines == 0)


def region_rows(old: str, new: str, *, context: int = 3, first_line: int = 1, head: bool = True,
                tail: bool = True) -> list[DiffRow] | Region:
    """The rows of the diff of ``old`` and ``new`` computed on their changed region only (RV7); the region
    itself when it is over :data:`REGION_LINES` or :data:`REGION_CHARS` (it is then not matched).  The texts
    may be a window of two files: lines ``first_line``.. of both, ``head``/``tail`` when it reaches the first and
    the last line."""
    region = changed_region(old, new, context=context)
    if not region.changed:
        return []
    if max(region.old_lines, region.new_lines) > REGION_LINES or \
            max(len(region.old_text), len(region.new_text)) > REGION_CHARS:
        return replace(region, first=region.first + first_line - 1,
                       first_changed=region.first_changed + first_line - 1)
    shift = region.first - 1 + first_line - 1
    rows = [DiffRow(r.tag, None if r.old_line is None else r.old_line + shift, r.old_text,
                    None if r.new_line is None else r.new_line + shift, r.new_text)
            for r in diff_rows(region.old_text, region.new_text, context=context)]
    while rows and rows[0].tag == "gap":
        rows.pop(0)
    while rows and rows[-1].tag == "gap":
        rows.pop()
    if not (region.at_start and head):
        rows.insert(0, DiffRow("gap", None, None, None, None))
    if not (region.at_end and tail):
        rows.append(DiffRow("gap", None, None, None, None))
    return rows


def _too_large(region: Region) -> str:
    return (f'<p class="diff-limit">The change spans {region.old_lines:,} line{"s" if region.old_lines != 1 else ""} '
            f'before and {region.new_lines:,} after, from line {region.first_changed}: over the limit of '
            f'{REGION_LINES:,} lines or {REGION_CHARS:,} characters a diff shows here.</p>')


def _inline(old: str, new: str) -> tuple[str, str]:
    """The two lines escaped, with the changed words marked ``<del>`` and ``<ins>``."""
    if len(old) > _INLINE_LIMIT or len(new) > _INLINE_LIMIT:
        return _visible(old), _visible(new)
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    left, right = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            left.append(_visible("".join(a[i1:i2])))
            right.append(_visible("".join(b[j1:j2])))
            continue
        if i2 > i1:
            left.append(f"<del>{_visible(''.join(a[i1:i2]))}</del>")
        if j2 > j1:
            right.append(f"<ins>{_visible(''.join(b[j1:j2]))}</ins>")
    return "".join(left), "".join(right)


def _number(value: int | None) -> str:
    return "" if value is None else str(value)


def side_by_side_html(old: str, new: str, *, old_label: str = "now", new_label: str = "proposed",
                      context: int = 3, caption: str | None = None, first_line: int = 1, head: bool = True,
                      tail: bool = True) -> str:
    """A two-column ``<table class="diff side">`` of ``old`` and ``new``; ``'<p class="diff-none">…'`` when equal
    (``first_line``, ``head``, ``tail``: a window of two files, as for :func:`region_rows`)."""
    rows = region_rows(old, new, context=context, first_line=first_line, head=head, tail=tail)
    if isinstance(rows, Region):
        return _too_large(rows)
    if not rows:
        return '<p class="diff-none">No change.</p>'
    out = ['<table class="diff side">']
    if caption:
        out.append(f"<caption>{_visible(caption)}</caption>")
    out.append('<thead><tr><th scope="col" class="num"><span class="sr">line</span></th>'
               f'<th scope="col">{_visible(old_label)}</th>'
               '<th scope="col" class="num"><span class="sr">line</span></th>'
               f'<th scope="col">{_visible(new_label)}</th></tr></thead><tbody>')
    budget = _INLINE_BUDGET
    for row in rows:
        if row.tag == "gap":
            out.append('<tr class="gap"><td colspan="4">\u22ef</td></tr>')
            continue
        old_text = "" if row.old_text is None else _visible(row.old_text)
        new_text = "" if row.new_text is None else _visible(row.new_text)
        if row.tag == "replace" and row.old_text is not None and row.new_text is not None and \
                len(row.old_text) + len(row.new_text) <= budget:
            budget -= len(row.old_text) + len(row.new_text)
            old_text, new_text = _inline(row.old_text, row.new_text)
        old_class = {"equal": "same", "insert": "empty"}.get(row.tag, "old" if row.old_text is not None else "empty")
        new_class = {"equal": "same", "delete": "empty"}.get(row.tag, "new" if row.new_text is not None else "empty")
        out.append(f'<tr class="{row.tag}"><td class="num">{_number(row.old_line)}</td>'
                   f'<td class="{old_class}">{old_text}</td>'
                   f'<td class="num">{_number(row.new_line)}</td>'
                   f'<td class="{new_class}">{new_text}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def unified_html(old: str, new: str, *, context: int = 3, caption: str | None = None) -> str:
    """A one-column ``<table class="diff unified">``: removed lines, then the lines that replace them."""
    rows = region_rows(old, new, context=context)
    if isinstance(rows, Region):
        return _too_large(rows)
    if not rows:
        return '<p class="diff-none">No change.</p>'
    out = ['<table class="diff unified">']
    if caption:
        out.append(f"<caption>{_visible(caption)}</caption>")
    out.append('<thead><tr><th scope="col" class="num">before</th><th scope="col" class="num">after</th>'
               '<th scope="col" class="sign"><span class="sr">change</span></th><th scope="col">text</th></tr>'
               '</thead><tbody>')
    pending_new: list[DiffRow] = []

    def flush() -> None:
        for row in pending_new:
            out.append(_unified_row("add", None, row.new_line, "+", _visible(row.new_text or "")))
        pending_new.clear()

    for row in rows:
        if row.tag == "gap":
            flush()
            out.append('<tr class="gap"><td colspan="4">\u22ef</td></tr>')
        elif row.tag == "equal":
            flush()
            out.append(_unified_row("same", row.old_line, row.new_line, "", _visible(row.old_text or "")))
        else:
            if row.old_text is not None:
                out.append(_unified_row("del", row.old_line, None, "\u2212", _visible(row.old_text)))
            if row.new_text is not None:
                pending_new.append(row)
    flush()
    out.append("</tbody></table>")
    return "".join(out)


def _unified_row(kind: str, old_line: int | None, new_line: int | None, sign: str, text: str) -> str:
    return (f'<tr class="{kind}"><td class="num">{_number(old_line)}</td><td class="num">{_number(new_line)}</td>'
            f'<td class="sign">{sign}</td><td>{text}</td></tr>')


def unified_text_html(diff: str) -> str:
    """A stored unified diff (``---``/``+++``/``@@`` lines) as an escaped ``<pre class="diff stored">``."""
    out = ['<pre class="diff stored">']
    for line in diff.split("\n"):
        kind = "same"
        if line.startswith(("+++", "---")):
            kind = "head"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        out.append(f'<span class="{kind}">{_visible(line)}</span>\n')
    out.append("</pre>")
    return "".join(out)


def visible_text_html(text: str) -> str:
    """One line of file text for a page: escaped, invisible and direction-changing characters shown."""
    return _visible(text)


__all__ = ["REGION_CHARS", "REGION_LINES", "DiffRow", "Region", "changed_region", "diff_rows", "region_rows",
           "side_by_side_html", "unified_html", "unified_text_html", "visible_text_html"]
