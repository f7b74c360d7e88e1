# SPDX-License-Identifier: BSD-3-Clause
"""MLRsearch goals in the configuration: presets, user goals, and the report's list of
deviations from the RFC 2544 trial procedure (docs/mlrsearch.md).

    [throughput]
    mode = "mlrsearch"
    preset = "rfc2544,ndr-pdr"
    goals = [{name = "pdr1", loss_ratio = 0.01, exceed_ratio = 0.5, final_duration = 60,
              duration_sum = 120}]

Preset goals take their final trial duration from trial.duration, their width from
throughput.error (frames/s) and their initial trial duration from throughput.initial_duration,
so `--duration 2` scales them exactly like the binary search.
"""

from .errors import ConfigError
from .mlrsearch import Goal, targets_for

PDR_LOSS_RATIO = 0.005      # CSIT's PDR: 0.5 %
PRESETS = ("rfc2544", "ndr-pdr")

# Goal table keys: (required, description of what is allowed)
GOAL_KEYS = {
    "name": "a string (\"\" = the attribute label, e.g. 60f120d0l50e)",
    "loss_ratio": "a number in [0, 1)",
    "exceed_ratio": "a number in [0, 1)",
    "final_duration": "a number > 0 (seconds)",
    "duration_sum": "a number > 0 (seconds)",
    "width": "a number in [0, 1) (relative to the upper bound; 0 = not relative)",
    "width_fps": "an integer >= 0 (frames/s; 0 = throughput.error unless width is set)",
    "initial_duration": "a number >= 0 (seconds, at most final_duration; 0 = final_duration)",
}
REQUIRED = ("loss_ratio", "exceed_ratio", "final_duration", "duration_sum")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _goal_error(index: int, key: str, value, allowed: str) -> ConfigError:
    from .config import _show  # the config's way of printing values
    return ConfigError(f"throughput.goals[{index}].{key} = {_show(value)}: must be {allowed}")


def check_preset(value) -> str:
    """"rfc2544", "rfc2544,ndr-pdr" (or "+"), a list of names, or "" / [] for none ->
    the normalised comma-separated string."""
    if isinstance(value, str):
        names = [n.strip() for n in value.replace("+", ",").split(",") if n.strip()]
    elif isinstance(value, list) and all(isinstance(n, str) for n in value):
        names = [n.strip() for n in value]
    else:
        names = None
    if names is None or any(n not in PRESETS for n in names):
        raise ValueError(f"must be \"\" or a comma-separated list of {', '.join(PRESETS)}, "
                         f"e.g. \"rfc2544,ndr-pdr\"")
    return ",".join(dict.fromkeys(names))


def check_goals(value) -> list[dict]:
    """A list of goal tables -> normalised tables (every key present, floats for seconds)."""
    if not isinstance(value, list) or not all(isinstance(g, dict) for g in value):
        raise ValueError("must be a list of goal tables, e.g. [{loss_ratio = 0, exceed_ratio = "
                         "0.5, final_duration = 60, duration_sum = 120}]")
    goals = []
    for index, table in enumerate(value):
        for key in table:
            if key == "frame_timeout":
                raise ConfigError(
                    f"throughput.goals[{index}].frame_timeout = {table[key]!r}: not supported: "
                    "the engine measures no per-frame delay yet (a frame is lost only when it "
                    "misses the trial's timeout), so goals cannot have a per-frame timeout")
            if key not in GOAL_KEYS:
                raise ConfigError(f"throughput.goals[{index}].{key}: unknown goal key "
                                  f"(keys: {', '.join(GOAL_KEYS)})")
        for key in REQUIRED:
            if key not in table:
                raise ConfigError(f"throughput.goals[{index}].{key}: missing (a goal needs "
                                  f"{', '.join(REQUIRED)})")
        goal = {"name": table.get("name", ""), "width": 0.0, "width_fps": 0,
                "initial_duration": 0.0}
        name = goal["name"]
        if not isinstance(name, str):
            raise _goal_error(index, "name", name, GOAL_KEYS["name"])
        for key in ("loss_ratio", "exceed_ratio", "width"):
            if key in table:
                v = table[key]
                if not _number(v) or not 0 <= v < 1:
                    raise _goal_error(index, key, v, GOAL_KEYS[key])
                goal[key] = float(v)
        for key in ("final_duration", "duration_sum"):
            v = table[key]
            if not _number(v) or v <= 0:
                raise _goal_error(index, key, v, GOAL_KEYS[key])
            goal[key] = float(v)
        if "width_fps" in table:
            v = table["width_fps"]
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise _goal_error(index, "width_fps", v, GOAL_KEYS["width_fps"])
            goal["width_fps"] = v
        if goal["width"] and goal["width_fps"]:
            raise _goal_error(index, "width_fps", goal["width_fps"],
                              "0 when width (relative) is set: a goal has one width")
        if "initial_duration" in table:
            v = table["initial_duration"]
            if not _number(v) or not 0 <= v <= goal["final_duration"]:
                raise _goal_error(index, "initial_duration", v,
                                  f"a number in [0, {goal['final_duration']:g}] (seconds, at most "
                                  "final_duration; 0 = final_duration)")
            goal["initial_duration"] = float(v)
        goals.append({key: goal[key] for key in GOAL_KEYS})
    return goals


def preset_goals(name: str, config: dict) -> list[Goal]:
    final = config["trial"]["duration"]
    initial = min(config["throughput"]["initial_duration"], final)
    width = config["throughput"]["error"]
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
    throughput = config["throughput"]
    goals = [g for name in filter(None, throughput["preset"].split(","))
             for g in preset_goals(name, config)]
    for table in throughput["goals"]:
        if table["width"]:
            width, relative = table["width"], True
        else:
            width, relative = table["width_fps"] or throughput["error"], False
        goals.append(Goal(table["loss_ratio"], table["exceed_ratio"], table["final_duration"],
                          table["duration_sum"], width=width, relative_width=relative,
                          initial_duration=table["initial_duration"] or None,
                          name=table["name"]))
    return goals


def deviations(config: dict, goals: list[Goal] | None = None) -> list[str]:
    """Every way the trials differ from RFC 2544's trial procedure (§23, §24, §26.1), for the
    report. goals None: the binary search (trial.duration, throughput.loss_tolerance)."""
    trial = config["trial"]
    found = []
    if goals is None:
        if trial["duration"] < 60:
            found.append(f"trials of {trial['duration']:g} s instead of at least 60 s "
                         "(RFC 2544 §24)")
        tolerance = config["throughput"]["loss_tolerance"]
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
    if trial["timeout"] < 2:
        found.append(f"waits {trial['timeout']:g} s for late frames after sending instead of "
                     "2 s (RFC 2544 §23 d)")
    if trial["finish_early"]:
        found.append("stops receiving as soon as every sent frame has arrived instead of "
                     f"always waiting {trial['timeout']:g} s (RFC 2544 §23 d; a trial with "
                     "loss waits the whole time)")
    if trial["pause"] < 5:
        found.append(f"pauses {trial['pause']:g} s between trials instead of at least 5 s "
                     "(RFC 2544 §23 e)")
    return found
