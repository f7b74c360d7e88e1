# SPDX-License-Identifier: BSD-3-Clause
"""Import a siitperf configuration (siitperf.conf) as an xlatperf configuration.

    from xlatperf.config.siitperf import import_siitperf
    result = import_siitperf("siitperf.conf", "lab.toml", cmdline="84 1000000 60 2000 2 2")
    for note in result.notes: print(note)

siitperf.conf is one `Parameter value` per line, `#` starts a comment. Every parameter that
siitperf's README and its configuration reader know is recognised; a parameter name it does
not know, or a value outside siitperf's own range, is an error naming the line. Parameters
without an xlatperf equivalent (CPU placement, memory channels, promiscuous mode) are reported
in `notes` and as comments in the written file, which is always a valid xlatperf
configuration. Stateful tests (Stateful 1|2, Responder-tuples, Enumerate-ports, Enumerate-ips,
and N M R T D from the command line) become the [stateful] section (docs/stateful.md); a
combination xlatperf cannot run the same way (siitperf's Table I rules) is an error naming the
parameters. docs/siitperf.md maps siitperf's programs, scripts and command-line parameters to
xlatperf commands.
"""

import copy
import ipaddress
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..util.errors import ConfigError
from ..util.files import toml_value
from ..frames.kinds import trial_frames
from ..frames.stack import IPV6
from .schema import SCHEMA
from .loading import load_config, partial_config, validate
from .stateful import enumeration, foreground_frames

VARY = {0: "fixed", 1: "increasing", 2: "decreasing", 3: "random"}  # siitperf's 0..3


def _int(low: int, high: int, base: int = 10):
    def parse(text: str) -> int:
        try:
            value = int(text, 0 if base == 0 else 10)
        except ValueError:
            raise ValueError(f"must be an integer in {low}..{high}") from None
        if not low <= value <= high:
            raise ValueError(f"must be an integer in {low}..{high}")
        return value
    return parse


def _ip(version: int):
    cls = ipaddress.IPv4Address if version == 4 else ipaddress.IPv6Address

    def parse(text: str) -> str:
        try:
            address = cls(text)
        except ValueError:
            raise ValueError(f"must be an IPv{version} address") from None
        return "" if address.is_unspecified else str(address)   # 0.0.0.0 / :: = unused
    return parse


_MAC = re.compile(r"^[0-9a-fA-F]{1,2}(:[0-9a-fA-F]{1,2}){5}$")


def _mac(text: str) -> str:
    if not _MAC.match(text):
        raise ValueError("must be a MAC address like a0:36:9f:c5:fa:1c")
    return ":".join(f"{int(part, 16):02x}" for part in text.split(":"))


# Every parameter siitperf reads (its README and Throughput::readConfigFile), with its range.
PARAMETERS = {
    "IP-L-Vers": _int(4, 6), "IP-R-Vers": _int(4, 6),
    "IPv6-L-Real": _ip(6), "IPv6-L-Virt": _ip(6), "IPv6-R-Real": _ip(6), "IPv6-R-Virt": _ip(6),
    "IPv4-L-Real": _ip(4), "IPv4-L-Virt": _ip(4), "IPv4-R-Real": _ip(4), "IPv4-R-Virt": _ip(4),
    "MAC-L-Tester": _mac, "MAC-R-Tester": _mac, "MAC-L-DUT": _mac, "MAC-R-DUT": _mac,
    "Num-L-Nets": _int(1, 256), "Num-R-Nets": _int(1, 256),
    "Forward": _int(0, 1), "Reverse": _int(0, 1), "Promisc": _int(0, 1),
    "CPU-L-Send": _int(0, 127), "CPU-R-Recv": _int(0, 127),
    "CPU-R-Send": _int(0, 127), "CPU-L-Recv": _int(0, 127),
    "MEM-Channels": _int(1, 255),
    "Fwd-var-sport": _int(0, 3), "Fwd-var-dport": _int(0, 3),
    "Rev-var-sport": _int(0, 3), "Rev-var-dport": _int(0, 3),
    "Fwd-sport-min": _int(0, 65535), "Fwd-sport-max": _int(0, 65535),
    "Fwd-dport-min": _int(0, 65535), "Fwd-dport-max": _int(0, 65535),
    "Rev-sport-min": _int(0, 65535), "Rev-sport-max": _int(0, 65535),
    "Rev-dport-min": _int(0, 65535), "Rev-dport-max": _int(0, 65535),
    "IP-L-var": _int(0, 3), "IP-R-var": _int(0, 3),
    "IP-L-min": _int(0, 65535, 0), "IP-L-max": _int(0, 65535, 0),
    "IP-R-min": _int(0, 65535, 0), "IP-R-max": _int(0, 65535, 0),
    "IPv4-L-offset": _int(1, 2), "IPv4-R-offset": _int(1, 2),
    "IPv6-L-offset": _int(6, 14), "IPv6-R-offset": _int(6, 14),
    "Stateful": _int(0, 2), "Responder-tuples": _int(0, 3),
    "Enumerate-ports": _int(0, 3), "Enumerate-ips": _int(0, 3),
}
# siitperf's README example writes Responder-ports (its older name); the reader takes
# Responder-tuples.
ALIASES = {"Responder-ports": "Responder-tuples"}
# IP-L-Vers must be 4 or 6, not 5.
_VERSIONS = ("IP-L-Vers", "IP-R-Vers")


@dataclass
class ImportResult:
    config: dict                                   # {section: {key: value}} as written
    notes: list[str] = field(default_factory=list)
    sources: dict = field(default_factory=dict)    # "section.key" -> siitperf parameter(s)

    def put(self, dotted: str, value, *sources: str) -> None:
        """Set an xlatperf key and remember the siitperf parameter(s) it comes from."""
        section, key = dotted.split(".")
        self.config.setdefault(section, {})[key] = value
        self.sources[dotted] = ", ".join(sources)

    def get(self, dotted: str, default=None):
        section, key = dotted.split(".")
        return self.config.get(section, {}).get(key, default)


def parse_siitperf(text: str, name: str = "siitperf.conf") -> dict:
    """{parameter: value} of a siitperf.conf; ConfigError naming the line on any problem."""
    values: dict = {}
    known = {**PARAMETERS, **ALIASES}
    for number, line in enumerate(text.splitlines(), 1):
        content = line.split("#", 1)[0].strip()
        if not content:
            continue
        parts = content.split()
        parameter = parts[0]
        where = f"{name} line {number}"
        if parameter not in known:
            close = [p for p in PARAMETERS if p.lower() == parameter.lower()]
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ConfigError(f"{where}: unknown siitperf parameter {parameter!r}{hint}")
        if len(parts) < 2:
            raise ConfigError(f"{where}: {parameter} has no value")
        try:
            value = PARAMETERS[ALIASES.get(parameter, parameter)](parts[1])
            if parameter in _VERSIONS and value not in (4, 6):
                raise ValueError("must be 4 or 6")
        except ValueError as exc:
            raise ConfigError(f"{where}: {parameter} {parts[1]}: {exc}") from None
        values[ALIASES.get(parameter, parameter)] = value
    return values


SIDES = (("left", "L"), ("right", "R"))
DIRECTIONS = (("forward", "Fwd"), ("reverse", "Rev"))


def _direct_parameters() -> dict[str, str]:
    """siitperf parameters whose value is an xlatperf key's value unchanged, in the order the
    converted file lists them."""
    table = {}
    for side, letter in SIDES:
        table[f"IP-{letter}-Vers"] = f"{side}.ip_version"
        for version in (4, 6):
            table[f"IPv{version}-{letter}-Real"] = f"{side}.ipv{version}"
            table[f"IPv{version}-{letter}-Virt"] = f"{side}.virtual_ipv{version}"
        table[f"MAC-{letter}-Tester"] = f"{side}.mac"
        table[f"MAC-{letter}-DUT"] = f"{side}.dut_mac"
    return table


DIRECT = _direct_parameters()


def convert(values: dict) -> ImportResult:
    """Map siitperf parameters to xlatperf configuration keys (docs/siitperf.md)."""
    result = ImportResult({})
    notes = result.notes

    # Netns and ports: siitperf drives DPDK ports 0 and 1 directly.
    notes.append("siitperf uses DPDK ports 0 (left) and 1 (right): set left.port and right.port "
                 "(e.g. \"pci:0000:03:00.0\"), and tester.netns = \"\" outside the lab")
    for parameter, key in DIRECT.items():
        if parameter in values:
            result.put(key, values[parameter], parameter)

    stateful = values.get("Stateful", 0)
    forward, reverse = values.get("Forward", 1), values.get("Reverse", 1)
    if stateful and not forward and not reverse:
        # siitperf's stateful tests may have no phase-2 direction (phase 1 only); the
        # Initiator's is the one its phase-1 frames take.
        forward, reverse = (1, 0) if stateful == 1 else (0, 1)
        notes.append("Forward 0 and Reverse 0 (phase 1 only): traffic.direction is the "
                     f"Initiator's ({'forward' if stateful == 1 else 'reverse'}); "
                     "connection-rate, teardown-rate and table-capacity do not use it")
    if not forward and not reverse:
        raise ConfigError("Forward 0 and Reverse 0: no active direction (siitperf requires one "
                          "for stateless tests)")
    direction = "both" if forward and reverse else "forward" if forward else "reverse"
    result.put("traffic.direction", direction, "Forward", "Reverse")

    if "Promisc" in values:
        notes.append("Promisc: no xlatperf setting (the engine recognises test frames by their "
                     "tag, whatever their destination MAC); ignored")
    cpus = [values[p] for p in ("CPU-L-Send", "CPU-R-Recv", "CPU-R-Send", "CPU-L-Recv")
            if p in values]
    if cpus:
        cores = [0] + [c for i, c in enumerate(cpus) if c != 0 and c not in cpus[:i]]
        result.put("tester.lcores", ",".join(str(c) for c in cores), "CPU-L-Send",
                   "CPU-R-Recv", "CPU-R-Send", "CPU-L-Recv")
        notes.append(f"CPU-*-Send/Recv: lcores {','.join(str(c) for c in cores)} (0 is the main "
                     "lcore as in siitperf); xlatperf assigns senders and receivers to the "
                     "worker lcores itself")
    if "MEM-Channels" in values:
        notes.append("MEM-Channels: not needed by xlatperf (DPDK detects the memory channels); "
                     "ignored")

    # RFC 4814 port variation.
    for direction_name, prefix in DIRECTIONS:
        for end, short in (("src", "sport"), ("dst", "dport")):
            mode = VARY[values.get(f"{prefix}-var-{short}", 0)]
            bounds = {b: values.get(f"{prefix}-{short}-{b}") for b in ("min", "max")}
            if mode == "fixed" and all(v is None for v in bounds.values()):
                continue
            key = f"ports.{direction_name}_{end}"
            result.put(key, mode, f"{prefix}-var-{short}")
            for b, value in bounds.items():
                if value is not None:
                    result.put(f"{key}_{b}", value, f"{prefix}-{short}-{b}")
            if mode == "fixed":
                notes.append(f"{prefix}-{short}-min/max given with {prefix}-var-{short} 0: "
                             "the range is kept but the port stays fixed")

    # Multiple IP addresses (draft-lencse-bmwg-multiple-ip-addresses) and destination networks.
    for side, letter in SIDES:
        mode = VARY[values.get(f"IP-{letter}-var", 0)]
        if mode != "fixed":
            result.put(f"addresses.{side}", mode, f"IP-{letter}-var")
            for b in ("min", "max"):
                if f"IP-{letter}-{b}" in values:
                    result.put(f"addresses.{side}_{b}", values[f"IP-{letter}-{b}"],
                               f"IP-{letter}-{b}")
            _offsets(values, side, letter, result)
        nets = values.get(f"Num-{letter}-Nets", 1)
        if nets > 1:
            # siitperf's Num-L-Nets counts the networks frames are sent *to* on the left.
            result.put(f"addresses.{side}_nets", nets, f"Num-{letter}-Nets")
    _stateful(values, result)
    return result


# Why an offset has no xlatperf equivalent, from the value and the key's own complaint.
_OFFSET_REASONS = {
    4: lambda value, complaint: (f"varying IPv4 bytes {value}-{value + 1} is not possible in "
                                 f"xlatperf ({complaint})"),
    6: lambda value, complaint: complaint,
}


def _offsets(values: dict, side: str, letter: str, result: ImportResult) -> None:
    """siitperf's offsets: IPv4 1 (bytes 1-2) or 2 (bytes 2-3); IPv6 6..14 (first byte)."""
    for version, reason in _OFFSET_REASONS.items():
        parameter, key = f"IPv{version}-{letter}-offset", f"{side}_offset_ipv{version}"
        value = values.get(parameter)
        if value is None:
            continue
        allowed = SCHEMA["addresses"][key]
        try:
            result.put(f"addresses.{key}", allowed.check(value), parameter)
        except ValueError as exc:
            result.notes.append(f"{parameter} {value}: {reason(value, f'addresses.{key} {exc}')}"
                                f"; kept the default ({allowed.default})")


def _shown(parameters: list[str], values: dict) -> str:
    return " and ".join(f"{p} {values.get(p, 0)}" for p in parameters)


def _stateful(values: dict, result: ImportResult) -> None:
    """Stateful, Responder-tuples, Enumerate-ports and Enumerate-ips -> [stateful]: the roles,
    the phase-2 selection, and the phase-1 enumeration with siitperf's rules (Table I of the
    multiple-IP paper) as far as xlatperf's configuration refuses the same (docs/stateful.md)."""
    stateful = values.get("Stateful", 0)
    ports, ips = values.get("Enumerate-ports", 0), values.get("Enumerate-ips", 0)
    if not stateful:
        for parameter, value in (("Enumerate-ports", ports), ("Enumerate-ips", ips)):
            if value:
                raise ConfigError(f"{parameter} {value} with Stateful 0: enumeration is phase 1 "
                                  "of a stateful test (siitperf refuses it too): set Stateful 1 "
                                  f"or 2, or {parameter} 0")
        if values.get("Responder-tuples"):
            result.notes.append(f"Responder-tuples {values['Responder-tuples']}: only used by "
                                "stateful tests (Stateful 1 or 2); ignored")
        return
    initiator, responder = ("left", "right") if stateful == 1 else ("right", "left")
    prefix, other_prefix = DIRECTIONS[stateful - 1][1], DIRECTIONS[2 - stateful][1]
    result.put("stateful.enabled", True, "Stateful")
    result.put("stateful.initiator", initiator, "Stateful")
    if "Responder-tuples" in values:
        result.put("stateful.selection", VARY[values["Responder-tuples"]], "Responder-tuples")
    else:
        result.notes.append("Responder-tuples not given: stateful.selection keeps xlatperf's "
                            "default \"random\" (RFC 9693's recommendation)")

    port_modes = [f"{prefix}-var-sport", f"{prefix}-var-dport"]
    address_modes = ["IP-L-var", "IP-R-var"]
    varying_ports = [p for p in port_modes if values.get(p)]
    varying_addresses = [p for p in address_modes if values.get(p)]
    if ports and ips and ports != ips:
        raise ConfigError(f"Enumerate-ports {ports} and Enumerate-ips {ips}: must be equal when "
                          "both are non-zero (siitperf Table I; xlatperf enumerates ports and "
                          "addresses together in one stateful.order): allowed Enumerate-ips 0 "
                          f"or {ports}")
    if ports and not varying_ports:
        raise ConfigError(f"Enumerate-ports {ports} with {_shown(port_modes, values)}: xlatperf "
                          "enumerates the Initiator's varying ports only (siitperf would "
                          f"enumerate the {prefix}-sport/dport-min..max ranges although phase 2 "
                          f"keeps the ports fixed): set {' and/or '.join(port_modes)} to 1..3, "
                          "or Enumerate-ports 0")
    if ips and not varying_addresses:
        raise ConfigError(f"Enumerate-ips {ips} with {_shown(address_modes, values)}: "
                          "enumerating addresses needs varying addresses: set IP-L-var and "
                          "IP-R-var to 1..3 (siitperf requires both), or Enumerate-ips 0")
    for name, enumerated, other, others, kind in (
            ("Enumerate-ports", ports, "Enumerate-ips", varying_addresses, "addresses"),
            ("Enumerate-ips", ips, "Enumerate-ports", varying_ports, "ports")):
        if enumerated and others and not values.get(other):
            raise ConfigError(f"{name} {enumerated} with {other} 0 while {_shown(others, values)} "
                              f"vary the {kind}: phase 2 would send {kind} that phase 1 never "
                              f"used (siitperf Table I): set {other} {enumerated} (the same "
                              f"order) or {' and '.join(others)} 0")
    what = {(False, False): "none", (True, False): "ports", (False, True): "addresses",
            (True, True): "both"}[(bool(ports), bool(ips))]
    result.put("stateful.enumerate", what, "Enumerate-ports", "Enumerate-ips")
    if what != "none":
        result.put("stateful.order", VARY[ports or ips], "Enumerate-ports", "Enumerate-ips")
        nets = f"Num-{'R' if initiator == 'left' else 'L'}-Nets"
        if values.get(nets, 1) > 1:
            enumerating = _shown(["Enumerate-ports", "Enumerate-ips"], values)
            raise ConfigError(f"{nets} {values[nets]} with {enumerating}: enumeration needs a "
                              f"single destination network (allowed: {nets} 1)")
    if ports and len(varying_ports) == 1:
        fixed = next(p for p in port_modes if p not in varying_ports)
        result.notes.append(f"Enumerate-ports {ports} with {fixed} 0: siitperf enumerates that "
                            "port's min..max range in phase 1 too, xlatperf keeps it fixed "
                            "(traffic.src_port / traffic.dst_port) and enumerates the varying "
                            "one only")
    responder_modes = [f"{other_prefix}-var-sport", f"{other_prefix}-var-dport"]
    if any(values.get(p) for p in responder_modes):
        result.notes.append(f"{' and '.join(responder_modes)}: the Responder ({responder}) "
                            "takes its ports from the state table in a stateful test; kept "
                            "but not used")


# siitperf-tp's positional arguments (siitperf-lat and -pdv take further ones after them).
@dataclass(frozen=True)
class Argument:
    name: str
    low: int
    high: int | str | None       # str: another argument's value; None: no upper bound
    key: str | None = None       # the xlatperf key it sets (None: a note instead)
    divisor: int | None = None   # the key's value is argument / divisor (a float)
    source: str = ""             # its name in the converted file's comments (default: name)


ARGUMENTS = (
    Argument("ipv6_frame_size", 84, 1538),   # converted by _frame_size()
    Argument("frame_rate", 1, 14880952),
    Argument("duration", 1, 3600, "trial.duration", 1),
    Argument("global_timeout", 0, 60000, "trial.timeout", 1000, "global_timeout (ms)"),
    Argument("n", 2, None, "traffic.mix_n"),
    Argument("m", 0, "n", "traffic.mix_m"),
)
# With Stateful 1 or 2, siitperf-tp takes RFC 9693's phase-1 parameters next.
STATEFUL_ARGUMENTS = (
    Argument("N", 1, 2**32 - 1, "stateful.connections"),
    Argument("M", 1, 2**32 - 1, "stateful.table_size"),
    Argument("R", 1, 14880952, "stateful.rate_phase1"),
    Argument("T", 1, 2000, "stateful.timeout_phase1", 1000, "T (ms)"),
    Argument("D", 1, 100_000_000, "stateful.gap", 1000, "D (ms)"),
)
STATEFUL_KEYS = ", ".join(f"{a.key} ({a.name})" for a in STATEFUL_ARGUMENTS)


def _read_arguments(text: str, parts: list[str], specs) -> dict[str, int]:
    got: dict[str, int] = {}
    for part, spec in zip(parts, specs):
        high = got[spec.high] if isinstance(spec.high, str) else spec.high
        allowed = f"{spec.low}..{'' if high is None else high}"
        try:
            value = int(part)
        except ValueError:
            raise ConfigError(f"--cmdline {text!r}: {spec.name} = {part!r}: must be an integer "
                              f"(siitperf allows {allowed})") from None
        if value < spec.low or (high is not None and value > high):
            raise ConfigError(f"--cmdline: {spec.name} = {value}: siitperf allows {allowed}")
        got[spec.name] = value
    return got


def convert_cmdline(text: str, result: ImportResult) -> int:
    """siitperf-tp/-lat/-pdv arguments: SIZE RATE DURATION TIMEOUT n m, and with Stateful 1|2
    N M R T D next (siitperf's README). Returns SIZE, siitperf's IPv6 frame size, which
    _frame_size() converts once the whole test (versions, mix) is known."""
    parts = text.split()
    stateful = bool(result.get("stateful.enabled"))
    specs = ARGUMENTS + (STATEFUL_ARGUMENTS if stateful else ())
    if len(parts) < len(specs):
        raise ConfigError(f"--cmdline {text!r}: expected at least {len(specs)} values: "
                          + " ".join(spec.name for spec in specs)
                          + (" (a stateful test: siitperf.conf has Stateful "
                             f"{1 if result.get('stateful.initiator') == 'left' else 2})"
                             if stateful else ""))
    got = _read_arguments(text, parts, specs)
    if got["m"] == 0:
        raise ConfigError("--cmdline: m = 0 (no foreground frames) is not a benchmark in xlatperf")
    _check_jumbo_ipv6(got, result)
    if stateful:
        _check_phase1(got)
    for spec in specs:
        if spec.key is not None:
            value = got[spec.name]
            result.put(spec.key, value if spec.divisor is None else value / spec.divisor,
                       spec.source or spec.name)
    rate = got["frame_rate"]
    result.notes.append(f"frame_rate {rate}: a rate is a command option in xlatperf: "
                        f"`xlatperf trial --rate {rate}` (one elementary trial, like siitperf-tp) "
                        "or the search range of `xlatperf throughput`")
    if len(parts) > len(specs):
        result.notes.append(f"further arguments {' '.join(parts[len(specs):])} (siitperf-lat's "
                            "delay/timestamps or siitperf-pdv's frame timeout): not converted")
    return got["ipv6_frame_size"]


def _check_jumbo_ipv6(got: dict, result: ImportResult) -> None:
    """siitperf's own rule: an IPv6 frame size above 1518 only when no IPv6 frame is sent (its
    IPv4 frames are then at most 1518 bytes)."""
    size = got["ipv6_frame_size"]
    if size <= 1518:
        return
    direction = result.get("traffic.direction")
    senders = [side for side, active in (("left", direction in ("both", "forward")),
                                         ("right", direction in ("both", "reverse"))) if active]
    why = [f"{side} sends IPv6" for side in senders if result.get(f"{side}.ip_version") == 6]
    if got["m"] < got["n"]:
        why.append(f"m = {got['m']} < n = {got['n']} sends native IPv6 background frames")
    if why:
        raise ConfigError(f"--cmdline: ipv6_frame_size = {size}: siitperf allows 84..1518 here "
                          f"({', '.join(why)}); 1519..1538 only for pure IPv4 traffic")


def _check_phase1(got: dict) -> None:
    """siitperf's own rules for N M R T D, named as on its command line."""
    n, m, connections, table = got["n"], got["m"], got["N"], got["M"]
    needed = 1000 * connections / got["R"] + got["T"]
    if got["D"] < needed:
        raise ConfigError(f"--cmdline: D = {got['D']}: must be at least 1000·N/R + T = "
                          f"{math.ceil(needed):,} ms (phase 1, N = {connections:,} frames at "
                          f"R = {got['R']:,} fps and its timeout T = {got['T']} ms, must fit in "
                          "D)")
    foreground = foreground_frames(connections, n, m)
    if table > foreground:
        raise ConfigError(f"--cmdline: M = {table:,}: must be at most the {foreground:,} "
                          f"foreground frames of phase 1 (N = {connections:,} with m/n = "
                          f"{m}/{n}): the state table could never fill")


# siitperf's IPv4 frames are always its IPv6 frame size minus this (Throughput::readCmdLine:
# ipv4_frame_size = ipv6_frame_size - 20), whatever the test sends. tests/test_siitperf.py checks
# that it equals the header difference xlatperf's frame size rule uses.
SIITPERF_IPV4_SHORTER = 20
SIITPERF_MIN_FRAME_SIZE = ARGUMENTS[0].low


def _frame_size(result: ImportResult, size: int | None) -> None:
    """traffic.frame_size for siitperf's ipv6_frame_size `size` (None: not given, siitperf's
    minimum). siitperf's size always names the IPv6 frame; xlatperf's names the IPv4 frame
    when the trial carries no IPv6 frame at all (docs/config.md, "Frame size"), so a pure IPv4
    test without background traffic takes size - 20: the frames siitperf sent."""
    known = {section: {key: result.get(f"{section}.{key}", SCHEMA[section][key].default)
                       for key in keys}
             for section, keys in (("left", ["ip_version"]), ("right", ["ip_version"]),
                                   ("traffic", ["mix_n", "mix_m", "direction"]))}
    ipv6 = trial_frames(partial_config(known)).named == IPV6
    given = size is not None
    size = size if given else SIITPERF_MIN_FRAME_SIZE
    frame_size = size if ipv6 else size - SIITPERF_IPV4_SHORTER
    source = "ipv6_frame_size" if given else "not in siitperf.conf"
    if not ipv6:
        source += f" {size} - {SIITPERF_IPV4_SHORTER}"
    result.put("traffic.frame_size", frame_size, source)
    if not given:
        result.notes.append(f"frame size: siitperf's first command-line argument; set to "
                            f"siitperf's minimum here, ipv6_frame_size {size} (traffic.frame_size "
                            f"= {frame_size}; use --cmdline, a campaign axis, or --set "
                            "traffic.frame_size=...)")
    if not ipv6:
        result.notes.append(f"ipv6_frame_size {size}: siitperf sends {frame_size}-byte IPv4 "
                            f"frames (its size names the IPv6 frame, IPv4 frames are "
                            f"{SIITPERF_IPV4_SHORTER} bytes shorter); this test carries no IPv6 "
                            f"frame, so xlatperf's traffic.frame_size names the IPv4 frame: "
                            f"{frame_size}")


def _fit_connections(result: ImportResult) -> None:
    """Without siitperf's N, keep xlatperf's default number of phase-1 frames unless the
    enumerated ranges have fewer combinations (xlatperf refuses more)."""
    result.notes.append("N M R T D: siitperf-tp's stateful command-line arguments are not in "
                        f"siitperf.conf: set {STATEFUL_KEYS} (T and D in seconds, not ms), "
                        "or convert them with --cmdline \"SIZE RATE DURATION TIMEOUT n m N M R "
                        "T D\"")
    if result.get("stateful.enumerate") == "none":
        return
    raw = copy.deepcopy(result.config)
    raw["stateful"]["enabled"] = False   # the rules are checked on the final file
    try:
        combinations = enumeration(validate(raw)).combinations
    except ConfigError:
        return                           # reported when the converted file is loaded
    default = SCHEMA["stateful"]["connections"].default
    if combinations < default:
        result.put("stateful.connections", combinations, "the enumerable combinations")
        result.notes.append(f"stateful.connections = {combinations:,}: every combination of "
                            "the enumerated ranges once (xlatperf's default "
                            f"{default:,} is more than they have)")


def to_toml(result: ImportResult, source: str) -> str:
    lines = [f"# xlatperf configuration converted from {source} by `xlatperf import`.",
             "# Notes from the conversion:"]
    lines += [f"#   - {note}" for note in result.notes]
    order = list(SCHEMA)
    for section in sorted(result.config, key=lambda s: order.index(s) if s in order else 99):
        lines += ["", f"[{section}]"]
        for key, value in result.config[section].items():
            source_names = result.sources.get(f"{section}.{key}")
            comment = f"  # {source_names}" if source_names else ""
            lines.append(f"{key} = {toml_value(value)}{comment}")
    return "\n".join(lines) + "\n"


def import_siitperf(path, output=None, cmdline: str | None = None) -> ImportResult:
    """Convert the siitperf.conf at `path`; write it as TOML to `output` (if given) after
    checking that xlatperf loads it. Raises ConfigError."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror}") from None
    result = convert(parse_siitperf(text, str(path)))
    size = None
    if cmdline:
        size = int(convert_cmdline(cmdline, result))
    _frame_size(result, size)
    if result.get("stateful.enabled") and result.get("stateful.connections") is None:
        _fit_connections(result)
    toml_text = to_toml(result, path.name)
    if output is not None:
        output = Path(output)
        try:
            output.write_text(toml_text, encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"{output}: {exc.strerror}") from None
    try:
        if output is not None:
            load_config(str(output))
        else:
            validate(tomllib.loads(toml_text))
    except ConfigError as exc:
        where = f" (written to {output} for inspection)" if output is not None else ""
        raise ConfigError(f"{path} converts to an invalid xlatperf configuration: {exc}"
                          f"{_origin(result, str(exc))}{where}") from None
    return result


def _origin(result: ImportResult, message: str) -> str:
    """The siitperf parameter(s) behind the key an xlatperf error starts with."""
    key = message.split(" ", 1)[0]
    return f" (from siitperf's {result.sources[key]})" if result.sources.get(key) else ""
