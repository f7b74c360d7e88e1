# SPDX-License-Identifier: BSD-3-Clause
"""The RFC 9693 procedures of their own (docs/stateful.md): connection-rate, teardown-rate and
table-capacity. Each step is phase 1 from an empty DUT table (the before_trial hook) plus the
optional validation trial (xlatperf.stateful.StatefulTest.establish). Phase-2 measurements
(throughput, frame loss, latency, PDV) are the ordinary procedures with stateful.enabled.

Summaries are computed from the steps alone, so a resumed run (--resume) gives the same result
as an uninterrupted one: the capacity search is replayed over the recorded steps."""

import itertools

from ..engine.protocol import TrialResult, trial_from_record
from ..measure.stateful import (CLOSE, PHASE1, TEARDOWN, VALIDATION, EstablishmentStep,
                                StatefulTest)
from ..util.errors import ConfigError
from ..util.stats import summarize
from .base import Procedure, ProcedureSpec, Repetition
from .capacity import CapacityResult, capacity_search, teardown_rate
from .search import SearchResult, binary_search


class _Stateful(Procedure):
    """Common parts: the StatefulTest, and steps rebuilt from phase-1/validation records."""
    name = ""

    # RFC 9693 §4.9: every probe of the table-capacity search validates.
    needs_validation = False
    # teardown-rate over TCP: each step loads, then closes (a step is its close record).
    closing = False

    def __init__(self, config, plan, rate=None):
        super().__init__(config, plan)
        self.s = config.stateful
        # RFC 9693 §4.5: phase 1 establishes connections from "all different four tuples";
        # without an enumeration it would repeat tuples and measure forwarding, not setup.
        if self.s.enumerate == "none":
            raise ConfigError(f'stateful.enumerate = "none": {self.name} establishes a new '
                              "connection with every phase-1 frame (RFC 9693 §4.5: all "
                              'different four tuples); set it to "ports", "addresses" or "both"')
        if self.needs_validation and not self.s.validation:
            raise ConfigError(f"stateful.validation = false: every probe of {self.name} is "
                              "validated (RFC 9693 §4.9); set it to true")
        self.test = StatefulTest(plan, phase2=False)  # phase 1 and validation only
        self.hi = self.s.max_rate or self.test.requests.max_rate
        self.test.requests.initiator_plan.check_rate(self.hi, "stateful.max_rate")

    def establish(self, session, connections: int, rate: int) -> EstablishmentStep:
        return self.test.establish(session, connections, rate, self.s.validation)

    def steps_from_records(self, records):
        steps = []
        for _, group in itertools.groupby(records, key=lambda r: r.get("step")):
            group = list(group)
            phase1 = next((r for r in group if r.get("phase") == PHASE1), None)
            close = next((r for r in group if r.get("phase") == CLOSE), None)
            if close is not None:  # teardown-rate over TCP: the step is its closing trial
                loaded = ((phase1 or {}).get("state_table") or {}).get("capacity", 0)
                steps.append(EstablishmentStep(
                    connections=close["connections"], table_size=loaded,
                    phase1=trial_from_record(close), send_seconds=close.get("send_seconds"),
                    kind=self.s.teardown, load_failure=close.get("load_failure")))
            elif phase1 is not None and not self.closing:
                # (closing: a load without its close was taken again; not a step of the search)
                validation = next((r for r in group if r.get("phase") == VALIDATION), None)
                table = phase1.get("state_table") or {}
                steps.append(EstablishmentStep(
                    connections=phase1["connections"], table_size=table.get("capacity", 0),
                    phase1=trial_from_record(phase1), entries=table.get("entries"),
                    validation=trial_from_record(validation) if validation else None,
                    send_seconds=phase1.get("send_seconds")))
            steps += [Teardown(**r["teardown"]) for r in group if r.get("phase") == TEARDOWN]
        return steps

    def settings(self):
        s = self.s
        return {"stateful": self.test.report(), "max_rate": self.hi, "error": s.error,
                "validation": s.validation, "validation_factor": s.validation_factor}


def _search_dict(search: SearchResult, key: str = "connection_rate") -> dict:
    entry = search.to_dict()
    entry[key] = entry.pop("throughput")
    return entry


class _RateSearch:
    """Summaries of a binary search per repetition over steps (connection-rate, and
    teardown-rate closing TCP connections): the rate under `key`."""

    def _searches(self, repetitions):
        """Each repetition's search over the steps that measured something: a closing step
        whose load failed ends its search unfinished (TeardownRate.run), not failed at its rate."""
        return [SearchResult.from_steps(_measured(r.steps), 0.0, r.complete and not _load_failure(r.steps))
                for r in repetitions]

    def _search_summary(self, repetitions, key: str) -> dict:
        searches = self._searches(repetitions)
        return {"unit": "cps", **summarize([s.throughput for s in searches if s.complete]),
                "tester_limited": any(s.tester_limited for s in searches),
                "repetitions": [{"repetition": r.number, **_search_dict(s, key),
                                 **({"load_failure": _load_failure(r.steps)} if _load_failure(r.steps) else {})}
                                for r, s in zip(repetitions, searches)]}

    def _search_rows(self, repetitions, key: str) -> list[dict]:
        return [{"repetition": r.number, f"{key}_cps": s.throughput, "found": s.found,
                 "tester_limited": s.tester_limited, "complete": s.complete,
                 "steps": len(r.steps)} for r, s in zip(repetitions, self._searches(repetitions))]

    def _search_value(self, repetition):
        if not repetition.complete or _load_failure(repetition.steps):
            return None
        return SearchResult.from_steps(repetition.steps, 0.0).throughput


def _load_failure(steps) -> str | None:
    """Why a closing search's load failed (teardown-rate over TCP), if it did."""
    return next((s.load_failure for s in steps if getattr(s, "load_failure", None)), None)


def _measured(steps) -> list:
    return [s for s in steps if not getattr(s, "load_failure", None)]


class _NotLoaded(Exception):
    """A closing step's load failed: the search cannot go on (its step is kept)."""

    def __init__(self, step):
        super().__init__(step.load_failure)
        self.step = step


class ConnectionRate(_RateSearch, _Stateful):
    """Maximum connection establishment rate: binary search on the phase-1 rate R over
    [0, stateful.max_rate]; a step passes when all N phase-1 frames reached the Responder and
    (stateful.validation) the Responder-only validation lost nothing."""
    name = "connection-rate"

    def run(self, session, steps):
        n = self.s.connections
        binary_search(lambda rate: self.establish(session, n, rate), 0, self.hi, self.s.error,
                      steps=steps, notify=lambda c: session.notify({**c, "connections": n}))

    def summarize(self, repetitions):
        return self._search_summary(repetitions, "connection_rate")

    def csv_rows(self, repetitions):
        return self._search_rows(repetitions, "connection_rate")

    def value(self, repetition):
        return self._search_value(repetition)


class Teardown:
    """teardown-rate's timed deletions: T_N on the full table, T_0 on the empty one."""

    def __init__(self, connections: int, full_seconds: float, empty_seconds: float, **_):
        self.connections = connections
        self.full_seconds, self.empty_seconds = full_seconds, empty_seconds
        self.rate = teardown_rate(connections, full_seconds, empty_seconds)

    def to_dict(self) -> dict:
        return {"connections": self.connections, "full_seconds": self.full_seconds,
                "empty_seconds": self.empty_seconds, "rate": self.rate}


class TeardownRate(_RateSearch, _Stateful):
    """Connection tear-down rate: load N connections (phase 1 at stateful.rate_phase1, with
    validation), time dut.teardown on the full table (T_N), then again on the now empty table
    (T_0); rate = N / (T_N - T_0). A load that failed is taken again (each attempt its own
    step, hook first), up to stateful.retakes times, as phase-2 procedures retake phase 1:
    loading at a safe rate is a precondition of the measurement, not its result.

    Over TCP with stateful.teardown "fin" or "rst" (docs/tcp.md): binary search on the rate at
    which the Initiator closes (FIN, FIN-ACK, ACK) or resets the N connections each step
    loads, the highest at which every closing completes through the DUT."""
    name = "teardown-rate"

    @property
    def closing(self) -> bool:
        return self.s.teardown != "hook"

    def run(self, session, steps):
        if self.closing:
            n = self.s.connections

            def close(rate):
                step = self.test.close(session, n, rate)
                if step.load_failure:  # nothing to close at this rate: no measurement of it
                    raise _NotLoaded(step)
                return step
            try:
                binary_search(close, 0, self.hi, self.s.error, steps=steps,
                              notify=lambda c: session.notify({**c, "connections": n}))
            except _NotLoaded as stop:
                steps.append(stop.step)
            return
        n, rate = self.s.connections, self.s.rate_phase1
        for _ in range(1 + self.s.retakes):
            step = self.establish(session, n, rate)
            steps.append(step)
            if step.failure() is None:
                break
        else:  # not loaded: nothing to time in this repetition
            return
        context = {"procedure": self.name, "repetition": session.repetition,
                   "step": session.step}
        full = session.timed_hook("teardown", {**context, "table": "full"})
        empty = session.timed_hook("teardown", {**context, "table": "empty"})
        measured = Teardown(n, full.duration, empty.duration)
        steps.append(measured)
        session.record(TrialResult(rate=rate, valid=True, directions={}), 0.0, TEARDOWN,
                       {"teardown": measured.to_dict(), "command": full.command})

    def _repetition(self, repetition: Repetition) -> dict:
        loads = [s for s in repetition.steps if isinstance(s, EstablishmentStep)]
        timed = [s for s in repetition.steps if isinstance(s, Teardown)]
        entry = {"repetition": repetition.number, "complete": repetition.complete,
                 "connections": self.s.connections,
                 "loaded": bool(loads) and loads[-1].failure() is None,
                 "load_failure": loads[-1].failure() if loads else None,
                 "load_attempts": len(loads),
                 "load": loads[-1].to_dict() if loads else None}
        if timed:
            entry |= {"full_seconds": timed[-1].full_seconds,
                      "empty_seconds": timed[-1].empty_seconds, "teardown_rate": timed[-1].rate}
        return entry

    def summarize(self, repetitions):
        if self.closing:
            return self._search_summary(repetitions, "closing_rate")
        entries = [self._repetition(r) for r in repetitions]
        rates = [e["teardown_rate"] for e in entries if e.get("teardown_rate") is not None]
        return {"unit": "cps", **summarize(rates),
                "full_seconds": summarize([e["full_seconds"] for e in entries
                                           if "full_seconds" in e]),
                "empty_seconds": summarize([e["empty_seconds"] for e in entries
                                            if "empty_seconds" in e]),
                "not_loaded": sum(not e["loaded"] for e in entries),
                # Timed, but T_N <= T_0: the deletion was not measurable (no rate, not counted).
                "not_measurable": sum("full_seconds" in e and e.get("teardown_rate") is None for e in entries),
                "repetitions": entries}

    def csv_rows(self, repetitions):
        if self.closing:
            return self._search_rows(repetitions, "closing_rate")
        return [{k: v for k, v in self._repetition(r).items() if k != "load"}
                for r in repetitions]

    def settings(self):
        return {**super().settings(), "rate_phase1": self.s.rate_phase1,
                "teardown": self.config.dut.teardown, "where": self.config.dut.ssh
                or "local"}

    def value(self, repetition):
        if self.closing:
            return self._search_value(repetition)
        return self._repetition(repetition).get("teardown_rate")


class _Tee(list):
    """A list that also appends every item to another (the repetition's steps)."""

    def __init__(self, also: list):
        super().__init__()
        self.also = also

    def append(self, item):
        super().append(item)
        self.also.append(item)


class _Exhausted(Exception):
    pass


class TableCapacity(_Stateful):
    """Connection tracking table capacity (cttc.sh): exponential search doubling the number of
    connections from C0 = stateful.connections, then binary search until CT - CS <= E; each
    probe is a connection-rate search with validation, bounded below by beta (gamma) x RS."""
    needs_validation = True
    name = "table-capacity"

    def _search(self, max_rate, result: CapacityResult | None = None) -> CapacityResult:
        s = self.s
        return capacity_search(max_rate, s.connections, self.hi, s.capacity_error,
                               s.beta, s.gamma, limit=self.test.requests.enumeration.combinations
                               if self.test.requests.enumeration.enumerated else None, result=result)

    def run(self, session, steps):
        def max_rate(connections, lo, hi):
            return binary_search(
                lambda rate: self.establish(session, connections, rate), lo, hi, self.s.error,
                steps=_Tee(steps),
                notify=lambda c: session.notify({**c, "connections": connections})).throughput
        self._search(max_rate)

    def replay(self, repetition: Repetition) -> CapacityResult:
        """The search's result recomputed from the recorded steps (deterministic given the
        outcomes); complete = False when the steps end before the search does."""
        queue = iter(repetition.steps)

        def max_rate(connections, lo, hi):
            def run(rate):
                step = next(queue, None)
                if step is None:
                    raise _Exhausted
                if (step.connections, step.rate) != (connections, rate):
                    raise ValueError(f"recorded step ({step.connections} connections at "
                                     f"{step.rate}) does not follow the search ({connections} "
                                     f"at {rate})")
                return step
            return binary_search(run, lo, hi, self.s.error).throughput
        result = CapacityResult(c0=self.s.connections, r0=0, capacity=None, rate=None)
        try:
            self._search(max_rate, result)
        except _Exhausted:
            result.complete = False
        return result

    def summarize(self, repetitions):
        results = [self.replay(r) for r in repetitions]
        counted = [c for c in results if c.complete and c.capacity]
        return {"unit": "connections",
                **summarize([c.capacity for c in counted]),
                # A repetition that reached the enumerable combinations measured a lower bound:
                # so is the median when it counts one.
                "limited_by_ranges": sum(c.limited_by_ranges for c in counted),
                "repetitions": [{"repetition": r.number, **c.to_dict(), "trials": len(r.steps),
                                 "steps": [s.to_dict() for s in r.steps]}
                                for r, c in zip(repetitions, results)]}

    def csv_rows(self, repetitions):
        rows = []
        for r in repetitions:
            c = self.replay(r)
            rows.append({"repetition": r.number, "capacity": c.capacity, "rate": c.rate,
                         "c0": c.c0, "r0": c.r0, "exponential_iterations":
                         c.exponential_iterations, "binary_iterations": c.binary_iterations,
                         "limited_by_ranges": c.limited_by_ranges, "complete": c.complete,
                         "trials": len(r.steps)})
        return rows

    def settings(self):
        s = self.s
        return {**super().settings(), "c0": s.connections, "capacity_error": s.capacity_error,
                "beta": s.beta, "gamma": s.gamma, "alpha": s.validation_factor}

    def value(self, repetition):
        c = self.replay(repetition)
        return c.capacity if c.complete else None


def _stateful_spec(cls, help_text: str, unit: str, report: str) -> ProcedureSpec:
    return ProcedureSpec(cls.name, f"{help_text} (docs/stateful.md)", unit=unit, make=cls,
                         report=report, stateful_phase2=False)


SPECS = (
    _stateful_spec(ConnectionRate, "RFC 9693 maximum connection establishment rate", "cps", "cps"),
    _stateful_spec(TeardownRate, "RFC 9693 connection tear-down rate (times dut.teardown)", "cps",
                   "cps"),
    _stateful_spec(TableCapacity, "RFC 9693 connection tracking table capacity", "connections",
                   "capacity"),
)
