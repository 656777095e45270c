"""The output formats of a layer's context export (:func:`zonemark.context.context`), one row each.

Every face reads this table: ``zonemark context --format`` takes its choices and its help from it.
The renderers import what they need when a row is used, so reading the table costs nothing.
"""

from __future__ import annotations

from typing import Any, Protocol

from .registry import Format, spoken


class ContextResult(Protocol):
    """What a context format renders: a :class:`zonemark.context.ContextResult` (named by its shape, so
    that this table, which ``context`` does not need, imports nothing of it)."""

    @property
    def text(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...


def _markdown(result: ContextResult) -> str:
    return result.text


def _json(result: ContextResult) -> str:
    import json
    return json.dumps(result.to_dict(), ensure_ascii=False, indent=2) + "\n"


CONTEXT_FORMATS: tuple[Format[ContextResult], ...] = (
    Format("markdown", _markdown, "text/markdown", "markdown (the text to paste; the default)"),
    Format("json", _json, "application/json", "json (the text and what was left out)"),
)


def context_formats_help() -> str:
    """The help of ``--format``: every row's label, in the table's order."""
    return spoken([f.label for f in CONTEXT_FORMATS])
