# SPDX-License-Identifier: BSD-3-Clause
"""Every received frame judged (issue 29), end to end with the real engine and real DUTs: a
correct DUT of each lab kind passes every header check with a non-zero DSCP; each fault of each
faulty DUT (the router's nftables rules, the reference BRs', CEs' and AFTR's tc-BPF, each
spoiling a known share of the frames) is counted by its own counter at that share; a Linux
bridge measured as a router is reported as not decrementing the TTL, and one that floods the
frames to the receiving tester port, not addressed to it, for their destination MAC."""

import subprocess

import pytest

from e2e_util import trials, xlatperf
from xlatperf.lab.kinds import KINDS
from xlatperf.lab.kinds.resolver import Resolver

# Counts, not pacing, are asserted: a sender may fall behind on the shared CPUs (max_lag).
FAST = ["--set", "trial.pause=0", "--set", "trial.timeout=0.5", "--set", "trial.max_lag=0.5",
        "--set", "traffic.dscp=10"]
FAULTS = ("bad_address", "bad_ttl", "bad_tos", "bad_header", "bad_checksum")


def one_trial(config, tmp_path, rate: int = 2000, *extra: str) -> dict:
    """The directions of one trial at `rate` for 1 s, and of its stateful phase 1 if any
    ("phase1 forward")."""
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), "--rate", str(rate), "--duration", "1", "--out", str(out),
             *FAST, *extra)
    return {(f"{r['phase']} " if r.get("phase") else "") + name: d
            for r in trials(out) for name, d in r["directions"].items()}


# Every lab kind with the DUT working correctly (a new kind is in it): all but the bridge, a
# "router" that does not decrement the TTL (below).
CORRECT = sorted(set(KINDS) - {"bridge"})


@pytest.mark.parametrize("kind", CORRECT)
def test_a_correct_dut_passes_every_header_check(make_lab, tmp_path, kind):
    params = {"loss": 0} if kind == "lossy" else {}
    # A resolver asks upstream for each query in user space: at 2,000 queries/s with a busy loop
    # on a CPU, BIND answered 222 of 2,000 SERVFAIL (it gave up upstream). The checks need no
    # speed: 300 queries/s.
    rate = 300 if isinstance(KINDS[kind], Resolver) else 2000
    directions = one_trial(make_lab(kind, calibrate="no", **params), tmp_path, rate)
    for name, d in directions.items():
        # (The TAYGA kinds accept a zero UDP checksum over IPv6 where the sum is right:
        # checks.zero_udp_checksum_ipv6 = false, lab/kinds/tayga.py.)
        assert {f: d[f] for f in FAULTS} == dict.fromkeys(FAULTS, 0), (kind, name, d)
        assert d.get("wrong_ce", 0) == 0, (kind, name, d)
        # Translated IPv4 packets of at most 1,260 bytes keep to checks.df_small: RFC 7915 §5.1
        # (the BPF translators) or, as the lab sets for TAYGA, RFC 6145 §5.1.
        assert d.get("df_wrong", 0) == 0, (kind, name, d)
        # What arrives is received; a user-space DUT (TAYGA) on a loaded 2-CPU machine may
        # drop the odd frame, which is loss, not a header fault.
        assert d["sent"] > 0 and d["received"] >= 0.99 * d["sent"], (kind, name, d)


# Faulty DUTs: each fault spoils its own share of the frames (lab/kinds/base.py fault_params),
# so one trial shows each in its own counter. Per kind, direction and fault: whether the tester
# must count it. A tunnel's exit may hand a packet on without a decrement (RFC 2473 §3.3: the
# TTL check accepts it), so a missing decrement is caught where the DUT enters a tunnel or
# translates; the AFTR spoils only what it sends to the B4s (the kernel forwards the rest).
COUNTER = {"ttl": "bad_ttl", "tos": "bad_tos", "address": "bad_address", "checksum": "bad_checksum",
           "tunnel_tos": "bad_tos", "swap": "wrong_ce", "flow_label": "bad_header", "df": "df_wrong",
           "ecn": "bad_tos", "src_mac": "bad_address"}
FAULTY = {
    # kind: (faults, {direction: the faults counted there})
    # (ecn: the Not-ECT frames the tester sends by default marked CE, RFC 3168 §5; src_mac: sent
    # from another MAC than the one the tester resolved.)
    "router4": (("ttl", "tos", "address", "checksum", "ecn", "src_mac"),
                dict.fromkeys(("forward", "reverse"), {"ttl", "tos", "address", "checksum", "ecn", "src_mac"})),
    # (flow_label: a non-zero label rewritten, RFC 6437 §3; the tester sends traffic.flow_label.)
    "router6": (("ttl", "tos", "address", "checksum", "flow_label", "ecn"),
                dict.fromkeys(("forward", "reverse"), {"ttl", "tos", "address", "checksum", "flow_label", "ecn"})),
    "mape-br": (("ttl", "tos", "checksum"), {"forward": {"tos", "checksum"}, "reverse": {"ttl", "tos", "checksum"}}),
    # (df: DF set on small packets translated into IPv4, a mix with RFC 7915's clear ones: no
    # loss, but df_wrong, where the BR translates towards IPv4 and the CE towards its LAN.)
    "mapt-br": (("ttl", "tos", "checksum", "df"),
                {"forward": {"ttl", "tos", "checksum", "df"}, "reverse": {"ttl", "tos", "checksum"}}),
    "lwaftr": (("ttl", "tos", "checksum", "tunnel_tos"),
               {"forward": {"tos", "checksum"}, "reverse": {"ttl", "tos", "checksum", "tunnel_tos"}}),
    # (B4s 0 and 1 share one IPv4 address: only the test tag tells a swapped softwire.)
    "dslite-aftr": (("ttl", "tos", "checksum", "tunnel_tos", "swap"),
                    {"forward": set(), "reverse": {"ttl", "tos", "checksum", "tunnel_tos", "swap"}}),
    "b4": (("ttl", "tos", "checksum", "tunnel_tos"),
           {"forward": {"ttl", "tos", "checksum", "tunnel_tos"}, "reverse": {"tos", "checksum"}}),
    "lwb4": (("ttl", "tos", "checksum", "tunnel_tos"),
             {"forward": {"ttl", "tos", "checksum", "tunnel_tos"}, "reverse": {"tos", "checksum"}}),
    "mape-ce": (("ttl", "tos", "checksum"), {"forward": {"ttl", "tos", "checksum"}, "reverse": {"tos", "checksum"}}),
    "mapt-ce": (("ttl", "tos", "checksum", "df"),
                {"forward": {"ttl", "tos", "checksum"}, "reverse": {"ttl", "tos", "checksum", "df"}}),
}
SHARE = 15  # percent of each direction's frames per fault (router6: six of them)


@pytest.mark.parametrize("kind", FAULTY)
def test_each_fault_of_a_faulty_dut_is_counted_by_its_counter_at_its_share(make_lab, tmp_path, kind):
    faults, counted = FAULTY[kind]
    config = make_lab(kind, calibrate="no", faulty=",".join(faults), faulty_share=SHARE)
    directions = {name: d for name, d in one_trial(config, tmp_path).items() if not name.startswith("phase1")}
    assert set(directions) == set(counted), directions
    for name, d in directions.items():
        sent = d["sent"]
        expected = {counter: 0 for counter in (*FAULTS, "wrong_ce", "df_wrong")}
        for fault in counted[name]:
            expected[COUNTER[fault]] += SHARE / 100 * sent
        for counter, want in expected.items():
            # Binomial draws in the BPF DUTs (nftables counts exactly, within the learning
            # trial's shift of at most 20 frames): 6 standard deviations and 20 frames.
            spread = 6 * (sent * SHARE / 100 * (1 - SHARE / 100)) ** 0.5 * (want > 0) + 20
            assert abs(d.get(counter, 0) - want) <= spread, (kind, name, counter, d.get(counter), want, d)
        assert d["received"] + sum(d.get(f, 0) for f in expected) >= 0.99 * sent, (kind, name, d)


@pytest.mark.parametrize("sent_label", [0, 0x12345])
def test_a_router_that_labels_unlabelled_packets_passes(make_lab, tmp_path, sent_label):
    """RFC 6437 §3 lets a forwarding node set a flow label on a packet that arrives without one:
    the router6 with set_flow_label=yes writes 0x54321 into every such packet (captured below),
    and keeps a non-zero one. Neither is a fault."""
    config = make_lab("router6", calibrate="no", set_flow_label="yes")
    directions = one_trial(config, tmp_path, 2000, "--set", f"traffic.flow_label={sent_label}",
                           "--set", "capture.enabled=true", "--set", "capture.frames=20")
    for name, d in directions.items():
        assert {f: d[f] for f in FAULTS} == dict.fromkeys(FAULTS, 0), (name, d)
        assert d["sent"] > 0 and d["received"] == d["sent"], (name, d)
    labels = captured_flow_labels(tmp_path / "out")
    assert labels == {0x54321 if sent_label == 0 else sent_label}, labels


def captured_flow_labels(out) -> set[int]:
    """The IPv6 flow labels of the UDP test frames in a run's captures (tshark)."""
    files = sorted(out.rglob("*.pcapng"))
    assert files, list(out.rglob("*"))
    labels = set()
    for path in files:
        fields = subprocess.run(["tshark", "-r", str(path), "-Y", "udp", "-T", "fields", "-e", "ipv6.flow"],
                                capture_output=True, text=True, check=True).stdout.split()
        labels |= {int(value, 16) for value in fields}
    return labels


def test_a_bridge_measured_as_a_router_is_reported_for_its_ttl(make_lab, tmp_path):
    config = make_lab("bridge", calibrate="no")
    out = tmp_path / "out"
    proc = xlatperf("trial", "-c", str(config), "--rate", "2000", "--duration", "1", "--out", str(out), *FAST)
    [record] = trials(out)
    for name, d in record["directions"].items():
        assert d["bad_ttl"] == d["sent"] > 0, (name, d)
        assert d["received"] == 0
    assert "TTL" in proc.stdout, proc.stdout[-2000:]
    # With the TTL check off (a user who knows the DUT is a bridge) the frames are received.
    out2 = tmp_path / "out2"
    xlatperf("trial", "-c", str(config), "--rate", "2000", "--duration", "1", "--out", str(out2), *FAST,
             "--set", "checks.ttl=false")
    [record] = trials(out2)
    for d in record["directions"].values():
        assert d["received"] == d["sent"] > 0 and d["bad_ttl"] == 0, d


def test_a_bridge_that_floods_is_reported_for_the_destination_mac(make_lab, tmp_path):
    """Issue 42: the tester sends to a MAC nobody has (flood=yes), so the bridge floods every
    frame as unknown unicast; the receiving tester port runs promiscuous and gets them, not
    addressed to it. Each is bad_address, not received: the trial loses them all, whatever the
    TTL check says."""
    config = make_lab("bridge", calibrate="no", flood="yes")
    for run, extra in (("out", ()), ("out_ttl_off", ("--set", "checks.ttl=false"))):
        out = tmp_path / run
        xlatperf("trial", "-c", str(config), "--rate", "2000", "--duration", "1", "--out", str(out), *FAST,
                 *extra)
        [record] = trials(out)
        assert set(record["directions"]) == {"forward", "reverse"}, record
        for name, d in record["directions"].items():
            assert d["bad_address"] == d["sent"] > 0, (run, name, d)
            assert d["received"] == 0, (run, name, d)
            assert {f: d[f] for f in FAULTS if f != "bad_address"} == dict.fromkeys(FAULTS[1:], 0), (run, name, d)
        assert record["loss_ratio"] == 1.0, record


@pytest.mark.parametrize("kind", ["mape-br", "mapt-br"])
def test_ces_with_an_ipv4_prefix_and_a_br_that_puts_the_whole_address_into_their_iid(make_lab, tmp_path, kind):
    """RFC 7597 §5.2, §6: 4 EA bits of 192.0.2.0/24 give 16 CEs a /28 each. The emulated CEs
    send from and receive on every address of their prefix; a BR must put the prefix, padded
    with zeros, into a CE's MAP address. The faulty BR (faulty=iid) puts the whole IPv4
    destination there: its frames go to no CE, but where the address is the prefix's first."""
    config = make_lab(kind, calibrate="no", ea_bits=4, faulty="iid", faulty_share=SHARE)
    directions = {name: d for name, d in one_trial(config, tmp_path).items()}
    forward, reverse = directions["forward"], directions["reverse"]
    assert forward["wrong_ce"] == 0 and forward["received"] >= 0.99 * forward["sent"] > 0, forward
    share = SHARE / 100 * 15 / 16  # the first address of a /28 makes the same IID either way
    spread = 6 * (reverse["sent"] * share * (1 - share)) ** 0.5 + 20
    assert abs(reverse["wrong_ce"] - share * reverse["sent"]) <= spread, reverse
    assert {f: reverse[f] for f in FAULTS} == dict.fromkeys(FAULTS, 0), reverse
    assert reverse["received"] + reverse["wrong_ce"] >= 0.99 * reverse["sent"], reverse


def test_tayga_sets_df_as_rfc_6145_did_and_fails_rfc_7915s_rule(make_lab, tmp_path):
    """TAYGA sets DF on every packet it translates into IPv4: the lab holds it to RFC 6145 §5.1
    (checks.df_small, lab/kinds/tayga.py), under which it passes every header check above;
    held to RFC 7915 §5.1, each of its small translated packets breaks the rule, the trial
    fails (no loss) and the behaviour is named."""
    config = make_lab("siit", calibrate="no")
    out = tmp_path / "out"
    proc = xlatperf("trial", "-c", str(config), "--rate", "2000", "--duration", "1", "--out", str(out), *FAST,
                    "--set", "checks.df_small=rfc7915")
    [record] = trials(out)
    forward = record["directions"]["forward"]  # IPv6 -> IPv4: 64-byte frames
    assert forward["df_wrong"] == forward["df_set"] == forward["received"] > 0 and forward["df_clear"] == 0, forward
    assert forward["df_small"].startswith("DF set on translated packets ≤ 1,260 bytes: RFC 6145 §5.1 behaviour")
    assert "df_set" not in record["directions"]["reverse"]  # IPv4 -> IPv6: no DF to count
    assert "with DF against checks.df_small" in proc.stdout, proc.stdout[-2000:]


def test_a_translator_that_mixes_the_df_rules_fails_whatever_the_rule(make_lab, tmp_path):
    """The reference MAP-T BR with faulty=df sets DF on its share of the small IPv4 packets it
    translates and clears it on the rest (RFC 7915): neither RFC's behaviour, caught under
    "either" (the fewer kind counted) as under RFC 6145's rule (the clear ones); the RFC 7915
    rule's count is the fault test's above."""
    config = make_lab("mapt-br", calibrate="no", faulty="df", faulty_share=SHARE)
    for rule in ("either", "rfc6145"):
        out = tmp_path / rule
        xlatperf("trial", "-c", str(config), "--rate", "2000", "--duration", "1", "--out", str(out), *FAST,
                 "--set", f"checks.df_small={rule}")
        [record] = trials(out)
        forward = record["directions"]["forward"]
        sent, share = forward["sent"], SHARE / 100
        spread = 6 * (sent * share * (1 - share)) ** 0.5 + 20
        assert abs(forward["df_set"] - share * sent) <= spread, (rule, forward)
        assert forward["df_wrong"] == (forward["df_set"] if rule == "either" else forward["df_clear"]) > 0, forward
        assert "a mix" in forward["df_small"], forward


@pytest.mark.parametrize("kind, params", [
    ("router4", {}), ("siit", {}), ("b4", {}), ("mapt-br", {}),
    ("router4", {"faulty": "ecn", "faulty_share": SHARE})])
def test_ect_frames_pass_a_router_translator_and_tunnel_and_a_router_that_bleaches_ecn_is_caught(
        make_lab, tmp_path, kind, params):
    """ECT(0) sent (traffic.ecn): a router, a translator (TAYGA copies the whole class, RFC 7915
    §4.1, §5.1) and a tunnel's ends (RFC 6040: the B4 encapsulates, the tester's outer header
    decapsulated by it) deliver it as sent, or CE where congested; the faulty router bleaches
    ECT to Not-ECT on its share, each such frame bad_tos."""
    directions = one_trial(make_lab(kind, calibrate="no", **params), tmp_path, 2000, "--set", "traffic.ecn=ect0")
    for name, d in directions.items():
        want = SHARE / 100 * d["sent"] if params else 0
        spread = 6 * (d["sent"] * SHARE / 100) ** 0.5 + 20 if params else 0
        assert abs(d["bad_tos"] - want) <= spread, (kind, name, d)
        assert {f: d[f] for f in FAULTS if f != "bad_tos"} == dict.fromkeys(set(FAULTS) - {"bad_tos"}, 0), (kind, d)
        assert d["received"] + d["bad_tos"] >= 0.99 * d["sent"] > 0, (kind, name, d)
    if kind == "b4":  # its tunnel entry (tc-BPF) copies the inner ECN field: RFC 6040 §4.1 normal mode
        forward = directions["forward"]
        assert forward["tunnel_ecn_copied"] == forward["received"] > 0 == forward["tunnel_ecn_not_ect"], forward
        assert forward["tunnel_ecn"].startswith("tunnel entry's ECN: RFC 6040 §4.1 normal mode"), forward


@pytest.mark.parametrize("wide", [False, True])
def test_a_nat_sends_from_the_public_ports_it_is_stated_to_use(make_lab, tmp_path, wide):
    """The lab's NAT44 masquerades to the source ports 20000-29999 and states them
    (stateful.public_ports): the Initiator's frames arrive from one of them, phase 1 and 2 alike.
    Configured wider than stated (wide_ports=yes: 1024-65535, where Linux keeps the tester's own
    ports 1024-1123), every one of them is bad_address."""
    config = make_lab("nat44", calibrate="no", **({"wide_ports": "yes"} if wide else {}))
    directions = one_trial(config, tmp_path)
    for name, d in directions.items():
        initiators = name.endswith("forward")  # the left opens the connections
        if wide and initiators:
            assert d["bad_address"] == d["sent"] > 0 and d["received"] == 0, (name, d)
        else:
            assert d["bad_address"] == 0 and d["received"] >= 0.99 * d["sent"] > 0, (name, d)
