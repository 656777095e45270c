"""Start the MCP server of a layer over stdio (what ``zonemark mcp LAYER`` runs).

The SDK is imported here, when the server starts, and only here: a missing ``mcp`` extra
becomes :class:`MissingExtra` with the one line that says how to install it.

The SDK's stdio transport reads each line with a strict JSON parser that refuses a string
escaping a lone surrogate (``"\\ud800"``, which JSON allows and JavaScript's ``JSON.stringify``
writes), and drops such a line unanswered: the client would wait for ever.  :func:`_reread`
reads that line again with the standard library's parser, so the call reaches the tools and
gets the ``BAD_ARGUMENT`` every string that is not Unicode gets; a line that is not JSON at
all is left to the SDK, as before.
"""

from __future__ import annotations

import json

#: Top-level modules of the extra: a failed import of one of them means the extra is missing.
SDK_MODULES = frozenset({"mcp", "mcp_types", "pydantic", "pydantic_core", "anyio", "starlette", "httpx2"})


class MissingExtra(Exception):
    """The ``mcp`` extra is not installed."""


def serve(root) -> None:
    """Serve the layer folder ``root`` over stdio until the client closes the connection."""
    try:
        import anyio

        from .server import build_server
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in SDK_MODULES:
            raise MissingExtra("the MCP server needs the 'mcp' extra: pip install 'zonemark[mcp]'") from None
        raise
    anyio.run(_serve_stdio, build_server(root))


async def _serve_stdio(server) -> None:
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
                    await send.send(_reread(item))

        async with anyio.create_task_group() as group:
            group.start_soon(forward)
            await lowlevel.run(receive, write_stream, lowlevel.create_initialization_options())


def _reread(item):
    """A line the transport refused as invalid JSON, read by :mod:`json` (which keeps lone surrogates), as the
    message it holds; anything else as it came."""
    if not isinstance(item, Exception) or not hasattr(item, "errors"):
        return item
    try:
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        [error] = item.errors()
        if error.get("type") != "json_invalid":
            return item
        raw = error.get("input")
        line = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(json.loads(line), by_name=False))
    except Exception:  # not JSON to the standard library either (or not a message): the SDK's own handling
        return item
