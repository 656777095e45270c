"""The test suite's own set-up: where Chromium comes from, and which tests are marked slow."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from headless_chromium import CHROMIUM_FLAGS, CHROMIUM_NAMES, ChromiumNotFound, find_chromium

ROOT = Path(__file__).resolve().parents[2]


def fake_which(present: dict[str, str]):
    return lambda name: present.get(name)


def test_chromium_is_found_on_the_path_in_order():
    assert find_chromium({}, fake_which({"google-chrome": "/opt/g", "chromium": "/usr/bin/chromium"})) == \
        "/usr/bin/chromium"
    assert find_chromium({}, fake_which({"chromium-browser": "/snap/bin/chromium-browser"})) == \
        "/snap/bin/chromium-browser"


def test_no_chromium_is_a_skip_reason_that_says_what_to_do():
    with pytest.raises(ChromiumNotFound) as missing:
        find_chromium({}, fake_which({}))
    reason = str(missing.value)
    assert all(name in reason for name in CHROMIUM_NAMES)
    assert "skipped" in reason and "make test" in reason and "ZONEMARK_CHROMIUM" in reason


def test_a_chromium_asked_for_but_missing_is_an_error_not_a_skip():
    with pytest.raises(ValueError, match="ZONEMARK_CHROMIUM"):
        find_chromium({"ZONEMARK_CHROMIUM": "/nowhere/chromium"}, fake_which({"chromium": "/usr/bin/chromium"}))
    assert find_chromium({"ZONEMARK_CHROMIUM": "/opt/c"}, fake_which({"/opt/c": "/opt/c"})) == "/opt/c"


def test_the_launch_flags():
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"):
        assert flag in CHROMIUM_FLAGS


def test_browser_kill_and_concurrency_tests_are_marked_slow():
    listing = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "slow", "-p", "no:cacheprovider",
         "tests/services/test_graph_html.py", "tests/writer/test_durability_kill.py", "tests/writer/test_concurrency.py"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert listing.returncode == 0, listing.stdout + listing.stderr
    slow = {line.split("::")[1] for line in listing.stdout.splitlines() if "::" in line}
    assert {"test_browser_draws_every_node_and_click_shows_details", "test_browser_shows_a_generated_layer",
            "test_sigkill_flipping_writers_leave_one_complete_version",
            "test_sigkill_appending_writers_lose_or_tear_nothing",
            "test_parallel_processes_lose_no_update"} <= slow
    assert not {name for name in slow if not name.startswith(("test_browser_", "test_sigkill_", "test_parallel_"))}
