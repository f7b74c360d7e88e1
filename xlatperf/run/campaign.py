# SPDX-License-Identifier: BSD-3-Clause
"""Campaigns: one procedure (or several) over the cross product of sweep axes, resumable.

    from xlatperf.run.campaign import load_campaign, run_campaign, campaign_status
    campaign = load_campaign("tp-sizes.toml")
    run_campaign(campaign, "results/tp-sizes")      # again after an interruption: resumes

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

latency and pdv are chained (ProcedureSpec.rate_from): each of their points runs right after
the throughput point of the same combination, at the median of that throughput's repetitions
(procedures.delay.rate_from_summary); with no throughput to measure at (0, or the throughput
point not done) the point is skipped with the reason in its skipped.json, and a point measured
at a rate that is no longer its throughput's (the throughput was measured again) is moved to
DIR/superseded/ and measured anew.

Every point is a result directory DIR/points/<id>/ as `xlatperf PROCEDURE --out` writes it,
plus repetitions.jsonl. A point is finished when its summary.json says "complete": true with
the campaign's [output] settings; otherwise it is resumed at the granularity of repetitions
(runner.run_procedure(resume=True)): finished repetitions are kept, the trials of an
unfinished one move to the point's incomplete/ directory and the repetition runs again.
"""

import hashlib
import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ..config.schema import SCHEMA
from ..config.loading import is_key, validate
from ..measure.session import AUXILIARY_PHASES
from ..measure.store import REPETITIONS_FILE, SUMMARY_FILE, TRIALS_FILE, read_trials, rows_to_csv
from ..procedures import REGISTRY
from ..procedures.delay import rate_from_summary
from ..util.errors import ConfigError, MeasurementError, XlatperfError
from ..util.files import read_json, read_toml, utc_timestamp, write_atomically
from .testers import TESTER_FILE, Tester, parse_testers, run_on_testers, work_units

CAMPAIGN_FILE = "campaign.json"
RESULTS_FILE = "results.csv"
POINTS_DIR = "points"
ERROR_FILE = "error.json"
SKIPPED_FILE = "skipped.json"     # a chained point with no rate to measure at, and why
SUPERSEDED_DIR = "superseded"     # chained points measured at a rate that is no longer theirs
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
                raise ConfigError(f"{path}: point {point.index} ({_describe(point)}){on}: "
                                  f"{exc}") from None
    return campaign


def _describe(point: Point) -> str:
    values = ", ".join(f"{k}={v}" for k, v in point.labels.items())
    return f"{point.procedure}" + (f" {values}" if values else "")


# --------------------------------------------------------------------------------------------
# State of a campaign directory
# --------------------------------------------------------------------------------------------


def _count_lines(path: Path) -> int:
    try:
        with open(path, encoding="utf-8") as stream:
            return sum(1 for line in stream if line.strip())
    except OSError:
        return 0


def point_state(directory: Path, output: dict | None = None, rate: int | None = None) -> dict:
    """state: done | stale | partial | pending | failed | skipped, with finished repetitions
    and trials. `output`: the [output] section the point must have been measured with to
    count as done; `rate`: the rate a chained point must have been measured at (else stale)."""
    summary = read_json(directory / SUMMARY_FILE)
    error = read_json(directory / ERROR_FILE)
    skipped = read_json(directory / SKIPPED_FILE)
    repetitions = _count_lines(directory / REPETITIONS_FILE)
    trials = _count_lines(directory / TRIALS_FILE)
    state = "pending"
    if summary is not None and summary.get("complete") and (
            output is None or (summary.get("config") or {}).get("output") == output):
        state = "done"
        if rate is not None and recorded_rate(directory) not in (None, rate):
            state = "stale"
    elif error is not None:
        state = "failed"
    elif skipped is not None:
        state = "skipped"
    elif repetitions or trials:
        state = "partial"
    return {"state": state, "repetitions": repetitions, "trials": trials,
            "summary": summary, "error": (error or {}).get("error") or
            (skipped or {}).get("reason")}


def recorded_rate(directory: Path) -> int | None:
    """The rate a fixed-rate procedure (trial, latency, pdv) measured a point at: its
    summary's, else its first measuring trial's (a run killed before its first summary)."""
    summary = read_json(directory / SUMMARY_FILE)
    rate = ((summary or {}).get("settings") or {}).get("rate")
    if rate is not None or not (directory / TRIALS_FILE).exists():
        return rate
    return next((r.get("rate") for r in read_trials(directory)
                 if r.get("phase") not in AUXILIARY_PHASES), None)


def chained_rate(directory: Path, source: dict) -> dict:
    """The rate of a chained point, from the point it takes its rate from (`source`: its
    campaign.json entry with "output"): procedures.delay.rate_from_summary of that point's
    summary when it is done (with "point" and "index" added), else rate None and why."""
    state = point_state(directory / POINTS_DIR / source["id"], source.get("output"))
    where = {"point": source["id"], "index": source["index"]}
    if state["state"] != "done":
        return {"rate": None, **where,
                "reason": f"its {source['procedure']} point {source['index']} is "
                          f"{state['state']}: no rate to measure at yet"}
    found = rate_from_summary(state["summary"])
    if found["rate"] is None:
        found["reason"] = f"{source['procedure']} point {source['index']}: {found['reason']}"
    return {**found, **where}


def campaign_status(directory) -> dict:
    """The campaign stored in `directory` and the state of each point."""
    directory = Path(directory)
    stored = read_json(directory / CAMPAIGN_FILE)
    if stored is None:
        raise XlatperfError(f"{directory}: not a campaign directory (no {CAMPAIGN_FILE})")
    by_id = {p["id"]: p for p in stored["points"]}
    rows = []
    for point in stored["points"]:
        rate = None
        if point.get("rate_from") in by_id:
            rate = chained_rate(directory, by_id[point["rate_from"]])["rate"]
        state = point_state(directory / POINTS_DIR / point["id"], point.get("output"), rate)
        summary = state.pop("summary") or {}
        rows.append({**point, **state, "unit": summary.get("unit"),
                     "median": summary.get("median"), "n": summary.get("n")})
        if stored.get("testers"):     # which tester measured it (run/testers.py)
            rows[-1]["tester"] = (read_json(directory / POINTS_DIR / point["id"] / TESTER_FILE)
                                  or {}).get("name")
    counts = {s: sum(1 for r in rows if r["state"] == s)
              for s in ("done", "partial", "failed", "pending", "skipped", "stale")}
    for rare in ("skipped", "stale"):     # states of chained points only: named when present
        if not counts[rare]:
            del counts[rare]
    return {"directory": str(directory), "file": stored.get("file"), "points": rows,
            "counts": counts, "total": len(rows),
            **({"testers": [t["name"] for t in stored["testers"]]} if stored.get("testers")
               else {})}


def format_status(status: dict) -> str:
    """A plain-text table of campaign_status()."""
    lines = [f"campaign {status['file'] or ''} in {status['directory']}: "
             + ", ".join(f"{count} {state}" for state, count in status["counts"].items())
             + f" of {status['total']} points"
             + (f" on testers {', '.join(status['testers'])}" if status.get("testers") else "")]
    header = ("#", "state", "reps", "trials", "procedure", "point", "median", "n")
    testers = "testers" in status
    if testers:
        header += ("tester",)
    rows = []
    for p in status["points"]:
        median = p["median"]
        if median is None:
            shown = "-"
        elif p["unit"] == "ratio":
            shown = f"{100 * median:.4g} % loss"
        elif p["unit"] == "ms":
            shown = f"{1000 * median:,.1f} µs"
        else:  # fps; cps and connections of the stateful procedures
            shown = f"{median:,.0f} {p['unit']}"
        rows.append((str(p["index"]), p["state"], str(p["repetitions"]), str(p["trials"]),
                     p["procedure"],
                     " ".join(f"{k}={v}" for k, v in p["labels"].items()) or "-",
                     shown, "-" if p["n"] is None else str(p["n"]))
                    + ((p["tester"] or "-",) if testers else ()))
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    for row in [header] + rows:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    for p in status["points"]:
        if p["state"] == "failed":
            lines.append(f"point {p['index']} failed: {p['error']}")
        elif p["state"] == "skipped":
            lines.append(f"point {p['index']} ({p['procedure']}) not measured: {p['error']}")
        elif p["state"] == "stale":
            lines.append(f"point {p['index']} ({p['procedure']}) was measured at another rate "
                         "than its throughput's: `campaign run` measures it again")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------


def _write_campaign_file(directory: Path, campaign: Campaign, outputs: dict) -> None:
    stored = {"file": str(campaign.path) if campaign.path else None,
              "base_config": str(campaign.base_config) if campaign.base_config else None,
              "campaign": campaign.raw, "overrides": campaign.overrides,
              "updated": utc_timestamp(),
              **({"testers": [t.to_dict() for t in campaign.testers]} if campaign.testers else {}),
              "points": [{**p.to_dict(), "output": outputs[p.id]} for p in campaign.points]}
    write_atomically(directory / CAMPAIGN_FILE, json.dumps(stored, indent=2, default=str) + "\n")


def results_rows(directory) -> list[dict]:
    """One row per point with its axis values and statistics (results.csv); `rate` is the
    rate a fixed-rate point was measured at (a chained latency or pdv point: its throughput's),
    `note` why a point was not measured or what to know about its rate."""
    status = campaign_status(directory)
    rows = []
    for p in status["points"]:
        summary = read_json(Path(directory) / POINTS_DIR / p["id"] / SUMMARY_FILE) or {}
        row = {"index": p["index"], "procedure": p["procedure"], "state": p["state"],
               **{k: v for k, v in p["labels"].items()}, "unit": summary.get("unit")}
        for key in ("median", "p1", "p99", "min", "max", "dispersion", "n"):
            row[key] = summary.get(key)
        row["rate"] = (summary.get("settings") or {}).get("rate")
        source = summary.get("rate_source") or {}
        row["note"] = p["error"] if p["state"] in ("skipped", "failed") else source.get("note")
        if "testers" in status:
            row["tester"] = p["tester"]
        row["id"] = p["id"]
        rows.append(row)
    return rows


def _supersede(directory: Path, point: Point, rate: int) -> Path:
    """Moves a chained point measured at `rate` (no longer its throughput's) out of the way:
    nothing measured is deleted, and the point is measured anew at the new rate."""
    target = directory / SUPERSEDED_DIR / (
        f"{point.id}_rate-{rate}_{utc_timestamp().replace(':', '')}")
    target.parent.mkdir(parents=True, exist_ok=True)
    (directory / POINTS_DIR / point.id).rename(target)
    return target


class _PointRunner:
    """Measures one campaign point (resumes it, skips it when done or, chained, without a
    rate), from the campaign's thread or from one tester's (run/testers.py)."""

    def __init__(self, campaign: Campaign, directory: Path, outputs: dict, run, engine_path):
        self.campaign, self.directory, self.outputs = campaign, directory, outputs
        self.run, self.engine_path = run, engine_path
        self.by_id = {p.id: {**p.to_dict(), "output": outputs[p.id]} for p in campaign.points}
        self._results_lock = threading.Lock()   # results.csv: one writer at a time

    def _write_results(self) -> None:
        with self._results_lock:
            write_atomically(self.directory / RESULTS_FILE,
                             rows_to_csv(results_rows(self.directory)))

    def _fail(self, point: Point, point_dir: Path, exc: Exception) -> tuple[str, Exception]:
        point_dir.mkdir(parents=True, exist_ok=True)
        write_atomically(point_dir / ERROR_FILE,
                         json.dumps({"error": str(exc), "time": utc_timestamp()}) + "\n")
        return f"point {point.index} ({_describe(point)}): {exc}", exc

    def measure(self, point: Point, tester: Tester | None,
                reporter) -> tuple[str, Exception] | None:
        """None, or (message, error) when the point failed (its error.json written). Raises
        ConfigError for a point whose configuration is wrong (the campaign stops) and
        KeyboardInterrupt."""
        directory = self.directory
        point_dir = directory / POINTS_DIR / point.id
        rate, extra = point.rate, {}
        if point.rate_from is not None:
            source = chained_rate(directory, self.by_id[point.rate_from])
            if source["rate"] is None:
                point_dir.mkdir(parents=True, exist_ok=True)
                write_atomically(point_dir / SKIPPED_FILE, json.dumps(
                    {"reason": source["reason"], "rate_source": source,
                     "time": utc_timestamp()}, default=str) + "\n")
                self._write_results()
                return None
            (point_dir / SKIPPED_FILE).unlink(missing_ok=True)
            measured_at = recorded_rate(point_dir) if point_dir.exists() else None
            if measured_at is not None and measured_at != source["rate"]:
                _supersede(directory, point, measured_at)
            rate, extra = source["rate"], {"rate_source": source}
        state = point_state(point_dir, self.outputs[point.id])
        if state["state"] == "done":
            return None
        if tester is not None:
            measured_by = (read_json(point_dir / TESTER_FILE) or {}).get("name")
            if measured_by not in (None, tester.name) and state["trials"]:
                return self._fail(point, point_dir, MeasurementError(
                    f"measured in part on tester {measured_by}, which is not measuring in this "
                    f"run: run the campaign again with it, or move {point_dir} away to measure "
                    "the point anew"))
        if reporter is not None:
            reporter.point({"index": point.index, "count": len(self.campaign.points),
                            "id": point.id, "procedure": point.procedure,
                            "labels": point.labels, "state": state["state"],
                            "repetitions_done": state["repetitions"],
                            **({"rate": rate} if extra else {})})
        (point_dir / ERROR_FILE).unlink(missing_ok=True)
        config = self.campaign.config_for(point, tester)
        if tester is not None:
            point_dir.mkdir(parents=True, exist_ok=True)
            write_atomically(point_dir / TESTER_FILE, json.dumps(
                {"name": tester.name, "ssh": config.tester.ssh,
                 "time": utc_timestamp()}) + "\n")
        try:
            self.run(point.procedure, config, point_dir, rate=rate, reporter=reporter,
                     engine_path=self.engine_path, resume=True, **extra)
        except ConfigError as exc:
            if not extra:
                raise ConfigError(f"point {point.index} ({_describe(point)}): {exc}") from None
            # A chained point's rate is known only now: a setting that does not fit it (too
            # few frames for latency.timestamps) fails this point, not the campaign.
            return self._fail(point, point_dir, exc)
        except XlatperfError as exc:
            return self._fail(point, point_dir, exc)
        finally:
            self._write_results()
        return None


def run_campaign(campaign: Campaign, out_dir, *, reporter=None, engine_path: str | None = None,
                 run=None) -> dict:
    """Run every point of `campaign` that is not finished yet into out_dir/points/<id>/ and
    return campaign_status(out_dir). An interrupted campaign (Ctrl-C, kill, crash) resumes
    when run again into the same directory. A point that fails (engine or measurement error)
    is recorded in its error.json and the campaign goes on; MeasurementError is raised at the
    end if any point failed. ConfigError and KeyboardInterrupt stop the campaign at once.
    A chained point (latency, pdv) runs at its throughput's rate (chained_rate); without one
    it is skipped (skipped.json says why: not a failure, the campaign's result says it).

    With campaign.testers the points are shared out over the testers, measured in parallel
    (run/testers.py); each point's tester.json names the tester that measured it.

    run: the function that measures one point (default runner.run_procedure), for tests."""
    if run is None:
        from .runner import run_procedure as run
    directory = Path(out_dir)
    try:
        (directory / POINTS_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise XlatperfError(f"--out {out_dir}: {exc.strerror or exc}") from None
    outputs = {p.id: campaign.config_for(p).output.to_dict() for p in campaign.points}
    _write_campaign_file(directory, campaign, outputs)
    points = _PointRunner(campaign, directory, outputs, run, engine_path)
    if campaign.testers:
        failures = run_on_testers(campaign.testers, work_units(campaign.points), directory,
                                  points.measure, reporter)
    else:
        failures = [failed[0] for point in campaign.points
                    if (failed := points.measure(point, None, reporter)) is not None]
    if failures:
        raise MeasurementError(f"{len(failures)} of {len(campaign.points)} points failed "
                               f"(run again to retry them): {failures[0]}")
    return campaign_status(directory)
