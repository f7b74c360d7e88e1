# SPDX-License-Identifier: BSD-3-Clause
"""Network-namespace testbeds ("labs") with real DUTs on one Linux host.

`lab_up(kind, params, config_out)` builds one testbed and writes a tester config for it;
`lab_down()` removes whatever a lab left behind. Both need root, `ip` and `tc` (iproute2),
`sysctl` and `ethtool`; some kinds also need `nft` or `tayga`. `xlatperf lab up` then
calibrates the tester's ceiling (xlatperf/run/calibration.py) and `record_ceiling` writes it
into the config.

Each kind is a LabKind in lab/kinds/ (its parameters, tools, DUT, CPU placement and tester
config sections, KINDS); wiring.py builds what they share and takes it down, testerconfig.py
writes the tester config around the kind's sections and the calibration config; this module
is the face (lab_up, lab_down, record_ceiling, describe) and keeps the state (state.py: the
state file) and the lock. Every kind
but `loopback` has the same wiring:

    namespace xlp-tester                        namespace xlp-dut
    xlp-tl 02:78:6c:00:00:01  <---- veth ---->  xlp-dl 02:78:6c:00:01:01   (left)
    xlp-tr 02:78:6c:00:00:02  <---- veth ---->  xlp-dr 02:78:6c:00:01:02   (right)
    xlp-cl 02:78:6c:00:00:03  <-> xlp-cwl =tc mirred= xlp-cwr <-> xlp-cr 02:78:6c:00:00:04
                                   (the calibration wire, all in xlp-tester)

`loopback` is one such wire between the tester's own ports: xlp-tl <-> xlp-wl =tc= xlp-wr <->
xlp-tr. A wire end hands every frame it receives to the other end (tc ingress, mirred
redirect): an ideal DUT, on the DUT's CPUs like the real ones.

CPUs, ports, ceiling (placement.py has the details and the measurements behind them): the
engine's worker lcores (tester.lcores, the lab parameter `lcores`) poll on their CPUs; the
DUT's packet processing is steered to the other CPUs with RPS on the DUT's veth ends and the
wire ends, and TAYGA is pinned there. The tester's ports are af_xdp where the kernel offers
AF_XDP sockets (copy mode on veth; faster than af_packet here) and the `mtu` keeps frames
within the one umem chunk af_xdp receives into, else af_packet (`ports`). The
tester's ceiling is a selftest through the calibration wire with the lab's ports, lcores and
frame size (`calibrate`).

The tester side carries no IP address and has IPv6 disabled, so its kernel sends nothing
(no RS, ND or DAD) and the engine's ports see only the DUT's frames. The DUT resolves the
tester's addresses with ARP/ND, which the engine answers (RFC 2544 §25). Offloads that merge or
split frames are off on every veth, so frames arrive as they were sent.

Addresses follow RFC 2544 (198.18.0.0/15) and RFC 5180 (2001:2::/48: input ports in the first
half, output ports in the second):

    kind     left tester           DUT left       DUT right            right tester
    router4  198.18.0.2            198.18.0.1/24  198.19.0.1/24        198.19.0.2
    router6  2001:2::2             2001:2::1/64   2001:2:0:8000::1/64  2001:2:0:8000::2
    siit     2001:2::2             2001:2::1/64   198.19.0.1/24,       198.19.0.2,
             (as IPv4: 198.18.0.2)                2001:2:0:8000::1/64  2001:2:0:8000::2
                                                                       (as IPv6: 2001:2:0:1::2)
    limit, lossy: as router4 (family=4) or router6 (family=6)
    nat44    as router4; nftables masquerades left (private, Initiator) to 198.19.0.1 on the right
    nat66    as router6; nftables masquerades left to 2001:2:0:8000::1 on the right
    nat64    2001:2::2 -> TAYGA (dynamic pool 198.18.0.0/16, prefix 2001:2:0:6464::/96) -> NAT44
             to 198.19.0.1 -> 198.19.0.2; the Initiator sends to 2001:2:0:6464::198.19.0.2
    loopback: xlp-tl and xlp-tr joined by a tc wire, addresses as router4

SIIT is TAYGA with explicit address mappings (kinds/tayga.py); the stateful kinds (nat44,
nat66, nat64: RFC 9693, docs/stateful.md) write a tester config with the Initiator on the left,
the [stateful] settings and `conntrack -F` as DUT hooks (kinds/nat.py).

The veths have an MTU of 1500 (router kinds: parameter mtu, e.g. 9216 for jumbo frames), so
frames up to mtu + 18 bytes pass. The kind vlan (kinds/vlan.py) is a router whose interfaces
terminate VLANs with tc-BPF.

Most sysctls the lab sets live in its own namespaces. A few exist only in the initial namespace
and apply to all: the neighbour table limits (many addresses), the conntrack table and hash
sizes (nf_conntrack_max, nf_conntrack_buckets: the NAT kinds) and the per-CPU receive backlog
(netdev_max_backlog: LAB_BACKLOG). The lab records their previous
values in the state file before changing them, and `lab down` restores them. The only other
things outside the namespaces are the TAYGA process (found by its pid file and by `ip netns
pids`; its CPU affinity), the lab directory /run/xlatperf-lab/ (the calibration config and
result) and the state file /run/xlatperf-lab.json.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import os
import shutil
from collections.abc import Iterator
from typing import Any

from ..config.dns import ceiling_unit
from .kinds import KINDS, LabKind, format_kinds
from .kinds.router import auto_burst, loss_threshold, lossy_ruleset
from .kinds.tayga import TAYGA_CONF, TAYGA_PIDFILE
from .names import DUT_NS, DUT_PORTS, LAB_DIR, MACS, TESTER_NS
from .placement import Placement, online_cpus, plan_placement
from .shell import LabError
from .state import lab_state, write_state
from .testerconfig import (CALIBRATION_CONFIG, CALIBRATION_OUT, LAB_MAX_LAG, PORT_REASON, calibration_config,
                           find_kind, tester_config, write_config, write_sections)
from .wiring import LAB_BACKLOG, build, port_type, take_down

# What other modules, the tests, the benchmarks and scripts use of the lab.
__all__ = [
    "CALIBRATION_CONFIG", "CALIBRATION_OUT", "DUT_NS", "DUT_PORTS", "KINDS", "LAB_DIR",
    "LAB_BACKLOG", "LAB_MAX_LAG", "MACS", "TAYGA_CONF", "TAYGA_PIDFILE", "TESTER_NS", "LabError", "auto_burst",
    "calibration_config", "describe", "format_kinds", "lab_down", "lab_state", "lab_up",
    "loss_threshold", "lossy_ruleset", "port_type", "record_ceiling", "resolve_params",
    "tester_config",
]

LOCK_FILE = "/run/xlatperf-lab.lock"
# What the wiring needs; a kind adds its own (LabKind.tools).
TOOLS = {"ip": "iproute2", "tc": "iproute2", "sysctl": "procps", "ethtool": "ethtool"}


def resolve_params(kind: str, params: dict[str, str]) -> dict[str, Any]:
    """Validated parameters of `kind`, defaults filled in and converted to numbers."""
    return find_kind(kind).parse(params)


def _need_tools(lab_kind: LabKind) -> None:
    tools = TOOLS | lab_kind.tools
    missing = [f"{t} (Debian package {pkg})" for t, pkg in tools.items() if not shutil.which(t)]
    if missing:
        raise LabError(f"lab kind {lab_kind.name!r} needs {', '.join(missing)}: "
                       "run scripts/setup.sh")


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """Serialises lab up/down between processes (two test runs must not interleave steps)."""
    with open(LOCK_FILE, "a") as lock:  # never removed: removing lock files opens races
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


# --- public API -------------------------------------------------------------------------------

def lab_up(kind: str, params: dict[str, str], config_out: str) -> dict[str, Any]:
    """Builds the testbed `kind` (removing any previous lab) and writes its tester config.

    `params` are the kind's parameters as strings (see KINDS). Returns what the lab recorded
    about itself (lab_state(); describe() turns it into sentences). On any failure everything
    that was created is removed again and LabError is raised. The tester's ceiling is not
    measured here (that needs the engine): `xlatperf lab up` does it next with
    xlatperf.run.calibration.calibrate_lab when the `calibrate` parameter says so.
    """
    lab_kind = find_kind(kind)
    resolved = lab_kind.parse(params)  # before touching anything: a typo keeps the old lab
    if os.geteuid() != 0:
        raise LabError("lab up needs root (it creates network namespaces)")
    _need_tools(lab_kind)
    placement = plan_placement(resolved["lcores"], online_cpus())
    resolved["lcores"] = placement.lcores
    resolved["ports"] = port_type(resolved["ports"], lab_kind.veth_mtu(resolved))
    with _locked():
        take_down()
        try:
            os.makedirs(LAB_DIR, exist_ok=True)
            # Recorded first, so that `lab down` knows about a half-built lab after a crash.
            state = {
                "kind": kind,
                "params": resolved,
                "config": os.path.abspath(config_out),
                "namespaces": [TESTER_NS, DUT_NS, *lab_kind.more_namespaces] if lab_kind.has_dut else [TESTER_NS],
                "lab_dir": LAB_DIR,
                "created": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                "placement": placement.to_dict(),
                "calibration_config": CALIBRATION_CONFIG,
            }
            write_state(state)
            build(lab_kind, resolved, placement)
            write_config(config_out, kind, resolved)
            write_sections(CALIBRATION_CONFIG, calibration_config(kind, resolved),
                            ["# The tester's ports joined by the calibration wire (no DUT), "
                             "written by `xlatperf lab up`:",
                             "# `xlatperf lab up` runs a selftest with it to calibrate the "
                             "tester's ceiling."])
            return lab_state() or state
        except BaseException as exc:
            with contextlib.suppress(Exception):
                take_down()
            if isinstance(exc, (LabError, OSError)):
                raise LabError(f"lab up {kind} failed (cleaned up): {exc}") from None
            raise  # e.g. KeyboardInterrupt, after cleaning up


def record_ceiling(fps: int, conditions: str, how: str) -> dict[str, Any]:
    """Writes the tester's calibrated ceiling into the running lab's tester config (the
    [tester] keys ceiling, ceiling_for, ceiling_calibration) and its state; returns the state."""
    with _locked():
        state = lab_state()
        if state is None:
            raise LabError("no lab is up: nothing to record a tester ceiling for")
        state["ceiling"] = {"fps": fps, "for": conditions, "calibration": how}
        write_state(state)
        write_config(state["config"], state["kind"], state["params"], state["ceiling"])
    return state


def describe(state: dict[str, Any]) -> list[str]:
    """What `xlatperf lab up` says about the lab it built: ports, CPU placement, ceiling."""
    p = state["params"]
    placement = Placement(**{k: tuple(v) if isinstance(v, list) else v
                             for k, v in state["placement"].items()})
    lines = [f"lab {state['kind']} is up; tester config: {state['config']}",
             f"ports: {p['ports']} ({PORT_REASON[p['ports']]})",
             f"CPUs: {placement.describe()}"]
    ceiling = state.get("ceiling")
    if ceiling:
        lines.append(f"tester ceiling: {ceiling['fps']:,} {ceiling_unit(ceiling['for'])} "
                     f"({ceiling['for']}; calibrated by {ceiling['calibration']})")
    elif not p.get("calibrate"):
        lines.append("tester ceiling: not calibrated (calibrate=no)")
    return lines


def lab_down() -> None:
    """Removes the lab: TAYGA, the xlp- namespaces (and so their interfaces), lab files.

    Succeeds when nothing exists, so it is safe to run at any time.
    """
    if os.geteuid() != 0:
        raise LabError("lab down needs root (it deletes network namespaces)")
    with _locked():
        take_down()
