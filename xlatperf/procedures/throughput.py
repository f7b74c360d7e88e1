# SPDX-License-Identifier: BSD-3-Clause
"""RFC 2544 §26.1 throughput by binary search, and `selftest` (the tester's own capacity)."""

from ..config.dns import SELFTEST_DELTA, SELFTEST_TIMEOUT_SHARE, selftest_overrides, selftest_rate_limit
from ..config.loading import validate
from ..util.errors import MeasurementError
from ..util.stats import summarize
from ..measure.measurer import TrialSpec
from .base import Procedure, ProcedureSpec
from .mlrgoals import deviations
from .mlrthroughput import MlrThroughput
from .search import SearchResult, binary_search
from .ceiling import ceiling_conditions
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
    then a throughput search measures the tester's own capacity. With DNS queries it is RFC 8219
    §9.2.1's self-test (dns_selftest_config): the highest rate of AAAA queries the tester
    answers and judges within a quarter of the timeout, and the DNS64 test rate that allows."""
    name = "selftest"
    capped_by_calibration = False

    def extra_summary(self, repetitions, verdicts):
        extra = super().extra_summary(repetitions, verdicts)
        if self.config.dns.enabled:
            extra["dns_selftest"] = dns_selftest_result(
                self.config, [v.throughput for r, v in zip(repetitions, verdicts) if r.complete])
        return extra

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


def dns_selftest_config(config):
    """A selftest's configuration: with DNS queries, RFC 8219 §9.2.1's (config/dns.py: the
    client asks the tester's own authoritative side for AAAA records, within 0.25 x the
    configured dns.timeout, the timeout of the DNS64 test the self-test is for)."""
    if not config.dns.enabled:
        return config
    raw = config.to_dict()
    raw["dns"] |= selftest_overrides(config.dns.timeout)
    return validate(raw)


def dns_selftest_result(config, answered: list[int]) -> dict:
    """What a DNS selftest (its configuration dns_selftest_config's) allows: the highest DNS64
    test rate, from the lowest of the repetitions' rates (the 1st percentile below 100 of them:
    the tester must keep up in every one, seed 003 §4.3)."""
    timeout = config.dns.timeout
    test_timeout = timeout / SELFTEST_TIMEOUT_SHARE
    lowest = summarize(answered)["p1"]
    if not lowest:
        return {"answered_qps": 0, "rate_limit": 0, "timeout": timeout, "test_timeout": test_timeout,
                "statement": f"RFC 8219 §9.2.1 self-test failed: no rate of AAAA queries was "
                             f"answered within {timeout:g} s"}
    limit = selftest_rate_limit(lowest)
    # The set-up the rate holds for: tester.ceiling_for with tester.ceiling = rate_limit.
    return {"answered_qps": int(lowest), "rate_limit": limit, "timeout": timeout,
            "test_timeout": test_timeout, "delta": SELFTEST_DELTA,
            "ceiling_for": ceiling_conditions(config, test_timeout),
            "statement": f"RFC 8219 §9.2.1 self-test: looped back, the tester answered AAAA queries "
                         f"at up to {int(lowest):,} queries/s within {timeout:g} s"
                         + (f" (the lowest of {len(answered)} repetitions)" if len(answered) > 1 else "")
                         + f", so it tests a DNS64 with a {test_timeout:g}-s timeout at up to "
                           f"{limit:,} queries/s (2 × (1 + {SELFTEST_DELTA:g}) × rate)"}


def make_throughput(config, plan, rate=None) -> Procedure:
    """The binary search, or MLRsearch with throughput.mode = "mlrsearch" (docs/mlrsearch.md)."""
    if config.throughput.mode == "mlrsearch":
        return MlrThroughput(config, plan, rate)
    return Throughput(config, plan, rate)


SPEC = ProcedureSpec("throughput", "RFC 2544 throughput (binary search or MLRsearch)",
                     unit="fps", make=make_throughput, report="search")
SELFTEST_SPEC = ProcedureSpec("selftest", "tester ports wired to each other, no DUT: check and "
                              "capacity", unit="fps", make=SelfTest, report="search",
                              through_dut=False, stateful_phase2=False,
                              adapt_config=dns_selftest_config)
