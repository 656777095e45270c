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

ROOT = Path(__file__).resolve().parents[2]

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


def _snippets() -> tuple[dict, dict]:
    """The README's two hook entries ('pre-commit and CI'): file by file, and the whole layer."""
    import re

    import yaml
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## pre-commit and CI\n", 1)[1].split("\n## ", 1)[0]
    config, whole = re.findall(r"```yaml\n(.*?)```", section, re.S)[:2]
    (repo,) = yaml.safe_load(config)["repos"]
    (first,) = repo["hooks"]
    (layer_hook,) = yaml.safe_load(whole)
    return first, layer_hook


def _hook_repository(target: Path, env: dict) -> str:
    """A git repository holding this working tree's hook (what pip installs), committed; its commit."""
    target.mkdir()
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy2(ROOT / name, target / name)
    shutil.copytree(ROOT / "src", target / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for cmd in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-q", "-m", "hook"]):
        subprocess.run(cmd, cwd=target, env=env, check=True, capture_output=True)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=target, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("pre_commit") is None,
                    reason="pre-commit is not installed (it is in the test extra: pip install -e '.[test]')")
def test_the_readme_snippets_pass_after_a_zonemark_write_and_the_whole_layer_fails_on_warnings(tmp_path):
    """After a write, layer/.zonemark/ holds history and locks: the README's file-by-file hook passes (and so does
    a ``files: ^layer/`` that lets them through, as check leaves them out); its whole-layer hook blocks the commit
    on the layer's cross-file warnings and shows them."""
    import yaml

    from zonemark.cli.main import main
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    home, cache, work = tmp_path / "home", tmp_path / "cache", tmp_path / "scratch"
    for d in (home, cache, work):
        d.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    env.update(HOME=str(home), PRE_COMMIT_HOME=str(cache), GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid", PRE_COMMIT_COLOR="never")
    rev = _hook_repository(tmp_path / "hook", env)
    layer = work / "layer"
    shutil.copytree(ROOT / "tests" / "fixtures" / "layers" / "unresolved", layer)  # cross-file warnings
    assert main(["new", "memory", "Viaggi", "--dir", str(layer), "--topic", "Tokyo"]) == 0
    assert main(["append", str(layer / "Viaggi[ext_memory].md"), "--container", "Tokyo", "--title", "東京 — perché",
                 "--body", "Il treno è arrivato in orario — 東京."]) == 0
    assert any((layer / ".zonemark").rglob("*")), "the write left its history and lock under .zonemark/"
    (layer / "notes.txt").write_text("[P9] not markdown — ignorato\n", encoding="utf-8")

    first, whole = _snippets()
    let_through = {"id": "zonemark-check", "files": "^layer/"}  # the README's first snippet before it was fixed
    hooks = [dict(first, name="first snippet"), dict(let_through, name="files layer"), dict(whole, name="whole layer")]
    config = {"repos": [{"repo": str(tmp_path / "hook"), "rev": rev, "hooks": hooks}]}
    (work / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    for cmd in (["git", "init", "-q"], ["git", "add", "."]):
        subprocess.run(cmd, cwd=work, env=env, check=True, capture_output=True)

    run = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=work, env=env,
                         capture_output=True, text=True, timeout=900)
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    status = {line.split(".", 1)[0]: line.rsplit(".", 1)[-1] for line in out.splitlines() if "...." in line}
    assert status == {"first snippet": "Passed", "files layer": "Passed", "whole layer": "Failed"}, out
    assert "MISSING_FILE_TYPE" not in out
    assert "layer/main[reminder].md:14:1: LAYER_UNRESOLVED_CONNECTION" in out
