# SPDX-License-Identifier: BSD-3-Clause
"""RFC 2544 §26.4 back-to-back frames, as RFC 9004 updates it (docs/backtoback.md).

Each trial is a burst: every active direction sends exactly N frames at the burst rate R
(back_to_back.rate, default the medium's maximum frame rate: RFC 2544's minimum inter-frame
gap), within N / R seconds. A binary search on N (RFC 9004 §6.2: TST009's binary search with
burst length in place of load) finds the longest burst the DUT forwards without losing a frame;
each repetition is an independent search (RFC 2544 §26.4: at least 50, back_to_back.repeat).

A burst the tester could not send at R (the engine's rule: sending took longer than
N / R x (1 + 1e-5), or fewer than N frames left) says nothing about the DUT: it is sent again
(back_to_back.retries); if it stays invalid it bounds the search as a failure would, and the
result is then a lower bound set by the tester (`tester_limited`), as for throughput.

The reporting items (RFC 9004 §6.4, §7): the longest burst of each search, their average
(the benchmark), minimum, maximum and standard deviation, the bursts' measured sending rate
((sent frames - 1) / the engine's send time: measured, never assumed), and the DUT's buffer time:

    implied buffer time   = average / R_in
    corrected buffer time = implied - implied x throughput / R_in

RFC 9004 writes R_in as the Max Theoretical Frame Rate, the rate the burst arrives at; here it is
the bursts' measured sending rate, which equals it when the tester sends at the medium's
maximum, and is the rate the frames really arrived at otherwise (a software tester's own pace).
The throughput comes from back_to_back.throughput or a throughput result directory
(back_to_back.throughput_from, `--throughput-from`); without one only the implied buffer time
is reported.
"""

import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from ..engine.protocol import TrialResult, trial_from_record
from ..measure.session import is_step_record
from ..measure.stateful import RATE_SLACK, send_seconds
from ..measure.store import SUMMARY_FILE
from ..util.errors import ConfigError
from ..util.files import read_json
from ..util.stats import summarize
from ..measure.measurer import TrialSpec
from .base import KeyOption, Procedure, ProcedureSpec

# The engine's largest frame count of a flow (its trial parser: frames <= 2^40).
MAX_BURST = 1 << 40
# Throughput results are comparable only with the same traffic (RFC 9004 §5: unidirectional or
# bidirectional, number of flows; and the frame size the buffer time is for).
MATCHING_KEYS = ("traffic.frame_size", "traffic.imix", "traffic.direction", "traffic.mix_n",
                 "traffic.mix_m", "addresses.left", "addresses.right", "ports.forward_src",
                 "ports.reverse_src", "left.vlan", "left.vlan_outer", "right.vlan",
                 "right.vlan_outer")


# --------------------------------------------------------------------------------------------
# RFC 9004 §6.4: the buffer time calculation
# --------------------------------------------------------------------------------------------


def implied_buffer_time(average_frames: float, ingress_rate: float) -> float:
    """RFC 9004 §6.4: the average longest burst in units of time, s."""
    return average_frames / ingress_rate


def corrected_buffer_time(implied: float, throughput: float, ingress_rate: float) -> float:
    """RFC 9004 §6.4: the implied buffer time less the frames the DUT forwarded while the burst
    came in (at its throughput), s."""
    return implied - implied * throughput / ingress_rate


def buffer_times(average: float | None, ingress_rate: float | None,
                 throughput: float | None, max_rate: float | None = None) -> dict:
    """{implied_seconds, corrected_seconds, note}: None where the inputs do not allow it.
    Computed at the bursts' rate R, what the DUT was offered: RFC 9004 §6.4's formulas at the
    Max Theoretical Frame Rate `max_rate` when R is that rate. When R is below it, the figure is
    RFC 9004 §7's "actual buffer time" at R, labelled so (`label`), and §6.4's Corrected DUT
    Buffer Time is given as well (`rfc9004_corrected_seconds`): by §7, actual = corrected x
    max_rate / R."""
    found = _buffer_times_at(average, ingress_rate, throughput)
    if (found["corrected_seconds"] is None or not max_rate or not ingress_rate
            or ingress_rate >= max_rate * (1 - 1e-6)):
        return found
    return found | {
        "rfc9004_corrected_seconds": found["corrected_seconds"] * ingress_rate / max_rate,
        "label": (f"actual buffer time at {ingress_rate:,.0f} frames/s (RFC 9004 §7: the "
                  f"bursts' rate is below the Max Theoretical Frame Rate, {max_rate:,.0f} "
                  "frames/s); RFC 9004 §6.4's Corrected DUT Buffer Time, at that maximum: "
                  f"{found['corrected_seconds'] * ingress_rate / max_rate:.6g} s")}


def _buffer_times_at(average: float | None, ingress_rate: float | None,
                     throughput: float | None) -> dict:
    if average is None or not ingress_rate:
        return {"implied_seconds": None, "corrected_seconds": None,
                "note": "no burst passed, or its sending rate is unknown"}
    implied = implied_buffer_time(average, ingress_rate)
    if not throughput:
        return {"implied_seconds": implied, "corrected_seconds": None,
                "note": "no throughput given (back_to_back.throughput or --throughput-from): "
                        "no corrected buffer time"}
    if throughput >= ingress_rate:
        # RFC 9004 §5, §6.1: the DUT forwards frames as fast as they arrive; the burst length
        # is limited by the search, not by a buffer.
        return {"implied_seconds": implied, "corrected_seconds": None,
                "note": f"the throughput ({throughput:,.0f} fps) is not below the bursts' rate "
                        f"({ingress_rate:,.0f} fps): no frame waits in a buffer, the result is "
                        "not a buffer measurement (RFC 9004 §6.1)"}
    return {"implied_seconds": implied,
            "corrected_seconds": corrected_buffer_time(implied, throughput, ingress_rate),
            "note": None}


# --------------------------------------------------------------------------------------------
# One burst, and the search on the burst length
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BurstStep:
    """One burst of `frames` frames per direction at trial.rate, with the engine's send time
    of each direction (its reply's `send_time`, s)."""
    frames: int
    trial: TrialResult
    send_time: dict

    @property
    def rate(self) -> int:
        return self.trial.rate

    def _shortfall(self) -> str | None:
        """Why the tester did not send this burst as asked, or None. The engine checks its
        send time against the request's duration, which is its shortest trial (1 ms) for a
        shorter burst; this keeps the check at N / R itself."""
        short = {name: d.sent for name, d in self.trial.directions.items() if d.sent != self.frames}
        if short:
            return ("tester could not keep the rate: sent " + ", ".join(
                f"{name} {sent:,}" for name, sent in short.items())
                + f" of {self.frames:,} frames")
        due = self.frames / self.rate
        late = {name: t for name, t in self.send_time.items() if t is not None
                and t > due * RATE_SLACK}
        if late:
            return ("tester could not keep the rate: sent the burst in " + ", ".join(
                f"{name} {t:.6f} s" for name, t in late.items())
                + f", more than N/R = {due:.6f} s x {RATE_SLACK:g}")
        return None

    @property
    def valid(self) -> bool:
        return self.trial.valid and self._shortfall() is None

    @property
    def invalid_reason(self) -> str | None:
        return self.trial.invalid_reason if not self.trial.valid else self._shortfall()

    def passes(self) -> bool:
        """No frame of the burst lost in any direction (RFC 2544 §26.4), from a valid burst."""
        return self.valid and self.trial.passes(0.0)

    @property
    def sending_rate(self) -> float | None:
        """The rate the tester really sent the burst at, frames/s, in the slower direction:
        the engine's send time runs from the first frame (due at the start) to the last, so
        N frames span N - 1 frame intervals: (sent - 1) / send time (sent / send time would
        overstate a 10-frame burst by 11 %). None when not measured (one frame)."""
        rates = [(d.sent - 1) / t for name, d in self.trial.directions.items()
                 if (t := self.send_time.get(name)) and d.sent > 1]
        return min(rates) if rates and len(rates) == len(self.trial.directions) else None

    def record(self) -> dict:
        """What the trial's record keeps, so that the step can be rebuilt from it."""
        return {"frames": self.frames, "send_time": dict(self.send_time),
                "sending_rate": self.sending_rate, "valid": self.valid,
                "invalid_reason": self.invalid_reason, "passed": self.passes()}

    def to_dict(self) -> dict:
        return {**self.trial.to_dict(), "frames": self.frames,
                "sending_rate": self.sending_rate, "valid": self.valid,
                "invalid_reason": self.invalid_reason, "passed": self.passes()}

    @classmethod
    def from_trial(cls, frames: int, trial: TrialResult) -> "BurstStep":
        return cls(frames, trial, {name: send_seconds(trial, name) for name in trial.directions})


def burst_search(run_burst, longest: int, step: int, retries: int, *, steps: list,
                 notify=None) -> None:
    """The longest burst in [1, longest] frames that passes: the first burst at `longest`
    (when it passes, the result is the search's upper limit); then mid = (lo + hi) // 2, a pass
    sets lo, a loss hi, until hi - lo <= step (lo: the longest burst measured to pass, 0 before
    any). A burst the tester could not send is sent again up to `retries` times; when it stays
    invalid it counts as a failure (the result is then bounded by the tester, not the DUT).
    run_burst(frames) -> BurstStep; every burst is appended to `steps` as it returns."""
    lo, hi, frames = 0, longest, longest
    while True:
        for attempt in range(retries + 1):
            if notify is not None:
                notify({"frames": frames, "lo": lo, "hi": hi,
                        **({"attempt": attempt + 1} if attempt else {})})
            burst = run_burst(frames)
            steps.append(burst)
            if burst.valid:
                break
        if burst.passes():
            lo = frames
            if frames == longest:
                return
        else:
            hi = frames
        if hi - lo <= step:
            return
        frames = (lo + hi) // 2


@dataclass(frozen=True)
class BurstResult:
    """A repetition's result, from its steps alone (the same when read back by --resume)."""
    longest: int                 # frames of the longest burst that passed; 0 when none did
    found: bool
    tester_limited: bool         # the shortest burst above it that did not pass was never
                                 # sent validly: the tester, not the DUT, bounded the result
    at_limit: bool               # the longest burst is the search's upper limit
    sending_rate: float | None   # measured rate of the longest passing burst
    steps: list

    @classmethod
    def from_steps(cls, steps: list[BurstStep], limit: int) -> "BurstResult":
        passing = [s for s in steps if s.passes()]
        longest = max((s.frames for s in passing), default=0)
        above: dict[int, list[BurstStep]] = {}
        for s in steps:
            if s.frames > longest and not s.passes():
                above.setdefault(s.frames, []).append(s)
        bound = min(above, default=None)
        best = [s for s in passing if s.frames == longest]
        return cls(longest=longest, found=bool(passing),
                   tester_limited=bound is not None and not any(s.valid for s in above[bound]),
                   at_limit=bool(passing) and longest >= limit,
                   sending_rate=best[-1].sending_rate if best else None, steps=steps)

    def to_dict(self) -> dict:
        return {"longest_burst": self.longest, "found": self.found,
                "tester_limited": self.tester_limited, "at_limit": self.at_limit,
                "sending_rate": self.sending_rate,
                "steps": [s.to_dict() for s in self.steps]}


# --------------------------------------------------------------------------------------------
# The procedure
# --------------------------------------------------------------------------------------------


def throughput_from(directory: str, config) -> int:
    """The throughput (median) of a throughput result directory measured with the same traffic
    as this back-to-back test (RFC 9004 §5); ConfigError naming the key otherwise."""
    what = f"back_to_back.throughput_from = {directory!r}"
    summary = read_json(Path(directory) / SUMMARY_FILE)
    if summary is None:
        raise ConfigError(f"{what}: no readable {SUMMARY_FILE} there")
    if summary.get("procedure") != "throughput":
        raise ConfigError(f"{what}: holds a {summary.get('procedure')!r} result, not a "
                          "throughput measurement")
    rate = summary.get("median")
    if not isinstance(rate, (int, float)) or rate < 1:
        raise ConfigError(f"{what}: no throughput was found there (median {rate!r})")
    # A lower bound is not the DUT's throughput: the corrected buffer time would subtract too
    # few forwarded frames (RFC 9004 §6.4 needs the Throughput Benchmark itself).
    for bound in ("lower_bound", "range_limited"):
        if summary.get(bound):
            raise ConfigError(f"{what}: its throughput is {summary[bound]}; RFC 9004 §6.4 "
                              "corrects by the DUT's measured throughput, not a bound")
    measured = summary.get("config") or {}
    tolerance = (measured.get("throughput") or {}).get("loss_tolerance") or 0
    goals = summary.get("goals") or []
    if tolerance or (goals and goals[0].get("loss_ratio")):
        loss = tolerance or goals[0]["loss_ratio"]
        raise ConfigError(f"{what}: measured with a loss tolerance of {loss:g}; RFC 9004 §5: "
                          "the throughput MUST be taken under zero-loss conditions")
    for dotted in MATCHING_KEYS:
        section, key = dotted.split(".")
        theirs = (measured.get(section) or {}).get(key)
        ours = config.value(dotted)
        if theirs is not None and theirs != ours:
            raise ConfigError(f"{what}: measured with {dotted} = {theirs!r}, "
                              f"this test has {ours!r}; RFC 9004 §5: the throughput must be "
                              "measured with the same traffic (frame size, directions, flows)")
    return int(rate)


class BackToBack(Procedure):
    name = "back-to-back"
    loss_tolerance = 0.0     # RFC 2544 §26.4: the longest burst without the loss of any frame

    def __init__(self, config, plan, rate=None):
        super().__init__(config, plan)
        if config.traffic.imix:
            # RFC 9004 §3 measures per frame size: its buffer time and the throughput it is
            # corrected by are of one size, and a buffer holds fewer large frames than small.
            raise ConfigError(f'traffic.imix = "{config.traffic.imix}": back-to-back frames are '
                              'measured per frame size (RFC 2544 §26.4, RFC 9004), so it must be '
                              '"" here; set traffic.frame_size (a campaign axis over sizes)')
        settings = config.back_to_back
        if rate is not None:
            self.rate, where = rate, "--rate"
        elif settings.rate:
            self.rate, where = settings.rate, "back_to_back.rate"
        else:
            self.rate, where = plan.max_rate, "the medium's maximum"
        plan.check_rate(self.rate, where)
        self.max_time = settings.max_time
        self.longest = math.floor(self.max_time * self.rate)
        if not 1 <= self.longest <= MAX_BURST:
            raise ConfigError(f"back_to_back.max_time = {self.max_time:g}: the longest burst, "
                              f"max_time x rate = {self.max_time:g} x {self.rate:,}, must be "
                              f"1..{MAX_BURST:,} frames")
        self.error = settings.step        # for the live view's estimate of trials left
        self.retries = settings.retries
        self.repeat = settings.repeat
        if settings.throughput_from:
            self.throughput = throughput_from(settings.throughput_from, config)
            self.throughput_source = (f"the median of the throughput result in "
                                      f"{settings.throughput_from}")
        elif settings.throughput:
            self.throughput = settings.throughput
            self.throughput_source = "back_to_back.throughput"
        else:
            self.throughput, self.throughput_source = None, None

    def run(self, session, steps):
        def run_burst(frames: int) -> BurstStep:
            # Bursts have their own retries (back_to_back.retries, in burst_search).
            result = session.run_trial(
                TrialSpec(self.rate, frames=frames), retakes=0,
                annotate=lambda trial: {"burst": BurstStep.from_trial(frames, trial).record()})
            return BurstStep.from_trial(frames, result)

        def notify(context: dict) -> None:
            session.notify({"rate": self.rate, **context})

        burst_search(run_burst, self.longest, self.error, self.retries, steps=steps,
                     notify=notify)

    def steps_from_records(self, records):
        return [BurstStep(r["burst"]["frames"], trial_from_record(r), r["burst"]["send_time"])
                for r in records if is_step_record(r) and "burst" in r]

    def results(self, repetitions) -> list[BurstResult]:
        return [BurstResult.from_steps(r.steps, self.longest) for r in repetitions]

    def summarize(self, repetitions):
        results = self.results(repetitions)
        done = [res for res, r in zip(results, repetitions) if r.complete]
        values = [res.longest for res in done]
        summary = {"unit": "frames", **summarize(values),
                   "average": statistics.fmean(values) if values else None,
                   "stdev": statistics.stdev(values) if len(values) > 1 else None}
        rates = [res.sending_rate for res in done if res.sending_rate is not None]
        ingress = statistics.fmean(rates) if rates else None
        valid = [s.sending_rate for res in results for s in res.steps
                 if s.valid and s.sending_rate is not None]
        summary["sending_rate"] = {
            "requested": self.rate, "medium_maximum": self.plan.max_rate,
            # the rate the buffer time is computed with: the longest bursts' measured rate
            "longest_bursts": ingress,
            "valid_bursts": summarize(valid)}
        summary["buffer"] = {"ingress_rate": ingress, "throughput": self.throughput,
                             "throughput_source": self.throughput_source,
                             **buffer_times(summary["average"], ingress, self.throughput,
                                            self.plan.max_rate)}
        summary["tester_limited"] = any(res.tester_limited for res in done)
        summary["at_limit"] = any(res.at_limit for res in done)
        failures: dict[str, int] = {}   # bursts each direction lost frames of
        for res in results:
            for s in res.steps:
                for name in s.trial.directions:
                    failures[name] = failures.get(name, 0) + (
                        s.valid and name in s.trial.failing_directions(0.0))
        summary["directions"] = {name: {"failed_bursts": n} for name, n in failures.items()}
        summary["repetitions"] = [
            {"repetition": r.number, "complete": r.complete, **res.to_dict(),
             # each search's own buffer times, with its longest burst's measured rate
             "buffer": {key: value for key, value in buffer_times(
                 res.longest if res.found else None, res.sending_rate,
                 self.throughput).items() if key != "note"}}
            for r, res in zip(repetitions, results)]
        return summary

    def csv_rows(self, repetitions):
        return [{"repetition": r.number, "longest_burst_frames": res.longest,
                 "found": res.found, "tester_limited": res.tester_limited,
                 "at_limit": res.at_limit, "sending_rate_fps": res.sending_rate,
                 "complete": r.complete, "trials": len(r.steps)}
                for r, res in zip(repetitions, self.results(repetitions))]

    def settings(self):
        return {"rate": self.rate, "max_time": self.max_time, "longest_burst": self.longest,
                "step": self.error, "retries": self.retries, "repeat": self.repeat,
                # a burst lasts frames / rate, at most max_time: the trial's sending time
                "duration": self.max_time,
                "search": "binary search on the burst length (RFC 9004 §6.2, TST009 binary "
                          "search): first the longest burst, then halving until upper - lower "
                          "<= step",
                "buffer_time": "RFC 9004 §6.4 with the bursts' measured sending rate as the "
                               "rate frames enter the DUT (the Max Theoretical Frame Rate when "
                               "the tester sends at the medium's maximum)",
                "throughput": self.throughput, "throughput_source": self.throughput_source}

    def value(self, repetition):
        if not repetition.complete:
            return None
        return BurstResult.from_steps(repetition.steps, self.longest).longest


SPEC = ProcedureSpec(
    "back-to-back", "RFC 2544 §26.4 / RFC 9004 back-to-back frames and DUT buffer time",
    unit="frames", make=BackToBack, report="bursts", rate_option="optional",
    repeat_key="back_to_back.repeat",
    key_options=(KeyOption("--throughput-from", "back_to_back.throughput_from", "DIR",
                           "a throughput result measured with the same traffic: its median is "
                           "the throughput of the corrected buffer time (RFC 9004 §6.4)"),))
