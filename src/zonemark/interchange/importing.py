"""``zonemark import``: the log entries and traces of a provider's export, filed in one batch (issue 21).

:func:`import_export` reads an export — a folder, or the ``.zip`` as downloaded, read with
:mod:`zipfile` without unpacking it — file by file; each file's format is recognised from its
content (:mod:`.exports`), conversations are streamed one at a time, and of each conversation only
the assistant's turns are read, with the extraction of ``ingest`` (:func:`.logs.extract_logs`,
§N.19) and of ``trace`` (:func:`.trace.parse_trace`, §N.18).

* **Entries** are filed in the chronological order of their messages, each with its own date as
  written, or its message's date (UTC) when its header has none.  All of them go to the writer as
  one batch (:func:`zonemark.writer.append_entries`: ``plan_entries`` on one snapshot, committed with
  one ``Store.commit`` only when ``apply``): the duplicate check runs against the container and
  across the export, so importing the same export twice files nothing new, and one ``zonemark
  undo`` takes the whole import back.  The actor is the user.
* **Traces** that tracing accepts (:func:`.trace.validate_trace` against the memory file's folder)
  are recorded with their message's time (:func:`.records.record_trace`) when ``apply``; the dry run
  counts them.
* **Limits**: a message over the chat limit of ingest (:data:`.ingest.MAX_CHAT_CHARS`) is refused
  alone (``MESSAGE_TOO_LARGE``), not the import; more than :data:`MAX_IMPORT_ENTRIES` entries refuse
  the import in one line (:class:`ImportTooLarge`); at most :data:`MAX_TRACE_MESSAGES` messages'
  traces are recorded.  A file no format recognises is skipped and named; a damaged one is named
  with why, and the conversations read before the damage stand.
"""

from __future__ import annotations

import datetime as _dt
import io
import os
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

from ..writer import NewEntry, Store, append_entries, find_container
from .exports import HEAD_BYTES, Conversation, DamagedExport, Message, recognise
from .ingest import MAX_CHAT_CHARS
from .logs import extract_logs

#: The most entries one import files (ruling I12); over it, nothing is filed and the import is refused.
MAX_IMPORT_ENTRIES = 20_000
#: The most messages whose traces one import validates and records (ruling I13); the others are counted.
MAX_TRACE_MESSAGES = 1_000
#: The code of a message refused alone for its size (ruling I11).
MESSAGE_TOO_LARGE = "MESSAGE_TOO_LARGE"

FileStatus = Literal["read", "skipped", "damaged"]
Progress = Callable[[int, int, int, int], None]  # (bytes read, bytes in all, conversations done, entries found)


class ImportTooLarge(ValueError):
    """The export holds more than :data:`MAX_IMPORT_ENTRIES` entries; nothing is filed."""


class ImportError_(ValueError):
    """The export cannot be read at all (missing, not a folder, a file or a zip)."""


@dataclass(frozen=True, slots=True)
class Refused:
    """An entry (or a whole message) that is not filed, with its code and one line."""

    title: str
    date: str | None
    code: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "date": self.date, "code": self.code, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class ConversationReport:
    """What the import found and did in one conversation."""

    file: str
    format: str
    id: str
    title: str
    date: str | None  # the conversation's date (UTC), when the export gives it
    messages: int  # assistant turns read
    skipped: int  # turns and parts that are not assistant text
    found: int
    filed: int
    would_file: int
    duplicates: int
    refused: tuple[Refused, ...]
    traces: int  # accepted trace blocks (recorded when applied)

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "format": self.format, "id": self.id, "title": self.title, "date": self.date,
                "messages": self.messages, "skipped": self.skipped, "found": self.found, "filed": self.filed,
                "wouldFile": self.would_file, "duplicates": self.duplicates,
                "refused": [r.to_dict() for r in self.refused], "traces": self.traces}


@dataclass(frozen=True, slots=True)
class FileReport:
    """One file of the export: read (with its format), skipped (no format recognised it) or damaged."""

    name: str
    status: FileStatus
    format: str | None
    reason: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "format": self.format, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class ImportReport:
    """The whole import: a report per conversation, per file, and the totals."""

    export: str
    memory: str
    container: str
    dry_run: bool
    conversations: tuple[ConversationReport, ...]
    files: tuple[FileReport, ...]
    history_id: str | None
    traces_recorded: int
    traces_over_limit: int

    def total(self, name: str) -> int:
        """The sum of one count over the conversations ('found', 'filed', …; 'refused' counts items)."""
        if name == "refused":
            return sum(len(c.refused) for c in self.conversations)
        return sum(int(getattr(c, name)) for c in self.conversations)

    @property
    def damaged(self) -> int:
        return sum(1 for f in self.files if f.status == "damaged")

    def to_dict(self) -> dict[str, Any]:
        totals = {k: self.total(k) for k in ("messages", "skipped", "found", "filed", "would_file", "duplicates",
                                             "refused", "traces")}
        totals["wouldFile"] = totals.pop("would_file")
        totals["conversations"] = len(self.conversations)
        totals["tracesRecorded"] = self.traces_recorded
        totals["tracesOverLimit"] = self.traces_over_limit
        return {"export": self.export, "memory": self.memory, "container": self.container, "dryRun": self.dry_run,
                "actor": "user", "historyId": self.history_id, "totals": totals,
                "files": [f.to_dict() for f in self.files], "conversations": [c.to_dict() for c in self.conversations]}


# -- the files of an export ------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Source:
    """One file of the export: its name (relative), its size, and how to open it for reading."""

    name: str
    size: int
    open: Callable[[], BinaryIO]
    path: Path | None = None  # the file on disk (not for a member of a zip)
    packed: int | None = None  # a zip member's compressed size


#: A zip member that unpacks to more than this many times its packed size (and to more than
#: :data:`ZIP_RATIO_FLOOR` bytes) is refused unread: chat JSON packs about 5-20 times, a zip bomb
#: thousands of times, and reading one would cost minutes.
MAX_ZIP_RATIO = 100
ZIP_RATIO_FLOOR = 16 * 1024 * 1024


def sources(export: Path) -> tuple[list[Source], zipfile.ZipFile | None]:
    """The files of ``export`` (a folder, walked in name order; a zip, by its members; else the file itself)."""
    if export.is_dir():
        files = sorted((p for p in export.rglob("*") if p.is_file() and not p.is_symlink()),
                       key=lambda p: p.relative_to(export).as_posix())
        return [Source(p.relative_to(export).as_posix(), p.stat().st_size, _opener(p), p) for p in files], None
    if not export.is_file():
        raise ImportError_(f"no such folder or file: {export}")
    if zipfile.is_zipfile(export):
        try:
            archive = zipfile.ZipFile(export)
        except (zipfile.BadZipFile, OSError) as exc:
            raise ImportError_(f"{export.name}: not a readable zip ({exc})") from None
        members = sorted((m for m in archive.infolist() if not m.is_dir()), key=lambda m: m.filename)
        return [Source(m.filename, m.file_size, _member(archive, m), None, m.compress_size) for m in members], archive
    return [Source(export.name, export.stat().st_size, _opener(export), export)], None


def _opener(path: Path) -> Callable[[], BinaryIO]:
    return lambda: open(path, "rb")


def _member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Callable[[], BinaryIO]:
    return lambda: archive.open(info)  # type: ignore[return-value]


class _Counted(io.RawIOBase):
    """A binary stream that tells how many bytes were read (for the progress bar)."""

    def __init__(self, raw: BinaryIO, tick: Callable[[int], None]) -> None:
        super().__init__()
        self._raw, self._tick = raw, tick

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        data = self._raw.read(-1 if size is None else size)
        self._tick(len(data))
        return data

    def readline(self, size: int | None = -1) -> bytes:
        data = self._raw.readline(-1 if size is None else size)
        self._tick(len(data))
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


# -- the import ------------------------------------------------------------------------------

@dataclass
class _Conv:
    """A conversation's counts while the export is read."""

    file: str
    format: str
    id: str
    title: str
    time: _dt.datetime | None
    messages: int
    skipped: int  # never the texts: memory stays bounded by the counts, not the export
    found: int = 0
    traces: int = 0
    refused: list[Refused] = field(default_factory=list)


@dataclass
class _State:
    """What the scan gathers: entries to file (sort key, conversation, entry), conversation counts, traces."""

    pending: list[tuple[tuple[int, float, int], int, NewEntry]] = field(default_factory=list)
    convs: list[_Conv] = field(default_factory=list)
    files: list[FileReport] = field(default_factory=list)
    trace_messages: int = 0
    traces_recorded: int = 0
    traces_over_limit: int = 0
    layer: Any = None
    read_bytes: int = 0


def _day(time: _dt.datetime | None) -> str | None:
    return None if time is None else time.astimezone(_dt.timezone.utc).date().isoformat()


def _wanted(conv: Conversation, pick: str | None) -> bool:
    """``--conversation``: the conversation's id, or its title ignoring case."""
    return pick is None or pick == conv.id or (bool(conv.title) and pick.casefold() == conv.title.casefold())


def import_export(export: str | os.PathLike[str], memory: str | os.PathLike[str], container: str, *,
                  apply: bool = False, since: str | None = None, conversation: str | None = None,
                  store: Store | None = None, today: str | None = None,
                  progress: Progress | None = None) -> ImportReport:
    """Read ``export`` and file its entries into ``container`` of ``memory`` (module docstring).

    ``since`` (an ISO date) leaves out messages before that day; ``conversation`` keeps one conversation
    (id or title).  Raises ``RefusedWrite`` when the container cannot be resolved, :class:`ImportTooLarge`,
    :class:`ImportError_` when the export cannot be read, ``ValueError`` for a bad ``since``.
    """
    since_day = _dt.date.fromisoformat(since).isoformat() if since is not None else None
    store = store or Store()
    target = Path(memory)
    label = find_container(target, container, store=store)
    files, archive = sources(Path(export))
    state = _State()
    total = sum(s.size for s in files)

    def tick(n: int) -> None:
        state.read_bytes += n
        if progress is not None:
            progress(state.read_bytes, total, len(state.convs), len(state.pending))

    own = target.resolve()
    try:
        for src in files:
            if src.path is not None and src.path.resolve() == own:  # ruling I19: never the file imported into
                state.files.append(FileReport(src.name, "skipped", None, "the memory file imported into"))
                tick(src.size)
                continue
            _read_file(src, state, tick, target, apply, since_day, conversation)
    finally:
        if archive is not None:
            archive.close()
    if len(state.pending) > MAX_IMPORT_ENTRIES:
        raise ImportTooLarge(f"the export holds {len(state.pending):,} log entries; an import files at most"
                             f" {MAX_IMPORT_ENTRIES:,} (MAX_IMPORT_ENTRIES): split it with --since or --conversation")
    state.pending.sort(key=lambda p: p[0])
    batch = append_entries(target, container, [p[2] for p in state.pending], actor="user",
                           default_date=today or _dt.date.today().isoformat(), store=store, dry_run=not apply)
    counts = [{"filed": 0, "would_file": 0, "duplicates": 0} for _ in state.convs]
    for (_, ci, entry), outcome in zip(state.pending, batch.outcomes):
        if outcome.status == "appended":
            counts[ci]["filed" if apply else "would_file"] += 1
        elif outcome.status == "duplicate":
            counts[ci]["duplicates"] += 1
        else:
            state.convs[ci].refused.append(Refused(entry.title, outcome.date, outcome.code or "REFUSED",
                                                   outcome.reason or "refused"))
    reports = tuple(ConversationReport(c.file, c.format, c.id, c.title, _day(c.time), c.messages, c.skipped,
                                       c.found, counts[i]["filed"], counts[i]["would_file"],
                                       counts[i]["duplicates"], tuple(c.refused), c.traces)
                    for i, c in enumerate(state.convs))
    return ImportReport(str(export), str(target), label, not apply, reports, tuple(state.files),
                        batch.history_id, state.traces_recorded, state.traces_over_limit)


def _read_file(src: Source, state: _State, tick: Callable[[int], None], memory: Path, apply: bool,
               since: str | None, pick: str | None) -> None:
    """Recognise one file and read its conversations into ``state``; one report line for the file."""
    fmt = None
    if src.packed is not None and src.size > ZIP_RATIO_FLOOR and src.size > MAX_ZIP_RATIO * max(src.packed, 1):
        state.files.append(FileReport(src.name, "damaged", None,
                                      f"unpacks to {src.size:,} bytes, {src.size // max(src.packed, 1):,} times its "
                                      f"packed size (at most MAX_ZIP_RATIO = {MAX_ZIP_RATIO}): not read"))
        tick(src.size)
        return
    try:
        with src.open() as stream:
            head = stream.read(HEAD_BYTES)
        fmt = recognise(head)
        if fmt is None:
            state.files.append(FileReport(src.name, "skipped", None, "not chat text of a known format"))
            tick(src.size)
            return
        with src.open() as raw:
            for conv in fmt.read(_Counted(raw, tick)):  # type: ignore[arg-type]
                if not _wanted(conv, pick):
                    continue
                if fmt.name == "plain" and not conv.title:
                    conv = Conversation(conv.id or src.name, src.name, conv.time, conv.messages, conv.skipped)
                _read_conversation(src.name, fmt.name, conv, state, memory, apply, since)
    except DamagedExport as exc:
        state.files.append(FileReport(src.name, "damaged", fmt.name if fmt else None, _one_line(str(exc))))
        return
    except (OSError, zipfile.BadZipFile, EOFError, RuntimeError) as exc:  # RuntimeError: an encrypted member
        state.files.append(FileReport(src.name, "damaged", None, _one_line(f"cannot be read ({exc})")))
        return
    state.files.append(FileReport(src.name, "read", fmt.name if fmt else None, None))


def _read_conversation(file: str, fmt: str, conv: Conversation, state: _State, memory: Path, apply: bool,
                       since: str | None) -> None:
    """Extract the entries and traces of one conversation's assistant turns."""
    index = len(state.convs)
    c = _Conv(file, fmt, conv.id, conv.title, conv.time, len(conv.messages),
              conv.skipped + sum(m.skipped for m in conv.messages))
    state.convs.append(c)
    for message in conv.messages:
        time = message.time or conv.time
        if since is not None and time is not None and (_day(time) or "") < since:
            continue
        if message.too_large or len(message.text) > MAX_CHAT_CHARS:
            c.refused.append(Refused("", _day(time), MESSAGE_TOO_LARGE,
                                     f"a message over {MAX_CHAT_CHARS:,} characters (MAX_CHAT_CHARS of ingest):"
                                     f" not read"))
            continue
        if "LOG" in message.text:
            for e in extract_logs(message.text).entries:
                c.found += 1
                key = (0, time.timestamp(), len(state.pending)) if time is not None else (1, 0.0, len(state.pending))
                state.pending.append((key, index, NewEntry(e.date or _day(time), e.title, e.body)))
        if "TRACE" in message.text:
            c.traces += _traces(message, time, state, memory, apply)


def _traces(message: Message, time: _dt.datetime | None, state: _State, memory: Path, apply: bool) -> int:
    """The accepted trace blocks of one message, recorded with its time when ``apply`` (ruling I9)."""
    from .trace import parse_trace, validate_trace
    parsed = parse_trace(message.text)
    if not any(not b.rejected for b in parsed.blocks):
        return 0
    if state.trace_messages >= MAX_TRACE_MESSAGES:
        state.traces_over_limit += 1
        return 0
    state.trace_messages += 1
    if state.layer is None:
        from ..layer import Layer
        state.layer = Layer.load(memory.parent)
    result = validate_trace(parsed, state.layer)
    if not result.illuminated:
        return 0
    if apply:
        from .records import record_trace
        state.traces_recorded += sum(1 for r in record_trace(state.layer, message.text, result, now=time)
                                     if r.created)
    return sum(1 for _, content in result.accepted if not content.empty)


#: the longest reason a damaged file's line gives (a parser's message can quote much of the file)
MAX_REASON = 300


def _one_line(reason: str) -> str:
    """A damaged file's reason as one line: a JSON parser's message spans lines (it draws where it failed)."""
    line = " ".join(reason.split())
    return line if len(line) <= MAX_REASON else line[:MAX_REASON - 1] + "…"
