"""``zonemark ingest`` and ``zonemark trace``: chat text back into the layer (§N.19, §N.18).

Exit codes: ``ingest --extract`` 0 always (also when nothing is found); ``ingest`` 0 when no
entry was refused, 1 when one was (the others are still filed) or the container cannot be
written; ``trace`` 0 when a trace was found and something is illuminated, 1 when there is no
trace, it is rejected, tracing is not enabled or everything was dropped; 2 for usage errors.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from ..core.text import printable
from .common import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, CliError, Command, layer_errors, read_input

TYPE_CHECKING = False  # not imported from typing: a one-shot command imports only what it uses
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from ..interchange.notices import Notice
    from ..interchange.records import RecordOutcome
    from ..interchange.trace import TraceResult
    from ..layer import Layer


def read_chat_text(name: str | None, command: str) -> tuple[str, str]:
    """The chat text of FILE, or of stdin for ``-``/None, and a name for it; UTF-8, a BOM dropped."""
    return read_input(name, prefix=f"zonemark {command}", what="chat text",
                      missing="give the chat text as FILE, or pipe it on stdin (-)")


#: Control characters from chat text never reach the terminal as such (an escape sequence in a
#: title could rewrite the screen): shown as \xNN in text, as \u00NN in JSON (C1 and DEL, which
#: json.dumps leaves as they are).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_JSON = re.compile(r"[\x7f-\x9f]")


def _out(text: str) -> None:
    sys.stdout.write(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02X}", printable(text)))


def _out_json(data: dict[str, Any]) -> None:
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    sys.stdout.write(_CONTROL_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", printable(text)))


def _warn(notices: Iterable[Notice]) -> None:
    for w in notices:
        line = printable(f"warning: {w.code}: {w.message}")
        print(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02X}", line), file=sys.stderr)


def _arguments_ingest(i: argparse.ArgumentParser) -> None:
    i.add_argument("operands", nargs="*", metavar="MEMORY_FILE FILE|-",
                   help="the memory file to file into (not with --extract), then the chat text (default: stdin)")
    i.add_argument("--extract", action="store_true", help="only show the entries found; write nothing")
    i.add_argument("--json", action="store_true", help="machine-readable output")
    i.add_argument("--container", metavar="PATH", help="topic path or module id to file into (§7.1.2, §7.1.3)")
    i.add_argument("--date", metavar="D", help="date for entries whose header has none (default: today)")
    i.add_argument("--as", dest="actor", choices=("ai", "user"), default="ai", help="who writes (default: ai)")
    i.add_argument("--dry-run", action="store_true", help="report what would be filed; change nothing")


def _arguments_trace(t: argparse.ArgumentParser) -> None:
    t.add_argument("operands", nargs="+", metavar="LAYER [FILE|-]",
                   help="the layer folder (or its reminder), then the chat text (default: stdin)")
    t.add_argument("--json", action="store_true", help="machine-readable output")
    t.add_argument("--no-record", action="store_true", help="do not record the trace in LAYER/.zonemark/traces")
    t.add_argument("--only", action="append", metavar="GLOB", help="keep only matching files of the layer")
    t.add_argument("--exclude", action="append", metavar="GLOB", help="leave out matching files of the layer")


# -- ingest ------------------------------------------------------------------------------

def run_ingest(args: argparse.Namespace) -> int:
    if args.extract:
        extra = [flag for flag, given in (("--container", args.container), ("--date", args.date),
                                          ("--dry-run", args.dry_run), ("--as", args.actor != "ai")) if given]
        if extra:
            raise CliError(f"zonemark ingest: --extract writes nothing; {', '.join(extra)} does not apply",
                           EXIT_USAGE)
        if len(args.operands) > 1:
            raise CliError("zonemark ingest --extract: give one chat text (FILE or -), not a memory file",
                           EXIT_USAGE)
        from ..interchange.logs import extract_logs
        text, _ = read_chat_text(args.operands[0] if args.operands else None, "ingest")
        extraction = extract_logs(text)
        if args.json:
            _out_json(extraction.to_dict())
        else:
            for e in extraction.entries:
                end = {"marker": f"[/LOG] at line {e.end_line}", "next_header": f"next header at line {e.end_line}",
                       "end_of_text": "end of the text"}[e.end]
                lines = e.body.count("\n") + 1 if e.body else 0
                _out(f"line {e.header_line}: LOG {e.date or '(no date)'} — {e.title or '(no title)'}"
                     f" (ends at {end}; {lines} body line{'s' if lines != 1 else ''})\n")
            _out(f"found {extraction.count} log entr{'y' if extraction.count == 1 else 'ies'}\n")
            _warn(extraction.warnings)
        return EXIT_OK

    if not args.operands:
        raise CliError("zonemark ingest: give the MEMORY_FILE to file into (or --extract to only look)", EXIT_USAGE)
    if len(args.operands) > 2:
        raise CliError("zonemark ingest: give MEMORY_FILE and at most one chat text (FILE or -)", EXIT_USAGE)
    if not args.container:
        raise CliError("zonemark ingest: give --container PATH (a topic path such as 'Maintenance/Tyres' or a"
                       " module id)", EXIT_USAGE)
    memory = Path(args.operands[0])
    if not memory.exists():
        raise CliError(f"zonemark ingest: no such file: {args.operands[0]}", EXIT_USAGE)
    if memory.is_dir():
        raise CliError(f"zonemark ingest: {args.operands[0]} is a folder; give the memory file", EXIT_USAGE)
    text, _ = read_chat_text(args.operands[1] if len(args.operands) > 1 else None, "ingest")
    from ..interchange.ingest import DUPLICATE, FILED, REFUSED, WOULD_FILE, ingest
    from ..writer import RefusedWrite, StoreError
    try:
        result = ingest(memory, args.container, text, actor=args.actor, date=args.date, dry_run=args.dry_run)
    except RefusedWrite as exc:
        raise CliError(str(exc), EXIT_FINDINGS) from None
    except StoreError as exc:
        raise CliError(f"refused: {exc}", EXIT_FINDINGS) from None
    except ValueError as exc:
        raise CliError(f"zonemark ingest: {exc}", EXIT_USAGE) from None
    except OSError as exc:
        raise CliError(f"zonemark ingest: {exc.strerror or exc}: {exc.filename or memory}", EXIT_USAGE) from None
    if args.json:
        _out_json(result.to_dict())
    else:
        for item in result.items:
            what = f"LOG {item.date} — {item.title or '(no title)'}"
            if item.status in (FILED, WOULD_FILE):
                verb = "filed" if item.status == FILED else "would file"
                notes = f" ({'; '.join(item.changes)})" if item.changes else ""
                _out(f"line {item.header_line}: {verb}: {what} -> {memory.name}:{item.line}{notes}\n")
            elif item.status == DUPLICATE:
                _out(f"line {item.header_line}: duplicate: {what} ({item.reason})\n")
            else:
                _out(f"line {item.header_line}: refused: {what}: {item.reason}\n")
        n = result.found
        parts = [f"{result.count(s)} {label}" for s, label in ((FILED, "filed"), (WOULD_FILE, "would be filed"),
                                                                (DUPLICATE, "duplicate"), (REFUSED, "refused"))
                 if result.count(s) or s == (WOULD_FILE if result.dry_run else FILED)]
        _out(f"found {n} log entr{'y' if n == 1 else 'ies'}: {', '.join(parts)}"
             f"{' (dry run: nothing written)' if result.dry_run else ''}\n")
        _warn(result.warnings)
    return EXIT_FINDINGS if result.count(REFUSED) else EXIT_OK


# -- trace -------------------------------------------------------------------------------

def load_layer(path: str, command: str, only: list[str] | None = None, exclude: list[str] | None = None) -> Layer:
    from ..layer import Layer, LayerError
    try:
        return Layer.load(path, only=only, exclude=exclude)
    except LayerError as exc:
        raise CliError(f"zonemark {command}: {exc}") from None
    except OSError as exc:
        raise CliError(f"zonemark {command}: cannot read {path}: {exc.strerror or exc}") from None


def run_trace(args: argparse.Namespace) -> int:
    if len(args.operands) > 2:
        raise CliError("zonemark trace: give LAYER and at most one chat text (FILE or -)", EXIT_USAGE)
    layer = load_layer(args.operands[0], "trace", args.only, args.exclude)
    text, _ = read_chat_text(args.operands[1] if len(args.operands) > 1 else None, "trace")
    from ..interchange.trace import TraceTooLarge, read_trace
    try:
        result = read_trace(text, layer)
    except TraceTooLarge as exc:
        raise CliError(f"zonemark trace: {exc}", EXIT_USAGE) from None
    recorded: tuple[RecordOutcome, ...] = ()
    if result.illuminated and not args.no_record:
        from ..interchange.records import MAX_RECORDED_BLOCKS, record_trace, unrecorded
        try:
            recorded = record_trace(layer, text, result)
        except OSError as exc:
            print(f"warning: the trace could not be recorded in {layer.root}/.zonemark/traces:"
                  f" {exc.strerror or exc}", file=sys.stderr)
        if unrecorded(result):
            print(f"warning: {unrecorded(result):,} more blocks were not recorded (at most {MAX_RECORDED_BLOCKS}"
                  f" per text)", file=sys.stderr)
    if args.json:
        _out_json(result.to_dict())
        for r in recorded:
            print(printable(f"zonemark trace: {'recorded' if r.created else 'already recorded'}: {r.path}"),
                  file=sys.stderr)
    else:
        _print_trace(result, recorded)
    found = layer_errors("trace", args.operands[0], layer)
    return EXIT_OK if result.illuminated and found == EXIT_OK else EXIT_FINDINGS


def _print_trace(result: TraceResult, recorded: tuple[RecordOutcome, ...]) -> None:
    from ..interchange.trace import MAX_LISTED_BLOCKS, MAX_LISTED_WARNINGS, left_out
    for b in result.blocks[:MAX_LISTED_BLOCKS]:
        span = f"lines {b.open_line}-{b.close_line}" if b.close_line and b.close_line != b.open_line else \
            f"line {b.open_line}"
        state = f"rejected: {b.reason}" if b.rejected else "accepted"
        _out(f"trace {span}: [{b.marker}: {b.version or '?'}] {b.form} form, {state}\n")
    r = result.result
    if result.illuminated:
        if r.nuclei:
            _out("nuclei (activation order): " + " -> ".join(str(n) for n in r.nuclei) + "\n")
        for m in r.modules:
            _out(f"module {m.id}" + (f": {m.name}" if m.name else "") + f" — {m.state or '(no state)'}\n")
        for g in r.logs:
            _out(f"log {g.module}: {g.date} — {g.action or '(no action)'} — {g.text}\n")
        for y in r.memories:
            _out(f"memory {y.id}" + (f" @ {y.ref}" if y.ref else "") + f" — {y.action or '(no action)'}\n")
    else:
        _out("nothing illuminated\n")
    for d in result.dropped:
        _out(f"dropped: line {d.line}: {d.entry} — {d.reason}\n")
    for rec in recorded:
        _out(f"{'recorded' if rec.created else 'already recorded'}: {rec.path}\n")
    blocks_out = max(0, len(result.blocks) - MAX_LISTED_BLOCKS)
    warnings_out = max(0, len(result.warnings) - MAX_LISTED_WARNINGS)
    _warn(result.warnings[:MAX_LISTED_WARNINGS]
          + ((left_out(len(result.blocks), blocks_out, len(result.warnings), warnings_out),)
             if blocks_out or warnings_out else ()))


#: The commands of this module, in the order ``zonemark --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    Command("ingest", "file the ###### LOG: entries of copied chat text (§N.19)",
            _arguments_ingest, run_ingest,
            description="File each entry of the chat text (FILE, or stdin) into MEMORY_FILE through the safe writer;"
                        " with --extract, only show the entries found.",
            usage="zonemark ingest [-h] MEMORY_FILE --container PATH [--date D] [--as {ai,user}] [--dry-run] [--json]"
                  " [FILE|-]\n       zonemark ingest [-h] --extract [--json] [FILE|-]"),
    Command("trace", "read a Deferred Neural Trace against a layer (§N.18)",
            _arguments_trace, run_trace,
            usage="zonemark trace [-h] [--json] [--no-record] [--only GLOB] [--exclude GLOB]"
                  " LAYER [FILE|-]"),
)

__all__ = ["COMMANDS", "run_ingest", "run_trace"]
