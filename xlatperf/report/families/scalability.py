# SPDX-License-Identifier: BSD-3-Clause
"""Family "scalability": RFC 8219 §10 overload scalability (throughput and its degradation
against the number of network flows)."""

from ..collect import Entry
from ..figure import Plotter, dress, median_bars
from ..units import axis_label, format_value
from .base import Family, percent
from .search import search_precision


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
                + [percent(f.get("degradation_percent")),
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
                           + [percent(rep.get("degradation_percent")),
                              "yes" if rep.get("complete") else "no"])
        largest = counts[-1] if counts else "-"
        return [table, (["repetition"] + [f"n = {n:,} (fps)" for n in counts]
                        + [f"degradation at n = {largest} (%)", "complete"], per_rep,
                        "throughput per repetition and number of network flows")]

    def notes(self, entry):
        s = entry.settings
        notes = [f"network flows: {s.get('clients')}; start: {s.get('start')}"]
        return notes

    def warnings(self, entry):
        found = []
        if entry.summary.get("tester_limited"):
            found.append("a throughput was bounded by the tester (a lower bound): its "
                         "degradation figure may show the tester, not the DUT")
        if entry.summary.get("range_limited"):
            found.append(entry.summary["range_limited"])
        return found + super().warnings(entry)

    def draw(self, plotter, entry, label, number):
        scalability_plot(plotter, entry, label, number)


def scalability_plot(plotter: Plotter, entry: Entry, label: str, number: int) -> None:
    """Throughput (median, 1st/99th percentiles) and its degradation (RFC 8219 §10.2) against
    the number of network flows n."""
    flows = [f for f in entry.summary.get("flows", [])
             if median_bars(f.get("summary") or {}, 1.0) is not None]
    if not flows:
        return
    fig, (throughput, loss) = plotter.figure(2, height=3.6)
    xs = [f["flows"] for f in flows]
    stats = [median_bars(f["summary"], 1.0) for f in flows]
    throughput.errorbar(xs, [m for m, _, _ in stats], yerr=[[b for _, b, _ in stats],
                                                           [a for _, _, a in stats]],
                        marker="o", capsize=3, label="throughput (median)")
    limited = [(x, m) for x, (m, _, _), f in zip(xs, stats, flows) if f.get("tester_limited")]
    if limited:
        throughput.plot([x for x, _ in limited], [m for _, m in limited], marker="s",
                        linestyle="", fillstyle="none", markersize=10, color="black",
                        label="a lower bound: the tester could not send faster")
    log_x = max(xs) / min(xs) > 100
    dress(throughput, "network flows (n)", axis_label("throughput", "fps"), log_x=log_x,
          integer_x=not log_x,
          title=f"Overload scalability (RFC 8219 §10), error bars: 1st and 99th percentiles: "
                f"{label}")
    points = [(f["flows"], f["degradation_percent"]) for f in flows
              if f.get("degradation_percent") is not None]
    loss.plot([x for x, _ in points], [y for _, y in points], marker="o")
    loss.axhline(0, color="black", linewidth=0.8)
    dress(loss, "network flows (n)", "performance degradation Xpd (%)", log_x=log_x,
          integer_x=not log_x)
    plotter.save(fig, f"scalability_{number}",
                 f"Throughput and performance degradation against the number of network flows "
                 f"({label})")
