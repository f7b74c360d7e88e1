# SPDX-License-Identifier: BSD-3-Clause
"""Family "search" (RFC 2544 throughput by binary search or MLRsearch, selftest), "scan" (RFC
2544 frame loss rate) and "trial" (single trials at a rate)."""

from ..collect import Entry
from ..units import format_value, unit
from .base import Family, per_repetition, rate, steps, text, yes


def _percent_of_maximum(rep: dict, entry: Entry) -> str:
    return f"{100 * rep['throughput'] / entry.max_rate:.3f}" if entry.max_rate and \
        rep.get("throughput") is not None else "-"


def search_precision(s: dict, per: str = "frames/s") -> str:
    """How a throughput search searched (its settings): the reporting item "Search precision";
    `per`: what its rates count ("frames/s", "queries/s")."""
    if s.get("mode") == "mlrsearch":
        goals = "; ".join(
            f"{g.get('name')} {g.get('label')}: loss ratio {g.get('loss_ratio'):g}, exceed "
            f"ratio {g.get('exceed_ratio'):g}, final trial {g.get('final_trial_duration'):g} "
            f"s, duration sum {g.get('duration_sum'):g} s, width "
            + ("none" if g.get("width") is None else
               f"{g['width']:g}" + (" (relative)" if g.get("width_unit") == "relative"
                                    else f" {per}"))
            for g in s.get("goals", []))
        return (f"MLRsearch (docs/mlrsearch.md) in [{rate(s.get('min_load'))}, "
                f"{rate(s.get('max_load'))}] {per}; goals: {goals}")
    return (f"binary search in [{rate(s.get('min_rate'))}, {rate(s.get('max_rate'))}] "
            f"{per} until upper − lower ≤ {rate(s.get('error'))} {per}; loss "
            f"tolerance {s.get('loss_tolerance')}")


def _through_dut_frames(entry: Entry) -> list[str]:
    """Resolved queries through a DUT that knows no DNS (dns.server = ""), in frames/s as seed
    003 §4 converts them: a query one way and its answer the other."""
    dns, median = entry.settings.get("dns"), entry.summary.get("median")
    if not dns or dns.get("server") or entry.procedure == "selftest" or not median:
        return []
    return [f"{format_value(median, 'qps')} resolved queries/s through the DUT are "
            f"{format_value(median, 'fps')} frames/s in each direction (a query one way, its answer "
            "the other: seed 003 §4's conversion)"]


class Search(Family):
    key = "throughput"
    complete_only = True
    @staticmethod
    def columns(entry):
        return [("repetition", text("repetition")),
                (f"throughput ({entry.unit})", text("throughput", entry.unit)),
                ("% of maximum", _percent_of_maximum), ("trials", steps), ("found", yes("found")),
                ("tester limited", yes("tester_limited")), ("complete", yes("complete"))]

    def quantity(self, entry):
        return "throughput"

    def precision(self, entry):
        return search_precision(entry.settings, unit(entry.unit).rate or "frames/s")

    def details(self, entry):
        goals = entry.summary.get("goals") or []
        # MLRsearch: whether each repetition's primary goal result is regular (RFC 9971
        # §4.8.4.2: an irregular result is marked as such).
        columns = self.columns(entry) + ([("primary goal regular", yes("regular"))] if goals else [])
        tables = [per_repetition(entry, columns, "throughput per repetition")]
        if goals:
            def median(goal, key):
                stats = goal.get(key)
                return format_value(stats.get("median") if isinstance(stats, dict) else stats,
                                    entry.unit)
            rows = [[g.get("name"), g.get("label"), f"{g.get('loss_ratio'):g}",
                     f"{g.get('exceed_ratio'):g}", format_value(g.get("median"), entry.unit),
                     median(g, "relevant_upper_bound"), median(g, "conditional_throughput"),
                     "yes" if g.get("regular") else "no: " + "; ".join(g.get("irregular") or [])]
                    for g in goals]
            tables.append((["goal", "attributes", "loss ratio", "exceed ratio",
                            f"lower bound ({entry.unit})", f"upper bound ({entry.unit})",
                            f"conditional throughput ({entry.unit})", "regular"], rows,
                           "MLRsearch goals: relevant bounds and conditional throughput, median "
                           "over repetitions"))
        return tables

    def notes(self, entry):
        dut_limited = entry.summary.get("dut_limited")
        # A selftest of DNS queries: what RFC 8219 §9.2.1 makes of it (procedures/throughput.py).
        selftest = entry.summary.get("dns_selftest")
        return ([f"the throughput is {dut_limited}"] if dut_limited else []) + \
            ([selftest["statement"]] if selftest else []) + _through_dut_frames(entry)

    def warnings(self, entry):
        summary = entry.summary
        found = [f"the throughput is {summary[key]}"
                 for key in ("lower_bound", "range_limited", "middle_link_limited") if summary.get(key)]
        if summary.get("tester_limited") and not summary.get("lower_bound"):
            found.append("invalid trials occurred: the result may be limited by the tester, "
                         "not the DUT")
        if summary.get("partly_tester_limited"):
            found.append(summary["partly_tester_limited"])
        ceiling = entry.settings.get("tester_ceiling") or {}
        if entry.settings.get("dns") and entry.procedure != "selftest" and not ceiling.get("applies"):
            found.append("no RFC 8219 §9.2.1 self-test of the tester applies to this set-up (it MUST "
                         "precede a DNS64 measurement): nothing shows the tester kept up; `xlatperf "
                         "lab up` runs it for the lab, docs/dns.md \"The tester's self-test\" says how "
                         "elsewhere")
        return found + super().warnings(entry)


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


class Trial(Family):
    def quantity(self, entry):
        return "loss ratio"

    def repetition_values(self, entry):
        return [r["loss_ratio"] for r in entry.summary.get("repetitions", [])
                if r.get("valid") and r.get("loss_ratio") is not None]

    def precision(self, entry):
        return f"single trials at {rate(entry.settings.get('rate'))} {unit(entry.rate_unit).rate}"

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
        header = ["repetition", f"rate ({entry.rate_unit})", "valid"]
        for d in directions:
            header += [f"{d} received/sent", f"{d} loss"]
        return [(header, rows, "trials")]
