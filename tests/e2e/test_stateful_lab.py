# SPDX-License-Identifier: BSD-3-Clause
"""RFC 9693 stateful procedures end to end: the real engine through the lab's stateful NAT
DUTs (nftables masquerade, TAYGA + NAT44), with `conntrack -F` as the DUT hook."""

import json
import math
import subprocess

import pytest
from e2e_util import summary, trials, xlatperf

# Short trials and a small phase 1 (2,000 connections in 0.2 s) keep the suite fast.
FAST = ["--duration", "1", "--set", "trial.pause=0", "--set", "trial.timeout=0.5",
        "--set", "stateful.connections=2000", "--set", "stateful.timeout_phase1=0.5"]
# Phase 2 must use only tuples phase 1 sent: 20 x 100 port pairs are the 2,000 connections
# (the lab's 100 x 100 would leave 8,000 tuples for phase 2 to open; refused).
COVERED = ["--set", "ports.forward_src_max=1043"]


def hooks(out, hook: str = "before_trial") -> list[dict]:
    """The logged runs of one DUT hook (by default those that emptied the DUT's table; the lab's
    dut.counters hook, run after every trial, is logged beside them)."""
    logged = [json.loads(line) for line in (out / "hooks.jsonl").read_text().splitlines()]
    return [h for h in logged if h["hook"] == hook]


def test_nat44_phase1_then_phase2_throughput_converges(make_lab, tmp_path):
    config = make_lab("nat44")
    out = tmp_path / "out"
    xlatperf("throughput", "-c", str(config), *FAST, *COVERED, "--set", "throughput.max_rate=400000",
             "--set", "throughput.error=20000", "--out", str(out), "-q")
    s = summary(out)
    assert s["complete"] and s["median"] > 0, s
    records = trials(out)
    measured = [r for r in records if r.get("phase") is None]
    phase1 = [r for r in records if r.get("phase") == "phase1"]
    # Every step: the hook, phase 1 filling the state table with all 2,000 tuples (taken
    # again, hook first, when it did not: attempts 2, 3), phase 2.
    last = {r["step"]: r for r in phase1}
    assert len(last) == len(measured) == len(s["repetitions"][0]["steps"])
    assert all(last[r["step"]]["state_table"]["entries"] == 2000 and last[r["step"]][
        "directions"]["forward"]["received"] == 2000 for r in measured if "phase2" not in r)
    assert all(r["attempt"] in (1, 2, 3) for r in phase1)
    assert len(hooks(out)) == len(phase1) and all(h["exit_status"] == 0 for h in hooks(out))
    assert s["median"] in {r["rate"] for r in measured if r["loss_ratio"] == 0}
    assert len(measured) <= 2 + math.ceil(math.log2(400000 / 20000))
    items = s["settings"]["stateful"]
    assert items["connections"] == 2000 and items["initiator"] == "left"
    assert "nf_conntrack_max" in items["dut"]


@pytest.mark.parametrize("kind", ["nat66", "nat64"])
def test_phase1_and_phase2_trial_without_loss(make_lab, tmp_path, kind):
    config = make_lab(kind)
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), *FAST, *COVERED, "--rate", "2000", "--out", str(out),
             "-q")
    phase1, measured = trials(out)
    assert phase1["phase"] == "phase1" and phase1["state_table"]["entries"] == 2000
    assert phase1["state_table"]["ip_version"] == (4 if kind == "nat64" else 6)
    assert measured["valid"]
    for name, d in measured["directions"].items():
        assert d["received"] == d["sent"] == 2000, (name, d)


def test_phase1_on_the_dut_inside_interface_every_four_tuple_once(make_lab, tmp_path):
    """RFC 9693 phase 1 through nat44 with ports and addresses enumerated together: what the
    DUT receives on its inside (left) interface holds each four-tuple of the ranges exactly
    once, in pseudorandom order, and the Responder learns as many translated tuples."""
    config = make_lab("nat44", addresses=3)  # left and right addresses 198.18/19.0.2-4
    sports, dports, hosts = range(1024, 1034), range(1, 9), range(2, 5)
    tuples = len(sports) * len(dports) * len(hosts) ** 2  # 720
    pcap = tmp_path / "inside.pcap"
    dump = subprocess.Popen(["ip", "netns", "exec", "xlp-dut", "tcpdump", "-i", "xlp-dl", "-Q", "in",
                             "-U", "-c", str(tuples), "-w", str(pcap), "udp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert "listening" in dump.stderr.readline()
    out = tmp_path / "out"
    # No learning trial: its frames would reach the capture first (the DUT resolves the
    # tester's addresses while phase 1 runs, queueing the first frames meanwhile).
    xlatperf("trial", "-c", str(config), *FAST, "--rate", "1000", "--set", "trial.learning=no",
             "--set", f"stateful.connections={tuples}", "--set", "stateful.rate_phase1=5000",
             "--set", "stateful.enumerate=both", "--set", f"ports.forward_src_max={sports[-1]}",
             "--set", f"ports.forward_dst_max={dports[-1]}", "--out", str(out), "-q")
    dump.wait(timeout=30)
    phase1, _ = trials(out)
    assert phase1["state_table"]["entries"] == tuples
    fields = ["ip.src", "udp.srcport", "ip.dst", "udp.dstport"]
    text = subprocess.run(["tshark", "-r", str(pcap), "-T", "fields", "-E", "separator=,",
                           *[a for f in fields for a in ("-e", f)]],
                          capture_output=True, text=True, check=True).stdout
    seen = [tuple(line.split(",")) for line in text.splitlines()]
    expected = {(f"198.18.0.{s}", str(sp), f"198.19.0.{d}", str(dp))
                for s in hosts for sp in sports for d in hosts for dp in dports}
    assert len(seen) == tuples and set(seen) == expected, "each four-tuple exactly once"
    assert seen != sorted(seen), "in pseudorandom order"


def test_connection_rate_through_nat44(make_lab, tmp_path):
    config = make_lab("nat44")
    out = tmp_path / "out"
    xlatperf("connection-rate", "-c", str(config), *FAST, "--set", "stateful.max_rate=100000",
             "--set", "stateful.error=20000", "--out", str(out), "-q")
    s = summary(out)
    assert s["procedure"] == "connection-rate" and s["unit"] == "cps" and s["median"] > 0, s
    steps = s["repetitions"][0]["steps"]
    passing = [step for step in steps if step["passed"]]
    assert passing and all(step["validation"]["directions"]["reverse"]["received"] == 2000
                           for step in passing)
    assert s["median"] == max(step["rate"] for step in passing)


def test_teardown_rate_through_nat44(make_lab, tmp_path):
    config = make_lab("nat44")
    out = tmp_path / "out"
    # 50,000 connections (500 x 100 port pairs) make the deletion measurable next to the cost
    # of starting `ip netns exec ... conntrack -F`.
    xlatperf("teardown-rate", "-c", str(config), *FAST, "--set", "stateful.connections=50000",
             "--set", "ports.forward_src_max=1523", "--set", "stateful.rate_phase1=25000",
             "--out", str(out), "-q")
    s = summary(out)
    (rep,) = s["repetitions"]
    assert rep["loaded"], rep["load_failure"]
    assert rep["full_seconds"] > rep["empty_seconds"] > 0 and rep["teardown_rate"] > 0
    assert s["median"] == pytest.approx(50000 / (rep["full_seconds"] - rep["empty_seconds"]))
    timed = hooks(out, "teardown")
    assert [h["table"] for h in timed] == ["full", "empty"]
    assert [h["duration"] for h in timed] == [rep["full_seconds"], rep["empty_seconds"]]
    assert "emptied" in timed[0]["output"]  # conntrack's own message
    assert s["settings"]["teardown"] == "ip netns exec xlp-dut conntrack -F"


def test_state_table_fill_failure_is_reported_as_such(make_lab, tmp_path):
    config = make_lab("nat44")
    # The DUT drops the 100 tuples with source port 1024: with all 100 x 100 tuples enumerated,
    # 9,900 of the 10,000 phase-1 frames arrive.
    subprocess.run(["ip", "netns", "exec", "xlp-dut", "nft", "insert", "rule", "ip", "xlp_nat",
                    "forward", "udp", "sport", "1024", "drop"], check=True)
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), *FAST, "--set", "stateful.connections=10000",
             "--set", "stateful.rate_phase1=10000", "--set", "stateful.retakes=1",
             "--rate", "1000", "--out", str(out), "-q")
    *phase1, step = trials(out)
    # Taken again once (stateful.retakes = 1), with the DUT's table emptied first.
    assert [(r["phase"], r["attempt"]) for r in phase1] == [("phase1", 1), ("phase1", 2)]
    assert [h.get("attempt") for h in hooks(out)] == [None, 2]
    entries = phase1[-1]["state_table"]["entries"]
    assert all(9000 <= r["state_table"]["entries"] <= 9900 for r in phase1)  # 9,900 unless
    assert step["valid"] is False and step["directions"] == {}     # the busy DUT lost more
    assert step["invalid_reason"] == (f"failed to fill state table: {entries:,} of 10,000 "
                                      "entries (the last of 2 attempts, stateful.retakes = 1)")
    assert summary(out)["repetitions"][0]["invalid_reason"] == step["invalid_reason"]


def test_table_capacity_through_nat44_finds_nf_conntrack_max(make_lab, tmp_path):
    capacity, error = 3000, 100
    config = make_lab("nat44", table_size=capacity)
    out = tmp_path / "out"
    xlatperf("table-capacity", "-c", str(config), *FAST, "--set", "stateful.connections=1000",
             "--set", "stateful.max_rate=20000", "--set", "stateful.error=5000",
             "--set", f"stateful.capacity_error={error}", "--set", "stateful.timeout_phase1=0.2",
             "--out", str(out), "-q", timeout=900)
    s = summary(out)
    (rep,) = s["repetitions"]
    # Beyond nf_conntrack_max, Linux evicts unreplied entries: phase 1 still passes, the
    # validation trial does not.
    assert capacity - error <= rep["capacity"] <= capacity, rep["history"]
    assert rep["complete"] and rep["c0"] == 1000 and rep["r0"] > 0
    assert rep["exponential_iterations"] >= 2 and rep["binary_iterations"] >= 1


def test_phase2_through_a_small_conntrack_table_uses_only_established_connections(
        make_lab, tmp_path):
    """Issue 11 finding 5: 2,000 connections of the lab's 100 x 100 port pairs left 8,000 for
    phase 2 to open; through a 3,000-entry conntrack table that showed as 40-58 % reverse
    "loss". Such a phase 2 is refused, naming the numbers; with ranges that phase 1 covers,
    the same DUT loses nothing in either direction."""
    config = make_lab("nat44", table_size=3000)
    refused = xlatperf("trial", "-c", str(config), *FAST, "--rate", "2000", "--out",
                       str(tmp_path / "refused"), "-q", check=False)
    assert refused.returncode != 0
    for text in ("stateful.connections = 2000", "10,000 combinations",
                 "ports.forward_src 100 x ports.forward_dst 100"):
        assert text in refused.stderr + refused.stdout, refused.stderr
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), *FAST, *COVERED, "--rate", "2000", "--out", str(out),
             "-q")
    phase1, measured = trials(out)
    assert phase1["state_table"]["entries"] == 2000 and measured["valid"]
    for name, d in measured["directions"].items():
        assert d["received"] == d["sent"] == 2000, (name, d)
