# SPDX-License-Identifier: BSD-3-Clause
"""MLRsearch's controller: a multiple-loss-ratio throughput search (RFC 9971, formerly
draft-ietf-bmwg-mlrsearch), as a pure function of a trial runner.

    result = mlrsearch(run_trial, goals, min_load, max_load)

`run_trial(load, duration) -> TrialResult` performs one trial at `load` frames/s per direction
for `duration` seconds (runner.TrialSession.run_trial, or a deterministic fake in tests).

What RFC 9971 fixes (goals, the load classification of its Appendix A, the goal results and
the trial loss ratio) is in mlrclassify.py, implemented as written there. What it leaves to
the implementation (the controller, `Search`) is chosen here, with each goal's targets from
mlrtargets.py and the estimates of mlrestimate.py. Heuristics only choose loads and trial
durations; they never classify (docs/mlrsearch.md, "What the search does"):

* Durations: each goal has a chain of targets from its initial trial duration to its
  final one (mlrtargets.py).
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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from .mlrclassify import (LOWER, UNDECIDED, UPPER, Goal, GoalResult, MlrResult, Trial, classify,
                          goal_result, relevant_bounds, trial_from_result)
from .mlrestimate import TrialHistory
from .mlrtargets import Target, targets_for

# A load meant to become the lower bound is aimed this fraction of the width below the
# estimated boundary, so that a slightly optimistic estimate still gives a lower bound.
AIM_MARGIN = 0.25
# A search that has not met its goals after this many trials stops (incomplete).
DEFAULT_MAX_TRIALS = 1000


@dataclass
class _Progress:
    targets: list[Target]
    current: int = 0            # index of the coarsest target not yet met (only advances)
    # The last final-target trial this goal asked for: (load, "low" | "high"), what the
    # estimate expected of it. A surprise (the other class) doubles the next step that way.
    pending: tuple[int, str] | None = None
    up_surprises: int = 0
    down_surprises: int = 0


class Search(TrialHistory):
    """The MLRsearch controller without the measurer: `next_trial()` says what to measure,
    `add()` takes its outcome. `mlrsearch()` drives it with a trial runner. The trials and
    what they say about the DUT are TrialHistory's (mlrestimate.py); this class chooses."""

    def __init__(self, goals: list[Goal], min_load: int, max_load: int):
        if not goals:
            raise ValueError("MLRsearch needs at least one goal")
        if not 1 <= min_load < max_load:
            raise ValueError(f"load range [{min_load}, {max_load}]: must have 1 <= min < max")
        super().__init__(min_load, max_load)
        self.goals = list(goals)
        self.progress = [_Progress(targets_for(g, i)) for i, g in enumerate(self.goals)]

    # -- the goals' classes and results ---------------------------------------------------------

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
        if self.capacity_known(target.duration):
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
