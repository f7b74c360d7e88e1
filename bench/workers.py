#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tester scaling with workers and queues: the highest valid constant rate (every frame handed
to the port within duration x (1 + 1e-5)) of one forward flow of 64-byte IPv4 frames to DPDK
net_null ports, with one worker (one queue pair per port) and with two workers (two queue pairs,
a flow's frames shared out over both TX queues on one schedule), for fixed frames and RFC 4814
random IPs + ports; and the same on an in-engine ring pair, where each worker also receives and
checks every frame (the cost a real tester has per frame sent and received). Each round also
measures what the host's two CPUs compute together relative to one (a busy loop), which bounds
the ratio any two workers can reach on it.

    python3 bench/workers.py [--quick] [--capacity] [--rounds N] [--out bench/results/workers.json]

--capacity: the sending capacity alone: net_null ports, 1 worker (1 queue) against 2 workers,
each offered far more than it can send for 1 s (the rate achieved, as bench/ipv4aas_rate.py
measures it), instead of the highest rate whose every frame left on schedule. On this VM the
latter measures how steadily the second worker, which shares CPU 0 with the main lcore, the
front end and the kernel, keeps a schedule more than what it can send.

On a 2-CPU host the second worker shares CPU 0 with the main lcore, which sleeps through a
trial (tester.lcores = "0@0,1@1,2@0"). Cases alternate round by round, so a drift of the
machine's speed hits them alike; the ratio 2 workers / 1 worker is taken per round.
"""

import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_rate import (LOOPBACK, NULL, RANDOM_IPS, RANDOM_PORTS, cpu_model,  # noqa: E402
                         highest_valid_rate, lost_nothing, rounds_arguments)
from xlatperf.config.loading import load_config  # noqa: E402
from xlatperf.engine.client import Engine  # noqa: E402
from xlatperf.traffic.plan import TrafficPlan  # noqa: E402

SETUPS = {  # name: (tester.lcores, tester.queues)
    "1 worker, 1 queue": ("0,1", 1),
    "1 worker, 2 queues": ("0,1", 2),
    "2 workers, 2 queues": ("0@0,1@1,2@0", 2),
}
TRAFFIC = {"fixed": [], "random IPs+ports": RANDOM_IPS + RANDOM_PORTS}
PORTS = {"net_null (send)": [], "ring pair (send + receive)": LOOPBACK}


SPIN = """
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
end, n, x = time.perf_counter() + float(sys.argv[2]), 0, 1
while time.perf_counter() < end:
    for _ in range(10000):
        x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
    n += 1
print(n)
"""


def host_parallelism(seconds: float = 3.0) -> float:
    """What two CPUs of this host give together for plain computation, relative to one: a busy
    loop on CPU 1 alone, then on CPUs 0 and 1 at once. On a virtual machine two vCPUs may be
    one physical core's hyperthreads or share it with other guests; this bounds what two
    workers can reach, whatever the engine does."""
    def spin(cpus):
        procs = [subprocess.Popen([sys.executable, "-c", SPIN, str(cpu), str(seconds)], stdout=subprocess.PIPE,
                                  text=True) for cpu in cpus]
        return [int(p.communicate()[0]) for p in procs]
    one = spin([1])[0]
    return sum(spin([0, 1])) / one


def capacity(traffic, lcores, queues) -> int:
    """Frames per second sent when offered far more than the workers can send (1 s)."""
    config = load_config(NULL, ['traffic.direction="forward"', 'left.speed="100T"', 'right.speed="100T"',
                                f'tester.lcores="{lcores}"', f"tester.queues={queues}"] + traffic)
    with Engine(config) as engine:
        plan = TrafficPlan(config, engine.hello()["ports"])
        reply = engine.trial({"duration": 1.0, "timeout": 0.0, "progress_interval": 0,
                              "flows": plan.flows(min(500_000_000, plan.max_rate))})
    flow = reply["flows"][0]
    return round(flow["sent"] / flow["send_time"])


def measure(ports, traffic, lcores, queues, search_s, confirm_s) -> int:
    settings = ['traffic.direction="forward"', f'tester.lcores="{lcores}"', f"tester.queues={queues}"]
    config = load_config(NULL, settings + ports + traffic)
    passes = lost_nothing if ports else (lambda reply: reply["valid"])
    with Engine(config) as engine:
        plan = TrafficPlan(config, engine.hello()["ports"])
        rate, _ = highest_valid_rate(engine, plan, 1_000_000, plan.max_rate, 250_000, search_s, confirm_s,
                                     passes=passes)
    return rate


def main() -> None:
    global PORTS, SETUPS
    args, search_s, confirm_s = rounds_arguments(__doc__, "bench/results/workers.json", lambda parser: parser.add_argument(
        "--capacity", action="store_true", help="sending capacity: net_null, offered far more than sent"))
    if args.capacity:
        PORTS = {name: ports for name, ports in PORTS.items() if not ports}
        SETUPS = {name: setup for name, setup in SETUPS.items() if name != "1 worker, 2 queues"}
    results = {"command": " ".join(sys.argv), "cpu": cpu_model(), "rates_mfps": {}}
    for round_ in range(args.rounds):
        parallelism = host_parallelism()
        results.setdefault("host_parallelism", []).append(parallelism)
        print(f"round {round_ + 1}: two CPUs compute {parallelism:.2f}x what one does (busy loop)", flush=True)
        for port_name, ports in PORTS.items():
            for traffic_name, traffic in TRAFFIC.items():
                for setup, (lcores, queues) in SETUPS.items():
                    rate = (capacity(traffic, lcores, queues) if args.capacity else
                            measure(ports, traffic, lcores, queues, search_s, confirm_s))
                    key = f"{port_name} | {traffic_name} | {setup}"
                    results["rates_mfps"].setdefault(key, []).append(rate / 1e6)
                    print(f"round {round_ + 1}: {key:70s} {rate / 1e6:7.2f} Mfps", flush=True)
    print(f"\nCPU: {results['cpu']}; two CPUs compute "
          f"{statistics.median(results['host_parallelism']):.2f}x one (median of the rounds)")
    summary = {}
    for port_name in PORTS:
        for traffic_name in TRAFFIC:
            row = {setup: results["rates_mfps"][f"{port_name} | {traffic_name} | {setup}"] for setup in SETUPS}
            ratios = [two / one for two, one in zip(row["2 workers, 2 queues"], row["1 worker, 1 queue"])]
            summary[f"{port_name} | {traffic_name}"] = {
                **{setup: statistics.median(v) for setup, v in row.items()},
                "2 workers / 1 worker": statistics.median(ratios)}
            print(f"{port_name:28s} {traffic_name:18s} " +
                  "  ".join(f"{setup}: {statistics.median(v):6.2f}" for setup, v in row.items()) +
                  f"  ratio {statistics.median(ratios):.2f}")
    results["summary"] = summary
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
