# SPDX-License-Identifier: BSD-3-Clause
"""Network-namespace testbeds ("labs") with real DUTs on one Linux host.

`lab_up(kind, params, config_out)` builds one testbed and writes a tester config for it;
`lab_down()` removes whatever a lab left behind. Both need root, `ip` and `tc` (iproute2),
`sysctl` and `ethtool`; some kinds also need `nft` or `tayga`. `xlatperf lab up` then
calibrates the tester's ceiling (xlatperf/run/calibration.py) and `record_ceiling` writes it
into the config.

Each kind is a LabKind in lab/kinds/ (its parameters, tools, DUT, CPU placement and tester
config sections, KINDS); this module builds what they share, writes the tester config around
the kind's sections, and keeps the state (state.py: the state file) and the lock. Every kind
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
import socket
from collections.abc import Iterator
from typing import Any

from ..config.dns import SELFTEST_QUERIES, ceiling_unit
from ..config.limits import AF_XDP_MAX_FRAME
from ..util.files import toml_value
from .kinds import KINDS, LabKind, format_kinds
from .kinds.base import DEFAULT_LCORES
from .kinds.router import auto_burst, loss_threshold, lossy_ruleset
from . import daemons
from .kinds.tayga import TAYGA_CONF, TAYGA_PIDFILE
from .names import CE_NS, DUT_NS, DUT_PORTS, LAB_DIR, MACS, TESTER_NS, TESTER_PORTS, DIRECT
from .placement import Placement, online_cpus, plan_placement, steer_receive
from .shell import LabError, add_veth, ip, run, sysctl
from .state import STATE_FILE, lab_state, restore_global_sysctls, set_global_sysctls, write_state

# What other modules, the tests, the benchmarks and scripts use of the lab.
__all__ = [
    "CALIBRATION_CONFIG", "CALIBRATION_OUT", "DUT_NS", "DUT_PORTS", "KINDS", "LAB_DIR",
    "LAB_BACKLOG", "LAB_MAX_LAG", "MACS", "TAYGA_CONF", "TAYGA_PIDFILE", "TESTER_NS", "LabError", "auto_burst",
    "calibration_config", "describe", "format_kinds", "lab_down", "lab_state", "lab_up",
    "loss_threshold", "lossy_ruleset", "port_type", "record_ceiling", "resolve_params",
    "tester_config",
]

LOCK_FILE = "/run/xlatperf-lab.lock"
CALIBRATION_CONFIG = os.path.join(LAB_DIR, "calibration.toml")
CALIBRATION_OUT = os.path.join(LAB_DIR, "calibration")  # the selftest's result directory
AF_XDP = 44  # the address family of AF_XDP sockets (linux/socket.h); Python has no name for it
_PORT_REASON = {"af_xdp": "AF_XDP sockets, copy mode on veth: the faster port type here",
                "af_packet": "chosen with ports=af_packet, or this kernel has no AF_XDP sockets"}
# What the wiring needs; a kind adds its own (LabKind.tools).
TOOLS = {"ip": "iproute2", "tc": "iproute2", "sysctl": "procps", "ethtool": "ethtool"}

# Every kind but loopback has a second pair of tester ports, joined by a tc wire (_add_wire),
# on which `xlatperf lab up` calibrates the tester's ceiling; loopback's own ports are one.
CALIBRATION_PORTS = ("xlp-cl", "xlp-cr")
WIRES = {TESTER_PORTS: ("xlp-wl", "xlp-wr"), CALIBRATION_PORTS: ("xlp-cwl", "xlp-cwr")}

# The calibration selftest: short trials, the binary search to within this many frames/s.
CALIBRATION_TRIAL = 1.0
CALIBRATION_ERROR = 1000

# The lab's tester shares two CPUs with its DUT and everything else on the machine: the kernel
# deschedules the engine's worker now and then, and an AF_XDP sender runs the kernel DUT's
# forwarding of its burst on its own CPU (5-12 ms behind at 5,000 frames/s seen in CI). The
# schedule validity rule (trial.max_lag) tolerates LAB_MAX_LAG there: bunched frames the lab's
# DUTs absorb (the limit DUT's token bucket holds BURST_SECONDS of frames, kinds/router.py; a
# kernel DUT's per-CPU backlog 1000 frames, 20 ms at 50,000 frames/s). Larger lags are retaken.
LAB_MAX_LAG = 0.02
# ... and the DUT CPU's backlog (net.core.netdev_max_backlog, the initial namespace's: the
# queue RPS puts every frame the DUT receives into) holds such a bunch at the lab's rates: both
# directions at up to 400,000 frames/s for LAB_MAX_LAG. The kernel's default, 1000 frames, is 5
# ms at 100,000 frames/s each way: with the worker's CPU stolen in bursts, the `limit` DUT lost
# frames in valid trials at 92 % of its limit (tests/e2e/test_trust_lab.py, 2026-11-27).
LAB_BACKLOG = 16_384


def resolve_params(kind: str, params: dict[str, str]) -> dict[str, Any]:
    """Validated parameters of `kind`, defaults filled in and converted to numbers."""
    return _lab_kind(kind).parse(params)


def _lab_kind(kind: str) -> LabKind:
    if kind not in KINDS:
        raise LabError(f"unknown lab kind {kind!r}; allowed kinds: {', '.join(sorted(KINDS))}")
    return KINDS[kind]


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
    lab_kind = _lab_kind(kind)
    resolved = lab_kind.parse(params)  # before touching anything: a typo keeps the old lab
    if os.geteuid() != 0:
        raise LabError("lab up needs root (it creates network namespaces)")
    _need_tools(lab_kind)
    placement = plan_placement(resolved["lcores"], online_cpus())
    resolved["lcores"] = placement.lcores
    resolved["ports"] = port_type(resolved["ports"], lab_kind.veth_mtu(resolved))
    with _locked():
        _down()
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
            _build(lab_kind, resolved, placement)
            _write_config(config_out, kind, resolved)
            _write_sections(CALIBRATION_CONFIG, calibration_config(kind, resolved),
                            ["# The tester's ports joined by the calibration wire (no DUT), "
                             "written by `xlatperf lab up`:",
                             "# `xlatperf lab up` runs a selftest with it to calibrate the "
                             "tester's ceiling."])
            return lab_state() or state
        except BaseException as exc:
            with contextlib.suppress(Exception):
                _down()
            if isinstance(exc, (LabError, OSError)):
                raise LabError(f"lab up {kind} failed (cleaned up): {exc}") from None
            raise  # e.g. KeyboardInterrupt, after cleaning up


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


def record_ceiling(fps: int, conditions: str, how: str) -> dict[str, Any]:
    """Writes the tester's calibrated ceiling into the running lab's tester config (the
    [tester] keys ceiling, ceiling_for, ceiling_calibration) and its state; returns the state."""
    with _locked():
        state = lab_state()
        if state is None:
            raise LabError("no lab is up: nothing to record a tester ceiling for")
        state["ceiling"] = {"fps": fps, "for": conditions, "calibration": how}
        write_state(state)
        _write_config(state["config"], state["kind"], state["params"], state["ceiling"])
    return state


def describe(state: dict[str, Any]) -> list[str]:
    """What `xlatperf lab up` says about the lab it built: ports, CPU placement, ceiling."""
    p = state["params"]
    placement = Placement(**{k: tuple(v) if isinstance(v, list) else v
                             for k, v in state["placement"].items()})
    lines = [f"lab {state['kind']} is up; tester config: {state['config']}",
             f"ports: {p['ports']} ({_PORT_REASON[p['ports']]})",
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
        _down()


# --- building ---------------------------------------------------------------------------------

def _build(lab_kind: LabKind, p: dict[str, Any], placement: Placement) -> None:
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


# --- tester config ----------------------------------------------------------------------------

def tester_config(kind: str, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tester config sections for lab `kind` with resolved parameters `p`: the tester's
    ports around the kind's sides, then what follows from the parameters, then the kind's own
    sections."""
    ports = port_type(p.get("ports", "auto"))
    kind_sections = _lab_kind(kind).tester_sections(p)
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
    hops = _lab_kind(kind).hops(p)
    if hops is not None:
        sections["dut"] = {**sections.get("dut", {}), "hops": hops}
    if checks := _lab_kind(kind).checks():
        sections["checks"] = checks
    return sections


def calibration_config(kind: str, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The selftest config that calibrates the tester's ceiling: the lab's port type, lcores,
    frame size, address variation and validity rule on the calibration wire's ports (loopback:
    its own ports, which are one), both directions, short trials. A lab of DNS queries (a DNS64
    server's) calibrates with them: RFC 8219 §9.2.1's self-test (procedures/throughput.py), the
    client's IP version on both sides, the lab's dns.timeout the test's."""
    lab = tester_config(kind, p)
    ports = CALIBRATION_PORTS if _lab_kind(kind).has_dut else TESTER_PORTS
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


def _write_config(path: str, kind: str, p: dict[str, Any],
                  ceiling: dict[str, Any] | None = None) -> None:
    lab_kind = _lab_kind(kind)
    params = ", ".join(f"{k}={v}" for k, v in p.items())
    placement = plan_placement(p["lcores"], online_cpus())
    lines = [f"# Tester config for the xlatperf lab {kind}{f' ({params})' if params else ''},",
             "# written by `xlatperf lab up`. Remove the lab with `xlatperf lab down`.",
             f"# CPUs: {placement.describe()};",
             f"# the DUT's work is steered there with {lab_kind.steered_by}. Another "
             "tester.lcores needs `lab up` again (lcores=...).",
             f"# Ports: {p['ports']} ({_PORT_REASON[p['ports']]}; lab up ports=... for another).",
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
    _write_sections(path, sections, lines)


def _write_sections(path: str, sections: dict[str, dict[str, Any]], comments: list[str]) -> None:
    lines = list(comments)
    for section, keys in sections.items():
        lines.append(f"\n[{section}]")
        lines += [f"{key} = {toml_value(value)}" for key, value in keys.items()]
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


# --- tearing down -----------------------------------------------------------------------------

def _down() -> None:
    daemons.stop_all((DUT_NS, CE_NS))
    restore_global_sysctls()
    for ns in (TESTER_NS, DUT_NS, CE_NS):
        if os.path.exists(f"/run/netns/{ns}"):
            run(["ip", "netns", "delete", ns])  # deletes the veths and the tun with it
    shutil.rmtree(LAB_DIR, ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        os.remove(STATE_FILE)
