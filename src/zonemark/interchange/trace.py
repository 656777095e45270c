"""Deferred Neural Traces (§N.18) in chat text: parsing, then validation against a layer.

:func:`parse_trace` is a pure function of the text; :func:`validate_trace` checks what it
found against a loaded :class:`~zonemark.layer.Layer`; :func:`read_trace` does both.

Parsing (§N.3–§N.5, §N.8):

* **Markers.** A line whose text — trimmed, with ``*``, ``_`` and backticks stripped around
  it — is ``[NTRACE: v1]`` opens a block; ``[/NTRACE]`` closes it.  The legacy
  ``[TRACE: v1]`` … ``[/TRACE]`` is read the same way (``marker: "TRACE"``); a block opened
  with one family and closed with the other is accepted with ``TRACE_MARKER_MISMATCH``.  A
  marker inside a sentence is not a marker (``TRACE_MARKER_IN_TEXT``).  Code fences are
  transparent: an AI often puts its trace in one.
* **Compact form** (§N.5): the opening marker followed, on the same line, by an entry
  (``[NTRACE: v1] NUCLEI: 2 | …``) up to a closing marker at the end of that line — or of a
  later line, when a chat window soft-wrapped it.  Sections are split at ``|`` followed by an
  entry token, so a ``|`` inside free text stays text.
* **Block form**: one entry per line, a new entry at each line whose first token is
  ``NUCLEI``, ``MODULE``, ``LOG`` or ``MEMORY``; any other line is joined to the previous entry
  with a space (soft wrap); blank lines are ignored; text before the first entry is ignored
  with ``TRACE_STRAY_TEXT``.  A closing marker at the end of an entry line also closes.
* **Emphasis** (``*``, ``_``, backticks) is stripped around whole entries and around tokens —
  a run touching a space, a line end or one of ``: , ; | @ [ ] ( )`` — never inside an
  identifier (``CORE_001`` keeps its underscore) and never inside a LOG's free text.
* **Version**: only ``v1`` is known; a block naming another version, or none, is rejected
  with a warning and never parsed.  A block never closed (before the end of the text or the
  next opening marker) is rejected too: a truncated trace is not trusted.
* **Values**: nucleus ids are integers (``01`` is nucleus 1); module and memory ids are
  compared as strings (``042`` is not ``42``).  A MODULE's state is its last word when that
  word is in the vocabulary (any case; brackets allowed, ``[queried]``); a last word in
  lower case outside it is an unknown state (``TRACE_UNKNOWN_STATE``: the module is kept with
  state null); otherwise the words are the name.  A LOG is
  ``<module-id>: <date> — <action> — <free text>`` with ``—``, ``–`` or a spaced hyphen as
  separators.  A MEMORY's action is the word after its last colon.  Out-of-vocabulary actions
  keep the entry with action null (``TRACE_UNKNOWN_ACTION``); a LOG date that is not ISO 8601
  keeps the entry with the date as written (``TRACE_BAD_DATE``).  Sections out of the
  canonical order are kept (``TRACE_SECTION_ORDER``).

Validation (§N.2, §N.4):

* **Gating.** Tracing is enabled when a ``## MODULE`` named (or with the id)
  ``DEFERRED_NEURAL_TRACING`` — or the legacy ``DEFERRED_NEURAL_TRACE`` — declared in a
  ``[P1]``–``[P3]`` zone of a merged file is effectively ``active`` (registry applied,
  §7.3.1), or is loaded with no STATE and no registry entry (§N.6's skeleton declares none:
  it is neither absent nor inactive, §N.2; ``TRACE_ENABLED_WITHOUT_STATE`` says so).  Otherwise
  ``enabled`` is false, nothing is illuminated and ``TRACE_DISABLED`` says why.  The rest is still
  validated, so the user sees what the trace says.
* **Identifiers.** Nuclei must be declared (``## NUCLEUS n:``), modules declared with an id
  (temporary ids are not referenceable, §7.1.1), memories must be the H1 title — or the file
  name without ``[ext_memory]``/``.md`` — of an ``[external_memory]`` file, or the name (or
  module id) of an H2 container of the reminder.  Each unknown id is dropped and reported
  (``dropped``, ``unknownIdentifiers``) with the spec's summary, "1 unknown identifier
  skipped" (``TRACE_UNKNOWN_IDENTIFIERS``; the count is of distinct identifiers).
* **@ ref.** Resolved inside its memory: an entry whose date (or the date part of its
  timestamp), title or ``date — title`` equals the ref, or a topic/sub-topic whose name,
  ``TOPIC: name`` or ``Topic/Sub`` path equals it — exactly, else ignoring case.  No match:
  ``TRACE_UNRESOLVED_REF``, the MEMORY item is kept (the memory lights up, no entry does).
* **§N.4 caution.** A line whose free-form text — a LOG's free text, a MODULE's name, a
  MEMORY's ref — shares a verbatim run of words with the text of a ``[P1]``/``[P2]`` zone of
  any file of the layer is rejected (``dropped``, reason and ``TRACE_RESTRICTED_CONTENT``); the
  rest of the trace stands.  Words are runs of letters and
  digits, compared case-folded; every Han, kana or Hangul character is a word of its own.
  The run is :data:`VERBATIM_RUN` words, or the whole free text when it is shorter but has at
  least :data:`VERBATIM_MIN` words; shorter texts are too short to carry content.
* ``result`` is the union over the accepted blocks in document order, each item once
  (nuclei by id, modules by id and state, memories by id, ref and action); it is empty when
  tracing is disabled.

Cost (ruling CL30): the text is read one line at a time; ``blocks`` is a :class:`TraceBlocks`, which
keeps the first :data:`MAX_LISTED_BLOCKS` blocks whole and each later one as a row of integers,
parsed again from its own lines of the text when it is asked for, and ``accepted`` validates a
block when it is asked for — both read as the tuples they stand for.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import re
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.headers import spelled_keyword
from ..core.outline import OutlineNode
from ..core.rows import RowSequence
from ..layer.loader import Layer, LayerModule
from .logs import lines_of
from .notices import Notice, notice

TOKENS = ("NUCLEI", "MODULE", "LOG", "MEMORY")
STATES = ("active", "queried", "suppressed")
LOG_ACTIONS = ("generated", "queried")
MEMORY_ACTIONS = ("queried", "touched", "appended")
KNOWN_VERSIONS = ("v1",)
ENABLING_NAMES = ("DEFERRED_NEURAL_TRACING", "DEFERRED_NEURAL_TRACE")
VERBATIM_RUN = 8
VERBATIM_MIN = 5
#: The largest chat text a trace is read from, in characters (ruling CL30): over it, :class:`TraceTooLarge`.
MAX_TRACE_CHARS = 1_000_000
#: An answer lists at most this many blocks and warnings and says how many it left out (ruling CL30).
MAX_LISTED_BLOCKS = 100
MAX_LISTED_WARNINGS = 1000


class TraceTooLarge(ValueError):
    """The chat text is over :data:`MAX_TRACE_CHARS`; nothing is parsed."""

_EMPH = "*_`"
_BOUND = r"\s:,;|@\[\]()"
_EMPH_RUN = re.compile(r"[*_`]+")
_BOUNDARY = re.compile(rf"[{_BOUND}]")
_OPEN = re.compile(r"\[(NTRACE|TRACE)(?:[ \t]*:[ \t]*([^\]\s]*)[ \t]*)?\]")
_CLOSE = re.compile(r"\[/(NTRACE|TRACE)\]")
_CLOSERS = ("[/NTRACE]", "[/TRACE]")
_MENTION = re.compile(r"\[/?(?:NTRACE|TRACE)\b[^\]\n]{0,80}\]")
_FIRST_TOKEN = re.compile(r"[*_`]*(NUCLEI|MODULE|LOG|MEMORY)[*_`]*(?=[\s:]|$)")
_COMPACT_SPLIT = re.compile(r"\|(?=\s*[*_`]*(?:NUCLEI|MODULE|LOG|MEMORY)[*_`]*(?:[\s:]|$))")
_NUCLEI = re.compile(r"NUCLEI\s*:?\s*(.*)", re.DOTALL)
_MODULE = re.compile(r"MODULE\s+([^\s:]+)\s*(?::\s*(.*))?", re.DOTALL)
_LOG = re.compile(r"LOG\s+([^\s:]+)\s*:\s*(.*)", re.DOTALL)
_MEMORY = re.compile(r"MEMORY\s+(.+)", re.DOTALL)
_LOG_SEP = re.compile(r"[—–]|(?<=\s)-{1,2}(?=\s)")
_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|[^\W_]+")
_SECTION = {"NUCLEI": 0, "MODULE": 1, "LOG": 1, "MEMORY": 2}
_WORDS = {w: w for w in STATES + LOG_ACTIONS + MEMORY_ACTIONS}


# -- the data ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class TraceModule:
    id: str
    name: str | None
    state: str | None
    line: int = field(default=0, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "state": self.state}


@dataclass(frozen=True, slots=True)
class TraceLog:
    module: str
    date: str
    action: str | None
    text: str
    line: int = field(default=0, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"module": self.module, "date": self.date, "action": self.action, "text": self.text}


@dataclass(frozen=True, slots=True)
class TraceMemory:
    id: str
    ref: str | None
    action: str | None
    line: int = field(default=0, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "ref": self.ref, "action": self.action}


@dataclass(frozen=True, slots=True)
class TraceContent:
    """The four lists of a trace (§N.3 order): nuclei in activation order, modules, logs, memories."""

    nuclei: tuple[int, ...] = ()
    modules: tuple[TraceModule, ...] = ()
    logs: tuple[TraceLog, ...] = ()
    memories: tuple[TraceMemory, ...] = ()
    nucleus_lines: tuple[int, ...] = field(default=(), compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"nuclei": list(self.nuclei), "modules": [m.to_dict() for m in self.modules],
                "logs": [g.to_dict() for g in self.logs], "memories": [m.to_dict() for m in self.memories]}

    @property
    def empty(self) -> bool:
        return not (self.nuclei or self.modules or self.logs or self.memories)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TraceContent":
        """The inverse of :meth:`to_dict` (for recorded traces); raises ValueError on a wrong shape."""
        try:
            nuclei = tuple(int(n) for n in data.get("nuclei", ()))
            modules = tuple(TraceModule(str(m["id"]), m.get("name"), m.get("state")) for m in data.get("modules", ()))
            logs = tuple(TraceLog(str(g["module"]), str(g.get("date", "")), g.get("action"), str(g.get("text", "")))
                         for g in data.get("logs", ()))
            memories = tuple(TraceMemory(str(m["id"]), m.get("ref"), m.get("action")) for m in data.get("memories", ()))
        except (TypeError, KeyError, ValueError, AttributeError) as exc:
            raise ValueError(f"not a trace result: {exc}") from None
        return cls(nuclei, modules, logs, memories)


@dataclass(frozen=True, slots=True)
class TraceBlock:
    """One ``[NTRACE: v1]`` … ``[/NTRACE]`` block (or compact line) of the text."""

    open_line: int
    close_line: int | None
    form: str  # 'block' | 'compact'
    marker: str  # 'NTRACE' | 'TRACE'
    version: str | None
    rejected: bool
    reason: str | None
    parsed: TraceContent | None

    def to_dict(self) -> dict[str, Any]:
        return {"openLine": self.open_line, "closeLine": self.close_line, "form": self.form, "marker": self.marker,
                "version": self.version, "rejected": self.rejected, "reason": self.reason,
                "parsed": None if self.parsed is None else self.parsed.to_dict()}


#: The blocks a text's :class:`TraceBlocks` keeps whole (the ones an answer lists, ruling CL30); every later one
#: is kept as a row of integers and read again from the text when it is asked for.
_KEPT_BLOCKS = MAX_LISTED_BLOCKS
_ROW = 8  # open line, close line (-1: None), start and end in the text, compact, legacy marker, version, reason
_REASONS = (None, "the marker names no grammar version", "unknown grammar version '{version}'", "never closed",
            "not closed before the next opening marker (line {line})")


def _reason_row(reason: str | None, version: str | None) -> int:
    """A block's reason for its row: the index of its :data:`_REASONS` (with the line above 3 bits), or -1."""
    if reason is None:
        return 0
    for kind in (1, 2, 3):
        if _REASONS[kind].format(version=version, line=0) == reason:  # type: ignore[union-attr]
            return kind
    m = re.fullmatch(r"not closed before the next opening marker \(line (\d+)\)", reason)
    return 4 | int(m.group(1)) << 3 if m else -1


class TraceBlocks(RowSequence[TraceBlock]):
    """The blocks of a text, in order (a tuple to read): a text of 1,000,000 characters may hold 10,000 blocks, and
    a block with its parsed content as objects costs ten times its text (ruling CL30).  So the first
    :data:`_KEPT_BLOCKS` blocks are kept whole, and every later one as a row of integers — its lines, where it
    stands in the text, its form, marker, version and why it was rejected — from which it is made again, its
    content parsed again from its own lines of the text (the parse of a block reads nothing outside them)."""

    def __init__(self, text: str):
        self._text = text
        self._kept: list[TraceBlock] = []
        self._rows = array("q")
        self._versions: list[str | None] = []  # each version a block names, once
        self._version_at: dict[str | None, int] = {}
        self._whole: dict[int, TraceBlock] = {}  # a later block its row cannot say (none is known)

    def __len__(self) -> int:
        return len(self._kept) + len(self._rows) // _ROW

    def add(self, block: TraceBlock, start: int, end: int) -> None:
        """The next block, which stands in ``text[start:end]`` (its opening line to its closing line)."""
        if len(self._kept) < _KEPT_BLOCKS and not self._rows:
            self._kept.append(block)
            return
        if block.version not in self._version_at:
            self._version_at[block.version] = len(self._versions)
            self._versions.append(block.version)
        self._rows.extend((block.open_line, -1 if block.close_line is None else block.close_line, start, end,
                           block.form == "compact", block.marker == "TRACE", self._version_at[block.version],
                           _reason_row(block.reason, block.version)))
        if self._rows[-1] < 0:  # a reason no template spells: kept as it is
            self._whole[len(self) - 1] = block

    def _made(self, k: int) -> TraceBlock:
        at = (k - len(self._kept)) * _ROW
        open_line, close_line, start, end, compact, legacy, version, reason = self._rows[at:at + _ROW]
        spelled = self._versions[version]
        template = _REASONS[reason & 7] if reason >= 0 else None
        why = None if template is None else template.format(version=spelled, line=reason >> 3)
        parsed = None
        if why is None:
            found: list[TraceBlock] = []
            _read_blocks(self._text, start, end, open_line, lambda b, _s, _e: found.append(b), [])
            parsed = found[0].parsed
        return TraceBlock(open_line, None if close_line < 0 else close_line, "compact" if compact else "block",
                          "TRACE" if legacy else "NTRACE", spelled, why is not None, why, parsed)

    def _item(self, k: int) -> TraceBlock:
        if k < len(self._kept):
            return self._kept[k]
        return self._whole[k] if k in self._whole else self._made(k)


@dataclass(frozen=True, slots=True)
class ParsedTraces:
    """What :func:`parse_trace` found: every block (:class:`TraceBlocks`, or any sequence), and the warnings about
    the text."""

    blocks: Sequence[TraceBlock]
    warnings: tuple[Notice, ...]


@dataclass(frozen=True, slots=True)
class Dropped:
    """An identifier (or a LOG line) left out of the result, and why."""

    line: int
    entry: str
    kind: str  # 'nucleus' | 'module' | 'log' | 'memory'
    id: str | int  # a nucleus id is an integer (§13 nucleusId: number); the others are strings
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "entry": self.entry, "kind": self.kind, "id": self.id, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Target:
    """A place of the layer a validated trace points at (for the graph; not part of the JSON).

    ``kind``: 'nucleus' | 'module' | 'memory' (a file, or an H2 of the reminder) | 'entry' |
    'topic'; ``file``/``line`` locate its declaration (``line`` None for a whole file).
    """

    kind: str
    file: str
    line: int | None
    label: str
    order: int | None = None  # activation order of a nucleus (1-based)
    state: str | None = None
    action: str | None = None
    ref: str | None = None


@dataclass(frozen=True, slots=True)
class TraceResult:
    """A trace validated against a layer (the ``zonemark trace --json`` shape)."""

    blocks: Sequence[TraceBlock]
    enabled: bool
    result: TraceContent
    dropped: tuple[Dropped, ...]
    unknown_identifiers: tuple[tuple[str, str | int], ...]
    warnings: tuple[Notice, ...]
    targets: tuple[Target, ...] = ()  # where ``result`` points in the layer, in trace order
    accepted: Sequence[tuple[TraceBlock, TraceContent]] = ()  # each accepted block, validated alone

    @property
    def found(self) -> bool:
        return bool(self.blocks)

    @property
    def illuminated(self) -> bool:
        """Whether anything lights up: tracing enabled and a non-empty result."""
        return self.enabled and not self.result.empty

    def to_dict(self) -> dict[str, Any]:
        """The answer, bounded (ruling CL30): the first :data:`MAX_LISTED_BLOCKS` blocks and
        :data:`MAX_LISTED_WARNINGS` warnings, then a ``TRACE_LEFT_OUT`` warning saying how many of each were left
        out."""
        warnings = [w.to_dict() for w in self.warnings[:MAX_LISTED_WARNINGS]]
        blocks_out = max(0, len(self.blocks) - MAX_LISTED_BLOCKS)
        warnings_out = max(0, len(self.warnings) - MAX_LISTED_WARNINGS)
        if blocks_out or warnings_out:
            warnings.append(left_out(len(self.blocks), blocks_out, len(self.warnings), warnings_out).to_dict())
        return {"blocks": [b.to_dict() for b in self.blocks[:MAX_LISTED_BLOCKS]], "enabled": self.enabled,
                "result": self.result.to_dict(), "dropped": [d.to_dict() for d in self.dropped],
                "unknownIdentifiers": [{"kind": k, "id": i} for k, i in self.unknown_identifiers],
                "warnings": warnings}


def left_out(blocks: int, blocks_out: int, warnings: int, warnings_out: int) -> Notice:
    """The ``TRACE_LEFT_OUT`` warning of an answer that lists only part of its blocks or warnings (ruling CL30)."""
    parts = [f"{blocks_out:,} of {blocks:,} blocks" for _ in (1,) if blocks_out]
    parts += [f"{warnings_out:,} of {warnings:,} warnings" for _ in (1,) if warnings_out]
    return notice("TRACE_LEFT_OUT", f"{' and '.join(parts)} left out of this answer (it lists at most"
                  f" {MAX_LISTED_BLOCKS} blocks and {MAX_LISTED_WARNINGS} warnings); the result counts them all", 1)


# -- parsing -------------------------------------------------------------------------------

def _bare(text: str) -> str:
    """Text trimmed, with emphasis stripped around it (a plain scan: linear on any input)."""
    i, j = 0, len(text)
    while i < j and (text[i] in _EMPH or text[i].isspace()):
        i += 1
    while j > i and (text[j - 1] in _EMPH or text[j - 1].isspace()):
        j -= 1
    return text[i:j]


def _untoken(text: str) -> str:
    """Emphasis stripped around every token — a run touching a boundary — never inside an identifier."""
    def keep(m: re.Match[str]) -> str:
        start, end = m.start(), m.end()
        before = start == 0 or _BOUNDARY.match(text, start - 1) is not None
        after = end == len(text) or _BOUNDARY.match(text, end) is not None
        return "" if before or after else m.group()
    return _EMPH_RUN.sub(keep, text)


def _closing(bare: str) -> tuple[str, str] | None:
    """(content before it, family) when ``bare`` ends with a closing marker, else None."""
    for closer in _CLOSERS:
        if bare.endswith(closer):
            return _bare(bare[:-len(closer)]), closer[2:-1]
    return None


def parse_trace(text: str) -> ParsedTraces:
    """Every trace block of ``text`` (§N.3–§N.5), parsed; see the module docstring."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    if len(text) > MAX_TRACE_CHARS:
        raise TraceTooLarge(f"the chat text has {len(text):,} characters; a trace is read from at most"
                            f" {MAX_TRACE_CHARS:,} (MAX_TRACE_CHARS)")
    blocks = TraceBlocks(text)
    warnings: list[Notice] = []
    _read_blocks(text, 0, len(text), 1, blocks.add, warnings)
    if not blocks:
        warnings.append(notice("TRACE_NOT_FOUND", "no [NTRACE: v1] … [/NTRACE] block in the text", 1))
    return ParsedTraces(blocks, tuple(warnings))


def _read_blocks(text: str, start: int, end: int, first_line: int, emit: Callable[[TraceBlock, int, int], None],
                 warnings: list[Notice]) -> None:
    """Every block of the lines of ``text[start:end]`` (the first is line ``first_line``), handed to ``emit`` with
    where it stands in the text, from its opening line to the end of its closing line (one line at a time)."""
    current: dict[str, Any] | None = None  # open, start, marker, version, form, content [(line, text)]

    def finish(c: dict[str, Any], close_line: int | None, close_marker: str | None, reason: str | None,
               until: int) -> None:
        nonlocal current
        current = None
        rejected = reason is not None
        if not rejected:
            version = c["version"]
            if not version:
                reason = "the marker names no grammar version"
                warnings.append(notice("TRACE_UNKNOWN_VERSION", f"line {c['open']}: [{c['marker']}] names no"
                                       f" grammar version (expected [{c['marker']}: v1]): block rejected", c["open"]))
            elif version not in KNOWN_VERSIONS:
                reason = f"unknown grammar version '{version}'"
                warnings.append(notice("TRACE_UNKNOWN_VERSION", f"line {c['open']}: grammar version '{version}' is"
                                       f" not known (only v1): block rejected, not parsed", c["open"]))
            rejected = reason is not None
            if close_line is not None and close_marker is not None and close_marker != c["marker"]:
                warnings.append(notice("TRACE_MARKER_MISMATCH", f"line {close_line}: [{c['marker']}: …] closed by"
                                       f" [/{close_marker}]: accepted", close_line))
        parsed = None if rejected else _parse_content(c["content"], c["form"], warnings)
        emit(TraceBlock(c["open"], close_line, c["form"], c["marker"], c["version"] or None, rejected, reason,
                        parsed), c["start"], until)

    def open_block(i: int, m: re.Match[str], bare: str, at: int, until: int) -> None:
        """Open a block at line ``i`` (``m``: its opening marker); a compact one may close on the same line."""
        nonlocal current
        rest = _bare(bare[m.end():])
        current = {"open": i, "start": at, "marker": m.group(1), "version": m.group(2),
                   "form": "compact" if rest else "block", "content": []}
        closing = _closing(rest) if rest else None
        if closing is not None:
            if closing[0]:
                current["content"].append((i, closing[0]))
            finish(current, i, closing[1], None, until)
        elif rest:
            current["content"].append((i, rest))

    i = first_line - 1
    for at, until, line in lines_of(text, start, end):
        i += 1
        bare = _bare(line)
        m = _OPEN.match(bare)
        if m is not None:
            rest = _bare(bare[m.end():])
            if rest and not _FIRST_TOKEN.match(rest) and not _CLOSE.fullmatch(rest):
                warnings.append(notice("TRACE_MARKER_IN_TEXT", f"line {i}: '[{m.group(1)}: …]' is followed by"
                                       f" prose, not by an entry: not a trace", i))
                m = None
        if current is None:
            if m is not None:
                open_block(i, m, bare, at, until)
            elif _CLOSE.fullmatch(bare):
                warnings.append(notice("TRACE_STRAY_CLOSE", f"line {i}: a closing trace marker with no open"
                                       f" block: ignored", i))
            elif _MENTION.search(line):
                warnings.append(notice("TRACE_MARKER_IN_TEXT", f"line {i}: a trace marker inside a sentence is"
                                       f" not a trace (a trace marker stands at the start of its line)", i))
            continue
        if m is not None:  # a new opening marker inside an open block
            c_open = current["open"]
            warnings.append(notice("TRACE_UNCLOSED", f"line {c_open}: the trace block is not closed before the next"
                                   f" opening marker (line {i}): rejected", c_open))
            finish(current, None, None, f"not closed before the next opening marker (line {i})", at)
            open_block(i, m, bare, at, until)
            continue
        closing = _closing(bare)
        if closing is not None:
            if closing[0]:
                current["content"].append((i, closing[0]))
            finish(current, i, closing[1], None, until)
            continue
        current["content"].append((i, line))
    if current is not None:
        c_open = current["open"]
        warnings.append(notice("TRACE_UNCLOSED", f"line {c_open}: the trace block is never closed by"
                               f" [/{current['marker']}]: rejected (a truncated trace is not trusted)", c_open))
        finish(current, None, None, "never closed", end)


def _segments(content: list[tuple[int, str]], form: str, warnings: list[Notice]) -> list[tuple[int, str]]:
    """The entries of a block: (line, text), soft-wrapped lines joined with a space (§N.4.2)."""
    if form == "compact":  # sections split at '|'; a wrapped line's first piece joins the previous one
        raw = [(line, piece) for line, text in content for piece in _COMPACT_SPLIT.split(text)]
    else:
        raw = content
    entries: list[tuple[int, list[str]]] = []
    for line, text in raw:
        bare = _bare(text)
        if not bare:
            continue
        if _FIRST_TOKEN.match(bare):
            entries.append((line, [bare]))
        elif entries:
            entries[-1][1].append(bare)
        else:
            warnings.append(notice("TRACE_STRAY_TEXT", f"line {line}: text before the first entry of the block:"
                                   f" ignored", line))
    return [(line, _bare(" ".join(parts))) for line, parts in entries]


def _iso(date: str) -> bool:
    try:
        _dt.datetime.fromisoformat(date)
    except ValueError:
        return False
    return True


def _parse_content(content: list[tuple[int, str]], form: str, warnings: list[Notice]) -> TraceContent:
    nuclei: list[int] = []
    nucleus_lines: list[int] = []
    modules: list[TraceModule] = []
    logs: list[TraceLog] = []
    memories: list[TraceMemory] = []
    furthest = 0
    seen_nuclei_line = False
    for line, entry in _segments(content, form, warnings):
        first = _FIRST_TOKEN.match(entry)
        assert first is not None  # _segments starts every entry at a token
        token = first.group(1)
        section = _SECTION[token]
        if section < furthest:
            warnings.append(notice("TRACE_SECTION_ORDER", f"line {line}: {token} after a later section (order is"
                                   f" NUCLEI, MODULE/LOG, MEMORY): kept", line))
        furthest = max(furthest, section)
        if token == "NUCLEI":
            if seen_nuclei_line:
                warnings.append(notice("TRACE_SECTION_ORDER", f"line {line}: a second NUCLEI line: its ids are added"
                                       f" in order", line))
            seen_nuclei_line = True
            structural = _untoken(entry)
            m = _NUCLEI.match(structural)
            for item in re.split(r"[,\s]+", m.group(1) if m else ""):
                item = item.strip("[]().;→>")
                if not item:
                    continue
                if item.isdigit() and item.isascii():
                    nuclei.append(int(item))
                    nucleus_lines.append(line)
                else:
                    warnings.append(notice("TRACE_MALFORMED_ENTRY", f"line {line}: nucleus '{item[:30]}' is not an"
                                           f" integer id: dropped", line))
        elif token == "MODULE":
            m = _MODULE.fullmatch(_untoken(entry))
            if m is None:
                warnings.append(notice("TRACE_MALFORMED_ENTRY", f"line {line}: '{entry[:60]}' is not"
                                       f" 'MODULE <id>: <name> <state>': dropped", line))
                continue
            modules.append(_module(m.group(1), m.group(2) or "", line, warnings))
        elif token == "LOG":
            log = _log(entry, line, warnings)
            if log is not None:
                logs.append(log)
        else:
            mem = _memory(entry, line, warnings)
            if mem is not None:
                memories.append(mem)
    return TraceContent(tuple(nuclei), tuple(modules), tuple(logs), tuple(memories), tuple(nucleus_lines))


def _module(module_id: str, rest: str, line: int, warnings: list[Notice]) -> TraceModule:
    words = rest.split()
    state = None
    if words:
        last = words[-1].strip("[]().,;:—–-")
        if last.lower() in STATES:
            state = _WORDS[last.lower()]  # the vocabulary's own string: one for every module
            words = words[:-1]
        elif re.fullmatch(r"[a-z]+", last):
            warnings.append(notice("TRACE_UNKNOWN_STATE", f"line {line}: state '{last}' of MODULE {module_id} is"
                                   f" not active, queried or suppressed: module kept, state null", line))
            words = words[:-1]
    name = " ".join(words).strip(" —–-:") or None
    return TraceModule(module_id, name, state, line)


def _log(entry: str, line: int, warnings: list[Notice]) -> TraceLog | None:
    m = _LOG.fullmatch(entry)
    parts = [p.strip() for p in _LOG_SEP.split(m.group(2), maxsplit=2)] if m else []
    if m is None or len(parts) < 2:
        warnings.append(notice("TRACE_MALFORMED_ENTRY", f"line {line}: '{entry[:60]}' is not 'LOG <module-id>:"
                               f" <ISO-8601> — <action> — <free text>': dropped", line))
        return None
    module_id = _untoken(m.group(1))
    date = _untoken(parts[0]).strip()
    word = _untoken(parts[1]).strip().lower()
    text = _bare(parts[2]) if len(parts) > 2 else ""
    if not _iso(date):
        warnings.append(notice("TRACE_BAD_DATE", f"line {line}: LOG date '{date[:40]}' is not ISO 8601: kept as"
                               f" written", line))
    action = _WORDS[word] if word in LOG_ACTIONS else None
    if action is None:
        warnings.append(notice("TRACE_UNKNOWN_ACTION", f"line {line}: LOG action '{word[:30]}' is not generated or"
                               f" queried: entry kept, action null", line))
    return TraceLog(module_id, date, action, text, line)


def _memory(entry: str, line: int, warnings: list[Notice]) -> TraceMemory | None:
    m = _MEMORY.fullmatch(_untoken(entry))
    if m is None:
        warnings.append(notice("TRACE_MALFORMED_ENTRY", f"line {line}: '{entry[:60]}' is not 'MEMORY <id>[ @ <ref>]:"
                               f" <action>': dropped", line))
        return None
    body = m.group(1)
    left, colon, last = body.rpartition(":")
    if colon and last.strip().isascii() and last.strip().isalpha():
        left, word = left.strip(), last.strip().lower()
    else:
        left, word = body.rstrip(" :"), ""
    memory_id, _, ref = left.partition("@")
    memory_id, ref = memory_id.strip(), ref.strip() or None
    if not memory_id:
        warnings.append(notice("TRACE_MALFORMED_ENTRY", f"line {line}: MEMORY without an id: dropped", line))
        return None
    action = _WORDS[word] if word in MEMORY_ACTIONS else None
    if action is None:
        shown = f"'{word[:30]}'" if word else "(none)"
        warnings.append(notice("TRACE_UNKNOWN_ACTION", f"line {line}: MEMORY action {shown} is not queried, touched"
                               f" or appended: entry kept, action null", line))
    return TraceMemory(memory_id, ref, action, line)


# -- validation ---------------------------------------------------------------------------

def tracing_module(layer: Layer) -> tuple[LayerModule | None, str | None]:
    """The effectively active enabling module (§N.2, §N.6), or None and why tracing is off."""
    candidates = [m for m in layer.modules
                  if m.is_module and not m.info.ignored and not m.temporary
                  and (m.info.name.strip() in ENABLING_NAMES or m.module_id in ENABLING_NAMES)]
    user_zone = [m for m in candidates if m.info.permission_level in (1, 2, 3)]
    for m in user_zone:
        if m.effective_state == "active":
            return m, None
    for m in user_zone:  # loaded with no STATE and no registry entry: neither absent nor inactive (§N.2, §N.6)
        if m.effective_state is None:
            return m, None
    if not candidates:
        return None, ("the layer has no DEFERRED_NEURAL_TRACING module (§N.6): tracing is disabled, nothing is"
                      " illuminated")
    if not user_zone:
        m = candidates[0]
        return None, (f"MODULE {m.module_id} ({m.file}:{m.info.line}) is not declared in a user-controlled zone"
                      f" ([P1]-[P3]): tracing is disabled")
    m = user_zone[0]
    src = m.state_source
    source = "" if src is None else "its declared STATE" if src.registry is None else f"the registry of {src.registry}"
    return None, (f"MODULE {m.module_id}: {m.info.name} ({m.file}:{m.info.line}) is inactive ({source}):"
                  f" tracing is disabled")


def read_trace(text: str, layer: Layer) -> TraceResult:
    """Parse ``text`` and validate its traces against ``layer`` (the two steps of the module docstring)."""
    return validate_trace(parse_trace(text), layer)


def validate_trace(parsed: ParsedTraces, layer: Layer) -> TraceResult:
    """Check every identifier of ``parsed`` against ``layer``, apply the gating and the §N.4 caution."""
    warnings = list(parsed.warnings)
    dropped: list[Dropped] = []
    unknown: list[tuple[str, str | int]] = []
    enabling, why = tracing_module(layer)
    accepted = array("q")  # the accepted blocks, found as their contents are read into the union (one at a time)

    def contents() -> Iterator[TraceContent]:
        for k, b in enumerate(parsed.blocks):
            if not b.rejected and b.parsed is not None:
                accepted.append(k)
                yield b.parsed
    if why is not None:  # enabled is false: a warning says why, trace or not (§N.2)
        warnings.append(notice("TRACE_DISABLED", why, parsed.blocks[0].open_line if parsed.blocks else 1))
    registry = None if enabling is None or enabling.state_source is None else enabling.state_source.registry
    if enabling is not None and registry is not None and enabling.info.declared_state != "active" and parsed.blocks:
        warnings.append(notice("TRACE_ENABLED_BY_REGISTRY",
                               f"tracing is on because the state registry ({registry}) activates"
                               f" MODULE {enabling.module_id}; the AI may rewrite that registry — declare"
                               f" 'active - permanent' or 'inactive - permanent' to decide it yourself",
                               parsed.blocks[0].open_line))
    if enabling is not None and enabling.effective_state is None and parsed.blocks:
        warnings.append(notice("TRACE_ENABLED_WITHOUT_STATE",
                               f"tracing is on because MODULE {enabling.module_id} ({enabling.file}:"
                               f"{enabling.info.line}) is loaded with no STATE and no registry entry (as §N.6's"
                               f" skeleton); declare its STATE to decide it", parsed.blocks[0].open_line))
    resolver = _Resolver(layer)
    content = _union(contents())
    kept = resolver.filter(content, dropped, unknown, warnings, caution=True)
    if unknown:
        n = len(unknown)
        listed = set(unknown)
        first = next(d.line for d in dropped if (d.kind if d.kind != "log" else "module", d.id) in listed)
        warnings.append(notice("TRACE_UNKNOWN_IDENTIFIERS", f"{n} unknown identifier{'s' if n != 1 else ''}"
                               f" skipped", first))
    enabled = why is None
    result = kept if enabled else TraceContent()
    targets = tuple(resolver.targets(result, warnings)) if enabled else ()
    per_block = _Accepted(parsed.blocks, accepted, resolver) if enabled else ()
    return TraceResult(parsed.blocks, enabled, result, tuple(dropped), tuple(unknown), tuple(warnings), targets,
                       per_block)


class _Accepted(RowSequence[tuple[TraceBlock, TraceContent]]):
    """Each accepted block and its content validated alone (``TraceResult.accepted``), made when asked for: the
    block from its :class:`TraceBlocks`, its content filtered by the resolver of the validation (ruling CL30)."""

    def __init__(self, blocks: Sequence[TraceBlock], at: Sequence[int], resolver: _Resolver):
        self._blocks, self._at, self._resolver = blocks, at, resolver

    def __len__(self) -> int:
        return len(self._at)

    def _item(self, k: int) -> tuple[TraceBlock, TraceContent]:
        b = self._blocks[self._at[k]]
        assert b.parsed is not None
        return b, self._resolver.filter(b.parsed, [], [], [], caution=True)


def _union(contents: Iterable[TraceContent]) -> TraceContent:
    """The blocks' lists in document order, each item once (module by id and state, memory by id, ref, action)."""
    nuclei: list[int] = []
    nucleus_lines: list[int] = []
    modules: list[TraceModule] = []
    logs: list[TraceLog] = []
    memories: list[TraceMemory] = []
    seen: set[tuple[object, ...]] = set()
    for c in contents:
        for n, ln in zip(c.nuclei, c.nucleus_lines or (0,) * len(c.nuclei)):
            if ("n", n) not in seen:
                seen.add(("n", n))
                nuclei.append(n)
                nucleus_lines.append(ln)
        for m in c.modules:
            if ("m", m.id, m.state) not in seen:
                seen.add(("m", m.id, m.state))
                modules.append(m)
        for g in c.logs:
            if ("g", g) not in seen:
                seen.add(("g", g))
                logs.append(g)
        for y in c.memories:
            if ("y", y) not in seen:
                seen.add(("y", y))
                memories.append(y)
    return TraceContent(tuple(nuclei), tuple(modules), tuple(logs), tuple(memories), tuple(nucleus_lines))


def contents_targets(content: TraceContent, layer: Layer) -> list[Target]:
    """Where a (recorded) trace result points in ``layer`` now; unknown ids are skipped silently."""
    resolver = _Resolver(layer)
    kept = resolver.filter(content, [], [], [], caution=False)
    return resolver.targets(kept, [])


def _entry_text(kind: str, item: TraceModule | TraceLog | TraceMemory) -> str:
    if isinstance(item, TraceModule):
        return f"MODULE {item.id}: " + " ".join(x for x in (item.name, item.state) if x)
    if isinstance(item, TraceLog):
        return f"LOG {item.module}: {item.date} — {item.action or ''} — {item.text}"
    return f"MEMORY {item.id}" + (f" @ {item.ref}" if item.ref else "") + f": {item.action or ''}"


class _Resolver:
    """The identifiers a layer declares, and where they are."""

    def __init__(self, layer: Layer):
        self.layer = layer
        self.nuclei = {n.nucleus_id: n for n in layer.nuclei}
        self.modules = {m.module_id: m for m in layer.modules
                        if m.is_module and not m.temporary and not m.info.ignored and m.module_id is not None}
        self.memories: dict[str, tuple[str, OutlineNode]] = {}  # id -> (file rel, outline node)
        for f in layer.merged_files:
            if f.file_type != "external_memory":
                continue
            root = f.doc.outline()
            stem = re.sub(r"\[[^\]]*\]$", "", f.path.name[:-3] if f.path.name.endswith(".md") else f.path.name)
            for name in (f.doc.title, stem.strip()):
                if name and name not in self.memories:
                    self.memories[name] = (f.rel, root)
        if layer.reminder is not None:
            rf = layer.file(layer.reminder)
            for node in rf.doc.outline().children:
                for name in (node.id if node.kind == "module" else None, node.name):
                    if name and name not in self.memories:
                        self.memories[name] = (rf.rel, node)
        self._verbatim: list[tuple[str, int, str, list[int], list[int]]] | None = None
        self._runs: dict[int, set[int]] | None = None
        self._refs: dict[int, dict[tuple[bool, str], list[tuple[str, int, str]]]] = {}

    # identifiers
    def filter(self, content: TraceContent, dropped: list[Dropped], unknown: list[tuple[str, str | int]],
               warnings: list[Notice], *, caution: bool) -> TraceContent:
        listed = set(unknown)

        def miss(kind: str, ident: str | int, line: int, entry: str, what: str) -> None:
            dropped.append(Dropped(line, entry, kind, ident, f"unknown {what} identifier: no {what} {ident} in the"
                                                              f" layer"))
            key = (kind if kind != "log" else "module", ident)
            if key not in listed:
                listed.add(key)
                unknown.append(key)

        nuclei: list[int] = []
        lines: list[int] = []
        for n, ln in zip(content.nuclei, content.nucleus_lines or (0,) * len(content.nuclei)):
            if n in self.nuclei:
                nuclei.append(n)
                lines.append(ln)
            else:
                miss("nucleus", n, ln, f"NUCLEI: … {n} …", "nucleus")
        def quotes_restricted(kind: str, ident: str, line: int, entry: str, free_text: str | None,
                              what: str) -> bool:
            """§N.4 caution: the line's free-form text reproduces [P1]/[P2] content -> dropped."""
            hit = self.restricted(free_text) if caution and free_text else None
            if hit is None:
                return False
            rel, ln, level = hit
            reason = (f"its {what} reproduces [P{level}] content of {rel} (line {ln}): a trace names restricted"
                      f" material by identifier only (§N.4)")
            dropped.append(Dropped(line, entry, kind, ident, reason))
            warnings.append(notice("TRACE_RESTRICTED_CONTENT", f"line {line}: {kind.upper()} {ident} rejected:"
                                   f" {reason}", line))
            return True

        modules: list[TraceModule] = []
        for m in content.modules:
            lm = self.modules.get(m.id)
            if lm is None:
                miss("module", m.id, m.line, _entry_text("module", m), "module")
                continue
            echo = m.name is not None and m.name.casefold().split() == lm.info.name.casefold().split()
            if not echo and quotes_restricted("module", m.id, m.line, _entry_text("module", m), m.name, "name"):
                continue  # the declared name echoed back is an identifier, not content
            if m.state in ("active", "queried") and lm.effective_state == "inactive":
                warnings.append(notice("TRACE_INACTIVE_MODULE", f"line {m.line}: MODULE {m.id} is inactive in the"
                                       f" layer, but the trace says {m.state}: kept", m.line))
            modules.append(m)
        logs: list[TraceLog] = []
        for g in content.logs:
            if g.module not in self.modules:
                miss("log", g.module, g.line, _entry_text("log", g), "module")
                continue
            if quotes_restricted("log", g.module, g.line, _entry_text("log", g), g.text, "free text"):
                continue
            logs.append(g)
        memories: list[TraceMemory] = []
        for y in content.memories:
            if y.id not in self.memories:
                miss("memory", y.id, y.line, _entry_text("memory", y), "memory")
                continue
            resolves = y.ref is not None and bool(self.resolve(self.memories[y.id][1], y.ref))
            if not resolves and quotes_restricted("memory", y.id, y.line, _entry_text("memory", y), y.ref, "ref"):
                continue  # a ref naming an entry or a topic is an address, not content
            memories.append(y)
        return TraceContent(tuple(nuclei), tuple(modules), tuple(logs), tuple(memories), tuple(lines))

    # §N.4 caution
    def restricted(self, text: str) -> tuple[str, int, int] | None:
        """(file, line, level) of [P1]/[P2] text that ``text`` reproduces (module docstring), or None."""
        words = _WORD.findall(text.casefold())
        if len(words) < VERBATIM_MIN:
            return None
        n = min(VERBATIM_RUN, len(words))
        runs = self._restricted_runs(n)
        for k in range(len(words) - n + 1):
            run = tuple(words[k:k + n])
            if hash(run) not in runs:
                continue  # the common case: one set lookup per word, whatever the size of the zones
            needle = " " + " ".join(run) + " "
            for rel, level, joined, starts, lines in self._restricted_text():
                pos = joined.find(needle)
                if pos >= 0:
                    return rel, lines[bisect.bisect_right(starts, pos) - 1], level
        return None

    def _restricted_runs(self, n: int) -> set[int]:
        """Hashes of every run of ``n`` words of the [P1]/[P2] zones (a hit is then confirmed), built once per ``n``."""
        if self._runs is None:
            self._runs = {}
        if n not in self._runs:
            runs: set[int] = set()
            for _rel, _level, joined, _starts, _lines in self._restricted_text():
                words = joined.split()
                runs.update(hash(tuple(words[k:k + n])) for k in range(len(words) - n + 1))
            self._runs[n] = runs
        return self._runs[n]

    def _restricted_text(self) -> list[tuple[str, int, str, list[int], list[int]]]:
        """Each [P1]/[P2] zone of the layer as one string of case-folded words, with word offsets and lines."""
        if self._verbatim is not None:
            return self._verbatim
        zones = []
        for f in self.layer.files:
            for block in f.doc.blocks:
                if block.type != "permission_block" or block.permission_level not in (1, 2):
                    continue
                parts, starts, lines, size = [" "], [], [], 1
                for offset, line in enumerate(block.raw_markdown.split("\n")):
                    for w in _WORD.findall(line.casefold()):
                        starts.append(size - 1)
                        lines.append(block.line + offset)
                        parts.append(w + " ")
                        size += len(w) + 1
                zones.append((f.rel, block.permission_level, "".join(parts), starts, lines))
        self._verbatim = zones
        return zones

    def resolve(self, node: OutlineNode, ref: str) -> list[tuple[str, int, str]]:
        """Entries and containers under ``node`` that ``ref`` names (exactly, else ignoring case; §N.3), through an
        index of ``node``'s names built once per memory (linear in the trace)."""
        names = self._refs.get(id(node))
        if names is None:
            names = self._refs[id(node)] = _ref_index(node)
        return _lookup_ref(names, ref)

    # where things are
    def targets(self, content: TraceContent, warnings: list[Notice]) -> list[Target]:
        out: list[Target] = []
        for order, n in enumerate(content.nuclei, start=1):
            ln = self.nuclei[n]
            out.append(Target("nucleus", ln.file, ln.info.line, f"NUCLEUS {n}: {ln.info.name}", order=order))
        for m in content.modules:
            lm = self.modules[m.id]
            out.append(Target("module", lm.file, lm.info.line, f"MODULE {m.id}: {lm.info.name}", state=m.state))
        for y in content.memories:
            rel, node = self.memories[y.id]
            line = None if node.kind == "file" else node.line
            out.append(Target("memory", rel, line, y.id, action=y.action, ref=y.ref))
            if y.ref is None:
                continue
            found = self.resolve(node, y.ref)
            if not found:
                warnings.append(notice("TRACE_UNRESOLVED_REF", f"line {y.line}: '@ {y.ref}' matches no entry or topic"
                                       f" of memory {y.id}: the memory is kept", y.line))
            for kind, fline, label in found:
                out.append(Target(kind, rel, fline, label, action=y.action, ref=y.ref))
        return out


_DASHES = re.compile(r"\s*[—–-]+\s*")


def _ref_key(text: str, fold: bool) -> str:
    """A ref or a name for comparison: dashes written alike, case folded when ``fold``."""
    text = _DASHES.sub(" — ", text.strip())
    return text.casefold() if fold else text


def _lookup_ref(names: dict[tuple[bool, str], list[tuple[str, int, str]]], ref: str) -> list[tuple[str, int, str]]:
    ref = re.sub(r"^LOG:\s*", "", _bare(ref))
    for fold in (False, True):
        hits = names.get((fold, _ref_key(ref, fold)))
        if hits:
            return list(hits)
    return []


def _ref_index(node: OutlineNode) -> dict[tuple[bool, str], list[tuple[str, int, str]]]:
    """(folded, key) -> the targets under ``node`` answering to that name, in document order, each once."""
    named: list[tuple[tuple[str, int, str], list[str]]] = []  # (target, the names it answers to)

    def walk(n: OutlineNode, path: list[str]) -> None:
        for e in n.entries:
            names: list[str] = []
            if e.date:
                names += [e.date, e.date.split("T", 1)[0]]
            if e.title:
                names.append(e.title)
                if e.date:
                    names.append(f"{e.date} — {e.title}")
            named.append((("entry", e.line, f"{e.date or ''} {e.title or ''}".strip()), names))
        for c in n.children:
            if c.kind in ("module", "sub_module", "section", "nucleus"):
                keyword = spelled_keyword(c.keyword, c.level) or ("MODULE" if c.kind == "module" else None)
                names = [c.name, "/".join(path + [c.name])] + ([f"{keyword}: {c.name}"] if keyword else [])
                named.append((("topic", c.line, c.name), names + ([c.id] if c.id else [])))
            walk(c, path + [c.name])

    walk(node, [])
    index: dict[tuple[bool, str], list[tuple[str, int, str]]] = {}
    for target, names in named:
        for fold in (False, True):
            for key in dict.fromkeys(_ref_key(n, fold) for n in names):
                index.setdefault((fold, key), []).append(target)
    return index
