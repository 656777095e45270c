"""Proposals: changes an AI may ask for and only the user may apply (§5.2 [P3], §7.3.1).

:func:`propose` writes one JSON file per proposal into ``.zonemark/proposals/`` next to the
target file.  It holds a unified diff (:mod:`difflib`) of the whole file, the target file
and zone, the SHA-256 of the file it was made against, the reason, who proposed it and the
diagnostics the change would add.  :func:`apply_proposal` is 'user'-only: on the same base
it applies the change; on a file that changed since, it applies the diff only when every
hunk's context still matches (at its place or, uniquely, elsewhere) — otherwise it refuses.
The applied change passes the user re-check of :mod:`.verify` and is written through the
store (history, undo).  Any zone may be the target: for ``[P1]``/``[P2]`` too the AI may
only *ask* (§7.3.1: "the AI may propose this update but cannot apply it").
"""

from __future__ import annotations

import datetime as _dt
import difflib
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..core.parser import parse
from ..core.text import decode, encode
from .atomic import replace_file
from .edit import check_actor, forget
from .locate import ZoneIndex, resolve_container
from .sanitize import RefusedWrite
from .store import STATE_DIR_NAME, Store
from .verify import Edit, Expect, compare

FORMAT = "zonemark-proposal/1"
PROPOSALS_DIR = "proposals"
_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class Proposal:
    path: Path  # the proposal's JSON file
    target: Path
    zone_line: int
    zone_level: int
    base_sha256: str
    diff: str
    reason: str
    proposed_by: str
    would_add: tuple[str, ...]  # diagnostics the change would add (as formatted lines)


def proposals_dir(target) -> Path:
    target = Path(os.path.realpath(os.fspath(target)))
    return target.parent / STATE_DIR_NAME / PROPOSALS_DIR


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _edit_between(old: str, new: str) -> Edit:
    """The smallest whole-line region in which ``old`` and ``new`` differ."""
    n = min(len(old), len(new))
    i = 0
    while i < n and old[i] == new[i]:
        i += 1
    i = old.rfind("\n", 0, i) + 1
    j = 0
    while j < n - i and old[len(old) - 1 - j] == new[len(new) - 1 - j]:
        j += 1
    old_end, new_end = len(old) - j, len(new) - j
    # extend the end to a line boundary in both (the common suffix is identical)
    while old_end < len(old) and old_end > i and old[old_end - 1] != "\n":
        old_end += 1
        new_end += 1
    line = old.count("\n", 0, i) + 1
    return Edit(i, old_end - i, new_end - i, line, old.count("\n", i, old_end), new.count("\n", i, new_end))


def _write_json(path: Path, data: dict) -> None:
    replace_file(path, (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8"), mode=0o644,
                 make_parents=True)


def propose(path, target, new_content: str, *, actor: str = "ai", reason: str,
            store: Store | None = None) -> Proposal:
    """Write a proposal to replace the inner lines of a zone (by opening line, or a container's zone)."""
    check_actor(actor)
    store = store or Store()
    if not isinstance(reason, str) or not reason.strip() or "\n" in reason.strip():
        raise ValueError("a proposal needs a one-line reason")
    if not isinstance(new_content, str):
        raise TypeError("new_content must be str")
    path = Path(path)
    data = store.read(path)
    text = decode(data)
    index = ZoneIndex.build(parse(text, path=str(path)))
    if isinstance(target, int) and not isinstance(target, bool):  # a zone line; a str is a container
        zone = index.zone_at_line(int(target))
        if zone is None:
            raise RefusedWrite(f"refused: no permission zone opens at or contains line {target}", rule="§5.1")
    else:
        cid = resolve_container(index, target)
        zone = index.zone_at_line(index.header_line(cid))
        if zone is None:
            raise RefusedWrite(f"refused: {index.label(cid)} is outside any permission zone", rule="§5.4")
    if zone.close_start is None or zone.inline:
        raise RefusedWrite(f"refused: the zone at line {zone.line} is unclosed or opens inline; edit it by hand",
                           zone=zone.line, rule="§5.1")
    inner = new_content.replace("\r\n", "\n")
    if inner and not inner.endswith("\n"):
        inner += "\n"
    new_text = text[:zone.inner_start] + inner + text[zone.close_start:]
    if new_text == text:
        raise RefusedWrite(f"refused: the proposal changes nothing in the zone at line {zone.line}",
                           zone=zone.line, rule="proposal")
    edit = Edit(zone.inner_start, zone.close_start - zone.inner_start, len(inner), zone.line + 1,
                text.count("\n", zone.inner_start, zone.close_start), inner.count("\n"))
    before = parse(text, path=str(path))
    verdict = compare(before, parse(new_text, path=str(path)), edit, Expect(entries=None, structure=True))
    would_add = tuple(d.format() for d in verdict.new_diagnostics) + verdict.problems
    diff = "\n".join(difflib.unified_diff(text.split("\n"), new_text.split("\n"), fromfile=path.name,
                                          tofile=path.name, lineterm=""))
    now = _dt.datetime.now(_dt.timezone.utc)
    base = _sha(data)
    folder = proposals_dir(path)
    name = f"{now.strftime('%Y%m%dT%H%M%S%f')}-{path.stem[:40]}-L{zone.line}-{base[:8]}.json"
    record = {
        "format": FORMAT, "status": "open", "file": path.name, "zone": {"line": zone.line, "level": zone.level},
        "base_sha256": base, "reason": reason.strip(), "proposed_by": actor,
        "created": now.isoformat(timespec="seconds"), "would_add": list(would_add),
        "new_content": inner, "diff": diff,
    }
    out = folder / name
    _write_json(out, record)
    return Proposal(out, Path(os.path.realpath(path)), zone.line, zone.level, base, diff, reason.strip(), actor,
                    would_add)


def apply_diff(text: str, diff: str) -> str:
    """Apply a unified diff made by :func:`propose` to ``text``; ValueError when a hunk no longer fits."""
    lines = text.split("\n")
    hunks = []
    cur = None
    for raw in diff.split("\n"):
        m = _HUNK.match(raw)
        if m:
            cur = {"old_start": int(m.group(1)), "old": [], "new": []}
            hunks.append(cur)
            continue
        if cur is None:  # the '--- a' / '+++ b' header
            continue
        tag, body = raw[:1], raw[1:]
        if tag == " ":
            cur["old"].append(body)
            cur["new"].append(body)
        elif tag == "-":
            cur["old"].append(body)
        elif tag == "+":
            cur["new"].append(body)
        elif raw == "":
            continue
        else:
            raise ValueError(f"unreadable diff line: {raw[:40]!r}")
    if not hunks:
        raise ValueError("the proposal holds no change")
    shift = 0
    for h in hunks:
        old, new = h["old"], h["new"]
        want = max(h["old_start"] - 1, 0) + shift if old else h["old_start"] + shift
        if lines[want:want + len(old)] == old:
            at = want
        else:
            places = [k for k in range(len(lines) - len(old) + 1) if lines[k:k + len(old)] == old]
            if len(places) != 1:
                raise ValueError(f"the text around line {h['old_start']} changed since the proposal was made")
            at = places[0]
        lines[at:at + len(old)] = new
        shift += (at - want) + len(new) - len(old)
    return "\n".join(lines)


def load(proposal_path) -> dict:
    p = Path(proposal_path)
    try:
        record = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"no such proposal: {p}") from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{p} is not a readable proposal ({exc.__class__.__name__})") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT or not isinstance(record.get("diff"), str):
        raise ValueError(f"{p} is not a zonemark proposal")
    return record


def apply_proposal(proposal_path, *, actor: str = "user", store: Store | None = None):
    """Apply a proposal ('user' only); returns the store's UpdateResult."""
    check_actor(actor)
    if actor != "user":
        raise RefusedWrite("refused: only the user may apply a proposal (§5.2)", rule="§5.2")
    store = store or Store()
    p = Path(proposal_path)
    record = load(p)
    if record.get("status") != "open":
        raise RefusedWrite(f"refused: proposal {p.name} is already {record.get('status')}", rule="proposal")
    folder = p.resolve().parent
    if folder.name != PROPOSALS_DIR or folder.parent.name != STATE_DIR_NAME:
        raise ValueError(f"{p} is not inside a {STATE_DIR_NAME}/{PROPOSALS_DIR} folder")
    name = record.get("file")
    if not isinstance(name, str) or os.sep in name or name in ("", ".", ".."):
        raise ValueError(f"{p} names no valid target file")
    target = folder.parent.parent / name

    def transform(data: bytes) -> bytes:
        text = decode(data)
        try:
            new_text = apply_diff(text, record["diff"])
        except ValueError as exc:
            raise RefusedWrite(f"refused: {target.name} changed since the proposal and the diff no longer applies: "
                               f"{exc}", zone=record.get("zone", {}).get("line"), rule="proposal") from None
        if new_text == text:
            return data
        edit = _edit_between(text, new_text)
        before = parse(text, path=str(target))
        verdict = compare(before, parse(new_text, path=str(target)), edit, Expect(entries=None, structure=True))
        if not verdict.ok:
            raise RefusedWrite(f"refused: applying {p.name}: {verdict.reason()} (§5.5, re-check)",
                               zone=record.get("zone", {}).get("line"), rule="§5.5")
        return encode(new_text)

    result = store.update(target, transform, actor=actor, action=f"apply proposal {p.name}")
    forget(target)
    record.update(status="applied", applied=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                  history_id=result.history_id)
    _write_json(p, record)
    return result
