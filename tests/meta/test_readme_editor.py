"""The README sections 'In your editor' and 'pre-commit and CI': their snippets are valid and
name things that exist (the command, the hook id, the output format)."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path

import yaml

from zonemark.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    start = README.index(f"## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start:end if end != -1 else None]


def blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


EDITOR, CI = section("In your editor"), section("pre-commit and CI")


def test_editor_snippets_start_zonemark_lsp():
    (vscode,) = blocks(EDITOR, "json")
    settings = json.loads(vscode)
    assert [settings["glspc.server.command"], *settings["glspc.server.commandArguments"]] == ["zonemark", "lsp"]
    assert settings["glspc.server.languageId"] == ["markdown"]
    (helix,) = blocks(EDITOR, "toml")
    config = tomllib.loads(helix)
    assert config["language-server"]["zonemark"] == {"command": "zonemark", "args": ["lsp"]}
    assert "zonemark" in config["language"][0]["language-servers"]
    (lua,) = blocks(EDITOR, "lua")
    assert 'cmd = { "zonemark", "lsp" }' in lua and "vim.lsp.start" in lua
    build_parser().parse_args(["lsp"])  # the command the snippets run exists


def test_pre_commit_snippets_use_the_hook_this_repository_defines():
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    (hook,) = hooks
    assert hook["id"] == "zonemark-check" and shlex.split(hook["entry"]) == ["zonemark", "check"]
    assert re.search(hook["files"], "layer/aria[reminder].md") and not re.search(hook["files"], "notes.txt")
    config, whole = blocks(CI, "yaml")[:2]
    (repo,) = yaml.safe_load(config)["repos"]
    assert [h["id"] for h in repo["hooks"]] == ["zonemark-check"]
    (extra,) = yaml.safe_load(whole)
    assert extra["id"] == "zonemark-check" and extra["pass_filenames"] is False


def test_ci_workflow_runs_a_check_with_github_annotations(capsys):
    workflow = yaml.safe_load(blocks(CI, "yaml")[2])
    runs = [step["run"] for step in workflow["jobs"]["check"]["steps"] if "run" in step]
    command = shlex.split(runs[-1])
    assert command[:4] == ["zonemark", "check", "--format", "github"]
    assert main(["check", "--format", "github", str(ROOT / "tests" / "fixtures" / "layers" / "unresolved")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^::warning file=.*,line=\d+,col=\d+,title=LAYER_UNRESOLVED_CONNECTION::", out, re.M)
