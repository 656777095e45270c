"""A frozen copy of ``zonemark.interchange.logs`` as it was before its memory was made compact (1b56d86): the
reference the property tests of tests/services/test_interchange_reference.py compare the new code with.
Not to be edited with the code."""

# ruff: noqa: C901, E501


from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, TypedDict

from zonemark.core.document import Document
from zonemark.core.nodes import Heading
from zonemark.core.parser import parse
from zonemark.interchange.notices import Notice, notice

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


def _body(lines: list[str], start: int, end: int) -> str:
    """Lines ``start``..``end - 1`` (0-based) without leading and trailing blank lines."""
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end])


class _Open(TypedDict):
    """The entry being read: its header's line index, the header, and the fence it started in (or None)."""

    index: int
    header: _Header
    fence: int | None


def extract_logs(text: str) -> Extraction:
    """Every log entry of ``text`` and the warnings about it (§N.19.2, §N.19.3; module docstring)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    raw = text.split("\n")
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in raw]
    entries: list[LogEntry] = []
    warnings: list[Notice] = []
    open_entry: _Open | None = None
    fence: tuple[str, int] | None = None
    fence_id = 0  # a number per fence, so an entry knows which fence it started in
    fence_line = -1  # index of the open fence's opening line
    closed_by_marker = False

    def close(e: _Open, end: str, end_index: int | None, stop: int) -> None:
        nonlocal open_entry
        h: _Header = e["header"]
        entries.append(LogEntry(e["index"] + 1, lines[e["index"]], h.date, h.title, end,
                                None if end_index is None else end_index + 1,
                                _body(lines, e["index"] + 1, stop)))
        open_entry = None

    for i, line in enumerate(lines):
        if fence is not None and _fence_closes(line, fence):
            if open_entry is not None and open_entry["fence"] == fence_id:
                warnings.append(notice("LOG_ENDS_AT_FENCE",
                                       f"the entry of line {open_entry['index'] + 1} started inside a code fence:"
                                       f" it ends at the fence's closing line {i + 1}", open_entry["index"] + 1))
                close(open_entry, END_OF_TEXT, None, i)
                closed_by_marker = False
            fence = None
            continue
        if is_marker(line):
            if open_entry is not None:
                close(open_entry, END_MARKER, i, i)
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
                stop = fence_line if fence is not None and fence_line > open_entry["index"] else i
                close(open_entry, END_NEXT_HEADER, i, stop)
            open_entry = {"index": i, "header": header, "fence": fence_id if fence is not None else None}
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
                fence_line = i
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
    if open_entry is not None:
        close(open_entry, END_OF_TEXT, None, len(lines))
    return Extraction(tuple(entries), tuple(warnings))
