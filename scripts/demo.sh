#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job on the built-in lab, in under two minutes: the RFC 2544 throughput of a DUT
# that is slower than the tester, so that the result is the DUT's and not the tester's.
#
# The DUT is the `limit` testbed: the Linux kernel as IPv4 router in a network namespace with
# an nftables limit of 100,000 frames/s per direction, a known throughput. (The plain router4
# forwards about as fast as this 2-core machine's tester can send: its result would be a lower
# bound set by the tester; BENCHMARKS.md, "Lab: tester ceiling and DUT placement".)
# `xlatperf lab up` puts the DUT's packet processing on the CPU the engine's worker does not
# use, takes af_xdp ports where the kernel has them, and calibrates the tester's ceiling; the
# throughput search (2 s trials, 3 repetitions, to within 2,000 frames/s; frames still missing
# 0.5 s after sending count as lost, not RFC 2544's 2 s: the lab's delays are microseconds)
# measures no rate above that ceiling, and the last lines say who set the result and the
# tester's margin.
# Results: results/demo-limit/.
# Run as root after scripts/setup.sh.
[ "$(id -u)" -eq 0 ] || { echo "demo.sh: run as root (the lab creates network namespaces)" >&2; exit 1; }
set -euo pipefail
cd "$(dirname "$0")/.."
limit=100000
duration=2
out=results/demo-limit
config=$(mktemp --suffix=.toml)
trap 'xlatperf lab down; rm -f "$config"' EXIT
start=$SECONDS
xlatperf lab up limit --param rate=$limit --config-out "$config"
xlatperf throughput -c "$config" --duration $duration --repeat 3 \
    --set throughput.error=2000 --set trial.pause=0.2 --set trial.timeout=0.5 --out "$out"
python3 - "$out/summary.json" $limit $duration <<'EOF'
import json, sys
from xlatperf.lab import auto_burst
summary, limit, duration = json.load(open(sys.argv[1])), int(sys.argv[2]), float(sys.argv[3])
# The token bucket lets a trial of `duration` seconds pass `burst` frames more than the limit.
passes = limit + auto_burst(limit) / duration
median = summary["median"]
dut = (f"the DUT (Linux IPv4 router, nftables limit {limit:,} frames/s per direction; its "
       f"{auto_burst(limit):,}-frame token bucket lets a {duration:g} s trial pass up to "
       f"{passes:,.0f} frames/s) measured {median:,.0f} frames/s per direction")
if summary.get("dut_limited"):
    print(f"demo result: DUT-limited: {dut}; {summary['dut_limited']}.")
else:
    print(f"demo result: NOT DUT-limited: {dut}; "
          f"{summary.get('lower_bound') or 'the tester ceiling was not calibrated'}")
    sys.exit(1)
EOF
echo "demo: wall time $((SECONDS - start)) s (lab up with calibration, measurement, lab down follows)"
