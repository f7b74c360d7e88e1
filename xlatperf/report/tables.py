# SPDX-License-Identifier: BSD-3-Clause
"""The report's tables: the reporting items every report must state (RFC 2544 §26, RFC 8219
§12, RFC 9693), the results table (one row per measurement) and each measurement's details
(its family's per-repetition tables)."""

import json

from ..engine.protocol import df_behaviour, tunnel_ecn_mode
from ..frames.imix import imix_period
from ..frames.stack import IPV4, IPV6, TCP_ACK, TCP_SYN
from ..frames.technology import CE_SOURCES, DS_LITE, TECHNOLOGIES, Part
from .axes import setting, short
from .collect import Entry
from .document import Document
from .families import family
from .units import format_value, unit


def _mix(config: dict) -> str:
    # RFC 8219 §5.3's foreground: the traffic the DUT translates, or its tunnels carry.
    technology = TECHNOLOGIES.get(config.get("ipv4aas.technology") or "")
    handled = "encapsulated" if technology and technology.wire.encapsulated else "translated"
    n, m = config.get("traffic.mix_n", 1), config.get("traffic.mix_m", 1)
    return f"100 % {handled}" if m == n else f"{m}/{n} {handled} ({100 * m / n:.4g} %), " \
        f"{n - m}/{n} native IPv6 background"


def dns_queries(dns: dict) -> str:
    """What a run's DNS queries were (its settings' `dns`, docs/dns.md), in one line."""
    to = f"the DUT's resolver {dns['server']}" if dns.get("server") else "the tester's other side"
    answered = "the tester's other side answering for the zone" if dns.get("authoritative") else \
        "the zone served by another server"
    if dns.get("names") == "dns64perf":
        names = f"dns64perf++'s names of {dns.get('zone')} (A records in {dns.get('a_records')}, no AAAA)"
        records = ""
    else:
        names = f"names of {dns.get('zone')}"
        records = f"; {100 * float(dns.get('aaaa_share', 0)):g} % of the names with a AAAA record"
    return (f"DNS {dns.get('qtype')} queries for {names} to {to} "
            f"({dns.get('query_frame_size')}-byte frames{', EDNS(0)' if dns.get('edns') else ''}; "
            f"{answered}{records}; expected synthesis {dns.get('synthesis')})")


def point_label(entry: Entry, axes: list[str]) -> str:
    config = entry.flat_config()
    parts = [entry.procedure]
    for key in axes:
        if key in ("traffic.mix_n", "traffic.mix_m"):
            if key == "traffic.mix_n":
                parts.append(f"mix {config.get('traffic.mix_m')}/{config.get('traffic.mix_n')}")
            continue
        parts.append(setting(key, config.get(key)))
    if entry.fixed_rate is not None:
        parts.append(f"rate {entry.fixed_rate:,} fps")
    return ", ".join(parts)


def _values(entries: list[Entry], get) -> str:
    seen: list[str] = []
    for entry in entries:
        value = get(entry)
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        if text not in seen:
            seen.append(text)
    return "; ".join(seen)


def _varying(config: dict, key: str, what: str, suffix: str = "") -> list[str]:
    """A varying port or address part as "<what, with {mode}> MIN..MAX<suffix>" ([] if fixed)."""
    mode = config.get(key)
    if not mode or mode == "fixed":
        return []
    return [f"{what.format(mode=mode)} {config.get(f'{key}_min')}..{config.get(f'{key}_max')}"
            f"{suffix}"]


def _variation(config: dict) -> str:
    parts = []
    for direction in ("forward", "reverse"):
        for end in ("src", "dst"):
            parts += _varying(config, f"ports.{direction}_{end}",
                              f"{direction} {end} port {{mode}} in", " (RFC 4814)")
    for side in ("left", "right"):
        parts += _varying(config, f"addresses.{side}", f"{side} addresses {{mode}}, 16-bit part in")
        nets = config.get(f"addresses.{side}_nets")
        if nets and nets > 1:
            parts.append(f"{nets} destination networks on the {side} side (RFC 2544 §12)")
    fixed = (f"UDP ports {config.get('traffic.src_port')} → {config.get('traffic.dst_port')}")
    if not parts:
        return f"none: one address pair per direction, {fixed}"
    return "; ".join(parts) + f"; seed {config.get('traffic.seed')}"


def _ipv4aas_setup(entry: Entry, config) -> str:
    """What the DUT is in an IPv4-as-a-Service set-up and what the tester plays (docs/ipv4aas.md)."""
    if not config.get("ipv4aas.technology"):
        return ""
    technology = TECHNOLOGIES[config.get("ipv4aas.technology")]
    role = technology.role(config.get("ipv4aas.role"))
    name = technology.name
    if role.part is Part.DUAL:
        return f" ({name} dual DUT, CE and BR: RFC 8219 §4.2 Figure 2; docs/ipv4aas.md)"
    if technology.plays_operator(role):
        return (f" ({name}: the DUT is one {role.name}, {config.get(technology.ce_key)}; the right "
                f"port plays its {technology.operator.name}; docs/ipv4aas.md)")
    ces = next((d["ces"] for d in entry.summary.get("directions", {}).values() if "ces" in d), None)
    if technology.emulates_ces(role) and ces:
        source = next(source for source in CE_SOURCES if source.key == ces["source"])
        return (f" ({name} {role.name}: {ces['count']:,} CEs emulated on the left from "
                f"{source.description}, one per frame, "
                f"{'pseudorandomly' if ces['mode'] == 'random' else 'in turn'}; docs/ipv4aas.md)")
    return f" ({name}: the DUT is the {role.name}; docs/ipv4aas.md)"


def _tcp(entry: Entry) -> bool:
    """A stateful result over TCP (docs/tcp.md)."""
    return ((entry.summary.get("settings") or {}).get("stateful") or {}).get("transport") == "tcp"


def _dns(entry: Entry) -> dict | None:
    """A DNS run's settings (docs/dns.md), or None."""
    return entry.summary.get("settings", {}).get("dns")


def _frame_format(entry: Entry) -> str:
    config = entry.flat_config()
    left, right = config.get("left.ip_version"), config.get("right.ip_version")
    sides = f"IPv{left} on the left, IPv{right} on the right"
    forward = entry.summary.get("directions", {}).get("forward", {})
    if forward.get("stacks"):  # as the traffic kind built them (IPv4 in IPv6, RFC 2473)
        sides = f"{forward['stacks'][0]} on the left, {forward['stacks'][1]} on the right"
    sides += _ipv4aas_setup(entry, config)
    background = " and native IPv6 background frames" if \
        config.get("traffic.mix_m") != config.get("traffic.mix_n") else ""
    if dns := _dns(entry):
        return (f"Ethernet II / {sides} / UDP to port 53: DNS {dns['qtype']} queries (RFC 1035"
                + (", EDNS(0) RFC 6891" if dns.get("edns") else "") + "), a name of the test zone each; "
                "their answers the other way (docs/dns.md)")
    if _tcp(entry):
        return (f"Ethernet II / {sides} / TCP: handshakes (SYN, SYN-ACK, ACK, the Responder's window "
                "ACK), closings (FIN, FIN-ACK, ACK) or resets without payload, and data segments (phase 2, "
                "validation); the "
                "xlatperf test tag in each segment's first option (RFC 6994 kind 254; "
                "docs/tcp.md)")
    return (f"Ethernet II / {sides}{background} / UDP ({_udp_ports(entry, config)}); the "
            "xlatperf test tag right after the UDP header (RFC 8219 §7.2, docs/protocol.md)")


def _udp_ports(entry: Entry, config) -> str:
    """The UDP ports as configured, the CEs' side's as their fields write them (each frame a
    port of its CE's set, RFC 7597 §5.1)."""
    text = f"ports {config.get('traffic.src_port')} → {config.get('traffic.dst_port')}"
    if "port" in _ce_fields(entry):
        text += "; on the CEs' side each frame's port is one of its CE's set"
    return text


def _variation_with_ces(entry: Entry) -> str:
    if dns := _dns(entry):
        return (f"the UDP source port, from traffic.src_port over {dns.get('ports')} ports or more "
                "(consecutive queries), and the DNS ID (the rounds over them): a query's name, port and ID "
                "are its own (docs/dns.md)")
    text = _variation(entry.flat_config())
    fields = _ce_fields(entry)
    if not fields:
        return text
    ces = ("per frame, a CE's address and a port of its set on the CEs' side (RFC 7597 §5.1, docs/ipv4aas.md)"
           if "port" in fields else "per frame, one CE's addresses on the CEs' side (docs/ipv4aas.md)")
    return ces if text.startswith("none:") else f"{ces}; {text}"


def _ce_fields(entry: Entry) -> set[str]:
    """The CE fields the sender writes per frame, in any direction (docs/ipv4aas.md)."""
    return {field for d in entry.summary.get("directions", {}).values() if "ces" in d
            for field in d["ces"].get("fields", [])}


def _seen(entry: Entry, keys: tuple[str, str], name_of) -> dict[str, str]:
    """Per direction, what a pair of the engine's counts (e.g. df_set, df_clear) says over the
    measurement's trials, in `name_of`'s words (engine/protocol.py df_behaviour, tunnel_ecn_mode);
    directions without them left out."""
    counts: dict[str, list[int]] = {}
    for record in entry.trials:
        for name, d in record.get("directions", {}).items():
            if d.get(keys[0]) is not None:
                seen = counts.setdefault(name, [0, 0])
                for i, key in enumerate(keys):
                    seen[i] += d.get(key) or 0
    return {name: text for name, pair in counts.items() if (text := name_of(*pair))}


def _header_checks(entry: Entry) -> str:
    """What the receiver checked of the headers the DUT wrote (the foreground streams' `rx`,
    docs/protocol.md "Header checks"): the TTL rule applied, and the checks turned off."""
    config = entry.flat_config()
    if _dns(entry):
        return ("every answer judged (docs/dns.md): its IPv4 header and UDP checksums, ID, question, "
                "RCODE, TC and address records against the expected ones; its addresses, TTL and "
                "traffic class are the answering resolver's own and not judged")
    directions = [d for d in entry.summary.get("directions", {}).values() if "rx" in d]
    if not directions:
        return "none (results of a version before them): the tag, length, VLAN IDs and CE fields only"
    received = [d["rx"] for d in directions]
    parts = ["TCP segments also by their steps (flags, acknowledgements; docs/tcp.md)"] if _tcp(entry) else []
    if any(rx.get("checksums") for rx in received):
        parts.append("IPv4 header and TCP checksums" if _tcp(entry) else "IPv4 header and UDP checksums")
    if any(key in rx for rx in received for key in ("src_ip", "dst_ip", "src_port", "dst_port")):
        parts.append("addresses and ports as the DUT must write them"
                     + (" (not the ones a stateful NAT chooses)" if config.get("stateful.enabled") else ""))
    tos = sorted({rx["tos"] for rx in received if "tos" in rx})
    if tos:
        parts.append(f"DSCP of the TOS/traffic class {', '.join(map(str, tos))} as sent (traffic.dscp = "
                     f"{config.get('traffic.dscp')})")
    if any(len(rx.get("ecn", [0, 1, 2, 3])) < 4 for rx in received):
        parts.append(f"ECN field as sent (traffic.ecn = \"{config.get('traffic.ecn')}\"), or CE where sent ECT "
                     "(RFC 3168 §5: a congested router marks it; RFC 6040 §4.2 at a tunnel's exit)"
                     + "".join(f"; {name}: the {mode}" for name, mode in
                             _seen(entry, ("tunnel_ecn_copied", "tunnel_ecn_not_ect"), tunnel_ecn_mode).items()))
    if any("df" in rx for rx in received):
        parts.append("DF (set; where translated into IPv4, set above 1260 bytes)")
    if any(rx.get("count_df") for rx in received):
        parts.append(f"DF of translated IPv4 packets ≤ 1,260 bytes by checks.df_small = "
                     f"\"{config.get('checks.df_small')}\" (RFC 7915 §5.1 clears it, RFC 6145 §5.1 set it)"
                     + "".join(f"; {name}: {seen}" for name, seen in
                             _seen(entry, ("df_set", "df_clear"), df_behaviour).items()))
    cable = entry.spec is not None and not entry.spec.through_dut
    ttls: dict[tuple, list[str]] = {}  # (sent, low, high) -> the directions
    for name, d in entry.summary.get("directions", {}).items():
        if "ttl" in d.get("rx", {}):
            expected = d["rx"]["ttl"]
            ttls.setdefault((d["ttl"], *(expected if isinstance(expected, list) else (expected, expected))),
                            []).append(name)
    for (sent, low, high), names in sorted(ttls.items()):
        if cable:
            rule = "no DUT: the tester's ports are wired to each other"
        else:
            rule = f"dut.hops = {config.get('dut.hops')}: {sent - low}"
            if high > low:  # tunnel exits among the hops (frames/kinds/base.py Received.tunnel_exits)
                rule += (f", of which {high - low} a tunnel exit, which may pass the packet on without "
                         f"a decrement (RFC 2473 §3.3 leaves it open; Linux decrements, Snabb's lwAFTR does not)")
        which = f" ({', '.join(names)})" if len(ttls) > 1 else ""
        wanted = f"{low}..{high}" if high > low else f"{low}"
        parts.append(f"TTL/hop limit{which}: sent {sent}, expected {wanted} ({rule})")
    if any(d["rx"].get("tunnel", {}).get("carries_tos") for d in directions):
        parts.append("the tunnel's traffic class as the inner TOS (RFC 6333 §7.1, RFC 7596)")
    off = [f"{key} = false" for key, value in config.items() if key.startswith("checks.") and value is False]
    if off:
        parts.append("off: " + ", ".join(off))
    return "; ".join(parts)


def _frame_sizes(entry: Entry) -> list[str]:
    sizes = [f"IMIX {d['imix']} ({name})" if d.get("imix") else
             f"{d.get('frame_size')} B sent, {d.get('rx_frame_size')} B received ({name})"
             for name, d in entry.summary.get("directions", {}).items()]
    if _tcp(entry):  # the configured size names phase 2's data segments
        segments = ", ".join(f"{IPV4.carrying(segment).min_frame} B {segment.segments}"
                             for segment in (TCP_SYN, TCP_ACK))
        sizes = [f"TCP segments without payload: {segments} (IPv4; IPv6 {IPV6.ip_bytes - IPV4.ip_bytes} B "
                 f"more; in a {DS_LITE.name} softwire {DS_LITE.wire.overhead} B more); data segments (phase 2): "
                 f"{', '.join(sizes)}"]
    return sizes


def _ports(entry: Entry) -> str:
    """The tester's ports as set up: driver, link, and for a NIC what a reader must know to trust
    its counts (flow control, MTU, descriptors)."""
    ports = (entry.summary.get("tester") or {}).get("ports") or []
    return ", ".join(f"port {p.get('index', i)}: {p.get('driver', '?')} "
                     f"{p.get('link_speed_mbps', '?')} Mbit/s{_port_setup(p)}" for i, p in enumerate(ports))


def _port_setup(port: dict) -> str:
    """", flow control off (was full), MTU 1508, 4096/1024 descriptors" for a device that has
    flow control; "" for one that has none (virtual devices) or a result from before."""
    flow = port.get("flow_control") or {}
    if flow.get("now") in (None, "unsupported"):
        return ""
    if flow["now"] == "none":
        state = "off" + (f" (was {flow['found']})" if flow.get("found") not in (None, "none") else "")
    elif flow.get("error"):
        state = f"{flow['now']} (could not be turned off: {flow['error']})"
    else:
        state = f"{flow['now']} (left as it was)"
    descriptors = port.get("descriptors") or {}
    return (f", flow control {state}, MTU {port.get('mtu', '?')}, "
            f"{descriptors.get('rx', '?')}/{descriptors.get('tx', '?')} RX/TX descriptors")


def _line_rates(entry: Entry) -> list[str]:
    def frames(d: dict) -> str:
        if d.get("imix"):  # RFC 6985: the mix's mean frame on the wire
            return f"the IMIX's frames of {d['mean_frame_size']:.1f} bytes on average"
        if d.get("answer_frame_size"):  # DNS: a query one way, its answer (one address record) the other
            return f"DNS answers of {d['answer_frame_size']} bytes, the queries' {d.get('frame_size')} the other way"
        # The larger of the frame as sent and as received: the medium carries both.
        return f"{max(d.get('frame_size') or 0, d.get('rx_frame_size') or 0)}-byte frames"
    def middle(d: dict) -> str:
        """A dual DUT's link between its CE and BR, which carries the frames encapsulated or
        translated (RFC 8219 §5.1): what it allows."""
        link = d.get("middle_link")
        if not link:
            return ""
        size = link["mean_frame_size"]
        frames = f"{size:g}-byte frames" if size == link["largest_frame_size"] else \
            f"frames of {size:.1f} bytes on average"
        return (f"; the middle link ({link['stack']}, {frames}) at {link['speed_bps'] / 1e9:g} Gbit/s "
                f"allows {link['max_rate']:,} (RFC 8219 §5.1)")
    return [f"{d.get('speed_bps', 0) / 1e9:g} Gbit/s, maximum {d.get('max_rate', 0):,} frames/s "
            f"for {frames(d)} ({name}, RFC 2544 App. B){middle(d)}"
            for name, d in entry.summary.get("directions", {}).items()]


def _delay_setting(entries: list[Entry], key: str) -> str:
    """A setting of the latency/pdv results (docs/delay.md), "" when there are none."""
    return _values([e for e in entries if e.summary.get("settings", {}).get(key)],
                   lambda e: e.summary["settings"][key])


def _unique(entries: list[Entry], get) -> str:
    seen: list[str] = []
    for entry in entries:
        for text in get(entry):
            if text not in seen:
                seen.append(text)
    return "; ".join(seen)


def _repetitions(entry: Entry) -> str:
    settings = entry.summary.get("settings", {})
    config = entry.flat_config()
    text = f"{settings.get('repeat', config.get('output.repeat'))}"
    if config.get("output.repeat_max"):
        text = (f"adaptive: {config.get('output.repeat')} to {config.get('output.repeat_max')}, "
                f"stop when the {100 * config.get('output.repeat_confidence', 0.95):g} % "
                "distribution-free confidence interval of the median is narrower than "
                f"{100 * config.get('output.repeat_tolerance', 0):g} % of it")
    return text


# The [dut] commands a report states (the DUT configuration they set is part of it).
HOOKS = ("before_point", "before_repetition", "before_trial", "wait_until", "counters",
         "after_trial", "after_repetition", "after_point", "teardown")


def _hooks(entry: Entry) -> str:
    dut = (entry.summary.get("config") or {}).get("dut") or {}
    where = f" (on {dut['ssh']})" if dut.get("ssh") else ""
    return "; ".join(f"{hook}: `{dut[hook]}`" for hook in HOOKS if dut.get(hook)) + \
        (where if any(dut.get(hook) for hook in HOOKS) else "")


def reporting_items(entries: list[Entry]) -> list[list[str]]:
    """The items methodology §14 item 37 (RFC 2544 §26, RFC 8219 §12) asks every report for."""
    def config(key):
        return lambda e: e.flat_config().get(key)

    def setting(key):
        return lambda e: e.summary.get("settings", {}).get(key)

    dut = _values(entries, lambda e: ((e.summary.get("config") or {}).get("dut") or {}).get(
        "description", ""))
    hooks = _values(entries, _hooks)
    if dut in ("null", ""):
        dut = ("not recorded by xlatperf: state the DUT's hardware, software version and "
               "configuration here. It MUST be the same for every test of this report "
               "(RFC 2544 §7).")
    rows = [
        ["Procedures", _values(entries, lambda e: e.procedure)],
        ["Frame format", _values(entries, _frame_format)],
        ["Frame sizes (traffic.frame_size names the IPv6 frame when IPv6 frames are sent, an "
         "IPv4 frame 20 bytes shorter; a tunnel adds its outer header, RFC 8219 App. A)",
         _unique(entries, _frame_sizes)],
        ["Latency definition (RFC 1242)", _delay_setting(entries, "latency_definition")
         or "not measured: these results hold no latency data"],
        ["Timestamps", _delay_setting(entries, "timestamp_method")
         or "not used: these results hold no delay data"],
        ["Loss criterion", _values(entries, lambda e: e.summary.get("settings", {}).get(
            "loss_criterion") or f"global timeout {e.summary.get('settings', {}).get('timeout')} s")],
        ["Media", _values(entries, _ports)],
        ["Line rate and maximum frame rate", _unique(entries, _line_rates)],
        ["Traffic direction", _values(entries, config("traffic.direction"))],
        ["Traffic mix (RFC 8219 §5.3)",
         _values(entries, lambda e: _mix(e.flat_config()))],
        *_imix_rows(entries),
        ["Address and port variation", _values(entries, _variation_with_ces)],
        ["Header checks on receipt (docs/config.md \"Header checks\")", _values(entries, _header_checks)],
        ["Repetitions", _values(entries, _repetitions)],
        ["Summary statistics", "median, 1st and 99th percentiles (RFC 8219 §12; percentiles as "
         "in RFC 2330 §11.3: sorted[ceil(p/100·N) − 1]), min, max, dispersion = "
         "(max − min) / median, and the number of results n (with n < 100 the 1st and 99th "
         "percentiles are the min and max)"],
        ["Trial duration (s)", _values(entries, setting("duration"))],
        ["Waits (s): timeout after sending; pause between trials",
         _values(entries, lambda e: f"{e.summary.get('settings', {}).get('timeout')}; "
                                    f"{e.summary.get('settings', {}).get('pause')}")],
        ["Search precision", _values(entries, lambda e: family(e).precision(e))],
        ["DUT configuration", dut],
        *([["DUT hooks (commands as configured; the values of each point in its hooks.jsonl)",
            hooks]] if hooks not in ("", "null") else []),
        *_stateful_rows(entries),
        *([["DNS queries (docs/dns.md)", _values(entries, lambda e: dns_queries(
            e.summary.get("settings", {}).get("dns") or {}))]]
          if any(e.summary.get("settings", {}).get("dns") for e in entries) else []),
        ["Tester", _values(entries, lambda e: "xlatperf {xlatperf}, engine {engine}, {dpdk}, "
                           "lcores {lcores}".format(**{k: (e.summary.get("tester") or {}).get(k)
                                                       for k in ("xlatperf", "engine", "dpdk",
                                                                 "lcores")}))],
        ["Tester ceiling", _values(entries, lambda e: (e.summary.get("settings", {}).get(
            "tester_ceiling") or {}).get("statement") or "not calibrated")],
    ]
    return rows


def _imix_rows(entries: list[Entry]) -> list[list[str]]:
    """RFC 6985's reporting of an IMIX: the notation and the order of one period (when any
    entry sends one)."""
    def text(entry) -> str:
        imix = entry.flat_config().get("traffic.imix")
        return f"{imix}: {' '.join(map(str, imix_period(imix)))} (repeating)" if imix else "none"
    if not any(e.flat_config().get("traffic.imix") for e in entries):
        return []
    return [["IMIX (RFC 6985): notation and the frame sizes of one period in sending order",
             _values(entries, text)]]


def imix_table(entry: Entry) -> tuple[list[str], list[list[str]]] | None:
    """Frames sent and received per IMIX frame size, per trial and direction (the records'
    `sizes`); None when the entry's trials have none."""
    rows = []
    for number, record in enumerate(entry.trials, 1):
        for name, direction in record.get("directions", {}).items():
            for size, counts in (direction.get("sizes") or {}).items():
                sent, received = counts["sent"], counts["received"]
                rows.append([str(number), f"{record.get('rate', 0):,}", name, size, f"{sent:,}",
                             f"{received:,}", f"{sent - received:,}",
                             f"{(sent - received) / sent:.6g}" if sent else "-"])
    if not rows:
        return None
    return ["trial", "rate (fps)", "direction", "frame size (B)", "sent", "received", "lost",
            "loss ratio"], rows


def _stateful_rows(entries: list[Entry]) -> list[list[str]]:
    """RFC 9693 reporting items (settings.stateful, docs/stateful.md), when any entry has them."""
    def items(entry) -> dict:
        found = _Items(entry.summary.get("settings", {}).get("stateful") or {})
        found["before_trial"] = found["before_trial"] or "none"
        return found

    if not any(items(e)["connections"] for e in entries):
        return []
    return [[name, _values(entries, lambda e, text=text: text.format_map(items(e)))]
            for name, text in STATEFUL_ITEMS]


class _Items(dict):
    def __missing__(self, key):
        return None


# The RFC 9693 reporting items: (row, template over settings.stateful).
STATEFUL_ITEMS = [
    ("Stateful (RFC 9693): Initiator, Responder", "{initiator}, {responder}"),
    ("Number of connections N; state table size M", "{connections}; {table_size}"),
    ("Phase 1: rate R (fps), timeout T (s), gap D (s)", "{rate_phase1}, {timeout_phase1}, {gap}"),
    ("Enumeration (phase 1); Responder selection (phase 2)",
     "{enumerate} in {order} order over {combinations} combinations; {selection}"),
    ("Port ranges (Initiator's source; destination)", "{source_ports}; {destination_ports}"),
    ("Address ranges (Initiator's source; destination)",
     "{source_addresses}; {destination_addresses}"),
    ("Validation (factor α)", "{validation} ({validation_factor})"),
    ("DUT hook before each trial (empties the connection table)", "{before_trial}"),
]


def results_table(entries: list[Entry], axes: list[str]) -> tuple[list[str], list[list[str]]]:
    axis_columns = [k for k in axes if k != "traffic.mix_m"]
    header = ["point", "procedure"] + [
        "mix (translated)" if k == "traffic.mix_n" else short(k) for k in axis_columns]
    with_rate = [e for e in entries if e.fixed_rate is not None]
    if with_rate:
        header.append(f"rate ({'/'.join(sorted({e.rate_unit for e in with_rate}))})")
    header += ["unit", "median", "p1", "p99", "min", "max", "n", "dispersion", "complete"]
    rows = []
    for entry in entries:
        config = entry.flat_config()
        summary = entry.summary
        row = [entry.name, entry.procedure]
        for key in axis_columns:
            if key == "traffic.mix_n":
                row.append(f"{config.get('traffic.mix_m')}/{config.get('traffic.mix_n')}")
            else:
                row.append(str(config.get(key)))
        if with_rate:
            row.append("-" if entry.fixed_rate is None else f"{entry.fixed_rate:,}")
        name = entry.unit
        row += [unit(name).table] + [format_value(summary.get(k), name)
                                      for k in ("median", "p1", "p99", "min", "max")]
        dispersion = summary.get("dispersion")
        row += [str(summary.get("n")), "-" if dispersion is None else f"{dispersion:.4g}",
                "yes" if summary.get("complete") else "**no**"]
        rows.append(row)
    return header, rows


def dut_counters(entry: Entry) -> list[list[str]]:
    """The DUT's counters sampled after each trial (dut.counters), one row per counter: the
    first and last sample, the smallest and largest numeric one, and how many trials had it."""
    samples: dict[str, list] = {}
    for record in entry.trials:
        for name, value in (record.get("dut_counters") or {}).items():
            samples.setdefault(name, []).append(value)
    rows = []
    for name, values in samples.items():
        numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        rows.append([name, str(values[0]), str(values[-1]),
                     f"{min(numbers):,}" if numbers else "-",
                     f"{max(numbers):,}" if numbers else "-", str(len(values))])
    return rows


def detail_tables(doc: Document, entry: Entry, axes: list[str]) -> None:
    """The entry's per-repetition tables, notes and warnings (its family's), and the adaptive stop
    rule."""
    label = f"point {entry.name}: {point_label(entry, axes)}"
    found = family(entry)
    for header, rows, caption in found.details(entry):
        doc.table(header, rows, f"{label}: {caption}")
    for note in found.notes(entry):
        doc.paragraph(f"{label}: note: {note}")
    for warning in found.warnings(entry):
        doc.paragraph(f"{label}: warning: {warning}")
    counters = dut_counters(entry)
    if counters:
        doc.table(["counter", "first", "last", "min", "max", "trials"], counters,
                  f"{label}: DUT counters after each trial (dut.counters)")
    sizes = imix_table(entry)
    if sizes:
        doc.table(*sizes, f"{label}: frames per IMIX frame size (RFC 6985)")
    rule = entry.summary.get("repetition_rule")
    if rule:
        interval = rule.get("interval")
        doc.paragraph(f"{label}: adaptive repetitions stopped "
                      f"({rule.get('stopped') or 'not yet'}) after n = {rule.get('n')}; "
                      f"median confidence interval {interval} (coverage "
                      f"{rule.get('coverage')}).")
