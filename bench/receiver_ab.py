#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Two or more engine builds' receivers against each other on header_checks.py's cases (64-byte
IPv4, 84-byte IPv6, MAP-E from a million CEs; each with every header checked and unchecked),
the receiver alone (engine/bench/rx_cost.cpp: the trial's frames recorded, then handed to its
receiver in bursts as from a NIC's RX queue), in paired rounds: each round runs every build's
xlatperf-rx-cost on every case in turn, so a change's effect is read against the build before
it seconds apart, not across this shared VM's drift between runs (every other round in reverse
order, so that no build gains by its place in the round). With --instructions, also the
builds' instructions per frame (callgrind: exact).

    python3 bench/receiver_ab.py [--rounds 15] [--instructions] LABEL=ENGINE_PATH LABEL=ENGINE_PATH ...

ENGINE_PATH: an engine build's xlatperf-engine; its xlatperf-rx-cost beside it is run. Prints,
per build, each case's median ns per frame and its median ratio to the first build's.
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_rate import cpu_model  # noqa: E402
from header_checks import receiver_instructions, run_rx_cost, rx_cost_cases  # noqa: E402


def build_arg(text: str) -> tuple[str, Path]:
    label, sep, path = text.partition("=")
    rx_cost = Path(path).parent / "xlatperf-rx-cost"
    if not sep or not label or not rx_cost.is_file():
        raise argparse.ArgumentTypeError(f"{text!r}: expected LABEL=PATH of an engine with xlatperf-rx-cost beside it")
    return label, rx_cost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("builds", nargs="+", type=build_arg, help="LABEL=PATH of an engine build")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--out", default=None, help="where to write the results as JSON")
    args = parser.parse_args()
    cases = rx_cost_cases()
    ns = {label: {name: [] for name in cases} for label, _ in args.builds}
    for r in range(args.rounds):
        # Every other round in reverse order: a build's place in the round (the first runs on
        # caches and clocks the others left) cancels out.
        for label, rx_cost in args.builds if r % 2 == 0 else reversed(args.builds):
            for name, c in json.loads(run_rx_cost(cases, 3, rx_cost=rx_cost))["cases"].items():
                ns[label][name].append(statistics.median(c["ns_per_frame"]))
        print(f"round {r + 1} of {args.rounds}", file=sys.stderr, flush=True)
    first = args.builds[0][0]
    results = {"command": " ".join(sys.argv), "cpu": cpu_model(), "rounds": args.rounds, "ns_per_frame": ns}
    print(f"The receiver alone, median ns per frame over {args.rounds} paired rounds ({results['cpu']}):")
    for label, _ in args.builds:
        for name in cases:
            ratio = statistics.median(a / b for a, b in zip(ns[label][name], ns[first][name]))
            print(f"  {label:10} {name:52} {statistics.median(ns[label][name]):6.1f} ns, {ratio:.3f} of {first}'s")
    if args.instructions:
        results["instructions"] = {label: receiver_instructions(rx_cost=rx_cost) for label, rx_cost in args.builds}
        print("Instructions per frame (RxTask::classify inclusive, callgrind):")
        for name in cases:
            print(f"  {name:52} " + ", ".join(f"{label} {results['instructions'][label][name]:.0f}"
                                              for label, _ in args.builds))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
