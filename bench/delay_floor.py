#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The tester's own delay floor (loopback lab) next to the kernel router and userspace TAYGA
(BENCHMARKS.md, "Delay floor (loopback)").

    python3 bench/delay_floor.py [--rate 5000] [--duration 10] [--delay 2] [--timestamps 500]
        [--repeat 5] [--labs loopback,router4,siit] [--out bench/results/delay_floor.json]

For each lab, one after the other (root, the engine built; holds the lab lock of
tests/conftest.py): `lab up KIND`, then the `latency` procedure (TL, WCL of the tagged frames)
and the `pdv` procedure with IPDV, both directions at --rate frames/s per direction, 64-byte
frames (84/64 through SIIT), trial.pause 0.5 s, trial.timeout 2 s. Prints and stores per lab
and direction the medians over the repetitions (µs) and their min..max.
"""

import argparse
import fcntl
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LOCK = "/run/xlatperf-tests.lock"   # tests/conftest.py: one lab user at a time


def fmt(value) -> str:
    return "inf" if value is None else f"{value:g}"


def us(value_ms):
    return None if value_ms is None else round(value_ms * 1000, 3)


def spread(stats: dict) -> dict:
    return {"median_us": us(stats["median"]), "min_us": us(stats["min"]),
            "max_us": us(stats["max"]), "n": stats["n"]}


def run_lab(kind: str, args, tmp: Path) -> dict:
    from xlatperf import lab
    from xlatperf.config.loading import load_config
    from xlatperf.run.runner import run_procedure

    config_path = str(tmp / f"{kind}.toml")
    lab.lab_up(kind, {}, config_path)
    try:
        common = [f"trial.duration={args.duration}", "trial.timeout=2.0",
                  f"output.repeat={args.repeat}"]
        latency = run_procedure("latency", load_config(config_path, common + [
            f"latency.delay={args.delay}", f"latency.timestamps={args.timestamps}"]),
            str(tmp / f"{kind}-latency"), rate=args.rate)
        pdv = run_procedure("pdv", load_config(config_path, common + ["pdv.ipdv=true"]),
                            str(tmp / f"{kind}-pdv"), rate=args.rate)
    finally:
        lab.lab_down()
    result = {"timestamp_method": latency["settings"]["timestamp_method"], "directions": {}}
    for name, info in latency["directions"].items():
        p = pdv["directions"][name]
        result["directions"][name] = {
            "tl": spread(info["typical_latency"]), "wcl": spread(info["worst_case_latency"]),
            "lost_tagged": info["lost_tagged"], "pdv": spread(p["pdv"]),
            "ipdv_min": spread(p["ipdv"]["min"]), "ipdv_median": spread(p["ipdv"]["median"]),
            "ipdv_max": spread(p["ipdv"]["max"])}
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=int, default=5000)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--delay", type=float, default=2.0)
    parser.add_argument("--timestamps", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--labs", default="loopback,router4,siit")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "delay_floor.json"))
    args = parser.parse_args()
    results = {"settings": {k: getattr(args, k) for k in ("rate", "duration", "delay",
                                                          "timestamps", "repeat")},
               "labs": {}}
    with open(LOCK, "a") as lock, tempfile.TemporaryDirectory() as tmp:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for kind in args.labs.split(","):
            results["labs"][kind] = run_lab(kind, args, Path(tmp))
    print(f"{'lab':9} {'direction':9} {'TL µs':>9} {'WCL µs':>9} {'PDV µs':>9} "
          f"{'IPDV min/median/max µs':>26}")
    for kind, lab_result in results["labs"].items():
        for name, d in lab_result["directions"].items():
            ipdv = "/".join(fmt(d[k]["median_us"]) for k in ("ipdv_min", "ipdv_median",
                                                              "ipdv_max"))
            print(f"{kind:9} {name:9} {fmt(d['tl']['median_us']):>9} "
                  f"{fmt(d['wcl']['median_us']):>9} {fmt(d['pdv']['median_us']):>9} {ipdv:>26}")
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
