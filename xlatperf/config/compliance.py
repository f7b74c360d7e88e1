# SPDX-License-Identifier: BSD-3-Clause
"""Configurations whose frames a compliant DUT must drop, and DNS64 tests the RFC advises
against: warnings, not errors (docs/config.md "Warnings"). Such a test may be meant (does the
DUT drop them?), but a throughput of 0 from a correct DUT is more often a configuration that
breaks a rule the tester does not enforce.
Each warning names the key, its value and the rule. run_procedure keeps them in the summary
(`config_warnings`), the console and the report show them with the result's warnings, and the
CLI prints them before a measurement starts."""

import ipaddress

from ..frames.addressing import u_octet
from ..frames.kinds import BACKGROUND, kind_of
from ..frames.technology import CLAT, role_of, technology_of
from ..frames.trial import active_directions, has_background, lookup

# RFC 6052 §2.1: the Well-Known Prefix.
WELL_KNOWN_PREFIX = ipaddress.IPv6Network("64:ff9b::/96")
# RFC 6333 §11: "the AFTR MUST only forward packets sourced by RFC 1918 addresses, an IANA
# reserved address range, or any other out-of-band pre-authorized addresses" (the reserved
# range being RFC 6333 §5.7's, for the B4s' own addresses).
DS_LITE_SOURCES = tuple(ipaddress.IPv4Network(net) for net in
                        ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "192.0.0.0/29"))
# RFC 6052 §3.1's non-global IPv4 addresses: "such as those defined in [RFC1918] or listed in
# Section 3 of [RFC5735]" (RFC 1918's are among those), and RFC 6598's shared address space,
# allocated since. Listed here, not taken from Python's registry, which changes between versions.
NON_GLOBAL = tuple(ipaddress.IPv4Network(net) for net in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
    "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4"))


def compliance_warnings(config) -> list[str]:
    """The warnings of a validated configuration, one per address and rule."""
    return _well_known_prefix(config) + _u_octet(config) + _ds_lite_source(config) + _dns(config)


def _frame_address_keys(config) -> list[str]:
    """The configuration keys of the addresses the trial's frames carry, sent and received."""
    kind = kind_of(config)
    keys = []
    for direction in active_directions(config):
        received = kind.received(config, direction)
        keys += [*kind.addresses(config, direction), received.src, received.dst]
    if has_background(config):
        keys += [f"left.ipv{BACKGROUND.inner}", f"right.ipv{BACKGROUND.inner}"]
    return [key for key in dict.fromkeys(keys) if key and lookup(config, key)]


def _prefixes(config) -> list[tuple[str, str, str]]:
    """The RFC 6052 prefixes that take effect, each with the key of the IPv4 address the DUT
    embeds in it (the IPv4 Internet's host) and the rule that makes its addresses RFC 6052's:
    464XLAT's PLAT prefix, MAP-T's DMR."""
    technology = technology_of(config)
    if technology is None or not technology.prefix_key or not getattr(config.ipv4aas, technology.prefix_key):
        return []
    # A CLAT alone sees the IPv4 server as right.virtual_ipv4 (the right port is its IPv6 image).
    server = "right.virtual_ipv4" if role_of(config) is CLAT and config.right.virtual_ipv4 else "right.ipv4"
    return [(f"ipv4aas.{technology.prefix_key}", server, technology.prefix_rule)]


def _non_global(ipv4: ipaddress.IPv4Address) -> bool:
    return any(ipv4 in net for net in NON_GLOBAL)


def _well_known_prefix(config) -> list[str]:
    rule = ("RFC 6052 §3.1: the Well-Known Prefix 64:ff9b::/96 MUST NOT represent non-global IPv4 "
            "addresses, and translators MUST drop packets with such an address; use a "
            "network-specific prefix")
    found, warned = [], set()
    for key in _frame_address_keys(config):
        address = ipaddress.ip_address(lookup(config, key))
        if address.version == 6 and address in WELL_KNOWN_PREFIX:
            ipv4 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
            if _non_global(ipv4):
                warned.add(address)
                found.append(f'{key} = "{address}": embeds {ipv4}, not a global address, in the '
                             f"Well-Known Prefix ({rule})")
    for key, ipv4_key, _ in _prefixes(config):
        prefix = ipaddress.IPv6Network(lookup(config, key))
        ipv4 = ipaddress.IPv4Address(lookup(config, ipv4_key))
        embedded = ipaddress.IPv6Address(int(prefix.network_address) | int(ipv4))
        if prefix == WELL_KNOWN_PREFIX and _non_global(ipv4) and embedded not in warned:
            found.append(f'{key} = "{prefix}": is the Well-Known Prefix, and {ipv4_key} = "{ipv4}" '
                         f"embedded in it is not a global address ({rule})")
    return found


def _u_octet(config) -> list[str]:
    found = []
    for key, _, why in _prefixes(config):
        prefix = ipaddress.IPv6Network(lookup(config, key))
        if u := u_octet(prefix):
            found.append(f'{key} = "{prefix}": has {u:#04x} in the u octet (bits 64-71), which RFC 6052 '
                         f"§2.2 requires to be zero in an IPv4-embedded IPv6 address ({why}: these "
                         "addresses are RFC 6052's); a compliant translator refuses the prefix or drops "
                         "the frames")
    return found


def _ds_lite_source(config) -> list[str]:
    technology = technology_of(config)
    if technology is None or not technology.operator_nat44 or not config.left.ipv4:
        return []
    source = ipaddress.IPv4Address(config.left.ipv4)
    if any(source in net for net in DS_LITE_SOURCES):
        return []
    return [f'left.ipv4 = "{source}": the B4s\' inner IPv4 source is neither an RFC 1918 address nor '
            "in RFC 6333 §5.7's 192.0.0.0/29; RFC 6333 §11: the AFTR MUST drop packets from any "
            "other source it was not told to accept (e.g. 192.0.0.2, 10.0.0.2)"]


def _dns(config) -> list[str]:
    """A DNS64 test (RFC 8219 §9) that a strict DNS64 cannot pass, or that the RFC advises against."""
    dns = config.dns
    if not dns.enabled:
        return []
    found = []
    a_records = ipaddress.IPv4Network(dns.a_records)
    synthesizes = dns.server and dns.qtype == "AAAA" and dns.aaaa_share < 1
    if synthesizes and ipaddress.IPv6Network(dns.synthesis) == WELL_KNOWN_PREFIX:
        inside = [str(net) for net in NON_GLOBAL if a_records.overlaps(net)]
        if inside:
            found.append(f'dns.synthesis = "{dns.synthesis}": is the Well-Known Prefix, and dns.a_records = '
                         f'"{a_records}" lies in the non-global {", ".join(inside)} (RFC 6052 §3.1: the '
                         "Well-Known Prefix MUST NOT represent non-global IPv4 addresses; a strict DNS64 "
                         "answers without a AAAA record); use a network-specific prefix")
    if dns.timeout > 1:
        found.append(f"dns.timeout = {dns.timeout:g}: RFC 8219 §9.2: no timeout higher than 1 s SHOULD be "
                     "used (a DNS64 that queues queries gains by a longer one)")
    if config.throughput.loss_tolerance:
        found.append(f"throughput.loss_tolerance = {config.throughput.loss_tolerance:g}: RFC 8219 §9.2 "
                     "passes a rate only when every query was answered in time")
    return found
