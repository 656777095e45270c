"""Looks and access of the review page (issue 18 §3) over real HTTP: the favicon, the style sheet's dark and narrow
rules, the anchor an action leads back to, and Ctrl-C stopping the server at the first press even while a page is
being built.  The browser's view of the same is in test_review_browser_deciding.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from urllib.parse import urlsplit

import pytest

from review_support import make_layer, serve_with_activity


@pytest.fixture
def server(tmp_path):
    yield from serve_with_activity(tmp_path)


def test_the_favicon_is_served_with_the_token_and_linked_from_every_page(server):
    status, headers, body = server.get("/static/favicon.svg")
    assert status == 200 and headers["content-type"] == "image/svg+xml" and body.startswith(b"<svg")
    assert b"<script" not in body and b"href" not in body  # an image, nothing it could load or run
    for page in ("/activity", "/proposals", "/modules", "/graph", "/check"):
        text = server.get(page)[2].decode("utf-8")
        assert f'<link rel="icon" type="image/svg+xml" href="/static/favicon.svg?token={server.token}">' in text
    assert server.get("/static/../app.py")[0] == 404
    assert server.get("/static/nothing.css")[0] == 404
    assert server.request("GET", "/static/favicon.svg")[0] == 403  # the token still guards it


def test_the_style_sheet_follows_the_dark_scheme_and_wraps_the_navigation(server):
    css = server.get("/static/review.css")[2].decode("utf-8")
    assert "@media (prefers-color-scheme: dark)" in css and "color-scheme: light dark" in css
    assert "header.top nav ul { display: flex; flex-wrap: wrap;" in css


def test_after_an_action_the_page_opens_at_its_heading(server):
    status, headers, _ = server.post("/proposals/reject", {"id": server.activity.reject_id, "reason": "no — いいえ"})
    assert status == 303
    location = headers["location"]
    assert location.endswith("#main") and location.startswith(f"/proposals?token={server.token}&note=")
    page = server.request("GET", location.split("#")[0])[2].decode("utf-8")
    assert '<main id="main" tabindex="-1">\n<h1>Proposals</h1>\n<div class="note note-ok"' in page


SLOW_CHECK = """
import pathlib, sys, time
import zonemark.review.app as app
started, finished = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
def slow(self, request):
    started.write_text("started")
    time.sleep(120)
    finished.write_text("finished")
app.Review.check = slow
from zonemark.cli.main import main
sys.exit(main(["review", sys.argv[3], "--port", "0"]))
"""


def test_ctrl_c_stops_the_server_at_the_first_press_even_during_a_slow_page(tmp_path):
    """RV25: one SIGINT while a page is being built ends the process; the page's work is abandoned, not awaited."""
    layer = make_layer(tmp_path)
    started, finished = tmp_path / "started", tmp_path / "finished"
    process = subprocess.Popen([sys.executable, "-c", SLOW_CHECK, str(started), str(finished), str(layer)],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        address = urlsplit(process.stdout.readline().decode("ascii").strip())
        token = address.query.split("token=", 1)[1]
        import http.client

        answers: list[int] = []

        def slow_request() -> None:
            connection = http.client.HTTPConnection("127.0.0.1", address.port, timeout=150)
            try:
                connection.request("GET", f"/check?token={token}", headers={"Host": f"127.0.0.1:{address.port}"})
                response = connection.getresponse()
                response.read()
                answers.append(response.status)
            except (OSError, http.client.HTTPException):
                pass  # the server went away under the request: what a first Ctrl-C does
            finally:
                connection.close()

        client = threading.Thread(target=slow_request, daemon=True)
        client.start()
        for _ in range(600):  # the page is being built (a bounded wait, not a timing)
            if started.exists():
                break
            time.sleep(0.05)
        assert started.exists(), "the slow page never started"
        os.killpg(process.pid, signal.SIGINT)  # one press
        code = process.wait(timeout=60)
        client.join(timeout=60)
        err = process.stderr.read().decode("utf-8", "replace")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        process.stdout.close()
        process.stderr.close()
    assert (code, err) == (0, "zonemark review: stopped\n")
    assert not finished.exists()  # the slow page was not waited for
    assert answers == [503]  # its request got one line, not a dropped connection


def test_ctrl_c_while_the_browser_starts_removes_the_private_page(tmp_path):
    """W41 with RV25: a Ctrl-C while ``--open`` waits for the browser command leaves no page with the token."""
    from zonemark.review.serve import open_page
    seen = []

    def interrupted(uri: str) -> None:
        seen.append(uri)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        open_page("http://127.0.0.1:9/?token=perché-東京", opener=interrupted)
    page = urlsplit(seen[0]).path
    from pathlib import Path
    assert not Path(page).exists() and not Path(page).parent.exists()
