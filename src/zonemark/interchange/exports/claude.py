"""A Claude export: ``conversations.json`` with ``chat_messages``, streamed (issue 21).

Each conversation (``uuid``, ``name``, ``created_at``) lists its messages in order; a message whose
``sender`` is ``assistant`` gives the text of its ``content`` blocks of type ``text`` (or its
``text`` when it has no blocks).  Other blocks (tool use and results, thinking, images) and
attachments are counted as skipped, as are the human's messages.  ``projects.json``,
``memories.json`` and ``users.json`` beside it are not chat text and match no format.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from .depth import array_objects
from .model import Conversation, Message, iso_time, text_of

_SHAPE = re.compile(r'^\s*\[\s*(\{|\])')


def sniff(head: str) -> bool:
    """A JSON array whose first conversation has ``chat_messages``."""
    return _SHAPE.match(head) is not None and '"chat_messages"' in head


def read(stream: BinaryIO) -> Iterator[Conversation]:
    """Every conversation of the array, one at a time (ijson)."""
    return (conversation(raw) for raw in array_objects(stream))


def conversation(raw: dict[str, Any]) -> Conversation:
    """One conversation object as :class:`Conversation` (module docstring)."""
    messages: list[Message] = []
    skipped = 0
    chat = raw.get("chat_messages")
    for msg in chat if isinstance(chat, list) else []:
        if not isinstance(msg, dict):
            continue
        if msg.get("sender") != "assistant":
            skipped += 1
            continue
        blocks = msg.get("content")
        other = sum(len(v) for k in ("attachments", "files") if isinstance(v := msg.get(k), list))
        if isinstance(blocks, list) and blocks:
            texts = [text_of(b.get("text")) for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
            other += sum(1 for b in blocks if not (isinstance(b, dict) and b.get("type") == "text"))
        else:
            texts = [text_of(msg.get("text"))]
        text = "\n\n".join(t for t in texts if t)
        if text or other:
            messages.append(Message(text, iso_time(msg.get("created_at")), other))
    return Conversation(text_of(raw.get("uuid")), text_of(raw.get("name")), iso_time(raw.get("created_at")),
                        tuple(messages), skipped)
