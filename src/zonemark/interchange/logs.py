"""Log entries in chat text (§7.5, §N.19): a pure function from text to entries and warnings.

A user copies an AI's answer out of a provider's chat — with the copy button, or by selecting
what the window shows — and :func:`extract_logs` finds the ``###### LOG:`` entries in it.

Where an entry starts:

* the canonical ``###### LOG: <date> — <title>`` and every H6 form §7.5 tolerates (any H6
  whose text holds the isolated word ``LOG``; ``LOGISTICA`` is not one); date and title come
  from the parser's own reading of the header (:func:`zonemark.parse`), so the chat and the
  file cannot disagree.  Leading whitespace is tolerated (chat text is not a file);
* a line ``LOG: <ISO date> — <title>`` without its ``######`` — what selecting a rendered H6
  on screen gives — only in that canonical shape (valid date, a dash, a title), with the
  warning ``LOG_HEADER_WITHOUT_HASHES``.  A hashless tolerant form (``Log titolo``) is prose;
* not ``### LOG:`` and the other levels (``LOG_HEADER_WRONG_LEVEL``): logs are H6.

Where it ends (§N.19.2, §N.19.3):

* at a ``[/LOG]`` marker: upper case, alone on its line; whitespace around it is tolerated —
  spaces, tabs, no-break and other Unicode spaces, zero-width spaces and a word joiner
  (U+200B, U+2060, U+FEFF), a trailing CR.  It closes the open entry; a marker with no open
  entry is dropped with a warning, never body, never fatal.  A line that reads like the
  marker with something else on it (``**[/LOG]**``, ``[/log]``) is not one: it stays body
  text (``LOG_MARKER_NOT_ALONE``; the writer escapes it when filing);
* else at the next log header, whatever lies between (headings of other levels included —
  the in-file end rule of §7.5 is for files);
* else at the end of the text — or, for an entry whose header sits inside a fenced code
  block, at the fence's closing line (``LOG_ENDS_AT_FENCE``): a fence is the frame an AI puts
  around a log for copying, and what follows the fence is the chat, not the log.  Such an
  entry reports ``end: "end_of_text"`` and ``endLine: null`` like any entry that runs to the
  end of its text.  For the same reason the opening line of a fence that frames the next
  header is not part of the previous entry's body.

The scan always goes on, so every entry is counted (§N.19.3.3).  Bodies: CR LF becomes LF,
leading and trailing blank lines are dropped, nothing else changes; the marker is never part
of a body (§N.19.3.1).  What the safe writer does with a body when filing it (escaping
structure, §5.5) is the writer's business and is reported by ``ingest``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypedDict

from ..core.document import Document
from ..core.nodes import Heading
from ..core.parser import parse
from .notices import Notice, notice

MARKER = "[/LOG]"
#: Characters tolerated around the marker besides Unicode whitespace (zero-width space, word joiner, BOM).
INVISIBLE = "\u200b\u2060\ufeff"
_MARKER_LINE = re.compile(rf"[\s{INVISIBLE}]*\[/LOG\][\s{INVISIBLE}]*")
_MARKER_LIKE = re.compile(r"[\s>*_`\u200b\u2060\ufeff]*\[\s*/\s*log\s*\][\s*_`.:\u200b\u2060\ufeff]*", re.IGNORECASE)
_LEAD = re.compile(rf"[\s{INVISIBLE}]*")
_WRONG_LEVEL = re.compile(r"#{1,5}[ \t]+LOG:")
_FENCE = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)")

END_MARKER, END_NEXT_HEADER, END_OF_TEXT = "marker", "next_header", "end_of_text"


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One log entry found in chat text; lines are 1-based lines of that text."""

    header_line: int
    header: str  # the header line as written (without its line ending)
    date: str | None  # as written
    title: str  # "" when the header has none
    end: str  # 'marker' | 'next_header' | 'end_of_text'
    end_line: int | None  # the marker line or the next header line; None at the end of the text
    body: str  # what is handed to the safe writer for filing

    def to_dict(self) -> dict[str, Any]:
        return {"headerLine": self.header_line, "header": self.header, "date": self.date, "title": self.title,
                "end": self.end, "endLine": self.end_line, "body": self.body}


@dataclass(frozen=True, slots=True)
class Extraction:
    """Every entry of a text, in order, and the warnings about it (the ``ingest --extract --json`` shape)."""

    entries: tuple[LogEntry, ...]
    warnings: tuple[Notice, ...]

    @property
    def count(self) -> int:
        return len(self.entries)

    def to_dict(self) -> dict[str, Any]:
        return {"count": self.count, "entries": [e.to_dict() for e in self.entries],
                "warnings": [w.to_dict() for w in self.warnings]}


@dataclass(frozen=True, slots=True)
class _Header:
    date: str | None
    title: str
    hashless: bool
    bad_date: bool


def is_marker(line: str) -> bool:
    """Whether ``line`` is the ``[/LOG]`` transport marker alone on its line (§N.19.2)."""
    return _MARKER_LINE.fullmatch(line) is not None


def _first_h6(doc: Document) -> Heading | None:
    for block in doc.walk():
        if isinstance(block, Heading) and block.level == 6:
            return block
    return None


def read_header(line: str) -> _Header | None:
    """The log header of a chat line (see the module docstring), or None."""
    text = _LEAD.sub("", line, count=1).rstrip()
    if not text:
        return None
    if text.startswith("######"):
        if text.startswith("#######"):
            return None
        doc = parse(text + "\n")
        h = _first_h6(doc)
        if h is None or h.type != "log":
            return None
        bad = any(d.code == "INVALID_LOG_DATE" for d in doc.diagnostics)
        return _Header(h.date, h.title or "", False, bad)
    canonical = text.strip("*_")  # emphasis around a rendered header copied as text
    if not canonical.startswith("LOG:"):
        return None
    doc = parse("###### " + canonical + "\n")
    h = _first_h6(doc)
    if (h is None or h.type != "log" or h.date is None or not h.title
            or any(d.code == "INVALID_LOG_DATE" for d in doc.diagnostics)):
        return None
    after = canonical[4:].lstrip(" \t")
    if not after.startswith(h.date) or not after[len(h.date):].lstrip(" \t").startswith(("—", "–", "-")):
        return None  # 'LOG:', the date, a dash, the title: the canonical shape only
    return _Header(h.date, h.title, True, False)


def _fence_open(line: str) -> tuple[str, int] | None:
    m = _FENCE.fullmatch(line)
    if m is None or (m.group(2)[0] == "`" and "`" in m.group(3)):
        return None
    return m.group(2)[0], len(m.group(2))


def _fence_closes(line: str, fence: tuple[str, int]) -> bool:
    t = line.lstrip(" ")
    return (len(line) - len(t) <= 3 and t.startswith(fence[0] * fence[1])
            and not t.strip(fence[0]).strip())


def lines_of(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int, str]]:
    """Each line of ``text[start:end]`` as ``text.split("\\n")`` gives them, with the CR before its line feed
    dropped, and where it starts and ends in ``text`` (the end is its line feed, or ``end``): one line at a
    time, never a list of every line (ten times a text of short lines)."""
    stop = len(text) if end is None else end
    at = start
    while True:
        nl = text.find("\n", at, stop)
        until = stop if nl < 0 else nl
        line = text[at:until]
        yield at, until, line[:-1] if line.endswith("\r") else line
        if nl < 0:
            return
        at = nl + 1


_NOT_BLANK = re.compile(r"\S")  # str.strip's white space
_CR_AT_END = re.compile(r"\r(?=\n)|\r\Z")


def _body(text: str, start: int, end: int) -> str:
    """The lines of ``text[start:end]`` (whole lines; CR dropped before a line feed) without leading and trailing
    blank lines, joined by ``\\n`` — as one slice of the text."""
    first = _NOT_BLANK.search(text, start, end)
    if first is None:
        return ""
    nl = text.rfind("\n", start, first.start())
    start = start if nl < 0 else nl + 1
    last = end - 1
    while text[last].isspace():
        last -= 1
    nl = text.find("\n", last, end)
    body = text[start:end if nl < 0 else nl]
    return _CR_AT_END.sub("", body) if "\r" in body else body


class _Open(TypedDict):
    """The entry being read: its header's line index, the header, the fence it started in (or None), the header
    line as written and where the line after it starts in the text."""

    index: int
    header: _Header
    fence: int | None
    line: str
    body: int


def extract_logs(text: str) -> Extraction:
    """Every log entry of ``text`` and the warnings about it (§N.19.2, §N.19.3; module docstring)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    warnings: list[Notice] = []
    entries = tuple(LogEntry(n, line, h.date, h.title, end, end_line, _body(text, start, stop))
                    for n, line, h, end, end_line, start, stop in scan_logs(text, warnings))
    return Extraction(entries, tuple(warnings))


#: One entry as :func:`scan_logs` finds it: its header line (1-based), the header as written, its reading, how it
#: ends and the line it ends at, and the span of the text its body is read from (:func:`body_of`).
Found = tuple[int, str, _Header, str, int | None, int, int]


def body_of(text: str, start: int, stop: int) -> str:
    """The body of an entry :func:`scan_logs` found at ``start``, ``stop`` (``LogEntry.body``)."""
    return _body(text, start, stop)


def scan_logs(text: str, warnings: list[Notice]) -> Iterator[Found]:
    """The entries of ``text`` one at a time, in order, each given as it closes (:data:`Found`; what
    :func:`extract_logs` makes a :class:`LogEntry` of), the warnings added to ``warnings`` as the scan meets them:
    a caller that keeps a few columns of each entry holds no entry object (B25)."""
    found: list[Found] = []
    open_entry: _Open | None = None
    fence: tuple[str, int] | None = None
    fence_id = 0  # a number per fence, so an entry knows which fence it started in
    fence_line = -1  # index of the open fence's opening line
    closed_by_marker = False

    fence_at = -1  # where the open fence's opening line starts in the text

    def close(e: _Open, end: str, end_index: int | None, stop: int) -> None:
        """Close ``e``: its body is the text from the line after its header to the line-feed before ``stop``."""
        nonlocal open_entry
        found.append((e["index"] + 1, e["line"], e["header"], end, None if end_index is None else end_index + 1,
                      e["body"], max(e["body"], stop - 1)))
        open_entry = None

    i = -1
    for at, until, line in lines_of(text):
        if found:
            yield found.pop()
        i += 1
        if fence is not None and _fence_closes(line, fence):
            if open_entry is not None and open_entry["fence"] == fence_id:
                warnings.append(notice("LOG_ENDS_AT_FENCE",
                                       f"the entry of line {open_entry['index'] + 1} started inside a code fence:"
                                       f" it ends at the fence's closing line {i + 1}", open_entry["index"] + 1))
                close(open_entry, END_OF_TEXT, None, at)
                closed_by_marker = False
            fence = None
            continue
        if is_marker(line):
            if open_entry is not None:
                close(open_entry, END_MARKER, i, at)
                closed_by_marker = True
            elif closed_by_marker:
                warnings.append(notice("LOG_MARKER_DUPLICATE",
                                       f"line {i + 1}: a second [/LOG] for an entry already closed: dropped", i + 1))
            else:
                warnings.append(notice("LOG_MARKER_STRAY",
                                       f"line {i + 1}: [/LOG] with no log entry open before it: dropped", i + 1))
            continue
        header = read_header(line) if ("LOG" in line.upper()) else None
        if header is not None:
            if open_entry is not None:
                # A fence opened after the previous header frames this one: its opening line is not body.
                stop = fence_at if fence is not None and fence_line > open_entry["index"] else at
                close(open_entry, END_NEXT_HEADER, i, stop)
            open_entry = {"index": i, "header": header, "fence": fence_id if fence is not None else None,
                          "line": line, "body": until + 1}
            closed_by_marker = False
            n = i + 1
            if header.hashless:
                warnings.append(notice("LOG_HEADER_WITHOUT_HASHES",
                                       f"line {n}: 'LOG: {header.date} — …' has no '######' (text selected on"
                                       f" screen?): taken as a log header", n))
            if not header.title:
                warnings.append(notice("LOG_WITHOUT_TITLE",
                                       f"line {n}: the log header has no event title; it cannot be filed as is", n))
            if header.bad_date:
                warnings.append(notice("LOG_INVALID_DATE",
                                       f"line {n}: '{header.date}' is not a valid ISO 8601 date; it cannot be filed"
                                       f" as is", n))
            continue
        if fence is None:
            opened = _fence_open(line)
            if opened is not None:
                fence = opened
                fence_id += 1
                fence_line, fence_at = i, at
        stripped = _LEAD.sub("", line, count=1)
        if _WRONG_LEVEL.match(stripped):
            warnings.append(notice("LOG_HEADER_WRONG_LEVEL",
                                   f"line {i + 1}: a 'LOG:' header at H{len(stripped) - len(stripped.lstrip('#'))}"
                                   f" is not a log entry (log headers are H6: '###### LOG: …')", i + 1))
        elif _MARKER_LIKE.fullmatch(line):
            where = "kept in the body" if open_entry is not None else "ignored"
            warnings.append(notice("LOG_MARKER_NOT_ALONE",
                                   f"line {i + 1}: '{line.strip()[:40]}' is not the [/LOG] marker (upper case, alone"
                                   f" on its line): {where}", i + 1))
    if found:
        yield found.pop()
    if open_entry is not None:
        close(open_entry, END_OF_TEXT, None, len(text) + 1)
        yield found.pop()
