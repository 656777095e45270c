"""What each pending proposal of a layer would change in its file as the file is now (§5.2 [P3]).

:func:`zonemark.writer.proposals.list_proposals` says which proposals are open and whether
each is stale; this module adds, for a person to read, the file's text now and the text
``apply`` would write: the declared zone found as the writer finds it
(:func:`~zonemark.writer.preview_proposal`) with its inner lines replaced by the proposed
content in the file's line endings (ruling W1/W2; a test holds this equal to the bytes
``apply_proposal`` writes).  A stale proposal has no ``after``: it cannot be applied, and its
stored diff (the change as it was proposed) is all there is to read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..core.parser import parse
from ..core.text import decode
from ..layer.enclosing import Enclosing, enclosing_container
from ..writer import PendingProposal, Proposal, list_proposals, preview_proposal, stored_proposals


@dataclass(frozen=True)
class ProposalChange:
    """One pending proposal with the file's text now and after it (``after`` None when stale)."""

    pending: PendingProposal
    file: str  # the target relative to the layer root, as the layer names it
    before: str | None  # None when the file cannot be read
    after: str | None
    container: Enclosing | None  # the container the zone pairs with (its closing tag's, §7.1.2)

    @property
    def proposal(self) -> Proposal:
        return self.pending.proposal

    @property
    def stale(self) -> bool:
        return self.pending.stale


def _rel(root: Path, target: Path) -> str:
    """The target as the layer names it (the writer lists only the layer's own files, W32)."""
    for base in (Path(os.path.abspath(root)), Path(os.path.realpath(root))):
        try:
            return target.relative_to(base).as_posix()
        except ValueError:
            continue
    return str(target)


def proposal_change(pending: PendingProposal, root: Path) -> ProposalChange:
    """The text of the proposal's file now and as ``apply`` would write it now."""
    proposal = pending.proposal
    rel = _rel(root, proposal.target)
    try:
        data = proposal.target.read_bytes()
    except OSError:
        return ProposalChange(pending, rel, None, None, None)
    text = decode(data)
    doc = parse(text, path=str(proposal.target))
    preview = None if pending.stale else preview_proposal(proposal, data)
    if preview is None:
        return ProposalChange(pending, rel, text, None, None)
    zone, new_data = preview
    after = decode(new_data)
    closing = zone.close_line if zone.close_line is not None else zone.line
    return ProposalChange(pending, rel, text, after, enclosing_container(doc, closing))


def pending_changes(root: str | os.PathLike[str]) -> list[ProposalChange]:
    """Every open proposal of the layer folder ``root``, oldest first, with its change."""
    root = Path(root)
    return [proposal_change(pending, root) for pending in list_proposals(root)]


def decided_proposals(root: str | os.PathLike[str]) -> list[Proposal]:
    """The proposals of the layer already applied or rejected, newest first."""
    return [p for p in reversed(stored_proposals(Path(root))) if p.status != "open"]


__all__ = ["ProposalChange", "decided_proposals", "pending_changes", "proposal_change"]
