"""The ``zonemark`` command line.

Every failure is one clear line on stderr and a non-zero exit, never a
traceback: 1 means "the files have errors" (or a write was refused), 2 means
"the command could not run" (bad flag, missing path, unreadable file).
"""

from __future__ import annotations

import argparse
import os
import sys

from .. import STANDARD_VERSION, __version__
from . import core, layer, mcp, scaffold, search, write
from .common import EXIT_FINDINGS, CliError


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse's default prints usage too)
        raise CliError(f"{self.prog}: {message} (see '{self.prog} --help')")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="zonemark",
                description="Check, outline and safely edit files of the IllAIra Markdown Standard v1.13.")
    p.add_argument("--version", action="version", version=f"zonemark {__version__} (implements the IllAIra Markdown Standard {STANDARD_VERSION})")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    core.register(sub)
    layer.register(sub)
    write.register(sub)
    search.register(sub)
    scaffold.register(sub)
    mcp.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        # Undecodable bytes of a file (kept as lone surrogates, §1) print as \udcXX escapes —
        # valid inside JSON strings — instead of crashing the output.
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            raise CliError("zonemark: give a command (check, parse, outline, status, graph, append, …);"
                           " see 'zonemark --help'")
        return args.func(args)
    except CliError as exc:
        print(str(exc), file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print("zonemark: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FINDINGS


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
