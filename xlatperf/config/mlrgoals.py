# SPDX-License-Identifier: BSD-3-Clause
"""MLRsearch goals in the configuration: presets, user goals, and the report's list of
deviations from the RFC 2544 trial procedure (docs/mlrsearch.md).

    [throughput]
    mode = "mlrsearch"
    preset = "rfc2544,ndr-pdr"
    goals = [{name = "pdr1", loss_ratio = 0.01, exceed_ratio = 0.5, final_duration = 60,
              duration_sum = 120}]

Preset goals take their final trial duration from trial.duration, their width from
throughput.error (frames/s), their initial trial duration from throughput.initial_duration and
their per-frame timeout from trial.frame_timeout, so `--duration 2` scales them exactly like the
binary search.
"""

from ..util.errors import ConfigError, show_value

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
    "frame_timeout": "a number >= 0 (seconds: a frame later than this counts as lost; 0 = none, "
                     "the global timeout only; not given = trial.frame_timeout)",
}
REQUIRED = ("loss_ratio", "exceed_ratio", "final_duration", "duration_sum")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _goal_error(index: int, key: str, value, allowed: str) -> ConfigError:
    return ConfigError(f"throughput.goals[{index}].{key} = {show_value(value)}: must be {allowed}")


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
            if key not in GOAL_KEYS:
                raise ConfigError(f"throughput.goals[{index}].{key}: unknown goal key "
                                  f"(keys: {', '.join(GOAL_KEYS)})")
        for key in REQUIRED:
            if key not in table:
                raise ConfigError(f"throughput.goals[{index}].{key}: missing (a goal needs "
                                  f"{', '.join(REQUIRED)})")
        # frame_timeout None: the goal takes trial.frame_timeout (check_frame_timeouts).
        goal = {"name": table.get("name", ""), "width": 0.0, "width_fps": 0,
                "initial_duration": 0.0, "frame_timeout": None}
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
        if table.get("frame_timeout") is not None:
            v = table["frame_timeout"]
            if not _number(v) or v < 0:
                raise _goal_error(index, "frame_timeout", v, GOAL_KEYS["frame_timeout"])
            goal["frame_timeout"] = float(v)
        goals.append({key: goal[key] for key in GOAL_KEYS})
    return goals


def frame_timeout(config: dict, goal: dict | None) -> float:
    """The per-frame timeout (s, 0 = none) of a user goal table, or of a preset's goals (None):
    the goal's frame_timeout if it has one, else trial.frame_timeout."""
    if goal is not None and goal["frame_timeout"] is not None:
        return goal["frame_timeout"]
    return config.trial.frame_timeout


def _frame_timeouts(config: dict) -> list[tuple[str, float]]:
    """(where it comes from, seconds) for each preset and user goal."""
    throughput = config.throughput
    found = [(f"preset {name}: trial.frame_timeout", frame_timeout(config, None))
             for name in filter(None, throughput.preset.split(","))]
    for index, goal in enumerate(throughput.goals):
        where = (f"throughput.goals[{index}]: trial.frame_timeout"
                 if goal["frame_timeout"] is None else
                 f"throughput.goals[{index}].frame_timeout")
        found.append((where, frame_timeout(config, goal)))
    return found


def check_frame_timeouts(config: dict, check_timeout) -> None:
    """Cross-key rule of mode = "mlrsearch": the goals' per-frame timeouts are valid values of
    trial.frame_timeout (`check_timeout`, its checker) and all the same. Every trial of the
    search serves every goal, and the engine applies one per-frame timeout to a trial; another
    timeout's late frames could be counted from the trial's delay histogram only to within a
    bucket (2^-11 of the delay, docs/delay.md), so a frame near that timeout could be classified
    wrongly. Such goals are refused rather than classified approximately."""
    timeouts = _frame_timeouts(config)
    for where, value in timeouts:
        try:
            check_timeout(value)
        except ValueError as exc:
            raise ConfigError(f"{where.split(':')[0]} = {value:g}: {exc}") from None
    first_where, first = timeouts[0]
    for where, value in timeouts[1:]:
        if value != first:
            odd, other, odd_value, other_value = (
                (where, first_where, value, first) if where.endswith(".frame_timeout")
                else (first_where, where, first, value))
            raise ConfigError(
                f"{odd.split(':')[0]} = {odd_value:g}: must be the per-frame timeout "
                f"of every goal of the search ({other} = {other_value:g}"
                f"{', none' if not other_value else ''}): the engine applies one per-frame "
                "timeout to a trial and every trial serves every goal, while the delay "
                "histogram could count another timeout's late frames only approximately "
                "(buckets of 2^-11 of the delay). Give every goal the same frame_timeout (e.g. "
                "with trial.frame_timeout), or measure such goals in separate runs")
