# SPDX-License-Identifier: BSD-3-Clause
"""The configuration's value checkers (docs/config.md): each takes the raw value and returns the
normalised one, or raises ValueError whose text says what is allowed ("must be an integer in
64..9216"). The key table (schema.py) names one per key."""

import ipaddress
import json
import re
from typing import Any, Callable

from ..util.rates import parse_speed

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


def address(version: int, optional: bool) -> Checker:
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
