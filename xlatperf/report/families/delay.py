# SPDX-License-Identifier: BSD-3-Clause
"""Family "delay": RFC 8219 latency (TL, WCL) and PDV (PDV, IPDV), docs/delay.md; per
measurement the delays per repetition and the distribution of the delays the engine recorded."""

from dataclasses import dataclass
from typing import Callable

from ..collect import Entry
from ..figure import Plotter, direction_style, dress, slug
from ..units import axis_label, format_value, unit
from .base import Family, rate

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
            return (f"one trial per repetition at {rate(s.get('rate'))} frames/s, "
                    f"{s.get('timestamps')} tagged frames per direction after {s.get('delay')} s")
        return (f"one trial per repetition at {rate(s.get('rate'))} frames/s, every frame's "
                f"delay in a histogram ({s.get('histogram')})")

    def details(self, entry):
        tables = [statistics_per_direction(entry)] if entry.summary.get("directions") else []
        series = delay_series(entry)
        if not series:
            return tables
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
        return tables + [(header, rows, "delays per repetition (ms; ∞: lost or late tagged "
                          "frames, RFC 8219 §7.2)")]

    def notes(self, entry):
        notes = []
        source = entry.rate_source
        if source:
            where = (f"throughput point {source['index']}" if source.get("index") is not None
                     else source.get("directory") or "a throughput result")
            notes.append(f"measured at {rate(source.get('rate'))} frames/s, the throughput of "
                         f"{where}: {source.get('statistic')} (median "
                         f"{rate(source.get('throughput'))}, n = {source.get('n')})")
            if source.get("note"):
                notes.append(source["note"])
        return notes

    def draw(self, plotter, entry, label, number):
        delay_repetitions(plotter, entry, label, number)
        delay_distribution(plotter, entry, label, number)


def statistics_per_direction(entry: Entry):
    """Each direction's delay metrics over the repetitions (RFC 8219 §7.2, §7.3, §12): TL and
    WCL, or PDV and IPDV; a summary of infinite values (lost tagged frames) says in how many."""
    rows = []

    def row(direction, metric, stats, note=""):
        if stats.get("infinite"):
            note = (note + "; " if note else "") + f"∞ in {stats['infinite']} of {stats['n']}"
        rows.append([direction, metric]
                    + [format_value(stats.get(k), "ms") if stats.get("n") else "-"
                       for k in ("median", "p1", "p99", "min", "max")] + [note or "-"])

    for direction, info in entry.summary.get("directions", {}).items():
        if "typical_latency" in info:
            lost = info.get("lost_tagged", 0)
            row(direction, "TL", info["typical_latency"],
                f"{lost}/{info.get('tagged', 0)} tagged lost" if lost else "")
            row(direction, "WCL", info["worst_case_latency"])
        elif "pdv" in info:
            row(direction, "PDV", info["pdv"])
            for key, stats in info.get("ipdv", {}).items():
                row(direction, f"IPDV {key}", stats)
    return (["direction", "metric", "median (ms)", "p1 (ms)", "p99 (ms)", "min (ms)",
             "max (ms)", "note"], rows,
            f"delay per direction over n = {entry.summary.get('n', 0)} repetition(s)")


DELAY_AXIS = "one-way delay (µs)"


# The per-repetition delay metrics by what they measure, each group on its own plot.
DELAY_PANELS = [("latency", ("TL", "WCL"), "latency per repetition (RFC 8219 §7.2)"),
                ("delay variation", ("PDV", "IPDV min", "IPDV median", "IPDV max"),
                 "delay variation per repetition (RFC 8219 §7.3)")]


def delay_repetitions(plotter: Plotter, entry: Entry, label: str, number: int) -> None:
    """TL and WCL (latency) or PDV and IPDV (pdv) per repetition and direction, in µs; an
    infinite value (lost or late tagged frames) is not drawn and is counted in the legend."""
    series = delay_series(entry)
    scale = unit("ms").scale
    for quantity, metrics, caption in DELAY_PANELS:
        chosen = {k: v for k, v in series.items() if k[0] in metrics}
        if not chosen:
            continue
        fig, (ax,) = plotter.figure()
        for (metric, direction), values in chosen.items():
            finite = [(n, v * scale) for n, v in values if v is not None]
            infinite = len(values) - len(finite)
            name = f"{metric} {direction}" + (
                f" (∞ in {infinite} of {len(values)}: lost tagged frames, not drawn)"
                if infinite else "")
            # One colour per metric, one line style per direction.
            ax.plot([n for n, _ in finite], [v for _, v in finite], label=name,
                    color=f"C{metrics.index(metric)}", **direction_style(direction))
        dress(ax, "repetition", axis_label(quantity, "ms"), integer_x=True,
              title=f"{caption}: {label}",
              legend={"loc": "upper left", "bbox_to_anchor": (1.01, 1.0)})
        plotter.save(fig, f"delay_{number}_{slug(quantity)}_per_repetition",
                     f"{caption[0].upper()}{caption[1:]} ({label})")


def _merged_buckets(histograms: list[dict]) -> list[tuple[float, float, int]]:
    """The trials' histogram buckets [low_ns, high_ns, count] added up per bucket (the engine's
    buckets have fixed bounds, so the same bucket has the same bounds in every trial)."""
    counts: dict[tuple[float, float], int] = {}
    for histogram in histograms:
        for low, high, count in histogram.get("buckets", []):
            counts[(low, high)] = counts.get((low, high), 0) + count
    return sorted((low, high, count) for (low, high), count in counts.items())


def delay_distribution(plotter: Plotter, entry: Entry, label: str, number: int) -> None:
    """The CDF of the delays the engine recorded over the valid trials, per direction: the
    tagged frames' delays (latency; a lost or late frame is +∞, so the curve ends below 1) and
    every received frame's delay from the histograms (pdv)."""
    tagged: dict[str, list] = {}
    histograms: dict[str, list[dict]] = {}
    for record in entry.trials:
        if not record.get("valid"):
            continue
        for direction, data in (record.get("delay") or {}).items():
            if "tagged" in data:
                tagged.setdefault(direction, []).extend(data["tagged"].get("delays_ns", []))
            if data.get("histogram"):
                histograms.setdefault(direction, []).append(data["histogram"])
    if not tagged and not histograms:
        return
    fig, (ax,) = plotter.figure()
    spans = []
    for direction, delays in tagged.items():
        finite = sorted(d / 1000 for d in delays if d is not None)
        if not delays:
            continue
        lost = len(delays) - len(finite)
        ax.step(finite, [(i + 1) / len(delays) for i in range(len(finite))], where="post",
                **direction_style(direction, markers=False), label=f"{direction}: {len(delays):,} tagged frames"
                      + (f", {lost:,} lost or late (+∞: the curve ends below 1)" if lost
                         else ""))
        spans += finite[:1] + finite[-1:]
    for direction, found in histograms.items():
        buckets = _merged_buckets(found)
        total = sum(count for _, _, count in buckets)
        if not total:
            continue
        xs, ys, seen = [buckets[0][0] / 1000], [0.0], 0
        for _, high, count in buckets:
            seen += count
            xs.append(high / 1000)
            ys.append(seen / total)
        ax.plot(xs, ys, **direction_style(direction, markers=False),
                label=f"{direction}: every received frame ({total:,}, histogram of "
                              f"{len(found)} trial(s))")
        spans += [xs[0], xs[-1]]
    positive = [s for s in spans if s > 0]
    log_x = bool(positive) and max(positive) / min(positive) > 100
    what = "tagged frames" if tagged and not histograms else \
        "received frames" if histograms and not tagged else "frames"
    dress(ax, DELAY_AXIS, f"cumulative fraction of {what}", ylim=(0, 1.02), log_x=log_x,
          title=f"Delay distribution (CDF) over the valid trials: {label}")
    plotter.save(fig, f"delay_{number}_distribution",
                 f"Distribution (CDF) of the one-way delays of the {what} ({label})")
