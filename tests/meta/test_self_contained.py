"""A clone of the repository runs `make test` and `make bench` with nothing beside it.

Nothing the tests, the benchmarks, the Makefile or the CI entry point use may point outside
the repository: no ``../shared`` (the old corpus generator lived there), no absolute ``/work/``
path of the machine the project was first built on, no path built by joining ``"shared"``.
The corpus comes from ``bench/corpus.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
THIS = Path(__file__).resolve()

OUTSIDE = re.compile(
    rb"\.\./shared"                      # ../shared/bench/gen_corpus.py
    rb"|/work/"                          # an absolute path of one machine
    rb"|/\s*[\"']shared[\"']"            # ROOT.parent / "shared" / ...
    rb"|gen_corpus\.py"                  # the generator that lived outside
)


def scanned_files() -> list[Path]:
    files = [ROOT / "Makefile", ROOT / "pyproject.toml", *sorted((ROOT / ".ci").glob("*"))]
    for folder in ("tests", "bench"):
        files += sorted(p for p in (ROOT / folder).rglob("*")
                        if p.is_file() and "__pycache__" not in p.parts and p.resolve() != THIS)
    return files


def test_nothing_run_by_make_points_outside_the_repository():
    files = scanned_files()
    assert ROOT / "bench" / "corpus.py" in files and len(files) > 50
    found = []
    for path in files:
        for number, line in enumerate(path.read_bytes().splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.decode('utf-8', 'replace').strip()}")
    assert found == [], "references outside the repository:\n" + "\n".join(found)


def test_the_scan_catches_what_it_is_for():
    for line in (b'GEN = HERE.parent.parent / "shared" / "bench" / "gen_corpus.py"',
                 b"Files come from ../shared/bench/x.py", b"open('/work/shared/spec/x.md')",
                 b"root.parent / 'shared'"):
        assert OUTSIDE.search(line), line
    for line in (b"She shared the kitchen lights.", b"shared_memory = 1", b"ROOT / 'tests' / 'fixtures'"):
        assert not OUTSIDE.search(line), line


def test_no_test_installs_software():
    """The browser comes from the system or from `make test`; a test never runs a package manager.

    (Text that tells a user what to install, e.g. a message naming ``pip install 'zonemark[lsp]'``,
    is not running one; the pre-commit test lets pre-commit build its own hook environment.)"""
    installer = re.compile(rb"[\"'](apt-get|apt|dpkg|pip|npm|snap|brew)[\"']\s*,\s*[\"']?(install|-i)\b"
                           rb"|\b(apt-get|apt|dpkg|snap|brew|npm)\s+(install|-i)\b")
    assert installer.search(b'subprocess.run(["apt-get", "install", "-y", "chromium"])')
    assert installer.search(b"os.system('apt-get install -y chromium')")
    assert installer.search(b'subprocess.run([sys.executable, "-m", "pip", "install", "x"])')
    assert not installer.search(b"assert \"pip install 'zonemark[lsp]'\" in err")
    found = [f"{path.relative_to(ROOT)}:{number}"
             for path in scanned_files() if path.is_relative_to(ROOT / "tests")
             for number, line in enumerate(path.read_bytes().splitlines(), 1) if installer.search(line)]
    assert found == []
