# SPDX-License-Identifier: BSD-3-Clause
"""The MLRsearch goals of a configuration (validated by xlatperf/config/mlrgoals.py) as search
Goals, and the report's list of deviations from the RFC 2544 trial procedure
(docs/mlrsearch.md)."""

from dataclasses import replace

from ..config.mlrgoals import frame_timeout
from .mlrclassify import Goal
from .mlrtargets import targets_for

PDR_LOSS_RATIO = 0.005      # CSIT's PDR: 0.5 %


def preset_goals(name: str, config: dict) -> list[Goal]:
    final = config.trial.duration
    initial = min(config.throughput.initial_duration, final)
    width = config.throughput.error
    if name == "rfc2544":
        # RFC 9971's RFC 2544-compliant goal: its relevant lower bound is the RFC 2544
        # throughput (60 s trials, no loss, no exceeding trial).
        return [Goal(0.0, 0.0, final, final, width=width, initial_duration=initial,
                     name="rfc2544")]
    if name == "ndr-pdr":
        # NDR and PDR (0.5 %) with TST009's "binary search with loss verification" shape:
        # exceed ratio 0.5 over a duration sum of two final trials, so one bad trial at a load
        # is outweighed by a good one.
        return [Goal(loss, 0.5, final, 2 * final, width=width, initial_duration=initial,
                     name=label)
                for label, loss in (("ndr", 0.0), ("pdr", PDR_LOSS_RATIO))]
    raise ValueError(f"unknown preset {name!r}")


def goals_from_config(config: dict) -> list[Goal]:
    """The search goals: the presets' in the order named, then the user goals."""
    throughput = config.throughput
    # The per-frame timeouts: config/mlrgoals.py says which each goal has (and made sure at
    # validation that they are all the same).
    goals = [replace(g, frame_timeout=frame_timeout(config, None))
             for name in filter(None, throughput.preset.split(","))
             for g in preset_goals(name, config)]
    for table in throughput.goals:
        if table["width"]:
            width, relative = table["width"], True
        else:
            width, relative = table["width_fps"] or throughput.error, False
        goals.append(Goal(table["loss_ratio"], table["exceed_ratio"], table["final_duration"],
                          table["duration_sum"], width=width, relative_width=relative,
                          initial_duration=table["initial_duration"] or None,
                          name=table["name"], frame_timeout=frame_timeout(config, table)))
    return goals


def search_frame_timeout(goals: list[Goal]) -> float:
    """The per-frame timeout the search's trials carry: the goals' one (seconds, 0 = none)."""
    return goals[0].frame_timeout


def deviations(config: dict, goals: list[Goal] | None = None) -> list[str]:
    """Every way the trials differ from RFC 2544's trial procedure (§23, §24, §26.1), for the
    report. goals None: the binary search (trial.duration, throughput.loss_tolerance)."""
    trial = config.trial
    found = []
    if goals is None:
        if trial.duration < 60:
            found.append(f"trials of {trial.duration:g} s instead of at least 60 s "
                         "(RFC 2544 §24)")
        tolerance = config.throughput.loss_tolerance
        if tolerance > 0:
            found.append(f"a trial passes with a loss ratio up to {tolerance:g} per direction "
                         "(RFC 2544 §26.1: no loss)")
    else:
        for goal in goals:
            label = goal.title
            if goal.final_duration < 60:
                found.append(f"goal {label}: final trials of {goal.final_duration:g} s instead "
                             "of at least 60 s (RFC 2544 §24)")
            initial = targets_for(goal)[0].duration   # no short trials below 1/4 of final
            if initial < goal.final_duration:
                found.append(f"goal {label}: search trials from {initial:g} s, shorter than the "
                             "final trials (RFC 2544 §24 allows shorter trials while searching; "
                             "the bounds rest on the trials the classification counts)")
            if goal.loss_ratio > 0:
                found.append(f"goal {label}: accepts a trial loss ratio up to "
                             f"{goal.loss_ratio:g} (RFC 2544 §26.1: no loss)")
            if goal.exceed_ratio > 0:
                found.append(f"goal {label}: a lower bound may include trials above the loss "
                             f"ratio, up to an exceed ratio of {goal.exceed_ratio:g} of the "
                             "duration sum (RFC 2544: every trial at the result passes)")
    timeout = trial.frame_timeout if goals is None else search_frame_timeout(goals)
    if timeout:
        found.append(f"a frame later than {timeout:g} s after it was sent counts as lost (the "
                     "per-frame timeout; RFC 2544 §23 d counts every frame received before the "
                     "global timeout)")
    if trial.timeout < 2:
        found.append(f"waits {trial.timeout:g} s for late frames after sending instead of "
                     "2 s (RFC 2544 §23 d)")
    if trial.finish_early:
        found.append("stops receiving as soon as every sent frame has arrived instead of "
                     f"always waiting {trial.timeout:g} s (RFC 2544 §23 d; a trial with "
                     "loss waits the whole time)")
    if trial.pause < 5:
        found.append(f"pauses {trial.pause:g} s between trials instead of at least 5 s "
                     "(RFC 2544 §23 e)")
    if trial.retakes:
        found.append(f"a trial the tester spoiled (it fell more than {trial.max_lag:g} s behind "
                     "its schedule, or its ports dropped frames) and whose loss that explains is "
                     f"taken again, up to {trial.retakes} times; every attempt is recorded "
                     "(trial.retakes)" if trial.validity == "schedule" else
                     f"a trial the tester spoiled is taken again, up to {trial.retakes} times "
                     "(trial.retakes)")
    if trial.validity == "schedule":
        found.append(f"a trial is valid when every frame was sent no more than "
                     f"{trial.max_lag:g} s after its scheduled time (trial.max_lag; RFC 2544 "
                     "§26.1 trials are at a constant rate)")
    if config.stateful.enabled:
        found.append("RFC 9693 phase 1 (and the gap) precedes every trial, and a trial whose "
                     "phase 1 did not fill the state table counts as failed (loss ratio 1 for "
                     "MLRsearch)")
    if config.dut.before_trial:
        found.append("the DUT's before_trial hook runs before every trial")
    return found
