"""RV27: every write that changes one container names it in its history record, so a list of writes (the review
page's Activity, its container filter and its summary) says where each went without reading a saved version."""

from __future__ import annotations

import json
from pathlib import Path

from mcp_support import MEMORY_NAME, REMINDER_NAME, make_layer

from zonemark.render.activity import layer_activity
from zonemark.render.activity_query import container_label
from zonemark.writer import append_entries, append_entry, apply_proposal, history, propose, set_states
from zonemark.writer.append import NewEntry
from zonemark.layer.loader import Layer


def test_each_write_records_the_container_it_changed_and_an_old_record_reads_as_not_recorded(tmp_path: Path) -> None:
    layer = make_layer(tmp_path / "layer")
    memory = layer / MEMORY_NAME
    append_entry(memory, "Viaggi", "Osaka — perché", "東京 — sì", actor="ai")
    append_entries(memory, "Viaggi/日本", [NewEntry("2026-07-01", "Nara — 奈良", "perché no — forse")],
                   actor="ai", default_date="2026-07-01")
    p = propose(memory, "Ricordi", "###### LOG: 2026-01-01 — capodanno\nFuochi — 花火.", actor="ai", reason="perché")
    apply_proposal(p.path, actor="user")
    set_states(layer / REMINDER_NAME, activate=["002"], actor="user")
    newest_first = [e.container for e in history(memory)]
    assert newest_first == ["TOPIC: Ricordi", "SUBTOPIC1: 日本", "TOPIC: Viaggi"]
    assert history(layer / REMINDER_NAME)[0].container == "MODULE_STATE_REGISTRY"
    # a record written before the field was kept (or by hand without it) still reads, with no container
    oldest = sorted((memory.parent / ".zonemark" / "history" / (MEMORY_NAME + ".versions")).glob("*.json"))[0]
    record = json.loads(oldest.read_text("utf-8"))
    del record["container"]
    oldest.write_text(json.dumps(record), "utf-8")
    items = {i.entry.id: i for i in layer_activity(Layer.load(layer)) if i.file == MEMORY_NAME}
    assert container_label(items[record["id"]]) == ""
    assert sorted(container_label(i) for i in items.values()) == ["", "SUBTOPIC1: 日本", "TOPIC: Ricordi"]
