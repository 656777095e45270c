"""The gate every request of the review page passes first (an ASGI middleware, no dependency).

The page can change the user's files, so it answers only the user's own browser:

* the server listens on 127.0.0.1 only (:mod:`.serve`); the ``Host`` header must be exactly
  ``127.0.0.1:PORT`` — a page of another site whose name was made to resolve to 127.0.0.1
  (DNS rebinding) sends its own name and is refused;
* a random per-run token is required on every request, in the query string (``?token=``);
* only GET and HEAD (which change nothing) and POST (the actions) are answered; a POST must
  carry the token *also* in its body (an ``application/x-www-form-urlencoded`` field
  ``token``) or in the ``X-Zonemark-Token`` header — a token in the URL alone does not write —
  and, when the browser says where it comes from (``Origin``, ``Sec-Fetch-Site``), come from
  the page itself;
* every response gets a strict Content-Security-Policy (no script, no network access beyond
  the page's own origin; the graph frame sends its own, hash-based one), ``nosniff``, no
  referrer, no caching, and may not be framed by another origin.

Tokens are compared in constant time.  A refusal is a one-line ``text/plain`` answer.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs

# The ASGI callables this middleware sits between (the ASGI 3 specification's shapes).
_Scope = MutableMapping[str, Any]
_Message = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]
_ASGIApp = Callable[[_Scope, _Receive, _Send], Awaitable[None]]

TOKEN_FIELD = "token"
TOKEN_HEADER = b"x-zonemark-token"
MAX_BODY = 4 * 1024 * 1024  # a pasted chat answer fits many times over

#: The policy of every review page: no script at all, styles and frames from the page's own origin.
PAGE_CSP = ("default-src 'none'; style-src 'self'; img-src 'self'; frame-src 'self'; form-action 'self'; "
            "base-uri 'none'; frame-ancestors 'none'")

_DEFAULT_HEADERS = (
    (b"content-security-policy", PAGE_CSP.encode("ascii")),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)


def _same(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode("utf-8", "surrogatepass"), token.encode("ascii"))


def _one(values: list[str] | None) -> str | None:
    return values[0] if values and len(values) == 1 else None


class Gate:
    """ASGI middleware: checks host, token and method before ``app`` sees a request (module docstring)."""

    def __init__(self, app: _ASGIApp, *, token: str, port: int, max_body: int = MAX_BODY) -> None:
        if not token or not token.isascii():
            raise ValueError("the token must be non-empty ASCII")
        self.app = app
        self.token = token
        self.host = f"127.0.0.1:{port}".encode("ascii")
        self.origin = f"http://127.0.0.1:{port}".encode("ascii")
        self.max_body = max_body

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # websockets: not offered
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        send = _with_headers(send)
        headers: dict[bytes, list[bytes]] = {}
        for name, value in scope.get("headers", ()):
            headers.setdefault(name.lower(), []).append(value)
        hosts = headers.get(b"host", [])
        if len(hosts) != 1 or hosts[0] != self.host:
            await _refuse(send, 403, "refused: the Host of this request is not this page's loopback address "
                                     f"({self.host.decode()}); open the address zonemark review printed")
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        if not _same(_one(query.get(TOKEN_FIELD)), self.token):
            await _refuse(send, 403, "refused: this page needs the token of the address zonemark review printed "
                                     "(…?token=…); open that address")
            return
        method = scope.get("method", "GET")
        if method in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        if method != "POST":
            await _refuse(send, 405, f"refused: {method} is not answered here (GET reads, POST acts)",
                          extra=((b"allow", b"GET, HEAD, POST"),))
            return
        origin = headers.get(b"origin")
        if origin is not None and origin != [self.origin]:
            await _refuse(send, 403, "refused: a POST from another origin")
            return
        site = headers.get(b"sec-fetch-site")
        if site is not None and site[0] not in (b"same-origin", b"none"):
            await _refuse(send, 403, "refused: a POST from another site")
            return
        content_type = b";".join(headers.get(b"content-type", [b""])).split(b";")[0].strip().lower()
        if content_type != b"application/x-www-form-urlencoded":
            await _refuse(send, 415, "refused: a POST here is a form (application/x-www-form-urlencoded)")
            return
        body = await _read_body(receive, self.max_body)
        if body is None:
            await _refuse(send, 413, f"refused: the request is larger than {self.max_body // (1024 * 1024)} MB")
            return
        header_token = _one([v.decode("latin-1") for v in headers.get(TOKEN_HEADER, [])])
        fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
        if not (_same(header_token, self.token) or _same(_one(fields.get(TOKEN_FIELD)), self.token)):
            await _refuse(send, 403, "refused: a POST must carry the token in its body (the page's forms do) or in "
                                     "the X-Zonemark-Token header, not only in the address")
            return
        await self.app(scope, _replay(body), send)


async def _read_body(receive: _Receive, limit: int) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes) -> _Receive:
    sent = False

    async def receive() -> _Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


def _with_headers(send: _Send) -> _Send:
    """``send`` adding the default security headers the application did not set itself."""

    async def wrapped(message: _Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", ()))
            present = {name.lower() for name, _ in headers}
            headers += [(name, value) for name, value in _DEFAULT_HEADERS if name not in present]
            message = {**message, "headers": headers}
        await send(message)

    return wrapped


async def _refuse(send: _Send, status: int, text: str, extra: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    body = (text + "\n").encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode("ascii")), *extra]})
    await send({"type": "http.response.body", "body": body})


__all__ = ["Gate", "PAGE_CSP", "TOKEN_FIELD", "TOKEN_HEADER"]
