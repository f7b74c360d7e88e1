# SPDX-License-Identifier: BSD-3-Clause
"""The lab's fixed names and addresses, shared by the wiring (lab/__init__.py) and the kinds
(lab/kinds/): the namespaces, the lab directory, the interfaces and their MACs, the address plan.
"""

from __future__ import annotations

TESTER_NS = "xlp-tester"
DUT_NS = "xlp-dut"
# A dual DUT's CE (lab/kinds/dual.py): its own namespace in front of the BR's (DUT_NS).
CE_NS = "xlp-ce"
LAB_DIR = "/run/xlatperf-lab"

# Locally administered (02:...), "xl" = 78:6c; 00:xx = tester ports, 01:xx = DUT ports.
# 02:xx = the ends of the tc wires (loopback's, and the calibration wire of the other kinds).
MACS = {
    "xlp-tl": "02:78:6c:00:00:01",
    "xlp-tr": "02:78:6c:00:00:02",
    "xlp-cl": "02:78:6c:00:00:03",
    "xlp-cr": "02:78:6c:00:00:04",
    "xlp-dl": "02:78:6c:00:01:01",
    "xlp-dr": "02:78:6c:00:01:02",
    "xlp-wl": "02:78:6c:00:02:01",
    "xlp-wr": "02:78:6c:00:02:02",
    "xlp-cwl": "02:78:6c:00:02:03",
    "xlp-cwr": "02:78:6c:00:02:04",
}
TESTER_PORTS = ("xlp-tl", "xlp-tr")
DUT_PORTS = ("xlp-dl", "xlp-dr")
# A dual DUT (lab/kinds/dual.py): the CE in CE_NS has the LAN port (DUT_PORTS[0], moved there
# and renamed) and a WAN port, cabled to the BR's new DUT_PORTS[0] in DUT_NS with these MACs.
CE_PORTS = ("xlp-el", "xlp-ew")
CE_WAN_MACS = ("02:78:6c:00:01:03", "02:78:6c:00:01:04")

# One address family on one side: (DUT interface address with prefix, tester address). The
# plans of draft-lencse-bmwg-multiple-ip-addresses: directly connected (Figs. 2 and 4), the
# tester's 16-bit address part varies in 198.18.0.2-198.18.255.254 (bytes 2-3) or
# 2001:2::[0000-ffff]:2 (bits 96-111).
V4_LEFT = ("198.18.0.1/16", "198.18.0.2")
V4_RIGHT = ("198.19.0.1/16", "198.19.0.2")
V6_LEFT = ("2001:2::1/64", "2001:2::2")
V6_RIGHT = ("2001:2:0:8000::1/64", "2001:2:0:8000::2")
# With gateways (Figs. 3 and 5): the DUT routes each side's test range to a next hop that the
# tester answers for, so the DUT's neighbour table holds one entry per side.
# (DUT interface address, tester next hop, test range routed to it)
GW4_LEFT = ("10.0.0.1/24", "10.0.0.2", "198.18.0.0/16")
GW4_RIGHT = ("10.0.1.1/24", "10.0.1.2", "198.19.0.0/16")
GW6_LEFT = ("2001:2:0:1000::1/64", "2001:2:0:1000::2", "2001:2::/64")
GW6_RIGHT = ("2001:2:0:9000::1/64", "2001:2:0:9000::2", "2001:2:0:8000::/64")
# (left, right) of a router of each IP version.
DIRECT = {4: (V4_LEFT, V4_RIGHT), 6: (V6_LEFT, V6_RIGHT)}
GATEWAYS = {4: (GW4_LEFT, GW4_RIGHT), 6: (GW6_LEFT, GW6_RIGHT)}


def host(address_with_prefix: str) -> str:
    return address_with_prefix.split("/")[0]
