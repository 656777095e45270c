"""Full-text search over a layer (SQLite FTS5, a cache in the layer's ``.zonemark/`` folder).

``search(layer, query, file=, container=, since=, until=, zone=, limit=10, raw=False)`` returns a
:class:`SearchResult` of :class:`Hit` records; every face (the CLI's ``zonemark search``, an MCP
tool ``search_memory``) calls it as is.  The index is refreshed before every query and is never
trusted over the files (:mod:`.index`); queries are words unless ``raw`` (:mod:`.query`); the
rows are entries, containers and zone text (:mod:`.rows`).
"""

from __future__ import annotations

import functools
import os
import sqlite3
from pathlib import Path

from ..core import syntax as sx
from ..layer import LayerError, discover, matches
from .errors import QueryError, SearchError, SearchUnavailable
from .index import RANK_WINDOW, Index, is_corrupt, is_unwritable, require_fts5
from .query import translate
from .results import Hit, SearchResult
from .rows import address
from .snippet import query_tokens, snippet_of

MAX_LIMIT = 1000

__all__ = ["search", "layer_files", "Index", "Hit", "SearchResult", "SearchError", "QueryError",
           "SearchUnavailable", "translate", "require_fts5"]


def layer_files(layer: str | os.PathLike[str], *, confined: bool = False) -> tuple[Path, list[tuple[str, Path]], bool]:
    """The folder the index lives in, the layer's files (relative path, path), and whether ``layer`` is a folder."""
    try:
        root, found = discover(layer, confined=confined)
    except LayerError as exc:
        raise SearchError(str(exc)) from None
    return root, found, Path(layer).is_dir()


def _zones(zone: object) -> tuple[int, ...] | None:
    """The zone filter as levels 1-5 (a level, 'P3', '[P3]', or several), None for every zone."""
    if zone is None:
        return None
    values = zone if isinstance(zone, (list, tuple, set, frozenset)) else [zone]
    out: list[int] = []
    for v in values:
        text = str(v).strip().strip("[]").upper().removeprefix("P")
        if not text.isdigit() or not 1 <= int(text) <= 5:
            raise QueryError(f"zone must be 1-5 (or P1-P5), not {v!r}")
        out.append(int(text))
    return tuple(sorted(set(out))) or None


def _date(value: object, what: str) -> str | None:
    """A ``since``/``until`` date checked (§7.1.2 date text), None when not given."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str) or not sx.valid_date_text(value.strip()):
        raise QueryError(f"{what} must be a date such as 2026-05-03 (or 2026-05-03T14:30), not {value!r}")
    return value.strip()


def _select(root: Path, found: list[tuple[str, Path]], file: object) -> list[tuple[str, Path]]:
    """The files a ``file`` filter names: a relative path, a path on disk, or a glob (``--only`` dialect)."""
    if file is None or (isinstance(file, str) and not file.strip()):
        return found
    if not isinstance(file, str):
        raise QueryError(f"file must be a path or a pattern, not {type(file).__name__}")
    name = file.strip()
    by_rel = [x for x in found if x[0] == name.removeprefix("./")]
    if by_rel:
        return by_rel
    try:
        real = os.path.realpath(name)
        by_path = [x for x in found if os.path.realpath(x[1]) == real]
    except (OSError, ValueError):
        by_path = []
    if by_path:
        return by_path
    by_glob = [x for x in found if matches(x[0], name)]
    if not by_glob:
        raise QueryError(f"no file of the layer matches '{name}' (give a path relative to {root} or a pattern)")
    return by_glob


def search(layer: str | os.PathLike[str], query: str, *, file: str | None = None, container: str | None = None,
           since: str | None = None,
           until: str | None = None, zone: object = None, limit: int = 10, raw: bool = False, rebuild: bool = False,
           in_memory: bool = False, rank_all: bool = False, markers: tuple[str, str] = ("«", "»"),
           confined: bool = False) -> SearchResult:
    """Search the layer at ``layer`` (a folder, or one file) for ``query``; see the module docstring.

    ``file`` narrows to one file (or a glob), ``container`` to a container and everything under
    it ('Maintenance/Tyres', '042'), ``since``/``until`` to entries dated in that range
    (inclusive, at the precision given), ``zone`` to permission levels.  A query matching more
    than :data:`RANK_WINDOW` rows ranks the most recent ones (``SearchResult.ranked_window``)
    unless ``rank_all``.  ``rebuild`` discards the cache first; ``in_memory`` never writes one.
    ``confined`` searches only files that resolve inside the folder (:func:`zonemark.layer.discover`).
    """
    match = translate(query, raw=raw)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise QueryError(f"limit must be a whole number from 1 to {MAX_LIMIT}, not {limit!r}")
    zones = _zones(zone)
    since, until = _date(since, "since"), _date(until, "until")
    if since and until and since[:len(until)] > until:
        raise QueryError(f"since ({since}) is after until ({until})")
    if container is not None and not isinstance(container, str):
        raise QueryError(f"container must be a path such as 'Maintenance/Tyres', not {type(container).__name__}")
    container = address((container or "").strip().strip("/").strip()) or None
    root, found, is_folder = layer_files(layer, confined=confined)
    selected = _select(root, found, file)
    shown_root = Path(layer) if is_folder else None
    attempt_rebuild, attempt_memory = rebuild, in_memory
    for _ in range(3):
        try:
            with Index.open(root, rebuild=attempt_rebuild, in_memory=attempt_memory) as index:
                keep = [rel for rel, _ in found] if is_folder else None
                reindexed, skipped = index.refresh(selected, keep=keep)
                ids = index.file_ids(rel for rel, _ in selected)
                everything = set(ids.values()) == index.all_file_ids()
                scope = None if everything else sorted(ids.values())
                wanted = query_tokens(query, raw=raw)
                with index.reading():
                    rows, more, windowed = index.query(match, file_ids=scope, container=container, since=since,
                                                       until=until, zones=zones, limit=limit, raw=raw,
                                                       window=None if rank_all else RANK_WINDOW)
                    if not rows and container and not index.has_container(container, scope):
                        raise QueryError(f"no container '{container}' in "
                                         f"{'the layer' if file is None else repr(file)} (containers look like "
                                         f"'Maintenance/Tyres', '042' or 'NUCLEUS 1')")
                    # each body is read a slice at a time for its snippet, never whole (B26)
                    hits = tuple(Hit(rel, str(shown_root / rel) if shown_root is not None else str(layer), line,
                                     kind, cont, zone_, date, title,
                                     snippet_of(functools.partial(index.body_pieces, rowid), wanted,
                                                markers=markers), round(score, 4))
                                 for rel, line, kind, cont, zone_, date, title, rowid, score in rows)
                cache = str(index.cache) if index.cache is not None else None
            return SearchResult(query, match, hits, more, len(selected), reindexed, cache,
                                tuple(f"{rel}: {why}" for rel, why in skipped),
                                RANK_WINDOW if windowed else None)
        except sqlite3.DatabaseError as exc:
            if is_corrupt(exc) and not attempt_rebuild:
                attempt_rebuild = True
                continue
            if is_unwritable(exc) and not attempt_memory:
                attempt_memory = True
                continue
            if "locked" in str(exc) or "busy" in str(exc):
                raise SearchError("the search index is busy: another zonemark process kept it locked; "
                                  "try again") from None
            raise SearchError(f"the search index failed: {' '.join(str(exc).split())}") from None
    raise SearchError("the search index could not be rebuilt")  # pragma: no cover - three failures in a row
