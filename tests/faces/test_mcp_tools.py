"""The MCP server's search, context, trace and ingest tools, its parse cache, and refusal texts that fit the tool.

Through the SDK's real in-memory client, on the layer of ``mcp_support`` (Italian, Japanese and
'—' in every file and every write).
"""

from __future__ import annotations

import json
import os
import re
import time

import pytest

from mcp_support import MEMORY, MEMORY_NAME, NOTES_NAME, REMINDER, REMINDER_NAME, Agent, line_of, make_layer
from zonemark import context as export_context
from zonemark.layer import Layer
from zonemark.layer import cache as cache_module
from zonemark.mcp.refusals import CODES, instead
from zonemark.mcp.server import build_server


@pytest.fixture
def layer(tmp_path):
    return make_layer(tmp_path / "layer")


@pytest.fixture
def server(layer):
    return build_server(layer)


@pytest.fixture
def agent(server):
    return Agent(server)


def snapshot(folder):
    return {p: p.read_bytes() for p in folder.rglob("*.md")}


def code_of(text: str) -> str:
    code = text.split(":", 1)[0]
    assert code in CODES, text
    return code


def instead_line(text: str) -> str:
    return next(ln for ln in text.split("\n") if ln.startswith("instead: "))[len("instead: "):]


# -- search_memory -----------------------------------------------------------------------------------

def test_search_memory_finds_words_accents_and_japanese(agent, layer):
    data = agent.call("search_memory", query="templi")
    [hit] = data["hits"]
    assert (hit["file"], hit["line"], hit["kind"], hit["container"], hit["zone"], hit["date"], hit["title"]) == \
        (MEMORY_NAME, line_of(MEMORY, "###### LOG: 2026-04-01 — Kyoto"), "entry", "Viaggi", "P4", "2026-04-01", "Kyoto")
    assert "«Templi»" in hit["snippet"]
    assert [h["title"] for h in agent.call("search_memory", query="寺")["hits"]] == ["Kyoto"]
    assert [h["file"] for h in agent.call("search_memory", query="maiale")["hits"]] == [NOTES_NAME]
    assert str(layer) not in json.dumps(data, ensure_ascii=False)  # no path of the server's disk


def test_search_memory_filters(agent):
    def titles(**kw):
        return [h["title"] for h in agent.call("search_memory", **kw)["hits"]]
    assert set(titles(query="LOG OR x", limit=50)) >= set()  # a query of keywords is plain words, no crash
    assert titles(query="colosseo", file=MEMORY_NAME) == ["Roma"]
    assert titles(query="colosseo", file=REMINDER_NAME) == []
    assert titles(query="colosseo", since="2026-06-01") == ["Roma"]
    assert titles(query="colosseo", until="2026-06-01") == []
    assert titles(query="fuochi", container="Ricordi") == ["capodanno"]
    assert titles(query="templi", container="Viaggi/日本") == []
    everything = agent.call("search_memory", query="viaggi", limit=100)
    one = agent.call("search_memory", query="viaggi", limit=1)
    assert len(everything["hits"]) >= 2 and not everything["more"]
    assert one["hits"] == everything["hits"][:1] and one["more"] is True


def test_search_memory_sees_an_append_and_a_users_edit(agent, layer):
    agent.call("append_entry", file=MEMORY_NAME, container="Viaggi/日本", title="Nara — 奈良",
               body="- cervi ovunque — 鹿\n- templi", date="2026-09-01")
    assert [h["title"] for h in agent.call("search_memory", query="cervi")["hits"]] == ["Nara — 奈良"]
    path = layer / MEMORY_NAME
    path.write_text(path.read_text(encoding="utf-8").replace("Colosseo.", "Colosseo e Pantheon — パンテオン."),
                    encoding="utf-8")
    assert [h["title"] for h in agent.call("search_memory", query="pantheon")["hits"]] == ["Roma"]


@pytest.mark.parametrize("arguments, code", [
    ({"query": '"'}, "BAD_QUERY"),
    ({"query": "!!! ???"}, "BAD_QUERY"),
    ({"query": "kyoto", "container": "Nessuno — 無"}, "BAD_QUERY"),
    ({"query": "kyoto", "since": "ieri"}, "BAD_ARGUMENT"),
    ({"query": "kyoto", "file": "../fuori.md"}, "PATH_OUTSIDE_LAYER"),
    ({"query": "kyoto", "file": "manca.md"}, "NO_SUCH_FILE"),
    ({"query": "kyoto", "limit": 0}, "BAD_ARGUMENT"),
    ({"query": "kyoto", "limit": 101}, "BAD_ARGUMENT"),
    ({"query": "x" * 2001}, "BAD_ARGUMENT"),  # over the search service's MAX_QUERY_CHARS (W36)
])
def test_search_memory_bad_queries_are_clear(agent, arguments, code):
    text = agent.refused("search_memory", **arguments)
    assert code_of(text) == code and len(text) < 2000


@pytest.mark.parametrize("query", ['"', ':', 'AND', 'OR OR', '*', 'NEAR(a b)', 'title:x', '"a', 'a*b', '(', '- + ~',
                                   'perche\'', 'città — 都市'])
def test_no_query_makes_search_memory_fail(agent, query):
    result = agent.raw("search_memory", {"query": query})
    text = result.content[0].text
    assert "Traceback" not in text and "INTERNAL_ERROR" not in text
    if result.is_error:
        assert code_of(text) == "BAD_QUERY"


# -- build_context and the context resource ----------------------------------------------------------

def test_build_context_is_the_same_export_as_zonemark_context(agent, layer):
    data = agent.call("build_context")
    expected = export_context(Layer.load(layer))
    assert data["text"] == expected.text and data["tokens"] == expected.tokens
    assert "<!-- file: aria[reminder].md -->" in data["text"] and "Templi — 寺." in data["text"]
    assert [f["path"] for f in data["files"]] == [f.path for f in expected.files]
    [content] = agent.read("zonemark://context").contents
    assert content.text == expected.text


def test_build_context_within_a_budget_leaves_out_the_oldest_memory_entries(agent, layer):
    for day in range(1, 6):
        agent.call("append_entry", file=MEMORY_NAME, container="Viaggi", title=f"giorno {day} — 日",
                   body="Camminato a lungo, perché sì — 散歩. " * 20, date=f"2026-07-0{day}")
    full = agent.call("build_context")["tokens"]
    fitted = agent.call("build_context", budget_tokens=full - 100)
    assert fitted["tokens"] <= full - 100 and fitted["leftOut"]["entries"] >= 1
    assert fitted["text"] == export_context(Layer.load(layer), budget=full - 100).text
    assert "Never invent memories." in fitted["text"]  # [P1] never goes
    assert "giorno 5 — 日" in fitted["text"] and "2026-04-01 — Kyoto" not in fitted["text"]  # the oldest went


@pytest.mark.parametrize("budget, code", [(1, "BUDGET_TOO_SMALL"), (200, "BUDGET_TOO_SMALL"), (0, "BAD_ARGUMENT"),
                                          ("molti", "BAD_ARGUMENT")])
def test_build_context_refusals(agent, budget, code):
    text = agent.refused("build_context", budget_tokens=budget)
    assert code_of(text) == code
    if code == "BUDGET_TOO_SMALL":
        assert re.search(r"~\d+ tokens", text) and "build_context with a larger budget_tokens" in text


# -- parse_trace ---------------------------------------------------------------------------------------

TRACE = """Fatto — 完了.

```
[NTRACE: v1]
NUCLEI: 1, 7
MODULE 001: ANCHOR active
MEMORY Diario @ Kyoto: queried
[/NTRACE]
```
"""

TRACING = """
[P1]
## MODULE DTR_001: DEFERRED_NEURAL_TRACING [NUCLEI: ]
### STATE
active
[/P1]
"""


def test_parse_trace_validates_against_the_layer_and_writes_nothing(agent, layer):
    before = snapshot(layer)
    data = agent.call("parse_trace", text=TRACE)
    assert data["enabled"] is False and data["illuminated"] is False
    assert {"kind": "nucleus", "id": 7} in data["unknownIdentifiers"]  # CL29: an integer, as in §13
    assert [w["code"] for w in data["warnings"]][:1] == ["TRACE_DISABLED"]
    assert snapshot(layer) == before and not (layer / ".zonemark" / "traces").exists()


def test_parse_trace_illuminates_when_the_layer_enables_tracing(agent, layer):
    path = layer / REMINDER_NAME
    path.write_text(REMINDER.replace("\n[P2]\n", TRACING + "\n[P2]\n", 1), encoding="utf-8")
    data = agent.call("parse_trace", text=TRACE)
    assert data["enabled"] is True and data["illuminated"] is True
    assert data["result"]["nuclei"] == [1]
    assert data["result"]["modules"] == [{"id": "001", "name": "ANCHOR", "state": "active"}]
    assert data["result"]["memories"] == [{"id": "Diario", "ref": "Kyoto", "action": "queried"}]
    assert not (layer / ".zonemark" / "traces").exists()


@pytest.mark.parametrize("text, code", [
    ("nessuna traccia — 痕跡なし", "NO_TRACE"),
    ("[NTRACE: v2]\nNUCLEI: 1\n[/NTRACE]", "TRACE_REJECTED"),
    ("[NTRACE: v1]\nNUCLEI: 1\nMODULE 001: ANCHOR active", "TRACE_REJECTED"),
    ("", "NO_TRACE"),
])
def test_parse_trace_refusals(agent, text, code):
    assert code_of(agent.refused("parse_trace", text=text)) == code


# -- ingest_log -----------------------------------------------------------------------------------------

CHAT = """Ecco i log — ログ:

###### LOG: 2026-09-01 — Nara — 奈良
- cervi ovunque — 鹿
- templi:
  - Tōdai-ji
  - Kasuga
[/LOG]

###### LOG: 2026-09-02 — Osaka
Takoyaki, perché sì — たこ焼き.
[/LOG]
"""


def test_ingest_log_is_a_dry_run_unless_told(agent, layer):
    before = snapshot(layer)
    data = agent.call("ingest_log", text=CHAT, file=MEMORY_NAME, container="Viaggi/日本")
    assert data["dryRun"] is True and data["file"] == MEMORY_NAME
    assert [(i["status"], i["title"]) for i in data["items"]] == [("would_file", "Nara — 奈良"),
                                                                   ("would_file", "Osaka")]
    assert "list markers set to * + - by level (§8)" in data["items"][0]["changes"]
    assert snapshot(layer) == before


def test_ingest_log_files_the_entries_once(agent, layer):
    filed = agent.call("ingest_log", text=CHAT, file=MEMORY_NAME, container="Viaggi/日本", dry_run=False)
    assert [i["status"] for i in filed["items"]] == ["filed", "filed"]
    text = (layer / MEMORY_NAME).read_text(encoding="utf-8")
    assert "###### LOG: 2026-09-01 — Nara — 奈良\n* cervi ovunque — 鹿\n* templi:\n  + Tōdai-ji\n  + Kasuga\n" in text
    again = agent.call("ingest_log", text=CHAT, file=MEMORY_NAME, container="Viaggi/日本", dry_run=False)
    assert [i["status"] for i in again["items"]] == ["duplicate", "duplicate"]
    assert (layer / MEMORY_NAME).read_text(encoding="utf-8") == text
    assert agent.call("check")["warnings"] == 0


def test_ingest_log_reports_refused_entries_with_their_code_and_alternative(agent, layer):
    mixed = CHAT + "\n###### LOG: 2026-02-30 — impossibile — 不可能\nx\n[/LOG]\n"
    data = agent.call("ingest_log", text=mixed, file=MEMORY_NAME, container="Viaggi", dry_run=False)
    assert [(i["status"], i["code"]) for i in data["items"]] == [("filed", None), ("filed", None),
                                                                  ("refused", "BAD_DATE")]
    assert data["items"][2]["instead"] == instead("BAD_DATE", "ingest_log")
    assert "Osaka" in (layer / MEMORY_NAME).read_text(encoding="utf-8")


@pytest.mark.parametrize("container, code, dry_run", [
    ("Ricordi", "ZONE_PROPOSE_ONLY", False),  # its journal is [P3]
    ("Ricordi", "ZONE_PROPOSE_ONLY", True),
    ("Archivio", "NO_JOURNAL", False),  # a [P1] declaration and no zone of its own
])
def test_ingest_log_that_can_file_no_entry_is_a_tool_error(agent, layer, container, code, dry_run):
    """Every entry refused: the agent learns it from is_error, with the code, each entry and what to do."""
    before = snapshot(layer)
    text = agent.refused("ingest_log", text=CHAT, file=MEMORY_NAME, container=container, dry_run=dry_run)
    assert code_of(text) == code and instead_line(text) == instead(code, "ingest_log")
    assert "Nara — 奈良" in text and "Osaka" in text and "2 log entries" in text
    assert str(layer) not in text
    bad = agent.refused("ingest_log", text="###### LOG: 2026-02-30 — impossibile — 不可能\nx\n[/LOG]\n",
                        file=MEMORY_NAME, container="Viaggi", dry_run=False)
    assert code_of(bad) == "BAD_DATE"
    assert snapshot(layer) == before


@pytest.mark.parametrize("arguments, code", [
    ({"container": "Nessuno — 無"}, "UNKNOWN_CONTAINER"),
    ({"file": "../fuori.md"}, "PATH_OUTSIDE_LAYER"),
    ({"dry_run": "forse"}, "BAD_ARGUMENT"),
    ({"text": 42}, "BAD_ARGUMENT"),
])
def test_ingest_log_refusals(agent, layer, arguments, code):
    before = snapshot(layer)
    call = {"text": CHAT, "file": MEMORY_NAME, "container": "Viaggi", "dry_run": False} | arguments
    assert code_of(agent.refused("ingest_log", **call)) == code
    assert snapshot(layer) == before


def test_ingest_log_with_nothing_in_the_text(agent):
    data = agent.call("ingest_log", text="solo chiacchiere — 雑談", file=MEMORY_NAME, container="Viaggi")
    assert data["found"] == 0 and data["items"] == []


# -- the refusal texts fit the tool that was refused ----------------------------------------------------

#: codes after which calling the same tool again (with what the text says) is the right next step
RETRY_FITS = {"STALE_ZONE", "BAD_ARGUMENT", "BAD_DATE", "BAD_TITLE", "CONTENT_REFUSED", "NEW_DIAGNOSTIC",
              "STRUCTURE_CHANGED", "NO_CHANGE", "WRITE_CONFLICT", "BAD_QUERY", "BUDGET_TOO_SMALL", "NO_TRACE",
              "TRACE_REJECTED", "NO_PROPOSAL_ZONE", "AMBIGUOUS_ZONE", "UNKNOWN_CONTAINER", "AMBIGUOUS_CONTAINER",
              "NO_ZONE"}

DOUBLE = MEMORY + "\n[P3]\nprima — 一\n[/P3]\n\n[P3]\nseconda — 二\n[/P3]\n"


def _hash_now(path, line):
    from zonemark.core.parser import parse
    from zonemark.writer import ZoneIndex, zone_base
    data = path.read_bytes()
    index = ZoneIndex.build(parse(data.decode("utf-8")))
    return zone_base(data, index, index.zone_at_line(line))


def _real_refusals(layer):
    p5 = line_of(REMINDER, "[P5]")
    yield "append_entry", dict(file=MEMORY_NAME, container="Ricordi", title="t — 題", body="b"), "ZONE_PROPOSE_ONLY"
    yield "append_entry", dict(file=MEMORY_NAME, container="Archivio", title="t — 題", body="b"), "NO_JOURNAL"
    yield "append_entry", dict(file=MEMORY_NAME, container="Nessuno", title="t — 題", body="b"), "UNKNOWN_CONTAINER"
    yield "append_entry", dict(file=MEMORY_NAME, container="Viaggi", title="t — 題",
                               body="- a\n  > q — 引用\n  - d — 四"), "NEW_DIAGNOSTIC"
    for needle, code in (("[P1]", "ZONE_READ_ONLY"), ("[P2]", "ZONE_READ_ONLY"), ("[P4]", "ZONE_APPEND_ONLY")):
        line = line_of(REMINDER, needle)  # the zone's own hash: a wrong one is STALE_ZONE first (W42)
        yield "edit_volatile", dict(file=REMINDER_NAME, zone_line=line, content="x — 文",
                                    base_hash=_hash_now(layer / REMINDER_NAME, line)), code
    yield "edit_volatile", dict(file=MEMORY_NAME, zone_line=line_of(MEMORY, "[P3]"), content="x — 文",
                                base_hash=_hash_now(layer / MEMORY_NAME, line_of(MEMORY, "[P3]"))), "ZONE_PROPOSE_ONLY"
    yield "edit_volatile", dict(file=REMINDER_NAME, zone_line=p5, content="x — 文", base_hash="0" * 64), "STALE_ZONE"
    yield "edit_volatile", dict(file=REMINDER_NAME, zone_line=2, content="x — 文", base_hash="0" * 64), "NO_ZONE"
    yield "propose_change", dict(file=MEMORY_NAME, container="Viaggi", reason="r — 理由", content="x"), \
        "NO_PROPOSAL_ZONE"
    yield "propose_change", dict(file="doppio[ext_memory].md", container="Archivio", reason="r — 理由", content="x"), \
        "AMBIGUOUS_ZONE"
    yield "propose_change", dict(file=MEMORY_NAME, zone_line=line_of(MEMORY, "[P3]"), reason="r — 理由",
                                 content="###### LOG: 2026-01-01 — capodanno\nFuochi d'artificio.\n"), "NO_CHANGE"
    yield "propose_change", dict(file=MEMORY_NAME, zone_line=line_of(MEMORY, "[P3]"), reason="r — 理由",
                                 content="[/P3]\n[P1]\n## MODULE 666: EVIL\n"), "CONTENT_REFUSED"
    yield "set_module_state", dict(deactivate=["001"]), "PERMANENT_STATE"
    yield "set_module_state", dict(activate=["999"]), "UNKNOWN_MODULE"
    yield "ingest_log", dict(text="###### LOG: 2026-09-01 — x\ny\n[/LOG]", file=MEMORY_NAME, container="Nessuno"), \
        "UNKNOWN_CONTAINER"
    yield "search_memory", dict(query="!!!"), "BAD_QUERY"
    yield "build_context", dict(budget_tokens=1), "BUDGET_TOO_SMALL"
    yield "parse_trace", dict(text="niente"), "NO_TRACE"


def test_every_refusal_names_code_zone_rule_and_an_alternative_that_fits_the_tool(layer):
    (layer / "doppio[ext_memory].md").write_text(DOUBLE, encoding="utf-8")
    agent = Agent(build_server(layer))
    seen = set()
    for tool, arguments, code in _real_refusals(layer):
        before = snapshot(layer)
        text = agent.refused(tool, **arguments)
        what = f"{tool} {arguments}: {text}"
        assert code_of(text) == code, what
        lines = text.split("\n")
        assert lines[0].startswith(f"{code}: ") and lines[-1].startswith("instead: "), what
        alternative = instead_line(text)
        assert alternative == instead(code, tool), what
        if code not in RETRY_FITS:
            assert f"call {tool}" not in alternative and f"{tool}(" not in alternative, what
        if code.startswith("ZONE_") or code == "STALE_ZONE":
            assert re.fullmatch(r"zone: \[P[1-5]\] at line \d+ · rule: .+", lines[1]), what
        assert snapshot(layer) == before, what
        seen.add((tool, code))
    assert ("propose_change", "NO_PROPOSAL_ZONE") in seen


def test_a_proposal_refused_for_lack_of_a_p3_zone_does_not_send_the_agent_back_to_it(agent):
    text = agent.refused("propose_change", file=MEMORY_NAME, container="Viaggi", reason="r — 理由", content="x")
    assert code_of(text) == "NO_PROPOSAL_ZONE"
    assert "call propose_change" not in text and "zone_line" in instead_line(text)


# -- no stale state, and no needless parse ------------------------------------------------------------------

def _age(layer, seconds=60):
    """Set every file's times in the past (outside the racy window of the cache)."""
    past = time.time() - seconds
    for p in layer.rglob("*.md"):
        os.utime(p, (past, past))


def test_an_edit_on_disk_between_two_calls_is_seen_by_every_read(agent, layer):
    assert agent.call("check")["errors"] == 0
    assert len(agent.call("list_containers")["files"]) == 3
    path = layer / MEMORY_NAME
    path.write_text(path.read_text(encoding="utf-8").replace("[/P5]\n", "") + "\n## TOPIC: Nuovo — 新\n",
                    encoding="utf-8")
    assert agent.call("check")["errors"] >= 1
    status = agent.call("layer_status")
    assert status["diagnostics"]["errors"] >= 1
    (layer / "nuovo[ext_memory].md").write_text("# Nuovo — 新 [external_memory]\n", encoding="utf-8")
    assert len(agent.call("list_containers")["files"]) == 4
    (layer / "nuovo[ext_memory].md").unlink()
    assert len(agent.call("list_containers")["files"]) == 3


def test_a_same_size_edit_with_the_old_modification_time_is_seen(agent, layer):
    _age(layer)
    path = layer / REMINDER_NAME
    assert {m["id"]: m["effectiveState"] for m in agent.call("layer_status")["modules"]}["002"] == "inactive"
    st = os.stat(path)
    text = path.read_text(encoding="utf-8")
    edited = text.replace("### STATE\ninactive", "### STATE\nactive  ")  # same length
    assert len(edited.encode()) == st.st_size
    path.write_text(edited, encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert {m["id"]: m["effectiveState"] for m in agent.call("layer_status")["modules"]}["002"] == "active"


def test_a_racy_edit_is_seen_even_when_size_and_times_look_unchanged(server, layer, monkeypatch):
    """Two writes within the file system's timestamp granularity look alike to stat: the cache hashes again."""
    agent = Agent(server)
    monkeypatch.setattr(cache_module, "_signature", lambda st: ("always", "the", "same"))
    path = layer / REMINDER_NAME
    assert {m["id"]: m["effectiveState"] for m in agent.call("layer_status")["modules"]}["002"] == "inactive"
    path.write_text(path.read_text(encoding="utf-8").replace("### STATE\ninactive", "### STATE\nactive  "),
                    encoding="utf-8")
    assert {m["id"]: m["effectiveState"] for m in agent.call("layer_status")["modules"]}["002"] == "active"


def test_unchanged_files_are_parsed_once(server, layer):
    agent = Agent(server)
    _age(layer)
    agent.call("layer_status")
    parsed = server.cache.parsed
    assert parsed == 3
    agent.call("check")
    agent.call("list_containers")
    agent.call("build_context")
    agent.call("read_container", file=MEMORY_NAME, container="Viaggi")
    assert server.cache.parsed == parsed
    agent.call("append_entry", file=MEMORY_NAME, container="Viaggi", title="nuovo — 新", body="sì")
    agent.call("layer_status")
    assert server.cache.parsed == parsed + 1  # only the file that changed
