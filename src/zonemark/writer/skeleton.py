"""The writer's index of a file without parsing all of it: a structural skeleton (§2.4, §5.1, §7.1.3).

A one-shot ``zonemark append`` needs the containers and the writable zones of a file (a
:class:`~.locate.ZoneIndex`), not its block tree, and parsing 10 MB of journal prose to find
them was most of the command's time.  Which zone a line sits in, what a header declares and
whether a code fence or a comment hides a line are decided by a few kinds of lines only, so
:func:`skeleton_index` keeps

* the head of the file verbatim, up to and including the first line the parser reads as the
  title or as the place where the title is missing (§3): the frontmatter (§10.2, which always
  ends before the title), blank lines and comments before it;
* after the head, every line that after at most three spaces or tabs starts with ``#`` to
  ``#####`` (H1-H5), ``[P`` or ``[/P`` and a digit (permission tags, §5.1, §5.4), a backtick
  or a tilde (code fences) or ``<`` (comments), and every line holding ``-->`` (a comment's
  end);

scans that compact text with the one scanner (:meth:`.locate.ZoneIndex.scan`) — so header
classification, refused headers (§5.5), zone recovery from nested, mismatched or unclosed
tags, fences and comments are decided exactly as in a full parse — and maps the compact
lines back to the file's line numbers and UTF-8 byte offsets.

Why the dropped lines cannot matter: the parser tries every line for a permission tag, a
header, a fence and a comment *before* anything that depends on the lines before it (an open
paragraph, list, quote, STATE value or log entry never swallows such a line), and every line
that opens or closes an opaque region (a fence, a comment; the frontmatter is in the head) is
kept.  A dropped line — prose, a list item, a quote, an H6 entry (entries stand outside the
logical stack of §2.3, so they open nothing the index holds), a blank line — only changes the
state of text blocks, which the index does not hold.  The exception is the first significant
line, which is the title whatever it says: hence the verbatim head.  The once-per-file
diagnostics the index remembers (control characters, CR) are looked for in the whole file.

``tests/writer/test_skeleton.py`` checks on generated valid and broken files that the result equals
``ZoneIndex.build(parse(text))`` field for field, and that an append writes the same bytes
either way.
"""

from __future__ import annotations

import hashlib
import heapq
import re
from array import array
from collections.abc import Iterator
from itertools import islice

from ..core import syntax as sx
from ..core.text import decode
from .locate import NONE, ZoneIndex, ZonePositions, int_code

#: The newline before a line the skeleton keeps: an H1-H5 header, a permission tag, a fence or a
#: comment opener, after at most three spaces or tabs.
_KEPT_LINE = re.compile(rb"\n[ \t]{0,3}(?:#{1,5}(?!#)|\[/?P\d|[`~<])")
#: The core's comment end and frontmatter lines (``syntax``), as the bytes that may start them: every
#: candidate is then decided by the core's own predicate on its decoded line.
_COMMENT_END = re.compile(re.escape(sx.COMMENT_END.encode()))
_DASHES_LINE = re.compile(b"\n" + re.escape(sx.FRONTMATTER_FENCE.encode()))
_HASH_SPACE_LINE = re.compile(b"\n" + re.escape(sx.UNCLOSED_FRONTMATTER_STOP.encode()))
#: The parser's control characters (``syntax.CONTROL_CHARS``, all ASCII: in UTF-8 no other
#: character uses these bytes, and an undecodable byte never decodes to one) become byte 1, every
#: other byte 0: one ``translate`` and one ``find`` instead of a much slower regex scan.
_CONTROL_MARKS = bytes(1 if sx.CONTROL_CHARS.match(chr(b)) else 0 for b in range(256))
_CR_ENDING = re.compile(rb"\r(?=\n|\Z)")
_CR_INSIDE = re.compile(rb"\r(?!\n|\Z)")


def skeleton_index(data: bytes) -> ZoneIndex:
    """The :class:`ZoneIndex` of the file bytes ``data``: ``ZoneIndex.build(parse(decode(data)))``, faster."""
    return skeleton_indexes([data])[0]


def skeleton_indexes(datas: list[bytes]) -> list[ZoneIndex]:
    """:func:`skeleton_index` of each of ``datas`` (versions of one file, as a merge reads them): versions whose
    structural lines are the same bytes share the one scan of them, each mapped to its own lines and offsets.

    Only the start of each kept line is held (in 4-byte integers below 2 GiB); its end and its line number in
    the file are found again for the lines the index names, and the compact text's bytes are dropped once
    decoded (W99: the line table of three columns and both forms of the compact text were most of the peak)."""
    scanned: dict[bytes, ZoneIndex] = {}
    out = []
    for data in datas:
        _, head_end = _head(data)
        code = int_code(4 * len(data) + 1)
        starts = _line_starts(data, 0, head_end, code)
        head_lines = len(starts)
        starts += _kept_lines(data, head_end, code)
        compact = bytearray(data[:head_end])
        view = memoryview(data)
        find, n = data.find, len(data)
        for s in islice(starts, head_lines, None):
            compact += view[s:find(b"\n", s) + 1 or n]
        # versions are told apart by a digest of their structural lines, not by a copy of them
        key = hashlib.sha256(compact).digest()
        first = _global_first(data)
        index = scanned.get(key)
        if index is None:  # the once-per-file diagnostics are the file's own: mapped below
            text = compact.decode("utf-8", "surrogateescape")
            del compact
            index = ZoneIndex.scan(text, {}, 4 * len(data) + 1)
            del text
            if len(datas) > 1:
                scanned[key] = index
        else:
            del compact
        out.append(_on_file_lines(index, data, starts, head_lines, head_end, first, shared=len(datas) > 1))
    return out


# -- the head: frontmatter, comments and the title line -------------------------------------

def _head(data: bytes) -> tuple[int, int]:
    """The lines the parser skips as frontmatter, and the byte offset after its title line.

    The title line is the first line after the frontmatter, outside a comment, that
    :func:`~zonemark.core.syntax.takes_the_title` (the scanner's own test, §3, §10.2); the whole
    file when there is none.
    """
    skip = _frontmatter_lines(data)
    pos = _line_start(data, skip + 1)
    n = len(data)
    lineno = skip
    in_comment = False
    while pos < n:
        eol = data.find(b"\n", pos)
        end = n if eol < 0 else eol + 1
        lineno += 1
        s = decode(data[pos:end if eol < 0 else eol])
        pos = end
        if s.endswith("\r"):
            s = s[:-1]
        if lineno == 1 and s.startswith("\ufeff"):
            s = s[1:]
        if in_comment:
            in_comment = sx.COMMENT_END not in s
            continue
        if sx.takes_the_title(s):
            return skip, end
        if sx.COMMENT_OPEN.match(s):
            in_comment = sx.comment_left_open(s)
    return skip, n


def _frontmatter_lines(data: bytes) -> int:
    """How many lines YAML frontmatter spans from line 1 (§10.2; the parser's rule), 0 without one."""
    eol = data.find(b"\n")
    first = decode(data if eol < 0 else data[:eol])
    if not sx.is_frontmatter_fence(first.lstrip("\ufeff")):
        return 0
    for dashes in _DASHES_LINE.finditer(data):
        start = dashes.start() + 1
        end = data.find(b"\n", start)
        if sx.is_frontmatter_fence(decode(data[start:end if end >= 0 else len(data)])):
            return data.count(b"\n", 0, start) + 1  # the closing line is skipped too
    title = _HASH_SPACE_LINE.search(data)
    if title:  # never closed: it ends before the first '# ' line
        return data.count(b"\n", 0, title.start() + 1)
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def _line_start(data: bytes, line: int) -> int:
    """Byte offset of the start of 1-based ``line`` (the end of ``data`` past its last line)."""
    pos = 0
    for _ in range(line - 1):
        eol = data.find(b"\n", pos)
        if eol < 0:
            return len(data)
        pos = eol + 1
    return pos


# -- the kept lines -------------------------------------------------------------------------

def _line_starts(data: bytes, start: int, stop: int, code: str) -> "array[int]":
    """The start offset of every line in ``data[start:stop]`` (``start`` at a line start)."""
    starts = array(code)
    pos = start
    while pos < stop:
        starts.append(pos)
        eol = data.find(b"\n", pos, stop)
        pos = stop if eol < 0 else eol + 1
    return starts


def _kept_lines(data: bytes, head_end: int, code: str) -> "array[int]":
    """The start offsets of the lines after the head that the skeleton keeps, in order."""
    if head_end >= len(data):
        return array(code)
    # head_end - 1 is the newline that ends the head, so the first line after it can match.
    return array(code, kept_line_starts(data, head_end, len(data)))


def kept_line_starts(data: bytes, start: int, stop: int) -> Iterator[int]:
    """The starts of the lines in ``data[start:stop]`` the skeleton keeps, in order, each once (``start`` a line
    start after a newline, ``stop`` a line start): the only lines of a range that can open or close a fence or a
    comment, be a header or a permission tag (module docstring).  Found in place, one at a time."""
    assert start > 0 and data[start - 1:start] == b"\n"
    kept = (m.start() + 1 for m in _KEPT_LINE.finditer(data, start - 1, stop))
    ends = (data.rfind(b"\n", 0, m.start()) + 1 for m in _COMMENT_END.finditer(data, start, stop))
    last = -1
    for k in heapq.merge(kept, ends):
        if k != last:
            yield k
            last = k


# -- back to the file -------------------------------------------------------------------------

def _global_first(data: bytes) -> dict[str, int]:
    """The line of the first control character, CRLF ending and bare CR of the file, as the parser reports them.

    Both count in the whole file, the frontmatter's lines included (§1).
    """
    first = {}
    at = data.translate(_CONTROL_MARKS).find(1)
    if at >= 0:
        first["CONTROL_CHARACTER"] = data.count(b"\n", 0, at) + 1
    if b"\r" in data:
        for code, pattern in (("CRLF_LINE_ENDING", _CR_ENDING), ("CARRIAGE_RETURN", _CR_INSIDE)):
            m = pattern.search(data)
            if m:
                first[code] = data.count(b"\n", 0, m.start()) + 1
    return first


def _on_file_lines(index: ZoneIndex, data: bytes, starts: "array[int]", head_lines: int, head_end: int,
                   global_first: dict[str, int], *, shared: bool) -> ZoneIndex:
    """``index`` of the compact text, moved to the file: compact line ``k`` starts at ``starts[k - 1]``; the head's
    ``head_lines`` lines are the file's first ones.

    Every position the index holds is the start or the end of a line: a header's and a tag's
    start, and the end of an opening and of a closing tag line (found again from its start).  An index no other
    version shares is moved over its own columns (the compact text's offsets are not needed once they are the
    file's: a second set of columns doubled the index); a ``shared`` one is moved in a copy of its columns.
    """
    if shared:
        def copy(column: "array[int]") -> "array[int]":
            return array(column.typecode, column)
        z_pos: ZonePositions = (copy(index.z_line), copy(index.z_start), copy(index.z_inner),
                                copy(index.z_close_line), copy(index.z_close_start), copy(index.z_close_end))
        index = ZoneIndex(index.file_type, index.title, index.headers, copy(index.h_line), copy(index.h_start),
                          index.zones, z_pos)
    find, n = data.find, len(data)

    def into_starts(target: "array[int]", lines: "array[int]") -> None:
        for i, k in enumerate(lines):  # each line is read before its slot is written
            target[i] = NONE if k == NONE else starts[k - 1]

    def into_ends(target: "array[int]", lines: "array[int]") -> None:
        for i, k in enumerate(lines):
            target[i] = NONE if k == NONE else (find(b"\n", starts[k - 1]) + 1 or n)

    def into_lines(lines: "array[int]") -> None:
        """Compact line numbers to the file's, over the column (ascending: the newlines are counted once)."""
        line, prev = head_lines + 1, head_end  # the file's line at ``prev``
        count = data.count
        for i, k in enumerate(lines):
            if k == NONE or k <= head_lines:
                continue
            at = starts[k - 1]
            if at < prev:  # not ascending (never, by the builder's order): count again from the head
                line, prev = head_lines + 1, head_end
            line += count(b"\n", prev, at)
            prev = at
            lines[i] = line

    for lines, column_start, column_end in ((index.z_line, index.z_start, index.z_inner),
                                            (index.z_close_line, index.z_close_start, index.z_close_end)):
        into_starts(column_start, lines)
        into_ends(column_end, lines)
        into_lines(lines)  # last: the two above read the compact line numbers
    into_starts(index.h_start, index.h_line)
    into_lines(index.h_line)
    index.global_first = dict(global_first)
    return index
