"""``zonemark context``: the layer as text to paste into a chat or a system prompt.

Exit codes: 0 the text was produced; 1 the budget cannot be met without dropping what is
never dropped ([P1]/[P2] content), or the text was produced from a layer that holds errors (one
line on stderr says so, W52); 2 the command could not run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.text import printable
from ..render.registry import names, row
from .common import EXIT_FINDINGS, EXIT_USAGE, CliError, Command, layer_errors

TYPE_CHECKING = False  # not imported from typing: a one-shot command imports only what it uses
if TYPE_CHECKING:
    from ..layer import Layer


def _budget(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise CliError(f"zonemark context: --budget takes a number of tokens, not {value!r}", EXIT_USAGE) from None
    if n < 1:
        raise CliError(f"zonemark context: --budget must be at least 1 token, not {n}", EXIT_USAGE)
    return n


def _arguments_context(c: argparse.ArgumentParser) -> None:
    c.add_argument("path", metavar="LAYER", help="the layer folder (or a single file)")
    c.add_argument("--budget", metavar="TOKENS", help="leave out the oldest journal entries to fit TOKENS")
    from ..render.context_formats import CONTEXT_FORMATS, context_formats_help
    c.add_argument("--format", choices=names(CONTEXT_FORMATS), default="markdown", help=context_formats_help())
    c.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    c.add_argument("--only", action="append", metavar="GLOB", help="keep only matching files of the layer")
    c.add_argument("--exclude", action="append", metavar="GLOB", help="leave out matching files of the layer")


def run_context(args: argparse.Namespace) -> int:
    from ..context import ContextRefused, context
    from ..layer import Layer, LayerError
    budget = _budget(args.budget) if args.budget is not None else None
    try:
        layer = Layer.load(args.path, only=args.only, exclude=args.exclude)
    except LayerError as exc:
        raise CliError(f"zonemark context: {exc}") from None
    except OSError as exc:
        raise CliError(f"zonemark context: cannot read {args.path}: {exc.strerror or exc}") from None
    try:
        result = context(layer, budget)
    except ContextRefused as exc:
        raise CliError(f"{exc}; raise --budget, or leave files out with --exclude", EXIT_FINDINGS) from None
    from ..render.context_formats import CONTEXT_FORMATS
    text = row(CONTEXT_FORMATS, args.format).render(result)
    _emit(printable(text), args.output, layer)
    return layer_errors("context", args.path, layer)


def _emit(text: str, output: str | None, layer: Layer) -> None:
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    from ..writer import replace_file
    target = Path(output)
    try:
        resolved = target.resolve()
        if any(f.path.resolve() == resolved for f in layer.files):
            raise CliError(f"zonemark context: refusing to overwrite {output}, a file of the layer")
        root = layer.root.resolve()
        if target.suffix.lower() == ".md" and (resolved.parent == root or root in resolved.parents):
            raise CliError(f"zonemark context: refusing to write {output}: a .md file inside the layer would become"
                           f" part of it; write it elsewhere or under another name")
        if target.is_dir():
            raise CliError(f"zonemark context: {output} is a folder; give a file name")
        replace_file(target, text.encode("utf-8"))
    except OSError as exc:
        raise CliError(f"zonemark context: cannot write {output}: {exc.strerror or exc}") from None


#: The commands of this module, in the order ``zonemark --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    Command("context", "the layer as text to paste into a chat (active modules only)",
            _arguments_context, run_context),
)

__all__ = ["COMMANDS", "run_context"]
