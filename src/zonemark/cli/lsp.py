"""``zonemark lsp``: the language server over stdio, for editors (needs the ``zonemark[lsp]`` extra).

The server is a separate face (:mod:`zonemark.lsp`); this command only starts it.  Nothing of
it, or of pygls, is imported until the command runs.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

from .common import EXIT_OK, EXIT_USAGE, CliError, Command


def _arguments_lsp(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stdio", action="store_true",
                   help="accepted for editors that pass it (stdio is the only transport)")


def run_lsp(args: argparse.Namespace) -> int:
    from ..lsp.serve import MissingExtra, serve
    if sys.stdin is not None and sys.stdin.isatty():  # a person at a terminal, not an editor
        # stdin is read in a worker thread that a terminal read keeps blocked: stop at once on Ctrl-C
        # (the server writes no file, so nothing is lost).
        signal.signal(signal.SIGINT, _stop_now)
        print("zonemark lsp: speaking the Language Server Protocol on stdin/stdout; start it from your editor"
              " (README: 'In your editor'); Ctrl-C stops it", file=sys.stderr)
    try:
        serve()
    except MissingExtra as exc:
        raise CliError(f"zonemark lsp: {exc}", EXIT_USAGE) from None
    return EXIT_OK


def _stop_now(_signum: int, _frame: object) -> None:
    print("zonemark lsp: stopped", file=sys.stderr)
    sys.stderr.flush()
    os._exit(130)


#: The commands of this module, in the order ``zonemark --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    Command("lsp", "run the language server on stdin/stdout (for editors; needs zonemark[lsp])",
            _arguments_lsp, run_lsp,
            description="Speak the Language Server Protocol on stdin/stdout. Editors start it; "
                        "see the README section 'In your editor'."),
)

__all__ = ["COMMANDS", "run_lsp"]
