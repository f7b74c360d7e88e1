# SPDX-License-Identifier: BSD-3-Clause
"""What every report figure shares (matplotlib, drawn lazily): the Plotter that writes PNG and
SVG files with their captions, the axis dressing, and how directions and error bars are drawn.
The families draw their own per-measurement figures with these; plots.py the cross-measurement
ones."""

import re
import textwrap
from pathlib import Path

from .units import UNITS


class Plotter:
    def __init__(self, directory: Path, relative_to: Path):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        self.plt = plt
        self.directory = directory
        self.relative_to = relative_to
        self.written: list[tuple[str, str, str]] = []   # (png, svg, caption), report-relative
        directory.mkdir(parents=True, exist_ok=True)

    def figure(self, rows: int = 1, height: float = 4.5):
        fig, axs = self.plt.subplots(rows, 1, figsize=(7.5, height * rows), squeeze=False)
        return fig, [row[0] for row in axs]

    def save(self, fig, name: str, caption: str) -> None:
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
        png, svg = self.directory / f"{name}.png", self.directory / f"{name}.svg"
        fig.tight_layout()
        fig.savefig(png, dpi=110)
        # Text as text, not outlines: searchable, selectable and smaller SVGs.
        with self.plt.rc_context({"svg.fonttype": "none"}):
            fig.savefig(svg)
        self.plt.close(fig)
        self.written.append((str(png.relative_to(self.relative_to)),
                             str(svg.relative_to(self.relative_to)), caption))


def dress(ax, x_label: str, y_label: str, *, title: str | None = None, xlim=None, ylim=None,
          log_x: bool = False, legend: dict | None = None, grid: dict | None = None,
          integer_x: bool = False) -> None:
    """The set-up every plot shares: axis labels, limits and scale, title (10 pt), legend (7 pt
    unless `legend` says otherwise; only when something is labelled) and a light grid."""
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    if xlim is not None:
        ax.set_xlim(*xlim)
    if ylim is not None:
        ax.set_ylim(*ylim)
    if log_x:
        ax.set_xscale("log")
    from matplotlib.ticker import MaxNLocator, StrMethodFormatter
    if integer_x:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    for axis, label in ((ax.xaxis, x_label), (ax.yaxis, y_label)):
        # Frames/s and connections written out with thousands separators, never as an offset
        # ("1e7") the reader has to multiply in.
        if axis.get_scale() == "linear" and any(label.endswith(f"({u.axis})")
                                                 for u in UNITS.values() if u.count):
            axis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    if title is not None:
        ax.set_title(textwrap.fill(title, 90), fontsize=10)
    handles, labels = ax.get_legend_handles_labels()
    if labels:
        # Long labels (a campaign point's swept keys) wrapped, so the legend never squeezes
        # the plot.
        ax.legend(handles, [fit(label) for label in labels],
                  **{"fontsize": 7, **(legend or {})})
    ax.grid(**{"alpha": 0.3, **(grid or {})})


def fit(label: str, width: int = 60, lines: int = 3) -> str:
    return textwrap.fill(label, width, max_lines=lines, placeholder=" …")


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def median_bars(summary: dict, scale: float):
    """(median, below, above) scaled, the error bars to the 1st and 99th percentiles; None when
    a statistic is missing or infinite (null): such a point is not drawn."""
    values = [summary.get(k) for k in ("median", "p1", "p99")]
    if None in values:
        return None
    median, p1, p99 = (v * scale for v in values)
    return median, median - p1, p99 - median


# Directions drawn differently, so that equal values (the usual case in both directions) show
# as two lines, not one hiding the other.
DIRECTION_LINES = {"forward": {"linestyle": "-", "marker": "o"},
                   "reverse": {"linestyle": "--", "marker": "x", "markersize": 8}}


def direction_style(direction: str, markers: bool = True) -> dict:
    style = dict(DIRECTION_LINES.get(direction, {"linestyle": ":", "marker": "s"}))
    if not markers:
        style.pop("marker")
        style.pop("markersize", None)
    return style
