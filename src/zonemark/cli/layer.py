"""``zonemark graph`` and ``zonemark status``: commands on a whole continuity layer (§3, §7).

Exit codes follow the rest of the CLI: 0 when the layer has no error-level
diagnostic, 1 when it has some (the output is still produced), 2 when the
command cannot run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.text import escape_controls
from ..core.text import printable as _printable
from ..render import graph_formats
from ..render.registry import names, row, spoken
from .common import CliError, Command, json_text, layer_errors

TYPE_CHECKING = False  # not imported from typing: a one-shot command imports only what it uses
if TYPE_CHECKING:
    from ..core.diagnostics import Diagnostic
    from ..layer import Layer
    from ..layer.graph import LayerGraph


def _arguments_graph(g: argparse.ArgumentParser) -> None:
    g.add_argument("path", metavar="PATH", help="a layer folder (or a single file)")
    g.add_argument("--format", choices=names(graph_formats.GRAPH_FORMATS), default="json",
                   help=graph_formats.graph_formats_help())
    g.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    g.add_argument("--trace", metavar="FILE", help="light up the nodes a neural trace in FILE names (§N.18;"
                                                   " json and html); '-' reads stdin")
    _selection(g)


def _arguments_status(s: argparse.ArgumentParser) -> None:
    s.add_argument("path", metavar="PATH", help="a layer folder (or a single file)")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    _selection(s)


def _selection(p: argparse.ArgumentParser) -> None:
    p.add_argument("--only", action="append", metavar="GLOB",
                   help="keep only files whose relative path matches (repeatable; [ and ] are literal)")
    p.add_argument("--exclude", action="append", metavar="GLOB",
                   help="leave out files whose relative path matches (repeatable)")


def _load(args: argparse.Namespace, *, tree: bool = False) -> Layer:
    from ..layer import Layer, LayerError
    try:
        return Layer.load(args.path, only=args.only, exclude=args.exclude, tree=tree)
    except LayerError as exc:
        raise CliError(f"zonemark {args.command}: {exc}") from None
    except OSError as exc:
        raise CliError(f"zonemark {args.command}: cannot read {args.path}: {exc.strerror or exc}") from None


def _findings(args: argparse.Namespace, layer: Layer) -> list[Diagnostic]:
    """What ``check`` reports for the same path: a file's own diagnostics, or the whole layer's."""
    from ..layer.check import reported_diagnostics
    return reported_diagnostics(layer, single_file=Path(args.path).is_file())


# -- graph ------------------------------------------------------------------------------

def run_graph(args: argparse.Namespace) -> int:
    from ..layer.graph import build_graph

    fmt = row(graph_formats.GRAPH_FORMATS, args.format)
    if args.trace is not None and not fmt.carries_trace:
        traced = spoken([f.name for f in graph_formats.GRAPH_FORMATS if f.carries_trace])
        raise CliError(f"zonemark graph: --trace works with --format {traced}, not {args.format}")
    layer = _load(args)  # the graph reads every file's headers in a scan of them, no tree (B18)
    graph = build_graph(layer, _findings(args, layer))
    if graph.left_out_note():  # B18: the document says so too (nodesLeftOut, the page's note)
        print(f"zonemark graph: {graph.left_out_note()}", file=sys.stderr)
    if fmt.carries_trace:
        graph = _with_trace(graph, layer, args.trace)
    try:
        text = fmt.render(graph)
    except ImportError:
        others = spoken([f.name for f in graph_formats.GRAPH_FORMATS if f.name != fmt.name])
        raise CliError(f"zonemark graph: the {fmt.name} format is unavailable in this installation"
                       f" (use --format {others})") from None
    except Exception as exc:  # another module's failure must not become a traceback
        raise CliError(f"zonemark graph: {fmt.name} rendering failed: {type(exc).__name__}: {exc}") from None
    _emit(text, args.output, layer)
    return layer_errors(args.command, args.path, layer)


def _with_trace(graph: LayerGraph, layer: Layer, trace_file: str | None) -> LayerGraph:
    """The graph with the trace marks (``--trace``) and the heat of recorded traces, when there are any."""
    from ..interchange.illuminate import with_recorded_traces
    trace, source = None, None
    if trace_file is not None:
        from ..interchange.trace import read_trace
        from .interchange import read_chat_text
        text, source = read_chat_text(trace_file, "graph")
        trace = read_trace(text, layer)
    return with_recorded_traces(graph, layer, trace, source=source)


def _emit(text: str, output: str | None, layer: Layer) -> None:
    text = _printable(text)
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    from ..writer import replace_file
    target = Path(output)
    if target.suffix.lower() == ".md":
        raise CliError(f"zonemark graph: refusing to write to {output}: .md files belong to the user")
    try:
        resolved = target.resolve()
        if any(f.path.resolve() == resolved for f in layer.files):
            raise CliError(f"zonemark graph: refusing to overwrite {output}, a file of the layer")
        if target.is_dir():
            raise CliError(f"zonemark graph: {output} is a folder; give a file name")
        replace_file(target, text.encode("utf-8"))
    except OSError as exc:
        raise CliError(f"zonemark graph: cannot write {output}: {exc.strerror or exc}") from None


def run_status(args: argparse.Namespace) -> int:
    from ..layer.status import layer_status
    from ..render.status_text import render_status
    layer = _load(args)  # the status scans its memory files' headers itself (B17)
    status = layer_status(layer, _findings(args, layer))
    if args.json:
        sys.stdout.write(json_text(status.to_dict()))
    else:
        sys.stdout.write(escape_controls(_printable(render_status(status, args.path))))
    return layer_errors(args.command, args.path, layer)


#: The commands of this module, in the order ``zonemark --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    Command("graph", "the graph of a layer (JSON node-link, DOT, Mermaid or HTML)",
            _arguments_graph, run_graph),
    Command("status", "modules, states, nuclei and memories of a layer",
            _arguments_status, run_status),
)

__all__ = ["COMMANDS", "run_graph", "run_status"]
