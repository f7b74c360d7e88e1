# SPDX-License-Identifier: BSD-3-Clause
"""The engine's stateful mechanisms (RFC 9693) on the wire: phase-1 enumeration captured on the
receiving interface (every four-tuple exactly once, valid checksums as tshark sees them), the
Responder's state table, and phase-2 frames built from it (swapped tuples)."""

import subprocess

from xlatperf.config.loading import load_config
from xlatperf.engine.client import Engine

SPORTS, DPORTS, SRC_IPS = range(1024, 1034), range(80, 84), range(2, 7)  # 10 x 4 x 5 = 200
TUPLES = len(SPORTS) * len(DPORTS) * len(SRC_IPS)


def stream(src, dst, src_mac, dst_mac, **extra) -> dict:
    return {"ip_version": 4, "src_mac": src_mac, "dst_mac": dst_mac, "src_ip": src, "dst_ip": dst,
            "frame_size": 64, **extra}


def test_enumeration_learning_and_responding(make_lab, tmp_path):
    # af_packet: tcpdump on a tester port sees what arrives there; with af_xdp, the port's XDP
    # program hands every frame to the engine's socket before any capture could.
    config = load_config(str(make_lab("loopback", ports="af_packet")))
    left_mac, right_mac = config.left.mac, config.right.mac
    pcap = tmp_path / "phase1.pcap"
    dump = subprocess.Popen(["ip", "netns", "exec", "xlp-tester", "tcpdump", "-i", "xlp-tr", "-U",
                             "-c", str(TUPLES), "-w", str(pcap), "udp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert "listening" in dump.stderr.readline()
    vary = [{"field": "src_port", "mode": "enumerate", "min": SPORTS[0], "max": SPORTS[-1]},
            {"field": "dst_port", "mode": "enumerate", "min": DPORTS[0], "max": DPORTS[-1]},
            {"field": "src_ip", "mode": "enumerate", "offset": 2, "min": SRC_IPS[0], "max": SRC_IPS[-1]}]
    with Engine(config, log_path=tmp_path / "engine.log") as engine:
        engine.hello()
        phase1 = engine.trial({
            "duration": TUPLES / 1000, "timeout": 0.5, "seed": 7,
            "learn": {"port": 1, "flow": 0, "ip_version": 4, "table_size": TUPLES},
            "flows": [{"name": "initiator", "tx_port": 0, "rx_port": 1, "rate": 1000, "frames": TUPLES,
                       "foreground": stream("198.18.0.2", "198.19.0.2", left_mac, right_mac,
                                            vary=vary, enumerate="random")}]})
        assert phase1["valid"] and phase1["flows"][0]["received"] == TUPLES
        try:
            dump.wait(timeout=30)
        except subprocess.TimeoutExpired:
            dump.terminate()
            # tcpdump's own count: how many frames it received and how many the kernel dropped.
            raise AssertionError(f"tcpdump captured fewer than {TUPLES} frames: "
                                 f"{dump.communicate(timeout=10)[1].strip()}") from None
        assert phase1["state_table"] == {"port": 1, "entries": TUPLES, "capacity": TUPLES, "ip_version": 4}
        phase2 = engine.trial({
            "duration": 1.0, "timeout": 0.5,
            "flows": [{"name": "responder", "tx_port": 1, "rx_port": 0, "rate": 2000,
                       "from_table": {"port": 1, "selection": "increasing"},
                       "foreground": stream("198.19.0.2", "198.18.0.2", right_mac, left_mac)}]})
        assert phase2["valid"] and phase2["flows"][0]["received"] == 2000
        assert phase2["flows"][0]["streams"][0]["bad_length"] == 0

    fields = ["ip.src", "udp.srcport", "udp.dstport", "ip.checksum.status", "udp.checksum.status"]
    text = subprocess.run(["tshark", "-r", str(pcap), "-o", "ip.check_checksum:TRUE", "-o",
                           "udp.check_checksum:TRUE", "-T", "fields", "-E", "separator=,",
                           *[a for f in fields for a in ("-e", f)]],
                          capture_output=True, text=True, check=True).stdout
    rows = [line.split(",") for line in text.splitlines()]
    assert len(rows) == TUPLES
    assert all(r[3] == "1" and r[4] == "1" for r in rows), "every checksum valid"
    tuples = [(int(r[0].split(".")[2]) << 8 | int(r[0].split(".")[3]), int(r[1]), int(r[2])) for r in rows]
    expected = {(ip, sp, dp) for ip in SRC_IPS for sp in SPORTS for dp in DPORTS}
    assert set(tuples) == expected and len(set(tuples)) == TUPLES, "each four-tuple exactly once"
    assert tuples != sorted(tuples), "in pseudorandom order"
