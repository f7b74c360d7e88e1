# SPDX-License-Identifier: BSD-3-Clause
"""Helpers for the end-to-end tests: run the CLI as a user would, read its result files."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def xlatperf(*args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess:
    """Runs the CLI as a user would; returns the completed process."""
    proc = subprocess.run([sys.executable, "-m", "xlatperf", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)
    if check and proc.returncode != 0:
        raise AssertionError(f"xlatperf {' '.join(args)} exited {proc.returncode}:\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def trials(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines() if line]
