"""The user's last visit to the review page of a layer: ``.zonemark/review-visit.json`` (machine-local).

A visit is one run of ``zonemark review``.  The run reads the mark once, when it starts: every page of the run
shows "since your last visit" from that time, however often it is reloaded.  No GET writes it (RV2); the run
writes the time of the last Activity page it served when it stops — the newest the user can have seen — with
``writer.atomic.replace_file``.  A mark that cannot be read is no mark (everything is new), never an error.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

VISIT_FILE = "review-visit.json"
FORMAT = "zonemark-review-visit/1"
#: a mark is a few dozen bytes; a larger file is not ours
VISIT_LIMIT = 4096


def visit_path(root: Path) -> Path:
    from ..writer import STATE_DIR_NAME
    return Path(root) / STATE_DIR_NAME / VISIT_FILE


def read_visit(root: Path) -> dt.datetime | None:
    """The time of the last visit, or None (no mark, or one that is not a readable mark)."""
    from ..render.times import parse_time
    try:
        with visit_path(root).open("rb") as handle:
            data = handle.read(VISIT_LIMIT + 1)
        record = json.loads(data.decode("utf-8")) if len(data) <= VISIT_LIMIT else None
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("format") != FORMAT or not isinstance(record.get("seen"), str):
        return None
    return parse_time(record["seen"])


def write_visit(root: Path, seen: dt.datetime) -> None:
    """Record ``seen`` as the last visit (atomically; the ``.zonemark`` folder is made when missing)."""
    from ..writer import replace_file
    record = {"format": FORMAT, "seen": seen.astimezone(dt.timezone.utc).isoformat()}
    replace_file(visit_path(root), (json.dumps(record) + "\n").encode("utf-8"), make_parents=True)


__all__ = ["FORMAT", "VISIT_FILE", "VISIT_LIMIT", "read_visit", "visit_path", "write_visit"]
