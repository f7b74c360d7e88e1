# SPDX-License-Identifier: BSD-3-Clause
"""The guest tests run only when asked for: `pytest -m guest tests/guest` or XLATPERF_GUEST=1
(scripts/test.sh does the latter). They need root, QEMU, busybox-static, kmod, cpio and apt's
package lists (scripts/setup.sh)."""

import os

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "guest: boots a QEMU guest (tests/guest/README.md)")


def pytest_collection_modifyitems(config, items):
    selected = os.environ.get("XLATPERF_GUEST") == "1" or "guest" in (config.option.markexpr or "")
    for item in items:
        if item.get_closest_marker("guest") is None:
            continue
        if not selected:
            item.add_marker(pytest.mark.skip(reason="guest tests: -m guest or XLATPERF_GUEST=1"))
        elif os.geteuid() != 0:
            item.add_marker(pytest.mark.skip(reason="guest tests need root"))
        # Asked for but QEMU missing: the tests fail (at boot) rather than skip, so that CI,
        # which asks for them, cannot pass without having run them.
