"""What ``zonemark check`` (and the exit codes of ``status`` and ``graph``) report for paths.

One rule, used by every command that counts findings: a path that is a *folder* is read once
as a layer (each file's parser diagnostics minus those the layer resolves, plus the layer's
own findings); a path that is a *file* is checked as a file (its parser diagnostics).
Cross-file findings (ids across files, registries, connections) need the folder; when
several files of one folder are given one by one, the report says so once.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..core.diagnostics import Diagnostic
from ..core.parser import parse_file
from .loader import Layer, LayerError, discover, walked_name

#: zonemark's own state beside a layer's files (history, locks, proposals, the search index): never a layer file.
STATE_FOLDER = ".zonemark"


@dataclass(frozen=True)
class CheckReport:
    """Per-path diagnostics, in argument order, and notes for the reader (printed once each)."""

    results: tuple[tuple[str, tuple[Diagnostic, ...]], ...]
    notes: tuple[str, ...] = ()


def reported_diagnostics(layer: Layer, *, single_file: bool) -> list[Diagnostic]:
    """The diagnostics reported for ``layer``: a single file's own, or the whole layer's (paths relative)."""
    if single_file:
        return [replace(d, path=f.rel) for f in layer.files for d in f.doc.diagnostics]
    return layer.all_diagnostics()


def error_count(layer: Layer, path: str | os.PathLike[str]) -> int:
    """The error-level findings ``check`` lists for ``path`` read as ``layer`` (W6): a file's own, or the whole
    layer's.  The one count every command that reads a layer reports (W52)."""
    from ..core.diagnostics import Severity
    return sum(d.severity is Severity.ERROR
               for d in reported_diagnostics(layer, single_file=Path(path).is_file()))


def check_paths(paths: Iterable[str], *, only: Sequence[str] | None = None,
                exclude: Sequence[str] | None = None) -> CheckReport:
    """Per-file diagnostics for ``zonemark check``, each folder read once as a layer.

    For a folder: every file's diagnostics as the layer reports them; a layer-wide diagnostic
    (LAYER_NO_REMINDER) is listed under the folder itself.  For a file: its parser
    diagnostics.  Paths are the arguments joined with the relative paths, files sorted by
    path.  ``only``/``exclude`` select files inside folders.  Missing paths and empty folders
    raise :class:`LayerError`.
    """
    results: list[tuple[str, tuple[Diagnostic, ...]]] = []
    single_folders: dict[Path, list[str]] = {}
    left_out = [raw for raw in paths if not held_by_a_layer(raw)]
    skipped = set(left_out)
    for raw in paths:
        if raw in skipped:
            continue
        p = Path(raw)
        if p.is_dir():
            results.extend(_folder_results(p, Layer.load(p, only=only, exclude=exclude)))
        else:
            single_folders.setdefault(p.resolve().parent, []).append(raw)
            results.append((str(p), _file_diagnostics(p)))
    notes = []
    shared = [(folder, raws) for folder, raws in single_folders.items() if len(raws) > 1]
    if shared:
        folder = Path(shared[0][1][0]).parent
        notes.append(f"files given one by one are checked as files; cross-file (layer) findings need the folder: "
                     f"zonemark check {folder if str(folder) else '.'}")
    if left_out:
        notes.append(f"{len(left_out)} path{'s' if len(left_out) != 1 else ''} left out, as a folder leaves "
                     f"{'them' if len(left_out) != 1 else 'it'} out (only *.md files are checked, never zonemark's "
                     f"own {STATE_FOLDER}/ folder): {left_out[0]}{' …' if len(left_out) > 1 else ''}")
    return CheckReport(tuple(results), tuple(notes))


def _folder_results(p: Path, layer: Layer) -> list[tuple[str, tuple[Diagnostic, ...]]]:
    """Per file of ``layer`` (by relative path), what the layer reports for it, each diagnostic copied once
    with its path joined to the folder as given; a layer-wide one (path '.') after the files."""
    by_rel: dict[str, list[Diagnostic]] = {f.rel: [] for f in sorted(layer.files, key=lambda f: f.rel)}
    for f in layer.files:
        own = by_rel[f.rel]
        own.extend(d for i, d in enumerate(f.doc.diagnostics) if (f.rel, i) not in layer.superseded)
    outside = []
    for d in layer.diagnostics:
        diags = by_rel.get(d.path or ".")
        if diags is None:
            outside.append(d)
        else:
            diags.append(d)
    for d in sorted(outside, key=lambda d: (d.line, d.column)):
        by_rel.setdefault(d.path or ".", []).append(d)
    out = []
    for rel, diags in by_rel.items():
        where = str(p / rel)
        out.append((where, tuple(sorted((replace(d, path=where) for d in diags), key=lambda d: (d.line, d.column)))))
    return out


def _file_diagnostics(p: Path) -> tuple[Diagnostic, ...]:
    """A file given alone is checked as a file: its parser diagnostics, which carry its path as given.
    A file that cannot be read reports nothing here, as when it was read as a layer of one file; a path
    that is not a file raises :class:`LayerError` as :func:`~.loader.discover` words it."""
    discover(p)
    try:
        return parse_file(p).diagnostics
    except OSError:
        return ()


def held_by_a_layer(raw: str) -> bool:
    """Whether ``check`` reads the path ``raw`` (W50): what a folder walk would read (W5).

    A path with a ``.zonemark`` part (any case; ``..`` folded first) is zonemark's own state, never a layer
    file nor a layer; a file given one by one must have a name the walk reads (``*.md``, not hidden), as
    pre-commit passes every staged path its ``files`` pattern matches.  A path that is not there is kept, so
    that the loader reports it.
    """
    parts = Path(os.path.normpath(raw)).parts
    if any(part.casefold() == STATE_FOLDER for part in parts):
        return False
    p = Path(raw)
    return p.is_dir() or walked_name(p.name) or not (p.exists() or p.is_symlink())


__all__ = ["STATE_FOLDER", "CheckReport", "LayerError", "check_paths", "error_count", "held_by_a_layer",
           "reported_diagnostics"]
