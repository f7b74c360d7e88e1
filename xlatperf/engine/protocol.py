# SPDX-License-Identifier: BSD-3-Clause
"""The engine's replies as the front end reads them (docs/protocol.md): a trial reply becomes a
TrialResult with counters per direction and the delay data it carries, and a trials.jsonl
record becomes the same TrialResult again, so every summary can be derived from the records."""

import math
from dataclasses import dataclass, field, replace

from ..util.errors import EngineBadParameter, EngineError, EngineExecutionFailure

# How an invalid trial's reason starts when the tester could not send at the requested rate
# (the engine's validity rule: sending took longer than duration x (1 + 1e-5)), as opposed to
# an aborted trial or a stateful step whose phase 1 failed.
RATE_NOT_KEPT = "tester could not keep the rate"
# ... and when one of the tester's ports dropped frames itself (its RX ring overflowed).
TESTER_DROPPED = "tester dropped frames"
# ... and when a receiver's TX queue did not take the TCP replies it wrote (docs/tcp.md: "tester
# could not send N of the M TCP replies of flow F"): the tester's own sending limit too.
REPLIES_NOT_SENT = "tester could not send"
# ... and when a port's link went down while the trial ran: its losses are the link's.
LINK_DOWN = "link down during the trial"
# A sender that reached less than this share of its schedule, over a trial long enough that
# the time it lacked is more than a busy host takes from it (a descheduled sender loses tens of
# milliseconds, not a quarter of a second), met its capacity: no hiccup, so not worth taking
# again (TrialResult.capacity_shown). A first trial at 14.88 Mfps through the 464xlat lab sent
# 0.55 Mfps (3.7 %) for 1.02 s; the search then halved from far above that pace, four more
# trials that each said the same (issue 30). A tenth, not a half: a compiler running beside a
# 0.5-s selftest at 2 Mfps on the ring pair held the sender under half of it, which its retakes
# recovered from.
CAPACITY_SHORTFALL = 0.1
HICCUP_SECONDS = 0.25


# The test frames a receiver did not count as received, by why (docs/protocol.md): each a count
# of DirectionCounts, with how the trial's console line and the report's warnings say it
# ("1,000 with a bad checksum"; "1,000 forward frames arrived with a bad ...: counted as lost,
# not received").
REFUSED = (
    ("bad_length", "of another length", "arrived with another length than the frame the DUT should "
                                         "deliver (its IP packet and VLAN tags)"),
    ("bad_vlan", "on the wrong VLAN", "arrived on another VLAN than their receiving side's"),
    ("out_of_range", "with a sequence number never sent",
     "arrived with a test-tag sequence number beyond what the stream sent (a tag the DUT changed, or "
     "another tester's frames)"),
    ("wrong_ce", "to the wrong CE", "went to the wrong CE or were mapped wrongly (the CE fields "
                                    "they arrived with name another CE, or none)"),
    ("bad_address", "with a wrong address or port",
     "arrived with another address or port than the DUT must write, to another Ethernet "
     "destination than the receiving port's MAC (a DUT that floods, broadcast, multicast), or from "
     "another Ethernet source than the DUT's MAC on that side (checks.src_mac)"),
    ("bad_ttl", "with a wrong TTL/hop limit",
     "arrived with another TTL/hop limit than the one sent less the DUT's hops (dut.hops)"),
    ("bad_tos", "with a wrong TOS/traffic class",
     "arrived with another TOS/traffic class than the one sent (traffic.dscp)"),
    ("bad_header", "with another wrong header field",
     "arrived with another header field wrong (DF, MF or the fragment offset, a length, the IPv6 "
     "flow label, TCP's own fields)"),
    ("bad_checksum", "with a bad checksum", "arrived with a bad IPv4 header, UDP or TCP checksum"),
    ("tcp_unexpected", "unexpected TCP segments",
     "were not the TCP segment their step expects (wrong flags or acknowledgement)"),
    # DNS replies by the client's verdict (docs/dns.md "The client's verdict on a reply").
    ("dns_wrong_answer", "wrong answers",
     "were DNS replies without the expected address record (another synthesis, prefix or "
     "address, an excluded AAAA record passed on (dns.exclude), NODATA where a record is due, "
     "a record where NODATA is due (dns.mapped))"),
    ("dns_servfail", "SERVFAIL replies", "were DNS replies with RCODE SERVFAIL"),
    ("dns_nxdomain", "NXDOMAIN replies", "were DNS replies with RCODE NXDOMAIN"),
    ("dns_other_rcode", "replies with another error RCODE",
     "were DNS replies with another error RCODE (REFUSED, FORMERR, NOTIMP, ...)"),
    ("dns_truncated", "truncated replies", "were DNS replies with TC set (the answer did not fit)"),
    ("dns_malformed", "malformed replies", "were DNS replies that could not be read to their answers"),
    ("dns_mismatch", "replies to no query asked",
     "were DNS replies whose ID, name, type or opcode matched no query the port and ID name (not "
     "counted against a query)"),
    # A right answer, held to what else the RFCs ask of it ([checks] dns_*).
    ("dns_duplicate_record", "replies with a record twice",
     "were DNS replies with the answer's record twice (RFC 2181 §5: a server suppresses duplicates)"),
    ("dns_bad_ttl", "replies with a TTL too long",
     "were DNS replies whose record or NODATA's SOA had a longer TTL than the authoritative side "
     "served (dns.ttl; a synthesis at most min(dns.ttl, dns.soa_ttl, dns.soa_minimum), RFC 6147 "
     "§5.1.7; NODATA at most min(dns.soa_ttl, dns.soa_minimum), RFC 2308 §3; a cache counts TTLs "
     "down, never up, RFC 2181 §8)"),
    ("dns_no_edns", "replies without EDNS(0)",
     "were DNS replies without the OPT record their query had (RFC 6891 §7: MUST)"),
    ("dns_no_ra", "replies without RA", "were DNS replies from the resolver with RA clear (RFC 1035 §4.1.1)"),
    ("dns_question_case", "replies with the question's case changed",
     "were DNS replies whose question's letters were in another case than the query's (the query's "
     "random case, which clients relying on draft-vixie-dnsext-dns0x20 check)"),
    ("dns_duplicate_reply", "second replies to a query",
     "were second DNS replies to a query already answered (its first reply counted)"),
    ("df_wrong", "with DF against checks.df_small",
     "were IPv4 packets of at most 1,260 bytes translated from IPv6 whose DF flag broke "
     "checks.df_small (RFC 7915 §5.1 clears it, the obsoleted RFC 6145 §5.1 set it; a DUT that "
     "does both follows neither)"),
    ("dns_unasked", "answers without asking upstream",
     "were right DNS answers beyond what the DUT's resolver asked the tester's authoritative side "
     "for (new names, and names whose records expired: dns.cache_expired): served stale or from "
     "nowhere (RFC 2181 §8)"),
)
# The refused kinds that are no loss: the query they answer again counted once as received, the
# packet delivered whole whatever its DF flag; the trial fails on them all the same
# (DirectionCounts.passes).
NOT_LOST = frozenset({"dns_duplicate_reply", "df_wrong", "dns_unasked"})
# The engine's names of a DNS stream's verdicts (its `dns` object), by count key.
DNS_VERDICTS = {f"dns_{verdict}": verdict for verdict in
                ("wrong_answer", "servfail", "nxdomain", "other_rcode", "truncated", "malformed", "mismatch",
                 "duplicate_record", "bad_ttl", "no_edns", "no_ra", "question_case", "duplicate_reply")}
# A port's foreign frames (not test frames of the trial's flows) beyond what a link carries
# anyway (ARP/ND, router solicitations, MLD: a few per trial) suggest test frames the DUT
# damaged beyond recognition: more than this many, and more than this share of the frames sent
# towards the port, are said (issue 29).
FOREIGN_NOISE_FRAMES = 100
FOREIGN_NOISE_SHARE = 0.001
# The port (as records name it: "0" left, "1" right) each direction's frames arrive on.
RECEIVING_PORT = {"forward": "1", "reverse": "0"}


def foreign_beyond_noise(record: dict) -> dict[str, int]:
    """A trial record's ports whose foreign frames exceed the background noise, with their
    counts."""
    sent = {port: 0 for port in RECEIVING_PORT.values()}
    for name, direction in record.get("directions", {}).items():
        if name in RECEIVING_PORT:
            sent[RECEIVING_PORT[name]] += direction.get("sent", 0)
    return {port: count for port, count in record.get("foreign", {}).items()
            if count > FOREIGN_NOISE_FRAMES + FOREIGN_NOISE_SHARE * sent.get(port, 0)}


# The counts a direction has only where the engine reported them (None otherwise).
OPTIONAL_COUNTS = ("wrong_ce", "bad_address", "bad_ttl", "bad_tos", "bad_header", "bad_checksum",
                   "tcp_unexpected", *DNS_VERDICTS, "df_set", "df_clear", "df_wrong", "dns_unasked",
                   "tunnel_ecn_copied", "tunnel_ecn_not_ect")
# The counts the front end derives (from_reply), not summed from the streams.
DERIVED_COUNTS = ("df_wrong", "dns_unasked")


def df_wrong(rule: str, df_set: int, df_clear: int) -> int:
    """The translated IPv4 packets of at most 1,260 bytes whose DF flag breaks checks.df_small's
    `rule`: DF set where RFC 7915 §5.1 clears it, clear where RFC 6145 §5.1 set it, and with
    "either" the fewer of the two kinds where a DUT did both (one behaviour, kept to)."""
    return {"rfc7915": df_set, "rfc6145": df_clear, "either": min(df_set, df_clear)}[rule]


def tunnel_ecn_mode(copied: int, not_ect: int) -> str | None:
    """Which of RFC 6040 §4.1's modes a DUT's tunnel entry wrote the outer ECN field in (both
    are right); None when no frame told (sent Not-ECT)."""
    modes = [f"normal mode (the inner ECN field copied: {copied:,})" if copied else "",
             f"compatibility mode (Not-ECT: {not_ect:,})" if not_ect else ""]
    return "tunnel entry's ECN: RFC 6040 §4.1 " + " and ".join(filter(None, modes)) if copied or not_ect else None


def df_behaviour(df_set: int, df_clear: int) -> str | None:
    """Which RFC's DF rule a DUT followed on the translated IPv4 packets of at most 1,260 bytes
    it delivered; None when none was counted."""
    if df_set and df_clear:
        return (f"DF set on {df_set:,} and clear on {df_clear:,} translated packets ≤ 1,260 bytes: "
                "neither RFC 7915 §5.1 (clear) nor RFC 6145 §5.1 (set), a mix")
    if df_set:
        return "DF set on translated packets ≤ 1,260 bytes: RFC 6145 §5.1 behaviour, RFC 7915 §5.1 clears it"
    if df_clear:
        return "DF clear on translated packets ≤ 1,260 bytes: RFC 7915 §5.1 behaviour (RFC 6145 §5.1 set it)"
    return None


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
    out_of_range: int = 0       # test frames whose tag sequence number the stream never sent
    # Test frames whose CE fields named no emulated CE, or disagreed on which (delivered to the
    # wrong CE, a wrong mapping: docs/ipv4aas.md); None when the direction checks no CE.
    wrong_ce: int | None = None
    # Test frames whose headers were not what the DUT must write (docs/protocol.md "Header
    # checks"), each counted once, by its first failing check; None when the direction's
    # streams had no `rx` (nothing checked).
    bad_address: int | None = None
    bad_ttl: int | None = None
    bad_tos: int | None = None
    bad_header: int | None = None
    bad_checksum: int | None = None
    # TCP segments that were not the step their flow expects (docs/tcp.md); None: no TCP.
    tcp_unexpected: int | None = None
    # DNS queries (docs/dns.md): their replies by the client's verdict (DNS_VERDICTS), each not
    # received; None without DNS.
    dns_wrong_answer: int | None = None
    dns_servfail: int | None = None
    dns_nxdomain: int | None = None
    dns_other_rcode: int | None = None
    dns_truncated: int | None = None
    dns_malformed: int | None = None
    dns_mismatch: int | None = None
    dns_duplicate_record: int | None = None
    dns_bad_ttl: int | None = None
    dns_no_edns: int | None = None
    dns_no_ra: int | None = None
    dns_question_case: int | None = None
    dns_duplicate_reply: int | None = None    # second replies: no loss, but a failed trial
    # The upstream queries the right answers needed (the streams' dns.upstream_due) beyond those
    # the tester's authoritative side answered (checks.dns_upstream): no loss, a failed trial.
    dns_unasked: int | None = None
    # Translated IPv4 packets of at most 1,260 bytes by their DF flag, and those of them that
    # broke checks.df_small (df_wrong: no loss, but a failed trial); None where none is counted.
    df_set: int | None = None
    df_clear: int | None = None
    df_wrong: int | None = None
    # Frames in a tunnel the DUT entered, by how it wrote the outer ECN field (RFC 6040 §4.1):
    # copied, or Not-ECT; None where not counted.
    tunnel_ecn_copied: int | None = None
    tunnel_ecn_not_ect: int | None = None
    # TCP SYNs or SYN-ACKs: the smallest MSS they arrived with (a DUT that clamps the MSS lowers
    # it): the most data a segment to their sender may carry (docs/tcp.md); None otherwise.
    mss_min: int | None = None
    # A direction carried by several engine flows of the same name (RFC 8219 §10.2.2: one per
    # client, started one after another): each flow's {"sent", "received", "planned", "rate"},
    # in the request's order; None for a direction of one flow.
    flows: list | None = None
    # IMIX (RFC 6985): frames sent and received per configured frame size (the size as
    # traffic.imix names it, in every direction and kind: a SIIT trial's 64-byte IPv4 and
    # 84-byte IPv6 frames are both of the size "84"), e.g.
    # {"64": {"sent": 7000, "received": 7000}, ...}; None without IMIX.
    sizes: dict | None = None
    # Pacing: how far sending fell behind the schedule at worst (µs, the worst flow) and, with
    # the schedule validity rule (trial.validity), the frames that left more than trial.max_lag
    # late, in catch-up bursts; None when the engine did not say.
    max_lag_us: float | None = None
    lagged: int | None = None

    @property
    def loss_ratio(self) -> float | None:
        """(sent - received) / sent (RFC 2544 §26.3, as a ratio); None when nothing was sent."""
        return (self.sent - self.received) / self.sent if self.sent else None

    def passes(self, loss_tolerance: float) -> bool:
        # received > sent cannot happen with deduplicated counting; if it does it is an
        # anomaly, never a pass (duplicates must not mask losses, RFC 2544 §10).
        return self.sent > 0 and self.received <= self.sent and self.loss_ratio <= loss_tolerance \
            and not any(getattr(self, key) for key in NOT_LOST)

    def refused(self) -> list[tuple[int, str]]:
        """(count, how the console line says it) of every kind of refused test frame this
        direction had (REFUSED), in its order."""
        return [(count, short) for key, short, _ in REFUSED if (count := getattr(self, key))]

    def to_dict(self) -> dict:
        return {"sent": self.sent, "received": self.received, "planned": self.planned,
                "loss_ratio": self.loss_ratio, "duplicates": self.duplicates,
                "reordered": self.reordered, "bad_length": self.bad_length,
                **({"late": self.late} if self.late is not None else {}),
                **({"bad_vlan": self.bad_vlan} if self.bad_vlan else {}),
                **({"out_of_range": self.out_of_range} if self.out_of_range else {}),
                **{key: getattr(self, key) for key in OPTIONAL_COUNTS if getattr(self, key) is not None},
                **({"df_small": behaviour} if (behaviour := df_behaviour(self.df_set or 0, self.df_clear or 0))
                   else {}),
                **({"tunnel_ecn": mode} if (mode := tunnel_ecn_mode(self.tunnel_ecn_copied or 0,
                                                                   self.tunnel_ecn_not_ect or 0)) else {}),
                **({"mss_min": self.mss_min} if self.mss_min is not None else {}),
                **({"sizes": self.sizes} if self.sizes else {}),
                **({"flows": self.flows} if self.flows else {}),
                **({"max_lag_us": self.max_lag_us} if self.max_lag_us is not None else {}),
                **({"lagged": self.lagged} if self.lagged is not None else {})}


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
    # Per port index (str), the frames the tester's port itself dropped or miscounted during
    # the trial (the engine's `drops`: imissed, rx_nombuf, ierrors, oerrors, the driver's own
    # drop counters as `xstats`), only ports with any; None when none did.
    port_drops: dict | None = field(default=None, compare=False)
    # Per port index (str), the pause frames (IEEE 802.3x, PFC) the port received, by the
    # driver's counter: the DUT asked the tester to stop sending (a finding about the DUT;
    # with tester.flow_control = "off" the tester did not); None when none came.
    pause_received: dict | None = field(default=None, compare=False)
    # Retakes (trial.retakes): this result's attempt number, and what the earlier attempts of
    # the same step showed ({"attempt", "invalid_reason", "achieved_rate", "max_lag_us",
    # "loss_ratio"}): their records are in trials.jsonl with "retaken": true.
    attempt: int = field(default=1, compare=False)
    # The request's schedule validity rule tolerance (s; None: siitperf's rule).
    max_lag: float | None = field(default=None, compare=False)
    earlier_attempts: tuple = field(default=(), compare=False)

    @classmethod
    def from_reply(cls, rate: int, reply: dict, duration: float | None = None,
                   size_names: dict | None = None,
                   max_lag: float | None = None, df_small: str = "rfc7915") -> "TrialResult":
        """Build from the engine's final `trial` reply (docs/protocol.md). size_names: the
        configured size of each stream of the request's IMIX flows, {flow: {kind: [size, ...]}}
        in the streams' order (traffic.plan.imix_size_names); without it a size is named by the
        frames as sent. df_small: checks.df_small, the rule the DF counts are judged by."""
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
                out_of_range=sum(s.get("out_of_range", 0) for s in streams),
                sizes=_per_size(streams, (size_names or {}).get(name, {})),
                max_lag_us=max((flow["max_lag_us"] for flow in flows if "max_lag_us" in flow),
                               default=None),
                lagged=(sum(flow["lagged"] for flow in flows if "lagged" in flow)
                        if any("lagged" in flow for flow in flows) else None),
                late=sum(late) if late else None,
                **{key: _sum_reported(streams, key) for key in OPTIONAL_COUNTS if key not in DERIVED_COUNTS},
                mss_min=min((s["mss_min"] for s in streams if "mss_min" in s), default=None),
                flows=[{"rate": flow.get("rate"), "planned": flow.get("planned"),
                        "sent": int(flow["sent"]), "received": int(flow["received"])}
                       for flow in flows] if len(flows) > 1 else None)
            seen = directions[name]
            if seen.df_set is not None:  # the whole direction judged: one behaviour, kept to
                directions[name] = replace(seen, df_wrong=df_wrong(df_small, seen.df_set, seen.df_clear))
            due = sum(s["dns"].get("upstream_due", 0) for s in streams if "dns" in s)
            if due:  # what the DUT's resolver asked the authoritative ports, against what it had to
                asked = sum(p.get("dns", {}).get("answered", 0) for p in reply.get("ports", []))
                directions[name] = replace(directions[name], dns_unasked=max(0, due - asked))
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
        drops = {str(port["index"]): counts for port in reply.get("ports", [])
                 if any((counts := _port_drops(port.get("drops", {}))).get(key)
                        for key in DROP_COUNTERS)}
        pause = {str(port["index"]): port["pause_received"] for port in reply.get("ports", [])
                 if port.get("pause_received")}
        return cls(rate=rate, valid=bool(reply.get("valid")), directions=directions,
                   invalid_reason=reply.get("invalid_reason"), reply=reply, delay=delay or None,
                   duration=duration, queues={"tx": tx, "rx": rx} if several else None,
                   losses=losses or None, port_drops=drops or None, pause_received=pause or None,
                   max_lag=max_lag)

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
        """Frames per second the tester actually sent in the slowest direction: the rate times
        the share of its planned frames the direction sent (a flow that starts late plans fewer
        than rate x duration), or its frames over the requested duration when the plan is
        unknown; a sender cut off (not every frame sent) had the validity rule's whole window,
        duration + max_lag (or duration x (1 + 1e-5)), so its pace is scaled to that. None
        when unknown."""
        if not self.directions or not self.duration:
            return None
        window = self.duration + self.max_lag if self.max_lag is not None else self.duration
        return min((self.rate * d.sent / d.planned if d.planned else d.sent / self.duration)
                   * (self.duration / window if d.planned and d.sent < d.planned else 1.0)
                   for d in self.directions.values())

    @property
    def rate_not_kept(self) -> bool:
        """Invalid because the tester could not send at this rate."""
        return not self.valid and (self.invalid_reason or "").startswith(RATE_NOT_KEPT)

    @property
    def capacity_shown(self) -> bool:
        """Invalid because the sender met its capacity (CAPACITY_SHORTFALL, HICCUP_SECONDS): it
        sent at its own pace (achieved_rate), which no retake would raise."""
        pace = self.achieved_rate
        if not self.rate_not_kept or pace is None or not self.duration:
            return False
        return (pace < self.rate * CAPACITY_SHORTFALL
                and self.duration * (1 - pace / self.rate) > HICCUP_SECONDS)

    @property
    def dropped_by_tester(self) -> bool:
        """Invalid because a tester port dropped frames itself."""
        return not self.valid and (self.invalid_reason or "").startswith(TESTER_DROPPED)

    @property
    def replies_not_sent(self) -> bool:
        """Invalid because the tester could not send the TCP replies its receivers wrote."""
        return not self.valid and (self.invalid_reason or "").startswith(REPLIES_NOT_SENT)

    @property
    def link_went_down(self) -> bool:
        """Invalid because a port's link went down during the trial (the engine polls them)."""
        return not self.valid and (self.invalid_reason or "").startswith(LINK_DOWN)

    @property
    def tester_fault(self) -> bool:
        """Invalid by the tester's own doing (its pacing, its ports, its replies): worth taking
        again."""
        return self.rate_not_kept or self.dropped_by_tester or self.replies_not_sent

    @property
    def max_lag_us(self) -> float | None:
        """How far sending fell behind the schedule at worst, in any direction (µs)."""
        lags = [d.max_lag_us for d in self.directions.values() if d.max_lag_us is not None]
        return max(lags, default=None)

    def lost_beyond_tester_fault(self) -> bool:
        """Whether some direction lost more frames than the tester's own faults can explain:
        the frames it sent bunched up in catch-up bursts (`lagged`, or what the worst lag
        bunched at the trial's rate) plus the frames its ports dropped themselves. Such a
        trial failed by the DUT's doing, whatever else went wrong with it."""
        dropped = sum(frames_dropped_by_tester(counts) for counts in (self.port_drops or {}).values())
        for d in self.directions.values():
            bunched = (d.lagged if d.lagged is not None else
                       math.ceil((d.max_lag_us or 0) * 1e-6 * self.rate))
            if d.sent - d.received > bunched + dropped:
                return True
        return False

    def attempt_summary(self) -> dict:
        """What an attempt that was taken again showed, for the final attempt's record."""
        return {"attempt": self.attempt, "invalid_reason": self.invalid_reason,
                "achieved_rate": self.achieved_rate, "max_lag_us": self.max_lag_us,
                "loss_ratio": self.loss_ratio}

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
                **({"losses": self.losses} if self.losses else {}),
                **({"port_drops": self.port_drops} if self.port_drops else {}),
                **({"pause_received": self.pause_received} if self.pause_received else {}),
                **({"max_lag": self.max_lag} if self.max_lag is not None else {}),
                **({"attempt": self.attempt} if self.attempt > 1 else {}),
                **({"earlier_attempts": list(self.earlier_attempts)}
                   if self.earlier_attempts else {})}


# The engine's per-port counters (docs/protocol.md "drops"), the kernel interface's flattened
# into kernel_rx_dropped and the AF_XDP sockets' into xsk_lost, and the front end's
# peer_tx_dropped (measure/peer_drops.py); frames in TESTER_DROP_COUNTERS (and the driver's
# `xstats`) the tester itself dropped (frames_dropped_by_tester).
TESTER_DROP_COUNTERS = ("imissed", "rx_nombuf", "kernel_rx_dropped", "xsk_lost", "tx_lost", "peer_tx_dropped")
DROP_COUNTERS = (*TESTER_DROP_COUNTERS, "ierrors", "oerrors", "xstats")


def frames_dropped_by_tester(counts: dict) -> int:
    """The frames a port's counters say the tester itself dropped. Counters overlap: an af_xdp
    port's kernel interface counts every frame its AF_XDP socket could not take, including
    those DPDK's PMD counts as imissed (the socket's fill ring was empty), and a driver counts
    one drop in several of its own counters (mlx5's imissed is its rx_out_of_buffer), the AF_XDP
    sockets' own count holds imissed's, and a veth peer's tx_dropped holds the frames the port's
    interface refused as too long (counted in its rx_dropped too): the largest of them, what
    the tester surely dropped (the engine's PortDrops::tester_drops, the same rule; any of them
    makes the trial invalid)."""
    return (counts.get("rx_nombuf", 0) + counts.get("tx_lost", 0)
            + max(counts.get("imissed", 0), counts.get("kernel_rx_dropped", 0), counts.get("xsk_lost", 0),
                  counts.get("peer_tx_dropped", 0), *(counts.get("xstats") or {}).values()))


def _port_drops(drops: dict) -> dict:
    """A port's `drops` for the record: the counters, its kernel interface's, its AF_XDP
    sockets' (what they lost, and of that what their full RX rings cost) and its driver's."""
    kernel, xsk = drops.get("kernel") or {}, drops.get("xsk") or {}
    return {**{key: value for key, value in drops.items()
               if key not in ("queue_errors", "kernel", "xsk")},
            **({"kernel_rx_dropped": kernel.get("rx_dropped", 0),
                "kernel_interface": kernel.get("interface")} if kernel else {}),
            **({"xsk_lost": sum(xsk.get(key, 0) for key in ("rx_dropped", "rx_full", "rx_invalid")),
                "xsk_rx_full": xsk.get("rx_full", 0)} if xsk else {})}


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


def _sum_reported(streams: list[dict], key: str) -> int | None:
    """A count over the streams that report it (a DNS verdict's in their `dns` object); None when
    none does."""
    if key in DNS_VERDICTS:
        counts = [s["dns"].get(DNS_VERDICTS[key], 0) for s in streams if "dns" in s]
    else:
        counts = [s[key] for s in streams if key in s]
    return sum(counts) if counts else None


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
        out_of_range=d.get("out_of_range", 0),
        **{key: d.get(key) for key in OPTIONAL_COUNTS}, mss_min=d.get("mss_min"),
        sizes=d.get("sizes"), flows=d.get("flows"), max_lag_us=d.get("max_lag_us"),
        lagged=d.get("lagged"))
        for name, d in record.get("directions", {}).items()}
    return TrialResult(rate=record["rate"], valid=record["valid"], directions=directions,
                       invalid_reason=record.get("invalid_reason"), delay=record.get("delay"),
                       duration=record.get("duration"), queues=record.get("queues"),
                       losses=record.get("losses"), port_drops=record.get("port_drops"),
                       pause_received=record.get("pause_received"),
                       attempt=record.get("attempt", 1), max_lag=record.get("max_lag"),
                       earlier_attempts=tuple(record.get("earlier_attempts", ())))


# --------------------------------------------------------------------------------------------
# Version and errors (docs/protocol.md, "Versions" and "Errors")
# --------------------------------------------------------------------------------------------

# The protocol this front end speaks: an engine of the same major and any minor is accepted
# (a minor only adds optional keys and reply fields, which the front end ignores).
PROTOCOL_VERSION = "2.21"


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
