"""Filing the log entries of chat text into a memory file (§N.19.3, §7.5), through the safe writer.

:func:`ingest` adds only two things to :func:`zonemark.writer.append_entry`: the extraction
(:func:`~zonemark.interchange.logs.extract_logs`) and a report line per entry.  Permissions (§5.2),
sanitising, the re-check, the duplicate check, the lock and history are the writer's: nothing new
to trust.

* Each entry keeps its own date and title; an entry without a date gets ``date`` (``--date``)
  or today's local date.
* **Duplicates** (ruling CL7) are the writer's: each entry is filed with
  ``append_entry(..., unless_present=True)``, which compares it — as it would be written — with
  the entries the container already owns, under the file's lock and on its current bytes.  The
  second copy of an entry repeated in the same text is a duplicate too, and so is an entry
  another process filed a moment before: pasting the same chat twice, or ingesting it from two
  processes at once, files nothing twice.
* An entry the writer refuses (a title it cannot take, a date that is not ISO 8601, a zone the
  actor may not write) is reported with the writer's reason and code; the others are still filed.
* ``dry_run`` runs the very same writes on a copy of the file in a temporary folder, so the
  report says exactly what would happen (``would_file``), and the file is not touched.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..writer import RefusedWrite, Store, StoreError, append_entry, check_date, find_container
from .logs import Extraction, extract_logs
from .notices import Notice

FILED, WOULD_FILE, DUPLICATE, REFUSED = "filed", "would_file", "duplicate", "refused"


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

    def to_dict(self) -> dict:
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

    def to_dict(self) -> dict:
        return {"file": str(self.path), "container": self.container, "dryRun": self.dry_run, "found": self.found,
                "filed": self.count(FILED), "wouldFile": self.count(WOULD_FILE),
                "duplicates": self.count(DUPLICATE), "refused": self.count(REFUSED),
                "items": [i.to_dict() for i in self.items], "warnings": [w.to_dict() for w in self.warnings]}


def ingest(path: str | os.PathLike, container: str, text: str, *, actor: str = "ai", date: str | None = None,
           dry_run: bool = False, store: Store | None = None, today: str | None = None) -> IngestResult:
    """Extract the log entries of ``text`` and file each one into ``container`` of ``path``.

    ``actor`` is 'ai' or 'user' (§5.2); ``date`` is used for entries whose header has none
    (default ``today``, else today's local date); ``store`` is the writer's store.

    Raises ``RefusedWrite`` when the container cannot be resolved (nothing is filed then),
    ``ValueError`` for a bad ``date``/``actor``, ``OSError`` when the file cannot be read.
    """
    extraction = extract_logs(text)
    default_date = check_date(date) if date is not None else (today or _dt.date.today().isoformat())
    target = Path(path)
    if dry_run:
        with tempfile.TemporaryDirectory(prefix="zonemark-dry-run-") as folder:
            copy = Path(folder) / target.name
            shutil.copyfile(os.path.realpath(target), copy)
            shutil.copymode(os.path.realpath(target), copy)  # a read-only file refuses in the dry run too
            items = _file_all(copy, container, extraction, actor, default_date, Store(fsync=False), dry_run=True,
                              shown=target)
    else:
        items = _file_all(target, container, extraction, actor, default_date, store or Store(), dry_run=False,
                          shown=target)
    return IngestResult(target, container, dry_run, tuple(items), extraction.warnings)


def _file_all(path: Path, container: str, extraction: Extraction, actor: str, default_date: str, store: Store,
              *, dry_run: bool, shown: Path) -> list[IngestItem]:
    """File every entry into ``path`` (the user's file, or its copy for a dry run, whose reasons name
    ``shown``, the file as the user gave it)."""
    if actor not in ("ai", "user"):
        raise ValueError(f"actor must be 'ai' or 'user', not {actor!r}")
    find_container(path, container)  # a bad address refuses the whole text, before anything is filed
    items = []
    for entry in extraction.entries:
        when = entry.date if entry.date is not None else default_date
        try:
            result = append_entry(path, container, entry.title, entry.body, actor=actor, date=when, store=store,
                                  unless_present=True)
        except (RefusedWrite, StoreError) as exc:
            reason = str(exc) if isinstance(exc, RefusedWrite) else f"refused: {exc}"
            reason = reason.replace(str(path), str(shown))
            items.append(IngestItem(entry.header_line, when, entry.title, REFUSED, reason, None, code=exc.code))
            continue
        except ValueError as exc:  # the writer's date check (InvalidDate, BAD_DATE)
            items.append(IngestItem(entry.header_line, when, entry.title, REFUSED, f"refused: {exc}", None,
                                    code=getattr(exc, "code", "BAD_DATE")))
            continue
        if result.duplicate_of is not None:
            items.append(IngestItem(entry.header_line, when, entry.title, DUPLICATE,
                                    f"already in the file at line {result.duplicate_of}", result.duplicate_of))
            continue
        items.append(IngestItem(entry.header_line, when, entry.title, WOULD_FILE if dry_run else FILED, None,
                                result.line, result.changes))
    return items
