"""``zonemark review LAYER``: the user's review page, served on 127.0.0.1 (extra ``zonemark[review]``).

The page is a separate face (:mod:`zonemark.review`); this command only checks its arguments
and starts it through :mod:`zonemark.review.serve`.  Nothing of it, nor Starlette or uvicorn,
is imported until the command runs.  The first line on stdout is the page's address with its
token; Ctrl-C stops the server.
"""

from __future__ import annotations

import argparse
import sys

from .common import EXIT_OK, EXIT_USAGE, CliError, Command, layer_folder


def _port(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise CliError(f"zonemark review: --port takes a number from 0 to 65535 (0 picks a free one), not {text!r}",
                       EXIT_USAGE) from None
    if not 0 <= value <= 65535:
        raise CliError(f"zonemark review: --port takes a number from 0 to 65535 (0 picks a free one), not {value}",
                       EXIT_USAGE)
    return value


def _arguments_review(r: argparse.ArgumentParser) -> None:
    r.add_argument("layer", metavar="LAYER", help="the layer folder")
    r.add_argument("--port", default="0", metavar="PORT", help="the port on 127.0.0.1 (default 0: a free one)")
    r.add_argument("--open", action="store_true", help="open the page in the default browser")


def run_review(args: argparse.Namespace) -> int:
    port = _port(args.port)
    folder = layer_folder(args.layer, "review")
    from ..review.serve import MissingExtra, PortUnavailable, serve
    try:
        serve(folder, port=port, open_browser=args.open)
    except MissingExtra as exc:
        raise CliError(f"zonemark review: {exc}", EXIT_USAGE) from None
    except PortUnavailable as exc:
        raise CliError(f"zonemark review: {exc}", EXIT_USAGE) from None
    except KeyboardInterrupt:
        pass
    print("zonemark review: stopped", file=sys.stderr)
    return EXIT_OK


#: The commands of this module, in the order ``zonemark --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    Command("review", "the review page of a layer in your browser (127.0.0.1 only; needs zonemark[review])",
            _arguments_review, run_review,
            description="Serve the review page of LAYER on 127.0.0.1: what the AI wrote (undo), its proposals "
                        "(apply, reject), the modules (toggle), the graph with a pasted trace lit up, the "
                        "diagnostics. The first line printed is the address, with a token for this run only."),
)

__all__ = ["COMMANDS", "run_review"]
