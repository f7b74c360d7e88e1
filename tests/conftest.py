# SPDX-License-Identifier: BSD-3-Clause
"""Shared test fixtures.

The lab uses fixed names (xlp-tester, xlp-dut, ...), so tests that build a lab must not run at
the same time as other such tests, in this pytest process or another one (two developers, a
benchmark). `exclusive_lab` holds an exclusive lock on a file for the test's duration.
"""

import fcntl
import os
import shutil

import pytest

TEST_LOCK = "/run/xlatperf-tests.lock"

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
