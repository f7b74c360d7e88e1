# SPDX-License-Identifier: BSD-3-Clause
"""Frames the tester lost before its own port saw them: a tester port on a veth (af_packet or
af_xdp) whose peer, the DUT's end, could not hand a frame over counts it as `tx_dropped` on
the peer, not on the tester's side (the kernel's veth_xmit: the peer's ring for the XDP
program was full, or the frame was longer than the tester's interface takes). Such a frame
is the tester's loss, not the DUT's, and the engine cannot see it: the peer is in another
network namespace. The front end reads the peers' counters around every trial and counts what
grew as the tester's drops (`peer_tx_dropped`), which makes the trial invalid.

    peers = VethPeers.of(config)          # once per measurement: [] without veth ports
    before = peers.read()
    reply = engine.trial(...)
    reply = with_peer_drops(reply, peers, before, peers.read())
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass

from ..config.ports import parse_port
from ..engine.protocol import TESTER_DROPPED


@dataclass(frozen=True)
class VethPeer:
    port: int          # the protocol's port index (0 left, 1 right)
    netns: str         # the peer's network namespace ("" for the current one)
    interface: str     # the peer's name there


def _ip_json(netns: str, *args: str) -> list[dict]:
    command = ["ip", "-j", *(["-n", netns] if netns else []), *args]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0 or not proc.stdout.strip():
        return []
    return json.loads(proc.stdout)


def veth_peer(netns: str, interface: str) -> tuple[str, str] | None:
    """The (namespace, name) of the other end of veth `interface` in `netns`; None for another
    kind of interface, or a peer in a namespace without a name."""
    links = _ip_json(netns, "-d", "link", "show", "dev", interface)
    if not links or links[0].get("linkinfo", {}).get("info_kind") != "veth" or "link_index" not in links[0]:
        return None
    link = links[0]
    peer_ns = netns
    if "link_netnsid" in link:
        names = {entry.get("nsid"): entry.get("name") for entry in _ip_json(netns, "netns", "list-id")}
        peer_ns = names.get(link["link_netnsid"])
        if not peer_ns:
            return None
    for candidate in _ip_json(peer_ns, "link", "show"):
        if candidate.get("ifindex") == link["link_index"]:
            return peer_ns, candidate["ifname"]
    return None


class VethPeers:
    def __init__(self, peers: list[VethPeer]):
        self.peers = peers

    @classmethod
    def of(cls, config) -> "VethPeers":
        """The veth peers of the configuration's af_packet and af_xdp ports (in tester.netns);
        none when the engine runs on another host (tester.ssh): its interfaces are not here."""
        peers = []
        if config.tester.ssh:
            return cls(peers)
        for index, side in enumerate(("left", "right")):
            spec = parse_port(config.side(side).port)
            if spec.port_kind.kernel_interface:
                found = veth_peer(config.tester.netns, spec.name)
                if found:
                    peers.append(VethPeer(index, *found))
        return cls(peers)

    def read(self) -> dict[int, int]:
        """Each peer's tx_dropped now, by port index (a peer gone reads nothing)."""
        counts = {}
        for peer in self.peers:
            links = _ip_json(peer.netns, "-s", "link", "show", "dev", peer.interface)
            if links and "stats64" in links[0]:
                counts[peer.port] = int(links[0]["stats64"]["tx"]["dropped"])
        return counts


def with_peer_drops(reply: dict, peers: VethPeers, before: dict[int, int], after: dict[int, int]) -> dict:
    """The engine's trial reply with what each port's veth peer failed to deliver to it during
    the trial in the port's `drops` (`peer_tx_dropped`, `peer_interface`); a valid trial with
    any becomes invalid, as the tester's drops (TESTER_DROPPED), so that it is taken again; one
    the engine found the tester's drops in already says these too."""
    grown = {peer: after[peer.port] - before[peer.port] for peer in peers.peers
             if peer.port in before and peer.port in after and after[peer.port] > before[peer.port]}
    if not grown:
        return reply
    ports = [dict(port) for port in reply.get("ports", [])]
    for peer, count in grown.items():
        for port in ports:
            if port.get("index") == peer.port:
                port["drops"] = {**port.get("drops", {}), "peer_tx_dropped": count,
                                 "peer_interface": f"{peer.netns}/{peer.interface}" if peer.netns else peer.interface}
    said = "; ".join(f"port {peer.port}'s veth peer {peer.interface} could not hand {count} frames to it "
                     "(its tx_dropped: the tester's port did not take them)" for peer, count in grown.items())
    reply = {**reply, "ports": ports}
    if reply.get("valid"):
        reply |= {"valid": False, "invalid_reason": f"{TESTER_DROPPED}: {said}"}
    elif (reply.get("invalid_reason") or "").startswith(TESTER_DROPPED):
        reply |= {"invalid_reason": f"{reply['invalid_reason']}; {said}"}
    return reply
