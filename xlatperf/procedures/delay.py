# SPDX-License-Identifier: BSD-3-Clause
"""Delay metrics of RFC 8219 §7.2-7.3 from the engine's delay data (docs/delay.md).

Pure functions, no engine: a trial's delay data is `TrialResult.delay`, per direction
{"tagged": {count, lost, delays_ns}, "histogram": {count, min_ns, p999_ns, ...},
"ipdv": {count, min_ns, median_ns, max_ns}, "background": {...}} (see TrialResult.from_reply).

* Latency (§7.2): per trial and direction, typical latency TL = median of the tagged frames'
  delays and worst-case latency WCL = their 99.9th percentile, both per RFC 2330 §11.3
  (xlatperf.stats). A tagged frame that was lost or arrived after trial.frame_timeout counts
  as +infinity: WCL becomes infinite as soon as more than 0.1 % of the tagged frames are lost
  (TL when half are). Infinite values are written as null next to the `lost` count.
* PDV (§7.3.1): p99.9(D) - min(D) over every received frame of the stream, from the engine's
  histogram (p999_ns - min_ns); IPDV (§7.3.2): min, median and max of D(i) - D(i-1).
* Summaries over repetitions (§7.2 step 5, §12): median, p1, p99, min, max of the per-trial
  values, in milliseconds (RFC 8219's unit), per direction; the top level holds the worse
  direction's value of each trial.
"""

import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Callable, Sequence

from ..engine.protocol import TrialResult
from ..util.errors import ConfigError
from ..util.stats import median, percentile, summarize
from .search import Notify, measure_step

INF = math.inf
NS_PER_MS = 1e6
WCL_PERCENTILE = 99.9
# RFC 8219 figures the defaults are checked against (warnings in summary.json).
RFC8219_LATENCY_DURATION = 120.0   # §7.2: stream of at least 120 s
RFC8219_LATENCY_DELAY = 60.0       # §7.2: tagged frames after the first 60 s
RFC8219_TIMESTAMPS = 500           # §7.2: at least 500 tagged frames
RFC8219_PDV_DURATION = 60.0        # §7.3.1: stream of at least 60 s
RFC8219_REPETITIONS = 20           # §7.2, §7.3: at least 20 repetitions (MUST)
PDV_LOSS_WARNING = 0.001           # PDV's p99.9 would be a lost frame above 0.1 % loss

LATENCY_DEFINITION = (
    "one-way delay from the sender's TSC when the frame's transmit burst is built (before its "
    "first bit leaves) to the receiver's TSC right after the receive burst holding it (after "
    "its last bit arrived); neither RFC 1242 definition exactly, and it includes the tester's "
    "own delay (measure it with the loopback lab)")
LOST_TAGGED = ("a tagged frame lost or later than trial.frame_timeout counts as +infinity "
               "(TL/WCL null when infinite, with the lost count)")


# --------------------------------------------------------------------------------------------
# Latency: TL and WCL of one trial
# --------------------------------------------------------------------------------------------


def tagged_delays(tagged: dict) -> list[float]:
    """The tagged frames' delays in ns, +infinity for a lost or late frame (null)."""
    return [INF if d is None else float(d) for d in tagged.get("delays_ns", [])]


def typical_latency(delays: Sequence[float]) -> float:
    """TL: the median (even N: the mean of the two middle values; infinite when one is)."""
    return median(delays)


def worst_case_latency(delays: Sequence[float]) -> float:
    """WCL: the 99.9th percentile, sorted[ceil(0.999 N) - 1] (RFC 2330 §11.3)."""
    return percentile(delays, WCL_PERCENTILE)


def finite_or_none(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _ms(value_ns: float | None) -> float | None:
    return None if value_ns is None else value_ns / NS_PER_MS


def latency_of(tagged: dict) -> dict:
    """TL and WCL of one stream's tagged frames (ns and ms; null when infinite or when no
    frame was tagged), with the number of tagged and of lost (or late) tagged frames."""
    delays = tagged_delays(tagged)
    lost = sum(1 for d in delays if d == INF)
    tl = finite_or_none(typical_latency(delays)) if delays else None
    wcl = finite_or_none(worst_case_latency(delays)) if delays else None
    received = [d for d in delays if d != INF]
    return {"tagged": len(delays), "lost": lost, "tl_ns": tl, "wcl_ns": wcl,
            "tl_ms": _ms(tl), "wcl_ms": _ms(wcl),
            "min_ns": min(received, default=None), "max_ns": max(received, default=None)}


def _latency_values(info: dict) -> tuple[float, float] | None:
    """(TL, WCL) in ms with +infinity for null, or None when nothing was tagged."""
    if not info["tagged"]:
        return None
    return (INF if info["tl_ms"] is None else info["tl_ms"],
            INF if info["wcl_ms"] is None else info["wcl_ms"])


def latency_by_direction(trial: TrialResult) -> dict:
    """{direction: latency_of(its tagged frames)} for the directions that carried tags."""
    return {name: latency_of(data["tagged"]) for name, data in (trial.delay or {}).items()
            if "tagged" in data}


# --------------------------------------------------------------------------------------------
# PDV and IPDV of one trial
# --------------------------------------------------------------------------------------------


def pdv_of(histogram: dict) -> dict:
    """PDV = p99.9(D) - min(D) (RFC 8219 §7.3.1) of one stream from the engine's histogram,
    in ns and ms, with the frame count, min, p99.9, max, mean and the histogram's relative
    error. PDV is null when no frame was received."""
    count = int(histogram.get("count", 0))
    if count == 0:
        return {"frames": 0, "pdv_ns": None, "pdv_ms": None, "min_ns": None, "p999_ns": None,
                "max_ns": None, "mean_ns": None, "relative_error": histogram.get("relative_error")}
    pdv = max(0.0, float(histogram["p999_ns"]) - float(histogram["min_ns"]))
    return {"frames": count, "pdv_ns": pdv, "pdv_ms": pdv / NS_PER_MS,
            "min_ns": histogram["min_ns"], "p999_ns": histogram["p999_ns"],
            "max_ns": histogram.get("max_ns"), "mean_ns": histogram.get("mean_ns"),
            "relative_error": histogram.get("relative_error")}


def ipdv_of(ipdv: dict) -> dict:
    """IPDV min, median and max (RFC 8219 §7.3.2) in ns and ms; null when there was no pair
    of consecutive received frames."""
    count = int(ipdv.get("count", 0))
    out: dict = {"pairs": count}
    for key in ("min", "median", "max"):
        value = float(ipdv[f"{key}_ns"]) if count else None
        out[f"{key}_ns"], out[f"{key}_ms"] = value, _ms(value)
    return out


def bucket_of_rank(buckets: Sequence[Sequence[float]], rank: int) -> tuple[float, float]:
    """[low_ns, high_ns) of the histogram bucket that holds the rank-th smallest delay
    (1-based): the interval the engine's percentile of that rank lies in."""
    if rank < 1:
        raise ValueError(f"rank {rank}: must be >= 1")
    seen = 0
    for low, high, count in sorted(buckets):
        seen += count
        if seen >= rank:
            return float(low), float(high)
    raise ValueError(f"rank {rank}: the histogram holds only {seen} values")


def pdv_by_direction(trial: TrialResult) -> dict:
    """{direction: PDV (and IPDV when measured) of the foreground stream, plus the background
    stream's under "background"}, for the directions with a histogram."""
    result = {}
    for name, data in (trial.delay or {}).items():
        if "histogram" not in data:
            continue
        counts = trial.directions.get(name)
        info = {**pdv_of(data["histogram"]),
                **({"ipdv": ipdv_of(data["ipdv"])} if "ipdv" in data else {})}
        if counts is not None:
            info["loss_ratio"] = counts.loss_ratio
        background = data.get("background", {})
        if "histogram" in background:
            info["background"] = {**pdv_of(background["histogram"]),
                                  **({"ipdv": ipdv_of(background["ipdv"])}
                                     if "ipdv" in background else {})}
        result[name] = info
    return result


# --------------------------------------------------------------------------------------------
# Procedures (one trial per repetition) and their summaries
# --------------------------------------------------------------------------------------------


def latency_trial(run_trial: Callable[[int], TrialResult], rate: int, *,
                  steps: list | None = None, notify: Notify | None = None
                  ) -> tuple[TrialResult, dict]:
    """One RFC 8219 §7.2 latency trial at `rate`: run_trial must send the tagged frames (the
    runner adds latency_request() to the request). Returns the trial and its TL/WCL per
    direction."""
    result = measure_step(run_trial, rate, [] if steps is None else steps, notify)
    return result, latency_by_direction(result)


def pdv_trial(run_trial: Callable[[int], TrialResult], rate: int, *,
              steps: list | None = None, notify: Notify | None = None
              ) -> tuple[TrialResult, dict]:
    """One RFC 8219 §7.3 PDV trial at `rate` (run_trial asks for the histogram, and IPDV when
    configured: pdv_request()). Returns the trial and its PDV/IPDV per direction."""
    result = measure_step(run_trial, rate, [] if steps is None else steps, notify)
    return result, pdv_by_direction(result)


def summarize_infinite(values: Sequence[float]) -> dict:
    """stats.summarize over values that may be +infinity (lost tagged frames): infinite
    statistics are null, `infinite` counts the infinite values, and the dispersion is null
    when any value is infinite."""
    values = list(values)
    stats = summarize(values)
    infinite = sum(1 for v in values if v == INF)
    for key in ("median", "p1", "p99", "min", "max", "dispersion"):
        value = stats[key]
        if value is not None and not math.isfinite(value):
            stats[key] = None
    if infinite:
        stats["dispersion"] = None
    stats["infinite"] = infinite
    return stats


def _usable(trials: Sequence[TrialResult]) -> list[TrialResult]:
    """Valid trials (an invalid trial is a tester failure, never a DUT result) with delay data."""
    return [t for t in trials if t.valid and t.delay]


def summarize_latency(trials: Sequence[TrialResult]) -> dict:
    """RFC 8219 §7.2 step 5: the median (and p1, p99, min, max) of the trials' TL and of their
    WCL, in ms, per direction; the top level summarises the worse direction of each trial (the
    larger TL, the larger WCL) with the TL statistics as the summary's headline."""
    usable = _usable(trials)
    per_direction: dict[str, dict[str, list]] = {}
    worst_tl, worst_wcl = [], []
    for trial in usable:
        values = {}
        for name, info in latency_by_direction(trial).items():
            if (pair := _latency_values(info)) is None:
                continue
            values[name] = pair
            lists = per_direction.setdefault(name, {"tl": [], "wcl": [], "tagged": 0, "lost": 0})
            lists["tl"].append(pair[0])
            lists["wcl"].append(pair[1])
            lists["tagged"] += info["tagged"]
            lists["lost"] += info["lost"]
        if values:
            worst_tl.append(max(tl for tl, _ in values.values()))
            worst_wcl.append(max(wcl for _, wcl in values.values()))
    directions = {name: {"typical_latency": summarize_infinite(lists["tl"]),
                         "worst_case_latency": summarize_infinite(lists["wcl"]),
                         "tagged": lists["tagged"], "lost_tagged": lists["lost"]}
                  for name, lists in sorted(per_direction.items())}
    typical = summarize_infinite(worst_tl)
    return {"unit": "ms", "metric": "typical latency (worse direction)", **typical,
            "typical_latency": typical, "worst_case_latency": summarize_infinite(worst_wcl),
            "invalid": len(trials) - len(usable), "directions": directions}


def summarize_pdv(trials: Sequence[TrialResult]) -> dict:
    """RFC 8219 §7.3: the median (p1, p99, min, max) of the trials' PDV in ms per direction,
    and of each of IPDV's min, median and max when measured (§7.3.2 step 4); the top level
    summarises the larger PDV of the directions of each trial."""
    usable = _usable(trials)
    per_direction: dict[str, dict[str, list]] = {}
    worst = []
    for trial in usable:
        values = pdv_by_direction(trial)
        pdvs = []
        for name, info in values.items():
            lists = per_direction.setdefault(name, {"pdv": [], "min": [], "median": [],
                                                    "max": [], "frames": 0})
            lists["frames"] += info["frames"]
            if info["pdv_ms"] is not None:
                lists["pdv"].append(info["pdv_ms"])
                pdvs.append(info["pdv_ms"])
            ipdv = info.get("ipdv")
            if ipdv and ipdv["pairs"]:
                for key in ("min", "median", "max"):
                    lists[key].append(ipdv[f"{key}_ms"])
        if pdvs:
            worst.append(max(pdvs))
    directions = {}
    for name, lists in sorted(per_direction.items()):
        entry = {"pdv": summarize(lists["pdv"]), "frames": lists["frames"]}
        if lists["median"]:
            entry["ipdv"] = {key: summarize(lists[key]) for key in ("min", "median", "max")}
        directions[name] = entry
    top = summarize(worst)
    return {"unit": "ms", "metric": "PDV (worse direction)", **top, "pdv": top,
            "invalid": len(trials) - len(usable), "directions": directions}


# --------------------------------------------------------------------------------------------
# Requests, checks, warnings
# --------------------------------------------------------------------------------------------


def latency_request(config: dict) -> dict:
    """The trial request's `delay` object for a latency trial (docs/protocol.md)."""
    return {"tagged": config.latency.timestamps,
            "tagged_start": config.latency.delay}


def pdv_request(config: dict) -> dict:
    return {"histogram": True, "ipdv": config.pdv.ipdv}


def foreground_frames(rate: int, duration: float, mix_n: int = 1, mix_m: int = 1) -> int:
    """Foreground frames of a flow in a trial: the engine sends round(rate x duration) frames,
    frame k being foreground when k % mix_n < mix_m."""
    total = round(rate * duration)
    return total // mix_n * mix_m + min(total % mix_n, mix_m)


def tagged_capacity(rate: int, duration: float, delay: float, mix_n: int = 1,
                    mix_m: int = 1) -> int:
    """How many foreground frames are sent after `delay` seconds, i.e. the most frames that can
    be tagged (the engine's rule: tags start at frame ceil(N x delay / duration))."""
    frames = foreground_frames(rate, duration, mix_n, mix_m)
    first = math.ceil(Fraction(frames) * Fraction(str(delay)) / Fraction(str(duration)))
    return frames - first


def check_latency_setup(config: dict, rate: int) -> None:
    """RFC 8219 §7.2 (methodology §14 item 13): the tagged frames must fit after the delay:
    latency.delay < trial.duration and (duration - delay) x rate >= timestamps (counting
    foreground frames only when there is background traffic). Raises ConfigError."""
    duration, delay = config.trial.duration, config.latency.delay
    timestamps = config.latency.timestamps
    if delay >= duration:
        raise ConfigError(f"latency.delay = {delay:g}: must be below trial.duration = "
                          f"{duration:g} s (the tagged frames are sent after the delay; RFC 8219 "
                          "§7.2: 120 s trials, tags after 60 s: set --duration 120)")
    mix_n, mix_m = config.traffic.mix_n, config.traffic.mix_m
    capacity = tagged_capacity(rate, duration, delay, mix_n, mix_m)
    if capacity < timestamps:
        foreground = "" if mix_n == mix_m else f" x {mix_m}/{mix_n} (foreground)"
        raise ConfigError(
            f"latency.timestamps = {timestamps}: must be at most {capacity}: at {rate} frames/s "
            f"only that many frames are sent in the (trial.duration - latency.delay) = "
            f"{duration - delay:g} s after the delay{foreground} (RFC 8219 §7.2: (duration - "
            "delay) x rate >= timestamps); raise the rate or the duration, or lower the delay")


def latency_warnings(config: dict, summary: dict) -> list[str]:
    """Where the measurement falls short of RFC 8219 §7.2 (or lost tagged frames)."""
    trial, latency = config.trial, config.latency
    warnings = _common_warnings(config, RFC8219_LATENCY_DURATION, "§7.2")
    if latency.delay < RFC8219_LATENCY_DELAY:
        warnings.append(f"latency.delay = {latency.delay:g} s: RFC 8219 §7.2 tags frames "
                        f"after the first {RFC8219_LATENCY_DELAY:g} s")
    if latency.timestamps < RFC8219_TIMESTAMPS:
        warnings.append(f"latency.timestamps = {latency.timestamps}: RFC 8219 §7.2 asks for "
                        f"at least {RFC8219_TIMESTAMPS} tagged frames")
    for name, info in summary.get("directions", {}).items():
        lost = info.get("lost_tagged", 0)
        if lost:
            wcl_inf = info.get("worst_case_latency", {}).get("infinite", 0)
            criterion = (f"later than the {trial.frame_timeout:g} s frame timeout"
                         if trial.frame_timeout else "not received")
            warnings.append(f"{name}: {lost} of {info.get('tagged', 0)} tagged frames were lost "
                            f"or {criterion} (counted as +infinity; WCL infinite in {wcl_inf} of "
                            f"{info.get('worst_case_latency', {}).get('n', 0)} trials)")
    return warnings


def pdv_warnings(config: dict, summary: dict, trials: Sequence[TrialResult]) -> list[str]:
    warnings = _common_warnings(config, RFC8219_PDV_DURATION, "§7.3")
    for name in summary.get("directions", {}):
        lossy = [t for t in _usable(trials) if name in t.directions
                 and (t.directions[name].loss_ratio or 0) > PDV_LOSS_WARNING]
        if lossy:
            worst = max(t.directions[name].loss_ratio for t in lossy)
            warnings.append(f"{name}: {len(lossy)} trial(s) lost more than "
                            f"{100 * PDV_LOSS_WARNING:g} % of the frames (up to {100 * worst:.3g} "
                            "%): PDV is over the received frames only (with lost frames as "
                            "+infinity, as siitperf's penalty does, it would be infinite)")
    return warnings


def _common_warnings(config: dict, rfc_duration: float, section: str) -> list[str]:
    warnings = []
    duration = config.trial.duration
    if duration < rfc_duration:
        warnings.append(f"trial.duration = {duration:g} s is shorter than RFC 8219 {section}'s "
                        f"{rfc_duration:g} s")
    repeat = max(config.output.repeat, config.output.repeat_max)
    if repeat < RFC8219_REPETITIONS:
        warnings.append(f"output.repeat = {config.output.repeat}: RFC 8219 {section} "
                        f"requires at least {RFC8219_REPETITIONS} repetitions (--repeat 20)")
    return warnings


def timestamp_method(hello: dict | None) -> str:
    """How the delays were timestamped, from the engine's hello (docs/protocol.md)."""
    stamps = (hello or {}).get("timestamps") or {}
    method = str(stamps.get("software") or "tsc").upper()
    resolution = stamps.get("resolution_ns")
    text = f"software {method} timestamps at burst boundaries"
    if resolution is not None:
        text += f", resolution {resolution:.3g} ns"
    if stamps.get("hardware"):
        text += " (the NIC offers hardware timestamps; not used yet)"
    return text


RATE_STATISTIC = "median of the throughput's repetitions, rounded down to frames/s"
RATE_PROCEDURES = ("throughput", "selftest")


def rate_from_summary(summary: dict) -> dict:
    """The rate a latency or PDV measurement takes from a throughput result (RFC 8219 §7.2
    step 1, §7.3.1 step 1: at the throughput rate): the median of its repetitions (RFC 8219
    §12 summarises repetitions by their median), rounded down. Returns the rate source for
    the delay summary's "rate_source": rate (None when there is no rate to measure at),
    statistic, throughput median and n, tester_limited, and `reason` (why there is no rate) or
    `note` (a rate that is a lower bound set by the tester: measured at, and said so)."""
    procedure = summary.get("procedure")
    median = summary.get("median")
    source = {"procedure": procedure, "statistic": RATE_STATISTIC, "throughput": median,
              "n": summary.get("n"), "tester_limited": bool(summary.get("tester_limited")),
              "rate": None}
    if procedure not in RATE_PROCEDURES:
        return {**source, "reason": f"holds a {procedure!r} result, not a throughput "
                                    "measurement"}
    if not isinstance(median, (int, float)) or median < 1:
        shown = "no valid repetition" if median is None else f"{median:g} frames/s"
        return {**source, "reason": f"no throughput was found there (median: {shown}): the "
                                    "DUT passed no rate without loss, so there is no "
                                    "throughput rate to measure delays at"}
    source["rate"] = int(median)
    if source["tester_limited"]:
        source["note"] = ("the throughput is a lower bound set by the tester (tester_limited): "
                          "delays were measured at that rate, below the DUT's unknown "
                          "throughput, not at it")
    return source


def rate_from_results(directory) -> int:
    """The throughput a result directory measured (rate_from_summary), as the rate of a
    latency or PDV measurement (--rate-from DIR)."""
    return rate_source_of(directory)["rate"]


def rate_source_of(directory) -> dict:
    """rate_from_summary of a result directory's summary.json, with the directory;
    ConfigError when it holds no usable throughput."""
    path = Path(directory) / "summary.json"
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"--rate-from {directory}: cannot read {path}: "
                          f"{exc.strerror or exc}") from None
    except ValueError as exc:
        raise ConfigError(f"--rate-from {directory}: {path} is not JSON: {exc}") from None
    source = rate_from_summary(summary)
    if source["rate"] is None:
        raise ConfigError(f"--rate-from {directory}: {source['reason']}: give --rate")
    return {**source, "directory": str(directory)}
