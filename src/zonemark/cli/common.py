"""What every ``zonemark`` command shares: its one-line error and its exit codes.

0 fine; 1 findings (errors in the files) or a refused write; 2 the command could not run
(bad flag, missing path, unreadable input).  The message is printed as one line on stderr.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from ..layer.loader import Layer

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
EXIT_REFUSED = EXIT_FINDINGS


class CliError(Exception):
    """A problem that stops the command: printed as one line, exit code attached."""

    def __init__(self, message: str, code: int = EXIT_USAGE):
        super().__init__(message)
        self.code = code


def json_text(data: Any, indent: int | None = 2) -> str:
    """``data`` as JSON for a person or a program: an invalid byte kept from a file shows as ``\\xNN``
    inside its string (never a lone-surrogate ``\\udcNN``), and the JSON stays valid."""
    import json

    from ..core.text import printable

    def clean(value: Any) -> Any:
        if isinstance(value, str):
            return printable(value)
        if isinstance(value, dict):
            return {clean(k): clean(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(v) for v in value]
        return value
    return json.dumps(clean(data), ensure_ascii=False, indent=indent) + "\n"


def read_stdin_bytes(prefix: str, missing: str, *, terminal_ok: bool = False) -> bytes:
    """The bytes piped on stdin; ``prefix: missing`` (exit 2) when there is no stdin, or it is a terminal and
    ``terminal_ok`` is not set."""
    import sys

    if sys.stdin is None or (not terminal_ok and sys.stdin.isatty()):
        raise CliError(f"{prefix}: {missing}", EXIT_USAGE)
    return sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode("utf-8")


def read_input(name: str | None, *, prefix: str, what: str, missing: str) -> tuple[str, str]:
    """The UTF-8 text of file ``name``, or of stdin for ``-`` (and for None when stdin is piped), with a
    byte order mark dropped (it is no text), and the name to show for it ('stdin' or the file's name).

    Every failure is one line starting with ``prefix``: ``missing`` when there is no file and stdin is a
    terminal, then a file that does not exist, is a folder or cannot be read, and bytes that are not UTF-8.
    """
    from pathlib import Path

    if name is None or name == "-":
        data = read_stdin_bytes(prefix, missing, terminal_ok=name == "-")
        shown = "stdin"
    else:
        try:
            data = Path(name).read_bytes()
        except FileNotFoundError:
            raise CliError(f"{prefix}: no such {what} file: {name}", EXIT_USAGE) from None
        except IsADirectoryError:
            raise CliError(f"{prefix}: {name} is a folder; give a {what} file", EXIT_USAGE) from None
        except OSError as exc:
            raise CliError(f"{prefix}: cannot read {name}: {exc.strerror or exc}", EXIT_USAGE) from None
        shown = Path(name).name
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"{prefix}: the {what} ({shown}) is not valid UTF-8 (byte {exc.start + 1}); save it as UTF-8",
                       EXIT_USAGE) from None
    return text.removeprefix("\ufeff"), shown


def layer_errors(command: str, path: Any, layer: Layer, *, serving: bool = False) -> int:
    """W52, the one rule of every command that reads a layer: when ``check`` on the same ``path`` lists errors,
    one line on stderr says how many and where to see them; the command still does its work.  EXIT_FINDINGS
    then (a server, ``serving``, goes on serving), else EXIT_OK."""
    import sys

    from ..core.text import printable
    from ..layer.check import error_count
    errors = error_count(layer, path)
    if not errors:
        return EXIT_OK
    shown = printable(str(path))
    print(f"zonemark {command}: {errors} error{'s' if errors != 1 else ''} in {shown} (zonemark check {shown} lists "
          f"them); {'serving it as it is' if serving else 'exit 1'}", file=sys.stderr)
    return EXIT_FINDINGS


def layer_folder(name: str, command: str, *, confined: bool = False) -> Path:
    """The layer folder ``name`` for a long-running face (``mcp``, ``review``): it must exist, be a folder and
    hold a layer; otherwise one line naming ``zonemark COMMAND``, exit 2.  A layer with errors is served,
    after the line of :func:`layer_errors` (``confined``: read as the MCP server reads it)."""
    from pathlib import Path

    from ..layer import Layer, LayerError
    folder = Path(name)
    if not folder.exists():
        raise CliError(f"zonemark {command}: no such folder: {name}", EXIT_USAGE)
    if not folder.is_dir():
        raise CliError(f"zonemark {command}: {name} is a file; give the layer folder", EXIT_USAGE)
    try:
        layer = Layer.load(folder, confined=confined)
    except LayerError as exc:
        raise CliError(f"zonemark {command}: {exc}", EXIT_USAGE) from None
    except OSError as exc:
        raise CliError(f"zonemark {command}: cannot read {name}: {exc.strerror or exc}", EXIT_USAGE) from None
    layer_errors(command, name, layer, serving=True)
    return folder


@dataclass(frozen=True, slots=True)
class Command:
    """One row of a command table: the name, the one-line help of ``zonemark --help``, the function that
    declares the command's arguments on its parser, and the function that runs it (its exit code)."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    description: str | None = None
    usage: str | None = None


def add_commands(subparsers: Any, rows: Sequence[Command]) -> None:
    """One subparser per row, in the table's order, with its arguments and its run function."""
    for row in rows:
        parser = subparsers.add_parser(row.name, help=row.help, description=row.description, usage=row.usage)
        row.arguments(parser)
        parser.set_defaults(func=row.run)


def one_line(message: str) -> str:
    """A message as one line, whatever it quotes (line breaks shown as \\n, invalid bytes as \\xNN, invisible and
    direction-changing characters as ⟨U+202E⟩, W30)."""
    from ..core.text import escape_controls, printable, reveal
    return reveal(escape_controls(printable(message).replace("\r", "\\r").replace("\n", "\\n")))
