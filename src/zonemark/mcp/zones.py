"""Permission zones as an agent sees them: each with its level, what the AI may do there, and its hash (§5.1, §5.2).

A zone's *hash* is :func:`zonemark.writer.zone_base`: the SHA-256 of its container's header lines and its
inner bytes on disk.
``edit_volatile`` passes the hash the agent read to :func:`zonemark.writer.edit_zone`
(``base_hash``), which refuses with ``STALE_ZONE`` under the file's lock when the zone no longer
has it (ruling W9) — so an agent never overwrites an edit it has not seen.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.text import decode
from ..writer import ZoneIndex, ZoneView, zone_base

#: What the AI may do in each zone (§5.2), as the writer enforces it; shown, never relied upon.
AI_MAY = {1: "nothing (user only)", 2: "nothing (explicit user command only)", 3: "propose_change",
          4: "append_entry", 5: "edit_volatile or append_entry"}


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
        out.append(ZoneFacts(z.line, z.close_line, z.level, z.inline, owner, zone_base(data, index, z)))
    return out
