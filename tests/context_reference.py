"""A frozen copy of the context export as it was before its memory was bounded (src/zonemark/context/export.py
at 7ebbaed): the reference tests/services/test_context_reference.py compares the new export with, text, token
estimates and what was left out alike.  It loads a layer with the block tree, as it did.  Not to be edited with
the code: it is what "output unchanged" means (B20)."""

# ruff: noqa
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from fractions import Fraction
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from zonemark import STANDARD_VERSION
from zonemark.layer.loader import Layer, LayerFile, LayerModule
from zonemark.render.formats import counted
from zonemark.context.tokens import ASCII_PER_TOKEN, NARROW_PER_TOKEN, weight

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
    lines: tuple[str, ...]  # LF-terminated lines of the normalised text


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


def _normalised_lines(lf: LayerFile) -> tuple[str, ...]:
    text = lf.doc.source
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n")
    if text and not text.endswith("\n"):
        text += "\n"
    return tuple(text.splitlines(keepends=True)) if text else ()


def _droppable(parts: list[_Part]) -> list[_Entry]:
    """Entries of [P3]-[P5] zones, in the order they are left out (module docstring)."""
    out = []
    for k, part in enumerate(parts):
        memory = part.lf.file_type == "external_memory"
        for node in part.lf.doc.outline().walk():
            for e in node.entries:
                if e.permission_level not in (3, 4, 5):
                    continue
                block = part.lf.doc.heading_at(e.line)
                end_line = block.end_line if block is not None else e.line
                start, stop = e.line - 1, min(end_line, len(part.lines))
                w = sum((weight(x) for x in part.lines[start:stop]), Fraction(0))
                out.append(_Entry(k, part.lf.rel, start, stop, e.date, memory, w))

    def key(e: _Entry) -> tuple[bool, bool, str, int, int]:
        return (not e.memory, e.date is None, e.date or "", e.file_index, e.start)
    return sorted(out, key=key)


def _protected_weight(parts: list[_Part]) -> Fraction:
    """Weight of the [P1]/[P2] zones of the included files (never dropped)."""
    total = Fraction(0)
    for part in parts:
        for block in part.lf.doc.blocks:
            if block.type == "permission_block" and block.permission_level in (1, 2):
                total += sum((weight(x) for x in part.lines[block.line - 1:block.end_line]), Fraction(0))
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


def _render(layer: Layer, parts: list[_Part], left_out: list[ContextFile], dropped: list[_Entry],
            budget: int | None) -> tuple[str, list[int], int]:
    """The export's text, each file's token estimate and the whole text's.  Each file's section is joined
    once from its lines, and the text once from the sections: the weights add up exactly (``tokens``), so
    the total is the header's weight and the sections', never a scan of the whole text again."""
    drop_lines: dict[int, set[int]] = {}
    for e in dropped:
        drop_lines.setdefault(e.file_index, set()).update(range(e.start, e.stop))
    sections: list[str] = []
    per_file: list[int] = []
    rest = Fraction(0)
    for k, part in enumerate(parts):
        gone = drop_lines.get(k, ())
        section = "".join([f"\n<!-- file: {_comment_text(part.lf.rel)} -->\n",
                           *(x for i, x in enumerate(part.lines) if i not in gone)])
        sections.append(section)
        w = weight(section)
        per_file.append(math.ceil(w))
        rest += w
    tokens = 0
    for _ in range(4):  # the header states the total it is part of: settle the number
        header = _header(layer, tokens, budget, parts, left_out, dropped)
        new = math.ceil(weight(header) + rest)
        if new == tokens:
            break
        tokens = new
    sections.insert(0, header)
    return "".join(sections), per_file, new


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
                           exclude=None if exclude is None else list(exclude), tree=True)
    files, left_out, left_modules = _select(layer)
    parts = [_Part(lf, _normalised_lines(lf)) for lf in files]
    dropped: list[_Entry] = []
    text, per_file, tokens = _render(layer, parts, left_out, dropped, budget)
    if budget is not None and tokens > budget:
        protected = math.ceil(_protected_weight(parts))
        if protected > budget:
            raise ContextRefused(f"refused: the [P1]/[P2] content of the layer alone is "
                                 f"~{counted(protected, 'token')}, over the budget of {budget}; it is never left out")
        candidates = _droppable(parts)
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
            text, per_file, tokens = _render(layer, parts, left_out, dropped, budget)
    counts: dict[str, int] = {}
    for e in dropped:
        counts[e.rel] = counts.get(e.rel, 0) + 1
    included = [ContextFile(p.lf.rel, p.lf.file_type, True, None, per_file[k], counts.get(p.lf.rel, 0))
                for k, p in enumerate(parts)]
    order = {f.rel: i for i, f in enumerate(layer.files)}
    all_files = sorted(included + left_out, key=lambda f: order.get(f.path, 0))
    return ContextResult(text, layer.name, tokens, budget, tuple(all_files), tuple(left_modules), len(dropped))
