"""What a provider's export holds, read into plain data: conversations of messages (issue 21, §N.19).

Only the assistant's turns carry text here: a reader keeps what the AI wrote and counts what it
skipped (images, attachments, tool calls, code output), so the report can say how much.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO


@dataclass(frozen=True, slots=True)
class Message:
    """One assistant turn: its text (the text parts joined by blank lines) and its time, if the export gives one."""

    text: str
    time: _dt.datetime | None
    skipped: int = 0  # parts of the turn that are not text (images, tool calls, code output…)
    too_large: bool = False  # a text over the chat limit of ingest that the reader did not keep


@dataclass(frozen=True, slots=True)
class Conversation:
    """One conversation of an export, its assistant turns in the order of the kept branch."""

    id: str
    title: str  # "" when the export gives none
    time: _dt.datetime | None
    messages: tuple[Message, ...]
    skipped: int = 0  # turns or parts that are not assistant text (user, system, tool, hidden, not text)


class DamagedExport(ValueError):
    """A file that was recognised but cannot be read to its end; the conversations read before it stand."""


Sniff = Callable[[str], bool]
Read = Callable[[BinaryIO], Iterator[Conversation]]


@dataclass(frozen=True, slots=True)
class ExportFormat:
    """One entry of the ordered table of formats: its name, how its content is recognised, and its reader."""

    name: str
    sniff: Sniff
    read: Read


def epoch(value: object) -> _dt.datetime | None:
    """Epoch seconds (a number, or None) as an aware UTC time; None for anything else or out of range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not _is_decimal(value):
        return None
    try:
        return _dt.datetime.fromtimestamp(float(value), _dt.timezone.utc)  # type: ignore[arg-type]
    except (OverflowError, OSError, ValueError):
        return None


def _is_decimal(value: object) -> bool:
    from decimal import Decimal  # ijson gives numbers with a fraction as Decimal
    return isinstance(value, Decimal)


def iso_time(value: object) -> _dt.datetime | None:
    """An ISO 8601 time string (``2025-03-01T10:00:00.000Z``) as an aware time (UTC when none is given); else None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        t = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo is not None else t.replace(tzinfo=_dt.timezone.utc)


def text_of(value: object) -> str:
    """``value`` when it is a string, else ""."""
    return value if isinstance(value, str) else ""
