# SPDX-License-Identifier: BSD-3-Clause
"""What RFC 9971 (MLRsearch) fixes, implemented as written there: the arithmetic of goals,
trials and loads that does not depend on how the controller (mlrsearch.py) chooses its trials.

* the Search Goal attributes (`Goal`): loss ratio, exceed ratio, final trial duration, duration
  sum, and the optional width and initial trial duration;
* the load classification of its Appendix A (`classify`): a load is a Lower Bound, an Upper
  Bound or Undecided for a goal, from the durations of short/full-length, low/high-loss trials
  at that load;
* the goal results: Relevant Upper Bound (the smallest Upper Bound), Relevant Lower Bound (the
  largest Lower Bound below it), Conditional Throughput (its Appendix B,
  `conditional_throughput`), regular or irregular (`goal_result`; `MlrResult`, a whole
  search's).

Trial loss ratio (`trial_from_result`): RFC 9971 §4.5.5-4.5.6's, (sent - received) / sent with
the frames of every direction added (for a zero-loss goal the same as the binary search's
per-direction criterion; with a loss goal one direction may lose more than the goal's ratio).
A trial the tester could not keep at its rate (invalid) counts as loss ratio 1 (like a failed
binary search trial), and received > sent (an anomaly) too. Effective duration = trial
duration.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

LOWER, UPPER, UNDECIDED = "lower", "upper", "undecided"


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
    return classify_load(goal.loss_ratio, goal.exceed_ratio, goal.final_duration,
                     goal.duration_sum, trials)


def classify_load(loss_ratio, exceed_ratio, final_duration, duration_sum, trials) -> str:
    """classify() by the four attributes it reads, which a goal and each of its targets
    (mlrtargets.py) carry alike."""
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
# Trial loss ratio (RFC 9971 §4.5.5-4.5.6)
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
