"""The pre-commit hook (.pre-commit-hooks.yaml): ``pre-commit try-repo`` on a scratch repository.

pre-commit builds the hook's environment from this repository (``pip install`` of zonemark,
from PyPI for its dependencies), in a temporary HOME and PRE_COMMIT_HOME, then runs
``zonemark check`` on the scratch repository's files: a valid one and a broken one.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

VALID = """# ARIA [reminder]

[P1]
## NUCLEUS 1: LOGICAL
### FUNCTION
Keep reasoning coherent — sempre.

## MODULE 001: ANCHOR [NUCLEI: 1]
### STATE
active
[/P1]
"""
BROKEN = """# NOTES [external_memory]

[P1]
## TOPIC: Viaggi — 旅行
[/P1]

[P4]
###### LOG: 2026-05-03 — unclosed zone
"""


@pytest.mark.skipif(importlib.util.find_spec("pre_commit") is None,
                    reason="pre-commit is not installed (it is in the test extra: pip install -e '.[test]')")
def test_pre_commit_try_repo_fails_on_the_broken_file_only(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    home, cache, work = tmp_path / "home", tmp_path / "cache", tmp_path / "scratch"
    for d in (home, cache, work):
        d.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    env.update(HOME=str(home), PRE_COMMIT_HOME=str(cache), GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid", PRE_COMMIT_COLOR="never")
    (work / "aria[reminder].md").write_text(VALID, encoding="utf-8")
    (work / "notes[ext_memory].md").write_text(BROKEN, encoding="utf-8")
    (work / "notes.txt").write_text("[P9] not markdown: not checked\n", encoding="utf-8")
    for cmd in (["git", "init", "-q"], ["git", "add", "."]):
        subprocess.run(cmd, cwd=work, env=env, check=True, capture_output=True)

    run = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "zonemark-check",
                          "--all-files"], cwd=work, env=env, capture_output=True, text=True, timeout=900)
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "zonemark check" in out and "Failed" in out
    assert "notes[ext_memory].md:7:1: UNCLOSED_PERMISSION_BLOCK" in out
    assert "aria[reminder].md:" not in out  # the valid file has nothing to say
    assert "2 files checked: 1 error, 0 warnings; 1 clean" in out  # notes.txt is not an .md file
