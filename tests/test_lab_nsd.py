# SPDX-License-Identifier: BSD-3-Clause
"""The DNS64 lab kinds' `zone_server=nsd` (xlatperf/lab/nsd.py): NSD's zone file of
dns64perf++'s names and its configuration, the resolvers' configurations naming NSD's address,
and the tester config that goes with them. No root, no namespace: the texts only (NSD's own
checkers read them where the nsd package is installed)."""

import ipaddress
import shutil
import subprocess

import dns.rdataclass
import dns.rdatatype
import dns.zone
import pytest

from xlatperf import lab
from xlatperf.lab import daemons, nsd
from xlatperf.lab.kinds.resolver import ZONE

RESOLVER_KINDS = ("dns64-bind", "dns64-unbound", "dns64-pdns")
# What each resolver's configuration says for the zone's one server (at ADDRESS).
ZONE_SERVER_LINES = {"dns64-bind": 'zone "dns64perf.test" { type static-stub; server-addresses { ADDRESS; }; };',
                     "dns64-unbound": "    stub-addr: ADDRESS\n",
                     "dns64-pdns": "forward-zones=dns64perf.test=ADDRESS\n"}


@pytest.fixture(scope="module")
def zone_text():
    return nsd.zone_text(ZONE)


@pytest.fixture(scope="module")
def small_zone():
    """The zone of a /22 read by dnspython (the /15's 131,072 names take it twenty seconds)."""
    return dns.zone.from_text(nsd.zone_text(ZONE, "198.18.0.0/22"), origin=ZONE + ".", relativize=False)


def test_zone_has_every_name_of_the_prefix_with_its_a_record(small_zone):
    zone = small_zone
    assert len(zone.nodes) == 1024 + 2   # every name, the apex and the name server's
    assert sum(len(node.rdatasets) for node in zone.nodes.values()) == 1024 + 3   # and the SOA, NS
    records = {str(name): rdataset for name, node in zone.nodes.items() for rdataset in node.rdatasets
               if str(name) != ZONE + "."}
    a = records["198-018-002-033.dns64perf.test."]
    assert (a.rdtype, a.ttl, [r.address for r in a]) == (dns.rdatatype.A, 3600, ["198.18.2.33"])
    for name, address in (("198-018-000-000", "198.18.0.0"), ("198-018-003-255", "198.18.3.255"),
                          ("198-018-001-100", "198.18.1.100")):
        assert [r.address for r in records[f"{name}.dns64perf.test."]] == [address]
    assert "198-018-004-000.dns64perf.test." not in records
    assert not any(r.rdtype == dns.rdatatype.AAAA for r in records.values())
    assert all(r.rdclass == dns.rdataclass.IN for r in records.values())


def test_zone_soa_carries_the_tester_configs_ttls(small_zone):
    zone = small_zone
    soa = zone.find_rdataset(ZONE + ".", "SOA")
    assert soa.ttl == 300 and soa[0].minimum == 900   # dns.soa_ttl, dns.soa_minimum
    assert soa[0].mname.to_text() == "ns.dns64perf.test."
    assert [r.target.to_text() for r in zone.find_rdataset(ZONE + ".", "NS")] == ["ns.dns64perf.test."]
    assert [r.address for r in zone.find_rdataset("ns.dns64perf.test.", "A")] == ["127.0.0.53"]
    # the records' TTL is the tester config's dns.ttl default, the SOA's its soa_ttl and soa_minimum
    assert (nsd.TTL, nsd.SOA_TTL, nsd.SOA_MINIMUM) == (3600, 300, 900)


def test_zone_is_one_line_a_name_of_fixed_size(zone_text):
    lines = zone_text.splitlines()
    assert lines[-1] == "198-019-255-255 IN A 198.19.255.255"
    names = [line for line in lines if line[:3] == "198"]
    assert len(names) == 131_072 and len(set(names)) == 131_072
    assert "198-018-002-033 IN A 198.18.2.33" in names and "198-018-000-000 IN A 198.18.0.0" in names
    assert all(len(line.split()[0]) == 15 and line.split()[1:3] == ["IN", "A"] for line in names)
    assert not [line for line in lines if " AAAA " in line and not line.startswith(";")]
    # 4.6 MB: "198-018-002-033 IN A " and an address of 10..14 characters, a newline
    assert 131_072 * 32 < len(zone_text) < 131_072 * 36


def test_zone_of_another_prefix_and_an_ipv6_server():
    text = nsd.zone_text("example.test", "10.1.2.0/30", "::1", ttl=60, soa_ttl=10, soa_minimum=20)
    assert "@ 10 IN SOA ns hostmaster 1 3600 900 604800 20" in text
    assert "$TTL 60" in text and "ns IN AAAA ::1" in text
    assert [line for line in text.splitlines() if line[0].isdigit()] == [
        "010-001-002-000 IN A 10.1.2.0", "010-001-002-001 IN A 10.1.2.1",
        "010-001-002-002 IN A 10.1.2.2", "010-001-002-003 IN A 10.1.2.3"]
    with pytest.raises(ValueError):
        nsd.zone_text(ZONE, "198.16.0.0/14")   # 262,144 names: more than a zone file of the lab's
    with pytest.raises(ValueError):
        nsd.zone_text(ZONE, "198.18.0.1/15")


def test_name_of_an_address_is_dns64perfs():
    assert nsd.name_of(ipaddress.IPv4Address("198.18.2.33")) == "198-018-002-033"
    assert nsd.name_of(ipaddress.IPv4Address("0.0.0.255")) == "000-000-000-255"


def test_nsd_config_runs_one_server_as_root_on_its_address_with_its_files_in_the_lab_dir():
    text = nsd.config_text(ZONE, "127.0.0.53")
    for line in ("ip-address: 127.0.0.53", "port: 53", "server-count: 1", 'username: ""', 'chroot: ""',
                 'database: ""', f'pidfile: "{lab.LAB_DIR}/nsd.pid"', f'logfile: "{lab.LAB_DIR}/nsd.log"',
                 "rrl-ratelimit: 0", "rrl-whitelist-ratelimit: 0", "control-enable: no",
                 'name: "dns64perf.test"', f'zonefile: "{lab.LAB_DIR}/nsd/dns64perf.test.zone"'):
        assert f"    {line}\n" in text
    paths = [line.split(":", 1)[1].strip().strip('"') for line in text.splitlines()
             if line.strip().split(":")[0] in ("zonesdir", "zonelistfile", "xfrdfile", "xfrdir", "pidfile",
                                               "logfile", "zonefile")]
    assert len(paths) == 7 and all(path.startswith(lab.LAB_DIR + "/") for path in paths)
    assert nsd.PROGRAM in daemons.PROGRAMS   # lab down stops it


@pytest.mark.skipif(shutil.which("nsd-checkzone") is None, reason="needs the nsd package")
def test_nsd_accepts_its_zone_and_config(zone_text, tmp_path):
    (tmp_path / "zone").write_text(zone_text)
    checked = subprocess.run(["nsd-checkzone", ZONE, str(tmp_path / "zone")], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    (tmp_path / "nsd.conf").write_text(nsd.config_text(ZONE, "::1"))
    checked = subprocess.run(["nsd-checkconf", str(tmp_path / "nsd.conf")], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("kind", RESOLVER_KINDS)
@pytest.mark.parametrize(("params", "address"), [({}, "198.19.0.2"), ({"upstream": "6"}, "2001:2:0:8000::2"),
                                                 ({"zone_server": "nsd"}, "127.0.0.53"),
                                                 ({"zone_server": "nsd", "upstream": "6"}, "::1")])
def test_resolver_asks_the_zone_server(kind, params, address):
    p = lab.resolve_params(kind, params)
    resolver = lab.KINDS[kind]
    assert resolver.authoritative(p) == address
    text = resolver.config_text(p, "2001:db8:64::/96")
    assert ZONE_SERVER_LINES[kind].replace("ADDRESS", address) in text
    if kind == "dns64-pdns":   # it asks from the loopback of NSD's IP version, or the DUT's right side
        source = {"198.19.0.2": "198.19.0.1", "2001:2:0:8000::2": "2001:2:0:8000::1",
                  "127.0.0.53": "127.0.0.1", "::1": "::1"}[address]
        assert f"\nquery-local-address={source}\n" in text


@pytest.mark.parametrize("kind", RESOLVER_KINDS)
def test_tester_config_with_nsd_asks_dns64perfs_names_and_answers_none(kind):
    dns_keys = lab.tester_config(kind, lab.resolve_params(kind, {"zone_server": "nsd"}))["dns"]
    assert (dns_keys["authoritative"], dns_keys["names"], dns_keys["a_records"]) == (False, "dns64perf",
                                                                                    "198.18.0.0/15")
    assert dns_keys["server"] == "2001:2::1" and dns_keys["zone"] == "dns64perf.test"
    notes = " ".join(lab.KINDS[kind].config_notes(lab.resolve_params(kind, {"zone_server": "nsd"})))
    assert "NSD" in notes and "127.0.0.53" in notes
    default = lab.tester_config(kind, lab.resolve_params(kind, {}))["dns"]
    assert not {"authoritative", "names", "a_records"} & set(default)   # the tester's own side, as before


def test_zone_server_is_checked():
    with pytest.raises(lab.LabError) as err:
        lab.resolve_params("dns64-unbound", {"zone_server": "bind"})
    assert "zone_server='bind'" in str(err.value) and "tester or nsd" in str(err.value)
