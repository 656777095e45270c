"""What the index stores of one parsed file: its rows and its split points (§7.1.2, §7.1.3, §7.5).

**Rows.** One row per H6 entry (log or mnemonic node: title, date, body), one per container
(module, topic, sub-topic, sub-module, nucleus, plain H2 section: its name and its own text,
FUNCTION/TRIGGER/... sections included), and one per stretch of zone text that belongs to
neither (text at the top of a zone, a ``MODULE_STATE_REGISTRY``, a section whose module was
declared in an earlier zone).  Every row carries the path of the container that owns it —
the parser's owner for an entry (``Document.h6_owner``), the innermost open container for the
rest — so a search can be narrowed to a topic and its sub-topics.

**Split points.** The file is cut where the parser's state is fully described by the file type,
the open logical headers and, inside a zone, the zone's level: at every top-level block (a
zone, or text between zones) and at every H6 entry that is a direct child of a ``[P4]``/``[P5]``
zone.  Each row lies inside one piece.  The index keeps the pieces, so after an append it
re-parses only the piece that changed, behind a synthetic head that reproduces that state
(:mod:`.index`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..core.document import Document
from ..core.nodes import Block, Heading
from ..core.outline import OutlineNode
from ..core.syntax import CONTROL_CHARS
from ..core.text import name_key, printable

#: CJK scripts are written without spaces, which the FTS5 tokenizer would read as one long
#: token.  A zero-width space (a separator to the tokenizer, invisible to a reader) after every
#: such character makes each one a token; a query gets the same treatment, so a word becomes a
#: phrase of characters and matches inside a sentence.  Removed again from what is shown.
CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
                 "\U00020000-\U0002fa1f]")
ZWSP = "\u200b"

#: The split levels: zones whose direct children are only H6 entries, text and root lists (§5.5).
SPLIT_LEVELS = (4, 5)

_BLANK_RUN = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")


def _clean(text: str) -> str:
    """Text safe to store and to print: bytes that are not UTF-8 (kept by the parser, §1) as their
    ``\\xNN`` escapes, control characters (an escape sequence in a hand-edited file) as U+FFFD."""
    return CONTROL_CHARS.sub("\ufffd", printable(text))


def address(text: str) -> str:
    """A container path as stored and compared: :func:`_clean`, then Unicode NFC, so 'Città'
    typed (NFC) or pasted from a macOS file name (NFD) is one name, as for the writer."""
    return name_key(_clean(text))


def segment_cjk(text: str) -> str:
    """``text`` with a zero-width space after every CJK character (see :data:`CJK`)."""
    if text.isascii():
        return text
    if len(text) <= _CJK_SLICE:
        return CJK.sub(_zwsp_after, text)
    if CJK.search(text) is None:
        return text  # a long text with no CJK is not copied a slice at a time (B23)
    # a slice at a time: the substitution lists a piece per character it changes (B19)
    return "".join(CJK.sub(_zwsp_after, text[k:k + _CJK_SLICE]) for k in range(0, len(text), _CJK_SLICE))


_CJK_SLICE = 1 << 14


def _indexed(text: str) -> str:
    """``segment_cjk(_clean(text))``, a slice at a time for a long text that needs it (B23).

    Each substitution changes single characters, so the slices give the whole text's result; a long text
    that needs none is returned as it is. Escaping every kept byte of a whole body at once listed a piece
    per byte: 25x the file of random bytes."""
    if len(text) <= _CJK_SLICE:
        return segment_cjk(_clean(text))
    if _NEEDS_CLEANING.search(text) is None and (text.isascii() or CJK.search(text) is None):
        return text
    return "".join(segment_cjk(_clean(text[k:k + _CJK_SLICE])) for k in range(0, len(text), _CJK_SLICE))


def _indexed_bytes(text: str) -> str | bytes:
    """:func:`_indexed`, as its UTF-8 bytes when the text is long and not ASCII (what the index hands SQLite,
    ``index._bound``), made a slice at a time: a row of random bytes is not held as a string of four bytes
    per character beside its bytes (B23)."""
    if len(text) <= _CJK_SLICE or text.isascii():
        return _indexed(text)
    if _NEEDS_CLEANING.search(text) is None and CJK.search(text) is None:
        return text
    return b"".join(segment_cjk(_clean(text[k:k + _CJK_SLICE])).encode("utf-8")
                    for k in range(0, len(text), _CJK_SLICE))


#: What :func:`_clean` changes: a lone surrogate (a kept byte) or a control character.
_NEEDS_CLEANING = re.compile(r"[\ud800-\udfff\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _zwsp_after(m: re.Match[str]) -> str:
    return m.group() + ZWSP


def shown(text: str) -> str:
    """Stored text as a person reads it: without the zero-width spaces of :func:`segment_cjk`."""
    return text.replace(ZWSP, "")


@dataclass(frozen=True, slots=True)
class Row:
    """One searchable row; ``line`` is the 1-based line of its header (or first line)."""

    line: int
    kind: str  # entry | module | topic | subtopic | sub_module | nucleus | section | text
    container: str  # the owner's address: 'Maintenance/Tyres', '042', 'NUCLEUS 1'; '' = the file
    names: str  # the same path by names: 'Maintenance/Tyres', 'CURIOSITY'
    zone: int | None  # permission level (§5.2); None outside every zone
    date: str | None
    title: str
    body: str | bytes  # bytes: a long body as its UTF-8 bytes, when rows are handed to a sink (B23)
    context: str  # file title and container names, for ranking


@dataclass(frozen=True, slots=True)
class Split:
    """A point where the file may be cut: offset and line of a piece's first character.

    ``level`` is the level of the zone the piece starts inside (0: the piece starts a
    top-level block); ``stack`` the open logical headers there, as their header lines.
    """

    offset: int
    line: int
    level: int
    stack: tuple[str, ...]


# -- the logical stack, as the outline builds it ----------------------------------------------

def _pushes(h: Heading) -> bool:
    """Whether a header enters the logical stack (the rule of :func:`zonemark.core.outline.build_outline`)."""
    return not h.refused and h.level != 1 and not (h.level == 6 and h.type == "log")


_NON_SPACE = re.compile(r"\S")


def _stripped(src: str, start: int, end: int) -> str:
    """``src[start:end].strip()`` in one copy: a long entry's body is not sliced and then stripped (B19)."""
    first = _NON_SPACE.search(src, start, end)
    if first is None:
        return ""
    last = end
    while src[last - 1].isspace():
        last -= 1
    return src[first.start():last]


def _header_line(src: str, h: Block) -> str:
    eol = src.find("\n", h.start)
    return src[h.start:eol if eol >= 0 else len(src)].rstrip("\r")


#: where the text row being gathered starts: (line, owner line), None before its first text
_Start = tuple[int, int | None] | None


def _push(stack: list[tuple[int, Heading]], h: Heading) -> None:
    while stack and stack[-1][0] >= h.level:
        stack.pop()
    stack.append((h.level, h))


def split_points(doc: Document, start: int = 0) -> list[Split]:
    """The split points of ``doc`` at or after character offset ``start`` (see the module docstring).

    The caller checks that the first point is ``start`` itself when it needs one there.
    """
    src = doc.source
    points: list[tuple[int, int]] = []  # (offset, level)
    for b in doc.blocks:
        if b.end <= start:
            continue
        if b.start >= start:
            points.append((b.start, 0))
        if b.type == "permission_block" and b.permission_level in SPLIT_LEVELS:
            for c in b.children:
                if (c.start >= start and isinstance(c, Heading) and c.level == 6 and c.type == "log"
                        and not c.refused):
                    points.append((c.start, b.permission_level))
    out: list[Split] = []
    heads = _stack_headers(doc)
    stack: list[tuple[int, Heading]] = []
    k = 0
    line, prev = 1, 0
    for offset, level in points:
        while k < len(heads) and heads[k].start < offset:
            _push(stack, heads[k])
            k += 1
        line += src.count("\n", prev, offset)
        prev = offset
        out.append(Split(offset, line, level, tuple(_header_line(src, h) for _, h in stack)))
    return out


def stack_at(doc: Document, offset: int) -> tuple[str, ...]:
    """The open logical headers (their lines) before character ``offset``."""
    stack: list[tuple[int, Heading]] = []
    for h in _stack_headers(doc):
        if h.start >= offset:
            break
        _push(stack, h)
    return tuple(_header_line(doc.source, h) for _, h in stack)


def _stack_headers(doc: Document) -> list[Heading]:
    from ..core.outline import headings
    return [h for h in headings(doc) if _pushes(h)]


# -- rows ------------------------------------------------------------------------------------

_KIND = {None: "module", "TOPIC": "topic", "SUBTOPIC": "subtopic"}


def _segment(node: OutlineNode) -> tuple[str, str]:
    """(address, name) of one container for a path (the forms ``append --container`` accepts)."""
    if node.kind == "module" and node.keyword is None and node.id is not None:
        return node.id, node.name
    if node.kind == "nucleus" and node.id is not None:
        return f"NUCLEUS {node.id}", node.name
    return node.name, node.name


def _is_container(h: Heading) -> bool:
    """A container of the outline (:attr:`OutlineNode.is_container`): it owns entries and text."""
    return h.type in ("module", "sub_module", "nucleus") or (h.type == "section" and h.level == 2)


def _kind(h: Heading) -> str:
    if h.type == "module":
        return _KIND.get(h.keyword, "module")
    return h.type if h.type in ("sub_module", "nucleus") else "section"


class _Paths:
    """Address and name path of every container of the outline, by header line.

    As :mod:`zonemark.layer.containers` builds addresses: a module, topic, sub-topic, sub-module
    or nucleus prefixes the containers under it; a plain H2 section owns entries but prefixes
    nothing.  Segments are names (ids for modules), so two siblings with one name share a path.
    """

    def __init__(self, doc: Document):
        self.by_line: dict[int, tuple[str, str, OutlineNode]] = {}
        todo: list[tuple[OutlineNode, tuple[str, ...], tuple[str, ...]]] = [(doc.outline(), (), ())]
        while todo:
            node, addr, names = todo.pop()
            if node.kind != "file" and node.is_container:
                seg, name = _segment(node)
                own_addr, own_names = addr + (seg,), names + (name,)
                self.by_line[node.line] = ("/".join(own_addr), "/".join(own_names), node)
                if node.kind in ("module", "sub_module", "nucleus"):
                    addr, names = own_addr, own_names
            for child in node.children:
                todo.append((child, addr, names))

    def of(self, line: int | None) -> tuple[str, str]:
        hit = self.by_line.get(line) if line else None
        return (hit[0], hit[1]) if hit else ("", "")


class _Collector:
    def __init__(self, doc: Document, first_line: int, last_line: int, title: str | None,
                 sink: Callable[[Row], None] | None = None):
        self.doc = doc
        self.sink = sink  # given each row as it is made, instead of listing them (B23)
        self.src = doc.source
        self.first, self.last = first_line, last_line
        self.title = title or ""
        self.paths = _Paths(doc)
        self.rows: list[Row] = []
        self.stack: list[tuple[int, Heading]] = []  # (level, Heading) as in the outline

    def owner_line(self) -> int | None:
        for _level, h in reversed(self.stack):
            if _is_container(h):
                return h.line
        return None

    def emit(self, line: int, kind: str, owner_line: int | None, zone: int | None, date: str | None, title: str,
             body: str) -> None:
        if not (self.first <= line <= self.last):
            return
        container, names = self.paths.of(owner_line)
        body = _BLANK_RUN.sub("\n", body).strip()
        context = " ".join(p for p in (self.title, names.replace("/", " ")) if p)
        indexed = _indexed_bytes(body) if self.sink is not None else _indexed(body)
        row = Row(line, kind, address(container), address(names), zone, date, segment_cjk(_clean(title)),
                  indexed, segment_cjk(_clean(context)))
        if self.sink is not None:
            self.sink(row)
        else:
            self.rows.append(row)

    def run(self) -> list[Row]:
        for b in self.doc.blocks:
            if b.end_line < self.first or b.line > self.last:
                # still follow the headers, for the owners of what comes later
                self._follow(b)
                continue
            parts: list[str] = []
            start: list[_Start] = [None]
            if isinstance(b, Heading) and b.level == 1:
                self.walk(b.children, parts, start)
            elif b.type == "permission_block":
                self.walk(b.children, parts, start)
            else:
                self.walk((b,), parts, start)
            self.flush(parts, start, b.permission_level)
        return self.rows

    def _follow(self, b: Block) -> None:
        for x in b.walk():
            if isinstance(x, Heading) and _pushes(x):
                _push(self.stack, x)

    def flush(self, parts: list[str], start: list[_Start], zone: int | None) -> None:
        text = "".join(parts)
        parts.clear()  # each block's slice is freed once joined (B23)
        if text and not text.isspace() and start[0] is not None:
            line, owner = start[0]
            # what emit does, here, so that the joined text is freed as each copy is made (B23)
            text = _BLANK_RUN.sub("\n", text)
            text = text.strip()
            self.emit(line, "text", owner, zone, None, "", text)

    def walk(self, blocks: Iterable[Block], parts: list[str], start: list[_Start]) -> None:
        """Rows for entries and containers; everything else joins ``parts`` (the enclosing row's text)."""
        for b in blocks:
            if not isinstance(b, Heading):
                if b.type == "paragraph" and getattr(b, "syntax", None) in ("blank", "frontmatter"):
                    continue
                self._text(b, b.raw_markdown, parts, start)
            elif b.level == 6 and b.type == "log" and not b.refused:
                owner = self.doc.h6_owner.get(b.line, 0) or None
                eol = self.src.find("\n", b.start)
                body = _stripped(self.src, eol + 1, b.end) if 0 <= eol < b.end else ""
                self.emit(b.line, "entry", owner, b.permission_level, b.date, b.title or b.text, body)
            elif _pushes(b):
                _push(self.stack, b)
                if _is_container(b):
                    own: list[str] = []
                    self.walk(b.children, own, [None])
                    name = b.name if b.name is not None else b.text
                    self.emit(b.line, _kind(b), b.line, b.permission_level, None, name or "", "".join(own))
                else:
                    self._text(b, _header_line(self.src, b) + "\n", parts, start)
                    self.walk(b.children, parts, start)
            else:  # refused by §5.5, or a second H1: text, and its children are still walked
                self._text(b, _header_line(self.src, b) + "\n", parts, start)
                self.walk(b.children, parts, start)

    def _text(self, b: Block, text: str, parts: list[str], start: list[_Start]) -> None:
        if start[0] is None and text.strip():
            start[0] = (b.line, self.owner_line())
        parts.append(text)


def rows_of(doc: Document, *, first_line: int = 1, last_line: int | None = None, title: str | None = None,
            sink: Callable[[Row], None] | None = None) -> list[Row]:
    """The rows of ``doc`` whose line lies in ``[first_line, last_line]`` (all by default).

    With ``sink``, each row is given to it as it is made and the list returned is empty (B23)."""
    last = last_line if last_line is not None else max(doc.line_count, 1) + 1
    return _Collector(doc, first_line, last, doc.title if title is None else title, sink).run()
