"""``zonemark mcp LAYER --http`` end to end (issue 20 §1, §2, §4): the real process, the SDK's own Streamable HTTP
client and its OAuth client support, and every refusal of §4's list.

The server runs as ``python -m zonemark mcp LAYER --http --port 0`` (its first stdout line is the endpoint; the
pairing code is on stderr).  The "browser" of the OAuth flow is a plain HTTP client that opens the authorization
URL, reads the pairing page and posts the code, as a person would.
"""

from __future__ import annotations

import html
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp_support import MEMORY_NAME, make_layer
from rulings_support import assert_rulings_pinned

from zonemark.access import AccessStore


REDIRECT = "http://127.0.0.1:9/callback"
CODE = re.compile(r"pairing code ([A-Z0-9]{4}-[A-Z0-9]{4})")


class Served:
    """One server process on a layer."""

    def __init__(self, layer: Path, *extra: str) -> None:
        self.layer = layer
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen([sys.executable, "-m", "zonemark", "mcp", str(layer), "--http", "--port", "0",
                                      *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.url = self.proc.stdout.readline().strip()
        line = self.proc.stderr.readline()
        assert self.url.endswith("/mcp"), (self.url, line, self.proc.stderr.read() if self.proc.poll() else "")
        found = CODE.search(line)
        assert found, line
        self.code = found.group(1)
        self.origin = self.url.removesuffix("/mcp")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def served(tmp_path: Path):
    s = Served(make_layer(tmp_path / "layer"))
    yield s
    s.stop()


def access(layer: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zonemark", "access", str(layer), *args], capture_output=True,
                          text=True, timeout=60)


def token(layer: Path, name: str, scopes: str) -> str:
    done = access(layer, "add-token", name, "--scope", scopes)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def run(fn: Any) -> Any:
    return anyio.run(fn)


async def with_client(url: str, bearer: str | None, action: Any, *, mode: str = "auto", auth: Any = None) -> Any:
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    async with httpx2.AsyncClient(headers=headers, auth=auth, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:  # type: ignore[arg-type]
            return await action(client)


# -- the browser of the OAuth flow -------------------------------------------------------------------------

class Browser:
    """Opens the authorization URL, reads the pairing page, types a code (the owner's part)."""

    def __init__(self, codes: list[str]) -> None:
        self.codes = codes
        self.pages: list[str] = []
        self.result: AuthorizationCodeResult | None = None

    async def redirect(self, url: str) -> None:
        async with httpx2.AsyncClient(timeout=30) as web:
            first = await web.get(url)
            assert first.status_code == 302, first.text
            page_url = first.headers["location"]
            page = await web.get(page_url)
            assert page.status_code == 200
            self.pages.append(page.text)
            for code in self.codes:
                done = await submit(web, page_url, page.text, code)
                if done.status_code == 303:
                    query = parse_qs(urlsplit(done.headers["location"]).query)
                    self.result = AuthorizationCodeResult(code=query["code"][0], state=query["state"][0],
                                                          iss=query.get("iss", [None])[0])
                    return
                self.pages.append(done.text)

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None, self.pages[-1]
        return self.result


def form_field(page: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert found, page
    return html.unescape(found.group(1))


async def submit(web: httpx2.AsyncClient, page_url: str, page: str, code: str, *,
                 grant: tuple[str, ...] = ("read", "append"), **over: str) -> httpx2.Response:
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(page_url))
    data: dict[str, Any] = {"request": form_field(page, "request"), "csrf": form_field(page, "csrf"), "code": code,
                            "decision": "approve", "grant": list(grant), **over}
    return await web.post(origin + "/pair", data=data)


class Memory:
    """The SDK's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def oauth(url: str, browser: Browser, memory: Memory, name: str = "Chat — perché 東京",
          scope: str = "read append") -> OAuthClientProvider:
    meta = OAuthClientMetadata(client_name=name, redirect_uris=[REDIRECT], grant_types=["authorization_code",  # type: ignore[list-item]
                               "refresh_token"], response_types=["code"], scope=scope)
    return OAuthClientProvider(url, meta, memory, redirect_handler=browser.redirect, callback_handler=browser.callback)


async def names(client: Client) -> list[str]:
    return [t.name for t in (await client.list_tools()).tools]


# -- the whole flow ------------------------------------------------------------------------------------------

def test_oauth_discovery_registration_pairing_tokens_tools_append_refresh_revoke(served: Served) -> None:
    browser, memory = Browser([served.code]), Memory()

    async def flow(client: Client) -> tuple[list[str], Any]:
        listed = await names(client)
        wrote = await client.call_tool("append_entry", {"file": MEMORY_NAME, "container": "Viaggi",
                                                        "title": "Tokyo — perché", "body": "東京 — dal telefono"})
        return listed, wrote

    provider = oauth(served.url, browser, memory)
    listed, wrote = run(lambda: with_client(served.url, None, flow, auth=provider))
    assert not wrote.is_error, wrote.content[0].text
    assert set(listed) == {"layer_status", "list_containers", "read_container", "list_zones", "read_zone", "check",
                           "search_memory", "build_context", "parse_trace", "append_entry", "ingest_log"}
    page = browser.pages[0]
    assert "Chat — perché 東京" in page and "127.0.0.1" in page and "read, append, propose, edit" in page
    assert "<script" not in page
    assert "東京 — dal telefono" in (served.layer / MEMORY_NAME).read_text("utf-8")
    # the history records the client and its token id: "ai via <client>"
    history = subprocess.run([sys.executable, "-m", "zonemark", "history", str(served.layer / MEMORY_NAME)],
                             capture_output=True, text=True, timeout=60)
    assert re.search(r"ai via Chat — perché 東京 \([0-9a-f]{8}\)", history.stdout), history.stdout
    assert memory.tokens is not None and memory.client is not None
    first = memory.tokens
    assert first.scope == "read append" and first.expires_in is not None and first.expires_in <= 3600

    # an hour later: the SDK's client refreshes by itself; the pair rotates
    provider.context.token_expiry_time = time.time() - 1
    again = run(lambda: with_client(served.url, None, names, auth=provider))
    assert len(again) == 11 and len(browser.pages) == 1  # no second authorization
    second = memory.tokens
    assert second.access_token != first.access_token and second.refresh_token != first.refresh_token
    assert run(lambda: status_of(served.url, first.access_token)) == 401  # the rotation ended the old one
    assert run(lambda: status_of(served.url, second.access_token)) == 200

    async def post(path: str, data: dict[str, str]) -> httpx2.Response:
        async with httpx2.AsyncClient(timeout=30) as web:
            return await web.post(served.origin + path, data={
                **data, "client_id": memory.client.client_id, "client_secret": memory.client.client_secret or ""})

    # revoke through the endpoint: refused from the next request on
    assert run(lambda: post("/revoke", {"token": second.access_token})).status_code == 200
    assert run(lambda: status_of(served.url, second.access_token)) == 401
    for spent in (first.refresh_token, second.refresh_token):
        refused = run(lambda rt=spent or "": post("/token", {"grant_type": "refresh_token", "refresh_token": rt}))
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"


async def status_of(url: str, bearer: str | None, headers: dict[str, str] | None = None) -> int:
    """The HTTP status of an initialize POST to ``url``."""
    sent = {"content-type": "application/json", "accept": "application/json, text/event-stream", **(headers or {})}
    if bearer:
        sent["authorization"] = f"Bearer {bearer}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    async with httpx2.AsyncClient(timeout=30) as web:
        return (await web.post(url, json=body, headers=sent)).status_code


# -- refusals (§4) -------------------------------------------------------------------------------------------

def test_no_token_is_401_with_the_resource_metadata(served: Served) -> None:
    async def go() -> httpx2.Response:
        async with httpx2.AsyncClient(timeout=30) as web:
            return await web.post(served.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                  headers={"accept": "application/json, text/event-stream"})

    r = run(go)
    assert r.status_code == 401
    assert f'resource_metadata="{served.origin}/.well-known/oauth-protected-resource/mcp"' in r.headers[
        "www-authenticate"]

    async def meta() -> tuple[dict[str, Any], dict[str, Any]]:
        async with httpx2.AsyncClient(timeout=30) as web:
            prm = (await web.get(served.origin + "/.well-known/oauth-protected-resource/mcp")).json()
            asm = (await web.get(served.origin + "/.well-known/oauth-authorization-server")).json()
            return prm, asm

    prm, asm = run(meta)
    assert prm["resource"] == served.url and prm["authorization_servers"] == [served.origin]
    assert asm["code_challenge_methods_supported"] == ["S256"]
    assert set(asm["scopes_supported"]) == {"read", "append", "propose", "edit"}
    assert asm["registration_endpoint"] and asm["revocation_endpoint"]


def test_wrong_unknown_expired_revoked_and_wrong_audience_tokens_are_refused(served: Served) -> None:
    good = token(served.layer, "telefono — 東京", "read")
    assert run(lambda: status_of(served.url, good)) == 200
    assert run(lambda: status_of(served.url, good[:-2] + "xx")) == 401
    assert run(lambda: status_of(served.url, "zma_" + "A" * 43)) == 401
    store = AccessStore(served.layer)
    store.register_oauth("c1", "altro", {"client_id": "c1", "redirect_uris": [REDIRECT]}, ("read",))
    expired, _ = store.issue("access", "c1", "g1", ("read",), resource=served.url, ttl=3600)
    elsewhere, _ = store.issue("access", "c1", "g2", ("read",), resource="https://other.example/mcp", ttl=3600)
    assert run(lambda: status_of(served.url, expired)) == 200
    with sqlite3.connect(store.path) as con:  # an hour later
        con.execute("UPDATE tokens SET expires_at = ? WHERE grant_id = 'g1'", (time.time() - 1,))
    assert run(lambda: status_of(served.url, expired)) == 401
    assert run(lambda: status_of(served.url, elsewhere)) == 401  # issued for another resource
    done = access(served.layer, "revoke", "telefono — 東京")
    assert done.returncode == 0, done.stderr
    assert run(lambda: status_of(served.url, good)) == 401


def test_wrong_host_and_origin_are_refused(served: Served) -> None:
    good = token(served.layer, "host — perché", "read")
    assert run(lambda: status_of(served.url, good, {"origin": served.origin})) == 200
    assert run(lambda: status_of(served.url, good, {"host": "evil.example"})) == 421
    assert run(lambda: status_of(served.url, good, {"origin": "https://evil.example"})) == 403


def _register(origin: str, **over: Any) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        async with httpx2.AsyncClient(timeout=30) as web:
            r = await web.post(origin + "/register", json={"client_name": "prova — 東京", "redirect_uris": [REDIRECT],
                                                             "grant_types": ["authorization_code", "refresh_token"],
                                                             "token_endpoint_auth_method": "none",
                                                             "scope": "read append", **over})
            assert r.status_code == 201, r.text
            return dict(r.json())
    return dict(run(go))


def _pkce() -> tuple[str, str]:
    import base64
    import hashlib
    import secrets
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


async def _authorize(served: Served, client_id: str, challenge: str, codes: list[str], *,
                     redirect: str = REDIRECT, method: str = "S256", resource: str | None = None
                     ) -> tuple[httpx2.Response, list[str]]:
    """Open /authorize and type ``codes`` one after the other: the last answer and every page seen."""
    async with httpx2.AsyncClient(timeout=30) as web:
        first = await web.get(served.origin + "/authorize", params={
            "response_type": "code", "client_id": client_id, "redirect_uri": redirect, "state": "s1",
            "code_challenge": challenge, "code_challenge_method": method, "scope": "read append",
            **({"resource": resource} if resource else {})})
        if first.status_code != 302 or not first.headers["location"].startswith(served.origin + "/pair"):
            return first, []
        page_url = first.headers["location"]
        page = (await web.get(page_url)).text
        pages = [page]
        answer = first
        for code in codes:
            answer = await submit(web, page_url, page, code)
            pages.append(answer.text)
            if answer.status_code == 303:
                break
        return answer, pages


def _exchange(served: Served, client_id: str, code: str, verifier: str) -> httpx2.Response:
    async def go() -> httpx2.Response:
        async with httpx2.AsyncClient(timeout=30) as web:
            return await web.post(served.origin + "/token", data={
                "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": client_id,
                "code_verifier": verifier})
    return run(go)


def test_replayed_code_and_wrong_pkce_verifier_are_refused(served: Served) -> None:
    client = _register(served.origin)
    verifier, challenge = _pkce()
    answer, _ = run(lambda: _authorize(served, client["client_id"], challenge, [served.code]))
    assert answer.status_code == 303
    query = parse_qs(urlsplit(answer.headers["location"]).query)
    assert query["state"] == ["s1"] and query["iss"] == [served.origin]
    code = query["code"][0]
    wrong = _exchange(served, client["client_id"], code, verifier + "x")
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    assert "code_verifier" in wrong.json()["error_description"]
    ok = _exchange(served, client["client_id"], code, verifier)
    assert ok.status_code == 200, ok.text
    issued = ok.json()["access_token"]
    assert run(lambda: status_of(served.url, issued)) == 200
    replay = _exchange(served, client["client_id"], code, verifier)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    assert run(lambda: status_of(served.url, issued)) == 401  # the replay ended the grant it made


def test_unregistered_redirect_plain_pkce_and_another_resource_are_refused(served: Served) -> None:
    client = _register(served.origin)
    _, challenge = _pkce()
    answer, _ = run(lambda: _authorize(served, client["client_id"], challenge, [served.code],
                                       redirect="https://evil.example/cb"))
    assert answer.status_code == 400 and "not registered" in answer.json()["error_description"]
    plain, _ = run(lambda: _authorize(served, client["client_id"], challenge, [served.code], method="plain"))
    assert plain.status_code in (302, 400)
    if plain.status_code == 302:  # an error sent back to the registered redirect
        assert "error=invalid_request" in plain.headers["location"]
    other, _ = run(lambda: _authorize(served, client["client_id"], challenge, [served.code],
                                      resource="https://other.example/mcp"))
    assert other.status_code == 302 and "error=invalid_target" in other.headers["location"]


def test_a_wrong_pairing_code_says_so_and_six_tries_end_it(served: Served) -> None:
    client = _register(served.origin)
    _, challenge = _pkce()
    answer, pages = run(lambda: _authorize(served, client["client_id"], challenge, ["WRNG-CODE"] * 5 + [served.code]))
    assert "That is not the pairing code (4 tries left)." in pages[1]
    assert "That is not the pairing code (1 try left)." in pages[4]
    assert answer.status_code == 400 and "No pairing code is valid now" in pages[-1]
    fresh = access(served.layer, "pair")
    assert fresh.returncode == 0 and re.fullmatch(r"[A-Z0-9]{4}-[A-Z0-9]{4}\n", fresh.stdout)
    answer, _ = run(lambda: _authorize(served, client["client_id"], challenge, [fresh.stdout.strip().lower()]))
    assert answer.status_code == 303


def test_the_pairing_form_refuses_a_cross_site_post(served: Served) -> None:
    client = _register(served.origin)
    _, challenge = _pkce()

    async def go() -> list[int]:
        async with httpx2.AsyncClient(timeout=30) as web:
            first = await web.get(served.origin + "/authorize", params={
                "response_type": "code", "client_id": client["client_id"], "redirect_uri": REDIRECT, "state": "s",
                "code_challenge": challenge, "code_challenge_method": "S256"})
            page_url = first.headers["location"]
            page = await web.get(page_url)
            assert page.headers["content-security-policy"].startswith("default-src 'none'")
            forged = await submit(web, page_url, page.text, served.code, csrf="forged")
            other = await web.post(served.origin + "/pair", data={
                "request": form_field(page.text, "request"), "csrf": form_field(page.text, "csrf"),
                "code": served.code}, headers={"origin": "https://evil.example"})
            async with httpx2.AsyncClient(timeout=30) as stranger:  # the form's token without the page's cookie
                cookieless = await submit(stranger, page_url, page.text, served.code)
            return [forged.status_code, other.status_code, cookieless.status_code]

    assert run(go) == [403, 403, 403]
    assert AccessStore(served.layer).try_pairing_code(served.code).outcome == "ok"  # no try was spent


def test_a_missing_scope_hides_the_tool_and_a_call_names_the_scope(served: Served) -> None:
    reader = token(served.layer, "solo lettura — 東京", "read")

    async def go(client: Client) -> tuple[list[str], str, int]:
        listed = await names(client)
        refused = await client.call_tool("append_entry", {"file": MEMORY_NAME, "container": "Viaggi",
                                                          "title": "no — perché", "body": "x"})
        assert refused.is_error
        resources = await client.list_resources()
        return listed, refused.content[0].text, len(resources.resources)

    listed, text, resources = run(lambda: with_client(served.url, reader, go))
    assert "append_entry" not in listed and "propose_change" not in listed and "layer_status" in listed
    assert text.startswith("SCOPE_MISSING: ") and "'append'" in text
    assert resources >= 3
    writer_only = token(served.layer, "solo scrittura", "append")
    listed2, _, resources2 = run(lambda: with_client(served.url, writer_only, go_append_only))
    assert sorted(listed2) == ["append_entry", "ingest_log"] and resources2 == 0


async def go_append_only(client: Client) -> tuple[list[str], str, int]:
    listed = await names(client)
    read = await client.call_tool("layer_status", {})
    assert read.is_error and read.content[0].text.startswith("SCOPE_MISSING: ")
    return listed, "", len((await client.list_resources()).resources)


def test_two_clients_with_different_scopes_at_once_and_both_protocol_generations(served: Served) -> None:
    reader = token(served.layer, "lettore — 東京", "read")
    editor = token(served.layer, "editore — perché", "read,append,propose,edit")
    seen: dict[str, Any] = {}

    async def both() -> None:
        async def one(key: str, bearer: str, mode: str) -> None:
            seen[key] = await with_client(served.url, bearer, names, mode=mode)
        async with anyio.create_task_group() as group:
            group.start_soon(one, "reader-legacy", reader, "legacy")
            group.start_soon(one, "editor-legacy", editor, "legacy")
            group.start_soon(one, "reader-modern", reader, "2026-07-28")
            group.start_soon(one, "editor-modern", editor, "2026-07-28")

    run(both)
    assert seen["reader-legacy"] == seen["reader-modern"] and len(seen["reader-legacy"]) == 9
    assert seen["editor-legacy"] == seen["editor-modern"] and len(seen["editor-legacy"]) == 14

    async def propose(client: Client) -> Any:
        return await client.call_tool("propose_change", {"file": MEMORY_NAME, "container": "Ricordi",
                                                         "reason": "una proposta — 東京",
                                                         "content": "###### LOG: 2026-01-01 — capodanno\nFuochi — 花火."})
    done = run(lambda: with_client(served.url, editor, propose, mode="2026-07-28"))
    assert not done.is_error, done.content[0].text
    [record_file] = (served.layer / ".zonemark" / "proposals").glob("*.json")
    record = json.loads(record_file.read_text("utf-8"))
    assert record["proposed_by"] == "ai" and re.fullmatch(r"editore — perché \([0-9a-f]{8}\)", record["via"])
    shown = subprocess.run([sys.executable, "-m", "zonemark", "proposals", str(served.layer / MEMORY_NAME), "--show",
                            record["id"]], capture_output=True, text=True, timeout=60)
    assert "ai via editore — perché (" in shown.stdout, shown.stdout + shown.stderr


def test_bodies_are_bounded_and_registration_is_rate_limited(served: Served) -> None:
    reader = token(served.layer, "limiti — 東京", "read")

    async def go() -> tuple[int, list[int]]:
        async with httpx2.AsyncClient(timeout=30) as web:
            big = await web.post(served.url, content=b" " * (7 * 1024 * 1024), headers={
                "authorization": f"Bearer {reader}", "content-type": "application/json",
                "accept": "application/json, text/event-stream"})
            codes = []
            for _ in range(12):
                r = await web.post(served.origin + "/register", json={"redirect_uris": [REDIRECT]})
                codes.append(r.status_code)
            return big.status_code, codes

    big, codes = run(go)
    assert big == 413
    assert codes[:10] == [201] * 10 and codes[10:] == [429, 429]


# -- the command line ----------------------------------------------------------------------------------------

def test_a_public_host_needs_a_public_url_and_http_flags_need_http(tmp_path: Path) -> None:
    layer = make_layer(tmp_path / "layer")
    for args, needle in ((["--http", "--host", "0.0.0.0"], "--public-url"),
                         (["--http", "--public-url", "http://layer.example.org"], "https"),
                         (["--http", "--public-url", "https://layer.example.org/sub"], "without a path"),
                         (["--port", "9000"], "go with --http")):
        done = subprocess.run([sys.executable, "-m", "zonemark", "mcp", str(layer), *args], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 2 and needle in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_access_add_token_list_and_revoke(tmp_path: Path) -> None:
    layer = make_layer(tmp_path / "layer")
    made = access(layer, "add-token", "portatile — 東京", "--scope", "read,append")
    assert made.returncode == 0
    text = made.stdout.splitlines()[-1]
    assert text.startswith("zmb_") and len(made.stdout.splitlines()) == 1
    assert text not in (layer / ".zonemark" / "access.sqlite3").read_bytes().decode("latin-1")  # only its hash
    listed = access(layer, "list")
    assert "portatile — 東京  token  read,append  last use never" in listed.stdout
    bad = access(layer, "add-token", "x", "--scope", "read,admin")
    assert bad.returncode == 1 and "unknown scope 'admin'" in bad.stderr and "Traceback" not in bad.stderr
    twice = access(layer, "add-token", "portatile — 東京", "--scope", "read")
    assert twice.returncode == 1 and "exists already" in twice.stderr
    gone = access(layer, "revoke", "portatile — 東京")
    assert gone.returncode == 0
    unknown = access(layer, "revoke", "portatile — 東京")
    assert unknown.returncode == 1 and "no client or token named" in unknown.stderr


def test_every_tool_of_the_server_has_a_scope_and_no_tool_applies_or_undoes() -> None:
    from zonemark.access import TOOL_SCOPES
    from zonemark.mcp.server import TOOLS
    assert {row.name for row in TOOLS} == set(TOOL_SCOPES)
    assert not {"apply_proposal", "undo", "reject_proposal"} & set(TOOL_SCOPES)


def test_the_http_rulings_cite_tests_that_exist() -> None:
    assert_rulings_pinned("Over HTTP", "H")


def test_an_unreadable_access_store_is_one_line_and_exit_2(tmp_path: Path) -> None:
    layer = make_layer(tmp_path / "layer")
    (layer / ".zonemark").mkdir()
    (layer / ".zonemark" / "access.sqlite3").write_bytes("non è un database — 東京".encode() * 100)
    for command in (["access", str(layer), "list"], ["mcp", str(layer), "--http", "--port", "0"]):
        done = subprocess.run([sys.executable, "-m", "zonemark", *command], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 2 and "cannot be used" in done.stderr and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_the_review_page_shows_ai_via_the_client(tmp_path: Path) -> None:
    from review_support import CARS_NAME, ReviewServer
    from review_support import make_layer as review_layer

    from zonemark.writer import Via, acting_for, append_entry
    layer = review_layer(tmp_path)
    with acting_for(Via("Chat — perché <b>東京</b>", "3f9a2b1c")):
        append_entry(layer / CARS_NAME, "Maintenance/Tyres", "dal telefono — 東京", "perché — sì", actor="ai",
                     date="2026-10-12")
    with ReviewServer(layer) as running:
        status, _, body = running.get("/activity")
    page = body.decode("utf-8")
    assert status == 200
    assert '<span class="actor">ai via Chat — perché &lt;b&gt;東京&lt;/b&gt; (3f9a2b1c)</span>' in page
