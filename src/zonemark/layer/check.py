"""What ``zonemark check`` reports for files and folders: each folder read once as a layer."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..core.diagnostics import Diagnostic
from ..core.parser import parse_file
from .loader import Layer, LayerError


def _folder_layers(paths):
    for raw in paths:
        p = Path(raw)
        if not p.is_dir():
            continue
        try:
            yield raw, Layer.load(p)
        except LayerError:
            continue  # the check command reports missing / empty folders itself


def layer_diagnostics_for_paths(paths) -> list[Diagnostic]:
    """Layer-level diagnostics for every folder argument; ``.path`` is the folder joined with the file."""
    out = []
    for raw, layer in _folder_layers(paths):
        out.extend(replace(d, path=str(Path(raw) / d.path)) for d in layer.diagnostics)
    return out


def layer_findings_for_paths(paths) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """Both lists at once, each folder loaded once: (layer-level diagnostics to add, file-level ones to drop)."""
    added, dropped = [], []
    for raw, layer in _folder_layers(paths):
        added.extend(replace(d, path=str(Path(raw) / d.path)) for d in layer.diagnostics)
        dropped.extend(replace(d, path=str(Path(raw) / d.path)) for d in layer.superseded_diagnostics())
    return added, dropped


def superseded_diagnostics_for_paths(paths) -> list[Diagnostic]:
    """File-level diagnostics that the layer of each folder argument resolves (drop them from a report)."""
    out = []
    for raw, layer in _folder_layers(paths):
        out.extend(replace(d, path=str(Path(raw) / d.path)) for d in layer.superseded_diagnostics())
    return out


def check_results_for_paths(paths) -> list[tuple[str, list[Diagnostic]]]:
    """Per-file diagnostics for ``zonemark check``, each folder read once as a layer.

    For a folder: every file's parser diagnostics minus those the layer resolves,
    plus the layer-level ones; a layer-wide diagnostic (LAYER_NO_REMINDER) is
    listed under the folder itself.  For a file: its parser diagnostics.  Paths
    are the arguments joined with the relative paths, files sorted by path.
    Missing paths and empty folders raise :class:`LayerError`.
    """
    results: list[tuple[str, list[Diagnostic]]] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            layer = Layer.load(p)
            by_rel: dict[str, list[Diagnostic]] = {f.rel: [] for f in sorted(layer.files, key=lambda f: f.rel)}
            for d in layer.all_diagnostics():
                by_rel.setdefault(d.path, []).append(d)
            for rel, diags in by_rel.items():
                where = str(p / rel)
                results.append((where, sorted((replace(d, path=where) for d in diags),
                                              key=lambda d: (d.line, d.column))))
        else:
            if not p.exists():
                raise LayerError(f"no such file or folder: {raw}")
            doc = parse_file(p)
            results.append((str(p), [replace(d, path=str(p)) for d in doc.diagnostics]))
    return results
