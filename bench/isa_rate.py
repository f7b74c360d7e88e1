#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Sending speed per kernel path and build, against DPDK testpmd txonly: paired saturation
rounds on one worker core to a DPDK net_null port.

    python3 bench/isa_rate.py [--rounds 5] [--seconds 1]
        [--engine LABEL=PATH[:ISA]]... [--testpmd LABEL=PATH]... [--out bench/results/isa_rate.json]

Each round runs, one after the other: testpmd in txonly mode (one forwarding core, one net_null
port, 60-byte frames + FCS = 64 bytes, bursts of 32: its Tx-pps), then every engine (one
forward flow offered at the medium's maximum for `--seconds`, for fixed frames and the RFC 4814
/ multiple-IP variations, IPv4 64-byte and IPv6 84-byte frames; the rate is frames sent per
second). Ratios are taken within a round (a case / fixed frames of the same engine, fixed
frames / testpmd), then the median over rounds: this shared VM's speed drifts between
minutes, not within seconds. ISA: the field kernels the engine uses (XLATPERF_ISA: scalar,
sse, avx2, avx512; default: the best this CPU runs). Without --engine: the repository's build. Without --testpmd:
Debian's `dpdk-testpmd` (generic x86-64 code); a fair peer is testpmd built from DPDK's source
with the engine's own flags (-O3 -march=native), e.g. `--testpmd native=PATH`, and several
testpmd builds run in each round like the engines.
"""

import argparse
import fcntl
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_rate import NULL, VARIANTS, trial  # noqa: E402
from xlatperf.config.loading import load_config  # noqa: E402
from xlatperf.engine.client import Engine, find_engine  # noqa: E402
from xlatperf.traffic.plan import TrafficPlan  # noqa: E402

TESTPMD = "debian=dpdk-testpmd"  # Debian: package dpdk-dev


def testpmd_txonly(path: str, seconds: float, lcores: str) -> float:
    """testpmd's transmit rate (frames/s): txonly on one net_null port, one forwarding core;
    the median of its per-second Tx-pps after the first second."""
    command = [path, "-l", lcores, "--in-memory", "--no-pci", "--no-telemetry", "--log-level=*:notice",
               "--vdev=net_null0,no-rx=1", "--", "--forward-mode=txonly", "--nb-cores=1",
               "--txpkts=60", "--burst=32", "--port-topology=loop", "--stats-period=1"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    samples = []
    deadline = time.monotonic() + seconds + 1.5 + 30  # start-up included
    try:
        for line in proc.stdout:
            m = re.search(r"Tx-pps:\s+(\d+)", line)
            if m:
                samples.append(int(m.group(1)))
                # the first two samples: before the forwarding started, and the first second
                if len([s for s in samples if s > 0]) >= max(2, int(seconds) + 1):
                    break
            if time.monotonic() > deadline:
                break
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    running = [s for s in samples if s > 0][1:]
    if not running:
        raise SystemExit(f"testpmd printed no Tx-pps: {' '.join(command)}")
    return float(statistics.median(running))


def engine_rates(path: str, isa: str, seconds: float, versions: list[int]) -> dict:
    """Frames/s sent at saturation per case, one engine process."""
    env = {"XLATPERF_ENGINE": path}
    if isa:
        env["XLATPERF_ISA"] = isa
    saved = {k: os.environ.get(k) for k in ("XLATPERF_ENGINE", "XLATPERF_ISA")}
    os.environ.update(env)
    if not isa:
        os.environ.pop("XLATPERF_ISA", None)
    rates = {}
    try:
        for version in versions:
            base = ['traffic.direction="forward"']
            if version == 6:
                base += ["left.ip_version=6", "right.ip_version=6", "traffic.frame_size=84"]
            config = load_config(NULL, base)
            with Engine(config) as engine:
                for name, settings in VARIANTS.items():
                    plan = TrafficPlan(load_config(NULL, base + settings), engine.hello()["ports"])
                    reply = trial(engine, plan, plan.max_rate, seconds)
                    rates[f"IPv{version} {name}"] = reply["flows"][0]["sent"] / seconds
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return rates


def parse_testpmd(text: str) -> tuple[str, str]:
    label, _, path = text.partition("=")
    found = shutil.which(path) if label and path else None
    if not found:
        raise SystemExit(f"--testpmd {text}: expected LABEL=PATH of an executable dpdk-testpmd "
                         "(Debian's: apt-get install dpdk-dev), or run with --no-testpmd")
    return f"testpmd {label}", found


def parse_engine(text: str) -> tuple[str, str, str]:
    label, _, rest = text.partition("=")
    path, _, isa = rest.partition(":")
    if not label or not path:
        raise SystemExit(f"--engine {text}: expected LABEL=PATH[:ISA]")
    if not os.access(path, os.X_OK):
        raise SystemExit(f"--engine {text}: {path} is not an executable file")
    return label, path, isa


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", action="append", default=[], metavar="LABEL=PATH[:ISA]",
                        help="an engine binary (and kernel path) to measure; repeatable")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=1.0, help="per case and round")
    parser.add_argument("--versions", default="4,6", help="IP versions, e.g. 4 or 4,6")
    parser.add_argument("--testpmd", action="append", default=[], metavar="LABEL=PATH",
                        help=f"a dpdk-testpmd build to measure txonly (default {TESTPMD}); repeatable")
    parser.add_argument("--no-testpmd", action="store_true")
    parser.add_argument("--out", default="bench/results/isa_rate.json")
    args = parser.parse_args()
    engines = [parse_engine(e) for e in args.engine] or [("build", find_engine(load_config(NULL, [])), "")]
    versions = [int(v) for v in args.versions.split(",")]
    testpmds = [] if args.no_testpmd else [parse_testpmd(t) for t in args.testpmd or [TESTPMD]]
    # Nothing else may use the worker lcore meanwhile (tests take the same lock).
    lock = open("/run/xlatperf-tests.lock", "a")
    fcntl.flock(lock, fcntl.LOCK_EX)
    lcores = load_config(NULL, []).tester.lcores

    rounds = []
    for r in range(args.rounds):
        entry = {}
        for label, path in testpmds:
            entry[label] = testpmd_txonly(path, args.seconds, lcores)
        for label, path, isa in engines:
            entry[label] = engine_rates(path, isa, args.seconds, versions)
        rounds.append(entry)
        print(f"round {r + 1}: " + ", ".join(
            f"{k} {v / 1e6:.2f}" if isinstance(v, float) else
            f"{k} " + "/".join(f"{x / 1e6:.1f}" for x in v.values()) for k, v in entry.items()), flush=True)

    summary = {}
    for label, _, _ in engines:
        cases = {}
        for case in rounds[0][label]:
            version = case.split()[0]
            mfps = [r[label][case] / 1e6 for r in rounds]
            vs_fixed = [r[label][case] / r[label][f"{version} fixed"] for r in rounds]
            cases[case] = {"mfps": mfps, "median_mfps": statistics.median(mfps),
                           "median_vs_fixed": statistics.median(vs_fixed)}
            if case.endswith("fixed"):
                for peer, _ in testpmds:
                    cases[case][f"median_vs_{peer.replace(' ', '_')}"] = statistics.median(
                        r[label][case] / r[peer] for r in rounds)
        summary[label] = cases
    for peer, path in testpmds:
        summary[peer] = {"path": path, "mfps": [r[peer] / 1e6 for r in rounds],
                         "median_mfps": statistics.median(r[peer] / 1e6 for r in rounds)}
        print(f"{peer} txonly (64 bytes, {path}): {summary[peer]['median_mfps']:.2f} Mfps")
    for label, path, isa in engines:
        print(f"{label} ({path}, kernels {isa or 'best'}):")
        for case, c in summary[label].items():
            extra = "".join(f", fixed / {peer} {c['median_vs_' + peer.replace(' ', '_')]:.2f}"
                            for peer, _ in testpmds if "median_vs_" + peer.replace(" ", "_") in c)
            print(f"  {case:24s} {c['median_mfps']:6.2f} Mfps, {c['median_vs_fixed']:.2f} of fixed{extra}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({
        "command": " ".join(sys.argv), "seconds": args.seconds,
        "engines": [{"label": l, "path": p, "isa": i or "best"} for l, p, i in engines],
        "rounds": rounds, "summary": summary}, indent=2) + "\n")


if __name__ == "__main__":
    main()
