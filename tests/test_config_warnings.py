# SPDX-License-Identifier: BSD-3-Clause
"""Configurations whose frames a compliant DUT must drop get a warning naming the key, the
value and the rule (xlatperf/config/compliance.py), not an error: the Well-Known Prefix with
non-global IPv4 addresses (RFC 6052 §3.1), an RFC 6052 /96 prefix with a non-zero u octet
(§2.2), a DS-Lite inner source outside RFC 1918 and 192.0.0.0/29 (RFC 6333 §11)."""

import pytest

from xlatperf.config.compliance import compliance_warnings
from xlatperf.config.loading import load_config

# SIIT: IPv4 on the left, IPv6 on the right, each side's virtual address in the other's version.
SIIT = ["right.ip_version=6", "traffic.frame_size=84", "right.virtual_ipv4=198.19.0.9"]
MAP_T_DUAL = ["ipv4aas.technology=map-t", "ipv4aas.role=dual", "ipv4aas.rule_ipv6_prefix=2001:db8::/40",
              "ipv4aas.rule_ipv4_prefix=192.0.2.0/24"]
WKP_RULE = ("(RFC 6052 §3.1: the Well-Known Prefix 64:ff9b::/96 MUST NOT represent non-global IPv4 "
            "addresses, and translators MUST drop packets with such an address; use a network-specific "
            "prefix)")


def warnings(assignments) -> list[str]:
    return compliance_warnings(load_config(None, assignments))


@pytest.mark.parametrize("assignments", [
    [],                                                                     # a router
    SIIT + ["left.virtual_ipv6=2001:2:0:6464::c612:2"],                     # a network-specific prefix
    SIIT + ["left.virtual_ipv6=64:ff9b::808:808", "left.ipv4=8.8.8.8"],     # a global address in it
    ["ipv4aas.technology=464xlat", "ipv4aas.role=dual", "ipv4aas.pref64=2001:db8:64::/96"],
    ["ipv4aas.technology=464xlat", "ipv4aas.role=dual", "right.ipv4=8.8.4.4"],
    MAP_T_DUAL + ["ipv4aas.dmr=2001:db8:ffff::/64"],
    MAP_T_DUAL + ["ipv4aas.dmr=2001:db8:ffff:0:ff::/96"],                   # the u octet 0, bits 72-79 not
    *[["ipv4aas.technology=ds-lite", "ipv4aas.role=dual", f"left.ipv4={source}"]
      for source in ("192.0.0.2", "192.0.0.7", "10.1.2.3", "172.31.255.254", "192.168.1.1")],
])
def test_a_configuration_a_compliant_dut_forwards_gets_no_warning(assignments):
    assert warnings(assignments) == []


def test_the_well_known_prefix_with_a_non_global_ipv4_address():
    assert warnings(SIIT + ["left.virtual_ipv6=64:ff9b::c612:2"]) == [
        f'left.virtual_ipv6 = "64:ff9b::c612:2": embeds 198.18.0.2, not a global address, in the '
        f"Well-Known Prefix {WKP_RULE}"]
    # Private (RFC 1918), shared (RFC 6598) and RFC 5735 §3's addresses alike; one per address.
    found = warnings(SIIT + ["left.virtual_ipv6=64:ff9b::a00:1", "right.ipv6=64:ff9b::6440:1"])
    assert [w.split(":", 1)[0] for w in found] == ["left.virtual_ipv6 = \"64", "right.ipv6 = \"64"]
    assert "embeds 10.0.0.1" in found[0] and "embeds 100.64.0.1" in found[1]


def test_the_well_known_prefix_of_a_464xlat_or_map_t_dual_dut_embeds_the_ipv4_host():
    # The PLAT (the DMR's BR) embeds the IPv4 Internet's host, right.ipv4 = 198.19.0.2: the
    # default pref64 is the Well-Known Prefix.
    assert warnings(["ipv4aas.technology=464xlat", "ipv4aas.role=dual"]) == [
        'ipv4aas.pref64 = "64:ff9b::/96": is the Well-Known Prefix, and right.ipv4 = "198.19.0.2" '
        f"embedded in it is not a global address {WKP_RULE}"]
    assert warnings(MAP_T_DUAL + ["ipv4aas.dmr=64:ff9b::/96"])[0].startswith(
        'ipv4aas.dmr = "64:ff9b::/96": is the Well-Known Prefix, and right.ipv4 = "198.19.0.2"')
    # A CLAT alone: right.ipv6 is the server's address in the prefix; said once.
    clat = ["ipv4aas.technology=464xlat", "ipv4aas.role=clat", "right.ip_version=6", "traffic.frame_size=84",
            "right.virtual_ipv4=198.19.0.9", "right.ipv6=64:ff9b::c613:9", "left.virtual_ipv6=2001:db8:c1a7::2"]
    assert [w.split(" = ")[0] for w in warnings(clat)] == ["right.ipv6"]


def test_a_96_prefix_with_a_non_zero_u_octet():
    assert warnings(MAP_T_DUAL + ["ipv4aas.dmr=2001:db8:1:2:ff00::/96"]) == [
        'ipv4aas.dmr = "2001:db8:1:2:ff00::/96": has 0xff in the u octet (bits 64-71), which RFC 6052 §2.2 '
        "requires to be zero in an IPv4-embedded IPv6 address (RFC 7599 §5.1: these addresses are RFC "
        "6052's); a compliant translator refuses the prefix or drops the frames"]
    assert "RFC 6877 §6.1" in warnings(["ipv4aas.technology=464xlat", "ipv4aas.role=dual",
                                         "ipv4aas.pref64=2001:db8:64:0:100::/96"])[0]


@pytest.mark.parametrize("role", ["dual", "aftr", "b4"])
def test_a_ds_lite_inner_source_outside_rfc_1918_and_192_0_0_0_29(role):
    extra = {"dual": [], "aftr": ["ipv4aas.endpoint_ipv6=2001:db8:af::1", "traffic.direction=forward"],
             "b4": ["ipv4aas.endpoint_ipv6=2001:db8:af::1", "ipv4aas.ce_ipv6=2001:db8:b4::1"]}[role]
    for source in ("198.18.0.2", "192.0.0.8"):
        assert warnings(["ipv4aas.technology=ds-lite", f"ipv4aas.role={role}", f"left.ipv4={source}"] + extra) == [
            f'left.ipv4 = "{source}": the B4s\' inner IPv4 source is neither an RFC 1918 address nor in RFC '
            "6333 §5.7's 192.0.0.0/29; RFC 6333 §11: the AFTR MUST drop packets from any other source it "
            "was not told to accept (e.g. 192.0.0.2, 10.0.0.2)"]


def test_the_warnings_go_with_the_result(fake_config, tmp_path, capsys):
    """Printed before the measurement (stderr), kept in the summary, shown with the result's
    warnings by the report; a configuration without them has no such key."""
    from xlatperf.ui import cli
    out = tmp_path / "out"
    assert cli.main(["trial", "-c", str(fake_config), "--out", str(out), "--rate", "1000", "-q",
                     "--set", "ipv4aas.technology=ds-lite", "--set", "ipv4aas.role=dual"]) == 0
    message = 'left.ipv4 = "198.18.0.2": the B4s\' inner IPv4 source is neither an RFC 1918 address'
    assert f"xlatperf: warning: {message}" in capsys.readouterr().err
    import json
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config_warnings"][0].startswith(message)
    assert cli.main(["report", str(out)]) == 0
    assert message in (out / "report" / "report.md").read_text()
    plain = tmp_path / "plain"
    assert cli.main(["trial", "-c", str(fake_config), "--out", str(plain), "--rate", "1000", "-q"]) == 0
    assert "warning" not in capsys.readouterr().err
    assert "config_warnings" not in json.loads((plain / "summary.json").read_text())


# A DNS64 test (RFC 8219 §9): the client on IPv6 asks the DUT's resolver for AAAA records.
DNS64 = ["left.ip_version=6", "right.ip_version=6", "traffic.frame_size=84", "dns.enabled=true",
         "traffic.direction=forward", "dns.server=2001:2::1"]


def test_a_dns64_test_a_strict_dns64_passes_gets_no_warning():
    # The defaults: a network-specific prefix, which may represent 198.18.0.0/15 (RFC 6052 §3.1).
    assert warnings(DNS64) == []
    # The Well-Known Prefix with global A records, or where nothing is synthesized.
    assert warnings(DNS64 + ["dns.synthesis=64:ff9b::/96", "dns.a_records=8.8.0.0/16"]) == []
    assert warnings(DNS64 + ["dns.synthesis=64:ff9b::/96", "dns.aaaa_share=1"]) == []


def test_a_dns64_test_of_the_well_known_prefix_with_non_global_a_records():
    assert warnings(DNS64 + ["dns.synthesis=64:ff9b::/96"]) == [
        'dns.synthesis = "64:ff9b::/96": is the Well-Known Prefix, and dns.a_records = "198.18.0.0/15" '
        "lies in the non-global 198.18.0.0/15 (RFC 6052 §3.1: the Well-Known Prefix MUST NOT represent "
        "non-global IPv4 addresses; a strict DNS64 answers without a AAAA record); use a network-specific "
        "prefix"]
    # Any non-global range is named.
    assert "lies in the non-global 10.0.0.0/8" in warnings(
        DNS64 + ["dns.synthesis=64:ff9b::/96", "dns.a_records=10.0.0.0/8"])[0]


def test_a_dns_timeout_above_a_second_and_a_loss_tolerance_are_what_rfc_8219_advises_against():
    assert warnings(DNS64 + ["dns.timeout=1.5", "throughput.loss_tolerance=0.001"]) == [
        "dns.timeout = 1.5: RFC 8219 §9.2: no timeout higher than 1 s SHOULD be used (a DNS64 that "
        "queues queries gains by a longer one)",
        "throughput.loss_tolerance = 0.001: RFC 8219 §9.2 passes a rate only when every query was answered "
        "in time"]
    assert warnings(["dns.timeout=1.5", "throughput.loss_tolerance=0.001"]) == []   # frames, not DNS
