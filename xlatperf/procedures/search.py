# SPDX-License-Identifier: BSD-3-Clause
"""Measurement procedures as plain functions of a trial runner.

A trial runner is any callable `run_trial(rate) -> TrialResult` (rate in frames/s per
direction). The real one talks to the engine (xlatperf/measure/session.py); tests pass deterministic fakes.
Procedures append every trial to a caller-supplied `steps` list as soon as it returns, so an
interrupted procedure (Ctrl-C) still leaves its trials to the caller.
"""

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Iterable, TypeVar

from ..frames.trial import side_vlan
from ..config.dns import DNS_QUERIES, ceiling_unit
from ..config.ports import parse_port
from ..engine.protocol import TrialResult
from ..util.stats import summarize

RunTrial = Callable[[int], TrialResult]
Notify = Callable[[dict], None]


def measure_step(run_trial: RunTrial, rate: int, steps: list, notify: Notify | None,
             **context) -> TrialResult:
    if notify is not None:
        notify({"rate": rate, **context})
    result = run_trial(rate)
    steps.append(result)
    return result


# --------------------------------------------------------------------------------------------
# Throughput: binary search (RFC 2544 §26.1)
# --------------------------------------------------------------------------------------------


def _rate_not_kept(step) -> bool:
    # Steps are TrialResults or look like one (RFC 9693's EstablishmentStep: a phase 1 the
    # tester could not send at its rate also bounds a connection-rate search).
    return bool(getattr(step, "rate_not_kept", False))


def tester_bound(step) -> bool:
    """Whether a step that did not pass failed by the tester's doing, not the DUT's: invalid
    because of the tester (its pacing, its ports' drops, TCP replies its TX queue did not take),
    with no more loss than that explains. A trial that also showed the DUT losing frames on its
    own is the DUT's failure."""
    if not (_rate_not_kept(step) or getattr(step, "dropped_by_tester", False)
            or getattr(step, "replies_not_sent", False)):
        return False
    beyond = getattr(step, "lost_beyond_tester_fault", None)
    return not (beyond is not None and beyond())


# An invalid trial shows a ceiling only when its sender fell clearly short of the rate. A
# sender that sent (nearly) every frame but finished a few microseconds late is at the edge of
# what it can do: that trial fails, but a later repetition may pass the same rate, so it must
# not bound the rest of the run (each repetition would then only go lower).
CLEAR_SHORTFALL = 1e-3
# ... and only when the shortfall repeats: in this many attempts of the step (the step's own
# and the ones taken again before it, trial.retakes), one scheduling hiccup being no ceiling.
# Below the tester's calibrated ceiling, which says it can send faster, one more.
CEILING_EVIDENCE = 2
CEILING_EVIDENCE_BELOW_CALIBRATION = 3


def unreachable_from(step, calibrated: int | None = None) -> int | None:
    """The rate a step shows the tester cannot reach, or None. An invalid trial's sender is cut
    off at the validity rule's limit, so what it sent by then is its pace; it is a ceiling when
    every attempt of the step (CEILING_EVIDENCE of them at least, more below the `calibrated`
    ceiling) fell clearly short of the rate, and the DUT lost no more than the tester's fault
    explains. The ceiling is the fastest pace the attempts showed.
    A sender that met its capacity (TrialResult.capacity_shown: far short of its schedule for
    longer than a hiccup) shows it in one attempt, whatever the DUT lost besides: the DUT lost
    that at the sender's pace, not at the rate asked, and no trial above the pace can be valid.
    Not below the calibrated ceiling, which says the tester can send faster."""
    if not _rate_not_kept(step):
        return None
    below_calibration = bool(calibrated) and step.rate <= calibrated
    if getattr(step, "capacity_shown", False) and not below_calibration:
        return max(1, math.floor(step.achieved_rate))
    if not tester_bound(step):
        return None
    needed = CEILING_EVIDENCE_BELOW_CALIBRATION if below_calibration else CEILING_EVIDENCE
    earlier = getattr(step, "earlier_attempts", ())
    paces = [getattr(step, "achieved_rate", None)] + [a.get("achieved_rate") for a in earlier]
    if len(paces) < needed or any(p is None or p >= step.rate * (1 - CLEAR_SHORTFALL)
                                  for p in paces):
        return None
    return max(1, math.floor(max(paces)))


def tester_ceiling(steps, known: int | None = None, calibrated: int | None = None) -> int | None:
    """The lowest rate the tester has shown it cannot send at (unreachable_from), among
    `steps` and an earlier `known` one; None when none."""
    rates = [r for r in (unreachable_from(s, calibrated) for s in steps) if r is not None]
    return min(rates + ([known] if known is not None else []), default=None)


# --------------------------------------------------------------------------------------------
# The tester's calibrated ceiling (tester.ceiling, written by `xlatperf lab up`): the highest
# rate per direction at which the tester, through an ideal DUT, sent and received every frame.
# A throughput search measures no rate above it; a DUT that passes at it is faster than this
# tester can show.
# --------------------------------------------------------------------------------------------


def sending_version(config) -> int:
    """The IP version of the side that sends a one-direction run's frames (a DNS client's)."""
    side = "right" if config.traffic.direction == "reverse" else "left"
    return config.side(side).ip_version


def ceiling_conditions(config, dns_timeout: float | None = None) -> str:
    """The tester set-up a calibrated ceiling holds for: port types, frame sizes (one, or the
    IMIX; or DNS queries), VLAN tags, directions, lcores, queues and which address and port fields vary (the
    sender's cost per frame). A run with another set-up does not apply it. dns_timeout: the
    DNS64 test's timeout where it is not the config's (its self-test's config has a quarter)."""
    kinds = "/".join(parse_port(config.side(side).port).kind for side in ("left", "right"))
    traffic = config.traffic
    # DNS queries are no test frames of a size: a frames' ceiling holds nothing for them, and
    # theirs (RFC 8219 §9.2.1's self-test) is for a timeout and the client's IP version.
    sizes = (f"{DNS_QUERIES} over IPv{sending_version(config)} (timeout {dns_timeout or config.dns.timeout:g} s)"
             if config.dns.enabled else
             f"IMIX {traffic.imix}" if traffic.imix else f"{traffic.frame_size}-byte frames")
    tags = {side: side_vlan(config, side) for side in ("left", "right")}
    varying = [f"addresses.{side} {getattr(config.addresses, side)}" for side in
               ("left", "right") if getattr(config.addresses, side) != "fixed"]
    varying += [f"ports.{key} {getattr(config.ports, key)}" for key in
                ("forward_src", "forward_dst", "reverse_src", "reverse_dst")
                if getattr(config.ports, key) != "fixed"]
    return ", ".join([f"{kinds} ports", sizes,
                      *([f"VLAN tags left {len(tags['left'])} right {len(tags['right'])}"]
                        if any(tags.values()) else []),
                      f"direction {traffic.direction}", f"lcores {config.tester.lcores}",
                      *([f"queues {config.tester.queues}"] if config.tester.queues > 1 else []),
                      *([f"varying {' '.join(varying)}"] if varying else [])])


@dataclass(frozen=True)
class CalibratedCeiling:
    fps: int              # frames/s per direction (DNS queries/s where its conditions are DNS's)
    conditions: str       # the set-up it was calibrated for ("" = any)
    calibration: str      # how and when
    run_conditions: str   # this run's set-up

    @property
    def applies(self) -> bool:
        return not self.conditions or self.conditions == self.run_conditions

    @property
    def unit(self) -> str:
        return ceiling_unit(self.conditions)

    def statement(self) -> str:
        """The one sentence every result of the run states about the tester's ceiling."""
        text = f"tester ceiling {self.fps:,} {self.unit}"
        details = "; ".join(part for part in (self.conditions, self.calibration and
                                              f"calibrated by {self.calibration}") if part)
        if details:
            text += f" ({details})"
        if not self.applies:
            text += f"; not applied: this run's set-up is {self.run_conditions}"
        return text

    def to_dict(self) -> dict:
        return {"fps": self.fps, "unit": self.unit, "for": self.conditions, "calibration": self.calibration,
                "applies": self.applies, "statement": self.statement()}


def calibrated_ceiling(config) -> CalibratedCeiling | None:
    """The configured tester ceiling (tester.ceiling), or None when there is none."""
    tester = config.tester
    if not tester.ceiling:
        return None
    return CalibratedCeiling(tester.ceiling, tester.ceiling_for, tester.ceiling_calibration,
                             ceiling_conditions(config))


def ceiling_setting(config) -> dict | None:
    """What every result of a run records about the tester's calibrated ceiling (its summary's
    settings.tester_ceiling; the console and the report print its statement)."""
    ceiling = calibrated_ceiling(config)
    return ceiling.to_dict() if ceiling is not None else None


def search_range_top(config, max_rate: int) -> tuple[int, int | None]:
    """A throughput search's upper end: `max_rate`, lowered to the tester's calibrated ceiling
    when one applies to this run; and that ceiling when it lowered the end (else None)."""
    ceiling = calibrated_ceiling(config)
    if ceiling is None or not ceiling.applies or ceiling.fps >= max_rate:
        return max_rate, None
    return ceiling.fps, ceiling.fps


@dataclass
class SearchResult:
    throughput: int            # highest rate measured as passing; 0 when no trial passed
    found: bool                # whether any trial passed
    # The search ended against the tester, not the DUT: the lowest rate above the result that
    # did not pass was one the tester could not send at (so the result is a lower bound).
    tester_limited: bool
    steps: list[TrialResult]
    loss_tolerance: float = 0.0
    complete: bool = True
    tester_ceiling: int | None = None   # lowest rate the tester could not keep in this run

    @classmethod
    def from_steps(cls, steps: list[TrialResult], loss_tolerance: float,
                   complete: bool = True, ceiling: int | None = None,
                   calibrated: int | None = None) -> "SearchResult":
        """ceiling: the tester's ceiling from earlier repetitions of this run (a search that
        started below it never measured it, but was bounded by it all the same).
        calibrated: the calibrated tester ceiling that capped the search (search_range_top):
        a pass at it is the tester's limit, not the DUT's."""
        passing = [s.rate for s in steps if s.passes(loss_tolerance)]
        throughput = max(passing, default=0)
        # What stopped the search from going higher: the lowest failure above the result.
        # The tester's ceiling (this run's, with the earlier repetitions') bounds it too: a
        # sender that met its capacity in a trial the DUT also lost frames in bounds the search
        # at its pace, below that trial's rate.
        unreachable = tester_ceiling(steps, ceiling, calibrated)
        above = [(s.rate, tester_bound(s)) for s in steps
                 if s.rate > throughput and not s.passes(loss_tolerance)]
        if unreachable is not None and unreachable > throughput:
            above.append((unreachable, True))
        bound = min(above, key=lambda pair: (pair[0], not pair[1]), default=None)
        at_calibrated = calibrated is not None and bool(passing) and throughput >= calibrated
        return cls(throughput=throughput, found=bool(passing),
                   tester_limited=at_calibrated or (bound is not None and bound[1]), steps=steps,
                   loss_tolerance=loss_tolerance, complete=complete, tester_ceiling=unreachable)

    def to_dict(self) -> dict:
        return {"throughput": self.throughput, "found": self.found,
                "tester_limited": self.tester_limited, "tester_ceiling": self.tester_ceiling,
                "complete": self.complete,
                "steps": [{**s.to_dict(), "passed": s.passes(self.loss_tolerance)}
                          for s in self.steps]}


def binary_search(run_trial: RunTrial, lo: int, hi: int, error: int, loss_tolerance: float = 0.0,
                  *, steps: list | None = None, notify: Notify | None = None,
                  ceiling: int | None = None, calibrated: int | None = None) -> SearchResult:
    """RFC 2544 throughput: the highest rate in [lo, hi] at which a trial passes.

    The first trial is at `hi` itself: when the DUT forwards at the medium's maximum rate (the
    usual default for hi), one trial settles it. (siitperf starts with the midpoint instead.)
    Then, on integers: mid = (lo + hi) // 2; a pass sets lo = mid, a failure hi = mid, until
    hi - lo <= error. An invalid trial (the tester could not keep the rate) is a failure; the
    result's `tester_limited` then says the search was bounded by the tester.

    ceiling: a rate the tester has already shown in this run that it cannot send at (an
    earlier repetition's invalid trial). A search never spends trials at or above it: `hi`
    becomes the ceiling, counted as failed without being measured again. Likewise within the
    search: after a trial the tester could not send at its rate, the next trials stay below
    the pace it did send at (unreachable_from), instead of halving from far above it.
    calibrated: the tester's calibrated ceiling that capped `hi` (search_range_top), below
    which a shortfall needs more evidence (unreachable_from).

    The result is the highest rate *measured* as passing (never an untested midpoint; `lo`
    itself is not measured), or 0 with found=False when no trial passed. On a DUT that passes
    exactly the rates <= L (lo <= L < hi) it lies in (L - error, L].
    """
    if error < 1:
        raise ValueError(f"error = {error}: must be >= 1 (integer rates)")
    if not 0 <= lo < hi:
        raise ValueError(f"search range [{lo}, {hi}]: must have 0 <= lo < hi")
    steps = [] if steps is None else steps
    known_unreachable = ceiling is not None and ceiling <= hi
    if known_unreachable:
        hi = max(ceiling, lo)
    else:
        first = measure_step(run_trial, hi, steps, notify, lo=lo, hi=hi)
        if first.passes(loss_tolerance):
            return SearchResult.from_steps(steps, loss_tolerance, ceiling=ceiling,
                                           calibrated=calibrated)
        hi = max(lo, min(hi, unreachable_from(first, calibrated) or hi))
    while hi - lo > error:
        mid = (lo + hi) // 2
        result = measure_step(run_trial, mid, steps, notify, lo=lo, hi=hi)
        if result.passes(loss_tolerance):
            lo = mid
        else:
            # A trial the tester could not send at its rate also says how fast it did send:
            # no trial at or above that pace can be valid, so the search continues below it.
            hi = max(lo, min(mid, unreachable_from(result, calibrated) or mid))
    return SearchResult.from_steps(steps, loss_tolerance, ceiling=ceiling, calibrated=calibrated)


# --------------------------------------------------------------------------------------------
# Frame loss rate (RFC 2544 §26.3)
# --------------------------------------------------------------------------------------------


def scan_rates(max_rate: int, start_pct: float, step_pct: float) -> Iterable[tuple[int, float]]:
    """(rate, percent of max_rate) for start, start - step, ... while the rate is positive.
    Percentages are computed exactly (no accumulated float error): 100, 90, ..., 10."""
    start, step = Fraction(str(start_pct)), Fraction(str(step_pct))
    k = 0
    while (percent := start - k * step) > 0:
        rate = math.floor(max_rate * percent / 100)
        if rate <= 0:
            return
        yield rate, float(percent)
        k += 1


def frame_loss_scan(run_trial: RunTrial, max_rate: int, start_pct: float = 100.0,
                    step_pct: float = 10.0, rates: list[int] | None = None, *,
                    steps: list | None = None, notify: Notify | None = None) -> list[TrialResult]:
    """RFC 2544 frame loss rate: trials from start_pct % of max_rate down in steps of step_pct %
    of max_rate (the RFC's first trial is at 100 %, steps at most 10 %), stopping right after
    the second consecutive trial without loss (an invalid trial is not one). With an explicit
    `rates` list every rate in it is measured, highest first, with no stop rule.
    Returns the trials; FLR per direction is each direction's loss_ratio.
    """
    steps = [] if steps is None else steps
    if rates:
        for rate in sorted(set(rates), reverse=True):
            measure_step(run_trial, rate, steps, notify, percent=100 * rate / max_rate)
        return steps
    zero_loss_in_a_row = 0
    for rate, percent in scan_rates(max_rate, start_pct, step_pct):
        result = measure_step(run_trial, rate, steps, notify, percent=percent)
        zero_loss_in_a_row = zero_loss_in_a_row + 1 if result.passes(0.0) else 0
        if zero_loss_in_a_row == 2:
            break
    return steps


# --------------------------------------------------------------------------------------------
# Repetitions and summaries (RFC 8219 §12: median, 1st and 99th percentiles)
# --------------------------------------------------------------------------------------------

T = TypeVar("T")


def repeat(count: int, run_once: Callable[[int], T], results: list | None = None) -> list[T]:
    """Run a procedure `count` times (run_once(repetition index)); each result is appended to
    `results` as it completes, so an interruption keeps the finished repetitions."""
    results = [] if results is None else results
    for index in range(count):
        results.append(run_once(index))
    return results


def summarize_throughput(searches: list[SearchResult], calibrated: int | None = None,
                         configured_top: int | None = None, medium_max: int | None = None,
                         middle_limit: str | None = None, rate_unit: str = "frames/s") -> dict:
    """Statistics of the throughput over complete searches (fps per direction). calibrated:
    the calibrated tester ceiling that capped the searches (search_range_top). configured_top:
    throughput.max_rate when it, below the medium's maximum `medium_max`, was the searches'
    upper end: a search that passed there measured the setting, not the DUT. middle_limit: the
    medium's maximum as a dual DUT's middle link sets it (DirectionPlan.describe_limit), when
    it does: a search that passed there measured that link."""
    values = [s.throughput for s in searches if s.complete]
    failures: dict[str, int] = {}  # trials each direction failed: which one limits the DUT
    for search in searches:
        for step in search.steps:
            failing = step.failing_directions(search.loss_tolerance)
            for name in step.directions:
                failures[name] = failures.get(name, 0) + (name in failing)
    ceiling = min((s.tester_ceiling for s in searches if s.tester_ceiling is not None),
                  default=None)
    limited = mostly_tester_limited([s.tester_limited for s in searches if s.complete])
    at_calibrated = calibrated is not None and any(
        s.throughput >= calibrated for s in searches if s.complete)
    summary = {"unit": "fps", **summarize(values),
               "tester_limited": limited, "tester_ceiling": ceiling,
               "tester_limited_repetitions": sum(s.tester_limited for s in searches
                                                 if s.complete),
               **lower_bound([st for s in searches for st in s.steps], limited,
                             calibrated if at_calibrated else None, rate_unit),
               "directions": {name: {"failed_trials": count}
                              for name, count in failures.items()}}
    if calibrated is not None and not limited and values:
        summary |= dut_limited(summary["median"], calibrated, ceiling, rate_unit)
    bounded = summary["tester_limited_repetitions"]
    if bounded and not limited:
        summary["partly_tester_limited"] = (
            f"{bounded} of {len(values)} repetitions ended against the tester (a trial it "
            "could not keep in any attempt bounded the search): their values are lower "
            "bounds; the median is the DUT's, most repetitions were not bounded")
    return summary | range_limited(values, configured_top, medium_max, rate_unit) | \
        middle_link_limited(values, medium_max, middle_limit, rate_unit)


def configured_top(config, hi: int, medium_max: int, calibrated: int | None) -> int | None:
    """The search's upper end `hi` when it is the setting throughput.max_rate, below the
    medium's maximum and not lowered to the calibrated ceiling: a pass there measured the
    setting, not the DUT (range_limited); else None."""
    settings = config.throughput
    return hi if settings.max_rate and hi < medium_max and calibrated is None else None


def range_limited(values, top: int | None, medium_max: int | None,
                  rate_unit: str = "frames/s") -> dict:
    """{"range_limited": one sentence} when a repetition passed at the configured top
    (configured_top), for the summary, the console and the report; {} otherwise."""
    if top is None or not any(v >= top for v in values):
        return {}
    return {"range_limited": (
        f"a lower bound set by throughput.max_rate = {top:,} {rate_unit}, not a property of the "
        "DUT: the DUT passed the highest rate the search tried, so its throughput may be "
        f"higher; raise throughput.max_rate (the medium allows {medium_max:,}) to find it")}


def middle_link_limited(values, medium_max: int | None, limit: str | None,
                        rate_unit: str = "frames/s") -> dict:
    """{"middle_link_limited": one sentence} when a repetition passed at the medium's maximum
    `medium_max` and a dual DUT's middle link sets it (`limit` says how), for the summary, the
    console and the report; {} otherwise."""
    if limit is None or medium_max is None or not any(v >= medium_max for v in values):
        return {}
    return {"middle_link_limited": (
        f"a lower bound set by the link between the dual DUT's CE and BR, not by the DUT: it passed "
        f"at {medium_max:,} {rate_unit}, {limit}, the most that link carries; over a faster link "
        "(dut.middle_link_speed states its speed) its throughput may be higher")}


def mostly_tester_limited(flags: list[bool]) -> bool:
    """Whether a summary of repetitions is tester-limited: each repetition is judged by its own
    search, and the median is a bound set by the tester when at least half of them are (one
    late trial in one of ten searches does not make the others' result the tester's)."""
    return bool(flags) and 2 * sum(flags) >= len(flags)


def lower_bound(steps, limited: bool, calibrated: int | None = None,
                rate_unit: str = "frames/s") -> dict:
    """{"lower_bound": one sentence} when the result is tester-limited, for the summary, the
    console and the report; {} otherwise. calibrated: the calibrated tester ceiling, when a
    search passed at it."""
    rates = [s.rate for s in steps if _rate_not_kept(s)]
    if not limited or not (rates or calibrated):
        return {}
    ceiling = tester_ceiling(steps)
    # A tester whose pace varies (a stateful phase 2 sending from its state table, a busy CPU)
    # may have kept a rate above the pace it showed at a failing step: then only the rate it
    # could not keep is a true statement.
    kept = max((s.rate for s in steps if not _rate_not_kept(s)), default=0)
    if calibrated is not None:
        shown = (f"cannot send faster than its calibrated ceiling of {calibrated:,} {rate_unit}, "
                 "and the DUT passed at it")
    elif ceiling is not None and ceiling >= kept:
        shown = f"could not send faster than {ceiling:,} {rate_unit} in this run (invalid trials)"
    else:
        above = [r for r in rates if r > kept]
        shown = f"could not keep {min(above or rates):,} {rate_unit} in this run (invalid trials)"
    return {"lower_bound": (
        f"a lower bound set by the tester, not a property of the DUT: the tester {shown}, so "
        "the DUT's throughput may be higher; measure with a faster tester set-up (more cores, "
        "another port type) to find it")}


def dut_limited(throughput: float, calibrated: int, shown: int | None = None,
                rate_unit: str = "frames/s") -> dict:
    """{"dut_limited": one sentence}: a result the DUT set, below the tester's calibrated
    ceiling, with the tester's margin over it. shown: a lower rate the tester could not keep
    in this run (its ceiling is then that one)."""
    if throughput <= 0:
        return {}
    if shown is not None and shown < calibrated:
        ceiling, which = shown, (f"ceiling in this run of {shown:,} {rate_unit} (the rate it could "
                                 f"not send faster than; calibrated {calibrated:,})")
    else:
        ceiling, which = calibrated, f"calibrated ceiling of {calibrated:,} {rate_unit}"
    return {"dut_limited": (
        f"set by the DUT, not the tester: {throughput:,.0f} {rate_unit} is "
        f"{100 * throughput / ceiling:.0f} % of the tester's {which} (a tester margin of "
        f"{ceiling / throughput:.2f}x)")}


def summarize_frame_loss(scans: list[list[TrialResult]], max_rate: int) -> dict:
    """Loss-ratio statistics per rate over the repetitions that measured it (invalid trials
    are excluded: they are tester failures, not DUT results), overall (worst direction) and per
    direction. The top-level statistics are those of the first, highest rate (the RFC's 100 %
    point by default), so a frame-loss summary has the same top-level shape as any other."""
    by_rate: dict[int, list[TrialResult]] = {}
    for scan in scans:
        for trial in scan:
            by_rate.setdefault(trial.rate, []).append(trial)
    rates = []
    for rate in sorted(by_rate, reverse=True):
        trials = by_rate[rate]
        valid = [t for t in trials if t.valid and t.loss_ratio is not None]
        names = sorted({name for t in valid for name in t.directions})
        rates.append({
            "rate": rate, "percent": 100 * rate / max_rate if max_rate else None,
            **summarize([t.loss_ratio for t in valid]),
            "invalid": len(trials) - len(valid),
            "directions": {name: summarize([t.directions[name].loss_ratio for t in valid
                                            if name in t.directions]) for name in names},
        })
    top = {key: value for key, value in rates[0].items()
           if key not in ("rate", "percent", "invalid")} if rates else summarize([])
    return {"unit": "ratio", "directions": {}, **top, "rates": rates}


def summarize_trials(trials: list[TrialResult]) -> dict:
    """Loss-ratio statistics of repeated single trials (the `trial` procedure)."""
    valid = [t for t in trials if t.valid and t.loss_ratio is not None]
    names = sorted({name for t in valid for name in t.directions})
    return {"unit": "ratio", **summarize([t.loss_ratio for t in valid]),
            "invalid": len(trials) - len(valid),
            "directions": {name: summarize([t.directions[name].loss_ratio for t in valid
                                               if name in t.directions]) for name in names}}
