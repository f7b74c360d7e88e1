#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The tester's sending cost per frame size, with jumbo frames: the rate one worker achieves
when offered far more than it can send (1 s trials of one forward flow of fixed IPv4 frames),
on DPDK net_null ports (sending only) and on an in-engine ring pair (the same worker sends,
receives and checks every frame). Frames up to 2048 bytes are copied whole into one mbuf
segment; longer ones (from 2053 bytes: 2049 without the FCS) are a 192-byte head chained to the stream's shared tail
segment (engine/src/core/frame.hpp, FrameTemplate::tail). The single-segment sizes give the copy's
cost per byte, from which the cost of copying a whole 9000-byte frame (the alternative: a pool
of 9 KB mbufs) is estimated.

    python3 bench/frame_sizes.py [--rounds N] [--out bench/results/frame_sizes.json]

Sizes alternate within each round, so a drift of the machine's speed hits them alike.
"""

import argparse
import fcntl
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_rate import LOOPBACK, NULL, trial  # noqa: E402
from engine_rate import cpu_model  # noqa: E402
from xlatperf.config.loading import load_config  # noqa: E402
from xlatperf.engine.client import Engine  # noqa: E402
from xlatperf.traffic.plan import TrafficPlan  # noqa: E402

SIZES = [64, 1024, 1518, 2048, 2053, 4096, 9000, 9216]
PORTS = {"net_null (send)": [], "ring pair (send + receive)": LOOPBACK}
OFFERED = 500_000_000  # far above what one worker sends at any size


def achieved(ports: list[str], size: int) -> float:
    """Frames per second one worker sent (and, on the ring pair, received) in a 1 s trial."""
    config = load_config(NULL, ['traffic.direction="forward"', f"traffic.frame_size={size}",
                                'left.speed="100T"', 'right.speed="100T"'] + ports)
    with Engine(config) as engine:
        plan = TrafficPlan(config, engine.hello()["ports"])
        reply = trial(engine, plan, OFFERED, 1.0)
    flow = reply["flows"][0]
    if ports and flow["received"] != flow["sent"]:
        raise AssertionError(f"{size} bytes: received {flow['received']} of {flow['sent']}")
    return flow["sent"] / flow["send_time"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "frame_sizes.json"))
    args = parser.parse_args()
    # The lab lock: nobody else's benchmark or lab test shares the two CPUs meanwhile.
    with open("/run/xlatperf-tests.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        rates = {port: {size: [] for size in SIZES} for port in PORTS}
        for _ in range(args.rounds):
            for port, settings in PORTS.items():
                for size in SIZES:
                    rates[port][size].append(achieved(settings, size))
    results = {"cpu": cpu_model(), "rounds": args.rounds, "offered_fps": OFFERED, "mfps": {}}
    for port in PORTS:
        median = {size: statistics.median(r) for size, r in rates[port].items()}
        ns = {size: 1e9 / m for size, m in median.items()}
        # Single-segment frames: the copy's cost per byte, from 64 to 2048 bytes.
        per_byte = (ns[2048] - ns[64]) / (2048 - 64)
        copy_9000 = ns[64] + per_byte * (9000 - 64)
        results["mfps"][port] = {str(size): m / 1e6 for size, m in median.items()}
        results.setdefault("ns_per_frame", {})[port] = {str(size): v for size, v in ns.items()}
        results.setdefault("copy_estimate", {})[port] = {
            "ns_per_byte": per_byte, "whole_copy_9000_ns": copy_9000, "shared_tail_9000_ns": ns[9000]}
        print(f"{port}:")
        for size in SIZES:
            print(f"  {size:5d} bytes {median[size] / 1e6:7.3f} Mfps  {ns[size]:7.1f} ns/frame", flush=True)
        print(f"  copying a whole 9000-byte frame: ~{copy_9000:.0f} ns/frame ({per_byte:.3f} ns/byte "
              f"from 64..2048), the shared tail: {ns[9000]:.0f} ns/frame")
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
