"""What each pending proposal of a layer would change in its file as the file is now (§5.2 [P3]).

:func:`zonemark.writer.proposals.list_proposals` says which proposals are open and whether
each is stale; this module adds, for a person to read, the file's text now and the text
``apply`` would write: the declared zone found as the writer finds it
(:func:`~zonemark.writer.preview_inner`, the inner lines of
:func:`~zonemark.writer.preview_proposal`) with its inner lines replaced by the proposed
content in the file's line endings (ruling W1/W2; a test holds this equal to the bytes
``apply_proposal`` writes).  A stale proposal has no ``after``: it cannot be applied, and its
stored diff (the change as it was proposed) is all there is to read.

A proposal knows where its change is: the zone.  Its :class:`Window` is that zone with
:data:`CONTEXT` lines around it, before and after, and is all a page diffs (RV9).  Each file is
read and parsed once for all its proposals — by ``read``, the parse a face already holds of the
file now (the review page's layer cache), or a parse here — and its zone index and the containers
of the proposals' zones are computed once per parse.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..core.document import Document
from ..core.parser import parse_bytes
from ..core.text import decode
from ..layer.enclosing import Enclosing, enclosing_containers
from ..writer import PendingProposal, Proposal, ZoneIndex, ZoneView, list_proposals, preview_inner, stored_proposals

CONTEXT = 3  # lines of the file shown around a proposal's zone
_KEPT = 8  # zone indexes kept, one per parse (the newest)
_indexes: OrderedDict[int, tuple[Document, ZoneIndex, dict[int, Enclosing]]] = OrderedDict()

Reader = Callable[[Path], "tuple[bytes, Document]"]


@dataclass(frozen=True)
class Window:
    """Lines ``first``.. of the file now (``old``) and the same lines after applying (``new``): the zone and
    :data:`CONTEXT` lines around it; ``head``/``tail`` say whether they reach the file's first and last line."""

    first: int
    old: str
    new: str
    head: bool
    tail: bool


@dataclass(frozen=True)
class ProposalChange:
    """One pending proposal with the file's text now and after it (``after`` None when stale)."""

    pending: PendingProposal
    file: str  # the target relative to the layer root, as the layer names it
    data: bytes | None  # the file's bytes now (None when it cannot be read)
    zone: ZoneView | None  # the zone apply would write now (None when stale)
    inner: bytes | None  # what apply would put between its tags
    container: Enclosing | None  # the container the zone pairs with (its closing tag's, §7.1.2)
    window: Window | None = None  # what changes, with context (None when stale or unreadable)

    @property
    def proposal(self) -> Proposal:
        return self.pending.proposal

    @property
    def stale(self) -> bool:
        return self.pending.stale

    @property
    def before(self) -> str | None:
        """The file's text now (decoded on demand); None when it cannot be read."""
        return None if self.data is None else decode(self.data)

    @property
    def after_data(self) -> bytes | None:
        """The bytes apply would write (built on demand: the window is what a page shows)."""
        if self.data is None or self.zone is None or self.inner is None or self.zone.close_start is None:
            return None
        return self.data[:self.zone.inner_start] + self.inner + self.data[self.zone.close_start:]

    @property
    def after(self) -> str | None:
        """The text apply would write."""
        data = self.after_data
        return None if data is None else decode(data)


def _rel(root: Path, target: Path) -> str:
    """The target as the layer names it (the writer lists only the layer's own files, W32)."""
    for base in (Path(os.path.abspath(root)), Path(os.path.realpath(root))):
        try:
            return target.relative_to(base).as_posix()
        except ValueError:
            continue
    return str(target)


def _read(path: Path) -> tuple[bytes, Document]:
    data = path.read_bytes()
    return data, parse_bytes(data, path=str(path))


def _kept(doc: Document) -> tuple[Document, ZoneIndex, dict[int, Enclosing]]:
    """The zone index of ``doc`` and the containers of its lines asked so far, built once per parse."""
    kept = _indexes.get(id(doc))
    if kept is not None and kept[0] is doc:
        return kept
    kept = (doc, ZoneIndex.build(doc), {})
    _indexes[id(doc)] = kept
    while len(_indexes) > _KEPT:
        _indexes.popitem(last=False)
    return kept


def _index(doc: Document) -> ZoneIndex:
    return _kept(doc)[1]


def _containers(doc: Document, lines: list[int]) -> list[Enclosing]:
    """The containers of ``lines`` of ``doc``: one walk of its headers for the lines not asked before."""
    known = _kept(doc)[2]
    missing = sorted({line for line in lines if line not in known})
    if missing:
        known.update(zip(missing, enclosing_containers(doc, missing)))
    return [known[line] for line in lines]


def _window(data: bytes, zone: ZoneView, inner: bytes) -> Window:
    """The zone's lines with :data:`CONTEXT` lines around, now and with ``inner`` between its tags."""
    assert zone.close_start is not None
    start, line = zone.start, zone.line
    end = zone.close_end if zone.close_end is not None else len(data)
    begin: int = start
    for _ in range(CONTEXT):
        if begin == 0:
            break
        begin = data.rfind(b"\n", 0, begin - 1) + 1
    stop: int = end
    for _ in range(CONTEXT):
        if stop >= len(data):
            break
        found = data.find(b"\n", stop)
        stop = len(data) if found < 0 else found + 1
    first = line - data.count(b"\n", begin, start)
    new = data[begin:zone.inner_start] + inner + data[zone.close_start:stop]
    return Window(first, decode(data[begin:stop]), decode(new), begin == 0, stop >= len(data))


def pending_changes(root: str | os.PathLike[str], *, read: Reader | None = None) -> list[ProposalChange]:
    """Every open proposal of the layer folder ``root``, oldest first, with its change; ``read`` gives a file's
    bytes now and their parse (raises OSError)."""
    root = Path(root)
    read = read or _read
    files: dict[Path, tuple[bytes, Document] | None] = {}

    def target(path: Path) -> tuple[bytes, Document] | None:
        if path not in files:
            try:
                files[path] = read(path)
            except OSError:
                files[path] = None
        return files[path]

    def index_of(path: Path) -> tuple[bytes, ZoneIndex]:
        got = target(path)
        if got is None:
            raise OSError(f"{path} cannot be read")
        return got[0], _index(got[1])

    pending = list_proposals(root, index_of=index_of)
    previews = []
    for item in pending:
        got = target(item.proposal.target)
        preview = None if got is None or item.stale else preview_inner(item.proposal, got[0], _index(got[1]))
        previews.append(preview)
    closings: dict[Path, list[int]] = {}
    for item, preview in zip(pending, previews):
        if preview is not None:
            zone = preview[0]
            closings.setdefault(item.proposal.target, []).append(zone.close_line or zone.line)
    owners: dict[tuple[Path, int], Enclosing] = {}
    for path, lines in closings.items():
        got = target(path)
        assert got is not None
        owners.update({(path, line): e for line, e in zip(lines, _containers(got[1], lines))})
    out = []
    for item, preview in zip(pending, previews):
        proposal = item.proposal
        rel = _rel(root, proposal.target)
        got = target(proposal.target)
        if got is None:
            out.append(ProposalChange(item, rel, None, None, None, None))
        elif preview is None:
            out.append(ProposalChange(item, rel, got[0], None, None, None))
        else:
            zone, inner = preview
            out.append(ProposalChange(item, rel, got[0], zone, inner,
                                      owners[(proposal.target, zone.close_line or zone.line)],
                                      _window(got[0], zone, inner)))
    return out


def decided_proposals(root: str | os.PathLike[str]) -> list[Proposal]:
    """The proposals of the layer already applied or rejected, newest first."""
    return [p for p in reversed(stored_proposals(Path(root))) if p.status != "open"]


__all__ = ["CONTEXT", "ProposalChange", "Window", "decided_proposals", "pending_changes"]
