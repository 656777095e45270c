"""The access store and the scopes (issue 20 §2; src/zonemark/access)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from zonemark.access import (MAX_CLIENTS, PAIRING_TRIES, AccessError, AccessStore, ScopeError, allows, parse_scopes,
                             required_scope)


class Clock:
    def __init__(self) -> None:
        self.t = 1_800_000_000.0

    def __call__(self) -> float:
        return self.t


def test_scopes_parse_in_order_and_refuse_unknown_names() -> None:
    assert parse_scopes("edit, read append") == ("read", "append", "edit")
    with pytest.raises(ScopeError, match="unknown scope 'admin'"):
        parse_scopes("read,admin")
    with pytest.raises(ScopeError, match="at least one"):
        parse_scopes(" , ")
    assert allows(["append"], "append_entry") and not allows(["read"], "append_entry")
    assert required_scope("apply_proposal") is None and not allows(["read", "append", "propose", "edit"], "undo")


def test_credentials_are_kept_only_as_digests(tmp_path: Path) -> None:
    store = AccessStore(tmp_path)
    text, grant = store.add_token("portatile — 東京", "read")
    store.register_oauth("c1", "Chat — perché", {"client_id": "c1"}, ("read",))
    access, _ = store.issue("access", "c1", "g1", ("read",), resource="http://x/mcp", ttl=3600)
    refresh, _ = store.issue("refresh", "c1", "g1", ("read",), resource="http://x/mcp", ttl=3600)
    raw = store.path.read_bytes()
    for secret in (text, access, refresh):
        assert secret.encode() not in raw and secret[4:].encode() not in raw
    assert store.check("bearer", text) == grant
    assert store.check("access", text) is None  # a bearer token is not an access token
    assert oct(store.path.stat().st_mode & 0o777) == "0o600"


def test_access_tokens_expire_and_a_revoked_client_is_refused_at_once(tmp_path: Path) -> None:
    clock = Clock()
    store = AccessStore(tmp_path, clock=clock)
    store.register_oauth("c1", "Chat", {"client_id": "c1"}, ("read",))
    access, _ = store.issue("access", "c1", "g1", ("read",), resource=None, ttl=3600)
    assert store.check("access", access) is not None
    clock.t += 3600
    assert store.check("access", access) is None
    fresh, _ = store.issue("access", "c1", "g1", ("read",), resource=None, ttl=3600)
    assert store.revoke("Chat") == 1
    assert store.check("access", fresh) is None
    with pytest.raises(AccessError, match="no client or token named"):
        store.revoke("Chat")


def test_a_spent_code_or_refresh_token_presented_again_ends_its_grant(tmp_path: Path) -> None:
    store = AccessStore(tmp_path)
    store.register_oauth("c1", "Chat", {"client_id": "c1"}, ("read",))
    code, _ = store.issue("code", "c1", "g1", ("read",), resource=None, ttl=300)
    assert store.check("code", code, spend=True) is not None
    access, _ = store.issue("access", "c1", "g1", ("read",), resource=None, ttl=3600)
    refresh, _ = store.issue("refresh", "c1", "g1", ("read",), resource=None, ttl=3600)
    assert store.check("code", code) is None  # the replay
    assert store.check("access", access) is None and store.check("refresh", refresh) is None
    # rotation keeps the spent refresh token, so its reuse is caught
    refresh2, _ = store.issue("refresh", "c1", "g2", ("read",), resource=None, ttl=3600)
    assert store.check("refresh", refresh2, spend=True) is not None
    store.revoke_grant("g2", keep_spent=True)
    access3, _ = store.issue("access", "c1", "g2", ("read",), resource=None, ttl=3600)
    assert store.check("refresh", refresh2) is None
    assert store.check("access", access3) is None


def test_the_pairing_code_lasts_ten_minutes_and_five_wrong_tries(tmp_path: Path) -> None:
    clock = Clock()
    store = AccessStore(tmp_path, clock=clock)
    code = store.new_pairing_code()
    outcomes = [store.try_pairing_code("WRONG-CODE") for _ in range(PAIRING_TRIES)]
    assert [o.tries_left for o in outcomes[:-1]] == [4, 3, 2, 1] and outcomes[-1].outcome == "spent"
    assert store.try_pairing_code(code).outcome == "spent"
    code = store.new_pairing_code()
    clock.t += 600
    assert store.try_pairing_code(code).outcome == "spent"
    code = store.new_pairing_code()
    assert store.new_pairing_code() != code  # a fresh one replaces it
    assert store.try_pairing_code(code).outcome == "wrong"


def test_registration_is_bounded_and_names_are_one_printable_line(tmp_path: Path) -> None:
    store = AccessStore(tmp_path)
    store.register_oauth("c0", "riga\nnuova\u202e — 東京" + "x" * 300, {}, ("read",))
    [listed] = store.listing()
    assert "\n" not in listed.name and "\u202e" not in listed.name and len(listed.name) <= 80
    with sqlite3.connect(store.path) as con:
        con.executemany("INSERT INTO clients VALUES (?, 'n', 'oauth', '{}', 'read', 0, NULL)",
                        [(f"c{i}",) for i in range(1, MAX_CLIENTS)])
    with pytest.raises(AccessError, match="MAX_CLIENTS"):
        store.register_oauth("one-more", "n", {}, ("read",))
    with pytest.raises(AccessError, match="one line"):
        store.add_token("due\nrighe", "read")
