"""Line-level syntax of the standard: the patterns one line can match.

Only regular expressions and small pure functions live here; the parser
(:mod:`zonemark.core.parser`) decides what a match means in context.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re

FILE_TYPES = ("reminder", "external_module", "external_memory")
#: §3.4: filename-only short forms, never valid in an H1.
SHORT_FILE_TYPES = {"ext_module": "external_module", "ext_memory": "external_memory"}

# §3.2 file type tags in the H1 (exact, lowercase).
FILE_TAG = re.compile(r"\[(reminder|external_module|external_memory)\]")
LOOSE_FILE_TAG = re.compile(r"\[\s*(reminder|external[_ -]?module|external[_ -]?memory|ext_module|ext_memory)\s*\]",
                            re.IGNORECASE)

# §5.1 permission tags.  Opening alone or at the start of a paragraph; closing alone.
PERMISSION_TAG = re.compile(r" {0,3}\[(/?)P(\d+)\](.*)")

# §4 headers: up to three spaces (reported), 1-6 hashes.
CLOSING_HASHES = re.compile(r"(?:^|[ \t])#+[ \t]*$")

# §7.1, §7.1.1, §7.1.2, §7.1.3, §7.3, §7.4.1 declarations (text after the hashes).
_ID = r"[^\s:\[\]]+"
#: §7.1: a module id is numeric (`042`) or alphanumeric (`CORE_001`): letters (any script), digits, `_`.
MODULE_ID = re.compile(r"\w+")
MODULE_DECL = re.compile(rf"MODULE(?:[ \t]+({_ID}))?[ \t]*:[ \t]*(.*)")
#: ``## MODULE 042`` — an id and no name, which §4.2 shows as valid (optionally with its ``[NUCLEI: ...]``).
MODULE_ID_ONLY = re.compile(rf"MODULE[ \t]+({_ID})[ \t]*((?:\[NUCLEI:[^\]]*\][ \t]*)?)")
NUCLEUS_DECL = re.compile(r"NUCLEUS[ \t]+(\d+)[ \t]*:[ \t]*(.*)")
TOPIC_DECL = re.compile(rf"TOPIC(?:[ \t]+({_ID}))?[ \t]*:[ \t]*(.*)")
SUBTOPIC_DECL = re.compile(rf"SUBTOPIC(\d*)(?:[ \t]+({_ID}))?[ \t]*:[ \t]*(.*)")
SUBMODULE_DECL = re.compile(rf"(SUB-MODULE|SOTTOMODULO)(?:[ \t]+({_ID}))?[ \t]*:[ \t]*(.*)")
REGISTRY_DECL = re.compile(r"MODULE_STATE_REGISTRY:?[ \t]*")
RULES_DECL = re.compile(r"(RULES|REGOLE):[ \t]*(.*)")
# A header that starts with a reserved keyword followed by a boundary.
KEYWORD_START = re.compile(r"(MODULE|NUCLEUS|TOPIC|SUBTOPIC\d*|SUB-MODULE|SOTTOMODULO)(?=[\s:]|$)")

SECTION_DECL = re.compile(
    r"(FUNCTION|STATE|TRIGGER|ROUTINE|CONNECTIONS|SUBROUTINE|FUNZIONE|STATO|CONNESSIONI)\b[ \t]*:?[ \t]*(.*)")
BOLD_STATE_HEADER = re.compile(r"\*\*(STATE|STATO):\*\*[ \t]*(.*)")

#: §12 Italian aliases -> English keyword.
ITALIAN = {"FUNZIONE": "FUNCTION", "STATO": "STATE", "CONNESSIONI": "CONNECTIONS",
           "SOTTOMODULO": "SUB-MODULE", "REGOLE": "RULES"}

NUCLEI_TAG = re.compile(r"\[NUCLEI:([^\]]*)\]")
NUCLEI_LINE = re.compile(r"[ \t]*\[NUCLEI:([^\]]*)\][ \t]*")

# §7.5 logs.
LOG_WORD = re.compile(r"(?<![^\W_])LOG(?![^\W_])", re.IGNORECASE)
DATE_TIME = re.compile(
    r"(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?)?")
#: After ``LOG:``, a token that is meant as a date but is not ISO 8601 (``2026-5-3``,
#: ``03/05/2026``, ``20260503``): §7.5 "Date MUST be ISO 8601".
NON_ISO_DATE = re.compile(r"LOG:[ \t]*(\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|\d{8})(?![\w/.-])")
CANONICAL_LOG = re.compile(
    r"LOG:[ \t]*(\d{4}-\d{2}-\d{2}(?:T[0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?)[ \t]*(?:[—–-]+[ \t]*(.*))?")

# §6 attention anchors.
ANCHOR_KEYWORDS = ("NOTE", "TIP", "IMPORTANT", "WARNING", "CAUTION")
ANCHOR_START = re.compile(r" {0,3}>[ \t]?\[!([^\]\s]*)\][ \t]*(.*)")
QUOTE_PREFIX = re.compile(r" {0,3}>[ \t]?")

# §8 lists (bullet or ordered).
LIST_ITEM = re.compile(r"([ \t]*)([*+-]|\d{1,9}[.)])(?:[ \t]+(.*)|[ \t]*)$")

# §9.4 rule bullet (the spec's own pattern).
RULE_BULLET = re.compile(r"\* ([A-Z]+)(\d+):\s+(.+)")
RULE_CATEGORIES = {"R": "general", "C": "conduct", "S": "safety"}

# §11.1 bold field label at the start of a paragraph.
FIELD_LABEL = re.compile(r"\*\*([^*\n]+?):\*\*[ \t]*(.*)")

# §7.6 CONNECTIONS bullets.
CONNECTION = re.compile(r"\* (MODULE|NUCLEUS) (\S+)[ \t]*")
CONNECTION_LIKE = re.compile(r"[*+-][ \t]+(MODULE|NUCLEUS)\b")

# §7.3.1 registry entries.
REGISTRY_ENTRY = re.compile(r"\* (ACTIVE|INACTIVE):[ \t]*(.*)")

# §7.1.1 the temporary-id namespace ~T1, ~T2, ... (never written to files, never referenceable).
TEMPORARY_ID = re.compile(r"~T(\d+)")

# §10 separators; CommonMark fences and HTML comments (opaque).
SEPARATORS = ("---", "***")
FENCE_OPEN = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)")
COMMENT_START, COMMENT_END = "<!--", "-->"
COMMENT_OPEN = re.compile(r" {0,3}" + COMMENT_START)
#: §10.2: the line that opens YAML frontmatter on line 1 and the next such line closes it.
FRONTMATTER_FENCE = "---"
#: §10.2: frontmatter never closed ends before the first line that starts like a title.
UNCLOSED_FRONTMATTER_STOP = "# "
VERSION_PIN = re.compile(r"[ \t]*<!--[ \t]*IllAIra-Standard:[ \t]*(\S*)[ \t]*-->[ \t]*")
CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
#: How many characters :func:`first_control_char` tests at a time (a slice that fits a processor's cache).
CONTROL_SCAN_CHUNK = 1 << 18
_CONTROL_LIST = tuple(map(chr, (*range(0x00, 0x09), 0x0b, 0x0c, *range(0x0e, 0x20), 0x7f)))

STATE_VALUE = re.compile(
    r"[*_`\s]*(active|inactive|attivo|inattivo)(?:[ \t]*[-–—][ \t]*(permanent|permanente))?[*_`.\s]*",
    re.IGNORECASE)

SUPPORTED_VERSION = (1, 13)


#: A line of git's conflict markers (``<<<<<<< ours``, ``||||||| base``, ``=======``, ``>>>>>>> theirs``).
CONFLICT_MARKER = re.compile(r"^(<{7}|\|{7}|={7}|>{7})(?:[ \t][^\n]*)?\r?$", re.MULTILINE)


def conflict_regions(text: str) -> list[tuple[int, int]]:
    """The (first, last) lines of every complete conflict region: ``<<<<<<<``, then ``=======``, then ``>>>>>>>``
    (``|||||||`` between the first two in diff3 style).  One pass; nothing when no line starts with ``<<<<<<<``."""
    if "<<<<<<<" not in text:
        return []
    regions: list[tuple[int, int]] = []
    line, pos = 1, 0
    start: int | None = None
    state = ""
    for m in CONFLICT_MARKER.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        kind = m.group(1)[0]
        if kind == "<":
            start, state = line, "<"
        elif kind == "|" and state == "<":
            state = "|"
        elif kind == "=" and state in ("<", "|"):
            state = "="
        elif kind == ">" and state == "=" and start is not None:
            regions.append((start, line))
            start, state = None, ""
    return regions


def list_item(line: str) -> tuple[str, str, str] | None:
    """The (indentation, marker, text) of a list item line (§8, :data:`LIST_ITEM`), or None.

    A bullet at column 1 followed by a space — most list lines — is read without the
    regular expression (same result: the text is what follows the spaces after the marker).
    """
    if line[1:2] == " " and line[0] in "*+-":
        return "", line[0], line[2:].lstrip(" \t")
    m = LIST_ITEM.match(line)
    if m is None:
        return None
    return m.group(1), m.group(2), m.group(3) or ""


def first_control_char(text: str) -> re.Match[str] | None:
    """The first match of :data:`CONTROL_CHARS` in ``text``, or None.

    Most files hold none: 30 substring tests (each a fast scan in C) tell that several
    times faster than the regular expression's character-class search.  They run on one slice
    of :data:`CONTROL_SCAN_CHUNK` characters at a time, which stays in the processor's cache:
    30 passes over a whole 10 MB text read it from memory 30 times (W97).
    """
    step = CONTROL_SCAN_CHUNK
    for at in range(0, len(text), step):
        part = text[at:at + step] if len(text) > step else text
        if any(map(part.__contains__, _CONTROL_LIST)):
            return CONTROL_CHARS.search(text, at)
    return None


def count_control_chars(text: str, start: int = 0) -> int:
    """How many matches of :data:`CONTROL_CHARS` ``text`` holds from ``start``: counted a slice at a time, so
    that a file of binary bytes does not hold a list of every match (a tenth of the file's length)."""
    step = CONTROL_SCAN_CHUNK
    return sum(len(CONTROL_CHARS.findall(text, at, at + step)) for at in range(start, len(text), step))


def is_frontmatter_fence(line: str) -> bool:
    """Whether ``line`` (its ``\\r`` and trailing whitespace aside) opens or closes YAML frontmatter (§10.2)."""
    return line.rstrip("\r").rstrip() == FRONTMATTER_FENCE


def comment_left_open(line: str) -> bool:
    """Whether a line that opens an HTML comment (:data:`COMMENT_OPEN`) leaves it open: no ``-->`` after
    its ``<!--``.  A comment once open ends on the first line holding :data:`COMMENT_END`."""
    return COMMENT_END not in line[line.index(COMMENT_START) + len(COMMENT_START):]


def takes_the_title(line: str) -> bool:
    """Whether ``line``, met after the frontmatter and outside a comment before any title, is where the
    title is (or is missing): any line but a blank one and a comment's opening line (§3, §10.2)."""
    return bool(line) and not line.isspace() and COMMENT_OPEN.match(line) is None


def parse_state(value: str) -> tuple[str, bool] | None:
    """``active``/``inactive`` with optional ``- permanent`` (§7.2, §7.3.1)."""
    m = STATE_VALUE.fullmatch(value)
    if not m:
        return None
    word = m.group(1).lower()
    state = "inactive" if word in ("inactive", "inattivo") else "active"
    return state, m.group(2) is not None


def parse_nuclei(inner: str) -> tuple[tuple[int, ...], bool]:
    """The ids of a ``[NUCLEI: ...]`` tag and whether every item was an integer (§7.4.4: a comma-separated
    list; an empty tag is fine, an empty item as in ``1,,3`` or ``1,`` is not, though the ids are kept)."""
    ids, ok = [], True
    blank_tag = not inner.strip()
    for part in inner.split(","):
        part = part.strip()
        if not part:
            ok = ok and blank_tag
            continue
        if part.isdigit() and part.isascii():
            ids.append(int(part))
        else:
            ok = False
    if inner.strip() and not ids and ok:
        ok = False
    return tuple(ids), ok


@functools.lru_cache(maxsize=4096)
def valid_iso(date: str, time: str | None) -> bool:
    """Whether a matched ``YYYY-MM-DD[THH:MM[:SS]]`` is a real calendar date and time."""
    try:
        _dt.date.fromisoformat(date)
        if time:
            _dt.time.fromisoformat(time if len(time) > 5 else time + ":00")
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=4096)
def valid_date_text(date: str) -> bool:
    """Whether a whole string is a valid ISO 8601 date or timestamp (§7.5)."""
    m = DATE_TIME.fullmatch(date)
    return m is not None and valid_iso(m.group(1), m.group(2))


def fence_opener(line: str) -> tuple[str, int] | None:
    """The ``(character, length)`` of a CommonMark code fence opened by ``line``, or None.

    Up to three spaces of indentation; a backtick fence's info string may not hold a backtick.
    """
    m = FENCE_OPEN.match(line)
    if m is None or (m.group(2)[0] == "`" and "`" in m.group(3)):
        return None
    return m.group(2)[0], len(m.group(2))


def closes_fence(line: str, fence: tuple[str, int]) -> bool:
    """Whether ``line`` closes the fence ``fence`` (same character, at least as long, nothing after)."""
    t = line.lstrip(" ")
    return len(line) - len(t) <= 3 and t.startswith(fence[0] * fence[1]) and not t.strip(fence[0]).strip()


def parse_version(pin: str) -> tuple[int, int] | None:
    m = re.fullmatch(r"v(\d+)\.(\d+)", pin)
    return (int(m.group(1)), int(m.group(2))) if m else None
