"""Where a write goes: containers, their writable zones, and a light index of both (§7.1.2, §7.1.3).

An H6 entry belongs to the nearest preceding open container in document order (§5.5 v1.10,
§7.1.3), and a permission-zone boundary closes nothing (§2.3).  So the writable zone that
*pairs with* a container is a ``[P4]``/``[P5]`` zone at whose closing tag that container is
the innermost open one: an entry appended at the end of that zone is owned by it — the same
rule the parser applies to fill ``Document.h6_owner``.

:class:`ZoneIndex` holds what the writer needs (zones, headers, their offsets and the open
logical stack at each zone) without the block tree, so a long-lived process can keep it for a
file's exact bytes and shift it after its own write instead of re-parsing 10 MB.

Container addresses (:func:`resolve_container`):

* external memory: a path of names, ``"Maintenance/Tyres"``, matched exactly, one segment
  per level (topic, then sub-topic...); ``#n`` picks the n-th container child (1-based,
  document order); a segment may carry its keyword (``"TOPIC: Maintenance"``);
* reminder / external module: a module id (``"042"``), ``"MODULE 042"``, ``"NUCLEUS 1"``, a
  name, and ``/`` to reach a sub-module (``"042/CHILD_MODULE"``).
"""

from __future__ import annotations

import bisect
import hashlib
import re
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, overload

from ..core import syntax as sx
from ..core.document import Document
from ..core.headers import spelled_keyword
from ..core.nodes import Block, Heading
from ..core.tree import HeadingFrame, ZoneFrame
from ..core.outline import headings
from ..core.parser import parse
from ..core.scanner import scan_structure
from ..core.text import encode, name_key
from .offsets import ByteOffset
from .refusals import RefusedWrite
from .sanitize import quoted

_CONTAINER_TYPES = ("module", "sub_module", "nucleus")
#: Diagnostics the parser reports once per file, at the first occurrence (with a count).
GLOBAL_CODES = ("CONTROL_CHARACTER", "CRLF_LINE_ENDING", "CARRIAGE_RETURN")
_KEYWORD_SEGMENT = re.compile(r"(MODULE|TOPIC|SUBTOPIC\d*|SUB-MODULE|SOTTOMODULO|NUCLEUS)\b[ \t]*:?[ \t]*(.*)")


@dataclass(frozen=True, slots=True)
class HeaderInfo:
    """A header on the logical layer (H2-H5, not refused): static facts, ``index`` into the lists."""

    index: int
    level: int
    type: str
    keyword: str | None
    id: str | None
    name: str
    text: str  # the raw header line (no newline)
    is_container: bool
    parent: int | None  # index of the enclosing container, None = the file


@dataclass(frozen=True)
class ZoneView:
    """One permission zone with its current positions (see :meth:`ZoneIndex.zone`)."""

    index: int
    level: int
    line: int  # opening tag line
    start: ByteOffset  # of the opening line
    inner_start: ByteOffset  # after the opening line
    close_line: int | None  # None: never closed (not writable)
    close_start: ByteOffset | None  # of the closing tag line
    close_end: ByteOffset | None  # after the closing line
    inline: bool  # "[Pn] text" on the opening line
    owner: int | None  # header index of the container owning an entry added at its end; None = file
    context: tuple[int, ...]  # header indexes of the open logical stack at the closing tag


#: An absent header index or position in the integer columns below (they hold no None).
NONE = -1
#: Where the zones are, shifted by writes: opening lines, their starts, inner starts, closing lines, their
#: starts and ends (byte offsets; :data:`NONE` for a zone never closed).
ZonePositions = tuple["array[int]", "array[int]", "array[int]", "array[int]", "array[int]", "array[int]"]


#: The typecode of an integer column whose values all fit in 4 bytes (W99: a file's offsets and line numbers,
#: below 2 GiB), and its largest value; a column that may hold a larger one is of 8 bytes.
NARROW = "i" if array("i").itemsize == 4 else "q"
NARROW_MAX = 2 ** 31 - 1


def int_code(limit: int) -> str:
    """The typecode of a column of integers from :data:`NONE` to ``limit``."""
    return NARROW if limit <= NARROW_MAX else "q"


def _ints(code: str = "q") -> "array[int]":
    return array(code)


class _Strings:
    """A column of optional strings: their UTF-8 in one buffer and where each ends (W97: no object per string,
    so the index of 100,000 headers is a few buffers, not 200,000 strings)."""

    __slots__ = ("_buf", "_ends", "_absent")

    def __init__(self, code: str = "q") -> None:
        self._buf = bytearray()
        self._ends = _ints(code)
        self._absent = bytearray()

    def append(self, value: str | None) -> None:
        if value is None:
            self._absent.append(1)
        else:
            self._buf += value.encode("utf-8", "surrogatepass")
            self._absent.append(0)
        self._ends.append(len(self._buf))

    def __getitem__(self, i: int) -> str | None:
        if self._absent[i]:
            return None
        return self._buf[self._ends[i - 1] if i else 0:self._ends[i]].decode("utf-8", "surrogatepass")


def _is_container(kind: str, level: int) -> bool:
    """Whether a header of this type and level is a container (a module, sub-module, nucleus or a ``##`` section)."""
    return kind in _CONTAINER_TYPES or (level == 2 and kind == "section")


def container_name(level: int, kind: str, keyword: str | None, ident_: str | None, name: str) -> str:
    """The container as a person reads it, ``TOPIC: Viaggi`` or ``MODULE 042: NAME`` (:meth:`ZoneIndex.name`)."""
    kw = spelled_keyword(keyword, level) or {"module": "MODULE", "sub_module": "SUB-MODULE",
                                             "nucleus": "NUCLEUS"}.get(kind)
    ident = f" {ident_}" if ident_ and keyword is None else ""
    return f"{kw}{ident}: {name}" if kw else name


class HeaderTable(Sequence[HeaderInfo]):
    """The logical headers of one file as columns (W97); ``table[i]`` makes the :class:`HeaderInfo` of header ``i``."""

    __slots__ = ("level", "kind", "keyword", "id", "name", "text", "parent", "up", "_words", "_codes")

    def __init__(self, code: str = "q") -> None:
        self.level = bytearray()
        self.kind = array("H")  # codes into _words
        self.keyword = array("H")
        self.id = _Strings(code)
        self.name = _Strings(code)
        self.text = _Strings(code)
        self.parent = _ints(code)  # the enclosing container (a module, sub-module or nucleus), NONE = the file
        self.up = _ints(code)  # the header under this one on the logical stack when it was pushed (§2.3), NONE: none
        self._words: list[str | None] = []  # each distinct type and keyword once
        self._codes: dict[str | None, int] = {}

    def _code(self, word: str | None) -> int:
        code = self._codes.get(word)
        if code is None:
            code = self._codes[word] = len(self._words)
            self._words.append(word)
        return code

    def append(self, level: int, kind: str, keyword: str | None, id_: str | None, name: str, text: str,
               parent: int, up: int) -> None:
        self.level.append(level)
        self.kind.append(self._code(kind))
        self.keyword.append(self._code(keyword))
        self.id.append(id_)
        self.name.append(name)
        self.text.append(text)
        self.parent.append(parent)
        self.up.append(up)

    def __len__(self) -> int:
        return len(self.level)

    def type_of(self, i: int) -> str:
        kind = self._words[self.kind[i]]
        assert kind is not None  # every header has a type
        return kind

    def keyword_of(self, i: int) -> str | None:
        return self._words[self.keyword[i]]

    def is_container(self, i: int) -> bool:
        return _is_container(self.type_of(i), self.level[i])

    def parent_of(self, i: int) -> int | None:
        parent = self.parent[i]
        return None if parent == NONE else parent

    def text_of(self, i: int) -> str:
        return self.text[i] or ""

    def name_of(self, i: int) -> str:
        return self.name[i] or ""

    @overload
    def __getitem__(self, i: int) -> HeaderInfo: ...

    @overload
    def __getitem__(self, i: slice) -> list[HeaderInfo]: ...

    def __getitem__(self, i: int | slice) -> HeaderInfo | list[HeaderInfo]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return HeaderInfo(i, self.level[i], self.type_of(i), self.keyword_of(i), self.id[i], self.name_of(i),
                          self.text_of(i), self.is_container(i), self.parent_of(i))

    def __iter__(self) -> Iterator[HeaderInfo]:
        return (self[i] for i in range(len(self)))


class ZoneTable:
    """What each zone is, fixed by the parse (W97: columns): its level, an inline opening tag, the container owning
    an entry added at its end (:data:`NONE`: the file) and the innermost header open at its closing tag."""

    __slots__ = ("level", "inline", "owner", "top")

    def __init__(self, code: str = "q") -> None:
        self.level = bytearray()
        self.inline = bytearray()
        self.owner = _ints(code)
        self.top = _ints(code)

    def __len__(self) -> int:
        return len(self.level)


class ZoneIndex:
    """Zones and logical headers of one file, with offsets that can be shifted.

    Offsets (``z_start``, ``z_inner``, ``z_close_start``, ``z_close_end``, ``h_start``) are
    UTF-8 *byte* offsets into the file (:data:`.offsets.ByteOffset`), so a write splices bytes
    without decoding the file.  Every column is an integer array or a byte buffer (W97): the
    index of 100,000 zones holds no object per zone; :meth:`zone` and ``headers[i]`` make one.
    """

    def __init__(self, file_type: str | None, title: str | None, headers: HeaderTable, h_line: "array[int]",
                 h_start: "array[int]", zones: ZoneTable, z_pos: ZonePositions,
                 global_first: Mapping[str, int] | None = None) -> None:
        self.global_first: dict[str, int] = dict(global_first or {})  # code -> line of a once-per-file diagnostic
        self.file_type: str | None = file_type
        self.title: str | None = title
        self.headers: HeaderTable = headers
        self.h_line = h_line
        self.h_start = h_start
        self.zones = zones
        self.z_line, self.z_start, self.z_inner, self.z_close_line, self.z_close_start, self.z_close_end = z_pos

    # -- construction --------------------------------------------------------------------
    @classmethod
    def build(cls, doc: Document) -> "ZoneIndex":
        """The index of a parsed file: from its tree when it has one, else from a scan that builds none (W97)."""
        if doc.tree is None:
            return cls.scanned(doc.source, doc.file_type, doc.title, once_per_file_lines(doc))
        builder = _Builder(doc.source)
        _from_tree(doc, builder)
        return builder.finish(doc.file_type, doc.title, once_per_file_lines(doc))

    @classmethod
    def scanned(cls, text: str, file_type: str | None, title: str | None, global_first: Mapping[str, int], *,
                zones: bool = True) -> "ZoneIndex":
        """:meth:`build` of a parse of ``text`` without a tree, from what it needs of that parse (its file type,
        title and once-per-file diagnostics): the parse need not be alive while the index is built (B22).
        ``zones=False``: an index of the headers alone, its zone columns empty (enough to find a container by its
        address, :func:`resolve_container`: a header's row never depends on the zones)."""
        builder = _Builder(text)
        scan_structure(text, builder.header_frame, builder.zone_frame if zones else None)
        return builder.finish(file_type, title, global_first)

    @classmethod
    def of_headers(cls, doc: Document) -> "ZoneIndex":
        """:meth:`build` of ``doc`` without its zones (:meth:`scanned` with ``zones=False``)."""
        return cls.scanned(doc.source, doc.file_type, doc.title, once_per_file_lines(doc), zones=False)

    @classmethod
    def parse(cls, text: str, path: str | None = None) -> tuple[Document, "ZoneIndex"]:
        """The parse of ``text`` without its tree, and its index read from that parse's own scan (W98): what
        :meth:`build` of it gives, in one scan instead of two."""
        builder = _Builder(text)
        doc = parse(text, path=path, on_header=builder.header_frame, on_zone=builder.zone_frame)
        return doc, builder.finish(doc.file_type, doc.title, once_per_file_lines(doc))

    @classmethod
    def scan(cls, text: str, global_first: Mapping[str, int], limit: int | None = None) -> "ZoneIndex":
        """The index of ``text`` from one scan that builds no tree and keeps no finding (the skeleton's, W97);
        ``global_first`` gives the once-per-file diagnostics the caller found; ``limit``, the largest value its
        columns will hold (the skeleton moves them to a larger file), by default the text's."""
        builder = _Builder(text, limit)
        file_type, title = scan_structure(text, builder.header_frame, builder.zone_frame)
        return builder.finish(file_type, title, global_first)

    # -- views ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.zones)

    def zone(self, i: int) -> ZoneView:
        zones = self.zones
        close_line = self.z_close_line[i]
        owner = zones.owner[i]
        return ZoneView(i, zones.level[i], self.z_line[i], ByteOffset(self.z_start[i]), ByteOffset(self.z_inner[i]),
                        None if close_line == NONE else close_line,
                        None if close_line == NONE else ByteOffset(self.z_close_start[i]),
                        None if close_line == NONE else ByteOffset(self.z_close_end[i]),
                        bool(zones.inline[i]), None if owner == NONE else owner, self.context(i))

    def context(self, i: int) -> tuple[int, ...]:
        """Header indexes of the logical stack open at zone ``i``'s closing tag, outermost first."""
        chain = []
        h = self.zones.top[i]
        up = self.headers.up
        while h != NONE:
            chain.append(h)
            h = up[h]
        return tuple(reversed(chain))

    def level_of(self, i: int) -> int:
        return self.zones.level[i]

    def zone_at_line(self, line: int) -> ZoneView | None:
        """The zone whose opening tag is on ``line``, or that contains ``line``."""
        i = bisect.bisect_right(self.z_line, line) - 1
        if i < 0:
            return None
        close = self.z_close_line[i]
        if self.z_line[i] == line or close == NONE or line <= close:
            return self.zone(i)
        return None

    def header_line(self, index: int) -> int:
        return self.h_line[index]

    def container_indexes(self, parent: int | None | Literal["any"] = "any") -> list[int]:
        """The header indexes of the containers (children of ``parent`` only, when given), in document order."""
        headers = self.headers
        want = NONE if parent is None else parent
        return [i for i in range(len(headers)) if (parent == "any" or headers.parent[i] == want)
                and headers.is_container(i)]

    def containers(self) -> list[HeaderInfo]:
        return [self.headers[i] for i in self.container_indexes()]

    def name(self, index: int) -> str:
        """The container as a person reads it, ``TOPIC: Viaggi`` or ``MODULE 042: NAME`` (the history keeps it)."""
        headers = self.headers
        return container_name(headers.level[index], headers.type_of(index), headers.keyword_of(index),
                              headers.id[index], headers.name_of(index))

    def label(self, index: int | None) -> str:
        if index is None:
            return "the file"
        return f"{quoted(self.name(index))} (line {self.h_line[index]})"

    # -- shifting after a write -----------------------------------------------------------
    def shifted(self, at: ByteOffset, at_line: int, d_bytes: int, d_lines: int) -> "ZoneIndex":
        """A copy where every position at or after byte offset ``at`` (line ``at_line``) moves by ``d_bytes``;
        text inserted right after an opening line stays inside its zone."""
        pos: ZonePositions = (_moved(self.z_line, at_line, d_lines), _moved(self.z_start, at, d_bytes),
                              _moved(self.z_inner, at + 1, d_bytes), _moved(self.z_close_line, at_line, d_lines),
                              _moved(self.z_close_start, at, d_bytes), _moved(self.z_close_end, at, d_bytes))
        first = {c: (n + d_lines if n >= at_line else n) for c, n in self.global_first.items()}
        return ZoneIndex(self.file_type, self.title, self.headers, _moved(self.h_line, at_line, d_lines),
                         _moved(self.h_start, at, d_bytes), self.zones, pos, first)


def _moved(values: "array[int]", pivot: int, delta: int) -> "array[int]":
    """A copy of ``values`` with ``delta`` added to each value at or after ``pivot`` (>= 0: NONE never moves); of
    8-byte integers when a value would outgrow a 4-byte column."""
    code = values.typecode
    if delta > 0 and code != "q" and values and max(values) > NARROW_MAX - delta:
        code = "q"
    out = array(code, values)
    if delta:
        for k in range(len(out)):
            if out[k] >= pivot:
                out[k] += delta
    return out


class _Builder:
    """Fills the columns from headers and zones given in document order, each zone when its closing tag is read
    (or the file ends): the open logical stack (§2.3) at that tag is the zone's container (§7.1.3)."""

    def __init__(self, src: str, limit: int | None = None) -> None:
        self.src = src
        # 4-byte columns when every offset, line and count fits (a character is at most 4 bytes of UTF-8)
        code = int_code(4 * len(src) + 1 if limit is None else limit)
        self.headers = HeaderTable(code)
        self.h_line = _ints(code)
        self.h_start = _ints(code)  # character offsets until finish()
        self.zones = ZoneTable(code)
        self.z_pos: ZonePositions = (_ints(code), _ints(code), _ints(code), _ints(code), _ints(code), _ints(code))
        self.stack: list[int] = []  # open logical headers

    def header(self, level: int, kind: str, keyword: str | None, id_: str | None, name: str, line: int,
               start: int) -> None:
        """A logical header (H2-H5, not refused): pop deeper-or-equal headers, push this one."""
        headers, stack = self.headers, self.stack
        while stack and headers.level[stack[-1]] >= level:
            stack.pop()
        parent = next((h for h in reversed(stack) if headers.type_of(h) in _CONTAINER_TYPES), NONE)
        src = self.src
        eol = src.find("\n", start)
        headers.append(level, kind, keyword, id_, name, src[start:eol if eol >= 0 else len(src)], parent,
                       stack[-1] if stack else NONE)
        self.h_line.append(line)
        self.h_start.append(start)
        stack.append(len(headers) - 1)

    def header_frame(self, frame: HeadingFrame) -> None:
        """:meth:`header` of a header as the scanner opens it (the title's excepted)."""
        h = frame.header
        if not frame.refused and frame.level not in (1, 6):
            self.header(frame.level, h.kind, h.keyword, h.id, frame.name if frame.name is not None else frame.text,
                        frame.line, frame.start)

    def zone(self, line: int, start: int, level: int, close: tuple[int, int, int] | None) -> None:
        """A zone whose opening line starts at ``start``; ``close`` its closing line and the offsets of its start
        and end, None when it never closes."""
        src, headers, stack = self.src, self.headers, self.stack
        first = src.find("\n", start)
        inner = len(src) if first < 0 else first + 1
        tag = sx.PERMISSION_TAG.match(src, start, inner)
        zones = self.zones
        zones.level.append(level)
        zones.inline.append(bool(tag and tag.group(3).strip()))
        zones.owner.append(next((h for h in reversed(stack) if headers.is_container(h)), NONE))
        zones.top.append(stack[-1] if stack else NONE)
        close_line, close_start, close_end = close if close is not None else (NONE, NONE, NONE)
        for column, value in zip(self.z_pos, (line, start, inner, close_line, close_start, close_end)):
            column.append(value)

    def zone_frame(self, frame: ZoneFrame) -> None:
        """:meth:`zone` of a zone as the scanner ends it: at its closing tag (``tail``) or at the end of the file."""
        close = None
        if frame.tail is not None:
            eol = self.src.find("\n", frame.tail)
            close = (frame.tail_line, frame.tail, len(self.src) if eol < 0 else eol + 1)
        self.zone(frame.line, frame.start, frame.plevel, close)

    def finish(self, file_type: str | None, title: str | None, global_first: Mapping[str, int]) -> ZoneIndex:
        """The index, its character offsets made byte offsets (each column is in document order: one pass each)."""
        src = self.src
        lines, starts, inners, close_lines, close_starts, close_ends = self.z_pos
        pos: ZonePositions = (lines, _to_bytes(src, starts), _to_bytes(src, inners), close_lines,
                              _to_bytes(src, close_starts), _to_bytes(src, close_ends))
        return ZoneIndex(file_type, title, self.headers, self.h_line, _to_bytes(src, self.h_start), self.zones, pos,
                         global_first)


@dataclass(frozen=True)
class ZoneSketch:
    """What a proposal reads of a file's zones (B24): every zone's level and opening line (what the re-check
    compares, §5.5), and the zone at one line (:meth:`ZoneIndex.zone_at_line`) with the header lines open at its
    closing tag (:func:`container_lines`) and the name of the container owning it (:meth:`ZoneIndex.name`).  It
    holds five bytes a zone and nothing a header: the index of 20,000 nested topic groups was three times the file."""

    levels: bytearray
    lines: "array[int]"
    zone: ZoneView | None
    context: tuple[str, ...]  # () when no zone
    owner_name: str | None  # None: no zone, or the file owns it

    def __len__(self) -> int:
        return len(self.levels)

    @classmethod
    def of_index(cls, index: ZoneIndex, line: int) -> "ZoneSketch":
        """The sketch of ``index`` at ``line``."""
        zone = index.zone_at_line(line)
        return cls(bytearray(index.zones.level), array(index.z_line.typecode, index.z_line), zone,
                   () if zone is None else container_lines(index, zone),
                   None if zone is None or zone.owner is None else index.name(zone.owner))


@dataclass(frozen=True, slots=True)
class _Open:
    """A logical header open on the stack of a :class:`SketchReader`: what the zone's view and names read of it."""

    index: int
    level: int
    kind: str
    keyword: str | None
    id: str | None
    name: str
    start: int  # character offset of its line


class SketchReader:
    """Reads a :class:`ZoneSketch` at ``line`` from the frames of one scan (``on_header``/``on_zone`` of a parse):
    the logical stack as :class:`_Builder` keeps it, of the open headers alone, and each zone's level and line; of
    the last zone opening at or before ``line``, what :meth:`_Builder.zone` reads, when it ends."""

    def __init__(self, src: str, line: int) -> None:
        self.src = src
        self.line = line
        self.levels = bytearray()
        self.lines = _ints(int_code(4 * len(src) + 1))
        self.count = 0  # headers read: the next one's index
        self.stack: list[_Open] = []
        self.hit: tuple[int, int, int, int, tuple[int, int, int] | None, tuple[_Open, ...]] | None = None

    def header_frame(self, frame: HeadingFrame) -> None:
        """:meth:`_Builder.header_frame`: a logical header pops deeper-or-equal ones and is pushed."""
        if frame.refused or frame.level in (1, 6):
            return
        h, stack, level = frame.header, self.stack, frame.level
        while stack and stack[-1].level >= level:
            stack.pop()
        stack.append(_Open(self.count, level, h.kind, h.keyword, h.id,
                           frame.name if frame.name is not None else frame.text, frame.start))
        self.count += 1

    def zone_frame(self, frame: ZoneFrame) -> None:
        """:meth:`_Builder.zone_frame`: a zone as the scan ends it."""
        self.levels.append(frame.plevel)
        self.lines.append(frame.line)
        if frame.line <= self.line:
            close = None
            if frame.tail is not None:
                src = self.src
                eol = src.find("\n", frame.tail)
                close = (frame.tail_line, frame.tail, len(src) if eol < 0 else eol + 1)
            self.hit = (len(self.levels) - 1, frame.line, frame.start, frame.plevel, close, tuple(self.stack))

    def finish(self) -> ZoneSketch:
        """The sketch: the zone at the line as :meth:`ZoneIndex.zone_at_line` gives it, or None."""
        hit, src = self.hit, self.src
        if hit is None or not (hit[1] == self.line or hit[4] is None or self.line <= hit[4][0]):
            return ZoneSketch(self.levels, self.lines, None, (), None)
        i, line, start, level, close, stack = hit
        first = src.find("\n", start)
        inner = len(src) if first < 0 else first + 1
        tag = sx.PERMISSION_TAG.match(src, start, inner)
        at = _to_bytes(src, array("q", (start, inner) + (close[1:] if close is not None else ())))
        owner = next((h for h in reversed(stack) if _is_container(h.kind, h.level)), None)
        zone = ZoneView(i, level, line, ByteOffset(at[0]), ByteOffset(at[1]), None if close is None else close[0],
                        None if close is None else ByteOffset(at[2]), None if close is None else ByteOffset(at[3]),
                        bool(tag and tag.group(3).strip()), None if owner is None else owner.index,
                        tuple(h.index for h in stack))

        def text(h: _Open) -> str:
            eol = src.find("\n", h.start)
            return src[h.start:eol if eol >= 0 else len(src)]
        return ZoneSketch(self.levels, self.lines, zone, tuple(text(h).rstrip("\r") for h in stack),
                          None if owner is None else container_name(owner.level, owner.kind, owner.keyword, owner.id,
                                                                    owner.name))


def once_per_file_lines(doc: Document) -> dict[str, int]:
    """The line of each once-per-file diagnostic of ``doc`` (its first occurrence)."""
    return {d.code: d.line for d in reversed(doc.diagnostics) if d.code in GLOBAL_CODES}


def _to_bytes(src: str, offsets: "array[int]") -> "array[int]":
    """Character offsets (ascending, :data:`NONE` aside) of ``src`` as UTF-8 byte offsets: one pass, written over
    ``offsets`` itself (the builder's column, read by nothing else), so the index never holds both."""
    if src.isascii():
        return offsets
    prev = acc = 0
    for i, v in enumerate(offsets):
        if v == NONE:
            continue
        if v < prev:  # not ascending (never, by the builder's order): count again from the start
            prev = acc = 0
        acc += _utf8_length(src, prev, v)
        prev = v
        offsets[i] = acc
    return offsets


#: How many characters :func:`_utf8_length` encodes at a time.
ENCODE_CHUNK = 1 << 16


def _utf8_length(src: str, start: int, end: int) -> int:
    """``len(encode(src[start:end]))``, a slice at a time: the span between two offsets of the index may be a
    whole zone, whose copy and encoding were held at once (W99: 3x the file of a one-zone journal)."""
    step = ENCODE_CHUNK
    return sum(len(encode(src[at:min(at + step, end)])) for at in range(start, end, step))


def _from_tree(doc: Document, builder: _Builder) -> None:
    """Feed ``builder`` from a parsed tree: its headers (§2.3) and, at each closing tag, its top-level zones."""
    src = doc.source
    # The parser's logical headers (§2.3): not the title, not refused (§5.5), not H6.
    heads = [b for b in headings(doc) if not b.refused and b.level not in (1, 6)]
    hi = 0
    for b in doc.blocks:
        if b.type != "permission_block":
            continue
        start = b.start
        if start == 0 and b.line > 1:  # the first top-level block also holds what precedes it
            start = _line_offset(src, b.line)
        close = _close_of(src, b)
        limit = close[0] if close is not None else float("inf")
        while hi < len(heads) and heads[hi].line < limit:
            _header_block(builder, heads[hi])
            hi += 1
        assert b.permission_level is not None  # every permission block has its level
        builder.zone(b.line, start, b.permission_level, close)
    for block in heads[hi:]:
        _header_block(builder, block)


def _header_block(builder: _Builder, block: Heading) -> None:
    builder.header(block.level, block.type, block.keyword, block.id,
                   block.name if block.name is not None else block.text, block.line, block.start)


def zone_hash(data: bytes, zone: ZoneView) -> str:
    """SHA-256 (hex) of the zone's inner bytes as on disk, between its tag lines (to the end of the file when it
    never closes): what a proposal records beside its container (W2)."""
    end = zone.close_start if zone.close_start is not None else len(data)
    return hashlib.sha256(data[zone.inner_start:end]).hexdigest()


def zone_base(data: bytes, index: ZoneIndex, zone: ZoneView) -> str:
    """The base an edit with ``base_hash`` compares (W9): SHA-256 (hex) of the header lines open at the zone's
    closing tag (its container, outermost first) and of its inner bytes.  It follows the zone when lines above
    it move, and differs for a zone with the same bytes in another container (empty journals made from one
    template), so an edit never lands in a look-alike zone that moved to the line the caller read."""
    end = zone.close_start if zone.close_start is not None else len(data)
    return zone_base_from(container_lines(index, zone), data[zone.inner_start:end])


def container_lines(index: ZoneIndex, zone: ZoneView) -> tuple[str, ...]:
    """The header lines open at ``zone``'s closing tag, outermost first: the container it belongs to."""
    text_of = index.headers.text_of
    return tuple(text_of(h).rstrip("\r") for h in zone.context)


def zone_base_from(context: tuple[str, ...], inner: bytes) -> str:
    """:func:`zone_base` from its parts: the container's header lines and the inner bytes."""
    h = hashlib.sha256()
    for line in context:
        h.update(encode(line) + b"\n")
    h.update(b"\0")
    h.update(inner)
    return h.hexdigest()


def _line_offset(src: str, line: int) -> int:
    pos = 0
    for _ in range(line - 1):
        pos = src.index("\n", pos) + 1
    return pos


def _close_of(src: str, zone: Block) -> tuple[int, int, int] | None:
    """Line, start and end offsets of a zone's closing tag line (None when it never closes)."""
    if zone.children:
        pos = zone.children[-1].end
        line = zone.children[-1].end_line + 1
    else:
        first = src.find("\n", zone.start)
        if first < 0:
            return None
        pos = first + 1
        line = zone.line + 1
        while pos < len(src):
            eol = src.find("\n", pos)
            seg = src[pos:eol if eol >= 0 else len(src)]
            if seg.strip():
                break
            if eol < 0:
                pos = len(src)
                break
            pos = eol + 1
            line += 1
    if pos >= len(src):
        return None
    eol = src.find("\n", pos)
    end = len(src) if eol < 0 else eol + 1
    m = sx.PERMISSION_TAG.match(src[pos:end].rstrip("\n").rstrip("\r"))
    if not m or not m.group(1) or m.group(3).strip():
        return None
    return line, pos, end


# -- container addresses ---------------------------------------------------------------------

def resolve_container(index: ZoneIndex, address: str) -> int:
    """The header index of the container named by ``address`` (see the module docstring)."""
    if not isinstance(address, str) or not address.strip():
        raise RefusedWrite("refused: give a container (a topic path such as 'Maintenance/Tyres' or a module id)",
                           code="UNKNOWN_CONTAINER")
    address = address.strip()
    # A whole-address match first (names may contain '/').
    if "/" in address:  # a name that itself contains '/'
        whole = _match(index, index.container_indexes(), address, top_only=False)
        if len(whole) == 1:
            return whole[0]
    parent: int | None = None
    segments = [s.strip() for s in address.split("/")]
    for seg in segments:
        found = _match(index, index.container_indexes(parent), seg, top_only=True)
        if not found:
            where = "at the top of the file" if parent is None else f"under {index.label(parent)}"
            raise RefusedWrite(f"refused: no container {quoted(seg)} {where}; known: "
                               f"{_known(index, parent)}", code="UNKNOWN_CONTAINER")
        if len(found) > 1:
            lines = ", ".join(str(index.header_line(i)) for i in found)
            raise RefusedWrite(f"refused: {quoted(seg)} names {len(found)} containers (lines {lines}); "
                               f"use '#n' for the n-th one", code="AMBIGUOUS_CONTAINER")
        parent = found[0]
    assert parent is not None  # an address has at least one segment
    return parent


def _match(index: ZoneIndex, pool: list[int], seg: str, *, top_only: bool) -> list[int]:
    m = re.fullmatch(r"#(\d+)", seg)
    if m:
        k = int(m.group(1))
        return [pool[k - 1]] if top_only and 1 <= k <= len(pool) else []
    plain = _by_id_or_name(index.headers, pool, seg, None)
    if plain:
        return plain
    km = _KEYWORD_SEGMENT.fullmatch(seg)
    if km:
        return _by_id_or_name(index.headers, pool, km.group(2).strip(), km.group(1))
    return []


def _by_id_or_name(headers: HeaderTable, pool: list[int], seg: str, keyword: str | None) -> list[int]:
    def kw_ok(h: int) -> bool:
        if keyword is None:
            return True
        kind, kw = headers.type_of(h), headers.keyword_of(h)
        if keyword == "MODULE":
            return kind == "module" and kw is None
        if keyword == "NUCLEUS":
            return kind == "nucleus"
        if keyword in ("SUB-MODULE", "SOTTOMODULO"):
            return kind == "sub_module"
        if keyword.startswith("SUBTOPIC"):
            return kw == "SUBTOPIC"
        return kw == keyword

    seg = name_key(seg)
    by_id = [h for h in pool if kw_ok(h) and (ident := headers.id[h]) is not None and name_key(ident) == seg]
    if by_id:
        return by_id
    return [h for h in pool if kw_ok(h) and name_key(headers.name_of(h)) == seg]


def _known(index: ZoneIndex, parent: int | None) -> str:
    headers = index.headers
    children = index.container_indexes(parent)
    names = []
    for h in children[:8]:
        ident = headers.id[h]
        names.append(ident if ident and headers.keyword_of(h) is None else headers.name_of(h))
    if not names:
        return "(none)"
    shown = ", ".join(quoted(n) for n in names)
    return shown + (f" and {len(children) - 8} more" if len(children) > 8 else "")


def journal_zones(index: ZoneIndex, container: int | None, levels: tuple[int, ...]) -> list[ZoneView]:
    """The closed zones of the given levels that pair with ``container`` (owner at their close)."""
    return _zones_of(index, container, levels, closed=True)


def _zones_of(index: ZoneIndex, container: int | None, levels: tuple[int, ...], *, closed: bool) -> list[ZoneView]:
    owner = NONE if container is None else container
    zones, close_line = index.zones, index.z_close_line
    return [index.zone(i) for i in range(len(zones))
            if zones.owner[i] == owner and zones.level[i] in levels and (close_line[i] != NONE) == closed]


#: The zone levels an append goes to, in order of preference, per actor (§5.2): the last [P4] zone that pairs
#: with the container, else the last [P5]; for the user, else the last [P3].
APPEND_LEVELS = {"ai": (4, 5), "user": (4, 5, 3)}


def journal_for(index: ZoneIndex, container: int | None, actor: str = "ai") -> ZoneView | None:
    """The zone an append by ``actor`` to ``container`` goes to (see :data:`APPEND_LEVELS`), or None."""
    for level in APPEND_LEVELS[actor]:
        zones = journal_zones(index, container, (level,))
        if zones:
            return zones[-1]
    return None


def unclosed_zones(index: ZoneIndex, container: int | None, levels: tuple[int, ...]) -> list[ZoneView]:
    """The zones of the given levels that open after ``container`` and never close (§5.4)."""
    return _zones_of(index, container, levels, closed=False)
