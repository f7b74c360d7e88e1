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


# For configs of tests that assert counts, shares and order, not a sender's pacing: the
# engine's workers share this machine's two CPUs with everything else, so a sender may fall a
# few ms behind its schedule and catch up (trial.max_lag; issue 17: a test must not assert
# that a real-time sender kept its rate on a shared CPU).
COUNTS_NOT_PACING = "[trial]\nmax_lag = 0.5\n"


# A process that steals one CPU in bursts: `python3 -c CPU_THIEF CPU BUSY PERIOD` is busy for
# BUSY s, then asleep until the next PERIOD, pinned to CPU. The scheduler lets it preempt
# whatever runs there (it sleeps most of the time). Kill it when done.
CPU_THIEF = """
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
busy, period = float(sys.argv[2]), float(sys.argv[3])
while True:
    start = time.monotonic()
    while time.monotonic() - start < busy:
        pass
    time.sleep(max(0.0, period - (time.monotonic() - start)))
"""


def summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def trials(out: Path, retaken: bool = False) -> list[dict]:
    """The records of trials.jsonl; without the attempts that were taken again (a busy lab
    machine may deschedule the sender: trial.retakes) unless `retaken`."""
    records = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()
               if line]
    return [r for r in records if retaken or not r.get("retaken")]
