"""Times as the user reads them: the age of a timestamp ("23 min") and the local time of the machine.

The writer stores every time as ISO 8601 in UTC (history entries, proposals); a face shows it in the
local time of the machine it runs on — the user's own, for the CLI and the review page that only
listens on 127.0.0.1 — with how long ago it was, and keeps the exact UTC time at hand.
"""

from __future__ import annotations

import datetime as dt

UNREADABLE = "?"
_UNITS = (("d", 86400), ("h", 3600), ("min", 60))


def parse_time(stamp: str) -> dt.datetime | None:
    """An ISO 8601 time as an aware datetime (a time without a zone is UTC); None when unreadable."""
    try:
        then = dt.datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return None
    return then if then.tzinfo is not None else then.replace(tzinfo=dt.timezone.utc)


def age(stamp: str, now: dt.datetime | None = None) -> str:
    """'5 min', '3 h', '2 d', '12 s' since an ISO timestamp ('?' when unreadable; a time ahead is '0 s')."""
    then = parse_time(stamp)
    if then is None:
        return UNREADABLE
    now = now or dt.datetime.now(dt.timezone.utc)
    seconds = max(0, int((now - then).total_seconds()))
    for unit, size in _UNITS:
        if seconds >= size:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


def local_time(stamp: str, tz: dt.tzinfo | None = None) -> str:
    """``YYYY-MM-DD HH:MM`` in ``tz`` (the machine's local zone by default); the text itself when unreadable."""
    then = parse_time(stamp)
    if then is None:
        return stamp
    return then.astimezone(tz).strftime("%Y-%m-%d %H:%M")


def utc_time(stamp: str) -> str:
    """``YYYY-MM-DD HH:MM:SS UTC``, exact to the second; the text itself when unreadable."""
    then = parse_time(stamp)
    if then is None:
        return stamp
    return then.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def local_date(stamp: str, tz: dt.tzinfo | None = None) -> dt.date | None:
    """The calendar day of ``stamp`` in ``tz`` (local by default): what a date filter compares."""
    then = parse_time(stamp)
    return None if then is None else then.astimezone(tz).date()


__all__ = ["UNREADABLE", "age", "local_date", "local_time", "parse_time", "utc_time"]
