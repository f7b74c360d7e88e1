# SPDX-License-Identifier: BSD-3-Clause
"""RFC 9693 stateful NATxy tests in the configuration: roles, the enumerated fields, the rules
of check_stateful() (methodology §12, §14 items 26-29), the derived N, M, D, and the reporting
items that the configuration determines.

The Initiator (stateful.initiator: the left or right tester port) may open connections through
the DUT; the Responder (the other port) only answers, with four-tuples it learned. How the
phases run is xlatperf/measure/stateful.py; the procedures are xlatperf/procedures/stateful.py.
"""

import math
from dataclasses import dataclass

from ..util.errors import key_error
from ..frames.kinds import foreground_addresses
from ..frames.kinds.ipv4aas import ce_count, emulates_ces
from ..frames.technology import AFTR, DS_LITE, role_of
from ..frames.trial import active_directions, has_background
from .limits import MAX_QUEUES, STREAM_IDS, stream_ids_needed
from .variation import varying_fields

PORT_FIELDS = ("src_port", "dst_port")
ADDRESS_FIELDS = ("src_ip", "dst_ip")
ENUMERATED = {"none": (), "ports": PORT_FIELDS, "addresses": ADDRESS_FIELDS,
              "both": PORT_FIELDS + ADDRESS_FIELDS}


def roles(config: dict) -> tuple[str, str, str, str]:
    """(Initiator side, Responder side, Initiator's direction, Responder's direction)."""
    initiator = config.stateful.initiator
    responder = "right" if initiator == "left" else "left"
    forward = "forward" if initiator == "left" else "reverse"
    backward = "reverse" if forward == "forward" else "forward"
    return initiator, responder, forward, backward


def public_ports(config: dict) -> tuple[int, int] | None:
    """stateful.public_ports as (low, high): the source ports the NAT sends the Initiator's
    frames on from; None when not stated."""
    text = config.stateful.public_ports
    if not text:
        return None
    low, _, high = text.partition("-")
    return int(low), int(high)


def foreground_frames(frames: int, mix_n: int, mix_m: int) -> int:
    """How many of `frames` frames are foreground: frame k is when k % n < m."""
    return (frames // mix_n) * mix_m + min(frames % mix_n, mix_m)


def _field_key(config: dict, vary: dict) -> str:
    """The configuration key that makes a vary field vary."""
    initiator, responder, direction, _ = roles(config)
    name = vary["field"]
    if name in PORT_FIELDS:
        return f"ports.{direction}_{name[:3]}"
    return f"addresses.{initiator if name == 'src_ip' else responder}"


@dataclass(frozen=True)
class Enumeration:
    """The phase-1 vary list of the Initiator's foreground frames: the enumerated fields get
    mode "enumerate"; `combinations` is the product of their range sizes (1 with none)."""
    vary: list[dict]
    enumerated: list[dict]
    varying: list[dict]          # every varying port or 16-bit address field, enumerated or not
    combinations: int
    # Emulated CEs (docs/ipv4aas.md) that take turns frame by frame with a number of them prime
    # to the tuples': frame s comes from CE s mod n with tuple s mod C, so phase 1 opens n x C
    # connections, each tuple from every CE (two B4s behind one private address: RFC 6333
    # §6.6's case). 1 otherwise.
    ces: int = 1


def enumeration(config: dict) -> Enumeration:
    initiator, _, direction, _ = roles(config)
    chosen = ENUMERATED[config.stateful.enumerate]
    vary, enumerated, varying = [], [], []
    for entry in varying_fields(config, direction, config.side(initiator).ip_version):
        whole = entry.get("bits", 16) == 16  # not RFC 2544 §12's 8-bit network byte
        if whole:
            varying.append(entry)
        if whole and entry["field"] in chosen:
            entry = {**entry, "mode": "enumerate"}
            enumerated.append(entry)
        vary.append(entry)
    combinations = math.prod(e["max"] - e["min"] + 1 for e in enumerated)
    ces = 1
    if initiator == "left" and emulates_ces(config) and config.ipv4aas.ce_mode == "increasing" \
            and config.tester.queues == 1 and math.gcd(ce_count(config), combinations) == 1:
        ces = ce_count(config)
    return Enumeration(vary, enumerated, varying, combinations * ces, ces)


def check_stateful(config: dict) -> None:
    """The RFC 9693 / siitperf rules (methodology §12, §14 items 26-29); ConfigError names the
    keys. Called by config validation when stateful.enabled, and by the stateful procedures."""
    s = config.stateful
    initiator, responder, direction, _ = roles(config)
    for key in foreground_addresses(config, direction):
        if config.value(key) == "":
            raise key_error(key, "", f"must be an IPv{key[-1]} address: the Initiator "
                                  f"({initiator}) sends the phase-1 frames with it")
    what = s.enumerate
    e = enumeration(config)
    varying_ports = [_field_key(config, v) for v in e.varying if v["field"] in PORT_FIELDS]
    varying_addresses = [_field_key(config, v) for v in e.varying if v["field"] in ADDRESS_FIELDS]
    if what in ("ports", "both") and not varying_ports:
        raise key_error("stateful.enumerate", what,
                     f"enumerating ports needs varying ports in the Initiator's ({direction}) "
                     f"frames: set ports.{direction}_src and/or ports.{direction}_dst to "
                     f'"random", "increasing" or "decreasing" (their _min/_max are the ranges)')
    if what in ("addresses", "both") and not varying_addresses:
        raise key_error("stateful.enumerate", what,
                     f"enumerating addresses needs varying addresses: set addresses.{initiator} "
                     f"and/or addresses.{responder} to \"random\", \"increasing\" or "
                     f'"decreasing" (their _min/_max are the ranges)')
    # siitperf Table I: IP addresses and ports are enumerated together (in the same order, here
    # by construction: one stateful.order) unless one of the two is fixed.
    others = {"ports": (varying_addresses, "addresses"),
              "addresses": (varying_ports, "ports")}.get(what)
    if others and others[0]:
        keys, kind = others
        raise key_error("stateful.enumerate", what,
                     f"{' and '.join(keys)} also vary{'s' if len(keys) == 1 else ''}, so phase 2 "
                     f"would send {kind} that phase 1 never used: enumerate both "
                     f'(stateful.enumerate = "both", in the same order) or set '
                     f'{" and ".join(keys)} = "fixed" (siitperf Table I: IP and port '
                     "enumeration combine only when one is fixed or both are enumerated)")
    nets = getattr(config.addresses, f"{responder}_nets")
    if what != "none" and nets > 1:
        raise key_error(f"addresses.{responder}_nets", nets,
                     "must be 1 when phase-1 tuples are enumerated: the destination networks "
                     "would add tuples that phase 1 does not enumerate")
    traffic = config.traffic
    frames = foreground_frames(s.connections, traffic.mix_n, traffic.mix_m)
    if what != "none" and frames > e.combinations:
        raise key_error("stateful.connections", s.connections,
                     f"must give at most {e.combinations:,} foreground frames, the combinations "
                     f"of the enumerated ranges ({_ranges(config, e)}): each tuple is sent once "
                     "in phase 1"
                     + (f" (with mix {traffic.mix_m}/{traffic.mix_n}, {frames:,} of the "
                        "frames are foreground)" if has_background(config) else ""))
    if s.table_size > frames:
        raise key_error("stateful.table_size", s.table_size,
                     f"must be at most the {frames:,} foreground frames of phase 1 "
                     f"(stateful.connections = {s.connections:,}"
                     + (f", mix {traffic.mix_m}/{traffic.mix_n}" if has_background(config)
                        else "") + "); 0 = all of them")
    if s.transport == "tcp":
        _check_tcp(config)
    elif s.teardown != "hook":
        raise key_error("stateful.teardown", s.teardown,
                        'must be "hook" with stateful.transport = "udp": closing connections with '
                        'FIN or RST needs TCP ones (stateful.transport = "tcp")')
    minimum = s.connections / s.rate_phase1 + s.timeout_phase1
    if s.gap and s.gap < minimum:
        raise key_error("stateful.gap", s.gap,
                     f"must be at least N/R + T = {s.connections:,}/{s.rate_phase1:,} + "
                     f"{s.timeout_phase1:g} = {minimum:.6g} s (RFC 9693: phase 2 starts after "
                     "phase 1 and its timeout), or 0 for N/R + 2T")


TCP_HANDSHAKE_FLOWS = 4  # SYN, SYN-ACK, ACK, window ACK (docs/tcp.md)


def _check_tcp(config: dict) -> None:
    """What phase 1 over TCP sends: a SYN per connection in one stream, plain or (through a
    DS-Lite AFTR) in the softwires of emulated B4s."""
    why = None
    a = config.ipv4aas
    if has_background(config):
        why = "no background traffic (traffic.mix): phase 1 over TCP sends only SYNs"
    elif config.traffic.imix:
        why = "no IMIX (traffic.imix): a SYN has one size"
    elif a.technology and role_of(config) is not AFTR:  # the engine's emulated B4s (docs/tcp.md)
        why = (f"not with ipv4aas.technology = {a.technology!r} and ipv4aas.role = {a.role!r}: "
               f'of the IPv4aaS set-ups, TCP goes through a {DS_LITE.name} {AFTR.name} only (technology '
               f'"{DS_LITE.key}", role "{AFTR.key}")')
    if why:
        raise key_error("stateful.transport", "tcp", f"must be udp here, or {why}")
    # The engine turns a handshake's SYN flow into four (the SYN-ACKs, ACKs and window ACKs
    # answering it), each with stream ids on every queue.
    most = max(q for q in range(1, MAX_QUEUES + 1) if stream_ids_needed(TCP_HANDSHAKE_FLOWS, 1, q) <= STREAM_IDS)
    if config.tester.queues > most:
        raise key_error("tester.queues", config.tester.queues,
                        f"must be at most {most} with stateful.transport = \"tcp\": a handshake's "
                        f"{TCP_HANDSHAKE_FLOWS} flows need {stream_ids_needed(TCP_HANDSHAKE_FLOWS, 1, config.tester.queues)} "
                        f"of the test tag's {STREAM_IDS} stream ids on {config.tester.queues} queues")


def _ranges(config: dict, e: Enumeration) -> str:
    """The enumerated ranges for a message: "ports.forward_src 100 x ports.forward_dst 100"."""
    ces = [f"{e.ces} CEs taking turns"] if e.ces > 1 else []
    return " x ".join([f"{_field_key(config, v)} {v['max'] - v['min'] + 1}" for v in e.enumerated] + ces)


def _frames_for(foreground: int, mix_n: int, mix_m: int) -> int:
    """The fewest frames of which `foreground` are foreground (inverse of foreground_frames)."""
    periods, rest = divmod(foreground, mix_m)
    return (periods - 1) * mix_n + mix_m if rest == 0 else periods * mix_n + rest


def check_phase2(config: dict) -> None:
    """RFC 9693 phase 2 uses only connections phase 1 established (methodology §12.5: phase-2
    tests exercise existing connections only; §12.4: phase 1 sends every combination). The
    Initiator's phase-2 frames vary over the same ranges as phase 1, so phase 1 must send every
    four-tuple they can carry: all the combinations of the enumerated ranges. Otherwise each
    unsent tuple opens a connection during the measurement, and what the report calls the DUT's
    forwarding loss is partly its connection set-up (or its table overflowing).

    Only for procedures with a phase 2 whose Initiator's direction sends: connection-rate,
    teardown-rate and table-capacity send no Initiator traffic after phase 1, so they may
    establish fewer connections than there are combinations (table-capacity must)."""
    s, traffic = config.stateful, config.traffic
    _, responder, direction, backward = roles(config)
    if direction not in active_directions(config):
        return  # phase 2 sends only from the state table: no new tuple can appear
    only_responder = (f"or measure only the Responder's direction (traffic.direction = "
                      f'"{backward}")')
    e = enumeration(config)
    if s.enumerate == "none":
        varying = [_field_key(config, v) for v in e.varying]
        if getattr(config.addresses, f"{responder}_nets") > 1:
            varying.append(f"addresses.{responder}_nets")
        if varying:
            raise key_error("stateful.enumerate", "none",
                         f"{', '.join(varying)} vary in the Initiator's ({direction}) frames, and "
                         "phase 1 without enumeration does not send every combination, so phase "
                         "2 would open new connections (RFC 9693 phase 2 uses only established "
                         'ones): enumerate them (stateful.enumerate = "ports", "addresses" or '
                         f'"both"), set them "fixed" (nets: 1), {only_responder}')
        return
    frames = foreground_frames(s.connections, traffic.mix_n, traffic.mix_m)
    if frames < e.combinations:
        needed = _frames_for(e.combinations, traffic.mix_n, traffic.mix_m)
        raise key_error("stateful.connections", s.connections,
                     f"must send all {e.combinations:,} combinations of the enumerated ranges "
                     f"({_ranges(config, e)}) in phase 1 when phase 2 sends in the Initiator's "
                     f"({direction}) direction, not {frames:,}"
                     + (f" foreground frames (mix {traffic.mix_m}/{traffic.mix_n})"
                        if has_background(config) else "")
                     + ": phase 2's Initiator frames vary over the same ranges, and every tuple "
                     "phase 1 did not send would open a new connection, which RFC 9693 phase 2 "
                     f"must not; set stateful.connections = {needed:,}, narrow the ranges, "
                     + only_responder)


def gap_seconds(config: dict, connections: int | None = None, rate: int | None = None) -> float:
    """D for phase 1 with `connections` frames at `rate` (default: stateful.connections at
    stateful.rate_phase1): stateful.gap, or N/R + 2T (siitperf's scripts) when it is 0. A search
    varies N and R, so an explicit gap below N/R + T (RFC 9693's minimum) is raised to it; for
    the configured N and R check_stateful() already refused such a gap."""
    s = config.stateful
    n = s.connections if connections is None else connections
    r = s.rate_phase1 if rate is None else rate
    if not s.gap:
        return n / r + 2 * s.timeout_phase1
    return max(s.gap, n / r + s.timeout_phase1)


def table_size(config: dict, connections: int | None = None) -> int:
    """M for `connections` phase-1 frames: stateful.table_size for the configured N (0: every
    foreground frame), every foreground frame for any other number (the capacity search)."""
    s, traffic = config.stateful, config.traffic
    frames = s.connections if connections is None else connections
    if s.table_size and frames == s.connections:
        return s.table_size
    return foreground_frames(frames, traffic.mix_n, traffic.mix_m)


def _range(vary: dict | None, fixed, enumerated: set) -> str:
    if vary is None:
        return f"fixed {fixed}"
    size = vary["max"] - vary["min"] + 1
    where = f" at byte offset {vary['offset']} of {fixed}" if "offset" in vary else ""
    phase1 = ", enumerated in phase 1" if vary["field"] in enumerated else ""
    return f"{vary['min']}..{vary['max']} ({size:,}){where}, {vary['mode']}{phase1}"


def reporting_items(config: dict) -> dict:
    s, traffic = config.stateful, config.traffic
    initiator, responder, forward, _ = roles(config)
    e = enumeration(config)
    by_field = {v["field"]: v for v in e.varying}
    enumerated = {v["field"] for v in e.enumerated}
    source, destination = foreground_addresses(config, forward)
    value = {key: config.value(key) for key in (source, destination)}
    return {
        "initiator": initiator, "responder": responder, "initiator_direction": forward,
        "connections": s.connections, "table_size": table_size(config),
        "rate_phase1": s.rate_phase1, "timeout_phase1": s.timeout_phase1,
        "gap": gap_seconds(config), "enumerate": s.enumerate, "order": s.order,
        "enumerated_fields": [_field_key(config, v) for v in e.enumerated],
        "combinations": e.combinations if e.enumerated else None,
        "source_ports": _range(by_field.get("src_port"), traffic.src_port, enumerated),
        "destination_ports": _range(by_field.get("dst_port"), traffic.dst_port, enumerated),
        "source_addresses": _range(by_field.get("src_ip"), value[source], enumerated),
        "destination_addresses": _range(by_field.get("dst_ip"), value[destination], enumerated),
        "transport": s.transport, "teardown": s.teardown,
        "selection": s.selection, "validation": s.validation,
        "validation_factor": s.validation_factor, "retakes": s.retakes,
        "dut": config.dut.description,
        "before_trial": config.dut.before_trial,
    }
