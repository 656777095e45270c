"""The writer as a pure plan on one snapshot of a file, and a commit around it (issue 17 §1).

Every write operation is a planner: a pure function of a :class:`FileSnapshot` (the bytes of one read) and a
request, returning the new bytes and its result; :meth:`Store.commit` runs it under the lock on the bytes of
now and writes what it planned.  A dry run is the planner with no commit.  Non-ASCII text throughout.
"""

from __future__ import annotations

import sys

import pytest

from zonemark.core import parser as core_parser
from zonemark.writer import (FileSnapshot, NewEntry, Plan, Store, append_entry, apply_proposal, plan_entries,
                             preview_proposal, propose)
from zonemark.writer import snapshot as snapshot_module
from zonemark.writer.append import append_request, plan_append

MEMORY = """# Diario — 日記 [external_memory]

[P1]
## TOPIC: Città — 東京
Perché sì — è così.
[/P1]

[P4]
###### LOG: 2026-01-02 — primo
Un ricordo — 記憶.
[/P4]

[P3]
###### LOG: 2026-01-03 — lungo
Memoria di lunga durata — 長期.
[/P3]
"""


@pytest.fixture
def store():
    snapshot_module.forget()
    return Store(fsync=False)


@pytest.fixture
def memory(tmp_path):
    path = tmp_path / "diario[ext_memory].md"
    path.write_text(MEMORY, encoding="utf-8")
    return path


def count_parses(monkeypatch) -> list[int]:
    """Count every full parse the writer's modules run (each imported ``parse`` by name)."""
    calls: list[int] = []
    real = core_parser.parse

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    for name, module in list(sys.modules.items()):
        if name.startswith("zonemark.writer.") and getattr(module, "parse", None) is real:
            monkeypatch.setattr(module, "parse", counting)
    return calls


def test_a_plan_writes_nothing_and_the_commit_writes_exactly_the_plan(memory, store):
    old = memory.read_bytes()
    req = append_request("Città — 東京", "perché — 東京", "Kyoto — 京都.", date="2026-02-03")
    plan = plan_append(FileSnapshot(memory, old), req)
    assert memory.read_bytes() == old and not (memory.parent / ".zonemark").exists()
    assert plan.result.changed and plan.verdict is not None and plan.verdict.ok
    assert "###### LOG: 2026-02-03 — perché — 東京\nKyoto — 京都.\n" in plan.data.decode("utf-8")
    r = append_entry(memory, "Città — 東京", "perché — 東京", "Kyoto — 京都.", date="2026-02-03", store=store)
    assert memory.read_bytes() == plan.data
    assert (r.line, r.zone, r.history_id is not None) == (plan.result.line, plan.result.zone, True)


def test_one_entry_and_a_batch_of_one_plan_the_same_bytes(memory):
    """The ingest batch is the append planner for N entries: for one entry it plans what append_entry writes."""
    data = memory.read_bytes()
    one = plan_append(FileSnapshot(memory, data),
                      append_request("Città — 東京", "voce — perché", "testo — 東京", date="2026-02-03"))
    batch = plan_entries(memory, data, "Città — 東京", [NewEntry("2026-02-03", "voce — perché", "testo — 東京")],
                         default_date="2026-02-03")
    assert batch.data == one.data
    assert [(o.status, o.line) for o in batch.outcomes] == [("appended", one.result.line)]


def test_commit_runs_the_planner_on_the_bytes_of_now(memory, store):
    seen: list[bytes] = []

    def planner(snap: FileSnapshot) -> Plan[str]:
        seen.append(snap.data)
        return Plan(snap.data.replace("primo".encode(), "primo — 一".encode()), "fatto — 済")

    memory.write_text(MEMORY.replace("Un ricordo", "Un altro ricordo"), encoding="utf-8")
    now = memory.read_bytes()
    done = store.commit(memory, planner, actor="user", action="test — テスト")
    assert seen and all(data == now for data in seen)
    assert done.changed and done.history_id is not None and done.result == "fatto — 済"
    assert memory.read_bytes() == now.replace("primo".encode(), "primo — 一".encode())
    again = store.commit(memory, lambda snap: Plan(snap.data, "niente — 無"), actor="user", action="no-op")
    assert (again.changed, again.history_id, again.result) == (False, None, "niente — 無")


def test_propose_parses_the_file_once_before_the_change_and_once_after(memory, store, monkeypatch):
    """One snapshot owns the parse: the zone index and the re-check read the same document (it was parsed twice)."""
    calls = count_parses(monkeypatch)
    propose(memory, 13, "###### LOG: 2026-01-03 — lungo\nRiscritto — 書き直し.\n", reason="perché — 理由",
            store=store)
    assert len(calls) == 2


def test_apply_parses_the_file_once_before_the_change_and_once_after(memory, store, monkeypatch):
    prop = propose(memory, 13, "###### LOG: 2026-01-03 — lungo\nRiscritto — 書き直し.\n", reason="perché — 理由",
                   store=store)
    calls = count_parses(monkeypatch)
    apply_proposal(prop.path, actor="user", store=store)
    # the store plans once without the lock (nothing of zonemark's beside it yet), and under the lock the bytes
    # are the same: its plan is used again (it planned twice before, four parses)
    assert len(calls) == 2


def test_a_write_plans_again_when_the_bytes_changed_before_the_lock(memory, store, monkeypatch):
    """The first run is without the lock; bytes that changed before the lock was taken are planned again."""
    import zonemark.writer.store as store_module
    planned: list[int] = []
    real = store_module.FileSnapshot

    def counted(path, data):
        planned.append(len(data))
        return real(path, data)
    monkeypatch.setattr(store_module, "FileSnapshot", counted)
    locked = store._locked

    def change_then_lock(target):
        with open(memory, "ab") as handle:
            handle.write("\nAggiunto a mano — 手で.\n".encode())
        return locked(target)
    monkeypatch.setattr(store, "_locked", change_then_lock)
    append_entry(memory, "Città — 東京", "Kyoto — 京都", "perché — sì", date="2026-02-01", store=store)
    assert len(planned) == 2 and planned[1] > planned[0]
    assert "Aggiunto a mano — 手で." in memory.read_text(encoding="utf-8")
    assert "Kyoto — 京都" in memory.read_text(encoding="utf-8")


def test_the_preview_of_a_proposal_is_the_apply_planner_with_no_commit(memory, store):
    prop = propose(memory, 13, "###### LOG: 2026-01-03 — lungo\nRiscritto — 書き直し.\n", reason="perché — 理由",
                   store=store)
    old = memory.read_bytes()
    history = memory.parent / ".zonemark" / "history"
    preview = preview_proposal(prop, old)
    assert preview is not None and memory.read_bytes() == old and not history.exists()
    zone, new = preview
    apply_proposal(prop.path, actor="user", store=store)
    assert zone.line == 13 and memory.read_bytes() == new


def test_a_write_holds_one_index_of_the_file_while_it_runs(tmp_path, monkeypatch):
    """W99: once the plan carries the index of the new bytes, the index kept for the bytes read is dropped (the
    write held both); after the commit the new one is kept, and the next append uses it without a scan."""
    from zonemark.writer import Store, append_entry, skeleton as skeleton_module, snapshot, store as store_module

    path = tmp_path / "notes[ext_memory].md"
    path.write_text("# Note — perché [external_memory]\n\n[P1]\n## TOPIC: Alpha — 東京\n[/P1]\n\n[P4]\n[/P4]\n",
                    encoding="utf-8")
    snapshot.forget()
    old = path.read_bytes()
    seen = []
    replace_file = store_module.Store._replace

    def spy(self, target, before, *args, **kwargs):
        seen.append(snapshot._kept(snapshot._indexes, snapshot._key(path), before.data))
        return replace_file(self, target, before, *args, **kwargs)

    monkeypatch.setattr(store_module.Store, "_replace", spy)
    store = Store(fsync=False)
    append_entry(path, "Alpha — 東京", "primo — 東京", "corpo — perché", date="2026-02-01", store=store)
    assert seen == [None] and path.read_bytes() != old
    new = path.read_bytes()
    assert snapshot._kept(snapshot._indexes, snapshot._key(path), new) is not None
    scans = []
    monkeypatch.setattr(skeleton_module.ZoneIndex, "scan", lambda *a: scans.append(a) or None)
    append_entry(path, "Alpha — 東京", "secondo — 東京", "", date="2026-02-02", store=store)
    assert not scans and path.read_text(encoding="utf-8").endswith("secondo — 東京\n[/P4]\n")
