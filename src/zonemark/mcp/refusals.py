"""From a refusal to the text an agent reads: a stable code, the zone and rule, and what to do instead.

The writer decides every refusal (§5.2 permissions, §5.5 the two barriers, §7.3.1 the
registry); this module only names it.  :data:`CODES` is the table of stable codes — an agent
or a client may branch on them — and :func:`from_writer` picks one for a
:class:`zonemark.writer.RefusedWrite` from the rule it carries and the level of the zone it
names.  The text of a tool error is always::

    CODE: what was refused and why (the writer's own sentence)
    zone: [P3] at line 12 · rule: §5.2
    instead: what the agent may do

The ``zone`` line is left out when no zone is concerned.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Code:
    """A stable refusal code: what it means and what the agent may do instead."""

    code: str
    meaning: str
    instead: str


CODES: dict[str, Code] = {c.code: c for c in (
    Code("ZONE_READ_ONLY", "the zone is [P1] (user-only) or [P2] (read-only without an explicit user command), §5.2",
         "ask the user, or call propose_change with the new content for the user to apply"),
    Code("ZONE_PROPOSE_ONLY", "the zone is [P3], long-term memory: an AI change there is a proposal, §5.2",
         "call propose_change(file, zone_line, reason, content); the user applies it"),
    Code("ZONE_APPEND_ONLY", "the zone is [P4], short-term memory: an AI may append, not edit or delete, §5.2",
         "call append_entry to add an entry, or propose_change to change what is there"),
    Code("NO_JOURNAL", "the container has no [P4]/[P5] zone of its own to append to, §7.1.2/§7.1.3",
         "call propose_change for the container, or ask the user to add an empty [P4] zone right after its "
         "declaration"),
    Code("UNKNOWN_CONTAINER", "no container, or more than one, answers to that address",
         "call list_containers(file) and pass one of the addresses it gives"),
    Code("NO_ZONE", "no permission zone opens at or contains that line, §5.1",
         "call list_zones(file) and pass the line of a zone it lists"),
    Code("ZONE_NOT_EDITABLE", "the zone is never closed, opens inline, or cannot be located reliably, §5.1/§5.4",
         "call check() and ask the user to fix the file"),
    Code("STALE_ZONE", "the zone changed since its base_hash was read: writing now would overwrite an edit you "
                       "have not seen",
         "call read_zone(file, zone_line) again, merge your change into what is there now, and retry with the new "
         "hash"),
    Code("CONTENT_REFUSED", "the text would add structure or a problem to the file, §5.5 (sanitising and "
                            "re-check)",
         "send plain text: entries as '###### ' lines in a [P5] zone, no other headers, zone tags, rules or "
         "registry lines"),
    Code("BAD_TITLE", "an entry title is one line of 1 to 300 characters without control characters, §7.5",
         "send a short one-line title"),
    Code("STATE_REFUSED", "the registry change names an unknown or permanent module, or one both ACTIVE and "
                          "INACTIVE, §7.3.1",
         "use module ids from layer_status; a '- permanent' STATE cannot be overridden (propose_change to its "
         "STATE instead)"),
    Code("NO_REGISTRY", "the reminder has no MODULE_STATE_REGISTRY, and only the user adds permission zones, "
                        "§7.3.1/§5.5 Invariant 5",
         "ask the user to add '## MODULE_STATE_REGISTRY:' in a [P4] zone of the reminder"),
    Code("NO_CHANGE", "the proposal would change nothing",
         "send content that differs from what the zone holds"),
    Code("WRITE_CONFLICT", "another writer holds the file, or it kept changing while the write was prepared",
         "read again and retry in a moment"),
    Code("FILE_NOT_WRITABLE", "the user made the file read-only, or it cannot be written",
         "ask the user; do not retry"),
    Code("PATH_OUTSIDE_LAYER", "the path leaves the layer folder ('..', an absolute path, a symbolic link out, "
                               "or zonemark's own .zonemark folder)",
         "give a path relative to the layer folder, as layer_status lists the files"),
    Code("NO_SUCH_FILE", "no .md file of the layer has that path",
         "give a path relative to the layer folder, as layer_status lists the files"),
    Code("BAD_ARGUMENT", "an argument is missing, of the wrong type, or out of range",
         "fix the argument as described and call again"),
    Code("UNKNOWN_TOOL", "the server has no tool of that name",
         "list the tools again; apply, undo and delete are the user's and never offered"),
    Code("REFUSED", "the writer refused the change", "read the reason, then ask the user"),
    Code("INTERNAL_ERROR", "a defect in zonemark, not a problem with your call",
         "read the file again before retrying, and tell the user"),
)}

#: Rules the writer names by a word rather than a section, and the section that makes them.
_RULE_SECTIONS = {"address": "§7.1.2/§7.1.3 (a container is addressed by name or position)",
                  "proposal": "§5.2 (a [P3] change is a proposal the user applies)"}
_SECTION_FOR_LEVEL = {1: "ZONE_READ_ONLY", 2: "ZONE_READ_ONLY", 3: "ZONE_PROPOSE_ONLY", 4: "ZONE_APPEND_ONLY"}


def code_for(rule: str | None, zone: int | None, level: int | None, message: str) -> str:
    """The stable code of a writer refusal (``rule`` and ``zone`` as it carries them, ``level`` of that zone)."""
    if rule == "§5.2":
        return _SECTION_FOR_LEVEL.get(level or 0, "ZONE_READ_ONLY")
    if rule == "§7.1.2":
        return "NO_JOURNAL"
    if rule == "address":
        return "UNKNOWN_CONTAINER"
    if rule in ("§5.1", "§5.4"):
        return "NO_ZONE" if zone is None else "ZONE_NOT_EDITABLE"
    if rule == "§5.5":
        return "NO_REGISTRY" if "no MODULE_STATE_REGISTRY" in message else "CONTENT_REFUSED"
    if rule == "§7.5":
        return "BAD_TITLE"
    if rule == "§7.3.1":
        return "STATE_REFUSED"
    if rule == "proposal":
        return "NO_CHANGE" if "changes nothing" in message else "REFUSED"
    return "REFUSED"


def render(code: str, message: str, *, level: int | None = None, zone: int | None = None,
           rule: str | None = None, instead: str | None = None) -> str:
    """The tool-error text (see the module docstring)."""
    entry = CODES[code]
    lines = [f"{code}: {message}"]
    where = []
    if zone is not None:
        where.append(f"zone: {f'[P{level}]' if level else 'the zone'} at line {zone}")
    if rule:
        where.append(f"rule: {_RULE_SECTIONS.get(rule, rule)}")
    if where:
        lines.append(" · ".join(where))
    lines.append(f"instead: {instead or entry.instead}")
    return "\n".join(lines)
