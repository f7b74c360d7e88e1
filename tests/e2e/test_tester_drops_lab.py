# SPDX-License-Identifier: BSD-3-Clause
"""Issue 17 finding 3 on a port that really drops: the tester's own RX ring overflows, and the
trial says so instead of blaming the DUT. The loopback lab (no DUT: every frame sent arrives
unless the tester drops it); the receiving port is served by a worker of its own on CPU 0,
which a busy process takes for 60 ms of every 100 ms while the sender on CPU 1 keeps sending
200,000 frames/s: 12,000 frames arrive in a stall, more than the port's RX ring holds."""

import subprocess
import sys

from e2e_util import CPU_THIEF, trials, xlatperf


def test_frames_the_testers_own_ring_dropped_make_the_trial_invalid(make_lab, tmp_path):
    config = make_lab("loopback")
    out = tmp_path / "drops"
    thief = subprocess.Popen([sys.executable, "-c", CPU_THIEF, "0", "0.060", "0.100"])
    try:
        # lcores 0 (main), 1 (worker on CPU 1: port 0, the sender), 2@0 (worker on CPU 0:
        # port 1, the receiver). The schedule rule with a tolerance no stall reaches: only the
        # tester's drops can make this trial invalid. No retakes: every attempt would drop.
        xlatperf("trial", "-c", str(config), "--rate", "200000", "--duration", "1",
                 "--set", "tester.lcores=0,1,2@0", "--set", "traffic.direction=forward",
                 "--set", "trial.max_lag=0.5", "--set", "trial.retakes=0",
                 "--set", "trial.pause=0", "--out", str(out), "-q")
    finally:
        thief.kill()
        thief.wait()
    (record,) = [t for t in trials(out) if t.get("phase") is None]
    forward = record["directions"]["forward"]
    assert not record["valid"], record
    assert record["invalid_reason"].startswith("tester dropped frames: port 1 missed "), record
    missed = record["port_drops"]["1"]["imissed"] + record["port_drops"]["1"]["rx_nombuf"]
    # Nothing else loses frames on the loopback wire: what the receiver did not count is what
    # its port dropped (within the frames still in flight when the trial ended).
    assert missed > 0
    assert missed <= forward["sent"] - forward["received"]
