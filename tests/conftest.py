"""Shared test settings and fixtures.

Property tests explore new random examples on every local run; under CI (``CI`` set) they
are derandomized, so a submission is judged on a fixed, reproducible set of examples.

Browser tests ask for ``chromium_path`` (the executable) or ``browser`` (a running headless
Chromium with a DevTools client, one per test module; see headless_chromium.py). Without a
Chromium they are skipped with the reason; with one, every problem is a failure. No test
installs a browser: ``make test`` does, when it can. A test that uses either fixture is marked
``slow`` here, so ``-m "not slow"`` leaves the browser out.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

from headless_chromium import ChromiumNotFound, DevTools, find_chromium, running_chromium

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """The Chromium executable, or a skip that says why there is none."""
    try:
        return find_chromium()
    except ChromiumNotFound as missing:
        pytest.skip(str(missing))


@pytest.fixture(scope="module")
def browser(chromium_path, tmp_path_factory) -> Iterator[DevTools]:
    """A headless Chromium for the tests of one module; the whole process group is ended after them."""
    with running_chromium(chromium_path, tmp_path_factory.mktemp("chromium")) as devtools:
        yield devtools


def pytest_collection_modifyitems(items):
    for item in items:
        if "chromium_path" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def diagnostics_made(monkeypatch) -> list[int]:
    """A counter (``[n]``) of the Diagnostic objects made from now on: parser findings and their copies alike."""
    from zonemark.core.diagnostics import Diagnostic
    made = [0]
    init = Diagnostic.__init__

    def counted(self, *args, **kwargs):
        made[0] += 1
        init(self, *args, **kwargs)
    monkeypatch.setattr(Diagnostic, "__init__", counted)
    from zonemark.core import diagnostics
    fast = diagnostics._new_diagnostic

    def counted_fast(*args):
        made[0] += 1
        return fast(*args)
    monkeypatch.setattr(diagnostics, "_new_diagnostic", counted_fast)  # what placed() makes them with
    return made
