"""The client a write is made for, recorded beside its actor (issue 20 §2; writer/attribution.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from mcp_support import MEMORY_NAME, make_layer

from zonemark.writer import Via, acting_for, append_entry, current_via, history, propose


def test_a_write_inside_acting_for_records_the_client_and_one_outside_does_not(tmp_path: Path) -> None:
    layer = make_layer(tmp_path / "layer")
    target = layer / MEMORY_NAME
    append_entry(target, "Viaggi", "prima — perché", "東京", actor="ai")
    with acting_for(Via("Chat — perché 東京", "3f9a2b1c")):
        append_entry(target, "Viaggi", "seconda — 東京", "perché — sì", actor="ai")
    newest, older = history(target)[:2]
    assert newest.via == "Chat — perché 東京 (3f9a2b1c)" and newest.who == "ai via Chat — perché 東京 (3f9a2b1c)"
    assert older.via is None and older.who == "ai"
    assert current_via() is None
    shown = subprocess.run([sys.executable, "-m", "zonemark", "history", str(target)], capture_output=True, text=True,
                           timeout=60).stdout.splitlines()
    assert "ai via Chat — perché 東京 (3f9a2b1c)" in shown[0] and " ai " in shown[1]


def test_a_proposal_records_the_client(tmp_path: Path) -> None:
    layer = make_layer(tmp_path / "layer")
    with acting_for(Via("editore — 東京", "00ff00ff")):
        p = propose(layer / MEMORY_NAME, "Ricordi", "###### LOG: 2026-01-01 — capodanno\nFuochi — 花火.", actor="ai",
                    reason="perché — sì")
    record = json.loads(p.path.read_text("utf-8"))
    assert record["via"] == "editore — 東京 (00ff00ff)" and record["proposed_by"] == "ai"


def test_a_label_is_one_printable_line_whatever_the_name_holds() -> None:
    label = Via("riga\nnuova\u202e — 東京" + "x" * 300, "ab\ncd").label()
    assert "\n" not in label and "\u202e" not in label and len(label) <= 120
    assert label.startswith("riga?nuova? — 東京")


def test_the_client_is_per_context_not_per_process(tmp_path: Path) -> None:
    seen: list[str | None] = []
    with acting_for(Via("uno", "1")):
        worker = threading.Thread(target=lambda: seen.append(current_via()))
        worker.start()
        worker.join()
    assert seen == [None]  # a thread started plainly does not inherit it; the SDK's worker threads copy the context
