"""FROZEN COPY of ``src/zonemark/core/parser.py`` as of commit 1c2919b, before the parser was split
into ``headers``, ``scanner``, ``tree``, ``checks`` and ``facts``.

Used only by ``tests/test_parser_differential.py``, which checks that the split parser gives
the same ``Document`` as this one for generated IllAIra-like text.  Do not edit it to follow
later changes: when a later change alters the parser's output on purpose, delete this file
and that test together (their job — proving the split changed nothing — is then done).
The module's body below is the original, only its imports made absolute.
"""

from __future__ import annotations

from zonemark.core import gcpause
from zonemark.core import syntax as sx
from zonemark.core import text
from zonemark.core.diagnostics import CATALOGUE, Diagnostic
from zonemark.core.document import Document
from zonemark.core.nodes import (Block, Connection, Heading, ListItem, ModuleInfo, NucleusInfo, Paragraph, Quote,
                    RegistryInfo, Rule, fast_constructor)

_STRUCTURAL_HEADINGS = frozenset(("module", "sub_module", "nucleus", "section", "state_registry", "log"))
_CONTAINER_TYPES = frozenset(("module", "sub_module", "nucleus"))


class _Frame:
    """A block under construction."""

    __slots__ = ("kind", "line", "start", "children", "tail", "tail_line", "plevel", "d", "text")

    def __init__(self, kind, line, start, plevel, d=None):
        self.kind = kind
        self.line = line
        self.start = start
        self.children = []
        self.tail = None  # offset of a closing line ([/Pn]) that children do not cover
        self.tail_line = 0
        self.plevel = plevel
        self.d = d
        self.text = None


class _Logical:
    """An open header on the logical (cross-zone) stack."""

    __slots__ = ("level", "kind", "section", "keyword", "line", "builder")

    def __init__(self, level, kind, section, keyword, line, builder=None):
        self.level = level
        self.kind = kind
        self.section = section
        self.keyword = keyword
        self.line = line
        self.builder = builder


class _Module:
    """Facts gathered about one declared container while scanning."""

    __slots__ = ("type", "keyword", "id", "name", "level", "line", "plevel", "nuclei", "nuclei_line",
                 "nuclei_col", "state", "permanent", "state_line", "connections", "refused", "parent_line")

    def __init__(self, type_, keyword, id_, name, level, line, plevel, refused, parent_line):
        self.type = type_
        self.keyword = keyword
        self.id = id_
        self.name = name
        self.level = level
        self.line = line
        self.plevel = plevel
        self.nuclei = None
        self.nuclei_line = line
        self.nuclei_col = 1
        self.state = None
        self.permanent = False
        self.state_line = None
        self.connections = []
        self.refused = refused
        self.parent_line = parent_line


def parse(text: str, *, path: str | None = None) -> "Document":
    """Parse one file's text.  Never raises on a ``str``; see ``Document.diagnostics``."""
    if not isinstance(text, str):
        raise TypeError(f"parse() takes str, not {type(text).__name__}; use parse_file() for bytes")
    return _run(_Parser(text, path))


def _run(parser: "_Parser") -> "Document":
    """Run a parser with the cyclic GC paused (the tree has no reference cycles)."""
    with gcpause.paused():
        return parser.run()


def parse_bytes(data: bytes, *, path: str | None = None) -> "Document":
    """Parse raw bytes: invalid UTF-8 is reported (``INVALID_UTF8``) and kept for round-trip (:mod:`.text`)."""
    source, invalid = text.decode_reporting(data)
    parser = _Parser(source, path)
    bad = text.first_escaped_byte(source) if invalid else None
    if bad is not None:
        line, col, byte, count = bad
        parser.surrogate_escaped = True
        parser.diag("INVALID_UTF8", line, col,
                    f"invalid UTF-8 byte 0x{byte:02X}"
                    f" ({count} undecodable byte{'s' if count != 1 else ''} in the file)", count=count)
    return _run(parser)


def parse_file(path) -> "Document":
    """Read and parse a file (bytes: encoding problems become diagnostics)."""
    with open(path, "rb") as f:
        data = f.read()
    return parse_bytes(data, path=str(path))


class _Parser:
    def __init__(self, text: str, path: str | None):
        self.src = text
        self.path = path
        self.diags: list[Diagnostic] = []
        self.surrogate_escaped = False
        self.file_type = None
        self.title = None
        self.title_line = None
        self.title_pending = True  # still waiting for the first significant line
        self.recover_type = None  # file type read from a misplaced tagged H1
        self.memory = False
        self.top: list = []  # finished top-level blocks
        self.top_frame = None  # the current top-level frame (its end is not known yet)
        self.stack: list[_Frame] = []  # open frames inside the current top-level context
        self.zone = None  # the open permission-block frame
        self.nested: list[int] = []  # levels of ignored nested opening tags (§5.4 recovery)
        self.leaf = None  # open paragraph / quote frame
        self.list_stack: list = []  # (indent, frame) of the open list
        self.list_items: list = []  # (level, marker, line, col) of the open list, for §8.1
        self.blank_before = True
        self.logical: list[_Logical] = []
        self.prev_level = 1
        self.modules: list[_Module] = []
        self.nuclei: dict = {}
        self.nucleus_list: list = []
        self.decls: dict = {}  # (kind, id) -> [(plevel, line, col, builder)]
        self.rules_seen: dict = {}
        self.registry = None
        self.registry_entries: list = []
        self.pending_state = None  # module whose ### STATE section awaits its value
        self.section_now = _UNSET  # cache of _section() while the logical stack is unchanged
        self.in_entry = False  # after an H6: bullets belong to the entry, not to a section
        self.registry_zone = None  # the zone frame of the file's registry (§7.3.1: entries live there)
        self.last_decl = None  # module frame + builder declared on the previous line
        self.h6_owner: dict = {}
        self.ignored_lines: set = set()
        self.standard_version = None
        self.frontmatter = None
        self.container_names: dict = {}

    # -- diagnostics -------------------------------------------------------------------
    def diag(self, code: str, line: int, col: int, message: str, *, related: int | None = None,
             count: int | None = None) -> None:
        self.diags.append(Diagnostic(code, CATALOGUE[code].severity, line, col, message, self.path, related, count))

    # -- the scan ----------------------------------------------------------------------
    def run(self) -> Document:
        src = self.src
        has_cr = "\r" in src
        crlf_first = None
        crlf_count = 0
        bare_cr_first = None
        bare_cr_count = 0
        ctl = sx.CONTROL_CHARS.search(src)
        if ctl:
            count = len(sx.CONTROL_CHARS.findall(src))
            ln = src.count("\n", 0, ctl.start()) + 1
            col = ctl.start() - (src.rfind("\n", 0, ctl.start()) + 1) + 1
            self.diag("CONTROL_CHARACTER", ln, col,
                      f"control character U+{ord(ctl.group()):04X} ({count} in the file)", count=count)
        if src.startswith("\ufeff"):
            self.diag("BYTE_ORDER_MARK", 1, 1, "the file starts with a UTF-8 byte order mark")
        skip = self._frontmatter()

        fence = None  # (char, length, frame)
        comment = None  # frame
        plain = _PLAIN_START
        off = 0
        lineno = 0
        for line in _iter_lines(src):
            lineno += 1
            line_off = off
            off += len(line) + 1
            if lineno <= skip:
                continue
            if has_cr and "\r" in line:
                if line.endswith("\r"):
                    crlf_count += 1
                    if crlf_first is None:
                        crlf_first = lineno
                    s = line[:-1]
                else:
                    s = line
                if "\r" in s:
                    bare_cr_count += 1
                    if bare_cr_first is None:
                        bare_cr_first = (lineno, s.index("\r") + 1)
            else:
                s = line
            if lineno == 1 and s.startswith("\ufeff"):
                s = s[1:]

            # Opaque regions: nothing inside is structure.
            if fence is not None:
                if sx.closes_fence(s, fence):
                    fence = None
                continue
            if comment is not None:
                if "-->" in s:
                    comment = None
                continue
            if not s or s.isspace():
                self.blank_before = True
                continue
            # Fast path: a prose line that continues the open paragraph.
            if (s[0] in plain and not self.blank_before and self.leaf is not None and self.leaf.kind == "para"
                    and not self.list_stack and self.pending_state is None and not self.title_pending):
                self.last_decl = None
                continue
            opened = self._line(s, lineno, line_off)
            self.blank_before = False
            if opened is not None:
                if opened.kind == "fence":
                    fence = (opened.d[0], opened.d[1], opened)
                    opened.d = None
                else:
                    comment = opened

        n = lineno
        # -- end of file --
        if fence is not None:
            self.diag("UNCLOSED_CODE_FENCE", fence[2].line, 1,
                      "code fence is never closed: the rest of the file is code")
        if comment is not None:
            self.diag("UNCLOSED_HTML_COMMENT", comment.line, 1,
                      "HTML comment is never closed: the rest of the file is comment")
        if self.title_pending:
            self.title_pending = False
            self.diag("MISSING_FILE_TYPE", 1, 1,
                      "the file has no H1 title with a file type tag ([reminder], [external_module]"
                      " or [external_memory])")
        self._close_leaf()
        self._close_list()
        if self.zone is not None:
            z = self.zone
            self.diag("UNCLOSED_PERMISSION_BLOCK", z.line, 1,
                      f"[P{z.plevel}] is never closed: add [/P{z.plevel}] before the end of the file")
            self.zone = None
        self.stack = []
        self._flush_top(len(src), n)
        if not self.top and src:
            self.top.append(Paragraph("paragraph", 1, max(n, 1), 0, len(src), None, (), src, syntax="blank"))
        if crlf_first is not None:
            self.diag("CRLF_LINE_ENDING", crlf_first, 1,
                      f"\\r\\n line ending ({crlf_count} line{'s' if crlf_count != 1 else ''} in the file);"
                      " files must use \\n", count=crlf_count)
        if bare_cr_first is not None:
            self.diag("CARRIAGE_RETURN", bare_cr_first[0], bare_cr_first[1],
                      f"bare carriage return inside a line ({bare_cr_count} line"
                      f"{'s' if bare_cr_count != 1 else ''} in the file)", count=bare_cr_count)
        modules, nuclei = self._post_checks()
        diags = sorted(self.diags, key=lambda d: (d.line, d.column))
        return Document(
            source=src, path=self.path, file_type=self.file_type or self.recover_type, title=self.title,
            title_line=self.title_line, blocks=tuple(self.top), diagnostics=tuple(diags),
            modules=modules, nuclei=nuclei, registry=self._registry_info(),
            standard_version=self.standard_version, frontmatter=self.frontmatter,
            ignored_lines=frozenset(self.ignored_lines), h6_owner=self.h6_owner, line_count=n,
            surrogate_escaped=self.surrogate_escaped)


    def _line(self, s, lineno, off):
        """Dispatch one non-blank line; returns the frame of an opened fence or comment."""
        c = s[0]
        stripped = s.lstrip(" \t")
        indent = len(s) - len(stripped)
        if indent and "\t" in s[:indent]:
            indent = _columns(s[:indent])  # a tab advances to the next multiple of 4 (CommonMark)
        c0 = stripped[0]

        if self.title_pending:
            if not (c0 == "<" and sx.COMMENT_OPEN.match(s)):  # comments before the title are allowed
                self.title_pending = False
                if c == "#" and not s.startswith("##"):
                    self._title(s, lineno, off)
                    return None
                self._missing_title(s, lineno)

        if c0 == "[" and indent <= 3:
            m = sx.PERMISSION_TAG.match(s)
            if m and self._permission_tag(m, s, lineno, off):
                self.last_decl = None
                return None
            last = self.last_decl
            if last is not None and last[2] == lineno - 1 and sx.NUCLEI_LINE.fullmatch(s):
                self._nuclei_line(s, lineno, off)
                return None
        self.last_decl = None

        if indent <= 3:
            if c0 == "#":
                if self._heading(s, stripped, indent, lineno, off):
                    return None
            elif c0 == "`" or c0 == "~":
                opened = sx.fence_opener(s)
                if opened is not None:
                    frame = self._leaf_block("fence", lineno, off)
                    frame.d = opened
                    return frame
            elif c0 == "<":
                if sx.COMMENT_OPEN.match(s):
                    frame = self._leaf_block("comment", lineno, off)
                    pin = sx.VERSION_PIN.fullmatch(s)
                    if pin and self.standard_version is None:
                        self._version_pin(pin.group(1), lineno, indent)
                    if "-->" not in s[s.index("<!--") + 4:]:
                        return frame
                    return None
            elif c0 == ">":
                self._quote_line(s, lineno, off, indent)
                return None

        if c0 in "*-" and indent == 0 and s.rstrip() in sx.SEPARATORS:
            self._separator(lineno, off)
            return None
        if c0 in "*+-0123456789":
            m = sx.LIST_ITEM.match(s)
            if m:
                self._list_item(m, s, lineno, off)
                return None
        self._text_line(s, stripped, indent, lineno, off)
        return None

    # -- frontmatter and title (§10.2, §3) ----------------------------------------------
    def _frontmatter(self) -> int:
        """YAML frontmatter on the very first line (§10.2); returns the lines it spans."""
        src = self.src.lstrip("\ufeff")
        first = src.split("\n", 1)[0].rstrip("\r")
        if first.rstrip() != "---":
            return 0
        lines = src.split("\n")
        if lines[-1] == "":
            lines.pop()
        end = None
        for j in range(1, len(lines)):
            if lines[j].rstrip("\r").rstrip() == "---":
                end = j
                break
        if end is None:
            self.diag("UNCLOSED_FRONTMATTER", 1, 1, "YAML frontmatter opened on line 1 is never closed by ---")
            end = len(lines) - 1
            for j in range(1, len(lines)):
                if lines[j].startswith("# "):
                    end = j - 1
                    break
        self.frontmatter = "\n".join(x.rstrip("\r") for x in lines[1:end])
        self._new_top(_Frame("frontmatter", 1, 0, None))
        return end + 1

    def _title(self, s, lineno, off):
        level, text = self._split_heading(s, s, 0, lineno)
        frame = _Frame("title", lineno, off, None, {"text": text})
        self._new_top(frame)
        tags = sx.FILE_TAG.findall(text)
        self.title_line = lineno
        if level != 1:
            self.diag("MISSING_FILE_TYPE", lineno, 1, "the first line must be an H1 (# Title [reminder])")
            return
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
            self.title = text
            return
        if len(tags) > 1:
            self.diag("MULTIPLE_FILE_TYPES", lineno, 1,
                      f"the H1 has {len(tags)} file type tags ({', '.join('[' + t + ']' for t in tags)}); one is allowed")
            self.title = sx.FILE_TAG.sub("", text).strip()
            return
        tag = "[" + tags[0] + "]"
        if not (text.startswith(tag) or text.endswith(tag)):
            self.diag("MISSING_FILE_TYPE", lineno, text.index(tag) + 3,
                      f"{tag} must be at the start or the end of the H1 (# Title {tag} or # {tag} Title)")
            self.recover_type = tags[0]
        else:
            self.file_type = tags[0]
        self.memory = tags[0] == "external_memory"
        self.title = text.replace(tag, "", 1).strip()

    def _missing_title(self, s, lineno):
        if s.startswith("##") or s.lstrip().startswith("#"):
            msg = "the first line must be an H1 (# Title [reminder]), not this header"
        else:
            msg = "the first non-empty line must be the H1 title with a file type tag"
        self.diag("MISSING_FILE_TYPE", lineno, 1, msg)

    def _version_pin(self, value, lineno, col):
        self.standard_version = value
        ver = sx.parse_version(value)
        if ver is None:
            self.diag("UNSUPPORTED_STANDARD_VERSION", lineno, col + 1,
                      f"unreadable version pin '{value}' (expected e.g. v1.13); parsed as v1.13")
        elif ver > sx.SUPPORTED_VERSION:
            self.diag("UNSUPPORTED_STANDARD_VERSION", lineno, col + 1,
                      f"the file pins {value}, newer than v1.13; parsed with v1.13 rules")

    # -- frames ------------------------------------------------------------------------
    def _new_top(self, frame):
        """Start a new top-level block: the previous one ends here."""
        if self.top_frame is not None:
            self.top.append(self._build(self.top_frame, frame.start, frame.line - 1))
        elif frame.start != 0:
            # Leading blank lines: a block of their own, so every block's line matches its offset.
            self.top.append(Paragraph("paragraph", 1, frame.line - 1, 0, frame.start, None, (), self.src,
                                      syntax="blank"))
        self.top_frame = frame

    def _flush_top(self, end, n):
        if self.top_frame is not None:
            self.top.append(self._build(self.top_frame, end, n))
            self.top_frame = None

    def _add(self, frame):
        if self.stack:
            self.stack[-1].children.append(frame)
        else:
            self._new_top(frame)

    def _close_leaf(self):
        self.leaf = None

    def _close_list(self):
        if self.list_stack:
            while self.stack and self.stack[-1].kind in ("item", "rule"):
                self.stack.pop()
            self.list_stack = []
            self._check_list_markers()
            self.list_items = []

    def _close_headings(self, level):
        """Close header frames of ``level`` or deeper (and any list)."""
        self.leaf = None
        if self.list_stack:
            self._close_list()
        st = self.stack
        while st and st[-1].kind == "heading" and st[-1].d["level"] >= level:
            st.pop()

    def _leaf_block(self, kind, lineno, off, d=None):
        self.leaf = None
        if self.list_stack:
            self._close_list()
        frame = _Frame(kind, lineno, off, self.zone.plevel if self.zone else None, d)
        self._add(frame)
        return frame

    @property
    def plevel(self):
        return self.zone.plevel if self.zone is not None else None

    # -- permission tags (§5) ----------------------------------------------------------
    def _permission_tag(self, m, s, lineno, off) -> bool:
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
            self._close_leaf()
            self._close_list()
            self.stack = []
            frame = _Frame("zone", lineno, off, level)
            self._new_top(frame)
            self.zone = frame
            self.stack = [frame]
            if rest.strip():
                # "[Pn] text": the tag opens a paragraph (§5.1).
                frame.d = {"inline": True}
                p = _Frame("para", lineno, off + m.start(3) + (len(rest) - len(rest.lstrip())), level)
                frame.children.append(p)
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
        self._close_leaf()
        self._close_list()
        zone.tail = off
        zone.tail_line = lineno
        self.stack = []
        self.zone = None
        self.nested = []
        self.pending_state = None
        self.in_entry = False  # a log entry ends at the closing tag of its zone (§7.5, v1.12 note)
        return True

    # -- headers (§4, §7) --------------------------------------------------------------
    def _split_heading(self, s, stripped, indent, lineno):
        """Level and text of a header line, reporting §4.1 syntax problems."""
        n = len(stripped) - len(stripped.lstrip("#"))
        rest = stripped[n:]
        if indent:
            self.diag("HEADER_INDENTED", lineno, 1,
                      f"header starts at column {indent + 1}; headers must start at column 1 (no leading spaces)")
        if rest and rest[0] not in " \t" and n < 6:
            self.diag("HEADER_MISSING_SPACE", lineno, indent + n + 1,
                      f"no space after '{'#' * n}': write '{'#' * n} {rest.strip()[:40]}'")
        text = rest.strip()
        if text and text[-1] == "#":
            m = sx.CLOSING_HASHES.search(" " + text)
            if m:
                self.diag("HEADER_CLOSING_HASHES", lineno, len(s.rstrip().rstrip("#")) + 1,
                          "closing '#' characters are not allowed on headers")
                text = (" " + text)[:m.start()].strip()
        return n, text

    def _heading(self, s, stripped, indent, lineno, off) -> bool:
        n = len(stripped) - len(stripped.lstrip("#"))
        if n > 6:
            return False
        after = stripped[n:n + 1]
        if after and after not in " \t" and not (after.isupper() or after == "["):
            return False  # '#hashtag', '#1': text, as in CommonMark (a header needs a space)
        level, text = self._split_heading(s, stripped, indent, lineno)
        col = indent + 1
        plevel = self.plevel
        memory = self.memory
        kind = "section"
        d = {"level": level, "text": text}
        keyword = section = None
        builder = None

        if level == 1:
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
                    self.memory = memory = tags[0] == "external_memory"
        elif level == 6:
            kind, d = self._h6(text, lineno, col, d)
        else:
            kind, keyword, section, d = self._classify(level, text, lineno, col, d)

        # Zone placement (§5.4, §5.5 Invariant 1).
        refused = False
        if level >= 2:
            if plevel is None:
                self.diag("UNPROTECTED_LOGICAL_CONTENT", lineno, col,
                          f"H{level} header outside any permission block: structural content must be inside [Pn]")
            elif plevel >= 4:
                allowed = (level == 6 and (memory or kind == "log")) or (kind == "state_registry" and plevel == 4)
                if not allowed:
                    what = {"module": "declaration", "nucleus": "declaration", "sub_module": "declaration",
                            "state_registry": "state registry"}.get(kind, "header")
                    self.diag("INVALID_HEADER_IN_WRITABLE_ZONE", lineno, col,
                              f"H{level} {what} in a [P{plevel}] zone: only H6 log entries, free text and root"
                              f" bullets are allowed there")
                    refused = True
            if kind == "state_registry" and plevel is not None and plevel <= 3:
                self.diag("STATE_REGISTRY_NOT_IN_P4", lineno, col,
                          f"MODULE_STATE_REGISTRY in [P{plevel}]: it belongs in a [P4] block (honoured here)")

        # Physical tree: close deeper-or-equal headers of this zone, open this one.
        self._close_headings(level)
        d["kind"] = kind
        d["keyword"] = keyword
        d["section"] = section
        d["refused"] = refused
        frame = _Frame("heading", lineno, off, plevel, d)
        self._add(frame)
        self.stack.append(frame)
        self.pending_state = None

        if level == 1:
            return True
        self._declare_block(kind, keyword, section, level, d, plevel, lineno, col, None)
        if refused:
            self.ignored_lines.add(lineno)
            return True

        # Logical layer (§2.3: zones close nothing).
        self.section_now = _UNSET
        self.in_entry = level == 6
        lg = self.logical
        if level < 6:
            while lg and lg[-1].level >= level:
                lg.pop()
            if level > self.prev_level + 1 and not (memory and keyword == "SUBTOPIC"):
                self.diag("HIERARCHY_VIOLATION", lineno, col,
                          f"H{self.prev_level} followed by H{level}: header levels must descend one at a time")
            self.prev_level = level
        if kind in _CONTAINER_TYPES:
            parent = self._container()
            if kind == "module" and keyword == "SUBTOPIC" and (parent is None or parent.type not in ("module",)):
                self.diag("SUBTOPIC_WITHOUT_TOPIC", lineno, col,
                          "sub-topic with no topic above it: attached to the file")
            if kind == "nucleus":
                builder = _Module("nucleus", None, str(d["nucleus_id"]), d["name"], level, lineno, plevel,
                                  False, None)
                self.nucleus_list.append(builder)
            else:
                builder = _Module(kind, keyword, d.get("id"), d["name"], level, lineno, plevel, False,
                                  parent.line if parent is not None else None)
                self.modules.append(builder)
                if keyword in ("TOPIC", "SUBTOPIC"):
                    key = (parent.line if parent else 0, d["name"])
                    if key in self.container_names:
                        self.diag("DUPLICATE_CONTAINER_NAME", lineno, col,
                                  f"'{d['name']}' is already a container under the same parent"
                                  f" (line {self.container_names[key]}): addressing it by name is ambiguous",
                                  related=self.container_names[key])
                    else:
                        self.container_names[key] = lineno
                if "nuclei" in d:
                    builder.nuclei = d["nuclei"]
                    builder.nuclei_col = d["nuclei_col"]
            self.last_decl = (frame, builder, lineno)
        elif kind == "state_registry":
            if self.registry is not None:
                self.diag("DUPLICATE_STATE_REGISTRY", lineno, col,
                          f"a second MODULE_STATE_REGISTRY (first on line {self.registry[0]}); this one is ignored",
                          related=self.registry[0])
                self.ignored_lines.add(lineno)
            else:
                self.registry = (lineno, plevel)
                self.registry_zone = self.zone
        if level < 6:
            lg.append(_Logical(level, kind, section, keyword, lineno, builder))
            if section == "STATE" and kind == "section":
                owner = self._container()
                if owner is not None:
                    if "state_value" in d:
                        self._set_state(owner, d["state_value"], lineno, col, plevel)
                    else:
                        self.pending_state = owner
        else:
            owner = self._container(for_entry=True)
            self.h6_owner[lineno] = owner.line if owner is not None else 0
        return True

    def _classify(self, level, text, lineno, col, d):
        """Kind, keyword and section of an H2-H5 header (§7, §9, §12)."""
        memory = self.memory
        kind, keyword, section = "section", None, None
        m = sx.KEYWORD_START.match(text)
        if level == 2 and sx.REGISTRY_DECL.fullmatch(text):
            return "state_registry", None, None, d
        if m:
            word = m.group(1)
            if word == "MODULE" and level == 2:
                dm = sx.MODULE_DECL.match(text)
                if not dm:
                    self.diag("MALFORMED_DECLARATION", lineno, col,
                              "module declaration must read '## MODULE <id>: <name>'")
                    return kind, keyword, section, d
                id_, name = dm.group(1), dm.group(2)
                name, nuclei, ncol = self._split_nuclei(name, text, lineno, col + level + 1)
                if id_ is None and (self.file_type or self.recover_type) == "reminder":
                    self.diag("MISSING_MODULE_ID", lineno, col,
                              "a module in a [reminder] file must have an id: '## MODULE <id>: <name>'")
                if id_ is not None and sx.TEMPORARY_ID.fullmatch(id_):
                    self.diag("RESERVED_ID", lineno, col,
                              f"'{id_}' is in the temporary-id namespace ~Tn, which is never written to files")
                d.update(id=id_, name=name)
                if nuclei is not None:
                    d["nuclei"], d["nuclei_col"] = nuclei, ncol
                return "module", None, None, d
            if word == "NUCLEUS" and level == 2:
                dm = sx.NUCLEUS_DECL.match(text)
                if not dm:
                    self.diag("MALFORMED_DECLARATION", lineno, col,
                              "nucleus declaration must read '## NUCLEUS <n>: <name>' (n a non-negative integer)")
                    return kind, keyword, section, d
                d.update(nucleus_id=int(dm.group(1)), name=dm.group(2).strip(), id=dm.group(1))
                return "nucleus", None, None, d
            if word == "TOPIC":
                dm = sx.TOPIC_DECL.match(text)
                if not memory:
                    self.diag("TOPIC_OUTSIDE_EXTERNAL_MEMORY", lineno, col,
                              "TOPIC is a container of [external_memory] files only; parsed as a section")
                    return kind, keyword, section, d
                if level != 2:
                    self.diag("MISPLACED_TOPIC", lineno, col,
                              f"TOPIC at H{level}: a topic is an H2; use "
                              f"'{'#' * level} SUBTOPIC{level - 2}:' for a sub-topic. Parsed as a section")
                    return kind, keyword, section, d
                if not dm:
                    self.diag("MALFORMED_DECLARATION", lineno, col, "topic declaration must read '## TOPIC: <name>'")
                    return kind, keyword, section, d
                name = dm.group(2).strip()
                if sx.NUCLEI_TAG.search(name):
                    self.diag("NUCLEI_TAG_ON_TOPIC", lineno, col,
                              "[NUCLEI: ...] on a topic binds nothing: it is inert text in the name")
                d.update(id=dm.group(1), name=name)
                return "module", "TOPIC", None, d
            if word.startswith("SUBTOPIC"):
                dm = sx.SUBTOPIC_DECL.match(text)
                if not memory:
                    self.diag("SUBTOPIC_OUTSIDE_EXTERNAL_MEMORY", lineno, col,
                              "SUBTOPIC is a container of [external_memory] files only; parsed as a section")
                    return kind, keyword, section, d
                if not dm:
                    self.diag("MALFORMED_DECLARATION", lineno, col,
                              f"sub-topic declaration must read '{'#' * level} SUBTOPIC{max(level - 2, 1)}: <name>'")
                    return kind, keyword, section, d
                digit = dm.group(1)
                if level == 2:
                    self.diag("SUBTOPIC_LEVEL_MISMATCH", lineno, col,
                              f"SUBTOPIC{digit} at H2: the header depth wins and H2 is a topic"
                              " (write '## TOPIC:' or move it one level deeper)")
                    name = dm.group(3).strip()
                    d.update(id=dm.group(2), name=name)
                    return "module", "TOPIC", None, d
                if not digit:
                    self.diag("SUBTOPIC_LEVEL_MISMATCH", lineno, col,
                              f"SUBTOPIC without its level digit: at H{level} it is SUBTOPIC{level - 2}"
                              " (the header depth is used)")
                elif int(digit) != level - 2:
                    self.diag("SUBTOPIC_LEVEL_MISMATCH", lineno, col,
                              f"SUBTOPIC{digit} at H{level}: SUBTOPIC{digit} lives at H{int(digit) + 2}"
                              f" (the header depth H{level} is used)")
                name = dm.group(3).strip()
                if sx.NUCLEI_TAG.search(name):
                    self.diag("NUCLEI_TAG_ON_TOPIC", lineno, col,
                              "[NUCLEI: ...] on a sub-topic binds nothing: it is inert text in the name")
                d.update(id=dm.group(2), name=name)
                return "module", "SUBTOPIC", None, d
            if word in ("SUB-MODULE", "SOTTOMODULO") and level == 3:
                dm = sx.SUBMODULE_DECL.match(text)
                if word == "SOTTOMODULO":
                    self.diag("DEPRECATED_ITALIAN_KEYWORD", lineno, col, "SOTTOMODULO is deprecated: use SUB-MODULE")
                if not dm:
                    self.diag("MALFORMED_DECLARATION", lineno, col,
                              "sub-module declaration must read '### SUB-MODULE: <name>'")
                    return kind, keyword, section, d
                d.update(id=dm.group(2), name=dm.group(3).strip())
                return "sub_module", None, None, d
        if level == 2:
            rm = sx.RULES_DECL.match(text)
            if rm:
                if rm.group(1) == "REGOLE":
                    self.diag("DEPRECATED_ITALIAN_KEYWORD", lineno, col, "REGOLE is deprecated: use RULES")
                d["name"] = rm.group(2).strip() or None
                return "section", None, "RULES", d
        sm = sx.SECTION_DECL.match(text)
        if sm:
            word = sm.group(1)
            if word in sx.ITALIAN:
                self.diag("DEPRECATED_ITALIAN_KEYWORD", lineno, col,
                          f"{word} is deprecated: use {sx.ITALIAN[word]}")
                word = sx.ITALIAN[word]
            d["name"] = sm.group(2).strip() or None
            if word == "STATE" and d["name"]:
                d["state_value"] = d["name"]
            return "section", None, word, d
        bm = sx.BOLD_STATE_HEADER.fullmatch(text)
        if bm:
            if bm.group(1) == "STATO":
                self.diag("DEPRECATED_ITALIAN_KEYWORD", lineno, col, "STATO is deprecated: use STATE")
            d["name"] = bm.group(2).strip()
            d["state_value"] = d["name"]
            return "section", None, "STATE", d
        rm = sx.RULES_DECL.match(text)
        if rm:
            d["name"] = rm.group(2).strip() or None
            return "section", None, "RULES", d
        d["name"] = text
        return kind, keyword, section, d

    def _h6(self, text, lineno, col, d):
        """An H6: a log entry (§7.5), or any mnemonic node in external memory (§5.5 v1.7)."""
        is_log = text.startswith("LOG:") or sx.LOG_WORD.search(text) is not None
        if self.memory:
            if text.startswith("SUBTOPIC") and sx.KEYWORD_START.match(text):
                self.diag("SUBTOPIC_TOO_DEEP", lineno, col,
                          "SUBTOPIC at H6 declares nothing: H6 is a mnemonic node (the deepest container is"
                          " ##### SUBTOPIC3)")
        elif not is_log:
            if text.startswith("SUBTOPIC") and sx.KEYWORD_START.match(text):
                self.diag("SUBTOPIC_OUTSIDE_EXTERNAL_MEMORY", lineno, col,
                          "SUBTOPIC is a container of [external_memory] files only; parsed as a section")
            d["name"] = text
            return "section", d
        date = title = None
        m = sx.CANONICAL_LOG.fullmatch(text)
        if m:
            date = m.group(1)
            title = (m.group(2) or "").strip() or None
            if not sx.valid_date_text(date):
                self.diag("INVALID_LOG_DATE", lineno, col + 7 + m.start(1),
                          f"'{date}' is not a valid ISO 8601 date (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS)")
        else:
            dm = sx.DATE_TIME.search(text)
            if dm:
                date = dm.group(0)
                if not sx.valid_iso(dm.group(1), dm.group(2)):
                    self.diag("INVALID_LOG_DATE", lineno, col + 7 + dm.start(),
                              f"'{date}' is not a valid ISO 8601 date")
                after = text[dm.end():].strip().lstrip("—–-:").strip().rstrip("]").strip()
                title = after or None
            if title is None:
                cleaned = sx.LOG_WORD.sub("", text, count=1).strip(" \t[]:—–-").strip() if is_log else text
                title = cleaned or None
        d["date"] = date
        d["title"] = title
        return "log", d

    def _split_nuclei(self, name, text, lineno, text_col):
        """Take an inline ``[NUCLEI: ...]`` out of a module name (§7.4.4)."""
        m = sx.NUCLEI_TAG.search(name)
        if not m:
            return name.strip(), None, 1
        ids, ok = sx.parse_nuclei(m.group(1))
        ncol = text_col + text.index("[NUCLEI:")
        if not ok:
            self.diag("MALFORMED_NUCLEI_TAG", lineno, ncol,
                      f"'{m.group(0)}' must list integer nucleus ids separated by commas")
        return (name[:m.start()].rstrip() + " " + name[m.end():].lstrip()).strip(), ids, ncol

    def _nuclei_line(self, s, lineno, off):
        """``[NUCLEI: ...]`` on the line after a module declaration (§7.4.4)."""
        frame, builder, _ = self.last_decl
        self.last_decl = None
        m = sx.NUCLEI_TAG.search(s)
        col = m.start() + 1
        p = _Frame("nuclei", lineno, off, self.plevel)
        frame.children.append(p)
        if builder is None:
            return
        if builder.keyword in ("TOPIC", "SUBTOPIC"):
            self.diag("NUCLEI_TAG_ON_TOPIC", lineno, col,
                      "[NUCLEI: ...] after a topic binds nothing: a memory topic governs no nuclei")
            return
        if builder.type != "module" or builder.nuclei is not None:
            self.diag("MISPLACED_NUCLEI_TAG", lineno, col,
                      "[NUCLEI: ...] binds only to the module declared on the line before, once")
            return
        ids, ok = sx.parse_nuclei(m.group(1))
        if not ok:
            self.diag("MALFORMED_NUCLEI_TAG", lineno, col,
                      f"'{m.group(0)}' must list integer nucleus ids separated by commas")
        builder.nuclei = ids
        builder.nuclei_line = lineno
        builder.nuclei_col = col
        frame.d["nuclei"] = ids

    def _container(self, for_entry=False):
        """The innermost open container on the logical stack (§7.1.3 ownership).

        Containers are modules, topics, sub-topics, sub-modules and nuclei; for
        H6 entries a plain H2 section (e.g. ``## RULES:``) also owns them.
        """
        for e in reversed(self.logical):
            if e.builder is not None:
                return e.builder
            if for_entry and e.level == 2 and e.kind == "section":
                return _Owner(e.line)
        return None

    def _declare_block(self, kind, keyword, section, level, d, plevel, lineno, col, builder):
        """Record a declaration that §5.5 Invariant 4 compares across zones."""
        if kind == "module" and keyword is None and d.get("id") is not None:
            key = ("module", d["id"])
        elif kind == "nucleus":
            key = ("nucleus", d["id"])
        elif kind == "section" and section == "RULES" and level == 2:
            key = ("rules", "")
        else:
            return
        self.decls.setdefault(key, []).append((plevel, lineno, col, builder))

    def _set_state(self, owner, value, lineno, col, plevel):
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

    # -- leaf blocks -------------------------------------------------------------------
    def _separator(self, lineno, off):
        self._close_leaf()
        self._close_list()
        self.pending_state = None
        frame = _Frame("sep", lineno, off, self.plevel)
        self._add(frame)

    def _quote_line(self, s, lineno, off, indent):
        leaf = self.leaf
        body = sx.QUOTE_PREFIX.sub("", s, count=1)
        if leaf is not None and leaf.kind == "quote" and not self.blank_before:
            leaf.d["lines"].append(body)
            return
        self.pending_state = None
        m = sx.ANCHOR_START.match(s)
        d = {"lines": [], "severity": None}
        if m:
            kw = m.group(1)
            if kw in sx.ANCHOR_KEYWORDS:
                d["severity"] = kw
                if m.group(2):
                    d["lines"].append(m.group(2))
                plevel = self.plevel
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
                d["lines"].append(body)
        else:
            d["lines"].append(body)
        frame = self._leaf_block("quote", lineno, off, d)
        self.leaf = frame

    def _text_line(self, s, stripped, indent, lineno, off):
        leaf = self.leaf
        if self.list_stack:
            if not self.blank_before or indent >= 2:
                item = self.list_stack[-1][1]
                item.d["text"].append(stripped.rstrip())
                return
            self._close_list()
        if self.pending_state is not None:
            owner = self.pending_state
            self.pending_state = None
            self._set_state(owner, stripped, lineno, indent + 1, self.plevel)
        fm = sx.FIELD_LABEL.match(stripped) if stripped.startswith("**") else None
        if fm is not None:
            name, value = fm.group(1), fm.group(2)
            frame = self._leaf_block("para", lineno, off, {"field": (name.strip(), value.strip())})
            self.leaf = frame
            if name.strip() in ("STATE", "STATO"):
                owner = self._container()
                if owner is not None:
                    if name.strip() == "STATO":
                        self.diag("DEPRECATED_ITALIAN_KEYWORD", lineno, indent + 1, "STATO is deprecated: use STATE")
                    self._set_state(owner, value, lineno, indent + 1, self.plevel)
            return
        if leaf is not None and leaf.kind == "para" and not self.blank_before:
            return
        if "[NUCLEI:" in stripped and sx.NUCLEI_LINE.fullmatch(s):
            self.diag("MISPLACED_NUCLEI_TAG", lineno, indent + 1,
                      "[NUCLEI: ...] must be on the module's declaration line or the line right after it")
        self.leaf = self._leaf_block("para", lineno, off)

    def _list_item(self, m, s, lineno, off):
        indent_s, marker, text = m.group(1), m.group(2), m.group(3) or ""
        if "\t" in indent_s:
            indent = indent_s.count("\t") * 4 + indent_s.count(" ")
        else:
            indent = len(indent_s)
        ls = self.list_stack
        if not ls:
            self._close_leaf()
            if self.pending_state is not None:  # a STATE value may come as a bullet
                owner = self.pending_state
                self.pending_state = None
                self._set_state(owner, text, lineno, indent + 1, self.plevel)
        else:
            self.leaf = None
        while ls and (ls[-1][0] >= indent or len(ls) >= _MAX_LIST_DEPTH):
            ls.pop()  # (past _MAX_LIST_DEPTH a deeper item becomes a sibling: the tree stays shallow)
            if self.stack and self.stack[-1].kind in ("item", "rule"):
                self.stack.pop()
        level = len(ls) + 1
        plevel = self.plevel
        col = indent + 1
        ordered = marker[0].isdigit()
        if not ordered:
            self.list_items.append((level, marker, lineno, col))
        if level == 4 and not ordered:  # once where a list goes past level 3
            self.diag("LIST_TOO_DEEP", lineno, col, "list level 4: lists have three levels (* + -)")
        kind = "item"
        d = {"level": level, "marker": marker, "text": [text.rstrip()]}
        rm = sx.RULE_BULLET.fullmatch(s) if (level == 1 and indent == 0 and marker == "*") else None
        if rm is not None:
            kind = "rule"
            self._rule(rm, lineno, plevel, d)
        else:
            section = self.section_now
            if section is _UNSET:
                section = self.section_now = self._section()
            if section is None or self.in_entry:
                pass  # inside a journal entry, bullets are the entry's text
            elif section == "CONNECTIONS":
                # Edges are declared by the user: bullets in a writable zone draw none (§5.5, §7.6).
                if level == 1 and plevel is not None and plevel <= 3:
                    self._connection(s, lineno, col)
            elif section == "REGISTRY" and self.zone is not None and self.zone is self.registry_zone:
                self._registry_entry(s, lineno, col)
        frame = _Frame(kind, lineno, off, plevel, d)
        if ls:
            ls[-1][1].children.append(frame)
        else:
            self._add(frame)
        self.stack.append(frame)
        ls.append((indent, frame))

    def _section(self):
        """The innermost logical section keyword (CONNECTIONS, RULES...) or REGISTRY."""
        for e in reversed(self.logical):
            if e.kind == "state_registry":
                return "REGISTRY"
            if e.section is not None:
                return e.section
            if e.kind != "section":
                return None
        return None

    def _rule(self, m, lineno, plevel, d):
        prefix, number = m.group(1), int(m.group(2))
        d["rule"] = (prefix, number, m.group(3).strip())
        if prefix not in sx.RULE_CATEGORIES:
            self.diag("UNKNOWN_RULE_PREFIX", lineno, 3,
                      f"rule prefix '{prefix}' is not R, C or S: parsed as a general rule")
        if plevel is None:
            self.diag("UNPROTECTED_LOGICAL_CONTENT", lineno, 1,
                      f"rule {prefix}{number} outside any permission block: rules belong in [P1]")
            return
        if plevel >= 4:
            self.diag("INVALID_HEADER_IN_WRITABLE_ZONE", lineno, 1,
                      f"rule bullet {prefix}{number} in a [P{plevel}] zone: rules are valid only in [P1]")
            self.ignored_lines.add(lineno)
            return
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
        if key in self.rules_seen:
            self.diag("DUPLICATE_RULE_NUMBER", lineno, 3,
                      f"rule {prefix}{number} is already declared on line {self.rules_seen[key]}",
                      related=self.rules_seen[key])
        else:
            self.rules_seen[key] = lineno

    def _connection(self, line_text, lineno, col):
        owner = None
        for e in reversed(self.logical):
            if e.builder is not None:
                owner = e.builder
                break
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
        if owner is not None:
            owner.connections.append(Connection(kind, target, lineno))

    def _registry_entry(self, line_text, lineno, col):
        rm = sx.REGISTRY_ENTRY.fullmatch(line_text.strip())
        if rm is None:
            self.diag("MALFORMED_STATE_REGISTRY_ENTRY", lineno, col,
                      "registry lines read '* ACTIVE: <ids>' or '* INACTIVE: <ids>'; line ignored")
            return
        if self.registry is None or self.registry[0] != self._registry_line():
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
            self.registry_entries.append((mid, state, lineno))

    def _registry_line(self):
        for e in reversed(self.logical):
            if e.kind == "state_registry":
                return e.line
        return None

    # -- lists (§8.1) ------------------------------------------------------------------
    def _check_list_markers(self):
        items = self.list_items
        if not items:
            return
        if all(lv == 1 and mk == "*" for lv, mk, _, _ in items):
            return  # the common case: a flat list of root bullets
        markers = {mk for _, mk, _, _ in items}
        levels = {lv for lv, _, _, _ in items}
        if len(markers) == 1 and len(levels) > 1:
            lv, mk, ln, col = items[0]
            self.diag("UNIFORM_LIST_MARKER_WARNING", ln, col,
                      f"every level of this list uses '{mk}': hierarchy inferred from indentation"
                      " (canonical markers: * + -)")
            return
        expected = {1: "*", 2: "+", 3: "-"}
        by_level: dict = {}
        for lv, mk, ln, col in items:
            by_level.setdefault(lv, []).append((mk, ln, col))
        for lv, entries in sorted(by_level.items()):
            kinds = {mk for mk, _, _ in entries}
            if len(kinds) > 1:
                first = entries[0][0]
                for mk, ln, col in entries:
                    if mk != first:
                        self.diag("MIXED_LIST_MARKERS", ln, col,
                                  f"level-{lv} items of this list use both '{first}' and '{mk}'")
                        break
            want = expected.get(lv)
            if want is None:
                continue
            for mk, ln, col in entries:
                if mk != want:
                    self.diag("LIST_MARKER_MISMATCH", ln, col,
                              f"'{mk}' at list level {lv}: the level-{lv} marker is '{want}'")
                    break

    # -- building frozen blocks ----------------------------------------------------------
    def _build(self, f: _Frame, end: int, end_line: int) -> Block:
        src = self.src
        kids = f.children
        built: tuple = ()
        if kids:
            if f.tail is not None:
                inner_end, inner_line = f.tail, f.tail_line - 1
            else:
                inner_end, inner_line = end, end_line
            out = []
            last = len(kids) - 1
            for j, k in enumerate(kids):
                if j < last:
                    nk = kids[j + 1]
                    out.append(self._build(k, nk.start, nk.line - 1))
                else:
                    out.append(self._build(k, inner_end, inner_line))
            built = tuple(out)
        kind = f.kind
        line, start, pl = f.line, f.start, f.plevel
        if end_line < line:
            end_line = line
        if kind == "para":
            fld = f.d["field"] if f.d else None
            if fld:
                return _new_paragraph("paragraph", line, end_line, start, end, pl, built, src, None, fld[0], fld[1])
            return _new_paragraph("paragraph", line, end_line, start, end, pl, built, src, None, None, None)
        if kind == "heading":
            d = f.d
            get = d.get
            return _new_heading(d["kind"], line, end_line, start, end, pl, built, src, d["level"], d["text"],
                                get("id"), get("name"), d["keyword"], d["section"], get("nuclei"), get("date"),
                                get("title"), d["refused"])
        if kind == "item":
            d = f.d
            return _new_list_item("list", line, end_line, start, end, pl, built, src, d["level"], d["marker"],
                                  "\n".join(d["text"]))
        if kind == "rule":
            d = f.d
            prefix, number, title = d["rule"]
            more = d["text"][1:] + [b.text for b in _walk_items(built)]
            body = "\n".join(more) or None
            return Rule("rule", line, end_line, start, end, pl, built, src, prefix=prefix, rule_number=number,
                        category=sx.RULE_CATEGORIES.get(prefix, "general"), title=title, body=body)
        if kind == "zone":
            return _new_block("permission_block", line, end_line, start, end, pl, built, src)
        if kind == "quote":
            d = f.d
            sev = d["severity"]
            return Quote("attention_anchor" if sev else "quote", line, end_line, start, end, pl, built, src,
                         severity=sev, text="\n".join(d["lines"]).strip())
        if kind == "sep":
            return _new_block("separator", line, end_line, start, end, pl, built, src)
        if kind == "title":
            return Heading("section", line, end_line, start, end, None, built, src, level=1,
                           text=f.d["text"], name=self.title, title=self.title)
        syntax = {"fence": "code_fence", "comment": "html_comment", "frontmatter": "frontmatter",
                  "nuclei": "nuclei_tag"}[kind]
        return Paragraph("paragraph", line, end_line, start, end, pl, built, src, syntax=syntax)

    # -- cross-block checks --------------------------------------------------------------
    def _post_checks(self):
        nuclei_ids = {int(b.id) for b in self.nucleus_list}
        ignored_lines_of_builders = set()
        # §5.5 Invariant 4: duplicates of the same MODULE id, NUCLEUS id or RULES section.
        for (kind, ident), decls in self.decls.items():
            if len(decls) < 2:
                continue
            what = {"module": f"MODULE {ident}", "nucleus": f"NUCLEUS {ident}", "rules": "RULES section"}[kind]
            rank = sorted(decls, key=lambda x: (x[0] if x[0] is not None else 6, x[1]))
            win = rank[0]
            for pl, ln, col, b in rank[1:]:
                self.ignored_lines.add(ln)
                ignored_lines_of_builders.add(ln)
                if (pl if pl is not None else 6) == (win[0] if win[0] is not None else 6):
                    self.diag("DUPLICATE_BLOCK_CONFLICT", ln, col,
                              f"{what} is declared again at the same permission level (first on line {win[1]});"
                              " this declaration is ignored", related=win[1])
                else:
                    self.diag("DUPLICATE_BLOCK_CONFLICT_WARNING", ln, col,
                              f"{what} in [P{pl if pl is not None else '-'}] duplicates the [P{win[0]}] declaration"
                              f" on line {win[1]}: the lower-n version is used, this one is ignored",
                              related=win[1])
        modules = []
        for b in self.modules:
            ignored = b.line in ignored_lines_of_builders
            if b.type == "module" and b.keyword is None and not ignored:
                if b.nuclei is None:
                    self.diag("UNGOVERNED_MODULE", b.line, 1,
                              f"MODULE {b.id or b.name} has no [NUCLEI: ...] tag: it is ungoverned")
                else:
                    for nid in b.nuclei:
                        if nid not in nuclei_ids:
                            self.diag("UNRESOLVED_NUCLEUS_REFERENCE", b.nuclei_line, b.nuclei_col,
                                      f"nucleus {nid} is not declared in this file")
            modules.append(ModuleInfo(b.type, b.keyword, b.id, b.name or "", b.level, b.line, b.plevel,
                                      b.nuclei, b.state, b.permanent, b.state_line, tuple(b.connections),
                                      ignored, b.parent_line))
        nuclei = tuple(NucleusInfo(int(b.id), b.name or "", b.line, b.plevel, tuple(b.connections),
                                   b.line in ignored_lines_of_builders) for b in self.nucleus_list)
        # §7.3.1 registry entries against permanent states.
        permanent = {m.id for m in modules if m.id is not None and m.permanent and not m.ignored}
        first_state: dict = {}
        for mid, state, ln in self.registry_entries:
            if mid in permanent:
                self.diag("PERMANENT_STATE_OVERRIDE_ATTEMPT", ln, 1,
                          f"module {mid} has a permanent STATE: its registry entry is ignored")
                continue
            seen = first_state.setdefault(mid, (state, ln))
            if seen[0] != state and seen[0] != "reported":
                first_state[mid] = ("reported", ln)
                self.diag("CONTRADICTORY_STATE_REGISTRY", ln, 1,
                          f"module {mid} is listed as both {seen[0].upper()} (line {seen[1]}) and"
                          f" {state.upper()}: both entries are ignored", related=seen[1])
        return tuple(modules), nuclei

    def _registry_info(self):
        if self.registry is None:
            return None
        line, plevel = self.registry
        return RegistryInfo(line, plevel,
                            tuple(m for m, s, _ in self.registry_entries if s == "active"),
                            tuple(m for m, s, _ in self.registry_entries if s == "inactive"),
                            tuple(self.registry_entries))


_UNSET = object()
#: Lists have three levels (§8); deeper nesting is reported and flattened past this depth so
#: that no input can make the tree deep enough to exhaust recursion in its consumers.
_MAX_LIST_DEPTH = 16
_new_block = fast_constructor(Block)
_new_heading = fast_constructor(Heading)
_new_paragraph = fast_constructor(Paragraph)
_new_list_item = fast_constructor(ListItem)

#: First characters of a line that can only be prose (fast path of the scan).
_PLAIN_START = frozenset(
    c for c in map(chr, range(32, 0x3000)) if c not in "#[`~<>*+-_0123456789 \t\u00a0") - {"\ufeff"}


def _columns(whitespace: str) -> int:
    """Width of leading spaces and tabs, tabs stopping at multiples of 4."""
    col = 0
    for ch in whitespace:
        col = (col // 4 + 1) * 4 if ch == "\t" else col + 1
    return col


def _iter_lines(src: str, chunk: int = 1 << 18):
    """The lines of ``src`` split on ``\\n`` only, a chunk at a time (bounded memory)."""
    n = len(src)
    pos = 0
    while pos < n:
        end = src.find("\n", min(pos + chunk, n - 1))
        end = n if end == -1 else end + 1
        parts = src[pos:end].split("\n")
        if parts[-1] == "":
            parts.pop()
        yield from parts
        pos = end


class _Owner:
    """A plain H2 section standing as the owner of H6 entries."""

    __slots__ = ("line", "type")

    def __init__(self, line):
        self.line = line
        self.type = "section"


def _walk_items(items):
    for it in items:
        yield it
        yield from _walk_items(it.children)
