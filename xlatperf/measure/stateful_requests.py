# SPDX-License-Identifier: BSD-3-Clause
"""The engine requests of RFC 9693's phases (docs/protocol.md, docs/stateful.md): phase 1 (the
Initiator enumerates, the Responder learns), the closing of a teardown, the validation trial
and the Responder's phase-2 flows from its state table, each over UDP or TCP; and the frame
size rules they impose. Running them through a session: stateful.py."""

from ..config.stateful import check_phase2, check_stateful, enumeration, roles
from ..engine.protocol import TrialResult
from ..frames.kinds import trial_frames
from ..frames.stack import IP_STACKS, TCP_ACK, TCP_DATA, TCP_SYN
from ..traffic.plan import PORT_INDEX, TrafficPlan
from ..util.errors import ConfigError
from .request import TrialRequest

# The engine's shortest trial (its trial parser: "duration" in 1e-3..1e6 s; checked against
# engine/src by tests/test_stateful_short.py). Phase 1 of N frames at R lasts N/R, which
# a small N at a high R makes shorter: the request then asks for this window while `frames`
# keeps the count at N and the rate at R (docs/protocol.md "Frame count").
ENGINE_MIN_DURATION = 1e-3


def window(frames: int, rate: int) -> float:
    """The `duration` of a request that sends `frames` frames at `rate`: N/R, at least the
    engine's shortest trial."""
    return max(frames / rate, ENGINE_MIN_DURATION)


def _unchecked(rx: dict, field: str) -> dict:
    """A stream's `rx` with `field` and its varying word not checked."""
    rx = {key: value for key, value in rx.items() if key != field}
    vary = [entry for entry in rx.pop("vary", []) if entry["field"] != field]
    return {**rx, **({"vary": vary} if vary else {})}


def _single_direction(config, direction: str):
    return config.changed({"traffic.direction": direction})


class StatefulRequests:
    """The engine requests of a stateful test (docs/protocol.md) for a TrafficPlan (whose config
    has the DUT MACs resolved), and the frame size rules they impose: phase 1, the teardown's
    closing, validation and the phase-2 flows. phase2: phase-2 trials follow (the runner's
    stateful.enabled procedures), so phase 1 must send every tuple the Initiator's phase-2
    frames can carry (check_phase2); the establishment procedures pass False."""

    def __init__(self, plan: TrafficPlan, phase2: bool = True):
        config = plan.config
        check_stateful(config)
        if phase2:
            check_phase2(config)
        self.config = config
        self.settings = config.stateful
        self.initiator, self.responder, self.forward, self.backward = roles(config)
        ports = [plan.ports["left"], plan.ports["right"]]
        through = plan.through_dut
        self.initiator_plan = TrafficPlan(_single_direction(config, self.forward), ports,
                                          through_dut=through)
        self.responder_plan = TrafficPlan(_single_direction(config, self.backward), ports,
                                          through_dut=through)
        self.responder_port = PORT_INDEX[self.responder]
        self.enumeration = enumeration(config)
        self.tcp = self.settings.transport == "tcp"
        if self.tcp and phase2:
            self._check_tcp_data(plan)
        # The key of the ISNs both TCP endpoints derive (docs/tcp.md): fixed by the seed, so a
        # test sends the same segments when repeated.
        self.tcp_key = (config.traffic.seed * 0x9E3779B97F4A7C15 + 1) % 2**63

    @property
    def max_rate(self) -> int:
        """The medium's maximum rate of phase-1 frames."""
        return self.initiator_plan.max_rate


    def _initiator_flow(self, connections: int, rate: int) -> dict:
        """The Initiator's phase-1 flow: `connections` frames of the enumeration at `rate`."""
        (flow,) = self.initiator_plan.flows(rate)
        flow["frames"] = connections
        foreground = flow["foreground"]
        foreground["vary"] = [dict(v) for v in self.enumeration.vary]
        if self.enumeration.enumerated:
            foreground["enumerate"] = self.settings.order
        return flow

    def phase1_request(self, connections: int, rate: int, table: int) -> TrialRequest:
        flow = self._initiator_flow(connections, rate)
        if self.tcp:
            self._tcp(flow, rate, "open")
        return TrialRequest.from_config(
            self.config, [flow], window(connections, rate), timeout=self.settings.timeout_phase1,
            learn={"port": self.responder_port, "flow": 0, "table_size": table,
                   "ip_version": self.config.side(self.responder).ip_version})

    def close_request(self, connections: int, rate: int) -> TrialRequest:
        """The Initiator closes (stateful.teardown = "fin") or resets ("rst") the connections a
        phase 1 of as many opened, from its state table: each segment with the numbers the
        Initiator learned from its SYN-ACK, which a DUT that rewrites sequence numbers (PF's
        modulate state, carrier-grade NATs) makes differ from those its four-tuple gives."""
        flow = self._initiator_flow(connections, rate)
        self._tcp(flow, rate, {"fin": "close", "rst": "reset"}[self.settings.teardown])
        flow = self._from_table(flow, "increasing")
        flow["from_table"]["port"] = PORT_INDEX[self.initiator]
        for key in ("enumerate", "ce"):  # the table holds each entry's tuple (and softwire)
            flow["foreground"].pop(key, None)
        return TrialRequest.from_config(self.config, [flow], window(connections, rate),
                                        timeout=self.settings.timeout_phase1)

    def _tcp(self, flow: dict, rate: int, segments: str) -> None:
        """Makes the Initiator's flow send TCP segments (docs/tcp.md): SYNs ("open"), FINs
        ("close") or RSTs ("reset"), their sizes, and the Responder side's frames for its
        answers (SYN-ACKs, FIN-ACKs; addresses and ports come from each segment as it arrives)."""
        (back,) = self.responder_plan.flows(rate)
        out, back = flow["foreground"], back["foreground"]
        # Segments without payload, as small as the direction's stacks allow: through a DS-Lite
        # AFTR the Initiator's segments and the answers it gets travel in its emulated B4s'
        # softwires, the Responder's side is plain IPv4.
        (direction,) = self.initiator_plan.directions
        sent, received = (stack.carrying(TCP_SYN if segments == "open" else TCP_ACK).min_frame
                          for stack in direction.stacks)
        out["frame_size"], out["rx_frame_size"] = sent, received
        flow["tcp"] = {"key": self.tcp_key, "segments": segments}
        if segments != "reset":  # the answers arrive where the Initiator's segments left
            reply = {key: back[key] for key in ("ip_version", "src_mac", "dst_mac", "vlan", "rx_vlan")
                     if key in back}
            reply["rx_frame_size"] = sent
            flow["tcp"]["reply"] = reply
        flow.pop("background", None)
        flow.pop("mix", None)

    def _check_tcp_data(self, plan: TrafficPlan) -> None:
        """Phase 2 over TCP sends data segments: each frame must hold TCP's 40-byte header
        with the tag option and at least one byte of payload."""
        side_of = {index: side for side, index in PORT_INDEX.items()}
        for flow in plan.flows(1):
            foreground = flow["foreground"]
            received = self.config.side(side_of[flow["rx_port"]]).ip_version
            for size, version in ((foreground["frame_size"], foreground["ip_version"]),
                                  (foreground["rx_frame_size"], received)):
                smallest = IP_STACKS[version].carrying(TCP_DATA).min_frame
                if size < smallest:
                    raise ConfigError(
                        f"traffic.frame_size = {self.config.traffic.frame_size}: gives "
                        f"{size}-byte IPv{version} frames in the {flow['name']} direction, too small "
                        f"for TCP data (stateful.transport = \"tcp\"): at least {smallest} bytes, a "
                        f"{TCP_DATA.header_bytes}-byte TCP header with the tag option and one byte of "
                        "payload")

    def _from_table(self, flow: dict, selection: str) -> dict:
        """The Responder's flow: addresses and ports from the state table, so no vary fields,
        and no background (the engine builds every frame of such a flow from the table)."""
        foreground = {**flow["foreground"], "vary": []}
        if "rx" in foreground:
            # The entries' tuples, swapped, address the frames: the source port is the one the
            # Initiator's frames came to, not the stream's (the source address is the stream's
            # side's own, within its range).
            foreground["rx"] = _unchecked(foreground["rx"], "src_port")
        flow = {**flow, "from_table": {"port": self.responder_port, "selection": selection},
                "mix": {"n": 1, "m": 1}, "foreground": foreground}
        flow.pop("background", None)
        return flow

    def validation_request(self, entries: int, rate: int) -> TrialRequest:
        """Responder only: each state-table entry once, in increasing order (methodology §12.7).
        Over TCP each a data segment inside its connection, as small as the stacks allow: a
        handshake shows that a connection existed when it opened, not that all N coexist
        afterwards (a DUT that replaces its oldest entries passes every handshake)."""
        plan = self._tcp_validation_plan() if self.tcp else self.responder_plan
        (flow,) = plan.flows(rate)
        flow = self._from_table(flow, "increasing")
        flow["frames"] = entries
        if self.tcp:
            flow["tcp"] = {"key": self.tcp_key, "segments": "data"}
        return TrialRequest.from_config(self.config, [flow], window(entries, rate),
                                        timeout=self.settings.timeout_phase1)

    def _tcp_validation_plan(self) -> TrafficPlan:
        """The Responder's direction with the smallest traffic.frame_size whose frames, as sent
        and as received, hold a TCP data segment."""
        config = self.responder_plan.config
        config = config.changed({"traffic.frame_size": trial_frames(config).min_frame_size(TCP_DATA)})
        return TrafficPlan(config, [self.responder_plan.ports[side] for side in ("left", "right")],
                           through_dut=self.responder_plan.through_dut)

    def phase2_flows(self, flows: list[dict]) -> list[dict]:
        """Phase 2: the Responder's direction answers from the state table. Over TCP both
        directions send data segments inside the connections phase 1 opened, each side from its
        own table (the Initiator's learned from the SYN-ACKs; docs/tcp.md)."""
        if not self.tcp:
            return [self._from_table(f, self.settings.selection) if f["name"] == self.backward
                    else f for f in flows]
        out = []
        for f in flows:
            port = self.responder_port if f["name"] == self.backward else PORT_INDEX[self.initiator]
            flow = self._from_table(f, self.settings.selection)
            flow["from_table"]["port"] = port
            flow["tcp"] = {"key": self.tcp_key, "segments": "data"}
            if port != self.responder_port:
                # The emulated B4s (DS-Lite): each entry of the Initiator's table keeps the
                # softwire its connection came in, so no CE is drawn per frame.
                flow["foreground"].pop("ce", None)
            out.append(flow)
        return out

    def check_mss(self, phase1: TrialResult) -> None:
        """Phase 2's data segments within the MSS each side announced, as it arrived through
        the DUT (RFC 9293 §3.7.1: no segment carries more than its receiver's MSS; a DUT that
        clamps the MSS lowers it): the Initiator's within the SYN-ACKs', the Responder's within
        the SYNs'. A frame size above it is refused: the tester sends the size it is told or
        nothing."""
        announced = {self.forward: (self.initiator_plan, f"{self.forward}.syn_ack", "SYN-ACKs"),
                     self.backward: (self.responder_plan, self.forward, "SYNs")}
        for name, (plan, arrived, segments) in announced.items():
            counts = phase1.directions.get(arrived)
            if counts is None or counts.mss_min is None:
                continue
            (flow,) = plan.flows(1)
            foreground = flow["foreground"]
            stack = plan.frames.directions[flow["name"]][0]   # as sent: the data segments' headers
            payload = (foreground["frame_size"] - stack.carrying(TCP_DATA).min_frame
                       + TCP_DATA.min_payload)
            if payload > counts.mss_min:
                size = self.config.traffic.frame_size
                raise ConfigError(
                    f"traffic.frame_size = {size}: the {name} direction's TCP data segments would "
                    f"carry {payload} bytes, more than the MSS of {counts.mss_min} that phase 1's "
                    f"{segments} announced as they arrived through the DUT (a DUT that clamps the "
                    f"MSS lowers it; RFC 9293 §3.7.1: no segment above it): traffic.frame_size "
                    f"must be at most {size - (payload - counts.mss_min)}")
