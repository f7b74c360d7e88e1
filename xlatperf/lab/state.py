# SPDX-License-Identifier: BSD-3-Clause
"""The state file: what the running lab recorded about itself (kind, parameters, config path,
CPU placement, ceiling), written before anything is built so that `lab down` knows about a
half-built lab after a crash. It also holds the previous values of the initial namespace's
sysctls that the lab changed (they apply to every namespace), which `lab down` restores.
"""

from __future__ import annotations

import json
import os
from typing import Any

from .shell import run

STATE_FILE = "/run/xlatperf-lab.json"


def lab_state() -> dict[str, Any] | None:
    """What the running lab recorded about itself (kind, params, config path), or None."""
    try:
        with open(STATE_FILE) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def write_state(state: dict[str, Any]) -> None:
    tmp = STATE_FILE + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f, indent=2)
        f.write("\n")
    os.replace(tmp, STATE_FILE)


def set_global_sysctls(settings: dict[str, int]) -> None:
    """Sets sysctls of the initial namespace, recording their values in the state file first
    (a value this lab already recorded keeps the original), so that lab down restores them."""
    state = lab_state() or {}
    restore = state.setdefault("restore_sysctl", {})
    for key in settings:
        if key not in restore:
            restore[key] = int(run(["sysctl", "-n", key]).strip())
    write_state(state)
    run(["sysctl", "-q", "-w", *(f"{key}={value}" for key, value in settings.items())])


def restore_global_sysctls() -> None:
    previous = (lab_state() or {}).get("restore_sysctl") or {}
    if previous:
        run(["sysctl", "-q", "-w", *(f"{key}={value}" for key, value in previous.items())])
