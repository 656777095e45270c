"""Start the language server over stdio (what ``zonemark lsp`` runs).

pygls and lsprotocol are imported here, when the server starts: a missing ``lsp`` extra
becomes :class:`MissingExtra` with the one line that says how to install it.
"""

from __future__ import annotations

import logging
import sys

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
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineFormatter("zonemark lsp: %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)
    build_server().start_io()


class OneLineFormatter(logging.Formatter):
    """Log records as one line each on stderr (the editor's log of the server): an exception
    becomes its type and message, never a traceback — a malformed message from a client is
    bad input, reported like any other."""

    def format(self, record: logging.LogRecord) -> str:
        exc = record.exc_info[1] if record.exc_info else None
        plain = logging.makeLogRecord({**record.__dict__, "exc_info": None, "exc_text": None, "stack_info": None})
        text = super().format(plain)
        if exc is not None:
            text += f" ({type(exc).__name__}: {exc})"
        return " ".join(text.split())
