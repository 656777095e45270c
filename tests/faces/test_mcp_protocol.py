"""The protocol features of the MCP server (issue 20 §3): output schemas and structured content, tool annotations,
prompts, cursor pagination and progress notifications — through the SDK's in-memory client and over stdio.

Every write uses Italian, Japanese and '—'.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from markdown_it import MarkdownIt
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_support import MEMORY_NAME, NOTES_NAME, REMINDER_NAME, Agent, line_of, make_layer
from zonemark.context import context
from zonemark.layer.loader import Layer
from zonemark.mcp import server as server_module
from zonemark.mcp.server import MAX_PAGE_CONTAINERS, TOOLS, build_server

READ_TOOLS = {"layer_status", "list_containers", "read_container", "list_zones", "read_zone", "check", "search_memory",
              "build_context", "parse_trace"}


@pytest.fixture
def layer(tmp_path: Path) -> Path:
    return make_layer(tmp_path / "layer")


@pytest.fixture
def agent(layer: Path) -> Agent:
    return Agent(build_server(layer))


def run(server: Any, action: Any) -> Any:
    async def go() -> Any:
        async with Client(server) as client:
            return await action(client)
    return anyio.run(go)


# -- structured output (W79) -------------------------------------------------------------------------------

def test_every_tool_declares_a_closed_output_schema_that_is_valid_json_schema(agent: Agent) -> None:
    tools = agent.tools()
    assert [t.name for t in tools] == [row.name for row in TOOLS]
    for tool in tools:
        schema = tool.output_schema
        assert schema is not None, tool.name
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["additionalProperties"] is False, tool.name
        assert schema["required"], tool.name
        assert schema["title"] != f"{tool.name}DictOutput", tool.name  # not the SDK's open dictionary


def _every_tool_once(agent: Agent, layer: Path) -> dict[str, dict[str, Any]]:
    """One successful call of every tool, the writes with non-ASCII text; name -> (arguments, raw result)."""
    memory = (layer / MEMORY_NAME).read_text(encoding="utf-8")
    volatile = line_of(memory, "[P5]")
    zone_hash = agent.call("read_zone", file=MEMORY_NAME, zone_line=volatile)["hash"]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("layer_status", {}),
        ("list_containers", {}),
        ("read_container", {"file": MEMORY_NAME, "container": "Viaggi", "limit": 1}),
        ("list_zones", {"file": MEMORY_NAME}),
        ("read_zone", {"file": MEMORY_NAME, "zone_line": volatile}),
        ("check", {}),
        ("search_memory", {"query": "Kyoto"}),
        ("build_context", {"budget_tokens": 5000}),
        ("parse_trace", {"text": "risposta\n[NTRACE: v1]\nNUCLEI: 1\nMODULES: 001\n[/NTRACE]\n"}),
        ("edit_volatile", {"file": MEMORY_NAME, "zone_line": volatile, "content": "Umore — 晴れ, perché sì.",
                           "base_hash": zone_hash}),
        ("append_entry", {"file": MEMORY_NAME, "container": "Viaggi/日本", "title": "Osaka — perché 大阪",
                          "body": "- takoyaki\n- 東京 — poi"}),
        ("set_module_state", {"activate": ["002"]}),
        ("propose_change", {"file": MEMORY_NAME, "container": "Ricordi", "reason": "più preciso — 正確",
                            "content": "###### LOG: 2026-01-01 — capodanno a 東京\nFuochi — perché no."}),
        ("ingest_log", {"file": NOTES_NAME, "container": "料理", "dry_run": False,
                        "text": "###### LOG: 2026-09-03 — Kobe — 神戸\nmanzo, perché sì\n[/LOG]\n"}),
    ]
    assert {name for name, _ in calls} == {row.name for row in TOOLS}
    return {name: {"arguments": arguments, "result": agent.raw(name, arguments)} for name, arguments in calls}


def test_every_tool_s_structured_content_is_its_text_and_validates_against_its_schema(agent: Agent,
                                                                                     layer: Path) -> None:
    schemas = {t.name: t.output_schema for t in agent.tools()}
    for name, call in _every_tool_once(agent, layer).items():
        result = call["result"]
        assert not result.is_error, (name, result.content[0].text)
        assert result.structured_content is not None, name
        assert json.loads(result.content[0].text) == result.structured_content, name
        jsonschema.validate(result.structured_content, schemas[name])


def test_an_answer_that_leaves_its_schema_is_an_internal_error_not_an_undeclared_key(agent: Agent,
                                                                                    monkeypatch: pytest.MonkeyPatch
                                                                                    ) -> None:
    real = server_module._status
    monkeypatch.setattr(server_module, "_status", lambda ctx: {**real(ctx), "undeclared": 1})
    text = agent.refused("layer_status")
    assert text.startswith("INTERNAL_ERROR: ")


# -- annotations (W80) ---------------------------------------------------------------------------------------

EXPECTED_HINTS = {  # (read-only, destructive, idempotent)
    **{name: (True, False, True) for name in READ_TOOLS},
    "append_entry": (False, False, False),
    "propose_change": (False, False, False),
    "ingest_log": (False, False, True),
    "set_module_state": (False, True, True),
    "edit_volatile": (False, True, True),
}


def test_every_tool_carries_all_four_hints_and_none_reaches_the_open_world(agent: Agent) -> None:
    tools = agent.tools()
    assert {t.name for t in tools} == set(EXPECTED_HINTS)
    for tool in tools:
        a = tool.annotations
        assert a is not None, tool.name
        assert (a.read_only_hint, a.destructive_hint, a.idempotent_hint) == EXPECTED_HINTS[tool.name], tool.name
        assert a.open_world_hint is False, tool.name


def test_the_idempotent_writes_change_nothing_more_when_called_again(agent: Agent, layer: Path) -> None:
    text = "###### LOG: 2026-09-03 — Kobe — 神戸\nmanzo, perché sì\n[/LOG]\n"
    first = agent.call("ingest_log", file=NOTES_NAME, container="料理", text=text, dry_run=False)
    after_first = (layer / NOTES_NAME).read_bytes()
    again = agent.call("ingest_log", file=NOTES_NAME, container="料理", text=text, dry_run=False)
    assert (first["filed"], again["filed"], again["duplicates"]) == (1, 0, 1)
    assert (layer / NOTES_NAME).read_bytes() == after_first
    agent.call("set_module_state", activate=["002"])
    registry = (layer / REMINDER_NAME).read_bytes()
    assert agent.call("set_module_state", activate=["002"])["changed"] is False
    assert (layer / REMINDER_NAME).read_bytes() == registry


# -- prompts (W81) -----------------------------------------------------------------------------------------------

def test_the_prompts_are_listed_with_their_arguments(layer: Path) -> None:
    listed = run(build_server(layer), lambda c: c.list_prompts()).prompts
    assert [p.name for p in listed] == ["load_layer", "review_pending"]
    load, review = listed
    assert [(a.name, a.required) for a in load.arguments] == [("budget_tokens", False)]
    assert "token" in (load.arguments[0].description or "")
    assert review.arguments == []
    assert all(p.title and p.description for p in listed)


@pytest.mark.parametrize("budget", [None, 5000, 500])
def test_load_layer_is_the_context_export_as_the_first_user_message(layer: Path, budget: int | None) -> None:
    (layer / MEMORY_NAME).write_text((layer / MEMORY_NAME).read_text(encoding="utf-8").replace(
        "Colosseo.", "Colosseo — perché " + "molto " * 200 + "東京."), encoding="utf-8")
    arguments = {} if budget is None else {"budget_tokens": str(budget)}
    got = run(build_server(layer), lambda c: c.get_prompt("load_layer", arguments))
    assert len(got.messages) == 1 and got.messages[0].role == "user"
    assert got.messages[0].content.text == context(Layer.load(layer), budget).text
    if budget == 500:
        assert "Colosseo" not in got.messages[0].content.text  # the budget left the long entry out


@pytest.mark.parametrize(("arguments", "code"), [
    ({"budget_tokens": "tremila"}, "BAD_ARGUMENT"),
    ({"budget_tokens": "-5"}, "BAD_ARGUMENT"),
    ({"budget_tokens": "３０００"}, "BAD_ARGUMENT"),  # full-width digits are not a number here
    ({"budget_tokens": "1"}, "BUDGET_TOO_SMALL"),
])
def test_a_load_layer_argument_that_cannot_be_used_is_one_line_naming_its_code(layer: Path, arguments: dict[str, str],
                                                                               code: str) -> None:
    async def get(client: Client) -> str:
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("load_layer", arguments)
        return refused.value.error.message

    message = run(build_server(layer), get)
    assert message.startswith(f"{code}: ") and "\n" not in message and "Traceback" not in message


def test_an_unknown_prompt_names_the_prompts_there_are(layer: Path) -> None:
    async def get(client: Client) -> str:
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("apply_everything")
        return refused.value.error.message

    assert run(build_server(layer), get) == ("UNKNOWN_PROMPT: no prompt named 'apply_everything'; the prompts are "
                                             "load_layer, review_pending")


HOSTILE = "**perché** `東京` [clic](javascript:alert(1)) <b>—</b> ``` ## H\u202edi\u200b"


def _review_text(layer: Path) -> str:
    got = run(build_server(layer), lambda c: c.get_prompt("review_pending"))
    assert len(got.messages) == 1 and got.messages[0].role == "user"
    return str(got.messages[0].content.text)


def test_review_pending_lists_proposals_conflicts_findings_and_the_ai_s_writes(agent: Agent, layer: Path) -> None:
    assert "## Open proposals (0)" in _review_text(layer)
    proposal = agent.call("propose_change", file=MEMORY_NAME, container="Ricordi", reason="più preciso — 正確",
                          content="Fuochi — 花火.")
    agent.call("append_entry", file=MEMORY_NAME, container="Viaggi", title="Osaka — 大阪", body="perché sì")
    notes = (layer / NOTES_NAME).read_text(encoding="utf-8")
    (layer / NOTES_NAME).write_text(notes.replace("Brodo di maiale.\n", "<<<<<<< ours\nBrodo — 豚骨\n=======\n"
                                                  "Brodo — 味噌\n>>>>>>> theirs\n"), encoding="utf-8")
    text = _review_text(layer)
    assert "## Open proposals (1)" in text
    proposal_id = Path(proposal["proposal"]).stem
    assert f"` {proposal_id} ` for ` {MEMORY_NAME} ` ([P3]" in text and "` più preciso — 正確 `" in text
    assert "## Conflicts (1)" in text and "MERGE_CONFLICT (error)" in text and NOTES_NAME in text
    assert "## Recent writes made as the AI (1, newest first)" in text  # a proposal writes no file of the layer
    assert f"` {MEMORY_NAME} `: ` append to Viaggi: Osaka — 大阪 `" in text


def test_review_pending_shows_what_an_ai_wrote_only_as_literal_text(agent: Agent, layer: Path) -> None:
    agent.call("propose_change", file=MEMORY_NAME, container="Ricordi", reason=HOSTILE, content="Fuochi — 花火.")
    text = _review_text(layer)
    shown = next(line for line in text.split("\n") if "javascript" in line)
    assert not shown.startswith(("#", "**", "`", "[", "<")) and shown.startswith("- ")
    assert "\u202e" not in text and "\u200b" not in text and "⟨U+202E⟩" in text  # W30: hidden characters shown
    inline = [t for t in MarkdownIt("commonmark").parse(text) if t.type == "inline"]
    children = [c for t in inline for c in (t.children or [])]
    assert not [c for c in children if c.type in ("link_open", "em_open", "strong_open", "html_inline", "image")]
    literal = [c.content for c in children if c.type == "code_inline"]
    assert any("**perché**" in c and "javascript:alert(1)" in c for c in literal)
    plain = " ".join(c.content for c in children if c.type == "text")
    assert "perché" not in plain and "javascript" not in plain  # the AI's words are never outside a code span
    assert not [t for t in MarkdownIt("commonmark").parse(text) if t.type == "heading_open" and t.markup != "##"]


def test_review_pending_lists_at_most_twenty_of_a_kind_and_counts_them_all(agent: Agent, layer: Path) -> None:
    for n in range(23):
        agent.call("append_entry", file=MEMORY_NAME, container="Viaggi", title=f"voce {n} — 東京", body="perché")
    text = _review_text(layer)
    assert "## Recent writes made as the AI (23, newest first)" in text
    assert "- and 3 more" in text and "voce 22 — 東京" in text and "voce 0 — 東京" not in text


# -- pagination (W82) -------------------------------------------------------------------------------------------

def _memory(title: str, topics: int, entries: int = 0) -> str:
    parts = [f"# {title} [external_memory]\n"]
    for t in range(topics):
        logs = "".join(f"###### LOG: 2026-{1 + e // 28:02d}-{1 + e % 28:02d} — voce {e} perché\nTesto {e} — 東京.\n\n"
                       for e in range(entries if t == 0 else 0))
        parts.append(f"\n[P1]\n## TOPIC: Tema {t} — 東京\n[/P1]\n\n[P4]\n{logs}[/P4]\n")
    return "".join(parts)


@pytest.fixture
def big(tmp_path: Path) -> Path:
    layer = make_layer(tmp_path / "big")
    (layer / "a[ext_memory].md").write_text(_memory("A", 230, entries=47), encoding="utf-8")
    (layer / "b[ext_memory].md").write_text(_memory("B", 170), encoding="utf-8")
    (layer / "c[ext_memory].md").write_text(_memory("C", 0), encoding="utf-8")
    return layer


def _walk(agent: Agent, tool: str, **arguments: Any) -> list[dict[str, Any]]:
    pages, cursor = [], None
    for _ in range(100):
        page = agent.call(tool, **arguments, **({} if cursor is None else {"cursor": cursor}))
        pages.append(page)
        cursor = page["next_cursor"]
        if cursor is None:
            return pages
    raise AssertionError("the pages never end")


def test_list_containers_walks_every_container_of_every_file_exactly_once(big: Path) -> None:
    agent = Agent(build_server(big))
    pages = _walk(agent, "list_containers")
    sizes = [sum(len(f["containers"]) for f in p["files"]) for p in pages]
    assert all(size <= MAX_PAGE_CONTAINERS for size in sizes) and len(pages) >= 3
    walked = [(f["file"], c["line"]) for p in pages for f in p["files"] for c in f["containers"]]
    assert len(walked) == len(set(walked))
    expected = [(f.rel, c.line) for f in Layer.load(big).files
                for c in server_module.layer_containers.list_containers(f.doc)]
    assert sorted(walked) == sorted(expected) and len(walked) == 230 + 170 + 10
    files = [f["file"] for p in pages for f in p["files"]]
    assert "c[ext_memory].md" in files  # a file with no container is listed too
    one = _walk(agent, "list_containers", file="a[ext_memory].md")
    assert [len(p["files"][0]["containers"]) for p in one] == [200, 30]


def test_read_container_pages_from_the_newest_back_to_the_oldest_exactly_once(big: Path) -> None:
    agent = Agent(build_server(big))
    pages = _walk(agent, "read_container", file="a[ext_memory].md", container="Tema 0 — 東京", limit=10)
    assert [p["shown"] for p in pages] == [10, 10, 10, 10, 7]
    titles = [e["title"] for p in reversed(pages) for e in p["entries"]]
    assert titles == [f"voce {e} perché" for e in range(47)]
    assert {(p["matching"], p["total"]) for p in pages} == {(47, 47)}
    since = _walk(agent, "read_container", file="a[ext_memory].md", container="Tema 0 — 東京", limit=10,
                  since="2026-02-01")
    assert [e["title"] for p in reversed(since) for e in p["entries"]] == [f"voce {e} perché" for e in range(28, 47)]


def test_search_memory_pages_give_the_ranking_of_one_search_exactly_once(big: Path) -> None:
    agent = Agent(build_server(big))
    pages = _walk(agent, "search_memory", query="voce", limit=10)
    assert [len(p["hits"]) for p in pages] == [10, 10, 10, 10, 7]
    walked = [(h["file"], h["line"]) for p in pages for h in p["hits"]]
    whole = agent.call("search_memory", query="voce", limit=100)
    assert walked == [(h["file"], h["line"]) for h in whole["hits"]] and whole["next_cursor"] is None


def _forged(position: list[Any], key: str) -> str:
    text = json.dumps({"k": key, "p": position})
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def test_a_cursor_that_is_not_the_tool_s_own_is_a_clear_tool_error(big: Path) -> None:
    agent = Agent(build_server(big))
    containers = agent.call("list_containers")["next_cursor"]
    entries = agent.call("read_container", file="a[ext_memory].md", container="Tema 0 — 東京", limit=5)["next_cursor"]
    key = server_module._key("read_container", ("a[ext_memory].md", "Tema 0 — 東京", None))
    for tool, arguments in [
            ("list_containers", {"cursor": "not a cursor — 東京"}),
            ("list_containers", {"cursor": entries}),  # another tool's
            ("list_containers", {"cursor": containers, "file": "b[ext_memory].md"}),  # other arguments
            ("read_container", {"file": "a[ext_memory].md", "container": "Tema 1 — 東京", "cursor": entries}),
            ("read_container", {"file": "a[ext_memory].md", "container": "Tema 0 — 東京", "cursor": containers}),
            ("read_container", {"file": "a[ext_memory].md", "container": "Tema 0 — 東京",
                                "cursor": _forged(["x"], key)}),
            ("read_container", {"file": "a[ext_memory].md", "container": "Tema 0 — 東京",
                                "cursor": _forged([-3], key)}),
            ("search_memory", {"query": "voce", "cursor": containers}),
            ("search_memory", {"query": "voce", "cursor": _forged([10 ** 9], server_module._key(
                "search_memory", ("voce", None, None, None, None)))}),
            ("list_containers", {"cursor": "=" * 600})]:
        text = agent.refused(tool, **arguments)
        assert text.split(":", 1)[0] in ("BAD_CURSOR", "BAD_ARGUMENT"), (tool, arguments, text)
        assert "\ninstead: " in text
    assert agent.refused("list_containers", cursor="x" * 600).startswith("BAD_ARGUMENT: ")  # over its bound
    assert agent.refused("search_memory", query="voce", cursor=containers).startswith("BAD_CURSOR: ")


# -- progress (W83) ---------------------------------------------------------------------------------------------

def test_ingest_log_sends_progress_to_a_client_that_asked_and_to_no_other(layer: Path) -> None:
    text = "".join(f"###### LOG: 2026-09-{d:02d} — giorno {d} — 神戸\nperché sì\n[/LOG]\n\n" for d in range(1, 6))
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async def calls(client: Client) -> tuple[Any, Any]:
        asked = await client.call_tool("ingest_log", {"file": NOTES_NAME, "container": "料理", "text": text,
                                                      "dry_run": False}, progress_callback=progress)
        quiet = await client.call_tool("ingest_log", {"file": NOTES_NAME, "container": "料理", "text": text})
        return asked, quiet

    asked, quiet = run(build_server(layer), calls)
    assert not asked.is_error and not quiet.is_error
    assert seen == [(1, 2, "found 5 log entries in the text"), (2, 2, "filed 5, 0 already there, 0 refused")]


def test_a_progress_notification_that_cannot_be_sent_does_not_fail_the_write(layer: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the client went away")

    monkeypatch.setattr(server_module.anyio.from_thread, "run", broken)

    async def noop(done: float, total: float | None, message: str | None) -> None:
        return None

    text = "###### LOG: 2026-09-03 — Kobe — 神戸\nmanzo, perché sì\n[/LOG]\n"
    result = run(build_server(layer), lambda c: c.call_tool(
        "ingest_log", {"file": NOTES_NAME, "container": "料理", "text": text, "dry_run": False},
        progress_callback=noop))
    assert not result.is_error and json.loads(result.content[0].text)["filed"] == 1


# -- the same over stdio -------------------------------------------------------------------------------------------

def test_schemas_hints_prompts_pages_and_progress_over_stdio(tmp_path: Path) -> None:
    import sys

    from mcp import StdioServerParameters

    layer = make_layer(tmp_path / "layer")
    (layer / "a[ext_memory].md").write_text(_memory("A", 230), encoding="utf-8")
    zonemark = str(Path(sys.executable).with_name("zonemark"))
    seen: dict[str, Any] = {"progress": []}

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen["progress"].append((done, total, message))

    async def session() -> None:
        async with Client(StdioServerParameters(command=zonemark, args=["mcp", str(layer)])) as client:
            tools = (await client.list_tools()).tools
            seen["schemas"] = all(t.output_schema and t.output_schema["additionalProperties"] is False for t in tools)
            seen["hints"] = {t.name: t.annotations.open_world_hint for t in tools if t.annotations}
            seen["prompts"] = [p.name for p in (await client.list_prompts()).prompts]
            review = await client.get_prompt("review_pending")
            seen["review"] = review.messages[0].content.text
            first = await client.call_tool("list_containers", {"file": "a[ext_memory].md"})
            cursor = first.structured_content["next_cursor"]
            second = await client.call_tool("list_containers", {"file": "a[ext_memory].md", "cursor": cursor})
            seen["pages"] = [len(r.structured_content["files"][0]["containers"]) for r in (first, second)]
            seen["last_cursor"] = second.structured_content["next_cursor"]
            filed = await client.call_tool("ingest_log", {"file": NOTES_NAME, "container": "料理", "dry_run": False,
                                                          "text": "###### LOG: 2026-09-03 — Kobe — 神戸\nperché\n"
                                                                  "[/LOG]\n"}, progress_callback=progress)
            seen["filed"] = (filed.is_error, filed.structured_content)

    anyio.run(session)
    assert seen["schemas"] and set(seen["hints"].values()) == {False} and len(seen["hints"]) == len(TOOLS)
    assert seen["prompts"] == ["load_layer", "review_pending"] and "## Open proposals (0)" in seen["review"]
    assert seen["pages"] == [200, 30] and seen["last_cursor"] is None
    assert seen["filed"][0] is False and seen["filed"][1]["filed"] == 1
    assert seen["progress"] == [(1, 2, "found 1 log entry in the text"), (2, 2, "filed 1, 0 already there, 0 refused")]
