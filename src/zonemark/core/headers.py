"""What one header line declares (§4, §7, §9, §12): pure functions of the line's text.

* :func:`read_header` tells a header from text (§4.1: ``#hashtag`` is text) and reads its
  level, its text and its §4.1 syntax problems;
* :func:`classify_header` says what it declares: a module, topic, sub-topic, sub-module,
  nucleus, the state registry, a section with its keyword, or an H6 entry with its date
  and title — and the problems the line implies by itself.

Nothing here knows the file around the line (zone, open headers, other declarations):
placement, hierarchy and duplicates are decided by :mod:`.scanner` and :mod:`.checks`.
Problems are :class:`Finding` values with their column; the scanner adds the line number.
"""

from __future__ import annotations

import functools
import sys
from typing import NamedTuple

from . import syntax as sx

#: Header kinds (the §13 block type of the header).
SECTION, MODULE, SUB_MODULE, NUCLEUS, STATE_REGISTRY, LOG = (
    "section", "module", "sub_module", "nucleus", "state_registry", "log")


def container_keyword(level: int) -> str:
    """The keyword a memory container at header ``level`` is written with (§7.1.3).

    ``TOPIC`` at H2; below it ``SUBTOPICn``, which "lives at header level n + 2": the header
    depth decides the digit.  The one derivation of the level digit: every package asks here.
    """
    return "TOPIC" if level == 2 else f"SUBTOPIC{level - 2}"


def spelled_keyword(keyword: str | None, level: int) -> str | None:
    """A parsed ``keyword`` as the standard spells it at header ``level`` (§7.1.3, §12).

    The parser records every sub-topic as ``'SUBTOPIC'`` (the depth is its level); this gives
    it back its digit, ``SUBTOPIC1`` to ``SUBTOPIC3``.  Any other keyword is returned unchanged.
    """
    return container_keyword(level) if keyword == "SUBTOPIC" else keyword


class Finding(NamedTuple):
    """A problem one line implies by itself: a catalogue code, its column and message (a ``NamedTuple``,
    as :class:`Header` is: one is made per finding of a header line, and a tuple is made at C speed)."""

    code: str
    column: int
    message: str


class Header(NamedTuple):
    """What a header line declares.

    A typed, immutable record; a ``NamedTuple`` rather than a frozen dataclass because the
    scanner makes one per header line and a tuple is several times cheaper to build.
    ``state_value`` is the inline value of a ``STATE`` header (``""`` when the header has
    one but it is empty, None when it has none); ``nuclei``/``nuclei_column`` the ids and
    position of an inline ``[NUCLEI: ...]`` tag of a module (§7.4.4).
    """

    level: int
    text: str
    kind: str = SECTION  # section | module | sub_module | nucleus | state_registry | log
    keyword: str | None = None  # 'TOPIC' or 'SUBTOPIC' for memory containers (kind 'module')
    section: str | None = None  # FUNCTION, STATE, RULES, CONNECTIONS, ... for sections
    id: str | None = None
    name: str | None = None
    nuclei: tuple[int, ...] | None = None
    nuclei_column: int = 1
    state_value: str | None = None
    date: str | None = None  # log entries (§7.5)
    title: str | None = None  # log entries (§7.5)
    findings: tuple[Finding, ...] = ()


def read_header(line: str, stripped: str, indent: int,
                hashtag_is_text: bool = True) -> tuple[int, str, int, tuple[Finding, ...]]:
    """The level, text, text column and §4.1 syntax findings of a line whose text starts with ``#``.

    ``stripped`` is ``line`` without its ``indent`` leading spaces.  The level is 0 when the
    line is text: seven or more hashes, or — unless ``hashtag_is_text`` is false, as for the
    title line — ``#hashtag`` or ``#1``: as in CommonMark a header needs a space after its
    hashes, except that an upper-case word or ``[`` is read as a header missing its space.
    The text column is the 1-based column of the text's first character.  Findings:
    indentation, no space after the hashes, closing hashes.
    """
    rest = stripped.lstrip("#")
    level = len(stripped) - len(rest)
    if level > 6:
        return 0, "", 0, ()
    findings: tuple[Finding, ...] = ()
    if rest and rest[0] not in " \t":
        if hashtag_is_text and not (rest[0].isupper() or rest[0] == "["):
            return 0, "", 0, ()
        if level < 6:
            findings = (Finding("HEADER_MISSING_SPACE", indent + level + 1,
                                f"no space after '{'#' * level}': write '{'#' * level} {rest.strip()[:40]}'"),)
    if indent:
        findings = (Finding("HEADER_INDENTED", 1, f"header starts at column {indent + 1};"
                                                  " headers must start at column 1 (no leading spaces)"),) + findings
    text = rest.strip()
    if text and text[-1] == "#":
        m = sx.CLOSING_HASHES.search(" " + text)
        if m:
            findings += (Finding("HEADER_CLOSING_HASHES", len(line.rstrip().rstrip("#")) + 1,
                                 "closing '#' characters are not allowed on headers"),)
            text = (" " + text)[:m.start()].strip()
    return level, text, indent + level + 1 + (len(rest) - len(rest.lstrip())), findings


def classify_header(level: int, text: str, column: int, memory: bool, reminder: bool,
                    text_column: int | None = None) -> Header:
    """What a header of ``level`` with ``text`` declares (§4, §7, §9, §12).

    ``column`` is where the header starts (1 unless indented) and ``text_column`` where its
    text starts (by default: one space after the hashes); ``memory`` and ``reminder`` say
    whether the file is an ``[external_memory]`` or a ``[reminder]`` (from its H1).  An H1
    is a plain section here: the title and a second H1 are the scanner's concern.
    """
    if level == 6:
        return _entry(text, column, memory)
    if level == 1:
        return Header(1, text)
    return _structural(level, text, column, memory, reminder,
                       text_column if text_column is not None else column + level + 1)


def _entry(text: str, column: int, memory: bool) -> Header:
    """An H6: a log entry (§7.5), or any mnemonic node in external memory (§5.5 v1.7)."""
    is_log = text.startswith("LOG:") or sx.LOG_WORD.search(text) is not None
    findings: tuple[Finding, ...] = ()
    if memory:
        if text.startswith("SUBTOPIC") and sx.KEYWORD_START.match(text):
            findings = (Finding("SUBTOPIC_TOO_DEEP", column,
                                "SUBTOPIC at H6 declares nothing: H6 is a mnemonic node (the deepest container"
                                " is ##### SUBTOPIC3)"),)
    elif not is_log:
        if text.startswith("SUBTOPIC") and sx.KEYWORD_START.match(text):
            findings = (Finding("SUBTOPIC_OUTSIDE_EXTERNAL_MEMORY", column,
                                "SUBTOPIC is a container of [external_memory] files only; parsed as a section"),)
        return Header(6, text, name=text, findings=findings)
    date = title = None
    m = sx.CANONICAL_LOG.fullmatch(text)
    if m:
        date = sys.intern(m.group(1))  # the dates of a journal repeat: one string each
        title = (m.group(2) or "").strip() or None
        if not sx.valid_date_text(date):
            findings += (Finding("INVALID_LOG_DATE", column + 7 + m.start(1),
                                 f"'{date}' is not a valid ISO 8601 date (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS)"),)
    else:
        dm = sx.DATE_TIME.search(text)
        if dm:
            date = sys.intern(dm.group(0))
            if not sx.valid_iso(dm.group(1), dm.group(2)):
                findings += (Finding("INVALID_LOG_DATE", column + 7 + dm.start(),
                                     f"'{date}' is not a valid ISO 8601 date"),)
            title = text[dm.end():].lstrip(" \t]—–-:").rstrip("]").strip() or None
        else:
            bad = sx.NON_ISO_DATE.match(text)
            if bad:
                findings += (Finding("INVALID_LOG_DATE", column + 7 + bad.start(1),
                                     f"'{bad.group(1)}' is not a date of the form YYYY-MM-DD (§7.5, ISO 8601)"),)
                title = text[bad.end():].strip().lstrip("—–-").strip() or None
        if title is None:
            if is_log:
                lm = sx.LOG_WORD.search(text)
                if lm is not None and not text[:lm.start()].strip(" \t[(:—–-"):
                    cleaned = text[lm.end():].strip(" \t[]:—–-").strip()  # the LOG word leads: drop it
                else:
                    cleaned = text.strip()  # "Nota sul LOG di ieri": the word is part of the title
            else:
                cleaned = text
            title = cleaned or None
    # (positional: the most frequent header of a large file is built here)
    return Header(6, text, LOG, None, None, None, None, None, 1, None, date, title, findings)


@functools.lru_cache(maxsize=256)
def _structural(level: int, text: str, column: int, memory: bool, reminder: bool, text_column: int) -> Header:
    """An H2-H5: a declaration (§7.1-§7.4), the state registry (§7.3.1) or a section (§7, §9, §12).

    A malformed or misplaced declaration is a section with no name.  Cached: section headers
    (``### FUNCTION``, ``### STATE``...) repeat in every module of a file, and the result is
    immutable; the cache is small, so unique declarations pass through it.
    """
    if level == 2 and sx.REGISTRY_DECL.fullmatch(text):
        return Header(2, text, STATE_REGISTRY)
    m = sx.KEYWORD_START.match(text)
    if m:
        declared = _declaration(m.group(1), level, text, column, memory, reminder, text_column)
        if declared is not None:
            return declared
    return _section(level, text, column)


def _malformed(level: int, text: str, column: int, code: str, message: str) -> Header:
    """A keyword header that declares nothing: an ordinary section named by its text (§7.1.3)."""
    return Header(level, text, name=text, findings=(Finding(code, column, message),))


def _declaration(word: str, level: int, text: str, column: int, memory: bool, reminder: bool,
                 text_column: int) -> Header | None:
    """A header starting with a reserved keyword; None when the keyword declares nothing at this level."""
    findings: tuple[Finding, ...]
    if word == "MODULE" and level == 2:
        dm = sx.MODULE_DECL.match(text) or sx.MODULE_ID_ONLY.fullmatch(text)  # §4.2: `## MODULE 042`
        if not dm:
            return _malformed(level, text, column, "MALFORMED_DECLARATION",
                              "module declaration must read '## MODULE <id>: <name>'")
        id_ = dm.group(1)
        name, nuclei, nuclei_column, findings = _split_nuclei(dm.group(2), text, text_column)
        if id_ is None and reminder:
            findings += (Finding("MISSING_MODULE_ID", column,
                                 "a module in a [reminder] file must have an id: '## MODULE <id>: <name>'"),)
        if id_ is not None and sx.TEMPORARY_ID.fullmatch(id_):
            findings += (Finding("RESERVED_ID", column,
                                 f"'{id_}' is in the temporary-id namespace ~Tn, which is never written to files"),)
        elif id_ is not None and not sx.MODULE_ID.fullmatch(id_):
            findings += (Finding("MALFORMED_DECLARATION", column,
                                 f"module id '{id_}' is neither numeric (042) nor alphanumeric (CORE_001): use "
                                 f"letters, digits and '_' only (§7.1)"),)
        return Header(level, text, MODULE, id=id_, name=name, nuclei=nuclei,
                      nuclei_column=nuclei_column if nuclei is not None else 1, findings=findings)
    if word == "NUCLEUS" and level == 2:
        dm = sx.NUCLEUS_DECL.match(text)
        if not dm:
            return _malformed(level, text, column, "MALFORMED_DECLARATION",
                              "nucleus declaration must read '## NUCLEUS <n>: <name>' (n a non-negative integer)")
        return Header(level, text, NUCLEUS, id=dm.group(1), name=dm.group(2).strip(),
                      findings=_inert_nuclei_tag(text, text_column, "nucleus"))
    if word == "TOPIC":
        if not memory:
            return _malformed(level, text, column, "TOPIC_OUTSIDE_EXTERNAL_MEMORY",
                              "TOPIC is a container of [external_memory] files only; parsed as a section")
        if level != 2:
            return _malformed(level, text, column, "MISPLACED_TOPIC",
                              f"TOPIC at H{level}: a topic is an H2; use '{'#' * level} {container_keyword(level)}:'"
                              " for a sub-topic. Parsed as a section")
        dm = sx.TOPIC_DECL.match(text)
        if not dm:
            return _malformed(level, text, column, "MALFORMED_DECLARATION",
                              "topic declaration must read '## TOPIC: <name>'")
        name = dm.group(2).strip()
        findings = ()
        if sx.NUCLEI_TAG.search(name):
            findings = (Finding("NUCLEI_TAG_ON_TOPIC", column,
                                "[NUCLEI: ...] on a topic binds nothing: it is inert text in the name"),)
        return Header(level, text, MODULE, "TOPIC", id=dm.group(1), name=name, findings=findings)
    if word.startswith("SUBTOPIC"):
        if not memory:
            return _malformed(level, text, column, "SUBTOPIC_OUTSIDE_EXTERNAL_MEMORY",
                              "SUBTOPIC is a container of [external_memory] files only; parsed as a section")
        dm = sx.SUBTOPIC_DECL.match(text)
        if not dm:
            return _malformed(level, text, column, "MALFORMED_DECLARATION",
                              f"sub-topic declaration must read"
                              f" '{'#' * level} {container_keyword(max(level, 3))}: <name>'")
        digit = dm.group(1)
        name = dm.group(3).strip()
        if level == 2:
            return Header(level, text, MODULE, "TOPIC", id=dm.group(2), name=name, findings=(
                Finding("SUBTOPIC_LEVEL_MISMATCH", column,
                        f"SUBTOPIC{digit} at H2: the header depth wins and H2 is a topic"
                        " (write '## TOPIC:' or move it one level deeper)"),))
        findings = ()
        if not digit:
            findings = (Finding("SUBTOPIC_LEVEL_MISMATCH", column,
                                f"SUBTOPIC without its level digit: at H{level} it is {container_keyword(level)}"
                                " (the header depth is used)"),)
        elif int(digit) != level - 2:
            findings = (Finding("SUBTOPIC_LEVEL_MISMATCH", column,
                                f"SUBTOPIC{digit} at H{level}: SUBTOPIC{digit} lives at H{int(digit) + 2}"
                                f" (the header depth H{level} is used)"),)
        if sx.NUCLEI_TAG.search(name):
            findings += (Finding("NUCLEI_TAG_ON_TOPIC", column,
                                 "[NUCLEI: ...] on a sub-topic binds nothing: it is inert text in the name"),)
        return Header(level, text, MODULE, "SUBTOPIC", id=dm.group(2), name=name, findings=findings)
    if word in ("SUB-MODULE", "SOTTOMODULO") and level == 3:
        findings = ()
        if word == "SOTTOMODULO":
            findings = (Finding("DEPRECATED_ITALIAN_KEYWORD", column, "SOTTOMODULO is deprecated: use SUB-MODULE"),)
        dm = sx.SUBMODULE_DECL.match(text)
        if not dm:
            return Header(level, text, name=text, findings=findings + (Finding(
                "MALFORMED_DECLARATION", column, "sub-module declaration must read '### SUB-MODULE: <name>'"),))
        findings += _inert_nuclei_tag(text, text_column, "sub-module")
        return Header(level, text, SUB_MODULE, id=dm.group(2), name=dm.group(3).strip(), findings=findings)
    return None


def _section(level: int, text: str, column: int) -> Header:
    """A section header: ``## RULES:`` (§9), a keyword section (§7.2, §7.6, §12) or free text."""
    if level == 2:
        rm = sx.RULES_DECL.match(text)
        if rm:
            findings: tuple[Finding, ...] = ()
            if rm.group(1) == "REGOLE":
                findings = (Finding("DEPRECATED_ITALIAN_KEYWORD", column, "REGOLE is deprecated: use RULES"),)
            return Header(level, text, section="RULES", name=rm.group(2).strip() or None, findings=findings)
    sm = sx.SECTION_DECL.match(text)
    if sm:
        word = sm.group(1)
        findings = ()
        if word in sx.ITALIAN:
            findings = (Finding("DEPRECATED_ITALIAN_KEYWORD", column, f"{word} is deprecated: use {sx.ITALIAN[word]}"),)
            word = sx.ITALIAN[word]
        name = sm.group(2).strip() or None
        return Header(level, text, section=word, name=name, state_value=name if word == "STATE" else None,
                      findings=findings)
    bm = sx.BOLD_STATE_HEADER.fullmatch(text)
    if bm:
        findings = ()
        if bm.group(1) == "STATO":
            findings = (Finding("DEPRECATED_ITALIAN_KEYWORD", column, "STATO is deprecated: use STATE"),)
        name = bm.group(2).strip()
        return Header(level, text, section="STATE", name=name, state_value=name, findings=findings)
    rm = sx.RULES_DECL.match(text)
    if rm:
        return Header(level, text, section="RULES", name=rm.group(2).strip() or None)
    return Header(level, text, name=text)


def _inert_nuclei_tag(text: str, text_column: int, what: str) -> tuple[Finding, ...]:
    """§7.4.4: ``[NUCLEI: ...]`` binds a MODULE only; on another declaration it is text in the name."""
    at = text.find("[NUCLEI:")
    if at < 0 or sx.NUCLEI_TAG.search(text, at) is None:
        return ()
    return (Finding("MISPLACED_NUCLEI_TAG", text_column + at,
                    f"[NUCLEI: ...] binds only a MODULE declaration: on a {what} it is text in the name"),)


def _split_nuclei(name: str, text: str, text_column: int) -> tuple[str, tuple[int, ...] | None, int,
                                                                    tuple[Finding, ...]]:
    """A module name without its inline ``[NUCLEI: ...]`` tag, the tag's ids and column (§7.4.4)."""
    m = sx.NUCLEI_TAG.search(name)
    if not m:
        return name.strip(), None, 1, ()
    ids, ok = sx.parse_nuclei(m.group(1))
    column = text_column + text.index("[NUCLEI:")
    findings: tuple[Finding, ...] = ()
    if not ok:
        findings = (Finding("MALFORMED_NUCLEI_TAG", column,
                            f"'{m.group(0)}' must list integer nucleus ids separated by commas"),)
    return (name[:m.start()].rstrip() + " " + name[m.end():].lstrip()).strip(), ids, column, findings
