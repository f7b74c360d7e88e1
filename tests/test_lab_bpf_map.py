# SPDX-License-Identifier: BSD-3-Clause
"""The lwAFTR's binding table as a BPF map (xlatperf/lab/bpf_map.py, lab/kinds/softwire.py):
the entries the lab stores, the programs it finds them for, and the parameter's range. The
map filled in a running lab is checked end to end (tests/e2e/test_ipv4aas_lab.py)."""

import ipaddress
import json
import struct

import pytest

from xlatperf import lab
from xlatperf.lab import bpf_map
from xlatperf.lab.kinds.softwire import LwAftr, binding_table, binding_table_entries


def test_an_entry_is_the_ipv4_address_and_psid_to_the_lwb4s_address_in_host_order():
    keys, values = binding_table_entries([("2001:db8:b4::1:2", "100.64.0.1", 3)])
    # ce.h: key = IPv4 address << 16 | PSID; value = the IPv6 address's halves, first one first.
    assert keys == [struct.pack("=Q", 0x6440_0001_0003)]
    assert values == [struct.pack("=QQ", 0x2001_0db8_00b4_0000, 0x0000_0000_0001_0002)]


def test_the_generated_tables_entries_decode_to_the_table():
    table = binding_table(300, 4)
    keys, values = binding_table_entries(table)
    assert len(set(keys)) == len(keys) == len(values) == 300  # one key per softwire
    for (b4, ipv4, psid), key, value in zip(table, keys, values):
        (k,), (hi, lo) = struct.unpack("=Q", key), struct.unpack("=QQ", value)
        assert (ipaddress.IPv4Address(k >> 16), k & 0xFFFF) == (ipaddress.IPv4Address(ipv4), psid)
        assert ipaddress.IPv6Address(hi << 64 | lo) == ipaddress.IPv6Address(b4)


def test_the_largest_table_has_65536_distinct_keys():
    keys, values = binding_table_entries(binding_table(65536, 4))
    assert len(set(keys)) == 65536 and len(set(values)) == 65536


def test_the_program_is_built_with_a_map_of_the_tables_size():
    p = lab.resolve_params("lwaftr", {"softwires": "65536"})
    assert "-DSOFTWIRE_COUNT=65536" in LwAftr().defines(p)
    assert LwAftr.program_maps
    with pytest.raises(lab.LabError, match="1..65536"):
        lab.resolve_params("lwaftr", {"softwires": "65537"})


def test_the_program_ids_are_read_from_tcs_filter_list():
    shown = [{"protocol": "all", "pref": 49152, "kind": "bpf", "chain": 0},
             {"protocol": "all", "pref": 49152, "kind": "bpf", "chain": 0,
              "options": {"handle": "0x1", "bpf_name": "lwaftr.o:[tc/from_ce]", "direct-action": True,
                          "prog": {"id": 21056, "name": "from_ce", "tag": "f35f098618e4b7af", "jited": 1}}},
             {"protocol": "ip", "pref": 1, "kind": "u32", "chain": 0, "options": {"fh": "800:"}}]
    assert bpf_map.filter_program_ids(json.dumps(shown)) == [21056]
    assert bpf_map.filter_program_ids("") == bpf_map.filter_program_ids("[]") == []


def test_entries_are_packed_back_to_back_and_must_be_of_one_size():
    assert bpf_map.pack_entries([b"k1", b"k2"], [b"v1v1", b"v2v2"]) == (b"k1k2", b"v1v1v2v2", 2, 4)
    for keys, values in (([b"k1"], []), ([], []), ([b"k1", b"k22"], [b"v", b"v"]), ([b"k"], [b"v"] * 2)):
        with pytest.raises(ValueError):
            bpf_map.pack_entries(keys, values)


def test_an_interface_without_a_program_is_an_error(monkeypatch):
    monkeypatch.setattr(bpf_map, "attached_program_ids", lambda ns, dev, hook: [])
    with pytest.raises(lab.LabError, match="no BPF program on xlp-dl ingress in xlp-dut"):
        bpf_map.fill_program_maps("xlp-dut", [("xlp-dl", "ingress")], "binding_table", [b"k"], [b"v"])
