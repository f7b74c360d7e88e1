# SPDX-License-Identifier: BSD-3-Clause
"""Configuration: the TOML schema of docs/config.md, defaults, --set overrides and validation.

`load_config(path, overrides)` returns the *effective configuration*: a plain dict
{section: {key: value}} with every key present, values normalised (lower-case MACs, full PCI
addresses, floats for seconds), ready to be dumped to JSON into the results. Every problem is a
ConfigError whose message names the key, the value and what is allowed.
"""

import copy
import ipaddress
import json
import re
import tomllib
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from ..util.errors import ConfigError, key_error, show_value
from ..util.files import read_toml
from ..util.rates import parse_speed
from ..frames.kinds import foreground_addresses, kind_of, largest_frame, min_frame_size
from ..frames.kinds.ipv4aas import dual_dut
from ..frames.stack import IP_STACKS, MAX_FRAME_SIZE, SENT_TTL
from ..frames.trial import (DIRECTIONS, RFC4814_PORTS, active_directions, direction_sides, has_background,
                           lookup, size_period)
from ..frames.imix import check_imix, mixed_length
from .ipv4aas import TECHNOLOGY_CHOICES, check_ipv4aas
from .limits import AF_XDP_MAX_FRAME, MAX_CAPTURE_FRAMES, MAX_PATTERN, MAX_QUEUES, STREAM_IDS, stream_ids_needed
from .ipv4aas import prefix as ipv4aas_prefix
from .dns import check_dns, prefix_list, records_prefix, rfc6052_prefix, server as dns_server, zone as dns_zone
from .mlrgoals import check_frame_timeouts, check_goals, check_preset
from .stateful import check_stateful
from .templates import BRACES_HINT, TemplateError, placeholders
from .views import ConfigBase, config_class, make_config

__all__ = ["ConfigError", "load_config", "default_config", "validate", "apply_override",
           "parse_port", "PortSpec", "active_directions", "DIRECTIONS"]


# --------------------------------------------------------------------------------------------
# Value checkers. Each takes the raw value and returns the normalised one, or raises ValueError
# whose text says what is allowed ("must be an integer in 64..9216").
# --------------------------------------------------------------------------------------------

Checker = Callable[[Any], Any]


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # bool is an int in Python


def integer(low: int, high: int | None = None) -> Checker:
    allowed = f"an integer in {low}..{high}" if high is not None else f"an integer >= {low}"

    def check(value):
        if not _is_int(value) or value < low or (high is not None and value > high):
            raise ValueError(f"must be {allowed}")
        return value
    return check


def number(low: float, high: float | None = None, *, low_open: bool = False,
           high_open: bool = False) -> Checker:
    """A float (ints are accepted and converted) in an interval; open ends are excluded."""
    left = "(" if low_open else "["
    right = ")" if high_open else "]"
    if high is None:
        allowed = f"a number {'>' if low_open else '>='} {low:g}"
    else:
        allowed = f"a number in {left}{low:g}, {high:g}{right}"

    def check(value):
        if not (_is_int(value) or isinstance(value, float)):
            raise ValueError(f"must be {allowed}")
        ok = value > low if low_open else value >= low
        if high is not None:
            ok = ok and (value < high if high_open else value <= high)
        if not ok:
            raise ValueError(f"must be {allowed}")
        return float(value)
    return check


def boolean(value):
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def choice(*options) -> Checker:
    allowed = " | ".join(json.dumps(o) for o in options)

    def check(value):
        if value not in options or isinstance(value, bool) != isinstance(options[0], bool):
            raise ValueError(f"must be one of {allowed}")
        return value
    return check


def string(value):
    if not isinstance(value, str):
        raise ValueError("must be a string")
    return value


def port_range(value):
    """"" (none), or "LOW-HIGH": the ports LOW..HIGH, 1 <= LOW <= HIGH <= 65535."""
    allowed = 'must be "" (not stated) or a port range "LOW-HIGH" with 1 <= LOW <= HIGH <= 65535'
    if value == "":
        return value
    low, dash, high = value.partition("-") if isinstance(value, str) else ("", "", "")
    if not (dash and low.isdigit() and high.isdigit() and 1 <= int(low) <= int(high) <= 65535):
        raise ValueError(allowed)
    return value


def _address(version: int, optional: bool) -> Checker:
    cls = ipaddress.IPv4Address if version == 4 else ipaddress.IPv6Address

    def check(value):
        if optional and value == "":
            return ""
        try:
            if isinstance(value, str):
                return str(cls(value))
        except ValueError:
            pass
        raise ValueError(f"must be an IPv{version} address" + (' or ""' if optional else ""))
    return check


_MAC_RE = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")


def mac(optional: bool, unicast: bool) -> Checker:
    allowed = "a MAC address like 02:00:00:00:00:01" + (' or ""' if optional else "")

    def check(value):
        if optional and value == "":
            return ""
        if not isinstance(value, str) or not _MAC_RE.match(value.lower()):
            raise ValueError(f"must be {allowed}")
        value = value.lower()
        if unicast and int(value[:2], 16) & 1:
            raise ValueError("must be a unicast MAC address (group bit clear)")
        return value
    return check


def speed(blank: str) -> Checker:
    """A link speed, or "" for the one `blank` names."""
    def check(value):
        if value == "":
            return ""
        try:
            if isinstance(value, str):
                parse_speed(value)
                return value
        except ValueError:
            pass
        raise ValueError(f'must be a link speed like "10G", "2.5G", "100M" or "" ({blank})')
    return check


_LCORES_RE = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")
_LCORE_MAP_RE = re.compile(r"^\d+@\d+(,\d+@\d+)*$")


def lcore_cpus(text: str) -> list[tuple[int, int]]:
    """The (lcore, CPU) pairs of tester.lcores, in the order given (the first is the main
    lcore): "0,2-4" -> [(0, 0), (2, 2), (3, 3), (4, 4)]; "0@0,1@1,2@0" -> as written (several
    lcores may share a CPU, e.g. the sleeping main lcore and a second worker on a 2-CPU host)."""
    if "@" in text:
        return [(int(lcore), int(cpu)) for lcore, cpu in (item.split("@") for item in text.split(","))]
    cores: list[int] = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        cores.extend(range(int(first), int(last or first) + 1))
    return [(core, core) for core in cores]


def expand_lcores(text: str) -> list[int]:
    """"0,2-4" -> [0, 2, 3, 4], in the order given (the first is the main lcore)."""
    return [lcore for lcore, _ in lcore_cpus(text)]


def lcores(value):
    allowed = ('must be a DPDK lcore list like "0,1" or "0-3", or lcore@CPU pairs like "0@0,1@1,2@0", '
               'with at least two lcores (main + worker)')
    text = value.replace(" ", "") if isinstance(value, str) else ""
    if not (_LCORES_RE.match(text) or _LCORE_MAP_RE.match(text)):
        raise ValueError(allowed)
    cores = expand_lcores(text)
    if len(set(cores)) != len(cores) or len(cores) < 2:
        raise ValueError(allowed)
    return text


VARIABLE_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


def dut_variable(value):
    if isinstance(value, (str, int, float)):   # bool is an int
        return value
    raise ValueError("must be a string, a number or a boolean (a DUT variable, used by hook "
                     "commands as {dut.NAME})")


def dut_variables(value):
    if not isinstance(value, dict) or not all(isinstance(k, str) and VARIABLE_NAME.match(k)
                                              for k in value):
        raise ValueError("must be a table of DUT variables NAME = value (names of lower-case "
                         "letters, digits and '_')")
    return {name: dut_variable(v) for name, v in value.items()}


def flow_counts(value):
    """RFC 8219 §10: the numbers of network flows n, the single flow first (the degradation
    figures are relative to it), then increasing."""
    if (not isinstance(value, list) or not value or not all(_is_int(n) and n > 0 for n in value)
            or value[0] != 1 or any(b <= a for a, b in zip(value, value[1:]))):
        raise ValueError("must be a list of increasing positive integers starting with 1 "
                         "(the single-flow result the degradation is relative to), "
                         "e.g. [1, 4, 16, 64]")
    return list(value)


def vlan_id(value):
    """IEEE 802.1Q VLAN ID: 1..4094 (0 is the priority tag and 4095 reserved); 0 = no tag."""
    if not _is_int(value) or not 0 <= value <= 4094:
        raise ValueError("must be 0 (untagged) or a VLAN ID in 1..4094")
    return value


def hops(value):
    """dut.hops: "auto" (the set-up's, frames/kinds dut_hops) or the TTL/hop limit decrements
    between the tester's ports."""
    if value == "auto" or (_is_int(value) and 0 <= value <= 254):
        return value
    raise ValueError('must be "auto" (1 for a router, translator or NAT, 2 for a dual DUT) or an '
                     "integer in 0..254 (how much the DUT decrements the TTL/hop limit)")


def rate_list(value):
    if not isinstance(value, list) or not all(_is_int(r) and r > 0 for r in value):
        raise ValueError("must be a list of positive integers (frames/s), e.g. [1000000, 500000]")
    return list(value)


# --------------------------------------------------------------------------------------------
# Port specs
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PortSpec:
    """A parsed port spec: kind is pci | af_packet | af_xdp | null | ring, name the PCI address,
    interface or ring pair ("" for null); devargs a PCI device's driver arguments
    ("key=value,..."; mlx5's rxq_cqe_comp_en=0, say), passed to DPDK with the address."""
    kind: str
    name: str
    devargs: str = ""

    def __str__(self):
        text = f"{self.kind}:{self.name}" if self.name else self.kind
        return f"{text},{self.devargs}" if self.devargs else text


_PCI_RE = re.compile(r"^(?:([0-9a-f]{4}):)?([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$")
# Linux interface names: at most 15 bytes (IFNAMSIZ - 1); ',' and '=' would break the EAL
# --vdev argument, '/' and whitespace are not allowed by the kernel.
_IFACE_RE = re.compile(r"^[^\s/,=:]{1,15}$")
PORT_FORMS = "pci:0000:03:00.0[,KEY=VALUE...] | af_packet:IFACE | af_xdp:IFACE | null | ring:NAME"
# A PCI device's driver arguments (DPDK devargs): key=value pairs separated by commas.
_DEVARGS_RE = re.compile(r"^[A-Za-z0-9_.-]+=[A-Za-z0-9_.:/+-]+(,[A-Za-z0-9_.-]+=[A-Za-z0-9_.:/+-]+)*$")
_RING_RE = re.compile(r"^[A-Za-z0-9_]{1,20}$")


def parse_port(text: str) -> PortSpec:
    """Parse a port spec; raises ValueError saying what is allowed."""
    if not isinstance(text, str):
        raise ValueError(f"must be a port spec: {PORT_FORMS}")
    kind, _, name = text.partition(":")
    if kind == "null" and not name:
        return PortSpec("null", "")
    if kind == "pci":
        address, _, devargs = name.partition(",")
        match = _PCI_RE.match(address.lower())
        if not match:
            raise ValueError("must be pci:DOMAIN:BUS:DEVICE.FUNCTION, e.g. pci:0000:03:00.0, optionally "
                             "with the driver's arguments after a comma: pci:0000:03:00.0,rxq_cqe_comp_en=0")
        if devargs and not _DEVARGS_RE.match(devargs):
            raise ValueError("must have its driver arguments as KEY=VALUE pairs separated by commas after "
                             "the address, e.g. pci:0000:03:00.0,rxq_cqe_comp_en=0,txq_inline_max=0")
        domain, bus, device, function = match.groups()
        return PortSpec("pci", f"{domain or '0000'}:{bus}:{device}.{function}", devargs)
    if kind in ("af_packet", "af_xdp"):
        if not _IFACE_RE.match(name):
            raise ValueError(f"must be {kind}:IFACE with a Linux interface name (1..15 characters, "
                             "no whitespace, '/', ',', '=' or ':')")
        return PortSpec(kind, name)
    if kind == "ring":
        # A pair of ports wired to each other through two rte_rings inside the engine
        # (engine option --ring-pair): left and right must name the same pair.
        if not _RING_RE.match(name):
            raise ValueError("must be ring:NAME with a name of 1..20 letters, digits or '_' "
                             "(the same on both sides: the two ends of one ring pair)")
        return PortSpec("ring", name)
    raise ValueError(f"must be a port spec: {PORT_FORMS}")


def port(value):
    return str(parse_port(value))


# An ssh destination: [user@]host, where host is a name, an IPv4 or an IPv6 address (with an
# optional %zone). No spaces and no leading "-": it is one argument of ssh and no option.
SSH_TARGET = re.compile(r"^(?:[A-Za-z0-9_][A-Za-z0-9._-]*@)?[A-Za-z0-9_.:%\[\]][A-Za-z0-9_.:%\[\]-]*$")
SSH_OPTION = re.compile(r"^[A-Za-z][A-Za-z0-9]*=\S.*$")


# EAL options the front end sets itself (lcores, memory, the ports): tester.eal_args may not.
_OWN_EAL_OPTIONS = ("-l", "--lcores", "-c", "--coremask", "--main-lcore", "-a", "--allow", "-w",
                    "--pci-whitelist", "-b", "--block", "--vdev", "--no-pci", "--no-huge", "--in-memory",
                    "--file-prefix", "--no-telemetry")


def eal_arguments(value):
    """tester.eal_args: more EAL options (--socket-mem, --iova-mode, -d PMD.so, --log-level),
    each list item one argument, none that xlatperf sets itself."""
    if not isinstance(value, list) or not all(isinstance(a, str) and a for a in value):
        raise ValueError('must be a list of EAL arguments, e.g. ["--socket-mem=1024,0", "--iova-mode=va"]')
    for argument in value:
        option = argument.split("=", 1)[0]
        short = option[:2] if option[:1] == "-" and option[1:2] != "-" else None
        if option in _OWN_EAL_OPTIONS or short in _OWN_EAL_OPTIONS:
            raise ValueError(f"must not hold {argument!r}: xlatperf sets that itself (lcores from "
                             "tester.lcores, memory from tester.hugepages, the ports from left.port "
                             "and right.port; their drivers' arguments go after the PCI address: "
                             "pci:0000:03:00.0,KEY=VALUE)")
    return list(value)


def ssh_target(value):
    value = string(value)
    if value and not SSH_TARGET.match(value):
        raise ValueError('must be "" (the engine runs on this host) or an ssh destination '
                         '"[user@]host" (no spaces, not starting with "-")')
    return value


def ssh_options(value):
    if not isinstance(value, list) or not all(isinstance(o, str) and SSH_OPTION.match(o)
                                              for o in value):
        raise ValueError('must be a list of ssh options "Name=value" (ssh -o), e.g. '
                         '["StrictHostKeyChecking=accept-new", "ConnectTimeout=5"]')
    return list(value)


# --------------------------------------------------------------------------------------------
# The schema (docs/config.md). Section -> key -> (default, checker).
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Key:
    default: Any
    check: Checker


def _side(port_spec: str, ipv4: str, ipv6: str, dut_mac: str) -> dict[str, Key]:
    return {
        "port": Key(port_spec, port),
        "speed": Key("", speed("as the port reports")),
        "ip_version": Key(4, choice(4, 6)),
        "ipv4": Key(ipv4, _address(4, optional=True)),
        "ipv6": Key(ipv6, _address(6, optional=True)),
        "virtual_ipv4": Key("", _address(4, optional=True)),
        "virtual_ipv6": Key("", _address(6, optional=True)),
        "mac": Key("", mac(optional=True, unicast=True)),
        # "" = resolve it with ARP / Neighbor Solicitation for dut_ipv4 / dut_ipv6
        "dut_mac": Key(dut_mac, mac(optional=True, unicast=False)),
        "dut_ipv4": Key("", _address(4, optional=True)),  # the DUT's address on this side
        "dut_ipv6": Key("", _address(6, optional=True)),
        # Gateway setups (multiple-IP draft Figs. 3 and 5): the address the DUT routes this
        # side's test addresses to; the tester answers ARP/ND for it.
        "next_hop_ipv4": Key("", _address(4, optional=True)),
        "next_hop_ipv6": Key("", _address(6, optional=True)),
        # IEEE 802.1Q: this side's frames carry a C-tag with this VLAN ID (0 = untagged), and
        # with vlan_outer also an IEEE 802.1ad S-tag outside it (QinQ). The tags come on top of
        # traffic.frame_size (docs/config.md).
        "vlan": Key(0, vlan_id),
        "vlan_outer": Key(0, vlan_id),
    }


VARY_MODES = ("fixed", "increasing", "decreasing", "random")


def _port_variation(direction: str) -> dict[str, Key]:
    """RFC 4814 §4.5: source ports 1024..65535, destination ports 1..49151 by default."""
    keys = {}
    for field, (low, high) in RFC4814_PORTS.items():
        keys[f"{direction}_{field}"] = Key("fixed", choice(*VARY_MODES))
        keys[f"{direction}_{field}_min"] = Key(low, integer(0, 65535))
        keys[f"{direction}_{field}_max"] = Key(high, integer(0, 65535))
    return keys


def _address_variation(side: str) -> dict[str, Key]:
    """draft-lencse-bmwg-multiple-ip-addresses: a 16-bit part of the side's addresses varies;
    by default bytes 2-3 of IPv4 (198.18.0.2 .. 198.18.255.254) and bits 96-111 of IPv6."""
    return {
        side: Key("fixed", choice(*VARY_MODES)),
        f"{side}_min": Key(2, integer(0, 65535)),
        f"{side}_max": Key(65534, integer(0, 65535)),
        f"{side}_offset_ipv4": Key(2, choice(0, 2)),
        f"{side}_offset_ipv6": Key(12, choice(8, 10, 12, 14)),
        # RFC 2544 §12: destinations spread over this many networks (bits 16-23 of IPv4,
        # 56-63 of IPv6 destination addresses), pseudorandomly and uniformly.
        f"{side}_nets": Key(1, integer(1, 256)),
    }


# The smallest frames whose UDP payload holds the 18-byte tag (the engine's hello limits).
MIN_FRAME_SIZE = {version: stack.min_frame for version, stack in IP_STACKS.items()}
SCHEMA: dict[str, dict[str, Key]] = {
    "tester": {
        "netns": Key("xlp-tester", string),
        "lcores": Key("0,1", lcores),
        # RX/TX queue pairs per port, served by the worker lcores (a queue pair by one worker);
        # a flow's frames are shared out over its port's TX queues on one schedule.
        "queues": Key(1, integer(1, MAX_QUEUES)),
        "engine": Key("", string),
        "hugepages": Key("auto", choice("auto", "yes", "no")),
        "force": Key(False, boolean),
        # Seconds the engine waits for the ports' links after starting them, and before each
        # trial (X710 and E810 bring theirs up seconds after start; docs/hardware.md).
        "link_timeout": Key(10.0, number(0, 600)),
        # "off": pause frames (IEEE 802.3x) off on the tester's ports, so that a DUT's pause
        # frames cannot slow the sender unseen; "keep": as the NIC came.
        "flow_control": Key("off", choice("off", "keep")),
        # Descriptors per RX and TX queue (drivers round them to what they offer; hello says
        # what each port took).
        "rx_descriptors": Key(4096, integer(32, 65535)),
        "tx_descriptors": Key(1024, integer(32, 65535)),
        # More EAL arguments (docs/hardware.md), e.g. ["--socket-mem=1024,0"].
        "eal_args": Key([], eal_arguments),
        # The engine on another host (docs/testers.md): started as `ssh -T HOST ENGINE ...`,
        # the protocol on ssh's stdin/stdout; "" = on this host.
        "ssh": Key("", ssh_target),
        "ssh_port": Key(0, integer(0, 65535)),     # 0 = ssh's default (22, or ~/.ssh/config)
        "ssh_identity": Key("", string),          # private key file (ssh -i); "" = ssh's default
        "ssh_options": Key([], ssh_options),      # ["Name=value", ...] (ssh -o)
        # The tester's calibrated ceiling (frames/s per direction; 0 = none), the set-up it
        # holds for and how it was measured: `xlatperf lab up` writes them; a throughput
        # search of a run with that set-up measures no rate above it (procedures/search.py).
        "ceiling": Key(0, integer(0)),
        "ceiling_for": Key("", string),
        "ceiling_calibration": Key("", string),
    },
    # RFC 2544 App. C / RFC 6815 (198.18.0.0/15) and RFC 5180 (2001:2::/48, input ports in the
    # first half, output ports in the second half).
    "left": _side("af_packet:xlp-tl", "198.18.0.2", "2001:2::2", "02:00:00:00:01:01"),
    "right": _side("af_packet:xlp-tr", "198.19.0.2", "2001:2:0:8000::2", "02:00:00:00:01:02"),
    "traffic": {
        "frame_size": Key(64, integer(MIN_FRAME_SIZE[4], MAX_FRAME_SIZE)),
        "direction": Key("both", choice("forward", "reverse", "both")),
        "src_port": Key(0xC020, integer(0, 65535)),  # RFC 2544 App. C.2.6.4
        "dst_port": Key(7, integer(0, 65535)),       # UDP echo, RFC 2544 App. C
        # RFC 6985 IMIX instead of one frame_size: "" | "simple" | "64:7,594:4,1518:1" | a genome
        # like "aaaaaaadddg" (xlatperf/config/imix.py, docs/config.md "IMIX").
        "imix": Key("", check_imix),
        "mix_n": Key(1, integer(1, 1000)),
        "mix_m": Key(1, integer(1, 1000)),
        # Pseudorandom fields: the same seed gives the same frames (RFC 4814 §4.2.1).
        "seed": Key(1, integer(0, 2**63 - 1)),
        # The DSCP of the test frames (RFC 2474): a DUT must carry it (RFC 7915 §4.1, §5.1),
        # which only a non-zero one shows.
        "dscp": Key(0, integer(0, 63)),
        # Their ECN field (RFC 3168 §5): Not-ECT, ECT(0), ECT(1) or CE; an ECT packet may arrive
        # CE (a congested router marks it), nothing else changes it (checks.ecn).
        "ecn": Key("not-ect", choice("not-ect", "ect0", "ect1", "ce")),
        # The flow label of the IPv6 test frames, 0..0xfffff: a sending host should set one
        # (RFC 6437 §3), and a router or NAT66 must deliver a non-zero one unchanged. 0 sends
        # none, which a forwarding node may then set.
        "flow_label": Key(0x12345, integer(0, 0xFFFFF)),
    },
    "ports": {**_port_variation("forward"), **_port_variation("reverse")},
    "addresses": {**_address_variation("left"), **_address_variation("right")},
    "trial": {
        "duration": Key(60.0, number(0, low_open=True)),   # RFC 2544 §24
        "timeout": Key(2.0, number(0)),                    # RFC 2544 §23 d
        "pause": Key(5.0, number(0)),                      # RFC 2544 §23 e
        "finish_early": Key(True, boolean),
        # RFC 2544 §23 b: before the first trial of a procedure, one trial that visits every
        # tester address at learning_rate, so the DUT has resolved them all (its result is
        # recorded as phase "learning" and not used). auto: when addresses vary or a DUT MAC
        # is resolved dynamically.
        "learning": Key("auto", choice("auto", "yes", "no")),
        "learning_rate": Key(10000, integer(1)),
        # Per-frame timeout (the SIIT paper's): a frame whose one-way delay exceeds it counts
        # as lost ("late"); 0 = off (RFC 2544's global timeout only). Every procedure.
        "frame_timeout": Key(0.0, number(0, 3600)),
        # Whether the tester kept the rate (docs/config.md "Valid trials"): "schedule" = every
        # frame sent, none more than max_lag seconds behind its scheduled time (what the DUT
        # was offered); "siitperf" = every frame sent within duration x (1 + 1e-5).
        "validity": Key("schedule", choice("schedule", "siitperf")),
        "max_lag": Key(0.001, number(0, 60)),
        # An invalid trial by the tester's own doing (its pacing, its ports' drops) is taken
        # again up to this many times; every attempt is recorded.
        "retakes": Key(2, integer(0, 100)),
    },
    # A pcapng sample of each receiving port's test frames per trial (docs/config.md
    # "[capture]"), written to <out>/captures/ and named in the trial's record.
    "capture": {
        "enabled": Key(False, boolean),
        "frames": Key(100, integer(1, MAX_CAPTURE_FRAMES)),   # per port and trial: the first ones
        "stride": Key(1, integer(1, 1_000_000)),              # every stride-th test frame (per RX queue)
        "snaplen": Key(65535, integer(64, 65535)),            # bytes kept of each frame
        "foreign": Key(False, boolean),                       # also frames that are not test frames
    },
    # The receiver's header checks (docs/config.md "Header checks"), each on by default; false
    # turns one off for a DUT that legitimately changes that field (a DSCP remarking policy:
    # tos = false).
    "checks": {
        "checksum": Key(True, boolean),   # the IPv4 header and UDP/TCP checksums verify
        "ttl": Key(True, boolean),        # the TTL/hop limit is the sent one less dut.hops
        "tos": Key(True, boolean),        # the DSCP arrives as sent (traffic.dscp)
        "ecn": Key(True, boolean),        # the ECN field as sent (traffic.ecn), or CE where ECT was sent
        "address": Key(True, boolean),    # addresses and ports as the DUT must write them
        # The Ethernet source is the DUT's MAC on the receiving side (dut_mac, set or resolved);
        # false for a DUT that sends from another MAC by design (a VRRP group's, a bond's).
        "src_mac": Key(True, boolean),
        "df": Key(True, boolean),         # IPv4 arrivals: the DF flag (RFC 7915 §5.1 translated)
        # Translated IPv4 packets of at most 1,260 bytes: DF clear (RFC 7915 §5.1, the standard
        # in force), set (the obsoleted RFC 6145 §5.1, as TAYGA does) or either one, kept to;
        # a DUT that mixes the two fails whichever is chosen.
        "df_small": Key("rfc7915", choice("rfc7915", "rfc6145", "either")),
        # IPv6 arrivals: a non-zero flow label as sent (RFC 6437 §3), 0 from a translator
        # (RFC 7915 §5.1).
        "flow_label": Key(True, boolean),
        # A UDP checksum of 0 over IPv6 is a fault (RFC 8200 §8.1), even where the datagram's
        # sum is right (a translator that writes a checksum of 0xffff as 0: TAYGA 0.9.2).
        "zero_udp_checksum_ipv6": Key(True, boolean),
        # DNS replies (docs/dns.md "The client's verdict on a reply"), beyond their records:
        # TTLs at most the records' (RFC 2308 §3, RFC 2181 §8), a synthesis's at most the A
        # record's and the negative answer's (RFC 6147 §5.1.7: "rfc6147") or the A record's
        # alone ("a_record": Unbound's and PowerDNS Recursor's way), or "off".
        "dns_ttl": Key("rfc6147", choice("rfc6147", "a_record", "off")),
        "dns_edns": Key(True, boolean),        # an OPT record to a query with one (RFC 6891 §7)
        "dns_ra": Key(True, boolean),          # RA set by a DUT's resolver (RFC 1035 §4.1.1)
        "dns_question": Key(True, boolean),    # the question's letters as asked, in random case
        "dns_duplicates": Key(True, boolean),  # no record twice (RFC 2181 §5), no query answered twice
        # A DUT's resolver asked the tester's authoritative side for every name it could not
        # have cached (new, or expired: dns.cache_expired), none answered from nowhere or stale.
        "dns_upstream": Key(True, boolean),
    },
    "throughput": {
        "min_rate": Key(0, integer(0)),
        "max_rate": Key(0, integer(0)),
        # error >= 1: with integer rates, mid = (lo + hi) // 2 == lo once hi - lo == 1.
        "error": Key(1000, integer(1)),
        "loss_tolerance": Key(0.0, number(0, 1, high_open=True)),
        # MLRsearch (docs/mlrsearch.md): goals from presets and tables.
        "mode": Key("binary", choice("binary", "mlrsearch")),
        "preset": Key("rfc2544", check_preset),
        "goals": Key([], check_goals),
        "initial_duration": Key(1.0, number(0, low_open=True)),
    },
    "frame_loss": {
        "start": Key(100.0, number(0, 100, low_open=True)),
        "step": Key(10.0, number(0, 10, low_open=True)),   # RFC 2544 §26.3: at most 10 %
        "rates": Key([], rate_list),
    },
    # RFC 2544 §26.4 back-to-back frames, updated by RFC 9004 (docs/backtoback.md): bursts at
    # `rate`, a binary search on their length, `repeat` independent searches.
    "back_to_back": {
        "rate": Key(0, integer(0)),           # frames/s of the bursts; 0 = the medium's maximum
        "max_time": Key(2.0, number(0, 60, low_open=True)),  # longest burst: this many s at rate
        "step": Key(1, integer(1)),           # search stops when upper - lower <= step (frames)
        "repeat": Key(50, integer(1)),        # RFC 2544 §26.4: at least 50 searches
        "retries": Key(2, integer(0, 100)),   # an invalid burst is sent again this many times
        "throughput": Key(0, integer(0)),     # the DUT's throughput (RFC 9004 §6.4), fps; 0 = none
        "throughput_from": Key("", string),   # or a throughput result directory
    },
    # RFC 2544 §26.5 system recovery (docs/recovery.md): per trial `overload` s at 110 % of
    # the throughput (at most the medium's maximum), then `window` s at half that rate.
    "recovery": {
        "overload": Key(60.0, number(0, low_open=True)),   # RFC 2544: at least 60 s
        "window": Key(10.0, number(0, low_open=True)),     # s at the reduced rate
        "repeat": Key(10, integer(1)),                     # RFC 2544: "a number of times"
    },
    # RFC 2544 §26.6 / RFC 6201 reset (docs/recovery.md): dut.during_trial resets the DUT
    # dut.during_trial_at s into each trial; the type is a label for the report.
    "reset": {
        "type": Key("software", choice("hardware", "software", "power")),
        "description": Key("", string),      # what was reset and how, for the report
        "repeat": Key(10, integer(1)),        # RFC 6201: at least 10 times
    },
    # RFC 8219 §10 overload scalability (docs/scalability.md): a throughput search with n
    # network flows, n distinct client addresses of `side`, for each n of `flows`.
    "scalability": {
        "flows": Key([1, 4, 16, 64, 256, 1024], flow_counts),
        "side": Key("left", choice("left", "right")),
        # t: 0 starts the n flows together (§10.2.1); t > 0 starts client i at i x t seconds
        # (§10.2.2), each trial longer by (n - 1) x t.
        "start_interval": Key(0.0, number(0)),
    },
    # RFC 8219 §7.2 latency (docs/delay.md): `timestamps` tagged frames per direction, spread
    # evenly over the trial after `delay` seconds (checked against the rate and trial.duration
    # when the latency procedure starts).
    "latency": {
        "timestamps": Key(500, integer(1, 1_000_000)),
        "delay": Key(60.0, number(0)),
    },
    # RFC 8219 §7.3 PDV (every frame's delay, histogram) and optionally IPDV.
    "pdv": {
        "ipdv": Key(False, boolean),
    },
    # RFC 9693 stateful NATxy tests (docs/stateful.md): the Initiator/Responder roles, phase 1
    # (N frames at rate R, each tuple of the enumerated ranges once, learned by the Responder
    # into an M-entry state table), the gap D before phase 2, and the searches on top.
    "stateful": {
        "enabled": Key(False, boolean),       # trial, throughput, frame-loss, latency, pdv: phase 1 first
        # udp: RFC 9693's frames; tcp: phase 1 opens each connection with a handshake (docs/tcp.md)
        "transport": Key("udp", choice("udp", "tcp")),
        # teardown-rate: time dut.teardown (hook), or over TCP close every connection (fin: FIN,
        # FIN-ACK, ACK) or reset it (rst) and search the highest rate that completes them all
        "teardown": Key("hook", choice("hook", "fin", "rst")),
        "initiator": Key("left", choice("left", "right")),  # siitperf Stateful 1 | 2
        "connections": Key(1_000_000, integer(1)),           # N: phase-1 frames
        "table_size": Key(0, integer(0)),     # M: state table entries (0 = every foreground frame)
        "rate_phase1": Key(100_000, integer(1)),             # R, frames/s
        "timeout_phase1": Key(2.0, number(0)),               # T, s
        "gap": Key(0.0, number(0)),           # D, s from phase-1 start to phase 2 (0 = N/R + 2T)
        "enumerate": Key("ports", choice("none", "ports", "addresses", "both")),
        "order": Key("random", choice("random", "increasing", "decreasing")),
        "selection": Key("random", choice("fixed", "increasing", "decreasing", "random")),
        "validation": Key(True, boolean),
        "validation_factor": Key(1.0, number(0, 1, low_open=True)),   # alpha
        "max_rate": Key(0, integer(0)),       # connection-rate search: upper end (0 = medium's)
        "error": Key(1000, integer(1)),       # e: connection-rate search precision, frames/s
        "capacity_error": Key(1000, integer(1)),                 # E, connections
        "beta": Key(0.2, number(0, 1, low_open=True, high_open=True)),
        "gamma": Key(0.4, number(0, 1, low_open=True, high_open=True)),
        # Phase-2 procedures and teardown-rate's loading: how often a phase 1 whose state table
        # did not fill is taken again (siitperf's scripts retake it) before the step is invalid.
        "retakes": Key(2, integer(0, 100)),
        # The source ports the NAT sends the Initiator's frames on from (RFC 9693 §3.2: the
        # ports it replaces the Initiator's with; e.g. an nftables masquerade's "to :20000-29999"):
        # "LOW-HIGH", or "" for not stated (not checked).
        "public_ports": Key("", port_range),
    },
    # IPv4-as-a-Service (docs/ipv4aas.md, xlatperf/config/ipv4aas.py): the technology, what the
    # DUT is in it, and the technology's parameters. The left port is the customer side.
    "ipv4aas": {
        "technology": Key("", choice(*TECHNOLOGY_CHOICES)),
        "role": Key("", string),              # per technology: frames/technology.py
        # BR roles: the CEs the left port emulates (RFC 8219 §10.1.2's n; 0 = every CE of the
        # rule or the binding table, one B4 for DS-Lite) and how a frame's CE is chosen.
        "ces": Key(0, integer(0, 2**32)),
        "ce_mode": Key("random", choice("random", "increasing")),
        # The AFTR's, lwAFTR's or MAP-E BR's IPv6 address, the tunnels' end: the DUT's in a BR
        # role, the one the right port plays in a CE role.
        "endpoint_ipv6": Key("", _address(6, optional=True)),
        # CE roles: the IPv6 address of the CE the DUT is (a B4's softwire address, an lwB4's in
        # the binding table, a MAP CE's MAP address); its IPv4 address and ports follow.
        "ce_ipv6": Key("", _address(6, optional=True)),
        # MAP-E / MAP-T Basic Mapping Rule (RFC 7597 §5) and MAP-T's Default Mapping Rule prefix.
        "rule_ipv6_prefix": Key("", ipv4aas_prefix(6)),
        "rule_ipv4_prefix": Key("", ipv4aas_prefix(4)),
        "ea_bits": Key(16, integer(0, 48)),
        "psid_offset": Key(6, integer(0, 15)),
        "dmr": Key("", ipv4aas_prefix(6)),
        # lw4o6: the binding table file (CSV, docs/ipv4aas.md).
        "binding_table": Key("", string),
        # DS-Lite BR role: B4 i has left.ipv6 + i and the private address left.ipv4 (shared).
        # 464XLAT: the PLAT's RFC 6052 prefix (checked against the CLAT set-up's addresses).
        "pref64": Key("64:ff9b::/96", ipv4aas_prefix(6)),
    },
    # The DUT: a description for the report, and hooks run at defined points (xlatperf/measure/hooks.py).
    # Hook commands are templates (xlatperf/config/templates.py): {section.key}, {dut.NAME}.
    # DNS traffic (docs/dns.md): the trial's frames are DNS queries from the sending side of
    # traffic.direction, answered by the other side's authoritative server (dns.authoritative)
    # directly or through any DUT, or by a DUT's resolver (dns.server: RFC 8219 §9's DNS64).
    "dns": {
        "enabled": Key(False, boolean),
        "server": Key("", dns_server),          # "" = the tester's other side; else the DUT's resolver
        "authoritative": Key(True, boolean),    # the other side answers queries for the zone
        "zone": Key("dns64perf.test", dns_zone),
        # The names the queries ask: xlatperf's (the records a function of the name, a fresh
        # nonce each trial) or dns64perf++'s (a-b-c-d.<zone>, A = a.b.c.d, no AAAA: the zone any
        # authoritative server can serve, e.g. BIND's $GENERATE), in a_records (docs/dns.md).
        "names": Key("xlatperf", choice("xlatperf", "dns64perf")),
        "qtype": Key("AAAA", choice("AAAA", "A")),
        "edns": Key(True, boolean),             # EDNS(0) OPT record in the queries (RFC 6891)
        # The RFC 6052 prefix a DNS64's synthesized AAAA must use (RFC 8219 §9: the answer's check).
        # A network-specific prefix by default: the Well-Known Prefix MUST NOT represent the
        # non-global a_records (RFC 6052 §3.1), so a strict DNS64 would not synthesize them.
        "synthesis": Key("2001:db8:64::/96", rfc6052_prefix),
        # RFC 6147 §5.1.4: AAAA records in these prefixes count as none, so a DNS64 synthesizes
        # for their names (it SHOULD exclude ::ffff/96 by default). With dns.server only.
        "exclude": Key(["::ffff:0:0/96"], prefix_list(6)),
        # The IPv4 addresses the DNS64 synthesizes from (BIND's `mapped`; [] = every one): a
        # name with only an A record outside them rightly gets NODATA. With dns.server only.
        "mapped": Key([], prefix_list(4)),
        "timeout": Key(1.0, number(0, 60, low_open=True)),   # RFC 8219 §9.2: a later reply is none
        "aaaa_share": Key(0.0, number(0, 1)),   # names with a AAAA record of their own (§9.2's grid)
        # Queries that ask a name again (§9.2's grid: cache hits), REPEAT_TIMEOUTS x timeout after
        # its first query (config/dns.py).
        "cache_share": Key(0.0, number(0, 1)),
        # The names asked again are asked a second after their records expired (the grid's third
        # axis): a correct DNS64 asks the authoritative side again (RFC 2181 §8: an expired
        # record is not served), which checks.dns_upstream counts; needs short TTLs.
        "cache_expired": Key(False, boolean),
        "ttl": Key(3600, integer(0, 2**31 - 1)),   # of the A and AAAA records the authoritative side serves
        # Its zone's SOA, served with NODATA: the record's own TTL and its MINIMUM field, each
        # apart from the others so that an answer's TTL tells which one a resolver took; a
        # NODATA answer lives min(soa_ttl, soa_minimum) (RFC 2308 §3), a synthesis at most that
        # and the A record's ttl (RFC 6147 §5.1.7).
        "soa_ttl": Key(300, integer(0, 2**31 - 1)),
        "soa_minimum": Key(900, integer(0, 2**31 - 1)),
        "a_records": Key("198.18.0.0/15", records_prefix(4, range(8, 33))),
        "aaaa_records": Key("2001:db8::/96", records_prefix(6, range(96, 97))),
        # Consecutive queries leave from consecutive source ports from traffic.src_port (seed 003
        # used 64,000: a resolver sees many clients); more where rate x timeout needs them.
        "ports": Key(1000, integer(1, 65536)),
        "repeat": Key(20, integer(1)),   # dns64's repetitions: RFC 8219 §9.2, at least 20
    },
    "dut": {
        "description": Key("", string),
        "ssh": Key("", string),               # "user@host": hooks run as `ssh HOST CMD`
        "before_point": Key("", string),      # before each measurement (a campaign point)
        "before_repetition": Key("", string),
        "before_trial": Key("", string),      # before every trial (stateful: before phase 1)
        "during_trial": Key("", string),      # during every trial, during_trial_at s into it
        "during_trial_at": Key(0.0, number(0)),
        "wait_until": Key("", string),        # then repeated until it exits 0
        "counters": Key("", string),          # after every trial: its key=value lines recorded
        "after_trial": Key("", string),
        "after_repetition": Key("", string),
        "after_point": Key("", string),
        "teardown": Key("", string),          # the timed connection table deletion
        "timeout": Key(60.0, number(0, low_open=True)),
        # How much the DUT decrements the TTL/hop limit (checks.ttl): "auto" = 1, 2 for a dual
        # DUT (frames/kinds dut_hops).
        "hops": Key("auto", hops),
        # ... and the native IPv6 background frames, which a translator's DUT routes on another
        # path (RFC 8219 §5.3): "auto" = 1, 2 for a dual DUT.
        "background_hops": Key("auto", hops),
        # A dual DUT's link between its CE and its BR (ipv4aas.role = "dual"), which carries the
        # frames encapsulated or translated (RFC 8219 §5.1): its speed ("" = the tester's ports').
        "middle_link_speed": Key("", speed("the tester ports' speed")),
        # DUT variables: any other [dut] key (dut.cores = 4), for hook templates and reports;
        # the tester does not use them. Kept here as a table.
        "variables": Key({}, dut_variables),
    },
    "output": {
        "repeat": Key(1, integer(1)),
        # Adaptive repetitions (docs/campaigns.md): 0 = always `repeat` repetitions; else at
        # least `repeat` and at most `repeat_max`, stopping once the distribution-free
        # confidence interval of the median is narrower than repeat_tolerance x |median|.
        "repeat_max": Key(0, integer(0)),
        "repeat_tolerance": Key(0.01, number(0, low_open=True)),
        "repeat_confidence": Key(0.95, number(0.5, 1, low_open=True, high_open=True)),
    },
}


def _defaults() -> dict:
    return {section: {key: copy.deepcopy(spec.default) for key, spec in keys.items()}
            for section, keys in SCHEMA.items()}


def default_config() -> ConfigBase:
    """The effective configuration when the file is empty."""
    return validate({})


# --------------------------------------------------------------------------------------------
# Loading, overriding, validating
# --------------------------------------------------------------------------------------------

# [dut] is open: a key that is not one of its settings is a DUT variable (dut.cores = 4), kept
# in dut.variables, for hook templates and reports (docs/campaigns.md, "DUT hooks"). The check
# that every variable is used by a hook (_check_hooks) catches a misspelt hook key.
VARIABLE_SECTION = "dut"


def is_variable(section: str, key: str) -> bool:
    """Whether section.key names a DUT variable (not a setting)."""
    return section == VARIABLE_SECTION and key not in SCHEMA[section] and \
        bool(VARIABLE_NAME.match(key))


def is_key(dotted: str) -> bool:
    """Whether `dotted` may be assigned: a configuration key or a DUT variable."""
    section, _, key = dotted.partition(".")
    return section in SCHEMA and (key in SCHEMA[section] or is_variable(section, key))


def _split_key(dotted: str) -> tuple[str, str]:
    section, _, key = dotted.partition(".")
    if section not in SCHEMA:
        raise ConfigError(f"{dotted}: unknown section [{section}] (sections: {', '.join(SCHEMA)})")
    if key not in SCHEMA[section] and not is_variable(section, key):
        raise ConfigError(f"{dotted}: unknown key in [{section}] "
                          f"(keys: {', '.join(SCHEMA[section])})")
    return section, key


def parse_override_value(text: str, section: str, key: str):
    """A --set value is parsed as TOML (10, 1.5, true, [1, 2], "x"), falling back to the text
    itself; for keys that take strings the text is always kept (so lcores=0 stays "0")."""
    try:
        document = tomllib.loads(f"value = {text}")
        parsed = document["value"] if len(document) == 1 else text
    except tomllib.TOMLDecodeError:
        parsed = text
    if key in SCHEMA[section] and isinstance(SCHEMA[section][key].default, str) and \
            not isinstance(parsed, str) and not _accepts(SCHEMA[section][key], parsed):
        return text
    return parsed


def _accepts(spec: Key, value) -> bool:
    """Whether a key takes `value` as it is (dut.hops = 2 besides "auto")."""
    try:
        spec.check(value)
    except ValueError:
        return False
    return True


def apply_override(raw: dict, assignment: str) -> None:
    """Apply one `section.key=value` assignment to a raw (unvalidated) config dict."""
    dotted, sep, text = assignment.partition("=")
    dotted = dotted.strip()
    if not sep or "." not in dotted:
        raise ConfigError(f"--set {assignment}: expected SECTION.KEY=VALUE, e.g. trial.duration=10")
    section, key = _split_key(dotted)
    raw.setdefault(section, {})[key] = parse_override_value(text.strip(), section, key)


def load_config(path: str | None, overrides: Iterable[str] = ()) -> ConfigBase:
    """Read a TOML file (None: defaults only), apply --set overrides, validate.

    Returns the effective configuration, a typed read-only Config (xlatperf/config/views.py).
    """
    raw: dict = read_toml(path, "configuration file") if path is not None else {}
    for assignment in overrides:
        apply_override(raw, assignment)
    return validate(raw)


def validate(raw: dict) -> ConfigBase:
    """Check every key of a raw config dict against the schema, fill in defaults, then run the
    checks that involve several keys. Returns the effective configuration as a Config."""
    config = partial_config(raw)
    _cross_check(config)
    return config


def partial_config(raw: dict) -> ConfigBase:
    """The defaults with every key of `raw` checked, but not the rules that involve several
    keys: for reasoning about a configuration still being assembled (the siitperf import)."""
    checked = _defaults()
    for section, values in raw.items():
        if section not in SCHEMA:
            raise ConfigError(f"[{section}]: unknown section (sections: {', '.join(SCHEMA)})")
        if not isinstance(values, dict):
            raise ConfigError(f"{section} = {show_value(values)}: must be a table [{section}]")
        variables = {}
        for key, value in values.items():
            _split_key(f"{section}.{key}")
            try:
                if is_variable(section, key):
                    variables[key] = dut_variable(value)
                else:
                    checked[section][key] = SCHEMA[section][key].check(value)
            except ValueError as exc:
                raise key_error(f"{section}.{key}", value, str(exc)) from None
        if variables:
            both = sorted(set(variables) & set(checked[section]["variables"]))
            if both:
                raise key_error(f"{section}.{both[0]}", variables[both[0]],
                                f"is set twice: also in {section}.variables")
            checked[section]["variables"] = {**checked[section]["variables"], **variables}
    return make_config(Config, checked)


def _cross_check(config: ConfigBase) -> None:
    traffic = config.traffic
    check_ipv4aas(config)  # first: the traffic kind, and so the frames, depend on it

    tester = config.tester
    if not tester.ssh:
        for key in ("ssh_port", "ssh_identity", "ssh_options"):
            if getattr(tester, key):
                raise key_error(f"tester.{key}", getattr(tester, key),
                                'takes effect only with tester.ssh = "[user@]host" (the engine '
                                'on another host); remove it or set tester.ssh')

    output = config.output
    if output.repeat_max and output.repeat_max < output.repeat:
        raise key_error("output.repeat_max", output.repeat_max,
                     f"must be 0 (a fixed number of repetitions) or at least output.repeat = "
                     f"{output.repeat} (the minimum)")

    bursts = config.back_to_back
    if bursts.throughput and bursts.throughput_from:
        raise key_error("back_to_back.throughput_from", bursts.throughput_from,
                        f'must be "" when back_to_back.throughput = {bursts.throughput} is set '
                        "(one source for the DUT's throughput)")

    throughput = config.throughput
    if throughput.mode == "mlrsearch":
        if not throughput.preset and not throughput.goals:
            raise key_error("throughput.preset", "", "must name a preset (rfc2544, ndr-pdr) when "
                         "throughput.goals is empty: MLRsearch needs at least one goal")
        if throughput.loss_tolerance:
            raise key_error("throughput.loss_tolerance", throughput.loss_tolerance,
                         "must be 0 with mode = \"mlrsearch\" (each goal has its own loss_ratio)")
        check_frame_timeouts(config, SCHEMA["trial"]["frame_timeout"].check)

    if traffic.mix_m > traffic.mix_n:
        raise key_error("traffic.mix_m", traffic.mix_m,
                     f"must be an integer in 1..{traffic.mix_n} (1 <= mix_m <= mix_n)")

    # Frame size rule of docs/config.md (frames/stack.py): frame_size names the IPv6 frame
    # whenever IPv6 frames are part of the trial (IPv4 frames are then 20 bytes shorter).
    low = min_frame_size(config)
    if traffic.frame_size < low and not traffic.imix:
        raise key_error("traffic.frame_size", traffic.frame_size,
                     f"must be an integer in {low}..{MAX_FRAME_SIZE} when the trial "
                     f"carries IPv6 frames (it names the IPv6 frame size; IPv4 frames are 20 bytes "
                     f"shorter, so {low} gives 64-byte IPv4 frames)")

    if traffic.imix:
        _check_imix(config)

    # Every address a frame is sent with must be set.
    needed: list[tuple[str, str]] = []
    for direction in active_directions(config):
        source, destination = foreground_addresses(config, direction)
        why = kind_of(config).address_use(config, direction)
        needed += [(source, why), (destination, why)]
    if has_background(config):
        why = "background traffic (mix_m < mix_n) is native IPv6 between left.ipv6 and right.ipv6"
        needed += [("left.ipv6", why), ("right.ipv6", why)]
    for dotted, why in needed:
        if lookup(config, dotted) == "":
            version = dotted[-1]
            raise key_error(dotted, "", f"must be an IPv{version} address: {why}")

    for side in ("left", "right"):
        if parse_port(config.side(side).port).kind == "af_xdp" and largest_frame(config) > AF_XDP_MAX_FRAME:
            raise key_error("traffic.frame_size", traffic.frame_size,
                            f"must make frames of at most {AF_XDP_MAX_FRAME} bytes on the wire (VLAN tags "
                            f"included; here {largest_frame(config)}) with {side}.port = "
                            f'"{config.side(side).port}": DPDK\'s AF_XDP driver receives no frame larger '
                            "than one umem chunk; use af_packet or a PCI port for jumbo frames")
        if config.side(side).vlan_outer and not config.side(side).vlan:
            raise key_error(f"{side}.vlan_outer", config.side(side).vlan_outer,
                            f"needs {side}.vlan (the inner C-tag) too: QinQ is an outer S-tag around "
                            f"a C-tag; for one tag set {side}.vlan alone")

    if config.dut.middle_link_speed and not dual_dut(config):
        raise key_error("dut.middle_link_speed", config.dut.middle_link_speed,
                        'takes effect only with ipv4aas.role = "dual" (a CE and a BR in line, RFC 8219 '
                        "§4.2 Figure 2: the link between them); remove it")

    for key in ("hops", "background_hops"):
        hops = getattr(config.dut, key)
        if hops != "auto" and hops >= SENT_TTL:
            raise key_error(f"dut.{key}", hops, f"must be at most {SENT_TTL - 1}: the test frames are "
                            f"sent with TTL/hop limit {SENT_TTL} (RFC 2544 App. C.2.6.4) and must arrive "
                            "with at least 1")

    _check_variation(config)
    _check_port_order(config)
    _check_hooks(config)
    if config.stateful.enabled:
        check_stateful(config)
    check_dns(config)


# The [dut] keys that are commands (templates, xlatperf/config/templates.py), in the order a
# measurement runs them (xlatperf/measure/hooks.py).
HOOK_KEYS = ("before_point", "before_repetition", "before_trial", "wait_until", "during_trial",
             "counters", "after_trial", "after_repetition", "after_point", "teardown")


def template_value(config, name: str):
    """The value of a hook placeholder: a configuration key or a DUT variable {dut.NAME};
    KeyError otherwise."""
    section, _, key = name.partition(".")
    if section == VARIABLE_SECTION and key in config.dut.variables:
        return config.dut.variables[key]
    if section in SCHEMA and key in SCHEMA[section] and (section, key) != ("dut", "variables"):
        return config.value(name)
    raise KeyError(name)


def _check_hooks(config) -> None:
    """Every placeholder of every hook command names a key or a DUT variable, and every DUT
    variable is used by a hook: before anything runs, not when the hook's turn comes."""
    variables = config.dut.variables
    used: set[str] = set()
    for hook in HOOK_KEYS:
        command = getattr(config.dut, hook)
        try:
            names = placeholders(command)
        except TemplateError as exc:
            raise key_error(f"dut.{hook}", command, str(exc)) from None
        for name in names:
            try:
                template_value(config, name)
            except KeyError:
                known = ", ".join(f"{{dut.{v}}}" for v in variables) or "none"
                raise key_error(f"dut.{hook}", command,
                                f"placeholder {{{name}}} is neither a configuration key nor a "
                                f"DUT variable (DUT variables: {known}; set one as dut.NAME, "
                                f"e.g. in a campaign's [axes]; {BRACES_HINT})") from None
            section, _, key = name.partition(".")
            if section == VARIABLE_SECTION and key in variables:
                used.add(key)
    settings = ", ".join(k for k in SCHEMA["dut"] if k != "variables")
    for name in variables:
        if name not in used:
            raise key_error(f"dut.{name}", variables[name],
                            f"is not a [dut] setting ({settings}); as a DUT variable it must "
                            f"be used by a hook command as {{dut.{name}}}")


def _check_imix(config) -> None:
    """The IMIX sizes follow frame_size's range rule; the frame pattern (IMIX period mixed with
    the foreground/background period) must fit the engine's; stateful phase 1 enumerates one
    stream of frames."""
    traffic = config.traffic
    low = min_frame_size(config)
    for size in sorted(set(size_period(config))):
        if not low <= size <= MAX_FRAME_SIZE:
            raise key_error("traffic.imix", traffic.imix,
                            f"has a frame size of {size} bytes; sizes must be in {low}..{MAX_FRAME_SIZE}"
                            + (" when the trial carries IPv6 frames (they name the IPv6 frame)"
                               if low == MIN_FRAME_SIZE[6] else ""))
    n, m = (traffic.mix_n, traffic.mix_m) if has_background(config) else (1, 1)
    period = mixed_length(len(size_period(config)), n, m)
    if period > MAX_PATTERN:
        raise key_error("traffic.imix", traffic.imix,
                        f"repeats after {len(size_period(config))} frames and the mix {m}/{n}: "
                        f"foreground and background frames each through the IMIX's order repeat "
                        f"after {period}, more than the engine's {MAX_PATTERN} frames")
    # The test tag's stream id (1 byte) numbers each direction's streams on each TX queue
    # (docs/protocol.md "Queues and workers"): a stream per size and kind, at least 2.
    streams = len(set(size_period(config))) * (2 if has_background(config) else 1)
    ids = stream_ids_needed(len(active_directions(config)), streams, config.tester.queues)
    if ids > STREAM_IDS:
        raise key_error("traffic.imix", traffic.imix,
                        f"makes {streams} streams per direction; with {len(active_directions(config))} "
                        f"direction(s) and tester.queues = {config.tester.queues} they need {ids} stream "
                        "ids, the test tag has 256: use fewer sizes or queues")
    if config.stateful.enabled:
        raise key_error("traffic.imix", traffic.imix,
                        'must be "" with stateful.enabled = true (RFC 9693 phase 1 enumerates one '
                        "stream of frames)")


def _check_variation(config: dict) -> None:
    for direction in DIRECTIONS:
        for field in ("src", "dst"):
            key = f"ports.{direction}_{field}"
            low, high = (getattr(config.ports, f"{direction}_{field}_{end}") for end in ("min", "max"))
            if getattr(config.ports, f"{direction}_{field}") != "fixed" and low > high:
                raise key_error(f"{key}_min", low, f"must be at most {key}_max = {high}")
    addresses = config.addresses
    for side in ("left", "right"):
        if getattr(addresses, side) != "fixed" and getattr(addresses, f"{side}_min") > getattr(addresses, f"{side}_max"):
            raise key_error(f"addresses.{side}_min", getattr(addresses, f"{side}_min"),
                         f"must be at most addresses.{side}_max = {getattr(addresses, f'{side}_max')}")
        nets = getattr(addresses, f"{side}_nets")
        if nets == 1:
            continue
        # The network byte: IPv4 bits 16-23 (byte 2), IPv6 bits 56-63 (byte 7). It collides
        # with the 16-bit variation when that covers the same byte (IPv4 offset 2).
        if getattr(addresses, side) != "fixed" and getattr(addresses, f"{side}_offset_ipv4") == 2 and \
                _side_uses_version(config, side, 4):
            raise key_error(f"addresses.{side}_nets", nets,
                         f"must be 1 while addresses.{side} varies bytes 2-3 of IPv4 addresses "
                         f"(addresses.{side}_offset_ipv4 = 2 covers the network bits 16-23); "
                         f"set addresses.{side}_offset_ipv4 = 0 or addresses.{side} = \"fixed\"")
        for version, byte in ((4, 2), (6, 7)):
            for key in _destination_keys(config, side, version):
                base = ipaddress.ip_address(lookup(config, key)).packed[byte]
                if base + nets - 1 > 255:
                    raise key_error(f"addresses.{side}_nets", nets,
                                 f"must be at most {256 - base}: {key} = {lookup(config, key)} "
                                 f"has {base} in its network byte, and networks {base}.."
                                 f"{base + nets - 1} must fit in 0..255")


def _side_uses_version(config: dict, side: str, version: int) -> bool:
    return bool(_destination_keys(config, side, version))


def _destination_keys(config: dict, side: str, version: int) -> list[str]:
    """Config keys of the addresses that frames are sent *to* on `side` with IP `version`."""
    keys = []
    for direction in active_directions(config):
        tx, rx = direction_sides(direction)
        if rx != side:
            continue
        if config.side(tx).ip_version == version:
            keys.append(foreground_addresses(config, direction)[1])
        if version == 6 and has_background(config):
            keys.append(f"{side}.ipv6")
    return [k for k in keys if lookup(config, k)]


def _check_port_order(config: dict) -> None:
    """Two ports, one per side (the engine numbers them by side, whatever order DPDK probes
    them in); PCI ports on hugepages."""
    left, right = parse_port(config.left.port), parse_port(config.right.port)
    if "ring" in (left.kind, right.kind) and left != right:
        raise key_error("right.port", str(right), f'must be "{left}" too: ring ports come as a pair '
                     "wired to each other, one end on each side")
    if (left.kind, left.name) == (right.kind, right.name) and left.kind not in ("null", "ring"):
        raise key_error("right.port", str(right), "must differ from left.port (one device cannot be "
                     "both tester ports)")
    if config.tester.hugepages == "no" and "pci" in (left.kind, right.kind):
        raise key_error("tester.hugepages", "no", 'must be "auto" or "yes" with a PCI port (its NIC '
                        "reaches the mbufs by DMA, which --no-huge memory cannot give it)")


# The typed view of this schema: validate() returns one, Config.changed() validates again.
Config = config_class(SCHEMA, validate)
