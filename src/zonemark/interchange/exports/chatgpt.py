"""A ChatGPT data export: ``conversations.json`` (or ``conversations-000.json``, …), streamed (issue 21).

Each conversation is a tree (``mapping``: node id -> ``{message, parent, children}``); only the
branch that ends at ``current_node`` counts, followed back to the root, so regenerated answers and
edited-away messages are never read.  Of that branch, an ``assistant`` message addressed to
everyone (``recipient`` ``all``) with ``content_type`` ``text`` or ``multimodal_text`` gives its
string ``parts``; other parts (images, files) and other content types (code, execution output,
browsing, reasoning) are counted as skipped, as are user, system and tool messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from .depth import array_objects
from .model import Conversation, Message, epoch, text_of

_TEXT_TYPES = ("text", "multimodal_text")
_SHAPE = re.compile(r'^\s*\[\s*(\{|\])')


def sniff(head: str) -> bool:
    """A JSON array whose first conversation has a ``mapping`` (the head of the file is enough)."""
    return _SHAPE.match(head) is not None and '"mapping"' in head and '"chat_messages"' not in head


def read(stream: BinaryIO) -> Iterator[Conversation]:
    """Every conversation of the array, one at a time (ijson: the file is never loaded whole)."""
    return (conversation(raw) for raw in array_objects(stream))


def branch(mapping: dict[str, Any], current: object) -> list[dict[str, Any]]:
    """The nodes from the root to ``current`` (the kept branch), each node once even if the tree has a loop."""
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    node_id = current
    while isinstance(node_id, str) and node_id not in seen:
        node = mapping.get(node_id)
        if not isinstance(node, dict):
            break
        seen.add(node_id)
        path.append(node)
        node_id = node.get("parent")
    path.reverse()
    return path


def conversation(raw: dict[str, Any]) -> Conversation:
    """One conversation object of the export as :class:`Conversation` (module docstring)."""
    mapping = raw.get("mapping")
    messages: list[Message] = []
    skipped = 0
    nodes = branch(mapping, raw.get("current_node")) if isinstance(mapping, dict) else []
    for node in nodes:
        msg = node.get("message")
        if not isinstance(msg, dict):
            continue
        author = msg.get("author")
        role = author.get("role") if isinstance(author, dict) else None
        content = msg.get("content")
        if role != "assistant" or not isinstance(content, dict) or msg.get("recipient", "all") != "all":
            skipped += 1 if role not in (None, "system") or content else 0
            continue
        metadata = msg.get("metadata")
        if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
            skipped += 1
            continue
        if content.get("content_type") not in _TEXT_TYPES:
            skipped += 1
            continue
        parts = content.get("parts")
        parts = parts if isinstance(parts, list) else []
        texts = [p for p in parts if isinstance(p, str)]
        other = len(parts) - len(texts)
        text = "\n\n".join(t for t in texts if t)
        if text or other:
            messages.append(Message(text, epoch(msg.get("create_time")), other))
    conv_id = text_of(raw.get("conversation_id")) or text_of(raw.get("id"))
    return Conversation(conv_id, text_of(raw.get("title")), epoch(raw.get("create_time")), tuple(messages), skipped)
