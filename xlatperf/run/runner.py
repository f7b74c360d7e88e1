# SPDX-License-Identifier: BSD-3-Clause
"""Running a procedure against the engine and storing its results.

    from xlatperf.config import load_config
    from xlatperf.run import run_procedure
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
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__
from ..config.compliance import compliance_warnings
from ..engine.client import Engine
from ..engine.doctor import require_ready_host
from ..engine.port_checks import require_ready_ports
from ..frames.technology import CE_SOURCES
from ..measure.hooks import DutHooks
from ..measure.session import Reporter, TrialSession, resolve_dut_macs
from ..measure.stateful import Phase2Measurer, StatefulTest
from ..measure.store import SUMMARY_FILE, ResultStore, read_trials
from ..procedures import procedure_spec
from ..procedures.base import Procedure, Repetition
from ..procedures.ceiling import ceiling_setting
from ..traffic.plan import TrafficPlan, owned_addresses
from ..util.errors import ConfigError
from ..util.files import utc_timestamp
from . import adaptive

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
                        "speed_bps": d.speed_bps, "max_rate": d.max_rate,
                        "stacks": [str(stack) for stack in d.stacks]}
        if "rx" in d.foreground:  # the header checks, for the report (docs/protocol.md)
            info[d.name] |= {"ttl": d.foreground["ttl"], "tos": d.foreground["tos"],
                             "rx": d.foreground["rx"]}
        if "ce" in d.foreground:  # emulated CEs (docs/ipv4aas.md)
            ce = d.foreground["ce"]
            info[d.name]["ces"] = {"count": ce["count"], "side": ce["side"], "mode": ce["mode"],
                                   "source": next(source.key for source in CE_SOURCES if source.key in ce),
                                   "fields": ce["fields"]}
        if d.middle is not None:  # a dual DUT's link between its CE and BR (RFC 8219 §5.1)
            info[d.name]["middle_link"] = {"stack": d.middle.stack, "speed_bps": d.middle.speed_bps,
                                           "mean_frame_size": round(float(d.middle.mean_frame), 3),
                                           "largest_frame_size": d.middle.largest_frame,
                                           "max_rate": d.middle.max_rate}
        if plan.config.dns.enabled:  # DNS: the maximum rate is for the answers, the larger frames
            info[d.name]["answer_frame_size"] = d.largest_frame
        if plan.config.traffic.imix:  # RFC 6985: the mix, and the mean frame its maximum rate is for
            info[d.name] |= {"imix": plan.config.traffic.imix,
                             "mean_frame_size": round(float(d.mean_frame), 3)}
    return info


def _check_resumable(out_dir, config: dict, rate: int | None = None) -> None:
    """Resuming into a directory measured with another configuration would mix results: only
    the [output] section (repetitions) may differ, and an empty dut_mac (resolved at run time);
    a procedure measured at a given rate (trial, latency, pdv) resumes only at that rate."""
    try:
        with open(Path(out_dir) / SUMMARY_FILE, encoding="utf-8") as stream:
            summary = json.load(stream)
    except (OSError, ValueError):
        return
    previous = summary.get("config") or {}
    old_rate = (summary.get("settings") or {}).get("rate")
    if rate is not None and old_rate is not None and old_rate != rate:
        raise ConfigError(f"{out_dir}: measured at --rate {old_rate}, now {rate}: cannot "
                          "resume into it (use another --out directory)")
    for section, values in config.to_dict().items():
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
                  resume: bool = False, rate_source: dict | None = None) -> dict:
    """Run the registered `procedure` (xlatperf/procedures/__init__.py) `output.repeat` times (or
    adaptively up to `output.repeat_max`, see xlatperf/run/adaptive.py) and write the results under
    out_dir. Returns the summary (also in summary.json, rewritten after every repetition).

    rate: the `trial` procedure's rate in frames/s (default: the medium's maximum).
    resume: keep the repetitions an earlier, interrupted run into out_dir finished and run
    only the rest (the trials of its unfinished repetition go to out_dir/incomplete/).
    rate_source: where `rate` came from (a campaign's chained throughput, --rate-from), kept
    in the summary as "rate_source".
    DUT hooks (xlatperf/measure/hooks.py): before_point before the engine starts, before and
    after each repetition, after_point once the complete summary is written.
    Raises ConfigError, EngineError, MeasurementError; KeyboardInterrupt after writing an
    incomplete summary.
    """
    spec = procedure_spec(procedure)
    if spec.adapt_config is not None:
        config = spec.adapt_config(config)
    reporter = reporter or Reporter()
    started = utc_timestamp()
    # Frames a compliant DUT must drop (config/compliance.py): said with the result.
    config_warnings = compliance_warnings(config)
    if resume:
        _check_resumable(out_dir, config, rate)
    with ResultStore(out_dir, resume=resume) as store:
        hooks = DutHooks.from_config(config, store.directory, append=resume)
        hooks.before("point", {"procedure": procedure})
        require_ready_host(config)   # a PCI port's device, driver, IOMMU, hugepages: doctor's host checks
        engine = Engine(config, log_path=store.engine_log, engine_path=engine_path)
        with engine:
            hello = engine.hello()
            require_ready_ports(config, hello)   # links, MTU, flow control: doctor's engine checks
            engine.addresses(owned_addresses(config))
            if spec.through_dut:
                config = resolve_dut_macs(engine, config)
                hooks.config = config     # {left.dut_mac} in a hook: the resolved MAC
            plan = TrafficPlan(config, hello["ports"], through_dut=spec.through_dut)
            proc = spec.make(config, plan, rate)
            session = TrialSession(engine, plan, config, store, reporter, procedure)
            session.hooks = hooks
            # What procedures measure with: the session, each trial after its RFC 9693 phase 1
            # where the measurement is stateful.
            stateful = StatefulTest(plan) if config.stateful.enabled and spec.stateful_phase2 else None
            measurer = Phase2Measurer(session, stateful) if stateful is not None else session
            count = config.value(spec.repeat_key)   # output.repeat, or the procedure's own
            maximum = max(config.output.repeat_max, count)
            reporter.started({"procedure": procedure, "repetitions": maximum,
                              "repeat_min": count,
                              "max_rate": plan.max_rate, "directions": _direction_info(plan),
                              "loss_tolerance": getattr(proc, "loss_tolerance", 0.0),
                              "error": getattr(proc, "error", None),
                              "step": None if procedure != "frame-loss" or config.frame_loss.rates else config.frame_loss.step,
                              "duration": config.trial.duration,
                              "hello": hello})
            repetitions = _finished_repetitions(proc, store)
            resumed = ({"repetitions": len(repetitions),
                        "incomplete_trials": store.moved_to_incomplete} if resume else None)
            run = _Run(procedure=procedure, proc=proc, config=config, plan=plan, store=store,
                       reporter=reporter, engine=engine, hello=hello, stateful=stateful,
                       count=count, maximum=maximum, started=started, rate_source=rate_source,
                       config_warnings=config_warnings, repetitions=repetitions,
                       resumed=resumed)
            try:
                run.extra = proc.prepare(measurer)
                _repeat(run, measurer, session, hooks)
            except KeyboardInterrupt:
                with _sigint_ignored():
                    session.abort()
                    if run.repetitions and not run.repetitions[-1].complete:
                        _steps_as_recorded(proc, store, run.repetitions[-1])
                    if store.trials_recorded or run.repetitions:
                        run.write(complete=False)
                raise
            except BaseException:
                if store.trials_recorded or run.repetitions:  # e.g. the engine died: keep them
                    with contextlib.suppress(Exception):
                        run.write(complete=False)
                raise
            result = run.write(complete=True)
        hooks.after("point", {"procedure": procedure})
        return result


def _finished_repetitions(proc: Procedure, store: ResultStore) -> list[Repetition]:
    """The repetitions an earlier, interrupted run into the store finished (none unless it
    resumes), rebuilt from their records."""
    return [Repetition(number, proc.steps_from_records(records), complete=True)
            for number, records in sorted(store.finished.items())]


@dataclass
class _Run:
    """One run of a procedure as its summary tells it: the repetitions so far, what the
    procedure prepared, the repetition rule's last decision, and what the summary says besides
    (settings, tester, warnings, where a resumed run and a chained rate came from). The
    summary is written after every repetition and at the end, from these alone."""
    procedure: str
    proc: Procedure
    config: dict
    plan: TrafficPlan
    store: ResultStore
    reporter: Reporter
    engine: Engine
    hello: dict
    stateful: StatefulTest | None         # RFC 9693 phase 1 before each trial, if any
    count: int                            # repetitions: the rule's minimum
    maximum: int                          # the rule's maximum (count without repeat_max)
    started: str
    rate_source: dict | None
    config_warnings: list
    repetitions: list[Repetition] = field(default_factory=list)
    resumed: dict | None = None
    extra: dict = field(default_factory=dict)          # what proc.prepare() returned
    decision: adaptive.Decision | None = None          # the last one, with output.repeat_max

    def decide(self) -> adaptive.Decision:
        output = self.config.output
        return adaptive.decide(self.proc.values(self.repetitions), len(self.repetitions),
                               self.count, self.maximum, output.repeat_tolerance,
                               output.repeat_confidence)

    def summary(self, complete: bool) -> dict:
        config, output = self.config, self.config.output
        result = {"procedure": self.procedure, "complete": complete,
                  **self.proc.summarize(self.repetitions)}
        if output.repeat_max:
            result["repetition_rule"] = {
                "minimum": self.count, "maximum": self.maximum,
                "tolerance": output.repeat_tolerance,
                "confidence": output.repeat_confidence,
                **(self.decision or self.decide()).to_dict()}
        if self.resumed:
            result["resumed"] = self.resumed
        if self.rate_source is not None:
            result["rate_source"] = self.rate_source
        if self.config_warnings:
            result["config_warnings"] = self.config_warnings
        stats_by_direction = result.pop("directions", {})
        result["directions"] = {name: {**info, **stats_by_direction.get(name, {})}
                                for name, info in _direction_info(self.plan).items()}
        result |= self.extra
        result["settings"] = _settings(config, self.proc)
        if self.stateful is not None:  # RFC 9693 reporting items
            result["settings"]["stateful"] = self.stateful.report()
        result["config"] = config.to_dict()
        result["tester"] = _tester_info(self.hello, self.engine.memory)
        result["started"], result["finished"] = self.started, utc_timestamp()
        return result

    def write(self, complete: bool, final: bool = True) -> dict:
        """The summary into summary.json (and summary.csv); a final one to the reporter too."""
        result = self.summary(complete)
        self.store.write_summary(result, self.proc.csv_rows(self.repetitions))
        if final:
            self.reporter.finished(result)
        return result


def _repeat(run: _Run, measurer, session: TrialSession, hooks: DutHooks) -> None:
    """The repetitions the rule asks for (`count` of them, or adaptively up to `maximum`),
    each between the DUT's repetition hooks; the summary so far is written after each but
    the last possible one, so that it is readable while the run goes on."""
    proc, store, output = run.proc, run.store, run.config.output
    while True:
        if output.repeat_max:
            run.decision = run.decide()
            if run.decision.stop:
                break
        elif len(run.repetitions) >= run.count:
            break
        number = len(run.repetitions) + 1
        repetition = Repetition(number)
        run.repetitions.append(repetition)
        session.start_repetition(number)
        run.reporter.repetition(number, run.maximum)
        recorded_before = store.trials_recorded
        context = {"procedure": run.procedure, "repetition": number}
        hooks.before("repetition", context)
        proc.begin_repetition(run.repetitions[:-1])
        proc.run(measurer, repetition.steps)
        repetition.complete = True
        store.finish_repetition(number, store.trials_recorded - recorded_before)
        hooks.after("repetition", context)
        if number < run.maximum:
            run.write(complete=False, final=False)


def _steps_as_recorded(proc: Procedure, store: ResultStore, repetition: Repetition) -> None:
    """An interrupted repetition's steps as trials.jsonl has them (what --resume rebuilds
    from): an interrupt that lands after a trial's record was written but before the procedure
    took its result would otherwise leave the summary a step behind the records. Steps the
    records of a half-finished repetition cannot rebuild stay as they were."""
    records = [r for r in read_trials(store.directory)
               if r.get("repetition") == repetition.number and not r.get("aborted")]
    try:
        rebuilt = proc.steps_from_records(records)
    except (KeyError, TypeError, ValueError):
        return
    repetition.steps[:] = rebuilt


def _settings(config: dict, proc: Procedure) -> dict:
    trial, traffic = config.trial, config.traffic
    return {"procedure": proc.name, "duration": trial.duration, "timeout": trial.timeout,
            "pause": trial.pause, "finish_early": trial.finish_early,
            "repeat": config.output.repeat, "repeat_max": config.output.repeat_max,
            "frame_size": traffic.frame_size,
            **({"imix": traffic.imix} if traffic.imix else {}),
            "direction": traffic.direction, "mix_n": traffic.mix_n,
            "mix_m": traffic.mix_m, "seed": traffic.seed, "ports": config.ports.to_dict(),
            "addresses": config.addresses.to_dict(), "learning": config.trial.learning,
            "frame_timeout": trial.frame_timeout, "loss_criterion": loss_criterion(config),
            **({"dns": _dns_settings(config, proc)} if config.dns.enabled else {}),
            "tester_ceiling": ceiling_setting(config), **proc.settings()}


def _dns_settings(config: dict, proc: Procedure) -> dict:
    """What a run's DNS queries were (docs/dns.md), for its report."""
    dns = config.dns
    return {**dns.to_dict(), "query_frame_size": proc.plan.directions[0].foreground["frame_size"]}


def loss_criterion(config: dict) -> str:
    """Which frames count as lost, for the report: RFC 2544's global timeout (frames arriving
    up to trial.timeout after sending ended count), or the per-frame timeout."""
    trial = config.trial
    if config.dns.enabled:
        return (f"per-query timeout {config.dns.timeout:g} s (RFC 8219 §9.2): a query counts when its "
                "answer came within it and was valid")
    if trial.frame_timeout:
        return (f"per-frame timeout {trial.frame_timeout:g} s (within the global timeout "
                f"{trial.timeout:g} s)")
    return f"global timeout {trial.timeout:g} s"


def _tester_info(hello: dict, memory: str) -> dict:
    return {"xlatperf": __version__, "engine": hello.get("engine"), "dpdk": hello.get("dpdk"),
            "protocol": hello.get("protocol"), "tsc_hz": hello.get("tsc_hz"),
            "lcores": hello.get("lcores"), "timestamps": hello.get("timestamps"),
            "memory": memory, "ports": hello.get("ports")}
