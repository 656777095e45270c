"""Each text a tool takes has one limit, the one its writer or service refuses at, and the answer names it (W36).

The calls go through the SDK's real in-memory client (``tests/mcp_support.py``): the schema the agent reads, the
validation the server runs, the answer it gives.  Italian, Japanese and '—' in every text.
"""

from __future__ import annotations

import pytest

from mcp_support import MEMORY_NAME, Agent, line_of, make_layer
from zonemark.interchange import ingest as ingest_module
from zonemark.interchange import trace as trace_module
from zonemark.mcp.server import TEXT_LIMITS, build_server
from zonemark.search import query as query_module
from zonemark.writer import snapshot as snapshot_module
from zonemark.writer import proposals as proposals_module
from zonemark.writer import sanitize as sanitize_module

#: (tool, argument) -> the limit of the writer or the service behind it, read from where it is enforced.
ENFORCED = {
    ("append_entry", "title"): 4 * sanitize_module.MAX_TITLE_CHARS,
    ("append_entry", "body"): sanitize_module.MAX_BODY_CHARS,
    ("edit_volatile", "content"): sanitize_module.MAX_BODY_CHARS,
    ("propose_change", "content"): sanitize_module.MAX_BODY_CHARS,
    ("propose_change", "reason"): proposals_module.MAX_REASON_CHARS,
    ("ingest_log", "text"): ingest_module.MAX_CHAT_CHARS,
    ("parse_trace", "text"): trace_module.MAX_TRACE_CHARS,
    ("search_memory", "query"): query_module.MAX_QUERY_CHARS,
}


@pytest.fixture
def layer(tmp_path):
    snapshot_module.forget()
    yield make_layer(tmp_path)
    snapshot_module.forget()


def test_every_text_argument_s_schema_bound_is_the_limit_its_service_refuses_at(layer):
    """The maxLength an agent reads in the tool list is the writer's or the service's own limit, for every
    text argument of that kind (ingest_log took 4,000,000 characters where ingest refuses over 1,000,000)."""
    tools = {t.name: t.input_schema for t in Agent(build_server(layer)).tools()}
    assert {k: v[1] for k, v in TEXT_LIMITS.items()} == ENFORCED
    for (tool, argument), limit in ENFORCED.items():
        prop = tools[tool]["properties"][argument]
        bound = prop.get("maxLength", next((a.get("maxLength") for a in prop.get("anyOf", ()) if "maxLength" in a), None))
        assert bound == limit, (tool, argument, bound, limit)


def _call(layer, tool: str, argument: str, value: str) -> dict:
    zone = line_of((layer / MEMORY_NAME).read_text(encoding="utf-8"), "[P5]")
    base = {
        "append_entry": {"file": MEMORY_NAME, "container": "Viaggi", "title": "nota — 東京", "body": "perché — 東京"},
        "edit_volatile": {"file": MEMORY_NAME, "zone_line": zone, "base_hash": "0" * 64, "content": "perché"},
        "propose_change": {"file": MEMORY_NAME, "container": "Ricordi", "reason": "perché — 理由", "content": "東京"},
        "ingest_log": {"file": MEMORY_NAME, "container": "Viaggi", "text": "perché — 東京"},
        "parse_trace": {"text": "perché — 東京"},
        "search_memory": {"query": "perché 東京"},
    }[tool]
    return base | {argument: value}


@pytest.mark.parametrize("tool,argument", sorted(ENFORCED))
def test_a_text_over_its_limit_is_refused_in_one_line_naming_the_limit(layer, tool, argument):
    agent = Agent(build_server(layer))
    limit = ENFORCED[(tool, argument)]
    name = TEXT_LIMITS[(tool, argument)][0]
    over = ("perché — 東京 " * (limit // 12 + 1))[:limit] + "—"
    text = agent.refused(tool, **_call(layer, tool, argument, over))
    first = text.split("\n")[0]
    assert first == f"BAD_ARGUMENT: {tool}: {argument} has {limit + 1:,} characters, at most {limit:,} ({name})"


@pytest.mark.parametrize("tool,argument", [("ingest_log", "text"), ("parse_trace", "text"), ("propose_change", "reason"),
                                           ("search_memory", "query")])
def test_a_text_at_its_limit_reaches_the_service(layer, tool, argument):
    """At the limit the schema lets the text through: what answers is the service, never a bound of the
    server's own (a 1,000,001-character chat text was let through, then refused by ingest)."""
    agent = Agent(build_server(layer))
    limit = ENFORCED[(tool, argument)]
    at = ("perché — 東京 " * (limit // 12 + 1))[:limit - 1] + "京"
    result = agent.raw(tool, _call(layer, tool, argument, at))
    text = result.content[0].text
    assert f"at most {limit:,}" not in text and "String should have at most" not in text
