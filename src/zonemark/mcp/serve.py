"""Start the MCP server of a layer over stdio (what ``zonemark mcp LAYER`` runs).

The SDK is imported here, when the server starts, and only here: a missing ``mcp`` extra
becomes :class:`MissingExtra` with the one line that says how to install it.

The SDK's stdio transport reads each line with a strict JSON parser that refuses a string
escaping a lone surrogate (``"\\ud800"``, which JSON allows and JavaScript's ``JSON.stringify``
writes), and drops such a line unanswered: the client would wait for ever.  :func:`_reread`
reads that line again with the standard library's parser, so the call reaches the tools and
gets the ``BAD_ARGUMENT`` every string that is not Unicode gets.  A line that is still not JSON
(malformed, or nested too deeply) or not a JSON-RPC message, which the SDK would drop unanswered,
is answered with the JSON-RPC error for it (:func:`_unreadable`), and the server reads on.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the SDK is imported when the server starts, never at load
    import mcp_types
    from mcp.server.mcpserver import MCPServer
    from mcp.shared.message import SessionMessage

#: Top-level modules of the extra: a failed import of one of them means the extra is missing.
SDK_MODULES = frozenset({"mcp", "mcp_types", "pydantic", "pydantic_core", "anyio", "starlette", "httpx2"})


class MissingExtra(Exception):
    """The ``mcp`` extra is not installed."""


def serve(root: str | os.PathLike[str]) -> None:
    """Serve the layer folder ``root`` over stdio until the client closes the connection."""
    try:
        import anyio

        from .server import build_server
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in SDK_MODULES:
            raise MissingExtra("the MCP server needs the 'mcp' extra: pip install 'zonemark[mcp]'") from None
        raise
    anyio.run(_serve_stdio, build_server(root))


async def _serve_stdio(server: MCPServer) -> None:
    """:meth:`MCPServer.run_stdio_async`, with every line the transport could not read given a second reading."""
    import anyio
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    lowlevel = server._lowlevel_server  # what run_stdio_async runs; the SDK offers no other handle
    async with stdio_server() as (read_stream, write_stream):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def forward() -> None:
            async with send:
                async for item in read_stream:
                    item = _reread(item)
                    if isinstance(item, Exception):  # W44: answered, never dropped
                        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                            await write_stream.send(SessionMessage(_unreadable(item)))
                        continue
                    await send.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(forward)
            await lowlevel.run(receive, write_stream, lowlevel.create_initialization_options())


def _unreadable(item: Exception) -> mcp_types.JSONRPCError:
    """The JSON-RPC error that answers a line the server cannot read (W44): -32700 (parse error) when it is not
    JSON — malformed, or nested deeper than a parser follows — else -32600 (invalid request), with ``id`` null
    (JSON-RPC 2.0 §5.1: the id could not be read).  The message is short whatever the line's size: it never
    quotes the line."""
    import mcp_types as types

    errors = _errors(item)
    first = errors[0] if errors else {}
    if not errors or first.get("type") == "json_invalid":
        code, text = types.PARSE_ERROR, f"Parse error: the line is not JSON ({str(first.get('msg', item))[:160]})"
    else:
        code, text = types.INVALID_REQUEST, "Invalid request: the line is JSON but not a JSON-RPC 2.0 message"
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=text))


def _errors(item: Exception) -> list[dict[str, Any]]:
    """The errors a validation error of the transport lists (none for any other exception)."""
    method = getattr(item, "errors", None)
    return list(method()) if callable(method) else []


def _reread(item: SessionMessage | Exception) -> SessionMessage | Exception:
    """A line the transport refused as invalid JSON, read by :mod:`json` (which keeps lone surrogates), as the
    message it holds; anything else as it came."""
    if not isinstance(item, Exception) or not hasattr(item, "errors"):
        return item
    try:
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        [error] = _errors(item)
        if error.get("type") != "json_invalid":
            return item
        raw = error.get("input")
        line = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        if not isinstance(line, str):
            return item
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(json.loads(line), by_name=False))
    except Exception:  # not JSON to the standard library either (or not a message): the SDK's own handling
        return item


def serve_http(root: str | os.PathLike[str], *, host: str = "127.0.0.1", port: int = 8848,
               public_url: str | None = None) -> None:
    """Serve the layer folder ``root`` over Streamable HTTP at ``/mcp`` with OAuth (:mod:`.http`) until stopped.

    The socket is bound first, so ``port`` 0 is a free port known before the app is built; the first line on
    stdout is the endpoint's URL, and a fresh pairing code goes to stderr.  Raises ``ValueError`` (one line) for
    a non-loopback ``host`` without ``public_url`` or a ``public_url`` that is not an origin, ``OSError`` when the
    port cannot be bound."""
    import socket
    import sys

    try:
        import uvicorn

        from .http import LOOPBACK, build_app, check_public_url, endpoint
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in SDK_MODULES | {"uvicorn"}:
            raise MissingExtra("the MCP server needs the 'mcp' extra: pip install 'zonemark[mcp]'") from None
        raise
    if public_url is not None and (problem := check_public_url(public_url)):
        raise ValueError(problem)
    if host not in LOOPBACK and public_url is None:
        raise ValueError(f"--host {host} is not loopback: give --public-url, the https origin clients reach "
                         f"(through the reverse proxy or tunnel that holds the TLS)")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    bound = sock.getsockname()[1]
    from ..access import AccessError
    ep = endpoint(host, bound, public_url)
    try:
        app, provider = build_app(root, ep)
        provider.store.prune()
        code = provider.store.new_pairing_code()
    except AccessError as exc:
        sock.close()
        raise ValueError(str(exc)) from None
    print(ep.resource, flush=True)
    print(f"zonemark mcp: serving {root} over HTTP at {ep.resource} (bound to {host}:{bound}); "
          f"pairing code {code} (10 minutes, 5 tries; 'zonemark access LAYER pair' makes a fresh one); "
          f"Ctrl-C stops it", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", server_header=False,
                            proxy_headers=False, timeout_graceful_shutdown=2)
    uvicorn.Server(config).run(sockets=[sock])
