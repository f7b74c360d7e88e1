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
"""

import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import XlatperfError
from .results import SUMMARY_FILE, utc_timestamp

CAMPAIGN_FILE = "campaign.json"
REPORT_DIR = "report"
MAX_FIGURES_PER_KIND = 12
# Keys that always differ or that the report shows elsewhere: not treated as swept axes.
_NOT_AXES = {"left.dut_mac", "right.dut_mac", "tester.engine"}
_CORE_KEY = re.compile(r"core|cpu|lcore|worker|queue", re.I)
_CONNECTION_KEY = re.compile(r"conn|state_table|flows|tuples", re.I)


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


def _load(path: Path) -> dict | None:
    try:
        with open(path, encoding="utf-8") as stream:
            return json.load(stream)
    except (OSError, ValueError):
        return None


def collect(directory) -> list[Entry]:
    """The summaries under a results directory, in campaign order or by path."""
    directory = Path(directory)
    if not directory.is_dir():
        raise XlatperfError(f"{directory}: no such directory")
    campaign = _load(directory / CAMPAIGN_FILE)
    entries: list[Entry] = []
    if campaign is not None:
        for point in campaign.get("points", []):
            point_dir = directory / "points" / point["id"]
            summary = _load(point_dir / SUMMARY_FILE)
            if summary is not None:
                entries.append(Entry(f"{point['index']}", point_dir, summary,
                                     point.get("labels", {})))
        return entries
    summary = _load(directory / SUMMARY_FILE)
    if summary is not None:
        return [Entry(directory.name, directory, summary)]
    for path in sorted(directory.rglob(SUMMARY_FILE)):
        if REPORT_DIR in path.relative_to(directory).parts:
            continue
        found = _load(path)
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
        elif rep.get("valid") and rep.get("loss_ratio") is not None:
            values.append(rep["loss_ratio"])
    return [v for v in values if v is not None]


# --------------------------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------------------------


def format_value(value, unit: str) -> str:
    """How the report shows a statistic: frames/s with thousands separators (exact), loss
    ratios in % (6 significant digits)."""
    if value is None:
        return "-"
    if unit == "fps":
        return f"{int(value):,}" if float(value).is_integer() else f"{value:,.1f}"
    if unit == "ratio":
        return f"{100 * value:.6g} %"
    return f"{value:.6g}"


def _unit_label(unit: str) -> str:
    return {"fps": "frames/s per direction", "ratio": "loss ratio, shown in %"}.get(unit, unit)


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

    def markdown(self) -> str:
        out = []
        for block in self.blocks:
            kind = block[0]
            if kind == "h":
                out.append(f"{'#' * block[1]} {block[2]}\n")
            elif kind == "p":
                out.append(block[1] + "\n")
            elif kind == "ul":
                out.append("".join(f"* {item}\n" for item in block[1]))
            elif kind == "table":
                _, header, rows, caption = block
                if caption:
                    out.append(f"*{caption}*\n")
                cell = lambda text: str(text).replace("|", "\\|").replace("\n", " ")  # noqa: E731
                lines = ["| " + " | ".join(cell(h) for h in header) + " |",
                         "|" + "|".join("---" for _ in header) + "|"]
                lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
                out.append("\n".join(lines) + "\n")
            elif kind == "img":
                _, png, svg, caption = block
                out.append(f"![{caption}]({png})\n\n*{caption}* ([SVG]({svg}))\n")
        return "\n".join(out)

    def html(self, title: str) -> str:
        esc = html.escape
        body = []
        for block in self.blocks:
            kind = block[0]
            if kind == "h":
                body.append(f"<h{block[1]}>{esc(block[2])}</h{block[1]}>")
            elif kind == "p":
                body.append(f"<p>{_inline_html(block[1])}</p>")
            elif kind == "ul":
                body.append("<ul>" + "".join(f"<li>{_inline_html(i)}</li>" for i in block[1])
                            + "</ul>")
            elif kind == "table":
                _, header, rows, caption = block
                cap = f"<caption>{esc(caption)}</caption>" if caption else ""
                head = "".join(f"<th>{esc(str(h))}</th>" for h in header)
                cells = "".join("<tr>" + "".join(f"<td>{_inline_html(str(c))}</td>" for c in row)
                                + "</tr>" for row in rows)
                body.append(f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{cells}</tbody>"
                            "</table>")
            elif kind == "img":
                _, png, svg, caption = block
                body.append(f'<figure><img src="{esc(svg)}" alt="{esc(caption)}">'
                            f'<figcaption>{esc(caption)} (<a href="{esc(png)}">PNG</a>)'
                            "</figcaption></figure>")
        style = ("body{font-family:sans-serif;max-width:70em;margin:auto;padding:1em}"
                 "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;"
                 "padding:.2em .5em;text-align:right}th{background:#eee}caption{font-style:"
                 "italic;text-align:left}figure img{max-width:100%}code{background:#f4f4f4}")
        return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>{esc(title)}</title><style>{style}</style></head><body>\n"
                + "\n".join(body) + "\n</body></html>\n")


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


def _variation(config: dict) -> str:
    parts = []
    for direction in ("forward", "reverse"):
        for end in ("src", "dst"):
            mode = config.get(f"ports.{direction}_{end}")
            if mode and mode != "fixed":
                parts.append(f"{direction} {end} port {mode} in "
                             f"{config.get(f'ports.{direction}_{end}_min')}.."
                             f"{config.get(f'ports.{direction}_{end}_max')} (RFC 4814)")
    for side in ("left", "right"):
        mode = config.get(f"addresses.{side}")
        if mode and mode != "fixed":
            parts.append(f"{side} addresses {mode}, 16-bit part in "
                         f"{config.get(f'addresses.{side}_min')}.."
                         f"{config.get(f'addresses.{side}_max')}")
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


def _precision(entry: Entry) -> str:
    settings = entry.summary.get("settings", {})
    procedure = entry.procedure
    if procedure in ("throughput", "selftest"):
        return (f"binary search in [{settings.get('min_rate'):,}, {settings.get('max_rate'):,}] "
                f"frames/s until upper − lower ≤ {settings.get('error'):,} frames/s; loss "
                f"tolerance {settings.get('loss_tolerance')}")
    if procedure == "frame-loss":
        if settings.get("rates"):
            return f"listed rates {settings['rates']} frames/s"
        return (f"from {settings.get('start')} % of the maximum down in steps of "
                f"{settings.get('step')} % until two consecutive trials without loss")
    if procedure == "trial":
        return f"single trials at {settings.get('rate'):,} frames/s"
    if procedure == "latency":
        return (f"one trial per repetition at {settings.get('rate'):,} frames/s, "
                f"{settings.get('timestamps')} tagged frames per direction after "
                f"{settings.get('delay')} s")
    if procedure == "pdv":
        return (f"one trial per repetition at {settings.get('rate'):,} frames/s, every frame's "
                f"delay in a histogram ({settings.get('histogram')})")
    return "-"


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
    def item(key):
        return lambda e: (e.summary.get("settings", {}).get("stateful") or {}).get(key)

    if not any(item("connections")(e) for e in entries):
        return []
    return [
        ["Stateful (RFC 9693): Initiator, Responder",
         _values(entries, lambda e: f"{item('initiator')(e)}, {item('responder')(e)}")],
        ["Number of connections N; state table size M",
         _values(entries, lambda e: f"{item('connections')(e)}; {item('table_size')(e)}")],
        ["Phase 1: rate R (fps), timeout T (s), gap D (s)",
         _values(entries, lambda e: f"{item('rate_phase1')(e)}, {item('timeout_phase1')(e)}, "
                                    f"{item('gap')(e)}")],
        ["Enumeration (phase 1); Responder selection (phase 2)",
         _values(entries, lambda e: f"{item('enumerate')(e)} in {item('order')(e)} order over "
                                    f"{item('combinations')(e)} combinations; "
                                    f"{item('selection')(e)}")],
        ["Port ranges (Initiator's source; destination)",
         _values(entries, lambda e: f"{item('source_ports')(e)}; {item('destination_ports')(e)}")],
        ["Address ranges (Initiator's source; destination)",
         _values(entries, lambda e: f"{item('source_addresses')(e)}; "
                                    f"{item('destination_addresses')(e)}")],
        ["Validation (factor α)",
         _values(entries, lambda e: f"{item('validation')(e)} ({item('validation_factor')(e)})")],
        ["DUT hook before each trial (empties the connection table)",
         _values(entries, lambda e: item("before_trial")(e) or "none")],
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


def _detail_tables(doc: Document, entry: Entry, axes: list[str]) -> None:
    summary = entry.summary
    label = f"point {entry.name}: {_point_label(entry, axes)}"
    procedure = entry.procedure
    if procedure in ("throughput", "selftest"):
        max_rate = min((d.get("max_rate", 0) for d in summary.get("directions", {}).values()),
                       default=0)
        rows = [[str(r["repetition"]), format_value(r.get("throughput"), "fps"),
                 f"{100 * r['throughput'] / max_rate:.3f}" if max_rate and r.get("throughput")
                 is not None else "-", str(len(r.get("steps", []))),
                 "yes" if r.get("found") else "no", "yes" if r.get("tester_limited") else "no",
                 "yes" if r.get("complete") else "no"]
                for r in summary.get("repetitions", [])]
        doc.table(["repetition", "throughput (fps)", "% of maximum", "trials", "found",
                   "tester limited", "complete"], rows, f"{label}: throughput per repetition")
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
    if unit == "fps":
        return "throughput (frames/s per direction)"
    return "frame loss rate (%)" if procedure == "frame-loss" else "loss ratio (%)"


def _scale(unit: str) -> float:
    return 100.0 if unit == "ratio" else 1.0


def _bar_charts(plotter: _Plotter, entries: list[Entry], axes: list[str]) -> None:
    """Median with 1st/99th-percentile error bars per frame size (groups) and direction."""
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
        ax.set_xlabel("frame size (bytes)")
        ax.set_ylabel(_y_label(unit, procedure))
        if unit == "ratio":
            ax.set_ylim(0, 100)
        title = _group_title(group_key, others)
        ax.set_title(f"median with 1st/99th percentiles: {title}", fontsize=10)
        ax.legend(title="direction", fontsize=8)
        ax.grid(axis="y", alpha=0.3)
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
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.set_xlabel("offered rate (% of the maximum frame rate)")
    ax.set_ylabel("frame loss rate (%)")
    ax.set_title("Frame loss rate (RFC 2544 §26.3), median over repetitions", fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    plotter.save(fig, "frame_loss_rate", "Frame loss rate against offered rate")


def _line_plot(plotter: _Plotter, entries: list[Entry], axes: list[str], x_of, x_label: str,
               name: str, caption: str, relative: bool = False, log_x: bool = False) -> None:
    others = [k for k in axes if k not in ("traffic.mix_n", "traffic.mix_m") and not
              (name != "mix" and k == x_of.key)]
    for unit in sorted({e.unit for e in entries}):
        usable = [e for e in entries if e.unit == unit and e.summary.get("median") is not None]
        if not usable:
            continue
        scale = _scale(unit)
        groups = _groups(usable, others)
        rows = 2 if relative else 1
        fig, axs = plotter.plt.subplots(rows, 1, figsize=(7, 4.5 * rows), squeeze=False)
        ax = axs[0][0]
        for group_key, group in list(groups.items())[:12]:
            points = sorted((x_of(e), e.summary) for e in group)
            xs = [x for x, _ in points]
            ys = [s["median"] * scale for _, s in points]
            err = [[(s["median"] - s["p1"]) * scale for _, s in points],
                   [(s["p99"] - s["median"]) * scale for _, s in points]]
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3,
                        label=_group_title(group_key, others))
            if relative and ys and ys[0]:
                axs[1][0].plot(xs, [y / ys[0] for y in ys], marker="o",
                               label=_group_title(group_key, others))
        procedure = usable[0].procedure
        ax.set_xlabel(x_label)
        ax.set_ylabel(_y_label(unit, procedure))
        if log_x:
            ax.set_xscale("log")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        ax.set_title(caption, fontsize=10)
        if relative:
            second = axs[1][0]
            second.set_xlabel(x_label)
            second.set_ylabel(f"relative scale-up (median / median at {x_label} = "
                              "smallest value)")
            second.grid(alpha=0.3)
            second.legend(fontsize=7)
        plotter.save(fig, f"{name}_{unit}", caption)


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
    for unit in sorted({e.unit for e in entries}):
        series = [(e, sorted(repetition_values(e.summary))) for e in entries if e.unit == unit]
        series = [(e, v) for e, v in series if len(v) >= 5]
        if not series:
            continue
        scale = _scale(unit)
        fig, ax = plotter.plt.subplots(figsize=(7, 4.5))
        for entry, values in series[:12]:
            n = len(values)
            ax.step([v * scale for v in values], [(i + 1) / n for i in range(n)], where="post",
                    label=f"{entry.name}: {_point_label(entry, axes)}")
        ax.set_xlabel(_y_label(unit, series[0][0].procedure))
        ax.set_ylabel("cumulative fraction of repetitions")
        ax.set_ylim(0, 1)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        plotter.save(fig, f"cdf_repetitions_{unit}",
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
                  f"{utc_timestamp()}. Rates are frames per second per direction (RFC 2544 §14).")
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
