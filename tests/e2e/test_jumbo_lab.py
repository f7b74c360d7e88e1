# SPDX-License-Identifier: BSD-3-Clause
"""Jumbo frames end to end (RFC 8219 §5.1.1 sizes up to 9216 bytes): the real engine on
af_packet ports (ring slots enlarged, whole-frame receive mbufs) through the kernel router with
a 9216-byte MTU on every veth, untagged and with QinQ tags through the VLAN router."""

import json
import subprocess

import pytest

from e2e_util import trials, xlatperf
from xlatperf import lab

# The test asserts counts and what the DUT received, not the sender's pacing: af_packet's
# sendto runs the DUT's forwarding of each 9 kB burst on the sending CPU, which falls a few ms
# behind at times. A tolerance no preemption reaches, and no retake (the DUT's counters would
# count every attempt).
FAST = ["--set", "trial.pause=0", "--set", "trial.timeout=0.5", "--set", "trial.max_lag=0.5",
        "--set", "trial.retakes=0"]


def rx_stats(ns: str, dev: str) -> tuple[int, int]:
    """(packets, bytes) the interface has received."""
    [link] = json.loads(subprocess.run(["ip", "-n", ns, "-s", "-j", "link", "show", "dev", dev],
                                       capture_output=True, text=True, check=True).stdout)
    return link["stats64"]["rx"]["packets"], link["stats64"]["rx"]["bytes"]


@pytest.mark.parametrize("kind, params, size, tags", [
    ("router4", {"mtu": 9216}, 9000, 0),
    ("router4", {"mtu": 9216}, 9216, 0),
    ("vlan", {"mtu": 9216, "left_outer": 300}, 9000, 2),
])
def test_jumbo_frames_through_the_router(make_lab, tmp_path, kind, params, size, tags):
    config = make_lab(kind, **params)
    out = tmp_path / "out"
    rate = 5000
    before = rx_stats(lab.DUT_NS, "xlp-dl")
    xlatperf("trial", "-c", str(config), "--rate", str(rate), "--duration", "1", *FAST,
             "--set", f"traffic.frame_size={size}", "--out", str(out), "-q")
    after = rx_stats(lab.DUT_NS, "xlp-dl")
    [record] = trials(out)
    assert record["valid"], record
    for name, d in record["directions"].items():
        assert d["sent"] == rate, (name, d)
        assert d["received"] == d["sent"], (name, d)
        assert d["bad_length"] == 0
    # The DUT really got jumbo frames from the tester: the forward frames (without FCS, with
    # the tags), plus a few small ARP frames.
    packets, octets = after[0] - before[0], after[1] - before[1]
    assert packets >= rate
    assert rate * (size - 4 + 4 * tags) <= octets <= rate * (size - 4 + 4 * tags) + (packets - rate) * 100
