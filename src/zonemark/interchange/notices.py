"""The warnings of the chat loop (§N.18, §N.19): one stable code each, as data.

These are not diagnostics of a file (those live in ``core/diagnostics.py``): they describe a
piece of *chat text* — what was copied out of a provider's chat window — and the line they
point at is a line of that text (1-based; a warning about the text as a whole points at line 1;
only a skipped trace record, which is no text, says 0).  ``CODES`` gives each
code its spec section and a one-line meaning; ``docs/conformance.md`` lists them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Notice:
    """One warning about chat text: a stable ``code``, a one-line ``message`` and the ``line``."""

    code: str
    message: str
    line: int

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "line": self.line}


#: code -> (spec section, meaning)
CODES: dict[str, tuple[str, str]] = {
    # §N.19 log extraction
    "LOG_MARKER_STRAY": ("§N.19.3.5", "a [/LOG] line with no log entry open before it: dropped"),
    "LOG_MARKER_DUPLICATE": ("§N.19.3.5", "a second [/LOG] after an entry was already closed: dropped"),
    "LOG_MARKER_NOT_ALONE": ("§N.19.2", "a line that reads like [/LOG] but is not the marker alone on its line:"
                                        " kept as body text"),
    "LOG_HEADER_WITHOUT_HASHES": ("§N.19.1, §7.5", "a canonical 'LOG: <date> — <title>' line without its"
                                                   " '######' (text selected on screen) was taken as a log header"),
    "LOG_HEADER_WRONG_LEVEL": ("§7.5", "a 'LOG:' header at H1-H5 is not a log entry (logs are H6)"),
    "LOG_WITHOUT_TITLE": ("§7.5", "the log header has no event title: ingestion refuses the entry"),
    "LOG_INVALID_DATE": ("§7.5", "the log header's date is not a valid ISO 8601 date: ingestion refuses the entry"),
    "LOG_ENDS_AT_FENCE": ("§N.19.3.2", "an entry that starts inside a code fence ends at the fence's closing line"),
    # §N.18 neural traces
    "TRACE_NOT_FOUND": ("§N.4.1", "the text holds no [NTRACE: v1] … [/NTRACE] block"),
    "TRACE_DISABLED": ("§N.2", "the layer has no effectively active DEFERRED_NEURAL_TRACING module: nothing is"
                               " illuminated"),
    "TRACE_ENABLED_BY_REGISTRY": ("§N.6, §7.3.1", "tracing is on only because the state registry (which the AI"
                                                  " may rewrite) activates the enabling module"),
    "TRACE_ENABLED_WITHOUT_STATE": ("§N.2, §N.6", "tracing is on because the enabling module is loaded with no"
                                                  " STATE and no registry entry (neither absent nor inactive)"),
    "TRACE_UNKNOWN_VERSION": ("§N.4.5, §N.8", "the marker names a grammar version other than v1: the block is"
                                              " rejected, never parsed"),
    "TRACE_UNCLOSED": ("§N.4.1", "a block is never closed by [/NTRACE]: rejected"),
    "TRACE_MARKER_MISMATCH": ("§N.3", "a block opened with one marker family is closed by the other"
                                      " ([NTRACE: v1] … [/TRACE]): accepted"),
    "TRACE_MARKER_IN_TEXT": ("§N.4.1", "a trace marker inside a sentence is not a marker: ignored"),
    "TRACE_STRAY_CLOSE": ("§N.4.1", "a closing marker with no open block: ignored"),
    "TRACE_STRAY_TEXT": ("§N.4.2", "text inside a block before its first entry: ignored"),
    "TRACE_MALFORMED_ENTRY": ("§N.3", "an entry (or a nucleus id) that does not follow the grammar: dropped"),
    "TRACE_UNKNOWN_STATE": ("§N.3", "a MODULE state outside active/queried/suppressed: module kept, state null"),
    "TRACE_UNKNOWN_ACTION": ("§N.3", "a LOG or MEMORY action outside its vocabulary: entry kept, action null"),
    "TRACE_BAD_DATE": ("§N.3", "a LOG date that is not ISO 8601: entry kept, date as written"),
    "TRACE_SECTION_ORDER": ("§N.3", "sections out of the canonical order NUCLEI, MODULE/LOG, MEMORY: kept"),
    "TRACE_UNRESOLVED_REF": ("§N.3", "a MEMORY '@ ref' matches no entry or topic of that memory: memory kept,"
                                     " no entry lit"),
    "TRACE_UNKNOWN_IDENTIFIERS": ("§N.4.4, §N.7 (d)", "summary of the unknown identifiers dropped"
                                                      " (\"1 unknown identifier skipped\")"),
    "TRACE_RESTRICTED_CONTENT": ("§N.4 CAUTION", "a trace line (a LOG's free text, a MODULE's name, a MEMORY's"
                                                 " ref) reproduces content of a [P1]/[P2] zone: that line is"
                                                 " rejected"),
    "TRACE_INACTIVE_MODULE": ("§N.1", "the trace says a module was active or queried while the layer has it"
                                      " inactive: kept"),
    "TRACE_LEFT_OUT": ("§N.4", "the answer lists only the first blocks and warnings of a long text: how many"
                               " were left out (the result counts them all)"),
    "TRACE_RECORDS_SKIPPED": ("§N.1", "a recorded trace in .zonemark/traces could not be read: left out of the"
                                      " heat view"),
}


def notice(code: str, message: str, line: int) -> Notice:
    """A :class:`Notice`, checking that ``code`` is in :data:`CODES`."""
    if code not in CODES:
        raise KeyError(f"unknown notice code {code}")
    return Notice(code, message, line)
