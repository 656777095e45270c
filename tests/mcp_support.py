"""What the MCP server tests share: a small layer with every kind of zone, and a client that calls tools.

The layer has non-ASCII names and text (Italian, Japanese, '—') in every file the tests write.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

REMINDER_NAME = "aria[reminder].md"
MEMORY_NAME = "diario[ext_memory].md"
NOTES_NAME = "appunti/ノート[ext_memory].md"

REMINDER = """# ARIA [reminder]

[P1]
## RULES:
* R1: Never invent memories.

## NUCLEUS 1: LOGICAL
### FUNCTION
Reason.

## MODULE 001: ANCHOR [NUCLEI: 1]
### FUNCTION
Keep the voice.
### STATE
active - permanent
[/P1]

[P2]
## MODULE 002: PLANNER [NUCLEI: 1]
### FUNCTION
Plan the week.
### STATE
inactive
[/P2]

[P4]
###### LOG: 2026-05-03 — prima attivazione
Tutto bene.
[/P4]

[P5]
Umore di oggi: sereno — 晴れ.
[/P5]

[P4]
## MODULE_STATE_REGISTRY:
* ACTIVE:
* INACTIVE:
[/P4]
"""

MEMORY = """# Diario [external_memory]

[P1]
## TOPIC: Viaggi
[/P1]

[P4]
###### LOG: 2026-04-01 — Kyoto
Templi — 寺.

###### LOG: 2026-06-10 — Roma
Colosseo.
[/P4]

[P1]
### SUBTOPIC1: 日本
[/P1]

[P4]
[/P4]

[P1]
## TOPIC: Ricordi
[/P1]

[P3]
###### LOG: 2026-01-01 — capodanno
Fuochi d'artificio.
[/P3]

[P1]
## TOPIC: Lavagna
[/P1]

[P5]
Appunti volatili — メモ.
[/P5]

[P1]
## TOPIC: Archivio
[/P1]
"""

NOTES = """# ノート [external_memory]

[P2]
## TOPIC: 料理
[/P2]

[P4]
###### LOG: 2026-03-03 — ラーメン
Brodo di maiale.
[/P4]
"""


def make_layer(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / REMINDER_NAME).write_text(REMINDER, encoding="utf-8")
    (folder / MEMORY_NAME).write_text(MEMORY, encoding="utf-8")
    (folder / NOTES_NAME).parent.mkdir(parents=True, exist_ok=True)
    (folder / NOTES_NAME).write_text(NOTES, encoding="utf-8")
    return folder


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line equal to ``needle``."""
    return text.split("\n").index(needle) + 1


class Agent:
    """Calls a server's tools through the SDK's real in-memory client (one connection per call)."""

    def __init__(self, server: Any) -> None:
        self.server = server

    def _run(self, action):
        async def go():
            async with Client(self.server, raise_exceptions=True) as client:
                return await action(client)
        return anyio.run(go)

    def raw(self, name: str, arguments: dict):
        return self._run(lambda c: c.call_tool(name, arguments))

    def call(self, name: str, **arguments) -> dict:
        """The result of a call that must succeed, as data (its JSON text, checked against the structure)."""
        result = self.raw(name, arguments)
        text = result.content[0].text
        assert not result.is_error, text
        data = json.loads(text)
        assert data == result.structured_content
        return data

    def refused(self, name: str, **arguments) -> str:
        """The text of a call that must be a tool error."""
        result = self.raw(name, arguments)
        assert result.is_error, result.content[0].text
        text = result.content[0].text
        assert "Traceback" not in text and "Error executing tool" not in text
        return text

    def tools(self) -> list[Any]:
        return self._run(lambda c: c.list_tools()).tools

    def instructions(self) -> str | None:
        async def get(c):
            return c.instructions
        return self._run(get)

    def resources(self):
        return self._run(lambda c: c.list_resources()).resources

    def read(self, uri: str):
        return self._run(lambda c: c.read_resource(uri))
