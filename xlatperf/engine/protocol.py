# SPDX-License-Identifier: BSD-3-Clause
"""The engine's replies as the front end reads them (docs/protocol.md): a trial reply becomes a
TrialResult with counters per direction and the delay data it carries, and a trials.jsonl
record becomes the same TrialResult again, so every summary can be derived from the records."""

from dataclasses import dataclass, field

from ..util.errors import EngineBadParameter, EngineError, EngineExecutionFailure

# How an invalid trial's reason starts when the tester could not send at the requested rate
# (the engine's validity rule: sending took longer than duration x (1 + 1e-5)), as opposed to
# an aborted trial or a stateful step whose phase 1 failed.
RATE_NOT_KEPT = "tester could not keep the rate"


@dataclass(frozen=True)
class DirectionCounts:
    """Counters of one direction (one protocol flow) of a trial."""
    sent: int
    received: int
    planned: int | None = None
    duplicates: int = 0
    reordered: int = 0
    bad_length: int = 0
    late: int | None = None     # frames later than trial.frame_timeout (None: no such timeout)
    bad_vlan: int = 0           # test frames that arrived on another VLAN than the side's
    # A direction carried by several engine flows of the same name (RFC 8219 §10.2.2: one per
    # client, started one after another): each flow's {"sent", "received", "planned", "rate"},
    # in the request's order; None for a direction of one flow.
    flows: list | None = None
    # IMIX (RFC 6985): frames sent and received per configured frame size (the size as
    # traffic.imix names it, in every direction and kind: a SIIT trial's 64-byte IPv4 and
    # 84-byte IPv6 frames are both of the size "84"), e.g.
    # {"64": {"sent": 7000, "received": 7000}, ...}; None without IMIX.
    sizes: dict | None = None

    @property
    def loss_ratio(self) -> float | None:
        """(sent - received) / sent (RFC 2544 §26.3, as a ratio); None when nothing was sent."""
        return (self.sent - self.received) / self.sent if self.sent else None

    def passes(self, loss_tolerance: float) -> bool:
        # received > sent cannot happen with deduplicated counting; if it does it is an
        # anomaly, never a pass (duplicates must not mask losses, RFC 2544 §10).
        return self.sent > 0 and self.received <= self.sent and self.loss_ratio <= loss_tolerance

    def to_dict(self) -> dict:
        return {"sent": self.sent, "received": self.received, "planned": self.planned,
                "loss_ratio": self.loss_ratio, "duplicates": self.duplicates,
                "reordered": self.reordered, "bad_length": self.bad_length,
                **({"late": self.late} if self.late is not None else {}),
                **({"bad_vlan": self.bad_vlan} if self.bad_vlan else {}),
                **({"sizes": self.sizes} if self.sizes else {}),
                **({"flows": self.flows} if self.flows else {})}


@dataclass(frozen=True)
class TrialResult:
    """One elementary trial: the rate, whether the tester kept it (`valid`), and the counters
    per direction ("forward", "reverse")."""
    rate: int
    valid: bool
    directions: dict[str, DirectionCounts]
    invalid_reason: str | None = None
    reply: dict | None = field(default=None, compare=False, repr=False)  # engine reply, if any
    # Delay data per direction when the trial asked for it (docs/delay.md): the engine's
    # `tagged`, `histogram` (its `delay` object) and `ipdv` of the foreground stream, and the
    # background stream's under "background".
    delay: dict | None = field(default=None, compare=False, repr=False)
    # Seconds of sending the trial was requested for (MLRsearch classifies trials by it); None
    # when unknown. Kept in the record's "duration", so a summary can be rebuilt from records.
    duration: float | None = field(default=None, compare=False)
    # With several queues per port (tester.queues > 1): the frames each TX queue sent per
    # direction and the test frames each RX queue received per port, e.g. {"tx": {"forward":
    # [500, 500]}, "rx": {"1": [612, 388]}}: how the load was shared. None with one queue.
    queues: dict | None = field(default=None, compare=False)
    # Per direction, the engine's loss periods when the trial asked for them (`losses`,
    # docs/protocol.md: runs of frames that never arrived, with their send times).
    losses: dict | None = field(default=None, compare=False)

    @classmethod
    def from_reply(cls, rate: int, reply: dict, duration: float | None = None,
                   size_names: dict | None = None) -> "TrialResult":
        """Build from the engine's final `trial` reply (docs/protocol.md). size_names: the
        configured size of each stream of the request's IMIX flows, {flow: {kind: [size, ...]}}
        in the streams' order (traffic.plan.imix_size_names); without it a size is named by the
        frames as sent."""
        groups: dict[str, list[dict]] = {}
        for flow in reply.get("flows", []):
            groups.setdefault(flow["name"], []).append(flow)
        directions, delay, tx, losses = {}, {}, {}, {}
        for name, flows in groups.items():
            # The flows of one name are one direction: their counts add up (each flow's own
            # are kept in `flows`). Delay data and loss periods describe one flow's frames in
            # its sending order, so they are kept only for a direction of one flow.
            streams = [s for flow in flows for s in flow.get("streams", [])]
            late = [s["late"] for s in streams if "late" in s]
            planned = [flow.get("planned") for flow in flows]
            directions[name] = DirectionCounts(
                sent=sum(int(flow["sent"]) for flow in flows),
                received=sum(int(flow["received"]) for flow in flows),
                planned=None if None in planned else sum(planned),
                duplicates=sum(s.get("duplicates", 0) for s in streams),
                reordered=sum(s.get("reordered", 0) for s in streams),
                bad_length=sum(s.get("bad_length", 0) for s in streams),
                bad_vlan=sum(s.get("bad_vlan", 0) for s in streams),
                sizes=_per_size(streams, (size_names or {}).get(name, {})),
                late=sum(late) if late else None,
                flows=[{"rate": flow.get("rate"), "planned": flow.get("planned"),
                        "sent": int(flow["sent"]), "received": int(flow["received"])}
                       for flow in flows] if len(flows) > 1 else None)
            tx[name] = [sum(counts) for counts in
                        zip(*([q["sent"] for q in flow.get("queues", [])] for flow in flows))]
            if len(flows) > 1:
                continue
            delay_data = {kind: data for kind, data in
                          ((s.get("kind"), _stream_delay(s)) for s in streams) if data}
            if delay_data:
                delay[name] = {**delay_data.pop("foreground", {}), **delay_data}
            if "losses" in flows[0]:
                losses[name] = flows[0]["losses"]
        rx = {str(port["index"]): [q["test_frames"] for q in port.get("queues", [])]
              for port in reply.get("ports", [])}
        several = any(len(counts) > 1 for counts in (*tx.values(), *rx.values()))
        return cls(rate=rate, valid=bool(reply.get("valid")), directions=directions,
                   invalid_reason=reply.get("invalid_reason"), reply=reply, delay=delay or None,
                   duration=duration, queues={"tx": tx, "rx": rx} if several else None,
                   losses=losses or None)

    @property
    def loss_ratio(self) -> float | None:
        """The worst direction's loss ratio (a bidirectional test shows the weaker direction);
        None when a direction sent nothing."""
        ratios = [d.loss_ratio for d in self.directions.values()]
        if not ratios or None in ratios:
            return None
        return max(ratios)

    @property
    def achieved_rate(self) -> float | None:
        """Frames per second the tester actually sent in the slowest direction (the engine cuts
        a sender off at duration x (1 + 1e-5)): the rate times the share of its planned frames
        the direction sent (a flow that starts late plans fewer than rate x duration), or its
        frames over the requested duration when the plan is unknown; None when unknown."""
        if not self.directions or not self.duration:
            return None
        return min(self.rate * d.sent / d.planned if d.planned else d.sent / self.duration
                   for d in self.directions.values())

    @property
    def rate_not_kept(self) -> bool:
        """Invalid because the tester could not send at this rate."""
        return not self.valid and (self.invalid_reason or "").startswith(RATE_NOT_KEPT)

    def passes(self, loss_tolerance: float = 0.0) -> bool:
        """RFC 2544 §26.1 pass: the tester kept the rate, and every active direction lost at
        most loss_tolerance of its frames (0: none). An invalid trial never passes."""
        return (self.valid and bool(self.directions)
                and all(d.passes(loss_tolerance) for d in self.directions.values()))

    def failing_directions(self, loss_tolerance: float = 0.0) -> list[str]:
        return [name for name, d in self.directions.items() if not d.passes(loss_tolerance)]

    def to_dict(self) -> dict:
        return {"rate": self.rate, "valid": self.valid, "invalid_reason": self.invalid_reason,
                "loss_ratio": self.loss_ratio,
                "directions": {name: d.to_dict() for name, d in self.directions.items()},
                **({"delay": self.delay} if self.delay else {}),
                **({"queues": self.queues} if self.queues else {}),
                **({"losses": self.losses} if self.losses else {})}


def _per_size(streams: list[dict], names: dict[str, list[int]]) -> dict | None:
    """Sent and received frames per configured frame size of a flow's streams that report their
    sizes (IMIX), foreground and background of one size together; None when none does. names:
    the configured size of each of a kind's streams, in the reply's order."""
    sizes: dict[str, dict] = {}
    for stream in streams:
        named = names.get(stream.get("kind", "foreground"), [])
        for index, size in enumerate(stream.get("sizes", [])):
            name = named[index] if index < len(named) else size["frame_size"]
            counts = sizes.setdefault(str(name), {"sent": 0, "received": 0})
            counts["sent"] += size["sent"]
            counts["received"] += size["received"]
    return dict(sorted(sizes.items(), key=lambda item: int(item[0]))) or None


def _stream_delay(stream: dict) -> dict:
    """A stream's delay data in a trial reply, renamed for trials.jsonl: the engine's `delay`
    histogram becomes `histogram`; `tagged` and `ipdv` keep their names."""
    return {name: stream[key] for key, name in
            (("tagged", "tagged"), ("delay", "histogram"), ("ipdv", "ipdv")) if key in stream}



def trial_from_record(record: dict) -> TrialResult:
    """A TrialResult rebuilt from its trials.jsonl record (without the engine reply)."""
    directions = {name: DirectionCounts(
        sent=d["sent"], received=d["received"], planned=d.get("planned"),
        duplicates=d.get("duplicates", 0), reordered=d.get("reordered", 0),
        bad_length=d.get("bad_length", 0), late=d.get("late"), bad_vlan=d.get("bad_vlan", 0),
        sizes=d.get("sizes"), flows=d.get("flows"))
        for name, d in record.get("directions", {}).items()}
    return TrialResult(rate=record["rate"], valid=record["valid"], directions=directions,
                       invalid_reason=record.get("invalid_reason"), delay=record.get("delay"),
                       duration=record.get("duration"), queues=record.get("queues"),
                       losses=record.get("losses"))


# --------------------------------------------------------------------------------------------
# Version and errors (docs/protocol.md, "Versions" and "Errors")
# --------------------------------------------------------------------------------------------

# The protocol this front end speaks: an engine of the same major and any minor is accepted
# (a minor only adds optional keys and reply fields, which the front end ignores).
PROTOCOL_VERSION = "2.4"


def _major(version) -> int | None:
    if not isinstance(version, str):
        return None
    major, dot, minor = version.partition(".")
    return int(major) if dot and major.isdigit() and minor.isdigit() else None


def check_version(reported) -> None:
    """Raises EngineError unless the engine's hello `protocol` has this front end's major."""
    if _major(reported) is None or _major(reported) != _major(PROTOCOL_VERSION):
        raise EngineError(f"engine speaks protocol {reported!r}, this front end speaks protocol "
                          f"{PROTOCOL_VERSION!r} (major versions must match): use matching "
                          "versions of xlatperf and xlatperf-engine")


def error_from_reply(op: str, reply: dict, stderr_tail: list[str] | None = None) -> EngineError:
    """The exception for a failed reply `{"ok": false, "error": {type, message, key?}}`."""
    error = reply.get("error")
    if not isinstance(error, dict):
        return EngineError(f"engine refused {op}: {error or 'no reason given'}", stderr_tail)
    message = f"engine refused {op}: {error.get('message', 'no reason given')}"
    if error.get("type") == "bad_parameter":
        return EngineBadParameter(message, error.get("key"), stderr_tail)
    if error.get("type") == "execution_failure":
        return EngineExecutionFailure(message, stderr_tail)
    return EngineError(message, stderr_tail)
