# SPDX-License-Identifier: BSD-3-Clause
"""The lab's wiring (docs in lab/__init__.py): the namespaces, the tester's veths to the DUT,
the tc wires (the loopback kind's, and the calibration wire every other kind has), the port
type the tester uses on them, and taking it all down again."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
from typing import Any

from ..config.limits import AF_XDP_MAX_FRAME
from . import daemons
from .kinds import LabKind
from .names import CE_NS, DUT_NS, LAB_DIR, TESTER_NS, TESTER_PORTS
from .placement import Placement, steer_receive
from .shell import add_veth, ip, run, sysctl
from .state import STATE_FILE, restore_global_sysctls, set_global_sysctls

AF_XDP = 44  # the address family of AF_XDP sockets (linux/socket.h); Python has no name for it

# Every kind but loopback has a second pair of tester ports, joined by a tc wire (_add_wire),
# on which `xlatperf lab up` calibrates the tester's ceiling; loopback's own ports are one.
CALIBRATION_PORTS = ("xlp-cl", "xlp-cr")
WIRES = {TESTER_PORTS: ("xlp-wl", "xlp-wr"), CALIBRATION_PORTS: ("xlp-cwl", "xlp-cwr")}

# ... and the DUT CPU's backlog (net.core.netdev_max_backlog, the initial namespace's: the
# queue RPS puts every frame the DUT receives into) holds a bunch of frames a descheduled
# sender sends late (testerconfig.LAB_MAX_LAG) at the lab's rates: both directions at up to
# 400,000 frames/s for LAB_MAX_LAG. The kernel's default, 1000 frames, is 5 ms at 100,000
# frames/s each way: with the worker's CPU stolen in bursts, the `limit` DUT lost frames in
# valid trials at 92 % of its limit (tests/e2e/test_trust_lab.py, 2026-11-27).
LAB_BACKLOG = 16_384


def port_type(choice: str, mtu: int = 1500) -> str:
    """The tester's port type for the `ports` parameter on veths of MTU `mtu`. auto: af_xdp
    when this kernel lets a process open an AF_XDP socket (on veth the sockets run in copy
    mode; measured faster than af_packet in both directions, BENCHMARKS.md) and the veths
    carry no frame larger than af_xdp receives (jumbo frames), else af_packet."""
    if choice != "auto":
        return choice
    if mtu + 18 > AF_XDP_MAX_FRAME:   # Ethernet header, FCS and the one tag veth allows
        return "af_packet"
    try:
        socket.socket(AF_XDP, socket.SOCK_RAW, 0).close()
    except OSError:
        return "af_packet"
    return "af_xdp"


def build(lab_kind: LabKind, p: dict[str, Any], placement: Placement) -> None:
    run(["ip", "netns", "add", TESTER_NS])
    if not lab_kind.has_dut:
        _add_wire(TESTER_PORTS, placement)
        return
    run(["ip", "netns", "add", DUT_NS])
    ip(DUT_NS, "link", "set", "lo", "up")  # as on any host: the DUT's traffic to itself
    # No duplicate address detection on the DUT's interfaces (made after this): while its
    # addresses were tentative, the first second or two after lab up, the DUT could not
    # resolve the tester's IPv6 addresses and dropped what it should forward to them (the
    # first trial's background frames through siit: 38 % lost).
    sysctl(DUT_NS, {"net.ipv6.conf.all.accept_dad": 0, "net.ipv6.conf.default.accept_dad": 0})
    backlog = "net.core.netdev_max_backlog"
    set_global_sysctls({backlog: max(LAB_BACKLOG, int(run(["sysctl", "-n", backlog]).strip()))})
    mtu = lab_kind.veth_mtu(p)
    add_veth(TESTER_NS, "xlp-tl", DUT_NS, "xlp-dl", mtu)
    add_veth(TESTER_NS, "xlp-tr", DUT_NS, "xlp-dr", mtu)
    _setup_tester_links(TESTER_PORTS)
    _add_wire(CALIBRATION_PORTS, placement, mtu)
    lab_kind.build(p)
    lab_kind.place(placement)


def _add_wire(ports: tuple[str, str], placement: Placement, mtu: int = 1500) -> None:
    """Tester ports `ports` joined by an ideal DUT: each port's veth peer (its wire end) hands
    every frame it receives to the other wire end with tc mirred, in the softirq that RPS puts
    on the DUT CPUs. So a selftest over `ports` does the tester's whole work on the tester's
    CPUs and everything a DUT's CPU would do for the tester (queueing the frames sent,
    delivering the frames received to the tester's socket or XDP program) on the DUT's, at
    almost no cost of its own: the tester's ceiling as it stands in the lab."""
    ends = WIRES[ports]
    for port, end in zip(ports, ends):
        add_veth(TESTER_NS, port, TESTER_NS, end, mtu)
    _setup_tester_links(ports + ends)
    for end, other in (ends, ends[::-1]):
        run(["tc", "qdisc", "add", "dev", end, "ingress"], ns=TESTER_NS)
        run(["tc", "filter", "add", "dev", end, "ingress", "protocol", "all", "u32", "match",
             "u32", "0", "0", "action", "mirred", "egress", "redirect", "dev", other],
            ns=TESTER_NS)
    steer_receive(TESTER_NS, ends, placement.dut_cpus)


def _setup_tester_links(links: tuple[str, ...]) -> None:
    # IPv6 off before the link comes up: otherwise DAD, RS and MLD frames would reach the DUT.
    sysctl(TESTER_NS, {f"net.ipv6.conf.{link}.disable_ipv6": 1 for link in links})
    for link in links:
        ip(TESTER_NS, "link", "set", link, "promisc", "on", "up")


def take_down() -> None:
    """Removes whatever a lab left: its daemons, global sysctls restored, its namespaces (and so
    their interfaces), the lab directory and the state file."""
    daemons.stop_all((DUT_NS, CE_NS))
    restore_global_sysctls()
    for ns in (TESTER_NS, DUT_NS, CE_NS):
        if os.path.exists(f"/run/netns/{ns}"):
            run(["ip", "netns", "delete", ns])  # deletes the veths and the tun with it
    shutil.rmtree(LAB_DIR, ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        os.remove(STATE_FILE)
