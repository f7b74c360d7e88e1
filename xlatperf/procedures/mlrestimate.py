# SPDX-License-Identifier: BSD-3-Clause
"""What the trials of an MLRsearch say about the DUT, a choice RFC 9971 leaves to the
implementation: `TrialHistory` holds a search's trials by load and estimates from them the
forwarding rate of trials of a given duration and the load where a loss ratio is crossed. The
estimates steer the search (mlrsearch.py: which load, how long a trial); they never classify a
load (mlrclassify.py does).

* Forwarding rates of lossy trials at two durations are extrapolated to another duration with
  rate + burst / duration (a DUT with a queue).
* The load where a loss ratio is crossed, from the trials at least that long that lost frames:
  with one, its forwarding rate / (1 - loss ratio) (a DUT with a capacity); with two whose
  forwarding rates grow with the load, the loss ratio interpolated linearly (a DUT whose loss
  rises gradually); else from the extrapolated forwarding rate.
* A load's lowest loss ratio counts, so that a rare spike does not move the estimates.
"""

from __future__ import annotations

import math

from .mlrclassify import Trial

# Two lossy trials whose forwarding rates differ by less than this fraction of their loads'
# difference look like a DUT with a capacity (the forwarding rate stays when the load grows);
# otherwise the loss ratio is interpolated between them.
CAPACITY_SLOPE = 0.25


def _fit_rate(t1: float, r1: float, t2: float, r2: float, duration: float) -> float:
    """Forwarding rate at `duration` of a DUT that forwards rate x duration + burst frames
    (a queue of `burst` frames drained at `rate`), fitted through (t1, r1), (t2, r2): r(t) =
    rate + burst / t. A rate that grows with the duration is taken as constant (burst >= 0)."""
    burst = max(0.0, (r1 - r2) / (1.0 / t1 - 1.0 / t2))
    return r2 - burst / t2 + burst / duration


class TrialHistory:
    """The trials of one search in order and by load, over the load range [min_load, max_load],
    and what they say about the DUT (steers the search, never classifies)."""

    def __init__(self, min_load: int, max_load: int):
        self.min_load, self.max_load = int(min_load), int(max_load)
        self.by_load: dict[int, list[Trial]] = {}
        self.trials: list[tuple[int, Trial]] = []

    def add(self, load: int, trial: Trial) -> None:
        self.by_load.setdefault(load, []).append(trial)
        self.trials.append((load, trial))

    def _best_losses(self, shortest: float, longest: float = math.inf) -> list[tuple[int, float]]:
        """(load, lowest loss ratio of its trials lasting [shortest, longest]) by load: the
        lowest, so that a rare spike does not move the estimates."""
        best = {}
        for load, trials in self.by_load.items():
            losses = [t.loss_ratio for t in trials if shortest - 1e-9 <= t.duration <= longest]
            if losses:
                best[load] = min(losses)
        return sorted(best.items())

    def _rates_by_duration(self) -> dict[float, float]:
        """Trial duration -> forwarding rate, load x (1 - loss), of the lowest load that lost
        frames in trials of that duration. A loss ratio of 1 says nothing about the rate, but
        a trial that counts as 1 because it was invalid (the tester fell behind at a load far
        above the DUT's) still measured what the DUT forwarded: without a lossy valid trial of
        that duration, the lowest such load's forwarding rate steers the search."""
        rates = {}
        for duration in sorted({t.duration for _, t in self.trials}):
            lossy = [(load, q) for load, q in self._best_losses(duration, duration) if 0 < q < 1]
            if lossy:
                load, q = lossy[0]
                rates[duration] = load * (1.0 - q)
                continue
            forwarded = sorted((load, t.forwarding_rate) for load, trials in self.by_load.items()
                               for t in trials if abs(t.duration - duration) < 1e-9
                               and t.loss_ratio >= 1.0 and 0 < t.forwarding_rate < load)
            if forwarded:
                rates[duration] = forwarded[0][1]
        return rates

    def capacity_at(self, duration: float, passes: bool = True) -> float | None:
        """The forwarding rate expected of trials lasting `duration`: measured if some trial of
        that duration lost frames, else fitted over the trial durations that did (rate + burst
        / duration), else the nearest duration's. None before any trial lost frames."""
        rates = self._rates_by_duration()
        if not rates:
            return None
        if duration in rates:
            estimate = rates[duration]
        else:
            below = sorted(t for t in rates if t < duration)
            above = sorted(t for t in rates if t > duration)
            if below and above:
                t1, t2 = below[-1], above[0]
            elif len(below) >= 2:
                t1, t2 = below[-2], below[-1]
            else:
                t1 = t2 = (below or above)[-1 if below else 0]
            estimate = (rates[t1] if t1 == t2 else
                        _fit_rate(t1, rates[t1], t2, rates[t2], duration))
        if not passes:
            return estimate
        # A trial at least this long without loss forwarded its whole load.
        passed = [load for load, q in self._best_losses(duration) if q == 0]
        return max([estimate] + passed)

    def estimate(self, loss_ratio: float, duration: float) -> float | None:
        """Where the trials put the highest load whose trials of `duration` lose at most
        `loss_ratio`. From the trials at least that long that lost frames: with one, its
        forwarding rate / (1 - loss_ratio) (a DUT with a capacity); with more, the loss ratio
        interpolated (or extrapolated) linearly between the two nearest the goal's loss ratio
        (a DUT whose loss rises gradually). Without such trials: capacity_at(duration) /
        (1 - loss_ratio). None when nothing lost frames yet."""
        g = loss_ratio
        lossy = [(x, q) for x, q in self._best_losses(duration) if 0 < q < 1]
        if not lossy:
            capacity = self.capacity_at(duration, passes=False)
            return None if capacity is None else capacity / (1.0 - g)
        high = [(x, q) for x, q in lossy if q > g]
        pair = None
        if high:
            below = [(x, q) for x, q in lossy if q <= g and x < high[0][0]]
            if below:
                pair = (below[-1], high[0])
            elif len(high) >= 2:
                pair = (high[0], high[1])
        elif len(lossy) >= 2:
            pair = (lossy[-2], lossy[-1])
        x, q = (high or lossy)[0]
        rate = x * (1.0 - q)
        if pair is not None:
            (x1, q1), (x2, q2) = pair
            r1, r2 = x1 * (1 - q1), x2 * (1 - q2)
            if r2 - r1 > CAPACITY_SLOPE * (x2 - x1) and q2 > q1:
                # The forwarding rate grows with the load: the loss ratio rises gradually;
                # interpolate (or extrapolate) it.
                at = x1 + (g - q1) * (x2 - x1) / (q2 - q1)
                if at > 0:
                    return at
            # A capacity: the forwarding rate stays; where it fell with the load, the lower
            # rate is taken for a spike.
            rate = max(r1, r2)
        return rate / (1.0 - g)

    def capacity_known(self, duration: float) -> bool:
        """Whether trials of at least `duration` told the DUT's forwarding rate: one lost frames
        (not all of them), or one forwarded everything at the maximum load or at a load the
        forwarding rate of a shorter trial predicted."""
        rates = self._rates_by_duration()
        shorter = [rate for t, rate in rates.items() if t < duration - 1e-9]
        for load, q in self._best_losses(duration):
            if 0 < q < 1:
                return True
            if q == 0 and (load >= self.max_load or (shorter and load >= math.floor(shorter[-1]))):
                return True
        return False
