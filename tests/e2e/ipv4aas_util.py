# SPDX-License-Identifier: BSD-3-Clause
"""Helpers for the IPv4-as-a-Service end-to-end tests (test_ipv4aas_lab.py: the BRs, with the
tester's emulated CEs; test_ipv4aas_ce_lab.py: the CEs alone, with the tester as their BR):
RFC 7597's worked example, captures decoded by tshark, frames sent by scapy."""

import ipaddress
import json
import subprocess
import time
from pathlib import Path

from e2e_util import trials, xlatperf
from xlatperf import lab
from xlatperf.frames.addressing import MapRule

TESTER_NS, DUT_NS = lab.TESTER_NS, lab.DUT_NS
BR = "2001:db8:ffff::1"
# RFC 7597 Appendix A Example 1: BMR 2001:db8::/40, 192.0.2.0/24, 16 EA bits, PSID offset 6;
# the CE with EA bits 0x1234 has 192.0.2.18, PSID 0x34, ports 1232-1235, 2256-2259, ...
RULE = MapRule(ipaddress.IPv6Network("2001:db8::/40"), ipaddress.IPv4Network("192.0.2.0/24"), 16, 6)
EXAMPLE_CE = "2001:db8:12:3400:0:c000:212:34"
# Counts, not pacing (e2e_util.COUNTS_NOT_PACING): the sender may fall behind on a busy machine.
FAST = ["--set", "trial.pause=0", "--set", "trial.timeout=0.5", "--set", "trial.max_lag=0.5"]
FIELDS = ["ipv6.src", "ipv6.dst", "ipv6.nxt", "ipv6.plen", "ip.src", "ip.dst", "ip.len", "ip.ttl",
          "ip.checksum.status", "udp.srcport", "udp.dstport", "udp.checksum.status"]


def lab_config(make_lab, kind: str, **params) -> Path:
    return make_lab(kind, calibrate="no", **params)


def tshark(pcap: str, fields: list[str] = FIELDS) -> list[dict]:
    """The UDP frames of a capture, decoded by tshark with IPv4 and UDP checksums verified
    (status 1: good): the values of `fields` in each."""
    out = subprocess.run(["tshark", "-r", pcap, "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
                          "-Y", "udp", "-T", "fields", "-E", "separator=|",
                          *[x for f in fields for x in ("-e", f)]],
                         capture_output=True, text=True, check=True).stdout
    return [dict(zip(fields, line.split("|"))) for line in out.splitlines()]


def capture(ns: str, dev: str, during, settle: float = 1.0, fields: list[str] = FIELDS) -> list[dict]:
    """What passes `dev` in namespace `ns` (both directions) while `during()` runs: `fields` of
    each UDP frame (tshark)."""
    pcap = f"/run/xlp-ipv4aas-{dev}.pcap"
    # --immediate-mode: else the kernel hands tcpdump its packets a block at a time, after up to
    # a second, and a frame that arrived just before the end was "received by filter" but never
    # written (seen in CI: 1 received, 0 captured).
    dump = subprocess.Popen(["ip", "netns", "exec", ns, "tcpdump", "--immediate-mode", "-U", "-n", "-B", "16384", "-i", dev,
                             "-w", pcap, "ip or ip6"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        dump.stderr.readline()  # "listening on ...": the capture runs
        during()
        time.sleep(settle)
    finally:
        dump.terminate()
        stats = dump.communicate(timeout=10)[1].decode()
    try:
        assert "\n0 packets dropped by kernel" in "\n" + stats, stats  # the checks see every frame
        return tshark(pcap, fields)
    finally:
        Path(pcap).unlink(missing_ok=True)


def send(port: str, layers: str, count: int = 1) -> None:
    """Sends frames built by the scapy expression `layers` from a tester port to the DUT."""
    peer = {"xlp-tl": "xlp-dl", "xlp-tr": "xlp-dr"}[port]
    script = ("from scapy.all import *\n"
              f"f = Ether(src='{lab.MACS[port]}', dst='{lab.MACS[peer]}')/{layers}\n"
              f"sendp(f, iface='{port}', count={count}, verbose=False)\n")
    subprocess.run(["ip", "netns", "exec", TESTER_NS, "python3", "-c", script], check=True, timeout=60)


def all_arrived_at_their_ces(record: dict) -> None:
    """A trial's record: every frame of both directions received, none at the wrong CE."""
    for name in ("forward", "reverse"):
        d = record["directions"][name]
        assert (d["received"], d["wrong_ce"]) == (d["sent"], 0), record


def no_wrong_ce(record: dict) -> bool:
    """No frame of the trial went to or came from another CE (directions whose CE fields the
    tester checks; a B4's LAN keeps its own addresses, and dual DUTs show the tester none)."""
    return all(d.get("wrong_ce", 0) == 0 for d in record["directions"].values())


def throughput_and_latency(config: Path, tmp_path: Path, max_rate: int, error: int, latency_rate: int,
                           timestamps: int, lost: int = 0, receipt: float = 1.0) -> tuple[list[dict], dict]:
    """A throughput search (trials of 0.5 s up to `max_rate`) and a latency run of 2 s at
    `latency_rate` with `timestamps` tagged frames, both directions: what a busy host leaves
    intact, no speed. The search converges above zero with no frame to or from a wrong CE, its
    trials passing with `receipt` of what they sent (throughput.loss_tolerance: a user-space DUT
    descheduled on the shared CPUs loses frames at any rate); the latency run receives `receipt`
    of what it sent (all of it by default), no frame of a wrong CE, and every tagged frame but
    `lost`. Returns the search's trial records and the latency run's last record."""
    out = tmp_path / "throughput"
    xlatperf("throughput", "-c", str(config), "--out", str(out), "--duration", "0.5", *FAST,
             "--set", f"throughput.max_rate={max_rate}", "--set", f"throughput.error={error}",
             "--set", f"throughput.loss_tolerance={1 - receipt:g}")
    searched = trials(out)
    out = tmp_path / "latency"
    xlatperf("latency", "-c", str(config), "--out", str(out), "--rate", str(latency_rate), "--duration", "2", *FAST,
             "--set", "latency.delay=0.5", "--set", f"latency.timestamps={timestamps}")
    record = trials(out)[-1]
    for name in ("forward", "reverse"):
        tagged = record["delay"][name]["tagged"]
        assert tagged["count"] == timestamps and tagged["lost"] <= lost, tagged
    assert searched and all(no_wrong_ce(r) for r in searched)
    assert json.loads((tmp_path / "throughput" / "summary.json").read_text())["median"] > 0
    for d in record["directions"].values():
        assert d["received"] >= receipt * d["sent"], record
    assert no_wrong_ce(record)
    return searched, record
