"""The one way zonemark runs the machine's ``git``: an argument list (never a shell string), a timeout
on every call, no terminal prompt (``GIT_TERMINAL_PROMPT=0``), output decoded without failing."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

#: seconds a local git command may take (status, config, add, commit)
LOCAL_TIMEOUT = 30.0
#: seconds a git command that talks to a remote may take (fetch, push)
REMOTE_TIMEOUT = 120.0


class GitError(Exception):
    """git could not be run, timed out, or the folder is not a git work tree; the message is one line."""


@dataclass(frozen=True)
class GitResult:
    """What one git call returned."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def first_line(self) -> str:
        """The first non-empty line git printed on stderr (else stdout), for a one-line message."""
        for text in (self.stderr, self.stdout):
            for line in text.splitlines():
                if line.strip():
                    return line.strip()
        return f"git exited with {self.returncode}"


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of every git call: the process's own, no prompt for credentials, no editor."""
    env = dict(os.environ)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_MERGE_AUTOEDIT"] = "no"
    env.setdefault("GIT_ASKPASS", "")
    env.setdefault("SSH_ASKPASS", "")
    if extra:
        env.update(extra)
    return env


def run_git(args: list[str], cwd: str | os.PathLike[str], *, timeout: float = LOCAL_TIMEOUT,
            env: dict[str, str] | None = None) -> GitResult:
    """Run ``git ARGS`` in ``cwd``; a missing git or a timeout is a :class:`GitError`, any exit code is data."""
    try:
        done = subprocess.run(["git", *args], cwd=os.fspath(cwd), capture_output=True, timeout=timeout,
                              env=git_env(env), stdin=subprocess.DEVNULL, check=False)
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH); zonemark uses the machine's git") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} did not finish within {timeout:g} s; nothing more was done") from None
    return GitResult(done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"))


def work_tree(path: str | os.PathLike[str]) -> Path:
    """The top folder of the git work tree holding ``path`` (a folder), or a :class:`GitError`."""
    folder = Path(path)
    if not folder.is_dir():
        folder = folder.parent
    r = run_git(["rev-parse", "--show-toplevel"], folder)
    if not r.ok or not r.stdout.strip():
        raise GitError(f"{path} is not inside a git work tree (git init, or zonemark git setup --init)")
    return Path(r.stdout.strip())


__all__ = ["GitError", "GitResult", "LOCAL_TIMEOUT", "REMOTE_TIMEOUT", "git_env", "run_git", "work_tree"]
