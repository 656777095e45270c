"""Pause Python's cyclic garbage collector around bulk building of acyclic data.

Parsing a large file, loading a layer and building its graph create 10^5-10^6 small
objects that never form reference cycles; generational collections triggered by
those allocations would rescan all of them again and again and make the work
superlinear.  Reference counting still frees everything as usual.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """The collector off for the block, back on after it if it was on."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
