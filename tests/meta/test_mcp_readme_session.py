"""The README's MCP session ('For AI agents') is what the server answers now.

The transcript is replayed on a copy of ``examples/layer`` named ``my-layer`` through the SDK's
real in-memory client: the tool list in order, every ``"key": value`` the README shows of an
answer (a value shortened with ``…`` as a prefix), and every refusal's whole text.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

from mcp_support import Agent
from zonemark.mcp.server import build_server

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAIR = re.compile(r'"(\w+)": ("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)')


def transcript() -> list[tuple[str, str]]:
    """(call, answer) pairs of the session block."""
    section = README.split("## For AI agents: the MCP server", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```text\n(> list_tools\(\).*?)```", section, re.S).group(1)
    steps = []
    for chunk in re.split(r"^> ", block, flags=re.M)[1:]:
        lines = chunk.rstrip("\n").split("\n")
        call = [lines[0]]
        rest = lines[1:]
        while rest and call[-1].endswith(","):  # a call wrapped over several lines
            call.append(rest.pop(0).strip())
        steps.append((" ".join(call), "\n".join(rest)))
    return steps


def arguments(call: str) -> tuple[str, dict]:
    call = call.replace("text=<examples/chat/answer.txt>", "text=ANSWER")
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name), call
    args = {}
    for kw in node.keywords:
        if isinstance(kw.value, ast.Name) and kw.value.id == "ANSWER":
            args[kw.arg] = (ROOT / "examples" / "chat" / "answer.txt").read_text(encoding="utf-8")
        else:
            args[kw.arg] = ast.literal_eval(kw.value)
    return node.func.id, args


def pairs(data) -> list[tuple[str, object]]:
    out = []
    if isinstance(data, dict):
        for k, v in data.items():
            out.append((k, v))
            out.extend(pairs(v))
    elif isinstance(data, list):
        for v in data:
            out.extend(pairs(v))
    return out


def shown(expected, actual) -> bool:
    if isinstance(expected, str) and expected.endswith("…") and isinstance(actual, str):
        return actual.startswith(expected[:-1])
    return type(expected) is type(actual) and expected == actual


def test_the_readme_session_is_what_the_server_answers(tmp_path):
    layer = tmp_path / "my-layer"
    shutil.copytree(ROOT / "examples" / "layer", layer)
    agent = Agent(build_server(layer))
    steps = transcript()
    assert len(steps) >= 5
    seen_hashes: list[str] = []
    for call, answer in steps:
        if call == "list_tools()":
            names = re.findall(r"\w+", answer)
            assert names == [t.name for t in agent.tools()], call
            continue
        name, args = arguments(call)
        for key, value in args.items():  # a hash shown shortened is the one the server gave
            if isinstance(value, str) and value.endswith("…") and len(value) > 1:
                (args[key],) = [h for h in seen_hashes if h.startswith(value[:-1])]
        result = agent.raw(name, args)
        text = result.content[0].text
        if answer.lstrip().startswith("error: "):
            assert result.is_error, (call, text)
            assert " ".join(answer.split())[len("error: "):] == " ".join(text.split()), call
            continue
        assert not result.is_error, (call, text)
        data = json.loads(text)
        seen_hashes += [v for k, v in pairs(data) if k == "hash"]
        got = pairs(data)
        for key, raw in PAIR.findall(answer):
            expected = json.loads(raw)
            assert any(k == key and shown(expected, v) for k, v in got), f"{call}: {key}: {raw} not in the answer"
