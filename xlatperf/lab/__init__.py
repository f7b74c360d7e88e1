# SPDX-License-Identifier: BSD-3-Clause
"""Network-namespace testbeds ("labs") with real DUTs on one Linux host.

`lab_up(kind, params, config_out)` builds one testbed and writes a tester config for it;
`lab_down()` removes whatever a lab left behind. Both need root, `ip` and `tc` (iproute2),
`sysctl` and `ethtool`; some kinds also need `nft` or `tayga`. `xlatperf lab up` then
calibrates the tester's ceiling (xlatperf/run/calibration.py) and `record_ceiling` writes it
into the config.

Every kind but `loopback` has the same wiring:

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

SIIT is TAYGA with explicit address mappings, as in the SIIT benchmarking paper (Lencse and
Shima): 198.18.0.2 <-> 2001:2::2 and 198.19.0.2 <-> 2001:2:0:1::2. The DUT also routes native
IPv6 between 2001:2::2 and 2001:2:0:8000::2, the background traffic of RFC 8219. As RFC 7915
asks, TAYGA fragments an IPv4 packet without DF whose translation exceeds 1280 bytes (a
1498-byte IPv4 frame comes out as two IPv6 fragments); with DF set it arrives whole.

The veths have an MTU of 1500 (router kinds: parameter mtu, e.g. 9216 for jumbo frames), so
frames up to mtu + 18 bytes pass. The kind vlan (xlatperf/lab/vlan.py) is a router whose
interfaces terminate VLANs with tc-BPF.

The stateful kinds (nat44, nat66, nat64: RFC 9693, docs/stateful.md) accept only replies to
connections the left side opened (a forward-chain filter), set the UDP conntrack timeouts of the
DUT namespace so that no entry expires during a test, and write a tester config with the
Initiator on the left, the [stateful] settings and `conntrack -F` as DUT hooks.

Most sysctls the lab sets live in its own namespaces. A few exist only in the initial namespace
and apply to all: the neighbour table limits (many addresses) and the conntrack table and hash
sizes (nf_conntrack_max, nf_conntrack_buckets: the NAT kinds). The lab records their previous
values in the state file before changing them, and `lab down` restores them. The only other
things outside the namespaces are the TAYGA process (found by its pid file and by `ip netns
pids`; its CPU affinity), the lab directory /run/xlatperf-lab/ (the calibration config and
result) and the state file /run/xlatperf-lab.json.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..config.schema import AF_XDP_MAX_FRAME, SCHEMA
from ..util.files import toml_value
from . import vlan
from .placement import Placement, online_cpus, pin_process, plan_placement, steer_receive
from .shell import LabError, ip, run, sysctl

TESTER_NS = "xlp-tester"
DUT_NS = "xlp-dut"
STATE_FILE = "/run/xlatperf-lab.json"
LAB_DIR = "/run/xlatperf-lab"
LOCK_FILE = "/run/xlatperf-lab.lock"
CALIBRATION_CONFIG = os.path.join(LAB_DIR, "calibration.toml")
CALIBRATION_OUT = os.path.join(LAB_DIR, "calibration")  # the selftest's result directory
AF_XDP = 44  # the address family of AF_XDP sockets (linux/socket.h); Python has no name for it
_PORT_REASON = {"af_xdp": "AF_XDP sockets, copy mode on veth: the faster port type here",
                "af_packet": "chosen with ports=af_packet, or this kernel has no AF_XDP sockets"}

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
# Every kind but loopback has a second pair of tester ports, joined by a tc wire (_add_wire),
# on which `xlatperf lab up` calibrates the tester's ceiling; loopback's own ports are one.
CALIBRATION_PORTS = ("xlp-cl", "xlp-cr")
WIRES = {TESTER_PORTS: ("xlp-wl", "xlp-wr"), CALIBRATION_PORTS: ("xlp-cwl", "xlp-cwr")}

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

# TAYGA (siit). Its own addresses lie in the networks routed into its tun device, so they are
# reachable (TAYGA answers pings there) and shadow no address of a DUT interface's subnet.
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
# nat64: TAYGA maps each IPv6 client to an address of its dynamic pool (the private IPv4 side),
# which nftables masquerades to the DUT's public address, as in the stateful NAT64 paper.
# A network-specific prefix (RFC 6052) inside 2001:2::/48: TAYGA refuses the well-known prefix
# 64:ff9b::/96 with non-global IPv4 addresses such as the benchmarking range 198.18.0.0/15.
NAT64_PREFIX = "2001:2:0:6464::/96"
NAT64_POOL = "198.18.0.0/16"
NAT64_TAYGA_IPV4 = "198.18.0.1"
NAT64_RESPONDER_AS_6 = "2001:2:0:6464::c613:2"  # 198.19.0.2 in that prefix
# The stateful kinds: the Initiator's phase-1 ranges (100 x 100 port pairs) and conntrack.
NAT_KINDS = ("nat44", "nat66", "nat64")
TAYGA_KINDS = ("siit", "nat64")
NAT_PORTS = {"forward_src": "random", "forward_src_min": 1024, "forward_src_max": 1123,
             "forward_dst": "random", "forward_dst_min": 1, "forward_dst_max": 100}
CONNTRACK_GLOBAL = ("net.netfilter.nf_conntrack_max", "net.netfilter.nf_conntrack_buckets")
CONNTRACK_UDP_TIMEOUTS = ("net.netfilter.nf_conntrack_udp_timeout",
                          "net.netfilter.nf_conntrack_udp_timeout_stream")
FLUSH = f"ip netns exec {DUT_NS} conntrack -F"
NFT_RULESET = os.path.join(LAB_DIR, "dut.nft")

# The calibration selftest: short trials, the binary search to within this many frames/s.
CALIBRATION_TRIAL = 1.0
CALIBRATION_ERROR = 1000
DEFAULT_LCORES = SCHEMA["tester"]["lcores"].default

# limit: the token bucket holds BURST_SECONDS of frames at the limit rate, at least BURST_MIN.
BURST_SECONDS = 0.05
BURST_MIN = 100
# The lab's tester shares two CPUs with its DUT and everything else on the machine: the kernel
# deschedules the engine's worker now and then, and an AF_XDP sender runs the kernel DUT's
# forwarding of its burst on its own CPU (5-12 ms behind at 5,000 frames/s seen in CI). The
# schedule validity rule (trial.max_lag) tolerates LAB_MAX_LAG there: bunched frames the lab's
# DUTs absorb (the limit DUT's token bucket holds BURST_SECONDS of frames; a kernel DUT's
# per-CPU backlog 1000 frames, 20 ms at 50,000 frames/s). Larger lags are retaken.
LAB_MAX_LAG = 0.02
# lossy: numgen draws from 0..LOSS_SCALE-1; a frame is dropped when the draw < round(loss*scale).
LOSS_SCALE = 65536


# --- kinds and their parameters ---------------------------------------------------------------

_FAMILY = {"default": "4", "allowed": "4 or 6", "help": "IP version routed by the DUT"}
# Multiple IP addresses (draft-lencse-bmwg-multiple-ip-addresses): how many per side, and
# whether the DUT reaches them directly or through a gateway.
_ADDRESSES = {"default": "1", "allowed": "an integer 1..65533",
              "help": "tester addresses per side, varied pseudorandomly (1 = a single pair)"}
_GATEWAY = {"default": "no", "allowed": "yes or no",
            "help": "the DUT routes each side's test range to a next hop (draft Figs. 3 and 5)"}
_MTU = {"default": "1500", "allowed": "an integer 1280..65535",
        "help": "MTU of the DUT's and the tester's veths (jumbo frames: 9216)"}
_ROUTER_PARAMS = {"addresses": _ADDRESSES, "gateway": _GATEWAY, "mtu": _MTU}
_NAT_PARAMS = {
    "table_size": {"default": "1048576", "allowed": "an integer 1..67108864",
                   "help": "connection table size: the global nf_conntrack_max (restored by lab "
                           "down)"},
    "buckets": {"default": "auto", "allowed": "auto or an integer 1..67108864",
                "help": "conntrack hash size, the global nf_conntrack_buckets; auto = table_size"},
    "timeout": {"default": "3600", "allowed": "an integer 1..86400",
                "help": "UDP conntrack timeouts in seconds (DUT namespace)"},
}
_NAT_ADDRESSES = {**_ADDRESSES, "help": "tester addresses per side, enumerated with the ports "
                                        "(1 = a single pair)"}
# Every kind: how the tester is set up against it (module docstring, "CPUs, ports, ceiling").
COMMON_PARAMS = {
    "ports": {"default": "auto", "allowed": "auto, af_xdp or af_packet",
              "help": "the tester's port type; auto = af_xdp where the kernel offers AF_XDP "
                      "sockets (the faster one on veth) and no jumbo mtu is set, else "
                      "af_packet"},
    "lcores": {"default": DEFAULT_LCORES,
               "allowed": 'a DPDK lcore list like "0,1" (main lcore, then workers)',
               "help": "tester.lcores of the config; the DUT's packet processing goes to the "
                       "CPUs no worker lcore uses"},
    "calibrate": {"default": "yes", "allowed": "yes or no",
                  "help": "measure the tester's ceiling after building (`xlatperf lab up`: a "
                          "selftest through the calibration wire, about 15 s)"},
}

# Drives validation and `xlatperf lab up --help`. Defaults are strings, as parameters arrive.
KINDS: dict[str, dict[str, Any]] = {
    "router4": {
        "description": "Linux kernel as IPv4 router (RFC 2544)",
        "params": dict(_ROUTER_PARAMS),
    },
    "router6": {
        "description": "Linux kernel as IPv6 router (RFC 5180)",
        "params": dict(_ROUTER_PARAMS),
    },
    "siit": {
        "description": "TAYGA as SIIT with explicit address mappings, IPv6 left, IPv4 right "
        "(RFC 8219); native IPv6 is routed for background traffic",
        "params": {},
    },
    "nat44": {
        "description": "stateful NAT44: nftables masquerade from the left (private) to "
        "198.19.0.1 on the right (RFC 9693)",
        "params": {**_NAT_PARAMS, "addresses": _NAT_ADDRESSES},
    },
    "nat66": {
        "description": "stateful NAT66: nftables masquerade from the left to 2001:2:0:8000::1 "
        "on the right",
        "params": {**_NAT_PARAMS, "addresses": _NAT_ADDRESSES},
    },
    "nat64": {
        "description": "stateful NAT64: TAYGA (dynamic pool, prefix 2001:2:0:6464::/96) plus "
        "nftables NAT44 to 198.19.0.1, IPv6 left, IPv4 right",
        "params": dict(_NAT_PARAMS),
    },
    "vlan": {
        "description": "router (family 4 or 6) terminating IEEE 802.1Q VLANs or 802.1ad QinQ on "
        "each side with tc-BPF (xlatperf/lab/vlan.py)",
        "params": {**vlan.PARAMS, "family": _FAMILY, **_ROUTER_PARAMS},
    },
    "loopback": {
        "description": "the two tester ports joined by a tc wire on the DUT CPUs, no DUT "
                       "(tests the tester)",
        "params": {},
    },
    "limit": {
        "description": "router plus an nftables 'limit rate': a DUT with a known throughput",
        "params": {
            "rate": {"default": "10000", "allowed": "an integer 1..100000000",
                     "help": "frames/s the DUT passes per direction"},
            "family": _FAMILY,
            **_ROUTER_PARAMS,
            "burst": {"default": "auto", "allowed": "auto or an integer 1..100000000",
                      "help": f"token bucket size in frames; auto = max({BURST_MIN}, "
                              f"rate*{BURST_SECONDS}) ({BURST_SECONDS * 1000:g} ms at the rate)"},
        },
    },
    "lossy": {
        "description": "router plus nftables 'numgen random' drops: a DUT with a known loss ratio",
        "params": {
            "loss": {"default": "0.01", "allowed": "a number 0..1",
                     "help": f"probability of dropping each frame, per direction "
                             f"(applied as round(loss*{LOSS_SCALE})/{LOSS_SCALE})"},
            "family": _FAMILY,
            **_ROUTER_PARAMS,
        },
    },
}


for _spec in KINDS.values():
    _spec["params"].update(COMMON_PARAMS)


def format_kinds() -> str:
    """The kinds and their parameters as text, for `xlatperf lab up --help`."""
    lines = []
    for kind, spec in KINDS.items():
        lines.append(f"{kind}: {spec['description']}")
        for name, p in spec["params"].items():
            lines.append(f"    {name}={p['default']}  {p['help']} ({p['allowed']})")
    return "\n".join(lines)


def _parse_int(text: str, low: int, high: int) -> int:
    value = int(text, 10)
    if not low <= value <= high:
        raise ValueError
    return value


def _parse_ratio(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:  # also rejects nan
        raise ValueError
    return value


def _parse_choice(text: str, choices: tuple[str, ...]) -> str:
    if text not in choices:
        raise ValueError
    return text


_PARSERS: dict[str, Callable[[str], Any]] = {
    "rate": lambda s: _parse_int(s, 1, 100_000_000),
    "burst": lambda s: "auto" if s == "auto" else _parse_int(s, 1, 100_000_000),
    "family": lambda s: int(_parse_choice(s, ("4", "6"))),
    "loss": _parse_ratio,
    "addresses": lambda s: _parse_int(s, 1, 65533),
    "table_size": lambda s: _parse_int(s, 1, 2**26),
    "buckets": lambda s: "auto" if s == "auto" else _parse_int(s, 1, 2**26),
    "timeout": lambda s: _parse_int(s, 1, 86400),
    "gateway": lambda s: _parse_choice(s, ("yes", "no")) == "yes",
    "ports": lambda s: _parse_choice(s, ("auto", "af_xdp", "af_packet")),
    "lcores": lambda s: s,   # checked against the online CPUs by plan_placement
    "calibrate": lambda s: _parse_choice(s, ("yes", "no")) == "yes",
    "mtu": lambda s: _parse_int(s, 1280, 65535),
    **vlan.PARSERS,
}


def resolve_params(kind: str, params: dict[str, str]) -> dict[str, Any]:
    """Validated parameters of `kind`, defaults filled in and converted to numbers."""
    if kind not in KINDS:
        raise LabError(f"unknown lab kind {kind!r}; allowed kinds: {', '.join(sorted(KINDS))}")
    spec = KINDS[kind]["params"]
    for name in params:
        if name not in spec:
            allowed = ", ".join(sorted(spec)) or "none"
            raise LabError(f"lab kind {kind!r} has no parameter {name!r}; allowed: {allowed}")
    resolved: dict[str, Any] = {}
    for name, p in spec.items():
        text = str(params.get(name, p["default"])).strip()
        try:
            resolved[name] = _PARSERS[name](text)
        except ValueError:
            raise LabError(f"lab kind {kind!r}: {name}={text!r} is invalid; "
                           f"allowed: {p['allowed']}") from None
    if kind == "limit" and resolved["burst"] == "auto":
        resolved["burst"] = auto_burst(resolved["rate"])
    if resolved.get("buckets") == "auto":
        resolved["buckets"] = resolved["table_size"]
    return resolved


def auto_burst(rate: int) -> int:
    """Token bucket size of the `limit` DUT for `rate` frames/s.

    nftables' packet `limit` is a token bucket that refills at `rate` and holds `burst` frames
    (kernel >= 5.x semantics). Two errors pull in opposite directions:

    * Below the limit, frames that arrive bunched up (the tester or the kernel was descheduled
      for d seconds and then catches up) find at most `burst` tokens: no loss needs
      burst >= d * rate.
    * Above the limit, a trial of T seconds at rate r passes burst + rate*T frames, so the
      highest zero-loss rate a throughput search finds is rate * (1 + burst / (rate*T)).

    burst = rate * 0.05 s absorbs 50 ms of scheduling jitter -- several time slices on a busy
    2-core machine -- and overstates the throughput by 0.05 s / T: 5 % for T = 1 s, 0.5 % for
    T = 10 s. The floor of 100 frames covers the engine's send bursts at low rates.
    """
    return max(BURST_MIN, math.ceil(rate * BURST_SECONDS))


# --- running commands -------------------------------------------------------------------------

def _need_tools(kind: str) -> None:
    tools = {"ip": "iproute2", "tc": "iproute2", "sysctl": "procps", "ethtool": "ethtool"}
    if kind in ("limit", "lossy") + NAT_KINDS:
        tools["nft"] = "nftables"
    if kind in NAT_KINDS:
        tools["conntrack"] = "conntrack"
    if kind in TAYGA_KINDS:
        tools["tayga"] = "tayga"
    if kind == "vlan":
        tools |= vlan.TOOLS
    missing = [f"{t} (Debian package {pkg})" for t, pkg in tools.items() if not shutil.which(t)]
    if missing:
        raise LabError(f"lab kind {kind!r} needs {', '.join(missing)}: run scripts/setup.sh")


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
    resolved = resolve_params(kind, params)  # before touching anything: a typo keeps the old lab
    if os.geteuid() != 0:
        raise LabError("lab up needs root (it creates network namespaces)")
    _need_tools(kind)
    placement = plan_placement(resolved["lcores"], online_cpus())
    resolved["lcores"] = placement.lcores
    resolved["ports"] = port_type(resolved["ports"], _veth_mtu(kind, resolved))
    with _locked():
        _down()
        try:
            os.makedirs(LAB_DIR, exist_ok=True)
            # Recorded first, so that `lab down` knows about a half-built lab after a crash.
            state = {
                "kind": kind,
                "params": resolved,
                "config": os.path.abspath(config_out),
                "namespaces": [TESTER_NS] if kind == "loopback" else [TESTER_NS, DUT_NS],
                "lab_dir": LAB_DIR,
                "created": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                "placement": placement.to_dict(),
                "calibration_config": CALIBRATION_CONFIG,
            }
            _write_state(state)
            _build(kind, resolved, placement)
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
        _write_state(state)
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
        lines.append(f"tester ceiling: {ceiling['fps']:,} frames/s per direction "
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


def lab_state() -> dict[str, Any] | None:
    """What the running lab recorded about itself (kind, params, config path), or None."""
    try:
        with open(STATE_FILE) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


# --- building ---------------------------------------------------------------------------------

def _build(kind: str, p: dict[str, Any], placement: Placement) -> None:
    run(["ip", "netns", "add", TESTER_NS])
    if kind == "loopback":
        _add_wire(TESTER_PORTS, placement)
        return
    run(["ip", "netns", "add", DUT_NS])
    ip(DUT_NS, "link", "set", "lo", "up")  # as on any host: the DUT's traffic to itself
    # No duplicate address detection on the DUT's interfaces (made after this): while its
    # addresses were tentative, the first second or two after lab up, the DUT could not
    # resolve the tester's IPv6 addresses and dropped what it should forward to them (the
    # first trial's background frames through siit: 38 % lost).
    sysctl(DUT_NS, {"net.ipv6.conf.all.accept_dad": 0, "net.ipv6.conf.default.accept_dad": 0})
    mtu = _veth_mtu(kind, p)
    _add_veth(TESTER_NS, "xlp-tl", DUT_NS, "xlp-dl", mtu)
    _add_veth(TESTER_NS, "xlp-tr", DUT_NS, "xlp-dr", mtu)
    _setup_tester_links(TESTER_PORTS)
    _add_wire(CALIBRATION_PORTS, placement, mtu)
    _build_dut(kind, p)
    _place_dut(kind, placement)


def _veth_mtu(kind: str, p: dict[str, Any]) -> int:
    """The MTU of the lab's veths: the `mtu` parameter, raised for QinQ (lab/vlan.py)."""
    mtu = p.get("mtu", 1500)
    return vlan.veth_mtu(p, mtu) if kind == "vlan" else mtu


def _place_dut(kind: str, placement: Placement) -> None:
    """The DUT's packet processing on the DUT CPUs (placement.py): RPS on its veth ends, and
    TAYGA's threads pinned there (it translates in user space)."""
    steer_receive(DUT_NS, DUT_PORTS, placement.dut_cpus)
    if kind in TAYGA_KINDS:
        pid = _read_pid(TAYGA_PIDFILE)
        if pid is None or not _is_our_tayga(pid):
            raise LabError("tayga is not running: cannot pin it to the DUT CPUs")
        pin_process(pid, placement.dut_cpus)


def _add_wire(ports: tuple[str, str], placement: Placement, mtu: int = 1500) -> None:
    """Tester ports `ports` joined by an ideal DUT: each port's veth peer (its wire end) hands
    every frame it receives to the other wire end with tc mirred, in the softirq that RPS puts
    on the DUT CPUs. So a selftest over `ports` does the tester's whole work on the tester's
    CPUs and everything a DUT's CPU would do for the tester (queueing the frames sent,
    delivering the frames received to the tester's socket or XDP program) on the DUT's, at
    almost no cost of its own: the tester's ceiling as it stands in the lab."""
    ends = WIRES[ports]
    for port, end in zip(ports, ends):
        _add_veth(TESTER_NS, port, TESTER_NS, end, mtu)
    _setup_tester_links(ports + ends)
    for end, other in (ends, ends[::-1]):
        run(["tc", "qdisc", "add", "dev", end, "ingress"], ns=TESTER_NS)
        run(["tc", "filter", "add", "dev", end, "ingress", "protocol", "all", "u32", "match",
             "u32", "0", "0", "action", "mirred", "egress", "redirect", "dev", other],
            ns=TESTER_NS)
    steer_receive(TESTER_NS, ends, placement.dut_cpus)


def _build_dut(kind: str, p: dict[str, Any]) -> None:
    if kind == "siit":
        _setup_router(left=[V6_LEFT], right=[V4_RIGHT, V6_RIGHT])
        _start_tayga([f"ipv4-addr {TAYGA_IPV4}", f"ipv6-addr {TAYGA_IPV6}",
                      *(f"map {v4} {v6}" for v4, v6 in TAYGA_MAPS)],
                     [TAYGA_ROUTE4, TAYGA_ROUTE6])
        return
    if kind in NAT_KINDS:
        _build_nat(kind, p)
        return
    v6 = kind == "router6" or p.get("family") == 6
    if p.get("addresses", 1) > 1 and not p.get("gateway"):
        # Every tester address is a neighbour entry of the DUT, on both sides.
        _raise_neighbour_limits(2 * p["addresses"] + NEIGHBOUR_HEADROOM)
    if p.get("gateway"):
        left, right = (GW6_LEFT, GW6_RIGHT) if v6 else (GW4_LEFT, GW4_RIGHT)
        _setup_router(left=[left[:2]], right=[right[:2]])
        for dut_addr, next_hop, test_range in (left, right):
            ip(DUT_NS, "-6" if v6 else "-4", "route", "add", test_range, "via", next_hop)
    elif v6:
        _setup_router(left=[V6_LEFT], right=[V6_RIGHT])
    else:
        _setup_router(left=[V4_LEFT], right=[V4_RIGHT])
    if kind == "vlan":
        vlan.attach(p, LAB_DIR, DUT_NS, run)
    if kind == "limit":
        _load_nft(limit_ruleset(p["rate"], p["burst"]))
    elif kind == "lossy":
        _load_nft(lossy_ruleset(p["loss"]))


# The kernel's neighbour table limits (gc_thresh1..3) exist only in the initial network
# namespace and apply to all namespaces: the DUT's 1024-entry default would silently drop
# frames to half of 1000 addresses per side. The lab raises them there and restores the
# previous values on `lab down` (recorded in the state file before they are changed).
NEIGHBOUR_SYSCTLS = [f"net.ipv{v}.neigh.default.gc_thresh{i}" for v in (4, 6) for i in (1, 2, 3)]
NEIGHBOUR_HEADROOM = 1024


def _raise_neighbour_limits(entries: int) -> None:
    current = {key: int(run(["sysctl", "-n", key]).strip()) for key in NEIGHBOUR_SYSCTLS}
    _set_global_sysctls({key: max(value, entries) for key, value in current.items()})


def _set_global_sysctls(settings: dict[str, int]) -> None:
    """Sets sysctls of the initial namespace, recording their values in the state file first
    (a value this lab already recorded keeps the original), so that lab down restores them."""
    state = lab_state() or {}
    restore = state.setdefault("restore_sysctl", {})
    for key in settings:
        if key not in restore:
            restore[key] = int(run(["sysctl", "-n", key]).strip())
    _write_state(state)
    run(["sysctl", "-q", "-w", *(f"{key}={value}" for key, value in settings.items())])


def _restore_global_sysctls() -> None:
    previous = (lab_state() or {}).get("restore_sysctl") or {}
    if previous:
        run(["sysctl", "-q", "-w", *(f"{key}={value}" for key, value in previous.items())])


def _add_veth(ns_a: str, name_a: str, ns_b: str, name_b: str, mtu: int = 1500) -> None:
    # Created inside the namespaces, so no interface ever appears in the host namespace.
    ip(ns_a, "link", "add", name_a, "address", MACS[name_a], "mtu", str(mtu), "type", "veth",
        "peer", "name", name_b, "address", MACS[name_b], "mtu", str(mtu), "netns", ns_b)
    for ns, name in ((ns_a, name_a), (ns_b, name_b)):
        run(["ethtool", "-K", name, "gro", "off", "gso", "off", "tso", "off"], ns=ns)


def _setup_tester_links(links: tuple[str, ...]) -> None:
    # IPv6 off before the link comes up: otherwise DAD, RS and MLD frames would reach the DUT.
    sysctl(TESTER_NS, {f"net.ipv6.conf.{link}.disable_ipv6": 1 for link in links})
    for link in links:
        ip(TESTER_NS, "link", "set", link, "promisc", "on", "up")


def _setup_router(left: list[tuple[str, str]], right: list[tuple[str, str]]) -> None:
    """DUT namespace as a router: addresses and forwarding. No static neighbour entries: the
    DUT resolves the tester's addresses with ARP/ND and the tester answers (RFC 2544 §25)."""
    sides = {"xlp-dl": (left, "xlp-tl"), "xlp-dr": (right, "xlp-tr")}
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
    sysctl(DUT_NS, settings)
    for dev, (families, _) in sides.items():
        for addr, _ in families:
            extra = ["nodad"] if ":" in addr else []  # usable at once, no DAD frames
            ip(DUT_NS, "addr", "add", addr, "dev", dev, *extra)
        ip(DUT_NS, "link", "set", dev, "up")


def _start_tayga(settings: list[str], routes: list[str]) -> None:
    """TAYGA in the DUT namespace with `settings` (tayga.conf lines beyond its tun device and
    data directory) and `routes` (IPv4 and IPv6 prefixes) into its tun device."""
    os.makedirs(TAYGA_DATA, exist_ok=True)
    conf = [f"tun-device {TAYGA_TUN}", f"data-dir {TAYGA_DATA}", *settings]
    with open(TAYGA_CONF, "w") as f:
        f.write("# TAYGA for the xlatperf lab (written by lab up)\n")
        f.write("\n".join(conf) + "\n")
    # A persistent tun first, so routes exist before TAYGA reads its first packet.
    run(["tayga", "--config", TAYGA_CONF, "--mktun"], ns=DUT_NS)
    ip(DUT_NS, "link", "set", TAYGA_TUN, "up")
    for route in routes:
        ip(DUT_NS, "-6" if ":" in route else "-4", "route", "add", route, "dev", TAYGA_TUN)
    # TAYGA daemonizes; its output goes to a file so no pipe of ours is held by the daemon.
    with open(TAYGA_LOG, "w") as log:
        done = subprocess.run(
            ["ip", "netns", "exec", DUT_NS, "tayga", "--config", TAYGA_CONF,
             "--pidfile", TAYGA_PIDFILE],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, timeout=30)
    if done.returncode != 0:
        raise LabError(f"tayga failed to start (exit {done.returncode}): {_tail(TAYGA_LOG)}")
    # The daemon writes its pid file after forking; wait for it and check that it lives.
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        pid = _read_pid(TAYGA_PIDFILE)
        if pid is not None and _is_our_tayga(pid):
            return
        time.sleep(0.02)
    raise LabError(f"tayga did not come up (no live process in {TAYGA_PIDFILE}): "
                   f"{_tail(TAYGA_LOG)}")


def _build_nat(kind: str, p: dict[str, Any]) -> None:
    """nat44 / nat66 / nat64: addresses, NAT and conntrack settings (module docstring)."""
    if kind == "nat64":
        _setup_router(left=[V6_LEFT], right=[V4_RIGHT])
        _start_tayga([f"ipv4-addr {NAT64_TAYGA_IPV4}", f"ipv6-addr {TAYGA_IPV6}",
                      f"prefix {NAT64_PREFIX}", f"dynamic-pool {NAT64_POOL}"],
                     [NAT64_POOL, NAT64_PREFIX])
    else:
        if p["addresses"] > 1:
            _raise_neighbour_limits(2 * p["addresses"] + NEIGHBOUR_HEADROOM)
        _setup_router(*(([V6_LEFT], [V6_RIGHT]) if kind == "nat66" else ([V4_LEFT], [V4_RIGHT])))
    _set_global_sysctls(dict(zip(CONNTRACK_GLOBAL, (p["table_size"], p["buckets"]))))
    _load_nft(nat_ruleset("ip6" if kind == "nat66" else "ip"))
    # Per namespace, and present once nftables' NAT has conntrack running there.
    sysctl(DUT_NS, {key: p["timeout"] for key in CONNTRACK_UDP_TIMEOUTS})


def nat_ruleset(family: str) -> str:
    """Masquerade what leaves on the right; from the right, only replies to connections that
    the left opened pass (as on a NAT gateway)."""
    return (f"table {family} xlp_nat {{\n"
            "\tchain postrouting {\n"
            "\t\ttype nat hook postrouting priority srcnat; policy accept;\n"
            '\t\toifname "xlp-dr" masquerade\n'
            "\t}\n"
            "\tchain forward {\n"
            "\t\ttype filter hook forward priority filter; policy accept;\n"
            '\t\tiifname "xlp-dr" ct state established,related accept\n'
            '\t\tiifname "xlp-dr" counter drop\n'
            "\t}\n"
            "}\n")


def limit_ruleset(rate: int, burst: int) -> str:
    """nftables ruleset of the `limit` DUT: each direction passes `rate` frames/s."""
    # One limit per direction: every rule's limit keeps its own token bucket.
    rules = "".join(
        f'\t\tiifname "{dev}" limit rate {rate}/second burst {burst} packets counter accept\n'
        f'\t\tiifname "{dev}" counter drop\n'
        for dev in ("xlp-dl", "xlp-dr"))
    return _ruleset(rules, "accept")


def loss_threshold(loss: float) -> int:
    """The numgen threshold for `loss`: the effective loss ratio is threshold / 65536.

    So the loss ratio is quantised to steps of 1/65536 (1.5e-5): 0.01 becomes 655/65536 =
    0.0099945, and a ratio below 7.6e-6 becomes 0.
    """
    return round(loss * LOSS_SCALE)


def lossy_ruleset(loss: float) -> str:
    """nftables ruleset of the `lossy` DUT: each frame is dropped with probability `loss`."""
    threshold = loss_threshold(loss)
    # numgen's result is 16 bits wide, so nft rejects "< 65536": loss 1 drops unconditionally.
    if threshold >= LOSS_SCALE:
        match = ""
    else:
        match = f"numgen random mod {LOSS_SCALE} < {threshold} "
    rules = "".join(
        f'\t\tiifname "{dev}" {match}counter drop\n'
        f'\t\tiifname "{dev}" counter accept\n'
        for dev in ("xlp-dl", "xlp-dr"))
    return _ruleset(rules, "accept")


def _ruleset(rules: str, policy: str) -> str:
    return ("table inet xlp {\n"
            "\tchain forward {\n"
            f"\t\ttype filter hook forward priority filter; policy {policy};\n"
            f"{rules}"
            "\t}\n"
            "}\n")


def _load_nft(ruleset: str) -> None:
    with open(NFT_RULESET, "w") as f:  # kept for inspection while the lab runs
        f.write(ruleset)
    run(["nft", "-f", NFT_RULESET], ns=DUT_NS)


# --- tester config ----------------------------------------------------------------------------

def tester_config(kind: str, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tester config sections for lab `kind` with resolved parameters `p`."""
    ports = port_type(p.get("ports", "auto"))
    left: dict[str, Any] = {"port": f"{ports}:xlp-tl", "mac": MACS["xlp-tl"]}
    right: dict[str, Any] = {"port": f"{ports}:xlp-tr", "mac": MACS["xlp-tr"]}
    v6 = kind == "router6" or p.get("family") == 6
    # The DUT's MACs are resolved by the tester (dut_mac = ""), from the DUT's addresses.
    if kind == "siit":
        left |= {"ip_version": 6, "ipv6": V6_LEFT[1], "virtual_ipv4": TAYGA_MAPS[0][0],
                 "dut_mac": "", "dut_ipv6": _host(V6_LEFT[0])}
        right |= {"ip_version": 4, "ipv4": V4_RIGHT[1], "ipv6": V6_RIGHT[1],
                  "virtual_ipv6": TAYGA_MAPS[1][1], "dut_mac": "", "dut_ipv4": _host(V4_RIGHT[0])}
    elif kind == "nat64":
        # The Responder's frames come from the state table: left's virtual_ipv4 (the DUT's
        # public address, as the right sees the left) only completes the reverse template.
        left |= {"ip_version": 6, "ipv6": V6_LEFT[1], "virtual_ipv4": _host(V4_RIGHT[0]),
                 "dut_mac": "", "dut_ipv6": _host(V6_LEFT[0])}
        right |= {"ip_version": 4, "ipv4": V4_RIGHT[1], "virtual_ipv6": NAT64_RESPONDER_AS_6,
                  "dut_mac": "", "dut_ipv4": _host(V4_RIGHT[0])}
    else:
        v6 = v6 or kind == "nat66"
        version = 6 if v6 else 4
        plan = (V6_LEFT, V6_RIGHT) if v6 else (V4_LEFT, V4_RIGHT)
        gateways = (GW6_LEFT, GW6_RIGHT) if v6 else (GW4_LEFT, GW4_RIGHT)
        for side, (dut, tester), gateway in zip((left, right), plan, gateways):
            side |= {"ip_version": version, f"ipv{version}": tester}
            if kind == "loopback":
                continue
            side |= {"dut_mac": "", f"dut_ipv{version}": _host(dut)}
            if p.get("gateway"):
                side |= {f"dut_ipv{version}": _host(gateway[0]), f"next_hop_ipv{version}": gateway[1]}
    if kind == "loopback":  # each port's frames go straight to the other port
        left["dut_mac"], right["dut_mac"] = MACS["xlp-tr"], MACS["xlp-tl"]
    if kind == "vlan":
        left |= vlan.tester_keys(p, "left")
        right |= vlan.tester_keys(p, "right")
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
    if kind in NAT_KINDS:
        sections |= nat_sections(kind, p)
    return sections


def nat_sections(kind: str, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The stateful kinds' [ports], [stateful] and [dut]: 100 x 100 port pairs (x the address
    pairs) enumerated pseudorandomly in phase 1, 10,000 connections at 10,000 fps, and
    `conntrack -F` in the DUT namespace before every trial and as the timed tear-down."""
    many = p.get("addresses", 1) > 1
    description = (f"xlatperf lab {kind}: {KINDS[kind]['description']}; Linux "
                   f"{os.uname().release} netfilter: nf_conntrack_max {p['table_size']}, "
                   f"nf_conntrack_buckets {p['buckets']}, UDP timeouts {p['timeout']} s")
    return {"ports": dict(NAT_PORTS),
            "stateful": {"enabled": True, "initiator": "left", "connections": 10000,
                         "rate_phase1": 10000, "timeout_phase1": 1.0,
                         "enumerate": "both" if many else "ports", "order": "random",
                         "selection": "random", "validation": True},
            "dut": {"description": description, "before_trial": FLUSH, "teardown": FLUSH}}


def _host(address_with_prefix: str) -> str:
    return address_with_prefix.split("/")[0]


def calibration_config(kind: str, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The selftest config that calibrates the tester's ceiling: the lab's port type, lcores,
    frame size, address variation and validity rule on the calibration wire's ports (loopback:
    its own ports, which are one), both directions, short trials."""
    lab = tester_config(kind, p)
    ports = TESTER_PORTS if kind == "loopback" else CALIBRATION_PORTS
    kind_of_port = port_type(p.get("ports", "auto"))
    sections: dict[str, dict[str, Any]] = {"tester": dict(lab["tester"])}
    for side, port, other, (_, address) in zip(("left", "right"), ports, ports[::-1],
                                               (V4_LEFT, V4_RIGHT)):
        sections[side] = {"port": f"{kind_of_port}:{port}", "mac": MACS[port], "ip_version": 4,
                          "ipv4": address, "dut_mac": MACS[other]}
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
    params = ", ".join(f"{k}={v}" for k, v in p.items())
    placement = plan_placement(p["lcores"], online_cpus())
    lines = [f"# Tester config for the xlatperf lab {kind}{f' ({params})' if params else ''},",
             "# written by `xlatperf lab up`. Remove the lab with `xlatperf lab down`.",
             f"# CPUs: {placement.describe()};",
             "# the DUT's work is steered there with RPS on its veth ends"
             + (" and TAYGA's affinity" if kind in TAYGA_KINDS else "")
             + ". Another tester.lcores needs `lab up` again (lcores=...).",
             f"# Ports: {p['ports']} ({_PORT_REASON[p['ports']]}; lab up ports=... for another)."]
    if kind == "lossy":
        t = loss_threshold(p["loss"])
        lines.append(f"# Effective loss ratio per direction: {t}/{LOSS_SCALE} = "
                     f"{t / LOSS_SCALE:.7f}")
    sections = tester_config(kind, p)
    if ceiling:
        lines.append("# Tester ceiling: the highest rate per direction at which the tester sent "
                     "and received every frame")
        lines.append("# through the calibration wire; a throughput search measures no rate "
                     "above it (docs/config.md).")
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
    _stop_tayga()
    _restore_global_sysctls()
    for ns in (TESTER_NS, DUT_NS):
        if os.path.exists(f"/run/netns/{ns}"):
            run(["ip", "netns", "delete", ns])  # deletes the veths and the tun with it
    shutil.rmtree(LAB_DIR, ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        os.remove(STATE_FILE)


def _stop_tayga() -> None:
    """Ends the lab's TAYGA: the pid of its pid file and any TAYGA in the DUT namespace."""
    pids = set()
    pid = _read_pid(TAYGA_PIDFILE)
    if pid is not None:
        pids.add(pid)
    if os.path.exists(f"/run/netns/{DUT_NS}"):
        pids.update(int(p) for p in run(["ip", "netns", "pids", DUT_NS]).split())
    # Only processes that are TAYGA running our config: a stale pid may have been reused.
    pids = {p for p in pids if _is_our_tayga(p)}
    for p in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGTERM)
    deadline = time.monotonic() + 3.0
    while pids and time.monotonic() < deadline:
        pids = {p for p in pids if _is_our_tayga(p)}
        time.sleep(0.02)
    for p in pids:  # still there after 3 s
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGKILL)


def _is_our_tayga(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
        with open(f"/proc/{pid}/stat") as f:
            zombie = f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False
    return (not zombie and os.path.basename(argv[0]) == b"tayga"
            and TAYGA_CONF.encode() in argv)


def _read_pid(path: str) -> int | None:
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def _write_state(state: dict[str, Any]) -> None:
    tmp = STATE_FILE + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f, indent=2)
        f.write("\n")
    os.replace(tmp, STATE_FILE)


def _tail(path: str, lines: int = 5) -> str:
    try:
        with open(path) as f:
            text = f.read().strip().splitlines()[-lines:]
    except OSError:
        return "(no output)"
    return "; ".join(text) or "(no output)"
