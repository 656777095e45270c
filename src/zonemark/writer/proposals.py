"""Proposals: changes an AI may ask for and only the user may apply (§5.2 [P3], §7.3.1).

A proposal replaces the inner lines of exactly one zone (never its tags, never a second
zone).  :func:`propose` writes one JSON file per proposal into ``.zonemark/proposals/`` next
to the target file, named by its id.  It records the target file, the zone (opening line and
level), the SHA-256 of that zone's inner bytes when the proposal was made, the proposed
content, the reason, who proposed it and the diagnostics the change would add; a unified
diff is stored for reading only.

Rulings (docs/conformance.md, "Proposals"):

* ``target`` is a zone line (the opening line, or any line inside the zone; any level —
  for ``[P1]``/``[P2]`` the AI may only ask, §7.3.1) or a container address.  A container
  means the ``[P3]`` zone that *pairs* with it (§7.1.2, §7.1.3): a ``[P3]`` zone at whose
  closing tag the container is the innermost open one and which does not hold the
  declaration itself.  None, or more than one, is refused — never guessed.
* :func:`apply_proposal` ('user' only) never reads the stored diff.  It finds the declared
  zone — at its recorded line, or, when lines before it moved, the one zone of that level
  whose inner bytes still hash to the recorded value, in the same container (the header lines
  open at its close, recorded too) — and recomputes the change from the
  proposed content.  A zone whose content changed since is *stale*: refused, with a message
  that says so.  The result passes the user re-check of :mod:`.verify` and the store
  (history, undo).
* The proposed content may not hold a line that the parser reads as a permission tag: a
  proposal changes the inside of one zone, not the zones.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import json
import os
import re
import secrets
from dataclasses import dataclass, replace
from pathlib import Path
from collections.abc import Sequence
from typing import Any, Callable

from ..core import syntax as sx
from ..core.diagnostics import Diagnostic
from ..core.parser import parse
from ..core.tree import ZoneFrame
from ..core.text import decode, encode, escape_controls, printable, reveal
from .atomic import replace_file
from .locate import ZoneIndex, ZoneView, container_lines, journal_zones, resolve_container, zone_hash
from .offsets import CharOffset, chars_before
from .refusals import RefusedWrite
from .results import ApplyResult
from .attribution import current_via
from .rules import check_actor, refuse_unless_user
from .sanitize import clean_proposal, quoted, reads_as_zone_tag
from .snapshot import FileSnapshot, Plan, barrier_refusal, decode_pieces
from .store import STATE_DIR_NAME, HistoryEntry, Store
from .verify import DiagnosticKeys, Edit, Verdict, added_to, user_verdict

FORMAT = "zonemark-proposal/2"
PROPOSALS_DIR = "proposals"
_LOG_MARKER = "[/LOG]"
_STATUSES = ("open", "applied", "rejected")
MAX_REASON_CHARS = 500
_CR_AT_LINE_END = re.compile(r"\r(?=\n|\Z)")
#: What a one-line reason may not hold: line breaks of any kind and control characters (tab aside).
_NOT_ONE_LINE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


@dataclass(frozen=True)
class Proposal:
    """One proposal as stored (``path`` is its JSON file, ``id`` its name without ``.json``)."""

    path: Path
    id: str
    target: Path
    zone_line: int
    zone_level: int
    zone_sha256: str
    new_content: str
    diff: str
    reason: str
    proposed_by: str
    created: str
    status: str
    would_add: tuple[str, ...]  # diagnostics the change would add (formatted lines)
    #: the header lines open at the zone's closing tag (its container and those around it), as when proposed;
    #: None for a record that does not hold them
    zone_context: tuple[str, ...] | None = None
    #: what the writer removed from the proposed content (W23), as ``append_entry`` reports it; () when read back
    changes: tuple[str, ...] = ()
    #: when it was applied or rejected (ISO 8601, UTC), who decided, and the user's reason for a rejection;
    #: "" while open (and ``decided_by`` "" for a record made before it was kept: only the user decides)
    decided: str = ""
    decided_by: str = ""
    rejection_reason: str = ""
    #: the client the proposal was made for (``name (token id)``, :mod:`.attribution`), when a face named one
    via: str | None = None

    @property
    def who(self) -> str:
        """Who proposed it: ``ai via ChatGPT (3f9a2b1c)``, or ``ai``."""
        return f"{self.proposed_by} via {self.via}" if self.via else self.proposed_by


@dataclass(frozen=True)
class PendingProposal:
    """A proposal still open, with what the current file says about it (``zonemark proposals``)."""

    proposal: Proposal
    stale: bool  # the declared zone changed (or is gone) since the proposal was made
    zone_now: int | None  # where the zone is now (None when stale)

    @property
    def id(self) -> str:
        return self.proposal.id


def proposals_dir(target: str | os.PathLike[str]) -> Path:
    """The folder of the proposals of ``target``: ``.zonemark/proposals`` of the folder that holds it as the
    layer names it — a symbolic link of the layer is not followed out of the layer (W32)."""
    target = Path(os.path.abspath(os.fspath(target)))
    return target.parent / STATE_DIR_NAME / PROPOSALS_DIR


def _write_json(path: Path, data: dict[str, Any]) -> None:
    replace_file(path, (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8"), mode=0o644,
                 make_parents=True)


def _inner(zone: ZoneView, data: bytes) -> bytes:
    assert zone.close_start is not None
    return data[zone.inner_start:zone.close_start]


def _content_for(new_content: str, data: bytes, zone: ZoneView) -> str:
    """The proposed inner lines as they will be written: the file's line endings, a final newline; cleaned of
    what every AI write removes (controls, bidi controls, invisible characters: W23), its lists in the §8 shape
    (W24)."""
    inner = clean_proposal(new_content).text
    lines = inner.split("\n")
    kept = [ln for ln in lines if ln.strip() != _LOG_MARKER]  # §N.19.3.4: never written to a file
    inner = "\n".join(kept)
    for k, ln in enumerate(kept, 1):
        if sx.PERMISSION_TAG.fullmatch(ln) or reads_as_zone_tag(ln):
            raise RefusedWrite(f"refused: line {k} of the proposed content reads as a zone tag ({quoted(ln)}); a "
                               f"proposal changes the inside of one zone, never the zones (§5.1, §5.5)",
                               code="CONTENT_REFUSED", zone=zone.line, level=zone.level, rule="§5.5")
    if inner and not inner.endswith("\n"):
        inner += "\n"
    assert zone.close_end is not None
    if data[zone.close_end - 2:zone.close_end] == b"\r\n":
        inner = inner.replace("\n", "\r\n")
    return inner


def _replaced(data: bytes, zone: ZoneView, inner: str) -> bytes:
    """``data`` with the zone's inner bytes replaced (every other byte copied)."""
    return _spliced(data, zone, encode(inner))


def _changes_inner(data: bytes, zone: ZoneView, new_inner: bytes) -> bool:
    """Whether ``new_inner`` differs from the zone's inner bytes: every other byte of the spliced file is the
    file's (:func:`_spliced`), so this is whether the file changes; compared in place, without a copy."""
    assert zone.close_start is not None
    return new_inner != memoryview(data)[zone.inner_start:zone.close_start]


def _spliced(data: bytes, zone: ZoneView, inner: bytes) -> bytes:
    """``data`` with the zone's inner bytes replaced by ``inner``: one copy (a concatenation copied the file's
    tail once more before it, B24)."""
    assert zone.close_start is not None
    view = memoryview(data)
    return b"".join((view[:zone.inner_start], inner, view[zone.close_start:]))


def _spliced_text(data: bytes, zone: ZoneView, inner: bytes) -> str:
    """``decode(_spliced(data, zone, inner))`` without the new bytes: their pieces decoded a slice at a time and
    joined (:func:`.snapshot.decode_pieces`, B24)."""
    assert zone.close_start is not None
    view = memoryview(data)
    text = decode_pieces((view[:zone.inner_start], memoryview(inner), view[zone.close_start:]))
    return decode(_spliced(data, zone, inner)) if text is None else text


def preview_proposal(proposal: Proposal, data: bytes, index: ZoneIndex | None = None) -> tuple[ZoneView, bytes] | None:
    """Where ``proposal`` would write in ``data`` (the file's bytes now) and what :func:`apply_proposal` would
    write: the declared zone's inner lines replaced, line endings kept — before the re-check (the first step of
    :func:`plan_apply`, on a snapshot, with no commit).  None when the proposal is stale (its zone changed or is
    gone) or its content could never be written.  ``index``: the zone index of the full parse of ``data``, when
    the caller holds it (a page previewing many proposals of one file parses it once)."""
    got = preview_inner(proposal, data, index)
    return None if got is None else (got[0], _spliced(data, got[0], got[1]))


def preview_inner(proposal: Proposal, data: bytes, index: ZoneIndex | None = None) -> tuple[ZoneView, bytes] | None:
    """:func:`preview_proposal` without the copy of the file: the zone and the inner bytes ``apply`` would put
    between its tags (a page showing many proposals of one large file copies none of it)."""
    try:
        snap = FileSnapshot(proposal.target, data)
        zone = _target_zone(snap, proposal, index)
        return zone, encode(_content_for(proposal.new_content, data, zone))
    except RefusedWrite:
        return None


def _target_zone(snap: FileSnapshot, proposal: Proposal, index: ZoneIndex | None = None) -> ZoneView:
    """The proposal's zone in ``snap``, or ``STALE_PROPOSAL``."""
    zone = locate_zone(proposal, snap.data, snap.full_index if index is None else index)
    if zone is None or zone.close_start is None:
        raise _stale(proposal)
    return zone


#: What the re-check reads of the file's parse: its diagnostics' keys, its zones' levels and lines.
_Basis = tuple[DiagnosticKeys, Sequence[int], Sequence[int]]


def _full_basis(snap: FileSnapshot) -> _Basis:
    """What the re-check reads of the file's full parse, from its zone index (a proposal to a container, or a zone
    that moved): the diagnostics' keys and the zones' levels and lines; the index is let go of (B22)."""
    before = snap.diagnostic_keys
    index = snap.full_index  # the zones before, from the parse's own scan: no tree of either text (W98)
    levels, lines = index.zones.level, index.z_line
    del index
    snap.let_go_of_full()  # the zones' levels and lines are all the rest of the re-check reads of the index
    return before, levels, lines


def _verdict(snap: FileSnapshot, new_inner: bytes, zone: ZoneView, basis: _Basis | None = None
             ) -> tuple[Verdict, tuple[str, ...], tuple[Diagnostic, ...]]:
    """The user re-check of replacing ``zone``'s inner lines by ``new_inner`` (§5.5): only new errors refuse.

    Returns the verdict, problems with the zones, and every new diagnostic (warnings too: a
    proposal lists them all; only errors refuse).  It holds no document: the diagnostics' keys and the zone index
    of the file's parse (:attr:`.snapshot.FileSnapshot.diagnostic_keys`), the new text's parse only while it runs,
    the edit measured on the bytes of the zone (W99).  While the new text is parsed it holds neither its bytes
    nor its zones: the new text is decoded from a splice dropped at once (every byte outside the zone copied
    from the file's, so none outside it changes), and each zone the parse ends is compared with the file's as it
    ends (B22).
    """
    assert zone.close_start is not None
    before, levels, lines = basis if basis is not None else _full_basis(snap)
    del basis
    path, data = snap.path, snap.data
    old_inner = _inner(zone, data)
    start: CharOffset = chars_before(data, zone.inner_start)
    edit = Edit(start, len(decode(old_inner)), len(decode(new_inner)), zone.line + 1, old_inner.count(b"\n"),
                new_inner.count(b"\n"))
    del old_inner
    zone_count = len(levels)
    ended = [0, True]  # zones the new parse ended, and whether each was the file's, moved over the edit

    def zone_ended(frame: ZoneFrame) -> None:
        k = ended[0]
        ended[0] = k + 1
        if ended[1] and not (k < len(levels) and frame.plevel == levels[k] and frame.line == edit.map_line(lines[k])):
            ended[1] = False

    new_text = _spliced_text(data, zone, new_inner)
    after = parse(new_text, path=str(path), on_zone=zone_ended)
    del new_text
    found = tuple(added_to(before, after.diagnostics, edit))
    del after
    verdict = user_verdict(found, True)
    same = bool(ended[1]) and ended[0] == zone_count
    problems = () if same else ("the zones of the file would change",)
    return verdict, problems, found


DIFF_CONTEXT = 3


def _diff(name: str, data: bytes, new_data: bytes) -> str:
    """The unified diff of the proposal, matched on the lines between the shared start and end only (the change is
    one zone: matching the whole file line by line took seconds on a 10 MB file); its hunks keep the file's line
    numbers.

    Only a window of the two files is decoded and split: from a few lines before the first byte that differs to
    a few lines into the bytes both files end with (W98).  Lines outside it are equal in both, so the diff is the
    one of the whole files' lines; splitting both whole texts held ten times the file at a proposal's peak."""
    shortest = min(len(data), len(new_data))
    same_head = _same_bytes(data, new_data, shortest, from_end=False)
    same_tail = _same_bytes(data, new_data, shortest - same_head, from_end=True)
    first = data.rfind(b"\n", 0, same_head) + 1  # the line where the files first differ
    for _ in range(DIFF_CONTEXT + 2):
        if first == 0:
            break
        first = data.rfind(b"\n", 0, first - 1) + 1
    last = len(data) - same_tail  # from here on both files hold the same bytes
    for _ in range(DIFF_CONTEXT + 2):
        nl = data.find(b"\n", last)
        if nl < 0:
            last = len(data)
            break
        last = nl + 1
    after = len(data) - last  # bytes after the window, the same in both
    a = decode(data[first:last]).split("\n")
    b = decode(new_data[first:len(new_data) - after]).split("\n")
    skipped = data.count(b"\n", 0, first)
    shortest_lines = min(len(a), len(b))
    head = 0
    while head < shortest_lines and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < shortest_lines - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    start = max(0, head - DIFF_CONTEXT)
    keep = max(0, tail - DIFF_CONTEXT)
    lines = difflib.unified_diff(a[start:len(a) - keep], b[start:len(b) - keep], fromfile=name, tofile=name,
                                 lineterm="", n=DIFF_CONTEXT)
    return "\n".join(_hunk_moved(line, skipped + start) for line in lines)


#: How many bytes :func:`_same_bytes` compares at a time.
SAME_BYTES_CHUNK = 1 << 16


def _same_bytes(a: bytes, b: bytes, limit: int, *, from_end: bool) -> int:
    """How many bytes ``a`` and ``b`` share at their start (or end), at most ``limit``: compared a slice at a
    time without a copy, the slice that differs halved down to its first differing byte."""
    ma, mb = memoryview(a), memoryview(b)

    def same(i: int, j: int) -> bool:  # bytes [i, j) from the start, or from the end
        if from_end:
            return ma[len(a) - j:len(a) - i] == mb[len(b) - j:len(b) - i]
        return ma[i:j] == mb[i:j]
    done = 0
    while done < limit:
        step = min(SAME_BYTES_CHUNK, limit - done)
        if same(done, done + step):
            done += step
            continue
        while step > 1:  # the first differing byte is in [done, done + step)
            half = step // 2
            if same(done, done + half):
                done += half
                step -= half
            else:
                step = half
        return done
    return done


def _hunk_moved(line: str, offset: int) -> str:
    """A hunk header of a diff of lines ``offset + 1`` onwards, numbered as in the whole file."""
    if not offset or not line.startswith("@@ -"):
        return line
    old, new = line[4:].split(" @@", 1)[0].split(" +")

    def moved(spec: str) -> str:
        first, _, count = spec.partition(",")
        return f"{int(first) + offset}" + (f",{count}" if count else "")
    return f"@@ -{moved(old)} +{moved(new)} @@"


def _no_zone_at(target: int) -> RefusedWrite:
    return RefusedWrite(f"refused: no permission zone opens at or contains line {target}", code="NO_ZONE",
                        rule="§5.1")


def _zone_for_target(index: ZoneIndex, target: int | str | None) -> ZoneView:
    """The zone ``target`` names: a zone line, or a container whose [P3] zone it is (§7.1.2); None names none."""
    if target is None:
        raise RefusedWrite("refused: name the zone to change by its line or by its container", code="NO_ZONE",
                           rule="§5.1")
    if isinstance(target, int) and not isinstance(target, bool):  # a zone line; a str is a container
        zone = index.zone_at_line(int(target))
        if zone is None:
            raise _no_zone_at(target)
        return zone
    cid = resolve_container(index, str(target))  # a bool is no line: read as the container it names
    decl = index.header_line(cid)
    paired = [z for z in journal_zones(index, cid, (3,)) if not (z.line <= decl <= (z.close_line or z.line))]
    if not paired:
        raise RefusedWrite(f"refused: no [P3] zone pairs with {index.label(cid)} (a [P3] zone after its "
                           f"declaration and before the next container, §7.1.2/§7.1.3); name the zone by its "
                           f"line instead", code="NO_PROPOSAL_ZONE", rule="§7.1.2")
    if len(paired) > 1:
        lines = ", ".join(str(z.line) for z in paired)
        raise RefusedWrite(f"refused: {len(paired)} [P3] zones pair with {index.label(cid)} (lines {lines}); "
                           f"name one by its line", code="AMBIGUOUS_ZONE", rule="§7.1.2")
    return paired[0]


@dataclass(frozen=True)
class ProposalPlan:
    """What a proposal would change, decided on one snapshot: the zone, its content as it would be written, the
    new bytes, and the diagnostics the change would add."""

    zone: ZoneView
    context: tuple[str, ...]
    zone_sha256: str
    inner: str
    new_data: bytes
    would_add: tuple[str, ...]


def plan_proposal(snap: FileSnapshot, target: int | str | None, new_content: str) -> ProposalPlan:
    """What proposing ``new_content`` for the zone ``target`` names (a line, or a container's [P3] zone) would
    change in ``snap``; pure: the proposal is recorded by :func:`propose`."""
    snap.refuse_not_utf8()  # W45: applied, it would write UTF-8 into another encoding
    data = snap.data
    basis: _Basis | None = None
    if isinstance(target, int) and not isinstance(target, bool):  # a zone line: the sketch of the zones (B24)
        before, sketch = snap.sketch(int(target))
        if sketch.zone is None:
            raise _no_zone_at(target)
        zone, context, basis = sketch.zone, sketch.context, (before, sketch.levels, sketch.lines)
        del sketch, before
    else:
        index = snap.full_index
        zone = _zone_for_target(index, target)
        context = container_lines(index, zone)
        del index
    if zone.close_start is None or zone.inline:
        raise RefusedWrite(f"refused: the [P{zone.level}] zone at line {zone.line} is "
                           f"{'never closed' if zone.close_start is None else 'opened inline'}; edit it by hand",
                           code="UNCLOSED_ZONE" if zone.close_start is None else "INLINE_ZONE", zone=zone.line,
                           level=zone.level, rule="§5.4" if zone.close_start is None else "§5.1")
    inner = _content_for(new_content, data, zone)
    new_inner = encode(inner)
    if not _changes_inner(data, zone, new_inner):
        raise RefusedWrite(f"refused: the proposal changes nothing in the zone at line {zone.line}",
                           code="NO_CHANGE", zone=zone.line, level=zone.level, rule="W1")
    verdict, problems, found = _verdict(snap, new_inner, zone, basis)
    del basis
    would_add = tuple(printable(d.format()) for d in found) + verdict.problems + problems
    return ProposalPlan(zone, context, zone_hash(data, zone), inner, _spliced(data, zone, new_inner), would_add)


def propose(path: str | os.PathLike[str], target: int | str | None, new_content: str, *, actor: str = "ai", reason: str,
            store: Store | None = None) -> Proposal:
    """Write a proposal to replace the inner lines of one zone (by line, or a container's [P3] zone)."""
    check_actor(actor)
    store = store or Store()
    if (not isinstance(reason, str) or not reason.strip() or _NOT_ONE_LINE.search(reason.strip())
            or len(reason.strip()) > MAX_REASON_CHARS):
        raise ValueError(f"a proposal needs a one-line reason (text of at most {MAX_REASON_CHARS} characters, "
                         f"without line breaks or control characters)")
    if not isinstance(new_content, str):
        raise TypeError("new_content must be str")
    path = Path(path)
    data = store.read(path)
    plan = plan_proposal(FileSnapshot(path, data), target, new_content)
    zone = plan.zone
    now = _dt.datetime.now(_dt.timezone.utc)
    pid = f"{now.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
    record = {
        "format": FORMAT, "id": pid, "status": "open", "file": path.name,  # relative to its .zonemark's folder
        "zone": {"line": zone.line, "level": zone.level, "sha256": plan.zone_sha256, "context": list(plan.context)},
        "reason": reason.strip(), "proposed_by": actor, "created": now.isoformat(timespec="seconds"),
        **({"via": via} if (via := current_via()) is not None else {}),
        "would_add": list(plan.would_add), "new_content": plan.inner, "diff": _diff(path.name, data, plan.new_data),
    }
    out = proposals_dir(path) / f"{pid}.json"
    _write_json(out, record)
    return replace(_from_record(out, record, Path(os.path.abspath(path))),
                   changes=clean_proposal(new_content).changes)


# -- reading proposals ------------------------------------------------------------------------

def _from_record(p: Path, record: dict[str, Any], target: Path) -> Proposal:
    zone = record["zone"]
    context = zone.get("context")
    return Proposal(p, str(record.get("id") or p.stem), target, zone["line"], zone["level"], zone["sha256"],
                    record["new_content"], str(record.get("diff", "")), str(record.get("reason", "")),
                    str(record.get("proposed_by", "")), str(record.get("created", "")),
                    str(record.get("status", "")), tuple(str(x) for x in record.get("would_add", ()) or ()),
                    None if context is None else tuple(context),
                    decided=str(record.get("applied") or record.get("rejected") or ""),
                    decided_by=str(record.get("decided_by", "")),
                    rejection_reason=str(record.get("rejection_reason", "")),
                    via=record["via"] if isinstance(record.get("via"), str) else None)


def load(proposal_path: str | os.PathLike[str]) -> Proposal:
    """The proposal stored at ``proposal_path``; ValueError when it is not a readable, current one."""
    p = Path(proposal_path)
    if p.is_dir():
        raise ValueError(f"{p} is a folder; give a proposal file (zonemark proposals lists them)")
    try:
        record = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"no such proposal: {p}") from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{p} is not a readable proposal ({exc.__class__.__name__})") from None
    if not isinstance(record, dict) or not str(record.get("format", "")).startswith("zonemark-proposal/"):
        raise ValueError(f"{p} is not a zonemark proposal")
    if record.get("format") != FORMAT:
        raise ValueError(f"{p} was made by an older zonemark ({record.get('format')}); ask for the proposal again")
    zone = record.get("zone")
    name = record.get("file")
    if (not isinstance(zone, dict) or type(zone.get("line")) is not int or type(zone.get("level")) is not int
            or not isinstance(zone.get("sha256"), str) or not isinstance(record.get("new_content"), str)
            or not isinstance(name, str) or "/" in name or os.sep in name or name in ("", ".", "..")
            or any(ord(c) < 32 or ord(c) == 127 for c in name)):
        raise ValueError(f"{p} is not a valid zonemark proposal (zone, file or content missing)")
    # Every other field as propose() writes it: a record edited by hand is set aside, never half read.
    would_add = record.get("would_add", [])
    if (record.get("id", p.stem) != p.stem or record.get("status") not in _STATUSES
            or any(not isinstance(record.get(k, ""), str) for k in ("reason", "proposed_by", "created", "diff",
                                                                    "applied", "rejected", "decided_by",
                                                                    "rejection_reason"))
            or not isinstance(record.get("via", ""), str)
            or not isinstance(would_add, list) or not all(isinstance(x, str) for x in would_add)
            or not (zone.get("context") is None or (isinstance(zone["context"], list)
                                                    and all(isinstance(x, str) for x in zone["context"])))):
        raise ValueError(f"{p} is not a valid zonemark proposal (a field was changed by hand)")
    folder = p.resolve().parent
    if folder.name != PROPOSALS_DIR or folder.parent.name != STATE_DIR_NAME:
        raise ValueError(f"{p} is not inside a {STATE_DIR_NAME}/{PROPOSALS_DIR} folder")
    # the file next to the record's .zonemark, as reached (a layer's folder is not resolved out of the layer)
    return _from_record(p, record, Path(os.path.abspath(p)).parent.parent.parent / name)


def _is_proposals(proposal: Proposal, data: bytes, z: ZoneView, context: Callable[[], tuple[str, ...]]) -> bool:
    """Whether ``z`` (of ``data``, in the container whose header lines ``context`` gives) is the proposal's zone: its
    level, closed and not inline, its inner bytes and its container as the proposal recorded them (W2)."""
    return (z.level == proposal.zone_level and z.close_start is not None and not z.inline
            and zone_hash(data, z) == proposal.zone_sha256
            and (proposal.zone_context is None or context() == proposal.zone_context))


def locate_zone(proposal: Proposal, data: bytes, index: ZoneIndex | None = None) -> ZoneView | None:
    """The proposal's zone in ``data``: at its line, or the one zone of its level with the same content —
    in the same container (the same header lines open at its close), so that a zone of another container
    with the same bytes (containers made from one template) is never taken for it (W2)."""
    if index is None:
        index = ZoneIndex.parse(decode(data))[1]  # one scan, no tree (W98)

    def same(z: ZoneView) -> bool:
        return _is_proposals(proposal, data, z, lambda: container_lines(index, z))

    at = index.zone_at_line(proposal.zone_line)
    if at is not None and at.line == proposal.zone_line and same(at):  # what the scan below would choose
        return at
    candidates = [index.zone(i) for i in range(len(index)) if index.level_of(i) == proposal.zone_level]
    candidates = [z for z in candidates if same(z)]
    for z in candidates:
        if z.line == proposal.zone_line:
            return z
    return candidates[0] if len(candidates) == 1 else None


def _stale(proposal: Proposal) -> RefusedWrite:
    return RefusedWrite(f"refused: proposal {proposal.id} is stale: the [P{proposal.zone_level}] zone at line "
                        f"{proposal.zone_line} changed since the proposal was made (or is gone); ask for a new "
                        f"proposal", code="STALE_PROPOSAL", zone=proposal.zone_line, level=proposal.zone_level,
                        rule="W2")


def plan_apply(snap: FileSnapshot, proposal: Proposal) -> Plan[ApplyResult]:
    """What applying ``proposal`` does to ``snap`` (the file's bytes now): its zone found again (W2), the change
    recomputed from the proposed content (never from the stored diff), the user re-check (§5.5); pure."""
    snap.refuse_not_utf8()  # W45
    data = snap.data
    # the zone at its line, from the sketch of the zones (B24); a zone that moved is looked for in the zone index
    basis: _Basis | None = None
    before, sketch = snap.sketch(proposal.zone_line)
    at, context = sketch.zone, sketch.context
    if at is not None and at.line == proposal.zone_line and _is_proposals(proposal, data, at, lambda: context):
        zone, where, basis = at, sketch.owner_name, (before, sketch.levels, sketch.lines)
    else:
        zone = _target_zone(snap, proposal)
        where = None
    del sketch, before
    new_inner = encode(_content_for(proposal.new_content, data, zone))
    changed = _changes_inner(data, zone, new_inner)
    assert zone.close_start is not None
    size = len(data) - (zone.close_start - zone.inner_start) + len(new_inner)
    result = ApplyResult(Path(snap.path), changed, len(data), size, None, zone.line)
    if not changed:
        return Plan(data, result)
    if basis is None:
        where = None if zone.owner is None else snap.full_index.name(zone.owner)
    verdict, problems, _found = _verdict(snap, new_inner, zone, basis)
    del basis
    if problems or not verdict.ok:
        why = problems[0] if problems else verdict.reason()
        if problems:
            raise RefusedWrite(f"refused: applying {proposal.id}: {why} (§5.5, re-check)",
                               code="STRUCTURE_CHANGED", zone=zone.line, level=zone.level, rule="§5.5")
        raise barrier_refusal(f"applying {proposal.id}", verdict, zone=zone.line, level=zone.level)
    return Plan(_spliced(data, zone, new_inner), result, verdict, where=where)


def apply_proposal(proposal_path: str | os.PathLike[str], *, actor: str = "user",
                   store: Store | None = None) -> ApplyResult:
    """Apply a proposal ('user' only): plan it again against the bytes of now, then commit (W2)."""
    refuse_unless_user(actor, "only the user may apply a proposal")
    store = store or Store()
    proposal = load(proposal_path)
    if proposal.status != "open":
        raise RefusedWrite(f"refused: proposal {proposal.id} is already {proposal.status}", code="PROPOSAL_CLOSED",
                           rule="W2")
    target = proposal.target
    done = store.commit(target, lambda snap: plan_apply(snap, proposal), actor=actor,
                        action=f"apply proposal {proposal.id}")
    record = json.loads(proposal.path.read_text(encoding="utf-8"))
    record.update(status="applied", applied=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                  history_id=done.history_id, decided_by=actor)
    _write_json(proposal.path, record)
    u = done.update
    return ApplyResult(u.path, u.changed, u.old_size, u.new_size, u.history_id, done.result.zone)


def reject_proposal(proposal_path: str | os.PathLike[str], *, actor: str = "user",
                    reason: str | None = None) -> Proposal:
    """Mark an open proposal rejected ('user' only); the target file is not touched.

    The record is kept (status ``rejected``, with the time and the user's reason) so the
    review of what an AI asked for stays complete; a rejected proposal can no longer be applied.
    """
    refuse_unless_user(actor, "only the user may reject a proposal")
    if reason is not None and (not isinstance(reason, str) or _NOT_ONE_LINE.search(reason.strip())):
        raise ValueError("a rejection reason is one line of text")
    proposal = load(proposal_path)
    if proposal.status != "open":
        raise RefusedWrite(f"refused: proposal {proposal.id} is already {proposal.status}", code="PROPOSAL_CLOSED",
                           rule="W2")
    record = json.loads(proposal.path.read_text(encoding="utf-8"))
    record.update(status="rejected", rejected=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                  decided_by=actor)
    if reason and reason.strip():
        record["rejection_reason"] = reason.strip()
    _write_json(proposal.path, record)
    return load(proposal.path)


def reopen_undone_proposal(target: str | os.PathLike[str], undone: HistoryEntry) -> bool:
    """After the user undid the write that applied a proposal (``undone``, its history entry), that
    proposal is open again: the zone is as the proposal found it, so it is listed and may be applied
    again (W19).  Any other write, or a record that does not name that write, is left alone."""
    m = re.fullmatch(r"apply proposal (\S+)", undone.action)
    if m is None:
        return False
    # next to the file as named, or (a record made before W32) next to the real file
    boxes = dict.fromkeys([proposals_dir(target), proposals_dir(os.path.realpath(os.fspath(target)))])
    for box in boxes:
        path = box / f"{m.group(1)}.json"
        try:
            proposal = load(path)
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # gone or set aside: nothing to reopen
        if proposal.status == "applied" and record.get("history_id") == undone.id:
            break
    else:
        return False
    for key in ("applied", "history_id", "decided_by"):
        record.pop(key, None)
    record.update(status="open", reopened=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    _write_json(path, record)
    return True


# -- listing and showing (``zonemark proposals``) ------------------------------------------------

def _layer_files(where: Path) -> tuple[dict[str, Path], list[Path]]:
    """The files ``where`` (a file, or a layer folder) owns — the real path of each to the path the layer
    names it by — and the folders whose ``.zonemark/proposals`` may hold their proposals: each file's folder
    as the layer names it, and (records made before W32) the folder of the real file."""
    if where.is_file():
        files = [Path(os.path.abspath(where))]
        top: list[Path] = []
    else:
        from ..layer.loader import LayerError, discover
        try:
            _root, found = discover(where)
        except LayerError:
            found = []
        files = [Path(os.path.abspath(p)) for _rel, p in found]
        top = [Path(os.path.abspath(where))]
    owned = {os.path.realpath(p): p for p in files}
    folders = top + [p.parent for p in files] + [Path(real).parent for real in owned]
    return owned, list(dict.fromkeys(folders))


def _scan(where: Path) -> tuple[list[Proposal], list[Proposal]]:
    """The readable proposals found for ``where``: those of its own files (the target as the layer names
    it), and the others (of a file outside it, reached through a symbolic link or named by hand)."""
    owned, folders = _layer_files(where)
    own: list[Proposal] = []
    foreign: list[Proposal] = []
    seen: set[str] = set()
    for folder in folders:
        box = folder / STATE_DIR_NAME / PROPOSALS_DIR
        if not box.is_dir():
            continue
        for p in sorted(box.glob("*.json")):
            real = os.path.realpath(p)
            if real in seen:
                continue
            seen.add(real)
            try:
                proposal = load(p)
            except ValueError:
                continue
            mine = owned.get(os.path.realpath(proposal.target))
            if mine is None:
                foreign.append(proposal)
            else:
                own.append(replace(proposal, target=mine))
    own.sort(key=lambda x: (x.created, x.id))
    return own, foreign


def stored_proposals(where: str | os.PathLike[str]) -> list[Proposal]:
    """Every readable proposal of a file or a layer folder (any status), oldest first: only those of its own
    files, each with its target as the layer names it (W32)."""
    return _scan(Path(where))[0]


def list_proposals(where: str | os.PathLike[str], *,
                   index_of: Callable[[Path], tuple[bytes, ZoneIndex]] | None = None) -> list[PendingProposal]:
    """The open proposals of a file or a layer folder, each with whether it is stale.  ``index_of``: the bytes of
    a target now and the zone index of their full parse, when the caller keeps them (raises OSError)."""
    out: list[PendingProposal] = []
    indexes: dict[Path, tuple[bytes, ZoneIndex] | None] = {}
    for proposal in stored_proposals(where):
        if proposal.status != "open":
            continue
        if proposal.target not in indexes:
            try:
                if index_of is not None:
                    indexes[proposal.target] = index_of(proposal.target)
                else:
                    data = proposal.target.read_bytes()
                    indexes[proposal.target] = (data, ZoneIndex.parse(decode(data))[1])
            except OSError:
                indexes[proposal.target] = None
        got = indexes[proposal.target]
        zone = None if got is None else locate_zone(proposal, got[0], got[1])
        out.append(PendingProposal(proposal, zone is None, None if zone is None else zone.line))
    return out


def _not_ours(proposal: Proposal, where: str | os.PathLike[str]) -> ValueError:
    return ValueError(f"proposal {proposal.id} is for {proposal.target}, which is not a file of {where}; refused "
                      f"(a layer's proposals are for its own files)")


def find_proposal(where: str | os.PathLike[str], ident: str) -> Proposal:
    """The proposal named ``ident`` (its id, a unique prefix of it, or the path of its file) among those of
    ``where`` (a layer folder or a file); one of a file outside it is refused in one line (W32)."""
    where = Path(where)
    own, foreign = _scan(where)
    p = Path(ident)
    if ident.endswith(".json") and p.is_file():
        given = load(p)
        mine = [x for x in own if os.path.realpath(x.path) == os.path.realpath(p)]
        if not mine:
            raise _not_ours(given, where)
        return mine[0]
    for pool in (own, foreign):
        found = [x for x in pool if x.id == ident] or [x for x in pool if x.id.startswith(ident)]
        if len(found) > 1:
            raise ValueError(f"{quoted(ident)} names {len(found)} proposals; give more of the id")
        if found and pool is foreign:
            raise _not_ours(found[0], where)
        if found:
            return found[0]
    raise ValueError(f"no proposal {quoted(ident)} in {where} (zonemark proposals {where} lists them)")


def show_proposal(proposal: Proposal) -> str:
    """A readable account of one proposal: what, where, why, and the change as a diff of the file now."""
    head = [f"proposal {proposal.id} ({proposal.status})",
            f"file:     {printable(str(proposal.target))}",
            f"zone:     [P{proposal.zone_level}] at line {proposal.zone_line}",
            f"reason:   {printable(proposal.reason)}",
            f"by:       {proposal.who}, {proposal.created}"]
    try:
        data = proposal.target.read_bytes()
    except OSError as exc:
        return "\n".join(head + [f"the file cannot be read: {exc.strerror or exc}"]) + "\n"
    zone = locate_zone(proposal, data) if proposal.status == "open" else None
    if proposal.status != "open":
        body = [f"(already {proposal.status}; the diff as it was proposed:)", proposal.diff]
    elif zone is None:
        body = ["STALE: the zone changed since the proposal was made; it cannot be applied. The diff as it was "
                "proposed:", proposal.diff]
    else:
        new_data = _replaced(data, zone, _content_for(proposal.new_content, data, zone))
        body = [f"the change to the file as it is now (zone at line {zone.line}):",
                _diff(proposal.target.name, data, new_data)]
        if proposal.would_add:
            body.insert(0, f"it would add {len(proposal.would_add)} finding(s); first: {proposal.would_add[0]}")
    # line ends of a CRLF file as line ends; every other control character as \xNN (W13); the invisible and
    # direction-changing characters as ⟨U+202E⟩, so the diff the user approves shows what it holds (W30)
    return reveal(escape_controls(_CR_AT_LINE_END.sub("", printable("\n".join(head + [""] + body))))) + "\n"
