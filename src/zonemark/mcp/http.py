"""The MCP server of a layer over Streamable HTTP, with its own OAuth 2.1 authorization server (issue 20 §1, §2).

Everything protocol-shaped is the SDK's: the Streamable HTTP transport at ``/mcp`` (both protocol generations
it serves), its Host/Origin checks (:class:`TransportSecuritySettings`), its bearer middleware (401 with the
``WWW-Authenticate`` resource metadata, the audience check), and its authorization-server routes (metadata,
dynamic registration, ``/authorize`` with PKCE S256 only, ``/token``, ``/revoke``).  This module gives them what
is ours: :class:`LayerProvider`, the SDK's provider protocol over the layer's access store
(:mod:`zonemark.access`); the pairing page ``/pair`` where the owner approves a client by typing the pairing
code (a plain form, no script, CSRF-protected); a rate limit per client address on the token, registration
and pairing endpoints (:data:`RATE_LIMITS`); and :class:`HttpLayerServer`, the layer server that shows and runs
only the tools the caller's scopes reach and records the caller with every write (:mod:`zonemark.writer`'s
``acting_for``).

Tokens are never logged: uvicorn's access log is off, and no line of this module prints a credential.
"""

from __future__ import annotations

import hmac
import html
import os
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from pydantic import AnyUrl
from mcp.server.auth.provider import (AccessToken, AuthorizationCode, AuthorizationParams, AuthorizeError,
                                      RefreshToken, RegistrationError, TokenError, construct_redirect_uri)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import RequestBodyLimitMiddleware, TransportSecurityMiddleware, \
    TransportSecuritySettings
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp.types import (CallToolResult, GetPromptRequestParams, GetPromptResult, InputRequiredResult,
                       ListPromptsResult, ListResourcesResult, ListResourceTemplatesResult, ListToolsResult,
                       PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResult)
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from .. import writer
from ..access import (ACCESS_TTL, CODE_TTL, REFRESH_TTL, SCOPES, AccessError, AccessStore, allows,
                      required_scope)
from ..interchange.ingest import MAX_CHAT_CHARS
from .refusals import render
from .server import _LayerServer, build_server

#: The largest request body ``/mcp`` reads: the longest text a tool takes (``ingest_log``'s MAX_CHAT_CHARS
#: characters), each escaped as ``\\uXXXX`` in the JSON at worst, and 1 MiB for the rest of the message.
MAX_REQUEST_BYTES = 6 * MAX_CHAT_CHARS + (1 << 20)
#: The pairing form is three short fields.
MAX_FORM_BYTES = 16 * 1024
#: Requests per client address per minute: (path, methods) -> the limit.
RATE_LIMITS: dict[str, int] = {"/token": 30, "/register": 10, "/authorize": 20, "/pair": 20, "/revoke": 30}
RATE_WINDOW = 60.0
#: Addresses the rate limiter remembers at once; past it the oldest are forgotten.
MAX_TRACKED_ADDRESSES = 10_000
#: Authorization requests waiting for the owner's pairing code at once; past it the oldest are dropped.
MAX_PENDING = 100
PENDING_TTL = 600.0
PAIR_PATH = "/pair"
MCP_PATH = "/mcp"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


# -- the SDK's token models, with what a write records ------------------------------------------------------

class LayerAccessToken(AccessToken):
    """An access or bearer token as the SDK sees it, with the client's name and the token's public id."""

    client_name: str
    token_id: str
    grant_id: str


class LayerRefreshToken(RefreshToken):
    grant_id: str


class LayerCode(AuthorizationCode):
    grant_id: str


@dataclass
class _Pending:
    """An authorization request waiting on the pairing page."""

    client_id: str
    client_name: str
    params: AuthorizationParams
    scopes: list[str]
    csrf: str
    expires: float


@dataclass
class LayerProvider:
    """The SDK's ``OAuthAuthorizationServerProvider`` over the access store of one layer (see the module
    docstring): every credential is made, found and ended by :class:`AccessStore`."""

    store: AccessStore
    issuer: str
    resource: str
    pending: dict[str, _Pending] = field(default_factory=dict)

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        info = self.store.oauth_client(client_id)
        return None if info is None else OAuthClientInformationFull.model_validate(info)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        scopes = tuple((client_info.scope or "").split())
        try:
            self.store.register_oauth(client_info.client_id or "", client_info.client_name or "unnamed client",
                                      client_info.model_dump(mode="json"), scopes)
        except AccessError as exc:
            raise RegistrationError("invalid_client_metadata", str(exc)) from None

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        """Hold the request until the owner types the pairing code on :data:`PAIR_PATH`."""
        if params.resource and not _same_resource(params.resource, self.resource):
            raise AuthorizeError("invalid_target", f"this server is the resource {self.resource} only")
        scopes = params.scopes or (client.scope or "read").split()
        now = time.time()
        for key in [k for k, p in self.pending.items() if p.expires <= now]:
            del self.pending[key]
        while len(self.pending) >= MAX_PENDING:
            del self.pending[next(iter(self.pending))]
        request_id = secrets.token_urlsafe(24)
        name = self.store.client_name(client.client_id or "") or "unnamed client"
        self.pending[request_id] = _Pending(client.client_id or "", name, params, scopes, secrets.token_urlsafe(32),
                                            now + PENDING_TTL)
        return f"{self.issuer}{PAIR_PATH}?request={request_id}"

    async def load_authorization_code(self, client: OAuthClientInformationFull, authorization_code: str
                                      ) -> LayerCode | None:
        g = self.store.check("code", authorization_code)
        if g is None or g.client_id != client.client_id:
            return None
        d = g.data
        return LayerCode(code=authorization_code, scopes=list(g.scopes), expires_at=g.expires_at or 0,
                         client_id=g.client_id, code_challenge=str(d["challenge"]),
                         redirect_uri=AnyUrl(str(d["redirect_uri"])),
                         redirect_uri_provided_explicitly=bool(d["explicit"]), resource=g.resource,
                         grant_id=g.grant_id)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, authorization_code: LayerCode
                                          ) -> OAuthToken:
        g = self.store.check("code", authorization_code.code, spend=True)
        if g is None:  # spent by a request that raced this one: the grant is ended
            raise TokenError("invalid_grant", "authorization code was already used")
        return self._tokens(g.client_id, g.grant_id, g.scopes, g.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str
                                 ) -> LayerRefreshToken | None:
        g = self.store.check("refresh", refresh_token)
        if g is None or g.client_id != client.client_id:
            return None
        return LayerRefreshToken(token=refresh_token, client_id=g.client_id, scopes=list(g.scopes),
                                 expires_at=int(g.expires_at) if g.expires_at else None, resource=g.resource,
                                 grant_id=g.grant_id)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: LayerRefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        """Rotate: the refresh token is spent, the grant's access tokens end, a new pair is issued."""
        g = self.store.check("refresh", refresh_token.token, spend=True)
        if g is None:
            raise TokenError("invalid_grant", "refresh token was already used")
        self.store.revoke_grant(g.grant_id, keep_spent=True)
        return self._tokens(g.client_id, g.grant_id, tuple(s for s in g.scopes if s in scopes), g.resource)

    def _tokens(self, client_id: str, grant_id: str, scopes: tuple[str, ...], resource: str | None) -> OAuthToken:
        try:
            access, _ = self.store.issue("access", client_id, grant_id, scopes, resource=resource or self.resource,
                                         ttl=ACCESS_TTL)
            refresh, _ = self.store.issue("refresh", client_id, grant_id, scopes, resource=resource or self.resource,
                                          ttl=REFRESH_TTL)
        except AccessError as exc:
            raise TokenError("invalid_grant", str(exc)) from None
        return OAuthToken(access_token=access, expires_in=ACCESS_TTL, scope=" ".join(scopes), refresh_token=refresh)

    async def load_access_token(self, token: str) -> LayerAccessToken | None:
        g = self.store.check("bearer", token) if token.startswith("zmb_") else self.store.check("access", token)
        if g is None:
            return None
        resource = self.resource if g.kind == "bearer" else g.resource
        return LayerAccessToken(token=token, client_id=g.client_id, scopes=list(g.scopes),
                                expires_at=int(g.expires_at) if g.expires_at else None, resource=resource,
                                client_name=g.client_name, token_id=g.token_id, grant_id=g.grant_id)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        grant = getattr(token, "grant_id", None)
        if isinstance(grant, str):
            self.store.revoke_grant(grant)

    def approve(self, pending: _Pending, granted: list[str]) -> str:
        """The redirect that gives the client its authorization code for the ``granted`` scopes (those the owner
        ticked of those asked), once the pairing code was right."""
        params = pending.params
        text, _ = self.store.issue("code", pending.client_id, "g_" + secrets.token_hex(8), tuple(granted),
                                   resource=params.resource or self.resource, ttl=CODE_TTL,
                                   data={"challenge": params.code_challenge, "redirect_uri": str(params.redirect_uri),
                                         "explicit": params.redirect_uri_provided_explicitly})
        return construct_redirect_uri(str(params.redirect_uri), code=text, state=params.state, iss=self.issuer)


def _same_resource(given: str, ours: str) -> bool:
    return given.rstrip("/") == ours.rstrip("/")


# -- the layer server that knows its caller ------------------------------------------------------------------

def _caller(request: object) -> LayerAccessToken | None:
    """The token of the HTTP request a message came in (None over stdio)."""
    scope = getattr(request, "scope", None)
    user = scope.get("user") if isinstance(scope, dict) else None
    token = user.access_token if isinstance(user, AuthenticatedUser) else None
    return token if isinstance(token, LayerAccessToken) else None


def _scope_refusal(what: str, needed: str | None, token: LayerAccessToken | None) -> str:
    held = ", ".join(token.scopes) if token and token.scopes else "none"
    if needed is None:
        return render("SCOPE_MISSING", f"{what} is not offered over HTTP to any scope (your scopes: {held})")
    return render("SCOPE_MISSING", f"{what} needs the scope '{needed}'; this client holds: {held}")


class HttpLayerServer(_LayerServer):
    """The layer server over HTTP: ``tools/list`` shows only the tools the caller's scopes reach, a call to
    another is a tool error naming the missing scope, resources and prompts need ``read``, and every call runs
    :func:`zonemark.writer.acting_for` the caller (its registered name and token id)."""

    async def _handle_list_tools(self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
                                 ) -> ListToolsResult:
        result = await super()._handle_list_tools(ctx, params)
        token = _caller(ctx.request)
        held = token.scopes if token else []
        return result.model_copy(update={"tools": [t for t in result.tools if allows(held, t.name)]})

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
                        ) -> CallToolResult | InputRequiredResult:
        token = _caller(context.request_context.request) if context is not None else None
        if token is None or not allows(token.scopes, name):
            if required_scope(name) is not None or token is None:
                raise ToolError(_scope_refusal(f"the tool {name[:100]!r}", required_scope(name), token))
        via = writer.Via(token.client_name, token.token_id) if token is not None else None
        with writer.acting_for(via):
            return await super().call_tool(name, arguments, context)

    def _require_read(self, ctx: ServerRequestContext[Any], what: str) -> None:
        token = _caller(ctx.request)
        if token is None or "read" not in token.scopes:
            raise MCPError(code=-32602, message=_scope_refusal(what, "read", token))

    def _reads(self, ctx: ServerRequestContext[Any]) -> bool:
        token = _caller(ctx.request)
        return token is not None and "read" in token.scopes

    async def _handle_list_resources(self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
                                     ) -> ListResourcesResult:
        return await super()._handle_list_resources(ctx, params) if self._reads(ctx) else ListResourcesResult(
            resources=[])

    async def _handle_list_resource_templates(self, ctx: ServerRequestContext[Any],
                                              params: PaginatedRequestParams | None) -> ListResourceTemplatesResult:
        if self._reads(ctx):
            return await super()._handle_list_resource_templates(ctx, params)
        return ListResourceTemplatesResult(resource_templates=[])

    async def _handle_read_resource(self, ctx: ServerRequestContext[Any], params: ReadResourceRequestParams
                                    ) -> ReadResourceResult | InputRequiredResult:
        self._require_read(ctx, "reading a resource")
        return await super()._handle_read_resource(ctx, params)

    async def _handle_list_prompts(self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
                                   ) -> ListPromptsResult:
        return await super()._handle_list_prompts(ctx, params) if self._reads(ctx) else ListPromptsResult(prompts=[])

    async def _handle_get_prompt(self, ctx: ServerRequestContext[Any], params: GetPromptRequestParams
                                 ) -> GetPromptResult | InputRequiredResult:
        self._require_read(ctx, "a prompt")
        return await super()._handle_get_prompt(ctx, params)


# -- the pairing page ----------------------------------------------------------------------------------------

PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; "
                               "base-uri 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
CSRF_COOKIE = "zonemark_pair"
#: The scopes the pairing form ticks at first; the owner may tick more of those asked, or fewer.
DEFAULT_GRANT = ("read", "append")
SCOPE_WORDS = {"read": "read every file, search, export", "append": "add journal entries to [P4] zones",
               "propose": "propose changes to [P3] zones for you to apply", "edit": "rewrite [P5] zones and set "
               "module states"}


def _page(title: str, body: str, status: int = 200, cookie: str | None = None) -> HTMLResponse:
    text = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
            f'content="width=device-width, initial-scale=1"><title>{html.escape(title)}</title><style>'
            "body{font:16px/1.5 system-ui,sans-serif;max-width:34em;margin:2em auto;padding:0 1em}"
            "dt{font-weight:600}input[name=code]{font:1.4em monospace;letter-spacing:.1em;width:10em}"
            ".error{color:#a00;font-weight:600}button{font-size:1em;margin-right:.5em}"
            f"</style></head><body><h1>{html.escape(title)}</h1>{body}</body></html>")
    response = HTMLResponse(text, status_code=status, headers=PAGE_HEADERS)
    if cookie is not None:
        response.set_cookie(CSRF_COOKIE, cookie, max_age=int(PENDING_TTL), path=PAIR_PATH, httponly=True,
                            samesite="strict", secure=False)
    return response


def _form(request_id: str, pending: _Pending, error: str | None = None) -> str:
    redirect = urlsplit(str(pending.params.redirect_uri))
    where = redirect.hostname or redirect.scheme + ":"
    boxes = "".join(f'<label><input type="checkbox" name="grant" value="{html.escape(s)}"'
                    f'{" checked" if s in DEFAULT_GRANT else ""}> {html.escape(s)}: '
                    f"{html.escape(SCOPE_WORDS.get(s, s))}</label><br>" for s in pending.scopes)
    notice = f'<p class="error" role="alert">{html.escape(error)}</p>' if error else ""
    return (f"<p>An app asks to use this zonemark layer. Approve it only if you started this just now.</p>"
            f"<dl><dt>App</dt><dd>{html.escape(pending.client_name)}</dd>"
            f"<dt>Sends you back to</dt><dd>{html.escape(where)}</dd>"
            f"<dt>Asks for</dt><dd>{html.escape(', '.join(pending.scopes) or 'none')}</dd></dl>{notice}"
            f'<form method="post" action="{PAIR_PATH}">'
            f"<fieldset><legend>Allow</legend>{boxes}</fieldset>"
            f'<input type="hidden" name="request" value="{html.escape(request_id)}">'
            f'<input type="hidden" name="csrf" value="{html.escape(pending.csrf)}">'
            f'<p><label>Pairing code (printed by <code>zonemark mcp … --http</code> or '
            f'<code>zonemark access LAYER pair</code>)<br><input name="code" autocomplete="off" '
            f'autocapitalize="characters" spellcheck="false" maxlength="20" autofocus></label></p>'
            f'<p><button type="submit" name="decision" value="approve">Approve</button>'
            f'<button type="submit" name="decision" value="deny">Deny</button></p></form>')


@dataclass
class PairingPage:
    """``GET /pair?request=ID`` shows the form; ``POST /pair`` checks the CSRF token (form and cookie), the
    Origin, and the pairing code (:meth:`AccessStore.try_pairing_code`)."""

    provider: LayerProvider
    security: TransportSecurityMiddleware
    origin: str

    async def handle(self, request: Request) -> Response:
        refused = await self.security.validate_request(request, is_post=False)
        if refused is not None:
            return refused
        if request.method == "GET":
            request_id = request.query_params.get("request", "")
            pending = self._pending(request_id)
            if pending is None:
                return self._gone()
            return _page("Approve an app", _form(request_id, pending), cookie=pending.csrf)
        origin = request.headers.get("origin")
        if origin is not None and origin != self.origin:
            return _page("Refused", "<p>The form was sent from another site; nothing was approved.</p>", 403)
        try:
            form = await request.form()
        except Exception:
            return _page("Refused", "<p>The form could not be read.</p>", 400)
        fields = {k: v for k in ("request", "csrf", "code", "decision") if isinstance(v := form.get(k), str)}
        ticked = {v for v in form.getlist("grant") if isinstance(v, str)}
        request_id = fields.get("request", "")
        pending = self._pending(request_id)
        if pending is None:
            return self._gone()
        cookie = request.cookies.get(CSRF_COOKIE, "")
        sent = fields.get("csrf", "")
        if not (hmac.compare_digest(sent.encode(), pending.csrf.encode())
                and hmac.compare_digest(cookie.encode(), pending.csrf.encode())):
            return _page("Refused", "<p>The form was not sent from this page (its check token does not match); "
                                    "nothing was approved. Start again from the app.</p>", 403)
        if fields.get("decision") == "deny":
            del self.provider.pending[request_id]
            params = pending.params
            return RedirectResponse(construct_redirect_uri(str(params.redirect_uri), error="access_denied",
                                                           state=params.state, iss=self.provider.issuer),
                                    status_code=303, headers={"Cache-Control": "no-store"})
        granted = [s for s in pending.scopes if s in ticked]
        if not granted:
            return _page("Approve an app", _form(request_id, pending, "Tick at least one scope to allow."), 400)
        outcome = self.provider.store.try_pairing_code(fields.get("code", ""))
        if outcome.outcome == "wrong":
            return _page("Approve an app", _form(request_id, pending,
                                                 f"That is not the pairing code ({outcome.tries_left} "
                                                 f"{'try' if outcome.tries_left == 1 else 'tries'} left)."), 400)
        if outcome.outcome == "spent":
            return _page("No pairing code", "<p class=\"error\">No pairing code is valid now: a code lasts 10 "
                                            "minutes and 5 wrong tries. Run <code>zonemark access LAYER pair</code> "
                                            "for a fresh one, then start again from the app.</p>", 400)
        del self.provider.pending[request_id]
        return RedirectResponse(self.provider.approve(pending, granted), status_code=303,
                                headers={"Cache-Control": "no-store"})

    def _pending(self, request_id: str) -> _Pending | None:
        pending = self.provider.pending.get(request_id)
        if pending is None or pending.expires <= time.time():
            self.provider.pending.pop(request_id, None)
            return None
        return pending

    @staticmethod
    def _gone() -> Response:
        return _page("Unknown request", "<p>This authorization request is unknown or has expired (10 minutes). "
                                        "Start again from the app.</p>", 400)


# -- rate limits -------------------------------------------------------------------------------------------

@dataclass
class RateLimit:
    """ASGI middleware: at most :data:`RATE_LIMITS` requests a minute per client address on each limited path;
    over it, ``429`` with ``Retry-After``."""

    app: ASGIApp
    limits: dict[str, int] = field(default_factory=lambda: dict(RATE_LIMITS))
    seen: dict[tuple[str, str], deque[float]] = field(default_factory=dict)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        limit = self.limits.get(path)
        if limit is None or scope.get("method") == "OPTIONS":
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        key = (str(client[0]) if client else "?", path)
        now = time.monotonic()
        hits = self.seen.pop(key, None) or deque()
        while hits and hits[0] <= now - RATE_WINDOW:
            hits.popleft()
        self.seen[key] = hits  # most recent last: the oldest addresses are forgotten first
        while len(self.seen) > MAX_TRACKED_ADDRESSES:
            del self.seen[next(iter(self.seen))]
        if len(hits) >= limit:
            wait = max(1, int(hits[0] + RATE_WINDOW - now) + 1)
            response = JSONResponse({"error": "rate_limited", "error_description": f"at most {limit} requests a "
                                     f"minute to {path} from one address; retry in {wait} s"}, status_code=429,
                                    headers={"Retry-After": str(wait)})
            await response(scope, receive, send)
            return
        hits.append(now)
        await self.app(scope, receive, send)


# -- the app -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Endpoint:
    """Where the server answers: the issuer (the public origin), the MCP endpoint's URL, and what Host and
    Origin headers it accepts."""

    issuer: str
    resource: str
    security: TransportSecuritySettings


def endpoint(host: str, port: int, public_url: str | None) -> Endpoint:
    """The endpoint of a server bound to ``host:port``, reached at ``public_url`` (an origin, no path) when one is
    given; Host and Origin are accepted for loopback and for the public origin (DNS rebinding)."""
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    if public_url:
        parts = urlsplit(public_url)
        issuer = f"{parts.scheme}://{parts.netloc}"
        hosts += [parts.netloc, f"{parts.hostname}:*" if parts.port is None else parts.netloc]
        origins.append(issuer)
    else:
        shown = f"[{host}]" if ":" in host else host
        issuer = f"http://{shown}:{port}"
    return Endpoint(issuer, issuer + MCP_PATH,
                    TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                              allowed_origins=origins))


def check_public_url(public_url: str) -> str | None:
    """What is wrong with a ``--public-url`` (one line), or None: it is an http(s) origin without a path, query or
    fragment, and https unless it is loopback."""
    parts = urlsplit(public_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "--public-url must be an http(s) URL such as https://layer.example.org"
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username or parts.password:
        return "--public-url is the origin the proxy serves (https://host[:port]), without a path, query or user"
    if parts.scheme != "https" and parts.hostname not in LOOPBACK:
        return "--public-url must use https (TLS is the reverse proxy's or the tunnel's job)"
    return None


def build_app(root: str | os.PathLike[str], ep: Endpoint, store: AccessStore | None = None
              ) -> tuple[Starlette, LayerProvider]:
    """The ASGI app of the layer folder ``root`` at ``ep``: the SDK's Streamable HTTP app with its auth routes
    over :class:`LayerProvider`, the pairing page, and the rate limit around it all."""
    provider = LayerProvider(store or AccessStore(root), ep.issuer, ep.resource)
    auth = AuthSettings(issuer_url=ep.issuer, resource_server_url=ep.resource, validate_token_resource=True,  # type: ignore[arg-type]
                        client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=list(SCOPES),
                                                                              default_scopes=["read"]),
                        revocation_options=RevocationOptions(enabled=True), required_scopes=None)
    server = build_server(root, server_class=HttpLayerServer, auth=auth, auth_server_provider=provider)
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=ep.security,
                                     max_request_body_size=MAX_REQUEST_BYTES)
    page = PairingPage(provider, TransportSecurityMiddleware(ep.security), ep.issuer)
    app.router.routes.append(Route(PAIR_PATH, endpoint=_limited_form(page.handle), methods=["GET", "POST"]))
    app.add_middleware(RateLimit)
    return app, provider


def _limited_form(handler: Callable[[Request], Awaitable[Response]]) -> ASGIApp:
    async def endpoint(scope: Scope, receive: Receive, send: Send) -> None:
        response = await handler(Request(scope, receive))
        await response(scope, receive, send)
    return RequestBodyLimitMiddleware(endpoint, MAX_FORM_BYTES)
