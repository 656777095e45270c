"""A layer with something to review, and a real ``zonemark review`` server over it, for the review tests.

:func:`make_layer` copies the example layer and adds a memory in Italian and Japanese with
``[P3]`` zones; :func:`add_ai_activity` makes the AI append an entry and propose changes
through the writer (as ``ai``), one of them with a hostile reason.  :class:`ReviewServer` runs
``python -m zonemark review LAYER --port 0`` as a child process, reads the address from its
first line, and ends that one process when the test is done.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from zonemark.writer import append_entry, propose
from zonemark.writer import snapshot as snapshot_module

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "layer"
MEMORY_NAME = "ricordi[ext_memory].md"
CARS_NAME = "cars[ext_memory].md"
HOSTILE = "<img src=x onerror=window.__pwned=1><script>window.__pwned=2</script>"

MEMORY = """# Ricordi — 記憶 [external_memory]

[P1]
## TOPIC: Viaggi
Perché sì: è così. 私は東京に住んでいます — Kyoto in autunno.
Una nota scritta a mano dall'utente: <b>grassetto</b> e {hostile}
[/P1]

[P3]
###### LOG: 2026-01-03 — città
Un ricordo di lunga durata: Kyoto — 京都.
[/P3]

[P1]
## TOPIC: Cucina
[/P1]

[P3]
###### LOG: 2026-02-01 — ricetta
La nonna: ragù, tre ore.
[/P3]

[P1]
## TOPIC: Lavoro
- scadenze del progetto — 締め切り
[/P1]

[P3]
###### LOG: 2026-03-01 — progetto
Il parser è pronto — 完成.
[/P3]

[P4]
[/P4]
""".format(hostile=HOSTILE)

TRACE_ANSWER = """Ecco la risposta — 答え.

```
[NTRACE: v1]
NUCLEI: 3, 1
MODULE 001: IDENTITY_ANCHOR active
MODULE 002: PROJECT_MANAGER queried
MEMORY Cars @ Pressures: queried
MODULE 999: NOBODY active
[/NTRACE]
```
"""


@dataclass(frozen=True)
class Activity:
    """What :func:`add_ai_activity` made: the appended entry's title and the proposals' ids."""

    append_title: str
    apply_id: str
    reject_id: str
    hostile_id: str


def make_layer(tmp_path: Path) -> Path:
    """The example layer plus a memory with [P3] zones, in a fresh folder."""
    layer = tmp_path / "layer-aria"
    shutil.copytree(EXAMPLE, layer)
    (layer / MEMORY_NAME).write_text(MEMORY, encoding="utf-8")
    snapshot_module.forget()
    return layer


def add_ai_activity(layer: Path) -> Activity:
    """The AI appends one entry and proposes three changes (as ``ai``, through the writer)."""
    title = "pressione controllata — 空気圧"
    append_entry(layer / CARS_NAME, "Maintenance/Tyres", title, "2,5 davanti, 2,7 dietro — misurata a freddo.",
                 actor="ai", date="2026-10-12")
    memory = layer / MEMORY_NAME
    applied = propose(memory, "Viaggi",
                      "###### LOG: 2026-01-03 — città\nKyoto — 京都, in autunno: foglie rosse.\n",
                      reason="aggiunge la stagione — 季節", actor="ai")
    rejected = propose(memory, "Cucina", "###### LOG: 2026-02-01 — ricetta\nLa nonna: ragù, quattro ore.\n",
                       reason="più tempo di cottura — 時間", actor="ai")
    hostile = propose(memory, "Lavoro", "###### LOG: 2026-03-01 — progetto\nIl parser è pronto.\n",
                      reason=f"pulizia {HOSTILE}", actor="ai")
    snapshot_module.forget()
    return Activity(title, applied.id, rejected.id, hostile.id)


def tree_state(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file under ``folder`` (hidden ones and .zonemark/ too): its sha256 and modification time."""
    state = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            state[path.relative_to(folder).as_posix()] = (hashlib.sha256(path.read_bytes()).hexdigest(),
                                                          path.stat().st_mtime_ns)
    return state


class ReviewServer:
    """``zonemark review LAYER --port PORT`` in a child process (its own session), ended by its pid."""

    def __init__(self, layer: Path, *, port: int = 0, extra: tuple[str, ...] = ()):
        self.layer = layer
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "zonemark", "review", str(layer), "--port", str(port), *extra],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
            start_new_session=True)
        self.first_line = self._first_line()
        parts = urlsplit(self.first_line)
        self.base = f"{parts.scheme}://{parts.netloc}"
        self.host = parts.hostname
        self.port = parts.port
        self.token = parts.query.split("token=", 1)[1]

    def _first_line(self) -> str:
        deadline = time.monotonic() + 30
        buffer = b""
        while b"\n" not in buffer:
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError("zonemark review did not print its address: "
                                     + self.process.stderr.read().decode("utf-8", "replace"))
            ready, _, _ = select.select([self.process.stdout], [], [], 0.1)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 4096)
                buffer += chunk
        return buffer.split(b"\n", 1)[0].decode("ascii")

    def url(self, route: str, /, **params) -> str:
        return f"{self.base}{route}?{urlencode({'token': self.token, **params})}"

    def request(self, method: str, target: str, *, body: bytes | None = None, headers: dict | None = None,
                host: str | None = None) -> tuple[int, dict[str, str], bytes]:
        """One raw HTTP request (``target`` is the path and query; ``host`` overrides the Host header)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            connection.putheader("Host", host if host is not None else f"127.0.0.1:{self.port}")
            for name, value in (headers or {}).items():
                connection.putheader(name, value)
            if body is not None:
                connection.putheader("Content-Length", str(len(body)))
            connection.endheaders(body)
            response = connection.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        finally:
            connection.close()

    def get(self, route: str, /, **params) -> tuple[int, dict[str, str], bytes]:
        return self.request("GET", f"{route}?{urlencode({'token': self.token, **params})}")

    def post(self, path: str, fields: dict[str, str], *, url_token: bool = True, body_token: bool = True,
             headers: dict | None = None) -> tuple[int, dict[str, str], bytes]:
        data = {**({"token": self.token} if body_token else {}), **fields}
        target = f"{path}?{urlencode({'token': self.token})}" if url_token else path
        return self.request("POST", target, body=urlencode(data).encode("utf-8"),
                            headers={"Content-Type": "application/x-www-form-urlencoded", **(headers or {})})

    def stop(self) -> tuple[int | None, str]:
        """End the server (Ctrl-C, then kill if it lingers); its exit code and what it printed on stderr."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        if self.process.stderr.closed:
            return self.process.returncode, ""
        err = self.process.stderr.read().decode("utf-8", "replace")
        self.process.stdout.close()
        self.process.stderr.close()
        return self.process.returncode, err

    def __enter__(self) -> "ReviewServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def serve_with_activity(tmp_path: Path) -> Iterator[ReviewServer]:
    """The body of a ``server`` fixture: the example layer with the AI's activity, served; ``.activity`` holds it."""
    layer = make_layer(tmp_path)
    activity = add_ai_activity(layer)
    with ReviewServer(layer) as running:
        running.activity = activity
        yield running
