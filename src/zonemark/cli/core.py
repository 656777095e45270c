"""The file commands of the ``zonemark`` CLI: check, explain, codes, parse, outline, roundtrip."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.text import printable
from ..render import formats
from ..render.registry import names
from .common import EXIT_FINDINGS, EXIT_OK, CliError, Command, json_text, read_stdin_bytes

TYPE_CHECKING = False  # not imported from typing: a one-shot command imports only what it uses
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from ..core.diagnostics import Diagnostic
    from ..core.document import Document


def read_document(path: Path, *, tree: bool = False, outline: bool = False) -> Document:
    """Parse one file, turning OS errors into CliError (``tree``, ``outline``: as ``parse_file`` takes them)."""
    from ..core.parser import parse_file
    if path.is_dir():
        raise CliError(f"zonemark: {path} is a folder; give a file")
    try:
        doc = parse_file(path, tree=tree, outline=outline)
    except FileNotFoundError:
        raise CliError(f"zonemark: no such file: {path}") from None
    except PermissionError:
        raise CliError(f"zonemark: permission denied: {path}") from None
    except OSError as exc:
        raise CliError(f"zonemark: cannot read {path}: {exc.strerror or exc}") from None
    warn_if_not_utf8(doc.diagnostics, str(path))
    return doc


def warn_if_not_utf8(diagnostics: Iterable[Diagnostic], path: str) -> bool:
    """One stderr line for a file that is not UTF-8 (§1); True when it is not."""
    bad = next((d for d in diagnostics if d.code == "INVALID_UTF8"), None)
    if bad is not None:
        print(f"zonemark: {printable(path)} is not valid UTF-8 ({bad.message} at line {bad.line}, column {bad.column});"
              " its bytes are kept as they are", file=sys.stderr)
    return bad is not None


# -- commands -------------------------------------------------------------------------

def run_check(args: argparse.Namespace) -> int:
    from ..layer import LayerError
    from ..layer.check import check_paths
    from ..render.formats import render_diagnostics
    if args.explain:
        return cmd_explain(args.explain)
    if not args.paths:
        raise CliError("zonemark check: give at least one file or folder (or --explain CODE)")
    fails = _fail_on(args.fail_on)
    paths = [raw for raw in args.paths if raw != "-"]
    if len(args.paths) - len(paths) > 1:
        raise CliError("zonemark check: '-' (the file on stdin) may be given once")
    for raw in paths:  # fail before any parsing on a path that is not there
        if not Path(raw).exists():
            raise CliError(f"zonemark: no such file or folder: {raw}")
    piped = _check_stdin() if len(paths) < len(args.paths) else []
    notes: list[str] = []
    results = piped
    if paths:
        try:
            report = check_paths(paths, only=args.only, exclude=args.exclude)
        except LayerError as exc:
            raise CliError(f"zonemark: {printable(str(exc))}") from None
        except OSError as exc:
            raise CliError(f"zonemark: cannot read {exc.filename or ''}: {exc.strerror or exc}") from None
        results = piped + list(report.results)
        notes = list(report.notes)
    for path, diags in results:
        warn_if_not_utf8(diags, path)
    # SARIF percent-encodes the path's own bytes (render.formats.artifact_uri); the other formats show it.
    shown = [(path if args.format == "sarif" else printable(path), [_printable_message(d) for d in diags])
             for path, diags in results]
    sys.stdout.write(render_diagnostics(shown, args.format))
    for note in notes:
        print(f"note: {printable(note)}", file=sys.stderr)
    failed = any(fails(d) for _, ds in results for d in ds)
    return EXIT_FINDINGS if failed else EXIT_OK


def _printable_message(d: Diagnostic) -> Diagnostic:
    """``d`` itself, or a copy whose message shows its control characters (most messages have none)."""
    from dataclasses import replace
    shown = printable(d.message)
    return d if shown == d.message else replace(d, message=shown)


def _fail_on(value: str | None) -> Callable[[Diagnostic], bool]:
    """What makes ``check`` exit 1 (W51): any error (the default), ``warning`` (any finding), or errors and the
    findings of the codes listed (``CODE,CODE``)."""
    from ..core.diagnostics import CATALOGUE, Severity

    def is_error(d: Diagnostic) -> bool:
        return d.severity is Severity.ERROR
    if value is None or value.strip().lower() == "error":
        return is_error
    if value.strip().lower() == "warning":
        return lambda d: True
    codes = {c.strip().upper() for c in value.split(",") if c.strip()}
    unknown = sorted(c for c in codes if c not in CATALOGUE)
    if not codes or unknown:
        shown = f"unknown code {unknown[0]!r}; 'zonemark codes' lists them" if unknown else "nothing named"
        raise CliError(f"zonemark check: --fail-on takes error, warning or CODE[,CODE…]: {shown}")
    return lambda d: is_error(d) or d.code in codes


def _check_stdin() -> list[tuple[str, Sequence[Diagnostic]]]:
    """The findings of the file piped on stdin, checked as a file and named '-' (§1: bytes as they are)."""
    from ..core.parser import parse_bytes
    data = read_stdin_bytes("zonemark check", "'-' reads the file from stdin: pipe it in (zonemark check - < FILE)")
    return [("-", list(parse_bytes(data, path="-").diagnostics))]


def cmd_explain(code: str) -> int:
    from ..core.diagnostics import CATALOGUE
    info = CATALOGUE.get(code.upper())
    if info is None:
        raise CliError(f"zonemark: unknown code {code!r}; 'zonemark codes' lists them")
    origin = "named by the standard" if info.origin == "spec" else "added by zonemark"
    print(f"{info.code} ({info.severity.value}, {origin}, {info.section})\n\n{info.summary}\n\n{info.explanation}")
    return EXIT_OK


def run_codes(args: argparse.Namespace) -> int:
    from ..core.diagnostics import CATALOGUE
    infos = sorted(CATALOGUE.values(), key=lambda i: (i.origin != "spec", i.code))
    code_w, section_w = max(len(i.code) for i in infos), max(len(i.section) for i in infos)
    for info in infos:
        print(f"{info.code:{code_w}}  {info.severity.value:7} {info.section:{section_w}}  {info.summary}")
    return EXIT_OK


def run_parse(args: argparse.Namespace) -> int:
    doc = read_document(Path(args.file), tree=True)
    data = doc.to_dict()
    sys.stdout.write(json_text(data, args.indent))
    return EXIT_FINDINGS if doc.errors else EXIT_OK


def run_outline(args: argparse.Namespace) -> int:
    from ..render.outline_text import write_outline
    doc = read_document(Path(args.file), outline=True)
    write_outline(doc.outline_table(), sys.stdout.write, as_json=args.json)  # row by row, never held whole (B21)
    if not args.json and doc.diagnostics:
        n_err, n_warn = len(doc.errors), len(doc.warnings)
        from ..render.formats import counted
        print(f"\n{counted(n_err, 'error')}, {counted(n_warn, 'warning')}"
              f" (zonemark check {args.file})", file=sys.stderr)
    # An outline of a file that is not even text cannot be trusted.
    return EXIT_FINDINGS if any(d.code == "INVALID_UTF8" for d in doc.diagnostics) else EXIT_OK


def run_roundtrip(args: argparse.Namespace) -> int:
    from ..core.serialize import serialize_bytes
    path = Path(args.file)
    doc = read_document(path, tree=True)
    original = path.read_bytes()
    again = serialize_bytes(doc)
    if again == original:
        from ..render.formats import counted
        print(f"{path}: round-trip exact ({counted(len(original), 'byte')})")
        return EXIT_OK
    first = next((i for i, (a, b) in enumerate(zip(original, again)) if a != b), min(len(original), len(again)))
    print(f"{path}: round-trip differs at byte {first}", file=sys.stderr)
    return EXIT_FINDINGS


def _arguments_check(c: argparse.ArgumentParser) -> None:
    c.add_argument("paths", nargs="*", metavar="PATH",
                   help="a file, a folder (every *.md under it, read as one layer), or - for a file on stdin")
    c.add_argument("--format", choices=names(formats.DIAGNOSTICS_FORMATS), default="text",
                   help=formats.diagnostics_formats_help())
    c.add_argument("--fail-on", metavar="LEVEL", dest="fail_on",
                   help="exit 1 on: error (the default), warning (any finding), or errors and the codes listed "
                        "(CODE[,CODE...])")
    c.add_argument("--explain", metavar="CODE", help="explain a diagnostic code and exit")
    c.add_argument("--only", action="append", metavar="GLOB",
                   help="in folders, keep only files whose relative path matches (repeatable)")
    c.add_argument("--exclude", action="append", metavar="GLOB",
                   help="in folders, leave out files whose relative path matches, or everything under a folder "
                        "it names (repeatable; also .zonemarkignore at the folder's root)")


def _arguments_explain(e: argparse.ArgumentParser) -> None:
    e.add_argument("code", metavar="CODE", help="a diagnostic code ('zonemark codes' lists them)")


def _arguments_codes(k: argparse.ArgumentParser) -> None:
    del k  # no arguments


def _arguments_parse(pa: argparse.ArgumentParser) -> None:
    pa.add_argument("file", metavar="FILE")
    pa.add_argument("--indent", type=int, default=2, help="JSON indentation (default 2)")


def _arguments_outline(o: argparse.ArgumentParser) -> None:
    o.add_argument("file", metavar="FILE")
    o.add_argument("--json", action="store_true", help="machine-readable output")


def _arguments_roundtrip(r: argparse.ArgumentParser) -> None:
    r.add_argument("file", metavar="FILE")


def run_explain(args: argparse.Namespace) -> int:
    """``zonemark explain``."""
    return cmd_explain(args.code)


#: The commands of this module, in the order ``zonemark --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    Command("check", "check files or folders (recursively *.md)",
            _arguments_check, run_check),
    Command("explain", "explain a diagnostic code",
            _arguments_explain, run_explain),
    Command("codes", "list every diagnostic code",
            _arguments_codes, run_codes),
    Command("parse", "print the §13 JSON of a file",
            _arguments_parse, run_parse),
    Command("outline", "print the logical tree of a file",
            _arguments_outline, run_outline),
    Command("roundtrip", "exit 0 when parse+serialize gives the file back byte for byte",
            _arguments_roundtrip, run_roundtrip),
)

__all__ = ["COMMANDS", "run_check", "run_codes", "run_explain", "run_outline", "run_parse", "run_roundtrip"]
