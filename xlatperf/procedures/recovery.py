# SPDX-License-Identifier: BSD-3-Clause
"""RFC 2544 §26.5 system recovery and §26.6 reset as RFC 6201 updates it (docs/recovery.md).

Both measure how long the DUT was out of operation from the frames it lost, in one trial per
repetition at a rate taken from a throughput result (--rate, --rate-from DIR, or chained to the
throughput of a campaign point), with the engine's loss periods (docs/protocol.md "Loss
periods"); the arithmetic is in lossperiods.py.

* `recovery`: every direction sends at the overload rate, min(110 % of the throughput, the
  medium's maximum), for recovery.overload s; at Timestamp A = recovery.overload s the rate
  drops to half of it (the engine's rate step) for recovery.window s. Timestamp B is the send
  time of the last lost frame sent at or after A; the recovery time is B − A.
* `reset`: every direction sends at the throughput rate for trial.duration s while the DUT's
  during_trial hook resets it dut.during_trial_at s into the trial; the reset time comes from
  the longest loss period by RFC 6201's timestamp method (its primary value here) and its
  frame-loss method.

The summaries are computed from the recorded trials alone (each record keeps the loss
periods), so --resume gives exactly the uninterrupted result.
"""

import statistics

from ..frames.kinds import trial_frames
from ..util.errors import ConfigError
from ..util.stats import summarize
from ..measure.measurer import TrialSpec
from .base import Procedure, ProcedureSpec, Repetition
from .lossperiods import LISTED, recovery, reset_time

# RFC 2544 §26.5: the overload is 110 % of the throughput (or the medium's maximum, whichever
# is lower), the reduced rate 50 % of the overload rate. As fractions, for exact integers.
OVERLOAD = (11, 10)
REDUCED = (1, 2)
TIMESTAMP_A = "the scheduled send time of the first frame at the reduced rate (the rate step)"
TIMESTAMP_B = ("the scheduled send time of the last lost frame sent at or after Timestamp A "
               "(the tester cannot know when a lost frame would have arrived)")
RESET_TIMESTAMPS = ("Timestamps A and B of RFC 2544 §26.6 are the send times of the last frame "
                    "that arrived before the longest loss period and of the first that arrived "
                    "after it (their arrival times differ by the same amount when both crossed "
                    "the DUT with the same delay)")


def overload_rates(throughput: int, max_rate: int) -> tuple[int, int]:
    """RFC 2544 §26.5: (the overload rate, the reduced rate), frames/s per direction: 110 % of
    the throughput or the medium's maximum, whichever is lower, and half of that, rounded."""
    overload = min((throughput * OVERLOAD[0] + OVERLOAD[1] // 2) // OVERLOAD[1], max_rate)
    reduced = max(1, (overload * REDUCED[0] + REDUCED[1] // 2) // REDUCED[1])
    return overload, reduced


def _fmean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _losses(trial, name: str) -> dict | None:
    """A direction's loss periods; None when the reply has none although frames were lost."""
    found = (trial.losses or {}).get(name)
    if found is None and trial.directions[name].received >= trial.directions[name].sent:
        return {"periods": 0, "lost": 0, "first": [], "longest": None}
    return found


class _LossTrials(Procedure):
    """One trial per repetition at the measured throughput, with the engine's loss periods."""
    name = ""
    summary_key = ""        # the record's and the repetition's per-direction results

    def __init__(self, config, plan, rate=None):
        super().__init__(config, plan)
        if rate is None:
            raise ConfigError(f"{self.name} needs the DUT's throughput: --rate R or --rate-from "
                              f"DIR (a throughput result of the same traffic)")
        plan.check_rate(rate, "--rate")
        self.throughput = self.trial_rate = rate   # the rate the trial starts at

    def trial(self, session):
        raise NotImplementedError

    def directions(self, trial) -> dict:
        """Each direction's result from the trial's loss periods."""
        raise NotImplementedError

    def run(self, session, steps):
        session.notify({"rate": self.trial_rate})
        steps.append(self.trial(session))

    def _annotate(self, trial) -> dict:
        return {self.summary_key: self.directions(trial)}

    def _trials(self, repetitions: list[Repetition]):
        return [(r, r.steps[0]) for r in repetitions if r.steps]

    def csv_rows(self, repetitions):
        rows = []
        for r, trial in self._trials(repetitions):
            for name, info in self.directions(trial).items():
                counts = trial.directions[name]
                rows.append({"repetition": r.number, "direction": name, "rate": trial.rate,
                             "valid": trial.valid, "sent": counts.sent,
                             "received": counts.received,
                             **{k: v for k, v in info.items()
                                if not isinstance(v, (dict, list)) and k != "note"}})
        return rows


# --------------------------------------------------------------------------------------------
# RFC 2544 §26.5: system recovery
# --------------------------------------------------------------------------------------------


class Recovery(_LossTrials):
    name = "recovery"
    summary_key = "recovery"

    def __init__(self, config, plan, rate=None):
        super().__init__(config, plan, rate)
        settings = config.recovery
        self.overload, self.window, self.repeat = settings.overload, settings.window, \
            settings.repeat
        self.overload_rate, self.reduced_rate = overload_rates(self.throughput, plan.max_rate)
        self.trial_rate = self.overload_rate
        # The medium's maximum is below 110 % of the throughput (RFC 2544: "whichever is lower")
        self.capped = self.overload_rate < overload_rates(self.throughput, 2 * self.throughput)[0]

    def trial(self, session):
        return session.run_trial(
            TrialSpec(self.overload_rate, duration=self.overload + self.window, losses=True,
                      rate_steps=({"at": self.overload, "rate": self.reduced_rate},)),
            annotate=self._annotate)

    def directions(self, trial):
        return {name: recovery(_losses(trial, name), self.overload, self.overload_rate,
                               self.reduced_rate) for name in trial.directions}

    def repetition(self, r: Repetition, trial) -> dict:
        """The repetition's result: the recovery time is the slowest direction's; `status`
        recovered | not recovered | not overloaded (no frame lost: the DUT had nothing to
        recover from) | undetermined | invalid (the tester did not keep the rate: nothing about
        the DUT)."""
        directions = self.directions(trial)
        found = list(directions.values())
        if not trial.valid:
            status = "invalid"
        elif any(d["recovered"] is False for d in found):
            status = "not recovered"
        elif any(d["overloaded"] is False for d in found):
            status = "not overloaded"
        elif all(d["recovered"] for d in found):
            status = "recovered"
        else:
            status = "undetermined"
        return {"repetition": r.number, "complete": r.complete, "status": status,
                "recovery_time": max(d["recovery_time"] for d in found)
                if status == "recovered" else None,
                "valid": trial.valid, "invalid_reason": trial.invalid_reason,
                "directions": {name: {**d, "sent": trial.directions[name].sent,
                                      "received": trial.directions[name].received,
                                      "lost": (_losses(trial, name) or {}).get("lost"),
                                      "periods": (_losses(trial, name) or {}).get("periods")}
                               for name, d in directions.items()}}

    def summarize(self, repetitions):
        reps = [self.repetition(r, trial) for r, trial in self._trials(repetitions)]
        done = [rep for rep in reps if rep["complete"]]
        values = [rep["recovery_time"] for rep in done if rep["status"] == "recovered"]
        summary = {"unit": "s", **summarize(values), "average": _fmean(values)}
        summary |= {status.replace(" ", "_"): sum(rep["status"] == status for rep in done)
                    for status in ("recovered", "not recovered", "not overloaded",
                                   "undetermined", "invalid")}
        summary["rates"] = {"throughput": self.throughput, "overload": self.overload_rate,
                            "reduced": self.reduced_rate, "medium_maximum": self.plan.max_rate,
                            "overload_is_medium_maximum": self.capped}
        names = list(dict.fromkeys(name for rep in done for name in rep["directions"]))
        summary["directions"] = {}
        for name in names:
            times = [rep["directions"][name]["recovery_time"] for rep in done
                     if rep["status"] != "invalid" and name in rep["directions"]
                     and rep["directions"][name]["recovered"]]
            summary["directions"][name] = {"recovery_time": {**summarize(times),
                                                             "average": _fmean(times)}}
        summary["repetitions"] = reps
        summary["warnings"] = self.warnings(summary)
        return summary

    def warnings(self, summary: dict) -> list[str]:
        notes = []
        if summary["not_recovered"]:
            notes.append(f"{summary['not_recovered']} repetition(s) did not recover within the "
                         f"{self.window:g} s window (recovery.window): frames were lost up to "
                         "the end of the trial; they are not in the average")
        if summary["not_overloaded"]:
            notes.append(f"{summary['not_overloaded']} repetition(s) not overloaded: the DUT "
                         f"lost no frame at {self.overload_rate:,} frames/s, so there was no "
                         "overload to recover from (is the throughput given the DUT's? is "
                         "recovery.overload long enough to fill its buffers?); no recovery time, "
                         "and they are not in the average")
        if summary["undetermined"]:
            notes.append(f"{summary['undetermined']} repetition(s) undetermined: the engine's "
                         f"loss periods (it lists the first and last {LISTED} of a trial, per "
                         "direction of one flow) do not show the last one sent at or after "
                         "Timestamp A; they are not in the average")
        if summary["invalid"]:
            notes.append(f"{summary['invalid']} repetition(s) invalid: the tester could not "
                         "keep the rate (not a DUT result)")
        if self.overload < 60:
            notes.append(f"recovery.overload = {self.overload:g} s: RFC 2544 §26.5 overloads "
                         "the DUT for at least 60 s")
        return notes

    def settings(self):
        return {"rate": self.throughput, "overload_rate": self.overload_rate,
                "reduced_rate": self.reduced_rate, "overload": self.overload,
                "window": self.window, "duration": self.overload + self.window,
                "repeat": self.repeat, "timestamp_a": TIMESTAMP_A, "timestamp_b": TIMESTAMP_B,
                "rule": "overload at min(110 % of the throughput, the medium's maximum), then "
                        "50 % of that rate from Timestamp A on (RFC 2544 §26.5); recovery time "
                        "= B − A, 0 when no frame sent at the reduced rate was lost"}

    def value(self, repetition):
        if not repetition.complete or not repetition.steps:
            return None
        return self.repetition(repetition, repetition.steps[0])["recovery_time"]


# --------------------------------------------------------------------------------------------
# RFC 2544 §26.6 / RFC 6201: reset
# --------------------------------------------------------------------------------------------


class Reset(_LossTrials):
    name = "reset"
    summary_key = "reset"

    def __init__(self, config, plan, rate=None):
        super().__init__(config, plan, rate)
        dut = config.dut
        if not dut.during_trial:
            raise ConfigError('dut.during_trial = "": set the command that resets the DUT '
                              '(RFC 6201), e.g. "ssh root@dut reboot", run '
                              'dut.during_trial_at s into each trial')
        self.duration = config.trial.duration
        self.at = dut.during_trial_at
        if self.at >= self.duration:
            raise ConfigError(f"dut.during_trial_at = {self.at:g}: must be below "
                              f"trial.duration = {self.duration:g} s, so that the reset "
                              "happens while the tester sends")
        self.repeat = config.reset.repeat
        self.type, self.description = config.reset.type, config.reset.description
        self.minimum_frame = trial_frames(config).min_frame_size()

    def trial(self, session):
        return session.run_trial(TrialSpec(self.throughput, losses=True), annotate=self._annotate)

    def directions(self, trial):
        return {name: reset_time(_losses(trial, name), trial.rate) for name in trial.directions}

    def repetition(self, r: Repetition, trial) -> dict:
        """The repetition's reset time by each method: the slowest direction's (the DUT was
        out of operation that long); `status` back | not back | no timestamp A | undetermined
        (frames lost but no loss periods listed) | invalid."""
        directions = self.directions(trial)
        found = list(directions.values())
        if not trial.valid:
            status = "invalid"
        elif not all(d["determined"] for d in found):
            status = "undetermined"
        elif not all(d["back"] for d in found):
            status = "not back"
        elif any(d["timestamp_method"] is None for d in found):
            status = "no timestamp A"
        else:
            status = "back"
        counted = status == "back"
        return {"repetition": r.number, "complete": r.complete, "status": status,
                "reset_time": max(d["timestamp_method"] for d in found) if counted else None,
                "frame_loss_method": max(d["frame_loss_method"] for d in found)
                if trial.valid and status != "undetermined" else None,
                "interrupted": any(d["interrupted"] for d in found),
                "valid": trial.valid, "invalid_reason": trial.invalid_reason,
                "directions": {name: {**d, "sent": trial.directions[name].sent,
                                      "received": trial.directions[name].received}
                               for name, d in directions.items()}}

    def summarize(self, repetitions):
        reps = [self.repetition(r, trial) for r, trial in self._trials(repetitions)]
        done = [rep for rep in reps if rep["complete"]]
        values = [rep["reset_time"] for rep in done if rep["reset_time"] is not None]
        frame_loss = [rep["frame_loss_method"] for rep in done
                      if rep["status"] == "back"]
        summary = {"unit": "s", **summarize(values), "average": _fmean(values),
                   "frame_loss_method": {**summarize(frame_loss), "average": _fmean(frame_loss)},
                   "reset": {"type": self.type, "description": self.description}}
        summary |= {status.replace(" ", "_"): sum(rep["status"] == status for rep in done)
                    for status in ("back", "not back", "no timestamp A", "undetermined",
                                   "invalid")}
        summary["not_interrupted"] = sum(rep["interrupted"] is False for rep in done
                                         if rep["status"] != "undetermined")
        names = list(dict.fromkeys(name for rep in done for name in rep["directions"]))
        summary["directions"] = {}
        for name in names:
            ok = [rep["directions"][name] for rep in done if rep["status"] == "back"]
            summary["directions"][name] = {
                method: {**summarize([d[method] for d in ok]),
                         "average": _fmean([d[method] for d in ok])}
                for method in ("timestamp_method", "frame_loss_method")}
        summary["repetitions"] = reps
        summary["warnings"] = self.warnings(summary, done)
        return summary

    def warnings(self, summary: dict, done: list[dict]) -> list[str]:
        notes = []
        if summary["not_back"]:
            notes.append(f"{summary['not_back']} repetition(s): the DUT was not back before the "
                         f"trial ended ({self.duration:g} s, trial.duration): no reset time")
        if summary["undetermined"]:
            notes.append(f"{summary['undetermined']} repetition(s) undetermined: frames were "
                         "lost, but the engine's reply lists no loss periods (several flows per "
                         "direction?): no reset time")
        if summary["no_timestamp_A"]:
            notes.append(f"{summary['no_timestamp_A']} repetition(s): no frame arrived before "
                         "the interruption (no Timestamp A)")
        if summary["not_interrupted"]:
            notes.append(f"{summary['not_interrupted']} repetition(s) lost no frame: reset time "
                         "0, or the hook did not interrupt forwarding")
        other = sum(1 for rep in done for d in rep["directions"].values() if d["other_lost"])
        if other:
            notes.append(f"{other} direction(s) x repetition(s) lost frames outside the longest "
                         "loss period: the frame-loss method counts them too (RFC 6201 assumes "
                         "no loss but the reset's)")
        if summary["invalid"]:
            notes.append(f"{summary['invalid']} repetition(s) invalid: the tester could not "
                         "keep the rate (not a DUT result)")
        size = self.config.traffic.frame_size
        if size != self.minimum_frame:
            notes.append(f"traffic.frame_size = {size}: RFC 2544 §26.6 resets the DUT under "
                         f"a stream of minimum-size frames ({self.minimum_frame} bytes here)")
        if len(done) < 10:
            notes.append(f"{len(done)} repetition(s): RFC 6201 repeats the reset at least 10 "
                         "times (reset.repeat)")
        return notes

    def settings(self):
        return {"rate": self.throughput, "duration": self.duration, "reset_at": self.at,
                "reset_type": self.type, "reset_description": self.description,
                "repeat": self.repeat, "timestamps": RESET_TIMESTAMPS,
                "methods": {"timestamp": "first_after_s − last_before_s of the longest loss "
                                         "period (the primary result)",
                            "frame_loss": "frames lost in the trial / the offered rate"}}

    def value(self, repetition):
        if not repetition.complete or not repetition.steps:
            return None
        return self.repetition(repetition, repetition.steps[0])["reset_time"]


RECOVERY_SPEC = ProcedureSpec(
    "recovery", "RFC 2544 §26.5 system recovery from an overload at 110 % of the throughput "
    "(docs/recovery.md)", unit="s", make=Recovery, report="recovery", rate_option="required",
    rate_from="throughput", trials_per_repetition=1, repeat_key="recovery.repeat")
RESET_SPEC = ProcedureSpec(
    "reset", "RFC 2544 §26.6 / RFC 6201 reset time: dut.during_trial resets the DUT during a "
    "stream at the throughput (docs/recovery.md)", unit="s", make=Reset, report="reset",
    rate_option="required", rate_from="throughput", trials_per_repetition=1,
    repeat_key="reset.repeat")
