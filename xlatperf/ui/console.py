# SPDX-License-Identifier: BSD-3-Clause
"""Console output: live progress while trials run, and the result table (rich)."""

import math
import time
from pathlib import Path

from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..engine.protocol import TrialResult, foreign_beyond_noise
from ..measure.session import Reporter
from ..procedures import REGISTRY
from ..report.collect import Entry
from ..report.families import family
from ..report.tables import dns_queries
from ..report.units import format_value, unit


def _fps(value) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _frames(direction: dict) -> str:
    """A direction's frames in the start line: sent → received size, or the IMIX and its mean."""
    if direction.get("imix"):
        return f"IMIX {direction['imix']} ({direction['mean_frame_size']:.1f} B on average)"
    return f"{direction['frame_size']}→{direction['rx_frame_size']} B"


def _ratio_pct(value) -> str:
    return "-" if value is None else f"{100 * value:.4g} %"


def _delay_ms(value) -> str:
    """A delay in ms (RFC 8219's unit), shown in µs below 1 ms and in ns below 1 µs; None is
    infinite/unknown."""
    if value is None:
        return "∞"
    if abs(value) >= 1:
        return f"{value:.4g} ms"
    return f"{1000 * value:.4g} µs" if abs(value) >= 1e-3 or value == 0 else \
        f"{1e6 * value:.4g} ns"


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class ConsoleReporter(Reporter):
    """One line per finished trial; on a terminal also a live status line for the running
    trial (step, rate, search interval, frames sent/received, elapsed time)."""

    def __init__(self, console: Console | None = None, log_interval: float | None = None):
        if console is None:
            console = Console()
            if not console.is_terminal:  # logs and pipes: no 80-column wrapping of the tables
                console = Console(width=max(console.width, 160))
        self.console = console
        self.live: Live | None = None
        self.info: dict = {}
        self.context: dict = {}
        self.progress_event: dict | None = None
        self.status = ""
        self.started_at = time.monotonic()
        self.trial_started_at: float | None = None
        # Periodic statistics log (--log-interval): a timestamped status line that stays in
        # the scrollback (or the log file) every log_interval seconds while trials run.
        self.log_interval = log_interval
        self._last_log = time.monotonic()
        self._trial_seconds: list[float] = []    # wall time of each finished trial
        self._last_trial_end: float | None = None
        self._repetitions_done = 0
        self._trials_in_repetitions_done = 0
        self._trials_this_repetition = 0

    # -- Reporter hooks ------------------------------------------------------------------------

    def started(self, info):
        self.info = info
        self.started_at = time.monotonic()
        self._repetitions_done = self._trials_in_repetitions_done = 0   # a new campaign point
        self._trials_this_repetition = 0
        self._last_trial_end = None
        hello = info.get("hello", {})
        directions = ", ".join(f"{name} {_frames(d)}, max {_fps(d['max_rate'])} fps"
                               for name, d in info["directions"].items())
        self.console.print(f"[bold]xlatperf {info['procedure']}[/bold]: {info['repetitions']} "
                           f"repetition(s); {directions}; engine {hello.get('engine', '?')}, "
                           f"{hello.get('dpdk', '?')}")
        if self.console.is_terminal:
            self.live = Live(get_renderable=self._render, console=self.console,
                             refresh_per_second=4, transient=True)
            self.live.start()

    def point(self, info):
        labels = " ".join(f"{k}={v}" for k, v in info["labels"].items())
        resumed = (f" (resuming: {info['repetitions_done']} repetition(s) kept)"
                   if info.get("state") == "partial" else "")
        on = f" on tester {info['tester']}" if info.get("tester") else ""
        self.console.print(f"[bold]point {info['index']}/{info['count']}[/bold]{on}: "
                           f"{info['procedure']} {labels}{resumed}", highlight=False)

    def repetition(self, number, count):
        if number > 1 and self._trials_this_repetition:
            self._repetitions_done += 1
            self._trials_in_repetitions_done += self._trials_this_repetition
        self._trials_this_repetition = 0
        if count > 1:
            self.console.print(f"repetition {number}/{count}")

    def before_trial(self, context):
        self.context = context
        self.progress_event = None
        self.status = ""
        self.trial_started_at = None

    def pausing(self, seconds):
        self.status = f"pausing {seconds:.1f} s"

    def progress(self, event):
        if self.trial_started_at is None:
            self.trial_started_at = time.monotonic()
        self.status = ""
        self.progress_event = event
        now = time.monotonic()
        if self.log_interval and now - self._last_log >= self.log_interval:
            self._last_log = now
            stamp = time.strftime("%H:%M:%S")
            self.console.print(f"[dim]{stamp}[/dim] {self._status_line()}", highlight=False,
                               soft_wrap=True)

    def after_trial(self, record, result):
        now = time.monotonic()
        if self._last_trial_end is not None or self.trial_started_at is not None:
            start = self._last_trial_end if self._last_trial_end is not None else \
                self.trial_started_at
            self._trial_seconds.append(now - start)
        self._last_trial_end = now
        if record.get("phase") not in ("learning", "check"):
            self._trials_this_repetition += 1
        # Printed above the live status line, so the whole search stays in the scrollback.
        self.console.print(self._trial_line(record, result), highlight=False, soft_wrap=True)

    def finished(self, summary):
        self.close()

    def close(self):
        if self.live is not None:
            self.live.stop()
            self.live = None

    # -- rendering -------------------------------------------------------------------------------

    def _passed(self, result: TrialResult) -> bool:
        return result.passes(self.info.get("loss_tolerance", 0.0))

    def _verdict(self, result: TrialResult) -> str:
        if not result.valid:
            return f"invalid ({result.invalid_reason or 'tester'})"
        return "pass" if self._passed(result) else "loss"

    def _trial_line(self, record: dict, result: TrialResult) -> str:
        where = f"rep {record['repetition']} step {record['step']}"
        if record.get("phase") == "check":
            where = "check"
        elif record.get("phase") in ("phase1", "validation", "teardown", "close"):  # RFC 9693 steps
            where += f" {record['phase']}"
            if "teardown" in record:
                t = record["teardown"]
                rate = "-" if t["rate"] is None else f"{t['rate']:,.0f} connections/s"
                return (f"  {where}: {t['connections']:,} connections deleted in "
                        f"{t['full_seconds']:.4f} s, empty table {t['empty_seconds']:.4f} s: "
                        f"{rate}")
        if "network_flows" in record:   # RFC 8219 §10: the trial's number of network flows
            where += f" n={record['network_flows']:,}"
        # Test frames the receiver refused (another CE's, a bad checksum, a wrong TTL, ...) are
        # in the loss; each kind said apart, as the DUT's error it is (engine/protocol.py REFUSED).
        losses = ", ".join(f"{name} {d.received:,}/{d.sent:,} ({_ratio_pct(d.loss_ratio)} loss"
                           + "".join(f", {count:,} {what}" for count, what in d.refused()) + ")"
                           for name, d in result.directions.items())
        fragments = ", ".join([f"{count:,} IP fragments on port {port}"
                               for port, count in record.get("fragmented", {}).items() if count] +
                              [f"{count:,} foreign frames on port {port}"
                               for port, count in foreign_beyond_noise(record).items()] +
                              [f"{sum(counters.values()):,} pause frames from the DUT on port {port}"
                               for port, counters in (record.get("pause_received") or {}).items()])
        if fragments:  # test frames a DUT fragmented: no test frames (docs/protocol.md)
            losses += f" ({fragments})"
        if record.get("dns_names", {}).get("asked_before"):   # dns64perf++'s names, round dns.a_records
            losses += " (names of earlier trials asked again: a DNS64 may answer them from its cache)"
        sizes = "; ".join(f"{name} per size " + ", ".join(
            f"{size} B {c['received']:,}/{c['sent']:,}" for size, c in d.sizes.items())
            for name, d in result.directions.items() if d.sizes)  # IMIX (RFC 6985)
        if sizes:
            losses += f" ({sizes})"
        verdict = self._verdict(result)
        if "burst" in record:           # back-to-back: the burst, its measured rate, its verdict
            burst = record["burst"]
            measured = burst.get("sending_rate")
            where += (f": burst of {burst['frames']:,} frames at {_fps(result.rate)} fps "
                      f"(sent at {_fps(measured)} fps)")
            verdict = ("pass" if burst["passed"] else "loss" if burst["valid"]
                       else f"invalid ({burst.get('invalid_reason')})")
            style = "green" if verdict == "pass" else "red" if verdict == "loss" else "yellow"
            return f"  {where}: {losses}: [{style}]{verdict}[/{style}]"
        if ("recovery" in record or "reset" in record) and result.valid:
            # RFC 2544 §26.5, §26.6: loss is expected; the verdict is each direction's time
            return f"  {where}: {_fps(result.rate)} fps: {losses}: " + _interruption(record)
        style = "green" if verdict == "pass" else "red" if verdict == "loss" else "yellow"
        # DNS queries (docs/dns.md): the rate is the queries' (their replies counted with them).
        per = "qps" if any(d.dns_wrong_answer is not None for d in result.directions.values()) else "fps"
        line = f"  {where}: {_fps(result.rate)} {per}: {losses}: [{style}]{verdict}[/{style}]"
        if "mlrsearch" in record:  # MLRsearch: trial duration and each goal's class after it
            classes = ", ".join(f"{name} {info['class']}"
                                for name, info in record["mlrsearch"]["goals"].items())
            line = line.replace(f"{where}: ", f"{where}: {record['duration']:g} s at ", 1)
            line += f" ({classes})"
        if "latency" in record:  # RFC 8219 §7.2: TL and WCL of the tagged frames
            line += "; " + ", ".join(
                f"{name} TL {_delay_ms(info['tl_ms'])} WCL {_delay_ms(info['wcl_ms'])}"
                + (f" ({info['lost']}/{info['tagged']} tagged lost)" if info["lost"] else "")
                for name, info in record["latency"].items())
        if "pdv" in record:      # RFC 8219 §7.3
            line += "; " + ", ".join(
                f"{name} PDV {_delay_ms(info['pdv_ms'])}"
                + (f" IPDV {_delay_ms(info['ipdv']['min_ms'])}/"
                   f"{_delay_ms(info['ipdv']['median_ms'])}/{_delay_ms(info['ipdv']['max_ms'])}"
                   if "ipdv" in info else "")
                for name, info in record["pdv"].items())
        return line

    def _render(self):
        return Text(self._status_line(), style="cyan")

    def _status_line(self) -> str:
        c = self.context
        parts = [f"repetition {c.get('repetition', '?')}/{self.info.get('repetitions', '?')}",
                 f"step {c.get('step', '?')}"]
        if c.get("phase"):
            parts.insert(0, c["phase"])
        if "network_flows" in c:
            parts.append(f"n = {c['network_flows']:,} flows")
        if "frames" in c:
            parts.append(f"burst {c['frames']:,} frames")
        if "rate" in c:
            parts.append(f"rate {_fps(c['rate'])} fps")
        if "lo" in c:
            parts.append(f"interval [{_fps(c['lo'])}, {_fps(c['hi'])}]")
        if "percent" in c:
            parts.append(f"{c['percent']:.4g} % of max")
        if self.status:
            parts.append(self.status)
        elif self.progress_event:
            event = self.progress_event
            parts += [f"{f['name']} {f['received']:,}/{f['sent']:,}"
                      for f in event.get("flows", [])]
            parts.append(f"trial {event.get('elapsed', 0):.1f} s of "
                         f"{self.info.get('duration', 0):g} s + timeout")
        parts.append(f"elapsed {_duration(time.monotonic() - self.started_at)}")
        remaining = self._remaining_seconds()
        if remaining is not None:
            parts.append(f"about {_duration(remaining)} left")
        return " · ".join(parts)

    def _remaining_trials_in_repetition(self) -> int | None:
        c = self.context
        error = self.info.get("error")
        if "lo" in c and error:       # binary search: about log2((hi - lo) / error) more trials
            span = max(c["hi"] - c["lo"], 1)
            return max(1, math.ceil(math.log2(span / error))) if span > error else 1
        if "percent" in c and self.info.get("step"):   # frame-loss scan: at most down to 0 %
            return max(1, math.ceil(c["percent"] / self.info["step"]))
        spec = REGISTRY.get(self.info.get("procedure"))
        return spec.trials_per_repetition if spec is not None else None

    def _remaining_seconds(self) -> float | None:
        """Estimated time left: average trial wall time x trials still to come (this
        repetition's estimate, plus the average trials per finished repetition for the rest)."""
        if not self._trial_seconds:
            return None
        in_repetition = self._remaining_trials_in_repetition()
        if in_repetition is None:
            return None
        per_trial = sum(self._trial_seconds) / len(self._trial_seconds)
        current = self.context.get("repetition") or 1
        left = max(0, self.info.get("repetitions", 1) - current)
        if self._repetitions_done:
            per_repetition = self._trials_in_repetitions_done / self._repetitions_done
        else:
            per_repetition = self._trials_this_repetition + in_repetition
        return per_trial * (in_repetition + left * per_repetition)


def _seconds(value) -> str:
    return "-" if value is None else f"{value:.6g} s"


def _interruption(record: dict) -> str:
    """A recovery or reset trial's verdict: each direction's recovery time (RFC 2544 §26.5)
    or reset time by both methods (RFC 6201)."""
    parts = []
    for name, d in record.get("recovery", {}).items():
        if d["recovered"]:
            parts.append(f"{name} [green]recovered in {_seconds(d['recovery_time'])}[/green]")
        else:
            bound = f" (≥ {_seconds(d['at_least'])})" if d.get("at_least") is not None else ""
            what = "not recovered within the window" if d["recovered"] is False \
                else "undetermined"
            parts.append(f"{name} [red]{what}{bound}[/red]")
    for name, d in record.get("reset", {}).items():
        if not d["interrupted"]:
            parts.append(f"{name} [yellow]no frame lost[/yellow]")
        elif not d["back"]:
            parts.append(f"{name} [red]not back before the trial ended[/red]")
        else:
            parts.append(f"{name} reset [green]{_seconds(d['timestamp_method'])}[/green] "
                         f"(timestamps), {_seconds(d['frame_loss_method'])} (frame loss)")
    return ", ".join(parts)


# --------------------------------------------------------------------------------------------
# Result tables: the report family's (report/families)
# --------------------------------------------------------------------------------------------


def _table(title: str, header: list[str], rows: list[list[str]]) -> Table:
    table = Table(title=title, header_style="bold")
    for column in header:
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(*row)
    return table


def _statistics(entry: Entry) -> Table:
    """The summary's statistics over the repetitions, in the procedure's unit."""
    summary = entry.summary
    dispersion = summary.get("dispersion")
    return _table(f"{entry.procedure}: summary over n = {summary.get('n', 0)} "
                  f"({unit(entry.unit).table})",
                  ["median", "p1", "p99", "min", "max", "dispersion"],
                  [[format_value(summary.get(k), entry.unit)
                    for k in ("median", "p1", "p99", "min", "max")]
                   + ["-" if dispersion is None else f"{dispersion:.4g}"]])


def render_summary(summary: dict):
    """A rich renderable with the result of a summary.json: a head line, how the procedure
    searched, then its report family's tables, the statistics, notes and warnings (the same
    tables the report shows)."""
    entry = Entry(summary.get("procedure", "?"), Path("."), summary)
    settings = entry.settings
    frames = (f"IMIX {settings['imix']}" if settings.get("imix")
              else dns_queries(settings["dns"]) if settings.get("dns")
              else f"frame size {settings.get('frame_size')} B")
    head = (f"{frames}, direction {settings.get('direction')}, "
            f"mix {settings.get('mix_m')}/{settings.get('mix_n')}, trial "
            f"{settings.get('duration')} s")
    if not summary.get("complete", True):
        head += " — [bold red]INCOMPLETE[/bold red] (interrupted)"
    criteria = [f"{what}: {escape(settings[key])}" for key, what in
                (("loss_criterion", "loss criterion"), ("timestamp_method", "timestamps"))
                if settings.get(key)]
    if criteria:
        head += "\n" + "; ".join(criteria)
    ceiling = settings.get("tester_ceiling")
    if ceiling:
        head += f"\n{escape(ceiling['statement'])}"
    found = family(entry)
    parts = [Text.from_markup(head), Text(f"search: {found.precision(entry)}", style="dim")]
    parts += [_table(f"{entry.procedure}: {caption}", header, rows)
              for header, rows, caption in found.details(entry)]
    parts.append(_statistics(entry))
    parts += [Text(f"note: {note}") for note in found.notes(entry)]
    parts += [Text(f"warning: {warning}", style="yellow") for warning in found.warnings(entry)]
    return Group(*parts)
