"""The MCP tools as a table of plain functions: each callable alone, the list and its schemas built once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_support import MEMORY_NAME, Agent, line_of, make_layer
from zonemark.mcp import server as server_module
from zonemark.mcp.server import (TOOLS, ToolRefusal, append_entry, build_server, read_container, read_zone,
                                 tool_context)


@pytest.fixture
def fresh_tool_list() -> Iterator[None]:
    """The process's tool list forgotten before and after the test (it is built again on first use)."""
    for cached in (server_module.sdk_tools, server_module.listed_tools, server_module._arguments):
        cached.cache_clear()
    yield
    for cached in (server_module.sdk_tools, server_module.listed_tools, server_module._arguments):
        cached.cache_clear()


def test_the_tool_list_and_its_schemas_are_built_once_per_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  fresh_tool_list: None) -> None:
    built: list[str] = []
    from_function = server_module.Tool.from_function

    def counting(fn: Any, *args: Any, **kwargs: Any) -> Any:
        built.append(kwargs.get("name") or fn.__name__)
        return from_function(fn, *args, **kwargs)

    monkeypatch.setattr(server_module.Tool, "from_function", counting)
    servers = [build_server(make_layer(tmp_path / f"layer{n}")) for n in range(2)]
    for server in servers:
        agent = Agent(server)
        for _ in range(3):
            assert [t.name for t in agent.tools()] == [row.name for row in TOOLS]
        agent.call("list_zones", file=MEMORY_NAME)
        agent.refused("list_zones", file=MEMORY_NAME, actor="user")  # the unknown-argument check reads the list
    assert sorted(built) == sorted(row.name for row in TOOLS)  # once per tool, whatever the servers and calls
    first, second = (anyio.run(s.list_tools) for s in servers)
    assert all(a is b for a, b in zip(first, second, strict=True))


def test_the_table_gives_the_names_order_and_descriptions_of_tools_list(tmp_path: Path) -> None:
    tools = Agent(build_server(make_layer(tmp_path / "layer"))).tools()
    assert [(t.name, t.description) for t in tools] == [(row.name, row.description) for row in TOOLS]
    assert all(t.input_schema["title"] == f"{t.name}Arguments" for t in tools)
    assert "ctx" not in {p for t in tools for p in t.input_schema.get("properties", {})}


def test_a_tool_is_a_function_of_a_context_and_its_arguments_called_without_a_server(tmp_path: Path) -> None:
    layer = make_layer(tmp_path / "layer")
    ctx = tool_context(layer)
    data = append_entry(ctx, file=MEMORY_NAME, container="Viaggi", title="Perché — 東京", body="Templi — 寺.",
                        date="2026-07-01")
    text = (layer / MEMORY_NAME).read_text(encoding="utf-8")
    assert data["file"] == MEMORY_NAME and data["address"] == "Viaggi"
    assert data["line"] == line_of(text, "###### LOG: 2026-07-01 — Perché — 東京")
    assert read_container(ctx, file=MEMORY_NAME, container="Viaggi")["entries"][-1]["title"] == "Perché — 東京"
    before = (layer / MEMORY_NAME).read_bytes()
    with pytest.raises(ToolRefusal) as refused:
        append_entry(ctx, file=MEMORY_NAME, container="Ricordi", title="perché — 東京", body="x")
    assert str(refused.value).startswith("ZONE_PROPOSE_ONLY: ")
    assert (layer / MEMORY_NAME).read_bytes() == before
    with pytest.raises(ToolRefusal) as refused:
        read_zone(ctx, file=MEMORY_NAME, zone_line=10_000)
    assert str(refused.value).startswith("NO_ZONE: ")
