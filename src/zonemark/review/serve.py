"""Start the review page of a layer (what ``zonemark review LAYER`` runs).

The server listens on 127.0.0.1 only — the socket is bound here, before anything else, so
the address printed is already answering — with a random token made for this run. The first
line on ``out`` is the page's address, token included; nothing is opened unless
``open_browser``, and then the browser is given a private local page that leads to the address,
never the address itself (:func:`open_page`).  Starlette and uvicorn (the ``review`` extra) are imported here, when the
server starts, and only here: a missing extra becomes :class:`MissingExtra` with the line that
says how to install it.
"""

from __future__ import annotations

import html
import os
import secrets
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TextIO

TYPE_CHECKING = False  # uvicorn is imported when the server starts; its type only for the type checker
if TYPE_CHECKING:
    import uvicorn

LOOPBACK = "127.0.0.1"
#: Top-level modules of the extra: a failed import of one of them means the extra is missing.
EXTRA_MODULES = frozenset({"starlette", "uvicorn", "anyio", "h11", "click"})


class MissingExtra(Exception):
    """The ``review`` extra is not installed."""


class PortUnavailable(Exception):
    """The port asked for cannot be listened on (in use, or not allowed)."""


def new_token() -> str:
    """A fresh per-run token: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


def bind_loopback(port: int) -> socket.socket:
    """A listening TCP socket on 127.0.0.1:``port`` (0: a free port the system picks)."""
    if not 0 <= port <= 65535:
        raise PortUnavailable(f"port {port} is not a TCP port (0-65535; 0 picks a free one)")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((LOOPBACK, port))
        sock.listen(64)
    except OSError as exc:
        sock.close()
        raise PortUnavailable(f"cannot listen on {LOOPBACK}:{port}: {exc.strerror or exc}"
                              "; give another --port, or --port 0 for a free one") from None
    sock.set_inheritable(True)
    return sock


def page_url(port: int, token: str) -> str:
    return f"http://{LOOPBACK}:{port}/?token={token}"


def serve(root: str | os.PathLike[str], *, port: int = 0, open_browser: bool = False,
          out: TextIO | None = None) -> None:
    """Serve the review page of the layer folder ``root`` until interrupted (Ctrl-C)."""
    try:
        import uvicorn

        from .app import Review, build_app
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in EXTRA_MODULES:
            raise MissingExtra("the review page needs the 'review' extra: pip install 'zonemark[review]'") from None
        raise
    out = sys.stdout if out is None else out
    sock = bind_loopback(port)
    actual = sock.getsockname()[1]
    token = new_token()
    review = Review(Path(root), token)
    app = build_app(root, token=token, port=actual, review=review)
    url = page_url(actual, token)
    out.write(url + "\n")
    out.flush()
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", server_header=False,
                            date_header=False)
    server = _stop_at_once(review.abandon_pages)(config)
    launch: Path | None = None
    try:
        if open_browser:  # the folder is known here before the browser starts: a Ctrl-C at any point removes it
            launch = Path(tempfile.mkdtemp(prefix="zonemark-review-"))
            open_page(url, folder=launch)
        server.run(sockets=[sock])
    finally:
        sock.close()
        review.end_visit()
        if launch is not None:
            shutil.rmtree(launch, ignore_errors=True)


def _stop_at_once(on_stop: Callable[[], None]) -> type[uvicorn.Server]:
    """uvicorn's server, stopping at the first Ctrl-C (RV25): it does not wait for the open connections.

    A page is built in a daemon thread, so a slow page does not hold the process; an action runs in a worker
    thread, which the interpreter waits for on the way out, so a write in progress still ends whole.  ``on_stop``
    runs first, on the server's loop: it answers the pages still being built."""
    import uvicorn

    class StopAtOnce(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            super().handle_exit(sig, frame)
            self.force_exit = True

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            on_stop()
            await super().shutdown(sockets)

    return StopAtOnce


def open_page(url: str, opener: Callable[[str], object] | None = None, *, folder: Path | None = None) -> Path:
    """Open ``url`` in the browser without putting it on any command line (W41).

    A browser is started with the address it opens in its arguments, which every local user reads
    with ``ps``; the token must not be there.  The browser is given instead a page only the user can
    read — mode 0600, in a private temporary folder (0700) — that sends it on to ``url``; the folder
    is removed when the server stops.  ``opener`` (``webbrowser.open`` by default) gets the page's
    ``file:`` address.  ``folder``: the private folder to use (made with ``tempfile.mkdtemp``, so 0700), which the
    caller removes; by default one is made.  Returns the page's path.
    """
    if folder is None:
        folder = Path(tempfile.mkdtemp(prefix="zonemark-review-"))
    page = folder / "open.html"
    target = html.escape(url, quote=True)
    fd = os.open(page, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(f'<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer">'
                     f'<meta http-equiv="refresh" content="0;url={target}"><title>zonemark review</title>'
                     f'<a href="{target}">zonemark review</a>\n')
    if opener is None:
        import webbrowser
        opener = webbrowser.open
    try:
        opener(page.as_uri())  # webbrowser waits for a browser command that does not go to the background
    except BaseException:  # Ctrl-C while the browser starts: the private page goes too
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return page


__all__ = ["LOOPBACK", "MissingExtra", "PortUnavailable", "bind_loopback", "new_token", "open_page", "page_url",
           "serve"]
