"""Start the language server over stdio (what ``zonemark lsp`` runs).

pygls and lsprotocol are imported here, when the server starts: a missing ``lsp`` extra
becomes :class:`MissingExtra` with the one line that says how to install it.
"""

from __future__ import annotations

#: Top-level modules of the extra: a failed import of one of them means the extra is missing.
EXTRA_MODULES = frozenset({"pygls", "lsprotocol", "cattrs", "attrs"})


class MissingExtra(Exception):
    """The ``lsp`` extra is not installed."""


def serve() -> None:
    """Serve over stdin/stdout until the client says exit (or closes the pipe)."""
    try:
        from .server import build_server
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in EXTRA_MODULES:
            raise MissingExtra("the language server needs the 'lsp' extra: pip install 'zonemark[lsp]'") from None
        raise
    build_server().start_io()
