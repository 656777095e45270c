"""zonemark: reads, checks and safely writes files of the IllAIra Markdown Standard v1.13.

An independent implementation; IllAIra is a registered trademark of IllAIra Labs.
"""

from .diagnostics import CATALOGUE, CodeInfo, Diagnostic, Severity
from .document import Document
from .errors import (DuplicateBlockConflictError, DuplicateBlockConflictWarning, InvalidHeaderInWritableZoneError,
                     MismatchedPermissionBlockError, MissingFileTypeError, MultipleFileTypeError,
                     NestedPermissionBlockError, PermanentStateOverrideAttemptWarning, UnclosedPermissionBlockError,
                     UngovernedModuleWarning, UnprotectedLogicalContentError, UnresolvedNucleusReferenceWarning,
                     ValidationError, ValidationWarning, ZonemarkError, exception_for, validate)
from .nodes import Block, Heading, ListItem, ModuleInfo, NucleusInfo, Paragraph, Quote, RegistryInfo, Rule
from .parser import parse, parse_bytes, parse_file
from .serialize import serialize, serialize_bytes

__version__ = "0.1.0"
STANDARD_VERSION = "v1.13"

__all__ = [
    "CATALOGUE", "CodeInfo", "Diagnostic", "Severity", "Document", "Block", "Heading", "ListItem", "ModuleInfo",
    "NucleusInfo", "Paragraph", "Quote", "RegistryInfo", "Rule", "parse", "parse_bytes", "parse_file", "serialize",
    "serialize_bytes", "validate", "exception_for", "ZonemarkError", "ValidationError", "ValidationWarning",
    "MissingFileTypeError", "MultipleFileTypeError", "UnclosedPermissionBlockError", "MismatchedPermissionBlockError",
    "NestedPermissionBlockError", "UnprotectedLogicalContentError", "InvalidHeaderInWritableZoneError",
    "DuplicateBlockConflictError", "DuplicateBlockConflictWarning", "UnresolvedNucleusReferenceWarning",
    "UngovernedModuleWarning", "PermanentStateOverrideAttemptWarning",
]
