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


def run_mcp(args: argparse.Namespace) -> int:
    folder = layer_folder(args.layer, "mcp", confined=True)  # the server walks the folder confined (W5)
    from ..mcp.serve import MissingExtra, serve
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


def _stop_now(_signum: int, _frame: object) -> None:
    print("zonemark mcp: stopped", file=sys.stderr)
    sys.stderr.flush()
    os._exit(130)


#: The commands of this module, in the order ``zonemark --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    Command("mcp", "serve a layer folder to AI agents over MCP (stdio; needs zonemark[mcp])",
            _arguments_mcp, run_mcp,
            description="Serve LAYER to an MCP client over stdin/stdout. Every write acts as "
                        "'ai' and goes through the zones: [P4] append, [P5] edit, [P3] "
                        "proposals, never [P1]/[P2]."),
)

__all__ = ["COMMANDS", "run_mcp"]
