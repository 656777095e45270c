"""From a refusal to the text an agent reads: the stable code, the zone and rule, and what to do instead.

The writer decides every refusal (§5.2 permissions, §5.5 the two barriers, §7.3.1 the
registry) and names it with a code of :data:`zonemark.writer.REFUSALS`; this module only says,
for each code, what an agent may do instead *with this server's tools* — and, where the tool
that was refused changes the advice, what fits that tool (:data:`INSTEAD_FOR`).  It never reads
the wording of a refusal.  :data:`FACE_CODES` are the server's own (paths, arguments, search,
traces, the context budget).  :data:`CODES` is the whole table an agent or client may branch on.

The text of a tool error is always::

    CODE: what was refused and why (the writer's own sentence)
    zone: [P3] at line 12 · rule: §5.2
    instead: what the agent may do

The ``zone`` line is left out when no zone is concerned.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.text import printable
from ..writer import REFUSALS, RefusedWrite


@dataclass(frozen=True)
class Code:
    """A stable refusal code: what it means and what the agent may do instead."""

    code: str
    meaning: str
    instead: str


#: What an agent may do instead, for each writer refusal (the tools of this server by name).
INSTEAD: dict[str, str] = {
    "ZONE_READ_ONLY": "ask the user, or call propose_change(file, zone_line, reason, content) with the zone's new "
                      "text for the user to apply",
    "ZONE_PROPOSE_ONLY": "call propose_change(file, zone_line, reason, content) with the zone's new text; the user "
                         "applies it",
    "ZONE_APPEND_ONLY": "call append_entry to add an entry, or propose_change(file, zone_line, reason, content) to "
                        "change what is there",
    "USER_ONLY": "ask the user; this server never applies, undoes or deletes",
    "UNKNOWN_CONTAINER": "call list_containers(file) and pass one of the addresses it gives",
    "AMBIGUOUS_CONTAINER": "call list_containers(file) and pass the address it gives for the one you mean "
                           "('#n' picks the n-th of a name)",
    "NO_JOURNAL": "append to a container that list_containers marks ai_may 'append_entry', or ask the user to add "
                  "an empty [P4] zone right after this container's declaration",
    "NO_ZONE": "call list_zones(file) and pass the line of a zone it lists",
    "NO_PROPOSAL_ZONE": "give zone_line instead of container: list_zones(file) lists every zone with its line",
    "AMBIGUOUS_ZONE": "give zone_line instead of container: one of the lines named above",
    "UNCLOSED_ZONE": "call check() to see where the zone is left open, and ask the user to close it",
    "INLINE_ZONE": "ask the user to edit it by hand: a zone opened inline ('[Pn] text') is not rewritten by a tool",
    "ZONE_NOT_LOCATED": "call check() and ask the user to fix the file",
    "BAD_TITLE": "send a short one-line title (1 to 300 characters, no control characters)",
    "CONTENT_REFUSED": "send plain text (valid Unicode, of a reasonable size)",
    "STRUCTURE_CHANGED": "send plain text: in a [P5] zone, entries as '###### LOG: <date> — <title>' lines and "
                         "text; no other headers, zone tags, rules or registry lines",
    "NEW_DIAGNOSTIC": "change the text so that it adds no finding (the message names it): for lists, markers * + - "
                      "by level and at most three levels",
    "NO_CHANGE": "send content that differs from what the zone holds (read_zone shows it)",
    "STALE_ZONE": "when the refusal says where the zone is now, call edit_volatile there with the same hash; "
                  "otherwise call read_zone(file, zone_line) again, merge your change into what is there now, and "
                  "call edit_volatile again with the new hash",
    "STALE_PROPOSAL": "propose the change again against the zone as it is now (read_zone shows it)",
    "PROPOSAL_CLOSED": "propose the change again if it is still wanted",
    "NO_REGISTRY": "ask the user to add '## MODULE_STATE_REGISTRY:' in a [P4] zone of the reminder",
    "AMBIGUOUS_REMINDER": "ask the user: the layer holds more than one [reminder] (check() reports "
                          "LAYER_MULTIPLE_REMINDERS)",
    "PERMANENT_STATE": "leave the module as it is: a '- permanent' STATE is the user's decision (propose_change on "
                       "the zone of its STATE asks for a change)",
    "UNKNOWN_MODULE": "use the module ids layer_status lists",
    "INVALID_MODULE_ID": "use the module ids layer_status lists (temporary ~Tn ids are never written)",
    "CONTRADICTORY_STATE": "name each module once, in activate or in deactivate",
    "ID_CONFLICT": "ask the user to rename one of the two modules that share the id (check() reports "
                   "LAYER_ID_CONFLICT)",
    "LAYER_UNREADABLE": "tell the user: the layer folder cannot be read",
    "WRITE_CONFLICT": "read again and retry in a moment",
    "FILE_NOT_WRITABLE": "ask the user; do not retry",
    "FILE_NOT_UTF8": "tell the user the file is not UTF-8 (check() reports INVALID_UTF8) and must be saved as UTF-8 "
                     "first; do not retry",
}

#: Where the refused tool changes the advice: (code, tool) -> what fits that tool.
INSTEAD_FOR: dict[tuple[str, str], str] = {
    ("ZONE_PROPOSE_ONLY", "append_entry"): "call propose_change(file, container=..., reason, content) with the "
                                           "zone's whole new text (what read_zone shows, plus your entry); the "
                                           "user applies it",
    ("ZONE_PROPOSE_ONLY", "ingest_log"): "this container's journal is [P3]: ingest into a container list_containers "
                                         "marks ai_may 'append_entry', or call propose_change(file, container=..., "
                                         "reason, content) for the user to apply",
    ("NO_JOURNAL", "ingest_log"): "ingest into a container that list_containers marks ai_may 'append_entry', or ask "
                                  "the user to add an empty [P4] zone right after this container's declaration",
    ("ZONE_READ_ONLY", "set_module_state"): "ask the user: the MODULE_STATE_REGISTRY sits in a zone only the user "
                                            "changes (propose_change on that zone asks for the new lines)",
    ("ZONE_PROPOSE_ONLY", "set_module_state"): "call propose_change(file, zone_line, reason, content) on the "
                                               "registry's [P3] zone with the new ACTIVE/INACTIVE lines",
    ("CONTENT_REFUSED", "propose_change"): "send only the zone's inner text: no line that reads as a zone tag "
                                           "([Pn] or [/Pn])",
    ("NEW_DIAGNOSTIC", "edit_volatile"): "change the text so that it adds no finding (the message names it; "
                                         "zonemark explain CODE describes it), then call edit_volatile again",
    ("WRITE_CONFLICT", "edit_volatile"): "call read_zone again for the new hash, then retry",
}


FACE_CODES: dict[str, Code] = {c.code: c for c in (
    Code("PATH_OUTSIDE_LAYER", "the path leaves the layer folder ('..', an absolute path, a symbolic link out, "
                               "or zonemark's own .zonemark folder)",
         "give a path relative to the layer folder, as layer_status lists the files"),
    Code("NO_SUCH_FILE", "no .md file of the layer has that path",
         "give a path relative to the layer folder, as layer_status lists the files"),
    Code("BAD_ARGUMENT", "an argument is missing, of the wrong type, or out of range",
         "fix the argument as described and call again"),
    Code("BAD_CURSOR", "the cursor was not one this tool gave for these arguments (another tool's, another "
                       "call's, or altered)",
         "call the tool again with the same arguments and no cursor, then pass each next_cursor as it is"),
    Code("BAD_QUERY", "the search query or one of its filters cannot be used as given",
         "search for words (letters or digits); dates as YYYY-MM-DD; a container address list_containers gives"),
    Code("SEARCH_UNAVAILABLE", "the search index cannot run here (this Python's sqlite3 lacks FTS5, or the "
                               "index stays busy)",
         "read with read_container instead, or retry in a moment"),
    Code("BUDGET_TOO_SMALL", "the context cannot fit the budget: [P1]/[P2] content is never left out",
         "call build_context with a larger budget_tokens (the message gives the size needed), or without one"),
    Code("NO_TRACE", "the text holds no [NTRACE: v1] ... [/NTRACE] block",
         "send the whole answer that ends with the trace block"),
    Code("TRACE_REJECTED", "every trace block in the text was rejected (an unknown version, or never closed)",
         "send a complete block opened by [NTRACE: v1] and closed by [/NTRACE]"),
    Code("UNKNOWN_PROMPT", "the server has no prompt of that name (a prompt's error, not a tool's)",
         "list the prompts again: load_layer and review_pending"),
    Code("UNKNOWN_TOOL", "the server has no tool of that name",
         "list the tools again; apply, undo and delete are the user's and never offered"),
    Code("SCOPE_MISSING", "over HTTP, the client's token does not hold the scope this tool or resource needs "
                          "(read, append, propose, edit)",
         "use the tools tools/list shows; ask the user for a token with the scope (zonemark access LAYER "
         "add-token NAME --scope ...) or to approve the app again with it"),
    Code("INTERNAL_ERROR", "a defect in zonemark, not a problem with your call",
         "read the file again before retrying, and tell the user"),
)}

#: Every code a tool error of this server may start with.
CODES: dict[str, Code] = {
    **{code: Code(code, r.summary, INSTEAD.get(code, r.remedy)) for code, r in REFUSALS.items()},
    **FACE_CODES,
}


def instead(code: str, tool: str | None = None) -> str:
    """What an agent may do instead of the call ``tool`` that was refused with ``code``."""
    return INSTEAD_FOR.get((code, tool or ""), CODES[code].instead)


def render(code: str, message: str, *, level: int | None = None, zone: int | None = None,
           rule: str | None = None, tool: str | None = None) -> str:
    """The tool-error text (see the module docstring)."""
    lines = [f"{code}: {message}"]
    where = []
    if zone is not None:
        where.append(f"zone: {f'[P{level}]' if level else 'the zone'} at line {zone}")
    if rule:
        where.append(f"rule: {rule}")
    if where:
        lines.append(" · ".join(where))
    lines.append(f"instead: {instead(code, tool)}")
    return "\n".join(lines)


def render_refusal(refusal: RefusedWrite, tool: str | None = None) -> str:
    """The tool-error text of a writer's refusal, from its fields: code, message, zone and level, rule."""
    return render(refusal.code, printable(refusal.message), level=refusal.level, zone=refusal.zone,
                  rule=refusal.rule, tool=tool)
