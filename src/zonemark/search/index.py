"""The full-text index of a layer: SQLite FTS5 in ``.zonemark/search.sqlite3``, a cache of the files.

**Never trusted over the files.** Before every query each file of the layer is checked: a
file whose size and modification time match what the index recorded (and whose modification
is not so recent that a same-size rewrite within the clock's resolution could hide) is taken
as indexed; any other file is read once — the same bytes give its digest (SHA-256 over the
SHA-256 of each block) and its parse — and re-indexed unless the digest is unchanged.  Files
that left the folder leave the index.  A cache file that SQLite reports corrupt, that another
program wrote, or that an older zonemark wrote with another layout is deleted and rebuilt; a
folder where it cannot be written gets an index in memory.

**Refresh per file, per piece.** The index keeps each file's split points (:mod:`.rows`) and a
digest of each 16 KiB block counted from the start and from the end.  After a change the
blocks locate the changed bytes; only the pieces around them are parsed again, behind a
synthetic head that gives the parser the state it had there (file type, open headers, open
zone).  The result is used only if the re-parsed pieces end in the same state the next
unchanged piece starts from and raise no structural error; otherwise the whole file is parsed.
``tests/services/test_search_incremental.py`` checks on random edits that both ways give the same index.
A row's line is kept relative to the top-level block it sits in (an *anchor*), so the lines
that follow a change move by updating one anchor per block, not one row per entry.  A whole file
is indexed the same way, a window of :data:`WINDOW_CHARS` after the other, so that no tree of the
whole file is held (B19).

**Concurrency.** SQLite in WAL mode: queries never wait for a refresh, and refreshes take the
write lock one file at a time (``BEGIN IMMEDIATE``) and re-check the file under it, so two
processes refreshing the same layer each see the other's work and index nothing twice.
Creating or discarding the cache file happens under a file lock
(``.zonemark/locks/search.lock``).
"""

from __future__ import annotations

import bisect
import codecs
import datetime as _dt
import functools
import hashlib
import heapq
import os
import sqlite3
import time
from array import array
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from itertools import accumulate
from pathlib import Path
from typing import Any

from ..core.document import Document
from ..core.nodes import Heading
from ..core.parser import parse
from ..core.scanner import scan_structure
from ..core.tree import HeadingFrame, ZoneFrame
from ..core.text import decode, encode
from .errors import QueryError, SearchUnavailable
from .rows import SPLIT_LEVELS, Row, Split, rows_of, shown, split_points, stack_at
from .rows import _clean as stored_text

STATE_DIR = ".zonemark"
CACHE_NAME = "search.sqlite3"
LOCK_NAME = "search.lock"
APPLICATION_ID = 0x7A6D7331  # 'zms1'
SCHEMA_VERSION = 2  # 2: container paths stored in Unicode NFC
TOKENIZER = "unicode61 remove_diacritics 2"
#: bm25 weights of the FTS columns: title, body, context (file title and container names).
WEIGHTS = (4.0, 1.0, 0.5)
#: A query matching more rows than this ranks the most recent ones (see :meth:`Index.query`).
RANK_WINDOW = 2000
#: Row ids sort by date: the day (proleptic ordinal) in the high bits, a sequence below.  Rows
#: with no date (containers, zone text, undated nodes) sort after every date.
SEQ_BITS = 32
UNDATED_DAY = 3_700_000
BLOCK = 1 << 14
#: A file modified less than this before it was read is hashed again at the next refresh,
#: even if its size and time look unchanged (a rewrite within the clock's resolution).
RACY_NS = 2_000_000_000
BUSY_TIMEOUT = 60.0
#: Parser codes after which a file is always parsed whole: they change how what follows is read.
STRUCTURAL = frozenset({"UNCLOSED_PERMISSION_BLOCK", "MISMATCHED_PERMISSION_BLOCK", "NESTED_PERMISSION_BLOCK",
                        "UNCLOSED_CODE_FENCE", "UNCLOSED_HTML_COMMENT", "UNCLOSED_FRONTMATTER"})

_SCHEMA = f"""
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(
    id INTEGER PRIMARY KEY, rel TEXT NOT NULL UNIQUE, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    read_ns INTEGER NOT NULL, digest BLOB NOT NULL, file_type TEXT, title TEXT, incremental INTEGER NOT NULL,
    seg_len BLOB NOT NULL, seg_nl BLOB NOT NULL, seg_level BLOB NOT NULL, seg_stack BLOB NOT NULL,
    seg_anchor BLOB NOT NULL, front BLOB NOT NULL, back BLOB NOT NULL);
CREATE TABLE stacks(file_id INTEGER NOT NULL, id INTEGER NOT NULL, headers BLOB NOT NULL,
    PRIMARY KEY(file_id, id)) WITHOUT ROWID;
CREATE TABLE anchors(file_id INTEGER NOT NULL, id INTEGER NOT NULL, line INTEGER NOT NULL,
    PRIMARY KEY(file_id, id)) WITHOUT ROWID;
CREATE TABLE entries(
    id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, anchor INTEGER NOT NULL, rel INTEGER NOT NULL,
    kind TEXT NOT NULL, container TEXT NOT NULL, names TEXT NOT NULL, zone INTEGER, date TEXT);
CREATE INDEX entries_by_anchor ON entries(file_id, anchor, rel);
CREATE VIRTUAL TABLE fts USING fts5(title, body, context, tokenize='{TOKENIZER}');
"""

#: Stored in the cache: a file written with another schema (an older zonemark) is rebuilt.
_SCHEMA_DIGEST = hashlib.sha256(_SCHEMA.encode()).hexdigest()[:16]


@functools.cache
def require_fts5() -> None:
    """Raise :class:`SearchUnavailable` when this Python's SQLite has no FTS5."""
    try:
        con = sqlite3.connect(":memory:")
        try:
            con.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{TOKENIZER}')")
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise SearchUnavailable(f"this Python's sqlite3 module (SQLite {sqlite3.sqlite_version}) has no FTS5 "
                                f"({exc}); zonemark search needs SQLite built with FTS5") from None


def is_corrupt(exc: BaseException) -> bool:
    """Whether a SQLite error means the cache file is damaged or not a database at all."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith("SQLITE_CORRUPT") or name == "SQLITE_NOTADB" or (
        isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)
        and "malformed" in str(exc))


def is_unwritable(exc: BaseException) -> bool:
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_IOERR", "SQLITE_FULL"))


# -- per-file state ----------------------------------------------------------------------------

DIGEST = 16  # bytes kept of each block's SHA-256


@dataclass
class _Stored:
    """What the index holds about one file.

    The pieces (split points) are kept as parallel arrays: byte length, newline count, zone
    level (0: the piece starts a top-level block), stack id and anchor id (the top-level block).
    """

    id: int
    size: int
    mtime_ns: int
    read_ns: int
    digest: bytes
    file_type: str | None
    title: str | None
    incremental: bool
    lens: array[int]
    nls: array[int]
    levels: bytes
    stack_ids: array[int]
    anchors: array[int]
    front: bytes
    back: bytes


@dataclass(frozen=True)
class _Fingerprint:
    """A file's digest (SHA-256 over its size and its blocks' SHA-256s) and its block digests from each end."""

    digest: bytes
    front: bytes
    back: bytes


def _fingerprint(data: bytes) -> _Fingerprint:
    view = memoryview(data)
    n = len(data)
    full = [hashlib.sha256(view[k:k + BLOCK]).digest() for k in range(0, n, BLOCK)]
    back = b"".join(hashlib.sha256(view[max(0, n - k - BLOCK):n - k]).digest()[:DIGEST]
                    for k in range(0, n, BLOCK))
    digest = hashlib.sha256(n.to_bytes(8, "little") + b"".join(full)).digest()
    return _Fingerprint(digest, b"".join(d[:DIGEST] for d in full), back)


def _common_blocks(old: bytes, new: bytes) -> int:
    k = 0
    limit = min(len(old), len(new))
    while k < limit and old[k:k + DIGEST] == new[k:k + DIGEST]:
        k += DIGEST
    return k // DIGEST


def _byte_offsets(text: str, offsets: list[int]) -> list[int]:
    """UTF-8 byte offsets of increasing character offsets into ``text`` (kept bytes count as one)."""
    if text.isascii():
        return list(offsets)
    out, prev, acc = [], 0, 0
    for v in offsets:
        # a slice of a long piece at a time: a piece's copy and its bytes were 3x a long window (B23)
        acc += sum(len(encode(text[k:min(k + BYTES_SLICE, v)])) for k in range(prev, v, BYTES_SLICE))
        out.append(acc)
        prev = v
    return out


#: :func:`_byte_offsets` counts the bytes of this many characters at a time.
BYTES_SLICE = 1 << 16


def _pieces(data: bytes, starts: list[int], end: int) -> tuple[list[int], list[int]]:
    """Byte lengths and newline counts of the pieces beginning at ``starts`` (the last runs to ``end``)."""
    bounds = list(starts[1:]) + [end]
    return [b - a for a, b in zip(starts, bounds)], [data.count(b"\n", a, b) for a, b in zip(starts, bounds)]


#: A file of invalid UTF-8 longer than this is decoded a slice of lines at a time (see :func:`_decoded`).
DECODE_SLICE = 1 << 20


def _utf8_text(held: list[bytes]) -> str | None:
    """The text of the bytes ``held`` holds when they are UTF-8, the bytes then taken out of it (freed once the
    caller lets go); else None, found at the first byte that is not (no string of the rest is made)."""
    try:
        text = held[0].decode("utf-8")
    except UnicodeDecodeError:
        return None
    held.pop()
    return text


def _decoded(held: list[bytes]) -> str:
    """:func:`decode` of the bytes ``held`` holds — a file that is not UTF-8 (:func:`_utf8_text` said so) —
    taken out of it and freed before the text is joined (B23).

    It is decoded in slices cut after a line feed (a byte no UTF-8 sequence holds, so each slice decodes as
    it does in the whole): decoding kept bytes whole grows the string from one to two to four bytes a
    character, over-allocated, with the bytes alive, 8.5x the file of random bytes; the slices and their join
    are 7.7x."""
    data = held.pop()
    if len(data) <= DECODE_SLICE:
        return decode(data)
    pieces, pos, n = [], 0, len(data)
    while pos < n:
        end = data.find(b"\n", min(pos + DECODE_SLICE, n - 1))
        end = n if end < 0 else end + 1
        pieces.append(decode(data[pos:end]))
        pos = end
    del data
    return "".join(pieces)


#: An untyped file whose title is longer than this is not cut into windows (each window's head repeats it).
MAX_HEAD_LINE = 1 << 12


def _untyped_head(title: str | None, stack: tuple[str, ...]) -> str:
    """The head of an untyped file's window (B26): its title (or a line that is none), then the open headers
    in a zone, as :func:`_prefix` gives them to a typed file's window."""
    head = f"# {title}\n\n" if title is not None else "x\n\n"
    if stack:
        head += "[P1]\n" + "".join(h + "\n" for h in stack) + "[/P1]\n\n"
    return head


def _prefix(file_type: str, stack: tuple[str, ...], level: int) -> str:
    """A synthetic head that leaves the parser as the file leaves it at a split point."""
    head = f"# x [{file_type}]\n\n"
    if stack:
        head += "[P1]\n" + "".join(h + "\n" for h in stack) + "[/P1]\n\n"
    if level:
        head += f"[P{level}]\n"
    return head


def _anchored(rows: list[Row], anchor_lines: list[int], anchor_ids: list[int]) -> list[tuple[int, int, Row]]:
    """Each row with the anchor it lies in (the last one starting at or before its line) and its line there."""
    out = []
    for r in rows:
        k = bisect.bisect_right(anchor_lines, r.line) - 1
        out.append((anchor_ids[k], r.line - anchor_lines[k], r))
    return out


#: A typed file's full index is built a window of about this many characters at a time (B19).
WINDOW_CHARS = 1 << 14
#: The distinct header stacks a full index remembers while it cuts windows (a stack recurs while its
#: headers are open, so the recent ones are enough; a stack seen again after it is stored twice).
MAX_KNOWN_STACKS = 1024
#: A whole file's parse hands its rows to SQLite this many at most at a time (B23).
MAX_BATCH_ROWS = 1024


@dataclass(frozen=True)
class _Cuts:
    """Where a file may be cut into windows: its zones' starts and its zones' H6 entries (offset << 3 | level)."""

    file_type: str | None
    title: str | None
    offsets: array[int]


def _cuts(text: str) -> _Cuts:
    """The candidate cuts of ``text``, read in one scan of its headers and zones (no tree, no finding).

    A candidate is only a guess: the window parsed up to it checks that it is a split point (:mod:`.rows`)."""
    zones, entries = array("q"), array("q")

    def on_header(frame: HeadingFrame) -> None:
        if (frame.level == 6 and frame.header.kind == "log" and not frame.refused
                and frame.plevel in SPLIT_LEVELS):
            entries.append(frame.start << 3 | frame.plevel)

    def on_zone(frame: ZoneFrame) -> None:
        zones.append(frame.start << 3)

    file_type, title = scan_structure(text, on_header, on_zone)
    return _Cuts(file_type, title, array("q", heapq.merge(zones, entries)))


def _ends_at_cut(doc: Document, w: int, level: int) -> bool:
    """Whether a window parsed up to ``w`` (a cut at zone ``level``, 0 between zones) ends as the next starts.

    The conditions a refresh checks before it keeps a re-parsed piece (:meth:`Index._incremental`)."""
    last = doc.blocks[-1]
    if last.type != "permission_block" or last.start >= w or (level and last.permission_level != level):
        return False
    # a header left open (a refused one, the registry) would adopt the next entry
    return not (level and last.children and isinstance(last.children[-1], Heading) and last.children[-1].level < 6)


# -- the index ---------------------------------------------------------------------------------

def _parsed_window(head: str, window: str, level_end: int, level_start: int, stack_start: tuple[str, ...],
                   a: int = 0, b: int | None = None) -> tuple[Document, int, int, list[Split]] | None:
    """A window of a file parsed behind ``head`` (``_prefix``'s synthetic head), its zone closed after it: the
    parse, where the window starts and ends in it, and its split points; None when the window is structurally
    broken or does not start as the index has it (``level_start``, ``stack_start``): the window is then not kept.

    The window is ``window[a:b]``: its slice is freed once joined to the head, so that the parse holds the
    text it parses and not a copy of the window beside it (B23)."""
    b = len(window) if b is None else b
    tail = f"[/P{level_end}]\n" if level_end else ""
    doc = parse("".join((head, window[a:b], tail)) if tail else head + window[a:b], tree=True)
    if any(d.code in STRUCTURAL for d in doc.diagnostics):
        return None
    p0, w = len(head), len(head) + b - a
    splits = split_points(doc, p0)
    if not splits or (splits[0].offset, splits[0].level, splits[0].stack) != (p0, level_start, stack_start):
        return None
    return doc, p0, w, splits


def _scratch() -> sqlite3.Connection:
    """An index that no cache keeps (``in_memory``, or a folder that cannot hold one): SQLite's private
    temporary database (file name ``""``). Its pages live in SQLite's page cache and the ones past it go
    to a temporary file SQLite deletes when the connection closes, so a large layer's index is not held
    in RAM as ``":memory:"`` held it, 8x the file of many small zones (B19)."""
    return sqlite3.connect("", isolation_level=None)


class _WindowPieces:
    """The pieces of a file indexed a window at a time (B19, B26), as the files row stores them: each piece's
    bytes, lines, level, stack and anchor, and the stacks and anchors met so far."""

    def __init__(self) -> None:
        self.lens, self.nls, self.stack_ids, self.anchors = array("I"), array("I"), array("I"), array("I")
        self.levels = bytearray()
        self.anchor_lines = array("I")
        self.stacks: dict[tuple[str, ...], int] = {}  # the recent stacks' ids (a file's stacks recur while open)
        self.next_sid = 0

    def add(self, fid: int, src: str, splits: Sequence[Split], starts: Sequence[int], ends: Sequence[int],
            byte_starts: Sequence[int], shift: int) -> tuple[list[tuple[int, int, bytes]],
                                                             list[tuple[int, int, int]]]:
        """A window's pieces (``splits`` at ``starts``/``ends`` of ``src``, their byte offsets ``byte_starts`` and
        one more; their lines ``shift`` from the file's); returns the rows of the stacks and anchors it adds."""
        self.lens.extend(y - x for x, y in zip(byte_starts, byte_starts[1:]))
        self.nls.extend(src.count("\n", x, y) for x, y in zip(starts, ends))
        stacks, anchor_lines = self.stacks, self.anchor_lines
        new_stacks: list[tuple[int, int, bytes]] = []
        new_anchors: list[tuple[int, int, int]] = []
        for sp in splits:
            sid = stacks.get(sp.stack)
            if sid is None:
                if len(stacks) >= MAX_KNOWN_STACKS:
                    stacks.clear()
                sid = stacks[sp.stack] = self.next_sid
                self.next_sid += 1
                new_stacks.append((fid, sid, encode("\n".join(sp.stack))))
            self.stack_ids.append(sid)
            self.levels.append(sp.level)
            if sp.level == 0:
                new_anchors.append((fid, len(anchor_lines), sp.line + shift))
                anchor_lines.append(sp.line + shift)
            self.anchors.append(len(anchor_lines) - 1)
        return new_stacks, new_anchors

    def rows(self, made: Iterable[Row], shift: int) -> list[tuple[int, int, Row]]:
        """Each row of a window with its anchor and its line from it."""
        anchor_lines = self.anchor_lines
        out = []
        for r in made:
            line = r.line + shift
            at = bisect.bisect_right(anchor_lines, line) - 1
            out.append((at, line - anchor_lines[at], r))
        return out


class Index:
    """One layer folder's index; use as a context manager (``with Index.open(root) as ix``)."""

    def __init__(self, root: Path, con: sqlite3.Connection, cache: Path | None):
        self.root = root
        self.con = con
        self.cache = cache
        self.counts = {"incremental": 0, "full": 0}  # how files were re-indexed (tests, benchmarks)

    # -- opening -------------------------------------------------------------------------------
    @classmethod
    def open(cls, root: str | os.PathLike[str], *, rebuild: bool = False, in_memory: bool = False,
             busy_timeout: float = BUSY_TIMEOUT) -> "Index":
        """Open (creating, or rebuilding when damaged or foreign) the index of the folder ``root``."""
        require_fts5()
        root = Path(root)
        if in_memory:
            return cls(root, _create(_scratch()), None)
        state = root / STATE_DIR
        cache = state / CACHE_NAME
        try:
            (state / "locks").mkdir(parents=True, exist_ok=True)
            import filelock
            with filelock.FileLock(str(state / "locks" / LOCK_NAME), timeout=busy_timeout):
                if rebuild:
                    _discard(cache)
                con = _connect(cache, busy_timeout)
                try:
                    status = _status(con)
                except sqlite3.DatabaseError as exc:
                    if not is_corrupt(exc):
                        con.close()
                        raise
                    status = "foreign"
                if status == "foreign":
                    con.close()
                    _discard(cache)
                    con = _connect(cache, busy_timeout)
                    status = "empty"
                if status == "empty":
                    _create(con)
                return cls(root, con, cache)
        except (OSError, sqlite3.OperationalError) as exc:
            if isinstance(exc, sqlite3.OperationalError) and not is_unwritable(exc):
                raise
            return cls(root, _create(_scratch()), None)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- refreshing ----------------------------------------------------------------------------
    def refresh(self, files: Iterable[tuple[str, str | os.PathLike[str]]], *, keep: Iterable[str] | None = None
                ) -> tuple[int, list[tuple[str, str]]]:
        """Bring the index up to date with ``files`` ((relative path, path) pairs).

        ``keep`` (relative paths) drops every indexed file not in it: the files that left the
        folder.  Returns how many files were re-indexed and those that could not be read (and why).
        """
        files = list(files)
        known = {rel: (fid, size, mtime, read_ns) for fid, rel, size, mtime, read_ns in
                 self.con.execute("SELECT id, rel, size, mtime_ns, read_ns FROM files")}
        if keep is not None:
            wanted = set(keep)
            gone = [fid for rel, (fid, *_rest) in known.items() if rel not in wanted]
            if gone:
                with self._transaction():
                    for fid in gone:
                        self._drop_file(fid)
        reindexed = 0
        skipped: list[tuple[str, str]] = []
        for rel, path in files:
            try:
                st = os.stat(path)
            except OSError as exc:
                skipped.append((rel, exc.strerror or str(exc)))
                continue
            k = known.get(rel)
            if k is not None and _clean(k[1], k[2], k[3], st):
                continue
            try:
                reindexed += self._refresh_file(rel, path)
            except OSError as exc:
                skipped.append((rel, exc.strerror or str(exc)))
        return reindexed, skipped

    def _refresh_file(self, rel: str, path: str | os.PathLike[str]) -> int:
        with self._transaction():
            cur = self._stored(rel)
            with open(path, "rb") as handle:
                st = os.fstat(handle.fileno())
                if cur is not None and _clean(cur.size, cur.mtime_ns, cur.read_ns, st):
                    return 0  # another process indexed it while this one waited for the lock
                read_ns = time.time_ns()
                data = handle.read()
            fp = _fingerprint(data)
            if cur is not None and cur.digest == fp.digest:
                self.con.execute("UPDATE files SET size = ?, mtime_ns = ?, read_ns = ? WHERE id = ?",
                                 (len(data), st.st_mtime_ns, read_ns, cur.id))
                return 0
            stamp = (st.st_mtime_ns, read_ns)
            if cur is not None and cur.incremental and self._incremental(cur, data, fp, stamp):
                self.counts["incremental"] += 1
                return 1
            held = [data]
            del data  # the full index holds the file's text, not its bytes as well (B19)
            self._full(rel, path, cur, held, fp, stamp)
            self.counts["full"] += 1
            return 1

    def _full(self, rel: str, path: str | os.PathLike[str], cur: _Stored | None, held: list[bytes],
              fp: _Fingerprint, stamp: tuple[int, int]) -> None:
        """Index a whole file; ``held`` holds its bytes, taken out so that they are freed once decoded."""
        if cur is not None:
            fid = cur.id
            self._clear_file(fid)
        else:
            new_id = self.con.execute(
                "INSERT INTO files(rel, size, mtime_ns, read_ns, digest, incremental, seg_len, seg_nl, seg_level, "
                "seg_stack, seg_anchor, front, back) VALUES (?, 0, 0, 0, x'', 0, x'', x'', x'', x'', x'', x'', x'')",
                (rel,)).lastrowid
            assert new_id is not None  # an INSERT sets the row id
            fid = new_id
        size = len(held[0])
        text = _utf8_text(held)  # a UTF-8 file is decoded once (checking it apart first decoded it twice)
        if text is None and size > DECODE_SLICE:
            if self._untyped_windows(fid, held[0], fp, stamp):
                return
            self._clear_file(fid)  # what the windows stored before the file could not be cut
        texts = [text if text is not None else _decoded(held)]
        del text
        if self._windowed(fid, texts, size, fp, stamp):
            return
        self._clear_file(fid)  # what the windows stored before one could not be cut there
        # the text's parse: the blocks parse_bytes gives of its bytes, without encoding them again (B23)
        doc = parse(texts.pop(), path=str(path), tree=True)
        src = doc.source
        splits = split_points(doc, 0)
        starts = [sp.offset for sp in splits]
        bounds = starts[1:] + [len(src)]
        byte_bounds = _byte_offsets(src, starts + [len(src)])
        lens = [y - x for x, y in zip(byte_bounds, byte_bounds[1:])]
        nls = [src.count("\n", x, y) for x, y in zip(starts, bounds)]
        del starts, bounds, byte_bounds
        incremental = doc.file_type is not None and not any(d.code in STRUCTURAL for d in doc.diagnostics)
        stack_ids = self._stack_ids(fid, [sp.stack for sp in splits], {})
        anchors, anchor_lines, anchor_ids, aid = [], [], [], -1
        for sp in splits:
            if sp.level == 0:
                aid += 1
                anchor_lines.append(sp.line)
                anchor_ids.append(aid)
            anchors.append(aid)
        self.con.executemany("INSERT INTO anchors(file_id, id, line) VALUES (?, ?, ?)",
                             [(fid, i, ln) for i, ln in zip(anchor_ids, anchor_lines)])
        batch: list[Row] = []
        held_chars = [0]

        def insert(row: Row | None) -> None:
            """Rows reach SQLite a few at a time, not listed for the whole file (B23)."""
            if row is not None:
                batch.append(row)
                held_chars[0] += len(row.body)
                if held_chars[0] < WINDOW_CHARS and len(batch) < MAX_BATCH_ROWS:
                    return
            self._insert_rows(fid, _anchored(batch, anchor_lines, anchor_ids))
            batch.clear()
            held_chars[0] = 0

        rows_of(doc, sink=insert)
        insert(None)
        self._save_file(fid, size, fp, stamp, doc.file_type, doc.title, incremental, lens, nls,
                        bytes(sp.level for sp in splits), stack_ids, anchors)

    def _clear_file(self, fid: int) -> None:
        self._delete_rows(fid, "1")
        self.con.execute("DELETE FROM stacks WHERE file_id = ?", (fid,))
        self.con.execute("DELETE FROM anchors WHERE file_id = ?", (fid,))

    def _windowed(self, fid: int, texts: list[str], size: int, fp: _Fingerprint, stamp: tuple[int, int]) -> bool:
        """Index a typed file a window of about :data:`WINDOW_CHARS` at a time (B19); False when it cannot be cut.

        The windows are cut at split points (:mod:`.rows`) and each is parsed behind the synthetic head
        of :func:`_prefix`, as a refresh re-parses a changed piece; each window's tree, rows and splits
        are stored and freed before the next is parsed.  A cut whose window does not end in the state the
        next one starts from is moved on (the window doubled); a structural error, a file without a type
        or a window that does not start where it was cut gives False, and the file is parsed whole.
        """
        text = texts[0]  # given in a list, emptied once the last window is read, so that the text is freed then
        cuts = _cuts(text)
        file_type, title = cuts.file_type, cuts.title or ""
        if file_type is None:
            return False
        pieces = _WindowPieces()
        a, level_a, line_a = 0, 0, 1
        stack_a: tuple[str, ...] = ()
        span, k = WINDOW_CHARS, 0
        offsets = cuts.offsets
        while True:
            k = bisect.bisect_left(offsets, (a + span) << 3, k)
            last = k >= len(offsets)
            b, level_b = (len(text), 0) if last else (offsets[k] >> 3, offsets[k] & 7)
            head = _prefix(file_type, stack_a, level_a) if a else ""
            parsed = _parsed_window(head, text, level_b, level_a, stack_a, a, b)
            if parsed is None:
                return False
            doc, p0, w, splits = parsed
            del parsed  # the tuple held the window's parse after ``del doc`` (B23)
            if any(sp.offset >= w for sp in splits) or (not last and not _ends_at_cut(doc, w, level_b)):
                if last:
                    return False
                span *= 2  # no cut here: a longer window, so that a file of no cut costs a few parses of it
                continue
            line0 = head.count("\n") + 1
            shift = line_a - line0
            src = doc.source  # the window is src[p0:w]
            new_nl = src.count("\n", p0, w)
            starts = [sp.offset for sp in splits]
            ends = starts[1:] + [w]
            byte_starts = _byte_offsets(src, starts + [w])
            new_stacks, new_anchors = pieces.add(fid, src, splits, starts, ends, byte_starts, shift)
            made: list[Row] = []  # given to a sink, a long body is made as the bytes SQLite is handed (B23)
            rows_of(doc, first_line=line0, last_line=None if last else line0 + new_nl - 1, title=title,
                    sink=made.append)
            rows = pieces.rows(made, shift)
            if not last:
                stack_a, level_a = stack_at(doc, w), level_b
            else:
                texts.clear()
                del text
            del doc, splits, src, made  # the window's tree (the last one's text) is freed before SQLite copies rows
            self._store_window(fid, new_stacks, new_anchors, rows)
            del rows
            if last:
                break
            a, line_a, span = b, line_a + new_nl, WINDOW_CHARS
        file_title = cuts.title
        del cuts
        self._save_file(fid, size, fp, stamp, file_type, file_title, True, pieces.lens, pieces.nls,
                        bytes(pieces.levels), pieces.stack_ids, pieces.anchors)
        return True

    def _untyped_windows(self, fid: int, data: bytes, fp: _Fingerprint, stamp: tuple[int, int]) -> bool:
        """Index a file that is not UTF-8 and has no type a window of its bytes at a time (B26); False when the
        file has a type or cannot be cut, and is then indexed as before.

        A window is about :data:`DECODE_SLICE` bytes cut after a line feed (each decodes as in the whole), parsed
        behind a head of the file's first line and the open headers (:func:`_untyped_head`); its top-level blocks
        but the last, which may go on past the window, are stored, and the next window starts at that last block.
        A window whose parse meets a structural error, does not start where it was cut, or holds no second
        top-level block is doubled. The whole text (four bytes a character for random bytes) and its parse are
        never held: decoding and parsing it whole was 9x the file."""
        n = len(data)
        pieces = _WindowPieces()
        title: str | None = None
        a, line_a, span = 0, 1, DECODE_SLICE
        stack_a: tuple[str, ...] = ()
        kind_a: tuple[str, int | None] = ("", None)  # the block at ``a`` as the window before read it
        title_end = 0
        while True:
            end = data.find(b"\n", min(a + span, n - 1))
            end = n if end < 0 else end + 1
            last = end >= n
            head = _untyped_head(title, stack_a) if a else ""
            doc = parse(decode(encode(head) + data[a:end]) if a else decode(data[:end]), tree=True)
            if not a:
                if doc.file_type is not None or (doc.title is not None and len(doc.title) > MAX_HEAD_LINE):
                    return False
                title = doc.title
                if title is not None:  # never cut at the title: in a window's head it would be read twice
                    titled = [b.start for b in doc.blocks if isinstance(b, Heading) and b.level == 1]
                    if not titled:
                        return False
                    title_end = titled[0] + 1
            elif doc.title != title:
                return False  # the head does not leave the parser as the file does there
            p0 = len(head)
            src = doc.source
            splits = split_points(doc, p0)
            if not splits or (splits[0].offset, splits[0].level, splits[0].stack) != (p0, 0, stack_a):
                return False
            opening = next(b for b in doc.blocks if b.start >= p0)
            if a and (opening.type, getattr(opening, "level", None)) != kind_a:
                return False
            w = len(src)
            if not last:
                w = doc.blocks[-1].start
                if w < title_end or w <= p0 or any(d.code in STRUCTURAL for d in doc.diagnostics):
                    del doc, src, splits
                    span += span // 2  # no cut: a longer window (a file of no cut costs a few parses of it)
                    continue
            line0 = head.count("\n") + 1
            shift = line_a - line0
            new_nl = src.count("\n", p0, w)
            splits = [sp for sp in splits if sp.offset < w]
            starts = [sp.offset for sp in splits]
            ends = starts[1:] + [w]
            byte_starts = _byte_offsets(src, starts + [w])
            new_stacks, new_anchors = pieces.add(fid, src, splits, starts, ends, byte_starts, shift)
            made: list[Row] = []
            rows_of(doc, first_line=line0, last_line=None if last else line0 + new_nl - 1, title=title or "",
                    sink=made.append)
            rows = pieces.rows(made, shift)
            if not last:
                stack_a = stack_at(doc, w)
                kind_a = (doc.blocks[-1].type, getattr(doc.blocks[-1], "level", None))
                a += byte_starts[-1] - byte_starts[0]
            del doc, splits, src, made  # the window's tree is freed before SQLite copies its rows
            self._store_window(fid, new_stacks, new_anchors, rows)
            del rows
            if last:
                break
            line_a, span = line_a + new_nl, DECODE_SLICE
        self._save_file(fid, n, fp, stamp, None, title, False, pieces.lens, pieces.nls, bytes(pieces.levels),
                        pieces.stack_ids, pieces.anchors)
        return True

    def _incremental(self, cur: _Stored, data: bytes, fp: _Fingerprint, stamp: tuple[int, int]) -> bool:
        """Re-index only the pieces around the changed bytes; False when the whole file must be parsed.

        Pieces ``[i, j)`` (old numbering) are replaced by the pieces of the re-parsed window;
        pieces from ``j`` on keep their bytes and move by the change in size and lines.
        """
        old_n, new_n = cur.size, len(data)
        same_front = min(_common_blocks(cur.front, fp.front) * BLOCK, old_n, new_n)
        same_back = min(_common_blocks(cur.back, fp.back) * BLOCK, old_n - same_front, new_n - same_front)
        starts = list(accumulate(cur.lens, initial=0))  # starts[k] of piece k; starts[n] = the old size
        lines = list(accumulate(cur.nls, initial=1))
        n = len(cur.lens)
        i = bisect.bisect_right(starts, max(same_front - 1, 0), 0, n) - 1
        if i <= 0:
            return False  # the head changed (title, frontmatter): parse it all
        j = max(bisect.bisect_left(starts, old_n - same_back, 0, n), i + 1)
        a, old_end = starts[i], starts[j]
        new_end = new_n - (old_n - old_end)
        if new_end <= a:
            return False
        stack_i, level_i = self._stack(cur.id, cur.stack_ids[i]), cur.levels[i]
        level_j = cur.levels[j] if j < n else 0
        assert cur.file_type is not None  # only a file with a type is stored as incremental (_full)
        head = _prefix(cur.file_type, stack_i, level_i)
        window = decode(data[a:new_end])
        parsed = _parsed_window(head, window, level_j, level_i, stack_i)
        if parsed is None:
            return False
        doc, p0, w, splits = parsed
        if any(sp.offset >= w for sp in splits):
            return False
        if j < n:
            if stack_at(doc, w) != self._stack(cur.id, cur.stack_ids[j]):
                return False
            if not _ends_at_cut(doc, w, level_j):
                return False
        line0 = head.count("\n") + 1
        line_i, line_j = lines[i], lines[j]
        new_nl = window.count("\n")
        shift = line_i - line0
        d_lines = line_i + new_nl - line_j
        rows = [replace(r, line=r.line + shift) for r in
                rows_of(doc, first_line=line0, last_line=None if j >= n else line0 + new_nl - 1,
                        title=cur.title or "")]
        lens, nls = _pieces(data, [a + x for x in _byte_offsets(window, [sp.offset - p0 for sp in splits])], new_end)
        stack_ids = self._stack_ids(cur.id, [sp.stack for sp in splits], {cur.stack_ids[i]: stack_i})
        levels = cur.levels
        # anchors (top-level blocks): the one piece i lies in, the ones starting inside the window
        b_i = levels.rfind(b"\x00", 0, i + 1)
        anchor_i, line_anchor_i = cur.anchors[b_i], lines[b_i]
        inside = [k for k in range(i, j) if levels[k] == 0]
        # 1. the old rows of the window
        if b_i < i:
            self._delete_rows(cur.id, "anchor = ? AND rel >= ? AND rel < ?",
                              (anchor_i, line_i - line_anchor_i, line_j - line_anchor_i))
        for k in inside:
            self._delete_rows(cur.id, "anchor = ? AND rel < ?", (cur.anchors[k], line_j - lines[k]))
        # 2. the new anchors and rows of the window
        next_id = self.con.execute("SELECT coalesce(max(id), -1) + 1 FROM anchors WHERE file_id = ?",
                                   (cur.id,)).fetchone()[0]
        new_anchor_ids: list[int] = []
        new_anchor_lines: list[int] = []
        anchors_out = []
        aid = anchor_i
        for sp in splits:
            if sp.level == 0:
                aid = next_id + len(new_anchor_ids)
                new_anchor_ids.append(aid)
                new_anchor_lines.append(sp.line + shift)
            anchors_out.append(aid)
        # 3. the block that runs on past the window keeps its rows, re-anchored
        tail = []
        if level_j:
            b_j = levels.rfind(b"\x00", 0, j + 1)
            old_anchor, old_line = cur.anchors[b_j], lines[b_j]
            new_line = new_anchor_lines[-1] if new_anchor_ids else line_anchor_i
            self.con.execute("UPDATE entries SET anchor = ?, rel = rel + ? "
                             "WHERE file_id = ? AND anchor = ? AND rel >= ?",
                             (aid, old_line + d_lines - new_line, cur.id, old_anchor, line_j - old_line))
            end = levels.find(b"\x00", j)
            tail = [aid] * ((n if end < 0 else end) - j)
        # 4. anchors: drop those of the window, move those after it, add the new ones
        gone = [cur.anchors[k] for k in inside]
        if gone:
            self.con.execute(f"DELETE FROM anchors WHERE file_id = ? AND id IN ({','.join(map(str, gone))})",
                             (cur.id,))
        if d_lines and j < n:
            self.con.execute("UPDATE anchors SET line = line + ? WHERE file_id = ? AND line >= ?",
                             (d_lines, cur.id, line_j))
        self.con.executemany("INSERT INTO anchors(file_id, id, line) VALUES (?, ?, ?)",
                             [(cur.id, x, ln) for x, ln in zip(new_anchor_ids, new_anchor_lines)])
        self._insert_rows(cur.id, _anchored(rows, [line_anchor_i] + new_anchor_lines, [anchor_i] + new_anchor_ids))
        anchors = cur.anchors[:i] + array("I", anchors_out) + array("I", tail) + cur.anchors[j + len(tail):]
        self._save_file(cur.id, new_n, fp, stamp, cur.file_type, cur.title, True,
                        cur.lens[:i] + array("I", lens) + cur.lens[j:], cur.nls[:i] + array("I", nls) + cur.nls[j:],
                        levels[:i] + bytes(sp.level for sp in splits) + levels[j:],
                        cur.stack_ids[:i] + array("I", stack_ids) + cur.stack_ids[j:], anchors)
        return True

    # -- storage helpers -----------------------------------------------------------------------
    def _stored(self, rel: str) -> _Stored | None:
        row = self.con.execute(
            "SELECT id, size, mtime_ns, read_ns, digest, file_type, title, incremental, seg_len, seg_nl, seg_level, "
            "seg_stack, seg_anchor, front, back FROM files WHERE rel = ?", (rel,)).fetchone()
        if row is None:
            return None
        arrays = []
        for blob in (row[8], row[9], row[11], row[12]):
            arr = array("I")
            arr.frombytes(blob)
            arrays.append(arr)
        lens, nls, stack_ids, anchors = arrays
        return _Stored(row[0], row[1], row[2], row[3], row[4], row[5], row[6], bool(row[7]), lens, nls,
                       bytes(row[10]), stack_ids, anchors, bytes(row[13]), bytes(row[14]))

    def _stack(self, fid: int, sid: int) -> tuple[str, ...]:
        row = self.con.execute("SELECT headers FROM stacks WHERE file_id = ? AND id = ?", (fid, sid)).fetchone()
        return tuple(decode(row[0]).split("\n")) if row and row[0] else ()

    def _stack_ids(self, fid: int, stacks: list[tuple[str, ...]], known: dict[int, tuple[str, ...]]) -> list[int]:
        """Ids for the given stacks, storing the ones this file has not stored yet.

        The file's stored stacks are read once, into a dict: ``headers`` has no index, so a lookup per
        new stack scanned them all, and n distinct stacks cost n² (B3)."""
        by_text = {v: k for k, v in known.items()}
        out: list[int] = []
        stored: dict[bytes, int] | None = None
        next_id = 0
        for stack in stacks:
            sid = by_text.get(stack)
            if sid is None:
                if stored is None:
                    stored = {}
                    for known_id, headers in self.con.execute(
                            "SELECT id, headers FROM stacks WHERE file_id = ? ORDER BY id", (fid,)):
                        stored.setdefault(bytes(headers), known_id)
                    next_id = max(stored.values(), default=-1) + 1
                blob = encode("\n".join(stack))
                sid = stored.get(blob)
                if sid is None:
                    sid = next_id
                    next_id += 1
                    self.con.execute("INSERT INTO stacks(file_id, id, headers) VALUES (?, ?, ?)", (fid, sid, blob))
                    stored[blob] = sid
                by_text[stack] = sid
            out.append(sid)
        return out

    def _store_window(self, fid: int, new_stacks: list[tuple[int, int, bytes]],
                      new_anchors: list[tuple[int, int, int]], rows: list[tuple[int, int, Row]]) -> None:
        """A window's new stacks, anchors and rows into the index (:class:`_WindowPieces`)."""
        self.con.executemany("INSERT INTO stacks(file_id, id, headers) VALUES (?, ?, ?)", new_stacks)
        self.con.executemany("INSERT INTO anchors(file_id, id, line) VALUES (?, ?, ?)", new_anchors)
        self._insert_rows(fid, rows)

    def _save_file(self, fid: int, size: int, fp: _Fingerprint, stamp: tuple[int, int], file_type: str | None,
                   title: str | None, incremental: bool, lens: Iterable[int], nls: Iterable[int], levels: bytes,
                   stack_ids: Iterable[int], anchors: Iterable[int]) -> None:
        mtime_ns, read_ns = stamp
        title = None if title is None else stored_text(title)  # a kept byte (§1) as its escape: no surrogate for SQLite
        self.con.execute(
            "UPDATE files SET size = ?, mtime_ns = ?, read_ns = ?, digest = ?, file_type = ?, title = ?, "
            "incremental = ?, seg_len = ?, seg_nl = ?, seg_level = ?, seg_stack = ?, seg_anchor = ?, front = ?, "
            "back = ? WHERE id = ?",
            (size, mtime_ns, read_ns, fp.digest, file_type, title, int(incremental), _blob(lens), _blob(nls),
             bytes(levels), _blob(stack_ids), _blob(anchors), fp.front, fp.back, fid))

    def _insert_rows(self, fid: int, rows: list[tuple[int, int, Row]]) -> None:
        if not rows:
            return
        ids: list[int] = []
        next_seq: dict[int, int] = {}
        for _anchor, _rel, r in rows:
            day = _day(r.date)
            seq = next_seq.get(day)
            if seq is None:
                seq = self.con.execute("SELECT coalesce(max(id) + 1, ?) FROM entries WHERE id >= ? AND id < ?",
                                       (day << SEQ_BITS, day << SEQ_BITS, (day + 1) << SEQ_BITS)).fetchone()[0]
                if seq >= (day + 1) << SEQ_BITS:  # 2**32 rows written for one day: start the cache afresh
                    exhausted = sqlite3.DatabaseError("the index ran out of row ids for one day")
                    exhausted.sqlite_errorname = "SQLITE_CORRUPT"
                    raise exhausted
            ids.append(seq)
            next_seq[day] = seq + 1
        self.con.executemany(
            "INSERT INTO entries(id, file_id, anchor, rel, kind, container, names, zone, date) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(i, fid, anchor, rel, r.kind, r.container, r.names, r.zone, r.date)
             for i, (anchor, rel, r) in zip(ids, rows)])
        self.con.executemany("INSERT INTO fts(rowid, title, body, context) VALUES (?, ?, CAST(? AS TEXT), ?)",
                             ((i, r.title, _bound(r.body), r.context) for i, (_a, _r, r) in zip(ids, rows)))

    def _delete_rows(self, fid: int, where: str, args: tuple[object, ...] = ()) -> None:
        self.con.execute(f"DELETE FROM fts WHERE rowid IN (SELECT id FROM entries WHERE file_id = ? AND {where})",
                         (fid, *args))
        self.con.execute(f"DELETE FROM entries WHERE file_id = ? AND {where}", (fid, *args))

    def _drop_file(self, fid: int) -> None:
        self._delete_rows(fid, "1")
        for table in ("stacks", "anchors"):
            self.con.execute(f"DELETE FROM {table} WHERE file_id = ?", (fid,))
        self.con.execute("DELETE FROM files WHERE id = ?", (fid,))

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self.con.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")

    # -- reading -------------------------------------------------------------------------------
    def all_file_ids(self) -> set[int]:
        return {fid for (fid,) in self.con.execute("SELECT id FROM files")}

    def file_ids(self, rels: Iterable[str]) -> dict[str, int]:
        """Index ids of the given relative paths (those indexed)."""
        wanted = set(rels)
        return {rel: fid for fid, rel in self.con.execute("SELECT id, rel FROM files") if rel in wanted}

    def pieces(self, rel: str) -> list[tuple[int, int, int, tuple[str, ...]]]:
        """The stored pieces of one file: (byte offset, line, zone level, open headers)."""
        cur = self._stored(rel)
        if cur is None:
            return []
        starts = accumulate(cur.lens, initial=0)
        lines = accumulate(cur.nls, initial=1)
        return [(s, ln, lv, self._stack(cur.id, sid))
                for s, ln, lv, sid in zip(starts, lines, cur.levels, cur.stack_ids)]

    def rows(self, rel: str) -> list[tuple[Any, ...]]:  # SQLite rows
        """Every stored row of one file, in line order (for tests and tools)."""
        return self.con.execute(
            "SELECT a.line + e.rel AS line, e.kind, e.container, e.names, e.zone, e.date, t.title, t.body, t.context "
            "FROM entries e JOIN files f ON f.id = e.file_id JOIN anchors a ON a.file_id = e.file_id "
            "AND a.id = e.anchor JOIN fts t ON t.rowid = e.id WHERE f.rel = ? ORDER BY line, e.id", (rel,)).fetchall()

    def query(self, match: str, *, file_ids: list[int] | None, container: str | None = None,
              since: str | None = None, until: str | None = None, zones: tuple[int, ...] | None = None,
              limit: int = 10, raw: bool = False, window: int | None = RANK_WINDOW
              ) -> tuple[list[tuple[Any, ...]], bool, bool]:
        """The best ``limit`` rows for the FTS5 expression ``match``: (hits, more, windowed).

        Ranked by bm25 (title, body and context weighted :data:`WEIGHTS`).  When more than
        ``window`` rows match (after the filters), only the ``window`` most recent are ranked —
        entries by date, undated rows (containers, zone text) counting as most recent — and
        ``windowed`` is True; ``window=None`` ranks every match.  Each hit is (rel, line, kind,
        container, zone, date, title, row id, score): the body is read by :meth:`body_pieces` (B26).
        """
        where = ["fts MATCH ?"]
        args: list[object] = [match]
        if file_ids is not None:
            where.append(f"e.file_id IN ({','.join(str(int(i)) for i in file_ids) or 'NULL'})")
        if container:
            where.append("(e.container = ? OR e.names = ? OR substr(e.container, 1, ?) = ? "
                         "OR substr(e.names, 1, ?) = ?)")
            args += [container, container, len(container) + 1, container + "/", len(container) + 1, container + "/"]
        if since:
            where += ["fts.rowid >= ?", "e.date >= ?"]
            args += [_day(since) << SEQ_BITS, since]
        if until:
            where += ["fts.rowid < ?", "substr(e.date, 1, ?) <= ?"]
            args += [(_day(until) + 1) << SEQ_BITS, len(until), until]
        if zones:
            where.append(f"e.zone IN ({','.join(str(int(z)) for z in zones)})")
        joined = len(where) > 1
        source = "fts JOIN entries e ON e.id = fts.rowid" if joined else "fts"
        condition = " AND ".join(where)
        weights = ", ".join(map(str, WEIGHTS))
        try:
            windowed = False
            if window is not None:
                cut = self.con.execute(f"SELECT fts.rowid FROM {source} WHERE {condition} ORDER BY fts.rowid DESC "
                                       "LIMIT 1 OFFSET ?", (*args, window)).fetchone()
                if cut is not None:
                    windowed = True
                    condition += f" AND fts.rowid > {int(cut[0])}"
            top = self.con.execute(f"SELECT fts.rowid, bm25(fts, {weights}) AS score FROM {source} "
                                   f"WHERE {condition} ORDER BY score LIMIT ?", (*args, limit + 1)).fetchall()
            more = len(top) > limit or windowed
            top = top[:limit]
            if not top:
                return [], False, False
            ids = ",".join(str(int(i)) for i, _ in top)
            details = {row[0]: row[1:] for row in self.con.execute(
                "SELECT e.id, f.rel, a.line + e.rel, e.kind, e.container, e.zone, e.date, t.title, e.id "
                "FROM entries e JOIN files f ON f.id = e.file_id JOIN anchors a ON a.file_id = e.file_id "
                f"AND a.id = e.anchor JOIN fts t ON t.rowid = e.id WHERE e.id IN ({ids})")}
        except sqlite3.OperationalError as exc:
            if is_corrupt(exc) or is_unwritable(exc) or "locked" in str(exc):
                raise
            how = "FTS5 query (--raw)" if raw else "query"
            raise QueryError(f"not a valid {how}: {' '.join(str(exc).split())}") from None
        hits: list[tuple[Any, ...]] = []  # SQLite values
        for rowid, score in top:
            rel, line, kind, cont, zone, date, title, body = details[rowid]
            hits.append((rel, line, kind, cont, zone, date, shown(title), body, -score))
        return hits, more, windowed

    def body_pieces(self, rowid: int) -> Iterator[str]:
        """The stored body of row ``rowid``, decoded a slice of :data:`BODY_SLICE` bytes at a time (B26).

        Read from FTS5's content table (``fts_content``, the body its column ``c1``) through SQLite's blob
        handle, which reads only the pages of each slice: a hit's body of 10 MB was read back whole, as a
        string beside SQLite's copy, to make its snippet. The text is what ``SELECT body`` gives (stored
        text is UTF-8, decoded strictly as the sqlite3 module decodes it)."""
        try:
            blob = self.con.blobopen("fts_content", "c1", rowid, readonly=True)
        except sqlite3.Error:  # not where FTS5 keeps it (another SQLite): the body whole
            row = self.con.execute("SELECT body FROM fts WHERE rowid = ?", (rowid,)).fetchone()
            if row is not None and row[0]:
                yield str(row[0])
            return
        with blob:
            decoder = codecs.getincrementaldecoder("utf-8")()
            while chunk := blob.read(BODY_SLICE):
                piece = decoder.decode(chunk)
                del chunk
                if piece:
                    yield piece
            piece = decoder.decode(b"", final=True)
            if piece:
                yield piece

    @contextmanager
    def reading(self) -> Iterator[None]:
        """One read transaction: a query's hits and the bodies read for their snippets are one state of the
        index, whatever another process writes meanwhile (WAL)."""
        self.con.execute("BEGIN")
        try:
            yield
        finally:
            if self.con.in_transaction:
                self.con.execute("COMMIT")

    def has_container(self, container: str, file_ids: list[int] | None) -> bool:
        scope = "" if file_ids is None else f" AND file_id IN ({','.join(str(int(i)) for i in file_ids) or 'NULL'})"
        return self.con.execute(f"SELECT 1 FROM entries WHERE (container = ? OR names = ?){scope} LIMIT 1",
                                (container, container)).fetchone() is not None


#: :meth:`Index.body_pieces` reads a stored body this many bytes at a time.
BODY_SLICE = 1 << 18

#: A text longer than this is handed to SQLite as its UTF-8 bytes (see :func:`_bound`).
LONG_TEXT = 1 << 16


def _bound(text: str | bytes) -> str | bytes:
    """A long text that is not ASCII as its UTF-8 bytes, encoded a slice at a time, for ``CAST(? AS TEXT)``.

    SQLite stores the same text; the sqlite3 module would have encoded the string whole, into a buffer of
    three bytes per character first (B19).  Stored text is clean (:func:`.rows._clean`): no lone surrogate."""
    if isinstance(text, bytes) or len(text) <= LONG_TEXT or text.isascii():
        return text
    return b"".join(text[k:k + LONG_TEXT].encode("utf-8") for k in range(0, len(text), LONG_TEXT))


def _blob(values: Iterable[int]) -> bytes:
    """Unsigned 32-bit integers as stored; an ``array('I')`` is not copied into another first."""
    if isinstance(values, array) and values.typecode == "I":
        return values.tobytes()
    return array("I", values).tobytes()


def _day(date: str | None) -> int:
    """The day of a row's date (its id's high bits); :data:`UNDATED_DAY` when it has none."""
    if date:
        try:
            return _dt.date.fromisoformat(date[:10]).toordinal()
        except ValueError:
            pass
    return UNDATED_DAY


def _clean(size: int, mtime_ns: int, read_ns: int, st: os.stat_result) -> bool:
    """Whether a file's stat shows it unchanged since it was read (and not racily so)."""
    return size == st.st_size and mtime_ns == st.st_mtime_ns and st.st_mtime_ns < read_ns - RACY_NS


# -- the cache file --------------------------------------------------------------------------

def _connect(path: Path, busy_timeout: float) -> sqlite3.Connection:
    con = sqlite3.connect(str(path), timeout=busy_timeout, isolation_level=None)
    con.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
    con.execute("PRAGMA synchronous = NORMAL")
    return con


def _status(con: sqlite3.Connection) -> str:
    """'ok', 'empty' (a new file) or 'foreign' (another program's, another layout, or damaged)."""
    app = con.execute("PRAGMA application_id").fetchone()[0]
    tables = con.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    if app == 0 and tables == 0:
        return "empty"
    if app != APPLICATION_ID or con.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
        return "foreign"
    try:
        meta = dict(con.execute("SELECT key, value FROM meta"))
    except sqlite3.OperationalError:
        return "foreign"
    return "ok" if meta.get("schema") == _SCHEMA_DIGEST else "foreign"


def _create(con: sqlite3.Connection) -> sqlite3.Connection:
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("BEGIN IMMEDIATE")
    try:
        for statement in filter(str.strip, _SCHEMA.split(";\n")):
            con.execute(statement)
        con.execute("INSERT INTO meta(key, value) VALUES ('schema', ?), ('format', ?)",
                    (_SCHEMA_DIGEST, str(SCHEMA_VERSION)))
        con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
    return con


def _discard(cache: Path) -> None:
    """Delete the cache file and its WAL companions (their names only: open handles keep working)."""
    for suffix in ("-wal", "-shm", ""):
        try:
            os.unlink(str(cache) + suffix)
        except FileNotFoundError:
            pass
