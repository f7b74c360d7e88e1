# SPDX-License-Identifier: BSD-3-Clause
"""RFC 9693 phases run through the engine (their requests: stateful_requests.py): phase 1 (the Initiator enumerates, the Responder learns),
the gap D, the validation trial, and the Responder's phase-2 flows from its state table.

Each step of a stateful test:

  1. the DUT's before_trial hook empties its connection table (xlatperf/measure/hooks.py);
  2. phase 1: the Initiator alone sends N frames at rate R (`frames`, docs/protocol.md), every
     combination of the enumerated port/address ranges once, in stateful.order; the Responder
     learns the tuples it receives into an M-entry state table (`learn`);
  3. phase 2, from D seconds after phase 1 started: any stateless trial, with the Responder's
     direction built from the state table (`from_table`, tuples swapped) and the Initiator's
     direction sending ordinary traffic within the same ranges.

connection-rate, teardown-rate and table-capacity (xlatperf/procedures/stateful.py) use phase 1
followed by a validation trial instead of phase 2, started D after phase 1 as siitperf's cttc.sh
starts its validation phase 2.
"""

import time
from dataclasses import dataclass, replace

from ..config.stateful import gap_seconds, reporting_items, table_size
from ..engine.protocol import TrialResult
from ..traffic.plan import TrafficPlan
from ..util.errors import MeasurementError
from .measurer import MeasurerView, TrialSpec
from .stateful_requests import ENGINE_MIN_DURATION, StatefulRequests

PHASE1, VALIDATION, TEARDOWN, CLOSE = "phase1", "validation", "teardown", "close"
# siitperf's rate check (trial.validity = "siitperf"): invalid when sending took longer than
# duration x this.
RATE_SLACK = 1 + 1e-5


def send_deadline(due: float, max_lag: float | None) -> tuple[float, str]:
    """The engine's validity rule for a sender whose last frame is due `due` seconds after its
    first (engine/src/protocol/plan.hpp): the latest it may finish, and that limit in words. The
    schedule rule (max_lag set) allows due + max_lag, siitperf's due x (1 + 1e-5)."""
    if max_lag is not None:
        return due + max_lag, f"N/R + trial.max_lag = {due:.6f} s + {max_lag:g} s"
    return due * RATE_SLACK, f"N/R = {due:.6f} s x {RATE_SLACK:g}"


def send_seconds(result: TrialResult, flow: str) -> float | None:
    """How long the engine took to send `flow`'s frames (its reply's send_time; None unknown)."""
    for entry in (result.reply or {}).get("flows", []):
        if entry.get("name") == flow:
            return entry.get("send_time")
    return None


@dataclass(frozen=True)
class EstablishmentStep:
    """Phase 1 with `connections` frames at `rate` from an empty DUT table, the state table the
    Responder learned, and the validation trial (None: not run). It passes when every phase-1
    frame reached the Responder, the table filled, and validation lost nothing (RFC 9693 §4.4
    and its validation; methodology §12.6-12.7). Duck-types TrialResult for binary_search."""
    connections: int
    table_size: int
    phase1: TrialResult
    entries: int | None = None
    validation: TrialResult | None = None
    # Seconds the engine took to send phase 1 (None: not recorded). The engine checks its
    # sending time against the request's duration, which is ENGINE_MIN_DURATION when N/R is
    # shorter; this keeps the check at N/R itself (the same rule as the engine's, the one
    # trial.validity names).
    send_seconds: float | None = None
    # What phase1 is: the Initiator opening the connections ("open"), or, in teardown-rate over
    # TCP, closing ("fin") or resetting ("rst") the connections its load opened.
    kind: str = "open"
    # teardown-rate over TCP: why the connections to close could not be opened (after
    # stateful.retakes attempts at stateful.rate_phase1); the step then measured no closing.
    load_failure: str | None = None

    @property
    def rate(self) -> int:
        return self.phase1.rate

    def _late(self) -> str | None:
        limit, rule = send_deadline(self.connections / self.rate, self.phase1.max_lag)
        if self.send_seconds is None or self.send_seconds <= limit:
            return None
        return (f"tester could not keep the rate: sent {self.connections:,} frames in "
                f"{self.send_seconds:.6f} s, more than {rule}")

    @property
    def valid(self) -> bool:
        return (self.phase1.valid and self._late() is None
                and (self.validation is None or self.validation.valid))

    @property
    def invalid_reason(self) -> str | None:
        if not self.phase1.valid:
            return f"phase 1: {self.phase1.invalid_reason}"
        if self._late() is not None:
            return f"phase 1: {self._late()}"
        if self.validation is not None and not self.validation.valid:
            return f"validation: {self.validation.invalid_reason}"
        return None

    @property
    def _trials(self) -> list[TrialResult]:
        return [self.phase1] + ([self.validation] if self.validation is not None else [])

    @property
    def rate_not_kept(self) -> bool:
        """Invalid because the tester could not send phase 1 (or validation) at its rate: the
        search was bounded by the tester (xlatperf/procedures/search.py)."""
        return self._late() is not None or any(t.rate_not_kept for t in self._trials)

    # The tester's other faults, as a TrialResult's (search.tester_bound reads them): a step
    # that failed by them alone is the tester's limit, not the DUT's.
    @property
    def dropped_by_tester(self) -> bool:
        return any(t.dropped_by_tester for t in self._trials)

    @property
    def replies_not_sent(self) -> bool:
        return any(t.replies_not_sent for t in self._trials)

    def lost_beyond_tester_fault(self) -> bool:
        return any(t.lost_beyond_tester_fault() for t in self._trials)

    @property
    def filled(self) -> bool:
        """The Responder's state table has its M entries (RFC 9693; siitperf: else "Failed to
        fill state table")."""
        return self.entries is None or self.entries >= self.table_size

    @property
    def received(self) -> int:
        """The frames that completed phase 1's last step: over UDP the Initiator's frames that
        reached the Responder, over TCP the handshakes' ACKs (its last flow, docs/tcp.md)."""
        return list(self.phase1.directions.values())[-1].received

    @property
    def handshakes(self) -> bool:
        """Phase 1 over TCP: the Initiator's SYNs, then the flows the engine added that answer
        them (SYN-ACKs, ACKs)."""
        return len(self.phase1.directions) > 1

    def failure(self) -> str | None:
        """Why the step fails, or None when it passes: the Initiator sent its N frames and each
        of phase 1's flows delivered all it sent (over TCP: every handshake completed)."""
        if not self.valid:
            return self.invalid_reason
        flows = list(self.phase1.directions.values())
        if flows[0].sent != self.connections or any(f.received != f.sent for f in flows) \
                or self.received != self.connections:
            what = {"fin": "closings (FIN, FIN-ACK, ACK) completed",
                    "rst": "RSTs reached the Responder"}.get(self.kind) or (
                "handshakes completed" if self.handshakes else "frames reached the Responder")
            phase = "phase 1" if self.kind == "open" else self.kind.upper()
            return f"{phase}: {self.received:,} of {self.connections:,} {what}"
        if not self.filled:
            return f"failed to fill state table: {self.entries:,} of {self.table_size:,} entries"
        if self.validation is not None and not self.validation.passes(0.0):
            counts = list(self.validation.directions.values())
            got = sum(d.received for d in counts)
            return f"validation: {got:,} of {sum(d.sent for d in counts):,} frames arrived"
        return None

    def passes(self, loss_tolerance: float = 0.0) -> bool:
        return self.failure() is None

    def to_dict(self) -> dict:
        return {"connections": self.connections, "table_size": self.table_size,
                "rate": self.rate, "valid": self.valid, "passed": self.passes(),
                "failure": self.failure(), "state_table_entries": self.entries,
                "send_seconds": self.send_seconds, "kind": self.kind,
                "phase1": self.phase1.to_dict(),
                "validation": self.validation.to_dict() if self.validation else None}


# --------------------------------------------------------------------------------------------
# Trial requests
# --------------------------------------------------------------------------------------------


class StatefulTest:
    """Runs a stateful test's phase 1 (and validation, or the closing of a teardown) through a
    TrialSession (runner.py), with the requests StatefulRequests builds for a TrafficPlan (whose
    config has the DUT MACs resolved). phase2: phase-2 trials follow (the runner's
    stateful.enabled procedures); the establishment procedures pass False."""

    def __init__(self, plan: TrafficPlan, phase2: bool = True):
        self.requests = StatefulRequests(plan, phase2)
        self.config = plan.config
        self.settings = self.config.stateful
        self.forward, self.tcp = self.requests.forward, self.requests.tcp

    # -- running ---------------------------------------------------------------------------

    def run_phase1(self, session, connections: int, rate: int, table: int,
                   extra: dict | None = None) -> EstablishmentStep:
        """Phase 1, recorded as phase "phase1" with `connections`, the engine's state_table,
        send_seconds and `extra` (e.g. the attempt)."""
        request = self.requests.phase1_request(connections, rate, table)
        holder: dict = {}

        def annotate(result):
            holder["table"] = (result.reply or {}).get("state_table")
            holder["send"] = send_seconds(result, self.forward)
            return {"connections": connections, "state_table": holder["table"],
                    "send_seconds": holder["send"], **(extra or {})}
        result = session.run_request(request, rate, PHASE1, annotate)
        state = holder.get("table")
        if state is None and result.valid:
            raise MeasurementError("the engine's phase-1 reply has no state_table: does it "
                                   "support stateful tests (docs/protocol.md)?")
        return EstablishmentStep(connections, table, result,
                                 entries=None if state is None else int(state["entries"]),
                                 send_seconds=holder.get("send"))

    def _wait_gap(self, session, started: float, connections: int, rate: int) -> None:
        """Sleeps until D (gap_seconds for this N and R) after `started`, phase 1's start."""
        remaining = gap_seconds(self.config, connections, rate) - (time.monotonic() - started)
        if remaining > 0:
            session.reporter.pausing(remaining)
            time.sleep(remaining)

    def establish(self, session, connections: int, rate: int, validate: bool,
                  table: int | None = None) -> EstablishmentStep:
        """One step of connection-rate / table-capacity / teardown-rate: the DUT hook (empty
        table), phase 1, and, when phase 1 passed and `validate`, the validation trial at
        validation_factor x rate, D after phase 1 started (siitperf's cttc.sh validates in its
        phase 2, which starts D = N/R + 2T after phase 1; RFC 9693 requires D >= N/R + T)."""
        table = table_size(self.config, connections) if table is None else table
        session.begin_step()
        started = time.monotonic()
        step = self.run_phase1(session, connections, rate, table)
        if not validate or step.failure() is not None:
            session.end_step()
            return step
        self._wait_gap(session, started, connections, rate)
        entries = step.entries if step.entries is not None else table
        speed = max(1, int(self.settings.validation_factor * rate))
        validation = session.run_request(self.requests.validation_request(entries, speed), speed,
                                         VALIDATION, lambda r: {"connections": connections})
        session.end_step()
        return EstablishmentStep(connections, table, step.phase1, step.entries, validation,
                                 step.send_seconds)

    def close(self, session, connections: int, rate: int) -> EstablishmentStep:
        """One step of teardown-rate over TCP (stateful.teardown "fin" or "rst"): the DUT hook
        (empty table), a phase 1 opening `connections` at stateful.rate_phase1 (taken again, hook
        first, up to stateful.retakes times when it failed: loading is a precondition), then
        closing them all at `rate`. Passes when every closing completed: the three segments of
        each FIN exchange, or every RST, reached the other side through the DUT. A load that
        failed every attempt closes nothing: its step says so (`load_failure`), and is no
        measurement of closing at `rate`."""
        s = self.settings
        table = table_size(self.config, connections)
        for attempt in range(1, 2 + s.retakes):
            session.begin_step()
            load = self.run_phase1(session, connections, s.rate_phase1, table, {"attempt": attempt})
            if load.failure() is None:
                break
            session.end_step()
        else:  # not loaded: nothing closed at this rate, saying why (recorded, for --resume)
            failed = TrialResult(rate=rate, valid=False, directions={},
                                 invalid_reason=f"loading: {load.failure()}")
            session.record(failed, 0.0, CLOSE, {"connections": connections, "load_failure": load.failure()})
            return EstablishmentStep(connections, table, failed, kind=s.teardown, load_failure=load.failure())
        holder: dict = {}

        def annotate(result):
            holder["send"] = send_seconds(result, self.forward)
            return {"connections": connections, "send_seconds": holder["send"]}
        result = session.run_request(self.requests.close_request(connections, rate), rate, CLOSE, annotate)
        session.end_step()
        return EstablishmentStep(connections, table, result, send_seconds=holder.get("send"),
                                 kind=s.teardown)

    def before_phase2(self, session, rate: int) -> TrialResult | None:
        """Phase 1 and the gap before a phase-2 trial (the session has begun the step and run
        the before_trial hook). A phase 1 that did not prepare phase 2 (its state table did not
        fill, or the tester could not send it at R, which also leaves frames unsent) is taken
        again, hook first, up to stateful.retakes times (siitperf's binary-rate-alg.sh-sf
        retakes "Failed to fill state table" without a bound); every attempt is recorded with
        its number. Returns None when phase 2 may run, else the step's invalid result (RFC
        9693: a state table that did not fill makes the trial invalid, never a measurement)."""
        s = self.settings
        attempts = 1 + s.retakes
        for attempt in range(1, attempts + 1):
            if attempt > 1 and session.hooks is not None:  # empty the DUT's table again
                session.hooks.before("trial", {"procedure": session.procedure,
                                               "repetition": session.repetition,
                                               "step": session.step, "attempt": attempt})
            started = time.monotonic()
            step = self.run_phase1(session, s.connections, s.rate_phase1,
                                   table_size(self.config), {"attempt": attempt})
            if step.valid and step.filled:
                if self.tcp:
                    self.requests.check_mss(step.phase1)
                self._wait_gap(session, started, s.connections, s.rate_phase1)
                return None
        reason = step.invalid_reason if not step.valid else (
            f"failed to fill state table: {step.entries:,} of {step.table_size:,} entries")
        if attempts > 1:
            reason += f" (the last of {attempts} attempts, stateful.retakes = {s.retakes})"
        return TrialResult(rate=rate, valid=False, directions={}, invalid_reason=reason)

    # -- reporting -------------------------------------------------------------------------

    def report(self) -> dict:
        """The RFC 9693 reporting items that the configuration determines (methodology
        §12.10): roles, N, M, R, T, D, enumeration and ranges, selection, validation, DUT;
        and how this tester times them: validation starts D after phase 1 (D for that step's
        N and R), and a phase 1 or validation shorter than the engine's shortest trial is sent
        in a window of that length, its frame count and rate unchanged."""
        # Over TCP validation sends data (docs/tcp.md).
        validation = ({"validation_segments": "one TCP data segment from the Responder over each "
                                              "learned connection"} if self.tcp else {})
        return {**reporting_items(self.config), **validation,
                "validation_start": "D after phase 1 started",
                "shortest_window": ENGINE_MIN_DURATION}


class Phase2Measurer(MeasurerView):
    """RFC 9693: every trial of `inner` (the session) a phase-2 trial, after its phase 1 and the
    gap D; the runner composes it around the session when stateful.enabled. A phase 1 that did
    not prepare phase 2 ends the step unsent (StatefulTest.before_phase2)."""

    def __init__(self, inner, test: StatefulTest):
        super().__init__(inner)
        self.test = test

    def run_trial(self, spec: TrialSpec, annotate=None, *, retakes: int | None = None) -> TrialResult:
        return self.inner.run_trial(replace(spec, prepare=self._phase1), annotate, retakes=retakes)

    def _phase1(self, session, rate: int, flows: list[dict]) -> list[dict] | TrialResult:
        failed = self.test.before_phase2(session, rate)
        return failed if failed is not None else self.test.requests.phase2_flows(flows)
