# SPDX-License-Identifier: BSD-3-Clause
"""RFC 9693 phases through the engine: phase 1 (the Initiator enumerates, the Responder learns),
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
followed by a validation trial instead of phase 2.
"""

import time
from dataclasses import dataclass

from ..config.stateful import (check_stateful, enumeration, gap_seconds, reporting_items, roles,
                               table_size)
from ..engine.protocol import TrialResult
from ..traffic.plan import PORT_INDEX, TrafficPlan
from ..util.errors import MeasurementError

PHASE1, VALIDATION, TEARDOWN = "phase1", "validation", "teardown"
PROGRESS_INTERVAL = 1.0


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

    @property
    def rate(self) -> int:
        return self.phase1.rate

    @property
    def valid(self) -> bool:
        return self.phase1.valid and (self.validation is None or self.validation.valid)

    @property
    def invalid_reason(self) -> str | None:
        if not self.phase1.valid:
            return f"phase 1: {self.phase1.invalid_reason}"
        if self.validation is not None and not self.validation.valid:
            return f"validation: {self.validation.invalid_reason}"
        return None

    @property
    def received(self) -> int:
        return sum(d.received for d in self.phase1.directions.values())

    def failure(self) -> str | None:
        """Why the step fails, or None when it passes."""
        if not self.valid:
            return self.invalid_reason
        sent = sum(d.sent for d in self.phase1.directions.values())
        if sent != self.connections or self.received != sent:
            return (f"phase 1: {self.received:,} of {self.connections:,} frames reached the "
                    "Responder")
        if self.entries is not None and self.entries < self.table_size:
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
                "phase1": self.phase1.to_dict(),
                "validation": self.validation.to_dict() if self.validation else None}


# --------------------------------------------------------------------------------------------
# Trial requests
# --------------------------------------------------------------------------------------------


def _single_direction(config: dict, direction: str) -> dict:
    changed = {section: dict(values) for section, values in config.items()}
    changed["traffic"]["direction"] = direction
    return changed


class StatefulTest:
    """Builds the stateful requests for a TrafficPlan (whose config has the DUT MACs resolved)
    and runs phase 1 (and validation) through a TrialSession (runner.py)."""

    def __init__(self, plan: TrafficPlan):
        config = plan.config
        check_stateful(config)
        self.config = config
        self.settings = config["stateful"]
        self.initiator, self.responder, self.forward, self.backward = roles(config)
        ports = [plan.ports["left"], plan.ports["right"]]
        through = plan.through_dut
        self.initiator_plan = TrafficPlan(_single_direction(config, self.forward), ports,
                                          through_dut=through)
        self.responder_plan = TrafficPlan(_single_direction(config, self.backward), ports,
                                          through_dut=through)
        self.responder_port = PORT_INDEX[self.responder]
        self.enumeration = enumeration(config)
        self.gap = gap_seconds(config)

    @property
    def max_rate(self) -> int:
        """The medium's maximum rate of phase-1 frames."""
        return self.initiator_plan.max_rate

    # -- requests --------------------------------------------------------------------------

    def phase1_request(self, connections: int, rate: int, table: int) -> dict:
        (flow,) = self.initiator_plan.flows(rate)
        flow["frames"] = connections
        foreground = flow["foreground"]
        foreground["vary"] = [dict(v) for v in self.enumeration.vary]
        if self.enumeration.enumerated:
            foreground["enumerate"] = self.settings["order"]
        return {"duration": connections / rate, "timeout": self.settings["timeout_phase1"],
                "finish_early": True, "progress_interval": PROGRESS_INTERVAL,
                "seed": self.config["traffic"]["seed"], "flows": [flow],
                "learn": {"port": self.responder_port, "flow": 0, "table_size": table,
                          "ip_version": self.config[self.responder]["ip_version"]}}

    def _from_table(self, flow: dict, selection: str) -> dict:
        """The Responder's flow: addresses and ports from the state table, so no vary fields,
        and no background (the engine builds every frame of such a flow from the table)."""
        flow = {**flow, "from_table": {"port": self.responder_port, "selection": selection},
                "mix": {"n": 1, "m": 1}, "foreground": {**flow["foreground"], "vary": []}}
        flow.pop("background", None)
        return flow

    def validation_request(self, entries: int, rate: int) -> dict:
        """Responder only: each state-table entry once, in increasing order (methodology §12.7)."""
        (flow,) = self.responder_plan.flows(rate)
        flow = self._from_table(flow, "increasing")
        flow["frames"] = entries
        return {"duration": entries / rate, "timeout": self.settings["timeout_phase1"],
                "finish_early": True, "progress_interval": PROGRESS_INTERVAL,
                "seed": self.config["traffic"]["seed"], "flows": [flow]}

    def phase2_flows(self, flows: list[dict]) -> list[dict]:
        """Phase 2: the Responder's direction answers from the state table."""
        return [self._from_table(f, self.settings["selection"]) if f["name"] == self.backward
                else f for f in flows]

    # -- running ---------------------------------------------------------------------------

    def run_phase1(self, session, connections: int, rate: int, table: int) -> EstablishmentStep:
        request = self.phase1_request(connections, rate, table)
        holder: dict = {}

        def annotate(result):
            holder["table"] = (result.reply or {}).get("state_table")
            return {"connections": connections, "state_table": holder["table"]}
        result = session.run_request(request, rate, PHASE1, annotate)
        state = holder.get("table")
        if state is None and result.valid:
            raise MeasurementError("the engine's phase-1 reply has no state_table: does it "
                                   "support stateful tests (docs/protocol.md)?")
        return EstablishmentStep(connections, table, result,
                                 entries=None if state is None else int(state["entries"]))

    def establish(self, session, connections: int, rate: int, validate: bool,
                  table: int | None = None) -> EstablishmentStep:
        """One step of connection-rate / table-capacity / teardown-rate: the DUT hook (empty
        table), phase 1, and, when phase 1 passed and `validate`, the validation trial at
        validation_factor x rate."""
        table = table_size(self.config, connections) if table is None else table
        session.begin_step()
        step = self.run_phase1(session, connections, rate, table)
        if not validate or step.failure() is not None:
            return step
        entries = step.entries if step.entries is not None else table
        speed = max(1, int(self.settings["validation_factor"] * rate))
        validation = session.run_request(self.validation_request(entries, speed), speed,
                                         VALIDATION, lambda r: {"connections": connections})
        return EstablishmentStep(connections, table, step.phase1, step.entries, validation)

    def before_phase2(self, session, rate: int) -> TrialResult | None:
        """Phase 1 and the gap before a phase-2 trial (the session has begun the step). Returns
        None when phase 2 may run, else the step's invalid result (RFC 9693: a state table
        that did not fill makes the trial invalid, never a measurement)."""
        started = time.monotonic()
        s = self.settings
        step = self.run_phase1(session, s["connections"], s["rate_phase1"], table_size(self.config))
        if not step.phase1.valid or (step.entries is not None and step.entries < step.table_size):
            reason = step.invalid_reason if not step.phase1.valid else (
                f"failed to fill state table: {step.entries:,} of {step.table_size:,} entries")
            return TrialResult(rate=rate, valid=False, directions={}, invalid_reason=reason)
        remaining = self.gap - (time.monotonic() - started)
        if remaining > 0:
            session.reporter.pausing(remaining)
            time.sleep(remaining)
        return None

    # -- reporting -------------------------------------------------------------------------

    def report(self) -> dict:
        """The RFC 9693 reporting items that the configuration determines (methodology
        §12.10): roles, N, M, R, T, D, enumeration and ranges, selection, validation, DUT."""
        return reporting_items(self.config)
