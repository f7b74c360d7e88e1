#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What judging every received frame's headers costs the receiver (issue 29), on the in-engine
ring pair, in paired rounds: each round offers every case far more than the receiver takes,
1 s each, in turn, and takes the rate achieved, so each ratio compares trials seconds apart.
The sender and the receiver are workers of their own (tester.lcores = "0@0,1@1,2@0": the
receiving port's worker on one CPU, the sending port's on the other with the sleeping main
lcore), so the rate is the receiver's: a sender that finds the ring full offers again. (With
one worker doing both, the rate swung between two levels from trial to trial, as the ring ran
full or not, and the ratios with it.) On a shared 2-vCPU VM that rate still swings between
two levels from trial to trial, so the receiver is also measured alone, in cycles: the engine's
own trial with its frames recorded, then handed to its receiver in bursts of 32 as from a NIC's
RX queue (engine/bench/rx_cost.cpp, built with the engine), paired case by case in each cycle.

Cases, each with its headers checked (the stream's `rx`: addresses, ports, TTL, TOS, DF, the
IPv4 header and UDP checksums; docs/protocol.md "Header checks") against the same frames
unchecked:
  * 64-byte IPv4 frames (a router's);
  * 84-byte IPv6 frames (what a SIIT gateway's IPv6 side sends and receives);
  * MAP-E frames (IPv4 in IPv6) from one million pseudorandom CEs of a MAP rule: their CE
    fields and headers checked, against neither (the CE check alone was 0.69 of unchecked on
    2026-11-26, commit 0a599d6).

    python3 bench/header_checks.py [--rounds N] [--cycles N] [--instructions] [--out bench/results/header_checks.json]

--instructions also counts the receiver's instructions per frame with valgrind's callgrind
(xlatperf-rx-cost on plain pages, XLATPERF_NO_HUGE=1): exact counts, to weigh a change to the
checks where this VM's timings swing by tens of percent between runs.

$XLATPERF_ENGINE picks another engine build (and the xlatperf-rx-cost beside it) and
$XLATPERF_ISA its kernels; both are recorded.
"""

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_rate import LOOPBACK, NULL, cpu_model, paired_rounds  # noqa: E402
from ipv4aas_rate import FORWARD, MAP_E, OFFERED  # noqa: E402
from xlatperf.config.loading import load_config  # noqa: E402
from xlatperf.engine.client import Engine  # noqa: E402
from xlatperf.traffic.plan import TrafficPlan  # noqa: E402

LCORES = "0@0,1@1,2@0"  # main, then one worker per port: the receiver has a CPU of its own
FRAMES = {
    "IPv4 64 B": ["traffic.frame_size=64"],
    "IPv6 84 B (SIIT's IPv6 side)": ["left.ip_version=6", "right.ip_version=6", "traffic.frame_size=84"],
    "MAP-E, 1M random CEs": MAP_E,
}


def with_checks(stream: dict, checked: bool) -> dict:
    """The stream with every header check (`rx` for frames that come back as they were sent:
    the selftest's cable, here the ring pair), or with none."""
    stream = copy.deepcopy(stream)
    stream.pop("rx", None)
    if not checked and "ce" in stream:
        stream["ce"]["rx_fields"] = []
    if checked:
        tunnel = stream.get("tunnel")
        rx = {"ip_version": stream["ip_version"], "src_ip": stream["src_ip"], "dst_ip": stream["dst_ip"],
              "src_port": stream["src_port"], "dst_port": stream["dst_port"], "ttl": stream.get("ttl", 10),
              "tos": stream.get("tos", 0), "checksums": True}
        if stream["ip_version"] == 4:
            rx["df"] = True
        if tunnel:
            rx["tunnel"] = dict(tunnel)
        stream["rx"] = rx
    return stream


def achieved(settings: list[str], checked: bool) -> float:
    """Frames per second one worker sent, received and judged on the ring pair."""
    config = load_config(NULL, FORWARD + settings + LOOPBACK + [f'tester.lcores="{LCORES}"'])
    with Engine(config) as engine:
        plan = TrafficPlan(config, engine.hello()["ports"], through_dut=False)
        flows = plan.flows(min(OFFERED, plan.max_rate))
        flows[0]["foreground"] = with_checks(flows[0]["foreground"], checked)
        # The receiver drains what the ring holds when the sender stops (timeout).
        reply = engine.trial({"duration": 1.0, "timeout": 0.2, "progress_interval": 0, "flows": flows})
    flow = reply["flows"][0]
    stream = flow["streams"][0]
    faults = {k: stream.get(k, 0) for k in ("bad_address", "bad_ttl", "bad_tos", "bad_header", "bad_checksum",
                                            "wrong_ce")}
    if flow["received"] != flow["sent"] or any(faults.values()):
        raise AssertionError(f"received {flow['received']} of {flow['sent']}, {faults}")
    if checked and "bad_ttl" not in stream:
        raise AssertionError("the engine reported no header checks: is it older than protocol 2.10?")
    return flow["sent"] / flow["send_time"]


CASES = {f"{name}, {'every header checked' if checked else 'headers unchecked'}": (settings, checked)
         for name, settings in FRAMES.items() for checked in (False, True)}
# Beside the engine that $XLATPERF_ENGINE names, or the build tree's.
RX_COST = Path(os.environ.get("XLATPERF_ENGINE", Path(__file__).resolve().parents[1] / "engine" / "build" /
                              "xlatperf-engine")).parent / "xlatperf-rx-cost"
RX_FRAMES = 8192  # 16 MiB of 2 KiB buffers: in the caches, as frames a NIC just wrote (DDIO)


def rx_cost_cases(timeout: float = 0.05) -> dict[str, dict]:
    """Every case as the trial request xlatperf-rx-cost runs (engine/bench/rx_cost.cpp).
    timeout: how long the receiver waits for the recorded frames (longer under valgrind)."""
    duration = 0.001  # the sender's schedule (the shortest trial), which the receiver waits out
    rate = int(RX_FRAMES / duration)
    ports = [{"index": 0, "mac": "02:00:00:00:00:01"}, {"index": 1, "mac": "02:00:00:00:00:02"}]
    cases = {}
    for name, (settings, checked) in CASES.items():
        plan = TrafficPlan(load_config(NULL, FORWARD + settings + LOOPBACK), ports, through_dut=False)
        flow = plan.flows(rate)[0]
        flow["foreground"] = with_checks(flow["foreground"], checked)
        # max_lag: the sender shares the thread with the receiver; its pace is not measured
        cases[name] = {"duration": duration, "max_lag": 1.0, "timeout": timeout, "progress_interval": 0,
                       "flows": [flow]}
    return cases


def run_rx_cost(cases: dict[str, dict], cycles: int, prefix: list[str] = (), env: dict | None = None,
                rx_cost: Path = RX_COST) -> str:
    """Runs xlatperf-rx-cost (`rx_cost`: this engine build's by default) on `cases` (under
    `prefix`, e.g. valgrind); returns its stdout."""
    with tempfile.NamedTemporaryFile("w", suffix=".json") as spec:
        json.dump({"frames": RX_FRAMES, "cases": cases}, spec)
        spec.flush()
        out = subprocess.run([*prefix, str(rx_cost), spec.name, str(cycles)], capture_output=True, text=True,
                             env={**os.environ, **(env or {})})
    if out.returncode != 0:
        raise SystemExit(out.stderr.strip()[-2000:] or f"{rx_cost} exited with {out.returncode}")
    return out.stdout


def receiver_cost(cycles: int) -> dict[str, list[float]]:
    """The receiver's ns per frame for every case, apart from any sender (engine/bench/rx_cost.cpp:
    the trial's frames recorded, then handed to its receiver), `cycles` paired cycles."""
    out = run_rx_cost(rx_cost_cases(), cycles)
    return {name: c["ns_per_frame"] for name, c in json.loads(out)["cases"].items()}


def receiver_instructions(cycles: int = 3, rx_cost: Path = RX_COST) -> dict[str, float]:
    """The receiver's instructions per frame for every case (RxTask::classify with all it calls:
    parse, checks, sequence, delay), counted by valgrind's callgrind, one case per run: exact,
    where the shared VM's timings swing by tens of percent between runs."""
    counts = {}
    for name, case in rx_cost_cases(timeout=30.0).items():
        with tempfile.TemporaryDirectory() as tmp:
            profile = os.path.join(tmp, "callgrind.out")
            run_rx_cost({name: case}, cycles, ["valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}"],
                        {"XLATPERF_NO_HUGE": "1"}, rx_cost)
            report = subprocess.run(["callgrind_annotate", "--inclusive=yes", profile], capture_output=True,
                                    text=True, check=True).stdout
        (line,) = [line for line in report.splitlines() if "RxTask::classify(" in line]
        counts[name] = int(line.split()[0].replace(",", "")) / (RX_FRAMES * cycles)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="ring-pair rounds (0: none)")
    parser.add_argument("--cycles", type=int, default=51, help="the receiver alone: cycles (0: none)")
    parser.add_argument("--instructions", action="store_true",
                        help="also count the receiver's instructions per frame with valgrind's callgrind")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "header_checks.json"))
    args = parser.parse_args()
    results = {"command": " ".join(sys.argv), "cpu": cpu_model(), "rounds": args.rounds, "offered_fps": OFFERED,
               "engine": os.environ.get("XLATPERF_ENGINE", "(the build tree's)"),
               "kernels": os.environ.get("XLATPERF_ISA", "(the CPU's best)"), "cases": {},
               "receiver_alone": {"frames": RX_FRAMES, "cycles": args.cycles, "cases": {}}}
    unchecked = {name: name.replace("every header checked", "headers unchecked") for name in CASES}
    if args.rounds:
        print("Ring pair (the receiver's rate, as the sender achieved it):")
        rates = paired_rounds(CASES, args.rounds, achieved)
        for name, values in rates.items():
            ratios = [v / ref for v, ref in zip(values, rates[unchecked[name]])]
            results["cases"][name] = {"mfps": [v / 1e6 for v in values],
                                      "median_mfps": statistics.median(values) / 1e6,
                                      "median_ratio_to_unchecked": statistics.median(ratios)}
            print(f"  {name:60s} {statistics.median(values) / 1e6:7.2f} Mfps, {statistics.median(ratios):5.2f} of "
                  f"unchecked (median of paired rounds)")
    if args.cycles:
        print(f"The receiver alone ({RX_FRAMES} recorded frames per cycle, engine/bench/rx_cost.cpp):")
        costs = receiver_cost(args.cycles)
        for name, values in costs.items():
            # A rate ratio: the unchecked receiver's time per frame over this one's.
            ratios = [ref / v for v, ref in zip(values, costs[unchecked[name]])]
            results["receiver_alone"]["cases"][name] = {
                "ns_per_frame": values, "median_ns_per_frame": statistics.median(values),
                "median_mfps": 1e3 / statistics.median(values), "median_ratio_to_unchecked": statistics.median(ratios)}
            print(f"  {name:60s} {statistics.median(values):7.1f} ns/frame ({1e3 / statistics.median(values):5.1f} "
                  f"Mfps), {statistics.median(ratios):5.2f} of unchecked (median of paired cycles)")
    if args.instructions:
        print("The receiver's instructions per frame (RxTask::classify inclusive, callgrind, 3 cycles):")
        counts = receiver_instructions()
        results["receiver_instructions"] = {}
        for name, count in counts.items():
            results["receiver_instructions"][name] = {"per_frame": count,
                                                      "ratio_to_unchecked": counts[unchecked[name]] / count}
            print(f"  {name:60s} {count:7.1f} instructions/frame, {counts[unchecked[name]] / count:5.2f} of "
                  "unchecked's")
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
