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
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass

from ..core import syntax as sx
from ..core.text import printable
from .bullets import canonical_bullets
from .refusals import RefusedWrite

MAX_TITLE_CHARS = 300
MAX_BODY_CHARS = 4_000_000

_LINE_BREAKS = re.compile(r"\r\n|[\r\u2028\u2029\x85]")
_TITLE_BREAKS = re.compile(r"[\n\r\u2028\u2029\x85\x0b\x0c]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
#: The parser's control characters (C0 but tab and line breaks, DEL) and the C1 controls, which a terminal
#: may read as the start of an escape sequence (U+009B is a one-character CSI).
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
#: The bidirectional embedding, override and isolate controls: they reorder what an editor shows
#: ('\u202e]4P/[' shows as '[/P4]'). The marks U+200E, U+200F and U+061C stay (right-to-left text needs them).
_BIDI_CONTROLS = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
_LOG_MARKER = "[/LOG]"
#: '<' that opens HTML (a tag, a closing tag, a comment, a declaration, an instruction), unless
#: an odd run of backslashes already escapes it.
_HTML_OPEN = re.compile(r"(?<!\\)((?:\\\\)*)<(?=[A-Za-z/!?])")
_COMMENT_OPEN = re.compile(r"(?<!\\)((?:\\\\)*)<(?=!--)")
#: Characters a reader of the raw text does not see (Unicode's default-ignorable code points and
#: the other format controls, plus the blanks that draw nothing): soft hyphen, combining grapheme
#: joiner, Arabic letter mark and the other bidi controls, Hangul and Khmer fillers, Mongolian and
#: variation selectors, zero-width characters, the blank Braille pattern, BOM, interlinear
#: annotation, shorthand and musical format controls, the tag characters of U+E0000.
_INVISIBLE_CHARS = (r"\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                    r"\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\U0001bca0-\U0001bca3"
                    r"\U0001d173-\U0001d17a\U000e0000-\U000e0fff")
_INVISIBLE = re.compile("[" + _INVISIBLE_CHARS + "]")
#: What is set aside before the first significant character: whitespace (Unicode spaces too)
#: and the invisible characters.
_BLANK = r"[\s" + _INVISIBLE_CHARS + "]"
_LEAD = re.compile(_BLANK + "*")
_QUOTE_MARK = re.compile(r">")
_LIST_MARK = re.compile(r"(?:[*+-]|\d{1,9}[.)])(?=" + _BLANK + "|$)")
# Looser than the parser's own patterns: what a reader of the raw text takes for structure
# (any blank or invisible character where the parser wants a space).
_THEMATIC = re.compile(r"([-*_])(?:" + _BLANK + r"*\1){2,}" + _BLANK + "*")
_SETEXT = re.compile(r"(?:=+|-+)" + _BLANK + "*")
_RULE_LIKE = re.compile(r"[*+-]" + _BLANK + r"*[A-Z]+\d+" + _BLANK + "*:")
_CONNECTION_LIKE = re.compile(r"[*+-]" + _BLANK + r"*(?:MODULE|NUCLEUS)\b")
_REGISTRY_LIKE = re.compile(r"[*+-]" + _BLANK + r"*(?:ACTIVE|INACTIVE)" + _BLANK + "*:")
_FENCE_LIKE = re.compile(r"`{3,}|~{3,}")
#: A fence the writer lets through: at column 0 (a backtick fence's info string holds no backtick).
_FENCE_OPEN = re.compile(r"(`{3,})[^`]*|(~{3,}).*")
#: First significant characters after which a line is examined (everything else is plain text).
#: The characters whose compatibility form (NFKC) is '[' or '#' (fullwidth and small forms): to a model
#: reading the raw text '［/P4］' is the tag it imitates, so such a line is escaped when its normal form
#: is a zone tag, the [/LOG] marker, an anchor, a [NUCLEI: …] tag or a header (W4).  Ordinary text that
#: starts with one ('［注］', '＃タグ') is kept.
_LOOK_ALIKE_STARTERS = "\ufe47\uff3b\ufe5f\uff03"
_STARTERS = frozenset("#[>*+-_=`~0123456789\\" + _LOOK_ALIKE_STARTERS)
_LOOK_ALIKE_STRUCTURE = re.compile(r"#{1,6}(?:\s|$)|\[\s*(?:/?\s*[Pp]\s*\d+\s*\]|/LOG\s*\]|!|NUCLEI\b)")
_MARKER_NOISE = re.compile(r"[\\*_`~]")
_MARKER_LEAD = re.compile(r"(?:[\s>]|[*+-](?=\s)|\d{1,9}[.)](?=\s))*")


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
    text = title.strip()
    if _renders_as_marker(text) or not _INVISIBLE.sub("", text).strip():
        text = ""
    if not text:
        raise _refuse("title", "it is empty", "§7.5")
    if len(text) > MAX_TITLE_CHARS:
        raise _refuse("title", f"it has {len(text)} characters (at most {MAX_TITLE_CHARS})", "§7.5")
    changes = []
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
    seen = html.unescape(line)
    seen = _MARKER_NOISE.sub("", _INVISIBLE.sub("", seen))
    seen = seen[_MARKER_LEAD.match(seen).end():]  # type: ignore[union-attr]
    return seen.strip() == _LOG_MARKER  # the marker is uppercase (§N.19.2); '[/log]' is escaped as a tag


def _structure_at(rest: str) -> str | None:
    """What ``rest`` (a line from its first significant character) reads as, or None for plain text."""
    c = rest[0]
    if c in _LOOK_ALIKE_STARTERS:
        seen = unicodedata.normalize("NFKC", rest[:64])
        return "look-alike of a tag or header" if _LOOK_ALIKE_STRUCTURE.match(seen) else None
    if c == "#":
        return "header"
    if c == "[":
        return "bracket tag"
    if c in "`~":
        return "code fence" if _FENCE_LIKE.match(rest) else None
    if _THEMATIC.fullmatch(rest) or _SETEXT.fullmatch(rest):
        return "separator"
    if c in "*+-":
        if _RULE_LIKE.match(rest):
            return "rule bullet"
        if _CONNECTION_LIKE.match(rest):
            return "CONNECTIONS edge"
        if _REGISTRY_LIKE.match(rest):
            return "registry entry"
        if c == "*":
            fm = sx.FIELD_LABEL.match(rest)
            if fm and fm.group(1).strip() in ("STATE", "STATO"):
                return "STATE field"
    return None


def _find_structure(line: str) -> tuple[int, str] | None:
    """Where the first significant character of a structural line is, and what it reads as.

    Indentation, quote markers and list markers are set aside one at a time; at each step the
    rest of the line is examined, so ``* R1: x`` is a rule bullet, ``* ## x`` a header in a
    list item and ``> > [!CAUTION]`` an anchor in a nested quote.
    """
    pos = _LEAD.match(line).end()  # type: ignore[union-attr]
    while pos < len(line):
        c = line[pos]
        if c not in _STARTERS:
            return None
        what = _structure_at(line[pos:])
        if what is not None:
            return pos, what
        m = _QUOTE_MARK.match(line, pos) or _LIST_MARK.match(line, pos)
        if m is None:
            return None
        pos = _LEAD.match(line, m.end()).end()  # type: ignore[union-attr]
    return None


_ZONE_TAG_LIKE = re.compile(r"\[" + _BLANK + r"*/?" + _BLANK + r"*[Pp]" + _BLANK + r"*\d+" + _BLANK + r"*\]")


def reads_as_zone_tag(line: str) -> bool:
    """Whether a reader of the raw text takes ``line`` for a permission tag: ``[Pn]`` or ``[/Pn]`` in any
    spelling (lower case, spaced) once indentation, invisible characters, quote and list markers are set
    aside (W4) — what a proposal may not hold (W1)."""
    found = _find_structure(line)
    return found is not None and found[1] == "bracket tag" and bool(_ZONE_TAG_LIKE.match(line, found[0]))


def _escape(line: str, pos: int, what: str) -> str:
    rest = line[pos:]
    if what == "STATE field":
        end = rest.index(":**") + 3
        return line[:pos] + rest[:end].replace("*", "\\*") + rest[end:]
    return line[:pos] + "\\" + rest


def _fences(lines: list[str]) -> dict[int, str]:
    """The fences the writer lets through: index -> 'open' | 'inside' | 'close' (see the module docstring)."""
    roles: dict[int, str] = {}
    i, n = 0, len(lines)
    while i < n:
        m = _FENCE_OPEN.fullmatch(lines[i])
        if m is None:
            i += 1
            continue
        run = m.group(1) or m.group(2)
        closer = re.compile(re.escape(run[0]) + "{" + str(len(run)) + r",}[ \t]*")
        j = i + 1
        while j < n and not closer.fullmatch(lines[j]):
            j += 1
        if j == n:  # never closed: the opener is escaped, the scan goes on after it
            i += 1
            continue
        roles[i] = "open"
        roles[j] = "close"
        for k in range(i + 1, j):
            roles[k] = "inside"
        i = j + 1
    return roles


def _clean_lines(text: str, entries: bool) -> tuple[list[str], list[str]]:
    changes: list[str] = []
    lines = text.split("\n")
    kept = [ln for ln in lines if not _renders_as_marker(ln)]
    if len(kept) != len(lines):
        changes.append("[/LOG] marker removed (§N.19.3.4)")
    while kept and not kept[0].strip():
        kept.pop(0)
    while kept and not kept[-1].strip():
        kept.pop()
    roles = _fences(kept)
    out: list[str] = []
    for i, line in enumerate(kept):
        role = roles.get(i)
        if role in ("open", "close"):
            out.append(line)
            continue
        if entries and role is None and line.startswith("###### "):
            title = sanitize_title(line[len("###### "):])
            changes.extend(title.changes)
            out.append("###### " + title.text)
            continue
        found = _find_structure(line)
        if found is not None:
            line = _escape(line, *found)
            changes.append(f"{found[1]} escaped")
        if "<" in line:
            escaped = (_COMMENT_OPEN if role == "inside" else _HTML_OPEN).sub(r"\1\\<", line)
            if escaped != line:
                line = escaped
                changes.append("HTML escaped")
        out.append(line)
    out, rewritten = canonical_bullets(out, lambda line: _find_structure(line) is not None, after_paragraph=entries)
    if rewritten:
        changes.append("list markers set to * + - by level (§8)")
    return out, changes


def _sanitize(body: str, what: str, entries: bool) -> Sanitized:
    if not isinstance(body, str):
        raise TypeError(f"{what} must be str, not {type(body).__name__}")
    if _SURROGATE.search(body):
        raise _refuse(what, "it is not valid Unicode (lone surrogate)", "§5.5")
    if len(body) > MAX_BODY_CHARS:
        raise _refuse(what, f"it has {len(body)} characters (at most {MAX_BODY_CHARS})", "§5.5")
    changes: list[str] = []
    text = _LINE_BREAKS.sub("\n", body)
    if text != body:
        changes.append("line breaks normalised to \\n")
    cleaned = _CONTROLS.sub("", text)
    if cleaned != text:
        changes.append("control characters removed")
    text, cleaned = cleaned, _BIDI_CONTROLS.sub("", cleaned)
    if cleaned != text:
        changes.append("bidirectional controls removed")
    out, more = _clean_lines(cleaned, entries)
    return Sanitized("\n".join(out), tuple(dict.fromkeys(changes + more)))


def sanitize_body(body: str) -> Sanitized:
    """Structure-free body lines (no trailing newline), or :class:`RefusedWrite`."""
    return _sanitize(body, "body", entries=False)


def sanitize_entries(content: str) -> Sanitized:
    """AI content for a whole ``[P5]`` zone: as :func:`sanitize_body`, but a ``###### `` line at column 0
    outside a fence stays an H6 entry header (its title sanitised as a title)."""
    return _sanitize(content, "content", entries=True)
