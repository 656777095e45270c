"""The access store of a layer: ``.zonemark/access.sqlite3`` (issue 20 §2).

It holds the clients (OAuth clients registered by the server, and the named bearer tokens ``zonemark access
add-token`` makes), every credential the server hands out — authorization codes, access tokens, refresh
tokens, bearer tokens — and the one pairing code the owner types on the authorization page.  A credential is
kept only as the SHA-256 of its text (each is 256 random bits, so the digest alone cannot be turned back);
a lookup is by digest, and the digest found is compared again in constant time.  Access tokens live
:data:`ACCESS_TTL` (one hour), refresh tokens :data:`REFRESH_TTL` (30 days), codes :data:`CODE_TTL`; the
pairing code :data:`PAIRING_TTL` (10 minutes) and :data:`PAIRING_TRIES` (5) wrong tries.

A code or a refresh token is used once: the row stays, marked used, until it expires, and presenting it again
revokes every token of its grant (a replayed code or a stolen refresh token ends the grant).  Every call opens
its own connection, so the server's threads and a ``zonemark access`` process share the file safely; a
revocation takes effect at the next request.  Standard library only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..core.text import printable
from .scopes import SCOPES, Scope, parse_scopes

ACCESS_TTL = 3600
REFRESH_TTL = 30 * 24 * 3600
CODE_TTL = 300
PAIRING_TTL = 600
PAIRING_TRIES = 5
#: Registered OAuth clients a layer keeps: registration is open to anyone who reaches the server, so it is
#: bounded (and rate-limited by the server).
MAX_CLIENTS = 200
MAX_NAME_CHARS = 80
STORE_NAME = "access.sqlite3"
#: Letters and digits a person cannot confuse (no 0/O, 1/I/L): a pairing code is read off a terminal.
PAIRING_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
PAIRING_LENGTH = 8
#: How often the last use of a client is written (seconds): one write per request would be needless churn.
TOUCH_EVERY = 60

Kind = Literal["code", "access", "refresh", "bearer"]
PREFIX: dict[Kind, str] = {"code": "zmc_", "access": "zma_", "refresh": "zmr_", "bearer": "zmb_"}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS clients (
    client_id TEXT PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL, info TEXT, scopes TEXT NOT NULL,
    created REAL NOT NULL, last_used REAL);
CREATE TABLE IF NOT EXISTS tokens (
    digest TEXT PRIMARY KEY, token_id TEXT NOT NULL, kind TEXT NOT NULL, client_id TEXT NOT NULL,
    grant_id TEXT NOT NULL, scopes TEXT NOT NULL, resource TEXT, expires_at REAL, used INTEGER NOT NULL DEFAULT 0,
    data TEXT, created REAL NOT NULL);
CREATE INDEX IF NOT EXISTS tokens_grant ON tokens(grant_id);
CREATE INDEX IF NOT EXISTS tokens_client ON tokens(client_id);
CREATE TABLE IF NOT EXISTS pairing (
    id INTEGER PRIMARY KEY CHECK (id = 1), digest TEXT NOT NULL, expires_at REAL NOT NULL, tries INTEGER NOT NULL);
"""


class AccessError(Exception):
    """A refusal of the store, one line (an unknown name, a name taken, the store unreadable)."""


class AccessUnavailable(AccessError):
    """The store cannot be opened or read (not a database, no permission): the command could not run."""


@dataclass(frozen=True)
class Grant:
    """What a credential that checks out stands for: the client (id and registered name), the token's own public
    id (recorded with every write it makes), its scopes, expiry, the resource it was issued for and the
    extra data its row holds (an authorization code's challenge and redirect)."""

    kind: Kind
    client_id: str
    client_name: str
    token_id: str
    grant_id: str
    scopes: tuple[Scope, ...]
    expires_at: float | None
    resource: str | None
    data: dict[str, object]


@dataclass(frozen=True)
class Listed:
    """One client as ``zonemark access LAYER list`` shows it."""

    name: str
    kind: Literal["oauth", "token"]
    client_id: str
    scopes: tuple[Scope, ...]
    created: float
    last_used: float | None
    live_tokens: int


@dataclass(frozen=True)
class Pairing:
    """The outcome of a typed pairing code: ``ok`` (it was right, and is now spent), ``wrong`` (``tries_left``
    more tries), ``spent`` (no live code: expired, used up, or never made)."""

    outcome: Literal["ok", "wrong", "spent"]
    tries_left: int = 0


def store_path(root: str | os.PathLike[str]) -> Path:
    """The access store of the layer folder ``root``."""
    return Path(root) / ".zonemark" / STORE_NAME


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _clean_name(name: str) -> str:
    """A client's name as it is stored and shown: printable, one line, at most :data:`MAX_NAME_CHARS`."""
    shown = " ".join(printable(str(name)).split())
    shown = "".join(ch for ch in shown if ch.isprintable())
    return shown[:MAX_NAME_CHARS] or "unnamed client"


def _scopes_text(scopes: tuple[str, ...] | list[str]) -> str:
    return " ".join(s for s in SCOPES if s in scopes)


def _scopes(text: str) -> tuple[Scope, ...]:
    return tuple(s for s in SCOPES if s in text.split())


class AccessStore:
    """The access store of one layer folder (see the module docstring); ``clock`` is ``time.time`` but for tests."""

    def __init__(self, root: str | os.PathLike[str], *, clock: Callable[[], float] = time.time) -> None:
        self.path = store_path(root)
        self.now = clock
        self._ready = False

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        try:
            if not self._ready:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                _owner_only(self.path)
            con = sqlite3.connect(self.path, timeout=10, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise AccessUnavailable(f"cannot open the access store {self.path.name}: {exc}") from None
        try:
            if not self._ready:
                con.executescript(_SCHEMA)
                self._ready = True
            con.execute("BEGIN IMMEDIATE")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            raise AccessUnavailable(f"the access store {self.path.name} cannot be used: {exc}") from None
        finally:
            con.close()

    # -- clients ------------------------------------------------------------------------------------------

    def register_oauth(self, client_id: str, name: str, info: dict[str, object], scopes: tuple[str, ...]) -> None:
        """Keep a client the server registered (RFC 7591); refused over :data:`MAX_CLIENTS` clients."""
        with self._db() as con:
            (count,) = con.execute("SELECT COUNT(*) FROM clients WHERE kind = 'oauth'").fetchone()
            if count >= MAX_CLIENTS:
                raise AccessError(f"the layer already has {MAX_CLIENTS} registered clients (MAX_CLIENTS); "
                                  f"revoke some with zonemark access LAYER revoke NAME")
            con.execute("INSERT INTO clients VALUES (?, ?, 'oauth', ?, ?, ?, NULL)",
                        (client_id, _clean_name(name), json.dumps(info), _scopes_text(scopes), self.now()))

    def oauth_client(self, client_id: str) -> dict[str, object] | None:
        """The registration of an OAuth client (as the server stored it), or None."""
        with self._db() as con:
            row = con.execute("SELECT info FROM clients WHERE client_id = ? AND kind = 'oauth'",
                              (client_id,)).fetchone()
        if row is None:
            return None
        info = json.loads(row[0])
        return info if isinstance(info, dict) else None

    def client_name(self, client_id: str) -> str | None:
        with self._db() as con:
            row = con.execute("SELECT name FROM clients WHERE client_id = ?", (client_id,)).fetchone()
        return None if row is None else str(row[0])

    def add_token(self, name: str, scopes: tuple[Scope, ...] | str) -> tuple[str, Grant]:
        """A new bearer token named ``name`` (unique) with ``scopes``: its text (shown once) and its grant."""
        chosen = parse_scopes(scopes) if isinstance(scopes, str) else parse_scopes(list(scopes))
        shown = _clean_name(name)
        if shown != name or not name.strip():
            raise AccessError(f"a token name is one line of printable text, at most {MAX_NAME_CHARS} characters")
        client_id = "tok_" + secrets.token_hex(8)
        with self._db() as con:
            if con.execute("SELECT 1 FROM clients WHERE name = ?", (name,)).fetchone():
                raise AccessError(f"a client named {name!r} exists already; revoke it first or choose another name")
            con.execute("INSERT INTO clients VALUES (?, ?, 'token', NULL, ?, ?, NULL)",
                        (client_id, name, _scopes_text(chosen), self.now()))
            return self._issue(con, "bearer", client_id, client_id, chosen, None, None, {}, name)

    def listing(self) -> list[Listed]:
        """Every client, bearer tokens and OAuth clients, in the order they were made."""
        now = self.now()
        with self._db() as con:
            rows = con.execute(
                "SELECT c.name, c.kind, c.client_id, c.scopes, c.created, c.last_used, "
                "(SELECT COUNT(*) FROM tokens t WHERE t.client_id = c.client_id AND t.used = 0 "
                " AND t.kind IN ('access', 'refresh', 'bearer') AND (t.expires_at IS NULL OR t.expires_at > ?)) "
                "FROM clients c ORDER BY c.created, c.client_id", (now,)).fetchall()
        return [Listed(name, kind, cid, _scopes(sc), created, last, live)
                for name, kind, cid, sc, created, last, live in rows]

    def revoke(self, name: str) -> int:
        """Remove the clients named ``name`` (a bearer token's name, an OAuth client's registered name or its
        client id) and every credential they hold; how many were removed (0: refused as unknown)."""
        with self._db() as con:
            ids = [r[0] for r in con.execute("SELECT client_id FROM clients WHERE name = ? OR client_id = ?",
                                             (name, name))]
            for cid in ids:
                con.execute("DELETE FROM tokens WHERE client_id = ?", (cid,))
                con.execute("DELETE FROM clients WHERE client_id = ?", (cid,))
        if not ids:
            raise AccessError(f"no client or token named {name!r}; zonemark access LAYER list shows them")
        return len(ids)

    # -- credentials --------------------------------------------------------------------------------------

    def issue(self, kind: Kind, client_id: str, grant_id: str, scopes: tuple[str, ...], *, resource: str | None,
              ttl: float | None, data: dict[str, object] | None = None) -> tuple[str, Grant]:
        """A new credential of ``kind`` for a client's grant: its text (never stored) and what it stands for."""
        with self._db() as con:
            name = con.execute("SELECT name FROM clients WHERE client_id = ?", (client_id,)).fetchone()
            if name is None:
                raise AccessError("the client is not registered (or was revoked)")
            expires = None if ttl is None else self.now() + ttl
            return self._issue(con, kind, client_id, grant_id, _scopes(_scopes_text(scopes)), resource, expires,
                               data or {}, str(name[0]))

    def _issue(self, con: sqlite3.Connection, kind: Kind, client_id: str, grant_id: str, scopes: tuple[Scope, ...],
               resource: str | None, expires: float | None, data: dict[str, object], name: str) -> tuple[str, Grant]:
        text = PREFIX[kind] + secrets.token_urlsafe(32)
        token_id = secrets.token_hex(4)
        con.execute("INSERT INTO tokens VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)",
                    (_digest(text), token_id, kind, client_id, grant_id, _scopes_text(scopes), resource, expires,
                     json.dumps(data), self.now()))
        return text, Grant(kind, client_id, name, token_id, grant_id, scopes, expires, resource, data)

    def check(self, kind: Kind, text: str, *, spend: bool = False) -> Grant | None:
        """The grant of a live credential ``text`` of ``kind``, or None (unknown, expired, revoked, or of another
        kind).  ``spend`` marks a code or refresh token used; one presented again after it was spent revokes its
        whole grant.  A bearer or access token's client has its last use recorded."""
        if not isinstance(text, str) or not text.startswith(PREFIX[kind]) or len(text) > 200:
            return None
        digest = _digest(text)
        now = self.now()
        with self._db() as con:
            row = con.execute(
                "SELECT t.digest, t.token_id, t.client_id, t.grant_id, t.scopes, t.resource, t.expires_at, t.used, "
                "t.data, c.name, c.last_used FROM tokens t JOIN clients c ON c.client_id = t.client_id "
                "WHERE t.digest = ? AND t.kind = ?", (digest, kind)).fetchone()
            if row is None or not hmac.compare_digest(str(row[0]), digest):
                return None
            _, token_id, client_id, grant_id, scopes, resource, expires, used, data, name, last = row
            if used:
                con.execute("DELETE FROM tokens WHERE grant_id = ? AND kind != 'code'", (grant_id,))
                return None
            if expires is not None and expires <= now:
                return None
            if spend:
                con.execute("UPDATE tokens SET used = 1 WHERE digest = ?", (digest,))
            if kind in ("access", "bearer") and (last is None or now - last >= TOUCH_EVERY):
                con.execute("UPDATE clients SET last_used = ? WHERE client_id = ?", (now, client_id))
            loaded = json.loads(data) if data else {}
            return Grant(kind, client_id, name, token_id, grant_id, _scopes(scopes), expires, resource,
                         loaded if isinstance(loaded, dict) else {})

    def revoke_grant(self, grant_id: str, *, keep_spent: bool = False) -> None:
        """End a grant: every access and refresh token issued under it (a used code stays, to catch a replay;
        with ``keep_spent``, a spent refresh token stays too: a rotation keeps the old one to catch its reuse)."""
        spent = " AND NOT (kind = 'refresh' AND used = 1)" if keep_spent else ""
        with self._db() as con:
            con.execute("DELETE FROM tokens WHERE grant_id = ? AND kind IN ('access', 'refresh')" + spent,
                        (grant_id,))

    def prune(self) -> None:
        """Forget credentials that expired (a used code is kept until it expires, to recognise its replay)."""
        with self._db() as con:
            con.execute("DELETE FROM tokens WHERE expires_at IS NOT NULL AND expires_at <= ?", (self.now(),))

    # -- the pairing code ---------------------------------------------------------------------------------

    def new_pairing_code(self) -> str:
        """A fresh pairing code (it replaces any other), valid :data:`PAIRING_TTL` s and :data:`PAIRING_TRIES`
        wrong tries: ``ABCD-EFGH``."""
        raw = "".join(secrets.choice(PAIRING_ALPHABET) for _ in range(PAIRING_LENGTH))
        with self._db() as con:
            con.execute("INSERT OR REPLACE INTO pairing VALUES (1, ?, ?, ?)",
                        (_digest(raw), self.now() + PAIRING_TTL, PAIRING_TRIES))
        return f"{raw[:4]}-{raw[4:]}"

    def try_pairing_code(self, typed: str) -> Pairing:
        """Check a typed pairing code (case, spaces and dashes aside), in constant time: a right one is spent at
        once; a wrong one uses a try, and the code is gone after :data:`PAIRING_TRIES` of them."""
        raw = "".join(ch for ch in str(typed)[:64].upper() if ch.isalnum())
        with self._db() as con:
            row = con.execute("SELECT digest, expires_at, tries FROM pairing WHERE id = 1").fetchone()
            if row is None or row[1] <= self.now() or row[2] <= 0:
                con.execute("DELETE FROM pairing")
                return Pairing("spent")
            if hmac.compare_digest(str(row[0]), _digest(raw)):
                con.execute("DELETE FROM pairing")
                return Pairing("ok")
            left = int(row[2]) - 1
            if left <= 0:
                con.execute("DELETE FROM pairing")
                return Pairing("spent")
            con.execute("UPDATE pairing SET tries = ? WHERE id = 1", (left,))
            return Pairing("wrong", left)


def _owner_only(path: Path) -> None:
    """Make the store readable by its owner only (it holds digests of credentials), where the system allows."""
    try:
        if not path.exists():
            path.touch(mode=0o600)
        else:
            os.chmod(path, 0o600)
    except OSError:
        pass
