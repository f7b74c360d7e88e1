# SPDX-License-Identifier: BSD-3-Clause
"""ThroughputSearch: what every throughput search shares, written once. The binary search
(procedures/throughput.py) and MLRsearch (procedures/mlrthroughput.py) are its strategies: each
runs one repetition its way and turns a repetition's steps into a SearchResult (the verdict:
throughput, whether the tester bounded it, the tester's ceiling); the base builds the range
(throughput.min_rate/max_rate, the medium's maximum, the calibrated tester ceiling), keeps the
run's tester ceiling between repetitions, and summarises the verdicts (per-direction failures,
tester_limited / range_limited / middle_link_limited / dut_limited) in one place (search.summarize_throughput).
Trials invalid by the tester's doing are retaken by the measurer (TrialSession.run_trial)."""

from ..util.errors import ConfigError
from .base import Procedure, Repetition
from .search import SearchResult, summarize_throughput
from .ceiling import configured_top, search_range_top, tester_ceiling


class ThroughputSearch(Procedure):
    name = "throughput"
    unit = "fps"         # the summary's: frames/s per direction, or DNS queries/s ("qps")
    rate_unit = "frames/s"   # what its sentences count
    # Searches stay at or below the tester's calibrated ceiling (tester.ceiling); the selftest,
    # which measures the tester itself, does not.
    capped_by_calibration = True
    lowest_load = 0      # the strategy's smallest lower end (MLRsearch's loads are >= 1)

    def __init__(self, config, plan, rate=None):
        super().__init__(config, plan)
        if config.dns.enabled:   # the trials' frames are DNS queries (docs/dns.md)
            self.unit, self.rate_unit = "qps", "queries/s"
        settings = config.throughput
        self.lo = max(self.lowest_load, settings.min_rate)
        self.hi = settings.max_rate or plan.max_rate
        plan.check_rate(self.hi, "throughput.max_rate")
        self.calibrated: int | None = None
        if self.capped_by_calibration:
            self.hi, self.calibrated = search_range_top(config, self.hi)
        # A pass at a top that is the setting (not the medium, not the tester) is a lower
        # bound (range_limited).
        self.medium_max = plan.max_rate
        self.configured_top = configured_top(config, self.hi, plan.max_rate, self.calibrated)
        # ... and a pass at the medium's maximum, where a dual DUT's middle link sets it, is
        # that link's (middle_link_limited, RFC 8219 §5.1).
        self.middle_limit = next((d.describe_limit() for d in plan.directions
                                  if d.max_rate == plan.max_rate and d.middle_limits), None)
        if self.lo >= self.hi:
            raise ConfigError(f"throughput.min_rate = {settings.min_rate}: must be below the "
                              f"search's upper end, {self.hi} {self.rate_unit}"
                              + (" (tester.ceiling)" if self.calibrated else ""))
        self.ceiling: int | None = None

    # -- the run's tester ceiling ------------------------------------------------------------

    def ceiling_before(self, earlier: list[Repetition]) -> int | None:
        """The lowest rate the tester showed it cannot send at in the repetitions `earlier`
        (search.unreachable_from: repeated evidence only)."""
        return tester_ceiling([s for r in earlier for s in r.steps], calibrated=self.calibrated)

    def begin_repetition(self, earlier):
        # Trials above a rate the tester could not keep earlier in this run would only show
        # the tester's limit again.
        self.ceiling = self.ceiling_before(earlier)

    # -- the strategy ------------------------------------------------------------------------

    def verdict(self, repetition: Repetition, earlier: list[Repetition]) -> SearchResult:
        """The repetition's result from its steps and the repetitions before it: the same
        whether the steps were just measured or read back by --resume."""
        raise NotImplementedError

    def details(self, repetition: Repetition, verdict: SearchResult,
                earlier: list[Repetition]) -> dict:
        """The repetition's entry in the summary's `repetitions`."""
        return {"repetition": repetition.number, **verdict.to_dict()}

    def extra_summary(self, repetitions: list[Repetition],
                      verdicts: list[SearchResult]) -> dict:
        """What the strategy adds to the summary (MLRsearch: its goals)."""
        return {}

    # -- results ------------------------------------------------------------------------------

    def verdicts(self, repetitions: list[Repetition]) -> list[SearchResult]:
        return [self.verdict(r, repetitions[:i]) for i, r in enumerate(repetitions)]

    def summarize(self, repetitions):
        verdicts = self.verdicts(repetitions)
        summary = summarize_throughput(verdicts, self.calibrated, self.configured_top,
                                       self.medium_max, self.middle_limit, self.rate_unit)
        summary |= self.extra_summary(repetitions, verdicts)
        summary["unit"] = self.unit
        summary["repetitions"] = [self.details(r, v, repetitions[:i])
                                  for i, (r, v) in enumerate(zip(repetitions, verdicts))]
        return summary

    def values(self, repetitions):
        return [v.throughput if r.complete else None
                for r, v in zip(repetitions, self.verdicts(repetitions))]
