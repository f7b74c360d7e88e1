# SPDX-License-Identifier: BSD-3-Clause
"""Flows of a protocol `trial` request, frame sizes, and the medium's maximum frame rate.

Port 0 is the left tester port, port 1 the right one (xlatperf/engine/client.py makes DPDK number them so).
Forward frames go left -> right, reverse frames right -> left.
"""

import ipaddress
import secrets
from dataclasses import dataclass, replace
from fractions import Fraction

from ..config.dns import query_ports, repeat_after, reply_checks
from ..config.stateful import public_ports, roles
from ..config.variation import received_fields, varying_fields
from ..frames.imix import mixed_pattern
from ..frames.kinds import BACKGROUND, SMALL_TRANSLATED, Received, TrialFrames, dut_hops, trial_frames
from ..frames.stack import IP_STACKS, SENT_TTL, VLAN_TAG_BYTES, Stack, dns_answer, dns_query, size_name
from ..frames.trial import (active_directions, arriving_ecn, direction_sides, has_background, lookup, sent_tos,
                            side_vlan)
from ..util.errors import ConfigError
from ..util.rates import format_speed, max_frame_rate, parse_speed

PORT_INDEX = {"left": 0, "right": 1}
# The MAC of a port that has none of its own (a ring pair's: docs/protocol.md "Header checks").
NO_MAC = "00:00:00:00:00:00"
DNS_PORT = 53


def imix_size_names(named: Stack, flows: list[dict]) -> dict[str, dict[str, list[int]]]:
    """The configured size of each stream of a trial request's IMIX flows (those with
    `streams`), per flow name and kind in the streams' order: the order of the engine's
    per-stream `sizes` in its reply (docs/protocol.md), which TrialResult names with them.
    named: the stack whose frames the configured sizes name (TrialFrames.named, a fact of the
    configuration, resolved once per plan)."""
    names: dict[str, dict[str, list[int]]] = {}
    for flow in flows:
        for stream in flow.get("streams", []):
            kinds = names.setdefault(flow["name"], {})
            kinds.setdefault(stream.get("kind", "foreground"), []).append(
                size_name(stream["frame_size"], IP_STACKS[stream["ip_version"]], named))
    return names


def port_speed_bps(config: dict, side: str, port_info: dict) -> int:
    """Link speed of a side in bit/s: `speed` from the config, else what the port reports."""
    if config.side(side).speed:
        return parse_speed(config.side(side).speed)
    mbps = port_info.get("link_speed_mbps") or 0
    if mbps <= 0:
        raise ConfigError(f'{side}.speed = "": the port {port_info.get("name", side)} reports no '
                          f'link speed; set {side}.speed, e.g. "10G"')
    return int(mbps) * 10**6


@dataclass(frozen=True)
class MiddleLink:
    """A dual DUT's link between its CE and its BR (B4 and AFTR, CLAT and PLAT; RFC 8219 §4.2
    Figure 2) as one direction's frames cross it: their header stack there, their bytes per
    frame on average (the foreground frames as the kind has them there, the native IPv6
    background as sent; no VLAN tags: the tester's sides' tags are on its own links), the
    link's speed (dut.middle_link_speed) and the medium's maximum there (RFC 8219 §5.1,
    Appendix A: a 64-byte IPv4 frame is 104 bytes in a tunnel)."""
    stack: str
    mean_frame: Fraction
    largest_frame: int
    speed_bps: int
    max_rate: int


@dataclass(frozen=True)
class DirectionPlan:
    """Everything about one direction that does not depend on the rate."""
    name: str                    # "forward" | "reverse"
    tx_side: str                 # "left" | "right"
    rx_side: str
    foreground: dict             # protocol `foreground` object (IMIX: the first size's)
    background: dict | None      # protocol `background` object (native IPv6), or None
    largest_frame: int           # bytes; the largest frame on the wire (with its VLAN tags) in this direction
    speed_bps: int               # the slower of the two ports
    max_rate: int                # frames/s: the medium's maximum for mean_frame at speed_bps
    # Bytes on the wire per frame (VLAN tags included), averaged over the frame pattern, on
    # the link that carries more: with one frame size, the larger of the sent and received one.
    mean_frame: Fraction = Fraction(0)
    # IMIX (traffic.imix): the protocol's `streams` (each with its "kind") and `pattern`
    # (stream index of frame k % len); empty otherwise (foreground, background and mix).
    streams: tuple = ()
    pattern: tuple = ()
    # The header stacks of the foreground frames as sent and as received (IPv4 in IPv6).
    stacks: tuple[Stack, ...] = ()
    # A dual DUT's middle link; max_rate is the smaller of the tester's links' and its.
    middle: MiddleLink | None = None

    @property
    def middle_limits(self) -> bool:
        """Whether the middle link, not the tester's links, sets max_rate."""
        return self.middle is not None and self.middle.max_rate < max_frame_rate(self.speed_bps, self.mean_frame)

    def describe_limit(self) -> str:
        if self.middle_limits:
            return (f"the medium's maximum for {self.name} {_frames(self.middle)} on the dual "
                    f"DUT's middle link ({self.middle.stack} between its CE and BR, RFC 8219 §5.1) at "
                    f"{format_speed(self.middle.speed_bps)}")
        return f"the medium's maximum for {self.name} {_frames(self)} at {format_speed(self.speed_bps)}"


def _frames(link: "DirectionPlan | MiddleLink") -> str:
    """The frames a link's maximum is for: of one size, or a mix's mean."""
    if link.mean_frame == link.largest_frame:
        return f"frames of {link.largest_frame} bytes"
    return f"frames of {float(link.mean_frame):.1f} bytes on average (the mix's weighted mean)"


class TrafficPlan:
    """Turns the effective config and the engine's port list into trial flows.

    ports: the `ports` list of the engine's `hello` reply (index 0 = left, 1 = right).
    through_dut: False for a selftest where the two tester ports are wired to each other: no
    translation happens, so frames arrive as they were sent, addressed to the other port's MAC.
    """

    def __init__(self, config: dict, ports: list[dict], *, through_dut: bool = True):
        if len(ports) < 2:
            raise ConfigError(f"the engine reports {len(ports)} port(s); two are needed "
                              "(left = port 0, right = port 1)")
        self.config = config
        # The trial's frames, resolved once: every stream and size below reads them.
        self.frames: TrialFrames = trial_frames(config)
        self.ports = {side: ports[index] for side, index in PORT_INDEX.items()}
        self.through_dut = through_dut
        self.directions = [self._plan(name) for name in active_directions(config)]
        if config.dns.enabled:
            self.directions = [self._dns_plan(plan) for plan in self.directions]
        # dns64perf++'s names carry no nonce: each trial asks the ones after its predecessor's
        # (the number of its first among dns.a_records' addresses), the run's first at random
        # (another run's names are not this one's, but by chance), and the run's names so far.
        self.names_from = secrets.randbelow(self._name_space()) if self._name_space() else 0
        self.names_asked = 0

    # -- rates ---------------------------------------------------------------------------------

    @property
    def max_rate(self) -> int:
        """Highest rate (frames/s per direction) every active direction can carry: RFC 2544 §14
        bidirectional tests use the same rate in each direction."""
        return min(plan.max_rate for plan in self.directions)

    def check_rate(self, rate: int, what: str = "rate") -> None:
        """Reject a rate that is not positive or exceeds the medium's maximum of a direction;
        `what` names where the rate came from (e.g. "throughput.max_rate", "--rate")."""
        if not isinstance(rate, int) or isinstance(rate, bool) or rate <= 0:
            raise ConfigError(f"{what} = {rate}: must be a positive integer (frames/s)")
        for plan in self.directions:
            if rate > plan.max_rate:
                raise ConfigError(f"{what} = {rate}: must be at most {plan.max_rate} frames/s, "
                                  f"{plan.describe_limit()}")

    # -- flows ---------------------------------------------------------------------------------

    def flows(self, rate: int) -> list[dict]:
        """The `flows` list of a protocol trial request, one flow per active direction."""
        self.check_rate(rate)
        if self.config.dns.enabled:
            return [self._dns_flow(plan, rate) for plan in self.directions]
        traffic = self.config.traffic
        flows = []
        for plan in self.directions:
            flow = {"name": plan.name, "tx_port": PORT_INDEX[plan.tx_side],
                    "rx_port": PORT_INDEX[plan.rx_side], "rate": rate}
            if plan.streams:
                flow |= {"streams": [dict(stream) for stream in plan.streams], "pattern": list(plan.pattern)}
            else:
                flow |= {"mix": {"n": traffic.mix_n, "m": traffic.mix_m}, "foreground": dict(plan.foreground)}
                if plan.background is not None:
                    flow["background"] = dict(plan.background)
            flows.append(flow)
        return flows

    # -- DNS (docs/dns.md) -----------------------------------------------------------------------

    @property
    def dns(self) -> dict | None:
        """The trial request's `dns` object (the zone, its records, the ports that answer for
        it), or None without DNS traffic."""
        dns = self.config.dns
        if not dns.enabled:
            return None
        answering = [PORT_INDEX[self.directions[0].rx_side]] if dns.authoritative else []
        return {"zone": dns.zone, "names": dns.names, "a": dns.a_records, "aaaa": dns.aaaa_records, "aaaa_share": dns.aaaa_share,
                "ttl": dns.ttl, "soa_ttl": dns.soa_ttl, "soa_minimum": dns.soa_minimum,
                "authoritative": answering}

    def _dns_plan(self, plan: DirectionPlan) -> DirectionPlan:
        """A direction whose frames are DNS queries: its foreground with the query in place of
        the test tag, to port 53 (of dns.server when a DUT's resolver answers); the medium's
        maximum for the queries one way and their answers (one address record) the other."""
        dns = self.config.dns
        sent, received = plan.stacks
        query = sent.carrying(dns_query(dns.zone, dns.names, dns.edns)).min_frame
        answer = max(sent.carrying(dns_answer(dns.zone, dns.names, dns.edns, dns.qtype)).min_frame,
                     received.carrying(dns_answer(dns.zone, dns.names, dns.edns, dns.qtype)).min_frame)
        foreground = {key: value for key, value in plan.foreground.items() if key not in ("vary", "rx")}
        foreground |= {"dst_port": DNS_PORT, "frame_size": query, "rx_frame_size": query,
                       **({"dst_ip": dns.server} if dns.server else {})}
        tags = VLAN_TAG_BYTES * max(len(side_vlan(self.config, plan.tx_side)), len(side_vlan(self.config, plan.rx_side)))
        largest = answer + tags
        return replace(plan, foreground=foreground, background=None, streams=(), pattern=(),
                       largest_frame=largest, mean_frame=Fraction(largest),
                       max_rate=max_frame_rate(plan.speed_bps, Fraction(largest)), middle=None)

    def _dns_flow(self, plan: DirectionPlan, rate: int) -> dict:
        """A direction's flow of DNS queries at `rate` queries/s: their answers come back to the
        sending port. Each trial's names are its own (a fresh nonce), so no DUT's cache answers
        them from an earlier trial or run."""
        dns = self.config.dns
        tx = PORT_INDEX[plan.tx_side]
        return {"name": plan.name, "tx_port": tx, "rx_port": tx, "rate": rate,
                "foreground": dict(plan.foreground),
                "dns": {"qtype": dns.qtype, "edns": dns.edns, "ports": query_ports(self.config, rate),
                        "nonce": secrets.randbits(32), "synthesis": dns.synthesis,
                        **({"names_from": self.names_from} if dns.names == "dns64perf" else {}),
                        "checks": reply_checks(self.config),
                        # What a DNS64 makes of the records (RFC 6147 §5.1.4): only one is asked.
                        **({"exclude": list(dns.exclude), "mapped": list(dns.mapped)} if dns.server else {}),
                        **({"repeat": dns.cache_share, "repeat_after": repeat_after(self.config)}
                           if dns.cache_share else {})}}

    def names_sent(self, queries: int) -> dict | None:
        """After a trial of `queries` queries of dns64perf++'s names: the next trial's names
        follow its names, round dns.a_records' addresses. What its record says of its names:
        the first's number, and whether the run had asked more names than there are (then the
        trial asked names of earlier trials again, which a DNS64 may answer from its cache)."""
        space = self._name_space()
        if not space:
            return None
        first = self.names_from
        self.names_asked += queries
        self.names_from = (first + queries) % space
        return {"from": first, "count": queries, "asked_before": self.names_asked > space}

    def _name_space(self) -> int:
        """How many dns64perf++ names the queries may ask (dns.a_records' addresses), or 0
        where they ask xlatperf's."""
        dns = self.config.dns
        return ipaddress.ip_network(dns.a_records).num_addresses if dns.enabled and dns.names == "dns64perf" else 0

    def _plan(self, name: str) -> DirectionPlan:
        """A direction's streams, its frame pattern (one mechanism for the foreground/background
        mix and IMIX, as in the engine) and the medium's maximum frame rate for that pattern."""
        config = self.config
        tx, rx = direction_sides(name)
        kind = self.frames.kind
        source, destination = kind.addresses(config, name)
        sent_stack, received_stack = sent, received = self.frames.directions[name]
        period = list(self.frames.sizes)
        sizes = list(dict.fromkeys(period))  # distinct, in order of first appearance
        own_keys = kind.stream_keys(config, name)  # tunnel, emulated CEs
        states = kind.received(config, name)
        streams = [{"kind": "foreground",
                    **self._stream(name, sent, received, source, destination, size, states, nat=True,
                                   background=False),
                    **own_keys}
                   for size in sizes]
        if not self.through_dut:
            streams = [_without_unseen_checks(stream, sent) for stream in streams]
        mix_n, mix_m = (config.traffic.mix_n, config.traffic.mix_m) if has_background(config) else (1, 1)
        if has_background(config):
            # Native IPv6 between the real IPv6 addresses: the DUT forwards it untranslated, and
            # a stateful NAT translates it only where it is the NAT's own traffic (NAT66).
            native = Received(f"{tx}.ipv6", f"{rx}.ipv6", ports=True, ttl_tos=True)
            nat = (sent, received) == (BACKGROUND, BACKGROUND)
            streams += [{"kind": "background",
                         **self._stream(name, BACKGROUND, BACKGROUND, f"{tx}.ipv6", f"{rx}.ipv6", size,
                                        native, nat, background=True)}
                        for size in sizes]
        # Frame k: foreground iff k % n < m (RFC 8219 §5.3), each kind through the IMIX's order.
        pattern = [sizes.index(size) + (0 if foreground else len(sizes))
                   for foreground, size in mixed_pattern(period, mix_n, mix_m)]
        # On the wire: the VLAN tags of the side a frame is on come on top.
        tx_tags = VLAN_TAG_BYTES * len(side_vlan(config, tx))
        rx_tags = VLAN_TAG_BYTES * len(side_vlan(config, rx if self.through_dut else tx))
        sent = [streams[i]["frame_size"] + tx_tags for i in pattern]
        received = [streams[i]["rx_frame_size"] + rx_tags for i in pattern]
        mean = max(Fraction(sum(sent), len(pattern)), Fraction(sum(received), len(pattern)))
        speed = min(port_speed_bps(config, side, self.ports[side]) for side in (tx, rx))
        # RFC 8219 §5.1: a dual DUT's frames cross its middle link encapsulated or translated.
        middle = self._middle(name, sizes, pattern, streams, speed) if self.through_dut else None
        max_rate = max_frame_rate(speed, mean)
        imix = bool(config.traffic.imix)
        return DirectionPlan(name=name, tx_side=tx, rx_side=rx, foreground=_protocol(streams[0]),
                             background=_protocol(streams[len(sizes)]) if has_background(config) else None,
                             largest_frame=max(sent + received), speed_bps=speed,
                             max_rate=min(max_rate, middle.max_rate) if middle else max_rate, mean_frame=mean,
                             streams=tuple(streams) if imix else (), pattern=tuple(pattern) if imix else (),
                             stacks=(sent_stack, received_stack), middle=middle)

    def _middle(self, name: str, sizes: list[int], pattern: list[int], streams: list[dict],
                speed: int) -> MiddleLink | None:
        """A dual DUT's middle link for a direction's frame pattern (foreground stream i of
        sizes[i], then the background ones), at dut.middle_link_speed or, unset, the tester's
        links' `speed`; None without one."""
        config = self.config
        stack = self.frames.kind.middle_stack(config, name)
        if stack is None:
            return None
        on_link = [self.frames.frame_size_of(stack, size) for size in sizes] + \
            [stream["frame_size"] for stream in streams[len(sizes):]]
        frames = [on_link[i] for i in pattern]
        mean = Fraction(sum(frames), len(frames))
        middle_speed = parse_speed(config.dut.middle_link_speed) if config.dut.middle_link_speed else speed
        return MiddleLink(str(stack), mean, max(frames), middle_speed, max_frame_rate(middle_speed, mean))

    def _stream(self, direction: str, sent: Stack, received: Stack,
                source: str, destination: str, size: int, states: Received, nat: bool,
                background: bool) -> dict:
        config = self.config
        tx, rx = direction_sides(direction)
        if self.through_dut:
            dst_mac = config.side(tx).dut_mac
        else:  # wired to the other tester port: nothing translates on a cable
            received = sent
            dst_mac = config.side(rx).mac or self.ports[rx]["mac"]
        stream = {
            "ip_version": sent.inner,
            "src_mac": config.side(tx).mac or self.ports[tx]["mac"],
            "dst_mac": dst_mac,
            "src_ip": lookup(config, source),
            "dst_ip": lookup(config, destination),
            "src_port": config.traffic.src_port,
            "dst_port": config.traffic.dst_port,
            "frame_size": self.frames.frame_size_of(sent, size),
            "rx_frame_size": self.frames.frame_size_of(received, size),
            "vary": varying_fields(config, direction, sent.inner),
            "tos": sent_tos(config),
            "ttl": SENT_TTL,
            **({"flow_label": config.traffic.flow_label} if sent.inner == 6 else {}),
            **self._vlan_keys(tx, rx),
        }
        return {**stream, "rx": self._rx(direction, stream, sent, received, states, nat, background)}

    def _rx(self, direction: str, stream: dict, sent: Stack, received: Stack, states: Received,
            nat: bool, background: bool) -> dict:
        """A stream's `rx` (docs/protocol.md "Header checks"): what the DUT must have written
        into its frames, as the traffic kind states it, with the checks the configuration
        leaves on (checks.*), the DUT's hops (dut.hops; dut.background_hops for the native
        IPv6 `background`) and the rewrites of a stateful NAT
        between the sides (`nat`: one translates these frames). On a cable between the
        tester's ports the frames arrive as sent."""
        checks = self.config.checks
        rx: dict = {"ip_version": received.inner}
        addresses, tunnel, vary = self._addresses(direction, stream, sent, received, states, nat) \
            if checks.address else ({}, {}, [])
        rx |= addresses
        if states.ttl_tos or not self.through_dut:
            if checks.ttl:
                hops = dut_hops(self.config, background) if self.through_dut else 0
                low, exits = stream["ttl"] - hops, min(states.tunnel_exits, hops)
                rx["ttl"] = [low, low + exits] if exits else low
            if checks.tos:
                rx["tos"] = stream["tos"]
            # The ECN field apart from the DSCP: as sent, or CE where sent ECT (on a cable: as
            # sent); not checked, it leaves `tos` the DSCP alone.
            if checks.ecn:
                ecn = stream["tos"] & 3
                rx["ecn"] = arriving_ecn(ecn) if self.through_dut else [ecn]
            elif checks.tos:
                rx["ecn"] = [0, 1, 2, 3]
        if checks.df and received.inner == 4:
            # The tester sends DF set; through the DUT the kind says what it becomes (IPv4
            # arrivals are foreground frames: the background is IPv6).
            df = self.frames.kind.df(self.config, direction, stream["rx_frame_size"]) \
                if self.through_dut else True
            if df == SMALL_TRANSLATED:  # counted by its value, the direction judged (df_small)
                rx["count_df"] = True
            elif df is not None:
                rx["df"] = df
        if checks.flow_label and received.inner == 6:
            label = expected_flow_label(stream, sent.inner, self.through_dut)
            if label is not None:
                rx["flow_label"] = label
        rx["checksums"] = checks.checksum
        # A frame must be addressed to the receiving port (the engine's Ethernet check), or to
        # the MAC the tester sends from on that side where the config sets one: the DUT (or
        # the other tester port, on a cable) sends to it.
        tx_side, rx_side = direction_sides(direction)
        own_mac = self.config.side(rx_side).mac
        if own_mac:
            rx["dst_mac"] = own_mac
        # ... and come from the DUT's MAC on that side (dut_mac: set, or resolved before the
        # first trial), on a cable from the other tester port's; a port without a MAC (a ring
        # pair's, wired inside the engine) has no neighbour to come from.
        sender = self.config.side(rx_side).dut_mac if self.through_dut else \
            self.config.side(tx_side).mac or self.ports[tx_side]["mac"]
        if checks.src_mac and sender and self.ports[rx_side]["mac"] != NO_MAC:
            rx["src_mac"] = sender
        if checks.checksum and not checks.zero_udp_checksum_ipv6 and received.inner == 6:
            rx["ipv6_zero_udp_checksum"] = True  # taken as 0xffff where the sum verifies with it
        if vary:
            rx["vary"] = vary
        if received.encapsulated:
            rx["tunnel"] = {**tunnel, **received.tunnel_keys}
            if states.tunnel_carries_tos and "tos" in rx and self.through_dut:
                rx["tunnel"]["carries_tos"] = True
            # The DUT's tunnel entry writes the outer ECN field by RFC 6040 §4.1: which mode, the
            # frames tell where they were sent ECT or CE (from Not-ECT both write Not-ECT).
            if checks.ecn and self.through_dut and stream["tos"] & 3:
                rx["count_tunnel_ecn"] = True
        return rx

    def _addresses(self, direction: str, stream: dict, sent: Stack, received: Stack,
                   states: Received, nat: bool) -> tuple[dict, dict, list[dict]]:
        """The addresses and ports a stream's frames must arrive with, those the kind states
        (on a cable: as sent), those of the tunnel they arrive in, and their varying words at
        the received header's offsets; a key left out is not checked."""
        config = self.config
        vary, unstated = received_fields(config, direction, sent.inner, received.inner)
        def value(key):
            return (lookup(config, key) or None) if key else None

        tunnel = {}
        if self.through_dut:
            src, dst = value(states.src), value(states.dst)
            tunnel = {name: address for name, address in (("src_ip", value(states.tunnel_src)),
                                                         ("dst_ip", value(states.tunnel_dst))) if address}
        else:
            src, dst = (stream[key] if stated else None for key, stated in
                        (("src_ip", states.src), ("dst_ip", states.dst)))
        ports = (stream["src_port"], stream["dst_port"]) if states.ports else (None, None)
        nat_port: list[dict] = []
        expected = dict(zip(("src_ip", "dst_ip", "src_port", "dst_port"), (src, dst, *ports)))
        if (config.stateful.enabled or states.nat) and nat and self.through_dut:
            # RFC 9693: a stateful NAT between the sides sends the Initiator's frames on from a
            # port of its choice and its public address (checked where {initiator}.virtual_ipvX
            # names it: the Initiator as the Responder sees it), and writes the destination of
            # the Responder's frames from its mapping: what it chooses is not checked.
            if direction == roles(config)[2]:
                tx = direction_sides(direction)[0]
                expected |= {"src_ip": getattr(config.side(tx), f"virtual_ipv{received.inner}") or None,
                             "src_port": None}
                vary = [entry for entry in vary if entry["field"] not in ("src_ip", "src_port")]
                # ... a port of its public range, where the config states it.
                if public := public_ports(config):
                    nat_port = [{"field": "src_port", "min": public[0], "max": public[1]}]
            else:
                expected |= {"dst_ip": None, "dst_port": None}
        checked = {key: value for key, value in expected.items()
                   if value is not None and key not in unstated}
        return checked, tunnel, [entry for entry in vary if entry["field"] in checked] + nat_port

    def _vlan_keys(self, tx: str, rx: str) -> dict:
        """`vlan` and `rx_vlan` of a stream from `tx` to `rx` (none when neither side is tagged):
        a frame leaves with the tags of its sending side and arrives with those of its receiving
        side (on a cable between the tester's ports, with the ones it was sent with)."""
        sent = side_vlan(self.config, tx)
        received = side_vlan(self.config, rx) if self.through_dut else sent
        return {"vlan": sent, "rx_vlan": received} if sent or received else {}


def expected_flow_label(stream: dict, sent_version: int, through_dut: bool) -> int | None:
    """The flow label an IPv6 arrival of `stream` must carry, or None where any may come.
    Through the DUT: an IPv6 packet's non-zero label unchanged (RFC 6437 §3: a forwarding node
    MUST NOT change it), any label where it was sent with none (a forwarding node may set one),
    and 0 in a packet translated from IPv4 (RFC 7915 §5.1). On a cable: as sent."""
    sent = stream.get("flow_label", 0) if sent_version == 6 else 0
    if not through_dut:
        return sent
    if sent_version == 4:
        return 0
    return sent or None


def _without_unseen_checks(stream: dict, received: Stack) -> dict:
    """A stream with the CE fields its received frames cannot carry left unchecked (frames that
    come back as sent, on a cable between the tester's ports), and without its CE where it
    neither writes nor checks any then (a B4's or a 6rd CE's LAN, whose only CE field is the
    tunnel the cable does not add)."""
    if "ce" not in stream:
        return stream
    has = {"tunnel": received.encapsulated, "ipv6": received.inner == 6, "ipv4": received.inner == 4,
           "port": True}
    ce = {**stream["ce"], "rx_fields": [f for f in stream["ce"]["rx_fields"] if has[f]]}
    if not ce["fields"] and not ce["rx_fields"]:
        return {key: value for key, value in stream.items() if key != "ce"}
    return {**stream, "ce": ce}


def _protocol(stream: dict) -> dict:
    """A stream as the protocol's `foreground`/`background` object (without its kind)."""
    return {key: value for key, value in stream.items() if key != "kind"}


def owned_addresses(config: dict) -> list[dict]:
    """The `ports` of an `addresses` request: each tester port answers ARP/ND for the real
    addresses of its side, every one of them when they vary (RFC 2544 §25: the tester should
    answer the DUT's requests), and for its next hop address in gateway setups. Virtual
    addresses belong to the DUT's translation and are not answered for."""
    addresses = config.addresses
    ports = []
    for side, index in PORT_INDEX.items():
        ranges = []
        for version in (4, 6):
            address = getattr(config.side(side), f"ipv{version}")
            if address:
                entry = {"ip_version": version, "address": address}
                if getattr(addresses, side) != "fixed":
                    entry.update(offset=getattr(addresses, f"{side}_offset_ipv{version}"),
                                 min=getattr(addresses, f"{side}_min"), max=getattr(addresses, f"{side}_max"))
                ranges.append(entry)
            if getattr(config.side(side), f"next_hop_ipv{version}"):
                ranges.append({"ip_version": version,
                               "address": getattr(config.side(side), f"next_hop_ipv{version}")})
        ports.append({"port": index, "ranges": ranges})
    return ports


def build_flows(config: dict, rate: int, ports: list[dict]) -> list[dict]:
    """Convenience: the flows of a trial at `rate` frames/s per direction."""
    return TrafficPlan(config, ports).flows(rate)
