"""One file as read: its bytes and every view of them, and the re-checked splice (§5.5).

A :class:`FileSnapshot` is the path and the bytes of one read of a file.  It computes, once and
only when asked, the text (§1, UTF-8), the zone index — from the structural lines first
(:mod:`.skeleton`), from a full parse when that index does not match the bytes — the parsed
document, and the entries a container owns (:mod:`.duplicates`).  Every planner of the writer reads
the file through one snapshot, and writes by :meth:`FileSnapshot.splice`, which replaces one region
of a zone and runs the re-check behind it (:mod:`.verify`).

This module is the one owner of what is kept between writes: a small bounded LRU of zone indexes
and one of duplicate keys, each keyed by the real path and checked against the exact bytes it was
read from, so a change by anyone else is never served from it.  After a commit the planner's own
view of the new bytes (the index moved over its own insertion, the keys with the new entry) is
adopted (:func:`adopt`), so N appends in a row do not parse the file N times.
"""

from __future__ import annotations

import codecs
from array import array
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from functools import cached_property
from collections.abc import Sequence
from typing import Any, Callable, Generic, TypeVar

from ..core import syntax as sx
from ..core.document import Document
from ..core.parser import parse
from ..core.text import decode, encode
from . import duplicates
from .locate import SketchReader, ZoneIndex, ZoneSketch, ZoneView, once_per_file_lines
from .offsets import ByteOffset, CharOffset, bytes_before, chars_before, text_between
from .refusals import RefusedWrite
from .skeleton import skeleton_index
from .verify import DiagnosticKeys, Edit, Expect, Verdict, full_check, incremental_check, insertion_check

R = TypeVar("R")
K = TypeVar("K")
V = TypeVar("V")

_INDEXES_KEPT = 8
_ENTRIES_KEPT = 4
_indexes: "OrderedDict[str, tuple[bytes, ZoneIndex]]" = OrderedDict()
_entries: "OrderedDict[tuple[str, int], tuple[bytes, dict[duplicates.Key, int]]]" = OrderedDict()
_lock = threading.Lock()


def _key(path: str | os.PathLike[str]) -> str:
    """The real path, the key of what is kept of a file."""
    return os.path.realpath(os.fspath(path))


def _kept(table: OrderedDict[K, tuple[bytes, V]], key: K, data: bytes) -> V | None:
    """The value kept under ``key`` if it was computed from exactly ``data``."""
    with _lock:
        hit = table.get(key)
    if hit is not None and (hit[0] is data or hit[0] == data):
        return hit[1]
    return None


def _keep(table: OrderedDict[K, tuple[bytes, V]], key: K, data: bytes, value: V, size: int) -> None:
    """Keep ``value`` of ``data`` under ``key``, the oldest dropped beyond ``size``."""
    with _lock:
        table[key] = (data, value)
        table.move_to_end(key)
        while len(table) > size:
            table.popitem(last=False)


def forget(path: str | os.PathLike[str] | None = None) -> None:
    """Drop what is kept of ``path`` (of every file when None)."""
    with _lock:
        if path is None:
            _indexes.clear()
            _entries.clear()
            return
        real = _key(path)
        _indexes.pop(real, None)
        for k in [k for k in _entries if k[0] == real]:
            del _entries[k]


@dataclass(frozen=True)
class Carry:
    """What a planner knows of the bytes it produces, kept for the next write (:func:`adopt`)."""

    index: ZoneIndex | None = None
    entries: tuple[int, dict[duplicates.Key, int]] | None = None  # (owner line, keys)


@dataclass(frozen=True)
class Plan(Generic[R]):
    """What one planner decided on one snapshot: the new bytes (the old ones when nothing changes), the re-check's
    verdict, and the operation's result (without the history id, which only the commit knows)."""

    data: bytes
    result: R
    verdict: Verdict | None = None
    carry: Carry = field(default_factory=Carry)
    #: the container the change is in, as a person reads it (``TOPIC: Viaggi``), kept in the write's history
    #: record so a list of writes names it without reading a saved version (RV27); None when not one container
    where: str | None = None


def hand_over(path: str | os.PathLike[str], data: bytes, plan: Plan[Any]) -> None:
    """Drop what is kept of ``data`` (``path``'s bytes as a planner read them) that ``plan`` carries anew for its new
    bytes: while the write runs the file's index was held twice, the one of the bytes read and the one moved over
    the change (W99).  Only a cache entry is lost when the write does not happen."""
    def drop(table: OrderedDict[K, tuple[bytes, V]], key: K) -> None:
        with _lock:
            hit = table.get(key)
            if hit is not None and (hit[0] is data or hit[0] == data):
                del table[key]
    if plan.carry.index is not None:
        drop(_indexes, _key(path))
    if plan.carry.entries is not None:
        drop(_entries, (_key(path), plan.carry.entries[0]))


def adopt(path: str | os.PathLike[str], plan: Plan[Any]) -> None:
    """Keep what ``plan`` knows of its new bytes, once they are ``path``'s (after a commit)."""
    if plan.carry.index is not None:
        _keep(_indexes, _key(path), plan.data, plan.carry.index, _INDEXES_KEPT)
    if plan.carry.entries is not None:
        owner, keys = plan.carry.entries
        _keep(_entries, (_key(path), owner), plan.data, keys, _ENTRIES_KEPT)


@dataclass(frozen=True)
class Spliced:
    """A zone region replaced: the new bytes, the re-check's verdict, and where the change is."""

    data: bytes
    verdict: Verdict
    at: ByteOffset  # of the region in the file
    added: int  # bytes added (may be negative)
    line: int
    added_lines: int

    def index_after(self, index: ZoneIndex) -> ZoneIndex:
        """``index`` moved over this insertion."""
        return index.shifted(self.at, self.line, self.added, self.added_lines)


@dataclass(frozen=True, eq=False)
class FileSnapshot:
    """The bytes of ``path`` as read once, and every view of them, computed on first use (module docstring)."""

    path: str | os.PathLike[str]
    data: bytes

    @cached_property
    def text(self) -> str:
        """The decoded text (§1); call :meth:`refuse_not_utf8` first where bytes that are not UTF-8 must refuse."""
        return decode(self.data)

    @cached_property
    def _parsed(self) -> tuple[Document, ZoneIndex]:
        return ZoneIndex.parse(self.text, str(self.path))

    @cached_property
    def _full(self) -> tuple[DiagnosticKeys, ZoneIndex]:
        """The diagnostics' keys and the zone index of the full parse (and a scan of its own); the document itself
        is kept only when a reader asked for it (:attr:`document`), and the text is decoded for the parse alone unless
        it is kept already (W99: a re-check that compares diagnostics held both while it parsed the new text); of the
        diagnostics, only what the re-check compares, as columns (B22)."""
        parsed = self.__dict__.get("_parsed")
        if parsed is not None:
            return DiagnosticKeys.of(parsed[0].diagnostics), parsed[1]
        kept = self.__dict__.get("text")
        text = kept if isinstance(kept, str) else decode(self.data)
        # the parse, then the index from a scan of its own (B22): the parse's document and the index are
        # never alive at once (one scan of both held the index as it grew beside the parse's working state)
        doc = parse(text, path=str(self.path))
        keys, file_type, title, first = (DiagnosticKeys.of(doc.diagnostics), doc.file_type, doc.title,
                                         once_per_file_lines(doc))
        del doc
        return keys, ZoneIndex.scanned(text, file_type, title, first)

    def sketch(self, line: int) -> tuple[DiagnosticKeys, ZoneSketch]:
        """The full parse's diagnostics' keys and what a proposal reads of its zones, the zone at ``line``
        (:class:`.locate.ZoneSketch`, B24): read in the parse's own scan, no zone index built nor kept (of a file
        of nested topics the index was three times the file, beside its text and bytes).  From the parse or the
        index when one is held already."""
        parsed = self.__dict__.get("_parsed")
        if parsed is not None:
            return DiagnosticKeys.of(parsed[0].diagnostics), ZoneSketch.of_index(parsed[1], line)
        full = self.__dict__.get("_full")
        if full is not None:
            return full[0], ZoneSketch.of_index(full[1], line)
        kept = self.__dict__.get("text")
        text = kept if isinstance(kept, str) else decode(self.data)
        reader = SketchReader(text, line)
        del text
        doc = parse(reader.src, path=str(self.path), on_header=reader.header_frame, on_zone=reader.zone_frame)
        keys = _narrow_keys(DiagnosticKeys.of(doc.diagnostics))
        del doc
        return keys, reader.finish()

    @property
    def document(self) -> Document:
        """The full parse of the file: its diagnostics and facts; its tree is built when a reader asks for
        ``blocks`` (a re-check that compares diagnostics and zones needs none, W98)."""
        return self._parsed[0]

    @property
    def diagnostic_keys(self) -> DiagnosticKeys:
        """What the re-check compares of the full parse's diagnostics, read with :attr:`full_index` (no document
        kept, W99; no diagnostic kept, B22)."""
        return self._full[0]

    @cached_property
    def index(self) -> ZoneIndex:
        """The zone index: kept from an earlier read of the same bytes, else from the structural lines."""
        key = _key(self.path)
        kept = _kept(_indexes, key, self.data)
        if kept is not None:
            return kept
        index = skeleton_index(self.data)
        _keep(_indexes, key, self.data, index, _INDEXES_KEPT)
        return index

    @cached_property
    def full_index(self) -> ZoneIndex:
        """The zone index from the full parse (kept, as it is then the better one of these bytes)."""
        index = self._full[1]  # read in the full parse's own scan
        _keep(_indexes, _key(self.path), self.data, index, _INDEXES_KEPT)
        return index

    def let_go_of_full(self) -> None:
        """Forget the full parse's index and diagnostics' keys, here and in what is kept between writes (B22): a
        re-check that has read what it compares of them parses the new text without the old index alive.  A
        later read of :attr:`full_index` parses again; a later write reads the skeleton's index."""
        full = self.__dict__.pop("_full", None)
        self.__dict__.pop("full_index", None)
        if full is not None:
            key = _key(self.path)
            with _lock:
                hit = _indexes.get(key)
                if hit is not None and hit[1] is full[1]:
                    del _indexes[key]

    def refuse_not_utf8(self) -> None:
        """``FILE_NOT_UTF8`` when the bytes are not valid UTF-8 (§1, W45): the writer writes UTF-8, and into a file
        of another encoding (Windows-1252, Latin-1) that would leave two encodings in one file.  The first invalid
        byte is named as ``\\xNN``, as every message shows one (W8).  One pass over the bytes, a slice at a time
        (decoding them whole held a text of up to four times the file, W99)."""
        bad = _first_invalid_utf8(self.data)
        if bad is not None:
            byte = f"\\x{self.data[bad]:02X}"
            raise RefusedWrite(f"refused: the file is not valid UTF-8 (byte {bad + 1} is {byte}; another "
                               f"encoding, such as Windows-1252?): writing UTF-8 text into it would leave two "
                               f"encodings in one file; save it as UTF-8 first",
                               code="FILE_NOT_UTF8", rule="§1") from None

    def sane(self, zone: ZoneView) -> bool:
        """Whether ``zone`` (of an index of these bytes) still points at its opening and closing tags."""
        if zone.close_start is None:
            return True
        data = self.data
        close = decode(data[zone.close_start:zone.close_end]).rstrip("\n").rstrip("\r")
        m = sx.PERMISSION_TAG.match(close)
        opening = sx.PERMISSION_TAG.match(decode(data[zone.start:zone.inner_start]).rstrip("\n"))
        return bool(m and m.group(1) and opening and not opening.group(1) and int(opening.group(2)) == zone.level)

    def locate(self, select: Callable[[ZoneIndex], tuple[int | None, ZoneView | None]]
               ) -> tuple[ZoneIndex, int | None, ZoneView | None]:
        """``select`` (index -> (container, zone)) on the skeleton index, and on the full one when the zone it
        picks does not match the bytes; ``ZONE_NOT_LOCATED`` when neither does (§5.1): a stale index is never
        trusted."""
        index = self.index
        cid, zone = select(index)
        if zone is not None and not self.sane(zone):
            index = self.full_index
            cid, zone = select(index)
            if zone is not None and not self.sane(zone):
                raise RefusedWrite(f"refused: the [P{zone.level}] zone at line {zone.line} cannot be located "
                                   f"reliably; check the file with 'zonemark check'", code="ZONE_NOT_LOCATED",
                                   zone=zone.line, level=zone.level, rule="§5.1")
        return index, cid, zone

    def inner(self, zone: ZoneView) -> bytes:
        """The inner bytes of a closed zone."""
        assert zone.close_start is not None
        return self.data[zone.inner_start:zone.close_start]

    def zone_text(self, zone: ZoneView) -> tuple[str, CharOffset, CharOffset]:
        """The zone's text (opening to closing line) and the character offsets, in it, of its inner lines and its
        closing tag.  Only the zone is decoded."""
        assert zone.close_start is not None and zone.close_end is not None
        data = self.data
        old_zone = text_between(data, zone.start, zone.close_end)
        inner_rel = CharOffset(len(text_between(data, zone.start, zone.inner_start)))
        close_rel = CharOffset(inner_rel + len(text_between(data, zone.inner_start, zone.close_start)))
        return old_zone, inner_rel, close_rel

    def entries(self, owner_line: int) -> dict[duplicates.Key, int]:
        """The duplicate keys of the entries the container declared at ``owner_line`` owns (:mod:`.duplicates`);
        a copy the caller may change."""
        key = (_key(self.path), owner_line)
        kept = _kept(_entries, key, self.data)
        if kept is None:
            kept = duplicates.owned_entries(self.document, owner_line)
            _keep(_entries, key, self.data, kept, _ENTRIES_KEPT)
        return dict(kept)

    def splice(self, index: ZoneIndex, zone: ZoneView, old_zone: str, rel_start: CharOffset, rel_old_len: int,
               insert: str, line: int, expect: Expect, owner: int | None) -> Spliced:
        """Replace ``old_zone[rel_start:rel_start + rel_old_len]`` (``old_zone`` from :meth:`zone_text`) by
        ``insert`` and re-check it (§5.5): from the zone alone when that decides, else from the whole file.

        The byte position in the file is derived once; the file's other bytes are copied, then checked
        identical.
        """
        data = self.data
        new_zone = old_zone[:rel_start] + insert + old_zone[rel_start + rel_old_len:]
        edit = Edit(rel_start, rel_old_len, len(insert), line,
                    old_zone.count("\n", rel_start, rel_start + rel_old_len), insert.count("\n"))
        at = ByteOffset(zone.start + bytes_before(old_zone, rel_start))
        old_len_b = len(encode(old_zone[rel_start:rel_start + rel_old_len]))
        insert_b = encode(insert)
        new_data = b"".join((memoryview(data)[:at], insert_b, memoryview(data)[at + old_len_b:]))
        verdict: Verdict | None
        if not (new_data.startswith(memoryview(data)[:at])
                and new_data.endswith(memoryview(data)[at + old_len_b:])):
            verdict = Verdict(False, (), ("bytes outside the edited region would change",))
        else:
            verdict = incremental_check(index, zone, old_zone, new_zone, edit, expect, owner=owner)
            if verdict is None:
                full_edit = replace(edit, start=chars_before(data, at))
                verdict = full_check(self.text, decode(new_data), full_edit, expect, path=str(self.path))
        return Spliced(new_data, verdict, at, len(insert_b) - old_len_b, line, edit.delta_lines)


    def insert(self, index: ZoneIndex, zone: ZoneView, at: ByteOffset, insert: bytes, line: int, expect: Expect,
               owner: int | None) -> Spliced:
        """Insert ``insert`` (UTF-8 bytes, :func:`.core.text.encode`) at byte ``at`` of ``zone`` (a line start, file
        line ``line``) and re-check it (§5.5): :meth:`splice` of an insertion, the zone read from its bytes
        (:func:`.verify.insertion_check`: at the end of its content, only its lines from there on are decoded), else
        the whole file.  The new file's bytes are made once the re-check has decided: not held while it parses
        (B27)."""
        data = self.data
        verdict = insertion_check(index, zone, data, at, insert, line, expect, owner=owner)
        new_data = b"".join((memoryview(data)[:at], insert, memoryview(data)[at:]))
        added_lines = insert.count(b"\n")
        if not (new_data.startswith(memoryview(data)[:at]) and new_data.endswith(memoryview(data)[at:])):
            verdict = Verdict(False, (), ("bytes outside the edited region would change",))
        elif verdict is None:
            old_text, new_text = self.text, decode(new_data)  # the inserted characters: what the text grew by
            edit = Edit(chars_before(data, at), 0, len(new_text) - len(old_text), line, 0, added_lines)
            verdict = full_check(old_text, new_text, edit, expect, path=str(self.path))
        return Spliced(new_data, verdict, at, len(insert), line, added_lines)


def _narrow_keys(keys: DiagnosticKeys) -> DiagnosticKeys:
    """``keys`` with each column in the narrowest integers that hold its values (a code, a column: one or two bytes;
    a line: four): what the re-check holds of the file's findings while it parses the new text, a third of it
    (B24)."""
    return DiagnosticKeys(keys.codes, *(_narrowest(c) for c in (keys.code, keys.line, keys.column, keys.related)))


def _narrowest(column: "array[int]") -> "array[int]":
    """``column`` in the narrowest signed integers that hold its values."""
    low, high = (min(column), max(column)) if column else (0, 0)
    for code in ("b", "h", "i", "l", "q"):
        bound = 1 << (8 * array(code).itemsize - 1)
        if -bound <= low and high < bound:
            return column if code == column.typecode else array(code, column)
    return column


#: How many bytes :func:`_first_invalid_utf8` decodes at a time.
UTF8_CHECK_CHUNK = 1 << 18
#: How many bytes :func:`decode_pieces` decodes at a time: pieces of a few KiB, whose room the heap gives again to
#: the parse that follows (pieces of 64 KiB left the re-check of 100,000 topics 0.2x the file higher, of 1 MiB 0.9x).
DECODE_CHUNK = 1 << 13


def decode_pieces(parts: Sequence[bytes | memoryview]) -> str | None:
    """The text of the bytes ``parts`` make, end to end, when they are UTF-8 (None when not: the caller decodes
    them whole, :func:`.core.text.decode`): decoded a slice at a time and joined, so no copy of the bytes is made
    and the decoder's buffer of one byte a character, widened at the first wider one to the text's, is not held
    beside it (B24: those blocks of the file's size, once freed, raised glibc's mmap threshold and the heap kept
    the next ones)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    step = DECODE_CHUNK
    pieces: list[str] = []
    try:
        for part in parts:
            view = memoryview(part)
            pieces.extend(decoder.decode(view[at:at + step]) for at in range(0, len(view), step))
        pieces.append(decoder.decode(b"", True))
    except UnicodeDecodeError:
        return None
    return "".join(pieces)


def _first_invalid_utf8(data: bytes) -> int | None:
    """The offset of the first byte of ``data`` that is not valid UTF-8 (what ``data.decode()`` reports), or None:
    decoded a slice at a time by an incremental decoder (a character cut by a slice's end waits for the next),
    each slice's text dropped at once; the slice that fails is decoded again from the character it starts in."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    step = UTF8_CHECK_CHUNK
    for at in range(0, len(data), step):
        try:
            decoder.decode(view[at:at + step], at + step >= len(data))
        except UnicodeDecodeError:
            start = at
            while start > 0 and at - start < 4 and (start == at or data[start] & 0xC0 == 0x80):
                start -= 1  # back to the first byte of the character the slice may have cut
            try:
                data[start:at + step].decode("utf-8")
            except UnicodeDecodeError as exc:
                return start + exc.start
            raise AssertionError("a slice failed to decode that decodes on its own") from None
    return None


def cached_index(path: str | os.PathLike[str], data: bytes) -> ZoneIndex:
    """The zone index of ``data``, the bytes of ``path`` (:attr:`FileSnapshot.index`)."""
    return FileSnapshot(path, data).index


def barrier_refusal(what: str, verdict: Verdict, *, zone: int | None = None,
                    level: int | None = None) -> RefusedWrite:
    """The refusal of a write the re-check (§5.5) did not accept: STRUCTURE_CHANGED or NEW_DIAGNOSTIC."""
    code = "STRUCTURE_CHANGED" if verdict.problems or not verdict.new_diagnostics else "NEW_DIAGNOSTIC"
    return RefusedWrite(f"refused: {what}: {verdict.reason()} (§5.5, re-check)", code=code, zone=zone,
                        level=level, rule="§5.5")


def zone_refusal(what: str, zone: ZoneView | None, verdict: Verdict) -> RefusedWrite:
    """:func:`barrier_refusal` naming ``zone``."""
    return barrier_refusal(what, verdict, zone=zone.line if zone else None, level=zone.level if zone else None)
