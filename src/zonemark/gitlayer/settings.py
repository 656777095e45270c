"""The layer's own settings: ``LAYER/.zonemark/settings.json`` (``{"commit_writes": true}``), beside the
history, locks and proposals the writer keeps there; tracked by git, so every clone shares them."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

SETTINGS_NAME = "settings.json"
STATE_DIR = ".zonemark"
#: folders walked up from a written file to find the layer's settings (a layer is not deeper than this)
MAX_DEPTH = 32


@dataclass(frozen=True)
class LayerSettings:
    """What ``zonemark git setup`` records for a layer."""

    commit_writes: bool = False


def settings_path(layer: str | os.PathLike[str]) -> Path:
    return Path(layer) / STATE_DIR / SETTINGS_NAME


def read_settings(layer: str | os.PathLike[str]) -> LayerSettings:
    """The settings of the layer folder ``layer``; defaults when the file is missing or unreadable."""
    try:
        data = json.loads(settings_path(layer).read_text("utf-8"))
    except (OSError, ValueError):
        return LayerSettings()
    if not isinstance(data, dict):
        return LayerSettings()
    return LayerSettings(commit_writes=data.get("commit_writes") is True)


def settings_text(settings: LayerSettings, layer: str | os.PathLike[str]) -> str:
    """The file's text for ``settings``, keeping keys zonemark does not know."""
    try:
        data = json.loads(settings_path(layer).read_text("utf-8"))
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    data["commit_writes"] = settings.commit_writes
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def layer_of(path: str | os.PathLike[str], stop: str | os.PathLike[str] | None = None) -> Path | None:
    """The nearest folder at or above ``path`` (a file or folder) holding ``.zonemark/settings.json``, not
    above ``stop`` (the git work tree's top); None when there is none."""
    here = Path(os.path.realpath(os.fspath(path)))
    if not here.is_dir():
        here = here.parent
    top = Path(os.path.realpath(os.fspath(stop))) if stop is not None else None
    for _ in range(MAX_DEPTH):
        if settings_path(here).is_file():
            return here
        if top is not None and here == top or here.parent == here:
            return None
        here = here.parent
    return None


__all__ = ["LayerSettings", "SETTINGS_NAME", "layer_of", "read_settings", "settings_path", "settings_text"]
