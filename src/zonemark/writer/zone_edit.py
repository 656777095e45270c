"""Replacing a zone's inner lines: the planner, and the commit (§5.2, §5.5, W9, W42).

'ai' edits only in ``[P5]`` (content sanitised, H6 entry lines allowed); 'user' anywhere (content
verbatim; refused only on new *errors*).  :func:`plan_edit_zone` decides it on one snapshot and writes
nothing; :func:`edit_zone` commits that plan.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..core.text import encode
from .locate import ZoneIndex, ZoneView, container_lines, zone_base_from
from .refusals import RefusedWrite
from .results import ZoneEditResult
from .rules import check_actor, refuse_for_level
from .sanitize import sanitize_entries
from .snapshot import FileSnapshot, Plan, zone_refusal
from .store import Store
from .verify import Expect

_HASH = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class ZoneEditRequest:
    """A zone (its opening line, or a line inside it), its new inner lines as written, and the base read."""

    zone_line: int
    actor: str
    inner: str
    changes: tuple[str, ...]
    base_hash: str | None


def edit_request(zone_line: int, new_content: str, *, actor: str = "ai",
                 base_hash: str | None = None) -> ZoneEditRequest:
    """The request :func:`plan_edit_zone` takes: arguments checked, an AI's content sanitised (W23)."""
    check_actor(actor)
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
    return ZoneEditRequest(int(zone_line), actor, inner, changes, base_hash)


def plan_edit_zone(snap: FileSnapshot, req: ZoneEditRequest) -> Plan[ZoneEditResult]:
    """What replacing the zone's inner lines does to ``snap``; pure.  ``base_hash`` is checked before the
    zone's permission (W42): a stale base is ``STALE_ZONE``, never a permission refusal of another zone."""
    snap.refuse_not_utf8()
    data = snap.data
    index, _cid, zone = snap.locate(lambda ix: (None, ix.zone_at_line(req.zone_line)))
    if req.base_hash is not None and (zone is None or zone.close_start is None
                                      or zone_base_from(container_lines(index, zone), snap.inner(zone))
                                      != req.base_hash):
        _refuse_stale(data, index, zone, req.zone_line, req.base_hash)
    if zone is None:
        raise RefusedWrite(f"refused: no permission zone opens at or contains line {req.zone_line}", code="NO_ZONE",
                           rule="§5.1")
    if zone.close_start is None:
        raise RefusedWrite(f"refused: the [P{zone.level}] zone at line {zone.line} is never closed (§5.4)",
                           code="UNCLOSED_ZONE", zone=zone.line, level=zone.level, rule="§5.4")
    refuse_for_level(zone, req.actor, "edit")
    if zone.inline:
        raise RefusedWrite(f"refused: the zone at line {zone.line} opens inline ('[P{zone.level}] text'); "
                           f"edit it by hand", code="INLINE_ZONE", zone=zone.line, level=zone.level, rule="§5.1")
    base_context = container_lines(index, zone)
    old_zone, inner_rel, close_rel = snap.zone_text(zone)
    expect = Expect(entries=None, owner_line=None, structure=req.actor == "user")
    done = snap.splice(index, zone, old_zone, inner_rel, close_rel - inner_rel, req.inner, zone.line + 1, expect,
                       zone.owner)
    if not done.verdict.ok:
        raise zone_refusal(f"editing the [P{zone.level}] zone at line {zone.line}", zone, done.verdict)
    result = ZoneEditResult(Path(snap.path), done.data != data, zone.line, zone.line, f"zone at line {zone.line}",
                            None, req.changes, done.verdict.method,
                            zone_hash=zone_base_from(base_context, encode(req.inner)))
    return Plan(done.data, result, done.verdict, where=None if zone.owner is None else index.name(zone.owner))


def edit_zone(path: str | os.PathLike[str], zone_line: int, new_content: str, *, actor: str = "ai",
              store: Store | None = None,
              base_hash: str | None = None) -> ZoneEditResult:
    """Replace the inner lines of the zone opened at (or containing) ``zone_line``.

    ``base_hash`` (W9, W42): the :func:`~.locate.zone_base` the caller read.  Under the lock, before the
    permission check, the zone's container and inner bytes must still hash to it, else ``STALE_ZONE`` (saying
    where the zone with that hash is now, when one is): an edit never overwrites a change its author has not
    seen, and an agent whose zone moved is told so, not that the zone now at its line is not its to edit.
    The result's ``zone_hash`` is the next base.
    """
    req = edit_request(zone_line, new_content, actor=actor, base_hash=base_hash)
    done = (store or Store()).commit(path, lambda snap: plan_edit_zone(snap, req), actor=actor,
                                     action=f"edit zone at line {zone_line}")
    r = done.result
    return ZoneEditResult(Path(path), done.changed, r.line, r.zone, r.target, done.history_id, r.changes, r.method,
                          zone_hash=r.zone_hash)


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
