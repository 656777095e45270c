"""What a review page costs on a large layer (issue 18 §1): diffs of the changed region only, the history listed
without reading a saved version, each write's diff on its own page kept by content, each proposal's file parsed
once, badges counted again only when something changed, the file view paged.  Counts of steps, never time."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from review_support import CARS_NAME, MEMORY_NAME, add_ai_activity, make_layer
from zonemark.core import parser as parser_module
from zonemark.render import diff_html
from zonemark.render.activity import layer_activity, write_change
from zonemark.render.diff_html import REGION_LINES, changed_region, region_rows, side_by_side_html, unified_html
from zonemark.layer import Layer
from zonemark.review import app as app_module
from zonemark.review.app import Review
from zonemark.review.pages import FILE_PAGE_LINES
from zonemark.writer import Store, append_entry, propose
from zonemark.writer import snapshot as snapshot_module


class Request:
    """What a page handler reads of a request."""

    def __init__(self, **params: str):
        self.query_params = params


@pytest.fixture(autouse=True)
def fresh_writer_cache():
    snapshot_module.forget()
    yield
    snapshot_module.forget()


def _age(folder: Path) -> None:
    """Every file and folder under ``folder`` a minute old: outside the caches' racy window."""
    past = time.time() - 60
    for path in [*folder.rglob("*"), folder]:
        os.utime(path, (past, past))


def _long(lines: int) -> str:
    return "".join(f"riga {n} — perché 東京\n" for n in range(1, lines + 1))


# -- diffs of the changed region -------------------------------------------------------------

def test_a_one_line_change_of_a_long_text_is_matched_on_its_region_only(monkeypatch):
    """RV7: the line matcher sees the changed line and its context, not 200,000 lines."""
    old = _long(200_000)
    new = old.replace("riga 123456 — perché 東京\n", "riga 123456 — cambiata — 東京\n")
    seen = []
    real = diff_html.diff_rows
    monkeypatch.setattr(diff_html, "diff_rows", lambda a, b, **kw: seen.append((a.count("\n"), b.count("\n")))
                        or real(a, b, **kw))
    table = unified_html(old, new)
    assert seen == [(7, 7)]  # the changed line and 3 lines on each side
    assert table.count("<tr") < 12 and "riga 123456 — cambiata — 東京" in table
    assert ">123456<" in table and ">123453<" in table and ">123452<" not in table  # the file's own line numbers
    side = side_by_side_html(old, new)
    assert side.count('<tr class="gap">') == 2 and re.search(r"<ins>[^<]*cambiata", side)


def test_the_region_is_found_at_the_start_the_end_and_for_insertions_and_removals():
    text = "uno\ndue — 二\ntre\nquattro\n"
    appended = changed_region(text, text + "cinque — perché\n", context=1)
    assert (appended.first_changed, appended.old_lines, appended.new_lines, appended.at_end) == (5, 0, 1, True)
    removed = changed_region(text, text.replace("due — 二\n", ""), context=0)
    assert (removed.first_changed, removed.old_lines, removed.new_lines, removed.removed_only) == (2, 1, 0, True)
    first = changed_region(text, "UNO\n" + text[4:], context=2)
    assert (first.first, first.at_start, first.old_text) == (1, True, "uno\ndue — 二\ntre\n")
    rows = region_rows(text, text.replace("tre", "tre — 三"), context=0)
    assert [(r.tag, r.old_line, r.new_text) for r in rows] == [("gap", None, None), ("replace", 3, "tre — 三"),
                                                                ("gap", None, None)]
    assert region_rows(text, text) == []


def test_a_region_over_the_limit_is_one_line_naming_the_limit(monkeypatch):
    old = _long(5_000)
    new = old.replace("riga", "linea")
    monkeypatch.setattr(diff_html, "diff_rows", lambda *a, **k: pytest.fail("a region over the limit is matched"))
    table = side_by_side_html(old, new)
    assert table.startswith('<p class="diff-limit">') and table.count("\n") == 0
    assert f"{REGION_LINES:,} lines" in table and "5,000 lines before and 5,000 after, from line 1" in table


# -- the history -----------------------------------------------------------------------------

def _history_layer(tmp_path: Path) -> tuple[Path, Store]:
    layer = make_layer(tmp_path)
    store = Store(fsync=False)
    for k in range(6):
        append_entry(layer / CARS_NAME, "Maintenance/Tyres", f"controllo {k} — 点検", f"Gomme — perché {k}.",
                     actor="ai", date="2026-10-12", store=store)
    return layer, store


def test_listing_the_history_reads_no_saved_version(tmp_path, monkeypatch):
    """RV8: the Activity list is the history's metadata; a write's versions are read for its own diff only."""
    layer, store = _history_layer(tmp_path)
    read = []
    real = Store.version
    monkeypatch.setattr(Store, "version", lambda self, path, ident: read.append(ident) or real(self, path, ident))
    items = layer_activity(Layer.load(layer), store=store)
    assert len(items) == 6 and read == []
    change = write_change(items[3], store=store)
    assert len(read) == 2 and change.container.label == "SUBTOPIC1: Tyres"
    assert "controllo 2 — 点検" in change.after and "controllo 2 — 点検" not in change.before


def test_the_history_is_read_again_only_when_it_changed(tmp_path, monkeypatch):
    layer, store = _history_layer(tmp_path)
    _age(layer)
    calls = []
    real = Store.history
    monkeypatch.setattr(Store, "history", lambda self, path: calls.append(Path(path).name) or real(self, path))
    loaded = Layer.load(layer)
    layer_activity(loaded, store=store)
    first = calls.count(CARS_NAME)
    assert len(layer_activity(loaded, store=store)) == 6 and calls.count(CARS_NAME) == first == 1
    append_entry(layer / CARS_NAME, "Maintenance/Tyres", "nuovo — 新", "Testo.", actor="ai", date="2026-10-13",
                 store=store)
    items = layer_activity(loaded, store=store)  # the folder changed (and is fresh): read again
    assert len(items) == 7 and items[0].entry.action.endswith("nuovo — 新") and calls.count(CARS_NAME) == 2


def test_a_writes_diff_page_is_kept_by_content_and_shows_its_container(tmp_path, monkeypatch):
    layer, store = _history_layer(tmp_path)
    review = Review(layer, token="t" * 32)
    newest = layer_activity(review.layer(), store=store)[0]
    read = []
    real = Store.version
    monkeypatch.setattr(Store, "version", lambda self, path, ident: read.append(ident) or real(self, path, ident))
    page = review.write_diff(Request(file=CARS_NAME, id=newest.id)).body.decode("utf-8")
    assert "SUBTOPIC1: Tyres" in page and "controllo 5 — 点検" in page and 'class="diff unified"' in page
    assert len(read) == 1  # the version it replaced; what it wrote is the file now, already parsed by the page
    again = review.write_diff(Request(file=CARS_NAME, id=newest.id)).body.decode("utf-8")
    assert again == page and len(read) == 1
    activity = review.activity(Request()).body.decode("utf-8")
    assert activity.count('class="diff-link"') == 6 and "<table" not in activity
    assert review.write_diff(Request(file=CARS_NAME, id="99999999")).status_code == 404
    assert review.write_diff(Request(file="../" + CARS_NAME, id=newest.id)).status_code == 404


# -- proposals and badges --------------------------------------------------------------------

def _parses(monkeypatch) -> list[str | None]:
    seen: list[str | None] = []
    real = parser_module._run
    monkeypatch.setattr(parser_module, "_run", lambda source, path, *rest: seen.append(path) or real(source, path, *rest))
    return seen


def test_the_proposals_page_parses_no_file_the_layer_cache_holds(tmp_path, monkeypatch):
    """RV9: every proposal of a file is previewed on the one parse the page's layer cache holds."""
    layer = make_layer(tmp_path)
    add_ai_activity(layer)
    memory = layer / MEMORY_NAME
    for k in range(4):
        propose(memory, "Viaggi", f"###### LOG: 2026-01-03 — città\nKyoto — 京都, perché {k}.\n",
                reason=f"variante {k} — 変更", actor="ai")
    review = Review(layer, token="t" * 32)
    review.layer()
    seen = _parses(monkeypatch)
    page = review.proposals(Request()).body.decode("utf-8")
    assert seen == []
    assert page.count('<article class="card proposal') == 7
    assert "Kyoto — 京都, perché 3." in re.sub(r"<[^>]+>", "", page)


def test_the_activity_summary_parses_no_file_the_layer_cache_holds(tmp_path, monkeypatch):
    """RV20 with RV9: the summary counts the waiting and stale proposals on the layer cache's parses."""
    layer = make_layer(tmp_path)
    add_ai_activity(layer)
    for k in range(3):
        propose(layer / MEMORY_NAME, "Viaggi", f"###### LOG: 2026-01-04 — città\nNara — 奈良, perché {k}.\n",
                reason=f"variante {k} — 変更", actor="ai")
    review = Review(layer, token="t" * 32)
    review.layer()
    seen = _parses(monkeypatch)
    page = re.sub(r"<[^>]+>", "", review.activity(Request()).body.decode("utf-8"))
    assert seen == []
    assert "6 proposals wait for a decision" in page  # the three above and the three the activity made


def test_the_layers_diagnostics_are_found_once_for_the_badges_the_summary_and_check(tmp_path, monkeypatch):
    """RV10 and RV20: while no file changed, one list of the layer's diagnostics serves every page."""
    layer = make_layer(tmp_path)
    add_ai_activity(layer)
    review = Review(layer, token="t" * 32)
    review.layer()
    calls: list[int] = []
    real = app_module.reported_diagnostics
    monkeypatch.setattr(app_module, "reported_diagnostics",
                        lambda found, *, single_file: calls.append(1) or real(found, single_file=single_file))
    first = re.sub(r"<[^>]+>", "", review.activity(Request()).body.decode("utf-8"))
    review.check(Request())
    review.activity(Request())
    assert calls == [1]
    assert "check finds 0 errors and 1 warning" in first


def test_the_badges_are_counted_again_only_when_something_changed(tmp_path, monkeypatch):
    """RV10: no parse and no check of the layer for the badges while no file and no proposal changed."""
    layer = make_layer(tmp_path)
    add_ai_activity(layer)
    _age(layer)
    review = Review(layer, token="t" * 32)
    counted = []
    real = app_module.reported_diagnostics
    monkeypatch.setattr(app_module, "reported_diagnostics", lambda *a, **k: counted.append(1) or real(*a, **k))
    first = review.counts(review.layer())
    seen = _parses(monkeypatch)
    assert review.counts(review.layer()) == first == {"proposals": 3, "check": 0}
    assert len(counted) == 1 and seen == []
    propose(layer / MEMORY_NAME, "Cucina", "###### LOG: 2026-02-01 — ricetta\nLa nonna — perché.\n",
            reason="un'altra — 別", actor="ai")
    assert review.counts(review.layer())["proposals"] == 4


# -- the file view ---------------------------------------------------------------------------

def test_the_file_view_is_paged(tmp_path):
    """RV11: a page of 1,000 lines with links to the others; a line asked for opens its page."""
    layer = make_layer(tmp_path)
    long = layer / "lungo[ext_memory].md"
    long.write_text("# Lungo — 長い [external_memory]\n\n" + _long(2_500), encoding="utf-8")
    review = Review(layer, token="t" * 32)
    first = review.file(Request(path=long.name)).body.decode("utf-8")
    assert first.count('<tr id="L') == FILE_PAGE_LINES and 'id="L1000"' in first and 'id="L1001"' not in first
    assert 'rel="next"' in first and 'rel="prev"' not in first and "of 2,502 (page 1 of 3)" in first
    third = review.file(Request(path=long.name, line="2400")).body.decode("utf-8")
    assert '<tr id="L2400" class="here"' in third and third.count('<tr id="L') == 502
    assert 'rel="prev"' in third and 'rel="next"' not in third and "riga 2398 — perché 東京" in third
    second = review.file(Request(path=long.name, page="2")).body.decode("utf-8")
    assert 'id="L1001"' in second and 'id="L2001"' not in second
    assert review.file(Request(path=long.name, page="99")).body.decode("utf-8").count('<tr id="L') == 502


def test_an_old_version_over_the_limit_is_not_parsed_for_its_container(tmp_path, monkeypatch):
    """RV8: the page parses the file now (its layer cache has it) or a version of at most VERSION_PARSE_LIMIT."""
    layer, store = _history_layer(tmp_path)
    review = Review(layer, token="t" * 32)
    items = layer_activity(review.layer(), store=store)
    monkeypatch.setattr(app_module, "VERSION_PARSE_LIMIT", 100)
    seen = _parses(monkeypatch)
    old = review.write_diff(Request(file=CARS_NAME, id=items[2].id)).body.decode("utf-8")
    assert seen == [] and "not looked up: the version is over 100 bytes" in old and "controllo 3 — 点検" in old
    newest = review.write_diff(Request(file=CARS_NAME, id=items[0].id)).body.decode("utf-8")
    assert seen == [] and "SUBTOPIC1: Tyres" in newest  # what it wrote is the file now: the cache's parse
    monkeypatch.setattr(app_module, "VERSION_PARSE_LIMIT", 10_000_000)
    review.diffs.clear()
    old = review.write_diff(Request(file=CARS_NAME, id=items[2].id)).body.decode("utf-8")
    assert len(seen) == 1 and "SUBTOPIC1: Tyres" in old
