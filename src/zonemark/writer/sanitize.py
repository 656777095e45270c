"""First barrier of the safe writer: text from an AI never creates structure (§5.5).

A title or body given to :func:`zonemark.writer.append_entry` (or the content of an AI edit
of a ``[P5]`` zone) is plain content, and it must stay plain for its three readers:

* **zonemark's parser** — the structure of the file (§5.5);
* **a CommonMark renderer** — what the user sees (markdown-it-py in the tests);
* **the next model, reading the raw text** — the context export pastes the file verbatim,
  and there ``[/P4]``, ``[P1]`` or ``## MODULE 999: EVIL`` at the start of a line look
  exactly like structure, inside a code fence or not.

The rule: *no line of AI content may, once its indentation and any quote (``>``) and list
markers before it are set aside, read as a zone tag, a header, a rule bullet, an anchor, a
registry line or a separator — inside a fence or not.*  Such a line gets a backslash in
front of its first significant character: it shows in the raw text, the parser reads plain
text, and CommonMark renders the literal original (an ASCII-punctuation escape).  Inside a
code block the backslash is shown as written — the one place where the rendering is not the
literal original.  The patterns are the parser's own spellings and the looser ones a reader
would still take for structure (``*\\tR0: x``, ``* R0:x``, ``> > [!CAUTION]``).

Code fences: the parser and CommonMark must agree on where every fence the writer lets
through ends.  Only a fence opened at column 0 and closed at column 0 by a line of the same
character (at least as long, nothing but spaces or tabs after it) is let through: there
neither a list item nor a block quote can hold it, and both readers end it on the same
line.  Every other fence-like line (indented, inside a list item or a block quote, never
closed, or a near-closer inside a fence) is escaped.

Per-construct decisions (body lines)::

    construct (first significant characters, after        decision     becomes
    indentation, '>' and list markers)
    ----------------------------------------------------  -----------  -------------------------
    header '#'..'######', with/without space, '#tag'     escape       '\\# ...'
    '[' anything: zone tags '[P1]' '[/P4]' '[p1]'          escape       '\\[P1] ...'
      '[P 1]', anchors '[!NOTE]' (also '> > [!CAUTION]'),
      '[NUCLEI: ..]', link definitions
    rule bullet '* R1: x', '*\\tR0: x', '* R0:x', '*R1:'    escape       '\\* R1: x'
    CONNECTIONS edge '* MODULE x', '- NUCLEUS 1'          escape       '\\* MODULE x'
    registry line '* ACTIVE: ..', '* INACTIVE:'           escape       '\\* ACTIVE: ..'
    '**STATE:** ..' / '**STATO:**' field label            escape       '\\*\\*STATE:\\*\\* ..'
    separator / thematic break '---' '***' '___' '- - -'  escape       '\\---'
      '* * *', setext underline '===' '-'
    fence '```' '~~~' not let through (see above)         escape       '\\```'
    '<' opening HTML anywhere in a line ('<!--',          escape       '\\<!--'
      '<div', '</x', '<?', '<!X'; inside a let-through
      fence only '<!--')
    a line that renders as '[/LOG]' ('[/LOG]',           strip        (line removed)
      '\\[/LOG]', '> [/LOG]', '`[/LOG]`', '&#91;/LOG]')
      (§N.19.3.4: never in a file, not even on screen)
    plain quote '> text', bullet '* text', '1. text'      keep
    bullet marker not its §8 level's ('- a', nested '* b') rewrite    '* a', '  + b' (only where
      (after the escapes above; :mod:`.bullets`, W10)                  CommonMark sees no change)
    CR, CRLF, U+2028, U+2029, U+0085                     normalise    '\\n'
    NUL and other C0 controls, DEL (sx.CONTROL_CHARS),   strip        (removed)
      C1 controls U+0080-U+009F (U+009B is a CSI)
    bidi embedding/override/isolate controls             strip        (removed; the marks
      (U+202A-U+202E, U+2066-U+2069)                                  U+200E/F, U+061C stay)
    lone surrogates (not encodable as UTF-8)             refuse
    zero-width and other invisible characters (bidi      set aside    (like indentation:
      marks, fillers, variation selectors, tag                        '\\u200b\\[P1]')
      characters), Unicode spaces before the first
      significant character
    '［' '﹇' '＃' '﹟' (NFKC '[' '#') when the normal form    escape       '\\［/P4］'
      is a zone tag, '[/LOG]', an anchor, '[NUCLEI',
      or a header ('＃＃ x'); otherwise ('［注］', '＃タグ')    keep
    other look-alikes ('【', '⟦')                         keep         (other characters)
    leading/trailing blank lines of the body             strip

Title (the text after ``###### LOG: <date> — ``)::

    line break of any kind (LF CR U+2028 U+2029 U+0085 VT FF)   refuse  (a title is one line)
    control characters, lone surrogates                        refuse
    empty after stripping blanks, or only '[/LOG]'             refuse
    longer than MAX_TITLE_CHARS                                refuse
    trailing '#' run (read as closing hashes, §4.1)            escape '\\#'
    '<' opening inline HTML                                    escape '\\<'
    anything else ('[P1]', '#', '* R1:' mid-line)               keep (inline text of a header)

An escape is never undone by a backslash the AI wrote itself: ``\\<!--`` stays one
escaped ``<`` (not ``\\\\<!--``, which would render a real comment).

Cost (W20): linear in the text, and the text is read in chunks of whole lines (:data:`_CHUNK_CHARS`):
what is held for the whole of it is its cleaned copy and the written text, one string per chunk —
never a string per line.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..core import syntax as sx
from ..core.text import (BIDI_CONTROLS_CLASS, BLANK_LOOK_ALIKES, CONTROLS_CLASS, default_ignorable, hidden_spans,
                         printable)
from .bullets import LineChunks, canonical_bullets
from .refusals import RefusedWrite

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


class _Removed:
    """What the character pass removed, gathered chunk by chunk: enough for its notes (W14, W15, W21)."""

    def __init__(self) -> None:
        self.controls = False
        self.bidi = False
        self.unseen = 0
        self.kinds: set[str] = set()  # the distinct invisible characters: a few thousand code points at most

    def add(self, removed: str) -> None:
        if not removed:
            return
        self.controls = self.controls or _CONTROLS.search(removed) is not None
        self.bidi = self.bidi or _BIDI_CONTROLS.search(removed) is not None
        unseen = _BIDI_CONTROLS.sub("", _CONTROLS.sub("", removed))
        self.unseen += len(unseen)
        self.kinds.update(unseen)

    def notes(self) -> list[str]:
        changes = []
        if self.controls:
            changes.append("control characters removed")
        if self.bidi:
            changes.append("bidirectional controls removed")
        if self.unseen:
            gone = sorted(self.kinds)
            names = ", ".join(f"U+{ord(c):04X}" for c in gone[:5]) + (", …" if len(gone) > 5 else "")
            n = self.unseen
            changes.append(f"{n} invisible character{'s' if n != 1 else ''} removed ({names})")
        return changes


def _without_hidden(text: str, removed: _Removed) -> str:
    """``text`` without what :func:`zonemark.core.text.hidden_spans` finds — the controls, the bidi controls and
    the characters a reader cannot see (W14, W15, W21), but an emoji sequence's and a word's (W35): exactly
    what a view marks (W34) —, each removed character told to ``removed``."""
    spans = hidden_spans(text)
    if not spans:
        return text
    pieces, at = [], 0
    for start, end in spans:
        pieces.append(text[at:start])
        at = end
    pieces.append(text[at:])
    removed.add("".join(text[start:end] for start, end in spans))
    return "".join(pieces)


def _remove_hidden(text: str) -> tuple[str, list[str]]:
    """``text`` without its hidden characters (:func:`_without_hidden`) and a note per kind saying what was
    removed."""
    removed = _Removed()
    return _without_hidden(text, removed), removed.notes()


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


# -- the text in chunks: what is held at once (W20) ----------------------------------------------------------
#
# A body of 500,000 characters may be 100,000 short lines; a string, a skeleton, a tuple and a list slot per
# line cost about 250 bytes a line, forty times a text of six-byte lines.  So the text is read in chunks of
# about _CHUNK_CHARS characters, cut after a line feed (a line is never cut: every decision of the barrier is
# one of a line, or of the fences and lists around it, which are carried from chunk to chunk), and what is
# held for the whole text is the cleaned text and the written text, each as one string per chunk; the lines
# of one chunk at a time are strings of their own.

_CHUNK_CHARS = 1 << 13
#: A line that is not blank (``str.strip`` and ``\\s`` agree on what is white space).
_NOT_BLANK = re.compile(r"\S")


def _chunks(text: str) -> Iterator[tuple[str, bool]]:
    """``text`` in slices of about :data:`_CHUNK_CHARS` characters, each but the last ending with a line feed, and
    whether it is the last (which may be empty: the line after a final line feed); one chunk is ``text`` itself."""
    n, start = len(text), 0
    while n - start > _CHUNK_CHARS:
        cut = text.find("\n", start + max(_CHUNK_CHARS, 1) - 1) + 1
        if cut <= 0:
            break
        yield text[start:cut], False
        start = cut
    yield (text if start == 0 else text[start:]), True


def _chunk_lines(chunk: str, last: bool) -> list[str]:
    """The lines of one chunk (the line feed that ends a chunk but the last ends its last line)."""
    lines = chunk.split("\n")
    if not last:
        lines.pop()
    return lines


class _Closers:
    """The longest closing line of each fence character after any line, in the space of the few longest:
    a closer longer than every later one of its character is a step of a staircase (at most about
    sqrt(2 * length) steps, their lengths all different), so the question 'is an opener at line ``i`` of
    run ``n`` ever closed?' is a look at the first step after ``i`` — linear, with no slot per line."""

    def __init__(self) -> None:
        self._steps: dict[str, list[tuple[int, int]]] = {"`": [], "~": []}  # (line, length), lengths falling
        self._at = {"`": 0, "~": 0}  # the first step after the last line asked about (asked in line order)

    def add(self, i: int, text: str, start: int, end: int) -> None:
        """Line ``i`` (in order), ``text[start:end]``, when it can close a fence: a run of one fence character, then
        spaces or tabs."""
        m = _FENCE_CLOSE.fullmatch(text, start, end)
        if m is None:
            return
        steps = self._steps[text[start]]
        while steps and steps[-1][1] <= len(m.group(1)):
            steps.pop()
        steps.append((i, len(m.group(1))))

    def closed(self, i: int, c: str, n: int) -> bool:
        """Whether a line after line ``i`` closes a fence of ``n`` characters ``c`` (``i`` never goes back)."""
        steps, at = self._steps[c], self._at[c]
        while at < len(steps) and steps[at][0] <= i:
            at += 1
        self._at[c] = at
        return at < len(steps) and steps[at][1] >= n


class _Cleaned:
    """The cleaned text, chunk by chunk, and what the line pass needs to know of all of it beforehand: whether a
    [/LOG] line is removed, the first and last lines kept (leading and trailing blank lines are stripped) and
    the fence closers (W4)."""

    def __init__(self) -> None:
        self.chunks: list[str] = []
        self.lines = 0
        self.marker = False
        self.first = -1  # the first and the last line that is neither blank nor a [/LOG] marker, or -1
        self.last = -1
        self.closers = _Closers()

    def add(self, chunk: str, last: bool) -> None:
        """Read one chunk (:func:`_chunks`) and keep it.  Its lines are read in place, by position: a line is made
        a string of its own only to be tested as a [/LOG] marker or a fence closer."""
        i, at = self.lines, 0
        stop = len(chunk) if last else len(chunk) - 1  # the line feed that ends a chunk but the last ends a line
        while True:
            end = chunk.find("\n", at, stop)
            if end < 0:
                end = stop
            if ((chunk.find("LOG", at, end) >= 0 or chunk.find("&", at, end) >= 0)
                    and _renders_as_marker(chunk[at:end])):
                self.marker = True
            elif _NOT_BLANK.search(chunk, at, end):
                if self.first < 0:
                    self.first = i
                self.last = i
                if chunk[at] in "`~":
                    self.closers.add(i, chunk, at, end)
            i += 1
            if end == stop:
                break
            at = end + 1
        self.lines = i
        self.chunks.append(chunk)


def _clean_characters(text: str, what: str, sink: Callable[[str, bool], None]) -> list[str]:
    """The character-level part of the barrier, for every text an AI writes (W14, W15, W21, W23): each cleaned
    chunk of ``text`` is handed to ``sink`` (with whether it is the last, :func:`_chunks`), the notes are
    returned.  Chunk by chunk, so that no more than the text and its cleaned copy are held: a line break and
    the hidden characters are decided within a line, and a chunk ends after a line feed."""
    if not isinstance(text, str):
        raise TypeError(f"{what} must be str, not {type(text).__name__}")
    if len(text) > MAX_BODY_CHARS:
        raise _refuse(what, f"it has {len(text)} characters (at most {MAX_BODY_CHARS})", "§5.5")
    if _SURROGATE.search(text):
        raise _refuse(what, "it is not valid Unicode (lone surrogate)", "§5.5")
    breaks = False
    removed = _Removed()
    for chunk, last in _chunks(text):
        if _LINE_BREAKS.search(chunk):
            breaks = True
            chunk = _LINE_BREAKS.sub("\n", chunk)
        sink(_without_hidden(chunk, removed), last)  # one pass, so the joiners are judged as a view judges them
        del chunk
    return (["line breaks normalised to \\n"] if breaks else []) + removed.notes()


def _escape_line(line: str, role: str | None, changes: dict[str, None]) -> str:
    """A body line with what reads as structure escaped (module docstring); ``role``: its place in a fence."""
    if line[:1].isascii() and line[:1] not in _STARTERS and not line[:1].isspace():
        found = None  # most lines: plain text from their first character (the skeleton keeps ASCII)
    else:
        found = _find_structure(_skeleton(line))
    if found is not None:
        line = _escape(line, *found)
        changes[f"{found[1]} escaped"] = None
    if "<" in line:
        escaped = (_COMMENT_OPEN if role == "inside" else _HTML_OPEN).sub(r"\1\\<", line)
        if escaped != line:
            line = escaped
            changes["HTML escaped"] = None
    return line


def _clean_lines(cleaned: _Cleaned, entries: bool, changes: dict[str, None]) -> LineChunks:
    """The kept lines with their structure escaped, as :class:`LineChunks` (one run per chunk of the text).

    Fences (W4): an opener at column 0 is let through when a later line closes it — known beforehand from
    :class:`_Closers`, so an opener never closed is passed in one step —, and the lines up to the first
    closer are inside it: linear.  The chunks of ``cleaned`` are let go as they are read.
    """
    if cleaned.marker:
        changes["[/LOG] marker removed (§N.19.3.4)"] = None
    chunks, counts = [], []
    fence: tuple[str, int] | None = None  # the open fence let through: its character and length
    i = 0
    n_chunks = len(cleaned.chunks)
    for c in range(n_chunks):
        chunk, cleaned.chunks[c] = cleaned.chunks[c], ""
        out: list[str] = []
        same = True  # every line of the chunk kept as it is: the chunk is its own run
        for line in _chunk_lines(chunk, c == n_chunks - 1):
            k, i = i, i + 1
            if k < cleaned.first or k > cleaned.last or (("LOG" in line or "&" in line) and _renders_as_marker(line)):
                same = False
                continue
            role = None
            if fence is not None:
                m = _FENCE_CLOSE.fullmatch(line) if line[:1] == fence[0] else None
                if m is not None and len(m.group(1)) >= fence[1]:
                    fence, role = None, "close"
                else:
                    role = "inside"
            elif line[:1] in "`~":
                m = _FENCE_OPEN.fullmatch(line)
                if m is not None:
                    run = m.group(1) or m.group(2)
                    if cleaned.closers.closed(k, run[0], len(run)):
                        fence, role = (run[0], len(run)), "open"
            if role in ("open", "close"):
                out.append(line)
                continue
            if entries and role is None and line.startswith("###### "):
                title = sanitize_title(line[len("###### "):])
                changes.update(dict.fromkeys(title.changes))
                written = "###### " + title.text
            else:
                written = _escape_line(line, role, changes)
            same = same and written == line
            out.append(written)
        if out:  # a run ends with a line feed unless it holds the last line kept
            ended = cleaned.last >= i
            counts.append(len(out))
            if not (same and ended == (c < n_chunks - 1)):
                chunk = ""  # let go before the run is joined: a chunk of one long line is held twice, not thrice
                if ended:
                    out.append("")
                chunk = "\n".join(out)
            chunks.append(chunk)
        del chunk, out
    cleaned.chunks = []
    return LineChunks(chunks, counts)


def clean_characters(text: str, what: str = "content") -> Sanitized:
    """``text`` with what every AI write removes character by character — C0/C1 controls, bidi controls,
    invisible characters — and line breaks as ``\\n``, structure untouched (a proposal's content, W23)."""
    chunks: list[str] = []
    changes = _clean_characters(text, what, lambda chunk, last: chunks.append(chunk))
    return Sanitized("".join(chunks), tuple(changes))


def clean_proposal(text: str) -> Sanitized:
    """A proposal's content: :func:`clean_characters`, and its lists in the §8 shape by indentation, as every AI
    write sets them (W24), so that a chat-style list is proposed as a list, not as new findings; its structure
    is otherwise the user's to approve (W23).  The content follows the zone's opening tag line."""
    chunks: list[str] = []
    counts: list[int] = []

    def keep(chunk: str, last: bool) -> None:
        chunks.append(chunk)
        counts.append(chunk.count("\n") + last)
    changes = _clean_characters(text, "content", keep)
    lines, rewritten = canonical_bullets(LineChunks(chunks, counts), _reads_as_structure, after_paragraph=True)
    if rewritten:
        changes.append("list markers set to * + - by level (§8)")
    return Sanitized(lines.text(), tuple(changes))


def _sanitize(body: str, what: str, entries: bool) -> Sanitized:
    cleaned = _Cleaned()
    changes, more = _clean_characters(body, what, cleaned.add), dict[str, None]()
    lines = _clean_lines(cleaned, entries, more)
    del cleaned
    out, rewritten = canonical_bullets(lines, _reads_as_structure, after_paragraph=entries)
    del lines
    if rewritten:
        more["list markers set to * + - by level (§8)"] = None
    return Sanitized(out.text(), tuple(dict.fromkeys(changes + list(more))))


def sanitize_body(body: str) -> Sanitized:
    """Structure-free body lines (no trailing newline), or :class:`RefusedWrite`."""
    return _sanitize(body, "body", entries=False)


def sanitize_entries(content: str) -> Sanitized:
    """AI content for a whole ``[P5]`` zone: as :func:`sanitize_body`, but a ``###### `` line at column 0
    outside a fence stays an H6 entry header (its title sanitised as a title)."""
    return _sanitize(content, "content", entries=True)
