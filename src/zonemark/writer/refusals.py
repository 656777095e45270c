"""Refusals as data: one catalogue of every reason the safe writer refuses a write.

A :class:`RefusedWrite` carries a stable machine ``code`` from :data:`REFUSALS`, the zone
concerned (``zone``: its opening line; ``level``: its permission level) and the rule
(``rule``: the spec section, or the writer ruling of ``docs/conformance.md``), set where the
refusal is raised.  ``str(exc)`` is one line for a person; a face branches on ``code`` and never
reads the wording (the MCP server maps each code to what an agent may do instead, the CLI
prints the line).

The store's own refusals (:mod:`.store`) are exceptions of their own, but they carry a code
from the same table (``WRITE_CONFLICT``, ``FILE_NOT_WRITABLE``, ``NOTHING_TO_UNDO``,
``NO_SUCH_VERSION``, ``HISTORY_CORRUPT``), and so does :class:`InvalidDate` (``BAD_DATE``, a
``ValueError``: a bad argument to the command line), so a face can treat every refusal alike.

``tests/writer/test_refusals.py`` checks that every ``RefusedWrite`` in the writer is raised with a
code of this table, and produces every code from a real write.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Refusal:
    """One refusal code: the rule it enforces, what it means, and what the caller may do instead."""

    code: str
    section: str
    summary: str
    remedy: str


_TABLE = (
    # -- who may change what (§5.2) ----------------------------------------------------------
    Refusal("ZONE_READ_ONLY", "§5.2", "the zone is [P1] (the user's alone) or [P2] (changed only on an explicit "
            "user command), or the text lies outside every zone: ai may not change it",
            "propose the change for the user to apply, or ask the user"),
    Refusal("ZONE_PROPOSE_ONLY", "§5.2", "the zone is [P3], long-term memory: an ai change there is a proposal the "
            "user applies", "propose the change (it is applied by the user)"),
    Refusal("ZONE_APPEND_ONLY", "§5.2", "the zone is [P4], short-term memory: ai may append entries, not edit or "
            "delete what is there", "append a new entry, or propose the change for the user to apply"),
    Refusal("USER_ONLY", "§5.2", "only the user may do this (undo, apply or reject a proposal, add a container)",
            "ask the user; the command needs --as user"),
    # -- where a write goes (§5.1, §5.4, §7.1.2, §7.1.3) ---------------------------------------
    Refusal("UNKNOWN_CONTAINER", "§7.1.2, §7.1.3", "no container answers to the address (or none was given)",
            "use an address the outline lists: a topic path such as 'Maintenance/Tyres', '#2', or a module id"),
    Refusal("AMBIGUOUS_CONTAINER", "§7.1.2, §7.1.3", "the address names more than one container",
            "use '#n' for the n-th container of that name"),
    Refusal("NO_JOURNAL", "§7.1.2, §7.1.3", "the container has no writable zone of its own ([P4]/[P5] after its "
            "declaration and before the next container) to append to",
            "append to another container, or ask the user to add an empty [P4] zone after its declaration"),
    Refusal("NO_ZONE", "§5.1", "no permission zone opens at or contains the line given",
            "give the opening line of a zone (zonemark outline, or a zone listing)"),
    Refusal("NO_PROPOSAL_ZONE", "§7.1.2, W1", "no [P3] zone pairs with the container, so a proposal by container "
            "has nowhere to go", "name the zone to change by its line"),
    Refusal("AMBIGUOUS_ZONE", "§7.1.2, W1", "more than one [P3] zone pairs with the container",
            "name the zone to change by its line"),
    Refusal("UNCLOSED_ZONE", "§5.4", "the zone is never closed, so where it ends cannot be trusted",
            "ask the user to add the closing tag (zonemark check shows where)"),
    Refusal("INLINE_ZONE", "§5.1", "the zone opens inline ('[Pn] text'): its lines are not a block to replace",
            "ask the user to edit it by hand"),
    Refusal("ZONE_NOT_LOCATED", "§5.1", "the zone cannot be located reliably in the file as it is now",
            "check the file (zonemark check) and ask the user to fix it"),
    # -- what is written (§5.5, §7.5, the re-check) --------------------------------------------
    Refusal("BAD_TITLE", "§7.5", "an entry title is one line of 1 to 300 characters, without control characters",
            "send a short one-line title"),
    Refusal("BAD_DATE", "§7.5, W7", "a log date is what the parser reads as one: YYYY-MM-DD, or "
            "YYYY-MM-DDTHH:MM[:SS[.fff]] with an optional Z, +HH:MM or +HHMM (raised as InvalidDate, a ValueError)",
            "give the date in one of those forms, or none for today"),
    Refusal("FILE_NOT_UTF8", "§1, W45", "the file is not valid UTF-8 (another encoding, such as Windows-1252): "
            "UTF-8 text written into it would leave two encodings in one file",
            "ask the user to save the file as UTF-8 (zonemark check shows the first bad byte, INVALID_UTF8)"),
    Refusal("CONTENT_REFUSED", "§5.5", "the text cannot be written as it is (not valid Unicode, too long, or a "
            "line of a proposal that reads as a zone tag)", "send plain text of a reasonable size, without zone tags"),
    Refusal("STRUCTURE_CHANGED", "§5.5, re-check", "the write would change the file's structure: a header, a zone, "
            "a module, a state, the registry, or bytes outside the edited region",
            "send plain text; entries as '###### ' lines where entries may go, nothing else structural"),
    Refusal("NEW_DIAGNOSTIC", "§5.5, re-check", "the write would add a diagnostic the file does not have (a "
            "warning or an error; for the user's own edits, an error)",
            "change the text so that zonemark check stays as clean as it was (zonemark explain CODE)"),
    Refusal("NO_CHANGE", "W1", "the proposal would change nothing", "propose content that differs from the zone's"),
    # -- freshness -----------------------------------------------------------------------------
    Refusal("STALE_ZONE", "W9", "the zone changed since its hash was read: writing now would overwrite a change "
            "not seen", "read the zone again, merge the change into what is there now, and retry with the new hash"),
    Refusal("STALE_PROPOSAL", "W2", "the proposal's zone changed since the proposal was made (or is gone)",
            "ask for a new proposal against the zone as it is now"),
    Refusal("PROPOSAL_CLOSED", "W2", "the proposal was already applied or rejected", "list the open proposals"),
    # -- the state registry (§7.3.1) -----------------------------------------------------------
    Refusal("NO_REGISTRY", "§7.3.1, §5.5 Invariant 5", "there is no MODULE_STATE_REGISTRY to rewrite (or no "
            "reminder that would hold the layer's), and only the user adds permission zones",
            "ask the user to add '## MODULE_STATE_REGISTRY:' in a [P4] zone of the reminder"),
    Refusal("AMBIGUOUS_REMINDER", "§3.1, §7.3.1", "the layer holds more than one [reminder], so whose registry "
            "governs it cannot be told", "give the reminder file whose registry to change"),
    Refusal("PERMANENT_STATE", "§7.3.1", "the module's STATE is '- permanent'; the registry may not override it",
            "leave the module as it is, or propose a change to its STATE for the user"),
    Refusal("UNKNOWN_MODULE", "§7.3.1", "the registry names modules by id, and no module of the file (or layer) "
            "has that id", "use the ids the status of the layer lists"),
    Refusal("INVALID_MODULE_ID", "§7.1, §7.1.1", "the text is not a module id a file may hold (a temporary ~Tn id, "
            "spaces, ':', brackets)", "use a declared module id"),
    Refusal("CONTRADICTORY_STATE", "§7.3.1", "the same module was asked to be both ACTIVE and INACTIVE",
            "name each module once"),
    Refusal("ID_CONFLICT", "§7.1.1", "the module is declared in a file the layer does not merge (two files "
            "declare that id, LAYER_ID_CONFLICT)", "ask the user to rename one of the two ids first"),
    Refusal("LAYER_UNREADABLE", "§3", "the layer folder cannot be read as a layer", "check the folder path"),
    # -- new files and containers (§3.4, §7.1, §14) ------------------------------------------------
    Refusal("BAD_NAME", "§4.1, §5.5", "the name would make structure (a line break, a zone or file-type tag, "
            "[NUCLEI: ...], [/LOG], an HTML comment, closing '#'), is empty, or is too long",
            "choose a plain one-line name"),
    Refusal("FILE_EXISTS", "§3.4", "the file already exists; zonemark never overwrites a file",
            "choose another name or folder"),
    Refusal("SECOND_REMINDER", "§3.1", "the layer already has a [reminder]; a layer has exactly one",
            "add a module or a memory instead"),
    Refusal("ID_TAKEN", "§7.1.1", "the module id is already declared in the layer", "give another id"),
    Refusal("CONTAINER_EXISTS", "§7.1.2", "a container of that name already exists there", "choose another name"),
    Refusal("BAD_PARENT", "§7.1.3", "a sub-topic goes under a topic or sub-topic, down to SUBTOPIC3 (H5)",
            "give the path of an existing topic, at most four names deep"),
    Refusal("FILE_BROKEN", "§5.4", "the file's zones or headers cannot be trusted to place a new container",
            "fix what zonemark check reports first, or add the container by hand"),
    # -- the store (raised as StoreError and its subclasses) ----------------------------------------
    Refusal("WRITE_CONFLICT", "store", "another writer held the file too long, or it kept changing while the "
            "write was prepared; nothing was written", "read the file again and retry"),
    Refusal("FILE_NOT_WRITABLE", "store", "the file is read-only (or not a regular file); zonemark does not write "
            "it", "ask the user"),
    Refusal("NOTHING_TO_UNDO", "store", "zonemark has no saved version of the file left to restore",
            "nothing to do"),
    Refusal("NO_SUCH_VERSION", "store", "the history holds no saved version of that id", "list the history"),
    Refusal("HISTORY_CORRUPT", "store", "a saved version no longer matches its recorded checksum",
            "restore the file from a backup"),
)

#: code -> :class:`Refusal`: every reason a write may be refused.
REFUSALS: dict[str, Refusal] = {r.code: r for r in _TABLE}


class RefusedWrite(Exception):
    """A write the safe writer refuses; ``str(exc)`` is one line saying what was refused and why.

    ``code`` is a key of :data:`REFUSALS`; ``zone`` the opening line of the zone concerned and
    ``level`` its permission level (None when no zone is concerned); ``rule`` the spec section or
    check that refused it (the code's section unless the raise site is more precise).
    """

    def __init__(self, message: str, *, code: str, zone: int | None = None, level: int | None = None,
                 rule: str | None = None):
        if code not in REFUSALS:
            raise ValueError(f"unknown refusal code {code!r} (add it to zonemark.writer.refusals.REFUSALS)")
        super().__init__(message)
        self.message = message
        self.code = code
        self.zone = zone
        self.level = level
        self.rule = rule if rule is not None else REFUSALS[code].section

    def __reduce__(self) -> tuple[Any, ...]:  # a refusal crosses process boundaries whole (multiprocessing, pickling)
        return _rebuild, (self.message, self.code, self.zone, self.level, self.rule)

    def to_dict(self) -> dict[str, Any]:
        """The refusal as data (JSON output of the faces)."""
        return {"code": self.code, "message": self.message, "zone": self.zone, "level": self.level,
                "rule": self.rule}


def _rebuild(message: str, code: str, zone: int | None, level: int | None, rule: str | None) -> RefusedWrite:
    return RefusedWrite(message, code=code, zone=zone, level=level, rule=rule)


class InvalidDate(ValueError):
    """A log date the parser would not read as one (§7.5, W7): a bad argument (``ValueError``) with a code."""

    code = "BAD_DATE"


def refusal_table() -> str:
    """The catalogue as a Markdown table (``docs/conformance.md`` embeds it; a test keeps them equal)."""
    rows = ["| code | rule | refused because | what to do instead |", "|---|---|---|---|"]
    rows += [f"| `{r.code}` | {r.section} | {r.summary} | {r.remedy} |" for r in _TABLE]
    return "\n".join(rows)
