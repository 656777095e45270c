"""Refusals as data: every refusal of the safe writer carries a stable code from one catalogue.

* statically: every ``RefusedWrite(...)`` in the package is raised with a ``code=`` of
  :data:`zonemark.writer.refusals.REFUSALS` (and so is every code a helper passes on);
* at run time: a refusal without a code, or with a code outside the catalogue, cannot be made;
* every code of the catalogue is produced by a real write (Italian, Japanese and '—' in every
  payload), the file is byte for byte what it was, the zone and its level are set together;
* the table in ``docs/conformance.md`` is the catalogue.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import filelock
import pytest

from zonemark.writer import (REFUSALS, InvalidDate, RefusedWrite, Store, append_entry, apply_proposal, edit_zone, propose,
                             reject_proposal, set_states, undo)
from zonemark.writer import snapshot as snapshot_module
from zonemark.writer.refusals import refusal_table
from zonemark.writer.scaffold import add_container, new_file
from zonemark.writer.store import StoreError

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "zonemark"

REMINDER = """# Aria — アリア [reminder]

[P1]
## MODULE 001: ANCORA [NUCLEI: 1]
### STATE
active - permanent
[/P1]

[P2]
## MODULE 002: PIANO — 計画 [NUCLEI: 1]
### STATE
inactive
[/P2]

[P3]
## MODULE 003: MEMORIA [NUCLEI: 1]
[/P3]

[P3]
###### LOG: 2026-01-01 — diario lungo — 長期
Perché sì.
[/P3]

[P1]
## NUCLEUS 1: LOGICO
[/P1]

[P4]
###### LOG: 2026-05-03 — prima — 最初
Tutto bene.
[/P4]

[P5]
Umore: sereno — 晴れ.
[/P5]

[P5] nota in linea — インライン
[/P5]

[P4]
## MODULE_STATE_REGISTRY:
* ACTIVE:
* INACTIVE:
[/P4]
"""

MEMORY = """# Diario — 日記 [external_memory]

[P1]
## TOPIC: Viaggi
[/P1]

[P4]
###### LOG: 2026-04-01 — Kyoto — 京都
Templi — 寺.
[/P4]

[P1]
## TOPIC: Ricordi
[/P1]

[P3]
###### LOG: 2026-01-01 — capodanno
Fuochi — 花火.
[/P3]

[P1]
## TOPIC: Doppio
[/P1]

[P3]
uno
[/P3]

[P3]
due
[/P3]

[P1]
## TOPIC: Archivio
[/P1]

[P1]
## TOPIC: Gemello
[/P1]

[P4]
[/P4]

[P1]
## TOPIC: Gemello
[/P1]

[P4]
[/P4]
"""

UNCLOSED = """# Aperto — 開 [external_memory]

[P1]
## TOPIC: Città
[/P1]

[P4]
###### LOG: 2026-04-01 — aperto
mai chiuso — 閉じない
"""


def line_of(text: str, needle: str, nth: int = 1) -> int:
    found = [i + 1 for i, ln in enumerate(text.split("\n")) if ln == needle]
    return found[nth - 1]


@pytest.fixture
def layer(tmp_path):
    snapshot_module.forget()
    (tmp_path / "aria[reminder].md").write_text(REMINDER, encoding="utf-8")
    (tmp_path / "diario[ext_memory].md").write_text(MEMORY, encoding="utf-8")
    return tmp_path


@pytest.fixture
def store():
    return Store(fsync=False)


# -- statically: every raise names a code of the catalogue -------------------------------------

def _calls():
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                yield path.relative_to(SRC), node, name


def _constants(node) -> list[str]:
    """The string constants an expression can evaluate to (a constant, or the branches of an ``x if c else y``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _constants(node.body) + _constants(node.orelse)
    return []


def test_every_refused_write_is_raised_with_a_code_of_the_catalogue():
    raised = 0
    for rel, call, name in _calls():
        if name == "RefusedWrite":
            raised += 1
            code = next((k.value for k in call.keywords if k.arg == "code"), None)
            assert code is not None, f"{rel}:{call.lineno}: RefusedWrite without code="
            for value in _constants(code):
                assert value in REFUSALS, f"{rel}:{call.lineno}: unknown code {value!r}"
            if not _constants(code):  # a helper that passes a code on: its callers' constants are checked below
                assert isinstance(code, ast.Name), f"{rel}:{call.lineno}: code must be a constant or a parameter"
        elif name == "_refuse" and str(rel).startswith("writer/scaffold"):
            values = _constants(call.args[-1]) if call.args else []
            assert values and all(v in REFUSALS for v in values), f"{rel}:{call.lineno}: _refuse without a code"
    assert raised >= 40


def test_codes_passed_as_keywords_anywhere_in_the_writer_are_in_the_catalogue():
    for rel, call, _name in _calls():
        if not str(rel).startswith("writer/"):
            continue
        for k in call.keywords:
            if k.arg == "code":
                for value in _constants(k.value):
                    assert value in REFUSALS, f"{rel}:{call.lineno}: {value!r}"


def test_a_refusal_cannot_be_made_without_a_known_code():
    with pytest.raises(TypeError):
        RefusedWrite("refused: x")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="unknown refusal code"):
        RefusedWrite("refused: x", code="NO_SUCH_CODE")
    exc = RefusedWrite("refused: sì — はい", code="ZONE_READ_ONLY", zone=3, level=1)
    assert exc.rule == "§5.2" and exc.to_dict() == {"code": "ZONE_READ_ONLY", "message": "refused: sì — はい",
                                                    "zone": 3, "level": 1, "rule": "§5.2"}


def test_refusals_survive_pickling_whole():
    import pickle
    from zonemark.writer.store import NothingToUndo
    exc = RefusedWrite("refused: zona — ゾーン", code="ZONE_APPEND_ONLY", zone=7, level=4, rule="§5.2")
    again = pickle.loads(pickle.dumps(exc))
    assert type(again) is RefusedWrite and again.to_dict() == exc.to_dict() and str(again) == str(exc)
    for err in (StoreError("x — エックス", code="NO_SUCH_VERSION"), NothingToUndo("niente — 無")):
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and (str(back), back.code) == (str(err), err.code)


def test_store_errors_carry_codes_of_the_same_catalogue():
    from zonemark.writer.store import HistoryCorrupt, NothingToUndo, WriteConflict
    for cls in (StoreError, WriteConflict, NothingToUndo, HistoryCorrupt, InvalidDate):
        assert cls("x").code in REFUSALS
    assert StoreError("x", code="NO_SUCH_VERSION").code == "NO_SUCH_VERSION"


def test_the_conformance_page_holds_the_catalogue():
    text = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    assert refusal_table() in text


# -- every code from a real write ----------------------------------------------------------------

class Ctx:
    """What a scenario works with; :meth:`checkpoint` marks the bytes the refused write must leave alone."""

    def __init__(self, layer: Path, store: Store, monkeypatch, tmp_path_factory):
        self.layer, self.store, self.monkeypatch, self.tmp = layer, store, monkeypatch, tmp_path_factory
        self.checkpoint()

    def checkpoint(self) -> None:
        self.before = {p: p.read_bytes() for p in self.layer.glob("*.md")}

    @property
    def reminder(self) -> Path:
        return self.layer / "aria[reminder].md"

    @property
    def memory(self) -> Path:
        return self.layer / "diario[ext_memory].md"

    def zone(self, path: Path, needle: str, nth: int = 1) -> int:
        return line_of(path.read_text(encoding="utf-8"), needle, nth)


def s_zone_read_only(c):
    edit_zone(c.reminder, c.zone(c.reminder, "[P2]"), "riscritto — 書き換え", store=c.store)


def s_zone_propose_only(c):
    append_entry(c.memory, "Ricordi", "ricordo — 思い出", "nuovo", store=c.store)


def s_zone_append_only(c):
    edit_zone(c.memory, c.zone(c.memory, "[P4]"), "cancellato — 消した", store=c.store)


def s_user_only(c):
    undo(c.memory, actor="ai", store=c.store)


def s_unknown_container(c):
    append_entry(c.memory, "Viaggi/日本", "Nara — 奈良", "cervi", store=c.store)


def s_ambiguous_container(c):
    append_entry(c.memory, "Gemello", "gemelli — 双子", "due", store=c.store)


def s_no_journal(c):
    append_entry(c.memory, "Archivio", "archivio — 記録", "x", store=c.store)


def s_no_zone(c):
    edit_zone(c.reminder, 2, "niente — 無", store=c.store)


def s_no_proposal_zone(c):
    propose(c.memory, "Viaggi", "nuovo — 新", reason="perché — なぜ", store=c.store)


def s_ambiguous_zone(c):
    propose(c.memory, "Doppio", "nuovo — 新", reason="perché — なぜ", store=c.store)


def s_unclosed_zone(c):
    path = c.layer / "aperto[ext_memory].md"
    path.write_text(UNCLOSED, encoding="utf-8")
    c.checkpoint()
    append_entry(path, "Città", "chiuso? — 閉じた?", "no", store=c.store)


def s_inline_zone(c):
    edit_zone(c.reminder, c.zone(c.reminder, "[P5] nota in linea — インライン"), "x — エックス", store=c.store)


def s_zone_not_located(c):
    c.monkeypatch.setattr(snapshot_module.FileSnapshot, "sane", lambda self, zone: False)
    append_entry(c.memory, "Viaggi", "dove — どこ", "x", store=c.store)


def s_bad_title(c):
    append_entry(c.memory, "Viaggi", "due\nrighe — 二行", "x", store=c.store)


def s_bad_date(c):
    append_entry(c.memory, "Viaggi", "ieri — 昨日", "x", date="2026-02-30", store=c.store)


def s_file_not_utf8(c):
    path = c.layer / "cp1252[ext_memory].md"
    path.write_bytes("# Città [external_memory]\n\n[P1]\n## TOPIC: Perché\n[/P1]\n\n[P4]\n[/P4]\n".encode("cp1252"))
    c.checkpoint()
    append_entry(path, "Perché", "perché — 東京", "testo", store=c.store)


def s_content_refused(c):
    append_entry(c.memory, "Viaggi", "surrogato — 代理", "testo \ud800 — 壊れた", store=c.store)


def s_structure_changed(c):
    edit_zone(c.reminder, c.zone(c.reminder, "[P5]"), "###### nodo libero — 自由\ntesto", store=c.store)


def s_new_diagnostic(c):
    deep = "* uno — 一\n  > citazione — 引用\n  - quattro — 四"  # kept as written, refused (W24)
    append_entry(c.memory, "Viaggi", "profondo — 深い", deep, store=c.store)


def s_no_change(c):
    propose(c.memory, c.zone(c.memory, "[P3]"), "###### LOG: 2026-01-01 — capodanno\nFuochi — 花火.\n",
            reason="uguale — 同じ", store=c.store)


def s_stale_zone(c):
    edit_zone(c.reminder, c.zone(c.reminder, "[P5]"), "nuovo — 新", base_hash="0" * 64, store=c.store)


def s_stale_proposal(c):
    p3 = c.zone(c.memory, "[P3]")
    p = propose(c.memory, p3, "nuovo — 新\n", reason="cambio — 変更", store=c.store)
    edit_zone(c.memory, p3, "cambiato dall'utente — 利用者", actor="user", store=c.store)
    c.checkpoint()
    apply_proposal(p.path, store=c.store)


def s_proposal_closed(c):
    p = propose(c.memory, c.zone(c.memory, "[P3]"), "nuovo — 新\n", reason="cambio — 変更", store=c.store)
    reject_proposal(p.path, reason="no — いいえ")
    apply_proposal(p.path, store=c.store)


def s_no_registry(c):
    c.reminder.write_text(REMINDER.split("[P4]\n## MODULE_STATE_REGISTRY:")[0], encoding="utf-8")
    c.checkpoint()
    set_states(c.layer, ["003"], store=c.store)


def s_ambiguous_reminder(c):
    (c.layer / "bis[reminder].md").write_text(REMINDER, encoding="utf-8")
    c.checkpoint()
    set_states(c.layer, ["003"], store=c.store)


def s_permanent_state(c):
    set_states(c.layer, deactivate=["001"], store=c.store)


def s_unknown_module(c):
    set_states(c.layer, ["999"], store=c.store)


def s_invalid_module_id(c):
    set_states(c.layer, ["~T1"], store=c.store)


def s_contradictory_state(c):
    set_states(c.layer, ["003"], ["003"], store=c.store)


def s_id_conflict(c):
    (c.layer / "altro[ext_module].md").write_text(
        "# Altro — 他 [external_module]\n\n[P1]\n## MODULE 001: COPIA [NUCLEI: 1]\n\n"
        "## MODULE 777: SOLO — 一人 [NUCLEI: 1]\n[/P1]\n", encoding="utf-8")
    c.checkpoint()
    set_states(c.layer, ["777"], store=c.store)


def s_layer_unreadable(c):
    set_states(c.tmp.mktemp("vuoto"), ["001"], store=c.store)


def s_bad_name(c):
    add_container(c.memory, "Viaggi [P1] — 旅", store=c.store)


def s_file_exists(c):
    new_file("memory", "diario", c.layer)


def s_second_reminder(c):
    new_file("reminder", "Bis — 二", c.layer)


def s_id_taken(c):
    add_container(c.reminder, "002: DOPPIONE — 重複", store=c.store)


def s_container_exists(c):
    add_container(c.memory, "Viaggi", store=c.store)


def s_bad_parent(c):
    new_file("memory", "Profondo — 深い", c.layer, topics=["Viaggi/Kyoto — 京都/tempio/giardino/stagno"])


def s_file_broken(c):
    path = c.layer / "aperto[ext_memory].md"
    path.write_text(UNCLOSED, encoding="utf-8")
    c.checkpoint()
    add_container(path, "Nuovo — 新", store=c.store)


def s_write_conflict(c):
    lock_path = Store().lock_path(c.memory)
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(str(lock_path)):
        append_entry(c.memory, "Viaggi", "bloccato — ロック", "x", store=Store(fsync=False, lock_timeout=0.05))


def s_file_not_writable(c):
    c.memory.chmod(0o444)
    try:
        append_entry(c.memory, "Viaggi", "sola lettura — 読み取り", "x", store=c.store)
    finally:
        c.memory.chmod(0o644)


def s_nothing_to_undo(c):
    undo(c.memory, store=c.store)


def s_no_such_version(c):
    append_entry(c.memory, "Viaggi", "versione — 版", "x", store=c.store)
    c.checkpoint()
    c.store.version(c.memory, "99999999")


def s_history_corrupt(c):
    r = append_entry(c.memory, "Viaggi", "storia — 歴史", "x", store=c.store)
    saved = c.store.history_dir(c.memory) / f"{r.history_id}.orig"
    os.unlink(saved)
    saved.write_bytes("manomesso — 改ざん\n".encode())
    c.checkpoint()
    undo(c.memory, store=c.store)


SCENARIOS = {name[2:].upper(): fn for name, fn in dict(globals()).items() if name.startswith("s_")}


def test_every_code_has_a_scenario():
    assert set(SCENARIOS) == set(REFUSALS)


@pytest.mark.parametrize("code", sorted(REFUSALS))
def test_every_code_comes_from_a_real_write(code, layer, store, monkeypatch, tmp_path_factory):
    ctx = Ctx(layer, store, monkeypatch, tmp_path_factory)
    with pytest.raises((RefusedWrite, StoreError, InvalidDate)) as caught:
        SCENARIOS[code](ctx)
    exc = caught.value
    assert exc.code == code, str(exc)
    assert "\n" not in str(exc)
    if isinstance(exc, RefusedWrite):
        assert exc.rule
        if exc.zone is not None:
            assert exc.level in (1, 2, 3, 4, 5), exc.to_dict()
        if code.startswith("ZONE_") or code in ("STALE_ZONE", "UNCLOSED_ZONE", "INLINE_ZONE", "STALE_PROPOSAL"):
            assert exc.zone is not None and exc.level is not None, exc.to_dict()
    assert {p: p.read_bytes() for p in ctx.before} == ctx.before
