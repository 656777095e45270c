"""Appending entries to a container's journal: the planner, and the commit (§5.2, §5.5, §7.1.2, §7.5).

One entry (:func:`append_entry`): ``###### LOG: <date> — <title>`` and its body at the end of the writable
zone that pairs with the container (:mod:`.locate`): for 'ai' the last ``[P4]`` zone, else the last
``[P5]``; for 'user' also a ``[P3]`` journal.  One blank line separates entries; an empty zone gets the
blank-line layout of the file's first non-empty writable zone (§14 examples: ``[P4]`` directly followed by
the entry in §14.3/§14.4, a blank line on both sides in §14.1).  :func:`plan_append` decides it on one
:class:`~.snapshot.FileSnapshot` and writes nothing; :func:`append_entry` commits that plan.

Many entries (:func:`plan_entries`) decides, on one snapshot of the file's bytes, what happens to each entry of a
batch — exactly what :func:`zonemark.writer.append_entry` with ``unless_present=True`` would decide
for each in turn: the date checked, title and body sanitised, the duplicate check (against the
entries the container owns *and* the earlier entries of the batch, ruling CL7), the zone chosen by
the same rule (§5.2), the re-check (§5.5) — and returns the new bytes.  It writes nothing.
:func:`append_entries` commits that plan with one :meth:`Store.commit` (under the lock, on the current
bytes: one history version, one undo), or, for a dry run, only plans it on the bytes as read.

Cost: the file is parsed once (the duplicate keys), each entry is sanitised once, and the whole
insertion is re-checked once.  Only when that check refuses are the entries checked one by one,
each alone in a small document with the container's context (linear in the batch); an entry that
passes alone but not with the others is found by halving the remaining run (ruling CL27).
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterable, Sequence
from itertools import chain, repeat
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from ..core.text import decode, encode
from . import duplicates
from .locate import APPEND_LEVELS, ZoneIndex, ZoneView, journal_for, journal_zones, resolve_container, unclosed_zones
from .offsets import ByteOffset, CharOffset
from .refusals import RefusedWrite
from .results import AppendResult
from .rules import check_actor, check_date, refuse_for_level, today
from .sanitize import sanitize_body, sanitize_title
from .snapshot import Carry, FileSnapshot, Plan, Spliced, zone_refusal
from .store import Store, StoreError
from .verify import Edit, Expect, Verdict, mini_check

T = TypeVar("T")
APPENDED, DUPLICATE, REFUSED = "appended", "duplicate", "refused"
#: At most this many re-checks of a batch (ruling CL27); entries still unsettled after them are refused with the
#: reason of the last refused run that holds them.
MAX_RECHECKS = 64
#: Entries checked alone together before they are checked one by one.
CHUNK = 16


@dataclass(frozen=True, slots=True)
class NewEntry:
    """One entry to append: the date (None: today's, as append_entry), the title and the body as given."""

    date: str | None
    title: str
    body: str = ""


@dataclass(frozen=True, slots=True)
class EntryOutcome:
    """What the plan decided for one entry: ``status`` 'appended' | 'duplicate' | 'refused'."""

    status: str
    date: str | None
    line: int | None  # the new entry's header line, or the line of the entry it duplicates
    changes: tuple[str, ...] = ()
    code: str | None = None  # the refusal code (REFUSALS) when refused
    reason: str | None = None  # the refusal's one line when refused


@dataclass(frozen=True, slots=True)
class AppendPlan:
    """The new bytes of the file (``data`` is the old bytes when nothing is appended) and each entry's outcome."""

    data: bytes
    outcomes: tuple[EntryOutcome, ...]
    label: str
    zone: int | None
    rechecks: int  # combined re-checks run (1 when every entry passed together)
    where: str | None = None  # the container as the history names it (:meth:`.locate.ZoneIndex.name`)


@dataclass(frozen=True, slots=True)
class BatchResult:
    """What :func:`append_entries` did: the plan's outcomes, and the write (``history_id`` None: nothing written)."""

    path: Path
    outcomes: tuple[EntryOutcome, ...]
    changed: bool
    history_id: str | None
    label: str
    rechecks: int


class _Candidates:
    """The entries of a batch to place (checked, sanitised, not duplicates), as columns: each one's text as written
    (header, body, LF line ends) in one UTF-8 buffer, and its place in the batch, date, changes and line count a
    few bytes each; a run of them is an array of their numbers (B27: an object and a string per entry, held
    through the re-check, were five times a text of short entries)."""

    __slots__ = ("pos", "dates", "changes", "_text", "_base", "_ends", "_newlines")

    def __init__(self) -> None:
        self.pos = array("i")  # index in the batch
        self.dates: list[str] = []  # each date string once (shared by the entries of a day)
        self.changes: list[tuple[str, ...]] = []  # each distinct tuple once
        self._text: bytearray | bytes = bytearray()
        self._base = 0  # where the first entry starts in ``_text``
        self._ends = array("q")
        self._newlines = array("i")  # in a body within MAX_BODY_CHARS

    def add(self, pos: int, date: str, entry: str, changes: tuple[str, ...]) -> None:
        self.pos.append(pos)
        self.dates.append(date)
        self.changes.append(changes)
        text = self._text
        assert isinstance(text, bytearray)
        text += encode(entry)
        text += b"\n"  # the blank line after it: a run of consecutive entries is one slice
        self._ends.append(len(text))
        self._newlines.append(entry.count("\n"))

    def __len__(self) -> int:
        return len(self.pos)

    def lines(self, i: int) -> int:
        """The lines entry ``i`` takes in the zone, with the blank line after it."""
        return self._newlines[i] + 1

    def texts(self, run: Sequence[int]) -> list[memoryview]:
        """The texts of the entries ``run`` names (UTF-8), read in place: a slice for each stretch of consecutive
        entries, which holds them one blank line apart (B27: a slice of each entry was four times the text)."""
        text, ends, base = memoryview(self._text), self._ends, self._base
        out: list[memoryview] = []
        k = 0
        while k < len(run):
            first = run[k]
            while k + 1 < len(run) and run[k + 1] == run[k] + 1:
                k += 1
            out.append(text[base + (ends[first - 1] if first else 0):base + ends[run[k]] - 1])
            k += 1
        return out

    def laid_out(self, lead: int, trail: int) -> bytes:
        """Every entry as their insertion (:meth:`_Zone.insert`, LF line ends): ``lead`` blank lines, the texts one
        blank line apart, ``trail`` blank lines.  The entries are read from those bytes from then on, so the
        batch's text is not held twice through the re-check (B27)."""
        whole = b"".join((b"\n" * lead, memoryview(self._text)[:-1], b"\n" * trail))
        self._text, self._base = whole, lead
        return whole

    def joined(self, run: Sequence[int]) -> str:
        """The texts of the entries ``run`` names, one blank line apart."""
        return decode(b"\n".join(self.texts(run)))

    def refuse(self, run: Iterable[int], outcomes: list[EntryOutcome | None], exc: RefusedWrite | StoreError | None,
               code: str = "", reason: str = "") -> None:
        """Each entry of ``run`` refused, with ``exc``'s code and line (or ``code``, ``reason``)."""
        if exc is not None:
            code, reason = exc.code, str(exc)
        for i in run:
            outcomes[self.pos[i]] = EntryOutcome(REFUSED, self.dates[i], None, self.changes[i], code, reason)


def _refusal(exc: Exception) -> tuple[str, str]:
    """(code, one line) of a refusal raised while preparing an entry."""
    if isinstance(exc, RefusedWrite):
        return exc.code, str(exc)
    if isinstance(exc, StoreError):
        return exc.code, f"refused: {exc}"
    return getattr(exc, "code", "BAD_DATE"), f"refused: {exc}"


def _select(index: ZoneIndex, container: str, actor: str) -> tuple[int | None, ZoneView]:
    """The container ``container`` names and the zone an append by ``actor`` to it goes to (§5.2, §7.1.2), or the
    refusal."""
    cid = resolve_container(index, container)
    zone = journal_for(index, cid, actor)
    if zone is not None:
        return cid, zone
    p3 = journal_zones(index, cid, (3,))
    if p3 and actor == "ai":
        refuse_for_level(p3[-1], actor, "append")
    unclosed = unclosed_zones(index, cid, APPEND_LEVELS[actor])
    if unclosed:
        z = unclosed[-1]
        raise RefusedWrite(f"refused: the [P{z.level}] zone at line {z.line} that pairs with {index.label(cid)} "
                           f"is never closed (§5.4); the user must add [/P{z.level}] where it ends",
                           code="UNCLOSED_ZONE", zone=z.line, level=z.level, rule="§5.4")
    raise RefusedWrite(f"refused: {index.label(cid)} has no writable zone of its own to append to "
                       f"({'/'.join(f'[P{lv}]' for lv in APPEND_LEVELS[actor])} after its declaration and before the "
                       f"next container, §7.1.2/§7.1.3); the user must add an empty [P4] there",
                       code="NO_JOURNAL", rule="§7.1.2")


def _prepare(e: NewEntry, default_date: str) -> EntryOutcome | tuple[str, str, duplicates.Key, tuple[str, ...]]:
    """The entry checked and sanitised as append_entry does — (date, text as written, key, changes) — or its
    refusal (independent of the file)."""
    when = e.date if e.date is not None else default_date
    try:
        date = check_date(when)
        title = sanitize_title(e.title)
        body = sanitize_body(e.body or "")
    except (RefusedWrite, ValueError) as exc:
        code, reason = _refusal(exc)
        return EntryOutcome(REFUSED, when, None, code=code, reason=reason)
    entry = f"###### LOG: {date} — {title.text}\n" + (body.text + "\n" if body.text else "")
    return date, entry, duplicates.entry_key(date, title.text, body.text), title.changes + body.changes


def _once(shared: dict[Any, Any], value: T) -> T:
    """``value``, or the equal value ``shared`` already holds: one object for the entries that share it."""
    return shared.setdefault(value, value)  # type: ignore[no-any-return]


def _blank_layout(data: bytes, index: ZoneIndex) -> tuple[int, int]:
    """Blank lines after the opening and before the closing tag in the first non-empty journal (at most one each):
    read a line at a time from both ends of each zone, none decoded whole."""
    for i in range(len(index)):
        z = index.zone(i)
        if z.level not in (4, 5) or z.close_start is None or z.inline:
            continue
        first = _content_start(data, z.inner_start, z.close_start)
        if first is None:
            continue
        return int(first > z.inner_start), int(_content_end(data, z.inner_start, z.close_start) < z.close_start)
    return 0, 0


def _content_start(data: bytes, inner_start: int, close_start: int) -> int | None:
    """Byte offset of the first non-blank line in ``data[inner_start:close_start]`` (lines decoded one at a time),
    None if there is none."""
    pos = inner_start
    while pos < close_start:
        eol = data.find(b"\n", pos, close_start)
        end = close_start if eol < 0 else eol + 1
        if decode(data[pos:end]).strip():
            return pos
        pos = end
    return None


def _content_end(data: bytes, inner_start: int, close_start: int) -> ByteOffset:
    """:func:`_end_of_content` of the bytes: the offset after the last non-blank line in
    ``data[inner_start:close_start]`` (``inner_start`` if none), read back one line at a time."""
    pos = close_start
    while pos > inner_start:
        prev = data.rfind(b"\n", inner_start, pos - 1)
        start = prev + 1 if prev >= 0 else inner_start
        if decode(data[start:pos]).strip():
            break
        pos = start
    return ByteOffset(pos)


def _end_of_content(text: str, inner_start: CharOffset, close_start: CharOffset) -> CharOffset:
    """Offset after the last non-blank line in ``text[inner_start:close_start]`` (inner_start if none)."""
    pos: int = close_start
    while pos > inner_start:
        prev = text.rfind("\n", inner_start, pos - 1)
        start = prev + 1 if prev >= 0 else inner_start
        if text[start:pos].strip():
            break
        pos = start
    return CharOffset(pos)


class _Zone:
    """The target zone of one snapshot, and the insertion of a run of entries at its end (one entry or many).

    The zone is read from the file's bytes: only its opening and closing lines and its last lines are decoded."""

    def __init__(self, snap: FileSnapshot, index: ZoneIndex, zone: ZoneView, cid: int | None):
        data = snap.data
        assert zone.close_start is not None and zone.close_end is not None and zone.close_line is not None
        self.snap, self.data, self.index, self.zone, self.cid = snap, data, index, zone, cid
        self.at = _content_end(data, zone.inner_start, zone.close_start)  # where the entries go
        self.crlf = data.endswith(b"\r\n", zone.start, zone.close_end)
        self.first_line = zone.close_line - data.count(b"\n", self.at, zone.close_start)
        self.owner_line = 0 if cid is None else index.header_line(cid)
        if self.at > zone.inner_start or zone.inline:
            self.lead, self.trail = 1, 0
        else:
            lead, trail = _blank_layout(data, index)
            existing = data.count(b"\n", zone.inner_start, zone.close_start)
            self.lead, self.trail = lead, max(0, trail - existing)

    def insert(self, texts: Iterable[bytes | memoryview]) -> bytes:
        """The bytes a run of entries adds (their texts, UTF-8): the layout of the first append, then one blank line
        before each, in the file's line ends; made in one join (B27)."""
        joined = b"\n".join(chain(repeat(b"", self.lead), texts, repeat(b"", self.trail)))
        return joined.replace(b"\n", b"\r\n") if self.crlf else joined

    def check(self, texts: Iterable[bytes | memoryview], entries: int) -> Spliced:
        """Insert a run of ``entries`` entries (``texts``, :meth:`insert`) and re-check it (§5.5,
        :meth:`.snapshot.FileSnapshot.insert`)."""
        return self.check_bytes(self.insert(texts), entries)

    def check_bytes(self, insert: bytes, entries: int) -> Spliced:
        """:meth:`check` of the bytes :meth:`insert` made."""
        return self.snap.insert(self.index, self.zone, self.at, insert, self.first_line,
                                Expect(entries=entries, owner_line=self.owner_line), self.cid)

    def refusal(self, verdict: Verdict) -> RefusedWrite:
        return zone_refusal(f"appending to {self.index.label(self.cid)} in the [P{self.zone.level}] zone at line "
                            f"{self.zone.line}", self.zone, verdict)

    def alone(self, text: str, line: int, entries: int = 1) -> Verdict:
        """The verdict on entries alone in an empty zone of the same container, their lines as at ``line``."""
        zone = self.zone
        assert zone.close_start is not None and zone.close_end is not None
        opening = decode(self.data[zone.start:zone.inner_start])
        closing = decode(self.data[zone.close_start:zone.close_end])
        insert = text.replace("\n", "\r\n") if self.crlf else text
        edit = Edit(CharOffset(len(opening)), 0, len(insert), line, 0, insert.count("\n"))
        return mini_check(self.index, replace(zone, line=line - 1), opening + closing, opening + insert + closing,
                          edit, Expect(entries=entries, owner_line=self.owner_line), owner=self.cid)


def plan_entries(path: str | os.PathLike[str], data: bytes, container: str, entries: Sequence[NewEntry], *,
                 actor: str = "ai",
                 default_date: str) -> AppendPlan:
    """What appending ``entries`` to ``container`` of ``data`` does (module docstring); pure: writes nothing.

    Raises :class:`RefusedWrite` only when the container cannot be resolved (nothing is appended then).
    """
    return plan_batch(FileSnapshot(path, data), container, entries, actor=actor, default_date=default_date)


def plan_batch(snap: FileSnapshot, container: str, entries: Sequence[NewEntry], *, actor: str = "ai",
               default_date: str) -> AppendPlan:
    """:func:`plan_entries` on one snapshot."""
    check_actor(actor)
    data = snap.data
    index = snap.index
    cid = resolve_container(index, container)
    label = index.label(cid)
    # each entry prepared and compared with the container's entries and the batch's before it as it comes: only
    # the entries to place are kept, as columns (B27); the keys are not held through the re-check (B25)
    candidates = _Candidates()
    outcomes: list[EntryOutcome | None] = []
    shared: dict[Any, Any] = {}
    keys: dict[duplicates.Key, int] | None = None
    for pos, e in enumerate(entries):
        prepared = _prepare(e, default_date)
        if isinstance(prepared, EntryOutcome):
            outcomes.append(prepared)
            continue
        date, entry, key, changes = prepared
        date, changes = _once(shared, date), _once(shared, changes)
        if keys is None:
            keys = snap.entries(index.header_line(cid))
        if key in keys:
            outcomes.append(_once(shared, EntryOutcome(DUPLICATE, date, keys[key], changes)))
        else:
            keys[key] = -1 - pos  # an earlier entry of this batch: its line is known once placed
            outcomes.append(None)
            candidates.add(pos, date, entry, changes)
    del keys
    zone: ZoneView | None = None
    owner: int | None = cid
    if len(candidates):
        try:
            index, owner, zone = snap.locate(lambda ix: _select(ix, container, actor))
        except RefusedWrite as exc:
            candidates.refuse(range(len(candidates)), outcomes, exc)
            zone = None
    new_data, rechecks = data, 0
    if len(candidates) and zone is not None:
        new_data, rechecks = _place(_Zone(snap, index, zone, owner), candidates, outcomes)
    del candidates
    # a copy of an earlier entry of the batch is a duplicate of it where it goes, or refused as it is
    final: list[EntryOutcome] = []
    for o in outcomes:
        assert o is not None
        if o.status == DUPLICATE and o.line is not None and o.line < 0:
            first = final[-1 - o.line]
            o = _once(shared, replace(o, line=first.line) if first.status == APPENDED
                      else replace(first, changes=o.changes))
        final.append(o)
    return AppendPlan(new_data, tuple(final), label, zone.line if zone is not None else None, rechecks,
                      None if owner is None else index.name(owner))


def _place(target: _Zone, candidates: _Candidates, outcomes: list[EntryOutcome | None]) -> tuple[bytes, int]:
    """Re-check the run of candidates together; when refused, find the entries that fail (ruling CL27).  A run is
    an array of the candidates' numbers."""
    rechecks = 1
    everyone = array("i", range(len(candidates)))
    if target.crlf:
        done = target.check(candidates.texts(everyone), len(everyone))
    else:  # the batch's buffer laid out as the insertion is the insertion (B27)
        done = target.check_bytes(candidates.laid_out(target.lead, target.trail), len(everyone))
    if done.verdict.ok:
        _accept(target, candidates, everyone, outcomes)
        return done.data, rechecks
    failed = done.verdict
    del done  # the refused run's new bytes are not held through the search
    # One by one, each alone: a refusal there is the entry's own (its lines as they would be in the file).
    # A group of CHUNK entries that passes alone together passes one by one: only a refused group is split.
    kept, line = array("i"), target.first_line + target.lead
    for start in range(0, len(candidates), CHUNK):
        group = everyone[start:start + CHUNK]
        if len(group) > 1 and target.alone(candidates.joined(group), line, len(group)).ok:
            kept += group
            line += sum(candidates.lines(c) for c in group)
            continue
        for c in group:
            verdict = target.alone(candidates.joined((c,)), line)
            if verdict.ok or verdict.method == "undecided":
                kept.append(c)
                line += candidates.lines(c)
                continue
            candidates.refuse((c,), outcomes, target.refusal(verdict))
    # What is left passes alone; the longest run that passes together is kept, the entry after it refused.
    accepted = array("i")
    rest = kept
    while rest:
        if rechecks >= MAX_RECHECKS:  # the run that holds them was refused: so are they, with its reason
            exc = zone_refusal(f"appending {len(rest)} entries (not re-checked one by one: more than "
                                   f"{MAX_RECHECKS} re-checks of one batch) to {target.index.label(target.cid)}",
                                   target.zone, failed)
            candidates.refuse(rest, outcomes, exc)
            break
        rechecks += 1
        done = target.check(candidates.texts(accepted + rest), len(accepted) + len(rest))
        if done.verdict.ok:
            accepted += rest
            break
        failed = done.verdict
        del done
        lo, hi = 0, len(rest)  # accepted + rest[:lo] passes, accepted + rest[:hi] does not
        while hi - lo > 1 and rechecks < MAX_RECHECKS:
            mid = (lo + hi) // 2
            rechecks += 1
            if target.check(candidates.texts(accepted + rest[:mid]), len(accepted) + mid).verdict.ok:
                lo = mid
            else:
                hi = mid
        if hi - lo > 1:
            continue  # out of re-checks: the loop refuses what is left
        bad = rest[lo]
        verdict = target.check(candidates.texts(accepted + rest[:hi]), len(accepted) + hi).verdict
        candidates.refuse((bad,), outcomes, target.refusal(verdict))
        accepted += rest[:lo]
        rest = rest[hi:]
    if not accepted:
        return target.data, rechecks
    done = target.check(candidates.texts(accepted), len(accepted))
    if not done.verdict.ok:  # cannot happen (that run passed); refuse rather than trust it
        candidates.refuse(accepted, outcomes, None, "STRUCTURE_CHANGED",
                          f"refused: {done.verdict.reason()} (§5.5, re-check)")
        return target.data, rechecks
    _accept(target, candidates, accepted, outcomes)
    return done.data, rechecks


def _accept(target: _Zone, candidates: _Candidates, accepted: Sequence[int],
            outcomes: list[EntryOutcome | None]) -> None:
    line = target.first_line + target.lead
    for c in accepted:
        outcomes[candidates.pos[c]] = EntryOutcome(APPENDED, candidates.dates[c], line, candidates.changes[c])
        line += candidates.lines(c)


def append_entries(path: str | os.PathLike[str], container: str, entries: Sequence[NewEntry], *, actor: str = "ai",
                   default_date: str, store: Store | None = None, dry_run: bool = False) -> BatchResult:
    """Append every entry of ``entries`` that is not already in ``container`` in one write (module docstring).

    ``dry_run``: the plan on the file as it is now, nothing written (a file the store would refuse to
    write — missing, read-only — refuses every entry, as the write would).  Raises :class:`RefusedWrite`
    when the container cannot be resolved.
    """
    check_actor(actor)
    store = store or Store()

    def planner(snap: FileSnapshot) -> Plan[AppendPlan]:
        plan = plan_batch(snap, container, entries, actor=actor, default_date=default_date)
        return Plan(plan.data, plan, where=plan.where)

    if dry_run:
        plan = planner(FileSnapshot(path, store.read(path))).result
        try:
            store.writable(path)
        except StoreError as exc:
            return _all_refused(path, plan, exc)
        return BatchResult(Path(path), plan.outcomes, False, None, plan.label, plan.rechecks)
    n = sum(1 for e in entries)
    try:
        done = store.commit(path, planner, actor=actor,
                            action=f"append {n} entr{'y' if n == 1 else 'ies'} to {container}")
    except StoreError as exc:
        return _all_refused(path, planner(FileSnapshot(path, store.read(path))).result, exc)
    plan = done.result
    return BatchResult(Path(path), plan.outcomes, done.changed, done.history_id, plan.label, plan.rechecks)


# -- one entry -------------------------------------------------------------------------------

@dataclass(frozen=True)
class AppendRequest:
    """One entry to append, checked and sanitised (:func:`append_request`)."""

    container: str
    actor: str
    entry: str  # header and body as written, LF line ends
    title: str  # the sanitised title
    key: duplicates.Key
    changes: tuple[str, ...]
    unless_present: bool


def append_request(container: str, title: str, body: str = "", *, actor: str = "ai", date: str | None = None,
                   timestamp: bool = False, unless_present: bool = False) -> AppendRequest:
    """The request :func:`plan_append` takes: the date checked (§7.5), title and body sanitised (W23)."""
    check_actor(actor)
    if date is not None and timestamp:
        raise ValueError("give a date or timestamp=True, not both")
    date = check_date(date) if date is not None else today(timestamp)
    clean_title = sanitize_title(title)
    clean_body = sanitize_body(body or "")
    entry = f"###### LOG: {date} — {clean_title.text}\n" + (clean_body.text + "\n" if clean_body.text else "")
    return AppendRequest(container, actor, entry, clean_title.text,
                         duplicates.entry_key(date, clean_title.text, clean_body.text),
                         clean_title.changes + clean_body.changes, unless_present)


def plan_append(snap: FileSnapshot, req: AppendRequest) -> Plan[AppendResult]:
    """What appending one entry does to ``snap`` (module docstring); pure.  ``unless_present``: an entry of the
    container with the same key (:mod:`.duplicates`) means nothing is written, and the result says where it is."""
    snap.refuse_not_utf8()
    path = Path(snap.path)
    keys = None
    if req.unless_present:
        cid = resolve_container(snap.index, req.container)
        keys = snap.entries(snap.index.header_line(cid))
        if req.key in keys:
            line = keys[req.key]
            return Plan(snap.data, AppendResult(path, False, line, None, snap.index.label(cid), None, req.changes,
                                                duplicate_of=line))
    index, owner, zone = snap.locate(lambda ix: _select(ix, req.container, req.actor))
    assert zone is not None
    target = _Zone(snap, index, zone, owner)
    done = target.check((encode(req.entry),), 1)
    if not done.verdict.ok:
        raise target.refusal(done.verdict)
    line = target.first_line + target.lead
    entries = None
    if keys is not None:
        entries = (target.owner_line,
                   duplicates.after_append(keys, req.key, line, target.first_line, done.added_lines))
    result = AppendResult(path, True, line, zone.line, index.label(owner), None, req.changes, done.verdict.method)
    return Plan(done.data, result, done.verdict, Carry(done.index_after(index), entries),
                None if owner is None else index.name(owner))


def append_entry(path: str | os.PathLike[str], container: str, title: str, body: str = "", *, actor: str = "ai",
                 date: str | None = None, timestamp: bool = False, store: Store | None = None,
                 unless_present: bool = False) -> AppendResult:
    """Append ``###### LOG: <date> — <title>`` and its body to the journal of ``container``.

    ``unless_present``: when the container already owns an entry with this date, title and body
    (as written, :mod:`.duplicates`), write nothing and say where it is (``duplicate_of``) — checked
    under the file's lock on its current bytes, so concurrent writers file one copy.
    """
    req = append_request(container, title, body, actor=actor, date=date, timestamp=timestamp,
                         unless_present=unless_present)
    done = (store or Store()).commit(path, lambda snap: plan_append(snap, req), actor=actor,
                                     action=f"append to {container}: {req.title}")
    r = done.result
    if r.duplicate_of is not None:
        return r
    return replace(r, changed=done.changed, history_id=done.history_id)


def find_container(path: str | os.PathLike[str], container: str, *, store: Store | None = None) -> str:
    """The label of the container ``container`` names in ``path`` now (:func:`.locate.resolve_container`), or
    :class:`RefusedWrite` (``UNKNOWN_CONTAINER``, ``AMBIGUOUS_CONTAINER``); writes nothing."""
    index = FileSnapshot(path, (store or Store()).read(path)).index
    return index.label(resolve_container(index, container))


def _all_refused(path: str | os.PathLike[str], plan: AppendPlan, exc: StoreError) -> BatchResult:
    """The store refused the write: every entry that would have been appended is refused with its reason."""
    outcomes = tuple(EntryOutcome(REFUSED, o.date, None, o.changes, exc.code, f"refused: {exc}")
                     if o.status == APPENDED else o for o in plan.outcomes)
    return BatchResult(Path(path), outcomes, False, None, plan.label, plan.rechecks)


__all__ = ["APPENDED", "DUPLICATE", "REFUSED", "MAX_RECHECKS", "NewEntry", "EntryOutcome", "AppendPlan",
           "BatchResult", "plan_entries", "plan_batch", "append_entries", "AppendRequest", "append_request",
           "plan_append", "append_entry", "find_container"]
