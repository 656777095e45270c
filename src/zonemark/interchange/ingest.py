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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..writer import EntryOutcome, NewEntry, Store, append_entries, check_date
from .logs import Extraction, extract_logs
from .notices import Notice

FILED, WOULD_FILE, DUPLICATE, REFUSED = "filed", "would_file", "duplicate", "refused"
DUPLICATE_OUTCOME = "duplicate"  # the writer's word (zonemark.writer.append.DUPLICATE)
#: The largest chat text ingest reads, in characters, and the most entries it files at once (ruling CL28).
MAX_CHAT_CHARS = 1_000_000
MAX_ENTRIES = 3_000


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


@dataclass(frozen=True, slots=True)
class IngestResult:
    """The report of one ingestion: an item per extracted entry, in the order of the text."""

    path: Path
    container: str
    dry_run: bool
    items: tuple[IngestItem, ...]
    warnings: tuple[Notice, ...]

    @property
    def found(self) -> int:
        return len(self.items)

    def count(self, status: str) -> int:
        return sum(1 for i in self.items if i.status == status)

    def to_dict(self) -> dict[str, Any]:
        return {"file": str(self.path), "container": self.container, "dryRun": self.dry_run, "found": self.found,
                "filed": self.count(FILED), "wouldFile": self.count(WOULD_FILE),
                "duplicates": self.count(DUPLICATE), "refused": self.count(REFUSED),
                "items": [i.to_dict() for i in self.items], "warnings": [w.to_dict() for w in self.warnings]}


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
    """
    if actor not in ("ai", "user"):
        raise ValueError(f"actor must be 'ai' or 'user', not {actor!r}")
    if len(text) > MAX_CHAT_CHARS:
        raise IngestTooLarge(f"the chat text has {len(text):,} characters; ingest takes at most {MAX_CHAT_CHARS:,}"
                             f" (MAX_CHAT_CHARS): split it")
    extraction = extract_logs(text)
    if extraction.count > MAX_ENTRIES:
        raise IngestTooLarge(f"the chat text holds {extraction.count:,} log entries; ingest files at most"
                             f" {MAX_ENTRIES:,} at once (MAX_ENTRIES): split it")
    default_date = check_date(date) if date is not None else (today or _dt.date.today().isoformat())
    target = Path(path)
    if progress is not None:
        progress(1, 2, f"found {extraction.count:,} log entr{'y' if extraction.count == 1 else 'ies'} in the text")
    batch = append_entries(target, container, [NewEntry(e.date, e.title, e.body) for e in extraction.entries],
                           actor=actor, default_date=default_date, store=store or Store(), dry_run=dry_run)
    result = IngestResult(target, container, dry_run, tuple(_items(extraction, batch.outcomes, dry_run)),
                          extraction.warnings)
    if progress is not None:
        done = result.count(WOULD_FILE) if dry_run else result.count(FILED)
        progress(2, 2, f"{'would file' if dry_run else 'filed'} {done:,}, {result.count(DUPLICATE):,} already "
                       f"there, {result.count(REFUSED):,} refused")
    return result


def _items(extraction: Extraction, outcomes: Iterable[EntryOutcome], dry_run: bool) -> list[IngestItem]:
    """One report line per entry, from the writer's outcome for it."""
    items: list[IngestItem] = []
    for entry, o in zip(extraction.entries, outcomes):
        if o.status == DUPLICATE_OUTCOME:
            where = f"already in the file at line {o.line}" if o.line is not None else "already in the text above"
            items.append(IngestItem(entry.header_line, o.date, entry.title, DUPLICATE, where, o.line))
        elif o.status == REFUSED:
            items.append(IngestItem(entry.header_line, o.date, entry.title, REFUSED, o.reason, None, code=o.code))
        else:
            items.append(IngestItem(entry.header_line, o.date, entry.title, WOULD_FILE if dry_run else FILED, None,
                                    o.line, o.changes))
    return items
