# SPDX-License-Identifier: BSD-3-Clause
"""How often a run resolves its frames from the configuration: the calls of kind_of and of
trial_frames (the one value of the trial's stacks and sizes) during whole runs through the fake
engine, with one frame size and with a three-size IMIX, and per trial in a search of several.

    python3 bench/plan_calls.py

Before the frames were one value, a one-size trial called kind_of 24 times and recomputed the
trial's stacks 12 times (once per stream and size: 37 and 21 with three IMIX sizes)."""

import collections
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
os.environ["FAKE_DUT_LIMIT"] = "50000"   # the fake DUT's throughput: a search of several trials

from fakes import FAKE_CONFIG  # noqa: E402  (the fake engine's tester configuration)

import xlatperf.frames.kinds as kinds  # noqa: E402
from xlatperf.ui import cli  # noqa: E402

WATCHED = {f.__code__: f.__name__ for f in (kinds.kind_of, kinds.trial_frames)}
RUNS = {"trial, one size": ["trial", "--rate", "1000"],
        "trial, IMIX of 3 sizes": ["trial", "--rate", "1000", "--set", 'traffic.imix="64:7,576:4,1500:1"'],
        "throughput search, one size": ["throughput", "--set", "throughput.max_rate=100000",
                                        "--set", "throughput.error=10000"]}


def main() -> None:
    counts: collections.Counter = collections.Counter()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code in WATCHED:
            counts[WATCHED[frame.f_code]] += 1

    tmp = Path(tempfile.mkdtemp(prefix="plan-calls-"))
    (tmp / "fake.toml").write_text(FAKE_CONFIG)
    for number, (name, args) in enumerate(RUNS.items()):
        out = tmp / f"run{number}"
        counts.clear()
        sys.setprofile(profile)
        cli.main([args[0], "-c", str(tmp / "fake.toml"), "--out", str(out), "-q", *args[1:]])
        sys.setprofile(None)
        trials = sum(1 for _ in open(out / "trials.jsonl"))
        print(f"{name}: {trials} trial(s); calls in the run: {dict(sorted(counts.items()))}")


if __name__ == "__main__":
    main()
