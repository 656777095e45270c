"""Filing the log entries of chat text into a memory file (§N.19.3, §7.5), through the safe writer.

:func:`ingest` adds only three things to :func:`zonemark.writer.append_entry`: the extraction
(:func:`~zonemark.interchange.logs.extract_logs`), the duplicate check and a report line per
entry.  Permissions (§5.2), sanitising, the re-check, the lock and history are the writer's:
nothing new to trust.

* Each entry keeps its own date and title; an entry without a date gets ``date`` (``--date``)
  or today's local date.
* **Duplicates.** An entry whose date, title and body — as the writer would write them
  (sanitised) — equal those of an entry already owned by the container (in any of its zones)
  is skipped, and so is the second copy of an entry repeated in the same text: pasting the
  same chat twice files nothing twice.  The comparison ignores CR LF versus LF and blank lines
  around a body, nothing else.
* An entry the writer refuses (a title it cannot take, a date that is not ISO 8601, a zone the
  actor may not write) is reported with the writer's reason; the others are still filed.
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

from ..core.document import Document
from ..core.parser import parse_file
from ..writer import RefusedWrite, Store, append_entry, sanitize_body, sanitize_title
from ..writer.edit import check_date
from ..writer.locate import ZoneIndex, resolve_container
from ..writer.store import StoreError
from .logs import Extraction, LogEntry, extract_logs
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

    def to_dict(self) -> dict:
        return {"headerLine": self.header_line, "date": self.date, "title": self.title, "status": self.status,
                "reason": self.reason, "line": self.line, "changes": list(self.changes)}


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


def _normal_body(text: str) -> str:
    lines = text.replace("\r\n", "\n").split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


def existing_entries(doc: Document, container: str) -> dict[tuple[str | None, str, str], int]:
    """(date, title, body) -> line of every entry the container owns (raises RefusedWrite for a bad address)."""
    index = ZoneIndex.build(doc)
    cid = resolve_container(index, container)
    owner_line = index.header_line(cid) if cid is not None else None
    found: dict[tuple[str | None, str, str], int] = {}
    for node in doc.outline().walk():
        if node.line != owner_line or node.kind == "file":
            continue
        for entry in node.entries:
            raw = entry.block.raw_markdown
            body = raw.split("\n", 1)[1] if "\n" in raw else ""
            found.setdefault((entry.date, (entry.title or "").strip(), _normal_body(body)), entry.line)
    return found


def _key(entry: LogEntry, date: str) -> tuple[tuple[str | None, str, str], tuple[str, ...]]:
    """The duplicate key of an entry as the writer would write it, and the sanitiser's notes."""
    title = sanitize_title(entry.title)
    body = sanitize_body(entry.body)
    return (date, title.text, _normal_body(body.text)), title.changes + body.changes


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
            items = _file_all(copy, container, extraction, actor, default_date, Store(fsync=False), dry_run=True)
    else:
        items = _file_all(target, container, extraction, actor, default_date, store or Store(), dry_run=False)
    return IngestResult(target, container, dry_run, tuple(items), extraction.warnings)


def _file_all(path: Path, container: str, extraction: Extraction, actor: str, default_date: str, store: Store,
              *, dry_run: bool) -> list[IngestItem]:
    if actor not in ("ai", "user"):
        raise ValueError(f"actor must be 'ai' or 'user', not {actor!r}")
    present = existing_entries(parse_file(path), container)
    stale = False  # line numbers move after a write: re-read before quoting one
    items = []
    for entry in extraction.entries:
        when = entry.date if entry.date is not None else default_date
        try:
            key, changes = _key(entry, when)
        except RefusedWrite as exc:
            items.append(IngestItem(entry.header_line, when, entry.title, REFUSED, str(exc), None))
            continue
        if key in present and stale:
            present, stale = existing_entries(parse_file(path), container), False
        if key in present:
            line = present[key]
            items.append(IngestItem(entry.header_line, when, entry.title, DUPLICATE,
                                    f"already in the file at line {line}", line))
            continue
        try:
            result = append_entry(path, container, entry.title, entry.body, actor=actor, date=when, store=store)
        except (RefusedWrite, StoreError) as exc:
            reason = str(exc) if isinstance(exc, RefusedWrite) else f"refused: {exc}"
            items.append(IngestItem(entry.header_line, when, entry.title, REFUSED, reason, None))
            continue
        except ValueError as exc:  # the writer's date check
            items.append(IngestItem(entry.header_line, when, entry.title, REFUSED, f"refused: {exc}", None))
            continue
        present[key] = result.line
        stale = True
        items.append(IngestItem(entry.header_line, when, entry.title, WOULD_FILE if dry_run else FILED, None,
                                result.line, tuple(dict.fromkeys(changes + result.changes))))
    return items
