# SPDX-License-Identifier: BSD-3-Clause
"""DNS end to end (issue 31, docs/dns.md): the real engine's queries and authoritative side
against real resolvers nobody here wrote (BIND 9, Unbound and PowerDNS Recursor as DNS64 servers,
RFC 8219 §9) and
through DUTs that know no DNS (resolved queries through 464XLAT and MAP-T, seeds 001 §5 and 003
§4). A capture decoded by tshark checks the synthesis independently of the tester: every AAAA
answer the client got must be the resolver's RFC 6052 synthesis of the A record the tester's
authoritative side gave the resolver for that name, as both appear on the wire."""

import ipaddress
import subprocess
import sys
import time
from pathlib import Path

import pytest
from e2e_util import summary, trials, xlatperf

from xlatperf import lab
from xlatperf.lab.dns_relay import FAULTS as RELAY_FAULTS
from xlatperf.run.calibration import calibrate_lab

FAST = ["--set", "trial.pause=0", "--set", "trial.timeout=0.5", "--set", "trial.max_lag=0.5"]
PREFIX = ipaddress.IPv6Address("2001:db8:64::")   # the lab resolvers' (dns.synthesis's default)


# The counters of a right answer's checks ([checks] dns_*).
NEW_COUNTERS = ("dns_duplicate_record", "dns_bad_ttl", "dns_no_edns", "dns_no_ra", "dns_question_case",
                "dns_duplicate_reply")


def resolver_lab(make_lab, kind: str, **params) -> Path:
    return make_lab(kind, calibrate="no", **params)


@pytest.mark.parametrize("kind", ["dns64-bind", "dns64-unbound", "dns64-pdns"])
def test_dns64_throughput_converges_with_every_answer_valid(make_lab, tmp_path, kind):
    """Each resolver resolves a few thousand queries/s here, on one CPU beside the veths' work.
    After an overloaded trial it goes on answering its backlog for seconds (replies of an
    earlier trial, foreign to the next): a pause lets it finish, as RFC 2544 §23 e's does.
    BIND's lab is calibrated, by RFC 8219 §9.2.1's self-test (`lab up` runs it), which its
    result states."""
    config = resolver_lab(make_lab, kind)
    if kind == "dns64-bind":
        calibrate_lab()   # as `xlatperf lab up` does
    out = tmp_path / "out"
    xlatperf("dns64", "-c", str(config), "--duration", "1", "--repeat", "1", *FAST, "--set", "trial.pause=2",
             "--set", "throughput.max_rate=4000", "--set", "throughput.error=500", "--out", str(out), "-q")
    s = summary(out)
    assert s["procedure"] == "dns64" and s["unit"] == "qps" and s["complete"]
    records = trials(out)
    passing = [r for r in records if r["valid"] and r["loss_ratio"] == 0]
    assert s["median"] > 0 and s["median"] in {r["rate"] for r in passing}
    # A passing trial: every query answered with the right synthesis in time; the resolver
    # asked the tester's authoritative side (AAAA, then A: NODATA for every name) for them.
    # Every reply check on (the TTL's as the resolver sets it: RFC 6147's for BIND, the A
    # record's for Unbound and PowerDNS Recursor, which give a synthesis that one's TTL): none
    # caught a thing.
    checks = s["config"]["checks"]
    assert checks["dns_ttl"] == ("rfc6147" if kind == "dns64-bind" else "a_record"), checks
    assert all(checks[key] for key in ("dns_edns", "dns_ra", "dns_question", "dns_duplicates")), checks
    for r in passing:
        forward = r["directions"]["forward"]
        assert forward["received"] == forward["sent"] and forward["dns_wrong_answer"] == 0
        assert all(forward[key] == 0 for key in NEW_COUNTERS), forward
        assert r["dns_answers"]["1"]["answered"] >= forward["sent"]
    assert s["settings"]["dns"]["server"] == "2001:2::1"
    if kind == "dns64-bind":
        assert_self_tested(s)


def assert_self_tested(s: dict) -> None:
    """The lab's ceiling is the DNS64 test rate its self-test allowed: looped back through the
    calibration wire, AAAA queries answered within 0.25 s at 2 x 1.1 times that rate or more;
    it applies to the lab's dns64 runs (DNS queries over IPv6, 1-s timeout) and they state it."""
    ceiling = lab.lab_state()["ceiling"]
    assert "DNS queries over IPv6 (timeout 1 s)" in ceiling["for"]
    assert "RFC 8219 §9.2.1 self-test" in ceiling["calibration"]
    selftest = summary(Path(lab.CALIBRATION_OUT))
    assert selftest["config"]["dns"]["timeout"] == 0.25 and selftest["config"]["dns"]["qtype"] == "AAAA"
    answered = selftest["dns_selftest"]["answered_qps"]
    assert ceiling["fps"] == selftest["dns_selftest"]["rate_limit"] > 0
    assert 2.2 * ceiling["fps"] <= answered < 2.2 * (ceiling["fps"] + 1)
    # Every query of the self-test's passing trials was answered and judged valid.
    for r in trials(Path(lab.CALIBRATION_OUT)):
        if r["valid"] and r["loss_ratio"] == 0:
            forward = r["directions"]["forward"]
            assert forward["received"] == forward["sent"] == r["dns_answers"]["1"]["answered"]
    stated = s["settings"]["tester_ceiling"]
    assert stated["applies"] and stated["statement"].startswith(f"tester ceiling {ceiling['fps']:,} queries/s")


def capture_dns(during) -> list[dict]:
    """The DNS responses that cross the DUT namespace while `during()` runs, decoded by tshark."""
    pcap = "/run/xlp-dns-lab.pcap"
    dump = subprocess.Popen(["ip", "netns", "exec", lab.DUT_NS, "tcpdump", "--immediate-mode", "-U", "-n", "-B",
                             "16384", "-i", "any", "-w", pcap, "udp port 53"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        dump.stderr.readline()  # "listening on ...": the capture runs
        during()
        time.sleep(1.0)
    finally:
        dump.terminate()
        stats = dump.communicate(timeout=10)[1].decode()
    fields = ["ipv6.dst", "ip.dst", "dns.id", "dns.flags.response", "dns.flags.rcode", "dns.qry.name",
              "dns.qry.type", "dns.a", "dns.aaaa", "dns.count.queries"]
    try:
        assert "\n0 packets dropped by kernel" in "\n" + stats, stats
        out = subprocess.run(["tshark", "-r", pcap, "-Y", "dns.flags.response == 1", "-T", "fields", "-E",
                              "separator=|", *[x for f in fields for x in ("-e", f)]],
                             capture_output=True, text=True, check=True).stdout
    finally:
        Path(pcap).unlink(missing_ok=True)
    return [dict(zip(fields, line.split("|"))) for line in out.splitlines()]


def test_a_capture_shows_every_answer_synthesized_from_the_authoritative_a_record(make_lab, tmp_path):
    config = resolver_lab(make_lab, "dns64-bind")
    out = tmp_path / "out"
    rate, seconds = 500, 2
    responses = capture_dns(lambda: xlatperf("trial", "-c", str(config), "--rate", str(rate), "--duration",
                                             str(seconds), *FAST, "--out", str(out), "-q"))
    [record] = trials(out)
    forward = record["directions"]["forward"]
    assert forward["sent"] == rate * seconds and forward["received"] == forward["sent"]
    # The tester's authoritative side's A answers to the resolver (over IPv4, to the DUT's right
    # address), and the resolver's AAAA answers to the client (over IPv6).
    a_records = {r["dns.qry.name"].lower(): r["dns.a"] for r in responses
                 if r["ip.dst"] == "198.19.0.1" and r["dns.qry.type"] == "1"}
    to_client = [r for r in responses if r["ipv6.dst"] == "2001:2::2"]
    assert len(to_client) == forward["sent"]
    for r in to_client:
        name = r["dns.qry.name"].lower()
        assert r["dns.qry.type"] == "28" and r["dns.flags.rcode"] == "0", r
        a = ipaddress.IPv4Address(a_records[name])
        assert a in ipaddress.IPv4Network("198.18.0.0/15")
        assert ipaddress.IPv6Address(r["dns.aaaa"]) == ipaddress.IPv6Address(int(PREFIX) + int(a)), r


def test_a_resolver_with_another_prefix_gives_wrong_answers_not_loss(make_lab, tmp_path):
    config = resolver_lab(make_lab, "dns64-bind", wrong_prefix="yes")
    out = tmp_path / "out"
    done = xlatperf("trial", "-c", str(config), "--rate", "500", "--duration", "2", *FAST, "--out", str(out))
    [record] = trials(out)
    forward = record["directions"]["forward"]
    assert forward["received"] == 0 and forward["dns_wrong_answer"] == forward["sent"] == 1000
    assert forward["late"] == 0 and forward["dns_servfail"] == 0
    assert "1,000 wrong answers" in done.stdout


def test_a_resolver_that_refuses_with_the_header_alone_is_counted_by_its_rcode(make_lab, tmp_path):
    """Unbound's access-control refuse answers REFUSED without the question (to stay small):
    each reply is tied to its query by its port and ID and counted as another error RCODE, none
    lost and none foreign. A capture decoded by tshark shows the replies as Unbound sent them."""
    config = resolver_lab(make_lab, "dns64-unbound", refuse="yes")
    out = tmp_path / "out"
    done = {}
    replies = capture_dns(lambda: done.update(proc=xlatperf("trial", "-c", str(config), "--rate", "500",
                                                            "--duration", "2", *FAST, "--out", str(out))))
    [record] = trials(out)
    forward = record["directions"]["forward"]
    assert forward["sent"] == 1000 and forward["received"] == 0, forward
    assert forward["dns_other_rcode"] == 1000 and forward["late"] == 0, forward
    assert forward["dns_mismatch"] == 0 and forward["dns_malformed"] == 0, forward
    assert "foreign" not in done["proc"].stdout, done["proc"].stdout[-2000:]
    to_client = [r for r in replies if r["ipv6.dst"] == "2001:2::2"]
    assert len(to_client) == 1000, len(to_client)
    assert all(r["dns.flags.rcode"] == "5" and r["dns.count.queries"] == "0" for r in to_client), to_client[:3]


# Half the names have a AAAA record in ::ffff:0:0/96, which RFC 6147 §5.1.4 has a DNS64 exclude
# by default (so it synthesizes from their A records); the A records lie in 198.18.0.0/15.
MAPPED_V4_AAAA = ["--set", 'dns.aaaa_records="::ffff:0:0/96"', "--set", "dns.aaaa_share=0.5"]


@pytest.mark.parametrize("params, sets, wrong", [
    # BIND's default exclusion applied, as the tester's default dns.exclude expects: all good.
    ({}, MAPPED_V4_AAAA, (0, 0)),
    # A DNS64 that excludes nothing passes the ::ffff AAAA records on: each one caught.
    ({"exclude": "none"}, MAPPED_V4_AAAA, (0.4, 0.6)),
    # Only 198.18.0.0/16 mapped (half the A records), and the tester told so: NODATA is right
    # for the other half ...
    ({"mapped": "198.18.0.0/16"}, [], (0, 0)),
    # ... and wrong where the tester expects every A record mapped.
    ({"mapped": "198.18.0.0/16"}, ["--set", "dns.mapped=[]"], (0.4, 0.6)),
    # A /40 prefix (RFC 6052 §2.2: the u octet skipped), told as it is: all good ...
    ({"prefix": "2001:db8:6400::/40"}, [], (0, 0)),
    # ... and told as a /96 of the same bits: every synthesis caught.
    ({"prefix": "2001:db8:6400::/40"}, ["--set", 'dns.synthesis="2001:db8:6400::/96"'], (1, 1)),
])
def test_a_dns64s_exclusions_mapped_list_and_prefix_are_judged_as_rfc_6147_says(make_lab, tmp_path, params,
                                                                                 sets, wrong):
    config = resolver_lab(make_lab, "dns64-bind", **params)
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), "--rate", "500", "--duration", "2", *FAST, *sets, "--out", str(out), "-q")
    [record] = trials(out)
    forward = record["directions"]["forward"]
    assert forward["sent"] == 1000 and forward["late"] == 0, forward
    low, high = wrong
    assert low * 1000 <= forward["dns_wrong_answer"] <= high * 1000, forward
    assert forward["received"] + forward["dns_wrong_answer"] == 1000, forward


def test_names_asked_again_are_answered_from_the_resolvers_cache(make_lab, tmp_path):
    """RFC 8219 §9.2's cache hits: half the queries of the trial's last 2 s repeat a name asked
    2 s before; BIND answers them from its cache, so the tester's authoritative side is asked
    (AAAA, then A) only for the names asked first."""
    config = resolver_lab(make_lab, "dns64-bind")
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), "--rate", "500", "--duration", "4", *FAST, "--set", "dns.cache_share=0.5",
             "--out", str(out), "-q")
    [record] = trials(out)
    forward = record["directions"]["forward"]
    assert forward["sent"] == 2000 and forward["received"] == 2000
    new_names = 2000 - 500          # queries 1000..1999: every other one repeats a name
    answered = record["dns_answers"]["1"]["answered"]
    assert 2 * new_names <= answered <= 2 * new_names + 10, answered   # (a resolver's retry or two)


@pytest.mark.parametrize("kind", ["464xlat", "mapt-dual"])
def test_resolved_queries_through_a_dut_that_knows_no_dns(make_lab, tmp_path, kind):
    """The tester's authoritative side answers its own client's A queries through the DUT (seed
    001 §5's set-up): a throughput in resolved queries/s. Behind the MAP-T CE the client keeps
    to one source port, its CE's (a port outside the CE's port set is no MAP-T traffic)."""
    config = make_lab(kind, calibrate="no")
    out = tmp_path / "out"
    ports = ["--set", "dns.ports=1"] if kind == "mapt-dual" else []
    xlatperf("dns64", "-c", str(config), "--duration", "1", "--repeat", "1", *FAST, *ports, "--set", "dns.enabled=true",
             "--set", "dns.qtype=A", "--set", "traffic.direction=forward", "--set", "stateful.enabled=false",
             "--set", "throughput.max_rate=20000", "--set", "throughput.error=2000", "--out", str(out), "-q")
    s = summary(out)
    assert s["complete"] and s["unit"] == "qps" and s["median"] > 0
    passing = [r for r in trials(out) if r["valid"] and r["loss_ratio"] == 0]
    assert s["median"] in {r["rate"] for r in passing}
    for r in passing:   # each query's answer crossed the DUT twice, every one valid
        assert r["dns_answers"]["1"]["answered"] == r["directions"]["forward"]["sent"]


def test_a_dns64_that_spoils_its_replies_is_caught_at_the_share_of_each_fault(make_lab, tmp_path):
    """The lab's faulty DNS64 (lab/dns_relay.py, in front of BIND) spoils 10 % of the replies
    each way no resolver can be configured to: each counted apart, exactly at its share, each
    failing the trial; with the reply checks off every reply counts as the right answer it is
    otherwise."""
    config = resolver_lab(make_lab, "dns64-bind", faulty=",".join(RELAY_FAULTS), faulty_share=10)
    out = tmp_path / "out"
    done = xlatperf("trial", "-c", str(config), "--rate", "500", "--duration", "2", *FAST, "--out", str(out))
    [record] = trials(out)
    forward = record["directions"]["forward"]
    assert forward["sent"] == 1000 and forward["late"] == 0, forward
    assert all(forward[f"dns_{fault}"] == 100 for fault in RELAY_FAULTS), forward
    assert forward["received"] == 600 and forward["dns_bad_ttl"] == 0, forward   # a reply sent twice is answered
    assert "100 second replies to a query" in done.stdout and "100 replies without EDNS(0)" in done.stdout
    off = tmp_path / "off"
    checks_off = [x for key in ("dns_edns", "dns_ra", "dns_question", "dns_duplicates")
                  for x in ("--set", f"checks.{key}=false")]
    xlatperf("trial", "-c", str(config), "--rate", "500", "--duration", "2", *FAST, *checks_off, "--out", str(off),
             "-q")
    [record] = trials(off)
    forward = record["directions"]["forward"]
    assert forward["received"] == forward["sent"] == 1000, forward
    assert all(forward[f"dns_{fault}"] == 0 for fault in RELAY_FAULTS), forward
    assert record["valid"] and record["loss_ratio"] == 0, record


@pytest.mark.parametrize("params, sets", [
    # cache-min-ttl above the records' 3600 s: every answer outlives its record.
    ({"min_ttl": 7200}, []),
    # Unbound as it is, held to RFC 6147 §5.1.7: its synthesis lives as long as the A record
    # (3600 s), not min(A, the negative AAAA answer's 300 s).
    ({}, ["--set", 'checks.dns_ttl="rfc6147"']),
])
def test_a_resolver_whose_answers_outlive_their_records_is_caught(make_lab, tmp_path, params, sets):
    config = resolver_lab(make_lab, "dns64-unbound", **params)
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), "--rate", "500", "--duration", "2", *FAST, *sets, "--out", str(out), "-q")
    [record] = trials(out)
    forward = record["directions"]["forward"]
    assert forward["sent"] == 1000 and forward["dns_bad_ttl"] == 1000 and forward["received"] == 0, forward


# A client of dns64perf++'s names, run in the DUT namespace against its resolver: each name's
# AAAA and A answers, as dnspython reads them.
DNS64PERF_CLIENT = """
import sys, dns.message, dns.query
for name in sys.argv[1:]:
    for rdtype in ("AAAA", "A"):
        reply = dns.query.udp(dns.message.make_query(name, rdtype), "2001:2::1", timeout=2)
        print(name, rdtype, reply.rcode(), " ".join(r.to_text() for rrset in reply.answer for r in rrset))
"""


def test_dns64perf_names_are_answered_by_the_authoritative_side(make_lab, tmp_path):
    """dns64perf++'s names ({000..255}-{000..255}-{000..255}-{000..255}.dns64perf.test: A the
    four numbers, no AAAA), which the tester's authoritative side answers while a trial runs:
    BIND synthesizes each one's AAAA from that A record (dns64perf++ 1.0, built from its source,
    got 256 valid answers of 256 so; docs/dns.md)."""
    config = resolver_lab(make_lab, "dns64-bind")
    trial = subprocess.Popen([sys.executable, "-m", "xlatperf", "trial", "-c", str(config), "--rate", "100",
                              "--duration", "6", *FAST, "--out", str(tmp_path / "out"), "-q"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(3)   # the engine started and the trial runs: its right port answers
        names = ["010-000-002-255.dns64perf.test.", "192-000-002-033.DNS64perf.test."]
        out = subprocess.run(["ip", "netns", "exec", lab.DUT_NS, sys.executable, "-c", DNS64PERF_CLIENT, *names],
                             capture_output=True, text=True, timeout=30, check=True).stdout
    finally:
        assert trial.wait(timeout=60) == 0
    answers = {tuple(line.split()[:2]): line.split()[2:] for line in out.splitlines()}
    assert answers[names[0], "A"] == ["0", "10.0.2.255"], out
    assert answers[names[0], "AAAA"] == ["0", "2001:db8:64::a00:2ff"], out
    assert answers[names[1], "AAAA"] == ["0", "2001:db8:64::c000:221"], out   # RFC 6052's 192.0.2.33


# Names asked again after their records expired (dns.cache_expired): TTLs of 2 s (A) and 1 s
# (the negative AAAA answer's), half the queries of the last 2 s of a 5-s trial asking a name
# first asked 3 s before.
EXPIRED = ["--set", "dns.ttl=2", "--set", "dns.soa_ttl=1", "--set", "dns.soa_minimum=1", "--set",
           "dns.cache_share=0.5", "--set", "dns.cache_expired=true"]


@pytest.mark.parametrize("kind, params, sets, unasked", [
    # BIND and Unbound ask the tester's authoritative side again for every expired name: none
    # unasked (BIND's 5,000 asks for 2,500 queries, two each).
    ("dns64-bind", {}, [], (0, 0)),
    ("dns64-unbound", {}, [], (0, 0)),
    # Unbound with cache-min-ttl 3600 keeps them and answers the 500 repeats from its cache,
    # asking nothing (AAAA and A: about 1,000 asks missing); its TTLs are not judged here, so
    # only the upstream count can tell.
    ("dns64-unbound", {"min_ttl": 3600}, ["--set", 'checks.dns_ttl="off"'], (900, 1000)),
])
def test_names_asked_after_their_records_expired_must_be_asked_upstream_again(make_lab, tmp_path, kind, params,
                                                                               sets, unasked):
    config = resolver_lab(make_lab, kind, **params)
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), "--rate", "500", "--duration", "5", *FAST, *EXPIRED, *sets,
             "--out", str(out), "-q")
    [record] = trials(out)
    forward = record["directions"]["forward"]
    assert forward["sent"] == 2500 and forward["received"] == 2500, forward
    low, high = unasked
    assert low <= forward.get("dns_unasked", 0) <= high, (forward, record["dns_answers"])


def test_a_resolver_serving_expired_records_is_caught_by_their_ttl(make_lab, tmp_path):
    """Unbound with serve-expired answers each of the 500 names asked after their records
    expired at once from its cache, with serve-expired-reply-ttl's 30 s (more than the A
    record's 2 s), and refreshes them upstream only after (none unasked): each such answer is
    bad_ttl, every other one right."""
    config = resolver_lab(make_lab, "dns64-unbound", serve_expired="yes")
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), "--rate", "500", "--duration", "5", *FAST, *EXPIRED, "--out", str(out),
             "-q")
    [record] = trials(out)
    forward = record["directions"]["forward"]
    assert forward["sent"] == 2500 and forward["dns_bad_ttl"] == 500 and forward["received"] == 2000, forward
    assert forward.get("dns_unasked", 0) == 0, (forward, record["dns_answers"])


def dns64perf_names(a_records: str) -> list[str]:
    # No retakes: a trial taken again would ask the next names, and each trial's names here are
    # asserted (a spoiled trial stays in the record as it is).
    return ["--set", 'dns.names="dns64perf"', "--set", f'dns.a_records="{a_records}"', "--set", "trial.retakes=0"]


def test_dns64perf_names_through_bind_each_trial_its_own(make_lab, tmp_path):
    """dns64perf++'s names (dns.names = "dns64perf": 198-018-002-033.dns64perf.test, A the four
    numbers), answered by the tester's authoritative side through BIND: every answer judged
    right, and BIND asks the authoritative side for every name (AAAA, then A) in each of the
    two trials, the second asking the 1,000 names after the first's."""
    config = resolver_lab(make_lab, "dns64-bind")
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), "--rate", "500", "--duration", "2", "--repeat", "2", *FAST,
             *dns64perf_names("10.0.0.0/16"), "--out", str(out), "-q")
    first, second = trials(out)
    for record in (first, second):
        forward = record["directions"]["forward"]
        assert forward["sent"] == forward["received"] == 1000, forward
        assert forward.get("dns_unasked", 0) == 0 and record["dns_answers"]["1"]["answered"] == 2000, record
        assert not record["dns_names"]["asked_before"]
    assert second["dns_names"]["from"] == (first["dns_names"]["from"] + 1000) % 65536


def test_dns64perf_names_asked_again_are_answered_from_the_cache_and_said(make_lab, tmp_path):
    """Three trials of 500 names in a /22 (1,024 names): the third comes round to the first's
    names, which BIND answers from its cache without asking (about 2 x 476 asks unasked); its
    record and console line say that its names were asked before."""
    config = resolver_lab(make_lab, "dns64-bind")
    out = tmp_path / "out"
    proc = xlatperf("trial", "-c", str(config), "--rate", "250", "--duration", "2", "--repeat", "3", *FAST,
                    *dns64perf_names("10.0.0.0/22"), "--out", str(out), check=False)
    records = trials(out)
    assert [r["dns_names"]["asked_before"] for r in records] == [False, False, True]
    assert [r["directions"]["forward"].get("dns_unasked", 0) for r in records[:2]] == [0, 0]
    assert 2 * 476 * 0.9 <= records[2]["directions"]["forward"]["dns_unasked"] <= 2 * 476, records[2]
    assert "names of earlier trials asked again" in proc.stdout


@pytest.mark.parametrize("kind", ["dns64-bind", "dns64-unbound", "dns64-pdns"])
def test_a_dns64_whose_zone_nsd_serves_has_every_answer_judged(make_lab, tmp_path, kind):
    """The test zone served by NSD (real authoritative software, `zone_server=nsd`: dns64perf++'s
    names of 198.18.0.0/15), not by the tester: each resolver's 1,000 answers are judged right,
    with every reply check on and none of their faults counted."""
    config = resolver_lab(make_lab, kind, zone_server="nsd")
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), "--rate", "500", "--duration", "2", *FAST, "--out", str(out), "-q")
    [record] = trials(out)
    forward = record["directions"]["forward"]
    assert forward["sent"] == forward["received"] == 1000, forward
    assert all(forward[counter] == 0 for counter in NEW_COUNTERS), forward
    assert record["valid"] and record["dns_names"]["count"] == 1000
    assert not record.get("dns_answers")   # the tester answered nothing


@pytest.mark.parametrize("params, counter, count", [
    ({"wrong_prefix": "yes"}, "dns_wrong_answer", 1000),
    ({"faulty": "duplicate_record,question_case", "faulty_share": "10"}, "dns_duplicate_record", 100),
])
def test_a_faulty_dns64_whose_zone_nsd_serves_is_caught(make_lab, tmp_path, params, counter, count):
    config = resolver_lab(make_lab, "dns64-bind", zone_server="nsd", **params)
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), "--rate", "500", "--duration", "2", *FAST, "--out", str(out), "-q",
             check=False)
    [record] = trials(out)
    forward = record["directions"]["forward"]
    assert forward["sent"] == 1000 and forward[counter] == count, forward
    assert forward["received"] == 1000 - count - forward["dns_question_case"], forward
