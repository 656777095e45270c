"""Second barrier of the safe writer: re-check the new text before it is written (§5.5).

A change is accepted only if

1. every byte outside the replaced region is identical;
2. it adds no diagnostic (same code, column and message — line numbers in both the position
   and the message shifted by the edit), for an AI; for the user, no new *error*;
3. for an AI, the structure outside the region is unchanged: the same blocks (type, line,
   permission level, header text), the same derived facts (modules, states, connections,
   nuclei, registry), and inside the region no block but H6 entries, owned by the expected
   container, as many as expected.

:func:`full_check` parses both whole texts.  :func:`incremental_check` proves the same
verdict from the target zone alone: a synthetic mini-document holding the file type, the
open logical stack at the zone (its header lines, copied verbatim, in a ``[P1]``) and the
zone itself, parsed before and after.  Within a zone the parser's state depends only on the
file type and that stack (zones close lists, leaves, fences and pending STATE values), so
when the mini check *accepts* — no new diagnostic, no structure but the expected H6
entries, unchanged facts — a full parse accepts too.  When it does not, the caller falls
back to :func:`full_check`, whose diagnostics are the exact ones to report.

The mini check declares itself *undecided* (and the full check decides) where the zone
alone cannot tell: the edit moves the zone's closing tag (an unclosed fence, comment or
nested tag swallows what follows), adds an H1-H5 header (a refused declaration still
counts in the file-wide duplicate checks), touches a version pin (the first pin of the
file wins), lies under a ``MODULE_STATE_REGISTRY`` header (only the file's first registry
counts), or removes a character counted by a once-per-file diagnostic (control
characters, CR).  Once-per-file diagnostics it does see are placed at the file's first
occurrence, known from the index.  ``tests/writer/test_verify_property.py`` checks on generated
files and payloads that the verdict and the new diagnostics (code, line) equal a full
re-parse's whenever the mini check decides, and that a fast-path accept is a full accept.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import zip_longest
from typing import Any

from ..core import syntax as sx
from ..core.diagnostics import Diagnostic, Severity
from ..core.document import Document
from ..core.headers import read_header
from ..core.nodes import Block, Heading, Quote, Rule
from ..core.parser import parse
from ..core.scanner import scan_structure
from ..core.text import decode
from ..core.tree import HeadingFrame, ZoneFrame
from .locate import GLOBAL_CODES, ZoneIndex, ZoneView
from .offsets import ByteOffset, CharOffset
from .skeleton import kept_line_starts

@dataclass(frozen=True)
class Edit:
    """Whole lines ``[start, start + old_len)`` of the old text become ``[start, start + new_len)``.

    Positions and lengths are *characters* of the decoded text (:data:`.offsets.CharOffset`),
    never bytes.  ``line`` is the 1-based line starting at ``start``; ``old_lines``/``new_lines``
    count the newlines of each region.
    """

    start: CharOffset
    old_len: int  # characters
    new_len: int  # characters
    line: int
    old_lines: int
    new_lines: int

    @property
    def delta_lines(self) -> int:
        return self.new_lines - self.old_lines

    def map_line(self, n: int) -> int | None:
        """An old line number in new coordinates (None inside the replaced region)."""
        if n < self.line:
            return n
        if n >= self.line + self.old_lines:
            return n + self.delta_lines
        return None

    def in_new(self, n: int) -> bool:
        return self.line <= n < self.line + self.new_lines


@dataclass(frozen=True)
class Expect:
    """What the edit is allowed to add inside its region."""

    entries: int | None = 1  # H6 entries the new region must hold (None: any number)
    owner_line: int | None = None  # old-coordinate line of their owner (0 = the file), None: unchecked
    structure: bool = False  # the user may change structure; only new errors refuse
    registry: bool = False  # the MODULE_STATE_REGISTRY entries may change (§7.3.1 rewrite)


@dataclass(frozen=True)
class Verdict:
    ok: bool
    new_diagnostics: tuple[Diagnostic, ...] = ()
    problems: tuple[str, ...] = ()
    method: str = "full"

    def reason(self) -> str:
        """One line: the first problem or new diagnostic."""
        if self.problems:
            return self.problems[0]
        if self.new_diagnostics:
            d = self.new_diagnostics[0]
            more = len(self.new_diagnostics) - 1
            return (f"it would add {d.code} at line {d.line}: {d.message}"
                    + (f" (and {more} more)" if more else ""))
        return "accepted"


def _diag_keys(before: Document, after: Document, edit: Edit) -> list[Diagnostic]:
    """The diagnostics of ``after`` that ``before`` did not have (code, position and related line).

    Lines are compared in new coordinates; a diagnostic inside the replaced region matches
    one that was there before.  The message text is never read: a file-wide ``count`` that
    grows is not a new problem, and a ``related_line`` shifts with the edit.
    """
    return added_diagnostics(before.diagnostics, after.diagnostics, edit)


def _related_after(d: Diagnostic, edit: Edit) -> int | None:
    """A new diagnostic's related line as its key holds it: None inside the edited region (or with none)."""
    return None if d.related_line is None or edit.in_new(d.related_line) else d.related_line


def added_diagnostics(before: Iterable[Diagnostic], after: Sequence[Diagnostic], edit: Edit) -> list[Diagnostic]:
    """:func:`_diag_keys` of the two parses' diagnostics alone (a caller that keeps no document, W99)."""
    def related(n: int | None) -> int | None:
        return None if n is None else edit.map_line(n)
    old = Counter((d.code, edit.map_line(d.line), d.column, related(d.related_line)) for d in before)
    new: list[Diagnostic] = []
    for d in after:
        key = (d.code, None if edit.in_new(d.line) else d.line, d.column, _related_after(d, edit))
        if old[key] > 0:
            old[key] -= 1
        else:
            new.append(d)
    return new


@dataclass(frozen=True, eq=False)
class DiagnosticKeys:
    """What :func:`added_diagnostics` reads of a parse's diagnostics — code, line, column, related line — as
    columns in the diagnostics' order (B22): a re-check that keeps the old text's findings while it parses the
    new one holds four integers per finding, not the findings."""

    codes: tuple[str, ...]  # the distinct codes, by first use
    code: "array[int]"  # index into ``codes``
    line: "array[int]"
    column: "array[int]"
    related: "array[int]"  # -1: no related line

    @classmethod
    def of(cls, diagnostics: Sequence[Diagnostic]) -> "DiagnosticKeys":
        ids: dict[str, int] = {}
        code, line, column, related = array("l"), array("q"), array("q"), array("q")
        for d in diagnostics:
            code.append(ids.setdefault(d.code, len(ids)))
            line.append(d.line)
            column.append(d.column)
            related.append(-1 if d.related_line is None else d.related_line)
        return cls(tuple(ids), code, line, column, related)

    def __len__(self) -> int:
        return len(self.code)


def added_to(before: DiagnosticKeys, after: Sequence[Diagnostic], edit: Edit) -> list[Diagnostic]:
    """:func:`added_diagnostics` with the old diagnostics as :class:`DiagnosticKeys`: the same diagnostics, in
    the same order.

    A key holds its line (in new coordinates; None inside the edited region), so two diagnostics match only on
    the same line: both sequences are in line order (the parser sorts its findings), and walked side by side a
    line at a time, each line's old keys counted alone; a sequence out of line order is counted whole instead."""
    first, last = edit.line, edit.line + edit.new_lines  # the edited region, in new coordinates
    region = 2 * first - 1  # the group of the region's lines: after every line before it, before every one after

    def old_group(n: int) -> int:
        m = edit.map_line(n)
        return region if m is None else 2 * m

    def new_group(n: int) -> int:
        return region if first <= n < last else 2 * n

    def related(n: int) -> int | None:
        return None if n < 0 else edit.map_line(n)
    codes, lines, columns, relateds = before.codes, before.line, before.column, before.related
    if not (_ordered(old_group(n) for n in lines) and _ordered(new_group(d.line) for d in after)):
        return added_diagnostics(_as_diagnostics(before), after, edit)
    added: list[Diagnostic] = []
    i, n_old = 0, len(lines)
    j, n_new = 0, len(after)
    while j < n_new:
        group = new_group(after[j].line)
        while i < n_old and old_group(lines[i]) < group:
            i += 1
        old: Counter[tuple[str, int, int | None]] = Counter()
        while i < n_old and old_group(lines[i]) == group:
            old[(codes[before.code[i]], columns[i], related(relateds[i]))] += 1
            i += 1
        while j < n_new and new_group(after[j].line) == group:
            d = after[j]
            j += 1
            key = (d.code, d.column, _related_after(d, edit))
            if old[key] > 0:
                old[key] -= 1
            else:
                added.append(d)
    return added


def _ordered(groups: Iterator[int]) -> bool:
    """Whether ``groups`` never goes down."""
    last = None
    for g in groups:
        if last is not None and g < last:
            return False
        last = g
    return True


class _Key:
    """The four fields of a diagnostic that :func:`added_diagnostics` reads (a key read back from columns)."""

    __slots__ = ("code", "line", "column", "related_line")

    def __init__(self, code: str, line: int, column: int, related_line: int | None) -> None:
        self.code, self.line, self.column, self.related_line = code, line, column, related_line


def _as_diagnostics(keys: DiagnosticKeys) -> Iterator[Any]:
    """The keys as objects with the four fields :func:`added_diagnostics` reads."""
    for k in range(len(keys)):
        rel = keys.related[k]
        yield _Key(keys.codes[keys.code[k]], keys.line[k], keys.column[k], None if rel < 0 else rel)


def new_diagnostics(before: Document, after: Document, edit: Edit) -> list[Diagnostic]:
    """Every diagnostic (errors and warnings) that ``after`` has and ``before`` did not."""
    return _diag_keys(before, after, edit)


def user_verdict(added: Sequence[Diagnostic], same_outside: bool) -> Verdict:
    """The verdict of :func:`compare` with ``Expect(structure=True)`` (a user's change: only new errors refuse)
    from the diagnostics the change adds (:func:`added_diagnostics`) and whether the bytes outside the edited
    region are the same, without either document (W99)."""
    problems = () if same_outside else ("bytes outside the edited region would change",)
    errors = tuple(d for d in added if d.severity is Severity.ERROR)
    return Verdict(not problems and not errors, errors, problems, "full")


def _outside(doc: Document, edit: Edit, old: bool, inside: list[Block] | None = None) -> Iterator[tuple[object, ...]]:
    """(type, line, level, text, rule, refused) of every block outside the region, in document order, made one at a
    time (W98); the blocks inside it are added to ``inside`` when given."""
    for b in doc.walk():
        inside_region = (edit.map_line(b.line) is None) if old else edit.in_new(b.line)
        if inside_region:
            if inside is not None:
                inside.append(b)
            continue
        line = edit.map_line(b.line) if old else b.line
        text = b.text if isinstance(b, Heading) else (b.severity if isinstance(b, Quote) else None)
        extra = (b.prefix, b.rule_number) if isinstance(b, Rule) else None
        yield (b.type, line, b.permission_level, text, extra, getattr(b, "refused", None))


def _first_difference(before: Iterator[tuple[object, ...]], after: Iterator[tuple[object, ...]]
                      ) -> tuple[object, ...] | None:
    """The first block of ``before`` that ``after`` does not match in place (``()`` when ``after`` has more): the
    two streams are compared pairwise, never held as lists (two tuples per block of both texts, W98)."""
    for a, b in zip_longest(before, after):
        if a != b:
            for _ in after:  # read to its end: it collects the blocks inside the region
                pass
            return a if a is not None else ()
    return None


def _facts(doc: Document, edit: Edit | None, with_registry: bool = True) -> tuple[object, ...]:
    m = (lambda n: n) if edit is None else (lambda n: None if n is None else edit.map_line(n))
    mods = tuple((x.type, x.keyword, x.id, x.name, x.level, m(x.line), x.permission_level, x.assigned_nuclei,
                  x.declared_state, x.permanent, m(x.state_line), tuple((c.kind, c.target, m(c.line))
                                                                        for c in x.connections),
                  x.ignored, m(x.parent_line)) for x in doc.modules)
    nuc = tuple((x.nucleus_id, x.name, m(x.line), x.permission_level,
                 tuple((c.kind, c.target, m(c.line)) for c in x.connections), x.ignored) for x in doc.nuclei)
    r = doc.registry
    reg: tuple[object, ...] | None
    if r is None:
        reg = None
    elif with_registry:
        reg = (m(r.line), r.permission_level, r.active, r.inactive,
               tuple((i, s, m(ln)) for i, s, ln in r.entry_lines))
    else:
        reg = (m(r.line), r.permission_level)
    return (doc.file_type, doc.title, doc.standard_version, doc.frontmatter, mods, nuc, reg)


#: How many characters :func:`_same_text` compares at a time.
SAME_TEXT_CHUNK = 1 << 16


def _same_text(a: str, a_at: int, b: str, b_at: int, length: int) -> bool:
    """Whether ``a[a_at:a_at + length] == b[b_at:b_at + length]``, compared a slice at a time: slicing both
    whole texts held two more copies of the file at the re-check's peak (W98)."""
    step = SAME_TEXT_CHUNK
    return all(a[a_at + i:a_at + min(i + step, length)] == b[b_at + i:b_at + min(i + step, length)]
               for i in range(0, length, step))


class Taken:
    """The blocks of an edited region a parse left out of its tree (``parse(keep=...)``, :func:`.tree.pruning`),
    as :func:`compare` reads them: the lines of the H6 entries, what else they would add, whether a header H1-H5
    is among them.  Only a block wholly inside the region is taken, so the blocks outside it are all in the tree,
    in their order (B25)."""

    __slots__ = ("edit", "entries", "problems", "header")

    def __init__(self, edit: Edit) -> None:
        self.edit = edit
        self.entries = array("q")
        self.problems: list[str] = []
        self.header = False

    def keep(self, block: Block) -> bool:
        """False (the block is taken) for a block wholly inside the region, after reading it and its subtree."""
        edit = self.edit
        if not (edit.in_new(block.line) and edit.in_new(block.end_line)):
            return True
        for b in block.walk():
            if isinstance(b, Heading):
                if b.level < 6:
                    self.header = True
                if b.level != 6 or b.type != "log" or b.refused:
                    self.problems.append(f"a header at line {b.line} would be added (only H6 entries may be)")
                else:
                    self.entries.append(b.line)
            elif isinstance(b, Rule) or (isinstance(b, Quote) and b.severity) or b.type == "permission_block":
                self.problems.append(f"a {b.type.replace('_', ' ')} at line {b.line} would be added")
        return False


def compare(before: Document, after: Document, edit: Edit, expect: Expect, method: str = "full",
            taken: Taken | None = None) -> Verdict:
    """The verdict on ``before`` → ``after`` (both parsed from texts that differ only in ``edit``).  ``taken``: the
    blocks of the region ``after``'s parse left out of its tree (:class:`Taken`); the verdict is then the same
    in being accepted or not, the problems of the taken blocks coming first."""
    old_src, new_src = before.source, after.source
    problems: list[str] = []
    old_end, new_end = edit.start + edit.old_len, edit.start + edit.new_len
    if (len(old_src) - old_end != len(new_src) - new_end or not _same_text(old_src, 0, new_src, 0, edit.start)
            or not _same_text(old_src, old_end, new_src, new_end, len(old_src) - old_end)):
        problems.append("bytes outside the edited region would change")
    new_diags = _diag_keys(before, after, edit)
    if expect.structure:
        new_diags = [d for d in new_diags if d.severity is Severity.ERROR]
    else:
        in_new: list[Block] = []
        first = _first_difference(_outside(before, edit, True), _outside(after, edit, False, in_new))
        if first is not None:
            where = f" (near line {first[1]})" if first and first[1] else ""
            problems.append(f"the structure outside the edited zone would change{where}")
        entries = array("q") if taken is None else taken.entries
        if taken is not None:
            problems += taken.problems
        for b in in_new:
            if isinstance(b, Heading):
                if b.level != 6 or b.type != "log" or b.refused:
                    problems.append(f"a header at line {b.line} would be added (only H6 entries may be)")
                else:
                    entries.append(b.line)
            elif isinstance(b, Rule) or (isinstance(b, Quote) and b.severity) or b.type == "permission_block":
                problems.append(f"a {b.type.replace('_', ' ')} at line {b.line} would be added")
        if expect.entries is not None and len(entries) != expect.entries:
            problems.append(f"{len(entries)} H6 entries would be added where {expect.entries} was expected")
        if expect.owner_line is not None:
            want = 0 if expect.owner_line == 0 else edit.map_line(expect.owner_line)
            for e in entries:
                got = after.h6_owner.get(e)
                if got != want:
                    problems.append(f"the entry at line {e} would belong to line {got}, not line {want}")
        if _facts(before, edit, not expect.registry) != _facts(after, None, not expect.registry):
            problems.append("modules, states, connections or the registry would change")
    ok = not problems and not new_diags
    return Verdict(ok, tuple(new_diags), tuple(dict.fromkeys(problems)), method)


def full_check(old_text: str, new_text: str, edit: Edit, expect: Expect, *, path: str | None = None,
               before: Document | None = None) -> Verdict:
    """Parse both whole texts and compare them."""
    before = before if before is not None else parse(old_text, path=path, tree=True)
    after = parse(new_text, path=path, tree=True)
    return compare(before, after, edit, expect, "full")


def mini_prefix(index: ZoneIndex, zone: ZoneView) -> tuple[str, dict[int, int]]:
    """The synthetic head of the mini-document and the mini line of each context header."""
    ft = index.file_type
    head = f"# x [{ft}]\n\n" if ft else "# x\n\n"
    lines: dict[int, int] = {}
    if zone.context:
        parts = [head, "[P1]\n"]
        ln = head.count("\n") + 2
        for h in zone.context:
            parts.append(index.headers.text_of(h).rstrip("\r") + "\n")
            lines[h] = ln
            ln += 1
        parts.append("[/P1]\n")
        head = "".join(parts)
    return head, lines


def mini_check(index: ZoneIndex, zone: ZoneView, old_zone: str, new_zone: str, edit: Edit,
               expect: Expect, *, owner: int | None = None) -> Verdict:
    """The verdict of the zone alone (see :func:`incremental_check`), diagnostics on file lines."""
    undecided = _undecided(index, zone, old_zone[edit.start:edit.start + edit.old_len],
                           new_zone[edit.start:edit.start + edit.new_len])
    if undecided is not None:
        return undecided
    head, header_lines = mini_prefix(index, zone)
    return _mini_verdict(index, zone, head, header_lines, head + old_zone, head + new_zone, edit, expect, owner)


def _undecided(index: ZoneIndex, zone: ZoneView, region_old: str, region_new: str) -> Verdict | None:
    """The undecided verdict of :func:`mini_check` that its edited lines alone give, or None."""
    if _has_version_pin(region_old) or _has_version_pin(region_new):
        # a version pin counts once per file (the first wins): only the whole file can tell
        return Verdict(False, (), ("a version pin in the edited lines",), "undecided")
    if "\r" in region_old or sx.CONTROL_CHARS.search(region_old):
        # removing a counted character changes a once-per-file diagnostic somewhere else
        return Verdict(False, (), ("counted characters in the replaced lines",), "undecided")
    if any(index.headers.type_of(h) == "state_registry" for h in zone.context):
        # registry lines count only under the file's first registry header, which the zone cannot see
        return Verdict(False, (), ("the zone continues a MODULE_STATE_REGISTRY",), "undecided")
    return None


def _has_version_pin(text: str) -> bool:
    """Whether a line of ``text`` is a version pin (§15 ``<!-- IllAIra-Standard: … -->``): only the lines that
    hold the pin's word are matched, none of the others made a string (B27: the region's lines were all split
    out at once, five times the inserted text)."""
    pos = text.find(_PIN_WORD)
    while pos >= 0:
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        if sx.VERSION_PIN.fullmatch(text[start:end].rstrip("\r")):
            return True
        pos = text.find(_PIN_WORD, end)
    return False


#: The word every version pin holds (:data:`.syntax.VERSION_PIN`).
_PIN_WORD = "IllAIra-Standard:"


def _mini_verdict(index: ZoneIndex, zone: ZoneView, head: str, header_lines: dict[int, int], old_text: str,
                  new_text: str, edit: Edit, expect: Expect, owner: int | None, *, stream: bool = False) -> Verdict:
    """:func:`mini_check` once its edited lines are known to decide, on the two mini-documents' texts (``head``
    and the zone before and after): each text is the parse's own source, no second copy of it held (B25).

    ``stream``: the new parse leaves the blocks wholly inside the edited lines out of its tree, read as they are
    built (:class:`Taken`): the verdict is the same in being accepted or not (its problems may be other ones), for
    a caller that keeps only an accepting verdict (:func:`insertion_check`)."""
    mini_zone_line = head.count("\n") + 1
    mini_edit = replace(edit, start=CharOffset(edit.start + len(head)), line=edit.line - zone.line + mini_zone_line)
    taken = Taken(mini_edit) if stream else None
    mini_before = parse(old_text, tree=True)
    mini_after = parse(new_text, tree=True, keep=None if taken is None else taken.keep)
    del old_text, new_text
    # a zone is where it opens and where it closes: an inserted closing tag ends it early, and
    # what then follows it (a fence, say) would swallow the rest of the file
    zones_before = [(b.permission_level, mini_edit.map_line(b.line), mini_edit.map_line(b.end_line))
                    for b in mini_before.blocks if b.type == "permission_block"]
    zones_after = [(b.permission_level, b.line, b.end_line) for b in mini_after.blocks
                   if b.type == "permission_block"]
    if zones_before != zones_after or any(d.code == "UNCLOSED_PERMISSION_BLOCK" for d in mini_after.diagnostics):
        # the zone no longer closes where it did: what follows it would parse differently
        return Verdict(False, (), ("the edit changes where the zone ends",), "undecided")
    if (taken is not None and taken.header) or any(isinstance(b, Heading) and b.level < 6 and mini_edit.in_new(b.line)
                                                   for b in mini_after.walk()):
        # a (refused) declaration still counts in the file-wide duplicate checks (§5.5 Invariant 4)
        return Verdict(False, (), ("a header in the edited lines",), "undecided")
    want = None
    if expect.owner_line is not None:
        want = 0 if owner is None else header_lines.get(owner, -1)
    verdict = compare(mini_before, mini_after, mini_edit, replace(expect, owner_line=want), "incremental", taken)
    to_file = {mini: index.header_line(h) for h, mini in header_lines.items()}
    shift = zone.line - mini_zone_line
    diags = []
    for d in verdict.new_diagnostics:
        line = to_file.get(d.line, d.line + shift)
        if d.code in GLOBAL_CODES and d.code in index.global_first:
            # reported once per file, at its first occurrence: an earlier one elsewhere wins,
            # and more occurrences after it only change the count (not a new problem)
            first = edit.map_line(index.global_first[d.code])
            if first is None:
                return Verdict(False, verdict.new_diagnostics, verdict.problems, "undecided")
            if first < line:
                continue
        diags.append(replace(d, line=line, end_line=line + d.end_line - d.line))  # the extent moves with it
    if len(diags) == len(verdict.new_diagnostics):
        return replace(verdict, new_diagnostics=tuple(diags))
    ok = not diags and not verdict.problems
    return replace(verdict, ok=ok, new_diagnostics=tuple(diags))


def incremental_check(index: ZoneIndex, zone: ZoneView, old_zone: str, new_zone: str, edit: Edit,
                      expect: Expect, *, owner: int | None = None) -> Verdict | None:
    """The verdict from the zone alone when it accepts; None when a full check must decide.

    ``old_zone``/``new_zone`` are the zone's text (opening to closing line) before and after;
    ``edit.start`` is relative to them, ``edit.line`` is the file's line.  ``owner`` is the
    header index of the container the new entries must belong to (None = the file).  The
    caller checks the bytes outside the zone.
    """
    if expect.structure or zone.close_end is None:
        return None
    verdict = mini_check(index, zone, old_zone, new_zone, edit, expect, owner=owner)
    return verdict if verdict.ok else None


# -- an insertion at the end of a zone's content: the zone's lines from there on decide (W99) ---------------

#: The parser's control characters (``syntax.CONTROL_CHARS``, all ASCII) as bytes: in UTF-8 no other character uses
#: these bytes, and an invalid byte never decodes to one.
_CONTROL_BYTE = re.compile(sx.CONTROL_CHARS.pattern.encode("ascii"))
#: The start of git's conflict markers (``syntax.conflict_regions`` reads none in a text without one).
_CONFLICT_OPEN = b"<<<<<<<"


def _scanned_line(line: str) -> str:
    """A line as the scanner reads it: without its newline and one carriage return before it."""
    line = line[:-1] if line.endswith("\n") else line
    return line[:-1] if line.endswith("\r") else line


def _opens_with_entry(insert: str) -> bool:
    """Whether the first line of ``insert`` that is not blank is an H6 header at the start of its line."""
    pos = 0
    while pos < len(insert):
        eol = insert.find("\n", pos)
        end = len(insert) if eol < 0 else eol + 1
        line = insert[pos:end]
        pos = end
        if line.strip():  # the scanner's blank line: nothing but white space (a carriage return is)
            s = _scanned_line(line)
            return s.startswith("#") and read_header(s, s, 0)[0] == 6
    return False


def _prefix_is_neutral(index: ZoneIndex, zone: ZoneView, data: bytes, at: ByteOffset, opening: str,
                       closing: str) -> bool:
    """Whether the zone's inner lines before ``at`` leave the scan at ``at`` as the zone's opening line does, in all
    a later line can see (see :func:`insertion_check`): no control character, no bare carriage return, no line
    ending in one unless the opening line does, no conflict marker, no permission tag; and, when lines that open
    or close a fence or a comment or are headers are there, a scan of them alone (the skeleton's lines, §2.4)
    leaves no fence or comment open — the zone's closing tag still closes it — and finds no header on the
    logical stack (§2.3).  Read in place: the lines that are none of these are never decoded."""
    inner = zone.inner_start
    if _CONTROL_BYTE.search(data, inner, at) or data.find(_CONFLICT_OPEN, inner, at) >= 0:
        return False
    crs = data.count(b"\r", inner, at)
    if crs and (not data.endswith(b"\r\n", zone.start, inner) or data.count(b"\r\n", inner, at) != crs):
        return False
    kept: list[str] = []
    for k in kept_line_starts(data, inner, at):
        line = decode(data[k:data.find(b"\n", k, at) + 1])
        if sx.PERMISSION_TAG.match(_scanned_line(line)):
            return False  # a tag inside the zone: nested or mismatched, it changes where the zone ends
        kept.append(line)
    if not kept:
        return True
    head = mini_prefix(index, zone)[0]
    opening_line = head.count("\n") + 1
    closing_line = opening_line + 1 + len(kept)
    ends: list[tuple[int, int | None]] = []
    logical: list[int] = []

    def on_header(frame: HeadingFrame) -> None:
        if opening_line < frame.line < closing_line and not frame.refused and 2 <= frame.level <= 5:
            logical.append(frame.line)

    def on_zone(frame: ZoneFrame) -> None:
        ends.append((frame.line, frame.tail_line if frame.tail is not None else None))

    scan_structure(head + opening + "".join(kept) + closing, on_header, on_zone)
    return not logical and (opening_line, closing_line) in ends


def _window(index: ZoneIndex, zone: ZoneView, data: bytes, at: ByteOffset, insert: str) -> tuple[str, str] | None:
    """The zone's opening line and its lines from ``at`` to its closing line, when the insertion of ``insert`` at
    ``at`` is decided by them alone (:func:`insertion_check`); else None."""
    if zone.inline or zone.close_start is None or zone.close_end is None or not (
            zone.inner_start <= at <= zone.close_start) or not _opens_with_entry(insert):
        return None
    blanks = decode(data[at:zone.close_start])
    if blanks.strip():
        return None  # not the end of the zone's content
    opening = decode(data[zone.start:zone.inner_start])
    closing = decode(data[zone.close_start:zone.close_end])
    if at > zone.inner_start and not _prefix_is_neutral(index, zone, data, at, opening, closing):
        return None
    return opening, blanks + closing


def insertion_check(index: ZoneIndex, zone: ZoneView, data: bytes, at: ByteOffset, insert: bytes, line: int,
                    expect: Expect, *, owner: int | None = None) -> Verdict | None:
    """:func:`incremental_check` of inserting ``insert`` (UTF-8 bytes, :func:`.core.text.encode`) at byte ``at`` of
    ``data`` (a line start in ``zone``, file
    line ``line``), as it is for the whole zone — and, when ``at`` is the end of the zone's content and the
    insertion opens with an H6 entry, from the zone's opening line and its lines from ``at`` on alone (W99).

    Why those decide: the re-check compares the mini-document before and after; both share the zone's lines
    before ``at``, so everything the scan made of them is the same in both (their diagnostics, blocks and facts,
    line for line) and cancels, and what differs is made by the scan of the lines from ``at`` on, which can see
    of the lines before only a few things of the scan's state: whether a fence or a comment is open, the ignored
    nested tags, the logical stack (§2.3) and the first control character, carriage return and conflict marker of
    the text, which the once-per-file diagnostics are placed at.  :func:`_prefix_is_neutral` proves them those of
    the zone's opening line.  The rest of the state (an open paragraph, quote or list, the open headers of the
    block tree) the entry's header ends as it starts (§7.5): a list open at ``at`` ends at it with the same items
    as at the closing tag before, so its §8.1 findings are the same; the header's parent block is not compared.
    Declarations in those lines (refused headers, §5.5 Invariant 4) are the same before and after, and so are
    their duplicate findings.  ``tests/writer/test_verify_window.py`` checks on generated zones that the verdict
    is the whole zone's.  Bounded: the zone's lines before ``at`` are never decoded whole, and the inserted text
    is decoded into the new mini-document's text itself, no second string of it held while that is parsed (B27)."""
    if expect.structure or zone.close_end is None:
        return None
    text = decode(insert)
    window = _window(index, zone, data, at, text)
    if window is not None:
        opening, rest = window
        edit = Edit(CharOffset(len(opening)), 0, len(text), line, 0, insert.count(b"\n"))
        at_zone = replace(zone, line=line - 1)
        # :func:`incremental_check` of (opening + rest, opening + insert + rest), the new mini-document's text made
        # once, as the parse's source (the edited lines are ``insert`` itself, B25); the inserted text is let go
        # once it is joined, and the new text lives as long as its parse does (B27)
        verdict = _undecided(index, at_zone, "", text)
        if verdict is None:
            head, header_lines = mini_prefix(index, at_zone)
            new_text = "".join((head, opening, text, rest))
            del text
            verdict = _mini_verdict(index, at_zone, head, header_lines, "".join((head, opening, rest)), new_text,
                                    edit, expect, owner, stream=True)
        return verdict if verdict.ok else None
    old_zone = decode(data[zone.start:zone.close_end])
    rel = CharOffset(len(decode(data[zone.start:at])))
    edit = Edit(rel, 0, len(text), line, 0, text.count("\n"))
    return incremental_check(index, zone, old_zone, old_zone[:rel] + text + old_zone[rel:], edit, expect,
                             owner=owner)
