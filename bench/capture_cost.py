#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What a capture (capture.enabled, docs/config.md "Capture") costs the tester: the highest
rate at which one worker sends and receives every frame of a forward flow of 64-byte IPv4
frames on the in-engine ring pair (the worker also receives and checks each frame, where the
capture's sampling runs), without a capture and with the largest sample (4096 frames per port,
every frame) and the default one (100 frames). Cases alternate round by round, so a drift of
this shared machine's speed hits them alike; the ratio with / without is taken per round.

    python3 bench/capture_cost.py [--quick] [--rounds N] [--out bench/results/capture_cost.json]
"""

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_rate import (LOOPBACK, NULL, RANDOM_IPS, RANDOM_PORTS, cpu_model,  # noqa: E402
                         highest_valid_rate, lost_nothing, rounds_arguments)
from xlatperf.config.loading import load_config  # noqa: E402
from xlatperf.engine.client import Engine  # noqa: E402
from xlatperf.traffic.plan import TrafficPlan  # noqa: E402

CAPTURES = {  # name: the trial request's capture object (docs/protocol.md "Capture"), or None
    "no capture": None,
    "capture 100 frames": {"frames": 100, "stride": 1, "snaplen": 65535, "foreign": False},
    "capture 4096 frames": {"frames": 4096, "stride": 1, "snaplen": 65535, "foreign": False},
}
TRAFFIC = {"fixed": [], "random IPs+ports": RANDOM_IPS + RANDOM_PORTS}


def measure(traffic, capture, search_s, confirm_s) -> int:
    settings = ['traffic.direction="forward"', 'tester.lcores="0,1"']
    config = load_config(NULL, settings + LOOPBACK + traffic)
    with Engine(config) as engine:
        plan = TrafficPlan(config, engine.hello()["ports"])
        rate, _ = highest_valid_rate(engine, plan, 1_000_000, plan.max_rate, 250_000, search_s,
                                     confirm_s, extra={"capture": capture} if capture else None,
                                     passes=lost_nothing)
    return rate


def main() -> None:
    args, search_s, confirm_s = rounds_arguments(__doc__, "bench/results/capture_cost.json")
    results = {"command": " ".join(sys.argv), "cpu": cpu_model(), "rates_mfps": {}}
    for round_ in range(args.rounds):
        for traffic_name, traffic in TRAFFIC.items():
            for capture_name, capture in CAPTURES.items():
                rate = measure(traffic, capture, search_s, confirm_s)
                key = f"{traffic_name} | {capture_name}"
                results["rates_mfps"].setdefault(key, []).append(rate / 1e6)
                print(f"round {round_ + 1}: {key:40s} {rate / 1e6:7.2f} Mfps", flush=True)
    summary = {}
    for traffic_name in TRAFFIC:
        without = results["rates_mfps"][f"{traffic_name} | no capture"]
        row = {}
        for capture_name in CAPTURES:
            rates = results["rates_mfps"][f"{traffic_name} | {capture_name}"]
            row[capture_name] = statistics.median(rates)
            row[f"{capture_name} / none"] = statistics.median(r / w for r, w in zip(rates, without))
        summary[traffic_name] = row
        print(f"{traffic_name:18s} " + "  ".join(f"{k}: {v:.2f}" for k, v in row.items()))
    results["summary"] = summary
    print(f"CPU: {results['cpu']}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
