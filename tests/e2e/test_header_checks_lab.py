# SPDX-License-Identifier: BSD-3-Clause
"""Every received frame judged (issue 29), end to end with the real engine and real DUTs: a
correct DUT of each lab kind passes every header check with a non-zero DSCP; each fault of the
faulty router (an nftables rule spoiling a known share of the frames after the kernel routed
them) is counted by its own counter at that share; a Linux bridge measured as a router is
reported as not decrementing the TTL."""

import pytest

from e2e_util import trials, xlatperf

# Counts, not pacing, are asserted: a sender may fall behind on the shared CPUs (max_lag).
FAST = ["--set", "trial.pause=0", "--set", "trial.timeout=0.5", "--set", "trial.max_lag=0.5",
        "--set", "traffic.dscp=10"]
FAULTS = ("bad_address", "bad_ttl", "bad_tos", "bad_header", "bad_checksum")


def one_trial(config, tmp_path, rate: int = 2000, *extra: str) -> dict:
    """The directions of one trial at `rate` for 1 s, and of its stateful phase 1 if any
    ("phase1 forward")."""
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), "--rate", str(rate), "--duration", "1", "--out", str(out),
             *FAST, *extra)
    return {(f"{r['phase']} " if r.get("phase") else "") + name: d
            for r in trials(out) for name, d in r["directions"].items()}


# Each lab kind with the DUT working correctly; the kinds whose headers the front end does not
# yet check in full (IPv4aaS roles: checksums and the tunnel's presence only) are here too.
CORRECT = ["router4", "router6", "siit", "nat44", "nat66", "nat64", "clat", "464xlat", "vlan", "limit", "lossy",
           "loopback"]


@pytest.mark.parametrize("kind", CORRECT)
def test_a_correct_dut_passes_every_header_check(make_lab, tmp_path, kind):
    params = {"loss": 0} if kind == "lossy" else {}
    directions = one_trial(make_lab(kind, calibrate="no", **params), tmp_path)
    for name, d in directions.items():
        # (The TAYGA kinds accept a zero UDP checksum over IPv6 where the sum is right:
        # checks.zero_udp_checksum_ipv6 = false, lab/kinds/tayga.py.)
        assert {f: d[f] for f in FAULTS} == dict.fromkeys(FAULTS, 0), (kind, name, d)
        # What arrives is received; a user-space DUT (TAYGA) on a loaded 2-CPU machine may
        # drop the odd frame, which is loss, not a header fault.
        assert d["sent"] > 0 and d["received"] >= 0.99 * d["sent"], (kind, name, d)


@pytest.mark.parametrize("family", [4, 6])
@pytest.mark.parametrize("fault, counter", [("ttl", "bad_ttl"), ("tos", "bad_tos"),
                                            ("address", "bad_address"), ("checksum", "bad_checksum")])
def test_each_fault_of_the_faulty_router_is_counted_by_its_counter(make_lab, tmp_path, family, fault, counter):
    config = make_lab(f"router{family}", calibrate="no", faulty=fault, faulty_share=30)
    directions = one_trial(config, tmp_path)
    for name, d in directions.items():
        share = d[counter] / d["sent"]
        # 30 of every 100 UDP frames the DUT forwards on a port; the learning trial's frames
        # shift where the trial's frames start in that cycle: at most 30 frames either way.
        assert abs(d[counter] - 0.3 * d["sent"]) <= 30, (fault, name, share, d)
        assert {f: d[f] for f in FAULTS if f != counter} == dict.fromkeys(set(FAULTS) - {counter}, 0), d
        assert d["received"] == d["sent"] - d[counter], d


def test_a_bridge_measured_as_a_router_is_reported_for_its_ttl(make_lab, tmp_path):
    config = make_lab("bridge", calibrate="no")
    out = tmp_path / "out"
    proc = xlatperf("trial", "-c", str(config), "--rate", "2000", "--duration", "1", "--out", str(out), *FAST)
    [record] = trials(out)
    for name, d in record["directions"].items():
        assert d["bad_ttl"] == d["sent"] > 0, (name, d)
        assert d["received"] == 0
    assert "TTL" in proc.stdout, proc.stdout[-2000:]
    # With the TTL check off (a user who knows the DUT is a bridge) the frames are received.
    out2 = tmp_path / "out2"
    xlatperf("trial", "-c", str(config), "--rate", "2000", "--duration", "1", "--out", str(out2), *FAST,
             "--set", "checks.ttl=false")
    [record] = trials(out2)
    for d in record["directions"].values():
        assert d["received"] == d["sent"] > 0 and d["bad_ttl"] == 0, d
