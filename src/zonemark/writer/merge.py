"""The zone-aware three-way merge of one layer file (issue 19 §1): a pure computation on bytes.

:func:`plan_merge` reads BASE, OURS and THEIRS (or OURS and THEIRS alone, ``base=None``: the two-way
form for a sync folder's conflict copy) and decides zone by zone (§5.1, §5.2):

* the file is cut into *units*: each permission zone (opening tag to closing tag) and the text
  between zones.  A zone is named by its level, the header lines of the containers open at its
  closing tag (§2.3, :class:`.locate.ZoneIndex`) and its rank among the zones so named;
* a unit changed on one side only takes that side; the same change on both sides is taken once;
* a ``[P4]`` journal both sides only appended to gets the base's entries, then the entries new on
  either side in date order (same date: ours first), an entry new on both sides once (compared as
  :mod:`.duplicates` compares them);
* the ``MODULE_STATE_REGISTRY`` lines merge per module (one module set differently on the two
  sides is a conflict);
* anything else both sides changed differently is a conflict region, in git's diff3 markers,
  around that unit only; when the zones themselves differ on both sides, the zones all three hold cut the
  file into regions, and a region where both sides added or removed different zones is one conflict
  region around it (G34); zones in another order on the two sides make the whole file one.

The result is re-checked (§5.5): a merge is accepted only when its parse has no diagnostic over
both sides, cuts into exactly the planned units with exactly the planned header lines (no text
turned into structure, no structure turned into text), and every ``[P1]``-``[P3]`` zone equals a
zone of one side byte for byte; otherwise the whole file becomes one conflict region, never
half-merged.  Four parses (base, ours, theirs, result), each linear in its input; when the zones are the same
and THEIRS changed only journals, the zone index from the structural lines and the journals merged from their
new entries alone, one parse of the merged entries (:func:`_fast`, rulings G13, G33).
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..core.document import Document
from ..core.nodes import Block, Heading
from ..core.parser import parse
from ..core import syntax as sx
from .duplicates import Key, entry_key
from .locate import ZoneIndex, container_lines

#: What became of a merge: merged cleanly, merged with conflict regions, or not a layer file.
MergeOutcome = Literal["merged", "conflict", "not_layer"]

_MARKER = 7


class MergeInputError(ValueError):
    """An input that cannot be merged at all (not UTF-8): the face reports it in one line, exit 2."""


@dataclass(frozen=True)
class ConflictRegion:
    """One conflict region of the result: its marker lines (1-based, inclusive) and what it is around."""

    line: int
    end_line: int
    level: int | None  # the zone's level; None: text between zones, or the whole file
    what: str


@dataclass(frozen=True)
class MergePlan:
    """The merged bytes (for OURS) and what they hold; ``reason`` says why a whole-file conflict was chosen."""

    outcome: MergeOutcome
    data: bytes
    conflicts: tuple[ConflictRegion, ...]
    entries_added: int  # journal entries of THEIRS that the result adds to OURS
    reason: str | None = None


@dataclass(frozen=True)
class _Entry:
    core: str  # header line to the last non-blank line, no line ending
    tail: str  # what follows the core (its line ending and blank lines)
    date: str | None
    title: str


@dataclass(frozen=True)
class _Unit:
    key: tuple[object, ...]
    level: int | None  # None: text between zones
    text: str
    first_line: int
    last_line: int  # inclusive; first_line - 1 for an empty gap


@dataclass(frozen=True)
class _Side:
    text: str
    doc: Document
    units: tuple[_Unit, ...] | None  # None: a zone never closes, the file cannot be cut
    starts: tuple[int, ...]  # character offset of each line
    headings: tuple[Heading, ...]  # every header (H1-H6), in line order
    heads: tuple[int, ...]  # their lines
    eol: str

    def within(self, unit: _Unit) -> tuple[Heading, ...]:
        lo = bisect.bisect_left(self.heads, unit.first_line)
        hi = bisect.bisect_right(self.heads, unit.last_line)
        return self.headings[lo:hi]

    def head_lines(self, unit: _Unit) -> tuple[str, ...]:
        return tuple(self.line(h.line) for h in self.within(unit))

    def line(self, n: int) -> str:
        start = self.starts[n - 1]
        end = self.starts[n] if n < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")


def _decode(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MergeInputError(f"{what} is not valid UTF-8 (byte {exc.start + 1}); cannot merge it") from None


def _line_starts(text: str) -> tuple[int, ...]:
    """Where each line of ``text`` starts (the parser's lines), without the empty one after a last ``\n``."""
    from ..layer.spans import SourceLines
    starts = SourceLines(text).starts
    if starts[-1] == len(text) and len(starts) > 1:
        starts = starts[:-1]
    return tuple(starts)


def _side(text: str) -> _Side:
    """One input parsed and cut into units (§5.1 zones, and the text between them)."""
    doc = parse(text, tree=True)
    starts = _line_starts(text)
    headings = tuple(sorted(_headings(doc), key=lambda h: h.line))
    first = text.find("\n")
    eol = "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"
    return _Side(text, doc, _units(text, doc, starts), starts, headings, tuple(h.line for h in headings), eol)


def _headings(doc: Document) -> list[Heading]:
    """Every header block (H1-H6); headers sit only at the top, in a zone or under a header (core.outline)."""
    found: list[Heading] = []
    stack: list[Block] = list(reversed(doc.blocks))
    while stack:
        block = stack.pop()
        if isinstance(block, Heading):
            found.append(block)
        if isinstance(block, Heading) or block.type == "permission_block":
            stack.extend(reversed(block.children))
    return found


def _units(text: str, doc: Document, starts: tuple[int, ...]) -> tuple[_Unit, ...] | None:
    index = ZoneIndex.build(doc)
    units: list[_Unit] = []
    seen: Counter[tuple[object, ...]] = Counter()

    def at(line: int) -> int:
        return starts[line - 1] if line <= len(starts) else len(text)

    prev = 0  # last line of the previous zone
    for i in range(len(index)):
        zone = index.zone(i)
        if zone.close_line is None:
            return None
        name = (zone.level, container_lines(index, zone))
        seen[name] += 1
        key = (*name, seen[name])
        units.append(_Unit(("gap", key), None, text[at(prev + 1):at(zone.line)], prev + 1, zone.line - 1))
        units.append(_Unit(key, zone.level, text[at(zone.line):at(zone.close_line + 1)], zone.line,
                           zone.close_line))
        prev = zone.close_line
    units.append(_Unit(("gap", "end"), None, text[at(prev + 1):], prev + 1, len(starts)))
    return tuple(units)


# -- the journal and the registry ---------------------------------------------------------------
def _entries(side: _Side, unit: _Unit) -> tuple[str, list[_Entry], str] | None:
    """A journal zone as (opening line and preamble, entries, closing line); None when it holds no H6 only."""
    heads = side.within(unit)
    if any(h.level != 6 or h.refused for h in heads):
        return None
    rel = side.starts[unit.first_line - 1]
    cut = [side.starts[h.line - 1] - rel for h in heads]
    close = side.starts[unit.last_line - 1] - rel
    text = unit.text
    head = text[:cut[0]] if cut else text[:close]
    out: list[_Entry] = []
    for k, h in enumerate(heads):
        raw = text[cut[k]:cut[k + 1] if k + 1 < len(cut) else close]
        core = _core(raw)
        out.append(_Entry(core, raw[len(core):], h.date, h.title or ""))
    return head, out, text[close:]


def _core(raw: str) -> str:
    """``raw`` without its trailing blank lines and last line ending (the last line's own spaces kept); linear."""
    last = len(raw.rstrip())
    end = raw.find("\n", last)
    core = raw if end < 0 else raw[:end]
    return core[:-1] if core.endswith("\r") else core


def _key(entry: _Entry) -> Key:
    """The duplicate key of an entry (:mod:`.duplicates`), its body as written."""
    body = entry.core.split("\n", 1)[1] if "\n" in entry.core else ""
    return entry_key(entry.date, entry.title, body)


def _merge_journal(base: tuple[_Side, _Unit] | None, ours: tuple[_Side, _Unit],
                   theirs: tuple[_Side, _Unit]) -> tuple[str, int, tuple[str, ...]] | None:
    """The journal both sides only appended to (issue 19 §1): base entries, then the new ones by date."""
    o, t = _entries(*ours), _entries(*theirs)
    if o is None or t is None or o[0] != t[0] or o[2] != t[2]:
        return None
    o_cores, t_cores = [e.core for e in o[1]], [e.core for e in t[1]]
    if base is not None:
        b = _entries(*base)
        if b is None or b[0] != o[0] or b[2] != o[2]:
            return None
        n = len(b[1])
        b_cores = [e.core for e in b[1]]
        if o_cores[:n] != b_cores or t_cores[:n] != b_cores:
            return None
    else:  # two-way: what both copies begin with is the common part
        n = 0
        while n < min(len(o_cores), len(t_cores)) and o_cores[n] == t_cores[n]:
            n += 1
        headers = {e.core.split("\n", 1)[0]: e.core for e in o[1][n:]}
        if any(headers.get(e.core.split("\n", 1)[0], e.core) != e.core for e in t[1][n:]):
            return None  # one entry edited on one copy: without a base, neither edit can win
    kept = list(o[1][:n])
    tail = (o[1][-1].tail if o[1] else (t[1][-1].tail if t[1] else ""))
    return _merge_entries(o[0], kept, o[1][n:], t[1][n:], tail, o[2], ours[0].eol)


def _merge_entries(head: str, kept: list[_Entry], new_o: Sequence[_Entry], new_t: Sequence[_Entry], tail: str,
                   close: str, eol: str) -> tuple[str, int, tuple[str, ...]]:
    """A journal's text (G3): ``head``, the ``kept`` entries, then the entries new on either side by date (same
    date: ours first; an undated one takes the date before it), one new on both sides once; the result's text, how
    many of THEIRS it adds, and its header lines."""
    last_date = next((e.date for e in reversed(kept) if e.date), "")
    new: list[tuple[str, int, int, _Entry]] = []
    seen: set[Key] = set()
    for side_rank, entries in ((0, new_o), (1, new_t)):
        carried = last_date or ""
        for k, e in enumerate(entries):
            carried = e.date or carried
            key = _key(e)
            if key in seen:
                continue
            seen.add(key)
            new.append((carried, side_rank, k, e))
    new.sort(key=lambda item: (item[0], item[1], item[2]))
    merged = kept + [item[3] for item in new]
    added = sum(1 for item in new if item[1] == 1)
    parts = [head]
    for k, e in enumerate(merged):
        parts.append(e.core + eol)
        parts.append(eol if k + 1 < len(merged) else tail[len(eol):] if tail.startswith(eol) else tail)
    parts.append(close)
    heads = tuple(e.core.split("\n", 1)[0].rstrip("\r") for e in merged)
    return "".join(parts), added, heads


def _registry_states(side: _Side, unit: _Unit) -> tuple[str, dict[str, str]] | None:
    """The zone with its registry lines masked, and module id -> ACTIVE/INACTIVE (§7.3.1); None when unclear."""
    lines = unit.text.splitlines(keepends=True)
    states: dict[str, str] = {}
    masked: list[str] = []
    words: Counter[str] = Counter()
    for line in lines:
        m = sx.REGISTRY_ENTRY.fullmatch(line.strip())
        if not m:
            masked.append(line)
            continue
        word = m.group(1)
        words[word] += 1
        masked.append(f"\0{word}\n")
        for ident in (x.strip() for x in m.group(2).split(",")):
            if ident:
                if ident in states:
                    return None
                states[ident] = word
    if any(n > 1 for n in words.values()):
        return None
    return "".join(masked), states


def _merge_registry(base: tuple[_Side, _Unit], ours: tuple[_Side, _Unit],
                    theirs: tuple[_Side, _Unit]) -> str | None:
    """Registry lines merged per module (issue 19 §1); None on a module set differently on both sides."""
    if not any(h.type == "state_registry" for h in ours[0].within(ours[1])):
        return None
    b, o, t = _registry_states(*base), _registry_states(*ours), _registry_states(*theirs)
    if b is None or o is None or t is None or not b[0] == o[0] == t[0]:
        return None
    merged: dict[str, str] = {}
    for ident in [*o[1], *(x for x in t[1] if x not in o[1]), *(x for x in b[1] if x not in o[1] and x not in t[1])]:
        sb, so, st = b[1].get(ident), o[1].get(ident), t[1].get(ident)
        value = so if so == st else st if so == sb else so if st == sb else "conflict"
        if value == "conflict":
            return None
        if value is not None:
            merged[ident] = value
    out: list[str] = []
    for line in ours[1].text.splitlines(keepends=True):
        m = sx.REGISTRY_ENTRY.fullmatch(line.strip())
        if not m:
            out.append(line)
            continue
        word = m.group(1)
        eol = line[len(line.rstrip("\r\n")):]
        indent = line[:len(line) - len(line.lstrip(" \t"))]
        ids = [i for i, w in merged.items() if w == word]
        out.append(f"{indent}* {word}: {', '.join(ids)}{eol}" if ids else f"{indent}* {word}:{eol}")
    return "".join(out)


# -- composing the result -------------------------------------------------------------------------
@dataclass
class _Out:
    eol: str
    labels: tuple[str, str, str]
    parts: list[str]
    line: int = 1
    conflicts: list[ConflictRegion] | None = None

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.line += text.count("\n")

    def conflict(self, ours: str, base: str | None, theirs: str, level: int | None, what: str) -> None:
        first = self.line
        lo, lb, lt = self.labels
        self.add(f"{'<' * _MARKER} {lo}{self.eol}")
        self.add(_ended(ours, self.eol))
        if base is not None:
            self.add(f"{'|' * _MARKER} {lb}{self.eol}")
            self.add(_ended(base, self.eol))
        self.add(f"{'=' * _MARKER}{self.eol}")
        self.add(_ended(theirs, self.eol))
        self.add(f"{'>' * _MARKER} {lt}{self.eol}")
        assert self.conflicts is not None
        self.conflicts.append(ConflictRegion(first, self.line - 1, level, what))


def _ended(text: str, eol: str) -> str:
    return text if not text or text.endswith("\n") else text + eol


def _what(unit: _Unit) -> str:
    if unit.level is None:
        return "the text between zones"
    context = unit.key[1]
    where = f" of {context[-1]!s}" if isinstance(context, tuple) and context else ""
    return f"the [P{unit.level}] zone{where}"


def plan_merge(base: bytes | None, ours: bytes, theirs: bytes, *,
               labels: Sequence[str] = ("ours", "base", "theirs")) -> MergePlan:
    """Merge THEIRS into OURS over BASE (``base=None``: two-way) by zones (issue 19 §1); writes nothing."""
    given = list(labels)
    names = [given[k] if k < len(given) else ("ours", "base", "theirs")[k] for k in range(3)]
    lab = (names[0], names[1], names[2])
    o_text, t_text = _decode(ours, "OURS"), _decode(theirs, "THEIRS")
    b_text = None if base is None else _decode(base, "BASE")
    if ours == theirs or theirs == base:  # nothing to merge: OURS as it is (G2)
        return MergePlan("merged", ours, (), 0)
    if base is not None and ours != base:
        fast = _fast(base, ours, theirs)
        if fast is not None:
            return MergePlan("merged", fast[0], (), fast[1])
    o, t = _side(o_text), _side(t_text)
    b = None if b_text is None else _side(b_text)
    if o.doc.file_type is None and t.doc.file_type is None and (b is None or b.doc.file_type is None):
        return MergePlan("not_layer", ours, (), 0)
    if o_text == t_text or (b_text is not None and t_text == b_text):
        return MergePlan("merged", ours, (), 0)
    if b_text is not None and o_text == b_text:
        return MergePlan("merged", theirs, (), _count_entries(t) - _count_entries(o))
    return _full(b, o, t, b_text, o_text, t_text, lab)


def _full(b: _Side | None, o: _Side, t: _Side, b_text: str | None, o_text: str, t_text: str,
          lab: tuple[str, str, str]) -> MergePlan:
    """The merge from the three full parses, re-checked by a fourth (G1-G8)."""
    planned = _plan_units(b, o, t)
    if isinstance(planned, str):
        return _whole_file(o_text, b_text, t_text, o.eol, lab, planned)
    units, added = planned
    resolved = _compose(units, o.eol, lab, resolve=True)
    reason = _recheck(resolved[0], units, b, o, t)
    if reason is not None:
        return _whole_file(o_text, b_text, t_text, o.eol, lab, reason)
    text, conflicts = _compose(units, o.eol, lab, resolve=False)
    return MergePlan("conflict" if conflicts else "merged", text.encode("utf-8"), conflicts, added)


def _count_entries(side: _Side) -> int:
    return sum(1 for n in side.heads if side.line(n).startswith("######"))


@dataclass(frozen=True)
class _Planned:
    """One unit of the result: its text and header lines, or (``clash``) a conflict of OURS, BASE, THEIRS."""

    key: tuple[object, ...]
    level: int | None
    text: str  # the text taken; for a clash, OURS
    heads: tuple[str, ...]  # the header lines of ``text``
    clash: tuple[str | None, str, str] | None = None  # (base, theirs, what)
    span: int = 1  # a clash over a region of zones: how many units of OURS it holds (0: none, this one stands in)


def _plan_units(b: _Side | None, o: _Side, t: _Side) -> tuple[list[_Planned], int] | str:
    """Every unit of the result, or why the file is one conflict (the zones differ on both sides)."""
    if o.units is None or t.units is None or (b is not None and b.units is None):
        return "a zone never closes on one side"
    ou = {u.key: u for u in o.units}
    tu = {u.key: u for u in t.units}
    bu = {} if b is None or b.units is None else {u.key: u for u in b.units}
    o_keys, t_keys = [u.key for u in o.units], [u.key for u in t.units]
    b_keys = None if b is None or b.units is None else [u.key for u in b.units]
    if o_keys == t_keys:
        order = o_keys
    elif b_keys is not None and o_keys == b_keys:
        order = t_keys
    elif b_keys is not None and t_keys == b_keys:
        order = o_keys
    else:
        return _plan_regions(b, o, t, ou, tu, bu, o_keys, t_keys, b_keys)
    if b_keys is not None:  # a unit one side removed must be the base's on the other side
        for key in b_keys:
            if key not in order:
                kept = ou.get(key) or tu.get(key)
                if kept is not None and kept.text != bu[key].text:
                    return "one side removed a zone the other side changed"
    out: list[_Planned] = []
    added = 0
    for key in order:
        planned, n = _plan_one(key, b, o, t, ou, tu, bu)
        out.append(planned)
        added += n
    return out, added


_Units = dict[tuple[object, ...], _Unit]


def _plan_one(key: tuple[object, ...], b: _Side | None, o: _Side, t: _Side, ou: _Units, tu: _Units,
              bu: _Units) -> tuple[_Planned, int]:
    """One unit of the result by G2-G6, and how many journal entries of THEIRS it adds."""
    ux, uy, ub = ou.get(key), tu.get(key), bu.get(key)
    if ux is None or uy is None:
        side, unit = (t, uy) if ux is None else (o, ux)
        assert unit is not None
        added = sum(1 for h in side.head_lines(unit) if h.startswith("######")) if ux is None else 0
        return _Planned(key, unit.level, unit.text, side.head_lines(unit)), added
    if ux.text == uy.text or (ub is not None and uy.text == ub.text):
        return _Planned(key, ux.level, ux.text, o.head_lines(ux)), 0
    if ub is not None and ux.text == ub.text:
        added = sum(1 for h in t.head_lines(uy) if h.startswith("######")) - \
            sum(1 for h in o.head_lines(ux) if h.startswith("######"))
        return _Planned(key, uy.level, uy.text, t.head_lines(uy)), added
    if ux.level == 4:
        journal = _merge_journal(None if ub is None or b is None else (b, ub), (o, ux), (t, uy))
        if journal is not None:
            return _Planned(key, 4, journal[0], journal[2]), journal[1]
        if ub is not None and b is not None:
            registry = _merge_registry((b, ub), (o, ux), (t, uy))
            if registry is not None:
                return _Planned(key, 4, registry, o.head_lines(ux)), 0
    return _Planned(key, ux.level, ux.text, o.head_lines(ux), (None if ub is None else ub.text, uy.text, _what(ux))), 0


def _plan_regions(b: _Side | None, o: _Side, t: _Side, ou: _Units, tu: _Units, bu: _Units,
                  o_keys: list[tuple[object, ...]], t_keys: list[tuple[object, ...]],
                  b_keys: list[tuple[object, ...]] | None) -> tuple[list[_Planned], int] | str:
    """The zones differ from the base on both sides (G34): the units all three hold (in one order on all) cut the
    file into regions; a region whose zones one side left as the base's takes the other side's, unit by unit; one
    where both sides added or removed different zones (or, without a base, where the two differ) is one conflict
    region around it, and everything else is merged."""
    common = set(o_keys) & set(t_keys) & (set(b_keys) if b_keys is not None else set(o_keys))
    anchors = [k for k in o_keys if k in common]
    if anchors != [k for k in t_keys if k in common] or (
            b_keys is not None and anchors != [k for k in b_keys if k in common]):
        return "the zones themselves (containers moved) are in another order on the two sides"
    regions_o, regions_t = _regions(o_keys, common), _regions(t_keys, common)
    regions_b = _regions(b_keys, common) if b_keys is not None else None
    out: list[_Planned] = []
    added = 0
    for k in range(len(anchors) + 1):
        ro, rt = regions_o[k], regions_t[k]
        rb = None if regions_b is None else regions_b[k]
        order = ro if ro == rt else rt if ro == rb else ro if rt == rb else None
        if order is not None and rb is not None:  # a zone one side removed must be the base's on the other side
            if any(key not in order and (kept := ou.get(key) or tu.get(key)) is not None and
                   kept.text != bu[key].text for key in rb):
                order = None
        if order is not None:
            for key in order:
                planned, n = _plan_one(key, b, o, t, ou, tu, bu)
                out.append(planned)
                added += n
        else:
            text_t = "".join(tu[key].text for key in rt)
            text_b = None if rb is None else "".join(bu[key].text for key in rb)
            after = next((ou[key] for key in anchors[k:] if ou[key].level is not None), None)
            where = " at the end of the file" if after is None else f" before {_what(after)}"
            what = f"the containers {'added or removed on both sides' if rb is not None else 'that differ'}{where}"
            units = [ou[key] for key in ro]
            if not units:
                out.append(_Planned(("region", k), None, "", (), (text_b, text_t, what), 0))
            for n, unit in enumerate(units):  # the region's level is None: it is more than one zone
                out.append(_Planned(unit.key, None if n == 0 else unit.level, unit.text, o.head_lines(unit),
                                    (text_b, text_t, what) if n == 0 else None, len(units) if n == 0 else 1))
        if k < len(anchors):
            planned, n = _plan_one(anchors[k], b, o, t, ou, tu, bu)
            out.append(planned)
            added += n
    return out, added


def _regions(keys: list[tuple[object, ...]], common: set[tuple[object, ...]]) -> list[list[tuple[object, ...]]]:
    """``keys`` cut at the ``common`` ones: the keys before the first, between each two, and after the last."""
    out: list[list[tuple[object, ...]]] = [[]]
    for key in keys:
        if key in common:
            out.append([])
        else:
            out[-1].append(key)
    return out


def _compose(units: list[_Planned], eol: str, labels: tuple[str, str, str], *,
             resolve: bool) -> tuple[str, tuple[ConflictRegion, ...]]:
    """The result's text; ``resolve``: each conflict as OURS (what the re-check checks)."""
    out = _Out(eol, labels, [], conflicts=[])
    skip = 0
    for k, unit in enumerate(units):
        if skip:
            skip -= 1
        elif unit.clash is None or resolve:
            out.add(unit.text)
        else:
            base, theirs, what = unit.clash
            ours = "".join(u.text for u in units[k:k + unit.span])
            skip = max(unit.span - 1, 0)
            out.conflict(ours, base, theirs, unit.level, what)
    return "".join(out.parts), tuple(out.conflicts or ())


def _recheck(text: str, units: list[_Planned], b: _Side | None, o: _Side, t: _Side) -> str | None:
    """Why the merged text is not accepted (§5.5), or None: no new diagnostic, the planned units and headers, and
    every [P1]-[P3] zone a zone of one side."""
    m = _side(text)
    units = [u for u in units if u.span]  # a conflict region where OURS has no zone holds nothing of it
    have = Counter(d.code for d in m.doc.diagnostics)
    oc, tc = Counter(d.code for d in o.doc.diagnostics), Counter(d.code for d in t.doc.diagnostics)
    bc = Counter(d.code for d in b.doc.diagnostics) if b is not None else Counter[str]()
    for code, n in have.items():
        if n > max(oc[code], tc[code], oc[code] + tc[code] - bc[code]):
            line = next(d.line for d in m.doc.diagnostics if d.code == code)
            return f"the merged text would add {code} (line {line})"
    if m.units is None or [u.key for u in m.units] != [u.key for u in units]:
        return "the merged text would cut into other zones than the two sides"
    for unit, plan in zip(m.units, units):
        if unit.text != plan.text or m.head_lines(unit) != plan.heads:
            return f"the merged text would read as other structure in {_what(unit)} (line {unit.first_line})"
    strict = {u.text for side in (o, t) for u in (side.units or ()) if u.level is not None and u.level <= 3}
    for unit in m.units:
        if unit.level is not None and unit.level <= 3 and unit.text not in strict:
            return f"the [P{unit.level}] zone at line {unit.first_line} would equal neither side"
    return None


def _whole_file(o: str, b: str | None, t: str, eol: str, labels: tuple[str, str, str], reason: str) -> MergePlan:
    out = _Out(eol, labels, [], conflicts=[])
    out.conflict(o, b, t, None, "the whole file")
    return MergePlan("conflict", "".join(out.parts).encode("utf-8"), tuple(out.conflicts or ()), 0, reason)


# -- the fast path: the zone index and one small parse per changed journal -------------------------
def _fast(base: bytes, ours: bytes, theirs: bytes) -> tuple[bytes, int] | None:
    """The merge when the three have the same zones and every zone THEIRS changed is a journal appended to (the
    common case of two devices): cut by the structural lines alone (:mod:`.skeleton`), each journal merged from
    its new entries alone (:func:`_tail_merges`, G33), or else parsed alone in its context and re-checked by the
    writer's zone check (:func:`.verify.incremental_check`, proven equal to a full re-parse where it decides).
    None when anything needs the full path (G13)."""
    if b"\r" in base or b"\r" in ours or b"\r" in theirs:
        return None
    cut = _skeleton_units([base, ours, theirs])
    if cut[0] is None or cut[1] is None or cut[2] is None:
        return None
    (bi, bu), (oi, ou), (ti, tu) = cut[0], cut[1], cut[2]
    if not bi.file_type or bi.file_type != oi.file_type or oi.file_type != ti.file_type:
        return None
    if [u[0] for u in bu] != [u[0] for u in ou] or [u[0] for u in ou] != [u[0] for u in tu]:
        return None
    units = [(zi, oz, tz, base[bs:be], ours[os_:oe], theirs[ts:te])
             for (_k0, zi, bs, be), (_k1, oz, os_, oe), (_k2, tz, ts, te) in zip(bu, ou, tu)]
    parts: list[bytes] = []  # one per unit
    whole: list[int] = []  # the units only whole-zone parses can merge
    tails: list[_Tail] = []
    for k, (zi, oz, tz, xb, xo, xt) in enumerate(units):
        parts.append(xo)
        if xo == xt or xt == xb:
            continue
        if zi is None or oz is None or tz is None or oi.zone(oz).level != 4:
            return None
        tail = _tail_cut(bi, zi, k, xb, xo, xt)
        if tail is None:
            whole.append(k)
        else:
            tails.append(tail)
    added = 0
    for tail, done in zip(tails, _tail_merges(bi, tails)):
        if done is None:
            whole.append(tail.unit)
        else:
            parts[tail.unit] = units[tail.unit][5] if tail.core_o is None else done[0]
            added += done[1]
    if sum(len(units[k][4]) for k in whole) * _FAST_SHARE > len(ours):
        return None  # six small parses of most of the file cost more than the four parses of the full path
    for k in sorted(whole):
        zi, oz, tz, xb, xo, xt = units[k]
        assert zi is not None and oz is not None and tz is not None
        merged = _fast_journal(bi, zi, xb, oi, oz, xo, ti, tz, xt)
        if merged is None:
            return None
        text, n, heads = merged
        again = _mini(oi, oz, text)  # the merged zone reads as exactly the planned entries (G8)
        if again is None or again[0].head_lines(again[1]) != heads:
            return None
        if not _zone_accepts(oi, oz, xo.decode("utf-8"), text):
            return None
        parts[k] = text.encode("utf-8")
        added += n
    return b"".join(parts), added


#: The fast path is taken when the journals both sides changed are at most 1/_FAST_SHARE of OURS: each is parsed
#: six times (base, ours, theirs, the result, and the zone re-check's two), the full path parses the file four.
_FAST_SHARE = 2
_SkeletonUnit = tuple[tuple[object, ...], int | None, int, int]  # key, zone number (None: between zones), span


def _skeleton_units(datas: list[bytes]) -> list[tuple[ZoneIndex, list[_SkeletonUnit]] | None]:
    """The units of G1 of each input from the structural lines alone (one parse for inputs whose structural lines
    are the same bytes), each zone checked against its tags; None for an input when unsure."""
    from .skeleton import skeleton_indexes
    return [_cut(index, data) for index, data in zip(skeleton_indexes(datas), datas)]


def _cut(index: ZoneIndex, data: bytes) -> tuple[ZoneIndex, list[_SkeletonUnit]] | None:
    from .snapshot import FileSnapshot
    snap = FileSnapshot("", data)
    units: list[_SkeletonUnit] = []
    seen: Counter[tuple[object, ...]] = Counter()
    prev = 0
    for i in range(len(index)):
        zone = index.zone(i)
        if zone.close_end is None or not snap.sane(zone):
            return None
        name = (zone.level, container_lines(index, zone))
        seen[name] += 1
        key = (*name, seen[name])
        units.append((("gap", key), None, prev, zone.start))
        units.append((key, i, zone.start, zone.close_end))
        prev = zone.close_end
    units.append((("gap", "end"), None, prev, len(data)))
    return index, units


def _mini(index: ZoneIndex, zone_number: int, zone_text: str) -> tuple[_Side, _Unit] | None:
    """A zone parsed alone in its context (:func:`.verify.mini_prefix`): the side and the zone's unit."""
    from .verify import mini_prefix
    head, _lines = mini_prefix(index, index.zone(zone_number))
    side = _side(head + zone_text)
    if side.units is None or len(side.units) < 2:
        return None
    unit = side.units[-2]
    return (side, unit) if unit.level == 4 and unit.text == zone_text else None


def _fast_journal(bi: ZoneIndex, bz: int, xb: bytes, oi: ZoneIndex, oz: int, xo: bytes, ti: ZoneIndex, tz: int,
                  xt: bytes) -> tuple[str, int, tuple[str, ...]] | None:
    """One journal merged by G3 (THEIRS' zone when OURS' is the base's), from the three zones parsed alone."""
    mb, mo, mt = (_mini(bi, bz, xb.decode("utf-8")), _mini(oi, oz, xo.decode("utf-8")),
                  _mini(ti, tz, xt.decode("utf-8")))
    if mb is None or mo is None or mt is None:
        return None
    if xo == xb:
        o, t = mo[0].within(mo[1]), mt[0].within(mt[1])
        return xt.decode("utf-8"), len(t) - len(o), mt[0].head_lines(mt[1])
    return _merge_journal(mb, mo, mt)


def _zone_accepts(index: ZoneIndex, zone_number: int, old_zone: str, new_zone: str) -> bool:
    """Whether the writer's zone re-check (§5.5) accepts OURS' zone becoming ``new_zone``: only H6 entries of its
    container added, no new diagnostic, the zone ending where it did (undecided counts as no)."""
    from .offsets import CharOffset
    from .verify import Edit, Expect, incremental_check
    zone = index.zone(zone_number)
    start, old_len, new_len = _changed_lines(old_zone, new_zone)
    line = zone.line + old_zone.count("\n", 0, start)
    edit = Edit(CharOffset(start), old_len, new_len, line, old_zone.count("\n", start, start + old_len),
                new_zone.count("\n", start, start + new_len))
    owner_line = 0 if zone.owner is None else index.h_line[zone.owner]
    verdict = incremental_check(index, zone, old_zone, new_zone, edit, Expect(entries=None, owner_line=owner_line),
                                owner=zone.owner)
    return verdict is not None and verdict.ok


def _changed_lines(old: str, new: str) -> tuple[int, int, int]:
    """Where two texts of one zone differ, in whole lines: the start, and the old and new lengths up to the closing
    tag line (which both keep)."""
    lo, hi = 0, min(len(old), len(new))  # the longest common prefix, by halving (each test one C comparison)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[lo:mid] == new[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    p = lo
    start = old.rfind("\n", 0, p) + 1
    close_old = old.rstrip("\n").rfind("\n") + 1
    close_new = new.rstrip("\n").rfind("\n") + 1
    start = min(start, close_old, close_new)
    return start, close_old - start, close_new - start


# -- journals merged from their new entries alone (G33) -----------------------------------------------
#: A line that may change the parser's state across an H6 entry inside a journal: an H1-H5 header (refused in a
#: [P4] zone, it still sits on the physical stack) or a permission tag (a nested one is remembered).
_STATEFUL_LINE = re.compile(rb"\n[ \t]{0,3}(?:#{1,5}(?!#)|\[/?P\d)")  # the newline before it


def _core_end(data: bytes) -> int:
    """Where ``data`` ends without its trailing blank lines and last line ending (as :func:`_core`), on bytes."""
    last = len(data.rstrip())
    end = data.find(b"\n", last)
    return len(data) if end < 0 else end


@dataclass(frozen=True)
class _Tail:
    """One journal both sides (or THEIRS alone) appended to, cut on the bytes (G33): the base's text up to its last
    non-blank line (``prefix``), then on OURS blank lines (``sep_o``), its new entries and its blank lines before the
    closing line; THEIRS' new entries; the base's structural lines when it has a header or tag line."""

    unit: int
    zone: int  # the base's zone number
    open_line: str
    close: str
    prefix: bytes
    sep_o: bytes
    core_o: bytes | None  # None: OURS left the zone as the base's
    trail_o: bytes
    core_t: bytes
    structural: bytes | None


def _tail_cut(bi: ZoneIndex, bz: int, unit: int, xb: bytes, xo: bytes, xt: bytes) -> _Tail | None:
    """The journal's cut (:class:`_Tail`), or None when a side is not the base's text with entries after it."""
    zone = bi.zone(bz)
    if zone.inline or zone.close_start is None or any(bi.headers.type_of(h) == "state_registry" for h in zone.context):
        return None
    open_line = xb[:zone.inner_start - zone.start]
    close = xb[zone.close_start - zone.start:]
    body = xb[len(open_line):len(xb) - len(close)]
    prefix = open_line[:-1] if not body.strip() else open_line + body[:_core_end(body)]
    split = [_split_tail(prefix, close, x) for x in (xo, xt)]
    if split[0] is None or split[1] is None:
        return None
    (sep_o, core_o, trail_o), (_sep_t, core_t, _trail_t) = split[0], split[1]
    if not core_t or (not core_o and xo != xb):
        return None
    stateful = _STATEFUL_LINE.search(xb, len(open_line) - 1, len(xb) - len(close))  # from the opening line's end
    structural = _structural_lines(body) if stateful is not None else None
    return _Tail(unit, bz, open_line.decode("utf-8"), close.decode("utf-8"), prefix, sep_o, core_o or None, trail_o,
                 core_t, structural)


def _tail_merges(bi: ZoneIndex, tails: list[_Tail]) -> list[tuple[bytes, int] | None]:
    """Each journal of ``tails`` merged by G3 from the new entries alone (G33), or None for one that the whole
    zone must decide (:func:`_fast_journal`).

    Nothing in the base's part of a journal can carry into the entries after it: it holds no H1-H5 header and no
    tag that the parser reads as one (its structural lines alone, as :mod:`.skeleton` reads them), and it ends
    outside a fence or a comment (the base's closing tag after it is a tag); an H6 header line closes every other
    open block.  So the new entries parse in the journal's context alone (:func:`verify.mini_prefix`) exactly as in
    the file, and zones close every block but the logical stack (§2.3): every journal's new entries of both sides
    are read in one parse (:func:`_read_zones`), the merged ones re-checked in a second.  Each must read as exactly
    the planned H6 entries and nothing else, add no fact of the file, and the merged ones no code more often than
    both sides' new entries together (G8)."""
    quick = _quick_merges(bi, tails)
    rest = [k for k, done in enumerate(quick) if done is None]
    for k, done in zip(rest, _read_merges(bi, [tails[k] for k in rest])):
        quick[k] = done
    return quick


def _quick_merges(bi: ZoneIndex, tails: list[_Tail]) -> list[tuple[bytes, int] | None]:
    """The journals whose new entries need one parse, of the result alone: each side's new entries cut at their
    H6 lines on the bytes, ordered by the dates those lines give (:func:`core.headers.classify_header`), and the
    merged entries (THEIRS' new ones, when OURS added none) parsed as in :func:`_read_merges`, where they must read
    as exactly the planned entries with the planned dates and titles and, when both sides added, no diagnostic.
    None for a journal where any of it does not hold (:func:`_read_merges` decides it)."""
    memory = bi.file_type == "external_memory"
    plans: list[tuple[int, str, tuple[tuple[str, str | None, str | None], ...], int, bool]] = []
    zones: list[tuple[int, list[tuple[str, bool]]]] = []
    for k, tail in enumerate(tails):
        if tail.core_o is None:
            text = tail.open_line + tail.core_t.decode("utf-8") + "\n" + tail.close
            entries = _byte_entries(tail.core_t, memory)
            if entries is None:
                continue
            heads = tuple((e.core.split("\n", 1)[0], e.date, e.title or None) for e in entries)
            plans.append((k, text, heads, len(entries), False))
        else:
            new_o, new_t = _byte_entries(tail.core_o, memory), _byte_entries(tail.core_t, memory)
            if new_o is None or new_t is None or any(e.date is None for e in (*new_o, *new_t)):
                continue
            cores: dict[Key, str] = {}
            if any(cores.setdefault(_key(e), e.core) != e.core for e in (*new_o, *new_t)):
                continue  # duplicates by the writer's key with other bytes: the parsed entries decide
            text, added, _heads = _merge_entries(tail.open_line, [], new_o, new_t, "\n", tail.close, "\n")
            by_head = {e.core.split("\n", 1)[0]: e for e in (*new_o, *new_t)}
            heads = tuple((h, by_head[h].date, by_head[h].title or None) for h in _heads)
            plans.append((k, text, heads, added, True))
        texts = [(text, True)]
        if tail.structural is not None:
            texts.append((tail.open_line + tail.structural.decode("utf-8") + tail.close, False))
        zones.append((tail.zone, texts))
    out: list[tuple[bytes, int] | None] = [None] * len(tails)
    for (k, text, heads, added, both), read in zip(plans, _read_zones(bi, zones)):
        if read is None:
            continue
        side, unit, codes = read[0]
        got = tuple((side.line(h.line), h.date, h.title) for h in side.within(unit))
        if got != heads or (both and codes):
            continue
        tail = tails[k]
        if not both:
            out[k] = b"", added
            continue
        merged = text[len(tail.open_line):len(text) - len(tail.close) - 1].encode("utf-8")
        out[k] = tail.prefix + tail.sep_o + merged + tail.trail_o + tail.close.encode("utf-8"), added
    return out


#: A line the parser may read as an H6 (§4.1: at most three spaces of indentation, six hashes).
_H6_LINE = re.compile(rb"^ {0,3}######(?!#)", re.MULTILINE)


def _byte_entries(core: bytes, memory: bool) -> list[_Entry] | None:
    """``core`` cut at its H6 lines into entries, each with the date and title its header line gives; None when
    it does not start with one or a line is not read as an H6 of its own."""
    from ..core.headers import classify_header, read_header
    starts = [m.start() for m in _H6_LINE.finditer(core)]
    if not starts or starts[0] != 0:
        return None
    out: list[_Entry] = []
    for k, start in enumerate(starts):
        raw = core[start:starts[k + 1] if k + 1 < len(starts) else len(core)].decode("utf-8")
        entry = _core(raw)
        line = entry.split("\n", 1)[0]
        stripped = line.lstrip(" ")
        level, text, text_column, _findings = read_header(line, stripped, len(line) - len(stripped))
        if level != 6:
            return None
        header = classify_header(6, text, len(line) - len(stripped) + 1, memory, False, text_column)
        if header.kind != "log":
            return None
        out.append(_Entry(entry, raw[len(entry):], header.date, header.title or ""))
    return out


def _read_merges(bi: ZoneIndex, tails: list[_Tail]) -> list[tuple[bytes, int] | None]:
    """The journals merged from both sides' new entries as the parser reads them (one parse for all), the merged
    ones re-checked in a second."""
    zones: list[tuple[int, list[tuple[str, bool]]]] = []
    for tail in tails:
        texts = [(tail.open_line + tail.core_t.decode("utf-8") + "\n" + tail.close, True)]
        if tail.core_o is not None:
            texts.append((tail.open_line + tail.core_o.decode("utf-8") + "\n" + tail.close, True))
        if tail.structural is not None:
            texts.append((tail.open_line + tail.structural.decode("utf-8") + tail.close, False))
        zones.append((tail.zone, texts))
    reads = _read_zones(bi, zones)
    out: list[tuple[bytes, int] | None] = [None] * len(tails)
    pending: list[tuple[int, str, tuple[str, ...], int, Counter[str]]] = []
    for k, (tail, read) in enumerate(zip(tails, reads)):
        if read is None:
            continue
        read_t = read[0]
        if tail.core_o is None:  # THEIRS appended, OURS left the zone as the base's: THEIRS' zone as it is (G2)
            out[k] = b"", len(read_t[0].within(read_t[1]))
            continue
        read_o = read[1]
        if any(h.date is None for r in (read_o, read_t) for h in r[0].within(r[1])):
            continue  # an undated entry takes a date from the base's entries: the whole zone decides
        empty = _empty_zone(tail, read_o[0].doc)
        journal = _merge_journal(empty, (read_o[0], read_o[1]), (read_t[0], read_t[1]))
        if journal is None or not journal[0].startswith(tail.open_line) or not journal[0].endswith(
                "\n" + tail.close):
            continue
        pending.append((k, journal[0], journal[2], journal[1], read_o[2] + read_t[2]))
    again = _read_zones(bi, [(tails[k].zone, [(text, True)]) for k, text, _h, _n, _c in pending])
    for (k, text, heads, added, allowed), read in zip(pending, again):
        if read is None or read[0][0].head_lines(read[0][1]) != heads:
            continue  # the merged entries read as other structure (G8)
        if any(n > allowed[code] for code, n in read[0][2].items()):
            continue  # a diagnostic neither side's new entries have (G8)
        tail = tails[k]
        merged = text[len(tail.open_line):len(text) - len(tail.close) - 1].encode("utf-8")
        out[k] = tail.prefix + tail.sep_o + merged + tail.trail_o + tail.close.encode("utf-8"), added
    return out


def _structural_lines(body: bytes) -> bytes:
    """The lines of a zone's text that :mod:`.skeleton` keeps (headers, tags, fences, comments), in order."""
    from .skeleton import _COMMENT_END, _KEPT_LINE
    text = b"\n" + body
    starts = {m.start() + 1 for m in _KEPT_LINE.finditer(text)}
    starts.update(text.rfind(b"\n", 0, m.start()) + 1 for m in _COMMENT_END.finditer(text))
    return b"".join(text[k:text.find(b"\n", k) + 1] for k in sorted(starts))


def _split_tail(prefix: bytes, close: bytes, zone: bytes) -> tuple[bytes, bytes, bytes] | None:
    """A side's zone as (blank lines after the base's prefix, its new entries, its blank lines before the closing
    line); None when it is not the base's prefix, new text and the base's closing line."""
    if not zone.startswith(prefix) or not zone.endswith(close) or len(zone) < len(prefix) + len(close):
        return None
    rest = zone[len(prefix):len(zone) - len(close)]
    if rest and not rest.startswith(b"\n"):
        return None  # the base's last line itself changed
    core = rest.lstrip(b"\n")
    sep = rest[:len(rest) - len(core)]
    end = _core_end(core)
    if core and (end == len(core) or _CONTROL.search(core[:end]) is not None):
        return None  # a zone's text ends with a line ending; a counted character is the whole file's (§1)
    return sep, core[:end], core[end:]


#: What a permission tag read as text leaves behind (a nested tag is remembered until its closing tag).
_TAG_CODES = frozenset(("NESTED_PERMISSION_BLOCK", "MISMATCHED_PERMISSION_BLOCK", "INVALID_PERMISSION_LEVEL"))
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # syntax.CONTROL_CHARS, as bytes
_Read = tuple[_Side, _Unit, Counter[str]]


def _empty_zone(tail: _Tail, doc: Document) -> tuple[_Side, _Unit]:
    """The journal with no text, the base of the new entries: no parse (it holds no header; ``doc`` stands for it,
    never read)."""
    text = tail.open_line + tail.close
    return _Side(text, doc, None, _line_starts(text), (), (), "\n"), _Unit((), 4, text, 1, 2)


def _read_zones(index: ZoneIndex, journals: list[tuple[int, list[tuple[str, bool]]]]) -> list[list[_Read] | None]:
    """Zone texts of journals of ``index`` (zone number; each text, and whether it must be H6 entries from its
    first line on or hold no header and no tag read as one) parsed in one mini-document: each journal's zones after
    the headers of its context that the one before did not have (the logical stack, as :func:`verify.mini_prefix`
    gives it to one zone).  For each journal, each entries zone read, or None when a zone reads as anything else;
    all None when the document cannot be trusted (a zone not where it was put, a fact of the file added)."""
    if not journals:
        return []
    ft = index.file_type
    parts = [f"# x [{ft}]\n\n" if ft else "# x\n\n"]
    line = parts[0].count("\n") + 1
    stack: tuple[int, ...] = ()
    spans: list[tuple[int, int, int, int, str, bool]] = []  # first, last line, journal, zone, text, entries
    for j, (zone_number, texts) in enumerate(journals):
        context = index.zone(zone_number).context
        same = 0
        while same < min(len(stack), len(context)) and stack[same] == context[same]:
            same += 1
        if same < len(stack) and same == len(context):
            return [None] * len(journals)  # the stack cannot shrink without a header (never in a file)
        if same < len(context):
            declared = [index.headers.text_of(h).rstrip("\r") + "\n" for h in context[same:]]
            parts += ["[P1]\n", *declared, "[/P1]\n"]
            line += len(declared) + 2
        stack = context
        for z, (text, entries) in enumerate(texts):
            last = line + text.count("\n") - 1
            spans.append((line, last, j, z, text, entries))
            parts.append(text)
            line = last + 1
    text = "".join(parts)
    doc = parse(text, tree=True)
    starts = _line_starts(text)
    headings = tuple(sorted(_headings(doc), key=lambda h: h.line))
    side = _Side(text, doc, None, starts, headings, tuple(h.line for h in headings), "\n")
    firsts = [sp[0] for sp in spans]
    blocks = {b.line: b for b in doc.blocks if b.type == "permission_block"}
    codes: list[Counter[str]] = [Counter() for _ in spans]
    for d in doc.diagnostics:
        k = bisect.bisect_right(firsts, d.line) - 1
        if k >= 0 and d.line <= spans[k][1]:
            codes[k][d.code] += 1
    if not _facts_outside(doc, spans):
        return [None] * len(journals)
    out: list[list[_Read] | None] = [[] for _ in journals]
    for k, (first, last, j, _z, zone_text, entries) in enumerate(spans):
        block = blocks.get(first)
        unit = _Unit((), 4, zone_text, first, last)
        if block is None or block.end_line != last or starts[first - 1] + len(zone_text) != (
                starts[last] if last < len(starts) else len(text)):
            return [None] * len(journals)  # the zone does not close where it was put: what follows cannot be trusted
        if out[j] is None:
            continue
        heads = side.within(unit)
        owners = {doc.h6_owner.get(h.line) for h in heads}
        bad = any(_structural(b) for b in block.walk() if b is not block) or len(owners) > 1
        if entries:
            bad = bad or not heads or heads[0].line != first + 1
        else:
            bad = bad or bool(heads) or any(code in _TAG_CODES for code in codes[k])
        if bad:
            out[j] = None
        elif entries:
            reads = out[j]
            assert reads is not None
            reads.append((side, unit, codes[k]))
    return out


def _facts_outside(doc: Document, spans: list[tuple[int, int, int, int, str, bool]]) -> bool:
    """Whether no module, nucleus, state, connection or registry of ``doc`` comes from a line of the zones read."""
    firsts = [sp[0] for sp in spans]

    def inside(n: int | None) -> bool:
        k = bisect.bisect_right(firsts, n or 0) - 1
        return n is not None and k >= 0 and n <= spans[k][1]
    if doc.registry is not None:
        return False
    for m in doc.modules:
        if inside(m.line) or inside(m.state_line) or any(inside(c.line) for c in m.connections):
            return False
    return not any(inside(n.line) or any(inside(c.line) for c in n.connections) for n in doc.nuclei)


def _structural(block: Block) -> bool:
    """Whether ``block`` is more than an H6 entry or text inside a journal (verify.compare's test)."""
    from ..core.nodes import Quote, Rule
    if isinstance(block, Heading):
        return block.level != 6 or block.type != "log" or block.refused
    return isinstance(block, Rule) or (isinstance(block, Quote) and bool(block.severity)) or \
        block.type == "permission_block"
