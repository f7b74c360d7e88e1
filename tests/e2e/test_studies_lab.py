# SPDX-License-Identifier: BSD-3-Clause
"""Campaign studies in the lab with the real engine (issue 13, 1d and 3): the paper workflow
(per frame size a throughput, then latency and PDV at that throughput) through the kernel
router, and a campaign over a DUT variable whose templated hooks change the lab DUT and sample
its counters. Short trials and two repetitions: the workflow, not RFC-length results."""

import csv
import json
from pathlib import Path

from e2e_util import xlatperf

from xlatperf.lab import DUT_NS

# The throughput search ends at its first trial when the router keeps the search's upper end,
# which differs per frame size, so each frame size has its own throughput: a delay point at
# another point's rate would show. (On a loaded machine a search may end lower: the test
# compares with what was measured, whatever it is.)
SIZES = {64: 20000, 512: 10000, 1518: 5000}
SHORT = """
"trial.duration" = 1.0
"trial.timeout" = 0.5
"trial.pause" = 0
"throughput.error" = 1000
"latency.delay" = 0.5
"latency.timestamps" = 500
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def points(out: Path) -> list[dict]:
    return json.loads((out / "campaign.json").read_text())["points"]


def summary(out: Path, point: dict) -> dict:
    return json.loads((out / "points" / point["id"] / "summary.json").read_text())


def trials(out: Path, point: dict) -> list[dict]:
    """A point's trial records, without the attempts that were taken again (a busy lab machine
    may deschedule the sender: trial.retakes)."""
    path = out / "points" / point["id"] / "trials.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines() if line]
    return [r for r in records if not r.get("retaken")]


def test_throughput_then_latency_and_pdv_at_that_throughput(make_lab, tmp_path):
    config = make_lab("router4")
    sizes = ", ".join(f'{{"traffic.frame_size" = {size}, "throughput.max_rate" = {rate}}}'
                      for size, rate in SIZES.items())
    campaign = write(tmp_path / "paper.toml", f"""
[campaign]
config = "{config}"
procedures = ["throughput", "latency", "pdv"]
repeat = 2
[set]
{SHORT}
[axes]
size = [{sizes}]
""")
    out = tmp_path / "out"
    xlatperf("campaign", "run", str(campaign), "--out", str(out), "-q", timeout=900)
    found = points(out)
    assert [p["procedure"] for p in found] == ["throughput", "latency", "pdv"] * 3
    throughput = {}
    for point in found:
        s = summary(out, point)
        size = s["config"]["traffic"]["frame_size"]
        assert s["complete"], (point["id"], s)
        if point["procedure"] == "throughput":
            assert 0 < s["median"] <= SIZES[size] and s["n"] == 2, s
            throughput[size] = (point["id"], int(s["median"]))
            continue
        source_id, rate = throughput[size]          # measured just before, same frame size
        assert point["rate_from"] == source_id
        assert s["rate_source"]["point"] == source_id and s["rate_source"]["rate"] == rate
        assert s["settings"]["rate"] == rate
        records = trials(out, point)
        measured = [r for r in records if r.get("phase") != "learning"]
        assert len(measured) == 2 and {r["rate"] for r in measured} == {rate}, records
        for record in measured:
            assert record["valid"], record
            for direction in record["directions"].values():
                assert abs(direction["sent"] - rate) <= 1   # 1 s at the throughput rate
            if point["procedure"] == "latency":
                for info in record["latency"].values():
                    assert info["tagged"] == 500 and 0 < info["tl_ns"] <= info["wcl_ns"]
            else:
                for info in record["pdv"].values():
                    assert info["frames"] > 0 and info["pdv_ns"] >= 0
    with open(out / "results.csv", newline="") as stream:
        rows = {row["id"]: row for row in csv.DictReader(stream)}
    for point in found:
        if point["procedure"] != "throughput":
            assert int(rows[point["id"]]["rate"]) == summary(out, point)["settings"]["rate"]
    report = xlatperf("report", str(out))
    assert report.returncode == 0
    markdown = (out / "report" / "report.md").read_text()
    for size, (_, rate) in throughput.items():
        assert f"measured at {rate:,} frames/s, the throughput of throughput point" in markdown


def test_a_campaign_over_a_templated_dut_variable(make_lab, tmp_path):
    """dut.cores and the receive packet steering mask that goes with it: before_point writes
    them into a file and into the lab DUT's interface; the counters hook reads the mask back
    from the DUT and its receive counter after every trial."""
    config = make_lab("router4")
    seen = tmp_path / "seen"
    sysfs = "/sys/class/net/xlp-dl"
    campaign = write(tmp_path / "cores.toml", f"""
[campaign]
config = "{config}"
procedures = ["throughput"]
repeat = 2
[set]
{SHORT}
"throughput.max_rate" = 10000
"dut.before_point" = "echo {{dut.cores}} >> {seen} && ip netns exec {DUT_NS} sh -c 'echo {{dut.rps_mask}} > {sysfs}/queues/rx-0/rps_cpus'"
"dut.counters" = "echo cores={{dut.cores}}; echo rps_cpus=$(ip netns exec {DUT_NS} cat {sysfs}/queues/rx-0/rps_cpus); echo rx_packets=$(ip netns exec {DUT_NS} cat {sysfs}/statistics/rx_packets)"
"dut.after_point" = "ip netns exec {DUT_NS} sh -c 'echo 0 > {sysfs}/queues/rx-0/rps_cpus'"
[axes]
cores = [{{"dut.cores" = 1, "dut.rps_mask" = "1"}}, {{"dut.cores" = 2, "dut.rps_mask" = "3"}}]
""")
    out = tmp_path / "out"
    xlatperf("campaign", "run", str(campaign), "--out", str(out), "-q", timeout=600)
    assert seen.read_text().split() == ["1", "2"]          # the hook saw each value, in order
    for point, (cores, mask) in zip(points(out), ((1, 1), (2, 3))):
        s = summary(out, point)
        assert s["complete"] and s["config"]["dut"]["variables"] == {
            "cores": cores, "rps_mask": str(mask)}
        records = trials(out, point)
        measured = [r for r in records if r.get("phase") != "learning"]
        assert measured and all(r["dut_counters"]["cores"] == cores and
                                r["dut_counters"]["rps_cpus"] == mask for r in measured)
        # Between two samples exactly one trial went through the DUT's left interface: its
        # receive counter grew by that trial's forward frames (and a few ARP/ND frames).
        for before, after in zip(measured, measured[1:]):
            grown = after["dut_counters"]["rx_packets"] - before["dut_counters"]["rx_packets"]
            sent = after["directions"]["forward"]["sent"]
            assert sent <= grown <= sent + 50, (before["dut_counters"], after)
        hooks = [json.loads(line) for line in
                 (out / "points" / point["id"] / "hooks.jsonl").read_text().splitlines()]
        assert hooks[0]["hook"] == "before_point" and f"echo {mask} > " in hooks[0]["command"]
        assert hooks[-1]["hook"] == "after_point" and hooks[-1]["exit_status"] == 0
    report = xlatperf("report", str(out))
    assert report.returncode == 0
    assert (out / "report" / "plots" / "scaleup_cores_throughput.png").exists()
    svg = (out / "report" / "plots" / "scaleup_cores_throughput.svg").read_text()
    assert "relative scale-up" in svg and "rps_mask" not in svg   # one series over cores
