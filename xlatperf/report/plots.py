# SPDX-License-Identifier: BSD-3-Clause
"""The report's plots (PNG and SVG, matplotlib), each drawn only when the data for it exists:

  * median with 1st/99th-percentile error bars per frame size and direction (bar chart), with
    the medium's maximum frame rate for throughput (RFC 2544 §26.1);
  * frame loss rate against offered rate, both in % from 0 to 100 (RFC 2544 §26.3);
  * median against the proportion of translated traffic (RFC 8219 §5.3 mixes);
  * median against any other numeric swept key (DUT cores: with relative scale-up; number of
    connections or addresses: log axis when the values span more than a factor of 100);
  * the distribution (CDF) of the repetitions' results of points with at least 5 repetitions;
  * per delay measurement (RFC 8219 §7.2, §7.3): TL and WCL, or PDV and IPDV, per repetition,
    and the distribution of the delays the engine recorded (tagged frames or every frame);
  * per system recovery or reset measurement (RFC 2544 §26.5, §26.6 / RFC 6201): the
    recovery time, or the reset time by both methods, per repetition and direction.

Every measured value is plotted as `quantity (unit)` in its unit's plot scale (units.py): one
plot per quantity, so values of different meaning never share an axis."""

import json
import re

from .axes import axis_position, axis_title, key_title, numeric, setting, short
from .collect import Entry, group_title, groups
from .families import FAMILIES, family
from .figure import Plotter, dress, fit, median_bars, slug
from .grid import grid_axes
from .tables import point_label
from .units import axis_label, unit

MAX_FIGURES_PER_KIND = 12
CORE_KEY = re.compile(r"core|cpu|lcore|worker|queue", re.I)
CONNECTION_KEY = re.compile(r"conn|state_table|flows|tuples", re.I)
# Cycled with the colours, so that equal series (equal results) still show as several lines.
LINE_STYLES = ("-", "--", ":", "-.")










def y_label(entry: Entry) -> str:
    """The axis label of the entry's result: its family's quantity in its unit's plot scale."""
    return axis_label(family(entry).quantity(entry), entry.unit)




def _plottable(entry: Entry) -> bool:
    return median_bars(entry.summary, 1.0) is not None


def by_quantity(entries: list[Entry], usable=lambda entry: True):
    """The entries split into plots by what the y axis shows (quantity and unit: connection
    establishment and tear-down rates share the unit cps, not the meaning or the scale).
    Yields (file name part, usable entries) for each non-empty plot."""
    def quantity(entry):
        return family(entry).quantity(entry), entry.unit
    for key in sorted({quantity(e) for e in entries}):
        chosen = [e for e in entries if quantity(e) == key and usable(e)]
        if chosen:
            yield slug(key[0]), chosen


# --------------------------------------------------------------------------------------------
# Plots over all entries
# --------------------------------------------------------------------------------------------


# A reference line (the medium's maximum) more than 1 / OFF_SCALE times the highest result
# would flatten every bar to the axis: it goes to the legend instead.
OFF_SCALE = 0.1


def _frames(entry: Entry) -> tuple[int, int, str]:
    """An entry's frames on the bar charts' axis, in order: its frame size, or after every size
    its IMIX (traffic.imix, RFC 6985) by name."""
    imix = entry.config_value("traffic.imix")
    if imix:
        return 1, 0, f"IMIX {imix}"
    dns = entry.settings.get("dns")
    if dns:   # DNS queries: their size follows from the zone (docs/dns.md), not traffic.frame_size
        return 2, dns["query_frame_size"], f"{dns['qtype']} queries, {dns['query_frame_size']} B"
    size = entry.config_value("traffic.frame_size")
    return 0, size, str(size)


def bar_charts(plotter: Plotter, entries: list[Entry], axes: list[str]) -> None:
    """Median with 1st/99th-percentile error bars per frame size (groups) and direction. Results
    that belong to no direction (RFC 9693 roles) only when frame sizes are swept."""
    from matplotlib.patches import Rectangle  # matplotlib only when plotting

    entries = [e for e in entries
               if family(e).per_direction or "traffic.frame_size" in axes or "traffic.imix" in axes]
    others = [k for k in axes if k not in ("traffic.frame_size", "traffic.imix", "traffic.direction")]
    # A procedure over a two-dimensional table's keys (grid.py: RFC 8219 §9.2's DNS64 grid)
    # has its points in the table and its line plots: a chart of one bar per point adds nothing.
    tabled = {procedure for procedure in {e.procedure for e in entries}
              if grid_axes(procedure, [e for e in entries if e.procedure == procedure], axes)}
    for number, (group_key, group) in enumerate(list(groups(entries, others).items())
                                                [:MAX_FIGURES_PER_KIND], 1):
        usable = [e for e in group if _plottable(e)]
        if not usable or (len(usable) == 1 and usable[0].procedure in tabled):
            continue
        procedure, unit_name = group_key[0], group_key[1]
        scale = unit(unit_name).scale
        sizes = sorted({_frames(e) for e in usable})
        directions = []
        for e in usable:
            if e.config_value("traffic.direction") not in directions:
                directions.append(e.config_value("traffic.direction"))
        fig, (ax,) = plotter.figure()
        width = 0.8 / max(len(directions), 1)
        tops, any_limited = [0.0], False
        for i, direction in enumerate(directions):
            xs, medians, low, high, limited = [], [], [], [], []
            for j, size in enumerate(sizes):
                match = [e for e in usable if _frames(e) == size
                         and e.config_value("traffic.direction") == direction]
                if not match:
                    continue
                median, below, above = median_bars(match[0].summary, scale)
                xs.append(j - 0.4 + width * (i + 0.5))
                medians.append(median)
                low.append(below)
                high.append(above)
                limited.append(bool(match[0].summary.get("tester_limited")))
                tops.append(median + above)
            bars = ax.bar(xs, medians, width=width * 0.9, yerr=[low, high], capsize=3)
            colour = bars.patches[0].get_facecolor() if bars.patches else None
            # Legend entries are drawn from empty proxies, so that a hatched bar does not
            # give the direction's entry its hatching.
            ax.add_patch(Rectangle((0, 0), 0, 0, facecolor=colour, label=f"{direction}"))
            for bar, is_limited in zip(bars, limited):
                if is_limited:   # a lower bound set by the tester, not the DUT's value
                    bar.set_hatch("///")
                    bar.set_edgecolor("black")
                    any_limited = True
        if any_limited:
            ax.add_patch(Rectangle((0, 0), 0, 0, facecolor="white", edgecolor="black",
                                   hatch="///", label="lower bound: the tester\ncould not send "
                                                      "faster"))
        if unit_name == "fps":
            for j, size in enumerate(sizes):
                limits = [e.max_rate for e in usable if _frames(e) == size]
                if not limits:
                    continue
                if max(tops) < OFF_SCALE * max(limits):
                    # Results far below the medium's maximum would be flat bars under its line:
                    # keep the results' scale and say the maximum in the legend instead.
                    if j == 0:
                        ax.plot([], [], " ", label=fit(
                            f"medium's maximum {max(limits) * scale:,.0f} frames/s "
                            "(off the scale)", 28))
                else:
                    ax.hlines(max(limits), j - 0.45, j + 0.45, colors="black", linestyles="--",
                              label="medium's maximum frame rate" if j == 0 else None)
        ax.set_xticks(range(len(sizes)), [_size_tick(usable, frames) for frames in sizes])
        title = group_title(group_key, others)
        imix = any(kind == 1 for kind, _, _ in sizes)
        queries = any(kind == 2 for kind, _, _ in sizes)
        chained = any(e.rate_source for e in usable)
        dress(ax, ("frame size (bytes) or IMIX (RFC 6985)" if imix else
                   "DNS queries (type, query frame size)" if queries else "frame size (bytes)")
              + ("; below it the rate measured at: the point's throughput (frames/s)"
                 if chained else ""),
              y_label(usable[0]),
              title=f"median with 1st/99th percentiles: {title}",
              ylim=(0, 100) if unit_name == "ratio" else None,
              legend={"title": "direction", "fontsize": 8, "loc": "upper left",
                      "bbox_to_anchor": (1.01, 1.0)}, grid={"axis": "y"})
        plotter.save(fig, f"bars_{number}_{procedure}",
                     f"Median with 1st/99th-percentile error bars per frame size and direction "
                     f"({title})")


def _size_tick(entries: list[Entry], frames: tuple[int, int, str]) -> str:
    """A frame size's (or IMIX's) tick label; with chained measurements also the rate(s) they
    ran at."""
    rates = sorted({e.fixed_rate for e in entries if e.rate_source and e.fixed_rate is not None
                    and _frames(e) == frames})
    return frames[2] + "".join(f"\n{rate:,} fps" for rate in rates)


def _flr_series(entries: list[Entry], axes: list[str]) -> dict[str, list[tuple[float, float]]]:
    """Frame loss rate (%) against offered rate (% of the maximum) per series: a frame-loss
    scan's rates, or trials at several rates."""
    series: dict[str, list[tuple[float, float]]] = {}
    for entry in entries:
        if entry.family == "scan":
            points = [(r["percent"], 100 * r["median"]) for r in entry.summary.get("rates", [])
                      if r.get("median") is not None and r.get("percent") is not None]
            series[point_label(entry, axes)] = sorted(points)
    by_series: dict[str, list[tuple[float, float]]] = {}
    for entry in entries:
        if entry.family != "trial" or entry.summary.get("median") is None:
            continue
        if not entry.max_rate or entry.fixed_rate is None:
            continue
        name = "trial, " + ", ".join(setting(k, entry.config_value(k))
                                     for k in axes) if axes else "trial"
        by_series.setdefault(name, []).append((100 * entry.fixed_rate / entry.max_rate,
                                               100 * entry.summary["median"]))
    series.update({k: sorted(v) for k, v in by_series.items() if len({x for x, _ in v}) > 1})
    return series


def flr_plot(plotter: Plotter, entries: list[Entry], axes: list[str]) -> None:
    series = _flr_series(entries, axes)
    if not series:
        return
    fig, (ax,) = plotter.figure()
    for name, points in list(series.items())[:20]:
        ax.plot([x for x, _ in points], [y for _, y in points], marker="o", label=name)
    dress(ax, "offered rate (% of the maximum frame rate)", "frame loss rate (%)",
          title="Frame loss rate (RFC 2544 §26.3), median over repetitions",
          xlim=(0, 100), ylim=(0, 100))
    plotter.save(fig, "frame_loss_rate", "Frame loss rate against offered rate")


# The panels under a line plot (relative=...): "ratio" the median relative to the median at
# the smallest x; "scale-up" (cores) also the speed-up against linear scaling and the relative
# scale-up of draft-lencse-v6ops-transition-scalability §2.3: speed-up / (n / n0), 1 = linear.
RELATIVE_PANELS = {None: 0, "ratio": 1, "scale-up": 2}


def line_plot(plotter: Plotter, entries: list[Entry], axes: list[str], x_of, x_label: str,
              name: str, caption: str, relative: str | None = None, log_x: bool = False) -> None:
    others = [k for k in axes if k not in ("traffic.mix_n", "traffic.mix_m") and not
              (name != "mix" and k == x_of.key)]
    for quantity, usable in by_quantity(entries, _plottable):
        panels = RELATIVE_PANELS[relative]
        if len({x_of(e) for e in usable}) < 2:
            # The key varies only between results of other quantities (a directory holding
            # several procedures): nothing of this quantity was measured against it.
            continue
        scale = unit(usable[0].unit).scale
        # A key swept together with x (a linked axis: dut.cores with its CPU mask) has one
        # value per x: it is part of x, not a series of its own.
        by_x: dict = {}
        for e in usable:
            by_x.setdefault(x_of(e), []).append(e.flat_config())
        series_keys = [k for k in others if any(
            len({json.dumps(c.get(k), default=str) for c in configs}) > 1
            for configs in by_x.values())]
        series = []
        for group_key, group in list(groups(usable, series_keys).items())[:MAX_FIGURES_PER_KIND]:
            # by x alone: points with equal x (keys swept outside `axes`) keep their order
            points = sorted(((x_of(e), median_bars(e.summary, scale)) for e in group),
                            key=lambda p: p[0])
            series.append((group_title(group_key, series_keys), points))
        # Relative panels only when a first result is there to divide by (a loss ratio of 0
        # is not).
        if not any(points[0][1][0] and points[0][0] for _, points in series):
            panels = 0
        fig, axs = plotter.figure(1 + panels, height=4.5 if not panels else 3.4)
        reference = None
        for number, (label, points) in enumerate(series):
            style = LINE_STYLES[number % len(LINE_STYLES)]
            xs = [x for x, _ in points]
            ys = [s[0] for _, s in points]
            err = [[s[1] for _, s in points], [s[2] for _, s in points]]
            axs[0].errorbar(xs, ys, yerr=err, marker="o", capsize=3, linestyle=style,
                            label=label)
            if not panels or not ys[0] or not xs[0]:
                continue
            reference = xs[0]
            ratio = [y / ys[0] for y in ys]
            axs[1].plot(xs, ratio, marker="o", linestyle=style, label=label)
            if relative == "scale-up":
                axs[2].plot(xs, [r / (x / xs[0]) for r, x in zip(ratio, xs)], marker="o",
                            linestyle=style, label=label)
        integer_x = all(isinstance(x, int) for x in by_x)
        dress(axs[0], x_label, y_label(usable[0]), log_x=log_x, integer_x=integer_x,
              title=f"{caption} (error bars: 1st and 99th percentiles)")
        if reference is not None and relative == "ratio":
            dress(axs[1], x_label, f"median / median at {reference:g}", log_x=log_x,
                  integer_x=integer_x,
                  title=f"Relative to the result at {short(x_of.key)} = {reference:g}")
        elif reference is not None:
            low, high = min(x_of(e) for e in usable), max(x_of(e) for e in usable)
            axs[1].plot([low, high], [low / reference, high / reference], color="grey",
                        linestyle="--", label="linear scaling (n / n0)")
            dress(axs[1], x_label, f"speed-up (median / median at {reference:g})",
                  log_x=log_x, integer_x=integer_x,
                  title=f"Speed-up: result(n) / result(n0), n0 = {reference:g}")
            axs[2].axhline(1.0, color="grey", linestyle="--", label="linear scaling")
            dress(axs[2], x_label, "relative scale-up", log_x=log_x, ylim=(0, None),
                  integer_x=integer_x,
                  title="Relative scale-up: result(n) / (n / n0 × result(n0)), 1 = linear "
                        "(draft-lencse-v6ops-transition-scalability §2.3)")
        plotter.save(fig, f"{name}_{quantity}", caption)


def axis_plots(plotter: Plotter, entries: list[Entry], axes: list[str]) -> None:
    if "traffic.mix_n" in axes or "traffic.mix_m" in axes:
        def translated(entry):
            config = entry.flat_config()
            return 100 * config["traffic.mix_m"] / config["traffic.mix_n"]
        translated.key = "traffic.mix_n"
        line_plot(plotter, entries, axes, translated,
                  "translated traffic (% of all frames)", "mix",
                  "Median against the proportion of translated traffic (RFC 8219 §5.3)")
    skip = {"traffic.frame_size", "traffic.direction", "traffic.mix_n", "traffic.mix_m",
            "traffic.seed"}
    for key in axes:
        values = [e.config_value(key) for e in entries]
        if key in skip or not numeric(values) or len(set(values)) < 2:
            continue

        def x_of(entry, key=key):
            return axis_position(key, entry.config_value(key))
        x_of.key = key
        # A log axis only for positive values spanning more than a factor of 100.
        log_x = min(values) > 0 and max(values) / min(values) > 100
        if CORE_KEY.search(key):
            line_plot(plotter, entries, axes, x_of, f"{key} (number of cores)",
                      f"scaleup_{short(key)}", f"Scale-up: median against {key}",
                      relative="scale-up", log_x=log_x)
        elif CONNECTION_KEY.search(key):
            line_plot(plotter, entries, axes, x_of, f"{key} (number of connections)",
                      f"connections_{short(key)}", f"Median against {key}", log_x=log_x,
                      relative="ratio")
        else:
            # A DUT variable is what a study sweeps on purpose: its results relative to the
            # first value, too.
            line_plot(plotter, entries, axes, x_of, axis_title(key), f"vs_{short(key)}",
                      f"Median against {key_title(key)}", log_x=log_x,
                      relative="ratio" if key.startswith("dut.") else None)


def cdf_plot(plotter: Plotter, entries: list[Entry], axes: list[str]) -> None:
    """The distribution of the repetitions' results, one plot per quantity."""
    def values(entry):
        return sorted(family(entry).repetition_values(entry))
    for quantity, usable in by_quantity(entries, lambda entry: len(values(entry)) >= 5):
        scale = unit(usable[0].unit).scale
        fig, (ax,) = plotter.figure()
        for number, entry in enumerate(usable[:MAX_FIGURES_PER_KIND]):
            found = values(entry)
            n = len(found)
            # from 0 at the smallest value: the ECDF's first step is drawn, not implied
            ax.step([found[0] * scale] + [v * scale for v in found],
                    [0] + [(i + 1) / n for i in range(n)], where="post",
                    linestyle=LINE_STYLES[number % len(LINE_STYLES)],
                    label=f"{entry.name}: {point_label(entry, axes)} (n = {n})")
        what = family(usable[0]).quantity(usable[0])
        dress(ax, y_label(usable[0]), "cumulative fraction of repetitions", ylim=(0, 1.02),
              title=f"Distribution (CDF) of the repetitions' {what}")
        plotter.save(fig, f"cdf_repetitions_{quantity}",
                     f"Distribution (CDF) of the repetitions' results ({what})")


# --------------------------------------------------------------------------------------------
# Delay measurements (family "delay"): per measurement
# --------------------------------------------------------------------------------------------













# --------------------------------------------------------------------------------------------
# Back-to-back frames (family "bursts") and overload scalability (family "scalability")
# --------------------------------------------------------------------------------------------






# --------------------------------------------------------------------------------------------
# System recovery (family "recovery") and reset (family "reset")
# --------------------------------------------------------------------------------------------








def entry_plots(plotter: Plotter, entries: list[Entry], axes: list[str]) -> None:
    """Each family's own figures of its first MAX_FIGURES_PER_KIND measurements."""
    for name, found in FAMILIES.items():
        chosen = [e for e in entries if e.family == name][:MAX_FIGURES_PER_KIND]
        for number, entry in enumerate(chosen, 1):
            found.draw(plotter, entry, f"point {entry.name}: {point_label(entry, axes)}", number)


def draw_all(plotter: Plotter, entries: list[Entry], axes: list[str]) -> None:
    bar_charts(plotter, entries, axes)
    flr_plot(plotter, entries, axes)
    axis_plots(plotter, entries, axes)
    cdf_plot(plotter, entries, axes)
    entry_plots(plotter, entries, axes)
