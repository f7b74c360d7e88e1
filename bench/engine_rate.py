#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tester speed on one worker core: the highest constant rate at which every trial is valid
(the engine sent all frames within duration x (1 + 1e-5)), sending 64-byte IPv4 / 84-byte IPv6
frames to DPDK net_null ports, for fixed frames and for the RFC 4814 / multiple-IP variations;
and the engine's cost per trial beyond the trial's own duration.

    python3 bench/engine_rate.py [--quick] [--out bench/results/engine_rate.json]

The search: binary search on the rate with short trials (valid = pass), then the found rate is
confirmed with three longer trials (if one is invalid, the rate is lowered by 2 % and confirmed
again). One worker lcore sends; the main lcore sleeps.
"""

import argparse
import fcntl
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from xlatperf.config.loading import load_config  # noqa: E402
from xlatperf.engine.client import Engine  # noqa: E402
from xlatperf.traffic.plan import TrafficPlan  # noqa: E402

NULL = str(Path(__file__).resolve().parents[1] / "examples" / "null.toml")


def cpu_model() -> str:
    """lscpu's model name: recorded with every benchmark (machines differ between sessions)."""
    for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


_CPUS_LOCK = None


def rounds_arguments(description: str, out: str, add_options=None) -> tuple[argparse.Namespace, float, float]:
    """The command line of a benchmark in paired rounds (--quick, --rounds, --out, and what
    add_options(parser) adds), and the CPUs to itself: the lock the tests take, held until the
    process ends. Returns the arguments and the search and confirmation trial lengths (s)."""
    global _CPUS_LOCK
    parser = argparse.ArgumentParser(description=description.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short trials (0.5 s search, 2 s confirm)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", default=out)
    if add_options:
        add_options(parser)
    args = parser.parse_args()
    _CPUS_LOCK = open("/run/xlatperf-tests.lock", "a")  # nothing else may use the CPUs meanwhile
    fcntl.flock(_CPUS_LOCK, fcntl.LOCK_EX)
    return args, *((0.5, 2.0) if args.quick else (2.0, 10.0))
# An in-engine ring pair: what port 0 sends, port 1 receives; one worker sends and receives.
LOOPBACK = ["left.port=ring:bench", "right.port=ring:bench", 'left.dut_mac="02:00:00:00:00:02"',
            'right.dut_mac="02:00:00:00:00:01"']
# PDV mode: every received frame's delay into the histogram (as `xlatperf pdv` by default);
# IPDV (optional in RFC 8219) on top of it for comparison.
PDV_REQUEST = {"delay": {"histogram": True}}
PDV_IPDV_REQUEST = {"delay": {"histogram": True, "ipdv": True}}
RANDOM_PORTS = ['ports.forward_src="random"', 'ports.forward_dst="random"']
RANDOM_IPS = ['addresses.left="random"', 'addresses.right="random"']
VARIANTS = {
    "fixed": [],
    "random ports": RANDOM_PORTS,
    "random IPs": RANDOM_IPS,
    "random IPs+ports": RANDOM_IPS + RANDOM_PORTS,
}


def paired_rounds(cases: dict, rounds: int, measure) -> dict[str, list[float]]:
    """Each case's rates (frames/s) over `rounds` paired rounds: every round measures every
    case in turn, `measure(*cases[name])`, so a ratio compares trials seconds apart (the shared
    VM's speed drifts between runs). Holds the tests' lock: the CPUs to this benchmark alone."""
    rates = {name: [] for name in cases}
    with open("/run/xlatperf-tests.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for r in range(rounds):
            for name, args in cases.items():
                rates[name].append(measure(*args))
            print(f"round {r + 1}: " + ", ".join(f"{n} {v[-1] / 1e6:.2f}" for n, v in rates.items()), flush=True)
    return rates


def trial(engine: Engine, plan: TrafficPlan, rate: int, duration: float, extra=None) -> dict:
    return engine.trial({"duration": duration, "timeout": 0.0, "progress_interval": 0,
                         "flows": plan.flows(rate), **(extra or {})})


def sent_everything(reply: dict) -> bool:
    """net_null receives nothing: a trial passes when the tester kept the rate."""
    return reply["valid"]


def lost_nothing(reply: dict) -> bool:
    """Loopback (ring pair): kept the rate and received every frame, with one worker doing both."""
    return reply["valid"] and all(f["received"] == f["sent"] for f in reply["flows"])


def highest_valid_rate(engine, plan, lo, hi, precision, search_s, confirm_s,
                       extra=None, passes=sent_everything) -> tuple[int, list]:
    log = []
    while hi - lo > precision:
        mid = (lo + hi) // 2
        ok = passes(trial(engine, plan, mid, search_s, extra))
        log.append((mid, search_s, ok))
        lo, hi = (mid, hi) if ok else (lo, mid)
    rate = lo
    while rate > 0:
        results = [passes(trial(engine, plan, rate, confirm_s, extra)) for _ in range(3)]
        log += [(rate, confirm_s, ok) for ok in results]
        if all(results):
            return rate, log
        rate = int(rate * 0.98)
    return 0, log


def per_trial_overhead(engine, plan, count=50, duration=0.01) -> dict:
    costs = []
    for _ in range(count):
        start = time.perf_counter()
        trial(engine, plan, 1_000_000, duration)
        costs.append(time.perf_counter() - start - duration)
    costs.sort()
    return {"trials": count, "duration_s": duration, "median_ms": 1e3 * statistics.median(costs),
            "p99_ms": 1e3 * costs[int(0.99 * (count - 1))], "max_ms": 1e3 * costs[-1]}


def enumeration_field(name, low, high, offset=None) -> dict:
    f = {"field": name, "mode": "enumerate", "min": low, "max": high}
    return f if offset is None else {**f, "offset": offset}


ENUMERATIONS = {  # every precomputed case enumerates about 4 million combinations
    "fixed": [],
    "enumerate ports (2000 x 2000)": [enumeration_field("src_port", 1024, 3023),
                                      enumeration_field("dst_port", 1, 2000)],
    "enumerate IPs (2000 x 2000)": [enumeration_field("src_ip", 2, 2001, 2),
                                    enumeration_field("dst_ip", 2, 2001, 2)],
    "enumerate both (45^4)": [enumeration_field("src_port", 1024, 1068), enumeration_field("dst_port", 1, 45),
                              enumeration_field("src_ip", 2, 46, 2), enumeration_field("dst_ip", 2, 46, 2)],
    # 400 million: too many to precompute, the Feistel permutation runs per burst
    "enumerate ports (20000 x 20000)": [enumeration_field("src_port", 1024, 21023),
                                        enumeration_field("dst_port", 1, 20000)],
}


def enumerating(plan: TrafficPlan, vary: list):
    """`plan` whose foreground fields are `vary`, enumerated in pseudorandom order."""
    class EnumeratingPlan:
        max_rate = plan.max_rate

        @staticmethod
        def flows(rate):
            flows = plan.flows(rate)
            if vary:
                flows[0]["foreground"] |= {"vary": vary, "enumerate": "random"}
            return flows
    return EnumeratingPlan


def stateful_rates(results: dict, search_s: float, confirm_s: float, rounds: int) -> None:
    """Phase-1 sending with enumeration vs fixed frames, two ways: the highest valid rate of
    each (searched one after the other), and paired rounds at saturation (each round offers
    the medium's maximum rate for 1 s to every case in turn and takes the rate achieved, so
    every ratio compares trials seconds apart: the shared VM's speed drifts between searches)."""
    config = load_config(NULL, ['traffic.direction="forward"'])
    with Engine(config) as engine:
        plan = TrafficPlan(config, engine.hello()["ports"])
        for name, vary in ENUMERATIONS.items():
            rate, log = highest_valid_rate(engine, enumerating(plan, vary), 1_000_000, plan.max_rate,
                                           250_000, search_s, confirm_s)
            results["rates"][name] = {"mfps": rate / 1e6, "trials": log}
            print(f"{name:32s} {rate / 1e6:7.2f} Mfps (highest valid rate)", flush=True)
        achieved = {name: [] for name in ENUMERATIONS}
        for _ in range(rounds):
            for name, vary in ENUMERATIONS.items():
                reply = trial(engine, enumerating(plan, vary), plan.max_rate, 1.0)
                achieved[name].append(reply["flows"][0]["sent"] / 1e6)
    fixed = results["rates"]["fixed"]["mfps"]
    results["saturation"] = {}
    for name, mfps in achieved.items():
        ratios = [m / f for m, f in zip(mfps, achieved["fixed"])]
        results["saturation"][name] = {"mfps": mfps, "median_mfps": statistics.median(mfps),
                                       "median_ratio": statistics.median(ratios)}
        print(f"{name:32s} valid rate {results['rates'][name]['mfps'] / fixed:5.2f} of fixed; "
              f"saturation {statistics.median(mfps):6.2f} Mfps, {statistics.median(ratios):5.2f} "
              "of fixed (median of paired rounds)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short trials, IPv4 only")
    parser.add_argument("--overhead-only", action="store_true", help="only the per-trial cost")
    parser.add_argument("--stateful", action="store_true",
                        help="phase-1 sending with a pseudorandom enumeration of ~4 million "
                             "four-tuples (ports, addresses, both; precomputed) and of 400 million "
                             "(computed per burst) vs fixed frames")
    parser.add_argument("--pdv", action="store_true",
                        help="loopback (ring pair): plain trials vs PDV mode (every frame timed)")
    parser.add_argument("--out", default="bench/results/engine_rate.json")
    args = parser.parse_args()
    # Nothing else may use the engine's worker lcore meanwhile (tests take the same lock).
    lock = open("/run/xlatperf-tests.lock", "a")
    fcntl.flock(lock, fcntl.LOCK_EX)
    search_s, confirm_s = (0.5, 2.0) if args.quick else (2.0, 10.0)
    results = {"command": " ".join(sys.argv), "search_trial_s": search_s,
               "confirm_trial_s": confirm_s, "rates": {}}
    if args.stateful:
        stateful_rates(results, search_s, confirm_s, rounds=3 if args.quick else 10)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out.replace(".json", "_stateful.json")).write_text(json.dumps(results, indent=2) + "\n")
        return
    if args.pdv:
        for name, extra in (("loopback plain", None), ("loopback PDV", PDV_REQUEST),
                            ("loopback PDV+IPDV", PDV_IPDV_REQUEST)):
            config = load_config(NULL, ['traffic.direction="forward"'] + LOOPBACK)
            with Engine(config) as engine:
                plan = TrafficPlan(config, engine.hello()["ports"])
                rate, log = highest_valid_rate(engine, plan, 1_000_000, plan.max_rate, 250_000,
                                               search_s, confirm_s, extra, lost_nothing)
            results["rates"][name] = {"mfps": rate / 1e6, "trials": log}
            print(f"{name:24s} {rate / 1e6:7.2f} Mfps", flush=True)
        plain, pdv = (results["rates"][k]["mfps"] for k in ("loopback plain", "loopback PDV"))
        print(f"PDV / plain = {pdv / plain:.2f}")
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out.replace(".json", "_pdv.json")).write_text(json.dumps(results, indent=2) + "\n")
        return
    versions = [4] if args.quick or args.overhead_only else [4, 6]
    variants = {"fixed": []} if args.overhead_only else VARIANTS
    for version in versions:
        for name, settings in variants.items():
            base = ['traffic.direction="forward"']
            if version == 6:
                base += ["left.ip_version=6", "right.ip_version=6", "traffic.frame_size=84"]
            config = load_config(NULL, base + settings)
            started = time.perf_counter()
            with Engine(config) as engine:
                hello = engine.hello()
                plan = TrafficPlan(config, hello["ports"])
                if version == 4 and name == "fixed":
                    results["overhead"] = per_trial_overhead(engine, plan)
                    results["startup_s"] = time.perf_counter() - started
                    results["engine"] = {k: hello[k] for k in ("engine", "dpdk", "tsc_hz")}
                if args.overhead_only:
                    continue
                rate, log = highest_valid_rate(engine, plan, 1_000_000, plan.max_rate,
                                               250_000, search_s, confirm_s)
            key = f"IPv{version} {name}"
            results["rates"][key] = {"mfps": rate / 1e6, "trials": log}
            print(f"{key:24s} {rate / 1e6:7.2f} Mfps", flush=True)
    o = results["overhead"]
    if args.overhead_only:
        args.out = args.out.replace(".json", "_overhead.json")
    print(f"per-trial overhead: median {o['median_ms']:.2f} ms, p99 {o['p99_ms']:.2f} ms, "
          f"engine start {results['startup_s']:.2f} s")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
