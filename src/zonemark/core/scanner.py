"""The line scanner: one pass over the lines that builds both layers at once (§2.4).

The scan keeps two stacks:

* the *physical* one — the open ``[Pn]`` zone and, inside it, the open header and list
  frames (:mod:`.tree`) that become the §13 block tree;
* the *logical* one — the open headers across zones (§2.3: a zone boundary closes
  nothing), used for hierarchy checks, container ownership of H6 nodes, STATE,
  CONNECTIONS and rules placement.

What a header line declares comes from :mod:`.headers`; what only the whole file can
tell is recorded in :class:`~.facts.Facts` for :mod:`.checks`.  With ``tree=True`` each
top-level frame is built into frozen blocks as soon as its extent is known; without it no
block is built and each frame is dropped once a later line can no longer extend it (the
parse's findings and facts need none; ``Document.blocks`` scans again for the tree, W96).
Every problem becomes a :class:`~.diagnostics.Diagnostic`; nothing raises.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import cast

from . import syntax as sx
from .diagnostics import Pending
from .facts import Container, Declaration, EntryOwners, Facts, ListItemMark
from .headers import MODULE, NUCLEUS, STATE_REGISTRY, Finding, Header, classify_header, read_header
from .nodes import Block, Connection, ModuleType, Paragraph, fast_constructor
from .tree import (Frame, HeadingFrame, ItemFrame, LeafFrame, ParagraphFrame, QuoteFrame, RuleFrame, TitleFrame,
                   ZoneFrame, add_child, keep_open)

_CONTAINER_KINDS = frozenset(("module", "sub_module", "nucleus"))
#: Lists have three levels (§8); deeper nesting is reported and flattened past this depth so
#: that no input can make the tree deep enough to exhaust recursion in its consumers.
_MAX_LIST_DEPTH = 16
#: First characters of a line that can only be prose (fast path of the scan).
_PLAIN_START = frozenset(
    c for c in map(chr, range(32, 0x3000)) if c not in "#[`~<>*+-_0123456789 \t\u00a0") - {"\ufeff"}
_new_connection = fast_constructor(Connection)
#: Where an H6 or a bullet looks for its section: not yet looked up since the last header.
_UNSET = "?"


class _Open:
    """An open header on the logical (cross-zone) stack; ``container`` when it declares one."""

    __slots__ = ("level", "kind", "section", "line", "container")

    def __init__(self, level: int, kind: str, section: str | None, line: int, container: Container | None) -> None:
        self.level = level
        self.kind = kind
        self.section = section
        self.line = line
        self.container = container


#: How many distinct strings a parse's string table keeps before it starts again: bounded memory
#: whatever the file, and a run of repeated headers or findings still shares one string.
SHARED_MAX = 4096


def _shared(table: dict[str, str], text: str, limit: int = SHARED_MAX) -> str:
    """``text``, or the equal string ``table`` already holds (W94): one object for each repeated
    message, header text, name or title of a file; the table is emptied when it holds ``limit``."""
    got = table.get(text)
    if got is None:
        if len(table) >= limit:
            table.clear()
        table[text] = got = text
    return got


def scan_blocks(text: str) -> tuple[Block, ...]:
    """The top-level blocks of ``text``: a scan that builds the tree (its findings are dropped:
    the parse that made the document has them already)."""
    scanner = Scanner(text, None, report=False)
    scanner.run()
    return tuple(scanner.top)


def scan_structure(text: str, on_header: Callable[[HeadingFrame], None],
                   on_zone: Callable[[ZoneFrame], None] | None = None) -> tuple[str | None, str | None]:
    """Call ``on_header`` with each header's frame as the scan opens it (the title's excepted) and
    ``on_zone``, when given, with each permission zone's frame as the scan ends it (at its closing
    tag, or at the end of the file), in document order; no block is built, no finding kept.
    Returns the file type and title."""
    scanner = Scanner(text, None, tree=False, report=False)
    scanner.on_header = on_header
    scanner.on_zone = on_zone
    scanner.run()
    return scanner.file_type or scanner.recover_type, scanner.title


def header_at(text: str, off: int, memory: bool, reminder: bool) -> Header:
    """The header of the H2-H6 line at offset ``off`` of ``text``, as the scan read it (``memory`` and ``reminder``:
    the file's kind then, §3): read again from its line, for the outline that keeps a header's offset, not its
    strings (B21).  The line is the scan's: without its ``\r``, and line 1 without the byte order mark."""
    end = text.find("\n", off)
    s = text[off:] if end < 0 else text[off:end]
    if s.endswith("\r"):
        s = s[:-1]
    if off == 0 and s.startswith("\ufeff"):
        s = s[1:]
    stripped, indent = _indented(s)
    level, header_text, text_column, _ = read_header(s, stripped, indent)
    return classify_header(level, header_text, indent + 1, memory, reminder, text_column)


class Scanner:
    """Reads one file's text line by line; :meth:`run` returns its blocks, diagnostics and facts."""

    def __init__(self, text: str, path: str | None, *, tree: bool = True, report: bool = True) -> None:
        self.src = text
        self.path = path
        self.tree = tree  # False: diagnostics and facts only, no block is built (the tree is built on use)
        self.report = report  # False: findings are not kept (a scan again of a parsed text, which has them),
        # nor the facts only the checks read (every container, declaration and list run, B10)
        self.add_child: Callable[[list[Frame | Block], Frame, str], None] = add_child if tree else keep_open
        self.on_header: Callable[[HeadingFrame], None] | None = None  # told of each header frame it opens
        self.on_zone: Callable[[ZoneFrame], None] | None = None  # told of each zone frame it ends
        self.diags: list[Pending] = []  # made into Diagnostics, with their extent, by the parser
        self.messages: dict[str, str] = {}  # each distinct message once (diag; at most SHARED_MAX)
        self.shared: dict[str, str] = {}  # each distinct header text, name and title once (at most shared_max)
        #: A scan whose tree is pruned (:func:`.tree.pruning`) keeps a small table: the headers it drops are not
        #: held by the table either (B27)
        self.shared_max = SHARED_MAX
        self.facts = Facts()
        self.file_type: str | None = None
        self.title: str | None = None
        self.title_line: int | None = None
        self.title_pending = True  # still waiting for the first significant line
        self.recover_type: str | None = None  # file type read from a misplaced tagged H1
        self.memory = False
        self.top: list[Block] = []  # finished top-level blocks
        self.top_frame: Frame | None = None  # the current top-level frame (its end is not known yet)
        self.stack: list[Frame] = []  # open frames inside the current top-level context
        self.zone: ZoneFrame | None = None  # the open permission-block frame
        self.zone_level: int | None = None  # its level
        self.nested: list[int] = []  # levels of ignored nested opening tags (§5.4 recovery)
        self.leaf: Frame | None = None  # open paragraph / quote frame
        self.list_stack: list[ItemFrame] = []  # the open list's items, outermost first
        self.list_items: list[ListItemMark] = []  # the open list's bullets, for §8.1
        self.list_canonical = True  # every bullet of the open list so far has its level's marker (§8.1)
        self.blank_before = True
        self.logical: list[_Open] = []
        self.prev_level = 1
        self.rules_seen: dict[tuple[str, int], int] = {}
        self.pending_state: Container | None = None  # container whose ### STATE section awaits its value
        self.section_now: str | None = _UNSET  # cache of _section() while the logical stack is unchanged
        self.entry_owner_now: int | None = None  # cache of _entry_owner() likewise (None: not looked up)
        self.in_entry = False  # after an H6: bullets belong to the entry, not to a section
        self.registry_zone: ZoneFrame | None = None  # the zone of the file's registry (§7.3.1: entries live there)
        self.last_decl: tuple[HeadingFrame, Container, int] | None = None  # container declared on the previous line
        self.h6_owner = EntryOwners()
        self.ignored_lines: set[int] = set()
        self.standard_version: str | None = None
        self.frontmatter: str | None = None
        self.container_names: dict[str | None, int] = {}  # topic name -> line, at the file's level
        self.line_count = 0
        self.fence: tuple[str, int] | None = None  # the (character, length) of the fence the last line opened

    # -- diagnostics -------------------------------------------------------------------
    def diag(self, code: str, line: int, col: int, message: str, *, related: int | None = None,
             count: int | None = None) -> None:
        if self.report:
            self.diags.append((code, line, col, _shared(self.messages, message), self.path, related, count))

    def _findings(self, findings: tuple[Finding, ...], lineno: int) -> None:
        for f in findings:
            self.diag(f.code, lineno, f.column, f.message)

    # -- the scan ----------------------------------------------------------------------
    def run(self) -> None:
        """Scan every line; the blocks are in ``top``, problems in ``diags``, the rest in ``facts``."""
        src = self.src
        facts = self.facts
        ctl = sx.first_control_char(src)
        if ctl:
            count = sx.count_control_chars(src, ctl.start())
            ln = src.count("\n", 0, ctl.start()) + 1
            col = ctl.start() - (src.rfind("\n", 0, ctl.start()) + 1) + 1
            self.diag("CONTROL_CHARACTER", ln, col,
                      f"control character U+{ord(ctl.group()):04X} ({count} in the file)", count=count)
        if src.startswith("\ufeff"):
            self.diag("BYTE_ORDER_MARK", 1, 1, "the file starts with a UTF-8 byte order mark")
        lineno, off = self._frontmatter()
        has_cr = "\r" in src
        bom = lineno == 0 and src.startswith("\ufeff")  # stripped from line 1 (reported above)
        plain = _PLAIN_START
        comment_end = sx.COMMENT_END
        fence: tuple[str, int] | None = None  # the open code fence's (character, length)
        fence_frame: Frame | None = None
        comment: Frame | None = None  # the open HTML comment
        opaque = False  # inside a fence or a comment
        para_open = False  # the last significant line left a paragraph open that prose continues
        blank = True
        for lines in _chunks(src, off):
            for line in lines:
                lineno += 1
                line_off = off
                off += len(line) + 1
                if has_cr and "\r" in line:
                    if line.endswith("\r"):
                        facts.crlf_count += 1
                        if facts.crlf_first is None:
                            facts.crlf_first = lineno
                        s = line[:-1]
                    else:
                        s = line
                    if "\r" in s:
                        facts.bare_cr_count += 1
                        if facts.bare_cr_first is None:
                            facts.bare_cr_first = (lineno, s.index("\r") + 1)
                else:
                    s = line
                if bom:
                    bom = False
                    if s.startswith("\ufeff"):
                        s = s[1:]

                # Opaque regions: nothing inside is structure.
                if opaque:
                    if fence is not None:
                        if sx.closes_fence(s, fence):
                            fence = None
                            opaque = False
                    elif comment_end in s:
                        comment = None
                        opaque = False
                    continue
                if not s or s.isspace():
                    blank = True
                    continue
                # Fast path: a prose line that continues the open paragraph.
                if para_open and not blank and s[0] in plain:
                    continue
                self.blank_before = blank
                blank = False
                opened = self._line(s, lineno, line_off)
                if opened is not None:
                    opaque = True
                    if opened.kind == "fence":
                        fence = self.fence
                        fence_frame = opened
                    else:
                        comment = opened
                leaf = self.leaf
                para_open = (leaf is not None and leaf.kind == "para" and not self.list_stack
                             and self.pending_state is None)
        self.blank_before = blank
        self.line_count = lineno

        # -- end of file --
        if fence_frame is not None and fence is not None:
            self.diag("UNCLOSED_CODE_FENCE", fence_frame.line, 1,
                      "code fence is never closed: the rest of the file is code")
        if comment is not None:
            self.diag("UNCLOSED_HTML_COMMENT", comment.line, 1,
                      "HTML comment is never closed: the rest of the file is comment")
        if self.title_pending:
            self.title_pending = False
            self.diag("MISSING_FILE_TYPE", 1, 1,
                      "the file has no H1 title with a file type tag ([reminder], [external_module]"
                      " or [external_memory])")
        self.leaf = None
        self._close_list()
        if self.zone is not None:
            z = self.zone
            opening = src[z.start:z.start + 64]
            near = re.compile(rf"^[ \t]*\[/P{z.plevel}\][ \t]*\S", re.M).search(src, z.start)
            if near is None:
                self.diag("UNCLOSED_PERMISSION_BLOCK", z.line, len(opening) - len(opening.lstrip(" \t")) + 1,
                          f"[P{z.plevel}] is never closed: add [/P{z.plevel}] before the end of the file")
            else:  # a near miss: the closing tag with text after it closes nothing (§5.1)
                near_line = src.count("\n", 0, near.start()) + 1
                self.diag("UNCLOSED_PERMISSION_BLOCK", z.line, len(opening) - len(opening.lstrip(" \t")) + 1,
                          f"[P{z.plevel}] is never closed: [/P{z.plevel}] on line {near_line} has text after it, "
                          f"and a closing tag must stand alone on its line", related=near_line)
            if self.on_zone is not None:
                self.on_zone(z)
            self.zone = self.zone_level = None
        self.stack = []
        self._flush_top(len(src), lineno)
        if not self.top and src and self.tree:
            self.top.append(Paragraph("paragraph", 1, max(lineno, 1), 0, len(src), None, (), src, syntax="blank"))

    def _line(self, s: str, lineno: int, off: int) -> Frame | None:
        """Dispatch one non-blank line; returns the frame of an opened fence or comment."""
        c = s[0]
        if c == " " or c == "\t":
            stripped, indent = _indented(s)
        else:
            stripped = s
            indent = 0
        c0 = stripped[0]

        if self.title_pending:
            if sx.takes_the_title(s):  # comments before the title are allowed
                self.title_pending = False
                if c == "#" and not s.startswith("##"):
                    self._title(s, lineno, off)
                    return None
                self._missing_title(s, lineno)

        if c0 in _PLAIN_START:  # prose: none of the tests below can match
            self.last_decl = None
            self._text_line(s, stripped, indent, lineno, off)
            return None
        if c0 == "[" and indent <= 3:
            m = sx.PERMISSION_TAG.match(s)
            if m and self._permission_tag(m, s, lineno, off):
                self.last_decl = None
                return None
            last = self.last_decl
            if last is not None and last[2] == lineno - 1 and sx.NUCLEI_LINE.fullmatch(s):
                self._nuclei_line(s, lineno, off, last)
                return None
        self.last_decl = None

        if indent <= 3:
            if c0 == "#":
                if self._heading(s, stripped, indent, lineno, off):
                    return None
            elif c0 == "`" or c0 == "~":
                opener = sx.fence_opener(s)
                if opener is not None:
                    self.fence = opener
                    return self._leaf_block(LeafFrame("fence", lineno, off, self.zone_level))
            elif c0 == "<":
                if sx.COMMENT_OPEN.match(s):
                    frame = self._leaf_block(LeafFrame("comment", lineno, off, self.zone_level))
                    if self.standard_version is None:
                        pin = sx.VERSION_PIN.fullmatch(s)
                        if pin:
                            self._version_pin(pin.group(1), lineno, indent)
                    if sx.comment_left_open(s):
                        return frame
                    return None
            elif c0 == ">":
                self._quote_line(s, lineno, off, indent)
                return None

        if c0 in "*-" and indent == 0 and s[1:2] == c0 and s.rstrip() in sx.SEPARATORS:
            self._separator(lineno, off)
            return None
        if c0 in "*+-0123456789":
            item = sx.list_item(s)
            if item is not None:
                self._list_item(item, s, lineno, off)
                return None
        self._text_line(s, stripped, indent, lineno, off)
        return None

    # -- frontmatter and title (§10.2, §3) ----------------------------------------------
    def _frontmatter(self) -> tuple[int, int]:
        """YAML frontmatter on the very first line (§10.2); returns the lines it spans and their length.

        It walks line positions and slices only the frontmatter's own text: splitting the file, even
        ``split("\\n", 1)`` for the first line, copied all of it (a second text of 4 bytes a character
        for a file of invalid UTF-8)."""
        src = self.src
        n = len(src)
        start = 0
        while src.startswith("\ufeff", start):  # the byte order marks before line 1 (reported by the scan)
            start += 1
        first_end = src.find("\n", start)
        if not sx.is_frontmatter_fence(src[start:n if first_end == -1 else first_end]):
            return 0, 0
        body = n if first_end == -1 else first_end + 1  # where line 1 starts
        # line j starts at `pos`; `prev` is where line j - 1 starts
        j, pos, prev = 1, body, start
        end: int | None = None  # the line that ends the frontmatter, and where it starts
        end_at = start
        stop: tuple[int, int] | None = None  # the first line that stops an unclosed frontmatter
        while pos < n:
            nl = src.find("\n", pos)
            line_end = n if nl == -1 else nl
            line = src[pos:line_end]
            if sx.is_frontmatter_fence(line):
                end, end_at = j, pos
                break
            if stop is None and line.startswith(sx.UNCLOSED_FRONTMATTER_STOP):
                stop = (j - 1, prev)
            j, prev, pos = j + 1, pos, line_end + 1
        if end is None:
            self.diag("UNCLOSED_FRONTMATTER", 1, 1, "YAML frontmatter opened on line 1 is never closed by ---")
            end, end_at = stop if stop is not None else (j - 1, prev)
        text = src[body:end_at - 1] if end >= 2 else ""
        self.frontmatter = _TRAILING_CRS.sub("", text) if "\r" in text else text
        self._new_top(LeafFrame("frontmatter", 1, 0, None))
        skip = end + 1
        nl = src.find("\n", end_at)
        offset = n + 1 if nl == -1 else nl + 1  # just after the frontmatter's last line
        if "\r" in src[start:offset]:  # §1 binds the whole file, the frontmatter's lines too
            facts = self.facts
            pos = start
            for j in range(1, skip + 1):
                nl = src.find("\n", pos)
                line_end = n if nl == -1 else nl
                line = src[pos:line_end]
                pos = line_end + 1
                if line.endswith("\r"):
                    facts.crlf_count += 1
                    if facts.crlf_first is None:
                        facts.crlf_first = j
                    line = line[:-1]
                if "\r" in line:
                    facts.bare_cr_count += 1
                    if facts.bare_cr_first is None:
                        facts.bare_cr_first = (j, line.index("\r") + 1)
        return skip, offset

    def _title(self, s: str, lineno: int, off: int) -> None:
        _, text, _, findings = read_header(s, s, 0, hashtag_is_text=False)
        self._findings(findings, lineno)
        frame = TitleFrame(lineno, off, text)
        self._new_top(frame)
        self.title_line = lineno
        tags = sx.FILE_TAG.findall(text)
        if not tags:
            loose = sx.LOOSE_FILE_TAG.search(text)
            if loose:
                word = loose.group(1).lower()
                full = sx.SHORT_FILE_TYPES.get(word, word.replace(" ", "_").replace("-", "_"))
                if "_" not in full:
                    full = full.replace("external", "external_")
                self.diag("MISSING_FILE_TYPE", lineno, loose.start() + 3,
                          f"'{loose.group(0)}' is not a file type tag: write [{full}] in the H1"
                          + (" (the short form is for filenames only, §3.4)" if word in sx.SHORT_FILE_TYPES else ""))
            else:
                self.diag("MISSING_FILE_TYPE", lineno, 1,
                          "the H1 has no file type tag ([reminder], [external_module] or [external_memory])")
            self.title = frame.title = text
            return
        if len(tags) > 1:
            self.diag("MULTIPLE_FILE_TYPES", lineno, 1,
                      f"the H1 has {len(tags)} file type tags ({', '.join('[' + t + ']' for t in tags)}); "
                      f"one is allowed")
            self.title = frame.title = sx.FILE_TAG.sub("", text).strip()
            return
        tag = "[" + tags[0] + "]"
        if not (text.startswith(tag) or text.endswith(tag)):
            self.diag("MISSING_FILE_TYPE", lineno, text.index(tag) + 3,
                      f"{tag} must be at the start or the end of the H1 (# Title {tag} or # {tag} Title)")
            self.recover_type = tags[0]
        else:
            self.file_type = tags[0]
        self.memory = tags[0] == "external_memory"
        self.title = frame.title = _without_tag(text, tag)

    def _missing_title(self, s: str, lineno: int) -> None:
        if s.startswith("##"):
            msg = "the first line must be an H1 (# Title [reminder]), not this header"
        elif s.lstrip().startswith("#"):
            msg = "the H1 title must start at the beginning of its line (# Title [reminder]), without indentation"
        else:
            msg = "the first non-empty line must be the H1 title with a file type tag"
        self.diag("MISSING_FILE_TYPE", lineno, 1, msg)

    def _version_pin(self, value: str, lineno: int, col: int) -> None:
        self.standard_version = value
        ver = sx.parse_version(value)
        if ver is None:
            self.diag("UNSUPPORTED_STANDARD_VERSION", lineno, col + 1,
                      f"unreadable version pin '{value}' (expected e.g. v1.13); parsed as v1.13")
        elif ver > sx.SUPPORTED_VERSION:
            self.diag("UNSUPPORTED_STANDARD_VERSION", lineno, col + 1,
                      f"the file pins {value}, newer than v1.13; parsed with v1.13 rules")

    # -- frames ------------------------------------------------------------------------
    def _new_top(self, frame: Frame) -> None:
        """Start a new top-level block: the previous one ends here."""
        if self.tree:  # without the tree, the finished frame is only dropped
            if self.top_frame is not None:
                self.top.append(self.top_frame.build(self.src, frame.start, frame.line - 1))
            elif frame.start != 0:
                # Leading blank lines: a block of their own, so every block's line matches its offset.
                self.top.append(Paragraph("paragraph", 1, frame.line - 1, 0, frame.start, None, (), self.src,
                                          syntax="blank"))
        self.top_frame = frame

    def _flush_top(self, end: int, n: int) -> None:
        if self.top_frame is not None:
            if self.tree:
                self.top.append(self.top_frame.build(self.src, end, n))
            self.top_frame = None

    def _add(self, frame: Frame) -> None:
        """Put a new frame in the open header, zone or item, or start a top-level block with it."""
        if self.stack:
            self.add_child(self.stack[-1].children, frame, self.src)  # type: ignore[attr-defined]
        else:
            self._new_top(frame)

    def _close_list(self) -> None:
        if self.list_stack:
            stack = self.stack
            while stack and stack[-1].kind in ("item", "rule"):
                stack.pop()
            self.list_stack = []
            if self.list_items:
                if not self.list_canonical and self.report:
                    self.facts.list_runs.append(self.list_items)
                self.list_items = []
                self.list_canonical = True

    def _leaf_block(self, frame: Frame) -> Frame:
        """Add a block that holds no other block (closing an open paragraph or list)."""
        self.leaf = None
        if self.list_stack:
            self._close_list()
        self._add(frame)
        return frame

    # -- permission tags (§5) ----------------------------------------------------------
    def _permission_tag(self, m: re.Match[str], s: str, lineno: int, off: int) -> bool:
        closing, digits, rest = m.group(1), m.group(2), m.group(3)
        col = s.index("[") + 1
        if closing and rest.strip():
            return False
        if not closing and rest and not rest[0].isspace():
            return False
        level = int(digits) if len(digits) < 3 else 0
        if not 1 <= level <= 5:
            self.diag("INVALID_PERMISSION_LEVEL", lineno, col,
                      f"[{'/' if closing else ''}P{digits}] is not a permission tag (levels are 1-5); read as text")
            return False
        if self.title_pending:
            self.title_pending = False
            self._missing_title(s, lineno)
        zone = self.zone
        if not closing:
            if zone is not None:
                self.diag("NESTED_PERMISSION_BLOCK", lineno, col,
                          f"[P{level}] inside the open [P{zone.plevel}] block (opened line {zone.line}):"
                          " permission blocks do not nest; read as text", related=zone.line)
                self.nested.append(level)
                return False
            self.leaf = None
            self._close_list()
            frame = ZoneFrame(lineno, off, level)
            self._new_top(frame)
            self.zone = frame
            self.zone_level = level
            self.stack = [frame]
            if rest.strip():
                # "[Pn] text": the tag opens a paragraph (§5.1).
                p = ParagraphFrame(lineno, off + m.start(3) + (len(rest) - len(rest.lstrip())), level)
                self.add_child(frame.children, p, self.src)
                self.leaf = p
            return True
        if zone is None:
            self.diag("MISMATCHED_PERMISSION_BLOCK", lineno, col,
                      f"[/P{level}] closes no open permission block; read as text")
            return False
        if self.nested and self.nested[-1] == level:
            self.nested.pop()
            return False
        if level != zone.plevel:
            if zone.plevel >= 4:
                self.diag("MISMATCHED_PERMISSION_BLOCK", lineno, col,
                          f"[/P{level}] does not match the open [P{zone.plevel}] (line {zone.line});"
                          f" inside a writable zone it is read as text", related=zone.line)
                return False
            self.diag("MISMATCHED_PERMISSION_BLOCK", lineno, col,
                      f"[/P{level}] does not match the open [P{zone.plevel}] (line {zone.line});"
                      f" taken as its closing tag", related=zone.line)
        self.leaf = None
        self._close_list()
        zone.tail = off
        zone.tail_line = lineno
        if self.on_zone is not None:
            self.on_zone(zone)
        self.stack = []
        self.zone = self.zone_level = None
        self.nested = []
        self.pending_state = None
        self.in_entry = False  # a log entry ends at the closing tag of its zone (§7.5, v1.12 note)
        return True

    # -- headers (§4, §7) --------------------------------------------------------------
    def _heading(self, s: str, stripped: str, indent: int, lineno: int, off: int) -> bool:
        level, text, text_column, findings = read_header(s, stripped, indent)
        if not level:
            return False  # '#hashtag', '#1', '#######': text
        if findings:
            self._findings(findings, lineno)
        col = indent + 1
        plevel = self.zone_level
        if level == 1:
            header = self._second_h1(text, lineno, col)
        else:
            header = classify_header(level, text, col, self.memory,
                                     (self.file_type or self.recover_type) == "reminder", text_column)
            if header.findings:
                self._findings(header.findings, lineno)
        kind = header.kind

        # Zone placement (§5.4, §5.5 Invariant 1).
        refused = False
        # §5.4 "headers # through ######": an H1 after the title is placed like any header.
        if level >= 2 or self.title_line is not None or self.file_type:
            if plevel is None:
                self.diag("UNPROTECTED_LOGICAL_CONTENT", lineno, col,
                          f"H{level} header outside any permission block: structural content must be inside [Pn]")
            elif plevel >= 4:
                if not ((level == 6 and (self.memory or kind == "log"))
                        or (kind == STATE_REGISTRY and plevel == 4)):
                    what = {"module": "declaration", "nucleus": "declaration", "sub_module": "declaration",
                            "state_registry": "state registry"}.get(kind, "header")
                    self.diag("INVALID_HEADER_IN_WRITABLE_ZONE", lineno, col,
                              f"H{level} {what} in a [P{plevel}] zone: only H6 log entries, free text and root"
                              f" bullets are allowed there")
                    refused = True
            if kind == STATE_REGISTRY and plevel is not None and plevel <= 3:
                self.diag("STATE_REGISTRY_NOT_IN_P4", lineno, col,
                          f"MODULE_STATE_REGISTRY in [P{plevel}]: it belongs in a [P4] block (honoured here)")

        # Physical tree: close deeper-or-equal headers of this zone (and any list), open this one.
        self.leaf = None
        if self.list_stack:
            self._close_list()
        stack = self.stack
        while stack and stack[-1].kind == "heading" and stack[-1].level >= level:  # type: ignore[attr-defined]
            stack.pop()
        shared, limit = self.shared, self.shared_max
        frame = HeadingFrame(lineno, off, plevel, header, refused, _shared(shared, header.text, limit),
                             header.name and _shared(shared, header.name, limit),
                             header.title and _shared(shared, header.title, limit))
        if stack:
            self.add_child(stack[-1].children, frame, self.src)  # type: ignore[attr-defined]
        else:
            self._new_top(frame)
        stack.append(frame)
        self.pending_state = None
        if self.on_header is not None:
            self.on_header(frame)

        if level == 1:
            if refused:
                self.ignored_lines.add(lineno)
            return True
        if kind == MODULE or kind == NUCLEUS or (level == 2 and header.section == "RULES" and kind == "section"):
            self._declare(header, plevel, lineno, col)
        if refused:
            self.ignored_lines.add(lineno)
            return True
        if level == 6:
            self.in_entry = True
            owner = self.entry_owner_now
            if owner is None:
                owner = self.entry_owner_now = self._entry_owner()
            self.h6_owner.add(lineno, owner)
            return True
        self._structural_header(header, frame, plevel, lineno, col)
        return True

    def _second_h1(self, text: str, lineno: int, col: int) -> Header:
        """An H1 after the title: reported (§3.2), and its tag read when the title had none."""
        if self.title_line is not None or self.file_type:
            tags = sx.FILE_TAG.findall(text)
            if tags:
                self.diag("MULTIPLE_FILE_TYPES", lineno, col,
                          f"a second tagged H1 (title on line {self.title_line}); a file has one file type",
                          related=self.title_line)
            else:
                self.diag("DUPLICATE_TITLE", lineno, col,
                          f"a second H1 (title on line {self.title_line}); a file has exactly one H1",
                          related=self.title_line)
        elif self.recover_type is None:
            tags = sx.FILE_TAG.findall(text)
            if len(tags) == 1:
                self.recover_type = tags[0]
                self.memory = tags[0] == "external_memory"
                if not self.title:  # the title comes with the type it recovers (§13 `title`)
                    self.title = _without_tag(text, "[" + tags[0] + "]")
        return classify_header(1, text, col, self.memory, False)

    def _structural_header(self, header: Header, frame: HeadingFrame, plevel: int | None, lineno: int,
                           col: int) -> None:
        """An H2-H5 on the logical stack (§2.3: zones close nothing): hierarchy, containers, STATE."""
        level, kind = header.level, header.kind
        self.section_now = _UNSET
        self.entry_owner_now = None
        self.in_entry = False
        lg = self.logical
        while lg and lg[-1].level >= level:
            lg.pop()
        if level > self.prev_level + 1 and not (self.memory and header.keyword == "SUBTOPIC"):
            self.diag("HIERARCHY_VIOLATION", lineno, col,
                      f"H{self.prev_level} followed by H{level}: header levels must descend one at a time")
        self.prev_level = level
        container = None
        if kind in _CONTAINER_KINDS:
            container = self._open_container(header, frame, plevel, lineno, col)
        elif kind == STATE_REGISTRY:
            facts = self.facts
            if facts.registry is not None:
                self.diag("DUPLICATE_STATE_REGISTRY", lineno, col,
                          f"a second MODULE_STATE_REGISTRY (first on line {facts.registry[0]}); this one is ignored",
                          related=facts.registry[0])
                self.ignored_lines.add(lineno)
            else:
                facts.registry = (lineno, plevel)
                self.registry_zone = self.zone
        lg.append(_Open(level, kind, header.section, lineno, container))
        if header.section == "STATE" and kind == "section":
            owner = self._container()
            if owner is not None:
                if header.state_value is not None:
                    self._set_state(owner, header.state_value, lineno, col, plevel)
                else:
                    self.pending_state = owner

    def _open_container(self, header: Header, frame: HeadingFrame, plevel: int | None, lineno: int,
                        col: int) -> Container:
        """A module, topic, sub-topic, sub-module or nucleus declaration (§7.1-§7.4)."""
        kind = header.kind
        parent = self._container()
        if header.keyword == "SUBTOPIC" and (parent is None or parent.type != "module"):
            self.diag("SUBTOPIC_WITHOUT_TOPIC", lineno, col, "sub-topic with no topic above it: attached to the file")
        if kind == NUCLEUS:
            container = Container(NUCLEUS, None, str(int(header.id or 0)), header.name, header.level, lineno, plevel,
                                  None)
            if self.report:
                self.facts.nuclei.append(container)
        else:
            parent_line = parent.line if parent is not None else None
            if self.report:  # a scan that keeps no finding feeds no check: it keeps only the open containers
                container = self.facts.containers.add(cast(ModuleType, kind), header.keyword, header.id,
                                                      header.name, header.level, lineno, plevel, parent_line)
            else:
                container = Container(kind, header.keyword, header.id, header.name, header.level, lineno, plevel,
                                      parent_line)
            if header.keyword is not None and self.report:  # TOPIC or SUBTOPIC
                # the names under one parent: kept by the parent while it is open (no child comes after it)
                if parent is None:
                    names = self.container_names
                elif parent.child_names is None:
                    names = parent.child_names = {}
                else:
                    names = parent.child_names
                first = names.get(header.name)
                if first is not None:
                    self.diag("DUPLICATE_CONTAINER_NAME", lineno, col,
                              f"'{header.name}' is already a container under the same parent"
                              f" (line {first}): addressing it by name is ambiguous", related=first)
                else:
                    names[header.name] = lineno
            if header.nuclei is not None:
                container.nuclei = header.nuclei
                container.nuclei_column = header.nuclei_column
                self.facts.containers.keep(container)
        self.last_decl = (frame, container, lineno)
        return container

    def _nuclei_line(self, s: str, lineno: int, off: int, last: tuple[HeadingFrame, Container, int]) -> None:
        """``[NUCLEI: ...]`` on the line after a module declaration (§7.4.4)."""
        frame, container, _ = last
        self.last_decl = None
        m = sx.NUCLEI_TAG.search(s)
        assert m is not None  # the line matched NUCLEI_LINE
        col = m.start() + 1
        self.add_child(frame.children, LeafFrame("nuclei", lineno, off, self.zone_level), self.src)
        if container.keyword in ("TOPIC", "SUBTOPIC"):
            self.diag("NUCLEI_TAG_ON_TOPIC", lineno, col,
                      "[NUCLEI: ...] after a topic binds nothing: a memory topic governs no nuclei")
            return
        if container.type != "module" or container.nuclei is not None:
            self.diag("MISPLACED_NUCLEI_TAG", lineno, col,
                      "[NUCLEI: ...] binds only to the module declared on the line before, once")
            return
        ids, ok = sx.parse_nuclei(m.group(1))
        if not ok:
            self.diag("MALFORMED_NUCLEI_TAG", lineno, col,
                      f"'{m.group(0)}' must list integer nucleus ids separated by commas")
        container.nuclei = ids
        container.nuclei_line = lineno
        container.nuclei_column = col
        self.facts.containers.keep(container)
        frame.nuclei = ids

    def _container(self) -> Container | None:
        """The innermost open container on the logical stack (§7.1.3 ownership)."""
        for e in reversed(self.logical):
            if e.container is not None:
                return e.container
        return None

    def _entry_owner(self) -> int:
        """The line of the container owning an H6 entry: the innermost open container or plain
        H2 section (e.g. ``## RULES:``); 0 for the file (§7.1.3)."""
        for e in reversed(self.logical):
            if e.container is not None:
                return e.container.line
            if e.level == 2 and e.kind == "section":
                return e.line
        return 0

    def _declare(self, header: Header, plevel: int | None, lineno: int, col: int) -> None:
        """Record a declaration that §5.5 Invariant 4 compares across zones (MODULE, NUCLEUS, RULES)."""
        if header.kind == MODULE:
            if header.keyword is not None or header.id is None:
                return
            key = ("module", header.id)
        elif header.kind == NUCLEUS:
            # nucleusId is a number (§7.4.5): NUCLEUS 01 and NUCLEUS 1 are the same nucleus
            nid = header.id or ""
            key = ("nucleus", str(int(nid)) if nid.isdigit() else nid)
        else:
            key = ("rules", "")
        if self.report:
            self.facts.declarations.setdefault(key, []).append(Declaration(plevel, lineno, col))

    def _set_state(self, owner: Container, value: str, lineno: int, col: int, plevel: int | None) -> None:
        if plevel is not None and plevel >= 4:
            self.diag("STATE_IN_WRITABLE_ZONE", lineno, col,
                      f"STATE in a [P{plevel}] zone is ignored: the declared state lives in [P1]-[P3]")
            return
        parsed = sx.parse_state(value)
        if parsed is None:
            self.diag("INVALID_STATE_VALUE", lineno, col,
                      f"'{value.strip()[:40]}' is not a state: use active, inactive, optionally '- permanent'")
            return
        if any(w in value.lower() for w in ("attivo", "permanente")):
            self.diag("DEPRECATED_ITALIAN_KEYWORD", lineno, col, "Italian state value is deprecated: use English")
        owner.state, owner.permanent = parsed
        owner.state_line = lineno
        self.facts.containers.keep(owner)

    # -- leaf blocks -------------------------------------------------------------------
    def _separator(self, lineno: int, off: int) -> None:
        self.leaf = None
        self._close_list()
        self.pending_state = None
        self._add(LeafFrame("sep", lineno, off, self.zone_level))

    def _quote_line(self, s: str, lineno: int, off: int, indent: int) -> None:
        leaf = self.leaf
        body = sx.QUOTE_PREFIX.sub("", s, count=1)
        if isinstance(leaf, QuoteFrame) and not self.blank_before:
            leaf.lines.append(body)
            return
        self.pending_state = None
        m = sx.ANCHOR_START.match(s)
        severity = None
        lines: list[str] = []
        if m:
            kw = m.group(1)
            if kw in sx.ANCHOR_KEYWORDS:
                severity = kw
                if m.group(2):
                    lines.append(m.group(2))
                plevel = self.zone_level
                if plevel is None:
                    self.diag("UNPROTECTED_LOGICAL_CONTENT", lineno, indent + 1,
                              f"attention anchor [!{kw}] outside any permission block")
                elif plevel >= 4:
                    self.diag("INVALID_HEADER_IN_WRITABLE_ZONE", lineno, indent + 1,
                              f"attention anchor [!{kw}] in a [P{plevel}] zone: anchors are valid only in [P1]-[P3]")
            else:
                self.diag("UNKNOWN_ANCHOR_KEYWORD", lineno, indent + 3,
                          f"[!{kw}] is not an anchor keyword (NOTE, TIP, IMPORTANT, WARNING, CAUTION);"
                          " parsed as a quote")
                lines.append(body)
        else:
            lines.append(body)
        self.leaf = self._leaf_block(QuoteFrame(lineno, off, self.zone_level, severity, lines))

    def _text_line(self, s: str, stripped: str, indent: int, lineno: int, off: int) -> None:
        if self.list_stack:
            if not self.blank_before or indent >= 2:
                self.list_stack[-1].lines.append(stripped.rstrip())
                return
            self._close_list()
        if self.pending_state is not None:
            self._set_state(self.pending_state, stripped, lineno, indent + 1, self.zone_level)
            self.pending_state = None
        fm = sx.FIELD_LABEL.match(stripped) if stripped.startswith("**") else None
        if fm is not None:
            name, value = fm.group(1).strip(), fm.group(2)
            self.leaf = self._leaf_block(ParagraphFrame(lineno, off, self.zone_level, (name, value.strip())))
            if name in ("STATE", "STATO"):
                owner = self._container()
                if owner is not None:
                    if name == "STATO":
                        self.diag("DEPRECATED_ITALIAN_KEYWORD", lineno, indent + 1, "STATO is deprecated: use STATE")
                    self._set_state(owner, value, lineno, indent + 1, self.zone_level)
            return
        leaf = self.leaf
        if leaf is not None and leaf.kind == "para" and not self.blank_before:
            return
        if "[NUCLEI:" in stripped and sx.NUCLEI_LINE.fullmatch(s):
            self.diag("MISPLACED_NUCLEI_TAG", lineno, indent + 1,
                      "[NUCLEI: ...] must be on the module's declaration line or the line right after it")
        self.leaf = self._leaf_block(ParagraphFrame(lineno, off, self.zone_level))

    # -- lists (§8, §9.4, §7.6, §7.3.1) ------------------------------------------------
    def _list_item(self, item: tuple[str, str, str], s: str, lineno: int, off: int) -> None:
        indent_s, marker, text = item
        if "\t" in indent_s:
            indent = indent_s.count("\t") * 4 + indent_s.count(" ")
        else:
            indent = len(indent_s)
        ls = self.list_stack
        stack = self.stack
        if not ls:
            self.leaf = None
            if self.pending_state is not None:  # a STATE value may come as a bullet
                owner = self.pending_state
                self.pending_state = None
                self._set_state(owner, text, lineno, indent + 1, self.zone_level)
        else:
            self.leaf = None
            while ls and (ls[-1].indent >= indent or len(ls) >= _MAX_LIST_DEPTH):
                ls.pop()  # (past _MAX_LIST_DEPTH a deeper item becomes a sibling: the tree stays shallow)
                if stack and stack[-1].kind in ("item", "rule"):
                    stack.pop()
        level = len(ls) + 1
        plevel = self.zone_level
        col = indent + 1
        if marker[0] in "*+-":
            self.list_items.append((level, marker, lineno, col))
            if level > 3 or marker != "*+-"[level - 1]:
                self.list_canonical = False
            if level == 4:  # once where a list goes past level 3
                self.diag("LIST_TOO_DEEP", lineno, col, "list level 4: lists have three levels (* + -)")
        frame: ItemFrame
        rm = (sx.RULE_BULLET.fullmatch(s)
              if level == 1 and indent == 0 and marker == "*" and "A" <= s[2:3] <= "Z" else None)
        if rm is not None:
            frame = self._rule(rm, lineno, off, plevel, indent, text.rstrip())
        else:
            frame = ItemFrame(lineno, off, plevel, level, marker, indent, text.rstrip())
            if not self.in_entry:  # inside a journal entry, bullets are the entry's text
                section = self.section_now
                if section == _UNSET:
                    section = self.section_now = self._section()
                if section == "CONNECTIONS":
                    # Edges are declared by the user: bullets in a writable zone draw none (§5.5, §7.6).
                    if level == 1 and plevel is not None and plevel <= 3:
                        self._connection(s, lineno, col)
                elif section == "REGISTRY" and self.zone is not None and self.zone is self.registry_zone:
                    self._registry_entry(s, lineno, col)
        if ls:
            self.add_child(ls[-1].children, frame, self.src)
        elif stack:
            self.add_child(stack[-1].children, frame, self.src)  # type: ignore[attr-defined]
        else:
            self._new_top(frame)
        stack.append(frame)
        ls.append(frame)

    def _section(self) -> str | None:
        """The innermost logical section keyword (CONNECTIONS, RULES...) or REGISTRY."""
        for e in reversed(self.logical):
            if e.kind == STATE_REGISTRY:
                return "REGISTRY"
            if e.section is not None:
                return e.section
            if e.kind != "section":
                return None
        return None

    def _rule(self, m: re.Match[str], lineno: int, off: int, plevel: int | None, indent: int,
              text: str) -> RuleFrame:
        """A rule bullet ``* Xn: definition`` (§9.4): placement in [P1] under ``## RULES:``, unique numbers."""
        prefix, number = m.group(1), int(m.group(2))
        frame = RuleFrame(lineno, off, plevel, indent, text, prefix, number, m.group(3).strip())
        if prefix not in sx.RULE_CATEGORIES:
            self.diag("UNKNOWN_RULE_PREFIX", lineno, 3,
                      f"rule prefix '{prefix}' is not R, C or S: parsed as a general rule")
        if plevel is None:
            self.diag("UNPROTECTED_LOGICAL_CONTENT", lineno, 1,
                      f"rule {prefix}{number} outside any permission block: rules belong in [P1]")
            return frame
        if plevel >= 4:
            self.diag("INVALID_HEADER_IN_WRITABLE_ZONE", lineno, 1,
                      f"rule bullet {prefix}{number} in a [P{plevel}] zone: rules are valid only in [P1]")
            self.ignored_lines.add(lineno)
            return frame
        if plevel != 1:
            self.diag("RULE_OUTSIDE_P1", lineno, 1,
                      f"rule {prefix}{number} in a [P{plevel}] zone: rules are valid only in [P1]")
        under_rules = False
        for e in reversed(self.logical):
            if e.level == 2:
                under_rules = e.section == "RULES"
                break
        if not under_rules:
            self.diag("RULE_OUTSIDE_RULES_SECTION", lineno, 1,
                      f"rule {prefix}{number} is not under a '## RULES:' section")
        key = (prefix, number)
        first = self.rules_seen.get(key)
        if first is not None:
            self.diag("DUPLICATE_RULE_NUMBER", lineno, 3,
                      f"rule {prefix}{number} is already declared on line {first}", related=first)
        else:
            self.rules_seen[key] = lineno
        return frame

    def _connection(self, line_text: str, lineno: int, col: int) -> None:
        """A CONNECTIONS bullet (§7.6): ``* MODULE <id>`` or ``* NUCLEUS <n>``, an edge of the open container."""
        cm = sx.CONNECTION.fullmatch(line_text)
        if cm is None:
            if sx.CONNECTION_LIKE.match(line_text.lstrip()):
                self.diag("MALFORMED_CONNECTION", lineno, col,
                          "a CONNECTIONS edge must read '* MODULE <id>' or '* NUCLEUS <n>' (no other text);"
                          " this line draws no edge")
            return
        kind, target = cm.group(1).lower(), cm.group(2)
        if sx.TEMPORARY_ID.fullmatch(target):
            self.diag("TEMPORARY_ID_REFERENCE", lineno, col + 2,
                      f"{target} is a temporary id and cannot be referenced: no edge")
            return
        if kind == "nucleus" and not target.isdigit():
            self.diag("MALFORMED_CONNECTION", lineno, col, f"nucleus id '{target}' must be an integer: no edge")
            return
        owner = self._container()
        if owner is not None:
            connection = _new_connection(kind, target, lineno)
            if isinstance(owner.connections, list):
                owner.connections.append(connection)
            else:  # the first: a container without CONNECTIONS holds the shared empty tuple
                owner.connections = [connection]
                self.facts.containers.keep(owner)

    def _registry_entry(self, line_text: str, lineno: int, col: int) -> None:
        """A registry line ``* ACTIVE: <ids>`` / ``* INACTIVE: <ids>`` (§7.3.1) of the file's first registry."""
        rm = sx.REGISTRY_ENTRY.fullmatch(line_text.strip())
        if rm is None:
            self.diag("MALFORMED_STATE_REGISTRY_ENTRY", lineno, col,
                      "registry lines read '* ACTIVE: <ids>' or '* INACTIVE: <ids>'; line ignored")
            return
        registry = self.facts.registry
        if registry is None or registry[0] != self._registry_line():
            return
        state = rm.group(1).lower()
        for part in rm.group(2).split(","):
            mid = part.strip()
            if not mid:
                continue
            if sx.TEMPORARY_ID.fullmatch(mid):
                self.diag("TEMPORARY_ID_REFERENCE", lineno, col,
                          f"{mid} is a temporary id and cannot be named in the registry: entry ignored")
                continue
            self.facts.registry_entries.append((mid, state, lineno))

    def _registry_line(self) -> int | None:
        for e in reversed(self.logical):
            if e.kind == STATE_REGISTRY:
                return e.line
        return None


def _indented(s: str) -> tuple[str, int]:
    """A line without its leading spaces and tabs, and their width (a tab advances to the next multiple of 4,
    CommonMark)."""
    stripped = s.lstrip(" \t")
    indent = len(s) - len(stripped)
    if "\t" in s[:indent]:
        indent = _columns(s[:indent])
    return stripped, indent


def _columns(whitespace: str) -> int:
    """Width of leading spaces and tabs, tabs stopping at multiples of 4."""
    col = 0
    for ch in whitespace:
        col = (col // 4 + 1) * 4 if ch == "\t" else col + 1
    return col


#: The carriage returns that end a frontmatter line: ``rstrip("\\r")`` of every line at once.
_TRAILING_CRS = re.compile(r"\r+(?=\n)|\r+\Z")


def _chunks(src: str, start: int = 0, chunk: int = 1 << 13) -> Iterator[list[str]]:
    """The lines of ``src`` from offset ``start``, split on ``\\n`` only, a list per chunk (bounded memory).

    A chunk's list is emptied once it is read, before the next is split: one chunk's lines are alive at a time,
    not two (the caller's loop still holds the list it read, B27)."""
    n = len(src)
    pos = start
    while pos < n:
        end = src.find("\n", min(pos + chunk, n - 1))
        end = n if end == -1 else end + 1
        parts = src[pos:end].split("\n")
        if parts[-1] == "":
            parts.pop()
        yield parts
        parts.clear()
        pos = end


def _without_tag(text: str, tag: str) -> str:
    """The H1 text without its file type tag; a tag in the middle leaves one space, not two (§3.2)."""
    i = text.find(tag)
    return (text[:i].rstrip() + " " + text[i + len(tag):].lstrip()).strip()
