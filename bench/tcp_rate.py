#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""TCP handshakes against UDP phase-1 frames on one worker core (issue 19, docs/tcp.md), in
paired rounds on the in-engine ring pair: the same worker sends the Initiator's frames,
receives them as the Responder, and, over TCP, answers each SYN with a SYN-ACK, each SYN-ACK
with an ACK and counts each ACK, learning every connection into the Responder's state table.

Each round searches, UDP then TCP, the highest phase-1 rate (RFC 9693's enumeration of distinct
four-tuples, pseudorandom order; 0.5 s trials, binary search to within 1 %) at which the trial
is valid and every frame (over TCP: every handshake) arrived: connection-rate on a lossless
loopback. A ring pair passes frames on only as its other end takes them, so an Initiator far
above that rate fills the rings and the loop stops (the trial is invalid: the tester could not
keep the rate); the search finds the rate below. Reported: UDP phase-1 frames/s, TCP
handshakes/s, and the handshakes' frames (3 each) as a ratio to the UDP frames of the round.

    python3 bench/tcp_rate.py [--rounds N] [--out bench/results/tcp_rate.json]
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
from xlatperf.config.schema import load_config  # noqa: E402
from xlatperf.engine.client import Engine  # noqa: E402
from xlatperf.measure.stateful import StatefulTest  # noqa: E402
from xlatperf.traffic.plan import TrafficPlan  # noqa: E402

SECONDS = 0.5
PRECISION = 0.01
# Every source and destination port: 2^32 four-tuples to enumerate.
PHASE1 = ['traffic.direction="forward"', 'left.speed="100T"', 'right.speed="100T"',
          "stateful.enabled=true", "stateful.connections=100000000", "stateful.order=random",
          'ports.forward_src="random"', "ports.forward_src_min=1", "ports.forward_src_max=65535",
          'ports.forward_dst="random"', "ports.forward_dst_min=1", "ports.forward_dst_max=65535"]


def passes(engine, test: StatefulTest, rate: int) -> bool:
    """Phase 1 of rate x SECONDS connections at `rate`: valid, every flow received all it sent,
    the Initiator sent them all, and the Responder learned every completed one."""
    n = int(rate * SECONDS)
    request = test.phase1_request(n, rate, n).to_json()
    request["timeout"] = 0.1
    reply = engine.trial(request)
    flows = reply["flows"]
    return (reply["valid"] and flows[0]["sent"] == n
            and all(f["received"] == f["sent"] and not f["streams"][0].get("tcp_unexpected") for f in flows)
            and reply["state_table"]["entries"] == n)


def highest_rate(transport: str) -> int:
    """The highest passing phase-1 rate (connections/s), by binary search."""
    config = load_config(NULL, PHASE1 + LOOPBACK + [f"stateful.transport={transport}"])
    with Engine(config) as engine:
        test = StatefulTest(TrafficPlan(config, engine.hello()["ports"], through_dut=False), phase2=False)
        lo, hi = 0, 64_000_000
        while hi - lo > PRECISION * max(lo, 1):
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if passes(engine, test, mid) else (lo, mid)
    return lo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "tcp_rate.json"))
    args = parser.parse_args()
    rounds = []
    with open("/run/xlatperf-tests.lock", "a") as lock:  # the CPUs to this benchmark alone
        fcntl.flock(lock, fcntl.LOCK_EX)
        for r in range(args.rounds):
            udp, tcp = highest_rate("udp"), highest_rate("tcp")
            rounds.append({"udp_fps": udp, "handshakes_per_s": tcp, "tcp_fps": 3 * tcp, "ratio": 3 * tcp / udp})
            print(f"round {r + 1}: UDP phase 1 {udp / 1e6:.2f} Mfps, TCP {tcp / 1e6:.2f} M handshakes/s "
                  f"({3 * tcp / 1e6:.2f} Mfps, {rounds[-1]['ratio']:.2f} of UDP)", flush=True)
    median = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
    results = {"command": " ".join(sys.argv), "cpu": cpu_model(), "rounds": rounds,
               "median": median, "trial_seconds": SECONDS, "precision": PRECISION}
    print(f"median: UDP {median['udp_fps'] / 1e6:.2f} Mfps; TCP {median['handshakes_per_s'] / 1e6:.2f} "
          f"M handshakes/s, {median['tcp_fps'] / 1e6:.2f} Mfps, {median['ratio']:.2f} of UDP")
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
