"""``zonemark mcp LAYER`` end to end: the SDK's stdio client spawns the command and talks to it.

Also the command's own failures (one line, exit 2) and that no other command imports the SDK.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from mcp_support import MEMORY_NAME, REMINDER_NAME, line_of, make_layer
from zonemark import parse_file

ZONEMARK = str(Path(sys.executable).with_name("zonemark"))


def spawn(layer) -> StdioServerParameters:
    return StdioServerParameters(command=ZONEMARK, args=["mcp", str(layer)])


def test_an_agent_session_over_stdio(tmp_path):
    layer = make_layer(tmp_path / "layer")
    seen: dict = {}

    async def session():
        async with Client(spawn(layer)) as client:
            seen["instructions"] = client.instructions
            seen["tools"] = [t.name for t in (await client.list_tools()).tools]
            read = await client.call_tool("read_container", {"file": MEMORY_NAME, "container": "Viaggi"})
            seen["read"] = json.loads(read.content[0].text)
            append = await client.call_tool("append_entry", {"file": MEMORY_NAME, "container": "Viaggi/日本",
                                                             "title": "Osaka — 大阪", "body": "Takoyaki, buonissimi."})
            seen["append"] = (append.is_error, json.loads(append.content[0].text))
            refused = await client.call_tool("append_entry", {"file": MEMORY_NAME, "container": "Ricordi",
                                                              "title": "riscrivo — 書き直す", "body": "no"})
            seen["refused"] = (refused.is_error, refused.content[0].text)
            outside = await client.call_tool("read_container", {"file": "../../etc/passwd.md", "container": "x"})
            seen["outside"] = (outside.is_error, outside.content[0].text)
            listed = await client.call_tool("list_containers", {"file": MEMORY_NAME})
            seen["listed"] = json.loads(listed.content[0].text)
            resource = await client.read_resource("zonemark://file/diario%5Bext_memory%5D.md")
            seen["resource"] = resource.contents[0].text
            found = await client.call_tool("search_memory", {"query": "takoyaki"})
            seen["search"] = (found.is_error, json.loads(found.content[0].text))
            exported = await client.call_tool("build_context", {})
            seen["context"] = (exported.is_error, json.loads(exported.content[0].text))
            dry = await client.call_tool("ingest_log", {"file": MEMORY_NAME, "container": "Viaggi", "text":
                                                        "###### LOG: 2026-09-03 — Kobe — 神戸\n- manzo\n- porto\n"
                                                        "[/LOG]\n"})
            seen["dry"] = (dry.is_error, json.loads(dry.content[0].text))
            seen["before_dry"] = (layer / MEMORY_NAME).read_bytes()

    anyio.run(session)
    assert "[P3]" in seen["instructions"]
    assert set(seen["tools"]) == {"layer_status", "list_containers", "read_container", "list_zones", "read_zone", "check",
                                  "search_memory", "build_context", "parse_trace", "append_entry", "set_module_state",
                                  "edit_volatile", "propose_change", "ingest_log"}
    assert [e["title"] for e in seen["read"]["entries"]] == ["Kyoto", "Roma"]
    assert seen["append"][0] is False and seen["append"][1]["history_id"]
    is_error, text = seen["refused"]
    on_disk = (layer / MEMORY_NAME).read_text(encoding="utf-8")
    assert is_error and text.startswith("ZONE_PROPOSE_ONLY: ")
    assert f"zone: [P3] at line {line_of(on_disk, '[P3]')} · rule: §5.2" in text and "propose_change" in text
    assert seen["outside"][0] and seen["outside"][1].startswith("PATH_OUTSIDE_LAYER: ")
    japan = next(c for c in seen["listed"]["files"][0]["containers"] if c["address"] == "Viaggi/日本")
    assert japan["entries"] == 1 and japan["last_entry_date"] is not None
    assert "Osaka — 大阪" in on_disk and seen["resource"] == on_disk
    assert not [d for d in parse_file(layer / MEMORY_NAME).diagnostics if d.severity.value == "error"]
    is_error, found = seen["search"]
    assert not is_error and [(h["file"], h["title"], h["zone"]) for h in found["hits"]] == \
        [(MEMORY_NAME, "Osaka — 大阪", "P4")]
    is_error, exported = seen["context"]
    assert not is_error and "Takoyaki, buonissimi." in exported["text"] and exported["tokens"] > 0
    is_error, dry = seen["dry"]
    assert not is_error and dry["dryRun"] is True
    assert [(i["status"], i["changes"]) for i in dry["items"]] == [("would_file",
                                                                     ["list markers set to * + - by level (§8)"])]
    assert (layer / MEMORY_NAME).read_bytes() == seen["before_dry"] and "Kobe" not in on_disk


def test_two_server_processes_appending_at_once_lose_nothing(tmp_path):
    layer = make_layer(tmp_path / "layer")
    per_process = 6

    async def agent(who):
        async with Client(spawn(layer)) as client:
            for i in range(per_process):
                r = await client.call_tool("append_entry", {"file": MEMORY_NAME, "container": "Viaggi",
                                                            "title": f"{who} {i} — 並行", "body": "contemporaneo"})
                assert not r.is_error, r.content[0].text

    async def both():
        async with anyio.create_task_group() as group:
            group.start_soon(agent, "uno")
            group.start_soon(agent, "due")

    anyio.run(both)
    node = next(c for c in parse_file(layer / MEMORY_NAME).outline().children if c.name == "Viaggi")
    titles = [e.title for e in node.entries]
    assert len(titles) == 2 + 2 * per_process
    assert {f"{who} {i} — 並行" for who in ("uno", "due") for i in range(per_process)} <= set(titles)


def run_cli(*args, code: str | None = None):
    command = [sys.executable, "-c", code, *args] if code else [ZONEMARK, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_the_command_refuses_what_is_not_a_layer_folder_in_one_line(tmp_path):
    make_layer(tmp_path / "layer")
    (tmp_path / "empty").mkdir()
    for target, words in ((tmp_path / "missing", "no such folder"),
                          (tmp_path / "layer" / REMINDER_NAME, "is a file"),
                          (tmp_path / "empty", "no .md files")):
        done = run_cli("mcp", str(target))
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.count("\n") == 1 and words in done.stderr and "Traceback" not in done.stderr
    usage = run_cli("mcp")
    assert usage.returncode == 2 and usage.stderr.count("\n") == 1


def test_without_the_extra_the_command_says_how_to_install_it(tmp_path):
    layer = make_layer(tmp_path / "layer")
    hide_sdk = ("import sys; sys.modules['mcp'] = None; from zonemark.cli.main import main; "
                "sys.exit(main(sys.argv[1:]))")
    done = run_cli("mcp", str(layer), code=hide_sdk)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.endswith(" 'zonemark[mcp]'\n")
    assert done.stderr.startswith("zonemark mcp: the MCP server needs the 'mcp' extra: ")


def test_other_commands_do_not_import_the_sdk(tmp_path):
    probe = ("import sys; from zonemark.cli.main import main; main(sys.argv[1:]); "
             "print(sorted(m for m in ('mcp', 'pydantic', 'anyio', 'zonemark.mcp') if m in sys.modules))")
    layer = make_layer(tmp_path / "layer")
    for args in (["codes"], ["check", str(layer)], ["status", str(layer)]):
        done = run_cli(*args, code=probe)
        assert done.stdout.strip().splitlines()[-1] == "[]", args
    assert "mcp" in run_cli("--help").stdout


def test_the_server_ends_when_the_client_closes_stdin(tmp_path):
    layer = make_layer(tmp_path / "layer")
    done = subprocess.run([ZONEMARK, "mcp", str(layer)], input="", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""


def test_ctrl_c_at_a_terminal_stops_the_server(tmp_path):
    import os
    import pty
    import signal
    layer = make_layer(tmp_path / "layer")
    terminal, its_side = pty.openpty()
    proc = subprocess.Popen([ZONEMARK, "mcp", str(layer)], stdin=its_side, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    os.close(its_side)
    try:
        assert "Ctrl-C stops it" in proc.stderr.readline()  # the hint a person sees, once the handler is set
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 130
        assert proc.stderr.read() == "zonemark mcp: stopped\n"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(terminal)


def test_a_call_with_text_that_is_not_unicode_is_answered_with_a_tool_error(tmp_path):
    """JSON may escape a lone surrogate ('\\ud800', as JavaScript's JSON.stringify writes it); such a call gets
    the BAD_ARGUMENT every other bad string gets, not silence that leaves the client waiting."""
    layer = make_layer(tmp_path / "layer")
    before = (layer / MEMORY_NAME).read_bytes()
    surrogate = "\\" + "ud800"  # the six characters of the JSON escape
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "prova", "version": "1"}}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "append_entry",
                               "arguments": {"file": MEMORY_NAME, "container": "Viaggi", "title": "@",
                                             "body": "Nara — 奈良"}}}, ensure_ascii=False).replace("@", surrogate),
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {"name": "list_zones", "arguments": {"file": MEMORY_NAME}}}),
    ]
    proc = subprocess.Popen([ZONEMARK, "mcp", str(layer)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, encoding="utf-8")
    answers = {}
    try:
        proc.stdin.write("\n".join(lines) + "\n")
        proc.stdin.flush()
        lines_out: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines_out.put(x) for x in proc.stdout], daemon=True).start()
        deadline = time.monotonic() + 20
        while not {2, 3} <= set(answers) and time.monotonic() < deadline:
            with contextlib.suppress(queue.Empty):
                answer = json.loads(lines_out.get(timeout=0.2))
                answers[answer.get("id")] = answer
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    assert {1, 2, 3} <= set(answers)
    refused = answers[2]["result"]
    assert refused["isError"] is True
    assert refused["content"][0]["text"].startswith("BAD_ARGUMENT: append_entry: title: ")
    assert answers[3]["result"].get("isError") is not True
    assert (layer / MEMORY_NAME).read_bytes() == before


def test_a_line_that_is_not_json_is_answered_with_a_parse_error_and_the_server_reads_on(tmp_path):
    """W44: a malformed line, one nested too deeply and a very large one each get the JSON-RPC parse error
    (-32700, id null), JSON that is no message gets -32600, every answer is short (it never quotes the line), and
    the next call is answered as usual; nothing is written."""
    layer = make_layer(tmp_path / "layer")
    before = (layer / MEMORY_NAME).read_bytes()
    initialize = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "prova — 東京", "version": "1"}}})
    bad = ['{"jsonrpc": "2.0", "id": 7, "method": "tools/list", perché}',  # malformed
           "[" * 100_000 + "]" * 100_000,                                   # nested far too deeply
           '{"x": "' + "東京 — perché " * 1_000_000 + '"',                 # 17 MB, never closed
           '{"jsonrpc": "2.0", "perché": 1}']                               # JSON, but no message
    lines = [initialize, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), *bad,
             json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})]
    proc = subprocess.Popen([ZONEMARK, "mcp", str(layer)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, encoding="utf-8")
    answers: list = []
    try:
        lines_out: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines_out.put(x) for x in proc.stdout], daemon=True).start()
        threading.Thread(target=lambda: (proc.stdin.write("\n".join(lines) + "\n"), proc.stdin.flush()),
                         daemon=True).start()
        deadline = time.monotonic() + 60
        while not any(a.get("id") == 2 for a in answers) and time.monotonic() < deadline:
            with contextlib.suppress(queue.Empty):
                line = lines_out.get(timeout=0.2)
                answers.append(json.loads(line))
                assert "error" not in answers[-1] or len(line) < 500  # short, whatever the size of the line
    finally:
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    errors = [(a["id"], a["error"]["code"]) for a in answers if "error" in a]
    assert errors == [(None, -32700), (None, -32700), (None, -32700), (None, -32600)]
    assert [a["id"] for a in answers if "result" in a] == [1, 2]
    assert "append_entry" in {t["name"] for t in answers[-1]["result"]["tools"]}
    assert (layer / MEMORY_NAME).read_bytes() == before
