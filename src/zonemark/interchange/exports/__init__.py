"""The formats of provider exports ``zonemark import`` reads, in one ordered table (issue 21).

Each format is recognised from the content (the head of a file), never from its name; the first
whose ``sniff`` says yes reads the file.  A file no format recognises is skipped and named.
"""

from __future__ import annotations

from . import chatgpt, claude, claude_code, plain
from .model import Conversation, DamagedExport, ExportFormat, Message

#: Tried in this order: the JSON shapes first, plain text last.
FORMATS: tuple[ExportFormat, ...] = (
    ExportFormat("chatgpt", chatgpt.sniff, chatgpt.read),
    ExportFormat("claude", claude.sniff, claude.read),
    ExportFormat("claude_code", claude_code.sniff, claude_code.read),
    ExportFormat("plain", plain.sniff, plain.read),
)
#: Bytes of a file's head the formats are recognised from.
HEAD_BYTES = 65_536


def recognise(head: bytes) -> ExportFormat | None:
    """The first format of :data:`FORMATS` whose content test accepts ``head`` (the file's first bytes)."""
    text = head.decode("utf-8", "replace")
    if len(head) == HEAD_BYTES:  # a character cut at the end of the head is not damage
        text = text.rstrip("\ufffd")
    for fmt in FORMATS:
        if fmt.sniff(text):
            return fmt
    return None


__all__ = ["FORMATS", "HEAD_BYTES", "Conversation", "DamagedExport", "ExportFormat", "Message", "recognise"]
