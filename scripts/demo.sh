#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job on the built-in lab: build the router4 testbed (Linux kernel as IPv4 router in a
# network namespace), measure its RFC 2544 throughput (10 s trials, 3 repetitions), then take
# the lab down again. Results go to results/demo-router4/. Run as root after scripts/setup.sh.
[ "$(id -u)" -eq 0 ] || { echo "demo.sh: run as root (the lab creates network namespaces)" >&2; exit 1; }
set -euo pipefail
cd "$(dirname "$0")/.."
config=$(mktemp --suffix=.toml)
trap 'xlatperf lab down; rm -f "$config"' EXIT
xlatperf lab up router4 --config-out "$config"
xlatperf throughput -c "$config" --duration 10 --repeat 3 \
    --set throughput.error=5000 --out results/demo-router4
