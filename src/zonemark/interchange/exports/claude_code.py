"""Claude Code session transcripts: ``.jsonl``, one event per line (issue 21).

An event ``{"type": "assistant", "message": {"role": "assistant", "content": [...]}, "timestamp": …}``
gives the text of its ``text`` blocks; tool calls, tool results, thinking and the user's events are
counted as skipped.  The events of one answer that share a ``message.id`` make one message.  A file
is one session: its id is the ``sessionId`` of its events, its title the first ``summary`` event's
text.  A line that is not JSON makes the file damaged (:class:`DamagedExport`) after the messages
read before it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from .model import Conversation, DamagedExport, Message, iso_time, text_of

_EVENT = re.compile(r'^\s*\{[^\n]*"type"\s*:\s*"(?:user|assistant|summary|system)"')
#: The longest line read, in bytes (one event); a longer one makes the file damaged.
MAX_LINE_BYTES = 8_000_000


def sniff(head: str) -> bool:
    """The first line is a JSON object with a ``type`` of a transcript event."""
    return _EVENT.match(head) is not None and ('"sessionId"' in head or '"message"' in head or '"summary"' in head)


def read(stream: BinaryIO) -> Iterator[Conversation]:
    """The session of the file as one conversation."""
    yield session(stream)


def session(stream: BinaryIO) -> Conversation:
    """Read the events of one transcript (module docstring)."""
    messages: list[Message] = []
    skipped = 0
    session_id, title = "", ""
    first_time = None
    last_id: object = None
    for number, line in enumerate(iter(lambda: stream.readline(MAX_LINE_BYTES + 1), b""), 1):
        if len(line) > MAX_LINE_BYTES:
            raise DamagedExport(f"line {number} is over {MAX_LINE_BYTES:,} bytes (MAX_LINE_BYTES)")
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            raise DamagedExport(f"line {number} is not JSON") from None
        except RecursionError:
            raise DamagedExport(f"line {number} is nested too deep") from None
        if not isinstance(event, dict):
            continue
        session_id = session_id or text_of(event.get("sessionId"))
        kind = event.get("type")
        if kind == "summary":
            title = title or text_of(event.get("summary"))
            continue
        time = iso_time(event.get("timestamp"))
        first_time = first_time or time
        msg = event.get("message")
        if kind != "assistant" or not isinstance(msg, dict) or msg.get("role") != "assistant":
            skipped += 1 if kind in ("user", "assistant") else 0
            continue
        text, other = _content(msg.get("content"))
        msg_id = msg.get("id")
        if messages and msg_id is not None and msg_id == last_id:
            prev = messages[-1]
            joined = "\n\n".join(t for t in (prev.text, text) if t)
            messages[-1] = Message(joined, prev.time, prev.skipped + other)
        elif text or other:
            messages.append(Message(text, time, other))
        last_id = msg_id
    return Conversation(session_id, title, first_time, tuple(messages), skipped)


def _content(content: Any) -> tuple[str, int]:
    """The text of a message's content (a string or blocks) and how many blocks are not text."""
    if isinstance(content, str):
        return content, 0
    if not isinstance(content, list):
        return "", 0
    texts = [text_of(b.get("text")) for b in content if isinstance(b, dict) and b.get("type") == "text"]
    other = sum(1 for b in content if not (isinstance(b, dict) and b.get("type") == "text"))
    return "\n\n".join(t for t in texts if t), other
