"""``zonemark review LAYER`` over real HTTP: the address it prints, the gate (loopback Host, token on every
request, writes only by POST with the token in the body), what GET may never do, and the actions
refused or done through the writer.  The browser tests (real clicks) are in test_review_browser.py."""

from __future__ import annotations

import html
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest

from review_support import CARS_NAME, HOSTILE, MEMORY_NAME, TRACE_ANSWER, ReviewServer, add_ai_activity, make_layer, \
    tree_state
from zonemark.review import serve as serve_module
from zonemark.writer.proposals import stored_proposals

PAGES = ("/activity", "/proposals", "/modules", "/graph", "/check", "/graph/frame", "/static/review.css")
ACTIONS = ("/activity/undo", "/proposals/apply", "/proposals/reject", "/modules/state", "/graph/trace")


@pytest.fixture
def layer(tmp_path) -> Path:
    folder = make_layer(tmp_path)
    return folder


@pytest.fixture
def server(layer):
    activity = add_ai_activity(layer)
    with ReviewServer(layer) as running:
        running.activity = activity
        yield running


# -- the address -----------------------------------------------------------------------------

def test_the_first_line_is_the_loopback_address_with_a_fresh_token(layer):
    with ReviewServer(layer) as one, ReviewServer(layer) as two:
        for running in (one, two):
            assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]{43}", running.first_line)
            assert running.port > 0
        assert one.token != two.token and one.port != two.port
        status, headers, _ = one.request("GET", f"/?token={one.token}")
        assert status == 303 and headers["location"] == f"/activity?token={one.token}"
        assert one.request("GET", f"/activity?token={two.token}")[0] == 403  # another run's token
        assert one.stop() == (0, "zonemark review: stopped\n")  # Ctrl-C: a clean stop, one line


def test_open_starts_the_browser_with_a_private_page_and_no_token_on_its_command_line(layer, tmp_path,
                                                                                        monkeypatch):
    """W41: the browser's argv (which ``ps`` shows every local user) holds no token; it opens a file only the user
    can read that leads to the address, and the file is gone when the server stops."""
    import stat
    from urllib.parse import unquote, urlsplit as split
    opened = tmp_path / "opened.txt"
    command = (f"{sys.executable} -c \"import sys; open(sys.argv[1], 'w').write(repr(sys.argv))\" {opened} %s")
    monkeypatch.setenv("BROWSER", command)
    with ReviewServer(layer, extra=("--open",)) as running:
        deadline = time.monotonic() + 20
        while not (opened.exists() and opened.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        argv = eval(opened.read_text())
        assert running.token not in repr(argv) and "token" not in repr(argv)
        page = Path(unquote(split(argv[-1]).path))
        assert argv[-1].startswith("file://") and page.is_file()
        assert stat.S_IMODE(page.stat().st_mode) == 0o600 and stat.S_IMODE(page.parent.stat().st_mode) == 0o700
        assert f'url={running.first_line}"' in page.read_text(encoding="utf-8")
        first = running.first_line
    assert not page.exists() and not page.parent.exists()
    monkeypatch.delenv("BROWSER")
    opened.unlink()
    with ReviewServer(layer):  # without --open nothing is started
        time.sleep(0.3)
    assert not opened.exists() and first.startswith("http://127.0.0.1:")


def test_port_given_is_used_and_a_port_in_use_is_one_line(layer):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    with ReviewServer(layer, port=free) as running:
        assert running.port == free
        busy = subprocess.run([sys.executable, "-m", "zonemark", "review", str(layer), "--port", str(free)],
                              capture_output=True, text=True, timeout=60)
        assert busy.returncode == 2 and busy.stdout == ""
        assert busy.stderr.count("\n") == 1 and f"cannot listen on 127.0.0.1:{free}" in busy.stderr


@pytest.mark.parametrize("args, message", [
    (["--port", "70000"], "--port takes a number from 0 to 65535"),
    (["--port", "otto"], "--port takes a number from 0 to 65535"),
    ([], "no such folder"),
])
def test_usage_errors_are_one_line(tmp_path, args, message):
    target = tmp_path / ("missing" if not args else "")
    run = subprocess.run([sys.executable, "-m", "zonemark", "review", str(target), *args], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and message in run.stderr and "Traceback" not in run.stderr


def test_a_missing_extra_is_one_line(layer, monkeypatch):
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # what an install without zonemark[review] looks like
    with pytest.raises(serve_module.MissingExtra, match=r"pip install 'zonemark\[review\]'"):
        serve_module.serve(layer)


def test_the_socket_listens_on_the_loopback_address_only():
    sock = serve_module.bind_loopback(0)
    try:
        assert sock.getsockname()[0] == "127.0.0.1"
    finally:
        sock.close()


# -- the gate --------------------------------------------------------------------------------

def test_every_request_without_the_token_is_refused(server):
    for path in PAGES + ("/", "/file"):
        for target in (path, f"{path}?token=", f"{path}?token=wrong", f"{path}?token={server.token}x",
                       f"{path}?token={server.token}&token={server.token}"):
            status, headers, body = server.request("GET", target)
            assert status == 403, target
            assert server.token not in body.decode()
            assert headers["content-type"].startswith("text/plain")
    for path in ACTIONS:
        status, _, _ = server.post(path, {"id": "x"}, url_token=False, body_token=False)
        assert status == 403


def test_the_host_must_be_the_loopback_address(server):
    good = f"/activity?token={server.token}"
    assert server.request("GET", good)[0] == 200
    for host in (f"attacker.example:{server.port}", f"localhost.attacker.example:{server.port}", "127.0.0.1",
                 f"127.0.0.1:{server.port + 1}", f"localhost:{server.port}", f"[::1]:{server.port}", ""):
        status, _, body = server.request("GET", good, host=host)
        assert status == 403, host
        assert b"Host" in body


def test_a_post_needs_the_token_in_its_body_or_header_not_only_the_url(server):
    memory = server.layer / MEMORY_NAME
    before = memory.read_bytes()
    fields = {"id": server.activity.apply_id}
    assert server.post("/proposals/apply", fields, body_token=False)[0] == 403
    assert server.post("/proposals/apply", fields, body_token=False,
                       headers={"X-Zonemark-Token": "wrong"})[0] == 403
    assert server.post("/proposals/apply", fields, url_token=False)[0] == 403  # the URL token is required too
    assert server.post("/proposals/apply", fields, headers={"Origin": "http://attacker.example"})[0] == 403
    assert server.post("/proposals/apply", fields, headers={"Sec-Fetch-Site": "cross-site"})[0] == 403
    multipart = server.request("POST", f"/proposals/apply?token={server.token}", body=b"--x--",
                               headers={"Content-Type": "multipart/form-data; boundary=x"})
    assert multipart[0] == 415
    assert memory.read_bytes() == before
    status, headers, _ = server.post("/proposals/apply", fields, body_token=False,
                                     headers={"X-Zonemark-Token": server.token})
    assert status == 303 and "/proposals?" in headers["location"]
    assert memory.read_bytes() != before and "foglie rosse" in memory.read_text(encoding="utf-8")


def test_a_body_larger_than_the_limit_is_refused(server):
    body = b"token=" + server.token.encode() + b"&text=" + b"a" * (5 * 1024 * 1024)
    status, _, text = server.request("POST", f"/graph/trace?token={server.token}", body=body,
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 413 and text.startswith(b"refused: the request is larger than 4 MB")


def test_other_methods_are_refused(server):
    for method in ("PUT", "DELETE", "PATCH", "OPTIONS"):
        status, headers, _ = server.request(method, f"/proposals/apply?token={server.token}", body=b"")
        assert status == 405 and headers["allow"] == "GET, HEAD, POST"


def test_a_get_never_changes_a_file(server):
    """Every page and every action path read with GET (and HEAD): no byte and no time of the layer changes."""
    layer = server.layer
    before = tree_state(layer)
    assert any(name.startswith(".zonemark/") for name in before)
    targets = [f"{p}?{urlencode({'token': server.token})}" for p in PAGES + ACTIONS + ("/",)]
    targets += [f"/file?{urlencode({'token': server.token, 'path': MEMORY_NAME, 'line': '3'})}",
                f"{ACTIONS[1]}?{urlencode({'token': server.token, 'id': server.activity.apply_id})}",
                f"/modules/state?{urlencode({'token': server.token, 'module': '002', 'state': 'inactive'})}",
                f"/graph/trace?{urlencode({'token': server.token, 'text': TRACE_ANSWER, 'record': '1'})}"]
    for target in targets:
        for method in ("GET", "HEAD"):
            status, _, _ = server.request(method, target)
            assert status in (200, 303, 405), target
    assert tree_state(layer) == before


def test_every_response_has_a_strict_policy_and_no_external_resource(server):
    for path in PAGES:
        status, headers, body = server.get(path)
        assert status == 200, path
        csp = headers["content-security-policy"]
        assert "default-src 'none'" in csp and "base-uri 'none'" in csp
        assert headers["x-content-type-options"] == "nosniff" and headers["referrer-policy"] == "same-origin"
        assert headers["cache-control"] == "no-store"
        if path == "/graph/frame":
            assert "frame-ancestors 'self'" in csp and headers["x-frame-options"] == "SAMEORIGIN"
            assert re.search(r"script-src 'sha256-[^']+' 'sha256-[^']+'(;|$)", csp)
        else:
            assert "frame-ancestors 'none'" in csp and headers["x-frame-options"] == "DENY"
            assert "script-src" not in csp  # no script at all on the review pages
        text = body.decode("utf-8")
        assert not re.search(r"""(src|href|action)\s*=\s*["']?(https?:)?//""", text), path
        assert "@import" not in text and "url(" not in text.replace("data:", "")


def test_file_text_and_proposal_reasons_are_escaped_and_non_ascii_is_kept(server):
    pages = {path: server.get(path)[2].decode("utf-8") for path in ("/activity", "/proposals", "/graph/frame")}
    pages["file"] = server.get("/file", path=MEMORY_NAME, line="5")[2].decode("utf-8")
    for name, text in pages.items():
        if name != "/graph/frame":
            assert "<img" not in text and "<script" not in text and "onerror=window" not in text.replace(
                "&lt;img src=x onerror=window", ""), name
    assert "pulizia &lt;img src=x onerror=window.__pwned=1&gt;&lt;script&gt;" in pages["/proposals"]
    assert "&lt;b&gt;grassetto&lt;/b&gt;" in pages["file"]
    shown = plain(pages["/proposals"])
    assert "Reason: aggiunge la stagione — 季節" in shown and "Kyoto — 京都, in autunno: foglie rosse." in shown
    assert "pressione controllata — 空気圧" in pages["/activity"]
    assert "私は東京に住んでいます" in pages["file"]
    assert '<tr id="L5" class="here"' in pages["file"]
    assert HOSTILE not in pages["/graph/frame"]  # the graph page embeds it as escaped JSON only


def test_the_file_view_shows_only_files_of_the_layer(server):
    for path in ("../secret.md", "/etc/passwd", ".zonemark/history", "nessuno.md"):
        status, _, body = server.get("/file", path=path)
        assert status == 404 and b"no file by that name" in body


def test_check_page_lists_diagnostics_with_links_and_explanations(server):
    text = server.get("/check")[2].decode("utf-8")
    assert "<strong>0</strong> errors and <strong>1</strong> warning" in text
    link = f'/file?token={server.token}&amp;path=ricordi%5Bext_memory%5D.md&amp;line=25#L25'
    assert f'<a href="{link}">ricordi[ext_memory].md:25:1</a>' in text.replace("<wbr>", "")
    assert f'<a href="{link}">ricordi[<wbr>ext_<wbr>memory]<wbr>.<wbr>md:25:1</a>' in text  # RV22: breaks in names
    assert "LIST_MARKER_MISMATCH" in text and "<summary>Explain LIST_MARKER_MISMATCH</summary>" in text


# -- actions through the writer ------------------------------------------------------------

def plain(page: str) -> str:
    """The text a reader sees: tags removed, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def _note(server, location: str) -> str:
    status, _, body = server.request("GET", location.split("#")[0])  # a browser keeps the fragment
    assert status == 200
    match = re.search(r'<div class="note note-(\w+)" role="\w+" id="note">(.*?)</div>', body.decode("utf-8"))
    assert match, "no note on the page"
    return f"{match.group(1)}: {match.group(2)}"


def test_a_stale_proposal_is_refused_with_the_writers_words_and_nothing_changes(server):
    memory = server.layer / MEMORY_NAME
    text = memory.read_text(encoding="utf-8").replace("La nonna: ragù, tre ore.", "La nonna: ragù, tre ore e mezza.")
    memory.write_text(text, encoding="utf-8")  # the user edits the zone by hand after the proposal was made
    before = tree_state(server.layer)
    status, headers, _ = server.post("/proposals/apply", {"id": server.activity.reject_id})
    assert status == 303
    note = _note(server, headers["location"])
    assert note.startswith("refused: ") and "is stale" in note
    after = tree_state(server.layer)
    assert after[MEMORY_NAME] == before[MEMORY_NAME]
    proposal = next(p for p in stored_proposals(server.layer) if p.id == server.activity.reject_id)
    assert proposal.status == "open"


def test_unknown_ids_and_bad_fields_are_refused_without_a_write(server):
    before = tree_state(server.layer)
    for path, fields in (("/proposals/apply", {"id": "../../etc/passwd.json"}),
                         ("/proposals/apply", {"id": server.activity.apply_id[:8]}),  # a prefix is not an id
                         ("/proposals/reject", {"id": "nessuna"}),
                         ("/activity/undo", {"file": "../cars.md", "id": "00000001"}),
                         ("/activity/undo", {"file": CARS_NAME, "id": "00000009"}),
                         ("/modules/state", {"module": "001", "state": "inactive"}),  # permanent
                         ("/modules/state", {"module": "002", "state": "acceso"}),
                         ("/modules/state", {"module": "999", "state": "active"})):
        status, headers, _ = server.post(path, fields)
        assert status == 303, (path, fields)
        assert _note(server, headers["location"]).startswith("refused: "), (path, fields)
    assert tree_state(server.layer) == before


def test_a_pasted_trace_lights_the_graph_and_is_recorded_when_asked(server):
    layer = server.layer
    status, headers, body = server.post("/graph/trace", {"text": TRACE_ANSWER})
    assert status == 200 and "frame-ancestors 'self'" in headers["content-security-policy"]
    assert '"file":"pasted answer"' in body.decode("utf-8") and '"node":"nucleus:3"' in body.decode("utf-8")
    assert not (layer / ".zonemark" / "traces").exists()  # not recorded unless asked
    server.post("/graph/trace", {"text": TRACE_ANSWER, "record": "1"})
    server.post("/graph/trace", {"text": TRACE_ANSWER, "record": "1"})  # the same answer twice: once
    assert len(list((layer / ".zonemark" / "traces").glob("*.json"))) == 1
    frame = server.get("/graph/frame")[2].decode("utf-8")  # the heat view counts the one record
    assert '"heat":{"records":1,' in frame and '"lit":[]' in frame


def test_the_command_line_imports_nothing_of_the_page_until_it_runs():
    code = ("import sys; from zonemark.cli.main import build_parser; build_parser(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('starlette', 'uvicorn') "
            "or m.startswith('zonemark.review')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_hostile_names_of_the_folder_files_topics_and_entries_make_no_markup(tmp_path):
    """A folder, a file name, a title, a topic and an entry written to break out of text, of an attribute and of a
    textarea: on every page they are text, and the only elements and attributes are the page's own."""
    from html.parser import HTMLParser

    from zonemark.writer import append_entry

    breakout = "</textarea><script>alert(1)</script>\"'><img src=x onerror=alert(2) onmouseover=alert(3)>"
    layer = make_layer(tmp_path)
    layer = layer.rename(tmp_path / "strato\"><img src=x onerror=alert(4)>")
    name = "\"><img src=x onerror=alert(5)>[ext_memory].md"
    (layer / name).write_text(f"# Ostile — 敵 {breakout} [external_memory]\n\n[P1]\n## TOPIC: Tema {breakout}\n"
                              "[/P1]\n\n[P4]\n[/P4]\n[P9]\n", encoding="utf-8")
    append_entry(layer / name, f"Tema {breakout}", f"voce — 項目 {breakout}", f"corpo {breakout}\n{breakout}",
                 actor="ai", date="2026-10-12")

    class Elements(HTMLParser):
        def __init__(self):
            super().__init__()
            self.found: list[tuple[str, str]] = []

        def handle_starttag(self, tag, attrs):
            for key, value in attrs:
                if key.startswith("on") or "javascript:" in (value or ""):
                    self.found.append((tag, key))
            if tag in ("img", "iframe", "object", "embed", "base") and (tag, dict(attrs).get("id")) != \
                    ("iframe", "graph-frame"):
                self.found.append((tag, ""))
            if tag == "script" and dict(attrs).get("type") != "application/json" and "src" not in dict(attrs):
                self.found.append((tag, "inline"))

    with ReviewServer(layer) as running:
        targets = [("/activity", {}), ("/proposals", {}), ("/modules", {}), ("/check", {}), ("/graph", {}),
                   ("/file", {"path": name, "line": "4"})]
        for route, params in targets:
            status, _, body = running.get(route, **params)
            text = body.decode("utf-8")
            assert status == 200, route
            parser = Elements()
            parser.feed(text)
            assert parser.found == [], route
            assert "onerror=alert(2)" not in text.replace("&lt;img src=x onerror=alert(2)", ""), route
        activity = running.get("/activity")[2].decode("utf-8")
        assert "voce — 項目 \\&lt;/textarea&gt;\\&lt;script&gt;" in activity  # the writer's '\\<', escaped
        status, _, frame = running.get("/graph/frame")
        assert status == 200 and "<img" not in frame.decode("utf-8")


def test_the_page_parses_a_file_again_only_when_its_bytes_change(layer):
    """Every page reads the layer as it is now (RV1), without reading a large layer again per request."""
    import os

    from zonemark.review.app import Review
    review = Review(layer, token="t" * 32)
    first = review.layer()
    parsed = review.cache.parsed
    assert review.layer() is first and review.cache.parsed == parsed
    memory = layer / MEMORY_NAME
    text = memory.read_text(encoding="utf-8")
    memory.write_text(text.replace("[/P4]\n", "###### LOG: 2026-11-30 — scritto a mano — 手書き\nNota.\n[/P4]\n", 1),
                      encoding="utf-8")
    stat = memory.stat()
    os.utime(memory, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    second = review.layer()
    assert second is not first and review.cache.parsed == parsed + 1
    titles = [e.title for node in second.file(MEMORY_NAME).doc.outline().walk() for e in node.entries]
    assert "scritto a mano — 手書き" in titles


def test_a_file_the_layer_leaves_out_is_neither_shown_nor_changed_by_the_page(layer):
    """W40: a file .zonemarkignore leaves out (made before the pattern was added) is no page's to show, and a
    proposal for it is refused on apply: the file stays byte for byte as it was."""
    from zonemark.review.app import Review
    from zonemark.writer import propose
    draft = layer / "bozza[ext_memory].md"
    draft.write_text("# Bozza — 草稿 [external_memory]\n\n[P1]\n## TOPIC: Idee\n[/P1]\n\n[P3]\n"
                     "###### LOG: 2026-01-03 — perché\nTesto — 東京.\n[/P3]\n", encoding="utf-8")
    made = propose(draft, "Idee", "###### LOG: 2026-01-03 — perché\nAltro — 東京.\n", reason="prova — 試し",
                   actor="ai")
    (layer / ".zonemarkignore").write_text("bozza*.md\n", encoding="utf-8")
    before = draft.read_bytes()
    review = Review(layer, token="t" * 32)
    with pytest.raises(ValueError, match="no proposal .* in this layer"):
        review._apply(made.id)
    assert draft.read_bytes() == before
    assert "bozza[ext_memory].md" not in [f.rel for f in review.layer().files]
