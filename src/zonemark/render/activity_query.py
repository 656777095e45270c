"""Which writes of a layer's history a reader asked for: by actor, file, container, date range, since a visit; and
one page of them.

A query is plain data read from text fields (the review page's GET parameters); a value that is not one the
query knows is a :class:`QueryError` with one line that names the field.  Selecting is one pass over the
writes (linear in the history), and a page is at most ``page_size`` of them.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from .activity import ActivityItem
from .times import local_date, parse_time

Actor = Literal["", "ai", "user"]
ACTORS: tuple[Actor, ...] = ("", "ai", "user")
#: the longest value a text field of the query may hold (a path or a container's label is far shorter)
FIELD_LIMIT = 500
#: the highest page number read (a page past the last shows the last one)
PAGE_LIMIT = 1_000_000
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class QueryError(ValueError):
    """A field of the query that cannot be read: one line naming the field."""


@dataclass(frozen=True)
class ActivityQuery:
    """What to show: ``actor`` '' (everyone), 'ai' or 'user'; ``file`` and ``container`` '' or exact; ``since`` and
    ``until`` inclusive local days; ``new`` only the writes after the last visit; ``page`` from 1."""

    actor: Actor = ""
    file: str = ""
    container: str = ""
    since: dt.date | None = None
    until: dt.date | None = None
    new: bool = False
    page: int = 1

    @property
    def filtered(self) -> bool:
        return bool(self.actor or self.file or self.container or self.since or self.until or self.new)

    def params(self, **changes: object) -> dict[str, str]:
        """The query as GET parameters (only the fields set), with ``changes`` applied (``page=2``)."""
        values = {"actor": self.actor, "file": self.file, "container": self.container,
                  "since": self.since.isoformat() if self.since else "",
                  "until": self.until.isoformat() if self.until else "",
                  "new": "1" if self.new else "", "page": str(self.page)}
        values.update({k: str(v) for k, v in changes.items()})
        return {k: v for k, v in values.items() if v and not (k == "page" and v == "1")}


@dataclass(frozen=True)
class ActivityPage:
    """One page of the writes a query selects, and what the page's form offers."""

    items: tuple[ActivityItem, ...]
    matched: int  # writes the query selects, over all pages
    total: int  # writes in the history
    page: int
    pages: int
    start: int  # how many selected writes come before this page's first
    files: tuple[str, ...]  # every file with a write, sorted: the file filter's choices
    containers: tuple[str, ...]  # every container a write changed, sorted


def _date(params: Mapping[str, str], name: str) -> dt.date | None:
    value = params.get(name, "").strip()
    if not value:
        return None
    if not _DATE.fullmatch(value):
        raise QueryError(f"refused: {name} must be a date YYYY-MM-DD, not {value[:40]!r}")
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise QueryError(f"refused: {name} {value!r} is not a day of the calendar") from None


def read_query(params: Mapping[str, str]) -> ActivityQuery:
    """The query in ``params`` (GET parameters; absent or empty fields ask for everything)."""
    for name in ("actor", "file", "container", "since", "until", "new", "page"):
        if len(params.get(name, "")) > FIELD_LIMIT:
            raise QueryError(f"refused: {name} is longer than {FIELD_LIMIT} characters")
    actor = params.get("actor", "")
    if actor not in ACTORS:
        raise QueryError(f"refused: actor must be ai, user or empty (everyone), not {actor[:40]!r}")
    page_text = params.get("page", "").strip() or "1"
    if not page_text.isdigit() or not 1 <= int(page_text) <= PAGE_LIMIT:
        raise QueryError(f"refused: page must be a number from 1 to {PAGE_LIMIT}, not {page_text[:40]!r}")
    since, until = _date(params, "since"), _date(params, "until")
    if since and until and since > until:
        raise QueryError(f"refused: the range {since} to {until} is empty (since is after until)")
    new = params.get("new", "")
    if new not in ("", "1"):
        raise QueryError(f"refused: new must be 1 or empty, not {new[:40]!r}")
    return ActivityQuery(actor, params.get("file", ""), params.get("container", ""), since, until, new == "1",
                         int(page_text))


def after_visit(item: ActivityItem, visit: dt.datetime | None) -> bool:
    """Whether ``item`` was written after the visit (every write is new when there was no visit)."""
    if visit is None:
        return True
    then = parse_time(item.entry.timestamp)
    return then is None or then > visit


def container_label(item: ActivityItem) -> str:
    """The container the write changed, as its history record names it (RV27); '' when not recorded."""
    return item.entry.container or ""


def matches(item: ActivityItem, query: ActivityQuery, visit: dt.datetime | None = None,
            tz: dt.tzinfo | None = None) -> bool:
    """Whether the query selects ``item`` (days in ``tz``, the machine's local zone by default)."""
    entry = item.entry
    if query.actor and entry.actor != query.actor:
        return False
    if query.file and item.file != query.file:
        return False
    if query.container and container_label(item) != query.container:
        return False
    if query.since or query.until:
        day = local_date(entry.timestamp, tz)
        if day is None or (query.since and day < query.since) or (query.until and day > query.until):
            return False
    return not query.new or after_visit(item, visit)


def select(items: Sequence[ActivityItem], query: ActivityQuery, *, page_size: int,
           visit: dt.datetime | None = None, tz: dt.tzinfo | None = None) -> ActivityPage:
    """The page ``query.page`` of the writes the query selects (newest first, as ``items`` are)."""
    chosen = [item for item in items if matches(item, query, visit, tz)]
    pages = max(1, -(-len(chosen) // page_size))
    page = min(query.page, pages)
    start = (page - 1) * page_size
    return ActivityPage(tuple(chosen[start:start + page_size]), len(chosen), len(items), page, pages, start,
                        tuple(sorted({i.file for i in items})),
                        tuple(sorted({container_label(i) for i in items} - {""})))


def new_entries(items: Sequence[ActivityItem], visit: dt.datetime | None, actor: str = "ai") -> list[tuple[str, int]]:
    """How many writes ``actor`` made after the visit, per container ('' when unknown), most first."""
    counts = Counter(container_label(i) for i in items if i.entry.actor == actor and after_visit(i, visit))
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


__all__ = ["ACTORS", "FIELD_LIMIT", "PAGE_LIMIT", "ActivityPage", "ActivityQuery", "QueryError", "after_visit",
           "container_label", "matches", "new_entries", "read_query", "select"]
