# SPDX-License-Identifier: BSD-3-Clause
"""The DNS vectors the engine's codec is tested against (engine/tests/test_dns.cpp) are
dnspython's encoding, as engine/tests/dns_vectors.py writes it (issue 31): the file is that
script's output, the script's RFC 6052 embedding is the RFC's Table 1, and dnspython reads every
vector back as the message it claims to be."""

import ipaddress
import subprocess
import sys
from pathlib import Path

import dns.message
import dns.rcode
import dns.rdatatype
import pytest

TESTS = Path(__file__).resolve().parents[1] / "engine" / "tests"
sys.path.insert(0, str(TESTS))
import dns_vectors  # noqa: E402


def test_the_file_is_the_scripts_output():
    out = subprocess.run([sys.executable, str(TESTS / "dns_vectors.py")], capture_output=True, text=True,
                         check=True).stdout
    assert (TESTS / "dns_vectors.txt").read_text() == out


@pytest.mark.parametrize("prefix, embedded", [  # RFC 6052 §2.4, Table 1
    ("2001:db8::/32", "2001:db8:c000:221::"),
    ("2001:db8:100::/40", "2001:db8:1c0:2:21::"),
    ("2001:db8:122::/48", "2001:db8:122:c000:2:2100::"),
    ("2001:db8:122:300::/56", "2001:db8:122:3c0:0:221::"),
    ("2001:db8:122:344::/64", "2001:db8:122:344:c0:2:2100::"),
    ("2001:db8:122:344::/96", "2001:db8:122:344::192.0.2.33"),
])
def test_the_scripts_embedding_is_rfc_6052s(prefix, embedded):
    assert dns_vectors.embed(prefix, ipaddress.IPv4Address("192.0.2.33")) == ipaddress.IPv6Address(embedded)


def test_dnspython_reads_every_vector_as_what_it_claims():
    vectors = dict(dns_vectors.vectors())
    name = dns_vectors.name(0x5BE2A7C0, 1, 0x1F0)
    a, _ = dns_vectors.records(0x5BE2A7C0, 1, 0x1F0)
    for key, wire in vectors.items():
        m = dns.message.from_wire(wire)
        assert m.question[0].name.to_text().lower() in (name, dns_vectors.name(0x5BE2A7C0, 1, 0x1F1),
                                                        "010-000-002-255.dns64perf.test."), key
    answer = dns.message.from_wire(vectors["answer_a"])
    assert [r.address for r in answer.answer[0]] == [str(a)]
    nodata = dns.message.from_wire(vectors["answer_aaaa_nodata_edns"])
    assert not nodata.answer and nodata.authority[0].rdtype == dns.rdatatype.SOA and nodata.edns == 0
    synthesized = dns.message.from_wire(vectors["dns64_reply_96"])
    assert [ipaddress.IPv6Address(r.address) for r in synthesized.answer[0]] == [
        ipaddress.IPv6Address(f"64:ff9b::{a}")]
    assert dns.message.from_wire(vectors["dns64_reply_servfail"]).rcode() == dns.rcode.SERVFAIL
