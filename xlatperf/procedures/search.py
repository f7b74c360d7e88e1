# SPDX-License-Identifier: BSD-3-Clause
"""Measurement procedures as plain functions of a trial runner: the binary search, the frame
loss scan, and their summaries (what limited a result: ceiling.py).

A trial runner is any callable `run_trial(rate) -> TrialResult` (rate in frames/s per
direction). The real one talks to the engine (xlatperf/measure/session.py); tests pass deterministic fakes.
Procedures append every trial to a caller-supplied `steps` list as soon as it returns, so an
interrupted procedure (Ctrl-C) still leaves its trials to the caller.
"""

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Iterable, TypeVar

from ..engine.protocol import TrialResult
from ..util.stats import summarize
from .ceiling import (dut_limited, lower_bound, middle_link_limited, mostly_tester_limited, range_limited,
                      tester_bound, tester_ceiling, unreachable_from)

RunTrial = Callable[[int], TrialResult]
Notify = Callable[[dict], None]


def measure_step(run_trial: RunTrial, rate: int, steps: list, notify: Notify | None,
             **context) -> TrialResult:
    if notify is not None:
        notify({"rate": rate, **context})
    result = run_trial(rate)
    steps.append(result)
    return result


# --------------------------------------------------------------------------------------------
# Throughput: binary search (RFC 2544 §26.1)
# --------------------------------------------------------------------------------------------


@dataclass
class SearchResult:
    throughput: int            # highest rate measured as passing; 0 when no trial passed
    found: bool                # whether any trial passed
    # The search ended against the tester, not the DUT: the lowest rate above the result that
    # did not pass was one the tester could not send at (so the result is a lower bound).
    tester_limited: bool
    steps: list[TrialResult]
    loss_tolerance: float = 0.0
    complete: bool = True
    tester_ceiling: int | None = None   # lowest rate the tester could not keep in this run

    @classmethod
    def from_steps(cls, steps: list[TrialResult], loss_tolerance: float,
                   complete: bool = True, ceiling: int | None = None,
                   calibrated: int | None = None) -> "SearchResult":
        """ceiling: the tester's ceiling from earlier repetitions of this run (a search that
        started below it never measured it, but was bounded by it all the same).
        calibrated: the calibrated tester ceiling that capped the search (search_range_top):
        a pass at it is the tester's limit, not the DUT's."""
        passing = [s.rate for s in steps if s.passes(loss_tolerance)]
        throughput = max(passing, default=0)
        # What stopped the search from going higher: the lowest failure above the result.
        # The tester's ceiling (this run's, with the earlier repetitions') bounds it too: a
        # sender that met its capacity in a trial the DUT also lost frames in bounds the search
        # at its pace, below that trial's rate.
        unreachable = tester_ceiling(steps, ceiling, calibrated)
        above = [(s.rate, tester_bound(s)) for s in steps
                 if s.rate > throughput and not s.passes(loss_tolerance)]
        if unreachable is not None and unreachable > throughput:
            above.append((unreachable, True))
        bound = min(above, key=lambda pair: (pair[0], not pair[1]), default=None)
        at_calibrated = calibrated is not None and bool(passing) and throughput >= calibrated
        return cls(throughput=throughput, found=bool(passing),
                   tester_limited=at_calibrated or (bound is not None and bound[1]), steps=steps,
                   loss_tolerance=loss_tolerance, complete=complete, tester_ceiling=unreachable)

    def to_dict(self) -> dict:
        return {"throughput": self.throughput, "found": self.found,
                "tester_limited": self.tester_limited, "tester_ceiling": self.tester_ceiling,
                "complete": self.complete,
                "steps": [{**s.to_dict(), "passed": s.passes(self.loss_tolerance)}
                          for s in self.steps]}


def binary_search(run_trial: RunTrial, lo: int, hi: int, error: int, loss_tolerance: float = 0.0,
                  *, steps: list | None = None, notify: Notify | None = None,
                  ceiling: int | None = None, calibrated: int | None = None) -> SearchResult:
    """RFC 2544 throughput: the highest rate in [lo, hi] at which a trial passes.

    The first trial is at `hi` itself: when the DUT forwards at the medium's maximum rate (the
    usual default for hi), one trial settles it. (siitperf starts with the midpoint instead.)
    Then, on integers: mid = (lo + hi) // 2; a pass sets lo = mid, a failure hi = mid, until
    hi - lo <= error. An invalid trial (the tester could not keep the rate) is a failure; the
    result's `tester_limited` then says the search was bounded by the tester.

    ceiling: a rate the tester has already shown in this run that it cannot send at (an
    earlier repetition's invalid trial). A search never spends trials at or above it: `hi`
    becomes the ceiling, counted as failed without being measured again. Likewise within the
    search: after a trial the tester could not send at its rate, the next trials stay below
    the pace it did send at (unreachable_from), instead of halving from far above it.
    calibrated: the tester's calibrated ceiling that capped `hi` (search_range_top), below
    which a shortfall needs more evidence (unreachable_from).

    The result is the highest rate *measured* as passing (never an untested midpoint; `lo`
    itself is not measured), or 0 with found=False when no trial passed. On a DUT that passes
    exactly the rates <= L (lo <= L < hi) it lies in (L - error, L].
    """
    if error < 1:
        raise ValueError(f"error = {error}: must be >= 1 (integer rates)")
    if not 0 <= lo < hi:
        raise ValueError(f"search range [{lo}, {hi}]: must have 0 <= lo < hi")
    steps = [] if steps is None else steps
    known_unreachable = ceiling is not None and ceiling <= hi
    if known_unreachable:
        hi = max(ceiling, lo)
    else:
        first = measure_step(run_trial, hi, steps, notify, lo=lo, hi=hi)
        if first.passes(loss_tolerance):
            return SearchResult.from_steps(steps, loss_tolerance, ceiling=ceiling,
                                           calibrated=calibrated)
        hi = max(lo, min(hi, unreachable_from(first, calibrated) or hi))
    while hi - lo > error:
        mid = (lo + hi) // 2
        result = measure_step(run_trial, mid, steps, notify, lo=lo, hi=hi)
        if result.passes(loss_tolerance):
            lo = mid
        else:
            # A trial the tester could not send at its rate also says how fast it did send:
            # no trial at or above that pace can be valid, so the search continues below it.
            hi = max(lo, min(mid, unreachable_from(result, calibrated) or mid))
    return SearchResult.from_steps(steps, loss_tolerance, ceiling=ceiling, calibrated=calibrated)


# --------------------------------------------------------------------------------------------
# Frame loss rate (RFC 2544 §26.3)
# --------------------------------------------------------------------------------------------


def scan_rates(max_rate: int, start_pct: float, step_pct: float) -> Iterable[tuple[int, float]]:
    """(rate, percent of max_rate) for start, start - step, ... while the rate is positive.
    Percentages are computed exactly (no accumulated float error): 100, 90, ..., 10."""
    start, step = Fraction(str(start_pct)), Fraction(str(step_pct))
    k = 0
    while (percent := start - k * step) > 0:
        rate = math.floor(max_rate * percent / 100)
        if rate <= 0:
            return
        yield rate, float(percent)
        k += 1


def frame_loss_scan(run_trial: RunTrial, max_rate: int, start_pct: float = 100.0,
                    step_pct: float = 10.0, rates: list[int] | None = None, *,
                    steps: list | None = None, notify: Notify | None = None) -> list[TrialResult]:
    """RFC 2544 frame loss rate: trials from start_pct % of max_rate down in steps of step_pct %
    of max_rate (the RFC's first trial is at 100 %, steps at most 10 %), stopping right after
    the second consecutive trial without loss (an invalid trial is not one). With an explicit
    `rates` list every rate in it is measured, highest first, with no stop rule.
    Returns the trials; FLR per direction is each direction's loss_ratio.
    """
    steps = [] if steps is None else steps
    if rates:
        for rate in sorted(set(rates), reverse=True):
            measure_step(run_trial, rate, steps, notify, percent=100 * rate / max_rate)
        return steps
    zero_loss_in_a_row = 0
    for rate, percent in scan_rates(max_rate, start_pct, step_pct):
        result = measure_step(run_trial, rate, steps, notify, percent=percent)
        zero_loss_in_a_row = zero_loss_in_a_row + 1 if result.passes(0.0) else 0
        if zero_loss_in_a_row == 2:
            break
    return steps


# --------------------------------------------------------------------------------------------
# Repetitions and summaries (RFC 8219 §12: median, 1st and 99th percentiles)
# --------------------------------------------------------------------------------------------

T = TypeVar("T")


def repeat(count: int, run_once: Callable[[int], T], results: list | None = None) -> list[T]:
    """Run a procedure `count` times (run_once(repetition index)); each result is appended to
    `results` as it completes, so an interruption keeps the finished repetitions."""
    results = [] if results is None else results
    for index in range(count):
        results.append(run_once(index))
    return results


def summarize_throughput(searches: list[SearchResult], calibrated: int | None = None,
                         configured_top: int | None = None, medium_max: int | None = None,
                         middle_limit: str | None = None, rate_unit: str = "frames/s") -> dict:
    """Statistics of the throughput over complete searches (fps per direction). calibrated:
    the calibrated tester ceiling that capped the searches (search_range_top). configured_top:
    throughput.max_rate when it, below the medium's maximum `medium_max`, was the searches'
    upper end: a search that passed there measured the setting, not the DUT. middle_limit: the
    medium's maximum as a dual DUT's middle link sets it (DirectionPlan.describe_limit), when
    it does: a search that passed there measured that link."""
    values = [s.throughput for s in searches if s.complete]
    failures: dict[str, int] = {}  # trials each direction failed: which one limits the DUT
    for search in searches:
        for step in search.steps:
            failing = step.failing_directions(search.loss_tolerance)
            for name in step.directions:
                failures[name] = failures.get(name, 0) + (name in failing)
    ceiling = min((s.tester_ceiling for s in searches if s.tester_ceiling is not None),
                  default=None)
    limited = mostly_tester_limited([s.tester_limited for s in searches if s.complete])
    at_calibrated = calibrated is not None and any(
        s.throughput >= calibrated for s in searches if s.complete)
    summary = {"unit": "fps", **summarize(values),
               "tester_limited": limited, "tester_ceiling": ceiling,
               "tester_limited_repetitions": sum(s.tester_limited for s in searches
                                                 if s.complete),
               **lower_bound([st for s in searches for st in s.steps], limited,
                             calibrated if at_calibrated else None, rate_unit),
               "directions": {name: {"failed_trials": count}
                              for name, count in failures.items()}}
    if calibrated is not None and not limited and values:
        summary |= dut_limited(summary["median"], calibrated, ceiling, rate_unit)
    bounded = summary["tester_limited_repetitions"]
    if bounded and not limited:
        summary["partly_tester_limited"] = (
            f"{bounded} of {len(values)} repetitions ended against the tester (a trial it "
            "could not keep in any attempt bounded the search): their values are lower "
            "bounds; the median is the DUT's, most repetitions were not bounded")
    return summary | range_limited(values, configured_top, medium_max, rate_unit) | \
        middle_link_limited(values, medium_max, middle_limit, rate_unit)


def summarize_frame_loss(scans: list[list[TrialResult]], max_rate: int) -> dict:
    """Loss-ratio statistics per rate over the repetitions that measured it (invalid trials
    are excluded: they are tester failures, not DUT results), overall (worst direction) and per
    direction. The top-level statistics are those of the first, highest rate (the RFC's 100 %
    point by default), so a frame-loss summary has the same top-level shape as any other."""
    by_rate: dict[int, list[TrialResult]] = {}
    for scan in scans:
        for trial in scan:
            by_rate.setdefault(trial.rate, []).append(trial)
    rates = []
    for rate in sorted(by_rate, reverse=True):
        trials = by_rate[rate]
        valid = [t for t in trials if t.valid and t.loss_ratio is not None]
        names = sorted({name for t in valid for name in t.directions})
        rates.append({
            "rate": rate, "percent": 100 * rate / max_rate if max_rate else None,
            **summarize([t.loss_ratio for t in valid]),
            "invalid": len(trials) - len(valid),
            "directions": {name: summarize([t.directions[name].loss_ratio for t in valid
                                            if name in t.directions]) for name in names},
        })
    top = {key: value for key, value in rates[0].items()
           if key not in ("rate", "percent", "invalid")} if rates else summarize([])
    return {"unit": "ratio", "directions": {}, **top, "rates": rates}


def summarize_trials(trials: list[TrialResult]) -> dict:
    """Loss-ratio statistics of repeated single trials (the `trial` procedure)."""
    valid = [t for t in trials if t.valid and t.loss_ratio is not None]
    names = sorted({name for t in valid for name in t.directions})
    return {"unit": "ratio", **summarize([t.loss_ratio for t in valid]),
            "invalid": len(trials) - len(valid),
            "directions": {name: summarize([t.directions[name].loss_ratio for t in valid
                                               if name in t.directions]) for name in names}}
