"""What the review page reads, below the page: where a line belongs, the layer's write history, what a
proposal would change, and diffs as escaped HTML (layer/enclosing.py, render/activity.py,
render/proposal_change.py, render/diff_html.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from review_support import CARS_NAME, HOSTILE, MEMORY_NAME, add_ai_activity, make_layer
from zonemark import parse_file
from zonemark.core.parser import parse
from zonemark.layer import Layer
from zonemark.layer.enclosing import enclosing_container
from zonemark.render.activity import file_activity, layer_activity, write_change
from zonemark.render.diff_html import diff_rows, side_by_side_html, unified_html, unified_text_html
from zonemark.render.proposal_change import decided_proposals, pending_changes
from zonemark.writer import Store, append_entry, apply_proposal, edit_zone, reject_proposal, set_states, undo
from zonemark.writer import snapshot as snapshot_module

ROOT = Path(__file__).resolve().parents[2]
ARIA = ROOT / "examples" / "layer" / "aria[reminder].md"
CARS = ROOT / "examples" / "layer" / "cars[ext_memory].md"


@pytest.fixture(autouse=True)
def fresh_writer_cache():
    snapshot_module.forget()
    yield
    snapshot_module.forget()


# -- where a line belongs ------------------------------------------------------------------

def test_enclosing_container_follows_header_nesting_across_zones():
    aria = parse_file(ARIA)
    lines = ARIA.read_text(encoding="utf-8").split("\n")
    first_log = lines.index("###### LOG: 2026-05-03 — First production activation") + 1
    owner = enclosing_container(aria, first_log)  # a [P4] zone after the module: a zone boundary closes nothing
    assert (owner.kind, owner.address, owner.label) == ("module", "001", "MODULE 001: IDENTITY_ANCHOR")
    registry = lines.index("* ACTIVE: 002, CURIOSITY_ENGINE") + 1
    assert enclosing_container(aria, registry).kind == "registry"
    rule = next(n for n, line in enumerate(lines, 1) if line.startswith("* R1:"))
    assert enclosing_container(aria, rule).label == "RULES:"
    assert enclosing_container(aria, 1).kind == "file"
    cars = parse_file(CARS)
    text = CARS.read_text(encoding="utf-8").split("\n")
    pressures = text.index("2.4 front, 2.6 rear. The rear left loses about 0.1 a month.") + 1
    got = enclosing_container(cars, pressures)
    assert (got.kind, got.address, got.label) == ("subtopic", "Maintenance/Tyres/Pressures", "SUBTOPIC2: Pressures")
    insurance = text.index("Same insurer, third-party plus theft; renewal due 2027-10-01.") + 1
    assert enclosing_container(cars, insurance).address == "Insurance"


def test_enclosing_container_with_japanese_and_italian_names():
    doc = parse("# 記憶 [external_memory]\n\n[P1]\n## TOPIC: 日本語のメモ\n[/P1]\n\n"
                "[P4]\n###### LOG: 2026-01-02 — città\n"
                "testo — テキスト\n[/P4]\n")
    got = enclosing_container(doc, 9)
    assert (got.kind, got.label, got.address) == ("topic", "TOPIC: 日本語のメモ", "日本語のメモ")


# -- the write history of a layer ----------------------------------------------------------

def test_layer_activity_newest_first_across_files_with_container_and_diff(tmp_path):
    layer = make_layer(tmp_path)
    store = Store(fsync=False)
    append_entry(layer / CARS_NAME, "Maintenance/Tyres", "pressione — 空気圧", "2,5 davanti.", actor="ai",
                 date="2026-10-12", store=store)
    set_states(layer, deactivate=["002"], actor="user", store=store)
    items = layer_activity(Layer.load(layer), store=store)
    assert [(i.file, i.entry.actor) for i in items] == [("aria[reminder].md", "user"), (CARS_NAME, "ai")]
    assert items[0].undoable and items[1].undoable
    registry, appended = (write_change(item, store=store) for item in items)
    assert registry.container.kind == "registry"
    assert appended.container.label == "SUBTOPIC1: Tyres" and appended.container.address == "Maintenance/Tyres"
    assert appended.before == CARS.read_text(encoding="utf-8")
    assert appended.after == (layer / CARS_NAME).read_text(encoding="utf-8")
    assert "###### LOG: 2026-10-12 — pressione — 空気圧" in appended.after
    assert "* ACTIVE: CURIOSITY_ENGINE\n* INACTIVE: EMPATHY_LAYER, 002\n" in registry.after


def test_only_the_write_undo_would_revert_is_undoable_and_it_is_the_one_reverted(tmp_path):
    layer = make_layer(tmp_path)
    cars = layer / CARS_NAME
    store = Store(fsync=False)
    original = cars.read_text(encoding="utf-8")
    append_entry(cars, "Maintenance/Tyres", "uno", "primo — 一", actor="ai", date="2026-10-12", store=store)
    after_first = cars.read_text(encoding="utf-8")
    append_entry(cars, "Insurance", "due", "secondo — 二", actor="ai", date="2026-10-13", store=store)
    second, first = file_activity(cars, CARS_NAME, store=store)
    assert (second.undoable, first.undoable) == (True, False)
    assert write_change(first, store=store).after == after_first  # the written version, from the next save
    assert write_change(second, store=store).before == after_first
    assert write_change(second, store=store).container.address == "Insurance"
    undo(cars, actor="user", store=store)
    assert cars.read_text(encoding="utf-8") == after_first
    items = file_activity(cars, CARS_NAME, store=store)
    assert [i.entry.action for i in items][0] == "undo" and items[0].entry.undoes == second.id
    assert [i.id for i in items if i.undoable] == [first.id]  # undo walks back: the first append is next
    undo(cars, actor="user", store=store)
    assert cars.read_text(encoding="utf-8") == original
    assert not [i for i in file_activity(cars, CARS_NAME, store=store) if i.undoable]


def test_a_file_edited_by_hand_since_has_nothing_undoable_and_no_after_for_the_last_write(tmp_path):
    layer = make_layer(tmp_path)
    cars = layer / CARS_NAME
    store = Store(fsync=False)
    append_entry(cars, "Maintenance/Tyres", "uno", "primo", actor="ai", date="2026-10-12", store=store)
    cars.write_text(cars.read_text(encoding="utf-8") + "\nscritto a mano — 手書き\n", encoding="utf-8")
    (item,) = file_activity(cars, CARS_NAME, store=store)
    change = write_change(item, store=store)
    assert not item.undoable and change.after is None and change.container is None
    assert change.before == CARS.read_text(encoding="utf-8")


def test_activity_reads_only(tmp_path):
    layer = make_layer(tmp_path)
    layer_activity(Layer.load(layer))
    assert not (layer / ".zonemark").exists()


# -- what a proposal would change ----------------------------------------------------------

@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_the_preview_is_what_apply_writes(tmp_path, newline):
    layer = make_layer(tmp_path)
    memory = layer / MEMORY_NAME
    memory.write_bytes(memory.read_text(encoding="utf-8").replace("\n", newline).encode("utf-8"))
    snapshot_module.forget()
    activity = add_ai_activity(layer)
    changes = {c.proposal.id: c for c in pending_changes(layer)}
    assert set(changes) == {activity.apply_id, activity.reject_id, activity.hostile_id}
    change = changes[activity.apply_id]
    assert not change.stale and change.file == MEMORY_NAME
    assert change.container.label == "TOPIC: Viaggi"
    assert change.before == memory.read_bytes().decode("utf-8")
    apply_proposal(change.proposal.path, actor="user")
    assert memory.read_bytes().decode("utf-8") == change.after
    assert "foglie rosse" in change.after


def test_a_stale_proposal_has_no_after_and_decided_ones_are_listed(tmp_path):
    layer = make_layer(tmp_path)
    activity = add_ai_activity(layer)
    memory = layer / MEMORY_NAME
    zone = next(n for n, line in enumerate(memory.read_text(encoding="utf-8").split("\n"), 1)
                if line == "La nonna: ragù, tre ore.") - 2
    edit_zone(memory, zone, "###### LOG: 2026-02-01 — ricetta\nLa nonna: ragù, due ore.\n", actor="user")
    reject_proposal(next(c.proposal.path for c in pending_changes(layer) if c.proposal.id == activity.hostile_id),
                    actor="user", reason="no — いいえ")
    changes = {c.proposal.id: c for c in pending_changes(layer)}
    assert changes[activity.reject_id].stale and changes[activity.reject_id].after is None
    assert activity.hostile_id not in changes
    assert [p.id for p in decided_proposals(layer)] == [activity.hostile_id]


# -- diffs as HTML -------------------------------------------------------------------------

def test_diff_rows_pair_changed_lines_and_mark_gaps():
    old = "\n".join(f"riga {n}" for n in range(1, 21)) + "\n"
    new = old.replace("riga 10\n", "riga dieci — 十\n")
    rows = diff_rows(old, new, context=2)
    assert rows[0].tag == "gap" and rows[-1].tag == "gap"
    changed = [r for r in rows if r.tag == "replace"]
    assert [(r.old_line, r.old_text, r.new_line, r.new_text) for r in changed] == \
        [(10, "riga 10", 10, "riga dieci — 十")]
    assert len([r for r in rows if r.tag == "equal"]) == 4


def test_diff_html_escapes_everything_and_shows_invisible_characters():
    old = "testo normale\nseconda riga\n"
    new = f"testo {HOSTILE}\nseconda \u202eriga\x07\udc80\n"
    for page in (side_by_side_html(old, new), unified_html(old, new), unified_text_html(f"+{HOSTILE}\n-\u202ex")):
        assert "<img" not in page and "<script" not in page
        assert "&lt;img src=x onerror=window.__pwned=1&gt;" in page
        assert "\u202e" not in page and "\x07" not in page
    side = side_by_side_html(old, new)
    assert "\u27e8U+202E\u27e9" in side and "\u27e8U+0007\u27e9" in side and "\\x80" in side
    assert re.search(r"<ins>[^<]*&lt;img", side)  # the changed words are marked
    assert side_by_side_html("uguale\n", "uguale\n") == '<p class="diff-none">No change.</p>'


def test_the_review_rulings_cite_tests_that_exist():
    text = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    cited = set(re.findall(r"`(test_review_\w+)\.py::(test_\w+)`", text))
    assert len(cited) >= 12
    for module, name in cited:
        assert f"def {name}(" in next((ROOT / "tests").rglob(f"{module}.py")).read_text(encoding="utf-8"), (module, name)


def test_the_readme_shows_a_screenshot_of_each_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in ("activity", "proposals", "modules", "graph", "check"):
        shot = ROOT / "docs" / "screenshots" / f"review-{page}.png"
        assert f"](docs/screenshots/review-{page}.png)" in readme
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
