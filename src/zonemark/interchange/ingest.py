"""Filing the log entries of chat text into a memory file (§N.19.3, §7.5), through the safe writer.

:func:`ingest` adds only two things to :func:`zonemark.writer.append_entries`: the extraction
(:func:`~zonemark.interchange.logs.extract_logs`) and a report line per entry.  Permissions (§5.2),
sanitising, the re-check, the duplicate check, the lock and history are the writer's: nothing new
to trust.

* Each entry keeps its own date and title; an entry without a date gets ``date`` (``--date``)
  or today's local date.
* **One write** (ruling CL26): the writer plans every entry against one snapshot of the file and
  writes them in one locked update — one saved version, so one ``zonemark undo`` takes the whole
  text back — at a cost linear in the file and the text.
* **Duplicates** (ruling CL7) are the writer's: each entry is compared — as it would be written —
  with the entries the container already owns, under the file's lock and on its current bytes,
  and with the entries before it in the same text.  Pasting the same chat twice, or ingesting it
  from two processes at once, files nothing twice.
* An entry the writer refuses (a title it cannot take, a date that is not ISO 8601, a zone the
  actor may not write, a body the re-check refuses) is reported with the writer's reason and code;
  the others are still filed.
* ``dry_run`` is the same plan on the file's bytes as read, with nothing written anywhere, so the
  report says exactly what would happen (``would_file``).
* **Limits** (ruling CL28): a text over :data:`MAX_CHAT_CHARS` characters or :data:`MAX_ENTRIES`
  entries is refused whole, in one line naming the limit.
"""

from __future__ import annotations

import datetime as _dt
import os
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from ..writer import EntryOutcome, NewEntry, Store, append_entries, check_date
from .logs import body_of, scan_logs
from .notices import Notice

FILED, WOULD_FILE, DUPLICATE, REFUSED = "filed", "would_file", "duplicate", "refused"
DUPLICATE_OUTCOME = "duplicate"  # the writer's word (zonemark.writer.append.DUPLICATE)
#: The largest chat text ingest reads, in characters, and the most entries it files at once (ruling CL28).
MAX_CHAT_CHARS = 1_000_000
MAX_ENTRIES = 3_000

_STATUSES = (FILED, WOULD_FILE, DUPLICATE, REFUSED)
_NONE = -1  # a line column's None


class IngestTooLarge(ValueError):
    """The chat text is over a limit of ingest (:data:`MAX_CHAT_CHARS`, :data:`MAX_ENTRIES`); nothing is filed."""


@dataclass(frozen=True, slots=True)
class IngestItem:
    """What happened to one extracted entry."""

    header_line: int  # line of its header in the chat text
    date: str | None  # the date it was (or would be) filed with
    title: str
    status: str  # 'filed' | 'would_file' | 'duplicate' | 'refused'
    reason: str | None  # why it was refused, or where the duplicate is
    line: int | None  # line of the entry in the memory file (new, or the existing duplicate)
    changes: tuple[str, ...] = ()  # what the writer's sanitiser neutralised
    code: str | None = None  # the writer's refusal code (zonemark.writer.REFUSALS) when refused

    def to_dict(self) -> dict[str, Any]:
        return {"headerLine": self.header_line, "date": self.date, "title": self.title, "status": self.status,
                "reason": self.reason, "code": self.code, "line": self.line, "changes": list(self.changes)}


class _Strings:
    """Strings kept as blocks of :data:`_BLOCK` joined and their ends (a few bytes each, not an object each, B25).

    Each block is joined once, when it is full, so adding is linear; the last block's strings stay apart until
    then."""

    __slots__ = ("_parts", "_blocks", "_ends")

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._blocks: list[str] = []
        self._ends = array("i")  # within MAX_CHAT_CHARS: four bytes each

    def add(self, s: str) -> None:
        self._parts.append(s)
        self._ends.append((self._ends[-1] if self._ends else 0) + len(s))
        if len(self._parts) == _BLOCK:
            self._blocks.append("".join(self._parts))
            self._parts.clear()

    def __getitem__(self, i: int) -> str:
        b, k = divmod(i, _BLOCK)
        if b == len(self._blocks):
            return self._parts[k]
        base = self._ends[b * _BLOCK - 1] if b else 0
        return self._blocks[b][(self._ends[i - 1] if i else 0) - base:self._ends[i] - base]


#: How many strings :class:`_Strings` joins into one block.
_BLOCK = 256


class _Values:
    """A column of few distinct values (dates, codes, reasons): a small number each, the values once."""

    __slots__ = ("_ids", "_values", "_of")

    def __init__(self) -> None:
        self._ids = array("i")
        self._values: list[Any] = []
        self._of: dict[Any, int] = {}

    def add(self, v: Any) -> None:
        i = self._of.get(v)
        if i is None:
            i = self._of[v] = len(self._values)
            self._values.append(v)
        self._ids.append(i)

    def __getitem__(self, i: int) -> Any:
        return self._values[self._ids[i]]


class _Found(Sequence[NewEntry]):
    """The entries of a chat text as columns (header line, date, title, the span of the body) and each entry as
    the writer takes it (:class:`NewEntry`), made when it is read: the extraction holds no entry object (B25)."""

    def __init__(self, text: str, warnings: list[Notice]) -> None:
        self.text = text
        self.header_lines = array("i")  # lines and offsets of a text within MAX_CHAT_CHARS: four bytes each
        self.dates = _Values()
        self.titles = _Strings()
        self.spans = array("i")
        for n, _, h, _, _, start, stop in scan_logs(text, warnings):
            self.header_lines.append(n)
            self.dates.add(h.date)
            self.titles.add(h.title)
            self.spans.extend((start, stop))

    def __len__(self) -> int:
        return len(self.header_lines)

    @overload
    def __getitem__(self, i: int) -> NewEntry: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[NewEntry]: ...

    def __getitem__(self, i: int | slice) -> NewEntry | Sequence[NewEntry]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return NewEntry(self.dates[i], self.titles[i], body_of(self.text, self.spans[2 * i], self.spans[2 * i + 1]))

    def __iter__(self) -> Iterator[NewEntry]:
        return (self[i] for i in range(len(self)))


class _Report:
    """The items of an ingestion as columns, each :class:`IngestItem` made when it is read (B25, as the outline's
    table of B21): status, dates, lines and titles a few bytes each, the rare reasons, codes and changes by index."""

    def __init__(self, found: _Found, outcomes: Iterable[EntryOutcome], dry_run: bool) -> None:
        self.header_lines = found.header_lines
        self.titles = found.titles
        self.status = bytearray()
        self.dates = _Values()
        self.lines = array("q")
        self.rare: dict[int, tuple[str | None, tuple[str, ...], str | None]] = {}  # reason, changes, code
        self.counts = [0, 0, 0, 0]
        done = _STATUSES.index(WOULD_FILE if dry_run else FILED)
        extra: tuple[str | None, tuple[str, ...], str | None] | None
        for i, o in enumerate(outcomes):
            if i >= len(found):
                break
            self.dates.add(o.date)
            if o.status == DUPLICATE_OUTCOME:
                status, line, extra = 2, o.line, None
            elif o.status == REFUSED:
                status, line, extra = 3, None, (o.reason, (), o.code)
            else:
                status, line = done, o.line
                extra = (None, o.changes, None) if o.changes else None
            self.status.append(status)
            self.counts[status] += 1
            self.lines.append(_NONE if line is None else line)
            if extra is not None:
                self.rare[i] = extra

    def __len__(self) -> int:
        return len(self.status)

    def item(self, i: int) -> IngestItem:
        status = self.status[i]
        line: int | None = self.lines[i]
        line = None if line == _NONE else line
        reason, changes, code = self.rare.get(i, (None, (), None))
        if status == 2:
            reason = f"already in the file at line {line}" if line is not None else "already in the text above"
        return IngestItem(self.header_lines[i], self.dates[i], self.titles[i], _STATUSES[status], reason, line,
                          changes, code)

    def count(self, status: str) -> int:
        return self.counts[_STATUSES.index(status)] if status in _STATUSES else 0


@dataclass(frozen=True, slots=True)
class IngestResult:
    """The report of one ingestion: an item per extracted entry, in the order of the text."""

    path: Path
    container: str
    dry_run: bool
    report: _Report = field(repr=False)
    warnings: tuple[Notice, ...]

    @property
    def items(self) -> tuple[IngestItem, ...]:
        """An item per entry, made from the report's columns when read."""
        return tuple(self.report.item(i) for i in range(len(self.report)))

    @property
    def found(self) -> int:
        return len(self.report)

    def count(self, status: str) -> int:
        return self.report.count(status)

    def to_dict(self) -> dict[str, Any]:
        report = self.report
        return {"file": str(self.path), "container": self.container, "dryRun": self.dry_run, "found": self.found,
                "filed": self.count(FILED), "wouldFile": self.count(WOULD_FILE),
                "duplicates": self.count(DUPLICATE), "refused": self.count(REFUSED),
                "items": [report.item(i).to_dict() for i in range(len(report))],
                "warnings": [w.to_dict() for w in self.warnings]}


def ingest(path: str | os.PathLike[str], container: str, text: str, *, actor: str = "ai", date: str | None = None,
           dry_run: bool = False, store: Store | None = None, today: str | None = None,
           progress: Callable[[int, int, str], None] | None = None) -> IngestResult:
    """Extract the log entries of ``text`` and file each one into ``container`` of ``path``.

    ``actor`` is 'ai' or 'user' (§5.2); ``date`` is used for entries whose header has none
    (default ``today``, else today's local date); ``store`` is the writer's store.  ``progress``, when
    given, is told (step, steps, what) as each of the two steps ends: the entries found, then filed.

    Raises ``RefusedWrite`` when the container cannot be resolved (nothing is filed then),
    ``ValueError`` for a bad ``date``/``actor`` or a text over :data:`MAX_ENTRIES` entries,
    ``OSError`` when the file cannot be read.

    The entries are held as columns of the text and handed to the writer one at a time (:class:`_Found`), and
    the report is columns too (:class:`_Report`): per entry a few numbers, not a chain of objects (B25).
    """
    if actor not in ("ai", "user"):
        raise ValueError(f"actor must be 'ai' or 'user', not {actor!r}")
    if len(text) > MAX_CHAT_CHARS:
        raise IngestTooLarge(f"the chat text has {len(text):,} characters; ingest takes at most {MAX_CHAT_CHARS:,}"
                             f" (MAX_CHAT_CHARS): split it")
    notes: list[Notice] = []
    found = _Found(text, notes)
    warnings = tuple(notes)
    count = len(found)
    if count > MAX_ENTRIES:
        raise IngestTooLarge(f"the chat text holds {count:,} log entries; ingest files at most"
                             f" {MAX_ENTRIES:,} at once (MAX_ENTRIES): split it")
    default_date = check_date(date) if date is not None else (today or _dt.date.today().isoformat())
    target = Path(path)
    if progress is not None:
        progress(1, 2, f"found {count:,} log entr{'y' if count == 1 else 'ies'} in the text")
    batch = append_entries(target, container, found, actor=actor, default_date=default_date, store=store or Store(),
                           dry_run=dry_run)
    result = IngestResult(target, container, dry_run, _Report(found, batch.outcomes, dry_run), warnings)
    del batch
    if progress is not None:
        done = result.count(WOULD_FILE) if dry_run else result.count(FILED)
        progress(2, 2, f"{'would file' if dry_run else 'filed'} {done:,}, {result.count(DUPLICATE):,} already "
                       f"there, {result.count(REFUSED):,} refused")
    return result
