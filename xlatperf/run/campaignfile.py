# SPDX-License-Identifier: BSD-3-Clause
"""The campaign file: parsing and validating it, and expanding it into its points, each a
procedure at one combination of the axes' values, with its effective configuration.

    from xlatperf.run.campaignfile import load_campaign
    campaign = load_campaign("tp-sizes.toml")    # every point's configuration validated

A campaign file (docs/campaigns.md):

    [campaign]
    config = "router4.toml"         # base configuration, relative to this file
    procedures = ["throughput"]     # trial | throughput | frame-loss | selftest, or RFC 9693's
                                    # connection-rate | teardown-rate | table-capacity
                                    # (outermost loop)
    repeat = 20                     # every point's repetitions (optional): output.repeat,
                                    # or the procedure's own (back_to_back.repeat, dns.repeat)
    rate = 100000                   # the trial procedure's rate (optional; also an axis "rate")

    [set]                           # overrides of the base configuration for every point
    "trial.duration" = 10

    [axes]                          # cross product, first axis outermost
    "traffic.frame_size" = [84, 128, 256, 512, 1024, 1280, 1518]
    "traffic.direction" = ["forward", "reverse", "both"]
    mix = [{"traffic.mix_n" = 1, "traffic.mix_m" = 1}, {"traffic.mix_n" = 10, "traffic.mix_m" = 9}]

    [[points]]                      # optional listed combinations (crossed with the axes)
    "traffic.frame_size" = 84

    [per_procedure.latency]         # overrides for one procedure's points only
    "trial.duration" = 120

    [campaign] testers = ["root@t1", {name = "t2", "tester.ssh" = "root@t2", ...}] shares the
    points out over several testers in parallel (run/testers.py, docs/testers.md).

latency and pdv are chained (ProcedureSpec.rate_from): each of their points is placed right
after the throughput point of the same combination, whose result gives it its rate when the
campaign runs (campaign.py).
"""

import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..config.schema import SCHEMA
from ..config.loading import is_key, validate
from ..procedures import REGISTRY
from ..util.errors import ConfigError
from ..util.files import read_toml
from .testers import Tester, parse_testers

# Every point runs through runner.run_procedure; the registry says which procedures a campaign
# may list, and which take their rate from another procedure's result at the same point.
PROCEDURE_NAMES = tuple(name for name, spec in REGISTRY.items() if spec.campaign)
RATE_AXIS = "rate"   # the trial procedure's rate (frames/s), not a configuration key


@dataclass
class Point:
    index: int                        # 1-based, in execution order
    procedure: str
    assignments: dict                 # dotted config key -> value (from [set] excluded)
    labels: dict                      # axis name -> value as shown (linked axes: their table)
    rate: int | None = None           # trial procedure's rate
    id: str = ""
    rate_from: str | None = None      # chained: the id of the point whose result is the rate

    def to_dict(self) -> dict:
        return {"index": self.index, "id": self.id, "procedure": self.procedure,
                "assignments": self.assignments, "labels": self.labels, "rate": self.rate,
                **({"rate_from": self.rate_from} if self.rate_from else {})}

    def describe(self) -> str:
        """The point as messages name it: its procedure and axis values."""
        values = ", ".join(f"{k}={v}" for k, v in self.labels.items())
        return f"{self.procedure}" + (f" {values}" if values else "")


@dataclass
class Campaign:
    path: Path | None
    base_config: Path | None
    overrides: dict                   # dotted key -> value, every point
    points: list[Point] = field(default_factory=list)
    raw: dict = field(default_factory=dict)
    per_procedure: dict = field(default_factory=dict)   # procedure -> {dotted key: value}
    testers: list[Tester] = field(default_factory=list)  # [] = the base config's one tester

    def config_for(self, point: Point, tester: Tester | None = None) -> dict:
        """The effective configuration of a point (validated), measured on `tester` (default:
        the first of campaign.testers, if any)."""
        if tester is None and self.testers:
            tester = self.testers[0]
        raw = read_toml(self.base_config) if self.base_config else {}
        for key, value in {**self.overrides, **self.per_procedure.get(point.procedure, {}),
                           **point.assignments, **(tester.overrides if tester else {})}.items():
            section, name = key.split(".", 1)
            raw.setdefault(section, {})[name] = value
        return validate(raw)


# --------------------------------------------------------------------------------------------
# Loading and expanding
# --------------------------------------------------------------------------------------------


def _flatten(table: dict, prefix: str = "") -> dict:
    """{"trial": {"duration": 1}} and {"trial.duration": 1} both -> {"trial.duration": 1}.
    Lists stay values (they are axes, or list-valued keys such as frame_loss.rates)."""
    flat = {}
    for key, value in table.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{dotted}."))
        else:
            flat[dotted] = value
    return flat


def _check_key(where: str, key: str) -> None:
    if not is_key(key):
        known = ", ".join(f"{s}.*" for s in SCHEMA)
        raise ConfigError(f"{where}: {key!r} is not a configuration key ({known}; see "
                          "docs/config.md) nor a DUT variable dut.NAME")


def _axes(table: dict, where: str) -> list[tuple[str, list[tuple[dict, object, int | None]]]]:
    """[(axis name, [(assignments, label, rate), ...]), ...] in file order.

    A config-key axis ("traffic.frame_size" = [84, 1518]) assigns that key; a named axis whose
    values are tables (mix = [{"traffic.mix_n" = 10, "traffic.mix_m" = 9}, ...]) assigns every
    key of a table together; the axis "rate" sets the trial procedure's rate."""
    axes = []
    for name, values in _axis_items(table):
        if not isinstance(values, list) or not values:
            raise ConfigError(f"{where}.{name} = {json.dumps(values)}: an axis must be a "
                              "non-empty list of values")
        entries = []
        for value in values:
            if name == RATE_AXIS:
                if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                    raise ConfigError(f"{where}.rate: {value!r}: must be a positive integer "
                                      "(frames/s)")
                entries.append(({}, value, value))
            elif isinstance(value, dict):
                assignments = _flatten(value)
                for key in assignments:
                    _check_key(f"{where}.{name}", key)
                entries.append((assignments, _label(assignments), None))
            else:
                _check_key(where, name)
                entries.append(({name: value}, value, None))
        axes.append((name, entries))
    return axes


def _axis_items(table: dict, prefix: str = ""):
    """Axis entries of [axes]: nested tables are config sections (traffic.frame_size = [...]
    written unquoted), lists are axes."""
    for key, value in table.items():
        if isinstance(value, dict):
            yield from _axis_items(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def _label(assignments: dict) -> str:
    if set(assignments) == {"traffic.mix_n", "traffic.mix_m"}:
        return f"{assignments['traffic.mix_m']}/{assignments['traffic.mix_n']}"
    return ",".join(f"{k.split('.')[-1]}={v}" for k, v in assignments.items())


def point_id(procedure: str, assignments: dict, rate: int | None) -> str:
    """A stable directory name: readable, plus a hash of everything that defines the point."""
    canonical = json.dumps([procedure, sorted(assignments.items()), rate], sort_keys=True,
                           default=str)
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:8]
    parts = [procedure] + [f"{k.split('.')[-1]}-{v}" for k, v in assignments.items()]
    if rate is not None:
        parts.append(f"rate-{rate}")
    slug = re.sub(r"[^A-Za-z0-9.=+-]+", "_", "_".join(str(p) for p in parts))[:80]
    return f"{slug}_{digest}"


def parse_campaign(raw: dict, path: Path | None = None) -> Campaign:
    """Build a Campaign from a parsed campaign file (see the module docstring)."""
    where = str(path) if path else "campaign"
    unknown = set(raw) - {"campaign", "set", "axes", "points", "per_procedure"}
    if unknown:
        raise ConfigError(f"{where}: unknown table(s) {', '.join(sorted(unknown))} (allowed: "
                          "[campaign], [set], [axes], [[points]], [per_procedure.NAME])")
    head = raw.get("campaign", {})
    allowed = {"config", "procedures", "procedure", "repeat", "rate", "name", "description",
               "testers"}
    for key in head:
        if key not in allowed:
            raise ConfigError(f"{where}: campaign.{key}: unknown key (allowed: "
                              f"{', '.join(sorted(allowed))})")
    procedures = head.get("procedures", head.get("procedure", ["throughput"]))
    if isinstance(procedures, str):
        procedures = [procedures]
    if not procedures or any(p not in PROCEDURE_NAMES for p in procedures):
        raise ConfigError(f"{where}: campaign.procedures = {json.dumps(procedures)}: must be a "
                          f"list of {', '.join(PROCEDURE_NAMES)}")
    for procedure in procedures:
        source = REGISTRY[procedure].rate_from
        if source is not None and source not in procedures:
            raise ConfigError(f"{where}: campaign.procedures = {json.dumps(procedures)}: "
                              f"{procedure} takes its rate from the {source} measured at the "
                              f"same point: list {json.dumps(source)} too")
    per_procedure = {}
    for procedure, table in raw.get("per_procedure", {}).items():
        if procedure not in procedures or not isinstance(table, dict):
            raise ConfigError(f"{where}: [per_procedure.{procedure}]: must be a table of "
                              f"overrides for one of campaign.procedures "
                              f"({', '.join(procedures)})")
        per_procedure[procedure] = _flatten(table)
        for key in per_procedure[procedure]:
            _check_key(f"{where}: [per_procedure.{procedure}]", key)
    base = head.get("config")
    base_path = None
    if base is not None:
        if not isinstance(base, str):
            raise ConfigError(f"{where}: campaign.config: must be a file name")
        base_path = Path(base)
        if not base_path.is_absolute() and path is not None:
            base_path = path.parent / base_path
    overrides = _flatten(raw.get("set", {}))
    for key in overrides:
        _check_key(f"{where}: [set]", key)
    if "repeat" in head:
        # Every point's repetitions: output.repeat, or the procedure's own key (back-to-back's,
        # dns64's: ProcedureSpec.repeat_key).
        for key in {"output.repeat"} | {REGISTRY[p].repeat_key for p in procedures}:
            overrides[key] = head["repeat"]
    default_rate = head.get("rate")
    if default_rate is not None and (not isinstance(default_rate, int) or default_rate <= 0):
        raise ConfigError(f"{where}: campaign.rate = {default_rate!r}: must be a positive "
                          "integer (frames/s)")

    listed = raw.get("points", [{}])
    if not isinstance(listed, list) or not all(isinstance(p, dict) for p in listed):
        raise ConfigError(f"{where}: [[points]] must be an array of tables")
    listed_entries = []
    for number, table in enumerate(listed or [{}], 1):
        assignments = _flatten(table)
        rate = assignments.pop(RATE_AXIS, None)
        for key in assignments:
            _check_key(f"{where}: points[{number}]", key)
        listed_entries.append((assignments, rate))
    axes = _axes(raw.get("axes", {}), f"{where}: axes")
    axis_keys = {key for _, entries in axes for values, _, _ in entries for key in values}
    for assignments, _ in listed_entries:
        both = sorted(axis_keys & set(assignments))
        if both:
            raise ConfigError(f"{where}: {both[0]} is set both by [[points]] and by [axes]")

    testers = []
    if "testers" in head:
        entries = head["testers"]
        if isinstance(entries, list):   # {tester = {ssh = ...}} and {"tester.ssh" = ...}
            entries = [_flatten(e) if isinstance(e, dict) else e for e in entries]
        testers = parse_testers(entries, where)
        for number, tester in enumerate(testers, 1):
            for key in tester.overrides:
                _check_key(f"{where}: campaign.testers[{number}]", key)
                if key in axis_keys or any(key in a for a, _ in listed_entries):
                    raise ConfigError(f"{where}: {key} is set both by campaign.testers"
                                      f"[{number}] and by [axes] or [[points]]")
    campaign = Campaign(path, base_path, overrides, raw=raw, per_procedure=per_procedure,
                        testers=testers)
    chained = [p for p in procedures if REGISTRY[p].rate_from is not None]
    for procedure in procedures:
        if procedure in chained:
            continue          # placed right after the point it takes its rate from
        for listed_assignments, listed_rate in listed_entries:
            for combination in itertools.product(*[entries for _, entries in axes]):
                assignments = dict(listed_assignments)
                labels = {key: value for key, value in listed_assignments.items()}
                rate = listed_rate
                for (name, _), (values, label, axis_rate) in zip(axes, combination):
                    assignments.update(values)
                    labels[name] = label
                    if axis_rate is not None:
                        rate = axis_rate
                if rate is not None:
                    labels[RATE_AXIS] = rate
                if procedure == "trial" and rate is None:
                    rate = default_rate
                point = Point(0, procedure, assignments, labels,
                              rate if procedure == "trial" else None)
                point.id = point_id(procedure, assignments, point.rate)
                campaign.points.append(point)
                for follower in chained:
                    if REGISTRY[follower].rate_from == procedure:
                        then = Point(0, follower, dict(assignments), dict(labels),
                                     rate_from=point.id)
                        then.id = point_id(follower, assignments, None)
                        campaign.points.append(then)
    for index, point in enumerate(campaign.points, 1):
        point.index = index
    ids = [p.id for p in campaign.points]
    if len(set(ids)) != len(ids):
        duplicate = next(i for i in ids if ids.count(i) > 1)
        raise ConfigError(f"{where}: the combination {duplicate} occurs twice (listed points "
                          "and axes overlap)")
    return campaign


def load_campaign(path) -> Campaign:
    """Read and expand a campaign file; every point's configuration is validated, so a bad
    combination is reported before anything is measured."""
    path = Path(path)
    campaign = parse_campaign(read_toml(path), path)
    for point in campaign.points:
        for tester in campaign.testers or [None]:
            try:
                campaign.config_for(point, tester)
            except ConfigError as exc:
                on = f" on tester {tester.name}" if tester else ""
                raise ConfigError(f"{path}: point {point.index} ({point.describe()}){on}: "
                                  f"{exc}") from None
    return campaign
