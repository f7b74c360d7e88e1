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

What it leaves to the implementation (the controller, `Search`), chosen here:

* The first trial is at the maximum load with the shortest initial trial duration; its
  forwarding rate is the first estimate of where the bounds are.
* Each goal has a chain of targets from coarse to fine: the initial trial duration and a wide
  width first, the goal's own final trial duration, duration sum and width last. Durations grow
  geometrically (at most 4x per step); each intermediate target has twice the width of the next
  one and a duration sum of one trial at its duration.
* For each goal the current target is the coarsest one not yet met (targets are not revisited
  once passed). A target proposes: more trials at the lowest undecided load between its
  relevant bounds; else, without a lower bound, a load below the upper bound (the forwarding
  rate measured there, or an external search step that doubles each time); without an upper
  bound, an external search step upwards; else the midpoint of the bounds while they are
  wider than the target's width. Of all goals' proposals the one with the shortest trial
  duration, then the smallest load, is measured: cheap trials and small loads first.
* The search stops when every goal's final target is met: both relevant bounds within the
  goal's width (regular), the maximum load a lower bound or the minimum load an upper bound
  (irregular).

Trial loss ratio: the worst direction's (sent - received) / sent, like the binary search's
pass criterion; RFC 9971 aggregates over all outputs, which is never stricter. A trial the
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
# A new load is probed with a short trial only when the target's trial is this much longer.
PROBE_RATIO = 4.0
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
    short trials)."""
    loss_ratio: float
    exceed_ratio: float
    final_duration: float
    duration_sum: float
    width: float | None = None
    relative_width: bool = False
    initial_duration: float | None = None
    name: str = ""

    def __post_init__(self):
        checks = [
            (0 <= self.loss_ratio < 1, "loss_ratio", self.loss_ratio, "must be in [0, 1)"),
            (0 <= self.exceed_ratio < 1, "exceed_ratio", self.exceed_ratio, "must be in [0, 1)"),
            (self.final_duration > 0, "final_duration", self.final_duration, "must be > 0"),
            (self.duration_sum > 0, "duration_sum", self.duration_sum, "must be > 0"),
            (self.width is None or self.width > 0, "width", self.width, "must be > 0"),
            (self.initial_duration is None or 0 < self.initial_duration <= self.final_duration,
             "initial_duration", self.initial_duration, "must be in (0, final_duration]"),
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
                "initial_trial_duration": self.initial_duration or self.final_duration}


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
    if initial < goal.final_duration:
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
    """Classification input of a TrialResult (procedures.TrialResult): worst direction's loss
    ratio, 1 for an invalid trial or one that received more than it sent; forwarding rate =
    the smallest direction's received frames per second of trial duration."""
    directions = list(result.directions.values())
    received = min((d.received for d in directions), default=0)
    forwarding_rate = min(received / duration, float(result.rate)) if duration > 0 else 0.0
    ratios = [d.loss_ratio for d in directions]
    if (not result.valid or not directions or None in ratios
            or any(d.received > d.sent for d in directions)):
        loss = 1.0
    else:
        loss = max(ratios)
    return Trial(duration=duration, loss_ratio=loss, forwarding_rate=forwarding_rate)


@dataclass
class _Progress:
    targets: list[Target]
    current: int = 0            # index of the coarsest target not yet met (only advances)
    up_step: dict = field(default_factory=dict)     # per target level: next external steps
    down_step: dict = field(default_factory=dict)


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

    # -- choosing the next trial ----------------------------------------------------------------

    def next_trial(self) -> tuple[int, float, Target] | None:
        """(load, duration, target) of the next trial, or None when every goal is met."""
        if not self.trials:
            shortest = min((p.targets[0] for p in self.progress), key=lambda t: t.duration)
            return self.max_load, shortest.duration, shortest
        proposals = [p for p in (self._proposal(progress) for progress in self.progress)
                     if p is not None]
        if not proposals:
            return None
        load, duration, target, commit = min(proposals,
                                             key=lambda p: (p[1], p[0], p[2].goal_index))
        commit()   # only the chosen proposal's external search step counts as taken
        return load, duration, target

    def _proposal(self, progress: _Progress):
        while True:
            target = progress.targets[progress.current]
            wanted = self._target_load(progress, target)
            if wanted is not None:
                load, commit = wanted
                return load, self._duration_for(load, target), target, commit
            if target.final:
                return None
            progress.current += 1

    def _target_load(self, progress: _Progress, target: Target):
        """(load, commit) for the load the target wants measured next, or None when it is met;
        commit() records the external search step as taken."""
        classes = self.classes(target)
        lower, upper = relevant_bounds(classes)
        undecided = sorted(load for load, c in classes.items() if c == UNDECIDED
                           and (lower is None or load > lower)
                           and (upper is None or load < upper))
        level = target.level

        def reset():
            progress.up_step.pop(level, None)
            progress.down_step.pop(level, None)

        if undecided:
            return undecided[0], (lambda: None)
        width = self._width_at(target, upper if upper is not None else lower or self.max_load)
        if upper is None:
            if lower is None:       # happens only before the first trial
                return self.max_load, (lambda: None)
            if lower >= self.max_load:
                return None         # irregular: the maximum load is a lower bound
            step = progress.up_step.get(level, width)

            def commit_up():
                progress.up_step[level] = 2 * step
                progress.down_step.pop(level, None)
            return min(self.max_load, lower + max(1, math.ceil(step))), commit_up
        if lower is None:
            if upper <= self.min_load:
                return None         # irregular: the minimum load is an upper bound
            # The first move down goes to the forwarding rate measured at the upper bound (the
            # maximum load's at the start: MLRsearch's initial estimate); later moves take
            # external search steps that double each time, or jump further down to the
            # forwarding rate, so the search never crawls.
            estimate = self._forwarding_estimate(upper, target.loss_ratio)
            first = level not in progress.down_step
            step = progress.down_step.get(level, width)
            candidate = upper - max(1, math.ceil(step))
            if estimate is not None and (first or estimate < candidate):
                candidate = estimate

            def commit_down():
                progress.down_step[level] = step if first else 2 * step
                progress.up_step.pop(level, None)
            return max(self.min_load, candidate), commit_down
        if target.narrow_enough(lower, upper):
            return None
        middle = (lower + upper) // 2
        estimate = self._forwarding_estimate(upper, target.loss_ratio)
        if estimate is not None and lower < estimate < upper and estimate not in self.by_load:
            return estimate, (lambda: None)     # where the upper bound's forwarding rate says
        if estimate is not None and estimate <= lower:
            # The upper bound forwards no more than the lower bound takes: the boundary is
            # probably just above the lower bound. External search upwards, capped at the
            # middle, so that it never costs more than bisection.
            step = progress.up_step.get(level, width)
            if lower + step < middle:
                def commit_up():
                    progress.up_step[level] = 2 * step
                return lower + max(1, math.ceil(step)), commit_up
        return middle, reset

    def _duration_for(self, load: int, target: Target) -> float:
        """A load nothing was measured at is probed with the goal's initial trial duration
        first: a short high-loss trial may settle it (an upper bound for a zero-exceed goal,
        half the high-loss time needed otherwise) before a full-length trial is spent on it.
        Only where the probe costs at most a quarter of the trial it may save: a probe that
        finds no loss is wasted."""
        first = self.progress[target.goal_index].targets[0]
        if load in self.by_load or target.duration < PROBE_RATIO * first.duration:
            return target.duration
        return first.duration

    def _width_at(self, target: Target, load: int) -> float:
        if target.width is None:
            return max(1.0, load / 64)      # no width: external steps of 1/64 of the load
        return max(1.0, target.width * load if target.relative_width else target.width)

    def _forwarding_estimate(self, load: int, loss_ratio: float) -> int | None:
        """Where the forwarding rate measured at `load` (the lowest, if several) puts the
        boundary of a goal with this loss ratio: rate / (1 - loss_ratio); None unless below
        the load."""
        rates = [t.forwarding_rate for t in self.by_load.get(load, [])]
        if not rates:
            return None
        estimate = math.floor(min(rates) / (1.0 - loss_ratio))
        return estimate if estimate < load else None


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
