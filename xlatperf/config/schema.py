# SPDX-License-Identifier: BSD-3-Clause
"""The configuration's key table (docs/config.md): every section's keys, each with its default
and its value checker (checkers.py, ports.py, and the DNS, IPv4aaS checkers of their modules).
Loading and validating a configuration against it: loading.py; the rules that involve several
keys: crosscheck.py."""

from dataclasses import dataclass
from typing import Any

from ..frames.imix import check_imix
from ..frames.stack import IP_STACKS, MAX_FRAME_SIZE
from ..frames.trial import RFC4814_PORTS
from .checkers import (Checker, boolean, choice, dut_variables, eal_arguments, flow_counts, hops, integer, lcores,
                       mac, number, port_range, rate_list, speed, ssh_options, ssh_target, string, vlan_id,
                       address)
from .dns import prefix_list, records_prefix, rfc6052_prefix, server as dns_server, zone as dns_zone
from .ipv4aas import TECHNOLOGY_CHOICES
from .ipv4aas import prefix as ipv4aas_prefix
from .limits import MAX_CAPTURE_FRAMES, MAX_QUEUES
from .mlrgoals import check_goals, check_preset
from .ports import port

@dataclass(frozen=True)
class Key:
    default: Any
    check: Checker


def _side(port_spec: str, ipv4: str, ipv6: str, dut_mac: str) -> dict[str, Key]:
    return {
        "port": Key(port_spec, port),
        "speed": Key("", speed("as the port reports")),
        "ip_version": Key(4, choice(4, 6)),
        "ipv4": Key(ipv4, address(4, optional=True)),
        "ipv6": Key(ipv6, address(6, optional=True)),
        "virtual_ipv4": Key("", address(4, optional=True)),
        "virtual_ipv6": Key("", address(6, optional=True)),
        "mac": Key("", mac(optional=True, unicast=True)),
        # "" = resolve it with ARP / Neighbor Solicitation for dut_ipv4 / dut_ipv6
        "dut_mac": Key(dut_mac, mac(optional=True, unicast=False)),
        "dut_ipv4": Key("", address(4, optional=True)),  # the DUT's address on this side
        "dut_ipv6": Key("", address(6, optional=True)),
        # Gateway setups (multiple-IP draft Figs. 3 and 5): the address the DUT routes this
        # side's test addresses to; the tester answers ARP/ND for it.
        "next_hop_ipv4": Key("", address(4, optional=True)),
        "next_hop_ipv6": Key("", address(6, optional=True)),
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
        "endpoint_ipv6": Key("", address(6, optional=True)),
        # 6rd: the BR's IPv4 address (RFC 5969 §7.1.1's 6rdBRIPv4Address), the tunnels' end.
        "endpoint_ipv4": Key("", address(4, optional=True)),
        # CE roles: the IPv6 address of the CE the DUT is (a B4's softwire address, an lwB4's in
        # the binding table, a MAP CE's MAP address); its IPv4 address and ports follow.
        "ce_ipv6": Key("", address(6, optional=True)),
        # 6rd's CE role: the CE's IPv4 address; its delegated prefix follows (RFC 5969 §4).
        "ce_ipv4": Key("", address(4, optional=True)),
        # MAP-E / MAP-T Basic Mapping Rule (RFC 7597 §5) and MAP-T's Default Mapping Rule prefix;
        # 6rd's domain (RFC 5969 §4): the 6rd prefix, the CEs' common IPv4 prefix (its length
        # is IPv4MaskLen) and ea_bits = 32 - IPv4MaskLen.
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


# [dut] is open: a key that is not one of its settings is a DUT variable (dut.cores = 4), kept
# in dut.variables, for hook templates and reports (docs/campaigns.md, "DUT hooks"). The check
# that every variable is used by a hook (crosscheck.py) catches a misspelt hook key.
VARIABLE_SECTION = "dut"

# The [dut] keys that are commands (templates, xlatperf/config/templates.py), in the order a
# measurement runs them (xlatperf/measure/hooks.py).
HOOK_KEYS = ("before_point", "before_repetition", "before_trial", "wait_until", "during_trial",
             "counters", "after_trial", "after_repetition", "after_point", "teardown")
