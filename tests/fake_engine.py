#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A stand-in for xlatperf-engine that speaks the protocol of docs/protocol.md without DPDK, for
testing the front end. It validates requests as the engine does (unknown keys, ranges) and
answers with the engine's reply shapes and typed errors; tests/test_protocol_transcripts.py
replays the engine's transcripts (engine/tests/transcripts) through it. Its behaviour comes from environment variables:

  FAKE_DUT_LIMIT        the simulated DUT forwards every frame at rates <= this (fps), and
                        LIMIT x duration frames above it (default: no limit)
  FAKE_DUT_BUFFER       the simulated DUT buffers this many frames: a burst (a flow with
                        `frames`) of N frames at a rate above FAKE_DUT_LIMIT loses none while
                        N <= BUFFER + LIMIT x N / rate (RFC 9004's model; default 0)
  FAKE_DUT_CLIENT_PENALTY  the DUT's limit with n client addresses (the 16-bit src_ip or dst_ip
                        range of a flow) is FAKE_DUT_LIMIT / (1 + PENALTY x (n - 1))
  FAKE_DUT_LIMIT_FILE   read FAKE_DUT_LIMIT from this file at every trial instead (a DUT hook
                        writes it: the DUT's configuration changes between campaign points)
  FAKE_TESTER_LIMIT     above this rate the trial is invalid, as if the tester could not keep it
  FAKE_HICCUPS          "N:SECONDS[:AT]": the next N trials' sender is descheduled once for
                        SECONDS, AT seconds into the trial (default: at its very end), then
                        catches up in a burst. With the request's max_lag a lag above it makes
                        the trial invalid (all frames sent, `lagged` counted); without, a hiccup
                        at the end leaves SECONDS x rate frames unsent (siitperf's rule), one in
                        the middle passes
  FAKE_TESTER_DROPS     "N:FRAMES": the next N trials' receiving port misses FRAMES frames
                        itself (imissed), counted as lost by the flow received there
  FAKE_TRIAL_SECONDS    real seconds a trial takes (default 0), progress events every interval
  FAKE_SPEED_MBPS       link speed reported for every port (default 10000)
  FAKE_LINK_DOWN        comma-separated port indexes whose link hello reports down (as after
                        the engine's wait gave up)
  FAKE_LINK_FLAPS       "N": the next N trials are invalid, a port's link having gone down
                        during each (the engine's `link_down`)
  FAKE_PAUSE_FRAMES     every trial's receiving port counts this many pause frames received
                        (rx_xoff_packets)
  FAKE_FAIL             print this to stderr and exit 1 at start (e.g. a missing interface)
  FAKE_REQUEST_LOG      append every request line to this file
  FAKE_DELAY_NS         one-way delay of every frame for delay measurements (default 10000):
                        tagged frame j has FAKE_DELAY_NS + j, the histogram spans [D, 2 D]
  FAKE_TAGGED_LOST      how many tagged frames (the first ones) are reported lost
  FAKE_CONN_RATE        stateful DUT: phase-1 frames (a trial with `learn`) above this rate
                        establish only CONN_RATE x duration connections; the rest are lost
  FAKE_TABLE_CAPACITY   stateful DUT: its connection table keeps the last CAPACITY connections
                        (evicting older ones), so frames from the state table built on an evicted
                        connection are lost; every phase 1 starts from an empty table
  FAKE_FILL_FAILURES    stateful DUT: the first K phase-1 trials of the engine process lose
                        half their frames (a state table that did not fill, to be retaken)
  FAKE_DUT_LOSS_PERIODS a flow with rate steps: a stretch above FAKE_DUT_LIMIT loses what
                        exceeds LIMIT x its length as this many periods spread evenly over it,
                        each at the end of its share of the stretch (default 1)
  FAKE_DUT_RECOVERY     ... and the stretch after it loses every frame due in its first
                        RECOVERY seconds (the DUT's recovery time, RFC 2544 §26.5; default 0)
  FAKE_MSS_CLAMP        TCP: the DUT clamps the MSS of SYNs and SYN-ACKs to this (their
                        streams' mss_min; default: as sent, 1460 over IPv4, 1440 over IPv6)
  FAKE_DUT_OUTAGE_FILE  while a trial runs (FAKE_TRIAL_SECONDS), once this file appears (a DUT
                        hook writes it), every flow loses the frames due in the next L seconds
                        of trial time, L being the file's content; the file is then removed
"""

import base64
import ipaddress
import json
import math
import os
import re
import signal
import struct
import sys
import time
from collections import Counter

from xlatperf.config.limits import (MAX_CAPTURE_FRAMES, MAX_DURATION, MAX_FLOWS, MAX_PATTERN, MAX_QUEUES, MAX_TUNNELS,
                                    STREAM_IDS, stream_ids_needed)
from xlatperf.frames.stack import MAX_FRAME_SIZE
from xlatperf.config.schema import MIN_FRAME_SIZE
from xlatperf.engine.client import MAX_FRAME_DEFAULT
from xlatperf.frames.stack import ETHERNET_BYTES, IP_HEADERS, IP_STACKS, UDP_BYTES, Stack

aborted = False
queues = 1          # RX/TX queue pairs per port (--queues)
max_frame = MAX_FRAME_DEFAULT    # the largest frame on the wire the ports carry (--max-frame-size)
state_tables = {}   # port -> learned entries (the engine's Responder state tables)
phase1_trials = 0   # phase-1 trials (with `learn`) so far, for FAKE_FILL_FAILURES


PROTOCOL = "2.21"
PORT_COUNT = 2
# hello's limits: the frame sizes as the front end mirrors them, the tag layout as the engine
# reports it (docs/protocol.md, "Test frame payload").
LIMITS = {"min_frame_size": {"ipv4": MIN_FRAME_SIZE[4], "ipv6": MIN_FRAME_SIZE[6]},
          "max_frame_size": MAX_FRAME_SIZE,
          "max_queues": MAX_QUEUES, "max_tunnels": MAX_TUNNELS,
          "ip_headers": [{"name": layer.name, "version": version, "bytes": layer.header_bytes}
                         for version, layer in IP_HEADERS.items()],
          "max_flows": MAX_FLOWS, "max_duration": MAX_DURATION,
          "stream_ids": STREAM_IDS, "max_pattern": MAX_PATTERN,
          "max_capture_frames": MAX_CAPTURE_FRAMES,
          "tag": {"magic": "XLAT", "size": 18, "ce": {"offset": 4, "size": 2}, "stream_id": {"offset": 6, "size": 1},
                  "trial_tag": {"offset": 7, "size": 1}, "sequence": {"offset": 8, "size": 4},
                  "timestamp": {"offset": 12, "size": 6}}}


# --------------------------------------------------------------------------------------------
# Validation with the engine's messages (engine/src/protocol/: trial.cpp and the parsers it calls)
# --------------------------------------------------------------------------------------------

KEYS = {
    "trial": ("id", "op", "duration", "timeout", "progress_interval", "seed", "finish_early", "delay",
              "learn", "losses", "capture", "max_lag", "dns", "flows"),
    "capture": ("frames", "stride", "snaplen", "foreign"),
    "delay": ("frame_timeout", "histogram", "ipdv", "tagged", "tagged_start"),
    "flow": ("name", "tx_port", "rx_port", "rate", "rate_steps", "frames", "mix", "foreground",
             "background", "streams", "pattern", "from_table", "tcp", "dns"),
    "dns": ("zone", "names", "a", "aaaa", "aaaa_share", "ttl", "soa_ttl", "soa_minimum", "authoritative"),
    "flow_dns": ("qtype", "edns", "ports", "nonce", "names_from", "synthesis", "exclude", "mapped", "checks",
                 "repeat", "repeat_after"),
    "rate_step": ("at", "rate"),
    "mix": ("n", "m"),
    "stream": ("ip_version", "src_mac", "dst_mac", "src_ip", "dst_ip", "src_port", "dst_port", "tos", "ttl",
               "flow_label", "frame_size", "rx_frame_size", "vlan", "rx_vlan", "vary", "enumerate", "tunnel", "ce", "rx"),
    "tunnel": ("version", "src_ip", "dst_ip"),
    "rx_tunnel": ("version", "src_ip", "dst_ip", "carries_tos"),
    "rx": ("ip_version", "src_ip", "dst_ip", "src_port", "dst_port", "tunnel", "ttl", "tos", "ecn", "df", "count_df", "flow_label",
           "count_tunnel_ecn", "src_mac", "dst_mac", "checksums", "ipv6_zero_udp_checksum", "vary"),
    "ce": ("map", "b4", "softwires", "count", "first", "side", "mode", "fields", "rx_fields", "prefix_hosts", "tag"),
    "vary": ("field", "mode", "min", "max", "offset", "bits"),
    "from_table": ("port", "selection"),
    "learn": ("port", "flow", "table_size", "ip_version"),
    "addresses": ("id", "op", "ports"),
    "address_port": ("port", "ranges"),
    "range": ("ip_version", "address", "offset", "min", "max"),
    "resolve": ("id", "op", "port", "ip_version", "own_ip", "target", "timeout", "vlan"),
    "hello": ("id", "op"),
    "shutdown": ("id", "op"),
}
MISSING = object()
DNS_VERDICTS = ("malformed", "mismatch", "truncated", "servfail", "nxdomain", "other_rcode", "wrong_answer",
                "duplicate_record", "bad_ttl", "no_edns", "no_ra", "question_case", "duplicate_reply")
DNS_CHECKS = ("ttl", "ttl_a_record", "edns", "ra", "question", "duplicates", "upstream", "upstream_expired")


class RequestError(Exception):
    def __init__(self, kind, message, key=None):
        super().__init__(message)
        self.error = {"type": kind, "message": message, **({"key": key} if key else {})}


def bad(key, value, allowed):
    # Compact JSON as the engine's nlohmann::json dump() writes it ([1,2], not [1, 2]; an
    # object's keys in order).
    text = json.dumps(value, separators=(',', ':'), sort_keys=True)
    raise RequestError("bad_parameter", f"{key} = {text}: {allowed}", key)


def known(obj, path, kind):
    if not isinstance(obj, dict):
        bad(path[:-1] if path else "request", obj, "must be an object")
    for key in obj:
        if key not in KEYS[kind]:
            raise RequestError("bad_parameter", f"{path}{key}: unknown key (keys: "
                               f"{', '.join(KEYS[kind])})", path + key)


def require(obj, path, key):
    if key not in obj:
        raise RequestError("bad_parameter", f"{path}{key}: missing", path + key)
    return obj[key]


def number_in(obj, path, key, low, high, default=MISSING):
    if default is not MISSING and key not in obj:
        return default
    value = require(obj, path, key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        bad(path + key, value, f"must be a number in {json.dumps(float(low))}..{json.dumps(float(high))}")
    return value


def integer_in(obj, path, key, low, high, default=MISSING):
    if default is not MISSING and key not in obj:
        return default
    value = require(obj, path, key)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        bad(path + key, value, f"must be an integer in {low}..{high}")
    return value


def ip_version_of(obj, path):
    version = require(obj, path, "ip_version")
    if version not in (4, 6) or isinstance(version, bool):
        bad(path + "ip_version", version, "must be 4 or 6")
    return version


def address(obj, path, key, version):
    text = require(obj, path, key)
    try:
        if ipaddress.ip_address(text).version == version:
            return text
    except (ValueError, TypeError):
        pass
    bad(path + key, text, f"'{text}' is not an IPv{version} address")


def frames_in_pattern(pattern, index, total):
    """Frames of stream `index` among a flow's first `total` frames (frame k: pattern[k % len])."""
    n = len(pattern)
    return total // n * pattern.count(index) + pattern[:total % n].count(index)


def streams_of(flow):
    """(streams, pattern) of a flow in either form (the engine's parse_streams): each stream a
    spec with its "kind"."""
    if "streams" in flow:
        return [{"kind": "foreground", **s} for s in flow["streams"]], flow["pattern"]
    n, m = flow.get("mix", {}).get("n", 1), flow.get("mix", {}).get("m", 1)
    streams = [{"kind": "foreground", **flow["foreground"]}]
    if m < n:
        streams.append({"kind": "background", **flow["background"]})
    return streams, [0 if k < m else 1 for k in range(n)]


MAX_VLAN_ID = 4094


def vlan_of(obj, path, key):
    """A list of at most two VLAN IDs in 1..4094, outermost first (the engine's rule)."""
    value = obj.get(key, [])
    if not isinstance(value, list) or len(value) > 2 or not all(
            isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_VLAN_ID for v in value):
        bad(path + key, value, f"must be a list of at most 2 VLAN IDs in 1..{MAX_VLAN_ID}, outermost first")
    return value


def tunnel_version(tunnel, path):
    """A `tunnel` object's header version (stream and rx alike): 6 unless it says 4."""
    version = integer_in(tunnel, path, "version", 4, 6, 6)
    if version not in (4, 6):
        bad(path + "version", version, "must be 4 or 6")
    return version


def tunnels_of(obj, path, kind, keys):
    """The tunnel headers `obj.tunnel` names (stream and rx alike), outermost first: one object or
    a list of 1..MAX_TUNNELS of them; each with its path ("tunnel." or "tunnel[i].") and version."""
    tunnel = obj.get("tunnel")
    if tunnel is None:
        return []
    allowed = (f"must be an object {keys}, or a list of 1..{MAX_TUNNELS} of them (nested tunnels, "
               "outermost first)")
    if isinstance(tunnel, dict):
        items = [(tunnel, path + "tunnel.")]
    elif not isinstance(tunnel, list) or not 1 <= len(tunnel) <= MAX_TUNNELS or not all(
            isinstance(t, dict) for t in tunnel):
        bad(path + "tunnel", tunnel, allowed)
    else:
        items = [(t, f"{path}tunnel[{i}].") for i, t in enumerate(tunnel)]
    versions = []
    for item, item_path in items:
        known(item, item_path, kind)
        versions.append(tunnel_version(item, item_path))
        for key in ("src_ip", "dst_ip"):
            if key in item or kind == "tunnel":
                address(item, item_path, key, versions[-1])
        if not isinstance(item.get("carries_tos", False), bool):
            bad(item_path + "carries_tos", item["carries_tos"], "must be true or false")
    return versions


def validate_stream(stream, path):
    known(stream, path, "stream")
    version = ip_version_of(stream, path)
    tunnels = tunnels_of(stream, path, "tunnel", "{version, src_ip, dst_ip} (addresses of the version)")
    stack = Stack.of_ip(*tunnels, version)
    integer_in(stream, path, "frame_size", stack.min_frame, MAX_FRAME_SIZE)
    vlan_of(stream, path, "vlan")
    vlan_of(stream, path, "rx_vlan")
    for vary in stream.get("vary", []):
        known(vary, path + "vary[].", "vary")
    if "ce" in stream:  # (the engine checks the rest: a fake DUT maps no CE wrongly)
        known(stream["ce"], path + "ce.", "ce")
    integer_in(stream, path, "tos", 0, 255, 0)
    integer_in(stream, path, "ttl", 1, 255, 10)
    if "rx" in stream:
        validate_rx(stream["rx"], path + "rx.", stream.get("rx_frame_size", stream["frame_size"]))


def validate_rx(rx, path, rx_frame_size):
    """A stream's header checks (docs/protocol.md "Header checks"), with the engine's messages
    (engine/src/protocol/streams.cpp parse_rx); the fake DUT writes every header right, so none fails."""
    if not isinstance(rx, dict):
        bad(path[:-1], rx, "must be an object {ip_version, ...}")
    known(rx, path, "rx")
    version = ip_version_of(rx, path)
    for key in ("src_ip", "dst_ip"):
        if key in rx:
            address(rx, path, key, version)
    for key in ("src_port", "dst_port"):
        integer_in(rx, path, key, 0, 65535, None)
    tunnels = tunnels_of(rx, path, "rx_tunnel", "{version, src_ip, dst_ip, carries_tos} (each optional)")
    if "ttl" in rx:  # a number or an inclusive range [low, high]
        ttl, allowed = rx["ttl"], "must be a TTL 0..255 or a range [low, high] of them"
        ends = ttl if isinstance(ttl, list) and len(ttl) == 2 else [ttl]
        if isinstance(ttl, list) and len(ttl) != 2 or not all(
                isinstance(t, int) and not isinstance(t, bool) and 0 <= t <= 255 for t in ends):
            bad(path + "ttl", ttl, allowed)
        if ends[0] > ends[-1]:
            bad(path + "ttl", ttl, allowed + " (low <= high)")
    integer_in(rx, path, "tos", 0, 255, None)
    for key in ("src_mac", "dst_mac"):
        if key in rx and not re.fullmatch(r"[0-9a-fA-F]{1,2}(:[0-9a-fA-F]{1,2}){5}", str(rx[key])):
            bad(path + key, rx[key], f"'{rx[key]}' is not a MAC address (xx:xx:xx:xx:xx:xx)")
    ecn = rx.get("ecn", [0])
    if not isinstance(ecn, list) or not ecn or len(set(map(str, ecn))) != len(ecn) or not all(
            isinstance(e, int) and not isinstance(e, bool) and 0 <= e <= 3 for e in ecn):
        bad(path + "ecn", ecn, "must be a list of ECN codepoints 0..3 (Not-ECT, ECT(1), ECT(0), CE), each once")
    for key in ("df", "count_df", "count_tunnel_ecn", "checksums", "ipv6_zero_udp_checksum"):
        if not isinstance(rx.get(key, True), bool):
            bad(path + key, rx[key], "must be true or false")
    if "df" in rx and version != 4:
        bad(path + "df", rx["df"], "only for IPv4 arrivals (ip_version 4)")
    if rx.get("count_df") and (version != 4 or rx.get("df")):
        bad(path + "count_df", rx["count_df"], "only for IPv4 arrivals (ip_version 4) without df")
    if rx.get("count_tunnel_ecn") and not tunnels:
        bad(path + "count_tunnel_ecn", rx["count_tunnel_ecn"], "only for frames that arrive in a tunnel (rx.tunnel)")
    for index, vary in enumerate(rx.get("vary", [])):
        known(vary, f"{path}vary[{index}].", "vary")
    # The frame the DUT should deliver must exist: its headers fit rx_frame_size.
    stack = Stack.of_ip(*tunnels, version)
    if not stack.min_frame <= rx_frame_size <= MAX_FRAME_SIZE:
        bad(path[:-1], rx, f"no such frame of rx_frame_size {rx_frame_size} bytes: frame_size = "
            f"{rx_frame_size}: must be in {stack.min_frame}..{MAX_FRAME_SIZE} for IPv{version}"
            + "".join(f" in an IPv{outer} tunnel" for outer in reversed(tunnels)))


def validate_trial(request):
    known(request, "", "trial")
    duration = number_in(request, "", "duration", 1e-3, MAX_DURATION)
    number_in(request, "", "timeout", 0, 3600, 2.0)
    number_in(request, "", "progress_interval", 0, 3600, 1.0)
    if "max_lag" in request:
        number_in(request, "", "max_lag", 0, 60)
    if "capture" in request:
        capture = request["capture"]
        known(capture, "capture.", "capture")
        integer_in(capture, "capture.", "frames", 1, 4096, 100)
        integer_in(capture, "capture.", "stride", 1, 1_000_000, 1)
        integer_in(capture, "capture.", "snaplen", 64, 65535, 65535)
        if not isinstance(capture.get("foreign", False), bool):
            bad("capture.foreign", capture["foreign"], "must be true or false")
    delay = request.get("delay", {})
    known(delay, "delay.", "delay")
    tagged = integer_in(delay, "delay.", "tagged", 0, 10_000_000, 0)
    tagged_start = number_in(delay, "delay.", "tagged_start", 0, duration, 0.0)
    if "dns" in request:
        dns = request["dns"]
        known(dns, "dns.", "dns")
        number_in(dns, "dns.", "aaaa_share", 0, 1, 0)
        for index, port in enumerate(require(dns, "dns.", "authoritative")):
            if not isinstance(port, int) or not 0 <= port < PORT_COUNT:
                bad(f"dns.authoritative[{index}]", port, f"must be a port index in 0..{PORT_COUNT - 1}")
    flows = require(request, "", "flows")
    if not isinstance(flows, list) or not 1 <= len(flows) <= MAX_FLOWS:
        bad("flows", len(flows) if isinstance(flows, list) else flows,
            f"must be a list of 1..{MAX_FLOWS} flows")
    for index, flow in enumerate(flows):
        path = f"flows[{index}]."
        known(flow, path, "flow")
        integer_in(flow, path, "tx_port", 0, PORT_COUNT - 1)
        integer_in(flow, path, "rx_port", 0, PORT_COUNT - 1)
        # 2.4: rate 0 before the first rate step (a delayed start).
        rate = integer_in(flow, path, "rate", 0 if "rate_steps" in flow else 1, 1_000_000_000)
        n, m = 1, 1
        if "mix" in flow:
            known(flow["mix"], path + "mix.", "mix")
            n = integer_in(flow["mix"], path + "mix.", "n", 1, 1000)
            m = integer_in(flow["mix"], path + "mix.", "m", 0, n)
        if "streams" in flow:
            for key in ("foreground", "background", "mix"):
                if key in flow:
                    raise RequestError("bad_parameter", f"{path}{key}: not together with {path}streams (the "
                                       "streams and their pattern describe the whole flow)", path + key)
            for index, stream in enumerate(flow["streams"]):
                spath = f"{path}streams[{index}]."
                kind = stream.get("kind", "foreground")
                if index == 0 and kind != "foreground":
                    bad(spath + "kind", kind, "must be foreground: the first stream carries the tagged frames")
                validate_stream({k: v for k, v in stream.items() if k != "kind"}, spath)
            pattern = require(flow, path, "pattern")
            for k, index in enumerate(pattern):
                if not isinstance(index, int) or not 0 <= index < len(flow["streams"]):
                    bad(f"{path}pattern[{k}]", index, f"must be a stream index in 0..{len(flow['streams']) - 1}")
        else:
            validate_stream(require(flow, path, "foreground"), path + "foreground.")
            if m < n:
                validate_stream(require(flow, path, "background"), path + "background.")
        for k, step in enumerate(flow.get("rate_steps", [])):
            known(step, f"{path}rate_steps[{k}].", "rate_step")
        planned = planned_frames(flow, duration)
        if "frames" in flow:
            planned = integer_in(flow, path, "frames", 1, 2**40)
            if not flow.get("rate_steps") and (planned - 1) / rate > duration:
                bad(path + "frames", planned,
                    f"must be at most duration x rate + 1 = {int(duration * rate) + 1}")
        if "from_table" in flow:
            known(flow["from_table"], path + "from_table.", "from_table")
        if "dns" in flow:
            validate_dns_flow(request, flow, path)
        if tagged:
            foreground = frames_in_pattern(streams_of(flow)[1], 0, planned)
            after = foreground - math.ceil(foreground * tagged_start / duration)
            if tagged > after:
                bad("delay.tagged", tagged,
                    f"must be at most {after}: flow {flow.get('name', f'flow{index}')} sends only "
                    "that many foreground frames after delay.tagged_start (rate x (duration - "
                    "tagged_start))")
    # As the engine: the test tag's stream id numbers every lane's streams (docs/protocol.md
    # "Queues and workers").
    stride = max(2, *(len(streams_of(flow)[0]) for flow in flows))
    ids = stream_ids_needed(len(flows), stride, queues)
    if ids > STREAM_IDS:
        raise RequestError("execution_failure", f"{len(flows)} flows x {stride} streams x {queues} "
                           f"queues need {ids} stream ids; the test tag has {STREAM_IDS}")
    learn = request.get("learn")
    if learn is not None:
        known(learn, "learn.", "learn")
        port = integer_in(learn, "learn.", "port", 0, PORT_COUNT - 1)
        flow = flows[integer_in(learn, "learn.", "flow", 0, len(flows) - 1)]
        ip_version_of(learn, "learn.")
        if flow["rx_port"] != port:
            bad("learn.port", port, f"must be the rx_port of flow {flow.get('name')} "
                                    f"({flow['rx_port']})")


def validate_dns_flow(request, flow, path):
    """A flow of DNS queries as the engine checks it (docs/protocol.md "DNS")."""
    dns = flow["dns"]
    known(dns, path + "dns.", "flow_dns")
    if "dns" not in request:
        bad(path + "dns", dns, "needs the trial's dns (its zone and records)")
    if flow["rx_port"] != flow["tx_port"]:
        bad(path + "rx_port", flow["rx_port"], f"must be tx_port ({flow['tx_port']}): a DNS query's "
                                               "reply comes back to the port that asked")
    if flow["foreground"].get("dst_port", 7) != 53:
        bad(path + "foreground.dst_port", flow["foreground"].get("dst_port", 7), "must be 53 for DNS queries")
    timeout = request.get("delay", {}).get("frame_timeout", 0)
    if timeout <= 0:
        bad("delay.frame_timeout", timeout, "must be > 0 with DNS queries: a query's reply counts only "
                                            "within its timeout (RFC 8219 §9.2: 1 s)")
    if dns.get("qtype", "AAAA") not in ("AAAA", "A"):
        bad(path + "dns.qtype", dns["qtype"], "must be AAAA or A")
    integer_in(dns, path + "dns.", "nonce", 0, 2**32 - 1)
    for i, check in enumerate(dns.get("checks", [])):
        if check not in DNS_CHECKS:
            bad(f"{path}dns.checks[{i}]", check, "must be one of " + ", ".join(DNS_CHECKS))
    ports = integer_in(dns, path + "dns.", "ports", 1, 65536 - flow["foreground"].get("src_port", 0xC020), 1)
    if flow["rate"] * timeout > 32768 * ports:
        bad(path + "dns.ports", ports, "must be at least rate x delay.frame_timeout / 32768 = "
                                       f"{math.ceil(flow['rate'] * timeout / 32768)} (a reply's port and ID "
                                       "name its query among 65536 x ports)")


def validate(request):
    """Raises RequestError as the engine would refuse `request`."""
    op = request.get("op")
    if op == "trial":
        validate_trial(request)
    elif op in ("hello", "shutdown"):
        known(request, "", op)
    elif op == "addresses":
        known(request, "", "addresses")
        for index, port in enumerate(require(request, "", "ports")):
            path = f"ports[{index}]."
            known(port, path, "address_port")
            integer_in(port, path, "port", 0, PORT_COUNT - 1)
            for number, entry in enumerate(port.get("ranges", [])):
                known(entry, f"{path}ranges[{number}].", "range")
    elif op == "resolve":
        known(request, "", "resolve")
        integer_in(request, "", "port", 0, PORT_COUNT - 1)
        version = ip_version_of(request, "")
        address(request, "", "own_ip", version)
        address(request, "", "target", version)
        vlan_of(request, "", "vlan")
    else:
        bad("op", op, "must be one of hello, trial, addresses, resolve, shutdown")


def spec_version(flow):
    return flow["foreground"]["ip_version"]


def announced_mss(requested, version):
    """The MSS a SYN or SYN-ACK arrives with: as the request names it (default: a host on
    Ethernet's, docs/protocol.md), lowered to FAKE_MSS_CLAMP."""
    mss = requested or (1460 if version == 4 else 1440)
    clamp = os.environ.get("FAKE_MSS_CLAMP")
    return min(mss, int(clamp)) if clamp else mss


def on_signal(signum, frame):
    global aborted
    aborted = True


def ports_from_eal_args(args):
    names = []
    for index, arg in enumerate(args):
        if arg in ("--vdev", "-a") and index + 1 < len(args):
            names.append(args[index + 1].split(",")[0])
    return names


def hello_port(index, name, speed, queues):
    """A port as hello reports it (docs/protocol.md): a NIC-like port set up as the engine
    does (flow control off, promiscuous, the MTU of the default largest frame)."""
    down = str(index) in os.environ.get("FAKE_LINK_DOWN", "").split(",")
    return {"index": index, "name": name, "driver": name.rstrip("0123456789"), "bus": "vdev", "socket": 0,
            "mac": f"02:00:00:00:00:0{index + 1}", "link_speed_mbps": 0 if down else speed,
            "link_up": not down, "rx_queues": queues, "tx_queues": queues, "max_queues": 1024,
            "rx_spread": "none" if queues == 1 else "rss", "hw_timestamp": False,
            "link": {"up": not down, "speed_mbps": 0 if down else speed, "full_duplex": True,
                     "autoneg": True, "wait": 10.0 if down else 0.5},
            "descriptors": {"rx": 4096, "tx": 1024}, "mtu": max_frame - 18, "max_frame": max_frame,
            "rss": {"offered": ["ipv4", "ipv4-udp", "ipv6", "ipv6-udp"], "reta_size": 128,
                    "reta_share": [128 // queues] * queues if queues > 1 else []},
            "flow_control": {"found": "full", "now": "none"}, "promiscuous": True, "allmulticast": True,
            "xstats": {"offered": 40, "drops": ["rx_discards_phy"], "pause": ["rx_xoff_packets"]},
            "timestamps": {"rx_offload": False, "timesync": False, "read_clock": False}}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def send_error(request_id, error):
    send({"id": request_id, "ok": False, "error": error})


def stretches(flow, duration):
    """(first frame, start s, rate, frames) of each stretch of the flow's rate steps: the
    engine sends round(rate x length) frames per stretch, frame k of a stretch due at
    start + (k - first) / rate."""
    found, first, start, rate = [], 0, 0.0, flow["rate"]
    for step in flow.get("rate_steps", []):
        frames = round(rate * (step["at"] - start))
        found.append((first, start, rate, frames))
        first, start, rate = first + frames, step["at"], step["rate"]
    return found + [(first, start, rate, round(rate * (duration - start)))]


def planned_frames(flow, duration):
    """The engine's count: `frames`, or round(rate x time) per stretch of the rate steps."""
    if "frames" in flow:
        return flow["frames"]
    first, _, _, frames = stretches(flow, duration)[-1]
    return first + frames


def send_time_of(flow, duration):
    """Frame k's scheduled send time, s after the trial's start."""
    parts = stretches(flow, duration)

    def time_of(k):
        first, start, rate, _ = next(part for part in reversed(parts) if k >= part[0])
        return start + (k - first) / rate
    return time_of


def stepped_losses(flow, duration, limit):
    """The simulated DUT with rate steps: lost frame ranges [a, b] (FAKE_DUT_LOSS_PERIODS,
    FAKE_DUT_RECOVERY)."""
    count = int(os.environ.get("FAKE_DUT_LOSS_PERIODS", "1"))
    recovery = float(os.environ.get("FAKE_DUT_RECOVERY", "0"))
    lost, lossy = [], False
    for first, start, rate, frames in stretches(flow, duration):
        if lossy and recovery:   # still recovering from the stretch before
            lost.append((first, first + min(frames, math.ceil(recovery * rate)) - 1))
        excess = frames - math.floor(limit * frames / rate) if rate > limit else 0
        lossy = excess > 0
        for part in range(count if lossy else 0):   # each part's share, at its end
            end = first + (part + 1) * frames // count - 1
            share = (part + 1) * excess // count - part * excess // count
            if share:
                lost.append((end - share + 1, end))
    return lost


def loss_report(ranges, sent, time_of):
    """The engine's `losses` of a flow from its lost frame ranges (docs/protocol.md)."""
    merged = []
    for a, b in sorted((max(a, 0), min(b, sent - 1)) for a, b in ranges):
        if a > b:
            continue
        if merged and a <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    periods = [{"first_lost_s": time_of(a), "last_lost_s": time_of(b), "frames": b - a + 1,
                "last_before_s": time_of(a - 1) if a else None,
                "first_after_s": time_of(b + 1) if b + 1 < sent else None} for a, b in merged]
    longest = max(periods, key=lambda p: p["frames"]) if periods else None
    return {"periods": len(periods), "lost": sum(p["frames"] for p in periods),
            "first": periods[:100], "last": periods[-100:], "longest": longest}


def take_next(variable):
    """The fields of a "N:..." environment variable while its count N lasts (each call takes
    one), else None: a fault that affects the next N trials of this engine process."""
    text = os.environ.get(variable)
    if not text:
        return None
    fields = text.split(":")
    taken = faults_taken[variable] = faults_taken.get(variable, 0) + 1
    return [float(f) for f in fields[1:]] if taken <= int(fields[0]) else None


faults_taken: dict = {}


def run_trial(request):
    limit = float(os.environ.get("FAKE_DUT_LIMIT", "inf"))
    if os.environ.get("FAKE_DUT_LIMIT_FILE"):
        with open(os.environ["FAKE_DUT_LIMIT_FILE"], encoding="utf-8") as stream:
            limit = float(stream.read())
    tester_limit = float(os.environ.get("FAKE_TESTER_LIMIT", "inf"))
    seconds = float(os.environ.get("FAKE_TRIAL_SECONDS", "0"))
    interval = float(request.get("progress_interval", 1.0))
    duration = float(request["duration"])
    flows = request["flows"]
    start = time.monotonic()
    next_event = interval
    outage_file, outage = os.environ.get("FAKE_DUT_OUTAGE_FILE"), None
    while time.monotonic() - start < seconds and not aborted:
        time.sleep(0.01)
        elapsed = time.monotonic() - start
        if outage_file and outage is None and os.path.exists(outage_file):
            with open(outage_file, encoding="utf-8") as stream:
                text = stream.read().strip()
            if text:    # the hook has finished writing it
                os.remove(outage_file)
                outage = (elapsed * duration / seconds, float(text))
        if elapsed >= next_event:
            next_event += interval
            fraction = elapsed / seconds
            send({"id": request["id"], "event": "progress", "elapsed": elapsed * duration / seconds,
                  "flows": [{"name": f["name"], "sent": int(f["rate"] * duration * fraction),
                             "received": int(min(f["rate"], limit) * duration * fraction)}
                            for f in flows]})
    valid, reason = True, None
    max_lag = request.get("max_lag")
    hiccup = take_next("FAKE_HICCUPS")
    lag = hiccup[0] if hiccup else 0.0
    lag_at_end = hiccup is not None and (len(hiccup) < 2 or hiccup[1] >= duration)
    dropped = take_next("FAKE_TESTER_DROPS")
    dropped = int(dropped[0]) if dropped else 0
    flapped = take_next("FAKE_LINK_FLAPS") is not None
    if aborted:
        valid, reason = False, "aborted"
    elif any(max([f["rate"]] + [step["rate"] for step in f.get("rate_steps", [])]) > tester_limit
             # the schedule rule: a sender at its own pace falls behind by duration x
             # (rate / pace - 1) at the end; invalid when that exceeds max_lag
             and (max_lag is None or duration * (f["rate"] / tester_limit - 1) > max_lag)
             for f in flows):
        valid, reason = False, ("tester could not keep the rate: sending took longer than "
                                "duration x (1 + 1e-5)")
    elif max_lag is not None and lag > max_lag:
        valid, reason = False, (f"tester could not keep the rate: flow {flows[0]['name']} fell "
                                f"{lag * 1e3:.3f} ms behind its schedule (max_lag "
                                f"{max_lag * 1e3:.3f} ms): {math.ceil((lag - max_lag) * flows[0]['rate'])} "
                                "frames left late, in catch-up bursts")
    elif max_lag is None and lag_at_end and lag > duration * 1e-5:
        valid, reason = False, ("tester could not keep the rate: sending took longer than "
                                "duration x (1 + 1e-5)")
    elif flapped:
        valid, reason = False, f"link down during the trial on port {flows[0]['rx_port']} (1 time)"
    elif dropped:
        valid, reason = False, (f"tester dropped frames: port {flows[0]['rx_port']} missed "
                                f"{dropped} (imissed: its RX ring was full) and had no mbuf for 0 "
                                "(rx_nombuf)")
    problem = frame_size_problem(request) or stateful_problem(request)
    if problem:
        send_error(request["id"], problem)
        return
    replies = []
    same_name = Counter(flow["name"] for flow in flows)
    for flow in flows:
        planned = planned_frames(flow, duration)
        # Flows of one name are one direction from several clients (RFC 8219 §10.2.2): they
        # share the DUT's capacity, lowered by their number as for varying client addresses.
        clients = same_name[flow["name"]]
        flow_limit = limit / clients / (1 + float(os.environ.get("FAKE_DUT_CLIENT_PENALTY", "0"))
                                        * (clients - 1)) if clients > 1 else limit
        if valid or not reason.startswith(("tester could not keep", "aborted")):
            sent = planned
        elif " fell " in reason:    # all sent, some late
            sent = planned
        elif lag_at_end and flow["rate"] <= tester_limit:
            sent = planned - min(planned, math.ceil(lag * flow["rate"]))
        elif reason.startswith("tester could not keep the rate"):
            # As the engine: the sender is cut off at the time limit, having kept its own pace.
            sent = min(planned, round(tester_limit * (duration + (max_lag or 0))))
        else:  # aborted half-way
            sent = planned // 2
        time_of = send_time_of(flow, duration)
        if flow.get("rate_steps"):
            lost = stepped_losses(flow, duration, flow_limit)
        else:     # what is lost is lost at the end of the trial
            received = stateful_received(request, flow, sent, dut_received(flow, sent, flow_limit,
                                                                             duration))
            lost = [(received, sent - 1)]
        if outage is not None:
            begin, length = outage
            lost.append((math.ceil(begin * flow["rate"]),
                         math.ceil((begin + length) * flow["rate"]) - 1))
        if dropped and flow is flows[0]:   # the tester's own drops look like losses
            lost.append((max(0, sent - dropped), sent - 1))
        losses = loss_report(lost, sent, time_of)
        received = sent - losses["lost"]
        specs, pattern = streams_of(flow)
        streams = []
        for kind in ("foreground", "background"):
            # Per size, as if the frames lost were the flow's last ones.
            of_kind = [(index, spec) for index, spec in enumerate(specs) if spec["kind"] == kind]
            if not of_kind:
                continue
            sizes = [{"frame_size": spec["frame_size"],
                      "rx_frame_size": spec.get("rx_frame_size", spec["frame_size"]),
                      "sent": frames_in_pattern(pattern, index, sent),
                      "received": frames_in_pattern(pattern, index, received), "bad_length": 0}
                     for index, spec in of_kind]
            stream = make_stream(kind, of_kind[0][1], sum(z["sent"] for z in sizes),
                                 sum(z["received"] for z in sizes), dns="dns" in flow)
            if len(sizes) > 1:
                stream["sizes"] = sizes
            if "dns" in flow:  # FAKE_DNS_WRONG_ANSWERS: that share of the replies is wrong
                wrong = round(stream["received"] * float(os.environ.get("FAKE_DNS_WRONG_ANSWERS", "0")))
                stream["dns"] = {verdict: 0 for verdict in DNS_VERDICTS} | {"wrong_answer": wrong, "upstream_due": 0}
                stream["received"] -= wrong
            if "tcp" in flow:
                stream["tcp_unexpected"] = 0
                if flow["tcp"].get("segments", "open") == "open" and stream["received"]:
                    stream["mss_min"] = announced_mss(flow["tcp"].get("mss"), spec_version(flow))
            streams.append(stream)
        if "delay" in request:
            for stream in streams:
                delay_data(request["delay"], stream, tagged=stream is streams[0])
            received = sum(stream["received"] for stream in streams)
        # A sender slower than the rate (FAKE_TESTER_LIMIT) falls behind steadily: frame k
        # leaves k / pace, due k / rate; with the schedule rule the frames more than max_lag
        # late are `lagged`.
        behind = 1 / tester_limit - 1 / flow["rate"] if flow["rate"] > tester_limit else 0.0
        flow_lag = max(lag, sent * behind)
        lagged = (max(0, math.ceil((lag - max_lag) * flow["rate"])) if not behind else
                  max(0, sent - math.floor(max_lag / behind))) if max_lag is not None else None
        replies.append({"name": flow["name"], "rate": flow["rate"], "planned": planned,
                        "sent": sent, "received": received, "max_lag_us": flow_lag * 1e6,
                        **({"lagged": lagged} if lagged is not None else {}),
                        # A frame count is sent on the engine's schedule: the last frame is
                        # due (frames - 1) / rate after the start, maybe well inside duration.
                        "send_time": (planned - 1) / flow["rate"] if "frames" in flow
                        else duration,
                        "streams": streams})
        if request.get("losses"):
            replies[-1]["losses"] = losses
        # Lane q of the flow sends its frames k with k % queues == q.
        replies[-1]["queues"] = [
            {"queue": q, "planned": len(range(q, planned, queues)), "sent": len(range(q, sent, queues)),
             "send_time": replies[-1]["send_time"], "max_lag_us": flow_lag * 1e6,
             **({"lagged": replies[-1]["lagged"] if q == 0 else 0} if max_lag is not None else {})}
            for q in range(queues)]
    # TCP (docs/tcp.md): after the request's flows the engine adds those that answer a flow's
    # SYNs (SYN-ACKs, ACKs, window ACKs) or FINs (FIN-ACKs, ACKs); here every segment that
    # arrived is answered, and every answer arrives.
    answering = {"open": ("syn_ack", "ack", "window"), "close": ("fin_ack", "ack"), "reset": (), "data": ()}
    for flow, syns in list(zip(flows, replies)):
        if "tcp" in flow:
            for step in answering[flow["tcp"].get("segments", "open")]:
                streams = [{**{k: v for k, v in stream.items() if k != "mss_min"},
                            "sent": syns["received"]} for stream in syns["streams"]]
                if step == "syn_ack":
                    reply = flow["tcp"].get("reply", {})
                    for stream in streams:
                        if stream["received"]:
                            stream["mss_min"] = announced_mss(reply.get("mss"), reply["ip_version"])
                replies.append({**syns, "name": f"{flow['name']}.{step}", "sent": syns["received"],
                                "streams": streams})
    authoritative = request.get("dns", {}).get("authoritative", [])
    rx_ports = sorted(set(flow["rx_port"] for flow in flows) | set(authoritative))
    reply = {"id": request["id"], "ok": True, "valid": valid, "invalid_reason": reason,
             "elapsed": duration, "flows": replies,
             "ports": [{"index": port, "foreign": 0, "fragmented": 0, "neighbor_replies": 0,
                        "drops": {"imissed": dropped if port == flows[0]["rx_port"] else 0,
                                  "rx_nombuf": 0, "ierrors": 0, "oerrors": 0, "tx_lost": 0,
                                  "queue_errors": [0] * queues},
                        "queues": [{"queue": q, "foreign": 0,
                                    "test_frames": sum(f["received"] for f, plan in zip(replies, flows)
                                                       if plan["rx_port"] == port and q == 0)}
                                   for q in range(queues)]}
                       for port in rx_ports]}
    for port in reply["ports"]:
        if flapped and port["index"] == flows[0]["rx_port"]:
            port["link_down"] = 1
        if os.environ.get("FAKE_PAUSE_FRAMES"):
            port["pause_received"] = {"rx_xoff_packets": int(os.environ["FAKE_PAUSE_FRAMES"])}
    if "dns" in request:  # every query that got a reply was answered by the authoritative port
        answered = sum(f["received"] + f["streams"][0]["dns"]["wrong_answer"]
                       for f, plan in zip(replies, flows) if "dns" in plan)
        for port in reply["ports"]:
            port["dns"] = {"answered": answered if port["index"] in authoritative else 0,
                           "unanswered": 0, "unsent": 0}
    if "capture" in request:
        for port in reply["ports"]:
            frames = fake_capture(request, port["index"], replies)
            port["capture"] = {"frames": frames[0], "missed": 0, "bytes": len(frames[1]),
                               "pcapng": base64.b64encode(frames[1]).decode("ascii")}
    if "learn" in request:
        learn = request["learn"]
        entries = min(learn["table_size"], replies[learn["flow"]]["received"])
        state_tables[learn["port"]] = entries
        reply["state_table"] = {"port": learn["port"], "entries": entries,
                                "capacity": learn["table_size"], "ip_version": learn["ip_version"]}
        learned = flows[learn["flow"]]
        if "tcp" in learned:  # the Initiator's table too, from the SYN-ACKs (docs/tcp.md)
            state_tables[learned["tx_port"]] = entries
            reply["initiator_table"] = {"port": learned["tx_port"], "entries": entries,
                                        "capacity": learn["table_size"],
                                        "ip_version": learned["foreground"]["ip_version"]}
    send(reply)


def test_frame(spec, seq, length):
    """A test frame of a stream as the fake DUT returns it (a cable: the sent headers), UDP
    payload the tag and padding (docs/protocol.md "Test frame payload"), `length` bytes
    without the FCS."""
    version = spec["ip_version"]
    mac = lambda text: bytes.fromhex(text.replace(":", ""))
    l3 = IP_STACKS[version].ip_bytes
    udp_length = length - ETHERNET_BYTES - l3
    tag = b"XLAT" + bytes([0, 0, 0, 1]) + struct.pack(">I", seq) + bytes(6)
    payload = (tag + bytes(range(256)) * 40)[:udp_length - UDP_BYTES]
    udp = struct.pack(">HHHH", spec.get("src_port", 0xC020), spec.get("dst_port", 7), udp_length, 0)
    src, dst = (ipaddress.ip_address(spec[k]).packed for k in ("src_ip", "dst_ip"))
    if version == 4:
        header = struct.pack(">BBHHHBBH4s4s", 0x45, 0, l3 + udp_length, 0, 0, 64, 17, 0, src, dst)
        words = struct.unpack(">10H", header)
        checksum = sum(words)
        checksum = ~((checksum & 0xFFFF) + (checksum >> 16)) & 0xFFFF
        ip = header[:10] + struct.pack(">H", checksum) + header[12:]
        ethertype = 0x0800
    else:
        ip = struct.pack(">IHBB16s16s", 6 << 28, udp_length, 17, 64, src, dst)
        ethertype = 0x86DD
    return mac(spec["dst_mac"]) + mac(spec["src_mac"]) + struct.pack(">H", ethertype) + ip + udp + payload


def fake_capture(request, port, replies):
    """(frames, pcapng bytes): the engine's capture of a port (docs/protocol.md "Capture"),
    the first sampled frames of the flows received there; a section header, one interface
    (Ethernet) and an Enhanced Packet Block per frame."""
    capture = request["capture"]
    limit, stride = capture.get("frames", 100), capture.get("stride", 1)
    snaplen = capture.get("snaplen", 65535)
    frames = []
    for flow, reply in zip(request["flows"], replies):
        if flow["rx_port"] != port:
            continue
        spec = streams_of(flow)[0][0]
        length = spec.get("rx_frame_size", spec["frame_size"]) - 4
        for seq in range(0, reply["received"], stride):
            if len(frames) == limit:
                break
            frames.append(test_frame(spec, seq, length))

    def block(kind, body):
        body += bytes(-len(body) % 4)
        return struct.pack("<II", kind, len(body) + 12) + body + struct.pack("<I", len(body) + 12)

    data = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    data += block(1, struct.pack("<HHI", 1, 0, snaplen))
    now = time.time_ns() // 1000   # the default resolution: microseconds
    for index, frame in enumerate(frames):
        kept = frame[:snaplen]
        stamp = now + index
        data += block(6, struct.pack("<IIIII", 0, stamp >> 32, stamp & 0xFFFFFFFF, len(kept), len(frame))
                      + kept)
    return len(frames), data


def dut_received(flow, sent, limit, duration):
    """The simulated DUT: everything at rates up to its limit (lowered by the number of client
    addresses), LIMIT x duration frames above it, or for a burst what its buffer holds plus
    what it forwarded while the burst came in."""
    clients = max([v["max"] - v["min"] + 1 for v in streams_of(flow)[0][0].get("vary", [])
                   if v["field"] in ("src_ip", "dst_ip") and v.get("bits", 16) == 16] or [1])
    limit /= 1 + float(os.environ.get("FAKE_DUT_CLIENT_PENALTY", "0")) * (clients - 1)
    if flow["rate"] <= limit:
        return sent
    if "frames" in flow:
        buffer = int(os.environ.get("FAKE_DUT_BUFFER", "0"))
        return min(sent, int(buffer + limit * sent / flow["rate"]))
    return min(sent, int(limit * duration))


def make_stream(kind, spec, sent, received, dns=False):
    stream = {"kind": kind, "sent": sent, "received": received, "duplicates": 0, "reordered": 0,
              "bad_length": 0, "bad_vlan": 0, "out_of_range": 0, "frame_size": spec["frame_size"],
              "rx_frame_size": spec.get("rx_frame_size", spec["frame_size"])}
    if spec.get("ce", {}).get("rx_fields"):
        stream["wrong_ce"] = 0
    if "rx" in spec or dns:  # the header checks' counts (docs/protocol.md; a DNS stream's: its replies')
        stream |= dict.fromkeys(("bad_address", "bad_ttl", "bad_tos", "bad_header", "bad_checksum"), 0)
    if spec.get("rx", {}).get("count_df"):
        # The fake translator clears DF on small packets (RFC 7915 §5.1); FAKE_DF = "set" sets
        # it (RFC 6145 §5.1), "mixed" on every other frame (neither).
        behaviour = os.environ.get("FAKE_DF", "clear")
        stream["df_set"] = {"clear": 0, "set": received, "mixed": received // 2}[behaviour]
        stream["df_clear"] = received - stream["df_set"]
    if spec.get("rx", {}).get("count_tunnel_ecn"):  # the fake tunnel entry copies it (RFC 6040 normal mode)
        stream |= {"tunnel_ecn_copied": received, "tunnel_ecn_not_ect": 0}
    if received:
        base = float(os.environ.get("FAKE_DELAY_NS", "10000"))
        stream["delay_ns"] = {"min": base, "mean": 1.5 * base, "max": 2 * base}
    return stream


def frame_size_problem(request):
    """The engine's check of the frames against --max-frame-size (engine/src/protocol/plan.cpp)."""
    for index, flow in enumerate(request["flows"]):
        for stream in streams_of(flow)[0]:
            sent = stream["frame_size"] + 4 * len(stream.get("vlan", []))
            received = (stream.get("rx_frame_size", stream["frame_size"])
                        + 4 * len(stream.get("rx_vlan", stream.get("vlan", []))))
            if max(sent, received) > max_frame:
                return {"type": "bad_parameter", "key": f"flows[{index}]",
                        "message": f"flows[{index}] ({flow.get('name', f'flow{index}')}): a frame of "
                                   f"{max(sent, received)} bytes on the wire (VLAN tags included) exceeds "
                                   f"--max-frame-size {max_frame}, the largest frame the engine set its "
                                   "ports up for (the front end passes the configuration's largest frame)"}
    return None


def stateful_problem(request):
    """The engine's checks of the stateful keys that need its state (docs/protocol.md), as
    an error object, or None."""
    for index, flow in enumerate(request["flows"]):
        if "from_table" in flow:
            if len(streams_of(flow)[0]) > 1 or streams_of(flow)[0][0].get("vary"):
                return {"type": "bad_parameter", "key": f"flows[{index}].from_table",
                        "message": f"flows[{index}].from_table: no background, no vary fields"}
            port = flow["from_table"]["port"]
            if port not in state_tables:
                return {"type": "execution_failure",
                        "message": f"flows[{index}].from_table.port = {port}: no state table "
                                   "there (run a phase-1 trial with learn first)"}
        foreground = streams_of(flow)[0][0]
        if any(v["mode"] == "enumerate" for v in foreground.get("vary", [])) != ("enumerate" in foreground):
            return {"type": "bad_parameter", "key": f"flows[{index}].foreground.enumerate",
                    "message": f"flows[{index}].foreground.enumerate: needs vary fields with "
                               "mode enumerate"}
    return None


def stateful_received(request, flow, sent, received):
    """The simulated stateful DUT: connection establishment rate and table capacity."""
    global phase1_trials
    capacity = float(os.environ.get("FAKE_TABLE_CAPACITY", "inf"))
    if "learn" in request:
        conn_rate = float(os.environ.get("FAKE_CONN_RATE", "inf"))
        if flow["rate"] > conn_rate:
            received = min(received, int(sent * conn_rate / flow["rate"]))
        phase1_trials += 1
        if phase1_trials <= int(os.environ.get("FAKE_FILL_FAILURES", "0")):
            received = min(received, sent // 2)
    elif "from_table" in flow:
        entries = state_tables[flow["from_table"]["port"]]
        kept = min(entries, capacity)
        received = min(received, sent if kept == entries else int(sent * kept / entries))
    return received


def delay_data(delay, stream, tagged=True):
    """Fills in the delay measurements of docs/protocol.md (tagged frames: foreground only);
    returns the received count."""
    base = float(os.environ.get("FAKE_DELAY_NS", "10000"))
    received = stream["received"]
    if delay.get("frame_timeout"):
        late = received if base > delay["frame_timeout"] * 1e9 else 0
        stream["late"], stream["received"] = late, received - late
        received -= late
    if delay.get("tagged") and tagged:
        count, lost = delay["tagged"], int(os.environ.get("FAKE_TAGGED_LOST", "0"))
        delays = [None if j < lost else base + j for j in range(count)]
        if stream.get("late"):
            delays = [None] * count
        stream["tagged"] = {"count": count, "lost": sum(d is None for d in delays),
                            "delays_ns": delays}
    if not received:
        stream.pop("delay_ns", None)  # the engine reports no delay range without a frame
    if delay.get("histogram"):  # the engine reports the histogram whenever it was asked for
        stream["delay"] = {"count": received, "min_ns": base, "max_ns": 2 * base,
                           "mean_ns": 1.5 * base, "p50_ns": 1.5 * base, "p99_ns": 1.99 * base,
                           "p999_ns": 1.999 * base, "relative_error": 2 ** -11,
                           "buckets": [[base, 1.5 * base, received // 2],
                                       [1.5 * base, 2 * base + 1, received - received // 2]]
                           if received else []}
    if delay.get("ipdv"):
        stream["ipdv"] = {"count": max(received - 1, 0), "min_ns": -base / 2, "median_ns": 0.0,
                          "max_ns": base / 2}
    return received


def main():
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if os.environ.get("FAKE_FAIL"):
        print("EAL: Detected CPU lcores: 2", file=sys.stderr)
        print(os.environ["FAKE_FAIL"], file=sys.stderr)
        return 1
    args = sys.argv[1:]
    eal = args[:args.index("--")] if "--" in args else args
    names = ports_from_eal_args(eal)
    global queues
    own = args[args.index("--") + 1:] if "--" in args else []
    if "--ports" in own:  # the engine numbers the ports by side, by these names
        ordered = own[own.index("--ports") + 1].split(",")
        if sorted(ordered) != sorted(names):
            print(f"xlatperf-engine: no DPDK port named {ordered} (ports: {', '.join(names)})", file=sys.stderr)
            return 2
        names = ordered
    if "--queues" in own:
        queues = int(own[own.index("--queues") + 1])
    global max_frame
    if "--max-frame-size" in own:
        max_frame = int(own[own.index("--max-frame-size") + 1])
    speed = int(os.environ.get("FAKE_SPEED_MBPS", "10000"))
    log = os.environ.get("FAKE_REQUEST_LOG")
    print("fake engine: started with " + " ".join(args), file=sys.stderr)
    for line in sys.stdin:
        if log:
            with open(log, "a") as stream:
                stream.write(line)
        request = json.loads(line)
        op = request.get("op")
        try:
            validate(request)
        except RequestError as error:
            send_error(request.get("id"), error.error)
            continue
        if op == "hello":
            send({"id": request["id"], "ok": True, "protocol": PROTOCOL, "limits": LIMITS,
                  "engine": "0.0.0-fake",
                  "dpdk": "DPDK 22.11.11", "tsc_hz": 2_000_000_000,
                  "lcores": {"main": 0, "workers": [1]},
                  "timestamps": {"software": "tsc", "resolution_ns": 0.5, "hardware": False},
                  "ports": [hello_port(i, name, speed, queues) for i, name in enumerate(names)]})
        elif op == "addresses":
            send({"id": request["id"], "ok": True})
        elif op == "resolve":  # no neighbour answers a fake port
            send_error(request["id"], {
                "type": "execution_failure",
                "message": f"no reply from {request['target']} on port {request['port']} within "
                           f"{json.dumps(float(request.get('timeout', 3.0)))} s"})
        elif op == "trial":
            run_trial(request)
        elif op == "shutdown":
            send({"id": request["id"], "ok": True})
            return 0
        if aborted:
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
