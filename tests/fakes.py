# SPDX-License-Identifier: BSD-3-Clause
"""The fake engine (tests/fake_engine.py, a stand-in speaking the engine protocol) and a tester
config that drives it on null ports: for the CLI, campaign, report and resume tests that need no
DPDK. A module of its own because `from conftest import ...` is ambiguous once tests/e2e (with
its own conftest.py) is collected in the same run."""

from pathlib import Path

FAKE_ENGINE = Path(__file__).resolve().parent / "fake_engine.py"
FAKE_CONFIG = f"""
[tester]
netns = ""
hugepages = "no"
engine = "{FAKE_ENGINE}"
[left]
port = "null"
[right]
port = "null"
[trial]
duration = 10.0
pause = 0.0
[throughput]
error = 10000
"""


def console_text(summary: dict) -> str:
    """What the console shows of a result's summary (ui/console.py), as plain text."""
    from rich.console import Console
    from xlatperf.ui.console import render_summary
    console = Console(width=200, record=True)
    console.print(render_summary(summary))
    return console.export_text()
