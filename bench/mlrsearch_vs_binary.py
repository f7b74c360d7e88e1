#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Wall time of MLRsearch against the classic binary search, at the same final trial
duration and width (BENCHMARKS.md, "MLRsearch vs binary search").

    python3 bench/mlrsearch_vs_binary.py [--rate 20000] [--duration 2] [--width 200]
        [--max-rate 100000] [--skip-lab] [--out bench/results/mlrsearch_vs_binary.json]

Lab part (root, the engine built): `lab up limit --param rate=RATE`, then, one after the other,
each with `trial.duration = DURATION`, `throughput.error = WIDTH`, `throughput.max_rate =
MAX_RATE` and the lab's pause (0.5 s) and the RFC's 2 s timeout:
  binary         the classic binary search, loss 0 (the RFC 2544 throughput)
  binary-pdr     the classic binary search, loss tolerance 0.5 % (PDR)
  mlr-rfc2544    MLRsearch, preset rfc2544
  mlr-all        MLRsearch, presets rfc2544 + ndr-pdr (RFC 2544 value, NDR and PDR at once)
Wall time = run_procedure's, engine start included. Holds the lab lock of tests/conftest.py.

Simulation part (no root): the same searches on deterministic simulated DUTs (hard limit with
a token bucket burst) at the RFC's 60 s trials, 5 s pause, 2 s wait after a trial with loss,
with the wall time computed from those (no engine start): what the lab's short trials cannot
show.
"""

import argparse
import contextlib
import fcntl
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from xlatperf.mlrsearch import Goal, mlrsearch  # noqa: E402
from xlatperf.procedures import DirectionCounts, TrialResult, binary_search  # noqa: E402

LOCK = "/run/xlatperf-tests.lock"   # tests/conftest.py: one lab user at a time
SIM_MAX = 14_880_952                # 10GE, 64-byte frames
PDR = 0.005


# --------------------------------------------------------------------------------------------
# Lab
# --------------------------------------------------------------------------------------------

def lab_runs(args) -> dict:
    from xlatperf import lab
    from xlatperf.config import load_config
    from xlatperf.runner import run_procedure

    common = [f"trial.duration={args.duration}", f"throughput.error={args.width}",
              f"throughput.max_rate={args.max_rate}", "trial.timeout=2.0"]
    runs = {
        "binary": [],
        "binary-pdr": [f"throughput.loss_tolerance={PDR}"],
        "mlr-rfc2544": ["throughput.mode=mlrsearch", "throughput.preset=rfc2544"],
        "mlr-all": ["throughput.mode=mlrsearch", "throughput.preset=rfc2544,ndr-pdr"],
    }
    results = {}
    with open(LOCK, "a") as lock, tempfile.TemporaryDirectory() as tmp:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            config_path = str(Path(tmp) / "limit.toml")
            lab.lab_up("limit", {"rate": str(args.rate)}, config_path)
            for name, extra in runs.items():
                config = load_config(config_path, common + extra)
                started = time.monotonic()
                summary = run_procedure("throughput", config, str(Path(tmp) / name))
                wall = time.monotonic() - started
                entry = {"wall_s": round(wall, 1),
                         "trials": len(summary["repetitions"][0]["steps"]),
                         "trial_s": round(sum(s.get("duration", args.duration)
                                              for s in summary["repetitions"][0]["steps"]), 1),
                         "throughput": summary["median"],
                         "tester_limited": summary["tester_limited"]}
                if "goals" in summary:
                    entry["goals"] = {g["name"]: {"lower": g["median"],
                                                  "upper": g["relevant_upper_bound"]["median"],
                                                  "regular": g["regular"]}
                                      for g in summary["goals"]}
                results[name] = entry
                print(f"{name}: {entry}", flush=True)
        finally:
            lab.lab_down()
            fcntl.flock(lock, fcntl.LOCK_UN)
    return results


# --------------------------------------------------------------------------------------------
# Simulation at 60 s
# --------------------------------------------------------------------------------------------

def token_bucket(limit: int, burst: int):
    def run_trial(rate, duration):
        sent = round(rate * duration)
        received = min(sent, round(limit * duration) + burst)
        counts = {n: DirectionCounts(sent=sent, received=received) for n in ("forward", "reverse")}
        return TrialResult(rate=rate, valid=True, directions=counts)
    return run_trial


def wall(trials, pause: float, wait: float) -> float:
    """(duration, lossy) pairs -> seconds: trial + wait after a lossy trial + pause between."""
    return sum(d + (wait if lossy else 0.0) for d, lossy in trials) + pause * (len(trials) - 1)


def simulate(final: float, width: int, pause: float = 5.0, wait: float = 2.0) -> list[dict]:
    rows = []
    for limit in (20_000, 123_457, 1_000_000, 5_555_555):
        for burst in (0, limit // 20):
            dut = token_bucket(limit, burst)
            times = {}
            for name, tolerance in (("binary", 0.0), ("binary-pdr", PDR)):
                steps = binary_search(lambda r: dut(r, final), 0, SIM_MAX, width, tolerance).steps
                times[name] = wall([(final, s.loss_ratio > 0) for s in steps], pause, wait)
            goals = {"rfc2544": Goal(0.0, 0.0, final, final, width=width, initial_duration=1.0,
                                     name="rfc2544"),
                     "ndr": Goal(0.0, 0.5, final, 2 * final, width=width, initial_duration=1.0,
                                 name="ndr"),
                     "pdr": Goal(PDR, 0.5, final, 2 * final, width=width, initial_duration=1.0,
                                 name="pdr")}
            for name, chosen in (("mlr-rfc2544", ["rfc2544"]), ("mlr-all", list(goals))):
                result = mlrsearch(dut, [goals[g] for g in chosen], 1, SIM_MAX)
                assert all(g.regular for g in result.goals)
                times[name] = wall([(t.duration, t.loss_ratio > 0) for _, t in result.trials],
                                   pause, wait)
            rows.append({"limit": limit, "burst": burst,
                         **{k: round(v) for k, v in times.items()}})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=int, default=20000)
    parser.add_argument("--duration", type=float, default=2.0)
    parser.add_argument("--width", type=int, default=200)
    parser.add_argument("--max-rate", type=int, default=100000)
    parser.add_argument("--skip-lab", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" /
                                             "mlrsearch_vs_binary.json"))
    args = parser.parse_args()
    report: dict = {"settings": vars(args)}
    if not args.skip_lab:
        lab = lab_runs(args)
        report["lab"] = lab
        b, p = lab["binary"]["wall_s"], lab["binary-pdr"]["wall_s"]
        print("\nlab, wall time (s):")
        for name, e in lab.items():
            print(f"  {name:12} {e['wall_s']:7.1f}  trials {e['trials']:3}  "
                  f"throughput {e['throughput']}")
        print(f"  mlr-rfc2544 / binary            = {lab['mlr-rfc2544']['wall_s'] / b:.2f}")
        print(f"  mlr-all / binary                = {lab['mlr-all']['wall_s'] / b:.2f}")
        print(f"  mlr-all / (binary + binary-pdr) = {lab['mlr-all']['wall_s'] / (b + p):.2f}")
    rows = simulate(60.0, 1000)
    report["simulated_60s"] = rows
    print("\nsimulated, 60 s final trials, width 1000 fps, pause 5 s, wait 2 s after loss (s):")
    print("  limit      burst    binary  binary-pdr  mlr-rfc2544  mlr-all")
    for r in rows:
        print(f"  {r['limit']:<10} {r['burst']:<8} {r['binary']:6}  {r['binary-pdr']:10}  "
              f"{r['mlr-rfc2544']:11}  {r['mlr-all']:7}")
    total = {k: sum(r[k] for r in rows) for k in ("binary", "binary-pdr", "mlr-rfc2544",
                                                   "mlr-all")}
    print(f"  sums: mlr-rfc2544 / binary = {total['mlr-rfc2544'] / total['binary']:.2f}, "
          f"mlr-all / binary = {total['mlr-all'] / total['binary']:.2f}, mlr-all / (binary + "
          f"binary-pdr) = {total['mlr-all'] / (total['binary'] + total['binary-pdr']):.2f}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwritten: {out}")
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
