# SPDX-License-Identifier: BSD-3-Clause
"""Reading results for a report: the summaries under a directory (one procedure's result, a
campaign, or a directory of either), each with its procedure's registration, and the swept
configuration keys. The report is built from the summaries, plus the delay distributions that
only trials.jsonl holds (docs/delay.md)."""

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..measure.store import SUMMARY_FILE, TRIALS_FILE, read_trials
from ..procedures import REGISTRY
from ..procedures.base import ProcedureSpec
from ..util.errors import XlatperfError
from ..util.files import read_json
from .axes import setting

CAMPAIGN_FILE = "campaign.json"
SKIPPED_FILE = "skipped.json"    # run/campaign.py writes it for a point it could not measure
REPORT_DIR = "report"
# Keys that always differ or that the report shows elsewhere: not treated as swept axes.
NOT_AXES = {"left.dut_mac", "right.dut_mac", "tester.engine"}


@dataclass
class Entry:
    """One summary.json and where it came from."""
    name: str
    directory: Path
    summary: dict
    labels: dict = field(default_factory=dict)   # campaign axis labels, if any

    @property
    def procedure(self) -> str:
        return self.summary.get("procedure", "?")

    @property
    def spec(self) -> ProcedureSpec | None:
        """The procedure's registration; None for a procedure this version does not know."""
        return REGISTRY.get(self.procedure)

    @property
    def family(self) -> str:
        """The report renderer family (ProcedureSpec.report); "" when unregistered."""
        return self.spec.report if self.spec else ""

    @property
    def unit(self) -> str:
        # The registry's unit is the procedure's; the summary's only for unknown procedures,
        # and for DNS queries (a throughput search of them counts queries/s, docs/dns.md).
        if self.spec is None or self.settings.get("dns"):
            return self.summary.get("unit", "") or (self.spec.unit if self.spec else "")
        return self.spec.unit

    @property
    def settings(self) -> dict:
        return self.summary.get("settings") or {}

    @property
    def rate_unit(self) -> str:
        """What the result's offered rates count: DNS queries/s (docs/dns.md) or frames/s per
        direction, as units.py names them."""
        return "qps" if self.settings.get("dns") else "fps"

    @property
    def fixed_rate(self) -> int | None:
        """The offered rate a procedure with --rate measured at (trial, latency, pdv): part of
        what the point is; None for procedures that search or scan rates."""
        if self.spec is None or self.spec.rate_option == "none":
            return None
        return self.settings.get("rate")

    @property
    def max_rate(self) -> int:
        """The medium's maximum frame rate (the smaller of the directions'), 0 if unknown."""
        return min((d.get("max_rate", 0) for d in self.summary.get("directions", {}).values()),
                   default=0)

    @property
    def rate_source(self) -> dict | None:
        """Where a chained measurement's rate came from (the throughput of its campaign point,
        or --rate-from): its summary's rate_source; None for a rate given as such."""
        return self.summary.get("rate_source")

    def flat_config(self) -> dict:
        """{"section.key": value}; DUT variables (dut.variables) as dut.NAME, as they are set."""
        flat = {}
        for section, values in (self.summary.get("config") or {}).items():
            if not isinstance(values, dict):
                continue
            for key, value in values.items():
                if (section, key) == ("dut", "variables") and isinstance(value, dict):
                    flat |= {f"dut.{name}": v for name, v in value.items()}
                else:
                    flat[f"{section}.{key}"] = value
        return flat

    def config_value(self, key: str):
        return self.flat_config().get(key)

    @cached_property
    def trials(self) -> list[dict]:
        """The trial records behind the summary (only its repetitions' measuring trials)."""
        if not (self.directory / TRIALS_FILE).exists():
            return []
        counted = {r.get("repetition") for r in self.summary.get("repetitions", [])}
        return [r for r in read_trials(self.directory) if r.get("repetition") in counted]


def collect(directory) -> list[Entry]:
    """The summaries under a results directory, in campaign order or by path."""
    directory = Path(directory)
    if not directory.is_dir():
        raise XlatperfError(f"{directory}: no such directory")
    campaign = read_json(directory / CAMPAIGN_FILE)
    entries: list[Entry] = []
    if campaign is not None:
        for point in campaign.get("points", []):
            point_dir = directory / "points" / point["id"]
            summary = read_json(point_dir / SUMMARY_FILE)
            if summary is not None:
                entries.append(Entry(f"{point['index']}", point_dir, summary,
                                     point.get("labels", {})))
        return entries
    summary = read_json(directory / SUMMARY_FILE)
    if summary is not None:
        return [Entry(directory.name, directory, summary)]
    for path in sorted(directory.rglob(SUMMARY_FILE)):
        if REPORT_DIR in path.relative_to(directory).parts:
            continue
        found = read_json(path)
        if found is not None:
            entries.append(Entry(str(path.parent.relative_to(directory)), path.parent, found))
    return entries


def not_measured(directory) -> list[dict]:
    """A campaign's points that were skipped (a chained latency or pdv point with no
    throughput to measure at): index, procedure, labels and the reason."""
    directory = Path(directory)
    campaign = read_json(directory / CAMPAIGN_FILE) or {}
    found = []
    for point in campaign.get("points", []):
        point_dir = directory / "points" / point["id"]
        skipped = read_json(point_dir / SKIPPED_FILE)
        if skipped is not None and read_json(point_dir / SUMMARY_FILE) is None:
            found.append({"index": point["index"], "procedure": point["procedure"],
                          "labels": point.get("labels", {}), "reason": skipped.get("reason")})
    return found


def varying_keys(entries: list[Entry]) -> list[str]:
    """Configuration keys whose value differs between entries of the same procedure (the
    swept axes). A key that differs only between procedures (a stateful test's [stateful]
    settings next to a latency result) is no axis: the procedure already tells them apart."""
    by_procedure: dict[str, list[dict]] = {}
    for entry in entries:
        by_procedure.setdefault(entry.procedure, []).append(entry.flat_config())
    keys: list[str] = []
    for configs in by_procedure.values():
        for config in configs:
            keys += [k for k in config if k not in keys]
    varying = []
    for key in keys:
        if key in NOT_AXES or key.startswith("output."):
            continue
        if any(len({json.dumps(c.get(key), sort_keys=True) for c in configs}) > 1
               for configs in by_procedure.values()):
            varying.append(key)
    return varying


# The rate of a group of chained measurements (latency, pdv): each point's throughput.
CHAINED = "throughput"


def groups(entries: list[Entry], keys: list[str]) -> dict[tuple, list[Entry]]:
    """The entries by (procedure, unit, rate, the values of `keys` as JSON): what a plot's
    series or a table holds together."""
    found: dict[tuple, list[Entry]] = {}
    for entry in entries:
        config = entry.flat_config()
        # A chained measurement's rate follows its point's throughput: one group across them.
        rate = CHAINED if entry.rate_source else entry.fixed_rate
        key = (entry.procedure, entry.unit, rate) + tuple(
            json.dumps(config.get(k), default=str) for k in keys)
        found.setdefault(key, []).append(entry)
    return found


def group_title(group_key: tuple, keys: list[str]) -> str:
    """A group of groups(): its procedure, the values of `keys` and the rate it was measured at."""
    procedure, _, rate = group_key[:3]
    parts = [procedure] + [setting(k, json.loads(v)) for k, v in zip(keys, group_key[3:])]
    if rate == CHAINED:
        parts.append("at each point's throughput rate")
    elif rate is not None:
        parts.append(f"rate {rate:,} fps")
    return ", ".join(parts)
