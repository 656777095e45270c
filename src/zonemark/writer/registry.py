"""Rewriting the ``MODULE_STATE_REGISTRY`` block: the planner, and the commit (§7.3.1, §5.2, §5.5).

The registry's entries are rewritten as a whole (never single lines, §7.3.1) — exactly the registry's
own ``* ACTIVE:``/``* INACTIVE:`` lines; the user's text and comments around and between them stay as
they are.  Ids whose state it changes must be declared modules (of the file, or of ``known_ids`` — the
layer) and must not be ``- permanent``; otherwise refused.  A file without a registry gets one only
from 'user' (a new ``[P4]`` zone at the end of the file: the AI never creates permission tags, §5.5
Invariant 5).  'ai' may rewrite a registry in ``[P4]``/``[P5]`` only.  :func:`set_states` finds the
registry and the known ids of a folder with :class:`zonemark.layer.Layer` (the reminder governs the
layer; id conflicts as the layer resolves them).  :func:`plan_registry` decides on one snapshot and
writes nothing; :func:`rewrite_registry` commits it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..core import syntax as sx
from ..core.document import Document
from ..core.nodes import Heading
from ..core.parser import parse
from ..core.text import encode
from .offsets import CharOffset
from .refusals import RefusedWrite
from .results import RegistryResult
from .rules import check_actor
from .sanitize import quoted
from .snapshot import FileSnapshot, Plan, barrier_refusal
from .store import Store
from .verify import Edit, Expect, compare

_ID = re.compile(r"[^\s:\[\],]+")

def _zone_line_of(doc: Document, line: int) -> int | None:
    """The opening line of the permission zone holding ``line`` (None outside every zone)."""
    for b in doc.blocks:
        if b.type == "permission_block" and b.line <= line <= b.end_line:
            return b.line
    return None


def _registry_heading(doc: Document) -> Heading | None:
    if doc.registry is None:
        return None
    for b in doc.walk():
        if isinstance(b, Heading) and b.type == "state_registry" and b.line == doc.registry.line:
            return b
    return None


def _clean_ids(ids: Iterable[str] | None, what: str) -> list[str]:
    out: list[str] = []
    for raw in ids or ():
        if not isinstance(raw, str):
            raise ValueError(f"{what} ids must be strings")
        for part in raw.split(","):
            mid = part.strip()
            if not mid:
                continue
            if not _ID.fullmatch(mid) or sx.TEMPORARY_ID.fullmatch(mid):
                raise RefusedWrite(f"refused: {quoted(mid)} is not a module id that a registry may name "
                                   f"(§7.3.1, §7.1.1)",
                                   code="INVALID_MODULE_ID", rule="§7.3.1")
            if mid not in out:
                out.append(mid)
    return out


def _registry_line(word: str, ids: list[str]) -> str:
    return f"* {word}: {', '.join(ids)}" if ids else f"* {word}:"


def _registry_lines(active: list[str], inactive: list[str]) -> str:
    return _registry_line("ACTIVE", active) + "\n" + _registry_line("INACTIVE", inactive) + "\n"


def _registry_entry_lines(doc: Document, heading: Heading, starts: list[int]) -> list[tuple[int, str]]:
    """The registry's own lines (line number, 'ACTIVE'|'INACTIVE'), as the parser reads them (§7.3.1).

    A registry line is a list item under the registry header, in the registry's zone, that reads
    ``* ACTIVE: ...`` or ``* INACTIVE: ...``.  Nothing else is: text, comments and other
    blocks around or between them belong to the user.
    """
    text = doc.source
    zone_end = len(starts) + 1
    for b in doc.blocks:
        if b.type == "permission_block" and b.line <= heading.line <= b.end_line:
            zone_end = b.end_line + 1
            break
    out = []
    for b in heading.walk():
        if b is heading or b.type != "list" or not heading.line < b.line <= zone_end:
            continue
        start = starts[b.line - 1]
        end = starts[b.line] if b.line < len(starts) else len(text)
        m = sx.REGISTRY_ENTRY.fullmatch(text[start:end].strip())
        if m:
            out.append((b.line, m.group(1)))
    return sorted(set(out))


def _replace_registry_lines(doc: Document, heading: Heading, active: list[str],
                            inactive: list[str]) -> tuple[Edit, str]:
    """The text with exactly the registry's own lines rewritten (§7.3.1), and the edit that does it.

    The first ``ACTIVE`` line and the first ``INACTIVE`` line are rewritten in place (keeping
    their indentation and line ending); a missing one goes next to the other; any further
    registry line is removed.  Without any registry line the two go right after the header.
    """
    text = doc.source
    from ..layer.spans import SourceLines
    starts = SourceLines(text).starts

    def bounds(n: int) -> tuple[int, int]:
        return starts[n - 1], (starts[n] if n < len(starts) else len(text))

    found = _registry_entry_lines(doc, heading, starts)
    new_active, new_inactive = _registry_line("ACTIVE", active), _registry_line("INACTIVE", inactive)
    if not found:
        start, end = bounds(heading.line)
        eol = "\r\n" if text[start:end].endswith("\r\n") else "\n"
        lead = "" if text[start:end].endswith("\n") else eol
        body = lead + new_active + eol + new_inactive + eol
        edit = Edit(CharOffset(end), 0, len(body), heading.line + 1, 0, body.count("\n"))
        return edit, text[:end] + body + text[end:]
    first = {word: next((n for n, w in found if w == word), None) for word in ("ACTIVE", "INACTIVE")}
    registry = {n for n, _w in found}
    region_start, _ = bounds(found[0][0])
    _, region_end = bounds(found[-1][0])
    parts = []
    for n in range(found[0][0], found[-1][0] + 1):
        start, end = bounds(n)
        line = text[start:end]
        if n not in registry:
            parts.append(line)
            continue
        eol = "\r\n" if line.endswith("\r\n") else ("\n" if line.endswith("\n") else "")
        indent = line[:len(line) - len(line.lstrip(" \t"))]
        if n == first["ACTIVE"]:
            parts.append(indent + new_active + (eol or "\n") if first["INACTIVE"] is None
                         else indent + new_active + eol)
            if first["INACTIVE"] is None:
                parts.append(indent + new_inactive + eol)
        elif n == first["INACTIVE"]:
            if first["ACTIVE"] is None:
                parts.append(indent + new_active + (eol or "\n"))
            parts.append(indent + new_inactive + eol)
    body = "".join(parts)
    old = text[region_start:region_end]
    edit = Edit(CharOffset(region_start), len(old), len(body), found[0][0], old.count("\n"), body.count("\n"))
    return edit, text[:region_start] + body + text[region_end:]


@dataclass(frozen=True)
class RegistryRequest:
    """The ids to make active and inactive (checked), and how (``merge``: move only these)."""

    actor: str
    active: tuple[str, ...]
    inactive: tuple[str, ...]
    merge: bool = False
    known_ids: frozenset[str] | None = None
    permanent_ids: frozenset[str] = frozenset()


def registry_request(active: Iterable[str] = (), inactive: Iterable[str] = (), *, actor: str = "ai",
                     known_ids: Iterable[str] | None = None, permanent_ids: Iterable[str] | None = None,
                     merge: bool = False) -> RegistryRequest:
    """The request :func:`plan_registry` takes: ids checked (§7.1.1), none both active and inactive."""
    check_actor(actor)
    want_active = _clean_ids(active, "active")
    want_inactive = _clean_ids(inactive, "inactive")
    both = set(want_active) & set(want_inactive)
    if both:
        raise RefusedWrite(f"refused: module {sorted(both)[0]} cannot be both ACTIVE and INACTIVE (§7.3.1)",
                           code="CONTRADICTORY_STATE", rule="§7.3.1")
    return RegistryRequest(actor, tuple(want_active), tuple(want_inactive), merge,
                           None if known_ids is None else frozenset(known_ids), frozenset(permanent_ids or ()))


def plan_registry(snap: FileSnapshot, req: RegistryRequest) -> Plan[RegistryResult]:
    """What rewriting the registry of ``snap`` does (module docstring); pure."""
    snap.refuse_not_utf8()
    path, text, doc, actor = snap.path, snap.text, snap.document, req.actor
    want_active, want_inactive = list(req.active), list(req.inactive)
    reg = doc.registry
    current: dict[str, str] = {}
    if reg is not None:
        for mid, st, _ln in reg.entry_lines:
            current.setdefault(mid, st)
    if req.merge:
        act = [m for m, s in current.items() if s == "active" and m not in want_inactive]
        ina = [m for m, s in current.items() if s == "inactive" and m not in want_active]
        act += [m for m in want_active if m not in act]
        ina += [m for m in want_inactive if m not in ina]
    else:
        act, ina = want_active, want_inactive
    changed_ids = [m for m in act if current.get(m) != "active"] + [m for m in ina if current.get(m) != "inactive"]
    declared = {m.id: m for m in doc.modules if m.id is not None and m.keyword is None and not m.ignored}
    known = set(declared) | set(req.known_ids or ())
    permanent = {i for i, m in declared.items() if m.permanent} | set(req.permanent_ids)
    for mid in changed_ids:
        if mid in permanent:
            where = f" (STATE at line {declared[mid].state_line})" if mid in declared else ""
            raise RefusedWrite(f"refused: module {mid} has a permanent STATE{where}; the registry may not "
                               f"override it (§7.3.1)", code="PERMANENT_STATE", rule="§7.3.1")
        if mid not in known:
            raise RefusedWrite(f"refused: module {mid} is not declared in this file"
                               f"{' or its layer' if req.known_ids is not None else ''}; the registry names "
                               f"modules by id (§7.3.1)", code="UNKNOWN_MODULE", rule="§7.3.1")
    body = _registry_lines(act, ina)
    heading = _registry_heading(doc)
    if heading is None:
        if actor != "user":
            raise RefusedWrite("refused: the file has no MODULE_STATE_REGISTRY; creating one needs a new [P4] "
                               "zone, and only the user adds permission tags (§7.3.1, §5.5 Invariant 5)",
                               code="NO_REGISTRY", rule="§7.3.1")
        sep = "" if text.endswith("\n") or not text else "\n"
        block = f"{sep}\n[P4]\n## MODULE_STATE_REGISTRY:\n{body}[/P4]\n"
        edit = Edit(CharOffset(len(text)), 0, len(block), text.count("\n") + 1, 0, block.count("\n"))
        new_text = text + block
        expect = Expect(entries=0, structure=True, registry=True)
        zone_line = None
    else:
        if actor != "user" and (heading.permission_level or 0) < 4:
            where = (f"[P{heading.permission_level}]" if heading.permission_level else "outside any zone")
            level = heading.permission_level
            code = "ZONE_PROPOSE_ONLY" if level == 3 else "ZONE_READ_ONLY"
            raise RefusedWrite(f"refused: the MODULE_STATE_REGISTRY at line {heading.line} is {where}; ai "
                               f"rewrites it only in [P4]/[P5] (§7.3.1, §5.2)", code=code,
                               zone=_zone_line_of(doc, heading.line), level=level, rule="§5.2")
        edit, new_text = _replace_registry_lines(doc, heading, act, ina)
        expect = Expect(entries=0, structure=actor == "user", registry=True)
        zone_line = heading.line
    after = parse(new_text, path=str(path), tree=True)
    verdict = compare(doc, after, edit, expect)
    if not verdict.ok:
        raise barrier_refusal("rewriting the MODULE_STATE_REGISTRY", verdict,
                              zone=None if heading is None else _zone_line_of(doc, heading.line),
                              level=None if heading is None else heading.permission_level)
    got = after.registry
    if got is None or list(got.active) != act or list(got.inactive) != ina:
        raise RefusedWrite("refused: the rewritten registry would not read back as requested (§7.3.1)",
                           code="STRUCTURE_CHANGED", rule="§7.3.1")
    new_data = encode(new_text)
    result = RegistryResult(Path(path), new_data != snap.data, zone_line, zone_line, "MODULE_STATE_REGISTRY", None,
                            (), "full", tuple(act), tuple(ina))
    return Plan(new_data, result, verdict, where="MODULE_STATE_REGISTRY")


def rewrite_registry(path: str | os.PathLike[str], active: Iterable[str] = (), inactive: Iterable[str] = (), *,
                     actor: str = "ai",
                     known_ids: Iterable[str] | None = None, permanent_ids: Iterable[str] | None = None,
                     merge: bool = False, store: Store | None = None) -> RegistryResult:
    """Rewrite the whole ``MODULE_STATE_REGISTRY`` block (§7.3.1).

    ``merge=True`` keeps the current entries and only moves the given ids (the CLI's
    ``zonemark state --activate/--deactivate``).  ``known_ids``/``permanent_ids`` add the
    modules of other files of the layer.
    """
    req = registry_request(active, inactive, actor=actor, known_ids=known_ids, permanent_ids=permanent_ids,
                           merge=merge)
    done = (store or Store()).commit(path, lambda snap: plan_registry(snap, req), actor=actor,
                                     action="rewrite MODULE_STATE_REGISTRY")
    r = done.result
    return RegistryResult(Path(path), done.changed, r.line, r.zone, r.target, done.history_id, (), "full", r.active,
                          r.inactive)


def _layer_targets(target: Path, ids: list[str]) -> tuple[Path, set[str] | None, set[str] | None]:
    """The registry file to rewrite and the ids it may name, as the layer resolves them (§7.3.1).

    A folder: its ``[reminder]``, which governs every module of the merged files.  A file: the
    file itself; if it is its folder's reminder it governs the layer's modules, otherwise only
    its own (a registry outside the reminder governs its own file, ``LAYER_REGISTRY_OUT_OF_SCOPE``).
    An id declared only in a file the layer does not merge (``LAYER_ID_CONFLICT``) is refused.
    """
    from ..layer.loader import Layer, LayerError
    folder = target if target.is_dir() else target.parent
    try:
        layer = Layer.load(folder)
    except LayerError as exc:
        if target.is_dir():
            raise RefusedWrite(f"refused: {exc}", code="LAYER_UNREADABLE", rule="§7.3.1") from None
        return target, None, None
    reminders = [f for f in layer.files if f.file_type == "reminder"]
    if target.is_dir():
        if len(reminders) != 1:
            raise RefusedWrite(f"refused: {target} holds {len(reminders)} [reminder] files; give the file whose "
                               f"registry to change", code="NO_REGISTRY" if not reminders else "AMBIGUOUS_REMINDER",
                               rule="§7.3.1")
        path, governs_all = reminders[0].path, True
    else:
        path = target
        me = next((f for f in layer.files if f.path.resolve() == target.resolve()), None)
        governs_all = me is not None and me.merged and me.rel == layer.reminder
        if not governs_all:
            return target, None, None
    modules = [m for m in layer.modules if m.is_module and not m.temporary and not m.info.ignored]
    unmerged = {m.id: f.rel for f in layer.files if not f.merged for m in f.doc.modules
                if m.type == "module" and m.keyword is None and m.id is not None}
    known = {m.module_id for m in modules if m.module_id is not None}  # None only for ignored ones, left out above
    for mid in ids:
        if mid not in known and mid in unmerged:
            raise RefusedWrite(f"refused: module {mid} is declared in {unmerged[mid]}, which the layer does not "
                               f"merge (an id conflict, LAYER_ID_CONFLICT); resolve it first (§7.1.1)",
                               code="ID_CONFLICT", rule="§7.1.1")
    return path, known, {m.module_id for m in modules if m.info.permanent and m.module_id is not None}


def set_states(target: str | os.PathLike[str], activate: Iterable[str] = (), deactivate: Iterable[str] = (), *,
               actor: str = "ai", store: Store | None = None) -> RegistryResult:
    """Activate/deactivate modules in the registry of a file or of a layer folder's reminder (merged)."""
    target = Path(target)
    wanted = _clean_ids(activate, "active") + _clean_ids(deactivate, "inactive")
    if not wanted:
        raise ValueError("give at least one module id to activate or deactivate")
    path, known, permanent = _layer_targets(target, wanted)
    return rewrite_registry(path, activate, deactivate, actor=actor, known_ids=known, permanent_ids=permanent,
                            merge=True, store=store)
