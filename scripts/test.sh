#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs every test: the engine's C++ unit tests, then the Python suite (unit, lab and
# end-to-end), then the PCI guest tests (tests/guest: DPDK's real PCI drivers in a QEMU guest,
# cabled to a lab DUT; about 5 min). Each runs even when one before failed; exits non-zero if
# any failed. Expects scripts/setup.sh to have run (it builds engine/build, installs the
# package and QEMU).
#   bash scripts/test.sh              everything
#   bash scripts/test.sh --no-guest   everything but the guest tests
#   bash scripts/test.sh --guest      only the guest tests
set -uo pipefail  # no -e: a failing suite must not skip the other one or the clean-up
cd "$(dirname "$0")/.."

guest=yes others=yes
case "${1:-}" in
    "") ;;
    --guest) others=no ;;
    --no-guest) guest=no ;;
    *) echo "usage: test.sh [--guest | --no-guest]" >&2; exit 2 ;;
esac

# Whatever happens, leave no lab behind (namespaces, TAYGA) for the next run.
lab_down() {
    python3 -c 'from xlatperf.lab import lab_down; lab_down()' ||
        echo "test.sh: lab down failed" >&2
}
trap lab_down EXIT

status=0
if [ "$others" = yes ]; then
    # Two at a time (the machine's two cores): the engine's tests assert what a busy machine keeps.
    ctest --test-dir engine/build --output-on-failure --parallel 2 || status=1
    # The Python unit tests two at a time (pytest-xdist: they take 8.5 min one at a time, 5.7 two at
    # a time); those that build a lab hold the lab lock (tests/conftest.py), so they still run one at a
    # time. Then the end-to-end tests, which all hold it, one at a time. --durations: the slowest,
    # where CI time goes.
    python3 -m pytest -q --durations=20 -n 2 tests --ignore=tests/e2e --ignore=tests/guest || status=1
    python3 -m pytest -q --durations=30 tests/e2e || status=1
fi
# The guest tests last: they hold the lab lock for their whole guest and build engine/build-portable
# (the engine without -march=native, which TCG's CPU could not run) when it is missing or stale.
if [ "$guest" = yes ]; then
    XLATPERF_GUEST=1 python3 -m pytest -q -m guest --durations=10 tests/guest || status=1
fi
exit "$status"
