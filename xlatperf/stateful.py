# SPDX-License-Identifier: BSD-3-Clause
"""RFC 9693 stateful NATxy tests: roles, phases, the configuration rules and the searches.

The Initiator (stateful.initiator: the left or right tester port) may open connections through
the DUT; the Responder (the other port) only answers, with four-tuples it learned. Each step of a
stateful test:

  1. the DUT's before_trial hook empties its connection table (xlatperf/dut.py);
  2. phase 1: the Initiator alone sends N frames at rate R (`frames`, docs/protocol.md), every
     combination of the enumerated port/address ranges once, in stateful.order; the Responder
     learns the tuples it receives into an M-entry state table (`learn`);
  3. phase 2, from D seconds after phase 1 started: any stateless trial, with the Responder's
     direction built from the state table (`from_table`, tuples swapped) and the Initiator's
     direction sending ordinary traffic within the same ranges.

connection-rate, teardown-rate and table-capacity (xlatperf/statefulprocedure.py) use phase 1
followed by a validation trial instead of phase 2. This module holds what does not need the
engine: the rules of check_stateful(), the trial requests (StatefulTest), the step result
(EstablishmentStep), and the capacity search on any `max_rate(connections, lo, hi)` function.
"""

import math
import time
from dataclasses import dataclass, field
from typing import Callable

from .config import foreground_addresses, has_background
from .errors import ConfigError, MeasurementError
from .flows import PORT_INDEX, TrafficPlan, varying_fields
from .procedures import TrialResult

PHASE1, VALIDATION, TEARDOWN = "phase1", "validation", "teardown"
PORT_FIELDS = ("src_port", "dst_port")
ADDRESS_FIELDS = ("src_ip", "dst_ip")
ENUMERATED = {"none": (), "ports": PORT_FIELDS, "addresses": ADDRESS_FIELDS,
              "both": PORT_FIELDS + ADDRESS_FIELDS}
PROGRESS_INTERVAL = 1.0


# --------------------------------------------------------------------------------------------
# Roles and the enumerated fields
# --------------------------------------------------------------------------------------------

def roles(config: dict) -> tuple[str, str, str, str]:
    """(Initiator side, Responder side, Initiator's direction, Responder's direction)."""
    initiator = config["stateful"]["initiator"]
    responder = "right" if initiator == "left" else "left"
    forward = "forward" if initiator == "left" else "reverse"
    backward = "reverse" if forward == "forward" else "forward"
    return initiator, responder, forward, backward


def foreground_frames(frames: int, mix_n: int, mix_m: int) -> int:
    """How many of `frames` frames are foreground: frame k is when k % n < m."""
    return (frames // mix_n) * mix_m + min(frames % mix_n, mix_m)


def _field_key(config: dict, vary: dict) -> str:
    """The configuration key that makes a vary field vary."""
    initiator, responder, direction, _ = roles(config)
    name = vary["field"]
    if name in PORT_FIELDS:
        return f"ports.{direction}_{name[:3]}"
    return f"addresses.{initiator if name == 'src_ip' else responder}"


@dataclass(frozen=True)
class Enumeration:
    """The phase-1 vary list of the Initiator's foreground frames: the enumerated fields get
    mode "enumerate"; `combinations` is the product of their range sizes (1 with none)."""
    vary: list[dict]
    enumerated: list[dict]
    varying: list[dict]          # every varying port or 16-bit address field, enumerated or not
    combinations: int


def enumeration(config: dict) -> Enumeration:
    initiator, _, direction, _ = roles(config)
    chosen = ENUMERATED[config["stateful"]["enumerate"]]
    vary, enumerated, varying = [], [], []
    for entry in varying_fields(config, direction, config[initiator]["ip_version"]):
        whole = entry.get("bits", 16) == 16  # not RFC 2544 §12's 8-bit network byte
        if whole:
            varying.append(entry)
        if whole and entry["field"] in chosen:
            entry = {**entry, "mode": "enumerate"}
            enumerated.append(entry)
        vary.append(entry)
    combinations = math.prod(e["max"] - e["min"] + 1 for e in enumerated)
    return Enumeration(vary, enumerated, varying, combinations)


def _error(key: str, value, requirement: str) -> ConfigError:
    shown = f'"{value}"' if isinstance(value, str) else value
    return ConfigError(f"{key} = {shown}: {requirement}")


def check_stateful(config: dict) -> None:
    """The RFC 9693 / siitperf rules (methodology §12, §14 items 26-29); ConfigError names the
    keys. Called by config validation when stateful.enabled, and by the stateful procedures."""
    s = config["stateful"]
    initiator, responder, direction, _ = roles(config)
    for key in foreground_addresses(config, direction):
        section, name = key.split(".")
        if config[section][name] == "":
            raise _error(key, "", f"must be an IPv{key[-1]} address: the Initiator "
                                  f"({initiator}) sends the phase-1 frames with it")
    what = s["enumerate"]
    e = enumeration(config)
    varying_ports = [_field_key(config, v) for v in e.varying if v["field"] in PORT_FIELDS]
    varying_addresses = [_field_key(config, v) for v in e.varying if v["field"] in ADDRESS_FIELDS]
    if what in ("ports", "both") and not varying_ports:
        raise _error("stateful.enumerate", what,
                     f"enumerating ports needs varying ports in the Initiator's ({direction}) "
                     f"frames: set ports.{direction}_src and/or ports.{direction}_dst to "
                     f'"random", "increasing" or "decreasing" (their _min/_max are the ranges)')
    if what in ("addresses", "both") and not varying_addresses:
        raise _error("stateful.enumerate", what,
                     f"enumerating addresses needs varying addresses: set addresses.{initiator} "
                     f"and/or addresses.{responder} to \"random\", \"increasing\" or "
                     f'"decreasing" (their _min/_max are the ranges)')
    # siitperf Table I: IP addresses and ports are enumerated together (in the same order, here
    # by construction: one stateful.order) unless one of the two is fixed.
    others = {"ports": (varying_addresses, "addresses"),
              "addresses": (varying_ports, "ports")}.get(what)
    if others and others[0]:
        keys, kind = others
        raise _error("stateful.enumerate", what,
                     f"{' and '.join(keys)} also vary{'s' if len(keys) == 1 else ''}, so phase 2 "
                     f"would send {kind} that phase 1 never used: enumerate both "
                     f'(stateful.enumerate = "both", in the same order) or set '
                     f'{" and ".join(keys)} = "fixed" (siitperf Table I: IP and port '
                     "enumeration combine only when one is fixed or both are enumerated)")
    nets = config["addresses"][f"{responder}_nets"]
    if what != "none" and nets > 1:
        raise _error(f"addresses.{responder}_nets", nets,
                     "must be 1 when phase-1 tuples are enumerated: the destination networks "
                     "would add tuples that phase 1 does not enumerate")
    traffic = config["traffic"]
    frames = foreground_frames(s["connections"], traffic["mix_n"], traffic["mix_m"])
    if what != "none" and frames > e.combinations:
        ranges = " x ".join(f"{_field_key(config, v)} {v['max'] - v['min'] + 1}"
                            for v in e.enumerated)
        raise _error("stateful.connections", s["connections"],
                     f"must give at most {e.combinations:,} foreground frames, the combinations "
                     f"of the enumerated ranges ({ranges}): each tuple is sent once in phase 1"
                     + (f" (with mix {traffic['mix_m']}/{traffic['mix_n']}, {frames:,} of the "
                        "frames are foreground)" if has_background(config) else ""))
    if s["table_size"] > frames:
        raise _error("stateful.table_size", s["table_size"],
                     f"must be at most the {frames:,} foreground frames of phase 1 "
                     f"(stateful.connections = {s['connections']:,}"
                     + (f", mix {traffic['mix_m']}/{traffic['mix_n']}" if has_background(config)
                        else "") + "); 0 = all of them")
    minimum = s["connections"] / s["rate_phase1"] + s["timeout_phase1"]
    if s["gap"] and s["gap"] < minimum:
        raise _error("stateful.gap", s["gap"],
                     f"must be at least N/R + T = {s['connections']:,}/{s['rate_phase1']:,} + "
                     f"{s['timeout_phase1']:g} = {minimum:.6g} s (RFC 9693: phase 2 starts after "
                     "phase 1 and its timeout), or 0 for N/R + 2T")


def gap_seconds(config: dict) -> float:
    """D: stateful.gap, or N/R + 2T (siitperf's scripts) when it is 0."""
    s = config["stateful"]
    return s["gap"] or s["connections"] / s["rate_phase1"] + 2 * s["timeout_phase1"]


def table_size(config: dict, connections: int | None = None) -> int:
    """M for `connections` phase-1 frames: stateful.table_size for the configured N (0: every
    foreground frame), every foreground frame for any other number (the capacity search)."""
    s, traffic = config["stateful"], config["traffic"]
    frames = s["connections"] if connections is None else connections
    if s["table_size"] and frames == s["connections"]:
        return s["table_size"]
    return foreground_frames(frames, traffic["mix_n"], traffic["mix_m"])


# --------------------------------------------------------------------------------------------
# The result of phase 1 (and validation)
# --------------------------------------------------------------------------------------------


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


def _range(vary: dict | None, fixed, enumerated: set) -> str:
    if vary is None:
        return f"fixed {fixed}"
    size = vary["max"] - vary["min"] + 1
    where = f" at byte offset {vary['offset']} of {fixed}" if "offset" in vary else ""
    phase1 = ", enumerated in phase 1" if vary["field"] in enumerated else ""
    return f"{vary['min']}..{vary['max']} ({size:,}){where}, {vary['mode']}{phase1}"


def reporting_items(config: dict) -> dict:
    s, traffic = config["stateful"], config["traffic"]
    initiator, responder, forward, _ = roles(config)
    e = enumeration(config)
    by_field = {v["field"]: v for v in e.varying}
    enumerated = {v["field"] for v in e.enumerated}
    source, destination = foreground_addresses(config, forward)
    value = {key: config[key.split(".")[0]][key.split(".")[1]] for key in (source, destination)}
    return {
        "initiator": initiator, "responder": responder, "initiator_direction": forward,
        "connections": s["connections"], "table_size": table_size(config),
        "rate_phase1": s["rate_phase1"], "timeout_phase1": s["timeout_phase1"],
        "gap": gap_seconds(config), "enumerate": s["enumerate"], "order": s["order"],
        "enumerated_fields": [_field_key(config, v) for v in e.enumerated],
        "combinations": e.combinations if e.enumerated else None,
        "source_ports": _range(by_field.get("src_port"), traffic["src_port"], enumerated),
        "destination_ports": _range(by_field.get("dst_port"), traffic["dst_port"], enumerated),
        "source_addresses": _range(by_field.get("src_ip"), value[source], enumerated),
        "destination_addresses": _range(by_field.get("dst_ip"), value[destination], enumerated),
        "selection": s["selection"], "validation": s["validation"],
        "validation_factor": s["validation_factor"],
        "dut": config["dut"]["description"],
        "before_trial": config["dut"]["before_trial"],
    }


# --------------------------------------------------------------------------------------------
# Connection tracking table capacity (RFC 9693; methodology §12.9)
# --------------------------------------------------------------------------------------------


@dataclass
class CapacityResult:
    c0: int
    r0: int
    capacity: int | None          # CS at the end (None: not even C0 could be established)
    rate: int | None              # RS at the end
    history: list[dict] = field(default_factory=list)   # {stage, cs, rs, ct, rt}
    exponential_iterations: int = 0
    binary_iterations: int = 0
    limited_by_ranges: bool = False  # CT reached the enumerable combinations
    complete: bool = True

    def to_dict(self) -> dict:
        return {"capacity": self.capacity, "rate": self.rate, "c0": self.c0, "r0": self.r0,
                "exponential_iterations": self.exponential_iterations,
                "binary_iterations": self.binary_iterations,
                "limited_by_ranges": self.limited_by_ranges, "complete": self.complete,
                "history": self.history}


MaxRate = Callable[[int, int, int], int]


def capacity_search(max_rate: MaxRate, c0: int, rate_max: int, capacity_error: int,
                    beta: float, gamma: float, limit: int | None = None,
                    result: CapacityResult | None = None) -> CapacityResult:
    """cttc.sh's algorithm: max_rate(connections, lo, hi) is the maximum connection establishment
    rate (with validation) measured in (lo, hi], 0 when none passes there; lo = floor(beta x RS)
    or floor(gamma x RS) skips the rates whose outcome is already decided (siitperf's early
    stop). Exponential search doubling CS until RT < beta x RS, then binary search between CS
    and CT until CT - CS <= E; CS is the capacity. `limit`: no more connections can be
    enumerated (the search stops there with limited_by_ranges). `result`: filled in as the
    search goes, so a caller keeps the history of a search that raised."""
    result = result or CapacityResult(c0=c0, r0=0, capacity=None, rate=None)
    r0 = max_rate(c0, 0, rate_max)
    result.r0 = r0
    result.history.append({"stage": "start", "cs": c0, "rs": r0, "ct": c0, "rt": r0})
    if r0 <= 0:
        return result
    cs, rs = c0, r0
    while True:
        ct = 2 * cs if limit is None else min(2 * cs, limit)
        if ct <= cs:
            result.limited_by_ranges = True
            result.capacity, result.rate = cs, rs
            return result
        result.exponential_iterations += 1
        rt = max_rate(ct, math.floor(beta * rs), rs)
        result.history.append({"stage": "exponential", "cs": cs, "rs": rs, "ct": ct, "rt": rt})
        if rt < beta * rs:
            break
        cs, rs = ct, rt
    while ct - cs > capacity_error:
        c = (cs + ct) // 2
        result.binary_iterations += 1
        r = max_rate(c, math.floor(gamma * rs), rs)
        result.history.append({"stage": "binary", "cs": cs, "rs": rs, "ct": c, "rt": r})
        if r < gamma * rs:
            ct = c
        else:
            cs, rs = c, r
    result.capacity, result.rate = cs, rs
    return result


# --------------------------------------------------------------------------------------------
# Connection tear-down rate (RFC 9693; methodology §12.8)
# --------------------------------------------------------------------------------------------


def teardown_rate(connections: int, full_seconds: float, empty_seconds: float) -> float | None:
    """N / (T_N - T_0): connections deleted per second, net of the command's own cost measured
    on an empty table; None when T_N <= T_0 (the deletion was not measurable)."""
    net = full_seconds - empty_seconds
    return connections / net if net > 0 else None
