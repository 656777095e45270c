"""Provider exports generated in each documented shape, for the import tests (issue 21).

ChatGPT: ``conversations.json`` is an array of conversations; each has ``mapping`` (node id ->
``{id, message, parent, children}``) and ``current_node``, the leaf of the kept branch; messages have
``author.role``, ``content`` (``content_type``, ``parts``), ``create_time`` in epoch seconds, and
``recipient``.  Claude: ``conversations.json`` with ``uuid``, ``name``, ``created_at``, ``chat_messages``
(``sender`` human/assistant, ``text``, ``content`` blocks), beside ``projects.json``, ``memories.json``,
``users.json``.  Claude Code: one ``.jsonl`` per session, one event per line (``type``, ``message.role``,
``message.content`` blocks, ``timestamp``, ``sessionId``).
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


@dataclass
class ChatGPTTree:
    """One ChatGPT conversation built node by node; ``current`` is the kept leaf."""

    title: str | None
    id: str
    time: float = T0
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    current: str | None = None

    def __post_init__(self) -> None:
        self.nodes["root"] = {"id": "root", "message": None, "parent": None, "children": []}
        self.current = "root"

    def add(self, role: str, parts: list[Any] | None = None, *, parent: str | None = None, node: str | None = None,
            content_type: str = "text", at: float | None = None, recipient: str = "all",
            keep: bool = True, **content: Any) -> str:
        parent = parent or self.current
        assert parent is not None
        node = node or f"n{len(self.nodes)}"
        body: dict[str, Any] = {"content_type": content_type, **content}
        if parts is not None:
            body["parts"] = parts
        self.nodes[node] = {"id": node, "parent": parent, "children": [], "message": {
            "id": f"m-{node}", "author": {"role": role, "name": None, "metadata": {}},
            "create_time": at if at is not None else self.time + len(self.nodes), "update_time": None,
            "content": body, "status": "finished_successfully", "weight": 1.0, "metadata": {},
            "recipient": recipient}}
        self.nodes[parent]["children"].append(node)
        if keep:
            self.current = node
        return node

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "create_time": self.time, "update_time": self.time + 99,
                "mapping": self.nodes, "current_node": self.current, "conversation_id": self.id, "id": self.id,
                "is_archived": False, "moderation_results": [], "safe_urls": []}


def claude_conversation(uuid: str, name: str, messages: list[tuple[str, str]], *, created: str = "2026-02-01T09:00:00Z",
                        blocks: bool = True, extra: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A Claude conversation: ``messages`` are (sender, text); with ``blocks``, text also as a content block."""
    out = []
    for i, (sender, text) in enumerate(messages):
        m: dict[str, Any] = {"uuid": f"{uuid}-{i}", "text": text, "sender": sender,
                             "created_at": f"2026-02-01T09:{i:02d}:00.000000Z", "updated_at": created,
                             "attachments": [], "files": []}
        if blocks:
            m["content"] = [{"type": "text", "text": text, "citations": []}]
        out.append(m)
    if extra:
        out.extend(extra)
    return {"uuid": uuid, "name": name, "created_at": created, "updated_at": created,
            "account": {"uuid": "acc-1"}, "chat_messages": out}


def claude_code_lines(session: str, turns: list[tuple[str, Any]], *, summary: str | None = None) -> str:
    """A Claude Code transcript: ``turns`` are (role, content) — content a string or a list of blocks."""
    lines: list[dict[str, Any]] = []
    if summary:
        lines.append({"type": "summary", "summary": summary, "leafUuid": "x"})
    for i, (role, content) in enumerate(turns):
        lines.append({"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/u/p",
                      "sessionId": session, "version": "1.0.0", "type": role, "uuid": f"u{i}",
                      "timestamp": f"2026-03-0{1 + i % 9}T10:00:00.000Z",
                      "message": {"id": f"msg{i}", "role": role, "content": content}})
    return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)


def write_zip(path: Path, files: dict[str, str | bytes]) -> Path:
    """A zip as downloaded, from name -> content."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
