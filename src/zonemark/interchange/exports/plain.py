"""A plain text or Markdown copy of a chat, read as ``zonemark ingest`` reads it: the whole text (issue 21).

The text is one message of one conversation titled by nothing (the report names the file).  HTML
(a provider's ``chat.html`` viewer) and JSON are not plain text: they match no format here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO

from ..ingest import MAX_CHAT_CHARS
from .model import Conversation, DamagedExport, Message

_MARKUP = re.compile(r"^\ufeff?\s*(?:[\[{]|<(?:!doctype|html|\?xml|head|body|script|meta)\b)", re.IGNORECASE)
#: Bytes read of a plain file: the chat limit of ingest in characters is at most 4 bytes each.
MAX_PLAIN_BYTES = 4 * MAX_CHAT_CHARS


def sniff(head: str) -> bool:
    """Text that is not HTML or JSON and holds no NUL (a binary file decodes with replacement characters)."""
    return bool(head.strip()) and "\x00" not in head and "\ufffd" not in head and _MARKUP.match(head) is None


def read(stream: BinaryIO) -> Iterator[Conversation]:
    """The file as one message (UTF-8, a BOM dropped); a file over :data:`MAX_PLAIN_BYTES` is one message too large."""
    data = stream.read(MAX_PLAIN_BYTES + 1)
    if len(data) > MAX_PLAIN_BYTES:
        yield Conversation("", "", None, (Message("", None, too_large=True),))
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise DamagedExport("not UTF-8 text") from None
    yield Conversation("", "", None, (Message(text.removeprefix("\ufeff"), None),))
