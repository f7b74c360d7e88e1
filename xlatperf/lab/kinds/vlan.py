# SPDX-License-Identifier: BSD-3-Clause
"""The lab's reference DUT `vlan`: the kernel router (as router4, or router6 with family=6)
terminating IEEE 802.1Q VLANs, and IEEE 802.1ad QinQ, on its two interfaces.

This kernel has no 802.1Q subinterfaces and no `act_vlan` (shared/docs/lab-kernel.md), so the
DUT's interfaces xlp-dl and xlp-dr stay untagged for the router and a tc-BPF program on each
(xlatperf/lab/bpf/vlan.c, built with clang for the interface's VLAN IDs) does what a VLAN
subinterface would: on ingress it accepts only frames carrying exactly the side's tags and
removes them, on egress it adds them to everything the kernel sends (forwarded frames, ARP,
ND). Frames of another VLAN, untagged frames and frames with a third tag are dropped.

    left tester (vlan 100)  --[C-tag 100]-->  xlp-dl | router | xlp-dr  --[C-tag 200]-->  right tester (vlan 200)

With left_outer/right_outer the side is QinQ: S-tag (TPID 0x88a8) outer, C-tag inner. Linux
sends and forwards a frame up to MTU + 14 bytes, and 4 more only when it starts with a C-tag
(TPID 0x8100; af_packet's packet_extra_vlan_len_allowed, the veth's is_skb_forwardable), so a
full-size QinQ frame (8 bytes of tags, the first an S-tag) needs an MTU 8 bytes larger: the lab
raises every veth's MTU by 8 when a side is QinQ (the router's IP MTU is then that much larger,
which no test frame of at most `mtu` + 18 bytes uses).
"""

from __future__ import annotations

from typing import Any

from .base import integer
from .common import attach_bpf, build_bpf
from .router import FAMILY, ROUTER_PARAMS, Router

INTERFACES = {"left": "xlp-dl", "right": "xlp-dr"}
TPID_BYTES = 4

_ID = {"allowed": "a VLAN ID 1..4094", "parse": integer(1, 4094)}
_OUTER = {"default": "0", "allowed": "0 (one tag) or a VLAN ID 1..4094",
          "parse": integer(0, 4094)}
PARAMS: dict[str, dict[str, Any]] = {
    "left_vlan": {"default": "100", **_ID, "help": "VLAN ID of the left side's C-tag (TPID 0x8100)"},
    "left_outer": {**_OUTER, "help": "QinQ: VLAN ID of the left side's S-tag (TPID 0x88a8) outside it"},
    "right_vlan": {"default": "200", **_ID, "help": "VLAN ID of the right side's C-tag"},
    "right_outer": {**_OUTER, "help": "QinQ: VLAN ID of the right side's S-tag"},
}


def tags(p: dict[str, Any], side: str) -> list[int]:
    """The side's VLAN IDs, outermost first (as the tester's config and protocol list them)."""
    return [v for v in (p[f"{side}_outer"], p[f"{side}_vlan"]) if v]


def attach(p: dict[str, Any]) -> None:
    """Builds the BPF object of each DUT interface and attaches its programs (clsact ingress:
    pop, egress: push)."""
    for side, dev in INTERFACES.items():
        outer_inner = tags(p, side)
        obj = build_bpf("vlan.c", f"vlan-{side}", [
            f"-DVLAN_INNER={outer_inner[-1]}", f"-DVLAN_OUTER={outer_inner[0] if len(outer_inner) == 2 else 0}"])
        attach_bpf(obj, [(dev, "ingress", "tc/ingress"), (dev, "egress", "tc/egress")])


def tester_keys(p: dict[str, Any], side: str) -> dict[str, int]:
    """The tester config's VLAN keys of a side: the tester's port carries the DUT side's tags."""
    outer_inner = tags(p, side)
    keys = {"vlan": outer_inner[-1]}
    if len(outer_inner) == 2:
        keys["vlan_outer"] = outer_inner[0]
    return keys


class Vlan(Router):
    name = "vlan"
    description = ("router (family 4 or 6) terminating IEEE 802.1Q VLANs or 802.1ad QinQ on each "
                   "side with tc-BPF (xlatperf/lab/kinds/vlan.py)")
    kind_params = {**PARAMS, "family": FAMILY, **ROUTER_PARAMS}
    tools = {"clang": "clang", "tc": "iproute2"}

    def veth_mtu(self, p: dict[str, Any]) -> int:
        """The `mtu` parameter is the IP MTU: 8 bytes more when a side is QinQ (a single C-tag
        is within the kernel's allowance)."""
        qinq = any(len(tags(p, side)) == 2 for side in INTERFACES)
        return p["mtu"] + 2 * TPID_BYTES if qinq else p["mtu"]

    def build(self, p: dict[str, Any]) -> None:
        super().build(p)
        attach(p)

    def tester_sections(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        sections = super().tester_sections(p)
        for side in ("left", "right"):
            sections[side] |= tester_keys(p, side)
        return sections
