# SPDX-License-Identifier: BSD-3-Clause
"""What several kinds' DUTs are made of: the kernel router (addresses, forwarding, the
neighbour table limits for many tester addresses), an nftables ruleset, and the tester config
sides facing a router."""

from __future__ import annotations

import json
import os
import sysconfig
from pathlib import Path
from typing import Any

from ..names import DIRECT, DUT_NS, DUT_PORTS, GATEWAYS, LAB_DIR, host
from ..shell import ip, run, sysctl
from ..state import set_global_sysctls

NFT_RULESET = os.path.join(LAB_DIR, "dut.nft")

# The kernel's neighbour table limits (gc_thresh1..3) exist only in the initial network
# namespace and apply to all namespaces: the DUT's 1024-entry default would silently drop
# frames to half of 1000 addresses per side. The lab raises them there and restores the
# previous values on `lab down` (recorded in the state file before they are changed).
NEIGHBOUR_SYSCTLS = [f"net.ipv{v}.neigh.default.gc_thresh{i}" for v in (4, 6) for i in (1, 2, 3)]
NEIGHBOUR_HEADROOM = 1024


def setup_router(left: list[tuple[str, str]], right: list[tuple[str, str]], ns: str = DUT_NS,
                 devs: tuple[str, str] = DUT_PORTS) -> None:
    """A namespace (the DUT's) as a router: the (address/prefix, peer) `left` on devs[0] and
    `right` on devs[1], and forwarding. No static neighbour entries: the DUT resolves the
    tester's addresses with ARP/ND and the tester answers (RFC 2544 §25)."""
    sides = {devs[0]: (left, None), devs[1]: (right, None)}
    settings: dict[str, str | int] = {
        "net.ipv4.ip_forward": 1,
        # Strict reverse-path filtering would drop translated frames whose source is routed
        # into the tun device; nothing here needs it.
        "net.ipv4.conf.all.rp_filter": 0,
        "net.ipv4.conf.default.rp_filter": 0,
    }
    any_v6 = False
    for dev, (families, _) in sides.items():
        has_v6 = any(":" in addr for addr, _ in families)
        any_v6 = any_v6 or has_v6
        settings[f"net.ipv4.conf.{dev}.rp_filter"] = 0
        # An IPv4-only side keeps IPv6 off: a non-forwarding IPv6 interface sends RS forever.
        settings[f"net.ipv6.conf.{dev}.disable_ipv6"] = 0 if has_v6 else 1
    if any_v6:
        settings["net.ipv6.conf.all.forwarding"] = 1
    sysctl(ns, settings)
    for dev, (families, _) in sides.items():
        for addr, _ in families:
            extra = ["nodad"] if ":" in addr else []  # usable at once, no DAD frames
            ip(ns, "addr", "add", addr, "dev", dev, *extra)
        ip(ns, "link", "set", dev, "up")


def setup_direct_router(version: int, addresses: int) -> None:
    """A router of IP version `version` with the tester's `addresses` per side directly
    connected: every one of them is a neighbour entry of the DUT, on both sides."""
    if addresses > 1:
        raise_neighbour_limits(2 * addresses + NEIGHBOUR_HEADROOM)
    left, right = DIRECT[version]
    setup_router(left=[left], right=[right])


def raise_neighbour_limits(entries: int) -> None:
    current = {key: int(run(["sysctl", "-n", key]).strip()) for key in NEIGHBOUR_SYSCTLS}
    set_global_sysctls({key: max(value, entries) for key, value in current.items()})


def load_nft(ruleset: str) -> None:
    with open(NFT_RULESET, "w") as f:  # kept for inspection while the lab runs
        f.write(ruleset)
    run(["nft", "-f", NFT_RULESET], ns=DUT_NS)


def router_sides(version: int, gateway: bool = False) -> dict[str, dict[str, Any]]:
    """The tester config's sides against a router of IP version `version`: the tester's address
    and the DUT's, or with `gateway` the DUT's gateway address and the next hop the tester
    answers for. The DUT's MACs are resolved by the tester (dut_mac = "")."""
    sides = {}
    for side, (dut, tester), (gateway_dut, next_hop, _) in zip(
            ("left", "right"), DIRECT[version], GATEWAYS[version]):
        keys = {"ip_version": version, f"ipv{version}": tester, "dut_mac": ""}
        if gateway:
            keys |= {f"dut_ipv{version}": host(gateway_dut), f"next_hop_ipv{version}": next_hop}
        else:
            keys[f"dut_ipv{version}"] = host(dut)
        sides[side] = keys
    return sides


BPF_DIR = Path(__file__).resolve().parent.parent / "bpf"


def build_bpf(program: str, name: str, defines: list[str], maps: bool = False) -> str:
    """Compiles lab/bpf/`program` with `defines` (-D...) into LAB_DIR/`name`.o; returns its path.
    `maps`: the program declares maps (a `.maps` section), which tc's loader (libbpf) reads
    from the object's BTF, so the object is built with it (-g)."""
    obj = os.path.join(LAB_DIR, f"{name}.o")
    # Debian keeps asm/types.h under the multiarch directory, which -target bpf does not search.
    multiarch = sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu"
    run(["clang", "-O2", *(["-g"] if maps else []), "-target", "bpf", f"-I/usr/include/{multiarch}", *defines,
         "-c", str(BPF_DIR / program), "-o", obj])
    return obj


def attach_bpf(obj: str, attachments: list[tuple[str, str, str]], ns: str = DUT_NS) -> None:
    """Attaches the object's programs as tc direct-action filters in namespace `ns` (the DUT's):
    (interface, "ingress" or "egress", section) each; a clsact qdisc per interface first."""
    for dev in dict.fromkeys(dev for dev, _, _ in attachments):
        run(["tc", "qdisc", "add", "dev", dev, "clsact"], ns=ns)
    for dev, hook, section in attachments:
        run(["tc", "filter", "add", "dev", dev, hook, "bpf", "direct-action", "obj", obj, "sec", section],
            ns=ns)


def ifindex(dev: str, ns: str = DUT_NS) -> int:
    """An interface's index in namespace `ns` (a BPF program's redirect target)."""
    return json.loads(run(["ip", "-j", "link", "show", dev], ns=ns))[0]["ifindex"]

