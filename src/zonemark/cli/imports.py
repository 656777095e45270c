"""``zonemark import``: the log entries and traces of a provider's export into a memory file (issue 21).

Exit codes: 0 when nothing was refused and every file could be read; 1 when an entry or a message
was refused, a file is damaged, or the container cannot be written; 2 for usage errors (a missing
export, a bad ``--since``, the ``zonemark[import]`` extra not installed, an export over a limit).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, CliError, Command, json_text, one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..interchange.importing import ImportReport


def _arguments_import(p: argparse.ArgumentParser) -> None:
    p.add_argument("export", metavar="EXPORT", help="the export: a folder, a .zip, or one file")
    p.add_argument("--into", metavar="MEMORY_FILE", required=True, help="the memory file to file into")
    p.add_argument("--container", metavar="PATH", required=True,
                   help="topic path or module id to file into (§7.1.2, §7.1.3)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="report what would be filed (the default)")
    mode.add_argument("--apply", action="store_true", help="file the entries and record the traces")
    p.add_argument("--since", metavar="DATE", help="leave out messages before this ISO date")
    p.add_argument("--conversation", metavar="TITLE_OR_ID", help="import only this conversation")
    p.add_argument("--json", action="store_true", help="machine-readable report")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no note on stderr")


def run_import(args: argparse.Namespace) -> int:
    """Run one import and print its report."""
    from ..interchange.importing import ImportError_, ImportTooLarge, import_export
    from ..writer import RefusedWrite, StoreError
    memory = Path(args.into)
    if not memory.is_file():
        raise CliError(f"zonemark import: no such memory file: {args.into}", EXIT_USAGE)
    if not Path(args.export).exists():
        raise CliError(f"zonemark import: no such export: {args.export}", EXIT_USAGE)
    if not args.quiet:
        print("zonemark import: importing as user (--as user is implied: an import files many entries at once)",
              file=sys.stderr)
    bar = None if args.quiet or not sys.stderr.isatty() else _bar()
    try:
        report = import_export(args.export, memory, args.container, apply=args.apply, since=args.since,
                               conversation=args.conversation, progress=bar)
    except ModuleNotFoundError as exc:
        raise CliError(f"zonemark import: this export needs {exc.name}: pip install 'zonemark[import]'",
                       EXIT_USAGE) from None
    except RefusedWrite as exc:
        raise CliError(str(exc), EXIT_FINDINGS) from None
    except StoreError as exc:
        raise CliError(f"refused: {exc}", EXIT_FINDINGS) from None
    except (ImportTooLarge, ImportError_) as exc:
        raise CliError(f"zonemark import: {exc}", EXIT_USAGE) from None
    except ValueError as exc:
        raise CliError(f"zonemark import: --since: {exc}", EXIT_USAGE) from None
    finally:
        if bar is not None:
            bar.close()
    if args.json:
        sys.stdout.write(json_text(report.to_dict()) + "\n")
    else:
        _print(report)
    return EXIT_FINDINGS if report.total("refused") or report.damaged else EXIT_OK


class _Bar:
    """The progress bar (tqdm) on stderr: bytes read, conversations done, entries found, ETA."""

    def __init__(self) -> None:
        from tqdm import tqdm  # type: ignore[import-untyped]
        self._tqdm = tqdm(total=0, unit="B", unit_scale=True, file=sys.stderr, leave=False, mininterval=0.5)
        self._seen = 0

    def __call__(self, done: int, total: int, conversations: int, entries: int) -> None:
        if self._tqdm.total != total:
            self._tqdm.total = total
        self._tqdm.update(done - self._seen)
        self._seen = done
        self._tqdm.set_postfix_str(f"{conversations:,} conversations, {entries:,} entries", refresh=False)

    def close(self) -> None:
        self._tqdm.close()


def _bar() -> _Bar | None:
    try:
        return _Bar()
    except ModuleNotFoundError:
        return None  # no tqdm: no bar, the import still runs


def _out(line: str) -> None:
    """One line of the report: whatever a file, a title or a reason quotes stays on it (names in a zip are
    the export's, not ours)."""
    sys.stdout.write(one_line(line.removesuffix("\n")) + "\n")


def _print(report: ImportReport) -> None:
    for c in report.conversations:
        title = c.title or "(untitled)"
        verb = "would file" if report.dry_run else "filed"
        _out(f"{c.format} {c.file}: {title!r} ({c.date or 'no date'}): {c.messages} assistant message"
             f"{'s' if c.messages != 1 else ''}, {c.found} found, {c.would_file if report.dry_run else c.filed}"
             f" {verb}, {c.duplicates} duplicate, {len(c.refused)} refused"
             + (f", {c.skipped} skipped (not assistant text)" if c.skipped else "")
             + (f", {c.traces} trace{'s' if c.traces != 1 else ''}" if c.traces else "") + "\n")
        for r in c.refused:
            _out(f"  refused {r.code}: LOG {r.date or '(no date)'} — {r.title or '(no title)'}: {r.reason}\n")
    for f in report.files:
        if f.status != "read":
            _out(f"{f.status}: {f.name}: {f.reason}\n")
    verb = "would be filed" if report.dry_run else "filed"
    filed = report.total("would_file") if report.dry_run else report.total("filed")
    traces = report.total("traces")
    _out(f"total: {len(report.conversations)} conversations, {report.total('messages')} assistant messages"
         f" ({report.total('skipped')} turns or parts skipped: not assistant text),"
         f" {report.total('found')} entries found, {filed} {verb},"
         f" {report.total('duplicates')} duplicate, {report.total('refused')} refused; {traces} trace"
         f"{'s' if traces != 1 else ''}" + (f" ({report.traces_recorded} recorded)" if not report.dry_run else "")
         + (f", {report.traces_over_limit} messages' traces over the limit" if report.traces_over_limit else "")
         + (" (dry run: nothing written; --apply files them)" if report.dry_run else "") + "\n")


COMMANDS: tuple[Command, ...] = (
    Command("import", "file the ###### LOG: entries and traces of a ChatGPT, Claude or Claude Code export",
            _arguments_import, run_import,
            description="Read a provider's export (a folder or the .zip as downloaded) and file the log entries of the"
                        " assistant's turns into MEMORY_FILE as the user, in one write; a dry run unless --apply.",
            usage="zonemark import [-h] EXPORT --into MEMORY_FILE --container PATH [--dry-run | --apply]"
                  " [--since DATE] [--conversation TITLE_OR_ID] [--json] [--quiet]"),
)
