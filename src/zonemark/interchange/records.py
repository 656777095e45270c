"""Recorded traces: each accepted trace, with its time, in the layer's ``.zonemark/traces/`` (§N.1).

``zonemark trace`` records what it illuminated so the graph page can show how often each node
lit up (the heat view).  One JSON file per accepted block, never a ``.md`` (a recursive
``*.md`` scan of the layer never picks one up), written atomically with
:func:`zonemark.writer.atomic.replace_file`::

    LAYER/.zonemark/traces/20260915T101500Z-<sha16>.json
    {"format": "zonemark-trace-record", "version": 1, "recordedAt": "2026-09-15T10:15:00Z",
     "sha256": "<text + block line>", "openLine": 12, "result": {nuclei, modules, logs, memories}}

The record keeps identifiers, not graph node ids, so it still counts after the files change
(an identifier that no longer exists is skipped).  The same trace of the same text is recorded
once: pasting one answer twice does not heat the graph twice.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from ..layer.loader import Layer
from ..writer import replace_file
from .notices import Notice, notice
from .trace import TraceBlock, TraceContent, TraceResult

FORMAT = "zonemark-trace-record"
TRACES_DIR = (".zonemark", "traces")
#: At most this many blocks of one text are recorded (ruling CL31); the rest are counted in ``left_out``.
MAX_RECORDED_BLOCKS = 100


@dataclass(frozen=True, slots=True)
class TraceRecord:
    path: Path
    recorded_at: str
    content: TraceContent


@dataclass(frozen=True, slots=True)
class RecordOutcome:
    """What :func:`record_trace` did for one accepted block."""

    open_line: int
    path: Path
    created: bool  # False: the same trace of the same text was already recorded

    def to_dict(self) -> dict[str, Any]:
        return {"openLine": self.open_line, "path": str(self.path), "created": self.created}


def traces_folder(layer: Layer) -> Path:
    return layer.root.joinpath(*TRACES_DIR)


def record_trace(layer: Layer, text: str, result: TraceResult, *, now: _dt.datetime | None = None
                 ) -> tuple[RecordOutcome, ...]:
    """Record the accepted blocks of ``result`` that illuminate something (nothing when disabled): the first
    :data:`MAX_RECORDED_BLOCKS` of them (:func:`unrecorded` counts the others); the folder is listed once."""
    if not result.enabled:
        return ()
    folder = traces_folder(layer)
    when = (now or _dt.datetime.now(_dt.timezone.utc)).astimezone(_dt.timezone.utc).replace(microsecond=0)
    existing: dict[str, Path] = {}
    if folder.is_dir():
        for found in sorted(folder.glob("*-*.json")):
            existing.setdefault(found.stem.rpartition("-")[2], found)
    out = []
    body = text.encode("utf-8", "surrogatepass")
    for block, content in islice(_recordable(result), MAX_RECORDED_BLOCKS):
        digest = hashlib.sha256(f"{block.open_line}\n".encode() + body).hexdigest()
        if digest[:16] in existing:
            out.append(RecordOutcome(block.open_line, existing[digest[:16]], False))
            continue
        path = folder / f"{when.strftime('%Y%m%dT%H%M%SZ')}-{digest[:16]}.json"
        data = {"format": FORMAT, "version": 1, "recordedAt": when.strftime("%Y-%m-%dT%H:%M:%SZ"), "sha256": digest,
                "openLine": block.open_line, "result": content.to_dict()}
        replace_file(path, (json.dumps(data, ensure_ascii=False, indent=1) + "\n").encode("utf-8", "surrogatepass"),
                     make_parents=True)
        existing[digest[:16]] = path
        out.append(RecordOutcome(block.open_line, path, True))
    return tuple(out)


def _recordable(result: TraceResult) -> Iterator[tuple[TraceBlock, TraceContent]]:
    """The accepted blocks that illuminate something (§N.18), in document order, one at a time (a text's blocks
    are validated when asked for: ruling CL30)."""
    if result.enabled:
        yield from ((b, c) for b, c in result.accepted if not c.empty)


def unrecorded(result: TraceResult) -> int:
    """How many blocks that illuminate something :func:`record_trace` leaves unrecorded (over its limit)."""
    return max(0, sum(1 for _ in _recordable(result)) - MAX_RECORDED_BLOCKS)


def load_records(layer: Layer) -> tuple[tuple[TraceRecord, ...], tuple[Notice, ...]]:
    """Every readable record of the layer, oldest first, and a warning per file that is not one."""
    folder = traces_folder(layer)
    if not folder.is_dir():
        return (), ()
    records, warnings = [], []
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("format") != FORMAT:
                raise ValueError("not a zonemark trace record")
            content = TraceContent.from_dict(data["result"])
            records.append(TraceRecord(path, str(data.get("recordedAt", "")), content))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            warnings.append(notice("TRACE_RECORDS_SKIPPED", f"{path.name}: {exc}"[:200], 0))
    return tuple(records), tuple(warnings)
