"""Editor latency: from a change to a 1 MB file to its published diagnostics, via the real server.

Starts ``python -m zonemark lsp`` over stdio (a small JSON-RPC client below, standard library
only), opens a layer whose reminder is ~1 MB (plus two external memories), and sends edits in
the middle of the reminder one at a time: each is timed from the ``didChange`` written to the
``publishDiagnostics`` of that version read back.  The peer, measured in the same run, is a
full ``zonemark check FILE`` process on the same file (what an author ran before the server).
Also prints where the server's time goes (parse, layer, diagnostics) measured in-process.

Target: p50 at most 150 ms.

    python bench/bench_lsp.py [--edits 40] [--checks 8] [--size 1MB] [--file FILE]

The text comes from ``bench/corpus.py`` (``generate("reminder", size, seed=1)``), or from
``--file``.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
sys.path.insert(0, str(SRC))
sys.path.insert(0, str(HERE))

TARGET_MS = 150.0


# -- a minimal LSP client over stdio -------------------------------------------------------------

class Client:
    def __init__(self, cmd, cwd, stderr):
        env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                     env=env)
        self.messages: "queue.Queue[dict]" = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            if length is None:
                continue
            self.messages.put(json.loads(out.read(length)))

    def send(self, message: dict) -> float:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return time.perf_counter()

    def request(self, method, params, timeout=60.0):
        self.next_id += 1
        ident = self.next_id
        self.send({"id": ident, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == ident and "method" not in m, timeout)["result"]

    def notify(self, method, params) -> float:
        return self.send({"method": method, "params": params})

    def wait(self, match, timeout=60.0) -> dict:
        end = time.perf_counter() + timeout
        while True:
            left = end - time.perf_counter()
            if left <= 0:
                raise SystemExit("bench_lsp: the server did not answer in time")
            try:
                message = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if "method" in message and "id" in message:  # a request from the server: answer it
                self.send({"id": message["id"], "result": None})
                continue
            if match(message):
                return message

    def diagnostics(self, uri, version, timeout=60.0) -> tuple[float, dict]:
        message = self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                            and m["params"]["uri"] == uri and m["params"].get("version") == version, timeout)
        return time.perf_counter(), message["params"]

    def close(self):
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except (SystemExit, OSError, subprocess.TimeoutExpired):
            pass
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


# -- the corpus ----------------------------------------------------------------------------------

def parse_size(text: str) -> int:
    units = {"KB": 1_000, "MB": 1_000_000}
    for suffix, factor in units.items():
        if text.upper().endswith(suffix):
            return int(float(text[:-2]) * factor)
    return int(text)


def corpus(kind: str, size: int, seed: int) -> str:
    try:
        from corpus import generate
    except ImportError:
        raise SystemExit("bench_lsp: bench/corpus.py is not here yet; pass --file FILE") from None
    return generate(kind, size, seed=seed)


def uri_of(path: Path) -> str:
    return path.resolve().as_uri()


def position(text: str, offset: int) -> dict:
    """LSP position (UTF-16) of an offset; the text has \\n line breaks only."""
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return {"line": line, "character": len(text[start:offset].encode("utf-16-le")) // 2}


def edit_points(text: str, n: int) -> list[int]:
    """Offsets inside ordinary text lines (not headers, tags or bullets) around the middle of the file."""
    points, pos = [], len(text) // 2
    while len(points) < n:
        start = text.find("\n", pos) + 1
        end = text.find("\n", start)
        if start <= 0 or end == -1:
            pos = 0
            continue
        line = text[start:end]
        if len(line) > 20 and line[0].isalpha():
            points.append(start + 10)
        pos = end
    return points


# -- the measurements ----------------------------------------------------------------------------

def measure_server(folder: Path, big: Path, text: str, edits: int):
    """(latencies in ms, open -> first diagnostics ms, diagnostics count, server CPU ms per change)."""
    with tempfile.TemporaryFile() as err:
        client = Client([sys.executable, "-m", "zonemark", "lsp"], folder, err)
        try:
            client.request("initialize", {"processId": os.getpid(), "rootUri": uri_of(folder),
                                          "workspaceFolders": [{"uri": uri_of(folder), "name": "bench"}],
                                          "capabilities": {}})
            client.notify("initialized", {})
            uri = uri_of(big)
            sent = client.notify("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "markdown", "version": 1, "text": text}})
            got, params = client.diagnostics(uri, 1)
            first = (got - sent) * 1000
            count = len(params["diagnostics"])
            latencies = []
            cpu_before = cpu_seconds(client.proc.pid)
            points = edit_points(text, (edits + 1) // 2)
            version = 1
            for offset in points:  # type a word, then take it back: the file keeps its size
                at, after = position(text, offset), position(text, offset + 9)
                for change in ({"range": {"start": at, "end": at}, "text": "zonemark "},
                               {"range": {"start": at, "end": after}, "text": ""}):
                    version += 1
                    sent = client.notify("textDocument/didChange", {
                        "textDocument": {"uri": uri, "version": version}, "contentChanges": [change]})
                    got, _ = client.diagnostics(uri, version)
                    latencies.append((got - sent) * 1000)
            cpu_after = cpu_seconds(client.proc.pid)
            cpu = None if cpu_before is None or cpu_after is None else (cpu_after - cpu_before) * 1000 / len(latencies)
            return latencies, first, count, cpu
        finally:
            client.close()
            err.seek(0)
            tail = err.read().decode("utf-8", "replace").strip()
            if client.proc.returncode not in (0, None) and tail:
                print(f"server stderr: {tail[-2000:]}", file=sys.stderr)


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (Linux /proc), or None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def measure_check(big: Path, runs: int) -> list[float]:
    out = []
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "zonemark", "check", str(big)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env=env, check=False)
        out.append((time.perf_counter() - start) * 1000)
    return out


def breakdown(folder: Path, big: Path, text: str) -> dict[str, float]:
    """Best-of-5 in-process times of the server's steps after a change to the big file."""
    from zonemark.layer.live import LiveLayer, findings_for
    from zonemark.layer.spans import source_lines
    live = LiveLayer(folder)
    live.layer()
    rel = live.rel(big)
    best = {"parse": 1e9, "layer (from parsed files)": 1e9, "findings + ranges": 1e9}
    for i in range(5):
        variant = text + ("\n" * (i + 1))
        t0 = time.perf_counter()
        live.set_text(big, variant)
        live.document(big)  # the one file that changed is parsed again
        t1 = time.perf_counter()
        layer = live.layer()  # the others are reused; the layer is resolved again
        t2 = time.perf_counter()
        found = findings_for(layer, rel)
        lines = source_lines(layer.file(rel).doc)
        for d in found:
            lines.span(rel, d.line, d.column, d.code)
        t3 = time.perf_counter()
        for name, ms in zip(best, ((t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000)):
            best[name] = min(best[name], ms)
    return best


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--edits", type=int, default=40, help="timed edits of the big file")
    ap.add_argument("--checks", type=int, default=8, help="timed 'zonemark check FILE' processes")
    ap.add_argument("--size", default="1MB", help="size of the reminder (1MB = 1,000,000 bytes)")
    ap.add_argument("--file", type=Path, help="use this file as the big one instead of generating it")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="zonemark-bench-lsp-") as tmp:
        folder = Path(tmp)
        big = folder / "agent[reminder].md"
        if args.file:
            text = args.file.read_text(encoding="utf-8")
        else:
            text = corpus("reminder", parse_size(args.size), 1)
            for seed in (2, 3):
                (folder / f"memory{seed}[ext_memory].md").write_text(corpus("memory", 50_000, seed),
                                                                     encoding="utf-8", newline="")
        text = text.replace("\r\n", "\n")
        big.write_text(text, encoding="utf-8", newline="")
        files = sorted(p.name for p in folder.iterdir())
        print(f"layer: {len(files)} files; the edited file {big.name}: {len(text.encode('utf-8')) / 1e6:.2f} MB,"
              f" {text.count(chr(10))} lines")

        latencies, first, count, cpu = measure_server(folder, big, text, args.edits)
        checks = measure_check(big, args.checks)
        steps = breakdown(folder, big, text)

    p50, p90, worst = pct(latencies, 0.5), pct(latencies, 0.9), max(latencies)
    check50 = statistics.median(checks)
    print(f"server: open -> first diagnostics {first:.0f} ms ({count} diagnostics in the file)")
    print(f"server: change -> published diagnostics over {len(latencies)} edits: p50 {p50:.1f} ms,"
          f" p90 {p90:.1f} ms, max {worst:.1f} ms")
    print(f"peer:   'zonemark check FILE' process, {len(checks)} runs: p50 {check50:.1f} ms")
    if cpu is not None:
        print(f"server: CPU time per change (mean, all threads): {cpu:.1f} ms")
    if hasattr(os, "getloadavg"):
        print(f"machine: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
              " (a load above the core count stretches every wall time)")
    print("in-process steps after a change (best of 5): "
          + ", ".join(f"{name} {ms:.1f} ms" for name, ms in steps.items()))
    verdict = "OK" if p50 <= TARGET_MS else "OVER TARGET"
    print(f"change -> diagnostics p50 {p50:.1f} ms (target <= {TARGET_MS:.0f} ms: {verdict});"
          f" {check50 / p50:.1f}x faster than a full 'zonemark check' process")
    return 0


if __name__ == "__main__":
    sys.exit(main())
