"""Appending many entries to one container in one write: a pure plan, then one commit (§5.2, §5.5, §7.5).

:func:`plan_entries` decides, on one snapshot of the file's bytes, what happens to each entry of a
batch — exactly what :func:`zonemark.writer.append_entry` with ``unless_present=True`` would decide
for each in turn: the date checked, title and body sanitised, the duplicate check (against the
entries the container owns *and* the earlier entries of the batch, ruling CL7), the zone chosen by
the same rule (§5.2), the re-check (§5.5) — and returns the new bytes.  It writes nothing.
:func:`append_entries` runs that plan as the transform of one :meth:`Store.update` (under the lock,
on the current bytes: one history version, one undo), or, for a dry run, on the bytes as read.

Cost: the file is parsed once (the duplicate keys), each entry is sanitised once, and the whole
insertion is re-checked once.  Only when that check refuses are the entries checked one by one,
each alone in a small document with the container's context (linear in the batch); an entry that
passes alone but not with the others is found by halving the remaining run (ruling CL27).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from ..core.parser import parse
from ..core.text import decode
from . import duplicates
from .edit import (WriteResult, _barrier_refusal, _blank_layout, _end_of_content, _splice, _zone_is_sane, _zone_text,
                   cached_index, check_actor, check_date, forget, journal_for, refuse_for_level, remember)
from .locate import APPEND_LEVELS, ZoneIndex, ZoneView, journal_zones, resolve_container, unclosed_zones
from .refusals import RefusedWrite
from .sanitize import sanitize_body, sanitize_title
from .store import Store, StoreError
from .verify import Edit, Expect, mini_check
from .offsets import CharOffset

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


@dataclass(frozen=True, slots=True)
class BatchResult:
    """What :func:`append_entries` did: the plan's outcomes, and the write (``history_id`` None: nothing written)."""

    path: Path
    outcomes: tuple[EntryOutcome, ...]
    changed: bool
    history_id: str | None
    label: str
    rechecks: int


@dataclass(slots=True)
class _Candidate:
    pos: int  # index in the batch
    date: str
    entry: str  # the text as written (header, body, LF line ends)
    key: duplicates.Key
    changes: tuple[str, ...]


def _refusal(exc: Exception) -> tuple[str, str]:
    """(code, one line) of a refusal raised while preparing an entry."""
    if isinstance(exc, RefusedWrite):
        return exc.code, str(exc)
    if isinstance(exc, StoreError):
        return exc.code, f"refused: {exc}"
    return getattr(exc, "code", "BAD_DATE"), f"refused: {exc}"


def _select(index: ZoneIndex, cid: int | None, actor: str) -> ZoneView:
    """The zone an append by ``actor`` to container ``cid`` goes to, or the refusal append_entry raises."""
    zone = journal_for(index, cid, actor)
    if zone is not None:
        return zone
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


def _prepare(entries: Sequence[NewEntry], default_date: str) -> list[_Candidate | EntryOutcome]:
    """Each entry checked and sanitised as append_entry does, or its refusal (independent of the file)."""
    out: list[_Candidate | EntryOutcome] = []
    for pos, e in enumerate(entries):
        when = e.date if e.date is not None else default_date
        try:
            date = check_date(when)
            title = sanitize_title(e.title)
            body = sanitize_body(e.body or "")
        except (RefusedWrite, ValueError) as exc:
            code, reason = _refusal(exc)
            out.append(EntryOutcome(REFUSED, when, None, code=code, reason=reason))
            continue
        entry = f"###### LOG: {date} — {title.text}\n" + (body.text + "\n" if body.text else "")
        out.append(_Candidate(pos, date, entry, duplicates.entry_key(date, title.text, body.text),
                              title.changes + body.changes))
    return out


class _Zone:
    """The target zone of one snapshot, and the insertion of a run of entries at its end (as append_entry)."""

    def __init__(self, path, data: bytes, index: ZoneIndex, zone: ZoneView, cid: int | None):
        self.path, self.data, self.index, self.zone, self.cid = path, data, index, zone, cid
        self.old_zone, self.inner_rel, self.close_rel = _zone_text(data, zone)
        self.pos = _end_of_content(self.old_zone, self.inner_rel, self.close_rel)
        self.crlf = self.old_zone.endswith("\r\n")
        self.first_line = zone.close_line - self.old_zone.count("\n", self.pos, self.close_rel)  # type: ignore[operator]
        self.owner_line = 0 if cid is None else index.header_line(cid)
        if self.pos > self.inner_rel or zone.inline:
            self.lead, self.trail = 1, 0
        else:
            lead, trail = _blank_layout(data, index)
            existing = self.old_zone.count("\n", self.inner_rel, self.close_rel)
            self.lead, self.trail = lead, max(0, trail - existing)

    def insert(self, texts: Sequence[str]) -> str:
        """The text a run of entries adds: the layout of the first append, then one blank line before each."""
        body = "\n" * self.lead + "\n".join(texts) + "\n" * self.trail
        return body.replace("\n", "\r\n") if self.crlf else body

    def check(self, texts: Sequence[str]):
        """Splice a run of entries in and re-check it (§5.5): the edit layer's own ``_splice``."""
        return _splice(self.path, self.index, self.zone, self.data, self.old_zone, self.pos, 0, self.insert(texts),
                       self.first_line, Expect(entries=len(texts), owner_line=self.owner_line), self.cid)

    def alone(self, text: str, line: int, entries: int = 1):
        """The verdict on entries alone in an empty zone of the same container, their lines as at ``line``."""
        opening = self.old_zone[:self.inner_rel]
        closing = self.old_zone[self.close_rel:]
        insert = text.replace("\n", "\r\n") if self.crlf else text
        zone = replace(self.zone, line=line - 1)
        edit = Edit(CharOffset(len(opening)), 0, len(insert), line, 0, insert.count("\n"))
        return mini_check(self.index, zone, opening + closing, opening + insert + closing, edit,
                          Expect(entries=entries, owner_line=self.owner_line), owner=self.cid)


def plan_entries(path, data: bytes, container: str, entries: Sequence[NewEntry], *, actor: str = "ai",
                 default_date: str) -> AppendPlan:
    """What appending ``entries`` to ``container`` of ``data`` does (module docstring); pure: writes nothing.

    Raises :class:`RefusedWrite` only when the container cannot be resolved (nothing is appended then).
    """
    check_actor(actor)
    index = cached_index(path, data)
    cid = resolve_container(index, container)
    label = index.label(cid)
    prepared = _prepare(entries, default_date)
    outcomes: list[EntryOutcome | None] = [p if isinstance(p, EntryOutcome) else None for p in prepared]
    candidates = [p for p in prepared if isinstance(p, _Candidate)]
    if candidates:
        keys = duplicates.owned_entries(parse(decode(data), path=str(path)), index.header_line(cid))
        fresh = []
        for c in candidates:
            if c.key in keys:
                outcomes[c.pos] = EntryOutcome(DUPLICATE, c.date, keys[c.key], c.changes)
            else:
                keys[c.key] = -1 - c.pos  # an earlier entry of this batch: its line is known once placed
                fresh.append(c)
        candidates = fresh
    zone: ZoneView | None = None
    if candidates:
        try:
            zone = _select(index, cid, actor)
            if not _zone_is_sane(data, zone):  # never trust a stale index: rebuild it
                index = ZoneIndex.build(parse(decode(data), path=str(path)))
                remember(path, data, index)
                zone = _select(index, cid, actor)
                if not _zone_is_sane(data, zone):
                    raise RefusedWrite(f"refused: the [P{zone.level}] zone at line {zone.line} cannot be located "
                                       f"reliably; check the file with 'zonemark check'", code="ZONE_NOT_LOCATED",
                                       zone=zone.line, level=zone.level, rule="§5.1")
        except RefusedWrite as exc:
            for c in candidates:
                outcomes[c.pos] = EntryOutcome(REFUSED, c.date, None, c.changes, exc.code, str(exc))
            candidates, zone = [], None
    new_data, rechecks = data, 0
    if candidates and zone is not None:
        new_data, rechecks = _place(_Zone(path, data, index, zone, cid), candidates, outcomes)
    # a copy of an earlier entry of the batch is a duplicate of it where it goes, or refused as it is
    final: list[EntryOutcome] = []
    for o in outcomes:
        assert o is not None
        if o.status == DUPLICATE and o.line is not None and o.line < 0:
            first = final[-1 - o.line]
            o = replace(o, line=first.line) if first.status == APPENDED else replace(first, changes=o.changes)
        final.append(o)
    return AppendPlan(new_data, tuple(final), label, zone.line if zone is not None else None, rechecks)


def _place(target: _Zone, candidates: list[_Candidate], outcomes: list[EntryOutcome | None]) -> tuple[bytes, int]:
    """Re-check the run of candidates together; when refused, find the entries that fail (ruling CL27)."""
    rechecks = 1
    done = target.check([c.entry for c in candidates])
    if done.verdict.ok:
        _accept(target, candidates, outcomes)
        return done.data, rechecks
    # One by one, each alone: a refusal there is the entry's own (its lines as they would be in the file).
    # A group of CHUNK entries that passes alone together passes one by one: only a refused group is split.
    kept, line = [], target.first_line + target.lead
    for start in range(0, len(candidates), CHUNK):
        group = candidates[start:start + CHUNK]
        if len(group) > 1 and target.alone("\n".join(c.entry for c in group), line, len(group)).ok:
            kept += group
            line += sum(c.entry.count("\n") + 1 for c in group)
            continue
        for c in group:
            verdict = target.alone(c.entry, line)
            if verdict.ok or verdict.method == "undecided":
                kept.append(c)
                line += c.entry.count("\n") + 1
                continue
            exc = _barrier_refusal(f"appending to {target.index.label(target.cid)} in the [P{target.zone.level}] zone "
                                   f"at line {target.zone.line}", target.zone, verdict)
            outcomes[c.pos] = EntryOutcome(REFUSED, c.date, None, c.changes, exc.code, str(exc))
    # What is left passes alone; the longest run that passes together is kept, the entry after it refused.
    accepted: list[_Candidate] = []
    rest = kept
    failed = done.verdict
    while rest:
        if rechecks >= MAX_RECHECKS:  # the run that holds them was refused: so are they, with its reason
            exc = _barrier_refusal(f"appending {len(rest)} entries (not re-checked one by one: more than "
                                   f"{MAX_RECHECKS} re-checks of one batch) to {target.index.label(target.cid)}",
                                   target.zone, failed)
            for c in rest:
                outcomes[c.pos] = EntryOutcome(REFUSED, c.date, None, c.changes, exc.code, str(exc))
            break
        rechecks += 1
        done = target.check([c.entry for c in accepted + rest])
        if done.verdict.ok:
            accepted += rest
            break
        failed = done.verdict
        lo, hi = 0, len(rest)  # accepted + rest[:lo] passes, accepted + rest[:hi] does not
        while hi - lo > 1 and rechecks < MAX_RECHECKS:
            mid = (lo + hi) // 2
            rechecks += 1
            if target.check([c.entry for c in accepted + rest[:mid]]).verdict.ok:
                lo = mid
            else:
                hi = mid
        if hi - lo > 1:
            continue  # out of re-checks: the loop refuses what is left
        bad = rest[lo]
        verdict = target.check([c.entry for c in accepted + rest[:hi]]).verdict
        exc = _barrier_refusal(f"appending to {target.index.label(target.cid)} in the [P{target.zone.level}] zone at "
                               f"line {target.zone.line}", target.zone, verdict)
        outcomes[bad.pos] = EntryOutcome(REFUSED, bad.date, None, bad.changes, exc.code, str(exc))
        accepted += rest[:lo]
        rest = rest[hi:]
    if not accepted:
        return target.data, rechecks
    done = target.check([c.entry for c in accepted])
    if not done.verdict.ok:  # cannot happen (that run passed); refuse rather than trust it
        for c in accepted:
            outcomes[c.pos] = EntryOutcome(REFUSED, c.date, None, c.changes, "STRUCTURE_CHANGED",
                                           f"refused: {done.verdict.reason()} (§5.5, re-check)")
        return target.data, rechecks
    _accept(target, accepted, outcomes)
    return done.data, rechecks


def _accept(target: _Zone, accepted: list[_Candidate], outcomes: list[EntryOutcome | None]) -> None:
    line = target.first_line + target.lead
    for c in accepted:
        outcomes[c.pos] = EntryOutcome(APPENDED, c.date, line, c.changes)
        line += c.entry.count("\n") + 1


def append_entries(path, container: str, entries: Sequence[NewEntry], *, actor: str = "ai",
                   default_date: str, store: Store | None = None, dry_run: bool = False) -> BatchResult:
    """Append every entry of ``entries`` that is not already in ``container`` in one write (module docstring).

    ``dry_run``: the plan on the file as it is now, nothing written (a file the store would refuse to
    write — missing, read-only — refuses every entry, as the write would).  Raises :class:`RefusedWrite`
    when the container cannot be resolved.
    """
    check_actor(actor)
    store = store or Store()
    plans: list[AppendPlan] = []

    def transform(data: bytes) -> bytes:
        plans.clear()
        plans.append(plan_entries(path, data, container, entries, actor=actor, default_date=default_date))
        return plans[0].data

    if dry_run:
        data = store.read(path)
        transform(data)
        try:
            store.writable(path)
        except StoreError as exc:
            return _all_refused(path, plans[0], exc)
        return BatchResult(Path(path), plans[0].outcomes, False, None, plans[0].label, plans[0].rechecks)
    n = sum(1 for e in entries)
    try:
        result = store.update(path, transform, actor=actor,
                              action=f"append {n} entr{'y' if n == 1 else 'ies'} to {container}")
    except StoreError as exc:
        if not plans:
            transform(store.read(path))
        return _all_refused(path, plans[0], exc)
    if result.changed:
        forget(path)
    return BatchResult(Path(path), plans[0].outcomes, result.changed, result.history_id, plans[0].label,
                       plans[0].rechecks)


def _all_refused(path, plan: AppendPlan, exc: StoreError) -> BatchResult:
    """The store refused the write: every entry that would have been appended is refused with its reason."""
    outcomes = tuple(EntryOutcome(REFUSED, o.date, None, o.changes, exc.code, f"refused: {exc}")
                     if o.status == APPENDED else o for o in plan.outcomes)
    return BatchResult(Path(path), outcomes, False, None, plan.label, plan.rechecks)


__all__ = ["APPENDED", "DUPLICATE", "REFUSED", "MAX_RECHECKS", "NewEntry", "EntryOutcome", "AppendPlan",
           "BatchResult", "plan_entries", "append_entries", "WriteResult"]
