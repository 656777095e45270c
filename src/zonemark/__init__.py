"""zonemark: reads, checks and safely writes files of the IllAIra Markdown Standard v1.13.

An independent implementation; IllAIra is a registered trademark.

The public names below are imported on first use, so that ``zonemark --version`` and a
one-shot command pay only for what they run.  ``docs/architecture.md`` shows the packages.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not imported from typing: that module alone costs a one-shot command ~5 ms

__version__ = "0.1.0"
STANDARD_VERSION = "v1.13"

#: public name -> the module that defines it
_EXPORTS = {
    **dict.fromkeys(("CATALOGUE", "CodeInfo", "Diagnostic", "Severity"), "zonemark.core.diagnostics"),
    "Document": "zonemark.core.document",
    **dict.fromkeys(("Block", "Heading", "ListItem", "ModuleInfo", "NucleusInfo", "Paragraph", "Quote",
                     "RegistryInfo", "Rule"), "zonemark.core.nodes"),
    **dict.fromkeys(("parse", "parse_bytes", "parse_file"), "zonemark.core.parser"),
    **dict.fromkeys(("serialize", "serialize_bytes"), "zonemark.core.serialize"),
    **dict.fromkeys(("validate", "exception_for", "ZonemarkError", "ValidationError", "ValidationWarning",
                     "MissingFileTypeError", "MultipleFileTypeError", "UnclosedPermissionBlockError",
                     "MismatchedPermissionBlockError", "NestedPermissionBlockError",
                     "UnprotectedLogicalContentError", "InvalidHeaderInWritableZoneError",
                     "DuplicateBlockConflictError", "DuplicateBlockConflictWarning",
                     "UnresolvedNucleusReferenceWarning", "UngovernedModuleWarning",
                     "PermanentStateOverrideAttemptWarning"), "zonemark.core.errors"),
    **dict.fromkeys(("Layer", "LayerError"), "zonemark.layer.loader"),
    "context": "zonemark.context",  # the function; the package of the same name is callable too
}

#: the same names written out, so that a type checker sees them (tests/meta/test_lazy_exports.py keeps the two equal)
__all__ = [
    "__version__", "STANDARD_VERSION", "CATALOGUE", "CodeInfo", "Diagnostic", "Severity", "Document",
    "Block", "Heading", "ListItem", "ModuleInfo", "NucleusInfo", "Paragraph", "Quote", "RegistryInfo",
    "Rule", "parse", "parse_bytes", "parse_file", "serialize", "serialize_bytes", "validate",
    "exception_for", "ZonemarkError", "ValidationError", "ValidationWarning", "MissingFileTypeError",
    "MultipleFileTypeError", "UnclosedPermissionBlockError", "MismatchedPermissionBlockError",
    "NestedPermissionBlockError", "UnprotectedLogicalContentError", "InvalidHeaderInWritableZoneError",
    "DuplicateBlockConflictError", "DuplicateBlockConflictWarning", "UnresolvedNucleusReferenceWarning",
    "UngovernedModuleWarning", "PermanentStateOverrideAttemptWarning", "Layer", "LayerError", "context",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'zonemark' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # what a type checker and an IDE see
    from typing import Any

    from .core.diagnostics import CATALOGUE, CodeInfo, Diagnostic, Severity
    from .core.document import Document
    from .core.errors import (DuplicateBlockConflictError, DuplicateBlockConflictWarning,
                              InvalidHeaderInWritableZoneError, MismatchedPermissionBlockError,
                              MissingFileTypeError, MultipleFileTypeError, NestedPermissionBlockError,
                              PermanentStateOverrideAttemptWarning, UnclosedPermissionBlockError,
                              UngovernedModuleWarning, UnprotectedLogicalContentError,
                              UnresolvedNucleusReferenceWarning, ValidationError, ValidationWarning, ZonemarkError,
                              exception_for, validate)
    from .core.nodes import Block, Heading, ListItem, ModuleInfo, NucleusInfo, Paragraph, Quote, RegistryInfo, Rule
    from .core.parser import parse, parse_bytes, parse_file
    from .core.serialize import serialize, serialize_bytes
    from .context import context
    from .layer.loader import Layer, LayerError
