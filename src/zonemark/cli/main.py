"""The ``zonemark`` command line.

Every failure is one clear line on stderr and a non-zero exit, never a
traceback: 1 means "the files have errors" (or a write was refused), 2 means
"the command could not run" (bad flag, missing path, unreadable file).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from typing import NoReturn

from .. import STANDARD_VERSION, __version__
from . import (access, context, core, gitsync, imports, interchange, layer, lsp, mcp, merge, review, scaffold, search,
               write)
from .common import EXIT_FINDINGS, EXIT_USAGE, CliError, add_commands


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2 (argparse's default prints usage too)
        raise CliError(f"{self.prog}: {message} (see '{self.prog} --help')")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="zonemark",
                description="Check, outline and safely edit files of the IllAIra Markdown Standard v1.13.")
    p.add_argument("--version", action="version",
                   version=f"zonemark {__version__} (implements the IllAIra Markdown Standard {STANDARD_VERSION})")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for group in (core, layer, write, search, scaffold, mcp, access, lsp, context, interchange, imports, review, merge,
                  gitsync):
        add_commands(sub, group.COMMANDS)  # each module's table of commands, in the order --help lists them
    return p


def main(argv: list[str] | None = None) -> int:
    """Run one command; ``argv`` None means the process's own arguments (the ``zonemark`` entry point)."""
    if argv is not None:  # called in a process that goes on (tests, a program): leave the collector alone
        return _main(argv)
    # A one-shot process: the cyclic collector would only walk the objects of the imports, of the
    # parse and of the index over and over, and once more at exit (together ~15 ms of a 120 ms
    # append); everything is freed when the process ends.
    gc.disable()
    try:
        return _main(None)
    finally:
        gc.freeze()


def _main(argv: list[str] | None) -> int:
    for stream in (sys.stdout, sys.stderr):
        # Undecodable bytes of a file (kept as lone surrogates, §1) print as \udcXX escapes —
        # valid inside JSON strings — instead of crashing the output.
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:
            # A command that takes FILE operands after its options (``trace LAYER --json FILE``)
            # collects what argparse leaves over in ``operands``; for any other command, and for
            # anything that looks like an option, it is the usual error.
            operands = getattr(args, "operands", None)
            if operands is None or any(x.startswith("-") and x != "-" for x in extra):
                parser.error("unrecognized arguments: " + " ".join(extra))
            operands.extend(extra)
        if not getattr(args, "func", None):
            raise CliError("zonemark: give a command (check, parse, outline, status, graph, append, context,"
                           " ingest, trace, …); see 'zonemark --help'")
        return gitsync.run_with_commits(args, args.func)
    except CliError as exc:
        print(_message_line(str(exc)), file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print("zonemark: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FINDINGS
    except OSError as exc:  # a path the system refuses (a name too long, a loop of links) where none was expected
        where = f": {exc.filename}" if exc.filename is not None else ""
        print(_message_line(f"zonemark: {exc.strerror or exc}{where}"), file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # a defect: still one line and exit 2, never a traceback
        print(_message_line(f"zonemark: internal error ({exc.__class__.__name__}: {exc})"), file=sys.stderr)
        return EXIT_USAGE


#: The longest message printed: a value it quotes (a path, an id, a query) is cut in the middle beyond it.
MAX_MESSAGE = 500


def _message_line(message: str) -> str:
    """``message`` as one readable line: line breaks as ``\\n``, control characters and invalid bytes as
    ``\\xNN``, and a message longer than :data:`MAX_MESSAGE` cut in the middle (its start, which says
    what failed, and its end, which says what to do, are kept)."""
    from ..core.text import escape_controls, printable
    line = escape_controls(printable(message).replace("\r", "\\r").replace("\n", "\\n"))
    if len(line) <= MAX_MESSAGE:
        return line
    head = MAX_MESSAGE * 3 // 5
    return line[:head] + " … " + line[-(MAX_MESSAGE - head - 3):]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
