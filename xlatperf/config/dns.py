# SPDX-License-Identifier: BSD-3-Clause
"""DNS traffic in the configuration (docs/dns.md): the [dns] section's value checkers and the
rules of check_dns(). With dns.enabled a trial's frames are DNS queries from the sending side of
traffic.direction, answered by the tester's other side (dns.authoritative) directly, through any
DUT, or through a DUT's resolver (dns.server: RFC 8219 §9's DNS64 server)."""

import ipaddress
import math
import re

from ..util.errors import key_error
from ..frames.addressing import RFC6052_LENGTHS, u_octet
from ..frames.stack import DNS_LABEL_CHARS, zone_wire_bytes
from ..frames.kinds import kind_of
from ..frames.trial import active_directions, has_background

_LABEL = re.compile(r"^[A-Za-z0-9-]{1,63}$")
MAX_NAME_BYTES = 255     # RFC 1035 §2.3.4
ID_SPACE = 65536         # a reply's DNS ID: with its port, which query it answers
# Source ports a query stream may use at most (from traffic.src_port to 65535).
MAX_PORT = 65535
# A name asked again (dns.cache_share) is asked this many dns.timeout after its first query: late
# enough that its answer has come (RFC 8219 §9.2), early enough that its records still live in the
# DUT's cache (dns.ttl must be longer).
REPEAT_TIMEOUTS = 2


# The checks of a right answer (docs/dns.md "The client's verdict on a reply"), by the [checks]
# key that turns each off and the engine's name (a flow's dns.checks). RA only where a DUT's
# resolver answers (dns.server): the tester's authoritative side does not recurse.
REPLY_CHECKS = {"dns_edns": "edns", "dns_ra": "ra", "dns_question": "question", "dns_duplicates": "duplicates"}
# checks.dns_ttl's values, as the engine names them.
TTL_CHECKS = {"rfc6147": "ttl", "a_record": "ttl_a_record", "off": None}


def reply_checks(config) -> list[str]:
    """The engine's names of the reply checks a configuration has on. The upstream count
    (checks.dns_upstream) where a DUT's resolver asks the tester's authoritative side."""
    ttl = TTL_CHECKS[config.checks.dns_ttl]
    dns = config.dns
    upstream = config.checks.dns_upstream and dns.server and dns.authoritative
    return ([ttl] if ttl else []) + [name for key, name in REPLY_CHECKS.items()
                                     if getattr(config.checks, key) and (name != "ra" or dns.server)] \
        + ([("upstream_expired" if dns.cache_expired else "upstream")] if upstream else [])


def repeat_after(config) -> float:
    """Seconds between a name's first query and its repetition (dns.cache_share): with
    dns.cache_expired, a second after every record of the name expired in a DUT's cache (the
    longest of its TTLs: a resolver may keep a synthesis as long as the A record)."""
    live = REPEAT_TIMEOUTS * config.dns.timeout
    if not config.dns.cache_expired:
        return live
    dns = config.dns
    return max(live, max(dns.ttl, min(dns.soa_ttl, dns.soa_minimum)) + 1.0)


# RFC 8219 §9.2.1: before testing a DNS64 at r queries/s with a timeout of t seconds, the tester,
# looped back, must answer AAAA queries at 2 x (r + delta) within 0.25 x t (a DNS64 asks the
# authoritative side up to two queries, AAAA and A, per query it gets, and must have half its
# timeout left for its own work). The RFC's delta ("at least 0.1") is read as a share of r:
# 2 x 1.1 x r, the 2.2 Mqps dns64perf++'s authors built to test DNS64 at 1 Mqps.
SELFTEST_DELTA = 0.1
SELFTEST_TIMEOUT_SHARE = 0.25


# The §9.2.1 self-test's queries: the client asks the tester's own authoritative side (looped
# back: no server), which answers every name's AAAA record (xlatperf's names: dns64perf++'s have
# none); no name repeated.
SELFTEST_QUERIES = {"server": "", "authoritative": True, "names": "xlatperf", "qtype": "AAAA",
                    "aaaa_share": 1.0, "cache_share": 0.0}


def selftest_overrides(timeout: float) -> dict:
    """The [dns] keys of the §9.2.1 self-test of a DNS64 test with a `timeout` of seconds: its
    queries, answered within a quarter of that."""
    return {**SELFTEST_QUERIES, "timeout": SELFTEST_TIMEOUT_SHARE * timeout}


# What a DNS run's tester ceiling conditions (procedures/search.py) call its frames; a ceiling
# calibrated for them counts queries/s.
DNS_QUERIES = "DNS queries"


def ceiling_unit(conditions: str) -> str:
    """The unit of a tester ceiling calibrated for `conditions`."""
    return "queries/s" if DNS_QUERIES in conditions else "frames/s per direction"


def selftest_rate_limit(answered_qps: float) -> int:
    """The highest DNS64 test rate r (queries/s) a self-test that answered `answered_qps`
    allows: 2 x (1 + delta) x r <= answered_qps."""
    return math.floor(answered_qps / (2 * (1 + SELFTEST_DELTA)) + 1e-9)


def zone(value):
    """A DNS zone of letters, digits and hyphens (RFC 1123 §2.1), a trailing dot allowed, whose
    test names fit a DNS name."""
    if not isinstance(value, str) or not value.rstrip("."):
        raise ValueError("must be a DNS zone like dns64perf.test")
    labels = value.rstrip(".").split(".")
    if not all(_LABEL.match(label) for label in labels):
        raise ValueError("must be labels of 1..63 letters, digits or hyphens, separated by dots")
    longest = max(DNS_LABEL_CHARS.values())
    if 1 + longest + zone_wire_bytes(value) > MAX_NAME_BYTES:
        raise ValueError(f"too long: a test name (a label of up to {longest} characters in the zone) must "
                         f"fit {MAX_NAME_BYTES} bytes")
    return value.rstrip(".").lower()


def rfc6052_prefix(value):
    """An IPv6 prefix of an RFC 6052 §2.2 length."""
    try:
        network = ipaddress.IPv6Network(value, strict=True) if isinstance(value, str) else None
    except ValueError:
        network = None
    if network is None or network.prefixlen not in RFC6052_LENGTHS:
        raise ValueError("must be an IPv6 prefix of length " + ", ".join(map(str, RFC6052_LENGTHS))
                         + " (RFC 6052 §2.2), address/length with no bits set after the length")
    if u := u_octet(network):
        raise ValueError(f"must have bits 64-71 zero (RFC 6052 §2.2: the u octet of every address "
                         f"synthesized with it); this /96 sets them to {u:#04x}")
    return str(network)


def prefix_list(version: int):
    """A checker of a list of IPv`version` prefixes (the DNS64's exclusion and mapped lists)."""
    cls = ipaddress.IPv4Network if version == 4 else ipaddress.IPv6Network

    def check(value):
        try:
            networks = [str(cls(item, strict=True)) for item in value] if isinstance(value, list) else None
        except (ValueError, TypeError):
            networks = None
        if networks is None or len(networks) > 64:
            raise ValueError(f"must be a list of at most 64 IPv{version} prefixes, address/length with no bits "
                             "set after the length")
        return networks
    return check


def records_prefix(version: int, lengths: range):
    """A checker of the prefix a record type's addresses lie in."""
    cls = ipaddress.IPv4Network if version == 4 else ipaddress.IPv6Network

    def check(value):
        try:
            network = cls(value, strict=True) if isinstance(value, str) else None
        except ValueError:
            network = None
        if network is None or network.prefixlen not in lengths:
            span = f"{lengths[0]}..{lengths[-1]}" if len(lengths) > 1 else str(lengths[0])
            raise ValueError(f"must be an IPv{version} prefix of length {span}, address/length with no "
                             "bits set after the length")
        return str(network)
    return check


def server(value):
    """The DUT's DNS server: an IPv4 or IPv6 address, or "" (none: the tester's other side)."""
    if value == "":
        return ""
    try:
        return str(ipaddress.ip_address(value)) if isinstance(value, str) else None
    except ValueError:
        pass
    raise ValueError('must be an IPv4 or IPv6 address, or "" (the queries go to the tester\'s other side)')


def query_ports(config, rate: int) -> int:
    """The source ports a query stream at `rate` uses: dns.ports, or more where the queries
    awaiting their reply (rate x dns.timeout) need them (a reply's port and ID name its query
    among 65536 x ports, exactly while fewer than half that wait), and at least one per queue
    (each queue's queries leave from ports of their own). ConfigError when traffic.src_port
    leaves too few."""
    dns = config.dns
    needed = max(-(-int(2 * rate * dns.timeout) // ID_SPACE), config.tester.queues)
    available = MAX_PORT + 1 - config.traffic.src_port
    if needed > available:
        raise key_error("traffic.src_port", config.traffic.src_port,
                        f"leaves {available} source ports; DNS queries at {rate} queries/s with "
                        f"dns.timeout = {dns.timeout} s need {needed} (a reply's port and ID name its query)")
    return min(available, max(dns.ports, needed))


def check_dns(config) -> None:
    """The [dns] rules; ConfigError names the key, the value and what is allowed."""
    dns = config.dns
    if not dns.enabled:
        return
    directions = active_directions(config)
    if len(directions) != 1:
        raise key_error("traffic.direction", config.traffic.direction,
                        'must be "forward" or "reverse" with dns.enabled: the queries go one way (from '
                        "that direction's sending side), their answers the other")
    for key, value, why in (("traffic.imix", config.traffic.imix, "a query's size follows from dns.zone"),
                            ("stateful.enabled", config.stateful.enabled, "DNS queries are not RFC 9693 traffic")):
        if value:
            raise key_error(key, value, f"not with dns.enabled: {why}")
    kind = kind_of(config)
    if kind.stream_keys(config, directions[0]):   # a tunnel, emulated CEs
        raise key_error("ipv4aas.role", config.ipv4aas.role,
                        "not with dns.enabled: the tester sends plain IPv4 or IPv6 queries, it emulates no CE "
                        "or tunnel end for them (a dual DUT's role does)")
    if has_background(config):
        raise key_error("traffic.mix_m", config.traffic.mix_m,
                        f"must equal traffic.mix_n = {config.traffic.mix_n} with dns.enabled: every frame "
                        "is a query (no background frames)")
    if not dns.server and not dns.authoritative:
        raise key_error("dns.authoritative", dns.authoritative,
                        'must be true when dns.server = "" (the queries go to the tester\'s other side, '
                        "which then answers them)")
    sent, _ = kind.stacks(config, directions[0])
    if dns.server and ipaddress.ip_address(dns.server).version != sent.inner:
        raise key_error("dns.server", dns.server,
                        f"must be an IPv{sent.inner} address: the {directions[0]} queries are IPv{sent.inner}")
    if not dns.server and dns.qtype == "AAAA" and dns.aaaa_share < 1:
        raise key_error("dns.aaaa_share", dns.aaaa_share,
                        'must be 1 with dns.qtype = "AAAA" and dns.server = "" (the tester\'s other side '
                        "answers without a DNS64 between to synthesize: every name needs a AAAA record); "
                        'or ask dns.qtype = "A"')
    if dns.cache_expired and not dns.cache_share:
        raise key_error("dns.cache_expired", True, "needs dns.cache_share > 0 (the queries that ask a name again)")
    if dns.cache_expired and not (dns.server and dns.authoritative):
        raise key_error("dns.cache_expired", True, "needs dns.server and dns.authoritative: the DUT's resolver "
                                                   "must ask the tester's authoritative side again")
    if dns.cache_share:
        after = repeat_after(config)
        if config.trial.duration <= after:
            raise key_error("trial.duration", config.trial.duration,
                            f"must be over {after:g} s with dns.cache_share: a name is asked again "
                            + ("a second after its records expired" if dns.cache_expired else
                               f"{REPEAT_TIMEOUTS} x dns.timeout after its first query"))
    if dns.cache_share and not dns.cache_expired:
        # A synthesis lives no longer than the negative AAAA answer (RFC 6147 §5.1.7).
        lives = {"dns.ttl": dns.ttl}
        if dns.qtype == "AAAA" and dns.aaaa_share < 1:
            lives |= {"dns.soa_ttl": dns.soa_ttl, "dns.soa_minimum": dns.soa_minimum}
        key = min(lives, key=lives.get)
        if lives[key] <= after:
            raise key_error(key, lives[key], f"must be over {after:g} s with dns.cache_share: a name asked "
                                             "again must still be in the DUT's cache"
                                             + (" (a synthesized AAAA record lives min(dns.ttl, dns.soa_ttl, "
                                                "dns.soa_minimum), RFC 6147 §5.1.7)" if len(lives) > 1 else ""))
    if dns.names == "dns64perf" and dns.aaaa_share:
        raise key_error("dns.aaaa_share", dns.aaaa_share,
                        'must be 0 with dns.names = "dns64perf": its names have no AAAA record')
    if dns.qtype == "A" and dns.aaaa_share:
        raise key_error("dns.aaaa_share", dns.aaaa_share, "takes effect only with dns.qtype = \"AAAA\"")
