#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Wall time of MLRsearch against the classic binary search, at the same final trial
duration and width (BENCHMARKS.md, "MLRsearch vs binary search").

    python3 bench/mlrsearch_vs_binary.py [--rate 20000] [--duration 2] [--width 200]
        [--max-rate 100000] [--calibrate] [--repeat 3] [--skip-lab]
        [--out bench/results/mlrsearch_vs_binary.json]

Lab part (root, the engine built): `lab up limit --param rate=RATE`, then, one after the other,
each with `trial.duration = DURATION`, `throughput.error = WIDTH`, `throughput.max_rate =
MAX_RATE` and the lab's pause (0.5 s) and the RFC's 2 s timeout, --repeat rounds of:
  binary         the classic binary search, loss 0 (the RFC 2544 throughput)
  binary-pdr     the classic binary search, loss tolerance 0.5 % (PDR)
  mlr-rfc2544    MLRsearch, preset rfc2544
  mlr-all        MLRsearch, presets rfc2544 + ndr-pdr (RFC 2544 value, NDR and PDR at once)
Wall time = run_procedure's, engine start included. Holds the lab lock of tests/conftest.py:
run it as `flock /run/xlatperf-tests.lock python3 bench/mlrsearch_vs_binary.py` (the script
then sees the inherited lock and does not take it again) or alone (it takes the lock).

Simulation part (no root): the same searches on deterministic simulated DUTs at the RFC's
60 s trials, 5 s pause, 2 s wait after a trial with loss, with the wall time computed from
those (no engine start): what the lab's short trials cannot show. The target's DUTs: a hard
limit with and without a token bucket burst (a queue) of 1 s of 5 % of the limit; then, as a
robustness check, loss that rises gradually above the limit (1 % more per 10 % more load), a
noisy limit (+-0.05 %, half a width at 1 Mfps, per trial) and the same with two rare spikes
(trials 4 and 11 lose 1 % more).
"""

import argparse
import contextlib
import fcntl
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine_rate import cpu_model  # noqa: E402 (bench/, this script's directory)
from xlatperf.engine.protocol import DirectionCounts, TrialResult
from xlatperf.procedures.mlrclassify import Goal  # noqa: E402
from xlatperf.procedures.mlrsearch import mlrsearch  # noqa: E402
from xlatperf.procedures.search import binary_search  # noqa: E402

LOCK = "/run/xlatperf-tests.lock"   # tests/conftest.py: one lab user at a time
SIM_MAX = 14_880_952                # 10GE, 64-byte frames
PDR = 0.005


# --------------------------------------------------------------------------------------------
# Lab
# --------------------------------------------------------------------------------------------

@contextlib.contextmanager
def lab_lock():
    """The lab lock, unless this process inherited an open descriptor of the lock file (it
    runs under `flock LOCK ...`, which holds it): locking it again through a new descriptor
    would wait for ever."""
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/self/fd/{fd}") == LOCK:
                yield
                return
    with open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def lab_runs(args) -> dict:
    from xlatperf import lab
    from xlatperf.config.loading import load_config
    from xlatperf.run.runner import run_procedure

    common = [f"trial.duration={args.duration}", f"throughput.error={args.width}",
              f"throughput.max_rate={args.max_rate}", "trial.timeout=2.0"]
    runs = {
        "binary": [],
        "binary-pdr": [f"throughput.loss_tolerance={PDR}"],
        "mlr-rfc2544": ["throughput.mode=mlrsearch", "throughput.preset=rfc2544"],
        "mlr-all": ["throughput.mode=mlrsearch", "throughput.preset=rfc2544,ndr-pdr"],
    }
    runs = {name: extra for name, extra in runs.items() if name in args.searches}
    results: dict = {name: {"runs": []} for name in runs}
    with lab_lock(), tempfile.TemporaryDirectory() as tmp:
        try:
            config_path = str(Path(tmp) / "limit.toml")
            lab.lab_up("limit", {"rate": str(args.rate)}, config_path)
            if args.calibrate:   # as `xlatperf lab up` does: the default range's top
                from xlatperf.run.calibration import calibrate_lab
                calibrate_lab()
            for round_, (name, extra) in ((r, item) for r in range(args.repeat)
                                          for item in runs.items()):
                config = load_config(config_path, common + extra)
                started = time.monotonic()
                summary = run_procedure("throughput", config,
                                        str(Path(tmp) / f"{name}-{round_}"))
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
                entry["path"] = [[s["rate"], s.get("duration", args.duration),
                                  round(max((d["loss_ratio"] or 0)
                                            for d in s["directions"].values()), 5)]
                                 for s in summary["repetitions"][0]["steps"]]
                results[name]["runs"].append(entry)
                print(f"{name}: {entry}", flush=True)
        finally:
            lab.lab_down()
    for entry in results.values():
        walls = sorted(e["wall_s"] for e in entry["runs"])
        entry.update(wall_s=walls[len(walls) // 2], wall_s_min=walls[0], wall_s_max=walls[-1])
    return results


# --------------------------------------------------------------------------------------------
# Simulation at 60 s
# --------------------------------------------------------------------------------------------

def simulated_dut(limit: int, burst: int = 0, *, gradual: bool = False, noise: float = 0.0,
                  spikes=()):
    """run_trial(rate, duration) of a deterministic DUT: forwards limit x duration + burst
    frames per direction (a token bucket: a hard limit with a queue); gradual: loses instead
    (rate - limit) / (10 x limit) of the frames; noise: the limit of each trial varies by up
    to this fraction (seeded); spikes: numbers of trials that lose 1 % more."""
    rng, count = random.Random(1), [0]

    def run_trial(rate, duration):
        count[0] += 1
        sent = round(rate * duration)
        if gradual:
            received = sent - round(sent * min(1.0, max(0.0, (rate - limit) / (10 * limit))))
        else:
            this = limit * (1 + noise * (2 * rng.random() - 1))
            received = min(sent, round(this * duration) + burst)
        if count[0] in spikes:
            received = max(0, received - sent // 100)
        counts = {n: DirectionCounts(sent=sent, received=received) for n in ("forward", "reverse")}
        return TrialResult(rate=rate, valid=True, directions=counts)
    return run_trial


def wall(trials, pause: float, wait: float) -> float:
    """(duration, lossy) pairs -> seconds: trial + wait after a lossy trial + pause between."""
    trials = list(trials)
    return sum(d + (wait if lossy else 0.0) for d, lossy in trials) + pause * (len(trials) - 1)


def goals_for(final: float, width: int) -> dict:
    """The presets' goals as xlatperf builds them for trial.duration = final, throughput.error
    = width and the default throughput.initial_duration = 1."""
    return {"rfc2544": Goal(0.0, 0.0, final, final, width=width, initial_duration=1.0,
                            name="rfc2544"),
            "ndr": Goal(0.0, 0.5, final, 2 * final, width=width, initial_duration=1.0,
                        name="ndr"),
            "pdr": Goal(PDR, 0.5, final, 2 * final, width=width, initial_duration=1.0,
                        name="pdr")}


def simulate_one(make, final: float, width: int, pause: float, wait: float) -> dict:
    times, results = {}, {}
    for name, tolerance in (("binary", 0.0), ("binary-pdr", PDR)):
        dut = make()
        steps = binary_search(lambda r: dut(r, final), 0, SIM_MAX, width, tolerance).steps
        times[name] = wall(((final, s.loss_ratio > 0) for s in steps), pause, wait)
        results[name] = max((s.rate for s in steps if s.loss_ratio <= tolerance), default=0)
    goals = goals_for(final, width)
    trials = {}
    for name, chosen in (("mlr-rfc2544", ["rfc2544"]), ("mlr-all", list(goals))):
        result = mlrsearch(make(), [goals[g] for g in chosen], 1, SIM_MAX)
        assert all(g.regular for g in result.goals), result.goals
        times[name] = wall(((t.duration, t.loss_ratio > 0) for _, t in result.trials),
                           pause, wait)
        trials[name] = len(result.trials)
        for g in result.goals:
            results[f"{name}:{g.goal.title}"] = g.relevant_lower_bound
    return {**{k: round(v) for k, v in times.items()}, "trials": trials, "results": results}


def simulate(final: float, width: int, pause: float = 5.0, wait: float = 2.0) -> dict:
    rows = {"target": [], "robustness": []}
    for limit in (20_000, 123_457, 1_000_000, 5_555_555):
        for burst in (0, limit // 20):
            rows["target"].append({"dut": f"limit {limit}, burst {burst}", **simulate_one(
                lambda: simulated_dut(limit, burst), final, width, pause, wait)})
    for limit in (123_457, 1_000_000):
        burst = limit // 20
        for label, make in (
                ("gradual loss", lambda: simulated_dut(limit, gradual=True)),
                ("noisy 0.05 %", lambda: simulated_dut(limit, burst, noise=0.0005)),
                ("noisy + 2 spikes", lambda: simulated_dut(limit, burst, noise=0.0005,
                                                           spikes={4, 11}))):
            rows["robustness"].append({"dut": f"{label}, limit {limit}", **simulate_one(
                make, final, width, pause, wait)})
    return rows


def print_table(title: str, rows: list[dict]) -> dict:
    print(f"\n{title}")
    print(f"  {'DUT':34} binary  bin-pdr  mlr-rfc2544  mlr-all  all/binary")
    for r in rows:
        print(f"  {r['dut']:34} {r['binary']:6}  {r['binary-pdr']:7}  {r['mlr-rfc2544']:11}  "
              f"{r['mlr-all']:7}  {r['mlr-all'] / r['binary']:10.2f}")
    total = {k: sum(r[k] for r in rows) for k in ("binary", "binary-pdr", "mlr-rfc2544",
                                                   "mlr-all")}
    ratios = {"mlr-rfc2544/binary": total["mlr-rfc2544"] / total["binary"],
              "mlr-all/binary": total["mlr-all"] / total["binary"],
              "mlr-all/(binary+binary-pdr)":
                  total["mlr-all"] / (total["binary"] + total["binary-pdr"]),
              "worst mlr-all/binary": max(r["mlr-all"] / r["binary"] for r in rows)}
    print("  sums: " + ", ".join(f"{k} = {v:.2f}" for k, v in ratios.items()))
    return {k: round(v, 3) for k, v in ratios.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=int, default=20000)
    parser.add_argument("--duration", type=float, default=2.0)
    parser.add_argument("--width", type=int, default=200)
    parser.add_argument("--max-rate", type=int, default=100000)
    parser.add_argument("--skip-lab", action="store_true")
    parser.add_argument("--searches", default="binary,binary-pdr,mlr-rfc2544,mlr-all",
                        type=lambda text: text.split(","), help="the lab's searches, comma-separated")
    parser.add_argument("--calibrate", action="store_true",
                        help="calibrate the lab's tester ceiling as `xlatperf lab up` does (with "
                             "--max-rate 0: the default range, up to that ceiling)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="lab: rounds of the four searches (medians are reported)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" /
                                             "mlrsearch_vs_binary.json"))
    args = parser.parse_args()
    report: dict = {"settings": vars(args), "cpu": cpu_model()}
    print(f"CPU: {report['cpu']}")
    if not args.skip_lab:
        lab = lab_runs(args)
        report["lab"] = lab
        print(f"\nlab, wall time (s), median [min, max] of {args.repeat} run(s):")
        for name, e in lab.items():
            print(f"  {name:12} {e['wall_s']:6.1f} [{e['wall_s_min']:.1f}, {e['wall_s_max']:.1f}]"
                  f"  trials {[r['trials'] for r in e['runs']]}  "
                  f"throughput {[r['throughput'] for r in e['runs']]}")
        wall = {name: e["wall_s"] for name, e in lab.items()}
        report["lab_ratios"] = {}
        if "binary" in wall:
            b = wall["binary"]
            for name in ("mlr-rfc2544", "mlr-all"):
                if name in wall:
                    report["lab_ratios"][f"{name}/binary"] = round(wall[name] / b, 3)
            if "mlr-all" in wall:
                report["lab_ratios"]["mlr-all/binary per run"] = [
                    round(m["wall_s"] / bb["wall_s"], 3)
                    for m, bb in zip(lab["mlr-all"]["runs"], lab["binary"]["runs"])]
                if "binary-pdr" in wall:
                    report["lab_ratios"]["mlr-all/(binary+binary-pdr)"] = round(
                        wall["mlr-all"] / (b + wall["binary-pdr"]), 3)
        for key, value in report["lab_ratios"].items():
            print(f"  {key:30} = {value}")
        for name in ("mlr-rfc2544", "mlr-all"):
            for r in lab.get(name, {}).get("runs", []):
                print(f"  {name} path (load, duration, loss): {r['path']}")
    rows = simulate(60.0, 1000)
    report["simulated_60s"] = rows
    print("\nsimulated: 60 s final trials, 1 s initial, width 1000 fps, pause 5 s, 2 s wait "
          "after a trial with loss; wall time (s)")
    report["ratios_60s"] = {
        "target": print_table("target DUTs (hard limit, with and without a queue):",
                              rows["target"]),
        "robustness": print_table("robustness DUTs:", rows["robustness"])}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwritten: {out}")
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
