"""The export of a layer as text for a chat or a system prompt: ``zonemark.context(layer, budget=...)``.

See :mod:`.export` for what goes in and :mod:`.tokens` for the token estimate.

``zonemark.context`` names both this package and the function :func:`context`.  Python sets
the package as an attribute of ``zonemark`` whenever something imports ``zonemark.context.…``,
so the package itself is made callable (it calls :func:`context`): ``zonemark.context(layer)``
works whichever import came first.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from .export import ContextFile, ContextRefused, ContextResult, context
from .tokens import estimate_tokens

__all__ = ["context", "ContextResult", "ContextFile", "ContextRefused", "estimate_tokens"]


class _CallablePackage(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> ContextResult:
        return context(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
