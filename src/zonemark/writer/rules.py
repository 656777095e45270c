"""Who may change what (§5.2), the actors, and the date rule (§7.5): the one wording of each.

The permission matrix, as the writer enforces it (every face — the CLI's help, the MCP tool
descriptions, the writer's refusals — reads it from here)::

    zone   'ai'                                          'user'
    [P1]   refused (user-only)                           edit_zone
    [P2]   refused (explicit user command)               edit_zone
    [P3]   propose() only; apply_proposal is 'user'-only edit_zone, apply_proposal
    [P4]   append_entry; rewrite of the registry block   everything
           (§7.3.1); editing/deleting needs 'user'
    [P5]   append_entry, edit_zone                       everything

``undo``, ``apply_proposal`` and ``reject_proposal`` are 'user'-only.  The CLI builds its help from
these words when it starts, so this module imports nothing at load: what its checks need (the core's
date rule, the refusal catalogue) is imported when a check runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from .locate import ZoneView

Actor = Literal["ai", "user"]
ACTORS: tuple[Actor, ...] = ("ai", "user")
#: What the actor option means, in words (§5.2).
ACTOR_HELP = "who writes: 'ai' (default) or 'user' (§5.2)"

#: What a log date may be, in words: exactly the parser's rule (§7.5, :func:`zonemark.core.syntax.valid_date_text`).
DATE_HELP = ("a log date as the parser reads it (§7.5): YYYY-MM-DD, or YYYY-MM-DDTHH:MM[:SS[.fff]] optionally "
             "followed by Z, +HH:MM or +HHMM")


def check_actor(actor: str) -> str:
    """``actor`` when it is 'ai' or 'user' (§5.2), else ValueError."""
    if actor not in ACTORS:
        raise ValueError(f"actor must be 'ai' or 'user', not {actor!r}")
    return actor


def refuse_unless_user(actor: str, what: str) -> None:
    """``USER_ONLY`` unless ``actor`` is the user (§5.2): ``what`` is the sentence's subject ('undo restores ...')."""
    from .refusals import RefusedWrite
    check_actor(actor)
    if actor != "user":
        raise RefusedWrite(f"refused: {what} (§5.2)", code="USER_ONLY", rule="§5.2")


def refuse_for_level(zone: ZoneView, actor: str, wants: str) -> None:
    """Raise the §5.2 refusal of ``actor`` changing ``zone`` (a :class:`~.locate.ZoneView`; ``wants``: 'edit' or
    'append')."""
    from .refusals import RefusedWrite
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


def check_date(date: str) -> str:
    """A §7.5 log date, by the parser's own rule (:func:`zonemark.core.syntax.valid_date_text`), or
    :class:`~.refusals.InvalidDate` (a ValueError with the code BAD_DATE)."""
    from ..core import syntax as sx
    from .refusals import InvalidDate
    from .sanitize import quoted
    if not isinstance(date, str):
        raise InvalidDate("date must be a string such as 2026-05-03")
    if not sx.valid_date_text(date.strip()) or "\n" in date.strip():
        raise InvalidDate(f"{quoted(date)} is not {DATE_HELP}")
    return date.strip()


def today(timestamp: bool = False) -> str:
    """Today's log date (§7.5), local time; with ``timestamp`` to the second."""
    import datetime
    now = datetime.datetime.now()
    return now.strftime("%Y-%m-%dT%H:%M:%S") if timestamp else now.strftime("%Y-%m-%d")
