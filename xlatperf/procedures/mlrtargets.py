# SPDX-License-Identifier: BSD-3-Clause
"""MLRsearch's targets, a choice RFC 9971 leaves to the implementation: each goal's chain from
its initial trial duration to its own attributes, met one after the other by the controller
(mlrsearch.py).

Each goal has a chain of targets from its initial trial duration to its final one, growing at
most 8x per step (1 s -> 7.75 s -> 60 s); short trials only when the final trial is at least 4x
(PROBE_RATIO) the initial one, else the chain is the final duration alone. A target below the
final one has its trial duration as its duration sum and the goal's width doubled per step
below the final (a relative width at most one half).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from .mlrclassify import Goal, Trial, classify_load

# Durations of successive targets grow by at most this factor (1 s -> 7.7 s -> 60 s).
DURATION_GROWTH = 8.0
# Short trials (the goal's initial trial duration) are used only when the final trial is at
# least this much longer: a short trial that finds no loss is wasted, and at 1 s against 2 s
# the forwarding rate of the short trial says little about the final one.
PROBE_RATIO = 4.0


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
        return classify_load(self.loss_ratio, self.exceed_ratio, self.duration,
                             self.duration_sum, trials)

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
