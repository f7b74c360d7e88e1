# SPDX-License-Identifier: BSD-3-Clause
"""End-to-end fixtures: a real lab (namespaces, veth, kernel/nftables/TAYGA DUTs) and the real
engine. Every test here holds the exclusive lab lock and leaves no lab behind."""

import os
import shutil
from pathlib import Path

import pytest

from xlatperf import lab

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "engine" / "build" / "xlatperf-engine"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")


def engine_available() -> bool:
    return ENGINE.exists() or shutil.which("xlatperf-engine") is not None


@pytest.fixture
def make_lab(exclusive_lab, tmp_path):
    """make_lab(kind, **params) -> path of the tester config written by `lab up`."""
    if os.geteuid() != 0:
        pytest.skip("needs root")
    if not engine_available():
        pytest.fail("xlatperf-engine is not built (run scripts/setup.sh)")

    def up(kind: str, **params) -> Path:
        config = tmp_path / f"{kind}.toml"
        lab.lab_up(kind, {k: str(v) for k, v in params.items()}, str(config))
        return config

    yield up
    lab.lab_down()
