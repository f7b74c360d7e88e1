# SPDX-License-Identifier: BSD-3-Clause
"""The measurer: one trial at a load for a duration, with everything that surrounds it.

TrialSession.run_trial(spec) keeps trial.pause between trials, runs the learning trial before
the first step (RFC 2544 §23 b), calls the DUT's before_trial hook, runs what the spec prepares
first (RFC 9693 phase 1 and the gap before a phase-2 trial: Phase2Measurer), sends the request
to the engine (with the DUT's during_trial
hook running meanwhile), samples the DUT's counters
(dut.counters), appends the trial's record to trials.jsonl and calls the DUT's after_trial
hook. Procedures (xlatperf/procedures/) see only this interface.
"""

import base64
import binascii
import time
from dataclasses import replace

from ..frames.kinds import wire_version
from ..frames.trial import side_vlan
from ..engine.client import Engine
from ..engine.protocol import TrialResult
from ..traffic.plan import TrafficPlan, imix_size_names
from ..util.errors import ConfigError, EngineError, MeasurementError
from ..util.files import utc_timestamp
from .measurer import Measurer, TrialSpec
from .peer_drops import VethPeers, with_peer_drops
from .request import TrialRequest
from .stateful_requests import window
from .store import ResultStore

# Records that are not a procedure's steps: the learning trial, RFC 9693 phase 1 and validation.
AUXILIARY_PHASES = ("learning", "phase1", "validation")


def is_step_record(record: dict) -> bool:
    """Whether a trials.jsonl record is one of the procedure's steps: not an auxiliary phase,
    and not an attempt that was taken again (run_trial's retakes)."""
    return record.get("phase") not in AUXILIARY_PHASES and not record.get("retaken")


def retakeable(result: TrialResult) -> bool:
    """An invalid trial worth taking again: a link that went down during it (the engine
    waits for the link before the next), or the tester's own doing (its pacing, its ports'
    drops) by a hiccup, not because the sender met its capacity (capacity_shown), and its
    losses no more than that explains (else the DUT failed it anyway)."""
    return result.link_went_down or (result.tester_fault and not result.capacity_shown
                                     and not result.lost_beyond_tester_fault())


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


class TrialSession(Measurer):
    """`run_trial(spec)` for procedures: builds the request, keeps trial.pause between trials,
    records every trial and forwards progress to the reporter."""

    def __init__(self, engine: Engine, plan: TrafficPlan, config: dict, store: ResultStore,
                 reporter: Reporter, procedure: str):
        self.engine, self.plan, self.config = engine, plan, config
        self.store, self.reporter, self.procedure = store, reporter, procedure
        self.repetition = 0
        self.step = 0
        self.phase: str | None = None
        # (rate, duration) of the trial the engine is running
        self._in_flight: tuple[int, float] | None = None
        self._in_flight_sizes: dict = {}       # its IMIX streams' sizes (imix_size_names)
        self._sizes_named = plan.frames.named   # the stack the configured sizes name
        self._last_trial_end: float | None = None
        # DNS queries vary no address, and a query waits dns.timeout for its answer: the
        # resolutions of a trial's first moments cost it nothing (docs/dns.md).
        self._needs_learning = learning_needed(config) and plan.through_dut and not config.dns.enabled
        self.hooks = None  # set by run_procedure: the DUT hooks (xlatperf/measure/hooks.py)
        self.veth_peers = VethPeers.of(config)   # read around every trial (peer_drops.py)

    # -- the interface procedures use ---------------------------------------------------------
    # run_trial / run_request (a trial), begin_step / end_step (what precedes and follows a
    # step: DUT hooks), begin_phase (labels
    # the records that follow), timed_hook (a timed DUT command), record (a step's own record),
    # tester (what the engine said about itself). Nothing else of the session, the engine, the
    # hooks or the reporter is for procedures.

    @property
    def tester(self) -> dict:
        """The engine's hello reply: ports, lcores, timestamp capabilities."""
        return getattr(self.engine, "info", None) or {}

    def begin_phase(self, phase: str | None) -> None:
        """Label the records of the following trials (e.g. selftest's "check" and "search")."""
        self.phase = phase

    def timed_hook(self, hook: str, context: dict):
        """Run the DUT's `hook` command and time it (RFC 9693 tear-down); the HookRun."""
        if self.hooks is None:
            raise MeasurementError(f"dut.{hook}: no DUT hooks in this measurement")
        return self.hooks.timed(hook, context)

    def start_repetition(self, number: int) -> None:
        self.repetition, self.step = number, 0

    def notify(self, context: dict) -> None:
        self.reporter.before_trial({"repetition": self.repetition, "step": self.step + 1,
                                    "phase": self.phase, **context})

    def run_trial(self, spec: TrialSpec, annotate=None, *, retakes: int | None = None) -> TrialResult:
        """annotate(result) -> dict: extra fields for the trial's record (e.g. MLRsearch's
        classification after the trial).

        A trial that is invalid by the tester's own doing (it fell behind its schedule, or its
        ports dropped frames) and whose losses that explains is no result about the DUT: it is
        taken again, up to `retakes` times (default trial.retakes), pause and before_trial hook
        first. Every attempt is recorded; the ones taken again with "retaken": true (no step of
        the procedure), the last with its attempt number and what the earlier ones showed."""
        retakes = self.config.trial.retakes if retakes is None else retakes
        earlier: list[TrialResult] = []
        while True:
            result, retake = self._attempt(spec, annotate, earlier, may_retake=len(earlier) < retakes)
            if not retake:
                return result
            earlier.append(result)

    def _attempt(self, spec: TrialSpec, annotate, earlier: list[TrialResult],
                 may_retake: bool) -> tuple[TrialResult, bool]:
        """One attempt of run_trial's step: its result, and whether to take it again."""
        trial_config = self.config.trial
        attempt = len(earlier) + 1
        if attempt == 1:
            self.begin_step()
        else:
            self._begin_retake(spec.rate, attempt)
        plan = spec.plan or self.plan
        flows = plan.flows(spec.rate)
        if spec.prepare is not None:
            prepared = spec.prepare(self, spec.rate, flows)
            if isinstance(prepared, TrialResult):  # the step ends unsent: never a measurement
                record = self.record(prepared, 0.0, extra={"phase2": "not run"})
                self.reporter.after_trial(record, prepared)
                self.end_step()
                return prepared, False
            flows = prepared
        for step in spec.rate_steps:
            plan.check_rate(step["rate"])
        if spec.rate_steps:
            flows = [{**flow, "rate_steps": [dict(step) for step in spec.rate_steps]} for flow in flows]
        duration = spec.duration
        if spec.frames is not None:
            for flow in flows:
                flow["frames"] = spec.frames
            duration = duration or window(spec.frames, spec.rate)
        # A DNS query's reply counts within dns.timeout (RFC 8219 §9.2), the trial's frame timeout.
        dns = self.plan.dns   # (a procedure's own plans, e.g. scalability's clients, send no DNS)
        frame_timeout = self.config.dns.timeout if dns else trial_config.frame_timeout
        delay = {**({"frame_timeout": frame_timeout} if frame_timeout else {}), **(spec.delay or {})}
        request = TrialRequest.from_config(self.config, flows, duration or trial_config.duration,
                                           finish_early=trial_config.finish_early,
                                           delay=delay, losses=spec.losses, dns=dns)
        # dut.during_trial (e.g. the reset of RFC 6201) runs while the engine sends.
        during = self.hooks.during_trial(self._hook_context()) if self.hooks is not None \
            else None
        if during is not None:
            during.start()
        sent = time.perf_counter()
        try:
            result = self._exchange(request, spec.rate)
        except BaseException:
            if during is not None:
                during.cancel()
            raise
        retake = may_retake and retakeable(result)
        result = replace(result, attempt=attempt,
                         earlier_attempts=tuple(e.attempt_summary() for e in earlier))
        extra = during.finish(time.perf_counter() - sent) if during is not None else {}
        # Frame k of a flow asks the k-th name from the trial's first (docs/dns.md).
        names = self.plan.names_sent(sum(d.planned or d.sent for d in result.directions.values())) if dns else None
        if names is not None:
            extra["dns_names"] = names
        if retake:
            extra["retaken"] = True
        elif annotate is not None:
            extra |= annotate(result)
        extra |= self._counters()
        record = self._record(result, request.duration, extra=extra)
        self.reporter.after_trial(record, result)
        self.end_step()
        return result, retake

    def _begin_retake(self, rate: int, attempt: int) -> None:
        """What precedes a retake of the current step: trial.pause and the DUT's before_trial
        hook (with the attempt's number), as before the step's first attempt."""
        self._pause(self.config.trial.pause)
        self.reporter.before_trial({"repetition": self.repetition, "step": self.step,
                                    "phase": self.phase, "rate": rate, "attempt": attempt})
        if self.hooks is not None:
            self.hooks.before("trial", self._hook_context(attempt=attempt))

    def _hook_context(self, **more) -> dict:
        return {"procedure": self.procedure, "repetition": self.repetition, "step": self.step,
                **({"phase": self.phase} if self.phase else {}), **more}

    def _counters(self, phase: str | None = None) -> dict:
        """The DUT's counters right after a trial (dut.counters), for its record."""
        if self.hooks is None:
            return {}
        return self.hooks.sample(self._hook_context(**({"phase": phase} if phase else {})))

    def _exchange(self, request: TrialRequest, rate: int) -> TrialResult:
        """Runs one trial request on the engine, keeping what abort() needs to record it."""
        self._in_flight = (rate, request.duration)
        self._in_flight_sizes = imix_size_names(self._sizes_named, request.flows)
        peers_before = self.veth_peers.read()
        try:
            reply = self.engine.trial(request.to_json(), on_progress=self.reporter.progress)
        finally:
            self._last_trial_end = time.monotonic()
        reply = with_peer_drops(reply, self.veth_peers, peers_before, self.veth_peers.read())
        self._in_flight = None
        return TrialResult.from_reply(rate, reply, request.duration, self._in_flight_sizes,
                                      request.max_lag, df_small=self.config.checks.df_small)

    def begin_step(self) -> None:
        """What precedes every step: trial.pause, the step count, the learning trial before the
        first step, and the DUT's before_trial hook (stateful tests: before phase 1)."""
        self._pause(self.config.trial.pause)
        self.step += 1
        if self._needs_learning:
            self._needs_learning = False
            self._learn()
        if self.hooks is not None:
            self.hooks.before("trial", self._hook_context())

    def end_step(self) -> None:
        """What follows every step (run_trial calls it; a procedure that builds its steps from
        run_request calls it after the step's last trial): the DUT's after_trial hook."""
        if self.hooks is not None:
            self.hooks.after("trial", self._hook_context())

    def run_request(self, request: TrialRequest, rate: int, phase: str,
                    annotate=None) -> TrialResult:
        """A trial request the procedure built itself (RFC 9693 phase 1, validation), sent as
        it is and recorded with `phase` in the current step."""
        self.reporter.before_trial({"repetition": self.repetition, "step": self.step,
                                    "phase": phase, "rate": rate})
        result = self._exchange(request, rate)
        record = self.record(result, request.duration, phase,
                             {**(annotate(result) if annotate is not None else {}),
                              **self._counters(phase)})
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
        rate = min(self.config.trial.learning_rate, plan.max_rate)
        request = TrialRequest.from_config(self.config, plan.flows(rate), max(0.1, count / rate))
        self.reporter.before_trial({"repetition": self.repetition, "step": 0, "phase": "learning",
                                    "rate": rate})
        result = self._exchange(request, rate)
        phase, step = self.phase, self.step
        self.phase, self.step = "learning", 0
        try:
            self._record(result, request.duration)
        finally:
            self.phase, self.step = phase, step

    def abort(self) -> None:
        """Abort the engine; an interrupted trial's (invalid) reply still goes to trials.jsonl."""
        reply = self.engine.abort()
        if reply is not None and self._in_flight is not None:
            rate, duration = self._in_flight   # the running request's, not trial.duration
            self._record(TrialResult.from_reply(rate, reply, duration,
                                                size_names=self._in_flight_sizes,
                                                df_small=self.config.checks.df_small),
                         duration, aborted=True)

    def _pause(self, seconds: float) -> None:
        """RFC 2544 §23 e: let the DUT settle between trials."""
        if self._last_trial_end is None:
            return
        remaining = seconds - (time.monotonic() - self._last_trial_end)
        if remaining > 0:
            self.reporter.pausing(remaining)
            time.sleep(remaining)

    def _write_captures(self, reply: dict) -> dict:
        """The trial's capture files under the results directory, named after the record
        (repetition, step, phase) and the receiving port."""
        phase = f"-{self.phase}" if self.phase else ""
        return capture_files(reply, lambda port, data: self.store.write_capture(
            f"r{self.repetition}-s{self.step}{phase}-port{port}", data))

    def _record(self, result: TrialResult, duration: float, aborted: bool = False,
                extra: dict | None = None) -> dict:
        reply = result.reply or {}
        record = {"procedure": self.procedure, "repetition": self.repetition, "step": self.step,
                  **({"phase": self.phase} if self.phase else {}),
                  **result.to_dict(),
                  "duration": duration, "elapsed": reply.get("elapsed"),
                  "foreign": {str(p.get("index")): p.get("foreign", 0)
                              for p in reply.get("ports", [])},
                  # IP fragments (of test frames a DUT fragmented: not test frames), where any.
                  **({"fragmented": fragmented} if any(fragmented := {
                      str(p.get("index")): p.get("fragmented", 0) for p in reply.get("ports", [])}.values()) else {}),
                  # DNS: the queries each answering port answered, could not answer, could not send.
                  **({"dns_answers": answers} if (answers := {
                      str(p["index"]): p["dns"] for p in reply.get("ports", []) if any(p.get("dns", {}).values())})
                     else {}),
                  "timestamp": utc_timestamp()}
        if aborted:
            record["aborted"] = True
        if extra:
            record |= extra
        captures = self._write_captures(reply)
        if captures:
            record["captures"] = captures
        self.store.record_trial(record)
        return record


def capture_files(reply: dict, name_of) -> dict:
    """The pcapng files of a trial reply's ports (docs/protocol.md "Capture"): for each port
    with a capture, {port index: {"file": name_of(index, bytes), "frames", "missed"}}. The
    base64 text is dropped from the reply once written (a kept reply stays small)."""
    files = {}
    for port in reply.get("ports", []):
        capture = port.get("capture")
        if not capture or "pcapng" not in capture:
            continue
        try:
            data = base64.b64decode(capture.pop("pcapng"), validate=True)
        except (binascii.Error, TypeError, ValueError) as exc:
            raise EngineError(f"the engine's capture of port {port.get('index')} is not base64: "
                              f"{exc}") from None
        files[str(port.get("index"))] = {"file": name_of(port.get("index"), data),
                                         "frames": capture.get("frames", 0),
                                         "missed": capture.get("missed", 0)}
    return files


def resolve_dut_macs(engine: Engine, config: dict) -> dict:
    """Fills in every empty `dut_mac` by asking the engine to resolve the side's `dut_ipvX`
    (ARP or Neighbor Solicitation from the side's own address); returns the updated config."""
    resolved = {}
    for side, port in (("left", 0), ("right", 1)):
        if config.side(side).dut_mac:
            continue
        version = wire_version(config, side)
        target = getattr(config.side(side), f"dut_ipv{version}")
        if not target:
            raise ConfigError(f'{side}.dut_mac = "": set the DUT\'s MAC address, or '
                              f'{side}.dut_ipv{version} so that the tester resolves it')
        own = (getattr(config.side(side), f"next_hop_ipv{version}")
               or getattr(config.side(side), f"ipv{version}"))
        vlan = side_vlan(config, side)  # the DUT answers on the side's VLAN
        reply = engine.request("resolve", {"port": port, "ip_version": version, "own_ip": own,
                                           "target": target, "timeout": 3.0,
                                           **({"vlan": vlan} if vlan else {})},
                               reply_timeout=10.0)
        resolved[f"{side}.dut_mac"] = reply["mac"]
    return config.changed(resolved) if resolved else config


def learning_needed(config: dict) -> bool:
    choice = config.trial.learning
    if choice != "auto":
        return choice == "yes"
    return any(getattr(config.addresses, side) != "fixed" for side in ("left", "right"))


def learning_plan(config: dict, plan: TrafficPlan) -> tuple[TrafficPlan, int]:
    """A plan whose varying addresses increase through their whole range, and the number of
    frames per direction that visits each address once."""
    addresses, changes, count = config.addresses, {}, 1
    for side in ("left", "right"):
        if getattr(addresses, side) != "fixed":
            changes[f"addresses.{side}"] = "increasing"
            count = max(count, getattr(addresses, f"{side}_max")
                        - getattr(addresses, f"{side}_min") + 1)
    ports = [plan.ports["left"], plan.ports["right"]]
    return TrafficPlan(config.changed(changes), ports, through_dut=plan.through_dut), count
