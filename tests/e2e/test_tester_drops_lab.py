# SPDX-License-Identifier: BSD-3-Clause
"""Issue 17 finding 3 on a port that really drops: the tester's own receive ring overflows, and
the trial says so instead of blaming the DUT. The loopback lab (no DUT: every frame sent
arrives unless the tester drops it; its wire runs on CPU 0); the receiving port is served by a
worker of its own on CPU 1, which a busy process takes for 60 ms of every 100 ms while the
sender on CPU 0 keeps sending 200,000 frames/s: 12,000 frames arrive in a stall, more than the
AF_XDP socket's ring holds. DPDK 22.11's af_packet driver does not count such drops (imissed)
and its af_xdp driver only some (those for want of a fill buffer); the kernel interface counts
them all (rx_dropped), and the engine reads it."""

import subprocess
import sys

import pytest

from e2e_util import CPU_THIEF, trials, xlatperf
from xlatperf.engine.protocol import frames_dropped_by_tester


def test_frames_the_testers_own_ring_dropped_make_the_trial_invalid(make_lab, tmp_path):
    config = make_lab("loopback")
    if 'port = "af_xdp:' not in config.read_text():
        pytest.skip("the lab's ports are af_packet here (no AF_XDP sockets): their socket's "
                    "drops are counted neither by the driver nor by the kernel interface")
    out = tmp_path / "drops"
    thief = subprocess.Popen([sys.executable, "-c", CPU_THIEF, "1", "0.060", "0.100"])
    try:
        # lcores 0@0 (main), 1@0 (worker on CPU 0: port 0, the sender), 2@1 (worker on CPU 1:
        # port 1, the receiver). The schedule rule with a tolerance no stall reaches: only the
        # tester's drops can make this trial invalid. No retakes: every attempt would drop.
        xlatperf("trial", "-c", str(config), "--rate", "200000", "--duration", "1",
                 "--set", "tester.lcores=0@0,1@0,2@1", "--set", "traffic.direction=forward",
                 "--set", "trial.max_lag=0.5", "--set", "trial.retakes=0",
                 "--set", "trial.pause=0", "--out", str(out), "-q")
    finally:
        thief.kill()
        thief.wait()
    (record,) = [t for t in trials(out) if t.get("phase") is None]
    forward = record["directions"]["forward"]
    assert not record["valid"], record
    assert record["invalid_reason"].startswith("tester dropped frames: port 1 missed "), record
    drops = record["port_drops"]["1"]
    missed = frames_dropped_by_tester(drops)
    # Nothing else loses frames on the loopback wire: what the receiver did not count is what
    # its port dropped (within the frames still in flight when the trial ended).
    assert missed > 0
    assert missed <= forward["sent"] - forward["received"]
