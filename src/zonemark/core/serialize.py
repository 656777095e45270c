"""Back to text (§13.1) and to the §13 JSON shape."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .nodes import Block, Heading, ListItem, Paragraph, Quote, Rule
from .text import encode, printable

if TYPE_CHECKING:  # the document holds its outline and serialisation, not the reverse
    from .document import Document


def serialize(doc: Document) -> str:
    """The file text rebuilt from the top-level blocks: ``serialize(parse(x)) == x``."""
    return "".join(block.raw_markdown for block in doc.blocks)


def serialize_bytes(doc: Document) -> bytes:
    """As :func:`serialize`, encoded back to the file's bytes (invalid UTF-8 kept)."""
    return encode(serialize(doc))


def block_to_dict(block: Block, ignored: frozenset[int] = frozenset(), raw: bool = True) -> dict[str, Any]:
    """One §13 ``IllAIraBlock`` with camelCase keys.

    Besides the §13 fields every block carries ``line`` and ``endLine``
    (1-based, inclusive). Constructs §13 has no type for are ``paragraph``
    blocks with a ``syntax`` field (frontmatter, html_comment, code_fence,
    nuclei_tag, blank).
    """
    d: dict[str, Any] = {"type": block.type}
    if isinstance(block, Heading):
        if block.id is not None:
            d["id"] = block.id
        if block.name is not None:
            d["name"] = block.name
        if block.keyword is not None:
            d["keyword"] = block.keyword
        d["level"] = block.level
        if block.section is not None:
            d["sectionKeyword"] = block.section
        if block.nucleus_id is not None:
            d["nucleusId"] = block.nucleus_id
        if block.assigned_nuclei is not None:
            d["assignedNuclei"] = list(block.assigned_nuclei)
        if block.type == "log":
            if block.date is not None:
                d["date"] = block.date
            if block.title is not None:
                d["title"] = block.title
        elif block.level == 1 and block.title is not None:
            d["title"] = block.title
        if block.type == "state_registry":
            d["activeModules"] = list(block.active_modules or ())
            d["inactiveModules"] = list(block.inactive_modules or ())
        if block.refused or block.line in ignored:
            d["ignored"] = True
    elif isinstance(block, Rule):
        d.update(prefix=block.prefix, ruleNumber=block.rule_number, category=block.category, title=block.title)
        if block.body is not None:
            d["body"] = block.body
        if block.line in ignored:
            d["ignored"] = True
    elif isinstance(block, ListItem):
        d["level"] = block.level
        d["marker"] = block.marker
    elif isinstance(block, Quote):
        if block.severity is not None:
            d["severity"] = block.severity
    elif isinstance(block, Paragraph):
        if block.syntax is not None:
            d["syntax"] = block.syntax
        if block.field_name is not None:
            d["fieldName"] = block.field_name
            d["fieldValue"] = block.field_value
    if block.permission_level is not None:
        d["permissionLevel"] = block.permission_level
    d["line"] = block.line
    d["endLine"] = block.end_line
    d["content"] = block.content
    if raw:
        d["rawMarkdown"] = block.raw_markdown
    if block.children:
        d["children"] = [block_to_dict(c, ignored, raw) for c in block.children]
    return d


def document_to_dict(doc: Document) -> dict[str, Any]:
    """The §13 ``ParsedIllAIraFile``."""
    out: dict[str, Any] = {
        "fileType": doc.file_type,
        "title": doc.title if doc.title is not None else "",
        "blocks": [block_to_dict(b, doc.ignored_lines) for b in doc.blocks],
        "warnings": [d.to_dict() for d in doc.warnings],
        "errors": [d.to_dict() for d in doc.errors],
    }
    if doc.standard_version is not None:
        out["standardVersion"] = doc.standard_version
    if doc.surrogate_escaped:  # JSON holds text: each byte that is not UTF-8 as the characters \xNN
        out = _printable_tree(out)
    return out


def _printable_tree(value: Any) -> Any:
    """A JSON value with every string made printable (a byte kept from invalid UTF-8 as \\xNN)."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {k: _printable_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_printable_tree(v) for v in value]
    return value
