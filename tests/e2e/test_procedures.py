# SPDX-License-Identifier: BSD-3-Clause
"""The foundation's procedures end to end: real engine, real DUTs in the namespace lab."""

import math
import os
import signal
import subprocess
import sys
import time

import pytest
from e2e_util import COUNTS_NOT_PACING, ROOT, summary, trials, xlatperf

# Short trials keep the suite fast; the procedures are the same at 60 s.
FAST = ["--duration", "1", "--set", "trial.pause=0", "--set", "trial.timeout=0.5"]


@pytest.mark.parametrize("kind", ["router4", "router6", "siit"])
def test_throughput_converges_through_a_real_dut(make_lab, tmp_path, kind):
    config = make_lab(kind)
    out = tmp_path / "out"
    xlatperf("throughput", "-c", str(config), *FAST, "--set", "throughput.max_rate=400000",
             "--set", "throughput.error=10000", "--out", str(out), "-q")
    s = summary(out)
    assert s["procedure"] == "throughput" and s["complete"] and s["unit"] == "fps"
    assert s["median"] > 0, s
    steps = s["repetitions"][0]["steps"]
    # Converged: the last bracket is within the error, and the result was measured as passing.
    passing = [t for t in trials(out) if t["valid"] and t["loss_ratio"] == 0]
    assert s["median"] in {t["rate"] for t in passing}
    assert len(steps) <= 2 + math.ceil(math.log2(400000 / 10000))
    for key in ("p1", "p99", "min", "max", "dispersion", "repetitions", "config"):
        assert key in s


def test_throughput_against_limit_finds_the_configured_rate(make_lab, tmp_path):
    limit = 20000
    config = make_lab("limit", rate=limit)
    out = tmp_path / "out"
    xlatperf("throughput", "-c", str(config), "--duration", "2", "--set", "trial.pause=0",
             "--set", "trial.timeout=0.5", "--set", f"throughput.max_rate={2 * limit}",
             "--set", "throughput.error=200", "--out", str(out), "-q")
    s = summary(out)
    assert not s["tester_limited"], "the tester must keep 40 kfps on veth"
    assert abs(s["median"] - limit) <= 0.10 * limit, s["median"]


def test_frame_loss_against_lossy_matches_the_drop_probability(make_lab, tmp_path):
    loss = 0.1
    config = make_lab("lossy", loss=loss)
    rate, duration = 20000, 2
    # The subject is the loss ratio, not the shared machine's steadiness: a trial the tester
    # could not send on time (invalid, and left out of the summary) is run again, twice at most.
    for attempt in range(3):
        out = tmp_path / f"out{attempt}"
        xlatperf("frame-loss", "-c", str(config), "--duration", str(duration), "--set",
                 "trial.pause=0", "--set", "trial.timeout=0.5", "--rates", str(rate),
                 "--out", str(out), "-q")
        (trial,) = trials(out)
        if trial["valid"]:
            break
    s = summary(out)
    p = round(loss * 65536) / 65536  # nftables numgen quantises the probability to 1/65536
    n = rate * duration
    sigma = math.sqrt(p * (1 - p) / n)
    assert trial["valid"]
    for name, d in trial["directions"].items():
        assert d["sent"] == n
        measured = (d["sent"] - d["received"]) / d["sent"]
        # Binomial drops: 5 standard deviations (false alarm probability < 1e-6 per direction).
        assert abs(measured - p) <= 5 * sigma, (name, measured, p, sigma)
    assert s["unit"] == "ratio" and abs(s["median"] - p) <= 5 * sigma


def test_selftest_on_the_loopback_lab(make_lab, tmp_path):
    config = make_lab("loopback")
    out = tmp_path / "out"
    xlatperf("selftest", "-c", str(config), *FAST, "--set", "throughput.max_rate=200000",
             "--set", "throughput.error=20000", "--out", str(out), "-q")
    s = summary(out)
    assert s["check"]["valid"] and s["check"]["loss_ratio"] == 0
    assert s["median"] > 0


def test_invalid_config_gives_one_clear_line(make_lab, tmp_path):
    config = make_lab("router4")
    proc = xlatperf("throughput", "-c", str(config), "--set", "traffic.frame_size=40",
                    "--out", str(tmp_path / "out"), check=False)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "traffic.frame_size" in lines[0] and "40" in lines[0] and "64" in lines[0], lines[0]


def test_missing_port_gives_one_clear_line(make_lab, tmp_path):
    config = make_lab("router4")
    proc = xlatperf("trial", "-c", str(config), "--set", "left.port=af_packet:xlp-nope",
                    "--rate", "1000", "--out", str(tmp_path / "out"), check=False)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "xlp-nope" in lines[0], proc.stderr


def lab_tester_processes() -> list[str]:
    """Processes inside the lab's tester namespace: the engine runs there, nothing else does."""
    out = subprocess.run(["ip", "netns", "pids", "xlp-tester"], capture_output=True, text=True)
    return out.stdout.split()


def test_ctrl_c_keeps_finished_trials_and_stops_the_engine(make_lab, tmp_path):
    config = make_lab("router4")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "xlatperf", "throughput", "-c", str(config),
                             "--duration", "2", "--set", "trial.pause=0", "--set",
                             "throughput.max_rate=1000000", "--out", str(out), "-q"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Wait until at least one trial is on disk, then interrupt in the middle of the next one.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (out / "trials.jsonl").exists() and (out / "trials.jsonl").read_text().count("\n") >= 1:
            break
        time.sleep(0.2)
    time.sleep(0.8)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, (stdout, stderr)
    done = trials(out)
    assert len(done) >= 1 and all("rate" in t for t in done)
    s = summary(out)
    assert s["complete"] is False
    assert lab_tester_processes() == [], "the engine must have stopped its ports and exited"


def test_selftest_over_an_in_engine_ring_pair(exclusive_lab, tmp_path):
    """ring:NAME on both sides: two DPDK ports wired through rte_rings inside the engine, no
    kernel in the path; every frame sent on one side arrives on the other."""
    config = tmp_path / "ring.toml"
    config.write_text('[tester]\nnetns = ""\n'
                      '[left]\nport = "ring:pair"\nspeed = "100G"\ndut_mac = "02:00:00:00:00:02"\n'
                      '[right]\nport = "ring:pair"\nspeed = "100G"\ndut_mac = "02:00:00:00:00:01"\n')
    out = tmp_path / "out"
    # trial.max_lag: room for a busy shared CPU (the wiring is judged here, not the schedule).
    xlatperf("selftest", "-c", str(config), "--duration", "0.5", "--set", "trial.pause=0",
             "--set", "trial.max_lag=0.5", "--set", "throughput.max_rate=2000000",
             "--set", "throughput.error=200000", "--out", str(out), "-q")
    s = summary(out)
    assert s["check"]["valid"] and s["check"]["loss_ratio"] == 0
    assert s["median"] > 0
    # A ring refuses what it cannot hold (the sender's count): no valid trial loses a frame.
    valid = [r for r in trials(out) if r["valid"]]
    assert len(valid) >= 2
    assert all(d["received"] == d["sent"] > 0 for r in valid for d in r["directions"].values())


def test_af_xdp_ports_on_the_loopback_lab(make_lab, tmp_path):
    config = make_lab("loopback")
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), "--set", "left.port=af_xdp:xlp-tl",
             "--set", "right.port=af_xdp:xlp-tr", "--rate", "10000", "--duration", "1",
             "--out", str(out), "-q")
    (trial,) = trials(out)
    assert trial["valid"] and all(d["received"] == d["sent"] == 10000
                                  for d in trial["directions"].values())


def test_engine_refuses_an_interface_with_an_address_unless_forced(make_lab, tmp_path):
    config = make_lab("loopback")
    subprocess.run(["ip", "-n", "xlp-tester", "addr", "add", "198.18.99.1/24", "dev", "xlp-tl"],
                   check=True)
    proc = xlatperf("trial", "-c", str(config), "--rate", "1000", "--duration", "0.5",
                    "--out", str(tmp_path / "refused"), check=False)
    assert proc.returncode == 1
    line = proc.stderr.strip().splitlines()[-1]
    assert "xlp-tl" in line and "198.18.99.1" in line, proc.stderr
    xlatperf("trial", "-c", str(config), "--rate", "1000", "--duration", "0.5",
             "--set", "tester.force=true", "--out", str(tmp_path / "forced"), "-q")


@pytest.mark.parametrize(("kind", "size", "received_sizes"), [
    ("router4", 1518, {"forward": 1518, "reverse": 1518}),
    ("siit", 1518, {"forward": 1498, "reverse": 1518}),  # IPv6 1518 <-> IPv4 1498 (RFC 8219)
    ("siit", 84, {"forward": 64, "reverse": 84}),
])
def test_largest_and_smallest_frames_cross_the_dut_whole(make_lab, tmp_path, kind, size, received_sizes):
    config = make_lab(kind)
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), "--set", f"traffic.frame_size={size}", "--rate", "2000",
             "--duration", "1", "--out", str(out), "-q")
    (trial,) = trials(out)
    assert trial["valid"]
    for name, d in trial["directions"].items():
        assert d["received"] == d["sent"] == 2000 and d["bad_length"] == 0, (name, d)
    s = summary(out)
    for name, rx_size in received_sizes.items():
        assert s["directions"][name]["rx_frame_size"] == rx_size


def test_runs_without_hugepages(exclusive_lab, tmp_path):
    """The fallback of a machine without hugepages: EAL --no-huge (and nothing left behind)."""
    config = tmp_path / "ring.toml"
    config.write_text('[tester]\nnetns = ""\nhugepages = "no"\n'
                      '[left]\nport = "ring:nohuge"\nspeed = "100G"\ndut_mac = "02:00:00:00:00:02"\n'
                      '[right]\nport = "ring:nohuge"\nspeed = "100G"\ndut_mac = "02:00:00:00:00:01"\n'
                      + COUNTS_NOT_PACING)
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), "--rate", "100000", "--duration", "0.5", "--out", str(out), "-q")
    (trial,) = trials(out)
    assert trial["valid"] and all(d["received"] == 50000 for d in trial["directions"].values())
    leftovers = [p for p in os.listdir("/var/run/dpdk") if p.startswith("xlatperf")] \
        if os.path.isdir("/var/run/dpdk") else []
    assert leftovers == [], "the engine's runtime directory must be removed"
