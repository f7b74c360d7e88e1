# SPDX-License-Identifier: BSD-3-Clause
"""The `latency` (RFC 8219 §7.2) and `pdv` (RFC 8219 §7.3) procedures: one trial per
repetition at a given rate (normally the measured throughput) with the engine's delay
measurements; the arithmetic is in xlatperf.delay, the documentation in docs/delay.md.

trials.jsonl keeps the engine's delay data of every trial under `delay` (the tagged frames'
delays, the histogram buckets for CDF plots, IPDV) and the trial's metrics under `latency` or
`pdv`; summary.json holds the statistics over the repetitions in ms."""

from ..util.errors import ConfigError
from ..measure.measurer import TrialSpec
from .base import Procedure, ProcedureSpec, Repetition
from .delay import (LATENCY_DEFINITION, LOST_TAGGED, RFC8219_LATENCY_DELAY,
                    RFC8219_LATENCY_DURATION, RFC8219_PDV_DURATION, RFC8219_REPETITIONS,
                    RFC8219_TIMESTAMPS, check_latency_setup, latency_by_direction, latency_request,
                    latency_trial, latency_warnings, pdv_by_direction, pdv_request, pdv_trial,
                    pdv_warnings, summarize_latency, summarize_pdv, timestamp_method)


class _DelayProcedure(Procedure):
    """One trial per repetition at --rate, with a `delay` object in the request."""
    name = ""

    def __init__(self, config, plan, rate=None):
        super().__init__(config, plan)
        if rate is None:
            raise ConfigError(f"{self.name} needs a rate: --rate R (normally the measured "
                              "throughput, RFC 8219 §7.2/7.3) or --rate-from DIR (a throughput "
                              "result)")
        plan.check_rate(rate, "--rate")
        self.rate = rate
        self.timestamps = timestamp_method(None)

    def prepare(self, session):
        self.timestamps = timestamp_method(session.tester)
        return {}

    def request(self) -> dict:
        raise NotImplementedError

    def metrics(self, trial) -> dict:
        """The trial's record field (`latency` or `pdv`): its metrics per direction."""
        raise NotImplementedError

    def run(self, session, steps):
        def run_trial(rate):
            return session.run_trial(TrialSpec(rate, delay=self.request()),
                                     annotate=lambda result: {self.name: self.metrics(result)})
        self.measure(run_trial, self.rate, steps=steps, notify=session.notify)

    def measure(self, run_trial, rate, *, steps, notify):
        raise NotImplementedError

    def csv_columns(self, name: str, info: dict) -> dict:
        """The CSV columns of one direction's metrics in a trial."""
        raise NotImplementedError

    def csv_rows(self, repetitions):
        """One row per trial: its rate and loss, then each direction's metrics."""
        rows = []
        for r in repetitions:
            for trial in r.steps:
                row = {"repetition": r.number, "rate": trial.rate, "valid": trial.valid,
                       "loss_ratio": trial.loss_ratio}
                for name, info in self.metrics(trial).items():
                    row |= self.csv_columns(name, info)
                rows.append(row)
        return rows

    def _trials(self, repetitions: list[Repetition]):
        return [r.steps[0] for r in repetitions if r.steps]

    def _repetition(self, repetition: Repetition) -> dict:
        entry = {"repetition": repetition.number, "complete": repetition.complete}
        if repetition.steps:
            trial = repetition.steps[0]
            metrics = self.metrics(trial)
            entry |= {"rate": trial.rate, "valid": trial.valid,
                      "invalid_reason": trial.invalid_reason, "loss_ratio": trial.loss_ratio,
                      "directions": {name: {**counts.to_dict(), **metrics.get(name, {})}
                                     for name, counts in trial.directions.items()}}
        return entry

    def settings(self):
        return {"rate": self.rate, "timestamp_method": self.timestamps}


class Latency(_DelayProcedure):
    """RFC 8219 §7.2: latency.timestamps tagged frames per direction after latency.delay s;
    per trial TL (median) and WCL (99.9th percentile), summarised by their medians."""
    name = "latency"

    def __init__(self, config, plan, rate=None):
        super().__init__(config, plan, rate)
        check_latency_setup(config, self.rate)

    def request(self):
        return latency_request(self.config)

    def metrics(self, trial):
        return latency_by_direction(trial)

    def measure(self, run_trial, rate, *, steps, notify):
        return latency_trial(run_trial, rate, steps=steps, notify=notify)

    def summarize(self, repetitions):
        summary = summarize_latency(self._trials(repetitions))
        summary["repetitions"] = [self._repetition(r) for r in repetitions]
        summary["warnings"] = latency_warnings(self.config, summary)
        return summary

    def csv_columns(self, name, info):
        return {f"{name}_tl_ms": info["tl_ms"], f"{name}_wcl_ms": info["wcl_ms"],
                f"{name}_tagged": info["tagged"], f"{name}_lost": info["lost"]}

    def settings(self):
        latency = self.config.latency
        return {**super().settings(), "timestamps": latency.timestamps,
                "delay": latency.delay, "latency_definition": LATENCY_DEFINITION,
                "lost_tagged_frames": LOST_TAGGED,
                "rfc8219": {"duration": RFC8219_LATENCY_DURATION,
                            "delay": RFC8219_LATENCY_DELAY, "timestamps": RFC8219_TIMESTAMPS,
                            "repetitions": RFC8219_REPETITIONS}}

    def value(self, repetition):
        summary = summarize_latency(self._trials([repetition]))
        return summary["median"] if repetition.complete else None


class Pdv(_DelayProcedure):
    """RFC 8219 §7.3: every frame's delay in a histogram; per trial PDV = p99.9(D) - min(D)
    (and IPDV min/median/max with pdv.ipdv), summarised by their medians."""
    name = "pdv"

    def request(self):
        return pdv_request(self.config)

    def metrics(self, trial):
        return pdv_by_direction(trial)

    def measure(self, run_trial, rate, *, steps, notify):
        return pdv_trial(run_trial, rate, steps=steps, notify=notify)

    def summarize(self, repetitions):
        trials = self._trials(repetitions)
        summary = summarize_pdv(trials)
        summary["repetitions"] = [self._repetition(r) for r in repetitions]
        summary["warnings"] = pdv_warnings(self.config, summary, trials)
        return summary

    def csv_columns(self, name, info):
        columns = {f"{name}_pdv_ms": info["pdv_ms"], f"{name}_min_ns": info["min_ns"],
                   f"{name}_frames": info["frames"]}
        if "ipdv" in info:
            columns |= {f"{name}_ipdv_{key}_ms": info["ipdv"][f"{key}_ms"]
                        for key in ("min", "median", "max")}
        return columns

    def settings(self):
        return {**super().settings(), "ipdv": self.config.pdv.ipdv,
                "histogram": "log-linear, relative error at most 2^-11 = 0.049 % (exact below "
                             "1024 TSC ticks); min and max exact",
                "pdv_definition": "p99.9(D) - min(D) over the received frames of each "
                                  "direction's foreground stream (RFC 8219 §7.3.1)",
                "rfc8219": {"duration": RFC8219_PDV_DURATION,
                            "repetitions": RFC8219_REPETITIONS}}

    def value(self, repetition):
        summary = summarize_pdv(self._trials([repetition]))
        return summary["median"] if repetition.complete else None


LATENCY_SPEC = ProcedureSpec("latency", "RFC 8219 latency: typical and worst-case latency of "
                             "tagged frames (docs/delay.md)", unit="ms", make=Latency,
                             report="delay", rate_option="required", rate_from="throughput",
                             trials_per_repetition=1)
PDV_SPEC = ProcedureSpec("pdv", "RFC 8219 packet delay variation of every frame, and IPDV with "
                         "pdv.ipdv = true (docs/delay.md)", unit="ms", make=Pdv, report="delay",
                         rate_option="required", rate_from="throughput",
                         trials_per_repetition=1)
