"""Deciding quickly, looks and access (issue 18 §2, §3) in a real headless Chromium, with real clicks: Activity's
filters and one-line cards, batch apply and reject, the dark scheme, a 400 px window, the favicon, and the heading
kept in view after an action.  The helpers are the ones of test_review_browser.py."""

from __future__ import annotations

import json

import pytest

from review_support import CARS_NAME, MEMORY_NAME, ReviewServer, add_ai_activity, make_layer
from test_review_browser import click, no_problems, open_page, settle, submit_and_wait, type_into
from zonemark.writer import append_entry
from zonemark.writer.proposals import stored_proposals

PAGES = ("activity", "proposals", "modules", "graph", "check")


@pytest.fixture
def review(tmp_path, browser):
    layer = make_layer(tmp_path)
    activity = add_ai_activity(layer)
    append_entry(layer / CARS_NAME, "Insurance", "nota mia — メモ", "scritta da me, perché sì.", actor="user",
                 date="2026-10-13")
    browser.events.clear()
    with ReviewServer(layer) as server:
        server.activity = activity
        yield server
    browser.call("Emulation.setEmulatedMedia", features=[])
    browser.call("Emulation.setDeviceMetricsOverride", width=1280, height=800, deviceScaleFactor=1, mobile=False)
    browser.call("Page.navigate", url="about:blank")


def _headings(devtools) -> list[str]:
    return devtools.evaluate("Array.from(document.querySelectorAll('article.write h2')).map(h => h.textContent)")


def test_filter_the_activity_by_actor_and_open_a_card_to_its_diff(browser, review):
    open_page(browser, review.url("/activity"))
    assert len(_headings(browser)) == 2
    assert browser.evaluate("document.querySelectorAll('article.write details[open]').length") == 0  # collapsed
    line = browser.evaluate("document.querySelector('article.actor-ai summary .line').innerText")
    assert line.startswith(f"{CARS_NAME} · SUBTOPIC1: Tyres") and "ago)" in line
    # a click on the card's line opens its facts and the link to the write's own page, which holds the diff (RV8)
    assert not browser.evaluate("document.querySelector('article.actor-ai p.diff-link a').checkVisibility()")
    click(browser, "article.actor-ai summary")
    settle(browser, "document.querySelector('article.actor-ai details').open")
    assert browser.evaluate("document.querySelector('article.actor-ai p.diff-link a').checkVisibility()")
    activity = browser.evaluate("location.href")
    click(browser, "article.actor-ai p.diff-link a")
    settle(browser, "location.pathname.endsWith('/activity/diff') && document.readyState === 'complete'")
    assert browser.evaluate("document.querySelector('table.diff').checkVisibility()")
    assert "SUBTOPIC1: Tyres" in browser.evaluate("document.querySelector('article.write').innerText")
    open_page(browser, activity)
    # the AI's writes only: choose in the form, press Show
    browser.evaluate("document.getElementById('f-actor').value = 'ai'")
    before = browser.evaluate("location.href")
    click(browser, "#f-show")
    settle(browser, f"location.href !== {json.dumps(before)} && document.readyState === 'complete'")
    assert "actor=ai" in browser.evaluate("location.search")
    assert _headings(browser) == ["ai append to Maintenance/Tyres: pressione controllata — 空気圧"]
    assert browser.evaluate("document.getElementById('f-actor').value") == "ai"  # the form keeps the choice
    assert browser.evaluate("document.querySelector('section.summary')") is None  # the summary: first page only
    # and a container: the user's own note
    browser.evaluate("document.getElementById('f-actor').value = ''")
    browser.evaluate("document.getElementById('f-container').value = 'TOPIC: Insurance'")
    before = browser.evaluate("location.href")
    click(browser, "#f-show")
    settle(browser, f"location.href !== {json.dumps(before)} && document.readyState === 'complete'")
    assert _headings(browser) == ["user append to Insurance: nota mia — メモ"]
    click(browser, "form.filters a.clear")
    settle(browser, "document.readyState === 'complete' && !location.search.includes('container=')"
                    " && !!document.querySelector('section.summary')")
    assert len(_headings(browser)) == 2
    no_problems(browser)


def test_batch_apply_two_and_reject_one_with_a_reason(browser, review):
    a = review.activity
    memory = review.layer / MEMORY_NAME
    open_page(browser, review.url("/proposals"))
    for pid in (a.apply_id, a.hostile_id):
        click(browser, f"#pick-{pid}")
    ticked = browser.evaluate("Array.from(document.querySelectorAll('input[form=batch]:checked')).map(i => i.value)")
    assert sorted(ticked) == sorted([a.apply_id, a.hostile_id])
    note = submit_and_wait(browser, "#batch-apply")
    assert note == f"applied 2 of 2 proposals: {ticked[0]}, {ticked[1]}"  # in the page's order
    assert browser.evaluate("location.hash") == "#main"
    assert browser.evaluate("document.querySelector('h1').getBoundingClientRect().top") >= 0  # the heading in view
    text = memory.read_text(encoding="utf-8")
    assert "foglie rosse" in text and "Il parser è pronto.\n" in text
    click(browser, f"#pick-{a.reject_id}")
    type_into(browser, "#batch-reason", "non serve — 不要")
    note = submit_and_wait(browser, "#batch-reject")
    assert note == f"rejected 1 of 1 proposals: {a.reject_id}"
    assert {p.id: p.status for p in stored_proposals(review.layer)} == {
        a.apply_id: "applied", a.hostile_id: "applied", a.reject_id: "rejected"}
    rows = browser.evaluate("Array.from(document.querySelectorAll('table.decided tbody tr')).map(r => "
                            "Array.from(r.cells).map(c => c.textContent))")
    rejected = next(r for r in rows if r[0] == a.reject_id)
    assert rejected[1] == "rejected" and rejected[4] == "user" and rejected[5] == "non serve — 不要"
    assert rejected[3].endswith("ago)")
    assert browser.evaluate("document.querySelector('table.decided time').title").endswith(" UTC")
    assert browser.evaluate("document.querySelector('#batch')") is None  # nothing left to decide
    no_problems(browser)


def test_a_stale_proposal_in_a_batch_is_refused_and_named(browser, review):
    a = review.activity
    memory = review.layer / MEMORY_NAME
    open_page(browser, review.url("/proposals"))
    memory.write_text(memory.read_text(encoding="utf-8").replace("ragù, tre ore.", "ragù, tre ore e mezza."),
                      encoding="utf-8")  # after the page was read, the user edits that zone by hand
    for pid in (a.apply_id, a.reject_id):
        click(browser, f"#pick-{pid}")
    note = submit_and_wait(browser, "#batch-apply")
    assert note.startswith(f"applied 1 of 2 proposals: {a.apply_id}; refused 1: {a.reject_id} (STALE_PROPOSAL: ")
    assert browser.evaluate("document.getElementById('note').getAttribute('role')") == "alert"
    assert "tre ore e mezza" in memory.read_text(encoding="utf-8")
    no_problems(browser)


def _scheme(devtools, dark: bool) -> None:
    devtools.call("Emulation.setEmulatedMedia",
                  features=[{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}])


def _luminance(devtools, expression: str) -> float:
    rgb = devtools.evaluate(f"getComputedStyle({expression}).backgroundColor.match(/\\d+/g).slice(0, 3).map(Number)")
    return sum(rgb) / (3 * 255)


def test_the_dark_scheme_follows_the_system(browser, review):
    for dark in (False, True):
        _scheme(browser, dark)
        for page in PAGES:
            open_page(browser, review.url("/" + page))
            page_bg = _luminance(browser, "document.documentElement")
            assert (page_bg < 0.2) if dark else (page_bg > 0.9), (page, dark, page_bg)
            text = browser.evaluate("getComputedStyle(document.querySelector('main')).color.match(/\\d+/g)"
                                    ".slice(0, 3).map(Number)")
            assert (sum(text) / 765 > 0.7) if dark else (sum(text) / 765 < 0.3), (page, dark, text)
        open_page(browser, review.url("/proposals"))
        card = _luminance(browser, "document.querySelector('article.proposal')")
        assert (card < 0.2) if dark else (card > 0.9)
    no_problems(browser)


def test_a_400_px_window_never_scrolls_sideways_and_the_navigation_wraps(browser, review):
    browser.call("Emulation.setDeviceMetricsOverride", width=400, height=800, deviceScaleFactor=1, mobile=False)
    long_name = "un-nome-di-file-molto-lungo_senza_spazi_東京_perché[ext_memory].md"
    topic = "Un tema dal nome lunghissimo, che non finisce mai perché così è scritto — 東京の長い名前の話題です"
    (review.layer / long_name).write_text(f"# Lungo — 長い [external_memory]\n\n[P1]\n## TOPIC: {topic}\n[/P1]\n\n"
                                          "[P4]\n[/P4]\n", encoding="utf-8")
    # a long container name is an option of Activity's container filter: the select is held to the window
    append_entry(review.layer / long_name, topic, "voce — 項目", "perché sì", actor="ai", date="2026-10-14")
    for page, params in (*((p, {}) for p in PAGES), ("file", {"path": long_name})):
        open_page(browser, review.url("/" + page, **params))
        browser.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")  # open cards count too
        width = browser.evaluate("document.documentElement.scrollWidth")
        assert width <= 400, (page, width)
        links = browser.evaluate("Array.from(document.querySelectorAll('header nav a')).map(a => {"
                                 " const r = a.getBoundingClientRect(); return [r.left, r.right, r.top]; })")
        assert all(left >= 0 and right <= 400 for left, right, _ in links), (page, links)
        assert len({round(top) for _, _, top in links}) > 1, "the navigation wraps onto a second line"
    open_page(browser, review.url("/check"))
    assert browser.evaluate("document.documentElement.scrollWidth") <= 400
    no_problems(browser)


def test_the_favicon_is_the_pages_own_and_no_request_is_refused(browser, review):
    browser.call("Network.enable")
    browser.events.clear()
    for page in PAGES:
        open_page(browser, review.url("/" + page))
    browser.next_frames()
    statuses = [(e["params"]["response"]["url"].split("?")[0], e["params"]["response"]["status"])
                for e in browser.events if e["method"] == "Network.responseReceived"]
    browser.call("Network.disable")
    assert statuses and all(status < 400 for _, status in statuses), statuses
    icon = browser.evaluate("document.querySelector('link[rel=icon]').href")
    assert icon.startswith(f"{review.base}/static/favicon.svg?token=")
    browser.events.clear()
