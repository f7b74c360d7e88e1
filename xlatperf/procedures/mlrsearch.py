# SPDX-License-Identifier: BSD-3-Clause
"""MLRsearch: a multiple-loss-ratio throughput search (RFC 9971, formerly
draft-ietf-bmwg-mlrsearch), as a pure function of a trial runner.

    result = mlrsearch(run_trial, goals, min_load, max_load)

`run_trial(load, duration) -> TrialResult` performs one trial at `load` frames/s per direction
for `duration` seconds (runner.TrialSession.run_trial, or a deterministic fake in tests).

What RFC 9971 fixes, and this module implements as written there:

* the Search Goal attributes (`Goal`): loss ratio, exceed ratio, final trial duration, duration
  sum, and the optional width and initial trial duration;
* the load classification of its Appendix A (`classify`): a load is a Lower Bound, an Upper
  Bound or Undecided for a goal, from the durations of short/full-length, low/high-loss trials
  at that load;
* the goal results: Relevant Upper Bound (the smallest Upper Bound), Relevant Lower Bound (the
  largest Lower Bound below it), Conditional Throughput (its Appendix B,
  `conditional_throughput`), regular or irregular.

What it leaves to the implementation (the controller, `Search`), chosen here. Heuristics only
choose loads and trial durations; they never classify (docs/mlrsearch.md, "What the search
does"):

* Durations: each goal has a chain of targets from its initial trial duration to its final one,
  growing at most 8x per step (1 s -> 7.75 s -> 60 s); short trials only when the final trial
  is at least 4x (PROBE_RATIO) the initial one, else the chain is the final duration alone.
* Estimation: the first trial is at the maximum load with the shortest duration of the chain;
  every shorter target then only has to tell the forwarding rate at its duration (one trial at
  the rate predicted from shorter trials). Forwarding rates of lossy trials at two durations
  are extrapolated to the final duration with rate + burst / duration (a DUT with a queue).
* Final target, per goal: the boundary is estimated from the full-length trials that lost
  frames (one: its forwarding rate / (1 - goal loss ratio), a DUT with a capacity; two whose
  forwarding rates grow with the load: the loss ratio interpolated linearly, a DUT whose loss
  rises gradually), else from the extrapolated rate. A load expected to be a lower bound is
  aimed a quarter width below the estimate (or a width below an existing upper bound), then a
  load a width above the lower bound is expected to be an upper bound. A trial that surprises
  doubles the next step that way (external search); upwards the search then scouts with short
  trials until one loses too much.
* Trial durations: the final trial duration, except at a load expected to be an upper bound:
  a short trial when it alone decides that (zero exceed ratio) and short trials lose there; else
  the shortest trial that alone decides the load as an upper bound if it loses too much: for an
  exceed ratio of 0.5 over two final trials, final + initial trial duration (60 + 1 s), instead
  of a final trial and a second one. Where no loss is expected, final trials only, so that the
  exceed ratio keeps tolerating a spike.
* Spikes: a full-length trial that left a load undecided is followed up first (a short trial if
  one losing too much settles it, else a final one); an upper bound with a lower bound above it
  (loss inversion) is measured once more with a trial as long as its high-loss one.
* Goals share trials: proposals for the same load become one trial (the longest wanted); of the
  loads, the one with the shortest trial, then the lowest load, is measured.
* The search stops when every goal's final target is met: both relevant bounds within the
  goal's width (regular), the maximum load a lower bound or the minimum load an upper bound
  (irregular).

Trial loss ratio: RFC 9971 §4.5.5-4.5.6's, (sent - received) / sent with the frames of every
direction added (for a zero-loss goal the same as the binary search's per-direction
criterion; with a loss goal one direction may lose more than the goal's ratio). A trial the
tester could not keep at its rate (invalid) counts as loss ratio 1 (like a failed binary search
trial), and received > sent (an anomaly) too. Effective duration = trial duration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable

LOWER, UPPER, UNDECIDED = "lower", "upper", "undecided"

# Durations of successive targets grow by at most this factor (1 s -> 7.7 s -> 60 s).
DURATION_GROWTH = 8.0
# Short trials (the goal's initial trial duration) are used only when the final trial is at
# least this much longer: a short trial that finds no loss is wasted, and at 1 s against 2 s
# the forwarding rate of the short trial says little about the final one.
PROBE_RATIO = 4.0
# A load meant to become the lower bound is aimed this fraction of the width below the
# estimated boundary, so that a slightly optimistic estimate still gives a lower bound.
AIM_MARGIN = 0.25
# Two lossy trials whose forwarding rates differ by less than this fraction of their loads'
# difference look like a DUT with a capacity (the forwarding rate stays when the load grows);
# otherwise the loss ratio is interpolated between them.
CAPACITY_SLOPE = 0.25
# A search that has not met its goals after this many trials stops (incomplete).
DEFAULT_MAX_TRIALS = 1000


# --------------------------------------------------------------------------------------------
# Goals
# --------------------------------------------------------------------------------------------


def _pct(value: float) -> str:
    return f"{100 * value:.6g}"


@dataclass(frozen=True)
class Goal:
    """One Search Goal (RFC 9971 §4.6). Durations in seconds, ratios as fractions.

    width: the Goal Width; relative (a fraction of the upper bound) when `relative_width`, else
    absolute in frames/s; None: no width (search until the bounds are adjacent integers).
    initial_duration: the Goal Initial Trial Duration (None: the final trial duration, so no
    short trials).
    frame_timeout: seconds; a frame later than this is lost (0: none, the trial's global
    timeout only). Not RFC 9971's: the search never reads it, the measurer applies it to the
    trials (xlatperf/procedures/mlrthroughput.py), so it is part of what a trial's loss ratio
    means for the goal."""
    loss_ratio: float
    exceed_ratio: float
    final_duration: float
    duration_sum: float
    width: float | None = None
    relative_width: bool = False
    initial_duration: float | None = None
    name: str = ""
    frame_timeout: float = 0.0

    def __post_init__(self):
        checks = [
            (0 <= self.loss_ratio < 1, "loss_ratio", self.loss_ratio, "must be in [0, 1)"),
            (0 <= self.exceed_ratio < 1, "exceed_ratio", self.exceed_ratio, "must be in [0, 1)"),
            (self.final_duration > 0, "final_duration", self.final_duration, "must be > 0"),
            (self.duration_sum > 0, "duration_sum", self.duration_sum, "must be > 0"),
            (self.width is None or self.width > 0, "width", self.width, "must be > 0"),
            (self.initial_duration is None or 0 < self.initial_duration <= self.final_duration,
             "initial_duration", self.initial_duration, "must be in (0, final_duration]"),
            (self.frame_timeout >= 0, "frame_timeout", self.frame_timeout, "must be >= 0"),
        ]
        for ok, key, value, allowed in checks:
            if not ok:
                raise ValueError(f"goal {key} = {value}: {allowed}")

    @property
    def label(self) -> str:
        """The compact name RFC 9971's examples use: 60f60d0l0e = final 60 s, sum 60 s,
        loss 0 %, exceed 0 %."""
        return (f"{self.final_duration:g}f{self.duration_sum:g}d{_pct(self.loss_ratio)}l"
                f"{_pct(self.exceed_ratio)}e")

    @property
    def title(self) -> str:
        return self.name or self.label

    def to_dict(self) -> dict:
        return {"name": self.title, "label": self.label, "loss_ratio": self.loss_ratio,
                "exceed_ratio": self.exceed_ratio, "final_trial_duration": self.final_duration,
                "duration_sum": self.duration_sum, "width": self.width,
                "width_unit": None if self.width is None else
                ("relative" if self.relative_width else "fps"),
                "initial_trial_duration": self.initial_duration or self.final_duration,
                "frame_timeout": self.frame_timeout}


# --------------------------------------------------------------------------------------------
# Classification (RFC 9971 App. A) and conditional throughput (App. B)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Trial:
    """What the classification needs of one trial: its duration (= effective duration) and
    loss ratio; the forwarding rate only steers the search."""
    duration: float
    loss_ratio: float
    forwarding_rate: float = 0.0


def _sums(goal_loss: float, final_duration: float, trials: Iterable[Trial]):
    full_low = full_high = short_low = short_high = 0.0
    for t in trials:
        high = t.loss_ratio > goal_loss
        if t.duration >= final_duration:
            if high:
                full_high += t.duration
            else:
                full_low += t.duration
        elif high:
            short_high += t.duration
        else:
            short_low += t.duration
    return full_low, full_high, short_low, short_high


def classify(goal: Goal, trials: Iterable[Trial]) -> str:
    """LOWER, UPPER or UNDECIDED: the class of a load with these trials for `goal`."""
    return _classify(goal.loss_ratio, goal.exceed_ratio, goal.final_duration,
                     goal.duration_sum, trials)


def _classify(loss_ratio, exceed_ratio, final_duration, duration_sum, trials) -> str:
    full_low, full_high, short_low, short_high = _sums(loss_ratio, final_duration, trials)
    coefficient = exceed_ratio / (1.0 - exceed_ratio)
    balancing = short_low * coefficient
    positive_excess = max(0.0, short_high - balancing)
    effect_high = full_high + positive_excess
    effect_full = full_low + effect_high
    effect_whole = max(effect_full, duration_sum)
    quantile = effect_whole * exceed_ratio
    pessimistic_is_lower = effect_whole - full_low <= quantile
    optimistic_is_lower = effect_high <= quantile
    if pessimistic_is_lower and optimistic_is_lower:
        return LOWER
    if not pessimistic_is_lower and not optimistic_is_lower:
        return UPPER
    return UNDECIDED


def conditional_throughput(goal: Goal, load: float, trials: Iterable[Trial]) -> float:
    """RFC 9971 App. B: the load times (1 - q), q the duration-weighted loss quantile of the
    full-length trials at the load (q = 1 when they do not cover the goal's duration sum)."""
    full = sorted((t for t in trials if t.duration >= goal.final_duration),
                  key=lambda t: t.loss_ratio)
    full_low = sum(t.duration for t in full if t.loss_ratio <= goal.loss_ratio)
    full_high = sum(t.duration for t in full if t.loss_ratio > goal.loss_ratio)
    remaining = max(goal.duration_sum, full_low + full_high) * (1.0 - goal.exceed_ratio)
    quantile_loss = 1.0
    for t in full:
        remaining -= t.duration
        if remaining <= 0:
            quantile_loss = t.loss_ratio
            break
    return load * (1.0 - quantile_loss)


# --------------------------------------------------------------------------------------------
# Targets: the chain from the initial trial duration to the goal's own attributes
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    goal_index: int
    level: int                 # 0 = coarsest
    final: bool                # the goal's own attributes
    duration: float            # trials of at least this long are full-length for the target
    duration_sum: float
    loss_ratio: float
    exceed_ratio: float
    width: float | None
    relative_width: bool

    def classify(self, trials: Iterable[Trial]) -> str:
        return _classify(self.loss_ratio, self.exceed_ratio, self.duration, self.duration_sum,
                         trials)

    def narrow_enough(self, lower: int, upper: int) -> bool:
        if upper - lower <= 1:     # integer loads: nothing lies between
            return True
        if self.width is None:
            return False
        allowed = self.width * upper if self.relative_width else self.width
        return upper - lower <= allowed


def targets_for(goal: Goal, goal_index: int = 0) -> list[Target]:
    """The goal's targets, coarsest first; the last one carries the goal's attributes."""
    initial = goal.initial_duration or goal.final_duration
    steps = 0
    if initial * PROBE_RATIO <= goal.final_duration:
        steps = math.ceil(math.log(goal.final_duration / initial) / math.log(DURATION_GROWTH)
                          - 1e-9)
    targets = []
    for level in range(steps + 1):
        final = level == steps
        duration = (goal.final_duration if final else
                    initial * (goal.final_duration / initial) ** (level / steps))
        width = goal.width
        if width is not None and not final:
            width = width * 2 ** (steps - level)
            if goal.relative_width:
                width = min(width, 0.5)
        targets.append(Target(goal_index=goal_index, level=level, final=final,
                              duration=duration,
                              duration_sum=goal.duration_sum if final else duration,
                              loss_ratio=goal.loss_ratio, exceed_ratio=goal.exceed_ratio,
                              width=width, relative_width=goal.relative_width))
    return targets


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


@dataclass
class GoalResult:
    goal: Goal
    relevant_lower_bound: int | None
    relevant_upper_bound: int | None
    conditional_throughput: float | None
    regular: bool
    irregular_reason: str | None = None

    def to_dict(self) -> dict:
        return {"goal": self.goal.title, **self.goal.to_dict(),
                "relevant_lower_bound": self.relevant_lower_bound,
                "relevant_upper_bound": self.relevant_upper_bound,
                "conditional_throughput": self.conditional_throughput,
                "regular": self.regular, "irregular_reason": self.irregular_reason}


def relevant_bounds(classes: dict[int, str]) -> tuple[int | None, int | None]:
    """(Relevant Lower Bound, Relevant Upper Bound) from each load's class: the smallest upper
    bound, and the largest lower bound below it (RFC 9971 §5.3: loss inversion is resolved
    conservatively)."""
    uppers = [load for load, c in classes.items() if c == UPPER]
    upper = min(uppers) if uppers else None
    lowers = [load for load, c in classes.items()
              if c == LOWER and (upper is None or load < upper)]
    return (max(lowers) if lowers else None), upper


def goal_result(goal: Goal, by_load: dict[int, list[Trial]], min_load: int,
                max_load: int) -> GoalResult:
    classes = {load: classify(goal, trials) for load, trials in by_load.items()}
    lower, upper = relevant_bounds(classes)
    ct = conditional_throughput(goal, lower, by_load[lower]) if lower is not None else None
    reason = None
    if lower is not None and upper is not None:
        width_ok = goal.width is None or upper - lower <= (
            goal.width * upper if goal.relative_width else goal.width)
        if not width_ok:
            reason = "the relevant bounds are farther apart than the goal width"
    elif lower is None and upper is None:
        reason = "no load was classified"
    elif upper is None:
        reason = ("the maximum load is a lower bound" if lower == max_load
                  else "no upper bound found")
    else:
        reason = ("the minimum load is an upper bound" if upper == min_load
                  else "no lower bound found")
    return GoalResult(goal=goal, relevant_lower_bound=lower, relevant_upper_bound=upper,
                      conditional_throughput=ct, regular=reason is None,
                      irregular_reason=reason)


@dataclass
class MlrResult:
    goals: list[GoalResult]
    steps: list                    # TrialResult per trial, in order
    trials: list[tuple[int, Trial]] = field(default_factory=list)   # (load, Trial) in order
    complete: bool = True
    tester_limited: bool = False   # some trial was invalid (the tester could not keep a rate)
    stop_reason: str = "goals met"

    def to_dict(self) -> dict:
        return {"complete": self.complete, "tester_limited": self.tester_limited,
                "stop_reason": self.stop_reason,
                "goals": [g.to_dict() for g in self.goals],
                "trials": len(self.trials),
                "trial_seconds": sum(t.duration for _, t in self.trials)}


# --------------------------------------------------------------------------------------------
# The controller
# --------------------------------------------------------------------------------------------


def trial_from_result(result, duration: float) -> Trial:
    """Classification input of a TrialResult (procedures.TrialResult): RFC 9971 §4.5.5-4.5.6's
    Trial Loss Ratio, 1 - the frames forwarded over the frames sent, both added over every
    direction ("aggregates over all SUT output interfaces"); 1 for an invalid trial or one
    that received more than it sent. Forwarding rate (steering only) = the smallest
    direction's received frames per second of trial duration."""
    directions = list(result.directions.values())
    received = min((d.received for d in directions), default=0)
    forwarding_rate = min(received / duration, float(result.rate)) if duration > 0 else 0.0
    sent = sum(d.sent for d in directions)
    if (not result.valid or not directions or not all(d.sent for d in directions)
            or any(d.received > d.sent for d in directions)):
        loss = 1.0
    else:
        loss = (sent - sum(d.received for d in directions)) / sent
    return Trial(duration=duration, loss_ratio=loss, forwarding_rate=forwarding_rate)


@dataclass
class _Progress:
    targets: list[Target]
    current: int = 0            # index of the coarsest target not yet met (only advances)
    # The last final-target trial this goal asked for: (load, "low" | "high"), what the
    # estimate expected of it. A surprise (the other class) doubles the next step that way.
    pending: tuple[int, str] | None = None
    up_surprises: int = 0
    down_surprises: int = 0


def _fit_rate(t1: float, r1: float, t2: float, r2: float, duration: float) -> float:
    """Forwarding rate at `duration` of a DUT that forwards rate x duration + burst frames
    (a queue of `burst` frames drained at `rate`), fitted through (t1, r1), (t2, r2): r(t) =
    rate + burst / t. A rate that grows with the duration is taken as constant (burst >= 0)."""
    burst = max(0.0, (r1 - r2) / (1.0 / t1 - 1.0 / t2))
    return r2 - burst / t2 + burst / duration


class Search:
    """The MLRsearch controller without the measurer: `next_trial()` says what to measure,
    `add()` takes its outcome. `mlrsearch()` drives it with a trial runner."""

    def __init__(self, goals: list[Goal], min_load: int, max_load: int):
        if not goals:
            raise ValueError("MLRsearch needs at least one goal")
        if not 1 <= min_load < max_load:
            raise ValueError(f"load range [{min_load}, {max_load}]: must have 1 <= min < max")
        self.goals, self.min_load, self.max_load = list(goals), int(min_load), int(max_load)
        self.progress = [_Progress(targets_for(g, i)) for i, g in enumerate(self.goals)]
        self.by_load: dict[int, list[Trial]] = {}
        self.trials: list[tuple[int, Trial]] = []

    # -- state ----------------------------------------------------------------------------------

    def add(self, load: int, trial: Trial) -> None:
        self.by_load.setdefault(load, []).append(trial)
        self.trials.append((load, trial))

    def classes(self, target_or_goal) -> dict[int, str]:
        return {load: target_or_goal.classify(trials) if isinstance(target_or_goal, Target)
                else classify(target_or_goal, trials) for load, trials in self.by_load.items()}

    def goal_classes_at(self, load: int) -> dict[str, str]:
        """Each goal's class of `load` with the trials so far (for the trial records)."""
        trials = self.by_load.get(load, [])
        return {g.title: classify(g, trials) for g in self.goals}

    def results(self) -> list[GoalResult]:
        return [goal_result(g, self.by_load, self.min_load, self.max_load) for g in self.goals]

    # -- what the trials say about the DUT (steers the search, never classifies) ----------------

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

    def _capacity_known(self, duration: float) -> bool:
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

    # -- choosing the next trial ----------------------------------------------------------------

    def next_trial(self) -> tuple[int, float, Target] | None:
        """(load, duration, target) of the next trial, or None when every goal is met."""
        if not self.trials:
            shortest = min((p.targets[0] for p in self.progress), key=lambda t: t.duration)
            return self.max_load, shortest.duration, shortest
        proposals = [(index, p) for index, p in enumerate(self._proposal(progress)
                                                          for progress in self.progress)
                     if p is not None]
        if not proposals:
            return None
        # Goals that want the same load share one trial: the longest any of them wants (a
        # longer trial at a load serves every goal a shorter one would). Of the loads, the one
        # with the shortest trial, then the lowest load, is measured: cheap trials and
        # (mostly lossless) low loads first.
        by_load: dict[int, list] = {}
        for index, proposal in proposals:
            by_load.setdefault(proposal[0], []).append((index, proposal))
        load, wanted = min(by_load.items(),
                           key=lambda item: (max(p[1] for _, p in item[1]), item[0]))
        duration = max(p[1] for _, p in wanted)
        target = min((p for _, p in wanted if p[1] == duration),
                     key=lambda p: p[2].goal_index)[2]
        duration = max(duration, self._merged_duration(load, target.duration))
        for index, (_, _, chosen_target, expect) in wanted:
            if chosen_target.final and expect is not None:
                self.progress[index].pending = (load, expect)
        return load, duration, target

    def _merged_duration(self, load: int, final: float) -> float:
        """The longest trial another goal needs at `load` to decide it as its upper bound at
        once, where that would end its search (the load within a width above its lower bound,
        below its upper bound) and its estimate expects the load to lose too much: F + initial
        for an exceed ratio of 0.5 (_final_duration). Such a goal would otherwise measure the
        load again later (issue 30: rfc2544 + ndr-pdr through the `limit` lab, where the NDR
        took a second 4 s trial at the load a PDR-aimed 4 s trial had found lossy)."""
        longest = 0.0
        for progress in self.progress:
            other = progress.targets[progress.current]
            if not other.final or abs(other.duration - final) > 1e-9:
                continue
            lower, upper = relevant_bounds(self.classes(other))
            if (lower is None or load <= lower or load - lower > self._width_at(other, lower)
                    or (upper is not None and load >= upper)):
                continue
            p = self.estimate(other.loss_ratio, other.duration)
            if p is not None and load > p:
                longest = max(longest, self._final_duration(other, load, "high"))
        return longest

    def _proposal(self, progress: _Progress):
        """(load, duration, target, expected class or None) the goal wants next, or None when
        its final target is met."""
        while True:
            target = progress.targets[progress.current]
            wanted = (self._final_proposal(progress, target) if target.final
                      else self._estimation_proposal(target))
            if wanted is not None:
                return wanted
            if target.final:
                return None
            progress.current += 1

    def _ends(self, target: Target, lower, upper) -> bool:
        """Whether the target needs no more trials: bounds within its width, or the range
        exhausted (irregular)."""
        if lower is not None and upper is not None:
            return target.narrow_enough(lower, upper)
        if upper is None and lower is not None:
            return lower >= self.max_load
        return upper is not None and upper <= self.min_load

    def _estimation_proposal(self, target: Target):
        """A target shorter than the final one only has to tell the forwarding rate at its
        trial duration: one trial at the rate predicted from shorter trials (a lossy trial
        measures the rate, a lossless one at the predicted rate confirms it). Without any
        usable rate (every frame lost) it bisects its bracket."""
        if self._capacity_known(target.duration):
            return None
        lower, upper = relevant_bounds(self.classes(target))
        if self._ends(target, lower, upper):
            return None
        capacity = self.capacity_at(target.duration)
        if capacity is not None and capacity >= 1:
            load = min(self.max_load, max(self.min_load, math.floor(capacity)))
            if not any(abs(t.duration - target.duration) < 1e-9
                       for t in self.by_load.get(load, [])):
                return load, target.duration, target, None
        # Bisect below the lowest load where some trial (of any duration) lost too much.
        low = lower if lower is not None else self.min_load - 1
        ends = [x for x in (upper, self._lowest_high(target.loss_ratio, low)) if x is not None]
        if not ends:
            load = self.max_load if lower is None else (lower + self.max_load + 1) // 2
        else:
            load = (low + min(ends)) // 2
            if load <= low:
                load = min(ends)
        return load, target.duration, target, None

    def _resolve_pending(self, progress: _Progress, loss_ratio: float) -> None:
        """Compare the last trial at the load this goal asked for with what it expected."""
        if progress.pending is None:
            return
        load, expect = progress.pending
        progress.pending = None
        trials = self.by_load.get(load)
        if not trials:
            return
        high = trials[-1].loss_ratio > loss_ratio
        if expect == "high" and not high:
            progress.up_surprises, progress.down_surprises = progress.up_surprises + 1, 0
        elif expect == "low" and high:
            progress.up_surprises, progress.down_surprises = 0, progress.down_surprises + 1
        else:
            progress.up_surprises = progress.down_surprises = 0

    def _final_proposal(self, progress: _Progress, target: Target):
        """The goal's own attributes. Aim at the estimated boundary p: a load expected to be a
        lower bound a quarter width below p, then one expected to be an upper bound a width
        above the lower bound; when a trial surprises, the next step that way doubles
        (external search). Loads left undecided between the bounds are measured again first."""
        goal = self.goals[target.goal_index]
        classes = self.classes(target)
        lower, upper = relevant_bounds(classes)
        self._resolve_pending(progress, goal.loss_ratio)
        p = self.estimate(goal.loss_ratio, target.duration)
        if p is not None and lower is not None and p <= lower:
            # A full-length trial passed above the estimate: what shorter trials say instead
            # (after scouting upwards, the forwarding rate of the first short trial that lost).
            shorter = self.capacity_at(target.duration, passes=False)
            if shorter is not None and shorter / (1.0 - goal.loss_ratio) > lower:
                p = shorter / (1.0 - goal.loss_ratio)
        again = self._inverted_upper(target, classes, upper)
        if again is not None:
            return again
        if self._ends(target, lower, upper):
            return None
        load = self._aim(progress, target, lower, upper, p)
        # A load between the bounds that a full-length trial left undecided is measured again
        # first (a rare spike must not decide it), if it can matter: with no lower bound yet,
        # when it is not more than a width above the estimate (further up, the bounds the
        # estimate leads to end the search below it; a surprise moves the estimate and brings
        # it back); else within a width above the lower bound or not above the aim. Loads with
        # short trials only are the estimation trials'.
        width = self._width_at(target, lower if lower is not None else load)
        undecided = sorted(
            u for u, c in classes.items() if c == UNDECIDED
            and (lower < u <= max(load, lower + width) if lower is not None
                 else p is None or u <= p + width)
            and (upper is None or u < upper)
            and any(t.duration >= target.duration - 1e-9 for t in self.by_load[u]))
        if undecided:
            load = undecided[0]
            expect = "high" if p is not None and load > p else "low"
            # It lost too much once: a short trial that loses too much too settles it as an
            # upper bound; one that does not points to a spike, and a final trial follows. So
            # only where short trials are expected to lose too much (their forwarding rate
            # below the load): a DUT with a queue passes short trials a little above its
            # limit, and a short trial that passes decides nothing (before: two of eight
            # trials of rfc2544 + ndr-pdr through the `limit` lab, issue 30).
            trials = self.by_load[load]
            shortest = progress.targets[0].duration
            capacity = self.capacity_at(shortest)
            if (shortest < target.duration and any(t.loss_ratio > goal.loss_ratio for t in trials)
                    and target.classify(trials + [Trial(shortest, 1.0)]) == UPPER
                    and capacity is not None and load * (1.0 - goal.loss_ratio) > capacity):
                return load, shortest, target, expect
            return load, self._final_duration(target, load, expect), target, expect
        expect = "high" if p is not None and load > p else "low"
        return load, self._final_duration(target, load, expect), target, expect

    def _inverted_upper(self, target: Target, classes: dict[int, str], upper):
        """Loss inversion: a lower bound above the relevant upper bound. The upper bound may
        rest on a spike, so it is measured once more, with a trial as long as its longest
        high-loss one, if one such trial without loss would make it a lower bound (never for
        a zero exceed ratio, where any trial with loss decides)."""
        if upper is None or not any(c == LOWER and load > upper for load, c in classes.items()):
            return None
        trials = self.by_load[upper]
        high = [t.duration for t in trials if t.loss_ratio > target.loss_ratio]
        if not high or len(high) > len(trials) - len(high) + 1:
            return None           # measured again already, and it lost too much again
        duration = max(high)
        if target.classify(trials + [Trial(duration, 0.0)]) != LOWER:
            return None
        return upper, duration, target, "low"

    def _lowest_high(self, loss_ratio: float, above: int) -> int | None:
        """The lowest load above `above` with a trial (of any duration) that lost more than
        `loss_ratio`."""
        return min((load for load, trials in self.by_load.items() if load > above
                    and any(t.loss_ratio > loss_ratio for t in trials)), default=None)

    def _aim(self, progress: _Progress, target: Target, lower, upper, p) -> int:
        loss_ratio = target.loss_ratio
        width = self._width_at(target, lower if lower is not None else (
            upper if upper is not None else (p or self.max_load)))
        floor_ = lower if lower is not None else self.min_load - 1    # exclusive bounds
        ceiling = upper if upper is not None else self.max_load + 1
        if p is not None:
            p = min(max(p, floor_ + 1), ceiling - 1)
        margin = math.floor(AIM_MARGIN * width)
        if lower is not None and upper is not None and upper - lower <= 2 * width:
            # Any load in [upper - width, lower + width] ends the search either way.
            centre = math.floor(p - margin) if p is not None else (lower + upper) // 2
            load = min(max(centre, math.ceil(upper - width)), math.floor(lower + width))
        elif lower is None or (p is not None and p - lower > width):
            if p is None:
                # Nothing told a forwarding rate yet (every frame lost): bisect below the
                # lowest load where a trial of any duration lost too much.
                high = self._lowest_high(loss_ratio, floor_)
                if upper is not None:
                    high = upper if high is None else min(high, upper)
                load = self.max_load if high is None else (floor_ + high) // 2
                if high is not None and load <= floor_:
                    load = high
            else:
                load = math.floor(p - margin)
                # As high as the estimate allows: a width below the upper bound (or a load
                # where some trial already lost too much), which may then end the search.
                hint = upper if upper is not None else self._lowest_high(loss_ratio, load)
                if hint is not None and hint - width <= p:
                    load = max(load, math.ceil(hint - width))
                if progress.down_surprises and upper is not None:
                    load = min(load, math.floor(
                        upper - width * 2 ** (progress.down_surprises - 1)))
        else:
            load = lower + max(1, math.floor(width * 2 ** progress.up_surprises))
            # a load on the way where some trial already lost too much needs fewer seconds
            hint = self._lowest_high(loss_ratio, lower)
            if hint is not None and hint < load:
                load = hint
        return min(max(load, floor_ + 1, self.min_load), ceiling - 1, self.max_load)

    def _final_duration(self, target: Target, load: int, expect: str) -> float:
        """The final trial duration, except at a load expected to be an upper bound: there a
        short trial (the goal's initial trial duration) when it alone would make the load an
        upper bound and the forwarding rate of short trials says it will lose too much (zero
        exceed ratio); else the shortest trial that alone decides the load as an upper bound
        if it loses too much: final + initial trial duration for an exceed ratio of 0.5 over
        two final trials, instead of a final trial and then another one."""
        final = target.duration
        if expect != "high":
            return final
        goal = self.goals[target.goal_index]
        progress = self.progress[target.goal_index]
        trials = self.by_load.get(load, [])
        shortest = progress.targets[0].duration
        if shortest < final and not any(t.duration < final for t in trials):
            if progress.up_surprises:
                # The estimate was too low: scout upwards with short trials (external
                # search) until one loses too much; its forwarding rate is the new estimate.
                return shortest
            if target.classify(trials + [Trial(shortest, 1.0)]) == UPPER:
                capacity = self.capacity_at(shortest)
                if capacity is not None and load * (1.0 - goal.loss_ratio) > capacity:
                    return shortest
        extra = goal.initial_duration or final
        for duration in (final, final + extra):
            if target.classify(trials + [Trial(duration, 1.0)]) == UPPER:
                return duration
        return final

    def _width_at(self, target: Target, load: float) -> float:
        if target.width is None:
            return 1.0                        # no width: bounds on adjacent integers
        return max(1.0, target.width * load if target.relative_width else target.width)


RunTrial = Callable[[int, float], object]


def mlrsearch(run_trial: RunTrial, goals: list[Goal], min_load: int, max_load: int, *,
              steps: list | None = None, notify: Callable[[dict], None] | None = None,
              on_trial: Callable[[int, float, object, Search], None] | None = None,
              max_trials: int = DEFAULT_MAX_TRIALS, search: Search | None = None) -> MlrResult:
    """Run the search: `run_trial(load, duration)` returns a TrialResult (procedures.py).

    steps: list that receives every TrialResult as soon as it returns (kept on Ctrl-C).
    notify(context): called before each trial with load, duration, goal and level.
    on_trial(load, duration, result, search): called after each trial was added.
    search: a Search of these goals and loads to use (so a caller can inspect it while it
    runs); by default a new one.
    """
    search = Search(goals, min_load, max_load) if search is None else search
    steps = [] if steps is None else steps
    stop_reason, complete = "goals met", True
    while True:
        chosen = search.next_trial()
        if chosen is None:
            break
        if len(search.trials) >= max_trials:
            stop_reason, complete = f"trial limit ({max_trials}) reached", False
            break
        load, duration, target = chosen
        if notify is not None:
            notify({"rate": load, "duration": duration,
                    "goal": search.goals[target.goal_index].title, "level": target.level,
                    "final": target.final})
        result = run_trial(load, duration)
        steps.append(result)
        search.add(load, trial_from_result(result, duration))
        if on_trial is not None:
            on_trial(load, duration, result, search)
    return MlrResult(goals=search.results(), steps=steps, trials=list(search.trials),
                     complete=complete,
                     tester_limited=any(not getattr(s, "valid", True) for s in steps),
                     stop_reason=stop_reason)
