#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What emulating CEs costs the sender and the receiver (issue 18), one worker core, in paired
rounds: each round offers every case far more than one worker sends, 1 s each, in turn, and
takes the rate achieved, so each ratio compares trials seconds apart (the shared VM's speed
drifts between searches).

Sending, to DPDK net_null ports (nothing received), 104-byte frames:
  * plain IPv6: fixed native IPv6 frames of the same size (the reference);
  * MAP-E: IPv4 in IPv6 (RFC 2473) from one million pseudorandom CEs of a MAP rule (tunnel
    source, inner IPv4 source and source port of one CE per frame);
  * MAP-T: the CEs' translated IPv6 (source address and port of one CE per frame);
  * 6rd: IPv6 in IPv4 (RFC 4213, RFC 5969) from one million pseudorandom CEs of a 6rd domain
    (the tunnel's IPv4 source, whose header checksum follows, and the CE's IPv6 source in its
    delegated prefix, per frame);
  * plain IPv6 with random IPs + ports (RFC 4814 ports, 16-bit address parts) for comparison.
Receiving, on the in-engine ring pair (the same worker sends, receives and checks every
frame): MAP-E frames whose CE fields the receiver checks against the rule, against the same
frames unchecked.

    python3 bench/ipv4aas_rate.py [--rounds N] [--out bench/results/ipv4aas_rate.json]

$XLATPERF_ENGINE picks another engine build and $XLATPERF_ISA its kernels (e.g. avx2); both
are recorded in the results.
"""

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_rate import LOOPBACK, NULL, RANDOM_IPS, RANDOM_PORTS, cpu_model, paired_rounds  # noqa: E402
from xlatperf.config.loading import load_config  # noqa: E402
from xlatperf.engine.client import Engine  # noqa: E402
from xlatperf.traffic.plan import TrafficPlan  # noqa: E402

OFFERED = 500_000_000  # far above what one worker sends
FORWARD = ['traffic.direction="forward"', 'left.speed="100T"', 'right.speed="100T"']
# A million CEs: 2001:db8::/40 + 24 EA bits (16 of 198.18.0.0/16, an 8-bit PSID), the first 2^20.
RULE = ["ipv4aas.rule_ipv6_prefix=2001:db8::/40", "ipv4aas.rule_ipv4_prefix=198.18.0.0/16",
        "ipv4aas.ea_bits=24", "ipv4aas.ces=1048576"]
MAP_E = ["ipv4aas.technology=map-e", "ipv4aas.role=br", "ipv4aas.endpoint_ipv6=2001:db8:ffff::1",
         "traffic.frame_size=64"] + RULE
MAP_T = ["ipv4aas.technology=map-t", "ipv4aas.role=br", "left.ip_version=6", "ipv4aas.dmr=2001:db8:ffff::/64",
         "right.virtual_ipv6=2001:db8:ffff:0:c6:1300:200:0", "traffic.frame_size=104"] + RULE
IPV6 = ["left.ip_version=6", "right.ip_version=6", "traffic.frame_size=104"]
# A 6rd domain of a million CEs: 2001:db8::/32 and 100.64.0.0/12 (IPv4MaskLen 12: 20 bits in a
# /52 each); 84-byte IPv6 frames, 104 bytes in the tunnel like the others.
SIX_RD = ["ipv4aas.technology=6rd", "ipv4aas.role=br", "ipv4aas.endpoint_ipv4=203.0.113.1", "left.ip_version=6",
          "right.ip_version=6", "ipv4aas.rule_ipv6_prefix=2001:db8::/32", "ipv4aas.rule_ipv4_prefix=100.64.0.0/12",
          "ipv4aas.ea_bits=20", "traffic.frame_size=84"]
SENDING = {
    "plain IPv6, fixed": IPV6,
    "MAP-E, 1M random CEs": MAP_E,
    "MAP-T, 1M random CEs": MAP_T,
    "6rd, 1M random CEs": SIX_RD,
    "plain IPv6, random IPs + ports": IPV6 + RANDOM_IPS + RANDOM_PORTS,
}
RECEIVING = {"MAP-E on the ring pair, unchecked": False, "MAP-E on the ring pair, CE checked": True}


def for_older_engine(flow: dict, protocol: tuple[int, int]) -> dict:
    """A flow as an older engine takes it (bench/engine_ab.py's older builds): before 2.10 the
    streams without tos, ttl and rx (which were 0, 10 and no check there); before 2.11 their
    CEs without tag and prefix_hosts (not written, the first address)."""
    def older(stream: dict) -> dict:
        if protocol < (2, 10):
            stream = {k: v for k, v in stream.items() if k not in ("tos", "ttl", "rx")}
        if protocol < (2, 11) and "ce" in stream:
            stream = {**stream, "ce": {k: v for k, v in stream["ce"].items() if k not in ("tag", "prefix_hosts")}}
        return stream

    flow = dict(flow)
    for key in ("foreground", "background"):
        if key in flow:
            flow[key] = older(flow[key])
    if "streams" in flow:
        flow["streams"] = [older(s) for s in flow["streams"]]
    return flow


def achieved(settings: list[str], check_ce: bool | None = None) -> float:
    """Frames per second one worker sent (and, on the ring pair, received and checked)."""
    config = load_config(NULL, FORWARD + settings + (LOOPBACK if check_ce is not None else []))
    with Engine(config) as engine:
        hello = engine.hello()
        plan = TrafficPlan(config, hello["ports"], through_dut=check_ce is None)
        flows = plan.flows(min(OFFERED, plan.max_rate))
        protocol = tuple(map(int, hello["protocol"].split(".")))
        if protocol < (2, 11):
            flows = [for_older_engine(flow, protocol) for flow in flows]
        if check_ce is not None:
            assert flows[0]["foreground"]["ce"]["rx_fields"] == ["ipv4", "port"]
            if not check_ce:
                flows[0]["foreground"]["ce"]["rx_fields"] = []
        reply = engine.trial({"duration": 1.0, "timeout": 0.0, "progress_interval": 0, "flows": flows})
    flow = reply["flows"][0]
    if check_ce is not None:
        stream = flow["streams"][0]
        if flow["received"] != flow["sent"] or stream.get("wrong_ce", 0):
            raise AssertionError(f"received {flow['received']} of {flow['sent']}, wrong CE {stream.get('wrong_ce')}")
    return flow["sent"] / flow["send_time"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "ipv4aas_rate.json"))
    args = parser.parse_args()
    cases = {**{name: (s, None) for name, s in SENDING.items()},
             **{name: (MAP_E, check) for name, check in RECEIVING.items()}}
    rates = paired_rounds(cases, args.rounds, achieved)
    references = {name: "plain IPv6, fixed" for name in SENDING} | \
                 {name: "MAP-E on the ring pair, unchecked" for name in RECEIVING}
    results = {"command": " ".join(sys.argv), "cpu": cpu_model(), "rounds": args.rounds, "offered_fps": OFFERED,
               "engine": os.environ.get("XLATPERF_ENGINE", "(the build tree's)"),
               "kernels": os.environ.get("XLATPERF_ISA", "(the CPU's best)"), "cases": {}}
    for name, values in rates.items():
        reference = rates[references[name]]
        ratios = [v / ref for v, ref in zip(values, reference)]
        results["cases"][name] = {"mfps": [v / 1e6 for v in values], "median_mfps": statistics.median(values) / 1e6,
                                  "reference": references[name], "median_ratio": statistics.median(ratios)}
        print(f"{name:36s} {statistics.median(values) / 1e6:7.2f} Mfps, {statistics.median(ratios):5.2f} of "
              f"{references[name]} (median of paired rounds)")
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
