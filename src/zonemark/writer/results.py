"""What each write operation returns: one small result type per operation (§5.2).

Each is what a face shows of a write; ``history_id`` is the store's id of the saved version (None when
nothing was written).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class AppendResult:
    """What :func:`~zonemark.writer.append_entry` did."""

    path: Path
    changed: bool
    line: int | None  # the new entry's header line, or the line of the entry it duplicates
    zone: int | None  # opening line of the zone written into
    target: str  # the container's label
    history_id: str | None
    changes: tuple[str, ...] = ()  # what the sanitiser neutralised
    method: str = ""  # 'incremental' or 'full' re-check
    duplicate_of: int | None = None  # unless_present=True: line of the entry already there


@dataclass(frozen=True)
class ZoneEditResult:
    """What :func:`~zonemark.writer.edit_zone` did; ``zone_hash`` is the zone's base now (the next base_hash)."""

    path: Path
    changed: bool
    line: int | None
    zone: int | None
    target: str
    history_id: str | None
    changes: tuple[str, ...] = ()
    method: str = ""
    zone_hash: str | None = None


@dataclass(frozen=True)
class RegistryResult:
    """What :func:`~zonemark.writer.rewrite_registry` (and ``set_states``) did: the registry's lines now."""

    path: Path
    changed: bool
    line: int | None  # the registry header's line (None: a new registry at the end of the file)
    zone: int | None
    target: str
    history_id: str | None
    changes: tuple[str, ...] = ()
    method: str = "full"
    active: tuple[str, ...] = ()
    inactive: tuple[str, ...] = ()


@dataclass(frozen=True)
class ApplyResult:
    """What :func:`~zonemark.writer.apply_proposal` did: the zone it replaced, and the write."""

    path: Path
    changed: bool
    old_size: int
    new_size: int
    history_id: str | None
    zone: int | None = None


#: A write's result, of whichever operation.
WriteResult = AppendResult | ZoneEditResult | RegistryResult
