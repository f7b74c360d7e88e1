# SPDX-License-Identifier: BSD-3-Clause
"""Shared test fixtures.

The lab uses fixed names (xlp-tester, xlp-dut, ...), so tests that build a lab must not run at
the same time as other such tests, in this pytest process or another one (two developers, a
benchmark). `exclusive_lab` holds an exclusive lock on a file for the test's duration.
"""

import fcntl
import os
import shutil
import signal
from pathlib import Path

import pytest

from fakes import FAKE_CONFIG  # the fake engine's tester config (tests/fakes.py)

TEST_LOCK = "/run/xlatperf-tests.lock"

# Tests interrupt the xlatperf processes they start with SIGINT, as Ctrl-C does. A process
# started in the background by a non-interactive shell (a CI runner, `cmd &` in a script)
# inherits SIGINT ignored, and an ignored signal stays ignored across exec: Python then never
# raises KeyboardInterrupt. A handler installed here is reset to the default by exec, so every
# child starts with SIGINT's default disposition, as it would from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ip") is None, reason="needs root and iproute2")


@pytest.fixture
def exclusive_lab():
    with open(TEST_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)



@pytest.fixture
def fake_config(tmp_path, monkeypatch) -> Path:
    """Path of FAKE_CONFIG in tmp_path, with no FAKE_* behaviour switch left in the environment."""
    for name in list(os.environ):
        if name.startswith("FAKE_"):
            monkeypatch.delenv(name)
    path = tmp_path / "base.toml"  # the name campaign files in the tests refer to
    path.write_text(FAKE_CONFIG)
    return path


@pytest.fixture
def fake(monkeypatch, tmp_path) -> Path:
    """tmp_path, with no FAKE_* behaviour switch of the fake engine left in the environment."""
    for name in list(os.environ):
        if name.startswith("FAKE_"):
            monkeypatch.delenv(name)
    return tmp_path
