"""``--commit-writes``: one git commit of exactly the files a zonemark write wrote (issue 19 §2).

Run by a face after the write returned, never inside a planner.  The commit takes only the written paths
(``git commit --only -- PATHS``): what the user has staged or changed elsewhere stays staged or changed.  A
commit that fails never undoes the write: a held ``index.lock`` is waited for a short while, then (as for a
missing identity) the caller gets one warning line saying how to commit by hand.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import filelock

from .git import GitError, run_git, work_tree
from .settings import STATE_DIR, layer_of, read_settings

from ..writer.observe import Written, watching

#: seconds a commit is retried while another git process holds the repository's lock
RETRY_SECONDS = 5.0
#: characters of a subject line (the rest of a long title is cut, with an ellipsis)
MAX_SUBJECT_CHARS = 120
_LOCKED = ("index.lock", "cannot lock ref", "unable to create", "Unable to create")
_NO_IDENTITY = ("Please tell me who you are", "unable to auto-detect email address", "empty ident name",
                "no email was given")


@dataclass(frozen=True)
class CommitOutcome:
    """What the commit hook did: the commit made (``sha``), or the warning line when none could be made."""

    paths: tuple[str, ...]
    sha: str | None
    warning: str | None


def subject_text(text: str) -> str:
    """``text`` as one printable line of a commit subject: controls and line breaks become spaces, cut to
    :data:`MAX_SUBJECT_CHARS`."""
    flat = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return flat if len(flat) <= MAX_SUBJECT_CHARS else flat[: MAX_SUBJECT_CHARS - 1] + "\u2026"


def commit_layer(path: str | os.PathLike[str]) -> Path | None:
    """The layer folder whose settings ask for a commit per write, at or above ``path``; None when none does."""
    here = Path(os.path.abspath(os.fspath(path)))
    found = layer_of(here)
    return found if found is not None and read_settings(found).commit_writes else None


def commit_lock(layer: Path) -> filelock.BaseFileLock:
    """The lock zonemark processes hold from a write to its commit, so that each write is its own commit."""
    lock_file = layer / STATE_DIR / "locks" / "git-commit.lock"
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    return filelock.FileLock(str(lock_file), timeout=-1)


@contextlib.contextmanager
def writes_to_commit(where: str | os.PathLike[str]) -> Iterator[list[Written] | None]:
    """Around one write at ``where``: None when its layer does not commit its writes; else the list the writer
    fills with the files it wrote (:func:`zonemark.writer.observe.watching`), while the layer's
    :func:`commit_lock` is held, so that the caller commits them with :func:`commit_written` before the block
    ends and each write is its own commit (G28).  Every face that writes uses it."""
    layer = commit_layer(where)
    if layer is None:
        yield None
        return
    with commit_lock(layer), watching() as seen:
        yield seen


def commit_written(paths: Sequence[str | os.PathLike[str]], subject: str, *, actor: str,
                   client: str) -> CommitOutcome | None:
    """Commit ``paths`` (files a write put on disk) when their layer has ``commit_writes``; None when it has
    not, or when nothing of them is for git (outside the work tree, ignored).  The caller holds
    :func:`commit_lock` of the layer from before the write."""
    if not paths:
        return None
    first = Path(os.path.abspath(os.fspath(paths[0])))
    try:
        top = work_tree(first.parent)
    except GitError:
        return None
    layer = layer_of(first.parent, stop=top)
    if layer is None or not read_settings(layer).commit_writes:
        return None
    rels = _tracked_candidates(top, paths)
    if not rels:
        return None
    message = subject_text(subject)
    trailers = f"Zonemark-Actor: {subject_text(actor)}\nZonemark-Client: {subject_text(client)}"
    try:
        return _commit(top, rels, message, trailers, time.monotonic() + RETRY_SECONDS)
    except GitError as exc:
        return CommitOutcome(rels, None, _warning(rels, str(exc)))


def _commit(top: Path, rels: tuple[str, ...], message: str, trailers: str, deadline: float) -> CommitOutcome:
    pause = 0.05
    while True:
        added = run_git(["add", "--", *rels], top)
        done = added if not added.ok else run_git(
            ["commit", "--quiet", "--only", "-m", message, "-m", trailers, "--", *rels], top)
        if done.ok:
            sha = run_git(["rev-parse", "HEAD"], top).stdout.strip()
            return CommitOutcome(rels, sha or None, None)
        text = done.stderr + done.stdout
        if "nothing to commit" in text or "no changes added" in text:
            return CommitOutcome(rels, None, None)
        if any(mark in text for mark in _NO_IDENTITY):
            return CommitOutcome(rels, None, _warning(rels, "git has no identity here (git config user.name "
                                                            "\"Your Name\"; git config user.email you@example.com)"))
        if not any(mark in text for mark in _LOCKED) or time.monotonic() + pause > deadline:
            reason = (f"another git process held the repository's lock for {RETRY_SECONDS:g} s"
                      if any(mark in text for mark in _LOCKED) else f"git commit failed: {done.first_line()}")
            return CommitOutcome(rels, None, _warning(rels, reason))
        time.sleep(pause)
        pause = min(pause * 2, 0.5)


def _tracked_candidates(top: Path, paths: Sequence[str | os.PathLike[str]]) -> tuple[str, ...]:
    """The written paths relative to the work tree's top, in order, once each, without the ones git ignores."""
    real_top = Path(os.path.realpath(top))
    rels: list[str] = []
    for raw in paths:
        real = Path(os.path.realpath(os.fspath(raw)))
        try:
            rel = real.relative_to(real_top).as_posix()
        except ValueError:
            continue
        if rel not in rels and not rel.startswith(".git/"):
            rels.append(rel)
    if not rels:
        return ()
    ignored = run_git(["check-ignore", "--", *rels], top)
    left_out = set(ignored.stdout.splitlines()) if ignored.returncode == 0 else set()
    return tuple(rel for rel in rels if rel not in left_out)


def _warning(rels: tuple[str, ...], reason: str) -> str:
    shown = " ".join(rels[:3]) + (" …" if len(rels) > 3 else "")
    return (f"warning: the write is kept but was not committed: {reason}; commit it with: "
            f"git commit -- {shown}")


__all__ = ["CommitOutcome", "MAX_SUBJECT_CHARS", "RETRY_SECONDS", "commit_layer", "commit_lock", "commit_written",
           "subject_text"]
