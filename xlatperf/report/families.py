# SPDX-License-Identifier: BSD-3-Clause
"""One renderer per report family (ProcedureSpec.report): what a summary's median is (the
quantity on a plot axis), each repetition's result, how the procedure searched (the reporting
item "Search precision") and its per-repetition detail tables.

FAMILIES is keyed by the family names of the registry; a new procedure of an existing family
needs nothing here, a new family one Family subclass (tests/test_report_all.py checks that every
registered family has one)."""

from dataclasses import dataclass
from typing import Callable

from .collect import Entry
from .units import format_value

# A detail table: (header, rows, caption); a cell function gets (repetition, entry).
Cell = Callable[[dict, Entry], str]
Table = tuple[list[str], list[list[str]], str]


def text(key: str, unit: str | None = None) -> Cell:
    return lambda rep, entry: format_value(rep.get(key), unit) if unit else str(rep.get(key))


def yes(key: str) -> Cell:
    return lambda rep, entry: "yes" if rep.get(key) else "no"


def steps(rep: dict, entry: Entry) -> str:
    return str(len(rep.get("steps", [])))


def per_repetition(entry: Entry, columns: list[tuple[str, Cell]], caption: str) -> Table:
    rows = [[cell(r, entry) for _, cell in columns] for r in entry.summary.get("repetitions", [])]
    return [header for header, _ in columns], rows, caption


class Family:
    """The defaults: a plain result per repetition under `key`, no detail table."""
    key = "value"
    complete_only = False    # as the summary's statistics: only complete repetitions count
    # The result belongs to a traffic direction (False: RFC 9693 roles), so it has a bar per
    # direction in the bar charts.
    per_direction = True

    def quantity(self, entry: Entry) -> str:
        return "result"

    def repetition_values(self, entry: Entry) -> list[float]:
        """Each repetition's result (what the statistics summarise), in the summary's unit."""
        reps = entry.summary.get("repetitions", [])
        values = [r.get(self.key) for r in reps if r.get("complete") or not self.complete_only]
        return [v for v in values if v is not None]

    def precision(self, entry: Entry) -> str:
        return "-"

    def details(self, entry: Entry) -> list[Table]:
        return []

    def notes(self, entry: Entry) -> list[str]:
        return []


# --------------------------------------------------------------------------------------------
# search: RFC 2544 throughput (binary search or MLRsearch), selftest
# --------------------------------------------------------------------------------------------


def _percent_of_maximum(rep: dict, entry: Entry) -> str:
    return f"{100 * rep['throughput'] / entry.max_rate:.3f}" if entry.max_rate and \
        rep.get("throughput") is not None else "-"


def _rate(value) -> str:
    return "-" if value is None else f"{value:,}"


def search_precision(s: dict) -> str:
    """How a throughput search searched (its settings): the reporting item "Search precision"."""
    if s.get("mode") == "mlrsearch":
        goals = "; ".join(
            f"{g.get('name')} {g.get('label')}: loss ratio {g.get('loss_ratio'):g}, exceed "
            f"ratio {g.get('exceed_ratio'):g}, final trial {g.get('final_trial_duration'):g} "
            f"s, duration sum {g.get('duration_sum'):g} s, width "
            + ("none" if g.get("width") is None else
               f"{g['width']:g}" + (" (relative)" if g.get("width_unit") == "relative"
                                    else " frames/s"))
            for g in s.get("goals", []))
        return (f"MLRsearch (docs/mlrsearch.md) in [{_rate(s.get('min_load'))}, "
                f"{_rate(s.get('max_load'))}] frames/s; goals: {goals}")
    return (f"binary search in [{_rate(s.get('min_rate'))}, {_rate(s.get('max_rate'))}] "
            f"frames/s until upper − lower ≤ {_rate(s.get('error'))} frames/s; loss "
            f"tolerance {s.get('loss_tolerance')}")


class Search(Family):
    key = "throughput"
    complete_only = True
    COLUMNS = [("repetition", text("repetition")), ("throughput (fps)", text("throughput", "fps")),
               ("% of maximum", _percent_of_maximum), ("trials", steps), ("found", yes("found")),
               ("tester limited", yes("tester_limited")), ("complete", yes("complete"))]

    def quantity(self, entry):
        return "throughput"

    def precision(self, entry):
        return search_precision(entry.settings)

    def details(self, entry):
        goals = entry.summary.get("goals") or []
        # MLRsearch: whether each repetition's primary goal result is regular (RFC 9971
        # §4.8.4.2: an irregular result is marked as such).
        columns = self.COLUMNS + ([("primary goal regular", yes("regular"))] if goals else [])
        tables = [per_repetition(entry, columns, "throughput per repetition")]
        if goals:
            def median(goal, key):
                stats = goal.get(key)
                return format_value(stats.get("median") if isinstance(stats, dict) else stats,
                                    "fps")
            rows = [[g.get("name"), g.get("label"), f"{g.get('loss_ratio'):g}",
                     f"{g.get('exceed_ratio'):g}", format_value(g.get("median"), "fps"),
                     median(g, "relevant_upper_bound"), median(g, "conditional_throughput"),
                     "yes" if g.get("regular") else "no: " + "; ".join(g.get("irregular") or [])]
                    for g in goals]
            tables.append((["goal", "attributes", "loss ratio", "exceed ratio",
                            "lower bound (fps)", "upper bound (fps)",
                            "conditional throughput (fps)", "regular"], rows,
                           "MLRsearch goals: relevant bounds and conditional throughput, median "
                           "over repetitions"))
        return tables

    def notes(self, entry):
        return [f"the throughput is {note}" for note in
                (entry.summary.get("lower_bound"), entry.summary.get("range_limited"),
                 entry.summary.get("dut_limited")) if note] + (
            [entry.summary["partly_tester_limited"]]
            if entry.summary.get("partly_tester_limited") else [])


# --------------------------------------------------------------------------------------------
# scan: RFC 2544 frame loss rate
# --------------------------------------------------------------------------------------------


class Scan(Family):
    def quantity(self, entry):
        return "frame loss rate at the highest rate"

    def repetition_values(self, entry):
        values = []
        for rep in entry.summary.get("repetitions", []):
            points = rep.get("points") or []
            if points and points[0].get("valid") and points[0].get("loss_ratio") is not None:
                values.append(points[0]["loss_ratio"])
        return values

    def precision(self, entry):
        s = entry.settings
        if s.get("rates"):
            return f"listed rates {s['rates']} frames/s"
        return (f"from {s.get('start')} % of the maximum down in steps of {s.get('step')} % "
                "until two consecutive trials without loss")

    def details(self, entry):
        summary = entry.summary
        directions = list(summary.get("directions", {}))
        rows = [[f"{point['rate']:,}", f"{point.get('percent') or 0:.4g}",
                 format_value(point.get("median"), "ratio"),
                 format_value(point.get("p1"), "ratio"), format_value(point.get("p99"), "ratio")]
                + [format_value(point.get("directions", {}).get(d, {}).get("median"), "ratio")
                   for d in directions]
                + [str(point.get("n")), str(point.get("invalid", 0))]
                for point in summary.get("rates", [])]
        return [(["rate (fps)", "% of maximum", "FLR median", "p1", "p99"]
                 + [f"{d} FLR median" for d in directions] + ["n", "invalid"], rows,
                 "frame loss rate per offered rate")]


# --------------------------------------------------------------------------------------------
# trial: single trials at a rate
# --------------------------------------------------------------------------------------------


class Trial(Family):
    def quantity(self, entry):
        return "loss ratio"

    def repetition_values(self, entry):
        return [r["loss_ratio"] for r in entry.summary.get("repetitions", [])
                if r.get("valid") and r.get("loss_ratio") is not None]

    def precision(self, entry):
        return f"single trials at {_rate(entry.settings.get('rate'))} frames/s"

    def details(self, entry):
        directions = list(entry.summary.get("directions", {}))
        rows = []
        for rep in entry.summary.get("repetitions", []):
            if "rate" not in rep:
                continue
            cells = [str(rep["repetition"]), f"{rep['rate']:,}",
                     "yes" if rep.get("valid") else f"no ({rep.get('invalid_reason')})"]
            for d in directions:
                counts = rep.get("directions", {}).get(d)
                cells += ([f"{counts['received']:,}/{counts['sent']:,}",
                           format_value(counts.get("loss_ratio"), "ratio")] if counts
                          else ["-", "-"])
            rows.append(cells)
        header = ["repetition", "rate (fps)", "valid"]
        for d in directions:
            header += [f"{d} received/sent", f"{d} loss"]
        return [(header, rows, "trials")]


# --------------------------------------------------------------------------------------------
# delay: RFC 8219 latency (TL, WCL) and PDV (PDV, IPDV), docs/delay.md
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DelayMetric:
    key: str        # in a repetition's directions (ms; None: +infinity)
    name: str       # as RFC 8219 names it
    headline: bool  # the summary's median is this metric's (worse direction)


def _ipdv(part: str) -> Callable[[dict], float | None]:
    return lambda info: (info.get("ipdv") or {}).get(f"{part}_ms")


# Every delay metric a repetition may carry, each read from one direction's metrics.
DELAY_METRICS = [
    (DelayMetric("tl_ms", "TL", True), lambda info: info.get("tl_ms")),
    (DelayMetric("wcl_ms", "WCL", False), lambda info: info.get("wcl_ms")),
    (DelayMetric("pdv_ms", "PDV", True), lambda info: info.get("pdv_ms")),
    (DelayMetric("ipdv_min", "IPDV min", False), _ipdv("min")),
    (DelayMetric("ipdv_median", "IPDV median", False), _ipdv("median")),
    (DelayMetric("ipdv_max", "IPDV max", False), _ipdv("max")),
]


def delay_series(entry: Entry) -> dict[tuple[str, str], list[tuple[int, float | None]]]:
    """(metric name, direction) -> [(repetition, value in ms, None for +infinity)] over the
    valid repetitions, for the metrics the repetitions carry."""
    series: dict[tuple[str, str], list] = {}
    for rep in entry.summary.get("repetitions", []):
        if not rep.get("valid"):
            continue
        for direction, info in (rep.get("directions") or {}).items():
            for metric, get in DELAY_METRICS:
                # A metric is present when its key is (a null value is +infinity).
                present = metric.key in info or (metric.key.startswith("ipdv")
                                                 and "ipdv" in info)
                if present:
                    series.setdefault((metric.name, direction), []).append(
                        (rep["repetition"], get(info)))
    return series


class Delay(Family):
    def quantity(self, entry):
        # latency: "typical latency (worse direction)", pdv: "PDV (worse direction)"
        return entry.summary.get("metric") or "delay"

    def repetition_values(self, entry):
        """The headline metric of each valid repetition, the worse direction's (+infinity,
        null, when any direction's is: then it is not a value to plot)."""
        values = []
        for rep in entry.summary.get("repetitions", []):
            if not rep.get("valid"):
                continue
            infos = list((rep.get("directions") or {}).values())
            for metric, get in DELAY_METRICS:
                if metric.headline and infos and all(metric.key in i for i in infos):
                    found = [get(i) for i in infos]
                    if None not in found:
                        values.append(max(found))
                    break
        return values

    def precision(self, entry):
        s = entry.settings
        if s.get("timestamps") is not None:
            return (f"one trial per repetition at {_rate(s.get('rate'))} frames/s, "
                    f"{s.get('timestamps')} tagged frames per direction after {s.get('delay')} s")
        return (f"one trial per repetition at {_rate(s.get('rate'))} frames/s, every frame's "
                f"delay in a histogram ({s.get('histogram')})")

    def details(self, entry):
        series = delay_series(entry)
        if not series:
            return []
        keys = list(series)
        numbers = sorted({n for values in series.values() for n, _ in values})
        rows = []
        for number in numbers:
            cells = [str(number)]
            for key in keys:
                value = dict(series[key]).get(number, "missing")
                cells.append("-" if value == "missing" else "∞" if value is None
                             else format_value(value, "ms"))
            rows.append(cells)
        header = ["repetition"] + [f"{direction} {name} (ms)" for name, direction in keys]
        return [(header, rows, "delays per repetition (ms; ∞: lost or late tagged frames, "
                 "RFC 8219 §7.2)")]

    def notes(self, entry):
        notes = []
        source = entry.rate_source
        if source:
            where = (f"throughput point {source['index']}" if source.get("index") is not None
                     else source.get("directory") or "a throughput result")
            notes.append(f"measured at {_rate(source.get('rate'))} frames/s, the throughput of "
                         f"{where}: {source.get('statistic')} (median "
                         f"{_rate(source.get('throughput'))}, n = {source.get('n')})")
            if source.get("note"):
                notes.append(source["note"])
        return notes + list(entry.summary.get("warnings", []))


# --------------------------------------------------------------------------------------------
# cps and capacity: RFC 9693 connection establishment rate, tear-down rate, table capacity
# --------------------------------------------------------------------------------------------


def _connections(entry: Entry) -> int | None:
    return (entry.settings.get("stateful") or {}).get("connections")


def connection_search(s: dict) -> str:
    """connection-rate's search (docs/stateful.md), also each probe of table-capacity."""
    validation = (f"; every step validated by the Responder at α·R, α = "
                  f"{s.get('validation_factor')}" if s.get("validation") else "")
    return (f"binary search on the phase-1 rate in [0, {_rate(s.get('max_rate'))}] "
            f"connections/s until upper − lower ≤ {_rate(s.get('error'))} connections/s"
            f"{validation}")


def _loaded(rep: dict, entry: Entry) -> str:
    return "yes" if rep.get("loaded") else f"no ({rep.get('load_failure')})"


@dataclass(frozen=True)
class RateKind:
    """One kind of connection rate: the repetition key that holds it tells the kinds apart."""
    key: str
    quantity: str
    complete_only: bool
    precision: Callable[[Entry], str]
    columns: list
    caption: str


RATE_KINDS = [
    RateKind("connection_rate", "connection establishment rate", True,
             lambda e: f"{connection_search(e.settings)}; N = {_rate(_connections(e))} "
                       "connections per step",
             [("repetition", text("repetition")),
              ("connection rate (cps)", text("connection_rate", "cps")), ("trials", steps),
              ("found", yes("found")), ("tester limited", yes("tester_limited")),
              ("complete", yes("complete"))],
             "connection establishment rate per repetition (RFC 9693)"),
    RateKind("teardown_rate", "connection tear-down rate", False,
             lambda e: (f"N = {_rate(_connections(e))} connections loaded at "
                        f"{_rate(e.settings.get('rate_phase1'))} connections/s"
                        + (" with validation" if e.settings.get("validation") else "")
                        + f", then `{e.settings.get('teardown')}` ({e.settings.get('where')}) "
                        "timed on the full table (T_N) and on the empty table (T_0): rate = "
                        "N / (T_N − T_0)"),
             [("repetition", text("repetition")),
              ("connections", text("connections", "connections")), ("loaded", _loaded),
              ("T_N full table (s)", text("full_seconds", "s")),
              ("T_0 empty table (s)", text("empty_seconds", "s")),
              ("tear-down rate (cps)", text("teardown_rate", "cps")),
              ("complete", yes("complete"))],
             "connection tear-down rate per repetition (RFC 9693)"),
]


class ConnectionRates(Family):
    per_direction = False

    @staticmethod
    def kind(entry: Entry) -> RateKind | None:
        reps = entry.summary.get("repetitions", [])
        return next((k for k in RATE_KINDS if any(k.key in r for r in reps)), None)

    def quantity(self, entry):
        kind = self.kind(entry)
        return kind.quantity if kind else "connection rate"

    def repetition_values(self, entry):
        kind = self.kind(entry)
        if kind is None:
            return []
        values = [r.get(kind.key) for r in entry.summary.get("repetitions", [])
                  if r.get("complete") or not kind.complete_only]
        return [v for v in values if v is not None]

    def precision(self, entry):
        kind = self.kind(entry)
        return kind.precision(entry) if kind else "-"

    def details(self, entry):
        kind = self.kind(entry)
        return [per_repetition(entry, kind.columns, kind.caption)] if kind else []


class Capacity(Family):
    key = "capacity"
    complete_only = True
    per_direction = False
    COLUMNS = [("repetition", text("repetition")),
               ("capacity CS (connections)", text("capacity", "connections")),
               ("rate RS (cps)", text("rate", "cps")), ("C0", text("c0", "connections")),
               ("R0 (cps)", text("r0", "cps")),
               ("exponential, binary iterations",
                lambda rep, entry: f"{rep.get('exponential_iterations')}, "
                                   f"{rep.get('binary_iterations')}"),
               ("limited by ranges", yes("limited_by_ranges")), ("trials", text("trials")),
               ("complete", yes("complete"))]

    def quantity(self, entry):
        return "connection tracking table capacity"

    def precision(self, entry):
        s = entry.settings
        return (f"from C0 = {_rate(s.get('c0'))} connections doubling while the rate stays at "
                f"least β·RS (β = {s.get('beta')}), then halving the interval until CT − CS ≤ "
                f"E = {_rate(s.get('capacity_error'))} connections, a count passing at γ·RS "
                f"(γ = {s.get('gamma')}); the rate at each count: {connection_search(s)}")

    def details(self, entry):
        return [per_repetition(entry, self.COLUMNS,
                               "connection tracking table capacity per repetition (RFC 9693)")]


# --------------------------------------------------------------------------------------------
# bursts: RFC 2544 §26.4 / RFC 9004 back-to-back frames
# --------------------------------------------------------------------------------------------


def _seconds(value) -> str:
    return "-" if value is None else f"{value:.6g}"


class Bursts(Family):
    key = "longest_burst"
    complete_only = True
    COLUMNS = [("repetition", text("repetition")),
               ("longest burst (frames)", text("longest_burst", "frames")),
               ("sending rate (fps)", lambda rep, entry: format_value(
                   rep.get("sending_rate") and round(rep["sending_rate"]), "fps")),
               ("bursts", steps), ("found", yes("found")),
               ("tester limited", yes("tester_limited")),
               ("at the search limit", yes("at_limit")), ("complete", yes("complete"))]

    def quantity(self, entry):
        return "longest burst without loss"

    def precision(self, entry):
        s = entry.settings
        return (f"binary search on the burst length in [1, {_rate(s.get('longest_burst'))}] "
                f"frames (bursts at {_rate(s.get('rate'))} frames/s, at most "
                f"{s.get('max_time')} s) until upper − lower ≤ {_rate(s.get('step'))} frames "
                f"(RFC 9004 §6.2 minimum step size); a burst the tester could not send is sent "
                f"again up to {s.get('retries')} times")

    def details(self, entry):
        summary, s = entry.summary, entry.settings
        buffer, rates = summary.get("buffer") or {}, summary.get("sending_rate") or {}
        sizes = ", ".join(dict.fromkeys(f"{d.get('frame_size')}"
                                        for d in summary.get("directions", {}).values()))
        spread = ", ".join(format_value(summary.get(k), "frames") for k in ("min", "max")) + \
            f", {_seconds(summary.get('stdev'))}"
        header = ["frame size (bytes)", "average longest burst (frames)",
                  "min, max, standard deviation", "N (searches)",
                  "bursts' measured sending rate (fps)", "Max Theoretical Frame Rate (fps)",
                  "throughput (fps)", "implied buffer time (s)", "corrected buffer time (s)"]
        ingress = rates.get("longest_bursts")
        row = [sizes, format_value(summary.get("average"), "frames"), spread,
               str(summary.get("n")), format_value(ingress and round(ingress), "fps"),
               format_value(rates.get("medium_maximum"), "fps"),
               format_value(buffer.get("throughput"), "fps"),
               _seconds(buffer.get("implied_seconds")), _seconds(buffer.get("corrected_seconds"))]
        caption = ("back-to-back frames (RFC 9004 §7 Table 1, with the buffer times of §6.4); "
                   f"step size {_rate(s.get('step'))} frames, longest burst searched "
                   f"{_rate(s.get('longest_burst'))} frames")
        return [(header, [row], caption),
                per_repetition(entry, self.COLUMNS, "longest burst per repetition (search)")]

    def notes(self, entry):
        summary, s = entry.summary, entry.settings
        buffer = summary.get("buffer") or {}
        notes = [f"buffer times: {s.get('buffer_time')}; throughput: "
                 f"{buffer.get('throughput_source') or 'none given'}"]
        if buffer.get("note"):
            notes.append(buffer["note"])
        if buffer.get("label"):
            notes.append(f"the corrected buffer time is the {buffer['label']}")
        if summary.get("at_limit"):
            notes.append("a search ended at its upper limit (back_to_back.max_time x rate): "
                         "the result is likely invalid, repeat with a higher limit "
                         "(RFC 9004 §6.2)")
        if summary.get("tester_limited"):
            notes.append("a search was bounded by bursts the tester could not send at the "
                         "rate: its result is a lower bound set by the tester")
        return notes


# --------------------------------------------------------------------------------------------
# scalability: RFC 8219 §10 overload scalability
# --------------------------------------------------------------------------------------------


class Scalability(Family):
    key = "degradation_percent"
    complete_only = True

    def quantity(self, entry):
        return "throughput degradation at the largest n (RFC 8219 §10)"

    def precision(self, entry):
        s = entry.settings
        return (f"for each n of {s.get('flows')}: "
                f"{search_precision(s.get('throughput') or {})}")

    def details(self, entry):
        flows = entry.summary.get("flows", [])
        # RFC 8219 §10.2.2: the table states the time T between the flows' starts (seconds).
        interval = entry.summary.get("start_interval_s") or 0
        rows = [[f"{f['flows']:,}", format_value(f.get("throughput"), "fps")]
                + [format_value((f.get("summary") or {}).get(k), "fps") for k in ("p1", "p99")]
                + ([f"{interval:g}"] if interval else [])
                + [_percent(f.get("degradation_percent")),
                   "yes" if f.get("tester_limited") else "no"] for f in flows]
        table = (["network flows n", "throughput median (fps)", "p1", "p99"]
                 + (["start interval T (s)"] if interval else [])
                 + ["degradation Xpd (%)", "tester limited"], rows,
                 "throughput (the applied frame rate, all n flows together) and performance "
                 "degradation per number of network flows "
                 + (f"started one after another, T = {interval:g} s apart (RFC 8219 §10.2.2"
                    if interval else "started together (RFC 8219 §10.2.1")
                 + ": Xpd = (X1 − Xn) / X1 × 100 from the medians)")
        counts = [f["flows"] for f in flows]
        per_rep = []
        for rep in entry.summary.get("repetitions", []):
            by_n = {row["flows"]: row for row in rep.get("flows", [])}
            per_rep.append([str(rep["repetition"])]
                           + [format_value(by_n.get(n, {}).get("throughput"), "fps")
                              for n in counts]
                           + [_percent(rep.get("degradation_percent")),
                              "yes" if rep.get("complete") else "no"])
        largest = counts[-1] if counts else "-"
        return [table, (["repetition"] + [f"n = {n:,} (fps)" for n in counts]
                        + [f"degradation at n = {largest} (%)", "complete"], per_rep,
                        "throughput per repetition and number of network flows")]

    def notes(self, entry):
        s = entry.settings
        notes = [f"network flows: {s.get('clients')}; start: {s.get('start')}"]
        if entry.summary.get("tester_limited"):
            notes.append("a throughput was bounded by the tester (a lower bound): its "
                         "degradation figure may show the tester, not the DUT")
        if entry.summary.get("range_limited"):
            notes.append(entry.summary["range_limited"])
        return notes


def _percent(value) -> str:
    return "-" if value is None else f"{value:.4g}"


# --------------------------------------------------------------------------------------------
# recovery, reset: RFC 2544 §26.5 system recovery, §26.6 / RFC 6201 reset
# --------------------------------------------------------------------------------------------


def _frame_sizes(entry: Entry) -> str:
    return ", ".join(dict.fromkeys(str(d.get("frame_size"))
                                   for d in entry.summary.get("directions", {}).values()))


def _directions(entry: Entry) -> list[str]:
    return list(dict.fromkeys(name for rep in entry.summary.get("repetitions", [])
                              for name in rep.get("directions", {})))


def _recovered(d: dict) -> str:
    """One direction's recovery in a repetition."""
    if d.get("recovered"):
        return _seconds(d.get("recovery_time"))
    bound = f" (≥ {_seconds(d['at_least'])})" if d.get("at_least") is not None else ""
    return ("not recovered" if d.get("recovered") is False else "undetermined") + bound


class Recovery(Family):
    key = "recovery_time"
    complete_only = True

    def quantity(self, entry):
        return "system recovery time"

    def precision(self, entry):
        s = entry.settings
        return (f"overload at {_rate(s.get('overload_rate'))} frames/s for {s.get('overload')} "
                f"s, then {_rate(s.get('reduced_rate'))} frames/s for {s.get('window')} s; "
                f"recovery time B − A, Timestamp B: {s.get('timestamp_b')}")

    def details(self, entry):
        summary, s = entry.summary, entry.settings
        names = _directions(entry)
        per_direction = summary.get("directions", {})
        header = (["frame size (bytes)", "throughput rate (fps)", "overload rate (fps)",
                   "reduced rate (fps)"]
                  + [f"recovery time {name} (s, average)" for name in names]
                  + ["recovery time (s, average)", "recovered / repetitions"])
        row = ([_frame_sizes(entry), _rate(s.get("rate")), _rate(s.get("overload_rate")),
                _rate(s.get("reduced_rate"))]
               + [_seconds(((per_direction.get(name) or {}).get("recovery_time") or {})
                           .get("average")) for name in names]
               + [_seconds(summary.get("average")),
                  f"{summary.get('recovered', 0)} / {len(summary.get('repetitions', []))}"])
        columns = [("repetition", text("repetition")), ("status", text("status")),
                   ("recovery time (s)", lambda rep, e: _seconds(rep.get("recovery_time")))]
        for name in names:
            columns += [
                (f"{name}: recovery (s)",
                 lambda rep, e, n=name: _recovered(rep["directions"].get(n, {}))),
                (f"{name}: Timestamp B (s)", lambda rep, e, n=name: _seconds(
                    rep["directions"].get(n, {}).get("timestamp_b"))),
                (f"{name}: lost before / after A", lambda rep, e, n=name: " / ".join(
                    "-" if v is None else f"{v:,}" for v in (
                        rep["directions"].get(n, {}).get("lost_before"),
                        rep["directions"].get(n, {}).get("lost_after"))))]
        columns.append(("complete", yes("complete")))
        return [(header, [row], "system recovery (RFC 2544 §26.5 reporting format; Timestamp A "
                                f"= {s.get('overload')} s)"),
                per_repetition(entry, columns, "system recovery per repetition")]

    def notes(self, entry):
        s = entry.settings
        return [f"Timestamp A: {s.get('timestamp_a')}; Timestamp B: {s.get('timestamp_b')}",
                *entry.summary.get("warnings", [])]


class Reset(Family):
    key = "reset_time"
    complete_only = True

    def quantity(self, entry):
        return "reset time"

    def precision(self, entry):
        s = entry.settings
        return (f"one trial of {s.get('duration')} s at {_rate(s.get('rate'))} frames/s per "
                f"repetition, the reset (dut.during_trial) {s.get('reset_at')} s into it; "
                "reset time from the longest loss period")

    def details(self, entry):
        summary, s = entry.summary, entry.settings
        frame_loss = summary.get("frame_loss_method") or {}
        reset = summary.get("reset") or {}
        header = ["reset type", "description", "frame size (bytes)", "rate (fps)",
                  "reset time, timestamp method (s, average)",
                  "reset time, frame-loss method (s, average)", "min, max (timestamp, s)",
                  "N (resets)"]
        row = [str(reset.get("type")), reset.get("description") or "-", _frame_sizes(entry),
               _rate(s.get("rate")), _seconds(summary.get("average")),
               _seconds(frame_loss.get("average")),
               f"{_seconds(summary.get('min'))}, {_seconds(summary.get('max'))}",
               str(summary.get("n"))]
        columns = [("repetition", text("repetition")), ("status", text("status")),
                   ("reset time, timestamp (s)", lambda rep, e: _seconds(rep.get("reset_time"))),
                   ("frame loss (s)", lambda rep, e: _seconds(rep.get("frame_loss_method")))]
        for name in _directions(entry):
            columns += [
                (f"{name}: timestamp, frame loss (s)", lambda rep, e, n=name: ", ".join(
                    _seconds(rep["directions"].get(n, {}).get(k))
                    for k in ("timestamp_method", "frame_loss_method"))),
                (f"{name}: lost (periods)", lambda rep, e, n=name: "{:,} ({:,})".format(
                    rep["directions"].get(n, {}).get("lost", 0),
                    rep["directions"].get(n, {}).get("periods", 0)))]
        columns.append(("complete", yes("complete")))
        return [(header, [row], "reset (RFC 2544 §26.6 / RFC 6201: one statement per reset "
                                "type)"),
                per_repetition(entry, columns, "reset time per repetition")]

    def notes(self, entry):
        s = entry.settings
        methods = s.get("methods") or {}
        return [f"{s.get('timestamps')}; timestamp method: {methods.get('timestamp')}; "
                f"frame-loss method: {methods.get('frame_loss')}",
                *entry.summary.get("warnings", [])]


FAMILIES: dict[str, Family] = {"search": Search(), "scan": Scan(), "trial": Trial(),
                               "delay": Delay(), "cps": ConnectionRates(),
                               "capacity": Capacity(), "bursts": Bursts(),
                               "scalability": Scalability(), "recovery": Recovery(),
                               "reset": Reset()}
UNKNOWN = Family()


def family(entry: Entry) -> Family:
    """The renderer of the entry's procedure (a plain one for an unregistered procedure)."""
    return FAMILIES.get(entry.family, UNKNOWN)
