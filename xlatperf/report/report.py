# SPDX-License-Identifier: BSD-3-Clause
"""Reports: Markdown and HTML with the RFC reporting items, result tables and plots.

    from xlatperf.report import write_report
    write_report("results/campaign1")         # -> results/campaign1/report/report.md, .html

The input is any results directory: one procedure's (summary.json at its top), a campaign's
(campaign.json, points/*/summary.json), or a directory holding several of either. The report
is built from the summaries alone (docs/results.md), so it can be made again at any time.

Plots (PNG and SVG, matplotlib, drawn only when the data for them exists):
  * median with 1st/99th-percentile error bars per frame size and direction (bar chart), with
    the medium's maximum frame rate for throughput (RFC 2544 §26.1);
  * frame loss rate against offered rate, both in % from 0 to 100 (RFC 2544 §26.3);
  * median against the proportion of translated traffic (RFC 8219 §5.3 mixes);
  * median against any other numeric swept key (DUT cores: with relative scale-up; number of
    connections or addresses: log axis when the values span more than a factor of 100);
  * the distribution (CDF) of the repetitions' results of points with at least 5 repetitions.

RFC 9693's connection-rate and teardown-rate (unit cps, connections/s) and table-capacity
(unit connections) take part in the same tables and plots, with their own per-repetition
details (docs/stateful.md).
"""

import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..measure.store import SUMMARY_FILE
from ..util.errors import XlatperfError
from ..util.files import read_json, utc_timestamp

CAMPAIGN_FILE = "campaign.json"
REPORT_DIR = "report"
MAX_FIGURES_PER_KIND = 12
# Keys that always differ or that the report shows elsewhere: not treated as swept axes.
_NOT_AXES = {"left.dut_mac", "right.dut_mac", "tester.engine"}
_CORE_KEY = re.compile(r"core|cpu|lcore|worker|queue", re.I)
_CONNECTION_KEY = re.compile(r"conn|state_table|flows|tuples", re.I)


@dataclass(frozen=True)
class StatefulResult:
    """Where an RFC 9693 procedure's repetitions keep their result, and what it is."""
    field: str              # the repetition's key
    label: str              # axis label
    complete_only: bool     # as the summary's statistics: only complete repetitions count


STATEFUL_RESULTS = {
    "connection-rate": StatefulResult("connection_rate",
                                      "connection establishment rate (connections/s)", True),
    "teardown-rate": StatefulResult("teardown_rate", "connection tear-down rate (connections/s)",
                                    False),
    "table-capacity": StatefulResult("capacity", "connection tracking table capacity "
                                     "(connections)", True),
}
# Units counted in whole things, shown exactly with thousands separators.
COUNT_UNITS = {"fps": "frames/s per direction", "cps": "connections/s",
               "connections": "connections"}


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
    def unit(self) -> str:
        return self.summary.get("unit", "")

    def flat_config(self) -> dict:
        return {f"{section}.{key}": value
                for section, values in (self.summary.get("config") or {}).items()
                if isinstance(values, dict) for key, value in values.items()}


# --------------------------------------------------------------------------------------------
# Reading results
# --------------------------------------------------------------------------------------------


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


def varying_keys(entries: list[Entry]) -> list[str]:
    """Configuration keys whose value differs between the entries (the swept axes)."""
    configs = [e.flat_config() for e in entries]
    keys: list[str] = []
    for config in configs:
        keys += [k for k in config if k not in keys]
    varying = []
    for key in keys:
        if key in _NOT_AXES or key.startswith("output."):
            continue
        values = {json.dumps(c.get(key), sort_keys=True) for c in configs}
        if len(values) > 1:
            varying.append(key)
    return varying


def repetition_values(summary: dict) -> list[float]:
    """Each repetition's result (what the statistics summarise)."""
    procedure = summary.get("procedure")
    values = []
    for rep in summary.get("repetitions", []):
        if procedure in ("throughput", "selftest"):
            if rep.get("complete"):
                values.append(rep.get("throughput"))
        elif procedure == "frame-loss":
            points = rep.get("points") or []
            if points and points[0].get("valid") and points[0].get("loss_ratio") is not None:
                values.append(points[0]["loss_ratio"])
        elif procedure in STATEFUL_RESULTS:
            result = STATEFUL_RESULTS[procedure]
            if rep.get("complete") or not result.complete_only:
                values.append(rep.get(result.field))
        elif rep.get("valid") and rep.get("loss_ratio") is not None:
            values.append(rep["loss_ratio"])
    return [v for v in values if v is not None]


# --------------------------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------------------------


def format_value(value, unit: str) -> str:
    """How the report shows a statistic: frames/s, connections/s and connections with thousands
    separators (exact), loss ratios in % (6 significant digits)."""
    if value is None:
        return "-"
    if unit in COUNT_UNITS:
        return f"{int(value):,}" if float(value).is_integer() else f"{value:,.1f}"
    if unit == "ratio":
        return f"{100 * value:.6g} %"
    return f"{value:.6g}"


def _unit_label(unit: str) -> str:
    return {**COUNT_UNITS, "ratio": "loss ratio, shown in %"}.get(unit, unit)


def _short(key: str) -> str:
    return key.split(".")[-1]


def _config_value(entry: Entry, key: str):
    return entry.flat_config().get(key)


def _mix(config: dict) -> str:
    n, m = config.get("traffic.mix_n", 1), config.get("traffic.mix_m", 1)
    return "100 % translated" if m == n else f"{m}/{n} translated ({100 * m / n:.4g} %), " \
        f"{n - m}/{n} native IPv6 background"


def _point_label(entry: Entry, axes: list[str]) -> str:
    config = entry.flat_config()
    parts = [entry.procedure]
    for key in axes:
        if key in ("traffic.mix_n", "traffic.mix_m"):
            if key == "traffic.mix_n":
                parts.append(f"mix {config.get('traffic.mix_m')}/{config.get('traffic.mix_n')}")
            continue
        parts.append(f"{_short(key)} {config.get(key)}")
    rate = entry.summary.get("settings", {}).get("rate")
    if entry.procedure == "trial" and rate is not None:
        parts.append(f"rate {rate:,}")
    return ", ".join(parts)


# --------------------------------------------------------------------------------------------
# Document model, rendered to Markdown and HTML
# --------------------------------------------------------------------------------------------


class Document:
    def __init__(self):
        self.blocks: list[tuple] = []

    def heading(self, level: int, text: str):
        self.blocks.append(("h", level, text))

    def paragraph(self, text: str):
        self.blocks.append(("p", text))

    def items(self, items: list[str]):
        self.blocks.append(("ul", items))

    def table(self, header: list[str], rows: list[list[str]], caption: str = ""):
        self.blocks.append(("table", header, rows, caption))

    def figure(self, png: str, svg: str, caption: str):
        self.blocks.append(("img", png, svg, caption))

    def render(self, formats: dict) -> list[str]:
        """Each block through the renderer of its kind: formats[kind](*the block's fields)."""
        return [formats[block[0]](*block[1:]) for block in self.blocks]

    def markdown(self) -> str:
        return "\n".join(self.render(MARKDOWN))

    def html(self, title: str) -> str:
        style = ("body{font-family:sans-serif;max-width:70em;margin:auto;padding:1em}"
                 "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;"
                 "padding:.2em .5em;text-align:right}th{background:#eee}caption{font-style:"
                 "italic;text-align:left}figure img{max-width:100%}code{background:#f4f4f4}")
        return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>{html.escape(title)}</title><style>{style}</style></head><body>\n"
                + "\n".join(self.render(HTML)) + "\n</body></html>\n")


def _markdown_table(header: list[str], rows: list[list[str]], caption: str) -> str:
    def cell(text) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")
    lines = ["| " + " | ".join(cell(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return (f"*{caption}*\n\n" if caption else "") + "\n".join(lines) + "\n"


def _html_table(header: list[str], rows: list[list[str]], caption: str) -> str:
    esc = html.escape
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    head = "".join(f"<th>{esc(str(h))}</th>" for h in header)
    cells = "".join("<tr>" + "".join(f"<td>{_inline_html(str(c))}</td>" for c in row)
                    + "</tr>" for row in rows)
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table>"


# Document block renderers per output format, by block kind.
MARKDOWN = {
    "h": lambda level, text: f"{'#' * level} {text}\n",
    "p": lambda text: text + "\n",
    "ul": lambda items: "".join(f"* {item}\n" for item in items),
    "table": _markdown_table,
    "img": lambda png, svg, caption: f"![{caption}]({png})\n\n*{caption}* ([SVG]({svg}))\n",
}
HTML = {
    "h": lambda level, text: f"<h{level}>{html.escape(text)}</h{level}>",
    "p": lambda text: f"<p>{_inline_html(text)}</p>",
    "ul": lambda items: "<ul>" + "".join(f"<li>{_inline_html(i)}</li>" for i in items) + "</ul>",
    "table": _html_table,
    "img": lambda png, svg, caption: (f'<figure><img src="{html.escape(svg)}" '
                                      f'alt="{html.escape(caption)}"><figcaption>'
                                      f'{html.escape(caption)} (<a href="{html.escape(png)}">'
                                      "PNG</a>)</figcaption></figure>"),
}


def _inline_html(text: str) -> str:
    """Escape, then render `code` and **bold** spans (the only inline Markdown used here)."""
    text = html.escape(text)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    return re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", text)


# --------------------------------------------------------------------------------------------
# Report sections
# --------------------------------------------------------------------------------------------


def _values(entries: list[Entry], get) -> str:
    seen: list[str] = []
    for entry in entries:
        value = get(entry)
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        if text not in seen:
            seen.append(text)
    return "; ".join(seen)


def _varying(config: dict, key: str, what: str, suffix: str = "") -> list[str]:
    """A varying port or address part as "<what, with {mode}> MIN..MAX<suffix>" ([] if fixed)."""
    mode = config.get(key)
    if not mode or mode == "fixed":
        return []
    return [f"{what.format(mode=mode)} {config.get(f'{key}_min')}..{config.get(f'{key}_max')}"
            f"{suffix}"]


def _variation(config: dict) -> str:
    parts = []
    for direction in ("forward", "reverse"):
        for end in ("src", "dst"):
            parts += _varying(config, f"ports.{direction}_{end}",
                              f"{direction} {end} port {{mode}} in", " (RFC 4814)")
    for side in ("left", "right"):
        parts += _varying(config, f"addresses.{side}", f"{side} addresses {{mode}}, 16-bit part in")
        nets = config.get(f"addresses.{side}_nets")
        if nets and nets > 1:
            parts.append(f"{nets} destination networks on the {side} side (RFC 2544 §12)")
    fixed = (f"UDP ports {config.get('traffic.src_port')} → {config.get('traffic.dst_port')}")
    if not parts:
        return f"none: one address pair per direction, {fixed}"
    return "; ".join(parts) + f"; seed {config.get('traffic.seed')}"


def _frame_format(entry: Entry) -> str:
    config = entry.flat_config()
    left, right = config.get("left.ip_version"), config.get("right.ip_version")
    background = " and native IPv6 background frames" if \
        config.get("traffic.mix_m") != config.get("traffic.mix_n") else ""
    return (f"Ethernet II / IPv{left} on the left, IPv{right} on the right{background} / UDP "
            f"(ports {config.get('traffic.src_port')} → {config.get('traffic.dst_port')}); the "
            "xlatperf test tag right after the UDP header (RFC 8219 §7.2, docs/protocol.md)")


def _frame_sizes(entry: Entry) -> list[str]:
    return [f"{d.get('frame_size')} B sent, {d.get('rx_frame_size')} B received ({name})"
            for name, d in entry.summary.get("directions", {}).items()]


def _ports(entry: Entry) -> str:
    ports = (entry.summary.get("tester") or {}).get("ports") or []
    return ", ".join(f"port {p.get('index', i)}: {p.get('driver', '?')} "
                     f"{p.get('link_speed_mbps', '?')} Mbit/s" for i, p in enumerate(ports))


def _line_rates(entry: Entry) -> list[str]:
    return [f"{d.get('speed_bps', 0) / 1e9:g} Gbit/s, maximum {d.get('max_rate', 0):,} frames/s "
            f"for {d.get('frame_size')}-byte frames ({name}, RFC 2544 App. B)"
            for name, d in entry.summary.get("directions", {}).items()]


def _delay_setting(entries: list[Entry], key: str) -> str:
    """A setting of the latency/pdv results (docs/delay.md), "" when there are none."""
    return _values([e for e in entries if e.summary.get("settings", {}).get(key)],
                   lambda e: e.summary["settings"][key])


def _unique(entries: list[Entry], get) -> str:
    seen: list[str] = []
    for entry in entries:
        for text in get(entry):
            if text not in seen:
                seen.append(text)
    return "; ".join(seen)


def _repetitions(entry: Entry) -> str:
    settings = entry.summary.get("settings", {})
    config = entry.flat_config()
    text = f"{settings.get('repeat', config.get('output.repeat'))}"
    if config.get("output.repeat_max"):
        text = (f"adaptive: {config.get('output.repeat')} to {config.get('output.repeat_max')}, "
                f"stop when the {100 * config.get('output.repeat_confidence', 0.95):g} % "
                "distribution-free confidence interval of the median is narrower than "
                f"{100 * config.get('output.repeat_tolerance', 0):g} % of it")
    return text


def _binary_search(s: dict) -> str:
    return (f"binary search in [{s.get('min_rate'):,}, {s.get('max_rate'):,}] frames/s until "
            f"upper − lower ≤ {s.get('error'):,} frames/s; loss tolerance "
            f"{s.get('loss_tolerance')}")


def _frame_loss_steps(s: dict) -> str:
    if s.get("rates"):
        return f"listed rates {s['rates']} frames/s"
    return (f"from {s.get('start')} % of the maximum down in steps of {s.get('step')} % until "
            "two consecutive trials without loss")


def _connection_search(s: dict) -> str:
    """connection-rate's search (docs/stateful.md), also each probe of table-capacity."""
    validation = (f"; every step validated by the Responder at α·R, α = "
                  f"{s.get('validation_factor')}" if s.get("validation") else "")
    return (f"binary search on the phase-1 rate in [0, {s.get('max_rate'):,}] connections/s "
            f"until upper − lower ≤ {s.get('error'):,} connections/s{validation}")


def _connections(s: dict) -> int:
    return (s.get("stateful") or {}).get("connections")


# How each procedure searched or measured, from its summary's settings (Search precision).
PRECISIONS = {
    "throughput": _binary_search,
    "selftest": _binary_search,
    "frame-loss": _frame_loss_steps,
    "trial": lambda s: f"single trials at {s.get('rate'):,} frames/s",
    "latency": lambda s: (f"one trial per repetition at {s.get('rate'):,} frames/s, "
                          f"{s.get('timestamps')} tagged frames per direction after "
                          f"{s.get('delay')} s"),
    "pdv": lambda s: (f"one trial per repetition at {s.get('rate'):,} frames/s, every frame's "
                      f"delay in a histogram ({s.get('histogram')})"),
    "connection-rate": lambda s: (f"{_connection_search(s)}; N = {_connections(s):,} "
                                  "connections per step"),
    "teardown-rate": lambda s: (f"N = {_connections(s):,} connections loaded at "
                                f"{s.get('rate_phase1'):,} connections/s"
                                + (" with validation" if s.get("validation") else "")
                                + f", then `{s.get('teardown')}` ({s.get('where')}) timed on "
                                "the full table (T_N) and on the empty table (T_0): rate = "
                                "N / (T_N − T_0)"),
    "table-capacity": lambda s: (f"from C0 = {s.get('c0'):,} connections doubling while the "
                                 f"rate stays at least β·RS (β = {s.get('beta')}), then halving "
                                 f"the interval until CT − CS ≤ E = {s.get('capacity_error'):,} "
                                 f"connections, a count passing at γ·RS (γ = {s.get('gamma')}); "
                                 f"the rate at each count: {_connection_search(s)}"),
}


def _precision(entry: Entry) -> str:
    known = PRECISIONS.get(entry.procedure)
    return known(entry.summary.get("settings", {})) if known else "-"


def reporting_items(entries: list[Entry]) -> list[list[str]]:
    """The items methodology §14 item 37 (RFC 2544 §26, RFC 8219 §12) asks every report for."""
    def config(key):
        return lambda e: e.flat_config().get(key)

    def setting(key):
        return lambda e: e.summary.get("settings", {}).get(key)

    dut = _values(entries, lambda e: ((e.summary.get("config") or {}).get("dut") or {}).get(
        "description", ""))
    if dut in ("null", ""):
        dut = ("not recorded by xlatperf: state the DUT's hardware, software version and "
               "configuration here. It MUST be the same for every test of this report "
               "(RFC 2544 §7).")
    rows = [
        ["Procedures", _values(entries, lambda e: e.procedure)],
        ["Frame format", _values(entries, _frame_format)],
        ["Frame sizes (traffic.frame_size names the IPv6 frame when IPv6 frames are sent; "
         "IPv4 frames are 20 bytes shorter)", _unique(entries, _frame_sizes)],
        ["Latency definition (RFC 1242)", _delay_setting(entries, "latency_definition")
         or "not measured: these results hold no latency data"],
        ["Timestamps", _delay_setting(entries, "timestamp_method")
         or "not used: these results hold no delay data"],
        ["Loss criterion", _values(entries, lambda e: e.summary.get("settings", {}).get(
            "loss_criterion") or f"global timeout {e.summary.get('settings', {}).get('timeout')} s")],
        ["Media", _values(entries, _ports)],
        ["Line rate and maximum frame rate", _unique(entries, _line_rates)],
        ["Traffic direction", _values(entries, config("traffic.direction"))],
        ["Traffic mix (RFC 8219 §5.3)",
         _values(entries, lambda e: _mix(e.flat_config()))],
        ["Address and port variation", _values(entries, lambda e: _variation(e.flat_config()))],
        ["Repetitions", _values(entries, _repetitions)],
        ["Summary statistics", "median, 1st and 99th percentiles (RFC 8219 §12; percentiles as "
         "in RFC 2330 §11.3: sorted[ceil(p/100·N) − 1]), min, max, dispersion = "
         "(max − min) / median, and the number of results n (with n < 100 the 1st and 99th "
         "percentiles are the min and max)"],
        ["Trial duration (s)", _values(entries, setting("duration"))],
        ["Waits (s): timeout after sending; pause between trials",
         _values(entries, lambda e: f"{e.summary.get('settings', {}).get('timeout')}; "
                                    f"{e.summary.get('settings', {}).get('pause')}")],
        ["Search precision", _values(entries, _precision)],
        ["DUT configuration", dut],
        *_stateful_rows(entries),
        ["Tester", _values(entries, lambda e: "xlatperf {xlatperf}, engine {engine}, {dpdk}, "
                           "lcores {lcores}".format(**{k: (e.summary.get("tester") or {}).get(k)
                                                       for k in ("xlatperf", "engine", "dpdk",
                                                                 "lcores")}))],
    ]
    return rows


def _stateful_rows(entries: list[Entry]) -> list[list[str]]:
    """RFC 9693 reporting items (settings.stateful, docs/stateful.md), when any entry has them."""
    def items(entry) -> dict:
        found = _Items(entry.summary.get("settings", {}).get("stateful") or {})
        found["before_trial"] = found["before_trial"] or "none"
        return found

    if not any(items(e)["connections"] for e in entries):
        return []
    return [[name, _values(entries, lambda e, text=text: text.format_map(items(e)))]
            for name, text in STATEFUL_ITEMS]


class _Items(dict):
    def __missing__(self, key):
        return None


# The RFC 9693 reporting items: (row, template over settings.stateful).
STATEFUL_ITEMS = [
    ("Stateful (RFC 9693): Initiator, Responder", "{initiator}, {responder}"),
    ("Number of connections N; state table size M", "{connections}; {table_size}"),
    ("Phase 1: rate R (fps), timeout T (s), gap D (s)", "{rate_phase1}, {timeout_phase1}, {gap}"),
    ("Enumeration (phase 1); Responder selection (phase 2)",
     "{enumerate} in {order} order over {combinations} combinations; {selection}"),
    ("Port ranges (Initiator's source; destination)", "{source_ports}; {destination_ports}"),
    ("Address ranges (Initiator's source; destination)",
     "{source_addresses}; {destination_addresses}"),
    ("Validation (factor α)", "{validation} ({validation_factor})"),
    ("DUT hook before each trial (empties the connection table)", "{before_trial}"),
]


def _results_table(entries: list[Entry], axes: list[str]) -> tuple[list[str], list[list[str]]]:
    axis_columns = [k for k in axes if k != "traffic.mix_m"]
    header = ["point", "procedure"] + [
        "mix (translated)" if k == "traffic.mix_n" else _short(k) for k in axis_columns]
    has_rate = any(e.procedure == "trial" for e in entries)
    if has_rate:
        header.append("rate (fps)")
    header += ["unit", "median", "p1", "p99", "min", "max", "n", "dispersion", "complete"]
    rows = []
    for entry in entries:
        config = entry.flat_config()
        summary = entry.summary
        row = [entry.name, entry.procedure]
        for key in axis_columns:
            if key == "traffic.mix_n":
                row.append(f"{config.get('traffic.mix_m')}/{config.get('traffic.mix_n')}")
            else:
                row.append(str(config.get(key)))
        if has_rate:
            rate = summary.get("settings", {}).get("rate")
            row.append(f"{rate:,}" if entry.procedure == "trial" and rate is not None else "-")
        unit = entry.unit
        row += [_unit_label(unit)] + [format_value(summary.get(k), unit)
                                      for k in ("median", "p1", "p99", "min", "max")]
        dispersion = summary.get("dispersion")
        row += [str(summary.get("n")), "-" if dispersion is None else f"{dispersion:.4g}",
                "yes" if summary.get("complete") else "**no**"]
        rows.append(row)
    return header, rows


# Per-repetition detail tables: (caption, [(column header, cell(repetition, summary))]).
def _text(key: str, unit: str | None = None):
    return lambda rep, summary: format_value(rep.get(key), unit) if unit else str(rep.get(key))


def _yes(key: str):
    return lambda rep, summary: "yes" if rep.get(key) else "no"


def _steps(rep: dict, summary: dict) -> str:
    return str(len(rep.get("steps", [])))


def _percent_of_maximum(rep: dict, summary: dict) -> str:
    max_rate = min((d.get("max_rate", 0) for d in summary.get("directions", {}).values()),
                   default=0)
    return f"{100 * rep['throughput'] / max_rate:.3f}" if max_rate and rep.get("throughput") \
        is not None else "-"


def _loaded(rep: dict, summary: dict) -> str:
    return "yes" if rep.get("loaded") else f"no ({rep.get('load_failure')})"


_THROUGHPUT_TABLE = ("throughput per repetition", [
    ("repetition", _text("repetition")), ("throughput (fps)", _text("throughput", "fps")),
    ("% of maximum", _percent_of_maximum), ("trials", _steps), ("found", _yes("found")),
    ("tester limited", _yes("tester_limited")), ("complete", _yes("complete"))])
REPETITION_TABLES = {
    "throughput": _THROUGHPUT_TABLE,
    "selftest": _THROUGHPUT_TABLE,
    "connection-rate": ("connection establishment rate per repetition (RFC 9693)", [
        ("repetition", _text("repetition")),
        ("connection rate (cps)", _text("connection_rate", "cps")), ("trials", _steps),
        ("found", _yes("found")), ("tester limited", _yes("tester_limited")),
        ("complete", _yes("complete"))]),
    "teardown-rate": ("connection tear-down rate per repetition (RFC 9693)", [
        ("repetition", _text("repetition")), ("connections", _text("connections", "connections")),
        ("loaded", _loaded), ("T_N full table (s)", _text("full_seconds", "s")),
        ("T_0 empty table (s)", _text("empty_seconds", "s")),
        ("tear-down rate (cps)", _text("teardown_rate", "cps")),
        ("complete", _yes("complete"))]),
    "table-capacity": ("connection tracking table capacity per repetition (RFC 9693)", [
        ("repetition", _text("repetition")),
        ("capacity CS (connections)", _text("capacity", "connections")),
        ("rate RS (cps)", _text("rate", "cps")), ("C0", _text("c0", "connections")),
        ("R0 (cps)", _text("r0", "cps")),
        ("exponential, binary iterations",
         lambda rep, summary: f"{rep.get('exponential_iterations')}, "
                              f"{rep.get('binary_iterations')}"),
        ("limited by ranges", _yes("limited_by_ranges")), ("trials", _text("trials")),
        ("complete", _yes("complete"))]),
}


def _detail_tables(doc: Document, entry: Entry, axes: list[str]) -> None:
    summary = entry.summary
    label = f"point {entry.name}: {_point_label(entry, axes)}"
    procedure = entry.procedure
    if procedure in REPETITION_TABLES:
        caption, columns = REPETITION_TABLES[procedure]
        rows = [[cell(r, summary) for _, cell in columns] for r in summary.get("repetitions", [])]
        doc.table([header for header, _ in columns], rows, f"{label}: {caption}")
    elif procedure == "frame-loss":
        directions = list(summary.get("directions", {}))
        rows = []
        for point in summary.get("rates", []):
            rows.append([f"{point['rate']:,}", f"{point.get('percent') or 0:.4g}",
                         format_value(point.get("median"), "ratio"),
                         format_value(point.get("p1"), "ratio"),
                         format_value(point.get("p99"), "ratio")]
                        + [format_value(point.get("directions", {}).get(d, {}).get("median"),
                                        "ratio") for d in directions]
                        + [str(point.get("n")), str(point.get("invalid", 0))])
        doc.table(["rate (fps)", "% of maximum", "FLR median", "p1", "p99"]
                  + [f"{d} FLR median" for d in directions] + ["n", "invalid"], rows,
                  f"{label}: frame loss rate per offered rate")
    elif procedure == "trial":
        directions = list(summary.get("directions", {}))
        rows = []
        for rep in summary.get("repetitions", []):
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
        doc.table(header, rows, f"{label}: trials")
    rule = summary.get("repetition_rule")
    if rule:
        interval = rule.get("interval")
        doc.paragraph(f"{label}: adaptive repetitions stopped "
                      f"({rule.get('stopped') or 'not yet'}) after n = {rule.get('n')}; "
                      f"median confidence interval {interval} (coverage "
                      f"{rule.get('coverage')}).")


# --------------------------------------------------------------------------------------------
# Plots
# --------------------------------------------------------------------------------------------


class _Plotter:
    def __init__(self, directory: Path, relative_to: Path):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        self.plt = plt
        self.directory = directory
        self.relative_to = relative_to
        self.written: list[tuple[str, str, str]] = []   # (png, svg, caption), report-relative
        directory.mkdir(parents=True, exist_ok=True)

    def save(self, fig, name: str, caption: str) -> None:
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
        png, svg = self.directory / f"{name}.png", self.directory / f"{name}.svg"
        fig.tight_layout()
        fig.savefig(png, dpi=110)
        fig.savefig(svg)
        self.plt.close(fig)
        self.written.append((str(png.relative_to(self.relative_to)),
                             str(svg.relative_to(self.relative_to)), caption))


def _groups(entries: list[Entry], keys: list[str]) -> dict[tuple, list[Entry]]:
    groups: dict[tuple, list[Entry]] = {}
    for entry in entries:
        config = entry.flat_config()
        rate = entry.summary.get("settings", {}).get("rate") if entry.procedure == "trial" \
            else None
        key = (entry.procedure, entry.unit, rate) + tuple(
            json.dumps(config.get(k), default=str) for k in keys)
        groups.setdefault(key, []).append(entry)
    return groups


def _group_title(group_key: tuple, keys: list[str]) -> str:
    procedure, unit, rate = group_key[:3]
    parts = [procedure] + [f"{_short(k)} {json.loads(v)}" for k, v in zip(keys, group_key[3:])]
    if rate is not None:
        parts.append(f"rate {rate:,} fps")
    return ", ".join(parts)


def _y_label(unit: str, procedure: str) -> str:
    if procedure in STATEFUL_RESULTS:
        return STATEFUL_RESULTS[procedure].label
    if unit == "fps":
        return "throughput (frames/s per direction)"
    return "frame loss rate (%)" if procedure == "frame-loss" else "loss ratio (%)"


def _by_quantity(entries: list[Entry], usable=lambda entry: True):
    """The entries split into plots by what the y axis shows: their unit, but one plot per
    RFC 9693 procedure (connection-rate and teardown-rate share the unit cps, not the scale).
    Yields (name, unit, usable entries) for each non-empty plot."""
    def quantity(entry):
        return entry.procedure if entry.procedure in STATEFUL_RESULTS else entry.unit
    for name in sorted({quantity(e) for e in entries}):
        chosen = [e for e in entries if quantity(e) == name and usable(e)]
        if chosen:
            yield name, chosen[0].unit, chosen


def _dress(ax, x_label: str, y_label: str, *, title: str | None = None, xlim=None, ylim=None,
           log_x: bool = False, legend: dict | None = None, grid: dict | None = None) -> None:
    """The set-up every plot shares: axis labels, limits and scale, title (10 pt), legend (7 pt
    unless `legend` says otherwise) and a light grid."""
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    if xlim is not None:
        ax.set_xlim(*xlim)
    if ylim is not None:
        ax.set_ylim(*ylim)
    if log_x:
        ax.set_xscale("log")
    if title is not None:
        ax.set_title(title, fontsize=10)
    ax.legend(**{"fontsize": 7, **(legend or {})})
    ax.grid(**{"alpha": 0.3, **(grid or {})})


def _scale(unit: str) -> float:
    return 100.0 if unit == "ratio" else 1.0


def _bar_charts(plotter: _Plotter, entries: list[Entry], axes: list[str]) -> None:
    """Median with 1st/99th-percentile error bars per frame size (groups) and direction. RFC 9693
    procedures only when frame sizes are swept (they have roles, not directions)."""
    entries = [e for e in entries
               if e.procedure not in STATEFUL_RESULTS or "traffic.frame_size" in axes]
    others = [k for k in axes if k not in ("traffic.frame_size", "traffic.direction")]
    for number, (group_key, group) in enumerate(list(_groups(entries, others).items())
                                                [:MAX_FIGURES_PER_KIND], 1):
        usable = [e for e in group if e.summary.get("median") is not None]
        if not usable:
            continue
        procedure, unit = group_key[0], group_key[1]
        scale = _scale(unit)
        sizes = sorted({_config_value(e, "traffic.frame_size") for e in usable})
        directions = []
        for e in usable:
            if _config_value(e, "traffic.direction") not in directions:
                directions.append(_config_value(e, "traffic.direction"))
        fig, ax = plotter.plt.subplots(figsize=(7.5, 4.5))
        width = 0.8 / max(len(directions), 1)
        for i, direction in enumerate(directions):
            xs, medians, low, high = [], [], [], []
            for j, size in enumerate(sizes):
                match = [e for e in usable if _config_value(e, "traffic.frame_size") == size
                         and _config_value(e, "traffic.direction") == direction]
                if not match:
                    continue
                s = match[0].summary
                xs.append(j - 0.4 + width * (i + 0.5))
                medians.append(s["median"] * scale)
                low.append((s["median"] - s["p1"]) * scale)
                high.append((s["p99"] - s["median"]) * scale)
            ax.bar(xs, medians, width=width * 0.9, yerr=[low, high], capsize=3,
                   label=f"{direction}")
        if unit == "fps":
            for j, size in enumerate(sizes):
                limits = [min(d.get("max_rate", 0) for d in e.summary.get("directions", {})
                              .values()) for e in usable
                          if _config_value(e, "traffic.frame_size") == size]
                if limits:
                    ax.hlines(max(limits), j - 0.45, j + 0.45, colors="black", linestyles="--",
                              label="medium's maximum frame rate" if j == 0 else None)
        ax.set_xticks(range(len(sizes)), [str(s) for s in sizes])
        title = _group_title(group_key, others)
        _dress(ax, "frame size (bytes)", _y_label(unit, procedure),
               title=f"median with 1st/99th percentiles: {title}",
               ylim=(0, 100) if unit == "ratio" else None,
               legend={"title": "direction", "fontsize": 8}, grid={"axis": "y"})
        plotter.save(fig, f"bars_{number}_{procedure}",
                     f"Median with 1st/99th-percentile error bars per frame size and direction "
                     f"({title})")


def _flr_series(entries: list[Entry], axes: list[str]) -> dict[str, list[tuple[float, float]]]:
    """Frame loss rate (%) against offered rate (% of the maximum) per series."""
    series: dict[str, list[tuple[float, float]]] = {}
    for entry in entries:
        if entry.procedure == "frame-loss":
            points = [(r["percent"], 100 * r["median"]) for r in entry.summary.get("rates", [])
                      if r.get("median") is not None and r.get("percent") is not None]
            series[_point_label(entry, axes)] = sorted(points)
    trial_keys = [k for k in axes]
    trials = [e for e in entries if e.procedure == "trial" and e.summary.get("median")
              is not None]
    by_series: dict[str, list[tuple[float, float]]] = {}
    for entry in trials:
        max_rate = min((d.get("max_rate", 0) for d in entry.summary.get("directions", {})
                        .values()), default=0)
        rate = entry.summary.get("settings", {}).get("rate")
        if not max_rate or rate is None:
            continue
        name = "trial, " + ", ".join(f"{_short(k)} {_config_value(entry, k)}"
                                     for k in trial_keys) if trial_keys else "trial"
        by_series.setdefault(name, []).append((100 * rate / max_rate,
                                               100 * entry.summary["median"]))
    series.update({k: sorted(v) for k, v in by_series.items() if len({x for x, _ in v}) > 1})
    return series


def _flr_plot(plotter: _Plotter, entries: list[Entry], axes: list[str]) -> None:
    series = _flr_series(entries, axes)
    if not series:
        return
    fig, ax = plotter.plt.subplots(figsize=(7, 4.5))
    for name, points in list(series.items())[:20]:
        ax.plot([x for x, _ in points], [y for _, y in points], marker="o", label=name)
    _dress(ax, "offered rate (% of the maximum frame rate)", "frame loss rate (%)",
           title="Frame loss rate (RFC 2544 §26.3), median over repetitions",
           xlim=(0, 100), ylim=(0, 100))
    plotter.save(fig, "frame_loss_rate", "Frame loss rate against offered rate")


def _line_plot(plotter: _Plotter, entries: list[Entry], axes: list[str], x_of, x_label: str,
               name: str, caption: str, relative: bool = False, log_x: bool = False) -> None:
    others = [k for k in axes if k not in ("traffic.mix_n", "traffic.mix_m") and not
              (name != "mix" and k == x_of.key)]
    for quantity, unit, usable in _by_quantity(
            entries, lambda entry: entry.summary.get("median") is not None):
        scale = _scale(unit)
        groups = _groups(usable, others)
        rows = 2 if relative else 1
        fig, axs = plotter.plt.subplots(rows, 1, figsize=(7, 4.5 * rows), squeeze=False)
        ax = axs[0][0]
        for group_key, group in list(groups.items())[:12]:
            # by x alone: points with equal x (keys swept outside `axes`) keep their order
            points = sorted(((x_of(e), e.summary) for e in group), key=lambda p: p[0])
            xs = [x for x, _ in points]
            ys = [s["median"] * scale for _, s in points]
            err = [[(s["median"] - s["p1"]) * scale for _, s in points],
                   [(s["p99"] - s["median"]) * scale for _, s in points]]
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3,
                        label=_group_title(group_key, others))
            if relative and ys and ys[0]:
                axs[1][0].plot(xs, [y / ys[0] for y in ys], marker="o",
                               label=_group_title(group_key, others))
        _dress(ax, x_label, _y_label(unit, usable[0].procedure), title=caption, log_x=log_x)
        if relative:
            _dress(axs[1][0], x_label, f"relative scale-up (median / median at {x_label} = "
                                       "smallest value)")
        plotter.save(fig, f"{name}_{quantity}", caption)


def _numeric(values) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _axis_plots(plotter: _Plotter, entries: list[Entry], axes: list[str]) -> None:
    if "traffic.mix_n" in axes or "traffic.mix_m" in axes:
        def translated(entry):
            config = entry.flat_config()
            return 100 * config["traffic.mix_m"] / config["traffic.mix_n"]
        translated.key = "traffic.mix_n"
        _line_plot(plotter, entries, axes, translated,
                   "translated traffic (% of all frames)", "mix",
                   "Median against the proportion of translated traffic (RFC 8219 §5.3)")
    skip = {"traffic.frame_size", "traffic.direction", "traffic.mix_n", "traffic.mix_m",
            "traffic.seed"}
    for key in axes:
        values = [_config_value(e, key) for e in entries]
        if key in skip or not _numeric(values) or len(set(values)) < 2:
            continue

        def x_of(entry, key=key):
            return _config_value(entry, key)
        x_of.key = key
        span = max(values) / max(min(values), 1e-12)
        if _CORE_KEY.search(key):
            _line_plot(plotter, entries, axes, x_of, f"{key} (number)", f"scaleup_{_short(key)}",
                       f"Scale-up: median against {key}", relative=True)
        elif _CONNECTION_KEY.search(key):
            _line_plot(plotter, entries, axes, x_of, f"{key} (number of connections)",
                       f"connections_{_short(key)}", f"Median against {key}",
                       log_x=span > 100)
        else:
            _line_plot(plotter, entries, axes, x_of, key, f"vs_{_short(key)}",
                       f"Median against {key}", log_x=span > 100)


def _cdf_plot(plotter: _Plotter, entries: list[Entry], axes: list[str]) -> None:
    for quantity, unit, usable in _by_quantity(
            entries, lambda entry: len(repetition_values(entry.summary)) >= 5):
        series = [(e, sorted(repetition_values(e.summary))) for e in usable]
        scale = _scale(unit)
        fig, ax = plotter.plt.subplots(figsize=(7, 4.5))
        for entry, values in series[:12]:
            n = len(values)
            ax.step([v * scale for v in values], [(i + 1) / n for i in range(n)], where="post",
                    label=f"{entry.name}: {_point_label(entry, axes)}")
        _dress(ax, _y_label(unit, series[0][0].procedure), "cumulative fraction of repetitions",
               ylim=(0, 1))
        plotter.save(fig, f"cdf_repetitions_{quantity}",
                     "Distribution (CDF) of the repetitions' results")


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def build_report(directory, report_dir: Path, plots: bool = True) -> tuple[Document, list]:
    directory = Path(directory)
    entries = collect(directory)
    if not entries:
        raise XlatperfError(f"{directory}: no summary.json found (nothing measured yet?)")
    axes = varying_keys(entries)
    doc = Document()
    doc.heading(1, f"xlatperf report: {directory.name}")
    doc.paragraph(f"Results in `{directory}`, {len(entries)} measurement(s); report generated "
                  f"{utc_timestamp()}. Rates are frames per second per direction (RFC 2544 §14)"
                  + ("; connection rates (unit cps) are connections per second, table "
                     "capacities numbers of connections (RFC 9693)."
                     if any(e.procedure in STATEFUL_RESULTS for e in entries) else "."))
    incomplete = [e.name for e in entries if not e.summary.get("complete")]
    if incomplete:
        doc.paragraph(f"**Incomplete** (interrupted) measurements: {', '.join(incomplete)}; "
                      "their statistics cover only what was measured.")
    doc.heading(2, "Reporting items")
    doc.table(["item", "value"], reporting_items(entries))
    doc.heading(2, "Results")
    if axes:
        doc.paragraph("Swept configuration keys: " + ", ".join(f"`{k}`" for k in axes) + ".")
    header, rows = _results_table(entries, axes)
    doc.table(header, rows, "Summary of every measurement (median over repetitions)")
    written = []
    if plots:
        plotter = _Plotter(report_dir / "plots", report_dir)
        _bar_charts(plotter, entries, axes)
        _flr_plot(plotter, entries, axes)
        _axis_plots(plotter, entries, axes)
        _cdf_plot(plotter, entries, axes)
        if plotter.written:
            doc.heading(2, "Figures")
            for png, svg, caption in plotter.written:
                doc.figure(png, svg, caption)
        written = plotter.written
    doc.heading(2, "Details")
    for entry in entries:
        _detail_tables(doc, entry, axes)
    return doc, written


def write_report(directory, out_dir=None, plots: bool = True) -> dict:
    """Write report.md, report.html and plots/*.png|svg into out_dir (default DIR/report).
    Returns {"markdown", "html", "plots": [(png, svg, caption)]}."""
    directory = Path(directory)
    report_dir = Path(out_dir) if out_dir else directory / REPORT_DIR
    try:
        report_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise XlatperfError(f"{report_dir}: {exc.strerror or exc}") from None
    doc, written = build_report(directory, report_dir, plots)
    markdown, html_path = report_dir / "report.md", report_dir / "report.html"
    markdown.write_text(doc.markdown(), encoding="utf-8")
    html_path.write_text(doc.html(f"xlatperf report: {directory.name}"), encoding="utf-8")
    return {"markdown": str(markdown), "html": str(html_path),
            "plots": [(str(report_dir / png), str(report_dir / svg), caption)
                      for png, svg, caption in written]}
