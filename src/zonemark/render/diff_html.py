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
``<del>``/``<ins>``.
"""

from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass

from ..core.text import hidden_mark, printable, reveal

_INLINE_LIMIT = 2000  # longer changed lines are not compared word by word
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
                      context: int = 3, caption: str | None = None) -> str:
    """A two-column ``<table class="diff side">`` of ``old`` and ``new``; ``'<p class="diff-none">…'`` when equal."""
    rows = diff_rows(old, new, context=context)
    if not rows:
        return '<p class="diff-none">No change.</p>'
    out = ['<table class="diff side">']
    if caption:
        out.append(f"<caption>{_visible(caption)}</caption>")
    out.append('<thead><tr><th scope="col" class="num"><span class="sr">line</span></th>'
               f'<th scope="col">{_visible(old_label)}</th>'
               '<th scope="col" class="num"><span class="sr">line</span></th>'
               f'<th scope="col">{_visible(new_label)}</th></tr></thead><tbody>')
    for row in rows:
        if row.tag == "gap":
            out.append('<tr class="gap"><td colspan="4">\u22ef</td></tr>')
            continue
        old_text = "" if row.old_text is None else _visible(row.old_text)
        new_text = "" if row.new_text is None else _visible(row.new_text)
        if row.tag == "replace" and row.old_text is not None and row.new_text is not None:
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
    rows = diff_rows(old, new, context=context)
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


__all__ = ["DiffRow", "diff_rows", "side_by_side_html", "unified_html", "unified_text_html", "visible_text_html"]
