# SPDX-License-Identifier: BSD-3-Clause
"""Running a procedure against the engine and storing its results.

    from xlatperf.config import load_config
    from xlatperf.runner import run_procedure
    summary = run_procedure("throughput", load_config("lab.toml"), "results/run1")

run_procedure starts the engine, runs the procedure `output.repeat` times, appends every trial
to trials.jsonl as it finishes, and writes summary.json and summary.csv. On Ctrl-C
(KeyboardInterrupt) it aborts the engine (which stops its ports), writes the summary of what
was measured with "complete": false, and re-raises.
"""

import contextlib
import json
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__, adaptive
from .dut import DutHooks
from .engine import Engine
from .errors import ConfigError, MeasurementError
from .mlrgoals import deviations
from .flows import TrafficPlan, owned_addresses
from .procedures import (DirectionCounts, SearchResult, TrialResult, binary_search, frame_loss_scan,
                         summarize_frame_loss, summarize_throughput, summarize_trials)
from .results import SUMMARY_FILE, ResultStore, utc_timestamp

PROCEDURES = ("trial", "throughput", "frame-loss", "selftest", "latency", "pdv",
              "connection-rate", "teardown-rate", "table-capacity")
STATEFUL_PROCEDURES = ("connection-rate", "teardown-rate", "table-capacity")  # RFC 9693
# Records that are not a procedure's steps: the learning trial, RFC 9693 phase 1 and validation.
AUXILIARY_PHASES = ("learning", "phase1", "validation")
PROGRESS_INTERVAL = 1.0  # seconds between the engine's progress events
# selftest check: a short trial at a low rate that any working tester passes without loss.
SELFTEST_CHECK_DURATION = 2.0
SELFTEST_CHECK_RATE = 10_000


class Reporter:
    """Receives what happens during a measurement, for live display. Methods are no-ops here;
    the CLI's console reporter overrides them."""

    def started(self, info: dict) -> None:
        """info: procedure, repetitions, max_rate, directions (plan info), loss_tolerance,
        duration, hello."""

    def repetition(self, number: int, count: int) -> None:
        """Repetition `number` (1-based) of `count` starts."""

    def before_trial(self, context: dict) -> None:
        """context: repetition, step, rate, and the procedure's lo/hi or percent."""

    def pausing(self, seconds: float) -> None:
        """Waiting `seconds` before the next trial (trial.pause)."""

    def progress(self, event: dict) -> None:
        """An engine progress event: elapsed, flows[{name, sent, received}]."""

    def after_trial(self, record: dict, result: TrialResult) -> None:
        """A trial finished; record is what went to trials.jsonl."""

    def finished(self, summary: dict) -> None:
        """The summary was written (also for an interrupted, incomplete measurement)."""

    def point(self, info: dict) -> None:
        """A campaign point starts: index (1-based), count, id, procedure, assignments."""


# --------------------------------------------------------------------------------------------
# The trial runner handed to procedures
# --------------------------------------------------------------------------------------------


class TrialSession:
    """`run_trial(rate)` for procedures: builds the request, keeps trial.pause between trials,
    records every trial and forwards progress to the reporter."""

    def __init__(self, engine: Engine, plan: TrafficPlan, config: dict, store: ResultStore,
                 reporter: Reporter, procedure: str):
        self.engine, self.plan, self.config = engine, plan, config
        self.store, self.reporter, self.procedure = store, reporter, procedure
        self.repetition = 0
        self.step = 0
        self.phase: str | None = None
        self.trials_recorded = 0
        self._in_flight: int | None = None     # rate of the trial the engine is running
        self._last_trial_end: float | None = None
        self._needs_learning = learning_needed(config) and plan.through_dut
        # Set by run_procedure: the DUT hooks (xlatperf/dut.py) and, for RFC 9693 tests, the
        # stateful phases (xlatperf/stateful.py) that precede every phase-2 trial.
        self.hooks = None
        self.stateful = None

    def start_repetition(self, number: int) -> None:
        self.repetition, self.step = number, 0

    def notify(self, context: dict) -> None:
        self.reporter.before_trial({"repetition": self.repetition, "step": self.step + 1,
                                    "phase": self.phase, **context})

    def run_trial(self, rate: int, duration: float | None = None,
                  annotate=None, *, delay: dict | None = None) -> TrialResult:
        """annotate(result) -> dict: extra fields for the trial's record (e.g. MLRsearch's
        classification after the trial). delay: the request's delay measurements (latency,
        pdv; docs/protocol.md), on top of trial.frame_timeout, which applies to every trial."""
        trial_config = self.config["trial"]
        self.begin_step()
        flows = self.plan.flows(rate)
        if self.stateful is not None:  # RFC 9693: phase 1 and the gap D before this trial
            failed = self.stateful.before_phase2(self, rate)
            if failed is not None:      # an invalid step, never a measurement
                record = self.record(failed, 0.0, extra={"phase2": "not run"})
                self.reporter.after_trial(record, failed)
                return failed
            flows = self.stateful.phase2_flows(flows)
        request = {"duration": duration or trial_config["duration"],
                   "timeout": trial_config["timeout"],
                   "finish_early": trial_config["finish_early"],
                   "progress_interval": PROGRESS_INTERVAL,
                   "seed": self.config["traffic"]["seed"],
                   "flows": flows}
        delay = {**({"frame_timeout": trial_config["frame_timeout"]}
                    if trial_config["frame_timeout"] else {}), **(delay or {})}
        if delay:
            request["delay"] = delay
        result = self._exchange(request, rate)
        record = self._record(result, request["duration"],
                              extra=annotate(result) if annotate is not None else None)
        self.reporter.after_trial(record, result)
        return result

    def _exchange(self, request: dict, rate: int) -> TrialResult:
        """Runs one trial request on the engine, keeping what abort() needs to record it."""
        self._in_flight = rate
        try:
            reply = self.engine.trial(request, on_progress=self.reporter.progress)
        finally:
            self._last_trial_end = time.monotonic()
        self._in_flight = None
        return TrialResult.from_reply(rate, reply)

    def begin_step(self) -> None:
        """What precedes every step: trial.pause, the step count, the learning trial before the
        first step, and the DUT's before_trial hook (stateful tests: before phase 1)."""
        self._pause(self.config["trial"]["pause"])
        self.step += 1
        if self._needs_learning:
            self._needs_learning = False
            self._learn()
        if self.hooks is not None:
            self.hooks.before_trial({"procedure": self.procedure, "repetition": self.repetition,
                                     "step": self.step})

    def run_request(self, request: dict, rate: int, phase: str, annotate=None) -> TrialResult:
        """A trial request the procedure built itself (RFC 9693 phase 1, validation), sent as
        it is and recorded with `phase` in the current step."""
        self.reporter.before_trial({"repetition": self.repetition, "step": self.step,
                                    "phase": phase, "rate": rate})
        result = self._exchange(request, rate)
        record = self.record(result, request["duration"], phase,
                             annotate(result) if annotate is not None else None)
        self.reporter.after_trial(record, result)
        return result

    def record(self, result: TrialResult, duration: float, phase: str | None = None,
               extra: dict | None = None) -> dict:
        """Appends a record of the current step to trials.jsonl (phase: e.g. "phase1")."""
        previous = self.phase
        self.phase = phase or previous
        try:
            return self._record(result, duration, extra=extra)
        finally:
            self.phase = previous

    def _learn(self) -> None:
        """RFC 2544 §23 b: one trial whose frames visit every tester address in turn, so the
        DUT resolves them all before the first measured trial; recorded as phase "learning"."""
        plan, count = learning_plan(self.config, self.plan)
        rate = min(self.config["trial"]["learning_rate"], plan.max_rate)
        request = {"duration": max(0.1, count / rate), "timeout": self.config["trial"]["timeout"],
                   "finish_early": True, "progress_interval": PROGRESS_INTERVAL,
                   "seed": self.config["traffic"]["seed"], "flows": plan.flows(rate)}
        self.reporter.before_trial({"repetition": self.repetition, "step": 0, "phase": "learning",
                                    "rate": rate})
        result = self._exchange(request, rate)
        phase, step = self.phase, self.step
        self.phase, self.step = "learning", 0
        try:
            self._record(result, request["duration"])
        finally:
            self.phase, self.step = phase, step

    def abort(self) -> None:
        """Abort the engine; an interrupted trial's (invalid) reply still goes to trials.jsonl."""
        reply = self.engine.abort()
        if reply is not None and self._in_flight is not None:
            self._record(TrialResult.from_reply(self._in_flight, reply),
                         self.config["trial"]["duration"], aborted=True)

    def _pause(self, seconds: float) -> None:
        """RFC 2544 §23 e: let the DUT settle between trials."""
        if self._last_trial_end is None:
            return
        remaining = seconds - (time.monotonic() - self._last_trial_end)
        if remaining > 0:
            self.reporter.pausing(remaining)
            time.sleep(remaining)

    def _record(self, result: TrialResult, duration: float, aborted: bool = False,
                extra: dict | None = None) -> dict:
        reply = result.reply or {}
        record = {"procedure": self.procedure, "repetition": self.repetition, "step": self.step,
                  **({"phase": self.phase} if self.phase else {}),
                  **result.to_dict(),
                  "duration": duration, "elapsed": reply.get("elapsed"),
                  "foreign": {str(p.get("index")): p.get("foreign", 0)
                              for p in reply.get("ports", [])},
                  "timestamp": utc_timestamp()}
        if aborted:
            record["aborted"] = True
        if extra:
            record |= extra
        self.store.record_trial(record)
        self.trials_recorded += 1
        return record


# --------------------------------------------------------------------------------------------
# Procedures: how to run one repetition and how to summarise repetitions
# --------------------------------------------------------------------------------------------


@dataclass
class Repetition:
    number: int                       # 1-based
    steps: list[TrialResult] = field(default_factory=list)
    complete: bool = False


def _trial_row(repetition: Repetition, trial: TrialResult, max_rate: int) -> dict:
    row = {"repetition": repetition.number, "rate": trial.rate,
           "percent": round(100 * trial.rate / max_rate, 6), "valid": trial.valid,
           "loss_ratio": trial.loss_ratio}
    for name, counts in trial.directions.items():
        row |= {f"{name}_sent": counts.sent, f"{name}_received": counts.received,
                f"{name}_loss_ratio": counts.loss_ratio}
    return row


class Procedure:
    name = ""

    def __init__(self, config: dict, plan: TrafficPlan, rate: int | None = None):
        self.config, self.plan = config, plan

    def prepare(self, session: TrialSession) -> dict:
        """Runs once before the repetitions; returns extra summary fields."""
        return {}

    def run(self, session: TrialSession, steps: list) -> None:
        raise NotImplementedError

    def summarize(self, repetitions: list[Repetition]) -> dict:
        """unit, the statistics, per-direction values and `repetitions` (JSON-ready)."""
        raise NotImplementedError

    def csv_rows(self, repetitions: list[Repetition]) -> list[dict]:
        return [_trial_row(r, t, self.plan.max_rate) for r in repetitions for t in r.steps]

    def settings(self) -> dict:
        return {}

    def value(self, repetition: Repetition) -> float | None:
        """The repetition's result as one number, for adaptive repetitions (None: unusable)."""
        return None

    def steps_from_records(self, records: list[dict]) -> list:
        """A finished repetition's steps rebuilt from its trials.jsonl records (--resume)."""
        return [trial_from_record(r) for r in records if r.get("phase") not in AUXILIARY_PHASES]


def _first_loss_ratio(repetition: Repetition) -> float | None:
    first = repetition.steps[0] if repetition.steps else None
    return first.loss_ratio if first is not None and first.valid else None


class SingleTrial(Procedure):
    """`trial`: one elementary trial per repetition at --rate (default: the medium's maximum)."""
    name = "trial"

    def __init__(self, config, plan, rate=None):
        super().__init__(config, plan)
        self.rate = plan.max_rate if rate is None else rate
        plan.check_rate(self.rate, "--rate")

    def run(self, session, steps):
        session.notify({"rate": self.rate})
        steps.append(session.run_trial(self.rate))

    def summarize(self, repetitions):
        summary = summarize_trials([t for r in repetitions for t in r.steps])
        summary["repetitions"] = [{"repetition": r.number, "complete": r.complete,
                                   **(r.steps[0].to_dict() if r.steps else {})}
                                  for r in repetitions]
        return summary

    def settings(self):
        return {"rate": self.rate}

    def value(self, repetition):
        return _first_loss_ratio(repetition)


class Throughput(Procedure):
    """RFC 2544 §26.1 binary search over [throughput.min_rate, max_rate or the medium's max]."""
    name = "throughput"

    def __init__(self, config, plan, rate=None):
        super().__init__(config, plan)
        settings = config["throughput"]
        self.lo = settings["min_rate"]
        self.hi = settings["max_rate"] or plan.max_rate
        self.error = settings["error"]
        self.loss_tolerance = settings["loss_tolerance"]
        plan.check_rate(self.hi, "throughput.max_rate")
        if self.lo >= self.hi:
            raise ConfigError(f"throughput.min_rate = {self.lo}: must be below the search's upper "
                              f"end, {self.hi} frames/s")

    def run(self, session, steps):
        binary_search(session.run_trial, self.lo, self.hi, self.error, self.loss_tolerance,
                      steps=steps, notify=session.notify)

    def summarize(self, repetitions):
        searches = [SearchResult.from_steps(r.steps, self.loss_tolerance, r.complete)
                    for r in repetitions]
        summary = summarize_throughput(searches)
        summary["repetitions"] = [{"repetition": r.number, **s.to_dict()}
                                  for r, s in zip(repetitions, searches)]
        return summary

    def csv_rows(self, repetitions):
        rows = []
        for r in repetitions:
            search = SearchResult.from_steps(r.steps, self.loss_tolerance, r.complete)
            rows.append({"repetition": r.number, "throughput_fps": search.throughput,
                         "found": search.found, "tester_limited": search.tester_limited,
                         "complete": r.complete, "trials": len(r.steps)})
        return rows

    def settings(self):
        return {"mode": "binary", "min_rate": self.lo, "max_rate": self.hi,
                "error": self.error, "loss_tolerance": self.loss_tolerance,
                "first_trial_at_max_rate": True, "deviations": deviations(self.config)}

    def value(self, repetition):
        if not repetition.complete:
            return None
        return SearchResult.from_steps(repetition.steps, self.loss_tolerance).throughput


class SelfTest(Throughput):
    """Tester ports wired to each other, no DUT: a short low-rate trial must pass without loss,
    then a throughput search measures the tester's own capacity."""
    name = "selftest"

    def prepare(self, session):
        rate = max(1, min(SELFTEST_CHECK_RATE, self.plan.max_rate // 100))
        duration = min(self.config["trial"]["duration"], SELFTEST_CHECK_DURATION)
        session.phase = "check"
        session.notify({"rate": rate})
        result = session.run_trial(rate, duration=duration)
        session.phase = "search"
        if not result.passes(0.0):
            problems = [f"tester invalid ({result.invalid_reason})"] if not result.valid else []
            problems += [f"{name} received {d.received} of {d.sent} frames"
                         for name, d in result.directions.items() if not d.passes(0.0)]
            raise MeasurementError(f"selftest: the {duration:g} s check trial at {rate} fps "
                                   f"failed: {'; '.join(problems)} (are the ports wired to each "
                                   "other?)")
        return {"check": {**result.to_dict(), "duration": duration, "passed": True}}


class FrameLoss(Procedure):
    """RFC 2544 §26.3: scan from frame_loss.start % of the maximum down by frame_loss.step %
    until two consecutive zero-loss trials, or the explicit frame_loss.rates."""
    name = "frame-loss"

    def __init__(self, config, plan, rate=None):
        super().__init__(config, plan)
        self.settings_ = dict(config["frame_loss"])
        for listed in self.settings_["rates"]:
            plan.check_rate(listed, "frame_loss.rates")

    def run(self, session, steps):
        s = self.settings_
        frame_loss_scan(session.run_trial, self.plan.max_rate, s["start"], s["step"],
                        s["rates"] or None, steps=steps, notify=session.notify)

    def summarize(self, repetitions):
        summary = summarize_frame_loss([r.steps for r in repetitions], self.plan.max_rate)
        summary["repetitions"] = [{"repetition": r.number, "complete": r.complete,
                                   "points": [t.to_dict() for t in r.steps]}
                                  for r in repetitions]
        return summary

    def settings(self):
        return {**self.settings_, "max_rate": self.plan.max_rate}

    def value(self, repetition):
        return _first_loss_ratio(repetition)  # the highest rate: the summary's top level


PROCEDURE_CLASSES = {cls.name: cls for cls in (SingleTrial, Throughput, SelfTest, FrameLoss)}


# --------------------------------------------------------------------------------------------
# run_procedure
# --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _sigint_ignored():
    """A second Ctrl-C must not interrupt aborting the engine and writing the summary."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _direction_info(plan: TrafficPlan) -> dict:
    info = {}
    for d in plan.directions:
        info[d.name] = {"tx_port": d.tx_side, "rx_port": d.rx_side,
                        "ip_version": d.foreground["ip_version"],
                        "frame_size": d.foreground["frame_size"],
                        "rx_frame_size": d.foreground["rx_frame_size"],
                        "background_frame_size": d.background["frame_size"] if d.background else None,
                        "speed_bps": d.speed_bps, "max_rate": d.max_rate}
    return info


def trial_from_record(record: dict) -> TrialResult:
    """A TrialResult rebuilt from its trials.jsonl record (without the engine reply)."""
    directions = {name: DirectionCounts(
        sent=d["sent"], received=d["received"], planned=d.get("planned"),
        duplicates=d.get("duplicates", 0), reordered=d.get("reordered", 0),
        bad_length=d.get("bad_length", 0), late=d.get("late"))
        for name, d in record.get("directions", {}).items()}
    return TrialResult(rate=record["rate"], valid=record["valid"], directions=directions,
                       invalid_reason=record.get("invalid_reason"), delay=record.get("delay"))


def _check_resumable(out_dir, config: dict) -> None:
    """Resuming into a directory measured with another configuration would mix results: only
    the [output] section (repetitions) may differ, and an empty dut_mac (resolved at run time)."""
    try:
        with open(Path(out_dir) / SUMMARY_FILE, encoding="utf-8") as stream:
            previous = json.load(stream).get("config") or {}
    except (OSError, ValueError):
        return
    for section, values in config.items():
        if section == "output":
            continue
        for key, value in values.items():
            if key == "dut_mac" and value == "":
                continue
            old = previous.get(section, {}).get(key, value)
            if old != value:
                raise ConfigError(f"{out_dir}: measured with {section}.{key} = {json.dumps(old)}, "
                                  f"now {json.dumps(value)}: cannot resume into it (use another "
                                  "--out directory)")


def run_procedure(procedure: str, config: dict, out_dir, *, rate: int | None = None,
                  reporter: Reporter | None = None, engine_path: str | None = None,
                  resume: bool = False) -> dict:
    """Run `procedure` (trial | throughput | frame-loss | selftest) `output.repeat` times (or
    adaptively up to `output.repeat_max`, see xlatperf.adaptive) and write the results under
    out_dir. Returns the summary (also in summary.json, rewritten after every repetition).

    rate: the `trial` procedure's rate in frames/s (default: the medium's maximum).
    resume: keep the repetitions an earlier, interrupted run into out_dir finished and run
    only the rest (the trials of its unfinished repetition go to out_dir/incomplete/).
    Raises ConfigError, EngineError, MeasurementError; KeyboardInterrupt after writing an
    incomplete summary.
    """
    if procedure not in PROCEDURES:
        raise ConfigError(f"procedure {procedure!r}: must be one of {', '.join(PROCEDURES)}")
    reporter = reporter or Reporter()
    started = utc_timestamp()
    if resume:
        _check_resumable(out_dir, config)
    with ResultStore(out_dir, resume=resume) as store:
        engine = Engine(config, log_path=store.engine_log, engine_path=engine_path)
        with engine:
            hello = engine.hello()
            engine.addresses(owned_addresses(config))
            if procedure != "selftest":
                config = resolve_dut_macs(engine, config)
            plan = TrafficPlan(config, hello["ports"], through_dut=procedure != "selftest")
            if procedure in ("latency", "pdv"):
                from .delayprocedure import DELAY_PROCEDURES
                proc_class = DELAY_PROCEDURES[procedure]
            elif procedure in STATEFUL_PROCEDURES:
                from .statefulprocedure import STATEFUL_PROCEDURE_CLASSES
                proc_class = STATEFUL_PROCEDURE_CLASSES[procedure]
            else:
                proc_class = PROCEDURE_CLASSES[procedure]
            if procedure == "throughput" and config["throughput"]["mode"] == "mlrsearch":
                from .mlrprocedure import MlrThroughput
                proc_class = MlrThroughput
            proc = proc_class(config, plan, rate)
            session = TrialSession(engine, plan, config, store, reporter, procedure)
            session.hooks = DutHooks.from_config(config, store.directory, append=resume)
            if config["stateful"]["enabled"] and procedure not in STATEFUL_PROCEDURES + (
                    "selftest",):
                from .stateful import StatefulTest
                session.stateful = StatefulTest(plan)
            output = config["output"]
            count = output["repeat"]
            maximum = max(output["repeat_max"], count)
            reporter.started({"procedure": procedure, "repetitions": maximum,
                              "repeat_min": count,
                              "max_rate": plan.max_rate, "directions": _direction_info(plan),
                              "loss_tolerance": getattr(proc, "loss_tolerance", 0.0),
                              "error": getattr(proc, "error", None),
                              "step": None if procedure != "frame-loss" or config["frame_loss"][
                                  "rates"] else config["frame_loss"]["step"],
                              "duration": config["trial"]["duration"],
                              "hello": hello})
            repetitions: list[Repetition] = [
                Repetition(number, proc.steps_from_records(records), complete=True)
                for number, records in sorted(store.finished.items())]
            resumed = {"repetitions": len(repetitions),
                       "incomplete_trials": store.moved_to_incomplete} if resume else None
            extra: dict = {}
            decision = None

            def decide_now():
                return adaptive.decide([proc.value(r) for r in repetitions], len(repetitions),
                                       count, maximum, output["repeat_tolerance"],
                                       output["repeat_confidence"])

            def summary(complete: bool) -> dict:
                result = {"procedure": procedure, "complete": complete,
                          **proc.summarize(repetitions)}
                if output["repeat_max"]:
                    result["repetition_rule"] = {
                        "minimum": count, "maximum": maximum,
                        "tolerance": output["repeat_tolerance"],
                        "confidence": output["repeat_confidence"],
                        **(decision or decide_now()).to_dict()}
                if resumed:
                    result["resumed"] = resumed
                stats_by_direction = result.pop("directions", {})
                result["directions"] = {name: {**info, **stats_by_direction.get(name, {})}
                                        for name, info in _direction_info(plan).items()}
                result |= extra
                result["settings"] = _settings(config, proc)
                if session.stateful is not None:  # RFC 9693 reporting items
                    result["settings"]["stateful"] = session.stateful.report()
                result["config"] = config
                result["tester"] = _tester_info(hello)
                result["started"], result["finished"] = started, utc_timestamp()
                return result

            def write(complete: bool, final: bool = True) -> dict:
                result = summary(complete)
                store.write_summary(result, proc.csv_rows(repetitions))
                if final:
                    reporter.finished(result)
                return result

            try:
                extra = proc.prepare(session)
                while True:
                    if output["repeat_max"]:
                        decision = decide_now()
                        if decision.stop:
                            break
                    elif len(repetitions) >= count:
                        break
                    number = len(repetitions) + 1
                    repetition = Repetition(number)
                    repetitions.append(repetition)
                    session.start_repetition(number)
                    reporter.repetition(number, maximum)
                    recorded_before = session.trials_recorded
                    proc.run(session, repetition.steps)
                    repetition.complete = True
                    store.finish_repetition(number, session.trials_recorded - recorded_before)
                    if number < maximum:  # results so far, readable while the run goes on
                        write(complete=False, final=False)
            except KeyboardInterrupt:
                with _sigint_ignored():
                    session.abort()
                    if session.trials_recorded or repetitions:
                        write(complete=False)
                raise
            except BaseException:
                if session.trials_recorded or repetitions:  # e.g. the engine died: keep them
                    with contextlib.suppress(Exception):
                        write(complete=False)
                raise
            return write(complete=True)


def resolve_dut_macs(engine: Engine, config: dict) -> dict:
    """Fills in every empty `dut_mac` by asking the engine to resolve the side's `dut_ipvX`
    (ARP or Neighbor Solicitation from the side's own address); returns the updated config."""
    resolved = None
    for side, port in (("left", 0), ("right", 1)):
        if config[side]["dut_mac"]:
            continue
        version = config[side]["ip_version"]
        target = config[side][f"dut_ipv{version}"]
        if not target:
            raise ConfigError(f'{side}.dut_mac = "": set the DUT\'s MAC address, or '
                              f'{side}.dut_ipv{version} so that the tester resolves it')
        own = config[side][f"next_hop_ipv{version}"] or config[side][f"ipv{version}"]
        reply = engine.request("resolve", {"port": port, "ip_version": version, "own_ip": own,
                                           "target": target, "timeout": 3.0},
                               reply_timeout=10.0)
        resolved = resolved or {section: dict(values) for section, values in config.items()}
        resolved[side]["dut_mac"] = reply["mac"]
    return resolved or config


def learning_needed(config: dict) -> bool:
    choice = config["trial"]["learning"]
    if choice != "auto":
        return choice == "yes"
    return any(config["addresses"][side] != "fixed" for side in ("left", "right"))


def learning_plan(config: dict, plan: TrafficPlan) -> tuple[TrafficPlan, int]:
    """A plan whose varying addresses increase through their whole range, and the number of
    frames per direction that visits each address once."""
    learning = {section: dict(values) for section, values in config.items()}
    count = 1
    for side in ("left", "right"):
        if learning["addresses"][side] != "fixed":
            learning["addresses"][side] = "increasing"
            count = max(count, config["addresses"][f"{side}_max"] - config["addresses"][f"{side}_min"] + 1)
    ports = [plan.ports["left"], plan.ports["right"]]
    return TrafficPlan(learning, ports, through_dut=plan.through_dut), count


def _settings(config: dict, proc: Procedure) -> dict:
    trial, traffic = config["trial"], config["traffic"]
    return {"procedure": proc.name, "duration": trial["duration"], "timeout": trial["timeout"],
            "pause": trial["pause"], "finish_early": trial["finish_early"],
            "repeat": config["output"]["repeat"], "repeat_max": config["output"]["repeat_max"],
            "frame_size": traffic["frame_size"],
            "direction": traffic["direction"], "mix_n": traffic["mix_n"],
            "mix_m": traffic["mix_m"], "seed": traffic["seed"], "ports": config["ports"],
            "addresses": config["addresses"], "learning": config["trial"]["learning"],
            "frame_timeout": trial["frame_timeout"], "loss_criterion": loss_criterion(config),
            **proc.settings()}


def loss_criterion(config: dict) -> str:
    """Which frames count as lost, for the report: RFC 2544's global timeout (frames arriving
    up to trial.timeout after sending ended count), or the per-frame timeout."""
    trial = config["trial"]
    if trial["frame_timeout"]:
        return (f"per-frame timeout {trial['frame_timeout']:g} s (within the global timeout "
                f"{trial['timeout']:g} s)")
    return f"global timeout {trial['timeout']:g} s"


def _tester_info(hello: dict) -> dict:
    return {"xlatperf": __version__, "engine": hello.get("engine"), "dpdk": hello.get("dpdk"),
            "protocol": hello.get("protocol"), "tsc_hz": hello.get("tsc_hz"),
            "lcores": hello.get("lcores"), "timestamps": hello.get("timestamps"),
            "ports": hello.get("ports")}
