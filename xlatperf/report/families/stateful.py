# SPDX-License-Identifier: BSD-3-Clause
"""Families "cps" and "capacity": RFC 9693 connection establishment and tear-down rates, and
the connection tracking table capacity."""

from dataclasses import dataclass
from typing import Callable

from ..collect import Entry
from .base import Family, per_repetition, rate, steps, text, yes


def _connections(entry: Entry) -> int | None:
    return (entry.settings.get("stateful") or {}).get("connections")


def connection_search(s: dict) -> str:
    """connection-rate's search (docs/stateful.md), also each probe of table-capacity."""
    tcp = (s.get("stateful") or {}).get("transport") == "tcp"
    validation = (f"; every step validated by the Responder at α·R, α = {s.get('validation_factor')}"
                  + (" (one TCP data segment over each learned connection)" if tcp else "")
                  if s.get("validation") else "")
    return (f"binary search on the phase-1 rate in [0, {rate(s.get('max_rate'))}] "
            f"connections/s until upper − lower ≤ {rate(s.get('error'))} connections/s"
            f"{validation}")


def stateful_settings(entry: Entry) -> str:
    """The RFC 9693 quantities every stateful result depends on."""
    items = entry.settings.get("stateful") or {}
    return (f"N = {rate(items.get('connections'))} connections, M = "
            f"{rate(items.get('table_size'))}, R = {rate(items.get('rate_phase1'))} fps, "
            f"enumerate {items.get('enumerate')} ({items.get('order')}), "
            + ("TCP handshakes, " if items.get("transport") == "tcp" else "")
            + f"validation {items.get('validation')}")


def _loaded(rep: dict, entry: Entry) -> str:
    return "yes" if rep.get("loaded") else f"no ({rep.get('load_failure')})"


@dataclass(frozen=True)
class RateKind:
    """One kind of connection rate: the repetition key that holds it tells the kinds apart."""
    key: str
    quantity: str
    complete_only: bool
    precision: Callable[[Entry], str]
    columns: list
    caption: str


RATE_KINDS = [
    RateKind("connection_rate", "connection establishment rate", True,
             lambda e: f"{connection_search(e.settings)}; N = {rate(_connections(e))} "
                       "connections per step",
             [("repetition", text("repetition")),
              ("connection rate (cps)", text("connection_rate", "cps")), ("trials", steps),
              ("found", yes("found")), ("tester limited", yes("tester_limited")),
              ("complete", yes("complete"))],
             "connection establishment rate per repetition (RFC 9693)"),
    RateKind("teardown_rate", "connection tear-down rate", False,
             lambda e: (f"N = {rate(_connections(e))} connections loaded at "
                        f"{rate(e.settings.get('rate_phase1'))} connections/s"
                        + (" with validation" if e.settings.get("validation") else "")
                        + f", then `{e.settings.get('teardown')}` ({e.settings.get('where')}) "
                        "timed on the full table (T_N) and on the empty table (T_0): rate = "
                        "N / (T_N − T_0)"),
             [("repetition", text("repetition")),
              ("connections", text("connections", "connections")), ("loaded", _loaded),
              ("T_N full table (s)", text("full_seconds", "s")),
              ("T_0 empty table (s)", text("empty_seconds", "s")),
              ("tear-down rate (cps)", text("teardown_rate", "cps")),
              ("complete", yes("complete"))],
             "connection tear-down rate per repetition (RFC 9693)"),
    # Not RFC 9693 §4.8's tear-down rate: the DUT's entries stay after a FIN exchange
    # (TIME_WAIT) or an RST (CLOSE) until they time out (docs/tcp.md).
    RateKind("closing_rate", "TCP closing rate (closing exchanges the DUT forwards; not RFC 9693's "
                             "tear-down rate)", True,
             lambda e: (f"binary search on the rate at which the Initiator "
                        f"{'resets (RST)' if _teardown(e) == 'rst' else 'closes (FIN, FIN-ACK, ACK)'}"
                        f" the connections in [0, {rate(e.settings.get('max_rate'))}] until upper − "
                        f"lower ≤ {rate(e.settings.get('error'))} connections/s; each step opens "
                        f"N = {rate(_connections(e))} connections at "
                        f"{rate(e.settings.get('rate_phase1'))} handshakes/s first, and passes when "
                        "every closing completed through the DUT (docs/tcp.md); the DUT's entries "
                        "stay (TIME_WAIT, CLOSE) until they time out, so this is how fast it forwards "
                        "closing exchanges, not how fast it deletes entries (RFC 9693 §4.8)"),
             [("repetition", text("repetition")),
              ("closing rate (cps)", text("closing_rate", "cps")), ("trials", steps),
              ("found", yes("found")), ("tester limited", yes("tester_limited")),
              ("complete", yes("complete"))],
             "TCP closing rate per repetition (not RFC 9693's tear-down rate)"),
]


def _teardown(entry: Entry) -> str | None:
    return (entry.settings.get("stateful") or {}).get("teardown")


class ConnectionRates(Family):
    per_direction = False

    @staticmethod
    def kind(entry: Entry) -> RateKind | None:
        reps = entry.summary.get("repetitions", [])
        return next((k for k in RATE_KINDS if any(k.key in r for r in reps)), None)

    def quantity(self, entry):
        kind = self.kind(entry)
        return kind.quantity if kind else "connection rate"

    def repetition_values(self, entry):
        kind = self.kind(entry)
        if kind is None:
            return []
        values = [r.get(kind.key) for r in entry.summary.get("repetitions", [])
                  if r.get("complete") or not kind.complete_only]
        return [v for v in values if v is not None]

    def precision(self, entry):
        kind = self.kind(entry)
        return kind.precision(entry) if kind else "-"

    def notes(self, entry):
        unmeasurable = entry.summary.get("not_measurable")
        return [stateful_settings(entry)] + (
            [f"{unmeasurable} repetition(s) timed the deletion no longer on the full table than on the empty "
             "one (T_N ≤ T_0): no rate, not in the median"] if unmeasurable else [])

    def details(self, entry):
        kind = self.kind(entry)
        return [per_repetition(entry, kind.columns, kind.caption)] if kind else []


class Capacity(Family):
    key = "capacity"
    complete_only = True
    per_direction = False
    COLUMNS = [("repetition", text("repetition")),
               ("capacity CS (connections)", text("capacity", "connections")),
               ("rate RS (cps)", text("rate", "cps")), ("C0", text("c0", "connections")),
               ("R0 (cps)", text("r0", "cps")),
               ("exponential, binary iterations",
                lambda rep, entry: f"{rep.get('exponential_iterations')}, "
                                   f"{rep.get('binary_iterations')}"),
               ("limited by ranges", yes("limited_by_ranges")), ("trials", text("trials")),
               ("complete", yes("complete"))]

    def quantity(self, entry):
        return "connection tracking table capacity"

    def precision(self, entry):
        s = entry.settings
        return (f"from C0 = {rate(s.get('c0'))} connections doubling while the rate stays at "
                f"least β·RS (β = {s.get('beta')}), then halving the interval until CT − CS ≤ "
                f"E = {rate(s.get('capacity_error'))} connections, a count passing at γ·RS "
                f"(γ = {s.get('gamma')}); the rate at each count: {connection_search(s)}")

    def notes(self, entry):
        limited = entry.summary.get("limited_by_ranges")
        return [stateful_settings(entry)] + (
            [f"{limited} repetition(s) reached the enumerable combinations of the port and address "
             "ranges (limited by ranges): their capacity, and so the median, is a lower bound"]
            if limited else [])

    def details(self, entry):
        return [per_repetition(entry, self.COLUMNS,
                               "connection tracking table capacity per repetition (RFC 9693)")]
