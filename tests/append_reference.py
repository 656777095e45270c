"""The batch planner of ``zonemark.writer.append`` as it was before B27, frozen for the tests that compare the new
planner with it: each entry an object and a string, the insertion a string (``tests/meta/test_bounded_cost.py``).

Copied from the module at its B25 state; the one change: the re-check's insertion is handed to
``FileSnapshot.insert`` as the UTF-8 bytes it now takes (``_OldZone.check_texts``).  Never imported by ``src``."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from zonemark.core.text import encode
from zonemark.writer import duplicates
from zonemark.writer.append import (APPENDED, CHUNK, DUPLICATE, MAX_RECHECKS, REFUSED, AppendPlan, EntryOutcome,
                                    NewEntry, _refusal, _select, _Zone)
from zonemark.writer.locate import ZoneView, resolve_container
from zonemark.writer.rules import check_actor, check_date
from zonemark.writer.sanitize import sanitize_body, sanitize_title
from zonemark.writer.refusals import RefusedWrite
from zonemark.writer.snapshot import FileSnapshot, Spliced, zone_refusal
from zonemark.writer.verify import Expect


class _OldZone(_Zone):
    def insert_text(self, texts: Sequence[str]) -> str:
        body = "\n" * self.lead + "\n".join(texts) + "\n" * self.trail
        return body.replace("\n", "\r\n") if self.crlf else body

    def check_texts(self, texts: Sequence[str]) -> Spliced:
        return self.snap.insert(self.index, self.zone, self.at, encode(self.insert_text(texts)), self.first_line,
                                Expect(entries=len(texts), owner_line=self.owner_line), self.cid)


@dataclass(slots=True)
class _Candidate:
    pos: int  # index in the batch
    date: str
    entry: str  # the text as written (header, body, LF line ends)
    key: duplicates.Key
    changes: tuple[str, ...]


#: The key of a candidate once the duplicate check has read it.
_CHECKED = b""



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



def plan_batch(snap: FileSnapshot, container: str, entries: Sequence[NewEntry], *, actor: str = "ai",
               default_date: str) -> AppendPlan:
    """:func:`plan_entries` on one snapshot."""
    check_actor(actor)
    data = snap.data
    index = snap.index
    cid = resolve_container(index, container)
    label = index.label(cid)
    prepared = _prepare(entries, default_date)
    outcomes: list[EntryOutcome | None] = [p if isinstance(p, EntryOutcome) else None for p in prepared]
    candidates = [p for p in prepared if isinstance(p, _Candidate)]
    del prepared
    if candidates:
        keys = snap.entries(index.header_line(cid))
        fresh = []
        for c in candidates:
            if c.key in keys:
                outcomes[c.pos] = EntryOutcome(DUPLICATE, c.date, keys[c.key], c.changes)
            else:
                keys[c.key] = -1 - c.pos  # an earlier entry of this batch: its line is known once placed
                fresh.append(c)
            c.key = _CHECKED  # the keys are not read again: not held through the re-check (B25)
        del keys
        candidates = fresh
    zone: ZoneView | None = None
    owner: int | None = cid
    if candidates:
        try:
            index, owner, zone = snap.locate(lambda ix: _select(ix, container, actor))
        except RefusedWrite as exc:
            for c in candidates:
                outcomes[c.pos] = EntryOutcome(REFUSED, c.date, None, c.changes, exc.code, str(exc))
            candidates, zone = [], None
    new_data, rechecks = data, 0
    if candidates and zone is not None:
        new_data, rechecks = _place(_OldZone(snap, index, zone, owner), candidates, outcomes)
    # a copy of an earlier entry of the batch is a duplicate of it where it goes, or refused as it is
    final: list[EntryOutcome] = []
    for o in outcomes:
        assert o is not None
        if o.status == DUPLICATE and o.line is not None and o.line < 0:
            first = final[-1 - o.line]
            o = replace(o, line=first.line) if first.status == APPENDED else replace(first, changes=o.changes)
        final.append(o)
    return AppendPlan(new_data, tuple(final), label, zone.line if zone is not None else None, rechecks,
                      None if owner is None else index.name(owner))


def _place(target: _OldZone, candidates: list[_Candidate], outcomes: list[EntryOutcome | None]) -> tuple[bytes, int]:
    """Re-check the run of candidates together; when refused, find the entries that fail (ruling CL27)."""
    rechecks = 1
    done = target.check_texts([c.entry for c in candidates])
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
            exc = target.refusal(verdict)
            outcomes[c.pos] = EntryOutcome(REFUSED, c.date, None, c.changes, exc.code, str(exc))
    # What is left passes alone; the longest run that passes together is kept, the entry after it refused.
    accepted: list[_Candidate] = []
    rest = kept
    failed = done.verdict
    while rest:
        if rechecks >= MAX_RECHECKS:  # the run that holds them was refused: so are they, with its reason
            exc = zone_refusal(f"appending {len(rest)} entries (not re-checked one by one: more than "
                                   f"{MAX_RECHECKS} re-checks of one batch) to {target.index.label(target.cid)}",
                                   target.zone, failed)
            for c in rest:
                outcomes[c.pos] = EntryOutcome(REFUSED, c.date, None, c.changes, exc.code, str(exc))
            break
        rechecks += 1
        done = target.check_texts([c.entry for c in accepted + rest])
        if done.verdict.ok:
            accepted += rest
            break
        failed = done.verdict
        lo, hi = 0, len(rest)  # accepted + rest[:lo] passes, accepted + rest[:hi] does not
        while hi - lo > 1 and rechecks < MAX_RECHECKS:
            mid = (lo + hi) // 2
            rechecks += 1
            if target.check_texts([c.entry for c in accepted + rest[:mid]]).verdict.ok:
                lo = mid
            else:
                hi = mid
        if hi - lo > 1:
            continue  # out of re-checks: the loop refuses what is left
        bad = rest[lo]
        verdict = target.check_texts([c.entry for c in accepted + rest[:hi]]).verdict
        exc = target.refusal(verdict)
        outcomes[bad.pos] = EntryOutcome(REFUSED, bad.date, None, bad.changes, exc.code, str(exc))
        accepted += rest[:lo]
        rest = rest[hi:]
    if not accepted:
        return target.data, rechecks
    done = target.check_texts([c.entry for c in accepted])
    if not done.verdict.ok:  # cannot happen (that run passed); refuse rather than trust it
        for c in accepted:
            outcomes[c.pos] = EntryOutcome(REFUSED, c.date, None, c.changes, "STRUCTURE_CHANGED",
                                           f"refused: {done.verdict.reason()} (§5.5, re-check)")
        return target.data, rechecks
    _accept(target, accepted, outcomes)
    return done.data, rechecks


def _accept(target: _OldZone, accepted: list[_Candidate], outcomes: list[EntryOutcome | None]) -> None:
    line = target.first_line + target.lead
    for c in accepted:
        outcomes[c.pos] = EntryOutcome(APPENDED, c.date, line, c.changes)
        line += c.entry.count("\n") + 1

