# SPDX-License-Identifier: BSD-3-Clause
"""`loopback`: no DUT. The tester's two ports are joined by a tc wire on the DUT CPUs (the same
wire the other kinds calibrate on, lab/__init__.py): an ideal DUT that tests the tester."""

from __future__ import annotations

from typing import Any

from ..names import MACS, V4_LEFT, V4_RIGHT
from .base import LabKind


class Loopback(LabKind):
    name = "loopback"
    description = ("the two tester ports joined by a tc wire on the DUT CPUs, no DUT (tests the "
                   "tester)")
    has_dut = False

    def hops(self, p: dict[str, Any]) -> int | None:
        return 0  # no DUT: a wire between the tester's ports

    def tester_sections(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        # Each port's frames go straight to the other port.
        return {"left": {"ip_version": 4, "ipv4": V4_LEFT[1], "dut_mac": MACS["xlp-tr"]},
                "right": {"ip_version": 4, "ipv4": V4_RIGHT[1], "dut_mac": MACS["xlp-tl"]}}
