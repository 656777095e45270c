"""Permission zones as an agent sees them, and the base-hash guard of ``edit_volatile`` (§5.1, §5.2).

A zone's *hash* is the SHA-256 of its bytes on disk, from its opening tag line through its
closing tag line.  ``edit_volatile`` takes the hash the agent read and refuses with
``STALE_ZONE`` when the zone no longer has it — so an agent never overwrites an edit it has
not seen.  The comparison runs inside the writer's locked read-modify-write
(:meth:`zonemark.writer.Store.update`), on the very bytes the edit is computed from, after
the writer's own permission checks: no window between the check and the write.

This guard belongs in the writer (an optional ``base_hash`` of ``edit_zone``); it lives
here, as a :class:`~zonemark.writer.Store` that checks before it writes, until it moves.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from ..core.parser import parse
from ..core.text import decode
from ..writer import Store, WriteResult, edit_zone
from ..writer.locate import ZoneIndex, ZoneView

HASH_PATTERN = re.compile(r"[0-9a-f]{64}")
#: What the AI may do in each zone (§5.2), as the writer enforces it; shown, never relied upon.
AI_MAY = {1: "nothing (user only)", 2: "nothing (explicit user command only)", 3: "propose_change",
          4: "append_entry", 5: "edit_volatile or append_entry"}


class StaleZone(Exception):
    """The zone's bytes no longer hash to the base the agent gave."""

    def __init__(self, zone: ZoneView, current: str):
        super().__init__(f"refused: the [P{zone.level}] zone at line {zone.line} changed since you read it "
                         f"(its hash is now {current})")
        self.zone = zone
        self.current = current


def index_of(data: bytes, path) -> ZoneIndex:
    """The writer's zone index of ``data`` (the file's bytes)."""
    return ZoneIndex.build(parse(decode(data), path=str(path)))


def zone_hash(data: bytes, zone: ZoneView) -> str:
    """SHA-256 (hex) of the zone's bytes, opening tag line through closing tag line."""
    end = zone.close_end if zone.close_end is not None else len(data)
    return hashlib.sha256(data[zone.start:end]).hexdigest()


def zone_content(data: bytes, zone: ZoneView) -> str:
    """The zone's inner lines (between its tag lines) as text."""
    end = zone.close_start if zone.close_start is not None else len(data)
    return decode(data[zone.inner_start:end])


@dataclass(frozen=True)
class ZoneFacts:
    """One zone of a file, for ``list_zones`` and ``read_zone``."""

    line: int
    close_line: int | None
    level: int
    inline: bool
    owner_line: int | None  # declaration line of the container an entry appended at its end belongs to
    hash: str


def zone_facts(data: bytes, index: ZoneIndex) -> list[ZoneFacts]:
    out = []
    for i in range(len(index)):
        z = index.zone(i)
        owner = None if z.owner is None else index.header_line(z.owner)
        out.append(ZoneFacts(z.line, z.close_line, z.level, z.inline, owner, zone_hash(data, z)))
    return out


class _BaseHashStore(Store):
    """A :class:`Store` whose update refuses when the zone at ``zone_line`` no longer hashes to ``base_hash``."""

    def __init__(self, zone_line: int, base_hash: str):
        super().__init__()
        self.zone_line = zone_line
        self.base_hash = base_hash

    def update(self, path, transform, *, actor, action):
        def checked(data: bytes) -> bytes:
            new = transform(data)  # the writer's own refusals (§5.2, §5.5) come first
            zone = index_of(data, path).zone_at_line(self.zone_line)
            if zone is not None:
                current = zone_hash(data, zone)
                if current != self.base_hash:
                    raise StaleZone(zone, current)
            return new
        return super().update(path, checked, actor=actor, action=action)


def edit_with_base_hash(path: Path, zone_line: int, content: str, base_hash: str) -> WriteResult:
    """``edit_zone`` as 'ai', refused with :class:`StaleZone` unless the zone still hashes to ``base_hash``."""
    return edit_zone(path, zone_line, content, actor="ai", store=_BaseHashStore(zone_line, base_hash))
