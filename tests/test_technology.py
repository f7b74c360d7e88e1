# SPDX-License-Identifier: BSD-3-Clause
"""The IPv4aaS technologies as declared (xlatperf/frames/technology.py): every technology's
roles, side versions and wire stacks, what the tester plays in each role, and that the traffic
kinds and the lab kinds follow the declaration."""

from types import SimpleNamespace

import pytest

from xlatperf import lab
from xlatperf.config.loading import load_config
from xlatperf.frames.kinds import kind_of
from xlatperf.frames.stack import IPV4_IN_IPV6, IPV6, IPV6_IN_IPV4
from xlatperf.frames.technology import (AFTR, BR, FROM_BINDING_TABLE, FROM_MAP_RULE, FROM_NUMBERED_B4S, MAP_E,
                                        TECHNOLOGIES, Part, role_of, technology_of)

# The IP versions (left, right) the tester's ports send and receive around each role, inside
# any tunnel (docs/ipv4aas.md): the CEs' side is IPv6 where it is translated; 6rd's customers'
# traffic is IPv6 on both.
SIDE_VERSIONS = {
    "464xlat": {"dual": (4, 4), "clat": (4, 6), "plat": (6, 4)},
    "ds-lite": {"dual": (4, 4), "aftr": (4, 4), "b4": (4, 4)},
    "lw4o6": {"lwaftr": (4, 4), "lwb4": (4, 4)},
    "map-e": {"dual": (4, 4), "br": (4, 4), "ce": (4, 4)},
    "map-t": {"dual": (4, 4), "br": (6, 4), "ce": (4, 6)},
    "6rd": {"dual": (6, 6), "br": (6, 6), "ce": (6, 6)},
}
# The traffic kind of each role (frames/kinds/): the tester emulates the CEs of an operator's
# side, plays the operator's side of one CE, or sends plain IPv4 or translated traffic.
KIND = {
    "464xlat": {"dual": "native", "clat": "siit", "plat": "siit"},
    "ds-lite": {"dual": "native", "aftr": "encapsulation", "b4": "encapsulating-ce"},
    "lw4o6": {"lwaftr": "encapsulation", "lwb4": "encapsulating-ce"},
    "map-e": {"dual": "native", "br": "encapsulation", "ce": "encapsulating-ce"},
    "map-t": {"dual": "native", "br": "map-t", "ce": "map-t-ce"},
    "6rd": {"dual": "native", "br": "encapsulation", "ce": "encapsulating-ce"},
}


def test_every_technology_declares_its_roles_and_their_side_versions():
    assert list(TECHNOLOGIES) == list(SIDE_VERSIONS)
    for key, technology in TECHNOLOGIES.items():
        assert technology.key == key
        assert {role.key: technology.side_versions(role) for role in technology.roles} == SIDE_VERSIONS[key]
        assert technology.role("nonesuch") is None and technology.role("dual") is \
            (technology.roles[0] if "dual" in SIDE_VERSIONS[key] else None)


def test_the_wire_says_how_ipv4_crosses_the_operators_network():
    wires = {key: (t.wire, t.translates, t.wire_growth) for key, t in TECHNOLOGIES.items()}
    assert wires == {"464xlat": (IPV6, True, 20), "ds-lite": (IPV4_IN_IPV6, False, 40),
                     "lw4o6": (IPV4_IN_IPV6, False, 40), "map-e": (IPV4_IN_IPV6, False, 40),
                     "map-t": (IPV6, True, 20), "6rd": (IPV6_IN_IPV4, False, 20)}
    # RFC 6333 §7.1 and RFC 7596 make the tunnels carry the traffic class; DS-Lite's AFTR is a
    # NAT44 (RFC 6333 §6.6); MAP-T's DMR and 464XLAT's PLAT prefix are RFC 6052 prefixes.
    assert [k for k, t in TECHNOLOGIES.items() if t.tunnel_carries_tos] == ["ds-lite", "lw4o6"]
    assert [k for k, t in TECHNOLOGIES.items() if t.operator_nat44] == ["ds-lite"]
    # A CE owns its address and port set, but DS-Lite's B4s, which share one private address, and
    # 6rd's CEs, which own a prefix: the tester writes the shared address, or the CE's MAP address.
    assert {k: (t.ce_fields, t.emulated_ce_fields) for k, t in TECHNOLOGIES.items() if t.ce_source} == {
        "ds-lite": ([], ["ipv4"]), "lw4o6": (["ipv4", "port"],) * 2, "map-e": (["ipv4", "port"],) * 2,
        "map-t": (["ipv4", "port"],) * 2, "6rd": ([], ["ipv6"])}
    # A tunnel's end and a CE are named by their address of the wire's outer IP version.
    assert {k: (t.endpoint_key, t.ce_key) for k, t in TECHNOLOGIES.items() if k in ("map-e", "6rd")} == {
        "map-e": ("ipv4aas.endpoint_ipv6", "ipv4aas.ce_ipv6"), "6rd": ("ipv4aas.endpoint_ipv4", "ipv4aas.ce_ipv4")}
    assert {k: t.prefix_key for k, t in TECHNOLOGIES.items() if t.prefix_key} == {"464xlat": "pref64", "map-t": "dmr"}


def test_names_as_the_rfcs_write_them():
    assert {k: (t.name, t.operator.name) for k, t in TECHNOLOGIES.items()} == {
        "464xlat": ("464XLAT", "PLAT"), "ds-lite": ("DS-Lite", "AFTR"), "lw4o6": ("lw4o6", "lwAFTR"),
        "map-e": ("MAP-E", "BR"), "map-t": ("MAP-T", "BR"), "6rd": ("6rd", "BR")}
    names = {role.key: role.name for t in TECHNOLOGIES.values() for role in t.roles}
    assert names == {"dual": "dual DUT", "clat": "CLAT", "plat": "PLAT", "aftr": "AFTR", "b4": "B4",
                     "lwaftr": "lwAFTR", "lwb4": "lwB4", "br": "BR", "ce": "CE"}


def test_what_the_tester_plays_follows_from_the_part_and_the_ce_source():
    sources = {k: t.ce_source for k, t in TECHNOLOGIES.items()}
    assert sources == {"464xlat": None, "ds-lite": FROM_NUMBERED_B4S, "lw4o6": FROM_BINDING_TABLE,
                       "map-e": FROM_MAP_RULE, "map-t": FROM_MAP_RULE, "6rd": FROM_MAP_RULE}
    plays = {(k, role.key): ("ces" if t.emulates_ces(role) else "operator" if t.plays_operator(role) else "")
             for k, t in TECHNOLOGIES.items() for role in t.roles}
    assert {key for key, what in plays.items() if what == "ces"} == \
        {("ds-lite", "aftr"), ("lw4o6", "lwaftr"), ("map-e", "br"), ("map-t", "br"), ("6rd", "br")}
    assert {key for key, what in plays.items() if what == "operator"} == \
        {("ds-lite", "b4"), ("lw4o6", "lwb4"), ("map-e", "ce"), ("map-t", "ce"), ("6rd", "ce")}
    # The CEs' wire is on the port that plays their side: left around the operator's side.
    assert [MAP_E.wire_side(role) for role in MAP_E.roles] == [None, "left", "right"]


def _sketch(technology: str, role: str):
    """A configuration as far as kind selection reads it."""
    left, right = SIDE_VERSIONS[technology][role]
    sides = {"left": SimpleNamespace(ip_version=left), "right": SimpleNamespace(ip_version=right)}
    return SimpleNamespace(ipv4aas=SimpleNamespace(technology=technology, role=role), side=sides.__getitem__,
                           left=sides["left"], right=sides["right"])


@pytest.mark.parametrize("technology, role", [(t, r) for t, roles in KIND.items() for r in roles])
def test_exactly_one_traffic_kind_carries_each_role(technology, role):
    assert kind_of(_sketch(technology, role)).name == KIND[technology][role]


def test_a_configuration_names_its_technology_and_role():
    config = load_config(None, ["ipv4aas.technology=ds-lite", "ipv4aas.role=aftr",
                                "ipv4aas.endpoint_ipv6=2001:db8:af::1", "left.ipv4=192.0.0.2",
                                "left.ipv6=2001:db8:b4::1", "traffic.direction=forward"])
    assert technology_of(config) is TECHNOLOGIES["ds-lite"] and role_of(config) is AFTR
    plain = load_config(None, [])
    assert technology_of(plain) is None and role_of(plain) is None


@pytest.mark.parametrize("name", sorted(k for k, kind in lab.KINDS.items() if kind.technology is not None))
def test_reference_duts_write_the_technology_and_role_they_hold(name):
    kind = lab.KINDS[name]
    assert kind.role in kind.technology.roles
    sections = kind.tester_sections(lab.resolve_params(name, {}))
    ipv4aas = sections["ipv4aas"]
    assert (ipv4aas["technology"], ipv4aas["role"]) == (kind.technology.key, kind.role.key)
    # A tunnel's end where there is a tunnel; the tunnel_tos fault where the RFCs say the
    # tunnels carry the traffic class.
    if kind.role.part is not Part.DUAL:
        assert (kind.technology.endpoint_key.split(".")[1] in ipv4aas) == kind.technology.wire.encapsulated
    if "faulty" in kind.params:
        assert ("tunnel_tos" in kind.params["faulty"]["allowed"]) == kind.technology.tunnel_carries_tos
    if kind.role is BR:
        assert kind.params["faulty"]["help"].startswith("a faulty BR ")
