"""Blocks under construction (frames) and their conversion to the frozen §13 tree.

The scanner opens a frame where a block starts and appends children to it; a frame does
not know where it ends.  When the next top-level block starts, the finished top-level frame
is built: each frame ends where its next sibling starts (the last child where its parent
ends, or before the closing tag of a zone), and :meth:`Frame.build` turns it into a frozen
:mod:`.nodes` block holding offsets into the source (§13.1: ``rawMarkdown`` is a slice).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from . import syntax as sx
from .headers import Header
from .nodes import Block, Heading, ListItem, Paragraph, Quote, Rule, fast_constructor

_new_block = fast_constructor(Block)
_new_heading = fast_constructor(Heading)
_new_paragraph = fast_constructor(Paragraph)
_new_list_item = fast_constructor(ListItem)


class Frame:
    """A block under construction: where it starts (1-based line, offset) and its zone's level.

    ``kind`` names the frame for the scanner's checks ('zone', 'heading', 'item', 'rule',
    'para', 'quote', 'title' or an opaque construct: 'fence', 'comment', 'frontmatter',
    'nuclei', 'sep').  Frames that hold children have a ``children`` list.
    """

    __slots__ = ("kind", "line", "start", "plevel")

    kind: str
    line: int
    start: int
    plevel: int | None

    def build(self, source: str, end: int, end_line: int) -> Block:
        """The frozen block of this frame, ending at offset ``end`` and line ``end_line``."""
        raise NotImplementedError


def add_child(children: list[Frame | Block], frame: Frame, source: str) -> None:
    """Append ``frame`` to an open frame's children: the child before it ends where ``frame``
    starts, so it is built now and its frame (with its own children) is freed at once, rather
    than every frame of a zone living until the zone ends (§13.1: siblings partition their parent)."""
    if children:
        last = children[-1]
        if isinstance(last, Frame):
            children[-1] = last.build(source, frame.start, frame.line - 1)
    children.append(frame)


def keep_open(children: list[Frame | Block], frame: Frame, source: str) -> None:
    """:func:`add_child` for a scan that builds no tree: only the open frame is kept (the one a
    later line may still extend), so a scan for diagnostics and facts holds no finished block."""
    if children:
        children[-1] = frame
    else:
        children.append(frame)


def pruning(keep: Callable[[Block], bool]) -> Callable[[list[Frame | Block], Frame, str], None]:
    """:func:`add_child` for a scan that hands each finished child to ``keep`` as it is built: a child ``keep``
    returns False for is dropped from its parent at once (its subtree is ``keep``'s now), so a scan that needs
    only some of the tree — the blocks outside an edited region — does not hold the others (B25).  The last child
    of each parent, built with the parent, and the top-level blocks are always kept."""
    def add(children: list[Frame | Block], frame: Frame, source: str) -> None:
        if children:
            last = children[-1]
            if isinstance(last, Frame):
                built = last.build(source, frame.start, frame.line - 1)
                if keep(built):
                    children[-1] = built
                else:
                    children.pop()
        children.append(frame)
    return add


def build_children(children: list[Frame | Block], source: str, end: int, end_line: int) -> tuple[Block, ...]:
    """The children as blocks: all but the last are built already (:func:`add_child`); the last
    ends at ``end``/``end_line``."""
    last = children[-1]
    if isinstance(last, Frame):
        children[-1] = last.build(source, end, end_line)
    # every child is a Block now
    return tuple(children)  # type: ignore[arg-type]


class LeafFrame(Frame):
    """A block without children: a separator, or an opaque construct (a paragraph with ``syntax``)."""

    __slots__ = ()

    _SYNTAX = {"fence": "code_fence", "comment": "html_comment", "frontmatter": "frontmatter",
               "nuclei": "nuclei_tag"}

    def __init__(self, kind: str, line: int, start: int, plevel: int | None) -> None:
        self.kind = kind
        self.line = line
        self.start = start
        self.plevel = plevel

    def build(self, source: str, end: int, end_line: int) -> Block:
        line = self.line
        if end_line <= line:  # equal: the line's own int object, not a second one
            end_line = line
        if self.kind == "sep":
            return _new_block("separator", line, end_line, self.start, end, self.plevel, (), source)
        return _new_paragraph("paragraph", line, end_line, self.start, end, self.plevel, (), source,
                              self._SYNTAX[self.kind], None, None)


class ParagraphFrame(Frame):
    """Free text; ``field`` is the ``(name, value)`` of a leading bold label (§11.1)."""

    __slots__ = ("field",)

    def __init__(self, line: int, start: int, plevel: int | None, field: tuple[str, str] | None = None) -> None:
        self.kind = "para"
        self.line = line
        self.start = start
        self.plevel = plevel
        self.field = field

    def build(self, source: str, end: int, end_line: int) -> Block:
        line = self.line
        if end_line <= line:  # equal: the line's own int object, not a second one
            end_line = line
        field = self.field
        if field is None:
            return _new_paragraph("paragraph", line, end_line, self.start, end, self.plevel, (), source,
                                  None, None, None)
        value = field[1]
        if end_line > line:  # §11.1: the value is the text after the colon, continuation lines included
            rest = [part.strip() for part in source[self.start:end].split("\n")[1:]]
            while rest and not rest[-1]:
                rest.pop()
            if rest:
                value = "\n".join([value, *rest]) if value else "\n".join(rest)
        return _new_paragraph("paragraph", line, end_line, self.start, end, self.plevel, (), source,
                              None, field[0], value)


class QuoteFrame(Frame):
    """A blockquote, or an attention anchor when ``severity`` is set (§6); ``lines`` its text."""

    __slots__ = ("severity", "lines")

    def __init__(self, line: int, start: int, plevel: int | None, severity: str | None, lines: list[str]) -> None:
        self.kind = "quote"
        self.line = line
        self.start = start
        self.plevel = plevel
        self.severity = severity
        self.lines = lines

    def build(self, source: str, end: int, end_line: int) -> Block:
        line = self.line
        if end_line <= line:  # equal: the line's own int object, not a second one
            end_line = line
        severity = self.severity
        return Quote("attention_anchor" if severity else "quote", line, end_line, self.start, end, self.plevel, (),
                     source, severity=severity, text="\n".join(self.lines).strip())


class ZoneFrame(Frame):
    """A permission block ``[Pn]`` (§5); ``tail`` is the offset of its closing tag, which no child covers."""

    __slots__ = ("children", "tail", "tail_line")

    plevel: int

    def __init__(self, line: int, start: int, plevel: int) -> None:
        self.kind = "zone"
        self.line = line
        self.start = start
        self.plevel = plevel
        self.children: list[Frame | Block] = []
        self.tail: int | None = None
        self.tail_line = 0

    def build(self, source: str, end: int, end_line: int) -> Block:
        line = self.line
        children: tuple[Block, ...] = ()
        if self.children:
            if self.tail is not None:
                children = build_children(self.children, source, self.tail, self.tail_line - 1)
            else:
                children = build_children(self.children, source, end, end_line)
        if end_line <= line:  # equal: the line's own int object, not a second one
            end_line = line
        return _new_block("permission_block", line, end_line, self.start, end, self.plevel, children, source)


class HeadingFrame(Frame):
    """A header H1-H6 and the blocks it governs.

    ``nuclei`` starts as the header's inline ``[NUCLEI: ...]`` and may be set by a tag on the
    next line (§7.4.4); ``refused`` marks a structural header in a zone that may not hold it (§5.5).
    """

    __slots__ = ("level", "header", "nuclei", "refused", "children", "text", "name", "title")

    def __init__(self, line: int, start: int, plevel: int | None, header: Header, refused: bool, text: str,
                 name: str | None, title: str | None) -> None:
        self.kind = "heading"
        self.line = line
        self.start = start
        self.plevel = plevel
        self.level = header.level
        self.header = header
        self.nuclei = header.nuclei
        self.refused = refused
        self.children: list[Frame | Block] = []
        self.text = text  # the header's text, name and title, as the scanner's string table shares them
        self.name = name
        self.title = title

    def build(self, source: str, end: int, end_line: int) -> Block:
        line = self.line
        children = build_children(self.children, source, end, end_line) if self.children else ()
        if end_line <= line:  # equal: the line's own int object, not a second one
            end_line = line
        level, _, kind, keyword, section, id_, _, _, _, _, date, _, _ = self.header
        return _new_heading(kind, line, end_line, self.start, end, self.plevel, children, source, level, self.text,
                            id_, self.name, keyword, section, self.nuclei, date, self.title, self.refused)


class TitleFrame(Frame):
    """The H1 title line (§3); ``title`` is its text without the file type tag."""

    __slots__ = ("text", "title")

    def __init__(self, line: int, start: int, text: str) -> None:
        self.kind = "title"
        self.line = line
        self.start = start
        self.plevel = None
        self.text = text
        self.title: str | None = None

    def build(self, source: str, end: int, end_line: int) -> Block:
        line = self.line
        if end_line <= line:  # equal: the line's own int object, not a second one
            end_line = line
        return Heading("section", line, end_line, self.start, end, None, (), source, level=1, text=self.text,
                       name=self.title, title=self.title)


class ItemFrame(Frame):
    """A list item (§8): its list ``level``, ``marker``, ``indent`` (columns) and text ``lines``."""

    __slots__ = ("level", "marker", "indent", "lines", "children")

    def __init__(self, line: int, start: int, plevel: int | None, level: int, marker: str, indent: int,
                 text: str) -> None:
        self.kind = "item"
        self.line = line
        self.start = start
        self.plevel = plevel
        self.level = level
        self.marker = marker
        self.indent = indent
        self.lines = [text]
        self.children: list[Frame | Block] = []

    def build(self, source: str, end: int, end_line: int) -> Block:
        line = self.line
        children = build_children(self.children, source, end, end_line) if self.children else ()
        if end_line <= line:  # equal: the line's own int object, not a second one
            end_line = line
        return _new_list_item("list", line, end_line, self.start, end, self.plevel, children, source, self.level,
                              self.marker, "\n".join(self.lines))


class RuleFrame(ItemFrame):
    """A rule bullet ``* Xn: title`` (§9.4); its body is its further lines and sub-items."""

    __slots__ = ("prefix", "number", "title")

    def __init__(self, line: int, start: int, plevel: int | None, indent: int, text: str, prefix: str, number: int,
                 title: str) -> None:
        super().__init__(line, start, plevel, 1, "*", indent, text)
        self.kind = "rule"
        self.prefix = prefix
        self.number = number
        self.title = title

    def build(self, source: str, end: int, end_line: int) -> Block:
        line = self.line
        children = build_children(self.children, source, end, end_line) if self.children else ()
        if end_line <= line:  # equal: the line's own int object, not a second one
            end_line = line
        body = "\n".join(self.lines[1:] + [item.text for item in _walk_items(children)
                                            if isinstance(item, ListItem)]) or None
        return Rule("rule", line, end_line, self.start, end, self.plevel, children, source, prefix=self.prefix,
                    rule_number=self.number, category=sx.RULE_CATEGORIES.get(self.prefix, "general"),
                    title=self.title, body=body)


def _walk_items(items: tuple[Block, ...]) -> Iterator[Block]:
    for item in items:
        yield item
        yield from _walk_items(item.children)
