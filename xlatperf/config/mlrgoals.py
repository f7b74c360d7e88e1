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
