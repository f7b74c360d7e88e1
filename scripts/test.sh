#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs every test: the engine's C++ unit tests, then the Python suite (unit, lab and
# end-to-end). Both run even when the first fails; exits non-zero if either failed.
# Expects scripts/setup.sh to have run (it builds engine/build and installs the package).
set -uo pipefail  # no -e: a failing suite must not skip the other one or the clean-up
cd "$(dirname "$0")/.."

# Whatever happens, leave no lab behind (namespaces, TAYGA) for the next run.
lab_down() {
    python3 -c 'from xlatperf.lab import lab_down; lab_down()' ||
        echo "test.sh: lab down failed" >&2
}
trap lab_down EXIT

status=0
# Two at a time (the machine's two cores): the engine's tests assert what a busy machine keeps.
ctest --test-dir engine/build --output-on-failure --parallel 2 || status=1
# The Python unit tests two at a time (pytest-xdist: they take 8.5 min one at a time, 5.7 two at
# a time); those that build a lab hold the lab lock (tests/conftest.py), so they still run one at a
# time. Then the end-to-end tests, which all hold it, one at a time. --durations: the slowest,
# where CI time goes.
python3 -m pytest -q --durations=20 -n 2 tests --ignore=tests/e2e || status=1
python3 -m pytest -q --durations=30 tests/e2e || status=1
exit "$status"
