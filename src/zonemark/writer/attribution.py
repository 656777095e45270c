"""Which client a write is made for, recorded beside its actor (issue 20 §2).

A face that serves several clients — the MCP server over HTTP — runs each call inside :func:`acting_for` with the
client's registered name and the id of the token it presented; the store writes them into the history record of
every write made in that call, and a proposal into its record (``via``).  The actor stays what the face passes
(``ai``); this only says through whom.  A write outside :func:`acting_for` records nothing more.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

MAX_VIA_CHARS = 120


@dataclass(frozen=True)
class Via:
    """The client a write is made for: its registered name and the public id of its token."""

    client: str
    token_id: str

    def label(self) -> str:
        """``name (token id)``, one line of printable text at most :data:`MAX_VIA_CHARS` long."""
        name = "".join(ch if ch.isprintable() else "?" for ch in self.client)[:80]
        token = "".join(ch for ch in self.token_id if ch.isalnum())[:32]
        return f"{name} ({token})"[:MAX_VIA_CHARS]


_VIA: contextvars.ContextVar[Via | None] = contextvars.ContextVar("zonemark_via", default=None)


@contextmanager
def acting_for(via: Via | None) -> Iterator[None]:
    """Record ``via`` with every write made inside the block (none when None)."""
    token = _VIA.set(via)
    try:
        yield
    finally:
        _VIA.reset(token)


def current_via() -> str | None:
    """The label of the client the current write is made for, or None."""
    via = _VIA.get()
    return None if via is None else via.label()
