"""First barrier of the safe writer: text from an AI never creates structure (§5.5).

A title or body given to :func:`zonemark.writer.append_entry` (or to an AI edit of a
``[P5]`` zone) is plain content.  Every line the parser would read as structure — and every
line a CommonMark renderer would read as a block that hides or re-parents what follows — is
either *neutralised* (a backslash escape in front of the first significant character, which
both the parser and CommonMark then read as literal text) or *refused*.  The patterns are
the parser's own (:mod:`zonemark.syntax`), so the two cannot drift.

Per-construct decisions (body lines; a line's leading spaces and tabs are kept)::

    construct (first non-blank characters)          decision     becomes
    ----------------------------------------------  -----------  ------------------------------
    header '#'..'######', with/without space,        neutralise   '\\# ...'
      any indentation, '#hashtag'
    zone tag '[Pn]' '[/Pn]' '[p1]' '[P 1]' ...,      neutralise   '\\[P1] ...'
      '[NUCLEI: ..]', '[!NOTE]', any line starting
      with '['
    '[/LOG]' alone on its line (§N.19.3.4)           strip        (line removed)
    attention anchor '> [!KW]' (sx.ANCHOR_START)     neutralise   '\\> [!NOTE] ...'
    plain quote '> text'                             keep         (a quote is free text)
    rule bullet '* X1: ...' (sx.RULE_BULLET)         neutralise   '\\* R1: ...'
    CONNECTIONS edge '* MODULE x' (CONNECTION_LIKE)  neutralise   '\\* MODULE x'
    registry line '* ACTIVE: ..' (REGISTRY_ENTRY)    neutralise   '\\* ACTIVE: ..'
    '**STATE:** ..' field label (sx.FIELD_LABEL)     neutralise   '\\*\\*STATE:\\*\\* ..'
    separator / thematic break '---' '***' '___'     neutralise   '\\---'
      '- - -', setext underline '===' '-'
    HTML: '<!--' '<div' '<script' ... (any '<')     neutralise   '\\<!-- ...'
    code fence '```' '~~~' closed inside the body    keep         (inside: verbatim, opaque)
    code fence never closed inside the body          neutralise   '\\```' (would swallow [/Pn])
    CR, CRLF, U+2028, U+2029, U+0085                 normalise    '\\n'
    NUL and other C0 controls, DEL (sx.CONTROL_CHARS) strip       (removed)
    lone surrogates (not encodable as UTF-8)         refuse
    zero-width, fullwidth '＃' '［', look-alikes       keep         literal text to both readers
    leading/trailing blank lines of the body         strip

Title (the text after ``###### LOG: <date> — ``)::

    line break of any kind (LF CR U+2028 U+2029 U+0085 VT FF)   refuse  (a title is one line)
    control characters, lone surrogates                        refuse
    empty after stripping blanks, or only '[/LOG]'             refuse
    longer than MAX_TITLE_CHARS                                refuse
    trailing '#' run (read as closing hashes, §4.1)            neutralise '\\#'
    '<' opening inline HTML                                    neutralise '\\<'
    anything else ('[P1]', '#', '* R1:' mid-line)               keep (inline text of a header)

A line indented four columns or more is also escaped: the parser's list and header checks
count characters, not columns, so indentation alone is not a safe harbour.  Inside a
CommonMark indented code block such an escape shows its backslash — the one place where the
rendering is not the literal original.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core import syntax as sx

MAX_TITLE_CHARS = 300
MAX_BODY_CHARS = 4_000_000

_LINE_BREAKS = re.compile(r"\r\n|[\r\u2028\u2029\x85]")
_TITLE_BREAKS = re.compile(r"[\n\r\u2028\u2029\x85\x0b\x0c]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
# CommonMark thematic breaks and setext underlines (lines that turn the previous line into a header).
_THEMATIC = re.compile(r"[ \t]*([-*_])(?:[ \t]*\1){2,}[ \t]*")
_SETEXT = re.compile(r"[ \t]*(?:=+|-+)[ \t]*")
_LOG_MARKER = "[/LOG]"
_TITLE_HTML = re.compile(r"<(?=[A-Za-z/!?])")
#: First characters after which a line is examined (everything else is plain text).
_STARTERS = frozenset("#[><*-_=+`~")


class RefusedWrite(Exception):
    """A write the safe writer refuses; ``str(exc)`` is one line saying what and why.

    ``zone`` is the opening line of the zone concerned (or None), ``rule`` the spec
    section or check that refused it.
    """

    def __init__(self, message: str, *, zone: int | None = None, rule: str | None = None):
        super().__init__(message)
        self.message = message
        self.zone = zone
        self.rule = rule


@dataclass(frozen=True)
class Sanitized:
    """The safe text and a short note per construct that was neutralised or stripped."""

    text: str
    changes: tuple[str, ...] = ()


def _refuse(what: str, why: str, rule: str) -> RefusedWrite:
    return RefusedWrite(f"refused: {what}: {why} ({rule})", rule=rule)


def sanitize_title(title: str) -> Sanitized:
    """A one-line, structure-free entry title, or :class:`RefusedWrite`."""
    if not isinstance(title, str):
        raise TypeError(f"title must be str, not {type(title).__name__}")
    if _TITLE_BREAKS.search(title):
        raise _refuse("title", "a title is one line (it contains a line break)", "§7.5")
    if sx.CONTROL_CHARS.search(title):
        c = sx.CONTROL_CHARS.search(title).group()
        raise _refuse("title", f"control character U+{ord(c):04X} is not allowed", "§7.5")
    if _SURROGATE.search(title):
        raise _refuse("title", "it is not valid Unicode (lone surrogate)", "§7.5")
    text = title.strip()
    if text == _LOG_MARKER:
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
    if _TITLE_HTML.search(text):
        text = _TITLE_HTML.sub(r"\\<", text)
        changes.append("'<' escaped")
    return Sanitized(text, tuple(changes))


def closed_fences(lines: list[str]) -> set[int]:
    """Indexes of the lines inside (and delimiting) fences that close within ``lines``."""
    inside: set[int] = set()
    i, n = 0, len(lines)
    while i < n:
        fence = sx.fence_opener(lines[i])
        if fence is None:
            i += 1
            continue
        j = i + 1
        while j < n and not sx.closes_fence(lines[j], fence):
            j += 1
        if j < n:
            inside.update(range(i, j + 1))
            i = j + 1
        else:
            i += 1  # never closed: this opener is escaped, the scan goes on after it
    return inside


def _structural(line: str) -> str | None:
    """What the line would declare, or None for plain text."""
    t = line.lstrip(" \t")
    if not t or t[0] not in _STARTERS:
        return None
    c = t[0]
    if c == "#":
        return "header"
    if c == "[":
        return "bracket tag"
    if c == "<":
        return "HTML block"
    if c == ">":
        return "attention anchor" if sx.ANCHOR_START.match(t) else None
    if c in "`~":
        return "code fence" if sx.fence_opener(t) else None
    if _THEMATIC.fullmatch(line) or _SETEXT.fullmatch(line):
        return "separator"
    if sx.RULE_BULLET.fullmatch(t):
        return "rule bullet"
    if sx.CONNECTION_LIKE.match(t):
        return "CONNECTIONS edge"
    if sx.REGISTRY_ENTRY.match(t):
        return "registry entry"
    if c == "*":
        fm = sx.FIELD_LABEL.match(t)
        if fm and fm.group(1).strip() in ("STATE", "STATO"):
            return "STATE field"
    return None


def _escape(line: str, what: str) -> str:
    t = line.lstrip(" \t")
    lead = line[:len(line) - len(t)]
    if what == "STATE field":
        end = t.index(":**") + 3
        return lead + t[:end].replace("*", "\\*") + t[end:]
    return lead + "\\" + t


def sanitize_body(body: str) -> Sanitized:
    """Structure-free body lines (no trailing newline), or :class:`RefusedWrite`."""
    if not isinstance(body, str):
        raise TypeError(f"body must be str, not {type(body).__name__}")
    if _SURROGATE.search(body):
        raise _refuse("body", "it is not valid Unicode (lone surrogate)", "§5.5")
    if len(body) > MAX_BODY_CHARS:
        raise _refuse("body", f"it has {len(body)} characters (at most {MAX_BODY_CHARS})", "§5.5")
    changes: list[str] = []
    text = _LINE_BREAKS.sub("\n", body)
    if text != body:
        changes.append("line breaks normalised to \\n")
    cleaned = sx.CONTROL_CHARS.sub("", text)
    if cleaned != text:
        changes.append("control characters removed")
    lines = cleaned.split("\n")
    kept = [ln for ln in lines if ln.strip() != _LOG_MARKER]
    if len(kept) != len(lines):
        changes.append("[/LOG] marker removed (§N.19.3.4)")
    while kept and not kept[0].strip():
        kept.pop(0)
    while kept and not kept[-1].strip():
        kept.pop()
    fenced = closed_fences(kept)
    out = []
    for i, line in enumerate(kept):
        if i in fenced:
            out.append(line)
            continue
        what = _structural(line)
        if what is not None:
            line = _escape(line, what)
            changes.append(f"{what} escaped")
        out.append(line)
    return Sanitized("\n".join(out), tuple(dict.fromkeys(changes)))
