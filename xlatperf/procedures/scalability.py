# SPDX-License-Identifier: BSD-3-Clause
"""RFC 8219 §10 overload scalability of a single-translation DUT (docs/scalability.md).

Network growth is n network flows from n simulated clients (RFC 8219 §10.1.1, Figure 4): the
client side's addresses (scalability.side) take n distinct values of its 16-bit varying part
(addresses.SIDE_min .. SIDE_min + n - 1, in the configured addresses.SIDE order), while the
other side is one fixed address and the ports are fixed, so a trial carries exactly n flows per
direction, all started together (§10.2.1). For each n of scalability.flows, smallest first, the
RFC 2544 throughput is measured (the [throughput] search: binary or MLRsearch); the
performance degradation of each n is RFC 8219 §10.2.1's figure for a "higher is better"
benchmark:

    Xpd = (X1 - Xn) / X1 x 100 %      (X1: the 1-flow result, Xn: the n-flow result)

computed from the medians over the repetitions. The summary's statistics are those of each
repetition's own degradation at the largest n.

With scalability.start_interval = t > 0 the flows start one after another (RFC 8219 §10.2.2,
incremental load): each client is then its own engine flow per direction, from one fixed
address, client i starting i x t seconds into the trial (a rate of 0 until a rate step at
i x t: docs/protocol.md "Rate steps"), each at its share of the trial's rate R once started,
and the trial lasts duration + (n - 1) x t. The search is over R as with t = 0.
"""

import ipaddress
from dataclasses import dataclass, replace

from ..config.limits import MAX_DURATION, MAX_FLOWS, STREAM_IDS, stream_ids_needed
from ..engine.protocol import TrialResult, trial_from_record
from ..frames.kinds.ipv4aas import available_ces, emulates_ces
from ..frames.technology import role_of, technology_of
from ..measure.measurer import MeasurerView, TrialSpec
from ..measure.session import is_step_record
from ..traffic.plan import TrafficPlan
from ..util.errors import ConfigError
from ..util.stats import summarize
from .base import KeyOption, Procedure, ProcedureSpec, Repetition
from .throughput import SPEC as THROUGHPUT

RECORD_KEY = "network_flows"   # n, in each trial's record


def degradation(x1: float | None, xn: float | None, higher_is_better: bool = True) -> float | None:
    """RFC 8219 §10.2.1: the performance degradation of the n-flow result Xn relative to the
    1-flow result X1, in %: (X1 - Xn) / X1 x 100 for a "higher is better" benchmark
    (throughput), (Xn - X1) / X1 x 100 for a "lower is better" one (latency). None when X1 is
    0 or either result is missing."""
    if x1 is None or xn is None or x1 == 0:
        return None
    change = (x1 - xn) if higher_is_better else (xn - x1)
    return change / x1 * 100


def range_limited(summaries: dict) -> dict:
    """{"range_limited": one sentence} when the throughput at some n is a lower bound set by
    throughput.max_rate (search.summarize_throughput); {} otherwise."""
    capped = [n for n, summary in summaries.items() if summary.get("range_limited")]
    if not capped:
        return {}
    return {"range_limited": (f"at n = {', '.join(map(str, capped))} the throughput is "
                              f"{summaries[capped[0]]['range_limited']}; the degradation "
                              "figures there compare the setting, not the DUT")}


@dataclass(frozen=True)
class FlowStep:
    """A trial of the search with n network flows."""
    flows: int
    trial: TrialResult


def shares(rate: int, n: int) -> list[int]:
    """The rate R split over n clients as evenly as whole frames per second allow (the first
    R mod n clients one frame/s more), so the shares add up to exactly R."""
    return [rate // n + (1 if i < rate % n else 0) for i in range(n)]


def _pinned(stream: dict) -> dict:
    """A stream whose 16-bit address parts that take a single value (min = max) carry it in the
    address itself instead of a varying field: a client's fixed address (in its `rx` too, as
    the frames arrive)."""
    stream, vary = dict(stream), []
    for field in stream.get("vary", []):
        if field["field"] in ("src_ip", "dst_ip") and field.get("bits", 16) == 16 \
                and field["min"] == field["max"]:
            packed = bytearray(ipaddress.ip_address(stream[field["field"]]).packed)
            packed[field["offset"]:field["offset"] + 2] = field["min"].to_bytes(2, "big")
            stream[field["field"]] = str(ipaddress.ip_address(bytes(packed)))
        else:
            vary.append(field)
    stream["vary"] = vary
    if "rx" in stream:
        stream["rx"] = _pinned(stream["rx"])
        if not stream["rx"]["vary"]:
            del stream["rx"]["vary"]
    return stream


class StaggeredClients:
    """The trial flows of n clients started one after another (RFC 8219 §10.2.2), in the
    TrafficPlan interface the session uses (flows, check_rate): for the trial's rate R, client
    i's flows (one per direction, its address fixed) send at its share of R from i x t seconds
    on (rate 0 until a rate step at i x t; client 0 from the start). The flows of a direction
    share its name: the front end adds their counts up (TrialResult.from_reply)."""

    def __init__(self, plans: list[TrafficPlan], interval: float):
        self.plans, self.interval = plans, interval

    @property
    def max_rate(self) -> int:
        return self.plans[0].max_rate

    def check_rate(self, rate: int, what: str = "rate") -> None:
        self.plans[0].check_rate(rate, what)

    def flows(self, rate: int) -> list[dict]:
        self.check_rate(rate)
        found = []
        for i, (plan, share) in enumerate(zip(self.plans, shares(rate, len(self.plans)))):
            if share == 0:     # R < n: this client would send nothing
                continue
            for flow in plan.flows(share):
                for key in ("foreground", "background"):
                    if key in flow:
                        flow[key] = _pinned(flow[key])
                if "streams" in flow:
                    flow["streams"] = [_pinned(stream) for stream in flow["streams"]]
                if i:
                    flow |= {"rate": 0, "rate_steps": [{"at": i * self.interval, "rate": share}]}
                found.append(flow)
        return found


class _ClientsSession(MeasurerView):
    """The measurer as the search for one n sees it: its trials send from n client addresses
    (spec.with_plan) and carry n in their records and in the live view; every trial is also
    kept, tagged with n, in the repetition's steps. With a start interval t (§10.2.2), every
    trial is longer by (n - 1) x t and its record states t. The rest is the session's."""

    def __init__(self, session, plan, flows: int, steps: list, interval: float = 0.0,
                 duration: float = 0.0):
        super().__init__(session)
        self.plan, self.flows, self.steps = plan, flows, steps
        self.interval, self.duration = interval, duration

    def run_trial(self, spec: TrialSpec, annotate=None, *, retakes=None):
        def tagged(result) -> dict:
            return {RECORD_KEY: self.flows,
                    **({"start_interval": self.interval} if self.interval else {}),
                    **(annotate(result) if annotate else {})}
        if self.interval:   # RFC 8219 §10.2.2: extended by the time to start all the flows
            spec = replace(spec, duration=(spec.duration or self.duration) + (self.flows - 1) * self.interval)
        result = self.inner.run_trial(spec.with_plan(self.plan), tagged, retakes=retakes)
        self.steps.append(FlowStep(self.flows, result))
        return result

    def notify(self, context: dict) -> None:
        self.inner.notify({**context, RECORD_KEY: self.flows})


def _other(side: str) -> str:
    return "right" if side == "left" else "left"


class Scalability(Procedure):
    name = "scalability"

    def __init__(self, config, plan, rate=None):
        super().__init__(config, plan)
        settings = config.scalability
        self.side, self.counts = settings.side, list(settings.flows)
        addresses, side, other = config.addresses, self.side, _other(self.side)
        if config.stateful.enabled:
            raise ConfigError("stateful.enabled = true: the scalability procedure measures "
                              "stateless throughput (RFC 8219 §10); set it to false")
        ports = [plan.ports["left"], plan.ports["right"]]
        self.interval = settings.start_interval
        self.plans, self.searches, self.trial_plans = {}, {}, {}
        if emulates_ces(config):
            self._ces(config, plan, ports)
            return
        if getattr(addresses, side) == "fixed":
            raise ConfigError(f'addresses.{side} = "fixed": the scalability procedure takes '
                              f"its n clients from the {side} side's addresses; set it to "
                              f'"increasing" (or "random") and addresses.{side}_min/_max to '
                              "their range (scalability.side chooses the side)")
        if getattr(addresses, other) != "fixed" or getattr(addresses, f"{other}_nets") > 1:
            raise ConfigError(f"addresses.{other} = {getattr(addresses, other)!r}, "
                              f"addresses.{other}_nets = {getattr(addresses, f'{other}_nets')}: "
                              f'must be "fixed" and 1 for the scalability procedure: its n flows '
                              f"go from n {side} clients to one {other} address")
        varying = [f"ports.{key}" for key in ("forward_src", "forward_dst", "reverse_src",
                                                "reverse_dst")
                   if config.value(f"ports.{key}") != "fixed"]
        if varying:
            raise ConfigError(f"{varying[0]} = {config.value(varying[0])!r}: must be \"fixed\" "
                              "for the scalability procedure (varying ports would make more "
                              "than n flows)")
        low, high = getattr(addresses, f"{side}_min"), getattr(addresses, f"{side}_max")
        if self.counts[-1] > high - low + 1:
            raise ConfigError(f"scalability.flows = {self.counts}: at most {high - low + 1} "
                              f"flows, the size of addresses.{side}_min..{side}_max = "
                              f"{low}..{high}")
        if self.interval:
            self._check_incremental(config, plan)
        for n in self.counts:
            changed = config.changed({f"addresses.{side}_max": low + n - 1})
            self.plans[n] = TrafficPlan(changed, ports, through_dut=plan.through_dut)
            self.searches[n] = THROUGHPUT.make(changed, self.plans[n], None)
            self.trial_plans[n] = self.plans[n] if not self.interval else StaggeredClients(
                [TrafficPlan(config.changed({f"addresses.{side}_min": low + i,
                                             f"addresses.{side}_max": low + i}),
                             ports, through_dut=plan.through_dut) for i in range(n)],
                self.interval)
        self._searches_made()

    def _searches_made(self) -> None:
        first = self.searches[1]
        self.loss_tolerance = getattr(first, "loss_tolerance", 0.0)   # for the live view
        self.error = getattr(first, "error", None)
        self.earlier: list[Repetition] = []

    def _ces(self, config, plan, ports) -> None:
        """RFC 8219 §10.1.2 (Figure 5, n:1): the n clients are n CEs the tester emulates in front
        of the BR (ipv4aas.ces = n, the first n of the rule or the binding table); each CE's
        frames keep their ports within its port set, as a CE's own traffic does."""
        if self.interval:
            raise ConfigError(f"scalability.start_interval = {self.interval:g}: must be 0 with "
                              "emulated CEs (ipv4aas): their n CEs start together (RFC 8219 "
                              "§10.2.1)")
        available = available_ces(config)
        if available is not None and self.counts[-1] > available:
            raise ConfigError(f"scalability.flows = {self.counts}: at most {available} CEs, the "
                              f"ones the {config.ipv4aas.technology} rule or table has")
        for n in self.counts:
            changed = config.changed({"ipv4aas.ces": n})
            self.plans[n] = self.trial_plans[n] = TrafficPlan(changed, ports, through_dut=plan.through_dut)
            self.searches[n] = THROUGHPUT.make(changed, self.plans[n], None)
        self._searches_made()

    def _check_incremental(self, config, plan) -> None:
        """With a start interval every client is an engine flow per direction: n is bounded by
        the engine's flows and the test tag's stream ids, and the longest trial by the engine's
        duration."""
        flows = plan.flows(1)
        streams = max(2, *(len(f["streams"]) if "streams" in f else 1 + ("background" in f)
                           for f in flows))
        most = min(MAX_FLOWS // len(flows),
                   STREAM_IDS // stream_ids_needed(len(flows), streams, config.tester.queues))
        n, t = self.counts[-1], self.interval
        if n > most:
            raise ConfigError(
                f"scalability.flows = {self.counts}: with scalability.start_interval = {t:g} "
                f"(flows started one after another, RFC 8219 §10.2.2) each client is its own "
                f"engine flow per direction: n must be in 1..{most} ({len(flows)} direction(s), "
                f"{streams} stream ids per flow, tester.queues = {config.tester.queues}; the "
                f"engine takes {MAX_FLOWS} flows and the test tag {STREAM_IDS} stream ids); use "
                "fewer flows or scalability.start_interval = 0 (simultaneous start)")
        longest = config.trial.duration + (n - 1) * t
        if longest > MAX_DURATION:
            raise ConfigError(
                f"scalability.start_interval = {t:g}: trial.duration + (n - 1) x t = "
                f"{longest:g} s with n = {n}: must be at most {MAX_DURATION:g} s (the engine's "
                f"longest trial), so t at most {(MAX_DURATION - config.trial.duration) / max(n - 1, 1):g}")

    # -- running ---------------------------------------------------------------------------------

    def begin_repetition(self, earlier):
        self.earlier = list(earlier)

    def run(self, session, steps):
        earlier = self.by_flows(self.earlier)
        for n in self.counts:
            search = self.searches[n]
            search.begin_repetition(earlier[n])
            search.run(_ClientsSession(session, self.trial_plans[n], n, steps, self.interval,
                                       self.config.trial.duration), [])

    def steps_from_records(self, records):
        return [FlowStep(r[RECORD_KEY], trial_from_record(r)) for r in records
                if is_step_record(r) and RECORD_KEY in r]

    # -- results ---------------------------------------------------------------------------------

    def by_flows(self, repetitions) -> dict[int, list[Repetition]]:
        """Each n's searches as repetitions of a throughput measurement: the trials with n
        flows; complete when the repetition is, or when it went on to a larger n."""
        found: dict[int, list[Repetition]] = {n: [] for n in self.counts}
        for rep in repetitions:
            for n in self.counts:
                trials = [s.trial for s in rep.steps if s.flows == n]
                later = any(s.flows > n for s in rep.steps)
                if trials or rep.complete:
                    found[n].append(Repetition(rep.number, trials, rep.complete or later))
        return found

    def _table(self, repetitions):
        """(per n: the throughput summary; per repetition: {n: its throughput row})."""
        subs = self.by_flows(repetitions)
        summaries = {n: self.searches[n].summarize(subs[n]) for n in self.counts}
        rows: dict[int, dict[int, dict]] = {}
        for n, summary in summaries.items():
            for row in summary.get("repetitions", []):
                rows.setdefault(row["repetition"], {})[n] = row
        return summaries, rows

    def _degradations(self, row: dict[int, dict]) -> dict[int, float | None]:
        """A repetition's degradation per n, from its complete searches."""
        def value(n):
            found = row.get(n)
            return found.get("throughput") if found and found.get("complete") else None
        return {n: degradation(value(1), value(n)) for n in self.counts}

    def summarize(self, repetitions):
        summaries, rows = self._table(repetitions)
        largest = self.counts[-1]
        per_repetition = []
        for rep in repetitions:
            row = rows.get(rep.number, {})
            degradations = self._degradations(row)
            per_repetition.append({
                "repetition": rep.number, "complete": rep.complete,
                "flows": [{"flows": n, "throughput": row[n].get("throughput"),
                           "found": row[n].get("found"),
                           "tester_limited": row[n].get("tester_limited"),
                           "complete": row[n].get("complete"),
                           "trials": len([s for s in rep.steps if s.flows == n]),
                           "degradation_percent": degradations[n]}
                          for n in self.counts if n in row],
                "degradation_percent": degradations[largest]})
        x1 = summaries[1].get("median")
        flows = [{"flows": n, "throughput": summaries[n].get("median"),
                  "degradation_percent": degradation(x1, summaries[n].get("median")),
                  "tester_limited": bool(summaries[n].get("tester_limited")),
                  "summary": summaries[n]} for n in self.counts]
        values = [r["degradation_percent"] for r in per_repetition
                  if r["complete"] and r["degradation_percent"] is not None]
        failures: dict[str, int] = {}
        for summary in summaries.values():
            for name, info in (summary.get("directions") or {}).items():
                failures[name] = failures.get(name, 0) + info.get("failed_trials", 0)
        return {"unit": "%", **summarize(values), "metric": "throughput",
                "higher_is_better": True, "largest_flows": largest,
                # RFC 8219 §10.2.2's T in seconds (0: simultaneous start, §10.2.1).
                "start_interval_s": self.interval,
                "tester_limited": any(f["tester_limited"] for f in flows),
                **range_limited(summaries),
                "flows": flows,
                "directions": {name: {"failed_trials": n} for name, n in failures.items()},
                "repetitions": per_repetition}

    def values(self, repetitions):
        _, rows = self._table(repetitions)
        largest = self.counts[-1]
        return [self._degradations(rows.get(r.number, {}))[largest] if r.complete else None
                for r in repetitions]

    def csv_rows(self, repetitions):
        summary = self.summarize(repetitions)
        return [{"repetition": rep["repetition"], "flows": row["flows"],
                 "throughput_fps": row["throughput"], "found": row["found"],
                 "tester_limited": row["tester_limited"],
                 "degradation_percent": row["degradation_percent"], "trials": row["trials"],
                 "complete": row["complete"]}
                for rep in summary["repetitions"] for row in rep["flows"]]

    def settings(self):
        addresses = self.config.addresses
        low = getattr(addresses, f"{self.side}_min")
        clients = (f"{self.side} addresses with the 16-bit part {low}..{low}+n-1 "
                   f"({getattr(addresses, self.side)}), to one {_other(self.side)} address, fixed ports")
        if emulates_ces(self.config):
            a = self.config.ipv4aas
            clients = (f"n CEs emulated on the left (ipv4aas.ces = n: the first n of the {a.technology} "
                       f"{technology_of(self.config).ce_source.holder}; each frame from one, "
                       f"{a.ce_mode}, its ports within the CE's port set) through the "
                       f"{role_of(self.config).name} (RFC 8219 §10.1.2, Figure 5: n:1)")
        return {"flows": self.counts, "side": "left" if emulates_ces(self.config) else self.side,
                "clients": clients,
                "start_interval": self.interval,
                "start": (f"incremental (RFC 8219 §10.2.2): client i (0..n-1) starts i x "
                          f"{self.interval:g} s into the trial, at its share R/n of the trial's "
                          f"rate R; each trial lasts trial.duration + (n - 1) x {self.interval:g} s"
                          if self.interval else
                          "simultaneous: every flow from the trial's start (RFC 8219 §10.2.1)"),
                "metric": "throughput (RFC 2544 §26.1, RFC 8219 §7.1)",
                "degradation": "RFC 8219 §10.2.1, higher is better: (X1 - Xn) / X1 x 100 %, "
                               "from the medians over the repetitions",
                "throughput": self.searches[1].settings()}


SPEC = ProcedureSpec(
    "scalability", "RFC 8219 §10 overload scalability: throughput and its degradation with "
    "n network flows", unit="%", make=Scalability, report="scalability",
    stateful_phase2=False,
    key_options=(KeyOption("--flows", "scalability.flows", "N1,N2,...",
                           "the numbers of network flows (clients), 1 first", is_list=True),))
