"""What a search returns: frozen records with a ``to_dict()`` for JSON (CLI ``--json``, MCP tools)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Hit:
    """One matching row.

    ``file`` is the path relative to the layer folder, ``path`` the same file as given to the
    search (``path:line`` opens it in an editor); ``line`` is the entry's header line (or the
    container's, or the first line of zone text).  ``kind`` is ``entry`` or what the row holds
    (``module``, ``topic``, ``subtopic``, ``sub_module``, ``nucleus``, ``section``, ``text``).
    ``container`` is the owner's address as ``zonemark append --container`` takes it ('' = the
    file); ``zone`` the permission level (§5.2).  ``snippet`` is one line with the matched words
    between the markers.  ``score`` is FTS5's bm25 turned so that higher is better.
    """

    file: str
    path: str
    line: int
    kind: str
    container: str
    zone: int | None
    date: str | None
    title: str
    snippet: str
    score: float

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SearchResult:
    """The hits of one query, best first, and what the index did to answer it.

    ``match`` is the FTS5 expression that ran; ``more`` says that hits beyond ``limit`` exist;
    ``files`` counts the files searched, ``reindexed`` those read again because they changed;
    ``cache`` is the index file (None when it could not be written and lived in memory only);
    ``skipped`` names the files that could not be read (``rel: why``), left out of this search.
    ``ranked_window`` is set when the query matched so many rows that only that many of the
    most recent were ranked (entries by date; containers and zone text count as most recent).
    """

    query: str
    match: str
    hits: tuple[Hit, ...]
    more: bool
    files: int
    reindexed: int
    cache: str | None
    skipped: tuple[str, ...] = ()
    ranked_window: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "match": self.match, "hits": [h.to_dict() for h in self.hits],
                "more": self.more, "files": self.files, "reindexed": self.reindexed, "cache": self.cache,
                "skipped": list(self.skipped), "ranked_window": self.ranked_window}
