"""The review page in a real headless Chromium, with real clicks (issue 12).

Each test starts ``zonemark review`` on its own copy of a layer the AI has written to (an
appended entry, three proposals; Italian, Japanese and ``—`` throughout, and hostile text in a
file and in a proposal reason), drives the page with mouse clicks and typed text over the
DevTools protocol, and checks the files on disk.  The last test takes the README's screenshots
(into a temporary folder; ``ZONEMARK_SCREENSHOTS=docs/screenshots`` writes them there instead).
"""

from __future__ import annotations

import base64
import json
import os
import struct
import time
from pathlib import Path

import pytest

from review_support import CARS_NAME, EXAMPLE, MEMORY_NAME, TRACE_ANSWER, ReviewServer, add_ai_activity, make_layer, \
    tree_state
from zonemark.writer.proposals import stored_proposals

DRAFT = ("# Bozza — 下書き [external_memory]\n\n[P1]\n## TOPIC: Idee\n[/P2]\n\n"
         "[P4]\n###### LOG: 2026-13-01 — data sbagliata\n[/P4]\n")
SCREENSHOTS = ("activity", "proposals", "modules", "graph", "check")
WIDTH, HEIGHT = 1280, 800
#: the dark and narrow pictures (RV26): (page, dark, width)
VARIANTS = (("activity", True, WIDTH), ("proposals", True, WIDTH), ("activity", False, 400),
            ("proposals", False, 400), ("activity", True, 400), ("proposals", True, 400))


@pytest.fixture
def review(tmp_path, browser):
    layer = make_layer(tmp_path)
    activity = add_ai_activity(layer)
    browser.events.clear()
    with ReviewServer(layer) as server:
        server.activity = activity
        yield server
    browser.call("Page.navigate", url="about:blank")


def settle(devtools, expression: str, timeout: float = 20.0):
    """Wait until ``expression`` is true on the page, riding out navigations (a context may vanish)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = devtools.evaluate(expression)
            if value:
                return value
        except (AssertionError, RuntimeError):
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {expression}")
        time.sleep(0.05)


def open_page(devtools, url: str) -> None:
    devtools.call("Page.navigate", url=url)
    settle(devtools, f"location.href === {json.dumps(url)} && document.readyState === 'complete'")
    devtools.next_frames()


def click(devtools, selector: str) -> None:
    """A real mouse click (moved, pressed, released) on the middle of the element, scrolled into view first.

    Unlike ``DevTools.click`` it does not wait for frames afterwards: the click may navigate."""
    box = devtools.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                            " if (!e) return null; e.scrollIntoView({block: 'center'});"
                            " const r = e.getBoundingClientRect(); return {x: r.left + r.width / 2,"
                            " y: r.top + r.height / 2}; })()")
    assert box, f"nothing matches {selector}"
    devtools.call("Input.dispatchMouseEvent", type="mouseMoved", x=box["x"], y=box["y"])
    for kind in ("mousePressed", "mouseReleased"):
        devtools.call("Input.dispatchMouseEvent", type=kind, x=box["x"], y=box["y"], button="left", clickCount=1)


def type_into(devtools, selector: str, text: str) -> None:
    click(devtools, selector)
    assert devtools.evaluate(f"document.activeElement === document.querySelector({json.dumps(selector)})")
    devtools.call("Input.insertText", text=text)


def submit_and_wait(devtools, selector: str) -> str:
    """Click a form's button and wait for the page the action leads back to; the note it shows."""
    before = devtools.evaluate("location.href")
    click(devtools, selector)
    settle(devtools, f"location.href !== {json.dumps(before)} && location.search.includes('note=')"
                     " && document.readyState === 'complete' && !!document.getElementById('note')")
    return devtools.evaluate("document.getElementById('note').textContent")


def post_form(devtools, action: str, fields: list[list[str]]) -> None:
    """Submit a form built on the current page (as another page, or a forged request, would)."""
    devtools.evaluate(f"""(() => {{
        const f = document.createElement('form');
        f.method = 'post'; f.action = {json.dumps(action)};
        for (const [k, v] of {json.dumps(fields)}) {{
            const i = document.createElement('input'); i.type = 'hidden'; i.name = k; i.value = v; f.appendChild(i);
        }}
        document.body.appendChild(f); f.submit(); return true;
    }})()""")


def page_text(devtools) -> str:
    return devtools.evaluate("document.body.innerText")


def no_problems(devtools) -> None:
    assert devtools.evaluate("typeof window.__pwned") == "undefined"
    assert devtools.problems() == []


# -- the actions -----------------------------------------------------------------------------

def test_apply_a_proposal_and_see_the_file_change(browser, review):
    memory = review.layer / MEMORY_NAME
    pid = review.activity.apply_id
    open_page(browser, review.url("/proposals"))
    assert browser.evaluate(f"document.querySelectorAll('#proposal-{pid} table.diff.side ins').length") > 0
    before = memory.read_text(encoding="utf-8")
    assert "foglie rosse" not in before
    note = submit_and_wait(browser, f"#proposal-{pid} button.primary")
    assert note.startswith(f"proposal {pid} applied to {MEMORY_NAME} (history ")
    after = memory.read_text(encoding="utf-8")
    assert "Kyoto — 京都, in autunno: foglie rosse." in after
    old_line, new_line = "Un ricordo di lunga durata: Kyoto — 京都.", "Kyoto — 京都, in autunno: foglie rosse."
    assert after.replace(new_line, old_line) == before
    assert browser.evaluate(f"document.getElementById('proposal-{pid}')") is None  # no longer pending
    assert browser.evaluate("document.querySelector('nav .badge').textContent") == "2"
    open_page(browser, review.url("/activity"))
    first = browser.evaluate("document.querySelector('article.write h2').textContent")
    assert first == f"user apply proposal {pid}"
    no_problems(browser)


def test_reject_a_proposal_the_file_is_untouched(browser, review):
    pid = review.activity.reject_id
    before = tree_state(review.layer)
    open_page(browser, review.url("/proposals"))
    type_into(browser, f"#reject-reason-{pid}", "non serve — 不要")
    note = submit_and_wait(browser, f"#proposal-{pid} button.danger")
    assert note == f"proposal {pid} rejected; {MEMORY_NAME} was not touched"
    after = tree_state(review.layer)
    assert after[MEMORY_NAME] == before[MEMORY_NAME]
    proposal = next(p for p in stored_proposals(review.layer) if p.id == pid)
    assert proposal.status == "rejected"
    record = json.loads(proposal.path.read_text(encoding="utf-8"))
    assert record["rejection_reason"] == "non serve — 不要"
    assert browser.evaluate(f"document.getElementById('proposal-{pid}')") is None
    decided = browser.evaluate("Array.from(document.querySelectorAll('tr.status-rejected td')).map(t => t.textContent)")
    assert decided[:2] == [pid, "rejected"]
    no_problems(browser)


def test_a_stale_proposal_says_so_and_is_not_applied(browser, review):
    memory = review.layer / MEMORY_NAME
    pid = review.activity.reject_id
    open_page(browser, review.url("/proposals"))
    # the page was read; now the user changes that zone by hand, and then clicks Apply
    memory.write_text(memory.read_text(encoding="utf-8").replace("ragù, tre ore.", "ragù, tre ore e mezza."),
                      encoding="utf-8")
    edited = memory.read_bytes()
    note = submit_and_wait(browser, f"#proposal-{pid} button.primary")
    assert note.startswith("STALE_PROPOSAL refused: ") and f"proposal {pid} is stale" in note
    assert browser.evaluate("document.getElementById('note').getAttribute('role')") == "alert"
    assert memory.read_bytes() == edited
    # reloaded, the page says it is stale and offers no Apply
    assert browser.evaluate(f"document.querySelector('#proposal-{pid}.stale .stale-note').textContent").startswith(
        "Stale:")
    assert browser.evaluate(f"document.querySelector('#proposal-{pid} button.primary')") is None
    no_problems(browser)


def test_undo_an_ai_append(browser, review):
    cars = review.layer / CARS_NAME
    original = (EXAMPLE / CARS_NAME).read_text(encoding="utf-8")
    assert "pressione controllata — 空気圧" in cars.read_text(encoding="utf-8")
    open_page(browser, review.url("/activity"))
    cards = browser.evaluate("Array.from(document.querySelectorAll('article.write')).map(a => "
                             "[a.querySelector('h2').textContent, !!a.querySelector('form.action button')])")
    assert [c for c in cards if c[1]] == [["ai append to Maintenance/Tyres: pressione controllata — 空気圧", True]]
    link = browser.evaluate("document.querySelector('article.actor-ai p.diff-link a').href")  # RV8: a page per write
    open_page(browser, link)
    container = browser.evaluate("document.querySelector('article.actor-ai dl.facts dd:nth-of-type(2)').textContent")
    assert container == "SUBTOPIC1: Tyres"
    assert browser.evaluate("document.querySelectorAll('table.diff.unified tr.add').length") > 0
    open_page(browser, review.url("/activity"))
    note = submit_and_wait(browser, "article.actor-ai form.action button")
    assert note.startswith(f"undone: {CARS_NAME} is back to the version before write 00000001")
    assert cars.read_text(encoding="utf-8") == original
    newest = browser.evaluate("document.querySelector('article.write h2').textContent")
    assert newest == "user undo"
    assert "(undoes 00000001)" in browser.evaluate("document.querySelector('article.write dl.facts').textContent")
    no_problems(browser)


def test_toggle_a_module(browser, review):
    reminder = review.layer / "aria[reminder].md"
    open_page(browser, review.url("/modules"))
    assert browser.evaluate("document.querySelector('#module-001 button')") is None  # permanent
    assert browser.evaluate("document.querySelector('#module-001 .permanent').textContent") == \
        "permanent — cannot be toggled"
    assert browser.evaluate("document.querySelector('#module-002 .state').textContent") == "active"
    note = submit_and_wait(browser, "#module-002 button")
    assert note.startswith("module 002 is now inactive: MODULE_STATE_REGISTRY of aria[reminder].md rewritten")
    registry = [line for line in reminder.read_text(encoding="utf-8").split("\n") if "ACTIVE:" in line]
    assert registry == ["* ACTIVE: CURIOSITY_ENGINE", "* INACTIVE: EMPATHY_LAYER, 002"]
    assert browser.evaluate("document.querySelector('#module-002 .state').textContent") == "inactive"
    note = submit_and_wait(browser, "#module-002 button")  # and back
    assert note.startswith("module 002 is now active")
    assert "* ACTIVE: CURIOSITY_ENGINE, 002" in reminder.read_text(encoding="utf-8")
    no_problems(browser)


def test_paste_a_trace_and_see_the_nodes_lit(browser, review):
    open_page(browser, review.url("/graph"))
    frame = "document.getElementById('graph-frame').contentWindow"
    settle(browser, f"{frame}.zonemarkGraph && {frame}.zonemarkGraph.ready")
    assert browser.evaluate(f"{frame}.zonemarkGraph.lit().length") == 0
    type_into(browser, "#trace-text", TRACE_ANSWER)
    click(browser, "#light-up")
    settle(browser, f"{frame}.zonemarkGraph && {frame}.zonemarkGraph.ready && {frame}.zonemarkGraph.lit().length > 0")
    lit = browser.evaluate(f"{frame}.zonemarkGraph.lit()")
    assert [item["node"] for item in lit][:4] == ["nucleus:3", "nucleus:1", "module:001", "module:002"]
    marked = browser.evaluate(f"{frame}.zonemarkGraph.cy.nodes('.lit').length")
    assert marked == len({item["node"] for item in lit if item["node"]})
    doc = f"{frame}.document"
    assert browser.evaluate(f"{doc}.getElementById('trace-summary').textContent").startswith("pasted answer: ")
    warnings = browser.evaluate(f"Array.from({doc}.querySelectorAll('#trace-warnings li')).map(li => li.textContent)")
    assert any("1 unknown identifier skipped" in w for w in warnings)
    # recorded (the box was ticked): the heat view counts it
    assert list((review.layer / ".zonemark" / "traces").glob("*.json"))
    assert browser.evaluate(f"{doc}.getElementById('heat-records').textContent") == "1"
    assert browser.evaluate("location.pathname") == "/graph"  # the page itself did not move
    no_problems(browser)


# -- the gate, seen from a browser ---------------------------------------------------------

def test_a_request_without_the_token_is_refused(browser, review):
    before = tree_state(review.layer)
    open_page(browser, f"{review.base}/proposals")
    assert page_text(browser).startswith("refused: this page needs the token")
    pid = review.activity.apply_id
    # forms of the page itself, one with the token in the address only, one in the body only
    for action, fields, refusal in (
            (review.url("/proposals/apply"), [["id", pid]], "refused: a POST must carry the token in its body"),
            (f"{review.base}/proposals/apply", [["token", review.token], ["id", pid]],
             "refused: this page needs the token")):
        open_page(browser, review.url("/proposals"))
        post_form(browser, action, fields)
        settle(browser, "location.pathname === '/proposals/apply' && document.readyState === 'complete'")
        assert page_text(browser).startswith(refusal)
    # a page of another origin that knows the token still cannot write: its Origin is not the page's
    open_page(browser, "about:blank")
    post_form(browser, review.url("/proposals/apply"), [["token", review.token], ["id", pid]])
    settle(browser, "location.href.startsWith('http') && document.readyState === 'complete'")
    assert page_text(browser).startswith("refused: a POST from another origin")
    assert tree_state(review.layer) == before


def test_a_get_never_changes_a_file(browser, review):
    before = tree_state(review.layer)
    for page in ("/activity", "/proposals", "/modules", "/graph", "/check"):
        open_page(browser, review.url(page))
        links = browser.evaluate("Array.from(document.querySelectorAll('main a[href]')).map(a => a.href)")
        for href in links[:6]:
            open_page(browser, href)
        no_problems(browser)
    for action in ("/proposals/apply", "/proposals/reject", "/activity/undo", "/modules/state", "/graph/trace"):
        open_page(browser, review.url(action, id=review.activity.apply_id, module="002", state="inactive"))
        assert "Method Not Allowed" in page_text(browser)
    assert tree_state(review.layer) == before


def test_keyboard_and_labels(browser, review):
    open_page(browser, review.url("/proposals"))
    browser.call("Input.dispatchKeyEvent", type="keyDown", key="Tab", code="Tab", windowsVirtualKeyCode=9)
    browser.call("Input.dispatchKeyEvent", type="keyUp", key="Tab", code="Tab", windowsVirtualKeyCode=9)
    assert browser.evaluate("document.activeElement.className") == "skip"
    unnamed = browser.evaluate("""Array.from(document.querySelectorAll('button, input:not([type=hidden]), textarea'))
        .filter(e => !(e.getAttribute('aria-label') || e.textContent.trim() ||
                       (e.id && document.querySelector('label[for="' + e.id + '"]')) || e.closest('label')))
        .map(e => e.outerHTML)""")
    assert unnamed == []
    assert browser.evaluate("document.querySelectorAll('h1').length") == 1
    assert browser.evaluate("document.documentElement.lang") == "en"
    # Apply by keyboard: focus the button, press Enter
    pid = review.activity.hostile_id
    browser.evaluate(f"document.querySelector('#proposal-{pid} button.primary').focus()")
    for kind in ("keyDown", "keyUp"):
        browser.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13,
                     **({"text": "\r"} if kind == "keyDown" else {}))
    settle(browser, "location.search.includes('note=') && !!document.getElementById('note')")
    assert browser.evaluate("document.getElementById('note').textContent").startswith(f"proposal {pid} applied")
    no_problems(browser)


# -- the README's screenshots --------------------------------------------------------------

def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", data[16:24])


def test_screenshots_of_every_page(browser, review, tmp_path):
    folder = Path(os.environ.get("ZONEMARK_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    # something on every page: an applied proposal and a user write in the history, a lit trace on the graph
    open_page(browser, review.url("/proposals"))
    submit_and_wait(browser, f"#proposal-{review.activity.hostile_id} button.primary")
    shots = {}
    for page in SCREENSHOTS:
        open_page(browser, review.url("/" + page))
        if page == "graph":
            frame = "document.getElementById('graph-frame').contentWindow"
            settle(browser, f"{frame}.zonemarkGraph && {frame}.zonemarkGraph.ready")
            type_into(browser, "#trace-text", TRACE_ANSWER)
            click(browser, "#light-up")
            settle(browser, f"{frame}.zonemarkGraph && {frame}.zonemarkGraph.ready && "
                            f"{frame}.zonemarkGraph.lit().length > 0")
            browser.evaluate(f"{frame}.zonemarkGraph.select('module:001')")  # its details, beside the trace
            time.sleep(0.5)  # the graph's own 250 ms zoom
            browser.evaluate("window.scrollTo(0, 0)")
        if page == "activity":  # the newest card opened to its diff, the others on their one line
            browser.evaluate("document.querySelector('article.write details').open = true")
        if page == "check":  # a draft file with an error, to show both severities
            (review.layer / "bozza[ext_memory].md").write_text(DRAFT, encoding="utf-8")
            open_page(browser, review.url("/check"))
            browser.evaluate("document.querySelector('li.diagnostic details').open = true")
        browser.next_frames()
        data = base64.b64decode(browser.call("Page.captureScreenshot", format="png")["data"])
        assert _png_size(data) == (WIDTH, HEIGHT)
        assert len(data) > 20_000, f"{page}: a nearly empty picture"
        (folder / f"review-{page}.png").write_bytes(data)
        shots[page] = data
    assert len(set(shots.values())) == len(SCREENSHOTS)
    for page in SCREENSHOTS:
        assert _png_size((folder / f"review-{page}.png").read_bytes()) == (WIDTH, HEIGHT)
    try:
        for page, dark, width in VARIANTS:
            browser.call("Emulation.setEmulatedMedia",
                         features=[{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}])
            browser.call("Emulation.setDeviceMetricsOverride", width=width, height=HEIGHT, deviceScaleFactor=1,
                         mobile=False)
            open_page(browser, review.url("/" + page))
            if page == "activity":
                browser.evaluate("document.querySelector('article.write details').open = true")
            assert browser.evaluate("document.documentElement.scrollWidth") <= width
            browser.next_frames()
            data = base64.b64decode(browser.call("Page.captureScreenshot", format="png")["data"])
            assert _png_size(data) == (width, HEIGHT) and len(data) > 20_000
            name = f"review-{page}{'-dark' if dark else ''}{'-narrow' if width < WIDTH else ''}.png"
            (folder / name).write_bytes(data)
            shots[name] = data
        assert len(set(shots.values())) == len(SCREENSHOTS) + len(VARIANTS)
    finally:
        browser.call("Emulation.setEmulatedMedia", features=[])
        browser.call("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT, deviceScaleFactor=1,
                     mobile=False)
    no_problems(browser)


def test_the_private_page_of_open_leads_a_real_browser_to_the_review_page(review, browser):
    """W41: the file ``--open`` hands the browser (no token on its command line) opens the page, token and all."""
    from zonemark.review.serve import open_page as private_page
    page = private_page(review.first_line, opener=lambda uri: browser.call("Page.navigate", url=uri))
    try:
        settle(browser, f"location.href.startsWith({json.dumps(review.base + '/activity')})"
                        " && document.readyState === 'complete'")
        assert "Activity" in browser.evaluate("document.title") + browser.evaluate("document.body.innerText")
    finally:
        import shutil
        shutil.rmtree(page.parent)
