"""Typed exceptions named as in the spec, raised by :func:`validate`.

Every catalogue code has a class; the spec's own names (§3.3, §5.4, §5.5,
§7.3.1, §7.4.4) are used where the spec gives one.  All errors derive from
:class:`ZonemarkError` and carry the :class:`~zonemark.core.diagnostics.Diagnostic`
that caused them.
"""

from __future__ import annotations

from .diagnostics import CATALOGUE, Diagnostic, Severity
from .document import Document
from .parser import parse


class ZonemarkError(Exception):
    """Base class of every error zonemark raises about a file's content."""

    code = ""

    def __init__(self, diagnostic: Diagnostic, errors: tuple[Diagnostic, ...] = ()):
        super().__init__(diagnostic.format())
        self.diagnostic = diagnostic
        self.errors = errors or (diagnostic,)


class ValidationError(ZonemarkError):
    """A file violates a MUST of the standard (severity error)."""


class ValidationWarning(ZonemarkError):
    """Raised for a warning only when ``validate(..., warnings_as_errors=True)``."""


def _camel(code: str) -> str:
    return "".join(part.capitalize() for part in code.lower().split("_"))


# Spec names (§3.3, §5.4, §5.5, §7.3.1, §7.4.4) where they differ from the code.
_SPEC_NAMES = {
    "MULTIPLE_FILE_TYPES": "MultipleFileTypeError",
    "DUPLICATE_BLOCK_CONFLICT_WARNING": "DuplicateBlockConflictWarning",
    "UNIFORM_LIST_MARKER_WARNING": "UniformListMarkerWarning",
}


class MissingFileTypeError(ValidationError):
    code = "MISSING_FILE_TYPE"


class MultipleFileTypeError(ValidationError):
    code = "MULTIPLE_FILE_TYPES"


class UnclosedPermissionBlockError(ValidationError):
    code = "UNCLOSED_PERMISSION_BLOCK"


class MismatchedPermissionBlockError(ValidationError):
    code = "MISMATCHED_PERMISSION_BLOCK"


class NestedPermissionBlockError(ValidationError):
    code = "NESTED_PERMISSION_BLOCK"


class UnprotectedLogicalContentError(ValidationError):
    code = "UNPROTECTED_LOGICAL_CONTENT"


class InvalidHeaderInWritableZoneError(ValidationError):
    code = "INVALID_HEADER_IN_WRITABLE_ZONE"


class DuplicateBlockConflictError(ValidationError):
    code = "DUPLICATE_BLOCK_CONFLICT"


class DuplicateBlockConflictWarning(ValidationWarning):
    code = "DUPLICATE_BLOCK_CONFLICT_WARNING"


class UnresolvedNucleusReferenceWarning(ValidationWarning):
    code = "UNRESOLVED_NUCLEUS_REFERENCE"


class UngovernedModuleWarning(ValidationWarning):
    code = "UNGOVERNED_MODULE"


class PermanentStateOverrideAttemptWarning(ValidationWarning):
    code = "PERMANENT_STATE_OVERRIDE_ATTEMPT"


EXCEPTIONS: dict[str, type[ZonemarkError]] = {
    cls.code: cls for cls in (
        MissingFileTypeError, MultipleFileTypeError, UnclosedPermissionBlockError,
        MismatchedPermissionBlockError, NestedPermissionBlockError, UnprotectedLogicalContentError,
        InvalidHeaderInWritableZoneError, DuplicateBlockConflictError, DuplicateBlockConflictWarning,
        UnresolvedNucleusReferenceWarning, UngovernedModuleWarning, PermanentStateOverrideAttemptWarning)
}


def exception_for(code: str) -> type[ZonemarkError]:
    """The exception class of a catalogue code (made on first use for zonemark's own codes)."""
    cls = EXCEPTIONS.get(code)
    if cls is None:
        info = CATALOGUE[code]
        base = ValidationError if info.severity is Severity.ERROR else ValidationWarning
        suffix = "Error" if base is ValidationError else "Warning"
        name = _SPEC_NAMES.get(code) or (_camel(code) + ("" if _camel(code).endswith(suffix) else suffix))
        cls = type(name, (base,), {"code": code, "__doc__": info.summary, "__module__": __name__})
        EXCEPTIONS[code] = cls
    return cls


def validate(text: str, *, path: str | None = None, warnings_as_errors: bool = False) -> Document:
    """Parse ``text`` and raise the typed exception of its first error.

    With ``warnings_as_errors`` the first warning raises too.  Returns the
    :class:`Document` when nothing is raised.
    """
    doc = parse(text, path=path)
    bad = [d for d in doc.diagnostics if d.severity is Severity.ERROR or warnings_as_errors]
    if bad:
        errors = [d for d in bad if d.severity is Severity.ERROR] or bad
        first = errors[0]
        raise exception_for(first.code)(first, tuple(bad))
    return doc
