# SPDX-License-Identifier: BSD-3-Clause
"""DNS traffic in the front end (issue 31, docs/dns.md): the [dns] section's rules, the flows and
the trial's `dns` object the plan builds, the replies' verdicts as counts, and the dns64
procedure through the fake engine."""

import json

import pytest

from fakes import FAKE_CONFIG
from xlatperf.config import load_config
from xlatperf.config.loading import validate
from xlatperf.engine.protocol import TrialResult
from xlatperf.frames.stack import IPV4, IPV6, dns_query
from xlatperf.measure.request import TrialRequest
from xlatperf.report import write_report
from xlatperf.run import run_procedure
from xlatperf.traffic.plan import TrafficPlan
from xlatperf.util.errors import ConfigError

PORTS = [{"mac": "02:00:00:00:00:01", "name": "p0", "link_speed_mbps": 10000},
         {"mac": "02:00:00:00:00:02", "name": "p1", "link_speed_mbps": 10000}]
DNS = {"dns": {"enabled": True, "aaaa_share": 1.0}, "traffic": {"direction": "forward"}}


def config(**sections):
    merged = {section: dict(keys) for section, keys in DNS.items()}
    for section, keys in sections.items():
        merged.setdefault(section, {}).update(keys)
    return validate(merged)


def test_a_query_frame_is_as_long_as_its_zone_makes_it():
    # 14 + 40 + 8 + 12 + (1 + 18 + 16) + 4 + 11 + 4: the engine's dns_frame_size (docs/dns.md).
    assert IPV6.carrying(dns_query("dns64perf.test", "xlatperf", True)).min_frame == 128
    assert IPV6.carrying(dns_query("dns64perf.test", "dns64perf", True)).min_frame == 125
    assert IPV4.carrying(dns_query("dns64perf.test", "xlatperf", True)).min_frame == 108
    assert IPV6.carrying(dns_query("example.org.", "xlatperf", False)).min_frame == 128 - 11 - 3


@pytest.mark.parametrize("sections, key", [
    ({"traffic": {"direction": "both"}}, "traffic.direction"),
    ({"dns": {"zone": "under_score.test"}}, "dns.zone"),
    ({"dns": {"zone": "a" * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "d" * 63}}, "dns.zone"),
    ({"dns": {"synthesis": "64:ff9b::/72"}}, "dns.synthesis"),
    ({"dns": {"synthesis": "64:ff9b:0:0:100::/96"}}, "dns.synthesis"),   # u octet 0x01 (RFC 6052 §2.2)
    ({"dns": {"a_records": "198.18.0.0/7"}}, "dns.a_records"),
    ({"dns": {"aaaa_records": "2001:db8::/64"}}, "dns.aaaa_records"),
    ({"dns": {"timeout": 0}}, "dns.timeout"),
    ({"dns": {"server": "2001:2::1"}}, "dns.server"),      # the default set-up's queries are IPv4
    ({"dns": {"authoritative": False}}, "dns.authoritative"),
    ({"dns": {"qtype": "A", "aaaa_share": 0.5}}, "dns.aaaa_share"),
    ({"dns": {"aaaa_share": 0.5}}, "dns.aaaa_share"),      # no DNS64 to synthesize the others
    ({"dns": {"names": "dns64perf", "server": "198.18.0.1", "aaaa_share": 0.5}}, "dns.aaaa_share"),  # none has AAAA
    ({"dns": {"names": "nsd"}}, "dns.names"),
    ({"traffic": {"imix": "simple"}}, "traffic.imix"),
    ({"traffic": {"mix_n": 2, "frame_size": 84}}, "traffic.mix_m"),
])
def test_a_dns_set_up_that_cannot_work_is_refused_naming_the_key(sections, key):
    with pytest.raises(ConfigError) as error:
        config(**sections)
    assert str(error.value).startswith(f"{key} = "), error.value


def test_the_plan_asks_from_the_sending_side_and_the_other_side_answers():
    c = config(left={"ip_version": 6}, right={"ip_version": 6}, traffic={"frame_size": 84},
               dns={"server": "2001:2::1", "ports": 1})
    plan = TrafficPlan(c, PORTS)
    first, second = plan.flows(100_000), plan.flows(100_000)
    flow = first[0]
    assert (flow["tx_port"], flow["rx_port"]) == (0, 0)
    fg = flow["foreground"]
    assert (fg["ip_version"], fg["dst_ip"], fg["dst_port"], fg["frame_size"]) == (6, "2001:2::1", 53, 128)
    assert "vary" not in fg and "rx" not in fg
    # Enough ports for the queries awaiting their answers (2 x rate x timeout / 65536), more
    # than the configured 1.
    assert flow["dns"]["ports"] == 4 and flow["dns"]["qtype"] == "AAAA"
    assert flow["dns"]["synthesis"] == "2001:db8:64::/96"
    assert flow["dns"]["nonce"] != second[0]["dns"]["nonce"]   # every trial's names its own
    assert plan.dns == {"zone": "dns64perf.test", "names": "xlatperf", "a": "198.18.0.0/15", "aaaa": "2001:db8::/96",
                        "aaaa_share": 1.0, "ttl": 3600, "soa_ttl": 300, "soa_minimum": 900, "authoritative": [1]}
    # Every reply check on (RA and the upstream count too: a DUT's resolver answers, asking
    # the tester's authoritative side).
    assert flow["dns"]["checks"] == ["ttl", "edns", "ra", "question", "duplicates", "upstream"]
    # The medium's maximum is for the answers (one AAAA record, 28 bytes more than the query).
    assert plan.max_rate == 10**10 // ((128 + 28 + 20) * 8)


def test_dns64perf_names_go_on_from_trial_to_trial_round_their_prefix():
    """dns64perf++'s names carry no nonce: each trial asks the names after the last trial's (the
    run's first at random), its queries shorter by 3 bytes (15 label characters); once the run
    has asked more names than dns.a_records has addresses, its trials' records say their names
    were asked before."""
    c = config(left={"ip_version": 6}, right={"ip_version": 6}, traffic={"frame_size": 84},
               dns={"server": "2001:2::1", "names": "dns64perf", "aaaa_share": 0, "authoritative": False,
                    "a_records": "10.0.0.0/16"})
    plan = TrafficPlan(c, PORTS)
    assert plan.dns["names"] == "dns64perf" and plan.dns["a"] == "10.0.0.0/16" and plan.dns["authoritative"] == []
    (flow,) = plan.flows(1000)
    first = flow["dns"]["names_from"]
    assert flow["foreground"]["frame_size"] == 125 and 0 <= first < 65_536
    assert "upstream" not in flow["dns"]["checks"]   # no authoritative side of the tester's to count
    assert plan.names_sent(40_000) == {"from": first, "count": 40_000, "asked_before": False}
    assert plan.flows(1000)[0]["dns"]["names_from"] == (first + 40_000) % 65_536
    assert plan.names_sent(40_000) == {"from": (first + 40_000) % 65_536, "count": 40_000, "asked_before": True}
    assert plan.flows(1000)[0]["dns"]["names_from"] == (first + 80_000) % 65_536
    assert TrafficPlan(c, PORTS).names_from != first or TrafficPlan(c, PORTS).names_from != first
    # xlatperf's names: a nonce each trial, no names_from, nothing to say.
    xlatperf = TrafficPlan(config(), PORTS)
    assert "names_from" not in xlatperf.flows(1000)[0]["dns"] and xlatperf.names_sent(10) is None


def test_names_asked_again_come_two_timeouts_after_their_first_query():
    plan = TrafficPlan(config(dns={"cache_share": 0.4, "timeout": 0.5}), PORTS)
    assert plan.flows(1000)[0]["dns"] | {"nonce": 0} == {
        "qtype": "AAAA", "edns": True, "ports": 1000, "nonce": 0, "synthesis": "2001:db8:64::/96",
        "checks": ["ttl", "edns", "question", "duplicates"],   # no RA: the tester's side answers
        "repeat": 0.4, "repeat_after": 1.0}
    assert "repeat" not in TrafficPlan(config(), PORTS).flows(1000)[0]["dns"]
    with pytest.raises(ConfigError, match=r"^trial.duration = 2.0: must be over 2 s with dns.cache_share"):
        config(dns={"cache_share": 0.4}, trial={"duration": 2.0})
    with pytest.raises(ConfigError, match=r"^dns.ttl = 1: must be over 2 s"):
        config(dns={"cache_share": 0.4, "ttl": 1})
    # A synthesis (a name without a AAAA record) lives as long as the negative answer.
    with pytest.raises(ConfigError, match=r"^dns.soa_ttl = 2: must be over 2 s .*RFC 6147 §5.1.7"):
        config(dns={"cache_share": 0.4, "soa_ttl": 2, "server": "198.18.0.1", "aaaa_share": 0.5})
    # Each reply check off alone.
    for key, off, name in (("dns_ttl", "off", "ttl"), ("dns_question", False, "question")):
        checks = TrafficPlan(config(checks={key: off}), PORTS).flows(1000)[0]["dns"]["checks"]
        assert name not in checks and len(checks) == 3
    of_a = TrafficPlan(config(checks={"dns_ttl": "a_record"}), PORTS).flows(1000)[0]["dns"]["checks"]
    assert of_a[0] == "ttl_a_record"
    with pytest.raises(ConfigError, match=r'^checks.dns_ttl = "yes": must be one of "rfc6147" \| "a_record" \| "off"'):
        config(checks={"dns_ttl": "yes"})


def test_too_few_source_ports_for_the_rate_is_an_error_naming_the_key():
    plan = TrafficPlan(config(traffic={"src_port": 65535}, dns={"timeout": 10}), PORTS)
    with pytest.raises(ConfigError, match=r"^traffic.src_port = 65535: leaves 1 source ports"):
        plan.flows(100_000)


def test_each_verdict_of_the_replies_is_a_count_of_its_own():
    reply = {"valid": True, "flows": [{"name": "forward", "sent": 100, "received": 90, "planned": 100, "streams": [
        {"kind": "foreground", "sent": 100, "received": 90, "late": 1,
         "dns": {"malformed": 0, "mismatch": 2, "truncated": 0, "servfail": 3, "nxdomain": 0,
                 "other_rcode": 0, "wrong_answer": 6}}]}], "ports": []}
    result = TrialResult.from_reply(100, reply)
    counts = result.directions["forward"]
    assert (counts.dns_wrong_answer, counts.dns_servfail, counts.dns_mismatch, counts.late) == (6, 3, 2, 1)
    assert counts.refused() == [(6, "wrong answers"), (3, "SERVFAIL replies"), (2, "replies to no query asked")]
    assert counts.to_dict()["dns_wrong_answer"] == 6
    plain = TrialResult.from_reply(100, {**reply, "flows": [{**reply["flows"][0], "streams": [{"sent": 100}]}]})
    assert plain.directions["forward"].dns_wrong_answer is None


def test_dns64_searches_query_rates_and_reports_queries_per_second(fake, monkeypatch):
    path = fake / "dns.toml"
    path.write_text(FAKE_CONFIG + '\n[dns]\nenabled = true\naaaa_share = 1.0\n')
    cfg = load_config(path, ["traffic.direction=forward", "trial.duration=1", "throughput.error=20000",
                             "trial.pause=0"])
    monkeypatch.setenv("FAKE_DUT_LIMIT", "300000")
    summary = run_procedure("dns64", cfg, fake / "out")
    assert summary["procedure"] == "dns64" and summary["unit"] == "qps"
    assert summary["n"] == 20   # RFC 8219 §9.2's repetitions by default (dns.repeat)
    assert 300_000 - 20_000 <= summary["median"] <= 300_000
    records = [json.loads(line) for line in (fake / "out" / "trials.jsonl").read_text().splitlines()]
    assert all(r["procedure"] == "dns64" for r in records)
    assert records[0]["directions"]["forward"]["dns_wrong_answer"] == 0
    # The authoritative side's answers are recorded with the trial.
    assert records[-1]["dns_answers"]["1"]["answered"] == records[-1]["directions"]["forward"]["received"]
    settings = summary["settings"]
    assert settings["dns"]["query_frame_size"] == 108
    assert settings["loss_criterion"].startswith("per-query timeout 1 s (RFC 8219 §9.2)")
    markdown = (fake / "out" / "report" / "report.md")
    write_report(fake / "out")
    text = markdown.read_text()
    assert "throughput (qps)" in text and "queries/s" in text
    assert "DNS AAAA queries for names of dns64perf.test" in text
    # What the report says of the frames is the queries' (not traffic.frame_size's test frames).
    assert "UDP to port 53: DNS AAAA queries" in text and "DNS answers of 136 bytes, the queries' 108" in text
    assert "the UDP source port, from traffic.src_port over 1000 ports" in text
    assert "every answer judged" in text and "DNS rates (unit qps) are queries per second" in text
    # Through a DUT that knows no DNS (no dns.server), in frames/s too (seed 003 §4).
    median = f"{int(summary['median']):,}"
    assert (f"{median} resolved queries/s through the DUT are {median} frames/s in each direction"
            in " ".join(text.split()))


def test_dns64_by_mlrsearch_reports_its_goals_in_queries_per_second(fake, monkeypatch):
    path = fake / "dns.toml"
    path.write_text(FAKE_CONFIG + '\n[dns]\nenabled = true\naaaa_share = 1.0\n')
    cfg = load_config(path, ["traffic.direction=forward", "trial.duration=1", "trial.pause=0",
                             "throughput.mode=mlrsearch", "throughput.preset=rfc2544", "dns.repeat=1"])
    monkeypatch.setenv("FAKE_DUT_LIMIT", "300000")
    summary = run_procedure("dns64", cfg, fake / "out")
    assert summary["procedure"] == "dns64" and summary["unit"] == "qps" and summary["complete"]
    assert summary["settings"]["mode"] == "mlrsearch"
    assert 0 < summary["median"] <= 300_000
    write_report(fake / "out")
    text = (fake / "out" / "report" / "report.md").read_text()
    assert "lower bound (qps)" in text and "MLRsearch (docs/mlrsearch.md) in [" in text
    assert "] queries/s; goals:" in text


def test_wrong_answers_fail_a_trial_and_are_said(fake, monkeypatch, capsys):
    path = fake / "dns.toml"
    path.write_text(FAKE_CONFIG + '\n[dns]\nenabled = true\naaaa_share = 1.0\n')
    cfg = load_config(path, ["traffic.direction=forward", "trial.duration=1", "trial.pause=0"])
    monkeypatch.setenv("FAKE_DNS_WRONG_ANSWERS", "0.5")
    summary = run_procedure("trial", cfg, fake / "out", rate=1000)
    record = json.loads((fake / "out" / "trials.jsonl").read_text().splitlines()[-1])
    forward = record["directions"]["forward"]
    assert forward["dns_wrong_answer"] == 500 and forward["received"] == 500
    assert record["loss_ratio"] == 0.5
    assert summary["procedure"] == "trial"


def test_the_trial_waits_for_the_last_querys_answer_at_least_dns_timeout():
    """A query's answer counts until dns.timeout after it was sent: a trial.timeout shorter than
    that would count the last queries' answers in time as lost."""
    short = config(trial={"timeout": 0.2}, dns={"timeout": 0.8})
    assert TrialRequest.from_config(short, [], 1.0).timeout == 0.8
    assert TrialRequest.from_config(short, [], 1.0, timeout=0.1).timeout == 0.8
    longer = config(trial={"timeout": 2.0}, dns={"timeout": 0.8})
    assert TrialRequest.from_config(longer, [], 1.0).timeout == 2.0
    frames = validate({"trial": {"timeout": 0.2}})
    assert TrialRequest.from_config(frames, [], 1.0).timeout == 0.2


def test_a_dns64s_exclusions_and_mapped_list_go_to_the_engine_only_with_a_dns64():
    """RFC 6147 §5.1.4: AAAA records in ::ffff:0:0/96 count as none by default, so the answer is
    the synthesis; the mapped list (BIND's) says which A records are synthesized from. Only a
    DNS64 (dns.server) applies them: the tester's own authoritative side answers as it serves."""
    server = {"dns": {"server": "2001:2::1"}, "left": {"ip_version": 6}, "right": {"ip_version": 6},
              "traffic": {"frame_size": 84}}
    flow = TrafficPlan(config(**server), PORTS).flows(1000)[0]["dns"]
    assert (flow["exclude"], flow["mapped"]) == (["::ffff:0:0/96"], [])
    told = config(**{**server, "dns": {**server["dns"], "exclude": ["64:ff9b::/96", "::ffff:0:0/96"],
                                       "mapped": ["198.18.0.0/16"]}})
    flow = TrafficPlan(told, PORTS).flows(1000)[0]["dns"]
    assert (flow["exclude"], flow["mapped"]) == (["64:ff9b::/96", "::ffff:0:0/96"], ["198.18.0.0/16"])
    assert "exclude" not in TrafficPlan(config(), PORTS).flows(1000)[0]["dns"]
    with pytest.raises(ConfigError, match=r'^dns.mapped = \["198.18.0.1/16"\]: must be a list of at most 64 IPv4'):
        config(dns={"mapped": ["198.18.0.1/16"]})
    with pytest.raises(ConfigError, match=r"^dns.exclude = \"::ffff:0:0/96\": must be a list"):
        config(dns={"exclude": "::ffff:0:0/96"})


def test_a_query_answered_twice_fails_the_trial_without_loss():
    """A second reply to a query is no loss (the query was answered) but a DUT's fault: the
    trial fails on it where checks.dns_duplicates has the engine count it."""
    reply = {"valid": True, "flows": [{"name": "forward", "sent": 100, "received": 100, "planned": 100, "streams": [
        {"kind": "foreground", "sent": 100, "received": 100, "duplicates": 3,
         "dns": {"wrong_answer": 0, "duplicate_reply": 3}}]}], "ports": []}
    counts = TrialResult.from_reply(100, reply).directions["forward"]
    assert counts.loss_ratio == 0 and counts.dns_duplicate_reply == 3
    assert not counts.passes(0.0)
    assert (3, "second replies to a query") in counts.refused()
    reply["flows"][0]["streams"][0]["dns"]["duplicate_reply"] = 0   # the check off: counted nowhere
    assert TrialResult.from_reply(100, reply).directions["forward"].passes(0.0)


def test_names_asked_again_after_their_records_expired():
    """dns.cache_expired: a name is asked again a second after the longest of its TTLs, and its
    resolver must ask the authoritative side again (the engine counts those asks too)."""
    short = {"server": "198.18.0.1", "cache_share": 0.5, "ttl": 2, "soa_ttl": 1, "soa_minimum": 1,
             "cache_expired": True}
    dns = TrafficPlan(config(dns=short, trial={"duration": 5}), PORTS).flows(1000)[0]["dns"]
    assert dns["repeat_after"] == 3.0 and dns["checks"][-1] == "upstream_expired"
    with pytest.raises(ConfigError, match=r"^trial.duration = 3.0: must be over 3 s .*after its records expired"):
        config(dns=short, trial={"duration": 3})
    with pytest.raises(ConfigError, match=r"^dns.cache_expired = true: needs dns.cache_share > 0"):
        config(dns={**short, "cache_share": 0})
    with pytest.raises(ConfigError, match=r"^dns.cache_expired = true: needs dns.server"):
        config(dns={**short, "server": ""})
    assert "upstream" not in TrafficPlan(config(dns={"server": "198.18.0.1"}, checks={"dns_upstream": False}),
                                         PORTS).flows(1000)[0]["dns"]["checks"]


def test_answers_beyond_what_the_resolver_asked_upstream_fail_the_trial():
    """The engine's upstream_due (the asks the right answers needed) against the authoritative
    ports' answers: a shortfall is dns_unasked, no loss but a failed trial."""
    def reply(due, answered):
        return {"valid": True, "ports": [{"index": 1, "dns": {"answered": answered, "unanswered": 0, "unsent": 0}}],
                "flows": [{"name": "forward", "sent": 100, "received": 100, "planned": 100, "streams": [
                    {"kind": "foreground", "sent": 100, "received": 100, "dns": {"upstream_due": due}}]}]}
    stale = TrialResult.from_reply(100, reply(200, 150)).directions["forward"]
    assert stale.dns_unasked == 50 and stale.loss_ratio == 0 and not stale.passes(0.0)
    assert (50, "answers without asking upstream") in stale.refused()
    assert TrialResult.from_reply(100, reply(200, 205)).directions["forward"].passes(0.0)   # retries: fine
    assert TrialResult.from_reply(100, reply(0, 0)).directions["forward"].dns_unasked is None
