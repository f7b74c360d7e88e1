# SPDX-License-Identifier: BSD-3-Clause
"""Adaptive repetitions: stop repeating a procedure once its results agree, continue up to a
maximum while they scatter.

The rule (docs/campaigns.md, "Adaptive repetitions"):

* Let X(1) <= ... <= X(n) be the results of the n repetitions so far (throughput in frames/s,
  or a loss ratio). Whatever their distribution (no normality is assumed; TAYGA's results in
  the SIIT paper are bimodal), the number of results below the true median m is binomial
  B(n, 1/2), so the interval [X(k), X(n+1-k)] contains m with probability at least

      coverage(n, k) = 1 - 2 * P(B(n, 1/2) <= k - 1)

  (the classic distribution-free confidence interval of the median from order statistics,
  e.g. Conover, "Practical Nonparametric Statistics", §3.2; Hahn and Meeker, "Statistical
  Intervals", §5.2). The rule uses the narrowest such interval, the largest k whose coverage
  is still at least `confidence`.
* Stop after n repetitions when n >= minimum and that interval exists and
  X(n+1-k) - X(k) <= tolerance * |median| (for a median of 0: when the interval is [0, 0]).
  Continue otherwise, and stop at the maximum whatever the results.

The interval needs n >= log2(2 / (1 - confidence)) results to exist at all: 6 at 95 %, 8 at
99 %; with fewer, [min, max] covers the median with less than the asked confidence. Tight
results therefore stop at max(minimum, 6) repetitions (95 %); results from two modes keep the
interval as wide as the gap between the modes, and run to the maximum.

Looking at the data after every repetition (a sequential rule) makes the coverage of the final
interval somewhat lower than the nominal one; the rule is a stopping criterion, and the report
still gives the median with the 1st/99th percentiles and n of all repetitions (RFC 8219 §12).
"""

from dataclasses import dataclass
from fractions import Fraction
from math import comb
from typing import Sequence

from ..util.stats import median


@dataclass(frozen=True)
class MedianInterval:
    lower: float
    upper: float
    k: int                 # the interval is [X(k), X(n+1-k)], 1-based order statistics
    coverage: float        # its exact distribution-free coverage probability

    @property
    def width(self) -> float:
        return self.upper - self.lower


def median_interval(values: Sequence[float], confidence: float) -> MedianInterval | None:
    """The narrowest order-statistic interval [X(k), X(n+1-k)] that contains the population
    median with probability >= confidence, or None when even [min, max] has less coverage
    (too few values)."""
    n = len(values)
    if n == 0:
        return None
    ordered = sorted(values)
    target = Fraction(str(confidence))
    best: tuple[int, Fraction] | None = None
    tail = Fraction(0)                                  # P(B <= k - 1)
    for k in range(1, (n + 1) // 2 + 1):
        tail += Fraction(comb(n, k - 1), 2 ** n)
        coverage = 1 - 2 * tail
        if coverage < target:
            break
        best = (k, coverage)
    if best is None:
        return None
    k, coverage = best
    return MedianInterval(ordered[k - 1], ordered[n - k], k, float(coverage))


def minimum_for_interval(confidence: float) -> int:
    """The smallest n for which median_interval exists at this confidence (6 at 0.95)."""
    n = 1
    while Fraction(2, 2 ** n) > 1 - Fraction(str(confidence)):
        n += 1
    return n


@dataclass(frozen=True)
class Decision:
    stop: bool
    reason: str                      # "continue" | "consistent" | "maximum"
    n: int                           # usable results so far
    interval: MedianInterval | None
    median: float | None

    def to_dict(self) -> dict:
        interval = self.interval
        return {"stopped": self.reason if self.stop else None, "n": self.n,
                "median": self.median,
                "interval": None if interval is None else [interval.lower, interval.upper],
                "coverage": None if interval is None else interval.coverage,
                "relative_width": _relative_width(interval, self.median)}


def _relative_width(interval: MedianInterval | None, mid: float | None) -> float | None:
    if interval is None or mid is None:
        return None
    if mid == 0:
        return 0.0 if interval.width == 0 else None
    return interval.width / abs(mid)


def decide(values: Sequence[float | None], repetitions: int, minimum: int, maximum: int,
           tolerance: float, confidence: float) -> Decision:
    """Whether to stop after `repetitions` repetitions whose results are `values` (None for a
    repetition without a usable result, e.g. an invalid trial: it counts towards the maximum
    but not towards the interval)."""
    usable = [v for v in values if v is not None]
    mid = median(usable) if usable else None
    interval = median_interval(usable, confidence)
    if repetitions >= maximum:
        return Decision(True, "maximum", len(usable), interval, mid)
    if repetitions < minimum or interval is None:
        return Decision(False, "continue", len(usable), interval, mid)
    consistent = interval.width == 0 if mid == 0 else interval.width <= tolerance * abs(mid)
    return Decision(consistent, "consistent" if consistent else "continue", len(usable),
                    interval, mid)
