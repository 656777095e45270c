"""``zonemark git setup LAYER``: the merge driver in the clone's config, ``*.md merge=zonemark`` in the layer's
``.gitattributes``, and what ``.zonemark/`` keeps out of git (issue 19 §2).  Idempotent: a second run with the
same flags writes nothing, and every change made is named in the result."""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from ..writer.atomic import replace_file
from .git import GitError, run_git, work_tree
from .settings import STATE_DIR, LayerSettings, read_settings, settings_path, settings_text

DRIVER_NAME = "zonemark: merges IllAIra Markdown files zone by zone"
ATTRIBUTE_LINE = "*.md merge=zonemark"
#: what is machine-local in ``.zonemark/``: proposals/, traces/ and settings.json stay tracked
IGNORED = ("locks/", "history/", "search.sqlite3*", "access.sqlite3*", "review-visit.json", "*.lock",
           ".*.zonemark-tmp.*", ".zonemark-tmp.*")
IGNORE_TEXT = ("# zonemark git setup: what is machine-local in .zonemark/ (locks, saved versions, the search index,\n"
               "# the HTTP server's clients and credential digests, the review page's last visit).\n"
               "# proposals/, traces/ and settings.json stay tracked, so another device can apply a proposal.\n"
               + "".join(line + "\n" for line in IGNORED))
#: ``.zonemark`` folders looked for below the layer (each gets the same .gitignore)
MAX_STATE_FOLDERS = 10_000


@dataclass(frozen=True)
class SetupResult:
    """What ``git setup`` did: one line per change (empty when everything was already so)."""

    top: Path
    changes: tuple[str, ...]
    commit_writes: bool


def driver_command() -> str:
    """The command git runs for a file with ``merge=zonemark``: this interpreter's zonemark, so it works from a venv."""
    return f"{shlex.quote(sys.executable)} -m zonemark merge-file %O %A %B %P"


def setup_layer(layer: str | os.PathLike[str], *, init: bool = False,
                commit_writes: bool | None = None) -> SetupResult:
    """Register the driver, the attribute and the ignores for the layer folder ``layer`` (see the module
    docstring); ``commit_writes`` None keeps the layer's setting as it is."""
    root = Path(layer)
    if not root.is_dir():
        raise GitError(f"{layer} is not a folder; give the layer's folder")
    changes: list[str] = []
    try:
        top = work_tree(root)
    except GitError:
        if not init:
            raise
        r = run_git(["init", "--quiet"], root)
        if not r.ok:
            raise GitError(f"git init failed: {r.first_line()}") from None
        changes.append(f"created a git repository in {root}")
        top = work_tree(root)
    for key, value in (("merge.zonemark.name", DRIVER_NAME), ("merge.zonemark.driver", driver_command())):
        now = run_git(["config", "--local", "--get", key], top)
        if now.ok and now.stdout.rstrip("\n") == value:
            continue
        r = run_git(["config", "--local", key, value], top)
        if not r.ok:
            raise GitError(f"git config {key} failed: {r.first_line()}")
        changes.append(f"git config {key} = {value}")
    attributes = root / ".gitattributes"
    text = attributes.read_text("utf-8") if attributes.is_file() else ""
    if ATTRIBUTE_LINE not in (line.strip() for line in text.splitlines()):
        joined = text + ("" if not text or text.endswith("\n") else "\n") + ATTRIBUTE_LINE + "\n"
        replace_file(attributes, joined.encode("utf-8"), mode=0o644)
        changes.append(f"{attributes}: added '{ATTRIBUTE_LINE}'")
    for folder in _state_folders(root):
        ignore = folder / ".gitignore"
        if not ignore.is_file() or ignore.read_text("utf-8", "replace") != IGNORE_TEXT:
            folder.mkdir(parents=True, exist_ok=True)
            replace_file(ignore, IGNORE_TEXT.encode("utf-8"), mode=0o644)
            changes.append(f"{ignore}: ignores {', '.join(IGNORED[:3])} (proposals and traces stay tracked)")
    current = read_settings(root)
    if commit_writes is not None and (commit_writes != current.commit_writes or not settings_path(root).is_file()):
        wanted = LayerSettings(commit_writes=commit_writes)
        replace_file(settings_path(root), settings_text(wanted, root).encode("utf-8"), mode=0o644, make_parents=True)
        changes.append(f"{settings_path(root)}: commit_writes = {'true' if commit_writes else 'false'}")
        current = wanted
    return SetupResult(top, tuple(changes), current.commit_writes)


def _state_folders(root: Path) -> list[Path]:
    """The layer's ``.zonemark`` folder and every one that already exists below it (files of a sub-folder keep
    their locks and history in their own folder's ``.zonemark``)."""
    found = [root / STATE_DIR]
    for here, dirs, _ in os.walk(root):
        if STATE_DIR in dirs and Path(here) != root:
            found.append(Path(here) / STATE_DIR)
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "node_modules"]
        if len(found) > MAX_STATE_FOLDERS:
            break
    return found


__all__ = ["ATTRIBUTE_LINE", "DRIVER_NAME", "IGNORED", "SetupResult", "driver_command", "setup_layer"]
