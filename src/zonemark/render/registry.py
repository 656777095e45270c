"""One row per output format of a family (diagnostics, graph): what every face reads of a format.

A family is a tuple of :class:`Format` rows; a new format is one row.  The faces take their
``--format`` choices (:func:`names`), their help (:func:`spoken`) and the function that renders
(:func:`row`) from it.  This module imports nothing at load, so a parser can read a family cheaply.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Format(Generic[T]):
    """One output format: its name, the function that renders a value of the family, its media type,
    how a help text names it (``label``), and whether it carries a graph's trace marks."""

    name: str
    render: Callable[[T], str]
    media_type: str
    label: str
    carries_trace: bool = False


def names(family: Sequence[Format[T]]) -> tuple[str, ...]:
    """The names of a family's formats, in the table's order (the ``--format`` choices)."""
    return tuple(f.name for f in family)


def row(family: Sequence[Format[T]], name: str) -> Format[T]:
    """The row named ``name`` (a KeyError naming it when the family has none)."""
    for f in family:
        if f.name == name:
            return f
    raise KeyError(name)


def spoken(words: Sequence[str], *, serial_comma: bool = False) -> str:
    """``a, b or c`` (``a, b, or c`` with ``serial_comma``): how a help text lists formats."""
    if len(words) < 2:
        return "".join(words)
    last = (", or " if serial_comma and len(words) > 2 else " or ") + words[-1]
    return ", ".join(words[:-1]) + last
