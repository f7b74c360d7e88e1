# SPDX-License-Identifier: BSD-3-Clause
"""IMIX end to end (RFC 6985): the Simple IMIX (64/594/1518 bytes, 7:4:1) through the kernel
router with the real engine: every frame arrives, the record counts per size, and the DUT's
interface saw exactly those sizes (its byte counter)."""

import json
import subprocess

import pytest

from e2e_util import summary, trials, xlatperf
from xlatperf import lab

FAST = ["--set", "trial.pause=0", "--set", "trial.timeout=0.5"]


def rx_stats(ns: str, dev: str) -> tuple[int, int]:
    [link] = json.loads(subprocess.run(["ip", "-n", ns, "-s", "-j", "link", "show", "dev", dev],
                                       capture_output=True, text=True, check=True).stdout)
    return link["stats64"]["rx"]["packets"], link["stats64"]["rx"]["bytes"]


def test_simple_imix_through_router4_counts_every_size(make_lab, tmp_path):
    config = make_lab("router4")
    out = tmp_path / "out"
    rate = 12000  # 1000 periods of 12 frames per direction in 1 s
    before = rx_stats(lab.DUT_NS, "xlp-dl")
    xlatperf("trial", "-c", str(config), "--rate", str(rate), "--duration", "1", *FAST,
             "--set", "traffic.imix=simple", "--out", str(out), "-q")
    after = rx_stats(lab.DUT_NS, "xlp-dl")
    [record] = trials(out)
    assert record["valid"], record
    expected = {"64": 7000, "594": 4000, "1518": 1000}
    for name, d in record["directions"].items():
        assert d["sent"] == d["received"] == rate, (name, d)
        assert d["sizes"] == {size: {"sent": n, "received": n} for size, n in expected.items()}, (name, d)
    # The forward frames reached the DUT with these sizes (the counter has no FCS): 7000 x 60 +
    # 4000 x 590 + 1000 x 1514 bytes, plus the few ARP frames.
    packets, octets = after[0] - before[0], after[1] - before[1]
    frames_bytes = sum(n * (int(size) - 4) for size, n in expected.items())
    assert packets >= rate
    assert frames_bytes <= octets <= frames_bytes + (packets - rate) * 100
    # The medium's maximum for the mix, not for its largest frame (af_packet reports 10G).
    assert summary(out)["directions"]["forward"]["max_rate"] == 3_273_679


def test_throughput_with_imix_through_router4(make_lab, tmp_path):
    """A throughput search runs on the mix (the search's upper end is the mix's maximum)."""
    config = make_lab("router4")
    out = tmp_path / "out"
    xlatperf("throughput", "-c", str(config), "--duration", "1", *FAST, "--set", "traffic.imix=simple",
             "--set", "throughput.max_rate=100000", "--set", "throughput.error=20000", "--out", str(out), "-q")
    s = summary(out)
    assert s["complete"] and s["median"] > 0
    passing = [t for t in trials(out) if t["valid"] and t["loss_ratio"] == 0]
    assert passing and all(set(t["directions"]["forward"]["sizes"]) == {"64", "594", "1518"} for t in passing)


@pytest.mark.parametrize("mix", [(1, 1), (2, 1)])
def test_imix_through_siit_names_each_size_alike_on_both_sides(make_lab, tmp_path, mix):
    """Through TAYGA (IPv6 left, IPv4 right): the size 84 is 84-byte IPv6 frames and the 64-byte
    IPv4 frames translated from or into them, and both directions count them under "84". With
    background traffic (mix 2/1: native IPv6 the DUT routes) the foreground and the background
    frames each go through the IMIX's order, so the counts per size are the same; the trial is
    the first after lab up, and the DUT forwards every background frame too."""
    config = make_lab("siit")
    out = tmp_path / "out"
    rate = 6000  # 500 periods of 12 frames per direction in 1 s
    xlatperf("trial", "-c", str(config), "--rate", str(rate), "--duration", "1", *FAST,
             "--set", 'traffic.imix="84:7,614:4,1518:1"', "--set", f"traffic.mix_n={mix[0]}",
             "--set", f"traffic.mix_m={mix[1]}", "--out", str(out), "-q")
    [record] = trials(out)
    assert record["valid"], record
    expected = {"84": 3500, "614": 2000, "1518": 500}
    for name, d in record["directions"].items():
        assert d["sent"] == d["received"] == rate and d["bad_length"] == 0, (name, d)
        assert d["sizes"] == {size: {"sent": n, "received": n} for size, n in expected.items()}, (name, d)
    # Forward frames leave as IPv6 and arrive as IPv4, reverse ones the other way round.
    directions = summary(out)["directions"]
    assert (directions["forward"]["frame_size"], directions["forward"]["rx_frame_size"]) == (84, 64)
    assert (directions["reverse"]["frame_size"], directions["reverse"]["rx_frame_size"]) == (64, 84)
