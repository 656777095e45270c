"""Peak memory of one call, for the tests that hold a bound on it (never a wall time)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any


def peak(fn: Callable[..., Any], *args: Any) -> tuple[int, Any]:
    """The most bytes allocated at once while ``fn(*args)`` runs (its result included), and the result."""
    tracemalloc.start()
    try:
        result = fn(*args)
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()
