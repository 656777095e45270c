"""``zonemark sync LAYER``: fetch, merge with the zonemark driver, push (issue 19 §2).

Refuses a work tree with changes to tracked files (staged or not), a detached HEAD and a branch with no
upstream; never force-pushes (a push the remote refuses is reported, and the next sync merges first).  What
came in is read from the merge: the files it changed and, per container, the entries it added.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .git import REMOTE_TIMEOUT, GitError, run_git, work_tree

#: files of one sync whose entries are counted (more are listed by name only)
MAX_COUNTED_FILES = 200
#: bytes of a file read to count its entries (a larger one is listed by name only)
MAX_COUNTED_BYTES = 20 * 1024 * 1024


class SyncRefused(GitError):
    """The sync did not start (or stopped) for a reason the user must act on; nothing was changed."""


@dataclass(frozen=True)
class SyncResult:
    """What one sync did: commits in and out, what came in, the files left in conflict."""

    branch: str
    upstream: str
    incoming: int
    outgoing: int
    changed: tuple[str, ...]  # files the merge changed here (relative to the work tree's top)
    entries: tuple[tuple[str, str, int], ...]  # (file, container address, entries added)
    conflicts: tuple[str, ...]
    pushed: bool
    push_error: str | None = None


def sync_layer(layer: str | os.PathLike[str]) -> SyncResult:
    """Fetch the upstream of the current branch, merge it (the driver merges ``*.md``), push the result."""
    root = Path(layer)
    if not root.is_dir():
        raise GitError(f"{layer} is not a folder; give the layer's folder")
    top = work_tree(root)
    if run_git(["rev-parse", "-q", "--verify", "MERGE_HEAD"], top).ok:
        raise SyncRefused(f"{top}: a merge is in progress; resolve it (git status) and commit, or git merge --abort")
    dirty = run_git(["status", "--porcelain=v1", "--untracked-files=no"], top)
    if not dirty.ok:
        raise GitError(f"git status failed: {dirty.first_line()}")
    if dirty.stdout.strip():
        first = dirty.stdout.splitlines()[0][3:]
        raise SyncRefused(f"{top}: the work tree has uncommitted changes ({first}"
                          f"{' …' if len(dirty.stdout.splitlines()) > 1 else ''}); commit or stash them, then sync")
    head = run_git(["symbolic-ref", "--quiet", "--short", "HEAD"], top)
    if not head.ok:
        raise SyncRefused(f"{top}: HEAD is not on a branch; git switch to the layer's branch, then sync")
    branch = head.stdout.strip()
    remote = run_git(["config", "--get", f"branch.{branch}.remote"], top).stdout.strip()
    merge_ref = run_git(["config", "--get", f"branch.{branch}.merge"], top).stdout.strip()
    if not remote or not merge_ref.startswith("refs/heads/"):
        raise SyncRefused(f"branch {branch} has no upstream; set one once with: git push -u origin {branch}")
    fetched = run_git(["fetch", "--quiet", "--no-recurse-submodules", remote], top, timeout=REMOTE_TIMEOUT)
    if not fetched.ok:
        raise GitError(f"git fetch {remote} failed: {fetched.first_line()}")
    upstream = run_git(["rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}"], top).stdout.strip()
    if not upstream:  # the upstream branch does not exist yet on the remote: push it
        upstream = f"{remote}/{merge_ref[len('refs/heads/'):]}"
        return _push(top, branch, upstream, remote, merge_ref, 0, _count(top, "HEAD", True), (), (), ())
    incoming = _count(top, "HEAD..@{u}", False)
    before = run_git(["rev-parse", "HEAD"], top).stdout.strip()
    changed: tuple[str, ...] = ()
    entries: tuple[tuple[str, str, int], ...] = ()
    if incoming:
        merged = run_git(["merge", "--no-edit", "--quiet", "@{u}"], top)
        if not merged.ok:
            unmerged = run_git(["diff", "--name-only", "--diff-filter=U"], top).stdout.split("\n")
            conflicts = tuple(name for name in unmerged if name)
            if not conflicts:
                raise GitError(f"git merge failed: {merged.first_line()}")
            return SyncResult(branch, upstream, incoming, _count(top, "@{u}..HEAD", False), (), (), conflicts, False)
        changed = tuple(n for n in run_git(["diff", "--name-only", before, "HEAD"], top).stdout.split("\n") if n)
        entries = _entries_in(top, before, changed)
    outgoing = _count(top, "@{u}..HEAD", False)
    return _push(top, branch, upstream, remote, merge_ref, incoming, outgoing, changed, entries, ())


def _push(top: Path, branch: str, upstream: str, remote: str, merge_ref: str, incoming: int, outgoing: int,
          changed: tuple[str, ...], entries: tuple[tuple[str, str, int], ...],
          conflicts: tuple[str, ...]) -> SyncResult:
    if not outgoing:
        return SyncResult(branch, upstream, incoming, 0, changed, entries, conflicts, False)
    pushed = run_git(["push", "--quiet", "--no-verify", remote, f"HEAD:{merge_ref}"], top, timeout=REMOTE_TIMEOUT)
    error = None if pushed.ok else pushed.first_line()
    return SyncResult(branch, upstream, incoming, outgoing, changed, entries, conflicts, pushed.ok, error)


def _count(top: Path, revs: str, whole: bool) -> int:
    r = run_git(["rev-list", "--count", "HEAD" if whole else revs], top)
    return int(r.stdout.strip()) if r.ok and r.stdout.strip().isdigit() else 0


def _entries_in(top: Path, before: str, changed: tuple[str, ...]) -> tuple[tuple[str, str, int], ...]:
    """Per container of each changed ``.md`` file, how many entries it holds now more than before the merge."""
    from ..core.parser import parse_bytes
    from ..layer.containers import list_containers
    out: list[tuple[str, str, int]] = []
    for rel in [c for c in changed if c.endswith(".md")][:MAX_COUNTED_FILES]:
        path = top / rel
        try:
            if path.stat().st_size > MAX_COUNTED_BYTES:
                continue
            now = path.read_bytes()
        except OSError:
            continue
        old = run_git(["show", f"{before}:{rel}"], top)
        then = {c.address: c.entries for c in list_containers(parse_bytes(old.stdout.encode("utf-8")))} \
            if old.ok and len(old.stdout) <= MAX_COUNTED_BYTES else {}
        for c in list_containers(parse_bytes(now)):
            added = c.entries - then.get(c.address, 0)
            if added > 0:
                out.append((rel, c.address, added))
    return tuple(out)


__all__ = ["SyncRefused", "SyncResult", "sync_layer"]
