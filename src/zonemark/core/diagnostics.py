"""Diagnostics as data: one catalogue of every code zonemark reports.

Each code has a fixed severity, the spec section it comes from, a one-line
summary and a longer explanation.  The CLI's ``--explain CODE``, the
generated part of ``docs/conformance.md`` and the typed exceptions of
:mod:`zonemark.errors` all draw from :data:`CATALOGUE`.
"""

from __future__ import annotations

import bisect
from operator import itemgetter
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any, Literal, cast


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.value


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem found in a file: where (1-based line and column) and what.

    ``related_line`` is the other line a message names ("first on line 12"), ``count`` the
    file-wide number a once-per-file diagnostic reports ("(3 lines in the file)"): code that
    compares diagnostics reads these fields, never the message text.  ``end_line`` and
    ``end_column`` (exclusive) close the extent that starts at ``line``/``column``: the end of
    the construct the column points at (:func:`construct_span`), set by :func:`placed` where the
    parser and the layer loader hand their diagnostics out; 0 before that.
    """

    code: str
    severity: Severity
    line: int
    column: int
    message: str
    path: str | None = None
    related_line: int | None = None
    count: int | None = None
    end_line: int = 0
    end_column: int = 0

    def touches(self, line: int, column: int) -> bool:
        """Whether a cursor at (``line``, ``column``) touches the extent (its end included)."""
        if line < self.line or line > self.end_line:
            return False
        return (line > self.line or column >= self.column) and (line < self.end_line or column <= self.end_column)

    def to_dict(self) -> dict[str, Any]:
        """The §13 ``ParserWarning`` / ``ParserError`` shape (plus severity)."""
        return {
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "code": self.code,
            "severity": self.severity.value,
        }

    def format(self) -> str:
        """``path:line:col: CODE message`` (ruff style)."""
        where = self.path if self.path is not None else "<text>"
        return f"{where}:{self.line}:{self.column}: {self.code} {self.message}"


#: A diagnostic as a scan finds it, before its extent is known: ``(code, line, column, message, path,
#: related_line, count)``, a plain tuple (a scan may make hundreds of thousands); :func:`placed` makes the
#: :class:`Diagnostic` of it, once.
Pending = tuple[str, int, int, str, "str | None", "int | None", "int | None"]


def severity_counts(diagnostics: Iterable[Diagnostic]) -> tuple[int, int]:
    """How many of ``diagnostics`` are errors and how many warnings, in one pass (no list is made)."""
    errors = warnings = 0
    for d in diagnostics:
        errors += d.severity is Severity.ERROR
        warnings += d.severity is Severity.WARNING
    return errors, warnings


class _DiagnosticBuilder:
    """A mutable twin of :class:`Diagnostic`'s slot layout (the same slots, in the same order): its
    ``__init__`` stores the ten values with plain attribute stores, then turns the object into the
    frozen :class:`Diagnostic` it is from then on (``__class__`` assignment between two layouts that
    are the same).  No ``object.__setattr__`` call, no descriptor call per field: the parser makes one
    per finding, ~10^5 on a file full of them."""

    __slots__ = tuple(f.name for f in fields(Diagnostic))

    def __init__(self, code: str, severity: Severity, line: int, column: int, message: str, path: str | None,
                 related_line: int | None, count: int | None, end_line: int, end_column: int) -> None:
        self.code = code
        self.severity = severity
        self.line = line
        self.column = column
        self.message = message
        self.path = path
        self.related_line = related_line
        self.count = count
        self.end_line = end_line
        self.end_column = end_column
        self.__class__ = Diagnostic  # type: ignore[assignment]


#: ``Diagnostic(...)`` of these ten values, positional, at a third of the cost of the frozen dataclass's
#: ``__init__`` (the same object either way: ``tests/core/test_diagnostic_extent.py``).
_new_diagnostic = cast("Callable[[str, Severity, int, int, str, str | None, int | None, int | None, int, int], "
                       "Diagnostic]", _DiagnosticBuilder)


@dataclass(frozen=True, slots=True)
class CodeInfo:
    code: str
    severity: Severity
    section: str
    summary: str
    explanation: str
    origin: Literal["spec", "zonemark"]  # named by the standard, or added here
    scope: Literal["file", "layer"] = "file"  # reported by the parser, or by Layer.load


E, W = Severity.ERROR, Severity.WARNING


def _c(code: str, severity: Severity, section: str, summary: str, explanation: str,
       origin: Literal["spec", "zonemark"] = "zonemark", scope: Literal["file", "layer"] = "file") -> CodeInfo:
    return CodeInfo(code, severity, section, summary, " ".join(explanation.split()), origin, scope)


_CODES = [
    # --- named by the standard (§13 and the sections it points to) -------------------
    _c("MISSING_FILE_TYPE", E, "§3.2, §3.3, §3.4",
       "The first non-empty, non-comment line is not an H1 with a file type tag.",
       """The first line that is neither blank nor an HTML comment (after YAML frontmatter)
       must be `# <title> [reminder]`, `[external_module]` or `[external_memory]` (tag first or
       last). The short filename forms `[ext_module]`/`[ext_memory]` are not H1 tags (§3.4).""",
       "spec"),
    _c("MULTIPLE_FILE_TYPES", E, "§3.2, §3.3",
       "The H1 carries more than one file type tag.",
       """An H1 must hold one and only one of `[reminder]`, `[external_module]`,
       `[external_memory]`. A second tagged H1 later in the file is reported the same way.""",
       "spec"),
    _c("UNCLOSED_PERMISSION_BLOCK", E, "§5.1, §5.4",
       "A `[Pn]` block is not closed before the end of the file.",
       """Every `[Pn]` must be closed by `[/Pn]` before EOF. The zone is taken to run to the end
       of the file.""", "spec"),
    _c("MISMATCHED_PERMISSION_BLOCK", E, "§5.1, §5.4",
       "A closing tag does not match the open block (or closes no block).",
       """`[P1]` closes only with `[/P1]`. Recovery: inside `[P1]`-`[P3]` the wrong closing tag
       is taken as a typo and closes the open block; inside `[P4]`/`[P5]` it is plain text
       (Invariant 5: tags in writable zones are not structure) and the block stays open.""",
       "spec"),
    _c("NESTED_PERMISSION_BLOCK", E, "§5.4, §5.5 Invariants 2 and 5",
       "A `[Pn]` tag appears inside an open permission block.",
       """Blocks do not nest, whatever n and m. The inner tag is plain text in the outer zone;
       its own matching closing tag, if any, is consumed with it, so the outer block keeps
       its extent and permission level.""", "spec"),
    _c("UNPROTECTED_LOGICAL_CONTENT", E, "§5.4, §5.5 Invariant 1",
       "A structural marker lies outside every permission block.",
       """Headers H2-H6, module/nucleus/sub-module/topic declarations, rule bullets and
       attention anchors must sit inside a `[Pn]` block. The H1 title is exempt; a second H1 is
       not.""", "spec"),
    _c("INVALID_HEADER_IN_WRITABLE_ZONE", E, "§5.5 Invariant 1, §7.1.2, §7.1.3",
       "A structural marker lies inside a `[P4]` or `[P5]` zone.",
       """`[P4]`/`[P5]` hold free text, root-level bullets and H6 log entries only (in
       `[external_memory]` files any H6). Headers H1-H5, declarations, rule bullets and
       attention anchors there are refused. The one purpose-designed exception is
       `## MODULE_STATE_REGISTRY:` in `[P4]` (§7.3.1).""", "spec"),
    _c("DUPLICATE_BLOCK_CONFLICT", E, "§5.4, §5.5 Invariant 4, §13",
       "The same logical block is declared twice at the same permission level.",
       """Two declarations of the same MODULE id, NUCLEUS id or `## RULES:` section in zones of
       the same level cannot be ordered by Invariant 4 (lower n wins). The first in document
       order is used; the later one is ignored.""", "spec"),
    _c("DUPLICATE_BLOCK_CONFLICT_WARNING", W, "§5.4, §5.5 Invariant 4, §13",
       "The same logical block is declared in zones of different levels; the lower n wins.",
       """The declaration in the stricter zone (lower n) is authoritative; the one in the
       higher-n zone is ignored (marked `ignored` in the output).""", "spec"),
    _c("HIERARCHY_VIOLATION", W, "§4.2",
       "A header skips a level (e.g. H2 followed by H4).",
       """Headers must descend one level at a time. H6 journal entries (logs, mnemonic nodes)
       are exempt, as are `SUBTOPICn` containers in external memory (§7.1.3: skipped levels
       are tolerated).""", "spec"),
    _c("UNKNOWN_ANCHOR_KEYWORD", W, "§6.3, §6.4",
       "`> [!XYZ]` uses a keyword outside NOTE/TIP/IMPORTANT/WARNING/CAUTION.",
       """The blockquote is parsed as a regular quote. Keywords are case-sensitive (§12).""",
       "spec"),
    _c("DEPRECATED_ITALIAN_KEYWORD", W, "§12",
       "A legacy Italian keyword is used (FUNZIONE, STATO, CONNESSIONI, SOTTOMODULO, REGOLE).",
       """It is read as its English equivalent. New files must use the English keywords.""",
       "spec"),
    _c("UNKNOWN_RULE_PREFIX", W, "§9.3",
       "A rule uses a prefix other than R, C or S.",
       """The rule is parsed with category `general`.""", "spec"),
    _c("UNRESOLVED_NUCLEUS_REFERENCE", W, "§7.4.4",
       "`[NUCLEI: ...]` names a nucleus not declared in the file.",
       """Within a single file the reference is checked against that file's `## NUCLEUS n:`
       declarations. When the file is loaded as part of a layer, references from external files
       are re-checked against every nucleus of the layer.""", "spec"),
    _c("UNGOVERNED_MODULE", W, "§7.4.4",
       "A `## MODULE` declaration has no `[NUCLEI: ...]` tag.",
       """The module is valid but ungoverned. `[NUCLEI: ]` (empty) is a deliberate declaration
       and is not flagged. Topics and sub-topics govern no nuclei and are never flagged.""",
       "spec"),
    _c("PERMANENT_STATE_OVERRIDE_ATTEMPT", W, "§7.3.1",
       "The state registry names a module whose STATE is `- permanent`.",
       """The registry entry is ignored; the declared permanent state stands.""", "spec"),
    _c("SUBTOPIC_LEVEL_MISMATCH", W, "§7.1.3",
       "A SUBTOPIC's level digit disagrees with its header depth, or is missing.",
       """`SUBTOPICn` lives at header level n+2. The header depth wins.""", "spec"),
    _c("SUBTOPIC_TOO_DEEP", W, "§7.1.3",
       "The SUBTOPIC keyword is used at H6.",
       """At H6 an external memory has mnemonic nodes, not containers: the line is parsed as a
       node whose title happens to read SUBTOPIC.""", "spec"),
    _c("SUBTOPIC_WITHOUT_TOPIC", W, "§7.1.3",
       "A sub-topic has no topic (or other container) above it.",
       """It is attached to the file and parsing goes on.""", "spec"),
    _c("SUBTOPIC_OUTSIDE_EXTERNAL_MEMORY", W, "§7.1.3",
       "The SUBTOPIC keyword is used in a reminder or external module.",
       """It is parsed as an ordinary section.""", "spec"),
    _c("UNIFORM_LIST_MARKER_WARNING", W, "§8.1",
       "A nested list uses one marker at every level.",
       """The hierarchy is inferred from indentation. The canonical markers are `*`, `+`, `-`
       for levels 1, 2, 3.""", "spec"),
    # --- added by zonemark --------------------------------------------------------------
    _c("INVALID_UTF8", E, "§1",
       "The file is not valid UTF-8.",
       """Files must be UTF-8. The undecodable bytes are kept as they are (round-trip is exact)
       but the text around them cannot be trusted."""),
    _c("CRLF_LINE_ENDING", E, "§1",
       "The file uses `\\r\\n` line endings.",
       """Files must use Unix line endings (`\\n`). Reported once, at the first such line, with
       the count of lines affected. Parsing goes on as if the `\\r` were absent."""),
    _c("CARRIAGE_RETURN", E, "§1",
       "A bare `\\r` appears inside a line.",
       """A lone carriage return is a line break to many renderers, so text after it may render
       as structure zonemark does not see. Remove it."""),
    _c("BYTE_ORDER_MARK", W, "§1",
       "The file starts with a UTF-8 byte order mark.",
       """The mark is ignored for parsing and kept on round-trip."""),
    _c("CONTROL_CHARACTER", W, "§1",
       "The text contains a control character (NUL or another C0 control other than tab).",
       """Control characters are invisible in most editors and renderers."""),
    _c("MERGE_CONFLICT", E, "§5.4",
       "The file holds a region of git's conflict markers (`<<<<<<<`, `=======`, `>>>>>>>`).",
       """A merge left two (or, diff3 style, three) versions of a region side by side. Each complete region
       is reported once, with its lines; while any is present no other diagnostic of the file is reported
       (they would only be the markers' cascade). Keep one side or merge them by hand, and delete the marker
       lines; `zonemark merge-file` writes such regions only around the zone both sides changed."""),
    _c("UNCLOSED_FRONTMATTER", E, "§10.2",
       "YAML frontmatter opened on line 1 is never closed by `---`.",
       """Recovery: the frontmatter is taken to end before the first H1 line (or at EOF)."""),
    _c("DUPLICATE_TITLE", E, "§4",
       "A second H1 appears in the file.",
       """A file has exactly one H1, its title."""),
    _c("HEADER_MISSING_SPACE", E, "§4.1",
       "No space follows the `#` characters of a header (H1-H5).",
       """Written `##MODULE 042`; must be `## MODULE 042`. zonemark still reads it as a header so
       the rest of the file is checked. At H6 the spaceless form is a tolerated legacy log
       form (§5.5 v1.7, §7.5) and is not reported."""),
    _c("HEADER_INDENTED", E, "§4.1",
       "A header does not start at column 0.",
       """Headers must start at column 0. One to three leading spaces are read as a header
       (as CommonMark does) and reported."""),
    _c("HEADER_CLOSING_HASHES", E, "§4.1",
       "A header ends with closing `#` characters.",
       """`### FUNCTION ###` must be `### FUNCTION`. The closing sequence is not part of the
       header text."""),
    _c("INVALID_PERMISSION_LEVEL", W, "§5.1",
       "A tag such as `[P0]` or `[P6]` uses a level outside 1-5.",
       """It is not a permission tag and is read as plain text."""),
    _c("UNCLOSED_CODE_FENCE", W, "CommonMark, §5.5",
       "A fenced code block is never closed.",
       """Everything after the opening fence to the end of the file is code: no zone tag,
       header or rule in it counts."""),
    _c("UNCLOSED_HTML_COMMENT", W, "CommonMark, §5.5",
       "An HTML comment `<!--` is never closed.",
       """Everything after it to the end of the file is comment: no zone tag, header or rule
       in it counts."""),
    _c("MISSING_MODULE_ID", E, "§7.1, §7.1.1",
       "A `## MODULE` declaration in a reminder has no id.",
       """Ids are optional only in `[external_module]` and `[external_memory]` files."""),
    _c("MALFORMED_DECLARATION", E, "§7.1, §7.4.1, §7.3.1",
       "A MODULE, NUCLEUS or sub-module declaration does not follow its pattern.",
       """`## MODULE <id>: <name>`, `## NUCLEUS <n>: <name>` (n a non-negative integer),
       `### SUB-MODULE: <name>`. The header is kept as a plain section."""),
    _c("RESERVED_ID", E, "§7.1.1",
       "A declared id uses the temporary namespace `~Tn`.",
       """Temporary ids are assigned by applications and never written to disk."""),
    _c("RULE_OUTSIDE_P1", E, "§9.1, §5.5 Invariant 1",
       "A rule bullet `* Xn:` lies in a `[P2]` or `[P3]` zone.",
       """Rules are valid only inside `[P1]`. (In `[P4]`/`[P5]` the same bullet is
       INVALID_HEADER_IN_WRITABLE_ZONE; outside every zone, UNPROTECTED_LOGICAL_CONTENT.)"""),
    _c("RULE_OUTSIDE_RULES_SECTION", W, "§9.1",
       "A rule bullet is not under a `## RULES:` section.",
       """Rules must appear under a dedicated `## RULES:` H2."""),
    _c("DUPLICATE_RULE_NUMBER", E, "§9.2",
       "Two rules in the file share a prefix and number.",
       """The number is unique within its prefix category."""),
    _c("DUPLICATE_STATE_REGISTRY", E, "§7.3.1",
       "`## MODULE_STATE_REGISTRY:` is declared more than once in the file.",
       """The registry is declared once per file. The first one is used."""),
    _c("STATE_REGISTRY_NOT_IN_P4", W, "§7.3.1",
       "`## MODULE_STATE_REGISTRY:` lies in a zone other than `[P4]`.",
       """The registry belongs in a `[P4]` block so the AI can rewrite it. In `[P1]`-`[P3]` it
       is honoured (the user wrote it); in `[P5]` it is INVALID_HEADER_IN_WRITABLE_ZONE."""),
    _c("MALFORMED_STATE_REGISTRY_ENTRY", W, "§7.3.1",
       "A line of the state registry is not `* ACTIVE: ids` or `* INACTIVE: ids`.",
       """The line is ignored."""),
    _c("CONTRADICTORY_STATE_REGISTRY", W, "§7.3.1",
       "The state registry lists a module as both ACTIVE and INACTIVE.",
       """Both entries are ignored and the declared STATE applies."""),
    _c("INVALID_STATE_VALUE", W, "§7.2, §7.3.1",
       "A STATE is not `active`, `inactive`, optionally followed by `- permanent`.",
       """The module's declared state is unknown."""),
    _c("STATE_IN_WRITABLE_ZONE", W, "§7.3.1",
       "A `**STATE:**` field lies in a `[P4]`/`[P5]` zone.",
       """STATE is user-authored and lives in `[P1]`-`[P3]`; a STATE written in a writable zone
       is ignored (the AI cannot pin its own state)."""),
    _c("MALFORMED_NUCLEI_TAG", W, "§7.4.4",
       "`[NUCLEI: ...]` holds something other than comma-separated integers.",
       """The integers that can be read are kept; the rest is ignored."""),
    _c("MISPLACED_NUCLEI_TAG", W, "§7.4.4",
       "A `[NUCLEI: ...]` tag is neither on a module's declaration line nor on the line after.",
       """The tag binds nothing where it is. On a NUCLEUS or SUB-MODULE declaration line it is text
       in the name: only a MODULE is governed by nuclei."""),
    _c("NUCLEI_TAG_ON_TOPIC", W, "§7.1.2",
       "A TOPIC or SUBTOPIC declaration carries `[NUCLEI: ...]`.",
       """A memory topic governs no nuclei: the tag is inert text inside the name."""),
    _c("TOPIC_OUTSIDE_EXTERNAL_MEMORY", W, "§7.1.2",
       "`## TOPIC:` is used in a reminder or external module.",
       """Topics exist only in `[external_memory]` files; it is parsed as an ordinary section."""),
    _c("MISPLACED_TOPIC", W, "§7.1.2",
       "The TOPIC keyword is used at a header level other than H2.",
       """A topic is an H2 container. Use `### SUBTOPIC1:` and deeper for sub-topics. It is
       parsed as an ordinary section."""),
    _c("DUPLICATE_CONTAINER_NAME", W, "§7.1.2, §7.1.3",
       "Two topics or sub-topics with the same name share a parent.",
       """Topics are addressed by name or position; a repeated name makes the name ambiguous."""),
    _c("MALFORMED_CONNECTION", W, "§7.6",
       "A CONNECTIONS bullet starts with MODULE or NUCLEUS but is not `* MODULE <id>` / `* NUCLEUS <n>`.",
       """It draws no edge. Free text is allowed in CONNECTIONS but never draws edges."""),
    _c("UNRESOLVED_CONNECTION", W, "§7.6",
       "A CONNECTIONS bullet names a module or nucleus this file does not declare.",
       """Non-existent target: no edge, never an error (§7.6). Only declared MODULE ids are
       referenceable; topics and temporary ids are not. When the file is read as part of a layer
       the target is looked up in every file of the layer instead (LAYER_UNRESOLVED_CONNECTION)."""),
    _c("TEMPORARY_ID_REFERENCE", W, "§7.1.1, §7.6",
       "A CONNECTIONS bullet or registry entry names a temporary id `~Tn`.",
       """Temporary ids are not referenceable: no edge is drawn."""),
    _c("LIST_MARKER_MISMATCH", W, "§8, §8.1",
       "A list marker does not match its level (`*` root, `+` second, `-` third).",
       """The level is inferred from indentation."""),
    _c("MIXED_LIST_MARKERS", W, "§8.1",
       "Items of the same list level use different markers.",
       """Use one marker per level."""),
    _c("LIST_TOO_DEEP", W, "§8",
       "A list is nested deeper than three levels.",
       """Lists have three levels: `*`, `+`, `-`."""),
    _c("INVALID_LOG_DATE", W, "§7.5",
       "A log header's date is not a valid ISO 8601 date or timestamp.",
       """`YYYY-MM-DD` or `YYYY-MM-DDTHH:MM[:SS]` (optionally with a zone). A date-like token right
       after `LOG:` written another way (`2026-5-3`, `03/05/2026`, `20260503`) is reported too; the
       entry keeps no date and its title is the text after the dash."""),
    _c("UNSUPPORTED_STANDARD_VERSION", W, "§15",
       "The `<!-- IllAIra-Standard: vX -->` pin names a version newer than v1.13 or unreadable.",
       """Forward compatibility is not promised: the file is parsed with v1.13 rules."""),
    # --- across the files of a layer (zonemark.layer) ----------------------------------
    _c("LAYER_NO_REMINDER", W, "§3.1",
       "The layer holds no `[reminder]` file.",
       """A continuity layer has exactly one reminder (§3.1). A folder holding only external files
       is read as a partial layer: nuclei and registry entries of the missing reminder cannot be
       resolved.""", scope="layer"),
    _c("LAYER_MULTIPLE_REMINDERS", E, "§3.1",
       "The layer holds more than one `[reminder]` file.",
       """A continuity layer has exactly one reminder (§3.1). The first in path order is the
       layer's reminder; the others are merged like external files and their registries govern
       only their own modules.""", scope="layer"),
    _c("LAYER_ID_CONFLICT", W, "§7.1.1",
       "A MODULE or NUCLEUS id is already declared by another file of the layer.",
       """Declared ids never slide (§7.1.1): sliding would silently retarget every CONNECTIONS
       edge. The file holding the later declaration (layer order: reminder first, then path
       order) is not merged -- none of its modules, nuclei, registry entries or edges enter the
       layer -- until the user renames one of the two ids.""", scope="layer"),
    _c("LAYER_UNRESOLVED_CONNECTION", W, "§7.6",
       "A CONNECTIONS bullet names a module or nucleus declared nowhere in the layer.",
       """Non-existent target: no edge, never a fatal error (§7.6). Only declared MODULE ids are
       referenceable; topics and temporary ids are not.""", scope="layer"),
    _c("LAYER_UNKNOWN_REGISTRY_ENTRY", W, "§7.3.1",
       "The state registry names a module declared nowhere in the merged layer.",
       """The entry changes nothing. It may name a module of a file that is not merged because
       of an id conflict.""", scope="layer"),
    _c("LAYER_REGISTRY_OUT_OF_SCOPE", W, "§7.3.1",
       "A registry outside the reminder names a module of another file.",
       """Only the reminder's registry governs the whole layer; the registry of any other file
       governs that file's modules. The entry is ignored.""", scope="layer"),
    _c("LAYER_MODULE_WITHOUT_STATE", W, "§7.2, §7.3.1",
       "A module has neither a declared STATE nor a registry entry.",
       """Its load state is unknown. Declare `### STATE` (active / inactive) in a read-controlled
       zone, or list it in the reminder's MODULE_STATE_REGISTRY.""", scope="layer"),
    _c("LAYER_UNREADABLE_FILE", E, "§1",
       "A file of the layer cannot be read.",
       """The file is left out of the layer (permission denied, vanished while loading, ...).""",
       scope="layer"),
    _c("LAYER_SYNC_CONFLICT_COPY", W, "§3.1",
       "A file is a sync tool's conflict copy of a layer file (Syncthing, Dropbox, Nextcloud, OneDrive).",
       """Two devices wrote the same file while apart and the sync folder kept both. The copy is left
       out of the layer (read with it, every id it declares would be declared twice); merge it into
       the original with `zonemark merge-file --two-way ORIGINAL COPY`, then delete the copy.""",
       scope="layer"),
]

CATALOGUE: dict[str, CodeInfo] = {info.code: info for info in _CODES}


# -- the extent of a diagnostic -------------------------------------------------------------

_TAG = re.compile(r"\[[^\[\]\n]*\]")
_TOKEN = re.compile(r"\S+")
#: Codes whose column names a single character (§1 text policy).
CHAR_CODES = frozenset(("CONTROL_CHARACTER", "CARRIAGE_RETURN", "INVALID_UTF8", "BYTE_ORDER_MARK"))
#: Codes whose column names one whitespace-free token (§7.5 log dates).
TOKEN_CODES = frozenset(("INVALID_LOG_DATE",))


class _LineShape:
    """What the span rule reads of one line, computed once for every diagnostic on it (its tags and
    indentation only when a column asks for them)."""

    __slots__ = ("line", "text_end", "plain_end", "_indent", "_tag_starts", "_tag_ends")

    def __init__(self, line: str) -> None:
        self.line = line
        self.text_end = len(line.rstrip())
        #: the end of every span that starts inside a line without tags (the text's end), or 0 when the
        #: line holds a ``[``: one int object shared by all the findings of the line
        self.plain_end = 0 if "[" in line else self.text_end + 1
        self._indent = -1
        self._tag_starts: list[int] | None = None
        self._tag_ends: list[int] = []

    def span(self, column: int, code: str | None) -> tuple[int, int]:
        column = max(column, 1)
        i = column - 1
        if i >= self.text_end or code in CHAR_CODES:
            return column, column + 1
        if code in TOKEN_CODES:
            m = _TOKEN.match(self.line, i)
            return column, (m.end() if m else i + 1) + 1
        starts = self._tag_starts
        if starts is None:
            tags = [m.span() for m in _TAG.finditer(self.line)] if "[" in self.line else []
            starts = self._tag_starts = [a for a, _ in tags]
            self._tag_ends = [b for _, b in tags]
        k = bisect.bisect_right(starts, i) - 1
        if k >= 0 and i < self._tag_ends[k]:
            return starts[k] + 1, self._tag_ends[k] + 1
        if self._indent < 0:
            self._indent = len(self.line) - len(self.line.lstrip())
        if i <= self._indent:
            return self._indent + 1, self.text_end + 1
        return column, self.text_end + 1


def construct_span(line: str, column: int, code: str | None = None) -> tuple[int, int]:
    """The 1-based ``(start, end)`` columns, end exclusive, of the construct at ``column`` of ``line``.

    ``line`` is one line of text without its ``\\n``; ``code`` (a diagnostic code) picks the
    one-character and one-token shapes.  The one span rule of every face:

    * a column inside a bracketed tag (``[P4]``, ``[/P2]``, ``[NUCLEI: 1, 3]``, ``[!XYZ]``,
      ``[ext_memory]``) spans the tag;
    * a column at the start of the line's text (only indentation before it) spans the whole
      construct the line holds: the header, the bullet, the rule, the registry line;
    * a column inside the line spans from there to the end of the line's text, except for the
      codes that name one character (:data:`CHAR_CODES`) or one token (:data:`TOKEN_CODES`);
    * a column past the text of the line spans one character.

    Trailing whitespace and a ``\\r`` before the ``\\n`` are never part of a span.
    """
    return _LineShape(line).span(column, code)


_LINE = itemgetter(1)
_NO_LINE = _LineShape("")  # the shape before the first line is read
#: Each code's severity, for :func:`placed`.
_SEVERITY = {code: info.severity for code, info in CATALOGUE.items()}


def placed(pending: Iterable[Pending], source: str) -> list[Diagnostic]:
    """The :class:`Diagnostic` of each finding of the text ``source``, with its severity from the
    catalogue and its ``end_line`` and ``end_column``.

    The extent runs from the finding's own column to the end of the construct that column points
    at (:func:`construct_span`), on its line.  One walk over the lines of ``source`` up to the last
    finding's line, and one look at each line that holds a finding: linear.  The order of
    ``pending`` is kept.
    """
    items = list(pending)
    lines = list(map(_LINE, items))
    if lines != sorted(lines):  # the parser's findings come sorted: then this is one linear comparison
        order = sorted(range(len(items)), key=lines.__getitem__)
        back: list[Diagnostic | None] = [None] * len(items)
        for k, d in zip(order, place_sorted([items[k] for k in order], source)):
            back[k] = d
        return cast("list[Diagnostic]", back)
    return place_sorted(items, source)


def place_sorted(items: list[Pending], source: str) -> list[Diagnostic]:
    """:func:`placed` of findings already in line order; it empties ``items``, each finding freed as its
    :class:`Diagnostic` is made (the parser's findings are not held twice at its peak)."""
    items.reverse()
    pop = items.pop
    out: list[Diagnostic] = []
    add = out.append
    find = source.find
    n = len(source)
    severity = _SEVERITY
    char_codes, token_codes = CHAR_CODES, TOKEN_CODES
    new = _new_diagnostic
    line_no, pos = 1, 0  # pos: the start of line line_no, n + 1 past the end of source
    shape_line = 0
    shape = _NO_LINE
    while items:
        code, line, column, message, path, related, total = pop()
        target = line if line > 1 else 1
        if target != shape_line:  # a new line: walk to it and read its shape (once per line)
            while line_no < target and pos <= n:
                nl = find("\n", pos)
                pos = n + 1 if nl < 0 else nl + 1
                line_no += 1
            if pos > n or line_no < target:
                text = ""
            else:
                nl = find("\n", pos)
                text = source[pos:n if nl < 0 else nl]
            shape_line, shape = target, _LineShape(text)
        # construct_span's end, its common cases inline: a column past the text or a one-character
        # code spans one character; a column inside a line without tags ends where the text ends
        first = column if column > 1 else 1
        if first > shape.text_end or code in char_codes:
            end = first + 1
        elif shape.plain_end and code not in token_codes:
            end = shape.plain_end
        else:
            end = shape.span(column, code)[1]
        add(new(code, severity[code], line, column, message, path, related, total, line, end))
    return out
