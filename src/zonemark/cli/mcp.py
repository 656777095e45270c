"""``zonemark mcp LAYER``: serve a layer to AI agents over the Model Context Protocol (stdio).

The server is a separate face (:mod:`zonemark.mcp`); this command only checks its argument
and starts it.  Nothing of it, or of the SDK, is imported until the command runs.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

from .common import EXIT_OK, EXIT_USAGE, CliError, Command, layer_folder


def _arguments_mcp(m: argparse.ArgumentParser) -> None:
    m.add_argument("layer", metavar="LAYER", help="the layer folder")
    m.add_argument("--http", action="store_true",
                   help="serve over Streamable HTTP at /mcp with OAuth (always on) instead of stdio")
    m.add_argument("--host", default="127.0.0.1", help="with --http: the address to bind (default 127.0.0.1; "
                                                        "any other needs --public-url)")
    m.add_argument("--port", type=int, default=8848, help="with --http: the port (default 8848; 0 picks a free "
                                                          "one, and the first stdout line is the endpoint's URL)")
    m.add_argument("--public-url", metavar="URL", help="with --http: the https origin clients reach the server "
                                                       "at (a reverse proxy or tunnel in front of it)")


def run_mcp(args: argparse.Namespace) -> int:
    folder = layer_folder(args.layer, "mcp", confined=True)  # the server walks the folder confined (W5)
    from ..mcp.serve import MissingExtra, serve
    if args.http:
        return _run_http(folder, args)
    if args.host != "127.0.0.1" or args.port != 8848 or args.public_url is not None:
        raise CliError("zonemark mcp: --host, --port and --public-url go with --http", EXIT_USAGE)
    if sys.stdin is not None and sys.stdin.isatty():  # a person at a terminal, not an MCP client
        # The SDK reads stdin in a thread that a terminal read keeps blocked, so Ctrl-C alone would not end the
        # process.  Every write is atomic (temporary file, rename), so stopping at once loses nothing.
        signal.signal(signal.SIGINT, _stop_now)
        print(f"zonemark mcp: serving {args.layer} to an MCP client over stdin/stdout (register it in the client's "
              f"configuration, see the README); Ctrl-C stops it", file=sys.stderr)
    try:
        serve(folder)
    except MissingExtra as exc:
        raise CliError(f"zonemark mcp: {exc}", EXIT_USAGE) from None
    return EXIT_OK


def _run_http(folder: object, args: argparse.Namespace) -> int:
    from ..mcp.serve import MissingExtra, serve_http
    if not 0 <= args.port <= 65535:
        raise CliError(f"zonemark mcp: --port {args.port} is not a port (0 to 65535)", EXIT_USAGE)
    try:
        serve_http(folder, host=args.host, port=args.port, public_url=args.public_url)  # type: ignore[arg-type]
    except MissingExtra as exc:
        raise CliError(f"zonemark mcp: {exc}", EXIT_USAGE) from None
    except ValueError as exc:
        raise CliError(f"zonemark mcp: {exc}", EXIT_USAGE) from None
    except OSError as exc:
        raise CliError(f"zonemark mcp: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}",
                       EXIT_USAGE) from None
    return EXIT_OK


def _stop_now(_signum: int, _frame: object) -> None:
    print("zonemark mcp: stopped", file=sys.stderr)
    sys.stderr.flush()
    os._exit(130)


#: The commands of this module, in the order ``zonemark --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    Command("mcp", "serve a layer folder to AI agents over MCP (stdio, or --http; needs zonemark[mcp])",
            _arguments_mcp, run_mcp,
            description="Serve LAYER to an MCP client over stdin/stdout. Every write acts as "
                        "'ai' and goes through the zones: [P4] append, [P5] edit, [P3] "
                        "proposals, never [P1]/[P2]. With --http, serve it at /mcp over Streamable "
                        "HTTP instead, behind OAuth and bearer tokens with scopes (see zonemark access)."),
)

__all__ = ["COMMANDS", "run_mcp"]
