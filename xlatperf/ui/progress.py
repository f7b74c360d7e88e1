# SPDX-License-Identifier: BSD-3-Clause
"""Progress for scripts: one JSON object per line on stdout (`--json`).

Every line has "event" and "time" (UTC, ISO 8601):

    started      procedure, repetitions (maximum), repeat_min, max_rate, duration, directions
    point        campaign point: index, count, id, procedure, labels, state
    repetition   number, count
    trial_start  repetition, step, phase, rate and the procedure's lo/hi or percent
    progress     engine progress of the running trial: elapsed, flows [{name, sent, received}]
                 (at most one per --log-interval seconds when that is given)
    pause        seconds
    trial        the trial record as written to trials.jsonl
    finished     procedure, complete, unit, median, p1, p99, min, max, dispersion, n
"""

import json
import sys
import time

from ..measure.session import Reporter
from ..util.files import utc_timestamp


class JsonLinesReporter(Reporter):
    def __init__(self, stream=None, log_interval: float | None = None):
        self.stream = stream or sys.stdout
        self.log_interval = log_interval
        self._last_progress = float("-inf")

    def emit(self, event: str, **fields) -> None:
        line = json.dumps({"event": event, "time": utc_timestamp(), **fields}, default=str,
                          separators=(",", ":"))
        self.stream.write(line + "\n")
        self.stream.flush()

    def started(self, info):
        hello = info.get("hello", {})
        self.emit("started", procedure=info["procedure"], repetitions=info["repetitions"],
                  repeat_min=info.get("repeat_min"), max_rate=info["max_rate"],
                  duration=info["duration"], directions=info["directions"],
                  engine=hello.get("engine"), dpdk=hello.get("dpdk"))

    def point(self, info):
        self.emit("point", **info)

    def repetition(self, number, count):
        self.emit("repetition", number=number, count=count)

    def before_trial(self, context):
        self.emit("trial_start", **context)

    def pausing(self, seconds):
        self.emit("pause", seconds=round(seconds, 3))

    def progress(self, event):
        now = time.monotonic()
        if self.log_interval and now - self._last_progress < self.log_interval:
            return
        self._last_progress = now
        self.emit("progress", elapsed=event.get("elapsed"), flows=event.get("flows", []))

    def after_trial(self, record, result):
        # The engine's raw delay data (tagged delays, histogram buckets) stays in trials.jsonl.
        self.emit("trial", **{key: value for key, value in record.items() if key != "delay"})

    def finished(self, summary):
        self.emit("finished", procedure=summary["procedure"], complete=summary["complete"],
                  **{key: summary.get(key) for key in ("unit", "median", "p1", "p99", "min",
                                                       "max", "dispersion", "n")})

    def close(self):
        pass
