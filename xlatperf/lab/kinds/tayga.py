# SPDX-License-Identifier: BSD-3-Clause
"""DUTs that translate with TAYGA, in user space in the DUT namespace: the kind `siit` here, and
what `nat64` (lab/kinds/nat.py) shares with it: starting TAYGA, pinning it to the DUT CPUs,
stopping it (`lab down`: found by its pid file and by `ip netns pids`).

SIIT is TAYGA with explicit address mappings, as in the SIIT benchmarking paper (Lencse and
Shima): 198.18.0.2 <-> 2001:2::2 and 198.19.0.2 <-> 2001:2:0:1::2. The DUT also routes native
IPv6 between 2001:2::2 and 2001:2:0:8000::2, the background traffic of RFC 8219. As RFC 7915
asks, TAYGA fragments an IPv4 packet without DF whose translation exceeds 1280 bytes (a
1498-byte IPv4 frame comes out as two IPv6 fragments); with DF set it arrives whole.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..names import DUT_NS, LAB_DIR, V4_RIGHT, V6_LEFT, V6_RIGHT, host
from .. import daemons
from ..placement import Placement, pin_process
from ..shell import LabError, ip, run
from .base import LabKind
from .common import setup_router

# TAYGA's own addresses lie in the networks routed into its tun device, so they are reachable
# (TAYGA answers pings there) and shadow no address of a DUT interface's subnet.
TAYGA_TUN = "xlp-nat64"
TAYGA_IPV4 = "198.18.0.9"
TAYGA_IPV6 = "2001:2:0:1::9"
TAYGA_MAPS = [("198.18.0.2", "2001:2::2"), ("198.19.0.2", "2001:2:0:1::2")]
TAYGA_ROUTE4 = "198.18.0.0/24"  # IPv4 images of the IPv6 hosts
TAYGA_ROUTE6 = "2001:2:0:1::/64"  # IPv6 images of the IPv4 hosts
TAYGA_CONF = os.path.join(LAB_DIR, "tayga.conf")
TAYGA_PIDFILE = os.path.join(LAB_DIR, "tayga.pid")
TAYGA_LOG = os.path.join(LAB_DIR, "tayga.log")
TAYGA_DATA = os.path.join(LAB_DIR, "tayga")


@dataclass(frozen=True)
class TaygaInstance:
    """One TAYGA process of the lab and its files: the kinds' one (""), or one of several (the
    CLAT and the PLAT of 464xlat) named by a suffix."""
    name: str = ""

    def _path(self, path: str) -> str:
        root, ext = os.path.splitext(path)
        return f"{root}-{self.name}{ext}" if self.name else path

    @property
    def tun(self) -> str:
        return f"xlp-{self.name}" if self.name else TAYGA_TUN

    @property
    def conf(self) -> str:
        return self._path(TAYGA_CONF)

    @property
    def pidfile(self) -> str:
        return self._path(TAYGA_PIDFILE)

    @property
    def log(self) -> str:
        return self._path(TAYGA_LOG)

    @property
    def data(self) -> str:
        return self._path(TAYGA_DATA)


class TaygaDut(LabKind):
    """A DUT that translates in TAYGA (one or more instances): their threads go to the DUT CPUs
    too."""
    tools = {"tayga": "tayga"}
    steered_by = LabKind.steered_by + " and TAYGA's affinity"
    instances = (TaygaInstance(),)

    def checks(self) -> dict[str, Any]:
        """TAYGA (0.9.2, Debian's) writes a UDP checksum it adjusted to 0xffff as 0 into an IPv6
        datagram, about once in 65,536 frames: RFC 8200 §8.1 receivers drop it, and so would the
        tester's checks; the lab accepts it where the datagram's sum is right, and says so. It
        sets DF on every IPv4 packet it translates, as the obsoleted RFC 6145 §5.1 did (RFC 7915
        §5.1 clears it up to 1,260 bytes): the lab holds it to that rule."""
        return {"zero_udp_checksum_ipv6": False, "df_small": "rfc6145"}

    def hops(self, p: dict[str, Any]) -> int | None:
        # The kernel routes a frame into each TAYGA's tun device and out again, and TAYGA
        # decrements it as the translator it is (RFC 7915 §4.1, §5.1): 2 per instance, 1 more
        # for the kernel's last route out.
        return 1 + 2 * len(self.instances)

    def place(self, placement: Placement) -> None:
        super().place(placement)
        for instance in self.instances:
            pid = daemons.read_pid(instance.pidfile)
            if pid is None or not daemons.is_ours(pid, "tayga"):
                raise LabError(f"tayga {instance.name or ''} is not running: cannot pin it to the DUT CPUs")
            pin_process(pid, placement.dut_cpus)


class Siit(TaygaDut):
    name = "siit"
    description = ("TAYGA as SIIT with explicit address mappings, IPv6 left, IPv4 right "
                   "(RFC 8219); native IPv6 is routed for background traffic")

    def build(self, p: dict[str, Any]) -> None:
        setup_router(left=[V6_LEFT], right=[V4_RIGHT, V6_RIGHT])
        start_tayga([f"ipv4-addr {TAYGA_IPV4}", f"ipv6-addr {TAYGA_IPV6}",
                     *(f"map {v4} {v6}" for v4, v6 in TAYGA_MAPS)],
                    [TAYGA_ROUTE4, TAYGA_ROUTE6])

    def tester_sections(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {"left": {"ip_version": 6, "ipv6": V6_LEFT[1], "virtual_ipv4": TAYGA_MAPS[0][0],
                         "dut_mac": "", "dut_ipv6": host(V6_LEFT[0])},
                "right": {"ip_version": 4, "ipv4": V4_RIGHT[1], "ipv6": V6_RIGHT[1],
                          "virtual_ipv6": TAYGA_MAPS[1][1], "dut_mac": "",
                          "dut_ipv4": host(V4_RIGHT[0])}}


def start_tayga(settings: list[str], routes: list[str], instance: TaygaInstance = TaygaInstance()) -> None:
    """TAYGA in the DUT namespace with `settings` (tayga.conf lines beyond its tun device and
    data directory) and `routes` (IPv4 and IPv6 prefixes) into its tun device."""
    os.makedirs(instance.data, exist_ok=True)
    conf = [f"tun-device {instance.tun}", f"data-dir {instance.data}", *settings]
    with open(instance.conf, "w") as f:
        f.write("# TAYGA for the xlatperf lab (written by lab up)\n")
        f.write("\n".join(conf) + "\n")
    # A persistent tun first, so routes exist before TAYGA reads its first packet.
    run(["tayga", "--config", instance.conf, "--mktun"], ns=DUT_NS)
    ip(DUT_NS, "link", "set", instance.tun, "up")
    for route in routes:
        ip(DUT_NS, "-6" if ":" in route else "-4", "route", "add", route, "dev", instance.tun)
    daemons.start("tayga", ["tayga", "--config", instance.conf, "--pidfile", instance.pidfile], DUT_NS,
                  instance.pidfile, instance.log)
