# SPDX-License-Identifier: BSD-3-Clause
"""Import a siitperf configuration (siitperf.conf) as an xlatperf configuration.

    from xlatperf.siitperf import import_siitperf
    result = import_siitperf("siitperf.conf", "lab.toml", cmdline="84 1000000 60 2000 2 2")
    for note in result.notes: print(note)

siitperf.conf is one `Parameter value` per line, `#` starts a comment. Every parameter that
siitperf's README and its configuration reader know is recognised; a parameter name it does
not know, or a value outside siitperf's own range, is an error naming the line. Parameters
without an xlatperf equivalent (CPU placement, memory channels, promiscuous mode, stateful
tests until xlatperf has them) are reported in `notes` and as comments in the written file,
which is always a valid xlatperf configuration. docs/siitperf.md maps siitperf's programs,
scripts and command-line parameters to xlatperf commands.
"""

import ipaddress
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .config import SCHEMA, load_config
from .errors import ConfigError

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
# IP-L-Vers must be 4 or 6, not 5.
_VERSIONS = ("IP-L-Vers", "IP-R-Vers")


@dataclass
class ImportResult:
    config: dict                                   # {section: {key: value}} as written
    notes: list[str] = field(default_factory=list)
    sources: dict = field(default_factory=dict)    # "section.key" -> siitperf parameter(s)


def parse_siitperf(text: str, name: str = "siitperf.conf") -> dict:
    """{parameter: value} of a siitperf.conf; ConfigError naming the line on any problem."""
    values: dict = {}
    for number, line in enumerate(text.splitlines(), 1):
        content = line.split("#", 1)[0].strip()
        if not content:
            continue
        parts = content.split()
        parameter = parts[0]
        where = f"{name} line {number}"
        if parameter not in PARAMETERS:
            close = [p for p in PARAMETERS if p.lower() == parameter.lower()]
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ConfigError(f"{where}: unknown siitperf parameter {parameter!r}{hint}")
        if len(parts) < 2:
            raise ConfigError(f"{where}: {parameter} has no value")
        try:
            value = PARAMETERS[parameter](parts[1])
            if parameter in _VERSIONS and value not in (4, 6):
                raise ValueError("must be 4 or 6")
        except ValueError as exc:
            raise ConfigError(f"{where}: {parameter} {parts[1]}: {exc}") from None
        values[parameter] = value
    return values


def convert(values: dict) -> ImportResult:
    """Map siitperf parameters to xlatperf configuration keys (docs/siitperf.md)."""
    config: dict = {}
    result = ImportResult(config)
    notes = result.notes

    def put(dotted: str, value, *sources: str) -> None:
        section, key = dotted.split(".")
        config.setdefault(section, {})[key] = value
        result.sources[dotted] = ", ".join(sources)

    def has(section: str, key: str) -> bool:
        return section in SCHEMA and key in SCHEMA[section]

    # Netns and ports: siitperf drives DPDK ports 0 and 1 directly.
    notes.append("siitperf uses DPDK ports 0 (left) and 1 (right): set left.port and right.port "
                 "(e.g. \"pci:0000:03:00.0\"), and tester.netns = \"\" outside the lab")
    for side, letter in (("left", "L"), ("right", "R")):
        if f"IP-{letter}-Vers" in values:
            put(f"{side}.ip_version", values[f"IP-{letter}-Vers"], f"IP-{letter}-Vers")
        for version in (4, 6):
            for kind, prefix in (("Real", ""), ("Virt", "virtual_")):
                parameter = f"IPv{version}-{letter}-{kind}"
                if parameter in values:
                    put(f"{side}.{prefix}ipv{version}", values[parameter], parameter)
        if f"MAC-{letter}-Tester" in values:
            put(f"{side}.mac", values[f"MAC-{letter}-Tester"], f"MAC-{letter}-Tester")
        if f"MAC-{letter}-DUT" in values:
            put(f"{side}.dut_mac", values[f"MAC-{letter}-DUT"], f"MAC-{letter}-DUT")

    stateful = values.get("Stateful", 0)
    forward, reverse = values.get("Forward", 1), values.get("Reverse", 1)
    if stateful:
        initiator = "left" if stateful == 1 else "right"
        notes.append(f"Stateful {stateful} (RFC 9693, Initiator on the {initiator}): xlatperf "
                     "has no stateful tests yet; converted as a stateless test with the same "
                     "addresses and port ranges (the preliminary phase, the Responder's state "
                     "table, Responder-tuples and enumeration are not converted)")
        if not forward and not reverse:
            # siitperf's stateful tests may have no stateless direction; the Initiator's is
            # the one its preliminary frames take.
            forward, reverse = (1, 0) if stateful == 1 else (0, 1)
            notes.append("Forward 0 and Reverse 0: the Initiator's direction "
                         f"({'forward' if stateful == 1 else 'reverse'}) is used")
    for parameter in ("Responder-tuples", "Enumerate-ports", "Enumerate-ips"):
        if values.get(parameter):
            notes.append(f"{parameter} {values[parameter]}: stateful-test parameter, not "
                         "converted (no stateful tests in xlatperf yet)")
    if not forward and not reverse:
        raise ConfigError("Forward 0 and Reverse 0: no active direction (siitperf requires one "
                          "for stateless tests)")
    direction = "both" if forward and reverse else "forward" if forward else "reverse"
    put("traffic.direction", direction, "Forward", "Reverse")

    if "Promisc" in values:
        notes.append("Promisc: no xlatperf setting (the engine recognises test frames by their "
                     "tag, whatever their destination MAC); ignored")
    cpus = [values[p] for p in ("CPU-L-Send", "CPU-R-Recv", "CPU-R-Send", "CPU-L-Recv")
            if p in values]
    if cpus:
        cores = [0] + [c for i, c in enumerate(cpus) if c != 0 and c not in cpus[:i]]
        put("tester.lcores", ",".join(str(c) for c in cores), "CPU-L-Send", "CPU-R-Recv",
            "CPU-R-Send", "CPU-L-Recv")
        notes.append(f"CPU-*-Send/Recv: lcores {','.join(str(c) for c in cores)} (0 is the main "
                     "lcore as in siitperf); xlatperf assigns senders and receivers to the "
                     "worker lcores itself")
    if "MEM-Channels" in values:
        notes.append("MEM-Channels: not needed by xlatperf (DPDK detects the memory channels); "
                     "ignored")

    # RFC 4814 port variation.
    for prefix, direction_name in (("Fwd", "forward"), ("Rev", "reverse")):
        for end, short in (("src", "sport"), ("dst", "dport")):
            mode = VARY[values.get(f"{prefix}-var-{short}", 0)]
            bounds = {b: values.get(f"{prefix}-{short}-{b}") for b in ("min", "max")}
            if mode == "fixed" and all(v is None for v in bounds.values()):
                continue
            key = f"{direction_name}_{end}"
            if not has("ports", key):
                notes.append(f"{prefix}-var-{short}: xlatperf has no port variation keys; "
                             "ignored")
                continue
            put(f"ports.{key}", mode, f"{prefix}-var-{short}")
            for b, value in bounds.items():
                if value is not None:
                    put(f"ports.{key}_{b}", value, f"{prefix}-{short}-{b}")
            if mode == "fixed":
                notes.append(f"{prefix}-{short}-min/max given with {prefix}-var-{short} 0: "
                             "the range is kept but the port stays fixed")

    # Multiple IP addresses (draft-lencse-bmwg-multiple-ip-addresses) and destination networks.
    for side, letter in (("left", "L"), ("right", "R")):
        mode = VARY[values.get(f"IP-{letter}-var", 0)]
        if mode != "fixed":
            if not has("addresses", side):
                notes.append(f"IP-{letter}-var: xlatperf has no address variation keys; ignored")
            else:
                put(f"addresses.{side}", mode, f"IP-{letter}-var")
                for b in ("min", "max"):
                    if f"IP-{letter}-{b}" in values:
                        put(f"addresses.{side}_{b}", values[f"IP-{letter}-{b}"],
                            f"IP-{letter}-{b}")
                _offsets(values, side, letter, put, notes, has)
        nets = values.get(f"Num-{letter}-Nets", 1)
        if nets > 1:
            # siitperf's Num-L-Nets counts the networks frames are sent *to* on the left.
            if has("addresses", f"{side}_nets"):
                put(f"addresses.{side}_nets", nets, f"Num-{letter}-Nets")
            else:
                notes.append(f"Num-{letter}-Nets {nets}: xlatperf has no destination network "
                             "setting; ignored")
    return result


def _offsets(values, side, letter, put, notes, has) -> None:
    """siitperf's offsets: IPv4 1 (bytes 1-2) or 2 (bytes 2-3); IPv6 6..14 (first byte)."""
    v4 = values.get(f"IPv4-{letter}-offset")
    if v4 is not None and has("addresses", f"{side}_offset_ipv4"):
        allowed = SCHEMA["addresses"][f"{side}_offset_ipv4"]
        try:
            put(f"addresses.{side}_offset_ipv4", allowed.check(v4), f"IPv4-{letter}-offset")
        except ValueError as exc:
            notes.append(f"IPv4-{letter}-offset {v4}: varying IPv4 bytes {v4}-{v4 + 1} is not "
                         f"possible in xlatperf (addresses.{side}_offset_ipv4 {exc}); kept the "
                         f"default ({allowed.default})")
    v6 = values.get(f"IPv6-{letter}-offset")
    if v6 is not None and has("addresses", f"{side}_offset_ipv6"):
        allowed = SCHEMA["addresses"][f"{side}_offset_ipv6"]
        try:
            put(f"addresses.{side}_offset_ipv6", allowed.check(v6), f"IPv6-{letter}-offset")
        except ValueError as exc:
            notes.append(f"IPv6-{letter}-offset {v6}: addresses.{side}_offset_ipv6 {exc}; kept "
                         f"the default ({allowed.default})")


def convert_cmdline(text: str, result: ImportResult) -> None:
    """siitperf-tp/-lat/-pdv arguments: SIZE RATE DURATION TIMEOUT N M [...]."""
    parts = text.split()
    names = ("ipv6_frame_size", "frame_rate", "duration", "global_timeout", "n", "m")
    if len(parts) < len(names):
        raise ConfigError(f"--cmdline {text!r}: expected at least {len(names)} values: "
                          + " ".join(names))
    try:
        size, rate, duration, timeout, n, m = (int(p) for p in parts[:6])
    except ValueError:
        raise ConfigError(f"--cmdline {text!r}: the first six values must be integers") from None
    checks = ((size, 84, 1538, "ipv6_frame_size"), (rate, 1, 14880952, "frame_rate"),
              (duration, 1, 3600, "duration"), (timeout, 0, 60000, "global_timeout"),
              (n, 2, None, "n"), (m, 0, n, "m"))
    for value, low, high, name in checks:
        if value < low or (high is not None and value > high):
            raise ConfigError(f"--cmdline: {name} = {value}: siitperf allows {low}.."
                              f"{'' if high is None else high}")
    put = result.config.setdefault
    put("traffic", {})["frame_size"] = size
    put("trial", {})["duration"] = float(duration)
    result.config["trial"]["timeout"] = timeout / 1000
    if m == 0:
        raise ConfigError("--cmdline: m = 0 (no foreground frames) is not a benchmark in xlatperf")
    result.config["traffic"]["mix_n"], result.config["traffic"]["mix_m"] = n, m
    result.sources.update({"traffic.frame_size": "ipv6_frame_size", "trial.duration": "duration",
                           "trial.timeout": "global_timeout (ms)", "traffic.mix_n": "n",
                           "traffic.mix_m": "m"})
    result.notes.append(f"frame_rate {rate}: a rate is a command option in xlatperf: "
                        f"`xlatperf trial --rate {rate}` (one elementary trial, like siitperf-tp) "
                        "or the search range of `xlatperf throughput`")
    if len(parts) > 6:
        result.notes.append(f"further arguments {' '.join(parts[6:])} (stateful N M R T D, "
                            "siitperf-lat's delay/timestamps or siitperf-pdv's frame timeout): "
                            "not converted")


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
            lines.append(f"{key} = {_toml_value(value)}{comment}")
    return "\n".join(lines) + "\n"


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value))   # a TOML basic string for the ASCII values used here


def import_siitperf(path, output=None, cmdline: str | None = None) -> ImportResult:
    """Convert the siitperf.conf at `path`; write it as TOML to `output` (if given) after
    checking that xlatperf loads it. Raises ConfigError."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror}") from None
    result = convert(parse_siitperf(text, str(path)))
    if cmdline:
        convert_cmdline(cmdline, result)
    traffic = result.config.setdefault("traffic", {})
    if "frame_size" not in traffic:
        # siitperf takes the (IPv6) frame size on the command line; start from its minimum.
        ipv6 = any(result.config.get(side, {}).get("ip_version") == 6
                   for side in ("left", "right"))
        traffic["frame_size"] = 84 if ipv6 else 64
        result.sources["traffic.frame_size"] = "not in siitperf.conf"
        result.notes.append(f"frame size: siitperf's first command-line argument; set to "
                            f"{traffic['frame_size']} here (use --cmdline, a campaign axis, or "
                            "--set traffic.frame_size=...)")
    toml_text = to_toml(result, path.name)
    if output is not None:
        output = Path(output)
        try:
            output.write_text(toml_text, encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"{output}: {exc.strerror}") from None
        try:
            load_config(str(output))
        except ConfigError as exc:
            raise ConfigError(f"{path} converts to an invalid xlatperf configuration: {exc} "
                              f"(written to {output} for inspection)") from None
    return result
