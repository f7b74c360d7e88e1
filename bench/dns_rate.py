#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""DNS queries against plain UDP frames of the same size on one worker core (issue 31,
docs/dns.md), in paired rounds on the in-engine ring pair: the worker sends the client's AAAA
queries on port 0, answers each on port 1 as the authoritative side (in place, from its own TX
queue), and receives and judges each answer back on port 0 (name, ID, question, the AAAA record
expected, the timeout). The same worker with plain 128-byte IPv6 test frames from port 0 to
port 1 is the peer.

Each round searches, UDP then DNS, the highest rate (0.5 s trials, binary search to within 1 %)
at which the trial is valid and every frame (every query's valid answer) arrived. A ring pair
passes frames on only as its other end takes them, so a sender far above that rate fills the
rings and the trial is invalid; the search finds the rate below. Reported: UDP frames/s, DNS
queries/s and their ratio (a query is two frames, one each way, and a validation: 0.5 would
be a query costing what its two frames cost).

    python3 bench/dns_rate.py [--rounds N] [--out bench/results/dns_rate.json]
"""

import argparse
import fcntl
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_rate import LOOPBACK, NULL, cpu_model  # noqa: E402
from xlatperf.config.loading import load_config  # noqa: E402
from xlatperf.engine.client import Engine  # noqa: E402
from xlatperf.measure.request import TrialRequest  # noqa: E402
from xlatperf.traffic.plan import TrafficPlan  # noqa: E402

SECONDS = 0.5
PRECISION = 0.01
COMMON = ['traffic.direction="forward"', 'left.speed="100T"', 'right.speed="100T"', "left.ip_version=6",
          "right.ip_version=6", "traffic.frame_size=128", 'tester.lcores="0,1"']
# Names with a AAAA record of their own: the authoritative side's answer is what the client
# expects (no DNS64 between).
DNS = ["dns.enabled=true", "dns.aaaa_share=1.0", "dns.ports=1000"]


def passes(engine, plan: TrafficPlan, config, rate: int) -> bool:
    frames = int(rate * SECONDS)
    flows = plan.flows(rate)
    flows[0]["frames"] = frames
    delay = {"frame_timeout": config.dns.timeout} if plan.dns else None
    request = TrialRequest.from_config(config, flows, SECONDS, timeout=0.1, delay=delay, dns=plan.dns).to_json()
    reply = engine.trial(request)
    flow = reply["flows"][0]
    return reply["valid"] and flow["sent"] == frames and flow["received"] == frames


def highest_rate(dns: bool) -> int:
    config = load_config(NULL, COMMON + LOOPBACK + (DNS if dns else []))
    with Engine(config) as engine:
        plan = TrafficPlan(config, engine.hello()["ports"], through_dut=False)
        lo, hi = 0, 32_000_000
        while hi - lo > PRECISION * max(lo, 1):
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if passes(engine, plan, config, mid) else (lo, mid)
    return lo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "dns_rate.json"))
    args = parser.parse_args()
    rounds = []
    with open("/run/xlatperf-tests.lock", "a") as lock:  # the CPUs to this benchmark alone
        fcntl.flock(lock, fcntl.LOCK_EX)
        for r in range(args.rounds):
            udp, dns = highest_rate(False), highest_rate(True)
            rounds.append({"udp_fps": udp, "queries_per_s": dns, "ratio": dns / udp})
            print(f"round {r + 1}: UDP {udp / 1e6:.2f} Mfps, DNS {dns / 1e6:.2f} M queries/s "
                  f"({rounds[-1]['ratio']:.2f} of UDP)", flush=True)
    median = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
    results = {"command": " ".join(sys.argv), "cpu": cpu_model(), "rounds": rounds,
               "median": median, "trial_seconds": SECONDS, "precision": PRECISION}
    print(f"median: UDP {median['udp_fps'] / 1e6:.2f} Mfps; DNS {median['queries_per_s'] / 1e6:.2f} M queries/s; "
          f"ratio {median['ratio']:.2f}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
