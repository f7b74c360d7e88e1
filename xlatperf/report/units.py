# SPDX-License-Identifier: BSD-3-Clause
"""What each summary unit (ProcedureSpec.unit) means in a report: how a value is written in a
table, what the table's unit column says, and how a plot axis shows it."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Unit:
    table: str          # the results table's unit column
    axis: str           # the unit in a plot's axis label, after scaling
    scale: float = 1.0  # plotted value = summary value x scale
    count: bool = False  # whole things: shown exactly with thousands separators
    rate: str = ""       # a rate's: what a search's range and precision are given in


UNITS = {
    "fps": Unit("frames/s per direction", "frames/s per direction", count=True, rate="frames/s"),
    "cps": Unit("connections/s", "connections/s", count=True),
    "qps": Unit("queries/s", "queries/s", count=True, rate="queries/s"),  # DNS queries validly answered in time
    "connections": Unit("connections", "connections", count=True),
    "ratio": Unit("loss ratio, shown in %", "%", scale=100.0),
    # RFC 8219 reports delays in ms; the delays of a DUT are mostly microseconds, so plots
    # show µs (tables keep the summaries' ms).
    "ms": Unit("ms", "µs", scale=1000.0),
    "s": Unit("s", "s"),
    "frames": Unit("frames", "frames", count=True),   # back-to-back burst lengths
    "%": Unit("%", "%"),                              # RFC 8219 §10 performance degradation
}


def unit(name: str) -> Unit:
    return UNITS.get(name) or Unit(name, name)


def format_value(value, unit_name: str) -> str:
    """How the report shows a statistic: frames/s, connections/s and connections with thousands
    separators (exact), loss ratios in % (6 significant digits), anything else with 6
    significant digits in its own unit."""
    if value is None:
        return "-"
    if unit(unit_name).count:
        return f"{int(value):,}" if float(value).is_integer() else f"{value:,.1f}"
    if unit_name == "ratio":
        return f"{100 * value:.6g} %"
    return f"{value:.6g}"


def axis_label(quantity: str, unit_name: str) -> str:
    """`quantity (unit)` as every plot axis writes a measured value."""
    return f"{quantity} ({unit(unit_name).axis})"
