"""A headless Chromium driven over the DevTools protocol, for the browser tests.

The browser is the system's (Debian's ``chromium``); nothing is downloaded and no test installs
it (``make test`` does, when it can). ``find_chromium`` says where it is; conftest.py turns a
missing browser into a skip with its reason and gives every browser test the ``chromium_path``
and ``browser`` fixtures. Once a browser is found, anything that goes wrong is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: The executable names tried, in order, when ZONEMARK_CHROMIUM does not name one.
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--hide-scrollbars",
    "--window-size=1280,800",
    "--remote-debugging-port=0",
)


class ChromiumNotFound(Exception):
    """No Chromium here: the browser tests are skipped with this reason."""


def find_chromium(environ=os.environ, which=shutil.which) -> str:
    """The Chromium executable: ``ZONEMARK_CHROMIUM`` if set (it must exist), else the first of CHROMIUM_NAMES.

    Raises ChromiumNotFound when there is none; a ZONEMARK_CHROMIUM that names nothing
    runnable is a ValueError (a mistake to report, not a reason to skip).
    """
    chosen = environ.get("ZONEMARK_CHROMIUM")
    if chosen:
        found = which(chosen)
        if found is None:
            raise ValueError(f"ZONEMARK_CHROMIUM={chosen!r} is not an executable")
        return found
    for name in CHROMIUM_NAMES:
        found = which(name)
        if found is not None:
            return found
    raise ChromiumNotFound(
        f"no Chromium found ({', '.join(CHROMIUM_NAMES)} are not on PATH): browser tests skipped. "
        "`make test` installs Debian's chromium when run as root with apt-get; or set ZONEMARK_CHROMIUM=/path.")


class DevTools:
    """Minimal DevTools-protocol client over one page target's websocket."""

    def __init__(self, websocket_url: str) -> None:
        import websocket  # websocket-client

        self._socket = websocket.create_connection(websocket_url, timeout=30, suppress_origin=True)
        self._last_id = 0
        self.events: list[dict] = []

    def call(self, method: str, **params) -> dict:
        self._last_id += 1
        message_id = self._last_id
        self._socket.send(json.dumps({"id": message_id, "method": method, "params": params}))
        while True:
            message = json.loads(self._socket.recv())
            if message.get("id") == message_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 20.0):
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {expression}")
            time.sleep(0.05)

    def click(self, x: float, y: float) -> None:
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
        # cytoscape applies class-driven style lazily (its :visible cache is stale until the
        # next drawn frame), so let the page render what the click changed.
        self.next_frames()

    def click_element(self, selector: str) -> None:
        box = self.evaluate(
            f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
            " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()"
        )
        self.click(box["x"], box["y"])

    def next_frames(self) -> None:
        self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))")

    def problems(self) -> list[dict]:
        """Script errors, dialogs and console errors or warnings the page produced so far."""
        return [e for e in self.events
                if e["method"] in ("Runtime.exceptionThrown", "Page.javascriptDialogOpening")
                or (e["method"] == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "warning"))]

    def close(self) -> None:
        self._socket.close()


def _process_group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


@contextmanager
def running_chromium(executable: str, workdir: Path) -> Iterator[DevTools]:
    """A headless chromium in its own process group; the whole group is ended on exit."""
    profile = workdir / "profile"
    profile.mkdir()
    log = open(workdir / "chromium.log", "wb")
    process = subprocess.Popen(
        [executable, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
    )
    devtools = None
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("chromium did not start:\n" + (workdir / "chromium.log").read_text()[-2000:])
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via a proxy
        with direct.open(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
            targets = json.load(response)
        page = next(t for t in targets if t.get("type") == "page")
        devtools = DevTools(page["webSocketDebuggerUrl"])
        devtools.call("Page.enable")
        devtools.call("Runtime.enable")
        devtools.call("Emulation.setDeviceMetricsOverride", width=1280, height=800, deviceScaleFactor=1,
                      mobile=False)
        yield devtools
    finally:
        if devtools is not None:
            devtools.close()
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
            if process.poll() is not None and not _process_group_alive(process.pid):
                break
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                pass
            try:
                process.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
        log.close()
        deadline = time.monotonic() + 10
        while _process_group_alive(process.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() is not None and not _process_group_alive(process.pid), "chromium left running"
