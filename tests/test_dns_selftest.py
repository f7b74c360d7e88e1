# SPDX-License-Identifier: BSD-3-Clause
"""RFC 8219 §9.2.1's self-test of a DNS64 tester (issue 31, docs/dns.md "The self-test"): the
selftest of a DNS configuration asks the tester's own authoritative side for AAAA records
within a quarter of the timeout, its result allows DNS64 test rates up to 1 / (2 x 1.1) of
what it answered, the lab's resolver kinds calibrate their tester ceiling with it, and a dns64
measurement never goes above it and states it."""

import pytest

from fakes import FAKE_CONFIG, console_text
from xlatperf import lab
from xlatperf.config import load_config
from xlatperf.config.dns import selftest_rate_limit
from xlatperf.config.loading import validate
from xlatperf.measure.store import read_trials
from xlatperf.procedures.ceiling import calibrated_ceiling, ceiling_conditions
from xlatperf.report import write_report
from xlatperf.run import run_procedure
from xlatperf.util.errors import MeasurementError

DNS = '\n[dns]\nenabled = true\nserver = "2001:2::1"\naaaa_share = 0.0\n'
IPV6 = ['left.ip_version=6', 'left.ipv6="2001:2::2"', 'right.ip_version=6', 'right.ipv6="2001:2:0:8000::2"',
        "traffic.direction=forward", "traffic.frame_size=84", "trial.duration=1", "trial.pause=0", "dns.repeat=1"]


def dns_config(fake, *overrides):
    path = fake / "dns64.toml"
    path.write_text(FAKE_CONFIG + DNS)
    return load_config(path, [*IPV6, *overrides])


def test_the_rate_a_self_test_allows_is_what_it_answered_over_2_2():
    # 2 x (r + delta) with delta = 0.1 r: dns64perf++'s 2.2 Mqps for DNS64 at 1 Mqps.
    assert selftest_rate_limit(2_200_000) == 1_000_000
    assert selftest_rate_limit(2_199_999) == 999_999
    assert selftest_rate_limit(0) == 0


def test_a_dns_selftest_asks_for_aaaa_records_within_a_quarter_of_the_timeout(fake, monkeypatch):
    """The DNS64 test's config (a server, no AAAA records, 1-s timeout): the selftest asks the
    tester's other side instead, for names that all have AAAA records, within 0.25 s."""
    monkeypatch.setenv("FAKE_TESTER_LIMIT", "440000")
    config = dns_config(fake, "throughput.error=2000")
    summary = run_procedure("selftest", config, fake / "self")
    dns = summary["config"]["dns"]
    assert (dns["server"], dns["qtype"], dns["aaaa_share"], dns["timeout"]) == ("", "AAAA", 1.0, 0.25)
    assert summary["settings"]["loss_criterion"].startswith("per-query timeout 0.25 s")
    result = summary["dns_selftest"]
    assert 440_000 - 2_000 <= result["answered_qps"] <= 440_000
    assert result["rate_limit"] == selftest_rate_limit(result["answered_qps"]) <= 200_000
    assert result["test_timeout"] == 1.0
    # The conditions it holds for are the DNS64 test's (its 1-s timeout), so that its rate,
    # set as tester.ceiling with them, applies to that test.
    assert result["ceiling_for"] == ceiling_conditions(config)
    assert (f"answered AAAA queries at up to {result['answered_qps']:,} queries/s within 0.25 s"
            in result["statement"])
    assert f"with a 1-s timeout at up to {result['rate_limit']:,} queries/s" in result["statement"]
    # ... said with the result, on the console and in the report.
    write_report(fake / "self", fake / "report", plots=False)
    assert result["statement"] in (fake / "report" / "report.md").read_text()
    assert result["statement"] in " ".join(console_text(summary).split())


def test_a_tester_whose_answers_are_wrong_fails_the_self_test(fake, monkeypatch):
    monkeypatch.setenv("FAKE_DNS_WRONG_ANSWERS", "0.01")
    with pytest.raises(MeasurementError, match="selftest: the .* check trial .* failed"):
        run_procedure("selftest", dns_config(fake), fake / "self")


def test_the_lab_calibrates_a_resolver_kind_by_the_self_test(fake):
    """dns64-bind's calibration config: the client's IPv6 on both sides of the calibration
    wire, the self-test's queries, and the same ceiling conditions as the lab's tester config
    (so the ceiling it yields applies to the lab's dns64 runs)."""
    params = lab.resolve_params("dns64-bind", {"ports": "af_packet"})
    sections = lab.calibration_config("dns64-bind", params)
    assert sections["left"]["ip_version"] == sections["right"]["ip_version"] == 6
    assert sections["dns"]["server"] == "" and sections["dns"]["aaaa_share"] == 1.0
    calibration = validate(sections)
    tester = validate(lab.tester_config("dns64-bind", params))
    assert ceiling_conditions(calibration) == ceiling_conditions(tester)
    assert "DNS queries over IPv6 (timeout 1 s)" in ceiling_conditions(tester)
    # A frame kind calibrates with frames, as before.
    frames = lab.calibration_config("router4", lab.resolve_params("router4", {"ports": "af_packet"}))
    assert "dns" not in frames and frames["left"]["ip_version"] == 4


def test_a_dns64_search_stays_within_the_self_test_and_states_it(fake, monkeypatch, tmp_path):
    monkeypatch.setenv("FAKE_DUT_LIMIT", "5000000")   # a DUT faster than the tester
    conditions = ceiling_conditions(dns_config(fake))
    ceiling = ["tester.ceiling=50000", f"tester.ceiling_for={conditions}",
               "tester.ceiling_calibration=the RFC 8219 §9.2.1 self-test, just now"]
    config = dns_config(fake, *ceiling, "throughput.error=1000")
    summary = run_procedure("dns64", config, fake / "dns64")
    assert max(t["rate"] for t in read_trials(fake / "dns64")) <= 50_000
    assert summary["median"] == 50_000 and summary["tester_limited"]
    stated = summary["settings"]["tester_ceiling"]
    assert stated["applies"] and stated["unit"] == "queries/s"
    assert stated["statement"].startswith("tester ceiling 50,000 queries/s (null/null ports, DNS queries over IPv6 (timeout 1 s)")
    write_report(fake / "dns64", tmp_path / "report", plots=False)
    assert stated["statement"] in (tmp_path / "report" / "report.md").read_text()
    assert "no RFC 8219 §9.2.1 self-test" not in console_text(summary)
    # Another timeout is another test: the self-test for 1 s says nothing of it, and the
    # result says so.
    other = dns_config(fake, *ceiling, "dns.timeout=0.5")
    assert not calibrated_ceiling(other).applies and "not applied" in calibrated_ceiling(other).statement()
    summary = run_procedure("dns64", other, fake / "other")
    assert "warning: no RFC 8219 §9.2.1 self-test of the tester applies to this set-up" in \
        " ".join(console_text(summary).split())
