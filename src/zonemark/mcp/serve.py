"""Start the MCP server of a layer over stdio (what ``zonemark mcp LAYER`` runs).

The SDK is imported here, when the server starts, and only here: a missing ``mcp`` extra
becomes :class:`MissingExtra` with the one line that says how to install it.
"""

from __future__ import annotations

#: Top-level modules of the extra: a failed import of one of them means the extra is missing.
SDK_MODULES = frozenset({"mcp", "mcp_types", "pydantic", "pydantic_core", "anyio", "starlette", "httpx2"})


class MissingExtra(Exception):
    """The ``mcp`` extra is not installed."""


def serve(root) -> None:
    """Serve the layer folder ``root`` over stdio until the client closes the connection."""
    try:
        from .server import build_server
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in SDK_MODULES:
            raise MissingExtra("the MCP server needs the 'mcp' extra: pip install 'zonemark[mcp]'") from None
        raise
    build_server(root).run("stdio")
