"""A frozen copy of the sanitiser and of the bullet rewrite as they were before their memory was made compact
(src/zonemark/writer/sanitize.py and bullets.py at 1b56d86): the reference the property test
(tests/writer/test_sanitize_reference.py) compares the new code with, output and notes alike.  Not to be
edited with the code: it is what "behaviour unchanged" means."""

# ruff: noqa: C901
from __future__ import annotations

import functools
import html
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from zonemark.core import syntax as sx
from zonemark.core.text import (BIDI_CONTROLS_CLASS, BLANK_LOOK_ALIKES, CONTROLS_CLASS, default_ignorable,
                                hidden_spans, printable)
from zonemark.writer.refusals import RefusedWrite

# -- bullets.py ------------------------------------------------------------------------------

CANONICAL = {1: "*", 2: "+", 3: "-"}
_DEEPEST = 3
_ITEM = re.compile(r"([ \t]*)([*+-]|\d{1,9}[.)])([ \t]+|$)(.*)")
_MAYBE = re.compile(r"[ \t]*[*+-](?:[ \t]|$)")
_NESTED = re.compile(r"(?:[*+-]|\d{1,9}[.)])(?:[ \t]|$)")
_SEGMENT_START = re.compile(r"[>#]|`{3}|~{3}")
_FENCE = re.compile(r"(`{3,}|~{3,})")


@dataclass
class _Open:
    """An open list item: its text column as read and as written, and the level it is written at."""

    read_col: int
    write_col: int
    level: int
    child_indent: int  # where a child item is written (its own indentation at the deepest level)
    flattened: bool


def _columns(text: str, start: int = 0) -> int:
    """The column reached after ``text`` written from column ``start`` (tabs to the next multiple of 4)."""
    col = start
    for c in text:
        col = col + 4 - col % 4 if c == "\t" else col + 1
    return col


def _segments(lines: list[str]) -> list[tuple[range, bool]]:
    """The content cut at column-0 lines that end every open list, each with whether it may be rewritten.

    A fence the sanitiser let through opens at column 0 and closes at column 0 (W4): its lines are
    a segment of their own that is never rewritten.
    """
    out: list[tuple[range, bool]] = []
    start = 0
    blank = False
    k = 0
    n = len(lines)
    while k < n:
        line = lines[k]
        if not line.strip():
            blank = True
            k += 1
            continue
        fence = _FENCE.match(line)
        if fence is not None:
            run = fence.group(1)
            end = k + 1
            while end < n and not (lines[end].startswith(run[0] * len(run))
                                   and not lines[end].lstrip(run[0]).strip(" \t")):
                end += 1
            out.append((range(start, k), True))
            out.append((range(k, min(end + 1, n)), False))
            start = k = min(end + 1, n)
            blank = False
            continue
        if k > start and line[:1] not in (" ", "\t") and _ITEM.fullmatch(line) is None and (
                blank or _SEGMENT_START.match(line)):
            out.append((range(start, k), True))
            start = k
        blank = False
        k += 1
    out.append((range(start, n), True))
    return [(r, ok) for r, ok in out if len(r)]


def _quote_block(text: str) -> str | None:
    """What a quote line leaves open for the next line: a paragraph (``'quote'``) or nothing to continue."""
    inner = text[1:]
    if inner.startswith(" "):
        inner = inner[1:]
    if not inner.strip() or "\t" in inner or _columns(inner[:len(inner) - len(inner.lstrip(" "))]) >= 4:
        return None
    return "quote"


def _normalise(lines: list[str], segment: range, after_paragraph: bool) -> dict[int, str] | None:
    """The rewritten lines of ``segment`` (index -> line), or None where the reading is unsure (module docstring)."""
    stack: list[_Open] = []
    out: dict[int, str] = {}
    blank = False
    # the open leaf of the innermost item (or the top): None, 'para', 'code' or 'quote'
    block: str | None = "para" if after_paragraph and segment.start == 0 else None

    def close_to(indent: int) -> tuple[bool, int | None]:
        """Close the items the line is not indented into: whether a flattened one was among them, and the
        text column the outermost closed one is written at (None: none closed)."""
        flat = False
        closed: int | None = None
        while stack and indent < stack[-1].read_col:
            item = stack.pop()
            flat = flat or item.flattened
            closed = item.write_col
        return flat, closed

    for k in segment:
        line = lines[k]
        if not line.strip():
            blank = True
            continue
        lead = line[:len(line) - len(line.lstrip(" \t"))]
        indent = _columns(lead)
        stripped = line[len(lead):]
        m = _ITEM.fullmatch(line)
        base = stack[-1].read_col if stack else 0
        if m is not None and block == "para" and not blank and (indent - base >= 4 or (
                m.group(2)[0] not in "*+-" and int(m.group(2)[:-1]) != 1 and (not stack or indent >= base))):
            # deep under an open paragraph, or an ordered list other than 1. inside one: continuation text to
            # CommonMark, an item to the parser; a backslash before the marker makes it text to both (W24)
            m = None
            cut = 0 if stripped[0] in "*+-" else len(stripped) - len(stripped.lstrip("0123456789"))
            stripped = stripped[:cut] + "\\" + stripped[cut:]
        if m is None:
            if stripped.startswith("#"):  # an entry's header (the only one left unescaped): it closes every list
                stack.clear()
                block = None
                blank = False
                continue
            quote = stripped.startswith(">")
            if quote or blank or block in (None, "code"):
                flat, closed = close_to(indent)
                if flat and stack and stack[-1].level == _DEEPEST:
                    return None  # text of the item above a flattened one would join the flattened one
                base = stack[-1].read_col if stack else 0
                if quote and indent - base > 3:
                    return None  # '>' this far in is not a quote to CommonMark: unsure, no
                block = _quote_block(stripped) if quote else "code" if indent - base >= 4 else "para"
                at = indent + (stack[-1].write_col if stack else 0) - base
                if closed is not None and at >= closed:
                    if block == "code":
                        return None  # the code would fall into the item it closed
                    at -= indent - base  # a paragraph or a quote reads the same at its item's text column
            elif not stack or indent < stack[-1].read_col:
                at = indent  # a lazy continuation line (or one at the top): it reads the same where it stands
            else:
                at = indent + stack[-1].write_col - stack[-1].read_col
            if at == indent and stripped == line[len(lead):]:
                blank = False
                continue
            blank = False
            new = " " * at + stripped
            if new != line:
                if "\t" in line and (block != "para" or "\t" in stripped):
                    return None  # a tab the move would widen or narrow
                out[k] = new
            continue
        _lead, marker, gap, text = m.groups()
        if not text:
            return None  # an empty item
        if _NESTED.match(text):
            # a second list opened on the item's line (`* * x`, `1. 2. x`): CommonMark nests it, as deep as
            # the markers run, the parser reads one item; the inner marker becomes text (W27)
            text = _escape_marker(text)
        ordered = marker[0] not in "*+-"
        close_to(indent)
        base = stack[-1].read_col if stack else 0
        if indent - base > 3:
            return None  # indented code to CommonMark
        after_marker = _columns(marker, indent)
        width = _columns(gap, after_marker) - after_marker
        if not 1 <= width <= 4:
            return None  # the item's text starts as indented code
        if text.startswith(">") and "\t" in text:
            return None
        parent = stack[-1] if stack else None
        level = min(len(stack) + 1, _DEEPEST)
        at = parent.child_indent if parent is not None else 0
        written = marker if ordered else CANONICAL[level]
        write_col = at + len(written) + 1
        stack.append(_Open(after_marker + width, write_col, level,
                           write_col if level < _DEEPEST else at, len(stack) >= _DEEPEST))
        new = " " * at + written + " " + text
        if new != line:
            out[k] = new
        block = _quote_block(text) if text.startswith(">") else "para"
        blank = False
    return out


def _escape_marker(text: str) -> str:
    """``text`` whose list marker (``*``, ``+``, ``-``, ``1.``, ``1)``) is escaped to read as itself (W27)."""
    if text[0] in "*+-":
        return "\\" + text
    digits = len(text) - len(text.lstrip("0123456789"))
    return text[:digits] + "\\" + text[digits:]


def canonical_bullets(lines: list[str], reads_as_structure: Callable[[str], bool], *,
                      after_paragraph: bool = False) -> tuple[list[str], bool]:
    """``lines`` with every list written in the §8 shape (see the module docstring), and whether any line changed.

    ``reads_as_structure(line)`` is the sanitiser's own test; a segment whose rewritten lines it
    would flag is left as it was.  ``after_paragraph``: the line before the content is paragraph
    text to CommonMark (a zone's opening tag line), not a header (an entry's).
    """
    if not any(_MAYBE.match(line) for line in lines):
        return lines, False
    out = list(lines)
    changed = False
    for segment, open_to_rewrite in _segments(lines):
        if not open_to_rewrite:
            continue
        rewritten = _normalise(lines, segment, after_paragraph)
        if not rewritten or any(reads_as_structure(new) for new in rewritten.values()):
            continue
        for k, new in rewritten.items():
            out[k] = new
        changed = True
    return out, changed


# -- sanitize.py -----------------------------------------------------------------------------

MAX_TITLE_CHARS = 300
#: The longest AI text one write takes (W20): the worst input of this length (short list lines the bullet
#: rewrite parses, runs of markers) is sanitised in about 2 s on a 2-core machine; longer is refused in one line.
MAX_BODY_CHARS = 500_000

_LINE_BREAKS = re.compile(r"\r\n|[\r\u2028\u2029\x85]")
_TITLE_BREAKS = re.compile(r"[\n\r\u2028\u2029\x85\x0b\x0c]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
#: The parser's control characters (C0 but tab and line breaks, DEL) and the C1 controls, which a terminal
#: may read as the start of an escape sequence (U+009B is a one-character CSI).
_CONTROLS = re.compile("[" + CONTROLS_CLASS + "]")
#: The bidirectional embedding, override and isolate controls: they reorder what an editor shows
#: ('\u202e]4P/[' shows as '[/P4]'). Removed with their own note (W15), apart from the other invisible characters.
_BIDI_CONTROLS = re.compile("[" + BIDI_CONTROLS_CLASS + "]")
_LOG_MARKER = "[/LOG]"
#: '<' that opens HTML (a tag, a closing tag, a comment, a declaration, an instruction), unless
#: an odd run of backslashes already escapes it.
_HTML_OPEN = re.compile(r"(?<!\\)((?:\\\\)*)<(?=[A-Za-z/!?])")
_COMMENT_OPEN = re.compile(r"(?<!\\)((?:\\\\)*)<(?=!--)")

# -- characters a reader cannot see (W20, W21, W34, W35): one definition, in zonemark.core.text ------------

#: The categories a reader passes over before a line's first significant character: nonspacing and
#: enclosing marks (they draw on the character before them, here on nothing), format controls, spaces.
SET_ASIDE_CATEGORIES = frozenset(("Mn", "Me", "Cf", "Zs"))


@functools.lru_cache(maxsize=8192)
def set_aside(c: str) -> bool:
    """Whether a reader of the raw text passes over ``c`` before a line's first significant character (W20):
    whitespace, the categories Mn, Me, Cf and Zs, the default-ignorable code points, the blank look-alikes."""
    return (c.isspace() or unicodedata.category(c) in SET_ASIDE_CATEGORIES or default_ignorable(c)
            or c in BLANK_LOOK_ALIKES)


def _skeleton(text: str, blank: str | None = " ") -> str:
    """``text`` with each non-ASCII character that is set aside as ``blank`` (None: removed); ASCII stays.

    With ``blank`` one character the positions of both texts agree, so the structure tests run on the
    skeleton and the escapes are made in the text (linear: one test per distinct character).
    """
    if text.isascii():
        return text
    table = {ord(c): blank for c in set(text) if c > "\x7f" and set_aside(c)}
    return text.translate(table) if table else text


def _remove_hidden(text: str) -> tuple[str, list[str]]:
    """``text`` without what :func:`zonemark.core.text.hidden_spans` finds — the controls, the bidi controls and
    the characters a reader cannot see (W14, W15, W21), but an emoji sequence's and a word's (W35): exactly
    what a view marks (W34) — and a note per kind saying what was removed."""
    spans = hidden_spans(text)
    if not spans:
        return text, []
    pieces, at = [], 0
    for start, end in spans:
        pieces.append(text[at:start])
        at = end
    pieces.append(text[at:])
    removed = "".join(text[start:end] for start, end in spans)
    changes = []
    if _CONTROLS.search(removed):
        changes.append("control characters removed")
    if _BIDI_CONTROLS.search(removed):
        changes.append("bidirectional controls removed")
    unseen = _BIDI_CONTROLS.sub("", _CONTROLS.sub("", removed))
    if unseen:
        gone = sorted(set(unseen))
        names = ", ".join(f"U+{ord(c):04X}" for c in gone[:5]) + (", …" if len(gone) > 5 else "")
        n = len(unseen)
        changes.append(f"{n} invisible character{'s' if n != 1 else ''} removed ({names})")
    return "".join(pieces), changes


_QUOTE_MARK = re.compile(r">")
_LIST_MARK = re.compile(r"(?:[*+-]|\d{1,9}[.)])(?=\s|$)")
_LEAD = re.compile(r"\s*")
# Looser than the parser's own patterns: what a reader of the raw text takes for structure (any blank
# where the parser wants a space).  They run on the skeleton, where every set-aside character is a space.
_THEMATIC = re.compile(r"([-*_])(?:\s*\1){2,}\s*")
_SETEXT = re.compile(r"(?:=+|-+)\s*")
_BULLET_LIKE = re.compile(r"[*+-]\s*(?:(?P<rule>[A-Z]+\d+\s*:)|(?P<edge>(?:MODULE|NUCLEUS)\b)"
                          r"|(?P<registry>(?:ACTIVE|INACTIVE)\s*:))")
_BULLET_KINDS = {"rule": "rule bullet", "edge": "CONNECTIONS edge", "registry": "registry entry"}
_FENCE_LIKE = re.compile(r"`{3,}|~{3,}")
#: A fence the writer lets through: at column 0 (a backtick fence's info string holds no backtick).
_FENCE_OPEN = re.compile(r"(`{3,})[^`]*|(~{3,}).*")
#: A line that can close a fence: a run of one fence character, then only spaces or tabs.
_FENCE_CLOSE = re.compile(r"(`{3,}|~{3,})[ \t]*")
#: First significant characters after which a line is examined (everything else is plain text).
_STARTERS = frozenset("#[>*+-_=`~0123456789\\")
#: A look-alike (a character whose compatibility form, NFKC, starts with one of the starters: '［' '＃'
#: '＞' '＊' '１'…) is examined in its normal form (W4, W22); there '[' and '#' count only where they
#: make a zone tag, the [/LOG] marker, an anchor, a [NUCLEI: …] tag or a header ('［注］', '＃タグ' are
#: kept).
_LOOK_ALIKE_WINDOW = 64
_LOOK_ALIKE_STRUCTURE = re.compile(r"#{1,6}(?:\s|$)|\[\s*(?:/?\s*[Pp]\s*\d+\s*\]|/LOG\s*\]|!|NUCLEI\b)")
_MARKER_NOISE = re.compile(r"[\\*_`~]")
_MARKER_LEAD = re.compile(r"(?:[\s>]|[*+-](?=\s)|\d{1,9}[.)](?=\s))*")


@functools.lru_cache(maxsize=4096)
def _look_alike(c: str) -> bool:
    return c > "\x7f" and unicodedata.normalize("NFKC", c)[:1] in _STARTERS


@dataclass(frozen=True)
class Sanitized:
    """The safe text and a short note per construct that was neutralised or stripped."""

    text: str
    changes: tuple[str, ...] = ()


_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def quoted(value: object, limit: int = 80) -> str:
    """``value`` quoted for a one-line message: line breaks and controls as escapes, invalid bytes as ``\\xNN``."""
    text = printable(str(value))
    text = _UNPRINTABLE.sub(lambda m: {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(m.group(),
                                                                                 f"\\u{ord(m.group()):04x}"), text)
    if len(text) > limit:
        text = text[:limit - 1] + "…"
    return f"'{text}'"


def _refuse(what: str, why: str, rule: str) -> RefusedWrite:
    code = "BAD_TITLE" if what == "title" else "CONTENT_REFUSED"
    return RefusedWrite(f"refused: {what}: {why} ({rule})", code=code, rule=rule)


def sanitize_title(title: str) -> Sanitized:
    """A one-line, structure-free entry title, or :class:`RefusedWrite`."""
    if not isinstance(title, str):
        raise TypeError(f"title must be str, not {type(title).__name__}")
    if _TITLE_BREAKS.search(title):
        raise _refuse("title", "a title is one line (it contains a line break)", "§7.5")
    control = _CONTROLS.search(title) or _BIDI_CONTROLS.search(title)
    if control:
        raise _refuse("title", f"control character U+{ord(control.group()):04X} is not allowed", "§7.5")
    if _SURROGATE.search(title):
        raise _refuse("title", "it is not valid Unicode (lone surrogate)", "§7.5")
    if len(title) > 4 * MAX_TITLE_CHARS:  # before any work proportional to it
        raise _refuse("title", f"it has {len(title)} characters (at most {MAX_TITLE_CHARS})", "§7.5")
    text, changes = _remove_hidden(title)  # no control is left: only what a reader cannot see
    text = text.strip()
    if _renders_as_marker(text) or not _skeleton(text).strip():
        text = ""
    if not text:
        raise _refuse("title", "it is empty", "§7.5")
    if len(text) > MAX_TITLE_CHARS:
        raise _refuse("title", f"it has {len(text)} characters (at most {MAX_TITLE_CHARS})", "§7.5")
    if text.endswith("#") and sx.CLOSING_HASHES.search(" " + text):  # the parser's §4.1 closing hashes
        run = len(text.rstrip("#"))
        text = text[:run] + "\\" + text[run:]
        changes.append("trailing '#' escaped")
    escaped = _HTML_OPEN.sub(r"\1\\<", text)
    if escaped != text:
        text = escaped
        changes.append("'<' escaped")
    return Sanitized(text, tuple(changes))


# -- body lines -----------------------------------------------------------------------------

def _renders_as_marker(line: str) -> bool:
    """Whether ``line`` reads as the §N.19 transport marker raw or rendered (escapes, quotes, code, entities)."""
    if "LOG" not in line and "&" not in line:
        return False
    seen = _skeleton(html.unescape(line), None)
    seen = _MARKER_NOISE.sub("", seen)
    seen = seen[_MARKER_LEAD.match(seen).end():]  # type: ignore[union-attr]
    return seen.strip() == _LOG_MARKER  # the marker is uppercase (§N.19.2); '[/log]' is escaped as a tag


def _thematic(skel: str, pos: int, tails: dict[str, int]) -> bool:
    """Whether ``skel`` from ``pos`` is a thematic break: ``pos`` at or after the start of the run of its
    character and blanks that ends the line (found once per character: ``tails``), with three of the
    character — constant time per step of :func:`_find_structure`, so a million list markers cost one scan."""
    c = skel[pos]
    if c not in tails:
        tails[c] = len(skel.rstrip(c + " \t"))
    return pos >= tails[c] and skel.count(c, pos) >= 3


def _structure_at(skel: str, pos: int, tails: dict[str, int]) -> str | None:
    """What the skeleton line ``skel`` reads as from its first significant character at ``pos``, or None."""
    c = skel[pos]
    if c not in _STARTERS:
        return _look_alike_at(skel, pos) if _look_alike(c) else None
    if c == "#":
        return "header"
    if c == "[":
        return "bracket tag"
    if c in "`~":
        return "code fence" if _FENCE_LIKE.match(skel, pos) else None
    if (c in "-*_" and _thematic(skel, pos, tails)) or (c in "=-" and _SETEXT.fullmatch(skel, pos)):
        return "separator"
    if c in "*+-":
        bm = _BULLET_LIKE.match(skel, pos)
        if bm:
            return _BULLET_KINDS[bm.lastgroup]  # type: ignore[index]
        if skel.startswith("**", pos):
            fm = sx.FIELD_LABEL.match(skel, pos)
            if fm and fm.group(1).strip() in ("STATE", "STATO"):
                return "STATE field"
    return None


def _look_alike_at(skel: str, pos: int) -> str | None:
    """What a line from a look-alike character reads as in its normal form (NFKC; W4, W22), or None.

    The normal form of a bounded window is read like an ASCII line; a separator found there is
    confirmed on the whole rest of the line (it is the last step of the line, so the cost stays linear).
    """
    window = skel[pos:pos + _LOOK_ALIKE_WINDOW]
    seen = _skeleton(unicodedata.normalize("NFKC", window))
    found = _find_structure(seen, look_alikes=False)
    if found is None:
        return None
    at, what = found
    if what in ("header", "bracket tag") and not _LOOK_ALIKE_STRUCTURE.match(seen, at):
        return None
    if what == "separator" and len(skel) - pos > len(window):
        rest = _skeleton(unicodedata.normalize("NFKC", skel[pos:]))
        if _find_structure(rest, look_alikes=False) != found:
            return None
    return "look-alike of a tag or header" if what in ("header", "bracket tag") else f"look-alike of a {what}"


def _find_structure(skel: str, look_alikes: bool = True) -> tuple[int, str] | None:
    """Where the first significant character of a structural line is, and what it reads as.

    ``skel`` is the line's skeleton (:func:`_skeleton`).  Indentation, quote markers and list markers
    are set aside one at a time; at each step the line is examined from there (by position, never by
    slicing: linear in the line), so ``* R1: x`` is a rule bullet, ``* ## x`` a header in a list item and
    ``> > [!CAUTION]`` an anchor in a nested quote.
    """
    if not skel or (skel[0] not in _STARTERS and not skel[0].isspace() and not (look_alikes and _look_alike(skel[0]))):
        return None  # most lines: plain text from their first character
    tails: dict[str, int] = {}
    pos = _LEAD.match(skel).end()  # type: ignore[union-attr]
    n = len(skel)
    while pos < n:
        c = skel[pos]
        if c not in _STARTERS and not (look_alikes and _look_alike(c)):
            return None
        what = _structure_at(skel, pos, tails) if look_alikes or c in _STARTERS else None
        if what is not None:
            return pos, what
        m = _QUOTE_MARK.match(skel, pos) or _LIST_MARK.match(skel, pos)
        if m is None:
            return None
        pos = _LEAD.match(skel, m.end()).end()  # type: ignore[union-attr]
    return None


_ZONE_TAG_LIKE = re.compile(r"\[\s*/?\s*[Pp]\s*\d+\s*\]")


def _reads_as_structure(line: str) -> bool:
    """Whether the sanitiser would escape something in ``line`` (the test a rewritten list line must pass)."""
    return _find_structure(_skeleton(line)) is not None


def reads_as_zone_tag(line: str) -> bool:
    """Whether a reader of the raw text takes ``line`` for a permission tag: ``[Pn]`` or ``[/Pn]`` in any
    spelling (lower case, spaced) once indentation, invisible characters, quote and list markers are set
    aside (W4) — what a proposal may not hold (W1)."""
    skel = _skeleton(line)
    found = _find_structure(skel)
    return found is not None and found[1] == "bracket tag" and bool(_ZONE_TAG_LIKE.match(skel, found[0]))


def _escape(line: str, pos: int, what: str) -> str:
    rest = line[pos:]
    if what == "STATE field":
        end = rest.index(":**") + 3
        return line[:pos] + rest[:end].replace("*", "\\*") + rest[end:]
    return line[:pos] + "\\" + rest


def _fences(lines: list[str]) -> dict[int, str]:
    """The fences the writer lets through: index -> 'open' | 'inside' | 'close' (see the module docstring).

    Linear: the longest closing line of each character after every line is known beforehand, so an
    opener that is never closed is passed in one step, and the search for a closer that exists ends there.
    """
    n = len(lines)
    closers: list[tuple[str, int] | None] = []
    for line in lines:
        m = _FENCE_CLOSE.fullmatch(line) if line[:1] in "`~" else None
        closers.append((line[0], len(m.group(1))) if m else None)
    longest: list[dict[str, int]] = [{}] * (n + 1)  # longest[i]: the longest closer of each character at i or after
    for i in range(n - 1, -1, -1):
        c = closers[i]
        longest[i] = longest[i + 1] if c is None or longest[i + 1].get(c[0], 0) >= c[1] else {**longest[i + 1],
                                                                                               c[0]: c[1]}
    roles: dict[int, str] = {}
    i = 0
    while i < n:
        m = _FENCE_OPEN.fullmatch(lines[i]) if lines[i][:1] in "`~" else None
        if m is None:
            i += 1
            continue
        run = m.group(1) or m.group(2)
        if longest[i + 1].get(run[0], 0) < len(run):  # never closed: the opener is escaped, the scan goes on
            i += 1
            continue
        j = i + 1
        while not (closers[j] is not None and closers[j][0] == run[0] and closers[j][1] >= len(run)):  # type: ignore[index]
            j += 1
        roles[i] = "open"
        roles[j] = "close"
        for k in range(i + 1, j):
            roles[k] = "inside"
        i = j + 1
    return roles


def _clean_lines(text: str, entries: bool) -> tuple[list[str], list[str]]:
    changes: list[str] = []
    lines = text.split("\n")
    skels = _skeleton(text).split("\n")
    pairs = [(ln, sk) for ln, sk in zip(lines, skels) if not _renders_as_marker(ln)]
    if len(pairs) != len(lines):
        changes.append("[/LOG] marker removed (§N.19.3.4)")
    a, b = 0, len(pairs)
    while a < b and not pairs[a][0].strip():
        a += 1
    while b > a and not pairs[b - 1][0].strip():
        b -= 1
    kept = [ln for ln, _ in pairs[a:b]]
    roles = _fences(kept)
    out: list[str] = []
    for i, (line, skel) in enumerate(pairs[a:b]):
        role = roles.get(i)
        if role in ("open", "close"):
            out.append(line)
            continue
        if entries and role is None and line.startswith("###### "):
            title = sanitize_title(line[len("###### "):])
            changes.extend(title.changes)
            out.append("###### " + title.text)
            continue
        found = _find_structure(skel)
        if found is not None:
            line = _escape(line, *found)
            changes.append(f"{found[1]} escaped")
        if "<" in line:
            escaped = (_COMMENT_OPEN if role == "inside" else _HTML_OPEN).sub(r"\1\\<", line)
            if escaped != line:
                line = escaped
                changes.append("HTML escaped")
        out.append(line)
    out, rewritten = canonical_bullets(out, _reads_as_structure, after_paragraph=entries)
    if rewritten:
        changes.append("list markers set to * + - by level (§8)")
    return out, changes


def _clean_characters(text: str, what: str) -> tuple[str, list[str]]:
    """The character-level part of the barrier, for every text an AI writes (W14, W15, W21, W23)."""
    if not isinstance(text, str):
        raise TypeError(f"{what} must be str, not {type(text).__name__}")
    if len(text) > MAX_BODY_CHARS:
        raise _refuse(what, f"it has {len(text)} characters (at most {MAX_BODY_CHARS})", "§5.5")
    if _SURROGATE.search(text):
        raise _refuse(what, "it is not valid Unicode (lone surrogate)", "§5.5")
    changes: list[str] = []
    cleaned = _LINE_BREAKS.sub("\n", text)
    if cleaned != text:
        changes.append("line breaks normalised to \\n")
    cleaned, removed = _remove_hidden(cleaned)  # one pass, so the joiners are judged as a view judges them
    changes += removed
    return cleaned, changes


def clean_characters(text: str, what: str = "content") -> Sanitized:
    """``text`` with what every AI write removes character by character — C0/C1 controls, bidi controls,
    invisible characters — and line breaks as ``\\n``, structure untouched (a proposal's content, W23)."""
    cleaned, changes = _clean_characters(text, what)
    return Sanitized(cleaned, tuple(changes))


def clean_proposal(text: str) -> Sanitized:
    """A proposal's content: :func:`clean_characters`, and its lists in the §8 shape by indentation, as every AI
    write sets them (W24), so that a chat-style list is proposed as a list, not as new findings; its structure
    is otherwise the user's to approve (W23).  The content follows the zone's opening tag line."""
    cleaned, changes = _clean_characters(text, "content")
    lines, rewritten = canonical_bullets(cleaned.split("\n"), _reads_as_structure, after_paragraph=True)
    if rewritten:
        changes.append("list markers set to * + - by level (§8)")
    return Sanitized("\n".join(lines), tuple(changes))


def _sanitize(body: str, what: str, entries: bool) -> Sanitized:
    cleaned, changes = _clean_characters(body, what)
    out, more = _clean_lines(cleaned, entries)
    return Sanitized("\n".join(out), tuple(dict.fromkeys(changes + more)))


def sanitize_body(body: str) -> Sanitized:
    """Structure-free body lines (no trailing newline), or :class:`RefusedWrite`."""
    return _sanitize(body, "body", entries=False)


def sanitize_entries(content: str) -> Sanitized:
    """AI content for a whole ``[P5]`` zone: as :func:`sanitize_body`, but a ``###### `` line at column 0
    outside a fence stays an H6 entry header (its title sanitised as a title)."""
    return _sanitize(content, "content", entries=True)
