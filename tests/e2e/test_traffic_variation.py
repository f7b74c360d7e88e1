# SPDX-License-Identifier: BSD-3-Clause
"""Traffic variation seen on the wire (issue 3): frames are captured with tcpdump on the DUT's
side of the veth and decoded and checksum-validated by tshark, an independent implementation."""

import collections
import ipaddress
import math
import subprocess

from e2e_util import summary, trials, xlatperf

RATE, DURATION = 10000, 2.0
FRAMES = int(RATE * DURATION)


def chi_square_p(counts: list[int]) -> float:
    """p-value of Pearson's chi-square test of equal expected counts (Wilson-Hilferty
    approximation of the chi-square distribution, accurate for >= 10 degrees of freedom)."""
    n, k = sum(counts), len(counts) - 1
    expected = n / len(counts)
    x = sum((c - expected) ** 2 / expected for c in counts)
    z = ((x / k) ** (1 / 3) - (1 - 2 / (9 * k))) / math.sqrt(2 / (9 * k))
    return 0.5 * math.erfc(z / math.sqrt(2))


def binned(values: list[int], low: int, high: int, bins: int) -> list[int]:
    counts = [0] * bins
    for v in values:
        counts[(v - low) * bins // (high - low + 1)] += 1
    return counts


def capture_forward(config, out, *settings: str, frames: int = FRAMES) -> list[dict]:
    """Runs one forward trial of `frames` frames and returns every UDP frame that reached the
    DUT's left interface, in arrival order, as decoded by tshark."""
    pcap = out / "dut-left.pcap"
    out.mkdir(parents=True, exist_ok=True)
    dump = subprocess.Popen(["ip", "netns", "exec", "xlp-dut", "tcpdump", "-i", "xlp-dl", "-U",
                             "-B", "65536", "-c", str(frames), "-w", str(pcap), "udp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert "listening" in dump.stderr.readline()
        xlatperf("trial", "-c", str(config), "--rate", str(RATE), "--duration", str(frames / RATE),
                 "--set", 'traffic.direction="forward"', "--set", 'trial.learning="no"',
                 "--set", "trial.timeout=0.5", *[a for s in settings for a in ("--set", s)],
                 "--out", str(out / "trial"), "-q")
        dump.wait(timeout=20)
    finally:
        if dump.poll() is None:
            dump.kill()
    fields = ["ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "udp.srcport", "udp.dstport",
              "ip.checksum.status", "udp.checksum.status"]
    text = subprocess.run(["tshark", "-r", str(pcap), "-o", "ip.check_checksum:TRUE",
                           "-o", "udp.check_checksum:TRUE", "-T", "fields", "-E", "separator=,",
                           *[a for f in fields for a in ("-e", f)]],
                          capture_output=True, text=True, check=True).stdout
    rows = [dict(zip(fields, line.split(","))) for line in text.splitlines() if line]
    assert len(rows) == frames, f"captured {len(rows)} of {frames} frames"
    for row in rows:  # tshark: 1 = good (0 = bad, 2 = not verified)
        assert row["udp.checksum.status"] == "1", row
        assert row["ip.checksum.status"] in ("1", ""), row  # "" for IPv6: no header checksum
    return rows


def word(address: str, offset: int) -> int:
    raw = ipaddress.ip_address(address).packed
    return raw[offset] << 8 | raw[offset + 1]


def test_pseudorandom_ports_and_addresses_stay_in_range_and_are_uniform(make_lab, tmp_path):
    config = make_lab("router4")
    rows = capture_forward(config, tmp_path, 'ports.forward_src="random"',
                           'ports.forward_dst="random"', 'addresses.left="random"',
                           'addresses.right="random"', "addresses.left_max=1001",
                           "addresses.right_max=1001")
    checks = {  # values, RFC 4814 / draft ranges
        "udp.srcport": ([int(r["udp.srcport"]) for r in rows], 1024, 65535),
        "udp.dstport": ([int(r["udp.dstport"]) for r in rows], 1, 49151),
        "ip.src": ([word(r["ip.src"], 2) for r in rows], 2, 1001),
        "ip.dst": ([word(r["ip.dst"], 2) for r in rows], 2, 1001),
    }
    for name, (values, low, high) in checks.items():
        assert low <= min(values) and max(values) <= high, name
        p = chi_square_p(binned(values, low, high, 20))
        assert p > 1e-3, f"{name}: chi-square p = {p:.2g}"
    for r in rows:  # only the 16-bit part varies
        assert r["ip.src"].startswith("198.18.") and r["ip.dst"].startswith("198.19.")


def test_increasing_and_decreasing_give_the_exact_sequence(make_lab, tmp_path):
    config = make_lab("router4")
    rows = capture_forward(config, tmp_path, 'ports.forward_src="increasing"',
                           "ports.forward_src_min=1000", "ports.forward_src_max=1009",
                           'ports.forward_dst="decreasing"', "ports.forward_dst_min=20",
                           "ports.forward_dst_max=25", 'addresses.left="increasing"',
                           "addresses.left_max=51", 'addresses.right="decreasing"',
                           "addresses.right_max=41", frames=2000)
    for k, r in enumerate(rows):
        assert int(r["udp.srcport"]) == 1000 + k % 10, k
        assert int(r["udp.dstport"]) == 25 - k % 6, k
        assert word(r["ip.src"], 2) == 2 + k % 50, k
        assert word(r["ip.dst"], 2) == 41 - k % 40, k


def test_256_destination_networks_are_uniform(make_lab, tmp_path):
    config = make_lab("router4")
    rows = capture_forward(config, tmp_path, "addresses.right_nets=256")
    networks = [ipaddress.ip_address(r["ip.dst"]).packed[2] for r in rows]
    counts = collections.Counter(networks)
    assert set(counts) <= set(range(256)) and len(counts) == 256
    assert chi_square_p([counts[n] for n in range(256)]) > 1e-3
    assert {r["ip.dst"].split(".")[3] for r in rows} == {"2"}  # only bits 16-23 vary


def test_ipv6_addresses_vary_bits_96_to_111_and_networks_bits_56_to_63(make_lab, tmp_path):
    config = make_lab("router6")
    rows = capture_forward(config, tmp_path, 'addresses.left="random"', 'addresses.right="random"',
                           "addresses.right_nets=16", 'ports.forward_src="random"')
    left_base = ipaddress.ip_address("2001:2::2").packed
    right_base = ipaddress.ip_address("2001:2:0:8000::2").packed
    for r in rows:
        src, dst = (ipaddress.ip_address(r[k]).packed for k in ("ipv6.src", "ipv6.dst"))
        assert src[:12] == left_base[:12] and src[14:] == left_base[14:], r
        assert dst[:7] == right_base[:7] and dst[8:12] == right_base[8:12], r
        assert dst[14:] == right_base[14:] and dst[7] < 16, r
        assert 2 <= word(r["ipv6.src"], 12) <= 65534
    assert chi_square_p(binned([word(r["ipv6.src"], 12) for r in rows], 2, 65534, 20)) > 1e-3


def test_varying_frames_are_still_recognised(make_lab, tmp_path):
    config = make_lab("loopback")
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), "--rate", "20000", "--duration", "1",
             "--set", 'ports.forward_src="random"', "--set", 'ports.reverse_dst="random"',
             "--set", 'addresses.left="random"', "--set", 'addresses.right="decreasing"',
             "--set", "addresses.left_offset_ipv4=0", "--set", "addresses.left_nets=64",
             "--out", str(out), "-q")
    (trial,) = [t for t in trials(out) if t.get("phase") != "learning"]
    assert trial["valid"]
    for d in trial["directions"].values():
        assert d["sent"] == 20000 and d["received"] == 20000


def test_dut_learns_1000_addresses_per_side_by_arp_and_throughput_succeeds(make_lab, tmp_path):
    config = make_lab("router4", addresses=1000)
    out = tmp_path / "out"
    xlatperf("throughput", "-c", str(config), "--duration", "1", "--set", "trial.pause=0",
             "--set", "trial.timeout=0.5", "--set", "throughput.max_rate=200000",
             "--set", "throughput.error=20000", "--out", str(out), "-q")
    s = summary(out)
    assert s["median"] > 0 and s["config"]["addresses"]["left"] == "random"
    learning = [t for t in trials(out) if t.get("phase") == "learning"]
    assert len(learning) == 1
    neighbours = subprocess.run(["ip", "-n", "xlp-dut", "neigh"], capture_output=True,
                                text=True, check=True).stdout.splitlines()
    learned = [n for n in neighbours if "lladdr 02:78:6c:00:00:0" in n and "PERMANENT" not in n]
    assert len(learned) >= 2000, f"{len(learned)} dynamically learned tester addresses"
