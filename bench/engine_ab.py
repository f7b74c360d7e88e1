#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Two or more engine builds against each other on the CE sending cases of ipv4aas_rate.py
(fixed IPv6, MAP-E and MAP-T from a million CEs, random IPs + ports; 104-byte frames, one
worker core to net_null), in paired rounds: each round runs every engine on every case in
turn, 1 s each, so a change's effect is read within minutes, not across this shared VM's
drift between runs.

    python3 bench/engine_ab.py [--rounds 12] LABEL=PATH[:ISA] LABEL=PATH[:ISA] ...

ISA: the field kernels (XLATPERF_ISA: scalar, sse, avx2, avx512; default: the best this CPU
runs). Prints, per engine, each case's median Mfps and its median ratio to fixed IPv6 frames.
"""

import argparse
import fcntl
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ipv4aas_rate import SENDING, achieved  # noqa: E402

REFERENCE = "plain IPv6, fixed"


def engine_arg(text: str) -> tuple[str, str, str | None]:
    label, sep, rest = text.partition("=")
    if not sep or not label or not rest:
        raise argparse.ArgumentTypeError(f"engine {text!r}: expected LABEL=PATH[:ISA]")
    path, _, isa = rest.partition(":")
    if not Path(path).is_file():
        raise argparse.ArgumentTypeError(f"engine {label}: {path} is not a file")
    return label, path, isa or None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("engines", nargs="+", type=engine_arg, metavar="LABEL=PATH[:ISA]")
    args = parser.parse_args()
    fps = {label: {case: [] for case in SENDING} for label, _, _ in args.engines}
    lock = open("/run/xlatperf-tests.lock", "a")  # the CPUs to this benchmark alone
    fcntl.flock(lock, fcntl.LOCK_EX)
    for r in range(args.rounds):
        for label, path, isa in args.engines:
            os.environ["XLATPERF_ENGINE"] = path
            if isa:
                os.environ["XLATPERF_ISA"] = isa
            else:
                os.environ.pop("XLATPERF_ISA", None)
            for case, settings in SENDING.items():
                fps[label][case].append(achieved(settings))
        print(f"round {r + 1} of {args.rounds}", file=sys.stderr, flush=True)
    for label, _, isa in args.engines:
        cells = []
        for case, values in fps[label].items():
            ratios = [v / ref for v, ref in zip(values, fps[label][REFERENCE])]
            cells.append(f"{case}: {statistics.median(values) / 1e6:.1f}"
                         + ("" if case == REFERENCE else f" ({statistics.median(ratios):.3f})"))
        print(f"{label} [{isa or 'best'}] " + "; ".join(cells))


if __name__ == "__main__":
    main()
