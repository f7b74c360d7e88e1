#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The lab tester's ceiling before and after placing the DUT on its own CPU (BENCHMARKS.md,
"Lab: tester ceiling and DUT placement (issue 12)").

    python3 bench/lab_ceiling.py [--ports af_packet,af_xdp] [--out bench/results/lab_ceiling.json]

For each port type (root, the engine built; holds the lab lock of tests/conftest.py), with
`lab up router4` (tester.lcores "0,1": worker on CPU 1):

* pace: one 3 s trial at 2,000,000 frames/s per direction, both directions; it is cut off at
  the tester's pace (frames sent / duration), through router4 and through the calibration
  wire, with the DUT CPU idle and kept busy (SCHED_IDLE spinners, as the calibration does);
* ceiling: the calibration selftest (1 s trials, binary search to 1,000 frames/s) through the
  wire, as `xlatperf lab up` runs it, and once more with the DUT CPU kept busy: the highest
  rate sent and received without loss;
* router4: an RFC 2544 throughput search through the router (2 s trials, to 2,000 frames/s,
  no cap) -- what the DUT forwards, or the tester's limit.

"before" has RPS off on the DUT's veth ends and the wire ends (the kernel's work for the DUT
runs in the tester's send calls on CPU 1, as before issue 12); "after" is the lab as built.
"""

import argparse
import contextlib
import fcntl
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from engine_rate import cpu_model  # noqa: E402

LOCK = "/run/xlatperf-tests.lock"   # tests/conftest.py: one lab user at a time


@contextlib.contextmanager
def busy(cpus):
    """One idle-class (SCHED_IDLE) spinning process on each of `cpus` while the block runs:
    the DUT's CPU kept busy without taking time from its softirq work."""
    def spin(cpu):
        os.sched_setaffinity(0, {cpu})
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    spinners = []
    try:
        for cpu in cpus:
            spinners.append(subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                             preexec_fn=lambda cpu=cpu: spin(cpu)))
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ports", default="af_packet,af_xdp")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "lab_ceiling.json"))
    args = parser.parse_args()

    from xlatperf import lab
    from xlatperf.config import load_config
    from xlatperf.lab.placement import steer_receive
    from xlatperf.run import run_procedure

    work = Path(tempfile.mkdtemp(prefix="lab_ceiling."))

    def pace(config_path: str, name: str) -> int:
        config = load_config(config_path, ["trial.pause=0", "trial.duration=3"])
        run_procedure("trial", config, work / name, rate=2_000_000)
        records = [json.loads(line) for line in (work / name / "trials.jsonl").open()]
        (measured,) = [r for r in records if r.get("phase") is None]
        return min(d["sent"] for d in measured["directions"].values()) // 3

    def selftest(name: str) -> int:
        config = load_config(lab.CALIBRATION_CONFIG)
        return int(run_procedure("selftest", config, work / name)["median"])

    def router(config_path: str, name: str) -> dict:
        config = load_config(config_path, ["trial.pause=0.2", "trial.duration=2",
                                           "throughput.error=2000", "tester.ceiling=0"])
        s = run_procedure("throughput", config, work / name)
        return {"throughput": s["median"], "tester_limited": s["tester_limited"],
                "tester_ceiling_in_run": s["tester_ceiling"]}

    results = {"cpu": cpu_model(), "kernel": platform.release(), "runs": {}}
    with open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            for ports in args.ports.split(","):
                config = str(work / f"router4-{ports}.toml")
                lab.lab_up("router4", {"ports": ports}, config)
                steered = [(lab.DUT_NS, lab.DUT_PORTS), (lab.TESTER_NS, ("xlp-cwl", "xlp-cwr"))]
                for state in ("before", "after"):
                    for ns, devices in steered:
                        steer_receive(ns, devices, set() if state == "before" else {0})
                    key = f"{ports} {state}"
                    row = {"pace_router4": pace(config, f"{key}-r4".replace(" ", "-")),
                           "pace_wire": pace(lab.CALIBRATION_CONFIG, f"{key}-w".replace(" ", "-"))}
                    with busy([0]):
                        row["pace_wire_busy"] = pace(lab.CALIBRATION_CONFIG,
                                                     f"{key}-wb".replace(" ", "-"))
                    row["ceiling"] = selftest(f"{key}-self".replace(" ", "-"))
                    with busy([0]):
                        row["ceiling_busy"] = selftest(f"{key}-selfb".replace(" ", "-"))
                    row["router4"] = router(config, f"{key}-tp".replace(" ", "-"))
                    results["runs"][key] = row
                    print(key, json.dumps(row), flush=True)
        finally:
            lab.lab_down()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
