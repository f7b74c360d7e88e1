# SPDX-License-Identifier: BSD-3-Clause
"""The tester configs a lab writes (docs in lab/__init__.py): the lab's own around its kind's
sections, and the calibration config (a selftest through the calibration wire) whose result,
the tester's ceiling, goes back into the lab's config."""

from __future__ import annotations

import os
from typing import Any

from ..config.dns import SELFTEST_QUERIES
from ..util.files import toml_value
from .kinds import KINDS, LabKind
from .kinds.base import DEFAULT_LCORES
from .names import DIRECT, LAB_DIR, MACS, TESTER_NS, TESTER_PORTS
from .placement import online_cpus, plan_placement
from .shell import LabError
from .wiring import CALIBRATION_PORTS, port_type

CALIBRATION_CONFIG = os.path.join(LAB_DIR, "calibration.toml")
CALIBRATION_OUT = os.path.join(LAB_DIR, "calibration")  # the selftest's result directory
PORT_REASON = {"af_xdp": "AF_XDP sockets, copy mode on veth: the faster port type here",
               "af_packet": "chosen with ports=af_packet, or this kernel has no AF_XDP sockets"}

# The calibration selftest: short trials, the binary search to within this many frames/s.
CALIBRATION_TRIAL = 1.0
CALIBRATION_ERROR = 1000

# The lab's tester shares two CPUs with its DUT and everything else on the machine: the kernel
# deschedules the engine's worker now and then, and an AF_XDP sender runs the kernel DUT's
# forwarding of its burst on its own CPU (5-12 ms behind at 5,000 frames/s seen in CI). The
# schedule validity rule (trial.max_lag) tolerates LAB_MAX_LAG there: bunched frames the lab's
# DUTs absorb (the limit DUT's token bucket holds BURST_SECONDS of frames, kinds/router.py; a
# kernel DUT's per-CPU backlog, wiring.LAB_BACKLOG). Larger lags are retaken.
LAB_MAX_LAG = 0.02


def find_kind(kind: str) -> LabKind:
    """The LabKind of that name; LabError naming the allowed ones."""
    if kind not in KINDS:
        raise LabError(f"unknown lab kind {kind!r}; allowed kinds: {', '.join(sorted(KINDS))}")
    return KINDS[kind]


def tester_config(kind: str, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tester config sections for lab `kind` with resolved parameters `p`: the tester's
    ports around the kind's sides, then what follows from the parameters, then the kind's own
    sections."""
    ports = port_type(p.get("ports", "auto"))
    kind_sections = find_kind(kind).tester_sections(p)
    left = {"port": f"{ports}:xlp-tl", "mac": MACS["xlp-tl"], **kind_sections.pop("left")}
    right = {"port": f"{ports}:xlp-tr", "mac": MACS["xlp-tr"], **kind_sections.pop("right")}
    # tester.lcores is written out: the DUT's CPUs were derived from it (placement.py).
    sections = {"tester": {"netns": TESTER_NS, "lcores": p.get("lcores", DEFAULT_LCORES)},
                "left": left, "right": right}
    if p.get("addresses", 1) > 1:
        # The paper's multi-address tests: pseudorandom addresses from the draft's plan,
        # (bytes 2-3 of IPv4, bits 96-111 of IPv6), starting at 2 as the DUT has 1.
        last = 1 + p["addresses"]
        sections["addresses"] = {"left": "random", "left_min": 2, "left_max": last,
                                 "right": "random", "right_min": 2, "right_max": last}
    if 6 in (left["ip_version"], right["ip_version"]):
        # The default frame_size (64) names an IPv6 frame here and is too short for the tag.
        sections["traffic"] = {"frame_size": 84}
    sections["trial"] = {"pause": 0.5, "max_lag": LAB_MAX_LAG}
    for name, keys in kind_sections.items():  # a kind's keys beside (or over) the common ones
        sections[name] = {**sections.get(name, {}), **keys}
    hops = find_kind(kind).hops(p)
    if hops is not None:
        sections["dut"] = {**sections.get("dut", {}), "hops": hops}
    if checks := find_kind(kind).checks():
        sections["checks"] = checks
    return sections


def calibration_config(kind: str, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The selftest config that calibrates the tester's ceiling: the lab's port type, lcores,
    frame size, address variation and validity rule on the calibration wire's ports (loopback:
    its own ports, which are one), both directions, short trials. A lab of DNS queries (a DNS64
    server's) calibrates with them: RFC 8219 §9.2.1's self-test (procedures/throughput.py), the
    client's IP version on both sides, the lab's dns.timeout the test's."""
    lab = tester_config(kind, p)
    ports = CALIBRATION_PORTS if find_kind(kind).has_dut else TESTER_PORTS
    kind_of_port = port_type(p.get("ports", "auto"))
    dns = lab.get("dns", {})
    client = "right" if lab.get("traffic", {}).get("direction") == "reverse" else "left"
    version = lab[client].get("ip_version", 4) if dns.get("enabled") else 4
    sections: dict[str, dict[str, Any]] = {"tester": dict(lab["tester"])}
    for side, port, other, (_, address) in zip(("left", "right"), ports, ports[::-1],
                                               DIRECT[version]):
        sections[side] = {"port": f"{kind_of_port}:{port}", "mac": MACS[port],
                          "ip_version": version, f"ipv{version}": address, "dut_mac": MACS[other]}
    if dns.get("enabled"):
        sections["dns"] = {**dns, **SELFTEST_QUERIES}
    # The frames the sender builds (ceiling_conditions): sizes, varying fields, VLAN tags. On
    # the wire each side receives the other's tags, so both carry the left side's.
    for same in ("traffic", "addresses", "ports"):
        if same in lab:
            sections[same] = dict(lab[same])
    tags = {key: value for key, value in lab["left"].items() if key in ("vlan", "vlan_outer")}
    if tags and len(tags) == len([k for k in lab["right"] if k in ("vlan", "vlan_outer")]):
        for side in ("left", "right"):
            sections[side] |= tags
    sections["trial"] = {"duration": CALIBRATION_TRIAL, "pause": 0.0,
                         "max_lag": lab["trial"]["max_lag"]}
    sections["throughput"] = {"error": CALIBRATION_ERROR}
    return sections


def write_config(path: str, kind: str, p: dict[str, Any],
                  ceiling: dict[str, Any] | None = None) -> None:
    lab_kind = find_kind(kind)
    params = ", ".join(f"{k}={v}" for k, v in p.items())
    placement = plan_placement(p["lcores"], online_cpus())
    lines = [f"# Tester config for the xlatperf lab {kind}{f' ({params})' if params else ''},",
             "# written by `xlatperf lab up`. Remove the lab with `xlatperf lab down`.",
             f"# CPUs: {placement.describe()};",
             f"# the DUT's work is steered there with {lab_kind.steered_by}. Another "
             "tester.lcores needs `lab up` again (lcores=...).",
             f"# Ports: {p['ports']} ({PORT_REASON[p['ports']]}; lab up ports=... for another).",
             *lab_kind.config_notes(p)]
    sections = tester_config(kind, p)
    if ceiling:
        lines.append("# Tester ceiling: the highest rate per direction at which the tester sent "
                     "and received every frame")
        lines.append("# through the calibration wire (DNS queries: the highest DNS64 test rate "
                     "RFC 8219 §9.2.1's self-test")
        lines.append("# there allows); a throughput search measures no rate above it "
                     "(docs/config.md).")
        sections["tester"] |= {"ceiling": ceiling["fps"], "ceiling_for": ceiling["for"],
                               "ceiling_calibration": ceiling["calibration"]}
    else:
        lines.append("# Tester ceiling: not calibrated" + ("" if p.get("calibrate") else
                                                         " (calibrate=no)") + ".")
    write_sections(path, sections, lines)


def write_sections(path: str, sections: dict[str, dict[str, Any]], comments: list[str]) -> None:
    lines = list(comments)
    for section, keys in sections.items():
        lines.append(f"\n[{section}]")
        lines += [f"{key} = {toml_value(value)}" for key, value in keys.items()]
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
