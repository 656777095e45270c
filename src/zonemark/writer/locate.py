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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core import syntax as sx
from ..core.document import Document
from ..core.headers import spelled_keyword
from ..core.nodes import Block, Heading
from ..core.outline import headings
from ..core.text import encode, name_key
from .offsets import ByteOffset, char_to_byte_map
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


#: What a zone is, fixed by the parse: (level, inline opening tag, owning container, open logical stack).
ZoneStatic = tuple[int, bool, "int | None", tuple[int, ...]]
#: Where the zones are, shifted by writes: opening lines, their starts, inner starts, closing lines, their
#: starts and ends (byte offsets; None for a zone never closed).
ZonePositions = tuple[list[int], list[ByteOffset], list[ByteOffset], list["int | None"], list["ByteOffset | None"],
                      list["ByteOffset | None"]]


class ZoneIndex:
    """Zones and logical headers of one file, with offsets that can be shifted.

    Offsets (``start``, ``inner_start``, ``close_start``, ``close_end``, header starts) are
    UTF-8 *byte* offsets into the file (:data:`.offsets.ByteOffset`), so a write splices bytes
    without decoding the file.
    """

    h_start: list[ByteOffset]
    z_start: list[ByteOffset]
    z_inner: list[ByteOffset]
    z_close_start: list[ByteOffset | None]
    z_close_end: list[ByteOffset | None]

    def __init__(self, file_type: str | None, title: str | None, headers: list[HeaderInfo], h_line: list[int],
                 h_start: list[ByteOffset], zones_static: list[ZoneStatic], z_pos: ZonePositions,
                 global_first: Mapping[str, int] | None = None) -> None:
        self.global_first: dict[str, int] = dict(global_first or {})  # code -> line of a once-per-file diagnostic
        self.file_type: str | None = file_type
        self.title: str | None = title
        self.headers: list[HeaderInfo] = headers
        self.h_line: list[int] = h_line
        self.h_start = h_start
        self.zones_static = zones_static
        self.z_line, self.z_start, self.z_inner, self.z_close_line, self.z_close_start, self.z_close_end = z_pos

    # -- construction --------------------------------------------------------------------
    @classmethod
    def build(cls, doc: Document) -> "ZoneIndex":
        src = doc.source
        headers: list[HeaderInfo] = []
        h_line: list[int] = []
        h_start: list[int] = []
        # The parser's logical headers (§2.3): not the title, not refused (§5.5), not H6.
        heads = [b for b in headings(doc) if not b.refused and b.level not in (1, 6)]
        zone_blocks = [b for b in doc.blocks if b.type == "permission_block"]
        # Walk headers in order; at each zone's closing tag, record the open logical stack.
        z_static: list[ZoneStatic] = []
        # per zone: opening line, its start, inner start, closing line, its start, its end (characters here)
        z_chars: tuple[list[int | None], ...] = ([], [], [], [], [], [])
        stack: list[HeaderInfo] = []
        hi = 0
        for b in zone_blocks:
            start = b.start
            if start == 0 and b.line > 1:  # the first top-level block also holds what precedes it
                start = _line_offset(src, b.line)
            close_line, close_start, close_end = _close_of(src, b)
            limit = close_line if close_line is not None else float("inf")
            while hi < len(heads) and heads[hi].line < limit:
                stack = _push(heads[hi], stack, headers, h_line, h_start)
                hi += 1
            owner = next((h.index for h in reversed(stack) if h.is_container), None)
            first = src.find("\n", start)
            inner = len(src) if first < 0 else first + 1
            tag = sx.PERMISSION_TAG.match(src, start, inner)
            inline = bool(tag and tag.group(3).strip())
            level = b.permission_level
            assert level is not None  # every permission block has its level
            z_static.append((level, inline, owner, tuple(h.index for h in stack)))
            for lst, v in zip(z_chars, (b.line, start, inner, close_line, close_start, close_end)):
                lst.append(v)
        while hi < len(heads):
            stack = _push(heads[hi], stack, headers, h_line, h_start)
            hi += 1
        to_bytes = char_to_byte_map(src, h_start + [v for lst in z_chars[1:3] + z_chars[4:] for v in lst
                                                     if v is not None])
        z_pos: ZonePositions = (
            [v for v in z_chars[0] if v is not None], [to_bytes[v] for v in z_chars[1] if v is not None],
            [to_bytes[v] for v in z_chars[2] if v is not None], z_chars[3],
            [None if v is None else to_bytes[v] for v in z_chars[4]],
            [None if v is None else to_bytes[v] for v in z_chars[5]])
        global_first = {d.code: d.line for d in reversed(doc.diagnostics) if d.code in GLOBAL_CODES}
        return cls(doc.file_type, doc.title, headers, h_line, [to_bytes[v] for v in h_start], z_static, z_pos,
                   global_first)

    # -- views ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.zones_static)

    def zone(self, i: int) -> ZoneView:
        level, inline, owner, context = self.zones_static[i]
        return ZoneView(i, level, self.z_line[i], self.z_start[i], self.z_inner[i], self.z_close_line[i],
                        self.z_close_start[i], self.z_close_end[i], inline, owner, context)

    def zone_at_line(self, line: int) -> ZoneView | None:
        """The zone whose opening tag is on ``line``, or that contains ``line``."""
        i = bisect.bisect_right(self.z_line, line) - 1
        if i < 0:
            return None
        close = self.z_close_line[i]
        if self.z_line[i] == line or close is None or line <= close:
            return self.zone(i)
        return None

    def header_line(self, index: int) -> int:
        return self.h_line[index]

    def containers(self) -> list[HeaderInfo]:
        return [h for h in self.headers if h.is_container]

    def name(self, index: int) -> str:
        """The container as a person reads it, ``TOPIC: Viaggi`` or ``MODULE 042: NAME`` (the history keeps it)."""
        h = self.headers[index]
        kw = spelled_keyword(h.keyword, h.level) or {"module": "MODULE", "sub_module": "SUB-MODULE",
                                                      "nucleus": "NUCLEUS"}.get(h.type)
        ident = f" {h.id}" if h.id and h.keyword is None else ""
        return f"{kw}{ident}: {h.name}" if kw else h.name

    def label(self, index: int | None) -> str:
        if index is None:
            return "the file"
        return f"{quoted(self.name(index))} (line {self.h_line[index]})"

    # -- shifting after a write -----------------------------------------------------------
    def shifted(self, at: ByteOffset, at_line: int, d_bytes: int, d_lines: int) -> "ZoneIndex":
        """A copy where every position at or after byte offset ``at`` (line ``at_line``) moves by ``d_bytes``."""
        def move(values: list[Any], pivot: int, delta: int) -> list[Any]:
            out = list(values)
            for k in range(len(out)):
                v = out[k]
                if v is not None and v >= pivot:
                    out[k] = v + delta
            return out

        # text inserted right after an opening line stays inside
        def move_inner(values: list[Any], pivot: int, delta: int) -> list[Any]:
            return [v + delta if v > pivot else v for v in values]
        pos = (move(self.z_line, at_line, d_lines), move(self.z_start, at, d_bytes),
               move_inner(self.z_inner, at, d_bytes), move(self.z_close_line, at_line, d_lines),
               move(self.z_close_start, at, d_bytes), move(self.z_close_end, at, d_bytes))
        first = {c: (n + d_lines if n >= at_line else n) for c, n in self.global_first.items()}
        return ZoneIndex(self.file_type, self.title, self.headers, move(self.h_line, at_line, d_lines),
                         move(self.h_start, at, d_bytes), self.zones_static, pos, first)


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
    return tuple(index.headers[h].text.rstrip("\r") for h in zone.context)


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


def _push(block: Heading, stack: list[HeaderInfo], headers: list[HeaderInfo], h_line: list[int],
          h_start: list[int]) -> list[HeaderInfo]:
    """The parser's logical stack (§2.3): pop deeper-or-equal headers, push this one."""
    stack = [h for h in stack]
    while stack and stack[-1].level >= block.level:
        stack.pop()
    is_container = block.type in _CONTAINER_TYPES or (block.level == 2 and block.type == "section")
    parent = next((h.index for h in reversed(stack) if h.type in _CONTAINER_TYPES), None)
    src = block.source
    eol = src.find("\n", block.start)
    text = src[block.start:eol if eol >= 0 else len(src)]
    name = block.name if block.name is not None else block.text
    info = HeaderInfo(len(headers), block.level, block.type, block.keyword, block.id, name or "", text,
                      is_container, parent)
    headers.append(info)
    h_line.append(block.line)
    h_start.append(block.start)
    stack.append(info)
    return stack


def _close_of(src: str, zone: Block) -> tuple[int | None, int | None, int | None]:
    """Line, start and end offsets of a zone's closing tag line (None when it never closes)."""
    if zone.children:
        pos = zone.children[-1].end
        line = zone.children[-1].end_line + 1
    else:
        first = src.find("\n", zone.start)
        if first < 0:
            return None, None, None
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
        return None, None, None
    eol = src.find("\n", pos)
    end = len(src) if eol < 0 else eol + 1
    m = sx.PERMISSION_TAG.match(src[pos:end].rstrip("\n").rstrip("\r"))
    if not m or not m.group(1) or m.group(3).strip():
        return None, None, None
    return line, pos, end


# -- container addresses ---------------------------------------------------------------------

def resolve_container(index: ZoneIndex, address: str) -> int:
    """The header index of the container named by ``address`` (see the module docstring)."""
    if not isinstance(address, str) or not address.strip():
        raise RefusedWrite("refused: give a container (a topic path such as 'Maintenance/Tyres' or a module id)",
                           code="UNKNOWN_CONTAINER")
    address = address.strip()
    containers = index.containers()
    # A whole-address match first (names may contain '/').
    if "/" in address:  # a name that itself contains '/'
        whole = _match(index, containers, None, address, top_only=False)
        if len(whole) == 1:
            return whole[0]
    parent: int | None = None
    segments = [s.strip() for s in address.split("/")]
    for seg in segments:
        found = _match(index, containers, parent, seg, top_only=True)
        if not found:
            where = "at the top of the file" if parent is None else f"under {index.label(parent)}"
            raise RefusedWrite(f"refused: no container {quoted(seg)} {where}; known: "
                               f"{_known(index, containers, parent)}", code="UNKNOWN_CONTAINER")
        if len(found) > 1:
            lines = ", ".join(str(index.header_line(i)) for i in found)
            raise RefusedWrite(f"refused: {quoted(seg)} names {len(found)} containers (lines {lines}); "
                               f"use '#n' for the n-th one", code="AMBIGUOUS_CONTAINER")
        parent = found[0]
    assert parent is not None  # an address has at least one segment
    return parent


def _children(containers: list[HeaderInfo], parent: int | None) -> list[HeaderInfo]:
    return [h for h in containers if h.parent == parent]


def _match(index: ZoneIndex, containers: list[HeaderInfo], parent: int | None, seg: str, *,
           top_only: bool) -> list[int]:
    pool = _children(containers, parent) if top_only else containers
    m = re.fullmatch(r"#(\d+)", seg)
    if m:
        k = int(m.group(1))
        return [pool[k - 1].index] if top_only and 1 <= k <= len(pool) else []
    plain = _by_id_or_name(pool, seg, None)
    if plain:
        return plain
    km = _KEYWORD_SEGMENT.fullmatch(seg)
    if km:
        return _by_id_or_name(pool, km.group(2).strip(), km.group(1))
    return []


def _by_id_or_name(pool: list[HeaderInfo], seg: str, keyword: str | None) -> list[int]:
    def kw_ok(h: HeaderInfo) -> bool:
        if keyword is None:
            return True
        if keyword == "MODULE":
            return h.type == "module" and h.keyword is None
        if keyword == "NUCLEUS":
            return h.type == "nucleus"
        if keyword in ("SUB-MODULE", "SOTTOMODULO"):
            return h.type == "sub_module"
        if keyword.startswith("SUBTOPIC"):
            return h.keyword == "SUBTOPIC"
        return h.keyword == keyword

    seg = name_key(seg)
    by_id = [h.index for h in pool if kw_ok(h) and h.id is not None and name_key(h.id) == seg]
    if by_id:
        return by_id
    return [h.index for h in pool if kw_ok(h) and name_key(h.name) == seg]


def _known(index: ZoneIndex, containers: list[HeaderInfo], parent: int | None) -> str:
    names = [(h.id if h.id and h.keyword is None else h.name) for h in _children(containers, parent)]
    if not names:
        return "(none)"
    shown = ", ".join(quoted(n) for n in names[:8])
    return shown + (f" and {len(names) - 8} more" if len(names) > 8 else "")


def journal_zones(index: ZoneIndex, container: int | None, levels: tuple[int, ...]) -> list[ZoneView]:
    """The closed zones of the given levels that pair with ``container`` (owner at their close)."""
    out = []
    for i, (level, _inline, owner, _ctx) in enumerate(index.zones_static):
        if owner == container and level in levels and index.z_close_line[i] is not None:
            out.append(index.zone(i))
    return out


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
    out = []
    for i, (level, _inline, owner, _ctx) in enumerate(index.zones_static):
        if owner == container and level in levels and index.z_close_line[i] is None:
            out.append(index.zone(i))
    return out
