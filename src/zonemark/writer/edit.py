"""The permission-enforcing edit API (§5.2, §5.5, §7.1.2, §7.1.3, §7.3.1).

Who may change what (§5.2), as enforced here:

    zone   'ai'                                          'user'
    [P1]   refused (user-only)                           edit_zone
    [P2]   refused (explicit user command)               edit_zone
    [P3]   propose() only; apply_proposal is 'user'-only edit_zone, apply_proposal
    [P4]   append_entry; rewrite of the registry block   everything
           (§7.3.1); editing/deleting needs 'user'
    [P5]   append_entry, edit_zone                       everything

Every write goes through two barriers — :mod:`.sanitize` (AI text creates no structure) and
:mod:`.verify` (the new text adds no diagnostic and changes nothing outside its region) —
and then through :class:`zonemark.writer.store.Store` (lock, atomic write, history).  A
refusal raises :class:`RefusedWrite` with one line saying what was refused and why; the file
is then untouched.

Decisions:

* ``append_entry`` writes at the end of the writable zone that pairs with the container
  (:mod:`.locate`): for 'ai' the last ``[P4]`` zone, else the last ``[P5]``; for 'user' also a
  ``[P3]`` journal.  One blank line separates entries; an empty zone gets the blank-line
  layout of the file's first non-empty writable zone (§14 examples: ``[P4]`` directly
  followed by the entry in §14.3/§14.4, a blank line on both sides in §14.1).
* ``rewrite_registry`` rewrites the entries of ``## MODULE_STATE_REGISTRY:`` as a whole
  (never single lines, §7.3.1) — exactly the registry's own ``* ACTIVE:``/``* INACTIVE:`` lines;
  the user's text and comments around and between them stay as they are.  Ids whose state
  it changes must be declared modules (of the file, or of ``known_ids`` — the layer) and
  must not be ``- permanent``; otherwise refused.
  A file without a registry gets one only from 'user' (a new ``[P4]`` zone at the end of the
  file: the AI never creates permission tags, §5.5 Invariant 5).  'ai' may rewrite a registry
  in ``[P4]``/``[P5]`` only.  ``set_states`` finds the registry and the known ids of a folder
  with :class:`zonemark.layer.Layer` (the reminder governs the layer; id conflicts as the
  layer resolves them).
* ``edit_zone`` replaces a zone's inner lines: 'ai' only in ``[P5]`` (content sanitised, H6
  entry lines allowed), 'user' anywhere (content verbatim; refused only on new *errors*).
* ``undo`` is 'user'-only.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path

from ..core import syntax as sx
from ..core.document import Document
from ..core.nodes import Heading
from ..core.parser import parse
from ..core.text import decode, encode
from .locate import (APPEND_LEVELS, ZoneIndex, ZoneView, container_lines, journal_for, journal_zones, resolve_container,
                     unclosed_zones, zone_base_from)
from .offsets import ByteOffset, CharOffset, bytes_before, chars_before, text_between
from . import duplicates
from .refusals import InvalidDate, RefusedWrite
from .sanitize import quoted, sanitize_body, sanitize_entries, sanitize_title
from .skeleton import skeleton_index
from .store import Store
from .verify import Edit, Expect, Verdict, compare, full_check, incremental_check

ACTORS = ("ai", "user")
_ID = re.compile(r"[^\s:\[\],]+")
_CACHE_SIZE = 8
_cache: "OrderedDict[str, tuple[bytes, ZoneIndex]]" = OrderedDict()
_cache_lock = threading.Lock()


@dataclass(frozen=True)
class WriteResult:
    """What a successful (or no-op) write did."""

    path: Path
    changed: bool
    line: int | None  # first line of what was written (the entry header for an append)
    zone: int | None  # opening line of the zone written into
    target: str  # human label of the container / zone
    history_id: str | None
    changes: tuple[str, ...] = ()  # what the sanitiser neutralised
    method: str = ""  # 'incremental' or 'full' verification
    zone_hash: str | None = None  # edit_zone: the zone's base now (its container and bytes; the next base_hash)
    duplicate_of: int | None = None  # append_entry(unless_present=True): line of the entry already there


# -- shared helpers ------------------------------------------------------------------------

def check_actor(actor: str) -> str:
    if actor not in ACTORS:
        raise ValueError(f"actor must be 'ai' or 'user', not {actor!r}")
    return actor


def _key(path) -> str:
    return os.path.realpath(os.fspath(path))


def cached_index(path, data: bytes) -> ZoneIndex:
    """The index of ``data``: from the cache when the bytes are identical, else from its skeleton (:mod:`.skeleton`)."""
    key = _key(path)
    with _cache_lock:
        hit = _cache.get(key)
    if hit is not None and (hit[0] is data or hit[0] == data):
        return hit[1]
    index = skeleton_index(data, path=str(path))
    remember(path, data, index)
    return index


def remember(path, data: bytes, index: ZoneIndex) -> None:
    key = _key(path)
    with _cache_lock:
        _cache[key] = (data, index)
        _cache.move_to_end(key)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)


def forget(path=None) -> None:
    """Drop the cached index (and duplicate keys) of ``path`` (of every file when None)."""
    with _cache_lock:
        if path is None:
            _cache.clear()
        else:
            _cache.pop(_key(path), None)
    duplicates.forget(path)


def refuse_not_utf8(path, data: bytes) -> None:
    """``FILE_NOT_UTF8`` when ``data``, the bytes of ``path``, is not valid UTF-8 (§1, W45): the writer writes
    UTF-8, and into a file of another encoding (Windows-1252, Latin-1) that would leave two encodings in one
    file.  The first invalid byte is named as ``\\xNN``, as every message shows one (W8).  One pass over the
    bytes."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = f"\\x{data[exc.start]:02X}"
        raise RefusedWrite(f"refused: the file is not valid UTF-8 (byte {exc.start + 1} is {bad}; another encoding, "
                           f"such as Windows-1252?): writing UTF-8 text into it would leave two encodings in one "
                           f"file; save it as UTF-8 first",
                           code="FILE_NOT_UTF8", rule="§1") from None


def refuse_for_level(zone: ZoneView, actor: str, wants: str) -> None:
    """Raise the §5.2 refusal of ``actor`` changing ``zone`` (``wants``: 'edit' or 'append')."""
    lv = zone.level
    where = f"[P{lv}] zone at line {zone.line}"
    if actor == "user":
        return
    if lv in (1, 2):
        who = "user-only" if lv == 1 else "read-only without an explicit user command"
        raise RefusedWrite(f"refused: {where} is {who} (§5.2); ai may not change it", code="ZONE_READ_ONLY",
                           zone=zone.line, level=lv, rule="§5.2")
    if lv == 3:
        raise RefusedWrite(f"refused: {where} is long-term memory: ai changes there are proposals the user "
                           f"applies (§5.2); use propose", code="ZONE_PROPOSE_ONLY", zone=zone.line, level=lv,
                           rule="§5.2")
    if lv == 4 and wants == "edit":
        raise RefusedWrite(f"refused: {where} is append-only for ai (§5.2): editing or deleting needs the user; "
                           f"use append or propose", code="ZONE_APPEND_ONLY", zone=zone.line, level=lv, rule="§5.2")


def _zone_is_sane(data: bytes, zone: ZoneView) -> bool:
    """Whether the index still points at this zone's opening and closing tags in ``data``."""
    if zone.close_start is None:
        return True
    close = decode(data[zone.close_start:zone.close_end]).rstrip("\n").rstrip("\r")
    m = sx.PERMISSION_TAG.match(close)
    opening = sx.PERMISSION_TAG.match(decode(data[zone.start:zone.inner_start]).rstrip("\n"))
    return bool(m and m.group(1) and opening and not opening.group(1) and int(opening.group(2)) == zone.level)


def _today(timestamp: bool) -> str:
    now = _dt.datetime.now()
    return now.strftime("%Y-%m-%dT%H:%M:%S") if timestamp else now.strftime("%Y-%m-%d")


#: What ``--date`` accepts, in words: exactly the parser's log date (§7.5, :func:`zonemark.core.syntax.valid_date_text`).
DATE_HELP = ("a log date as the parser reads it (§7.5): YYYY-MM-DD, or YYYY-MM-DDTHH:MM[:SS[.fff]] optionally "
             "followed by Z, +HH:MM or +HHMM")


def check_date(date: str) -> str:
    """A §7.5 log date, by the parser's own rule (:func:`zonemark.core.syntax.valid_date_text`), or
    :class:`~.refusals.InvalidDate` (a ValueError with the code BAD_DATE)."""
    if not isinstance(date, str):
        raise InvalidDate("date must be a string such as 2026-05-03")
    if not sx.valid_date_text(date.strip()) or "\n" in date.strip():
        raise InvalidDate(f"{quoted(date)} is not {DATE_HELP}")
    return date.strip()


def _blank_layout(data: bytes, index: ZoneIndex) -> tuple[int, int]:
    """Blank lines after the opening and before the closing tag in the first non-empty journal."""
    for i in range(len(index)):
        z = index.zone(i)
        if z.level not in (4, 5) or z.close_start is None or z.inline:
            continue
        inner = decode(data[z.inner_start:z.close_start])
        if not inner.strip():
            continue
        lines = inner.split("\n")[:-1]
        lead = next(k for k, ln in enumerate(lines) if ln.strip())
        trail = next(k for k, ln in enumerate(reversed(lines)) if ln.strip())
        return min(lead, 1), min(trail, 1)
    return 0, 0


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


def _zone_text(data: bytes, zone: ZoneView) -> tuple[str, CharOffset, CharOffset]:
    """The zone's text (opening to closing line) and the character offsets, in it, of its inner lines and closing tag."""
    assert zone.close_start is not None and zone.close_end is not None
    old_zone = text_between(data, zone.start, zone.close_end)
    inner_rel = CharOffset(len(text_between(data, zone.start, zone.inner_start)))
    close_rel = CharOffset(inner_rel + len(text_between(data, zone.inner_start, zone.close_start)))
    return old_zone, inner_rel, close_rel


@dataclass(frozen=True)
class _Spliced:
    data: bytes
    verdict: Verdict
    at: ByteOffset  # of the region in the file
    added: int  # bytes added (may be negative)
    line: int
    added_lines: int


def _splice(path, index: ZoneIndex, zone: ZoneView, data: bytes, old_zone: str, rel_start: CharOffset,
            rel_old_len: int, insert: str, line: int, expect: Expect, owner: int | None) -> _Spliced:
    """Replace ``old_zone[rel_start:rel_start + rel_old_len]`` by ``insert`` and run both checks.

    ``old_zone`` is the zone's decoded text, so ``rel_start`` counts characters; the byte
    position in the file is derived once.  Only the zone is decoded; the file's other bytes
    are copied, then checked identical.
    """
    new_zone = old_zone[:rel_start] + insert + old_zone[rel_start + rel_old_len:]
    edit = Edit(rel_start, rel_old_len, len(insert), line,
                old_zone.count("\n", rel_start, rel_start + rel_old_len), insert.count("\n"))
    at = ByteOffset(zone.start + bytes_before(old_zone, rel_start))
    old_len_b = len(encode(old_zone[rel_start:rel_start + rel_old_len]))
    insert_b = encode(insert)
    new_data = b"".join((memoryview(data)[:at], insert_b, memoryview(data)[at + old_len_b:]))
    verdict: Verdict | None
    if not (new_data.startswith(memoryview(data)[:at])
            and new_data.endswith(memoryview(data)[at + old_len_b:])):
        verdict = Verdict(False, (), ("bytes outside the edited region would change",))
    else:
        verdict = incremental_check(index, zone, old_zone, new_zone, edit, expect, owner=owner)
        if verdict is None:
            old_text, new_text = decode(data), decode(new_data)
            full_edit = replace(edit, start=chars_before(data, at))
            verdict = full_check(old_text, new_text, full_edit, expect, path=str(path))
    return _Spliced(new_data, verdict, at, len(insert_b) - old_len_b, line, edit.delta_lines)


def barrier_refusal(what: str, verdict: Verdict, *, zone: int | None = None,
                    level: int | None = None) -> RefusedWrite:
    """The refusal of a write the re-check (§5.5) did not accept: STRUCTURE_CHANGED or NEW_DIAGNOSTIC."""
    code = "STRUCTURE_CHANGED" if verdict.problems or not verdict.new_diagnostics else "NEW_DIAGNOSTIC"
    return RefusedWrite(f"refused: {what}: {verdict.reason()} (§5.5, re-check)", code=code, zone=zone,
                        level=level, rule="§5.5")


def _barrier_refusal(what: str, zone: ZoneView | None, verdict: Verdict) -> RefusedWrite:
    return barrier_refusal(what, verdict, zone=zone.line if zone else None, level=zone.level if zone else None)


# -- append --------------------------------------------------------------------------------

def find_container(path, container: str, *, store: Store | None = None) -> str:
    """The label of the container ``container`` names in ``path`` now (:func:`.locate.resolve_container`), or
    :class:`RefusedWrite` (``UNKNOWN_CONTAINER``, ``AMBIGUOUS_CONTAINER``); writes nothing."""
    data = (store or Store()).read(path)
    index = cached_index(path, data)
    return index.label(resolve_container(index, container))


def append_entry(path, container: str, title: str, body: str = "", *, actor: str = "ai",
                 date: str | None = None, timestamp: bool = False, store: Store | None = None,
                 unless_present: bool = False) -> WriteResult:
    """Append ``###### LOG: <date> — <title>`` and its body to the journal of ``container``.

    ``unless_present``: when the container already owns an entry with this date, title and body
    (as written, :mod:`.duplicates`), write nothing and say where it is (``duplicate_of``) — checked
    under the file's lock on its current bytes, so concurrent writers file one copy.
    """
    check_actor(actor)
    store = store or Store()
    if date is not None and timestamp:
        raise ValueError("give a date or timestamp=True, not both")
    date = check_date(date) if date is not None else _today(timestamp)
    clean_title = sanitize_title(title)
    clean_body = sanitize_body(body or "")
    header = f"###### LOG: {date} — {clean_title.text}"
    entry = header + "\n" + (clean_body.text + "\n" if clean_body.text else "")
    levels = APPEND_LEVELS[actor]
    key = duplicates.entry_key(date, clean_title.text, clean_body.text)
    state: dict = {}

    def present(data: bytes, index: ZoneIndex) -> tuple[int, dict] | None:
        """(owner line, keys of its entries in ``data``) when ``key`` is not among them; else None after noting it."""
        cid = resolve_container(index, container)
        owner_line = index.header_line(cid)
        keys = duplicates.cached_entries(path, owner_line, data)
        if keys is None:
            keys = duplicates.owned_entries(parse(decode(data), path=str(path)), owner_line)
            duplicates.remember(path, owner_line, data, keys)
        if key in keys:
            state.update(duplicate=keys[key], label=index.label(cid))
            return None
        return owner_line, keys

    def select(index: ZoneIndex):
        cid = resolve_container(index, container)
        zone = journal_for(index, cid, actor)
        if zone is not None:
            return cid, zone
        p3 = journal_zones(index, cid, (3,))
        if p3 and actor == "ai":
            refuse_for_level(p3[-1], actor, "append")
        unclosed = unclosed_zones(index, cid, levels)
        if unclosed:
            z = unclosed[-1]
            raise RefusedWrite(f"refused: the [P{z.level}] zone at line {z.line} that pairs with {index.label(cid)} "
                               f"is never closed (§5.4); the user must add [/P{z.level}] where it ends",
                               code="UNCLOSED_ZONE", zone=z.line, level=z.level, rule="§5.4")
        raise RefusedWrite(f"refused: {index.label(cid)} has no writable zone of its own to append to "
                           f"({'/'.join(f'[P{lv}]' for lv in levels)} after its declaration and before the "
                           f"next container, §7.1.2/§7.1.3); the user must add an empty [P4] there",
                           code="NO_JOURNAL", rule="§7.1.2")

    def transform(data: bytes) -> bytes:
        state.clear()  # the store may call this again on fresh bytes: nothing of an earlier run counts
        refuse_not_utf8(path, data)
        index = cached_index(path, data)
        known = None
        if unless_present:
            known = present(data, index)
            if known is None:
                return data
        cid, zone = select(index)
        if not _zone_is_sane(data, zone):  # never trust a stale index: rebuild it
            index = ZoneIndex.build(parse(decode(data), path=str(path)))
            remember(path, data, index)
            cid, zone = select(index)
            if not _zone_is_sane(data, zone):
                raise RefusedWrite(f"refused: the [P{zone.level}] zone at line {zone.line} cannot be located "
                                   f"reliably; check the file with 'zonemark check'", code="ZONE_NOT_LOCATED",
                                   zone=zone.line, level=zone.level, rule="§5.1")
        old_zone, inner_rel, close_rel = _zone_text(data, zone)
        pos = _end_of_content(old_zone, inner_rel, close_rel)
        if pos > inner_rel or zone.inline:
            insert, lead = "\n" + entry, 1
        else:
            lead, trail = _blank_layout(data, index)
            existing = old_zone.count("\n", inner_rel, close_rel)
            insert = "\n" * lead + entry + "\n" * max(0, trail - existing)
        if old_zone.endswith("\r\n"):  # keep the file's own line endings (a CRLF file stays CRLF)
            insert = insert.replace("\n", "\r\n")
        line = zone.close_line - old_zone.count("\n", pos, close_rel)
        owner_line = 0 if cid is None else index.header_line(cid)
        done = _splice(path, index, zone, data, old_zone, pos, 0, insert, line,
                       Expect(entries=1, owner_line=owner_line), cid)
        if not done.verdict.ok:
            raise _barrier_refusal(f"appending to {index.label(cid)} in the [P{zone.level}] zone at line {zone.line}",
                                   zone, done.verdict)
        state.update(data=done.data, index=index.shifted(done.at, line, done.added, done.added_lines),
                     line=line + lead, zone=zone.line, label=index.label(cid), method=done.verdict.method)
        if known is not None:
            owner, keys = known
            state["keys"] = (owner, duplicates.after_append(keys, key, line + lead, line, done.added_lines))
        return done.data

    result = store.update(path, transform, actor=actor, action=f"append to {container}: {clean_title.text}")
    changes = clean_title.changes + clean_body.changes
    if "duplicate" in state:
        return WriteResult(Path(path), False, state["duplicate"], None, state["label"], None, changes,
                           duplicate_of=state["duplicate"])
    if result.changed:
        remember(path, state["data"], state["index"])
        if "keys" in state:
            duplicates.remember(path, state["keys"][0], state["data"], state["keys"][1])
    return WriteResult(Path(path), result.changed, state.get("line"), state.get("zone"), state.get("label", ""),
                       result.history_id, changes, state.get("method", ""))


# -- edit a zone ---------------------------------------------------------------------------

_HASH = re.compile(r"[0-9a-f]{64}")


def edit_zone(path, zone_line: int, new_content: str, *, actor: str = "ai", store: Store | None = None,
              base_hash: str | None = None) -> WriteResult:
    """Replace the inner lines of the zone opened at (or containing) ``zone_line``.

    ``base_hash`` (W9, W42): the :func:`~.locate.zone_base` the caller read.  Under the lock, before the
    permission check, the zone's container and inner bytes must still hash to it, else ``STALE_ZONE`` (saying
    where the zone with that hash is now, when one is): an edit never overwrites a change its author has not
    seen, and an agent whose zone moved is told so, not that the zone now at its line is not its to edit.
    The result's ``zone_hash`` is the next base.
    """
    check_actor(actor)
    store = store or Store()
    if not isinstance(new_content, str):
        raise TypeError("new_content must be str")
    if base_hash is not None and (not isinstance(base_hash, str) or not _HASH.fullmatch(base_hash)):
        raise ValueError("base_hash must be the 64 lowercase hexadecimal digits of a zone hash")
    if actor == "ai":
        clean = sanitize_entries(new_content)
        content, changes = clean.text, clean.changes
    else:
        content, changes = new_content, ()
    inner = content if (not content or content.endswith("\n")) else content + "\n"
    state: dict = {}

    def transform(data: bytes) -> bytes:
        refuse_not_utf8(path, data)
        index = cached_index(path, data)
        zone = index.zone_at_line(int(zone_line))
        if zone is not None and not _zone_is_sane(data, zone):
            index = ZoneIndex.build(parse(decode(data), path=str(path)))
            remember(path, data, index)
            zone = index.zone_at_line(int(zone_line))
            if zone is not None and not _zone_is_sane(data, zone):
                raise RefusedWrite(f"refused: the [P{zone.level}] zone at line {zone.line} cannot be located "
                                   f"reliably; check the file with 'zonemark check'", code="ZONE_NOT_LOCATED",
                                   zone=zone.line, level=zone.level, rule="§5.1")
        if base_hash is not None and (zone is None or zone.close_start is None
                                      or zone_base_from(container_lines(index, zone),
                                                        data[zone.inner_start:zone.close_start]) != base_hash):
            _refuse_stale(data, index, zone, zone_line, base_hash)  # W42: before the zone's permission
        if zone is None:
            raise RefusedWrite(f"refused: no permission zone opens at or contains line {zone_line}", code="NO_ZONE",
                               rule="§5.1")
        if zone.close_start is None:
            raise RefusedWrite(f"refused: the [P{zone.level}] zone at line {zone.line} is never closed (§5.4)",
                               code="UNCLOSED_ZONE", zone=zone.line, level=zone.level, rule="§5.4")
        refuse_for_level(zone, actor, "edit")
        if zone.inline:
            raise RefusedWrite(f"refused: the zone at line {zone.line} opens inline ('[P{zone.level}] text'); "
                               f"edit it by hand", code="INLINE_ZONE", zone=zone.line, level=zone.level, rule="§5.1")
        base_context = container_lines(index, zone)
        old_zone, inner_rel, close_rel = _zone_text(data, zone)
        expect = Expect(entries=None, owner_line=None, structure=actor == "user")
        done = _splice(path, index, zone, data, old_zone, inner_rel, close_rel - inner_rel, inner, zone.line + 1,
                       expect, zone.owner)
        if not done.verdict.ok:
            raise _barrier_refusal(f"editing the [P{zone.level}] zone at line {zone.line}", zone, done.verdict)
        state.update(zone=zone.line, method=done.verdict.method, hash=zone_base_from(base_context, encode(inner)))
        return done.data

    result = store.update(path, transform, actor=actor, action=f"edit zone at line {zone_line}")
    if result.changed:
        forget(path)  # the zone may have changed size and structure: rebuild on next use
    return WriteResult(Path(path), result.changed, state.get("zone"), state.get("zone"),
                       f"zone at line {state.get('zone')}", result.history_id, changes, state.get("method", ""),
                       zone_hash=state.get("hash"))


def _refuse_stale(data: bytes, index: ZoneIndex, zone: ZoneView | None, zone_line: int, base_hash: str) -> None:
    """The refusal of an edit whose ``base_hash`` is not the zone's at ``zone_line`` (W9, W42): ``STALE_ZONE``,
    saying where the zone that hash was read from is now when one zone of the file still has it (one hash per
    zone: linear in the file); ``NO_ZONE`` when no zone is at the line and none has the hash."""
    now = [z for z in (index.zone(i) for i in range(len(index))) if z.close_start is not None
           and zone_base_from(container_lines(index, z), data[z.inner_start:z.close_start]) == base_hash]
    moved = f"; the zone you read is now the [P{now[0].level}] zone at line {now[0].line}" if len(now) == 1 else ""
    if zone is None:
        if not now:
            return  # no zone there, and none with that hash: NO_ZONE says so
        raise RefusedWrite(f"refused: no zone opens at or contains line {zone_line} now{moved}; edit it there "
                           f"after reading it again", code="STALE_ZONE", zone=now[0].line, level=now[0].level,
                           rule="W9")
    raise RefusedWrite(f"refused: the [P{zone.level}] zone at line {zone.line} changed since its hash was read, or "
                       f"is another zone now{moved or '; read it again and merge the change before editing'}",
                       code="STALE_ZONE", zone=now[0].line if len(now) == 1 else zone.line,
                       level=now[0].level if len(now) == 1 else zone.level, rule="W9")


# -- the registry (§7.3.1) -------------------------------------------------------------------

def _zone_line_of(doc: Document, line: int) -> int | None:
    """The opening line of the permission zone holding ``line`` (None outside every zone)."""
    for b in doc.blocks:
        if b.type == "permission_block" and b.line <= line <= b.end_line:
            return b.line
    return None


def _registry_heading(doc: Document) -> Heading | None:
    if doc.registry is None:
        return None
    for b in doc.walk():
        if isinstance(b, Heading) and b.type == "state_registry" and b.line == doc.registry.line:
            return b
    return None


def _clean_ids(ids, what: str) -> list[str]:
    out: list[str] = []
    for raw in ids or ():
        if not isinstance(raw, str):
            raise ValueError(f"{what} ids must be strings")
        for part in raw.split(","):
            mid = part.strip()
            if not mid:
                continue
            if not _ID.fullmatch(mid) or sx.TEMPORARY_ID.fullmatch(mid):
                raise RefusedWrite(f"refused: {quoted(mid)} is not a module id that a registry may name (§7.3.1, §7.1.1)",
                                   code="INVALID_MODULE_ID", rule="§7.3.1")
            if mid not in out:
                out.append(mid)
    return out


def _registry_line(word: str, ids: list[str]) -> str:
    return f"* {word}: {', '.join(ids)}" if ids else f"* {word}:"


def _registry_lines(active: list[str], inactive: list[str]) -> str:
    return _registry_line("ACTIVE", active) + "\n" + _registry_line("INACTIVE", inactive) + "\n"


def _line_starts(text: str) -> list[int]:
    starts = [0]
    pos = text.find("\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def _registry_entry_lines(doc: Document, heading: Heading, starts: list[int]) -> list[tuple[int, str]]:
    """The registry's own lines (line number, 'ACTIVE'|'INACTIVE'), as the parser reads them (§7.3.1).

    A registry line is a list item under the registry header, in the registry's zone, that reads
    ``* ACTIVE: ...`` or ``* INACTIVE: ...``.  Nothing else is: text, comments and other
    blocks around or between them belong to the user.
    """
    text = doc.source
    zone_end = len(starts) + 1
    for b in doc.blocks:
        if b.type == "permission_block" and b.line <= heading.line <= b.end_line:
            zone_end = b.end_line + 1
            break
    out = []
    for b in heading.walk():
        if b is heading or b.type != "list" or not heading.line < b.line <= zone_end:
            continue
        start = starts[b.line - 1]
        end = starts[b.line] if b.line < len(starts) else len(text)
        m = sx.REGISTRY_ENTRY.fullmatch(text[start:end].strip())
        if m:
            out.append((b.line, m.group(1)))
    return sorted(set(out))


def _replace_registry_lines(doc: Document, heading: Heading, active: list[str],
                            inactive: list[str]) -> tuple[Edit, str]:
    """The text with exactly the registry's own lines rewritten (§7.3.1), and the edit that does it.

    The first ``ACTIVE`` line and the first ``INACTIVE`` line are rewritten in place (keeping
    their indentation and line ending); a missing one goes next to the other; any further
    registry line is removed.  Without any registry line the two go right after the header.
    """
    text = doc.source
    starts = _line_starts(text)

    def bounds(n: int) -> tuple[int, int]:
        return starts[n - 1], (starts[n] if n < len(starts) else len(text))

    found = _registry_entry_lines(doc, heading, starts)
    new_active, new_inactive = _registry_line("ACTIVE", active), _registry_line("INACTIVE", inactive)
    if not found:
        start, end = bounds(heading.line)
        eol = "\r\n" if text[start:end].endswith("\r\n") else "\n"
        lead = "" if text[start:end].endswith("\n") else eol
        body = lead + new_active + eol + new_inactive + eol
        edit = Edit(CharOffset(end), 0, len(body), heading.line + 1, 0, body.count("\n"))
        return edit, text[:end] + body + text[end:]
    first = {word: next((n for n, w in found if w == word), None) for word in ("ACTIVE", "INACTIVE")}
    registry = {n for n, _w in found}
    region_start, _ = bounds(found[0][0])
    _, region_end = bounds(found[-1][0])
    parts = []
    for n in range(found[0][0], found[-1][0] + 1):
        start, end = bounds(n)
        line = text[start:end]
        if n not in registry:
            parts.append(line)
            continue
        eol = "\r\n" if line.endswith("\r\n") else ("\n" if line.endswith("\n") else "")
        indent = line[:len(line) - len(line.lstrip(" \t"))]
        if n == first["ACTIVE"]:
            parts.append(indent + new_active + (eol or "\n") if first["INACTIVE"] is None else indent + new_active + eol)
            if first["INACTIVE"] is None:
                parts.append(indent + new_inactive + eol)
        elif n == first["INACTIVE"]:
            if first["ACTIVE"] is None:
                parts.append(indent + new_active + (eol or "\n"))
            parts.append(indent + new_inactive + eol)
    body = "".join(parts)
    old = text[region_start:region_end]
    edit = Edit(CharOffset(region_start), len(old), len(body), found[0][0], old.count("\n"), body.count("\n"))
    return edit, text[:region_start] + body + text[region_end:]


def rewrite_registry(path, active=(), inactive=(), *, actor: str = "ai", known_ids=None, permanent_ids=None,
                     merge: bool = False, store: Store | None = None) -> WriteResult:
    """Rewrite the whole ``MODULE_STATE_REGISTRY`` block (§7.3.1).

    ``merge=True`` keeps the current entries and only moves the given ids (the CLI's
    ``zonemark state --activate/--deactivate``).  ``known_ids``/``permanent_ids`` add the
    modules of other files of the layer.
    """
    check_actor(actor)
    store = store or Store()
    want_active = _clean_ids(active, "active")
    want_inactive = _clean_ids(inactive, "inactive")
    both = set(want_active) & set(want_inactive)
    if both:
        raise RefusedWrite(f"refused: module {sorted(both)[0]} cannot be both ACTIVE and INACTIVE (§7.3.1)",
                           code="CONTRADICTORY_STATE", rule="§7.3.1")
    state: dict = {}

    def transform(data: bytes) -> bytes:
        refuse_not_utf8(path, data)
        text = decode(data)
        doc = parse(text, path=str(path))
        reg = doc.registry
        current: dict[str, str] = {}
        if reg is not None:
            for mid, st, _ln in reg.entry_lines:
                current.setdefault(mid, st)
        if merge:
            act = [m for m, s in current.items() if s == "active" and m not in want_inactive]
            ina = [m for m, s in current.items() if s == "inactive" and m not in want_active]
            act += [m for m in want_active if m not in act]
            ina += [m for m in want_inactive if m not in ina]
        else:
            act, ina = list(want_active), list(want_inactive)
        changed_ids = [m for m in act if current.get(m) != "active"] + [m for m in ina if current.get(m) != "inactive"]
        declared = {m.id: m for m in doc.modules if m.id is not None and m.keyword is None and not m.ignored}
        known = set(declared) | set(known_ids or ())
        permanent = {i for i, m in declared.items() if m.permanent} | set(permanent_ids or ())
        for mid in changed_ids:
            if mid in permanent:
                where = f" (STATE at line {declared[mid].state_line})" if mid in declared else ""
                raise RefusedWrite(f"refused: module {mid} has a permanent STATE{where}; the registry may not "
                                   f"override it (§7.3.1)", code="PERMANENT_STATE", rule="§7.3.1")
            if mid not in known:
                raise RefusedWrite(f"refused: module {mid} is not declared in this file"
                                   f"{' or its layer' if known_ids is not None else ''}; the registry names "
                                   f"modules by id (§7.3.1)", code="UNKNOWN_MODULE", rule="§7.3.1")
        body = _registry_lines(act, ina)
        heading = _registry_heading(doc)
        if heading is None:
            if actor != "user":
                raise RefusedWrite("refused: the file has no MODULE_STATE_REGISTRY; creating one needs a new [P4] "
                                   "zone, and only the user adds permission tags (§7.3.1, §5.5 Invariant 5)",
                                   code="NO_REGISTRY", rule="§7.3.1")
            sep = "" if text.endswith("\n") or not text else "\n"
            block = f"{sep}\n[P4]\n## MODULE_STATE_REGISTRY:\n{body}[/P4]\n"
            edit = Edit(CharOffset(len(text)), 0, len(block), text.count("\n") + 1, 0, block.count("\n"))
            new_text = text + block
            expect = Expect(entries=0, structure=True, registry=True)
            zone_line = None
        else:
            if actor != "user" and (heading.permission_level or 0) < 4:
                where = (f"[P{heading.permission_level}]" if heading.permission_level else "outside any zone")
                level = heading.permission_level
                code = "ZONE_PROPOSE_ONLY" if level == 3 else "ZONE_READ_ONLY"
                raise RefusedWrite(f"refused: the MODULE_STATE_REGISTRY at line {heading.line} is {where}; ai "
                                   f"rewrites it only in [P4]/[P5] (§7.3.1, §5.2)", code=code,
                                   zone=_zone_line_of(doc, heading.line), level=level, rule="§5.2")
            edit, new_text = _replace_registry_lines(doc, heading, act, ina)
            expect = Expect(entries=0, structure=actor == "user", registry=True)
            zone_line = heading.line
        after = parse(new_text, path=str(path))
        verdict = compare(doc, after, edit, expect)
        if not verdict.ok:
            raise barrier_refusal("rewriting the MODULE_STATE_REGISTRY", verdict,
                                  zone=None if heading is None else _zone_line_of(doc, heading.line),
                                  level=None if heading is None else heading.permission_level)
        got = after.registry
        if got is None or list(got.active) != act or list(got.inactive) != ina:
            raise RefusedWrite("refused: the rewritten registry would not read back as requested (§7.3.1)",
                               code="STRUCTURE_CHANGED", rule="§7.3.1")
        new_data = encode(new_text)
        state.update(line=zone_line, active=act, inactive=ina)
        return new_data

    result = store.update(path, transform, actor=actor, action="rewrite MODULE_STATE_REGISTRY")
    if result.changed:
        forget(path)
    return WriteResult(Path(path), result.changed, state.get("line"), state.get("line"), "MODULE_STATE_REGISTRY",
                       result.history_id, (), "full")


def _layer_targets(target: Path, ids: list[str]):
    """The registry file to rewrite and the ids it may name, as the layer resolves them (§7.3.1).

    A folder: its ``[reminder]``, which governs every module of the merged files.  A file: the
    file itself; if it is its folder's reminder it governs the layer's modules, otherwise only
    its own (a registry outside the reminder governs its own file, ``LAYER_REGISTRY_OUT_OF_SCOPE``).
    An id declared only in a file the layer does not merge (``LAYER_ID_CONFLICT``) is refused.
    """
    from ..layer.loader import Layer, LayerError
    folder = target if target.is_dir() else target.parent
    try:
        layer = Layer.load(folder)
    except LayerError as exc:
        if target.is_dir():
            raise RefusedWrite(f"refused: {exc}", code="LAYER_UNREADABLE", rule="§7.3.1") from None
        return target, None, None
    reminders = [f for f in layer.files if f.file_type == "reminder"]
    if target.is_dir():
        if len(reminders) != 1:
            raise RefusedWrite(f"refused: {target} holds {len(reminders)} [reminder] files; give the file whose "
                               f"registry to change", code="NO_REGISTRY" if not reminders else "AMBIGUOUS_REMINDER",
                               rule="§7.3.1")
        path, governs_all = reminders[0].path, True
    else:
        path = target
        me = next((f for f in layer.files if f.path.resolve() == target.resolve()), None)
        governs_all = me is not None and me.merged and me.rel == layer.reminder
        if not governs_all:
            return target, None, None
    modules = [m for m in layer.modules if m.is_module and not m.temporary and not m.info.ignored]
    unmerged = {m.id: f.rel for f in layer.files if not f.merged for m in f.doc.modules
                if m.type == "module" and m.keyword is None and m.id is not None}
    known = {m.module_id for m in modules}
    for mid in ids:
        if mid not in known and mid in unmerged:
            raise RefusedWrite(f"refused: module {mid} is declared in {unmerged[mid]}, which the layer does not "
                               f"merge (an id conflict, LAYER_ID_CONFLICT); resolve it first (§7.1.1)",
                               code="ID_CONFLICT", rule="§7.1.1")
    return path, known, {m.module_id for m in modules if m.info.permanent}


def set_states(target, activate=(), deactivate=(), *, actor: str = "ai", store: Store | None = None) -> WriteResult:
    """Activate/deactivate modules in the registry of a file or of a layer folder's reminder (merged)."""
    target = Path(target)
    wanted = _clean_ids(activate, "active") + _clean_ids(deactivate, "inactive")
    if not wanted:
        raise ValueError("give at least one module id to activate or deactivate")
    path, known, permanent = _layer_targets(target, wanted)
    return rewrite_registry(path, activate, deactivate, actor=actor, known_ids=known, permanent_ids=permanent,
                            merge=True, store=store)


# -- history ---------------------------------------------------------------------------------

def history(path, *, store: Store | None = None):
    """The saved versions of ``path`` (newest first), from the store."""
    return (store or Store()).history(path)


def undo(path, *, actor: str = "user", store: Store | None = None):
    """Restore the version before zonemark's last write; 'user' only."""
    check_actor(actor)
    if actor != "user":
        raise RefusedWrite("refused: undo restores a previous version of the whole file; only the user may undo "
                           "(§5.2)", code="USER_ONLY", rule="§5.2")
    result = (store or Store()).undo(path, actor=actor)
    forget(path)
    if result.changed and result.undone is not None:
        from .proposals import reopen_undone_proposal  # proposals builds on this module: imported at use
        reopen_undone_proposal(path, result.undone)
    return result
