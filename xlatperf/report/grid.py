# SPDX-License-Identifier: BSD-3-Clause
"""Two-dimensional results tables: a procedure's medians with their 1st and 99th percentiles
over two crossed swept keys, a row per value of the one, a column per value of the other.

RFC 8219 §9.2 asks for DNS64 performance so, over the shares of repeated (cached) names and of
names with a AAAA record, with the result at 0 % + 0 % as the primary one; GRIDS holds what such
a standard fixes. Any other procedure swept over exactly two numeric keys gets the same table,
its axes in the order of the report's swept keys."""

import json
from dataclasses import dataclass
from typing import Callable

from .axes import axis_title, key_name, numeric, setting, value_text
from .collect import Entry, group_title, groups
from .families import family
from .units import format_value, unit


@dataclass(frozen=True)
class Grid:
    """A standard's two-dimensional table: its axes, and the point it requires as the primary
    result."""
    rows: str
    columns: str
    source: str                        # the standard's section
    required: tuple                    # the (rows, columns) values of the primary result
    repeat: int                        # the repetitions the standard asks for
    applies: Callable[[Entry], bool]   # whether the measurement is what the standard measures


GRIDS = {
    # Either axis swept makes the table (a one-dimensional excerpt: the other's one value in its
    # heading). The primary result is a DNS64 server's (Figure 3), not of queries resolved
    # through a DUT that knows no DNS (dns.server = "").
    "dns64": Grid("dns.cache_share", "dns.aaaa_share", "RFC 8219 §9.2", (0, 0), 20,
                  lambda entry: bool(entry.config_value("dns.server"))),
}
# Numeric keys that are no dimension of their own: a mix is two keys swept together (the
# proportion of translated traffic), a seed no quantity.
NOT_DIMENSIONS = {"traffic.mix_n", "traffic.mix_m", "traffic.seed"}


@dataclass
class GridTable:
    header: list[str]
    rows: list[list[str]]
    caption: str
    primary: str | None   # the statement of the standard's primary result (GRIDS), or None


def grid_axes(procedure: str, entries: list[Entry], axes: list[str]) -> tuple[str, str] | None:
    """The (rows, columns) keys of the procedure's table, or None: its standard's (GRIDS) when
    either is swept, else exactly two swept numeric keys that cross (more combinations than
    values of either: keys swept together, a named axis, make a diagonal, not a table)."""
    configs = [e.flat_config() for e in entries]

    def distinct(*keys) -> set:
        return {json.dumps([c.get(k) for k in keys], default=str) for c in configs}
    swept = [k for k in axes if len(distinct(k)) > 1]
    grid = GRIDS.get(procedure)
    if grid and {grid.rows, grid.columns} & set(swept):
        return grid.rows, grid.columns
    found = [k for k in swept if k not in NOT_DIMENSIONS and numeric(c.get(k) for c in configs)]
    if len(found) != 2 or len(distinct(*found)) <= max(len(distinct(k)) for k in found):
        return None
    return found[0], found[1]


def grid_tables(entries: list[Entry], axes: list[str]) -> list[GridTable]:
    """A table per procedure with two dimensions (grid_axes) and per combination of the values of
    its other swept keys."""
    tables = []
    for procedure in dict.fromkeys(e.procedure for e in entries):
        chosen = [e for e in entries if e.procedure == procedure]
        dimensions = grid_axes(procedure, chosen, axes)
        if dimensions is None:
            continue
        others = [k for k in axes if k not in dimensions and
                  len({json.dumps(e.config_value(k), default=str) for e in chosen}) > 1]
        for group_key, group in groups(chosen, others).items():
            tables.append(_table(group, *dimensions, group_title(group_key, others)))
    return tables


def _sorted(values) -> list:
    return sorted(set(values), key=lambda v: (v is None, v if v is not None else 0))


def _statistics(entry: Entry, with_n: bool = False) -> str:
    """The entry's median [1st – 99th percentile]; with n when the table's repetitions differ."""
    summary, name = entry.summary, entry.unit
    text = (f"{format_value(summary.get('median'), name)} [{format_value(summary.get('p1'), name)}"
            f" – {format_value(summary.get('p99'), name)}]")
    if with_n:
        text += f", n = {summary.get('n')}"
    return text + ("" if summary.get("complete") else " (incomplete)")


def _table(group: list[Entry], rows: str, columns: str, title: str) -> GridTable:
    """The group's table over the values measured of either key; its standard's primary
    result when the keys are the standard's."""
    first = group[0]
    row_values = _sorted(e.config_value(rows) for e in group)
    column_values = _sorted(e.config_value(columns) for e in group)
    repetitions = _sorted(e.summary.get("n") for e in group)
    # Several results of one combination (a directory holding two runs of it): each of them.
    cells: dict[tuple, list[Entry]] = {}
    for entry in group:
        cells.setdefault((entry.config_value(rows), entry.config_value(columns)), []).append(entry)
    body = [[value_text(rows, r)] + ["; ".join(_statistics(e, len(repetitions) > 1)
                                               for e in cells.get((r, c), [])) or "not measured"
                                     for c in column_values] for r in row_values]
    header = [f"{key_name(rows)} ↓ / {key_name(columns)} →"] + \
        [value_text(columns, c) for c in column_values]
    grid = GRIDS.get(first.procedure)
    standard = grid is not None and (grid.rows, grid.columns) == (rows, columns)
    caption = (f"{title}{f' ({grid.source})' if standard else ''}: median "
               f"{family(first).quantity(first)} ({unit(first.unit).table}) "
               "[1st – 99th percentile]"
               + (f" of {repetitions[0]} repetitions" if len(repetitions) == 1 else "")
               + f"; rows: {axis_title(rows)}; columns: {axis_title(columns)}")
    primary = None
    if standard and grid.applies(first):
        primary = _primary(grid, cells.get(grid.required, []), title)
    return GridTable(header, body, caption, primary)


def _primary(grid: Grid, found: list[Entry], title: str) -> str:
    """The standard's primary result: the required point's median and percentiles, or that it
    was not measured."""
    keys = (grid.rows, grid.columns)
    values = " + ".join(value_text(k, v) for k, v in zip(keys, grid.required))
    where = f"{grid.source}; {title}: " + ", ".join(setting(k, v)
                                                    for k, v in zip(keys, grid.required))
    if not found:
        return (f"**The REQUIRED {values} point was not measured** ({where}): the primary "
                "result, the median there, is missing.")
    parts = []
    for entry in found:
        summary, name = entry.summary, entry.unit
        n = summary.get("n") or 0
        few = f"; {grid.source} asks for at least {grid.repeat} repetitions" if n < grid.repeat else ""
        parts.append(f"median {format_value(summary.get('median'), name)} {unit(name).table}, "
                     f"1st percentile {format_value(summary.get('p1'), name)}, 99th percentile "
                     f"{format_value(summary.get('p99'), name)} (n = {n}{few})"
                     + ("" if summary.get("complete") else " (incomplete)"))
    return f"**Primary result**, the REQUIRED {values} point ({where}): " + "; ".join(parts) + "."
