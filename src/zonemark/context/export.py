"""The layer as text for a chat or a system prompt (§3, §7.3.1, §N.8): ``zonemark context``.

What goes in, in this order (layer order — relative path — inside each group):

1. the layer's ``[reminder]``, whole (its inactive modules stay: the reminder is one text and
   its registry tells the AI their state);
2. every ``[external_module]`` file with at least one ``## MODULE`` whose *effective* state
   (registry applied, §7.3.1) is ``active`` — or with no ``## MODULE`` at all (a file of
   nuclei, §7.4.3, has no state to be off);
3. every ``[external_memory]`` file.

Left out and named in the header comment: external modules whose modules are all inactive
or have no state, files not merged because of an id conflict (§7.1.1), files without a file
type, a second reminder.  Each file is the user's text as written — zone tags included, so the
AI sees what it may write — with a BOM removed and CR LF turned into LF; temporary ids never
appear (they are never in files, and the header names id-less modules by name).

The header: the standard pin ``<!-- IllAIra-Standard: v1.13 -->`` (§N.8), then one comment
with the layer name, the token estimate (:mod:`.tokens`), the files included, the files left
out and why, and what the budget left out.  Each file is preceded by ``<!-- file: REL -->``.

**Budget** (tokens, :func:`~zonemark.context.tokens.estimate_tokens` of the whole output):
when over, whole H6 entries are left out — never cut — in this order: entries of external
memories, oldest first, then the journal entries of the reminder and of external modules,
oldest first.  Oldest means by the date of the header (ISO text order); entries without a
date go after the dated ones, in layer order (an undated mnemonic node is more often a
standing fact than an event).  Only entries in ``[P3]``–``[P5]`` zones are ever left out:
``[P1]``/``[P2]`` content, and every non-entry line, always stays.  When the ``[P1]``/``[P2]``
content alone is over the budget — or the output still is with every entry left out — the
export is refused (:class:`ContextRefused`) with the numbers.

The same layer gives the same bytes: nothing depends on the time, the machine or the path of
the layer.
"""

from __future__ import annotations

import math
import os
import re
from array import array
from dataclasses import dataclass
from fractions import Fraction
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .. import STANDARD_VERSION
from ..core.scanner import scan_structure
from ..core.tree import HeadingFrame, ZoneFrame
from ..layer.loader import Layer, LayerFile, LayerModule
from ..render.formats import counted
from .tokens import ASCII_PER_TOKEN, NARROW_PER_TOKEN, weight

ESTIMATE_NOTE = (f"offline estimate: {ASCII_PER_TOKEN} ASCII characters, {NARROW_PER_TOKEN} other characters"
                 f" below U+0800, 1 character from U+0800 up per token")


class ContextRefused(Exception):
    """The export cannot fit the budget without dropping what is never dropped; one line."""


@dataclass(frozen=True, slots=True)
class ContextFile:
    """One file of the layer and what the export did with it."""

    path: str
    file_type: str | None
    included: bool
    reason: str | None  # why it was left out
    tokens: int  # estimate of its part of the output (0 when left out)
    entries_left_out: int

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "fileType": self.file_type, "included": self.included, "reason": self.reason,
                "tokens": self.tokens, "entriesLeftOut": self.entries_left_out}


@dataclass(frozen=True, slots=True)
class ContextResult:
    """The text to paste (Markdown) and what it holds."""

    text: str
    layer: str
    tokens: int
    budget: int | None
    files: tuple[ContextFile, ...]
    left_out_modules: tuple[str, ...]
    entries_left_out: int

    def to_dict(self) -> dict[str, Any]:
        return {"standardVersion": STANDARD_VERSION, "layer": self.layer, "tokens": self.tokens,
                "budget": self.budget, "estimate": ESTIMATE_NOTE, "files": [f.to_dict() for f in self.files],
                "leftOut": {"modules": list(self.left_out_modules), "entries": self.entries_left_out},
                "text": self.text}


@dataclass(frozen=True, slots=True)
class _Entry:
    file_index: int
    rel: str
    start: int  # 0-based first line
    stop: int  # 0-based line after the entry (trailing blank lines included)
    date: str | None
    memory: bool
    weight: Fraction


@dataclass(frozen=True, slots=True)
class _Part:
    lf: LayerFile
    text: str  # the normalised text: the file's own string when it needs no change (B20)


#: The line breaks of ``str.splitlines`` (a CR LF is one): an entry's lines are counted as the export always
#: counted them, so a file with a lone CR or a U+2028 leaves out the same lines as before (B20).
_LINE_BREAK = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def _comment_text(text: str) -> str:
    """Text safe inside an HTML comment (no ``--``, no line breaks)."""
    text = " ".join(text.split())
    while "--" in text:
        text = text.replace("--", "- -")
    return text


def _module_label(m: LayerModule) -> str:
    info = m.info
    if m.temporary or info.id is None:
        return f"MODULE: {info.name}"
    return f"MODULE {info.id}: {info.name}"


def _select(layer: Layer) -> tuple[list[LayerFile], list[ContextFile], list[str]]:
    """Included files in export order, the left-out files, and the inactive modules left out."""
    reminders: list[LayerFile] = []
    modules: list[LayerFile] = []
    memories: list[LayerFile] = []
    left_out: list[ContextFile] = []
    left_modules: list[str] = []
    by_file: dict[str, list[LayerModule]] = {}
    for m in layer.modules:
        if m.is_module and not m.info.ignored:
            by_file.setdefault(m.file, []).append(m)
    for lf in layer.files:
        kind = lf.file_type
        if not lf.merged:
            left_out.append(ContextFile(lf.rel, kind, False, "not merged: an id conflict with another file (§7.1.1)",
                                        0, 0))
        elif kind is None:
            left_out.append(ContextFile(lf.rel, kind, False, "no file type in its H1 (§3.2)", 0, 0))
        elif kind == "reminder":
            if lf.rel == layer.reminder:
                reminders.append(lf)
            else:
                left_out.append(ContextFile(lf.rel, kind, False, f"a second [reminder] (the layer's is"
                                            f" {layer.reminder})", 0, 0))
        elif kind == "external_module":
            mods = by_file.get(lf.rel, [])
            if not mods or any(m.effective_state == "active" for m in mods):
                modules.append(lf)
                continue
            states = []
            for m in mods:
                state = m.effective_state or "no state"
                reg = None if m.state_source is None else m.state_source.registry
                where = "" if reg is None else f" (registry of {reg})"
                states.append(f"{_module_label(m)} is {state}{where}")
                left_modules.append(f"{_module_label(m)} ({lf.rel}): {state}")
            left_out.append(ContextFile(lf.rel, kind, False, "; ".join(states), 0, 0))
        else:
            memories.append(lf)
    return reminders + modules + memories, left_out, left_modules


def _normalised(lf: LayerFile) -> str:
    """The file's text with a BOM removed, CR LF made LF and a last line break; the source itself when it
    already is (``replace`` gives back the string it finds nothing in)."""
    text = lf.doc.source
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n")
    if text and not text.endswith("\n"):
        text += "\n"
    return text


def _line_starts(text: str) -> "array[int]":
    """The offset of each line of ``text`` as ``splitlines`` cuts it, and the text's length after the last."""
    starts = array("q", [0])
    starts.extend(m.end() for m in _LINE_BREAK.finditer(text))
    if starts[-1] != len(text):
        starts.append(len(text))
    return starts


class _Extents:
    """One scan of a file's headers and zones (:func:`~zonemark.core.scanner.scan_structure`, no tree): each
    log entry of a [P3]-[P5] zone with the last line of the header block the tree would hold (it ends where the
    next header starts; in a zone, before the zone's closing tag; outside, before a zone opens; else at the end
    of the file), and the lines of the [P1]/[P2] zones (a zone's block runs to the line before the next block:
    its closing tag and the blank lines after it)."""

    def __init__(self, source: str, line_count: int) -> None:
        self.source = source
        self.line_count = line_count
        self.entries: list[tuple[int, int, str | None]] = []  # (line, end line, date) of the entries kept
        self.zones: list[tuple[int, int]] = []  # (first line, last line) of the [P1]/[P2] zone blocks
        self.pending: list[tuple[int, int | None, str | None]] = []  # entries whose end is not known yet

    def _end(self, line: int, plevel: int | None, date: str | None, end_line: int) -> None:
        if plevel in (3, 4, 5):
            self.entries.append((line, max(end_line, line), date))

    def header(self, frame: HeadingFrame) -> None:
        if self.pending:
            kept: list[tuple[int, int | None, str | None]] = []
            for line, plevel, date in self.pending:
                if plevel is not None or frame.plevel is None:
                    self._end(line, plevel, date, frame.line - 1)
                else:  # an entry outside the zones, and this header is in a zone opened since
                    kept.append((line, plevel, date))
            self.pending = kept
        if not frame.refused and frame.level == 6 and frame.header.kind == "log":
            self.pending.append((frame.line, frame.plevel, frame.header.date))

    def zone(self, frame: ZoneFrame) -> None:
        for line, plevel, date in self.pending:
            if plevel is not None:  # in this zone: it ends before the closing tag (at the end of the file)
                self._end(line, plevel, date, self.line_count if frame.tail is None else frame.tail_line - 1)
            else:  # before it, outside any zone: it ends before the zone opens
                self._end(line, plevel, date, frame.line - 1)
        self.pending = []
        if frame.plevel in (1, 2):
            end = (self.line_count if frame.tail is None
                   else _zone_end(self.source, frame.tail, frame.tail_line, self.line_count))
            self.zones.append((frame.line, end))

    def finish(self) -> None:
        for line, plevel, date in self.pending:
            self._end(line, plevel, date, self.line_count)
        self.pending = []


def _extents(part: _Part) -> _Extents:
    doc = part.lf.doc
    found = _Extents(doc.source, doc.line_count)
    scan_structure(doc.source, found.header, found.zone)
    found.finish()
    return found


def _zone_end(source: str, tail: int, closing: int, line_count: int) -> int:
    """The last line of the zone block closed on line ``closing`` (at offset ``tail``): the blank lines after
    the closing tag are the zone's, up to the next line that starts a block (§13.1: blocks partition the file;
    a line is blank as the scanner reads it, its CR of a CR LF aside)."""
    line = closing
    pos = source.find("\n", tail)
    while pos != -1 and line < line_count:
        nxt = source.find("\n", pos + 1)
        s = source[pos + 1:len(source) if nxt == -1 else nxt]
        if s.endswith("\r"):
            s = s[:-1]
        if s and not s.isspace():
            break
        line += 1
        pos = nxt
    return line


def _weight_of(text: str, starts: "array[int]", start: int, stop: int) -> Fraction:
    """The weight of the lines ``start`` to ``stop`` (0-based, as ``splitlines`` counts them)."""
    stop = min(stop, len(starts) - 1)
    if start >= stop:
        return Fraction(0)
    return weight(text[starts[start]:starts[stop]])


def _droppable(parts: list[_Part], scans: list[_Extents], starts: dict[int, "array[int]"]) -> list[_Entry]:
    """Entries of [P3]-[P5] zones, in the order they are left out (module docstring)."""
    out = []
    for k, part in enumerate(parts):
        memory = part.lf.file_type == "external_memory"
        lines = _starts_of(starts, k, part.text)
        n = len(lines) - 1
        for line, end_line, date in scans[k].entries:
            start, stop = line - 1, min(end_line, n)
            out.append(_Entry(k, part.lf.rel, start, stop, date, memory, _weight_of(part.text, lines, start, stop)))

    def key(e: _Entry) -> tuple[bool, bool, str, int, int]:
        return (not e.memory, e.date is None, e.date or "", e.file_index, e.start)
    return sorted(out, key=key)


def _starts_of(starts: dict[int, "array[int]"], k: int, text: str) -> "array[int]":
    """The line offsets of file ``k``, read once (``_protected_weight`` and ``_droppable`` both ask)."""
    found = starts.get(k)
    if found is None:
        found = starts[k] = _line_starts(text)
    return found


def _protected_weight(parts: list[_Part], scans: list[_Extents], starts: dict[int, "array[int]"]) -> Fraction:
    """Weight of the [P1]/[P2] zones of the included files (never dropped)."""
    total = Fraction(0)
    for k, part in enumerate(parts):
        lines = _starts_of(starts, k, part.text)
        for line, end_line in scans[k].zones:
            total += _weight_of(part.text, lines, line - 1, end_line)
    return total


def _header(layer: Layer, tokens: int, budget: int | None, parts: list[_Part], left_out: list[ContextFile],
            dropped: list[_Entry]) -> str:
    lines = [f"zonemark context of layer '{layer.name}' (IllAIra Markdown Standard {STANDARD_VERSION}):"
             f" ~{counted(tokens, 'token')} ({ESTIMATE_NOTE})"]
    lines.append("included: " + (", ".join(p.lf.rel for p in parts) or "(none)"))
    for f in left_out:
        lines.append(f"left out: {f.path}: {f.reason}")
    if budget is not None:
        if dropped:
            per_file: dict[str, list[_Entry]] = {}
            for e in dropped:
                per_file.setdefault(e.rel, []).append(e)
            detail = "; ".join(
                f"{rel}: {len(es)}" + (f" ({min(d for d in dates)} to {max(d for d in dates)})"
                                        if (dates := [e.date for e in es if e.date]) else "")
                for rel, es in per_file.items())
            n = len(dropped)
            lines.append(f"budget {counted(budget, 'token')}: {n} older journal entr{'y' if n == 1 else 'ies'} "
                         f"left out, whole, oldest first: {detail}")
        else:
            lines.append(f"budget {counted(budget, 'token')}: nothing left out")
    body = "\n".join(_comment_text(x) for x in lines)
    return f"<!-- IllAIra-Standard: {STANDARD_VERSION} -->\n<!--\n{body}\n-->\n"


def _pieces(part: _Part, gone: list[tuple[int, int]], lines: "array[int] | None") -> list[str]:
    """The file's text as the export writes it: whole, or its runs of lines between the entries left out
    (``gone``: 0-based line ranges, as ``splitlines`` counts them)."""
    text = part.text
    if not gone or lines is None:
        return [text] if text else []
    out = []
    n = len(lines) - 1
    at = 0
    for start, stop in sorted(gone):
        start, stop = min(start, n), min(stop, n)
        if start > at:
            out.append(text[lines[at]:lines[start]])
        at = max(at, stop)
    if at < n:
        out.append(text[lines[at]:])
    return out


def _render(layer: Layer, parts: list[_Part], left_out: list[ContextFile], dropped: list[_Entry],
            budget: int | None, starts: dict[int, "array[int]"]) -> tuple[str, list[int], int]:
    """The export's text, each file's token estimate and the whole text's.  The text is joined once from the
    header and each file's comment and text (its runs of kept lines when entries are left out): no section is
    a string of its own, no line either (B7, B20).  The weights add up exactly (``tokens``), so the total is
    the header's weight and the pieces', never a scan of the whole text again."""
    gone: dict[int, list[tuple[int, int]]] = {}
    for e in dropped:
        gone.setdefault(e.file_index, []).append((e.start, e.stop))
    pieces: list[str] = [""]
    per_file: list[int] = []
    rest = Fraction(0)
    for k, part in enumerate(parts):
        own = [f"\n<!-- file: {_comment_text(part.lf.rel)} -->\n",
               *_pieces(part, gone.get(k, []), starts.get(k))]
        w = sum((weight(x) for x in own), Fraction(0))
        pieces.extend(own)
        per_file.append(math.ceil(w))
        rest += w
    tokens = 0
    for _ in range(4):  # the header states the total it is part of: settle the number
        header = _header(layer, tokens, budget, parts, left_out, dropped)
        new = math.ceil(weight(header) + rest)
        if new == tokens:
            break
        tokens = new
    pieces[0] = header
    return "".join(pieces), per_file, new


def context(layer: Layer | str | os.PathLike[str], budget: int | None = None, *, only: Iterable[str] | None = None,
            exclude: Iterable[str] | None = None) -> ContextResult:
    """The export of ``layer`` (a :class:`Layer`, or a folder or file path) as text for a chat.

    Raises :class:`ContextRefused` when ``budget`` cannot be met, ``ValueError`` for a budget
    that is not a positive integer, and :class:`zonemark.layer.LayerError` for a bad path.
    """
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
        raise ValueError(f"budget must be a positive number of tokens, not {budget!r}")
    if not isinstance(layer, Layer):
        if not isinstance(layer, (str, os.PathLike)):
            raise TypeError(f"layer must be a Layer or a path, not {type(layer).__name__}")
        layer = Layer.load(Path(layer), only=None if only is None else list(only),
                           exclude=None if exclude is None else list(exclude))
    files, left_out, left_modules = _select(layer)
    parts = [_Part(lf, _normalised(lf)) for lf in files]
    dropped: list[_Entry] = []
    starts: dict[int, array[int]] = {}  # each file's line offsets, read only when entries are to be left out
    text, per_file, tokens = _render(layer, parts, left_out, dropped, budget, starts)
    if budget is not None and tokens > budget:
        text = ""  # the text over budget is made again: never two of them at once
        scans = [_extents(part) for part in parts]
        protected = math.ceil(_protected_weight(parts, scans, starts))
        if protected > budget:
            raise ContextRefused(f"refused: the [P1]/[P2] content of the layer alone is "
                                 f"~{counted(protected, 'token')}, over the budget of {budget}; it is never left out")
        candidates = _droppable(parts, scans, starts)
        del scans
        k = 0
        while tokens > budget:
            if k >= len(candidates):
                raise ContextRefused(f"refused: with every journal entry left out the context is still ~{tokens}"
                                     f" tokens, over the budget of {budget} ([P1]/[P2] content ~{protected}; the"
                                     f" rest is never cut)")
            need, got = tokens - budget, Fraction(0)
            while k < len(candidates) and got < need:
                dropped.append(candidates[k])
                got += candidates[k].weight
                k += 1
            text = ""
            text, per_file, tokens = _render(layer, parts, left_out, dropped, budget, starts)
    counts: dict[str, int] = {}
    for e in dropped:
        counts[e.rel] = counts.get(e.rel, 0) + 1
    included = [ContextFile(p.lf.rel, p.lf.file_type, True, None, per_file[k], counts.get(p.lf.rel, 0))
                for k, p in enumerate(parts)]
    order = {f.rel: i for i, f in enumerate(layer.files)}
    all_files = sorted(included + left_out, key=lambda f: order.get(f.path, 0))
    return ContextResult(text, layer.name, tokens, budget, tuple(all_files), tuple(left_modules), len(dropped))
