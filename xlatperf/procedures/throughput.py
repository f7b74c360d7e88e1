# SPDX-License-Identifier: BSD-3-Clause
"""RFC 2544 §26.1 throughput by binary search, and `selftest` (the tester's own capacity)."""

from ..util.errors import MeasurementError
from ..measure.measurer import TrialSpec
from .base import Procedure, ProcedureSpec
from .mlrgoals import deviations
from .mlrthroughput import MlrThroughput
from .search import SearchResult, binary_search
from .throughputsearch import ThroughputSearch

# selftest check: a short trial at a low rate that any working tester passes without loss.
SELFTEST_CHECK_DURATION = 2.0
SELFTEST_CHECK_RATE = 10_000


class Throughput(ThroughputSearch):
    """RFC 2544 §26.1 binary search over [throughput.min_rate, max_rate or the medium's max]:
    the binary strategy of ThroughputSearch."""

    def __init__(self, config, plan, rate=None):
        super().__init__(config, plan, rate)
        self.error = config.throughput.error
        self.loss_tolerance = config.throughput.loss_tolerance

    def run(self, session, steps):
        binary_search(lambda rate: session.run_trial(TrialSpec(rate)), self.lo, self.hi, self.error, self.loss_tolerance,
                      steps=steps, notify=session.notify, ceiling=self.ceiling,
                      calibrated=self.calibrated)

    def verdict(self, repetition, earlier) -> SearchResult:
        return SearchResult.from_steps(repetition.steps, self.loss_tolerance,
                                       repetition.complete,
                                       ceiling=self.ceiling_before(earlier),
                                       calibrated=self.calibrated)

    def csv_rows(self, repetitions):
        return [{"repetition": r.number, "throughput_fps": search.throughput,
                 "found": search.found, "tester_limited": search.tester_limited,
                 "tester_ceiling_fps": search.tester_ceiling, "complete": r.complete,
                 "trials": len(r.steps)}
                for r, search in zip(repetitions, self.verdicts(repetitions))]

    def settings(self):
        return {"mode": "binary", "min_rate": self.lo, "max_rate": self.hi,
                "error": self.error, "loss_tolerance": self.loss_tolerance,
                "first_trial_at_max_rate": True,
                "tester_ceiling_rule": "no trial at or above the lowest rate the tester could "
                                       "not keep earlier in the run"
                                       + (", nor above its calibrated ceiling"
                                          if self.calibrated else ""),
                "deviations": deviations(self.config)}


class SelfTest(Throughput):
    """Tester ports wired to each other, no DUT: a short low-rate trial must pass without loss,
    then a throughput search measures the tester's own capacity."""
    name = "selftest"
    capped_by_calibration = False

    def prepare(self, session):
        rate = max(1, min(SELFTEST_CHECK_RATE, self.plan.max_rate // 100))
        duration = min(self.config.trial.duration, SELFTEST_CHECK_DURATION)
        session.begin_phase("check")
        session.notify({"rate": rate})
        result = session.run_trial(TrialSpec(rate, duration))
        session.begin_phase("search")
        if not result.passes(0.0):
            problems = [f"tester invalid ({result.invalid_reason})"] if not result.valid else []
            lost = [f"{name} received {d.received} of {d.sent} frames"
                    for name, d in result.directions.items() if not d.passes(0.0)]
            # Frames lost between the ports suggest the wiring; a sender that fell behind its
            # schedule with every frame arriving suggests a busy host.
            hint = "are the ports wired to each other?" if lost else "is the tester's host busy?"
            raise MeasurementError(f"selftest: the {duration:g} s check trial at {rate} fps "
                                   f"failed: {'; '.join(problems + lost)} ({hint})")
        return {"check": {**result.to_dict(), "duration": duration, "passed": True}}


def make_throughput(config, plan, rate=None) -> Procedure:
    """The binary search, or MLRsearch with throughput.mode = "mlrsearch" (docs/mlrsearch.md)."""
    if config.throughput.mode == "mlrsearch":
        return MlrThroughput(config, plan, rate)
    return Throughput(config, plan, rate)


SPEC = ProcedureSpec("throughput", "RFC 2544 throughput (binary search or MLRsearch)",
                     unit="fps", make=make_throughput, report="search")
SELFTEST_SPEC = ProcedureSpec("selftest", "tester ports wired to each other, no DUT: check and "
                              "capacity", unit="fps", make=SelfTest, report="search",
                              through_dut=False, stateful_phase2=False)
