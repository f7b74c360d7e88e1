# SPDX-License-Identifier: BSD-3-Clause
"""NSD (NLnet Labs' authoritative server, Debian's `nsd`) serving the DNS64 test zone in a lab
namespace, in place of the tester's own authoritative side: a DNS64 resolver DUT
(lab/kinds/resolver.py, `zone_server=nsd`) asks it, as a user's DNS64 would ask an
authoritative server that is not xlatperf's.

It serves dns64perf++'s names, `a-b-c-d.<zone>` with the four numbers of an IPv4 address, three
digits each: the name's A record is that address (`198-018-002-033.<zone>. A 198.18.2.33`), and
no name has a AAAA record. NSD has no $GENERATE: the zone file lists every name of one IPv4
prefix (A_RECORDS: 131,072 names, the default dns.a_records), written here. The TTLs are the tester config's defaults
(dns.ttl, dns.soa_ttl, dns.soa_minimum), so the tester's TTL checks hold for its answers.

NSD listens on port 53 of a loopback address of the namespace (ADDRESSES, one per IP version:
the resolver listens on the DUT's left address, not there), runs as root without chroot, one
server process, and keeps its files (config, zone file, pid file, log) in LAB_DIR."""

from __future__ import annotations

import ipaddress
import os
import shutil

from ..config.schema import SCHEMA
from . import daemons
from .names import LAB_DIR
from .placement import pin_process
from .shell import LabError, run

PROGRAM = "nsd"
# Where NSD listens, by the IP version over which the resolver asks (the kinds' `upstream`).
ADDRESSES = {4: "127.0.0.53", 6: "::1"}
A_RECORDS = "198.18.0.0/15"            # the names NSD serves: dns.a_records' default, RFC 2544's range
MIN_PREFIX = 15                        # at most 131,072 names in the zone file
TTL = SCHEMA["dns"]["ttl"].default     # of the A records
SOA_TTL = SCHEMA["dns"]["soa_ttl"].default
SOA_MINIMUM = SCHEMA["dns"]["soa_minimum"].default
NS_NAME = "ns"                         # the zone's one name server (NSD's address), in the zone

DIRECTORY = os.path.join(LAB_DIR, "nsd")
CONF = os.path.join(LAB_DIR, "nsd.conf")
PIDFILE = os.path.join(LAB_DIR, "nsd.pid")
LOG = os.path.join(LAB_DIR, "nsd.log")


def zone_file(zone: str) -> str:
    return os.path.join(DIRECTORY, f"{zone}.zone")


def name_of(address: ipaddress.IPv4Address) -> str:
    """dns64perf++'s label of an IPv4 address: 198.18.2.33 -> 198-018-002-033."""
    return "-".join(f"{byte:03d}" for byte in address.packed)


def zone_text(zone: str, a_records: str = A_RECORDS, address: str = ADDRESSES[4], ttl: int = TTL,
              soa_ttl: int = SOA_TTL, soa_minimum: int = SOA_MINIMUM) -> str:
    """The zone file of `zone`: its SOA (its own TTL `soa_ttl`, MINIMUM `soa_minimum`, which a
    NODATA answer's TTL is the lesser of: RFC 2308 §3), its name server at `address`, and an A
    record of TTL `ttl` for the name of every address of `a_records` (an IPv4 prefix of at most
    2^17 addresses, its first and last included)."""
    network = ipaddress.IPv4Network(a_records, strict=True)
    if network.prefixlen < MIN_PREFIX:
        raise ValueError(f"{a_records}: at most a /{MIN_PREFIX} of names in a zone file")
    ns_type = "A" if ipaddress.ip_address(address).version == 4 else "AAAA"
    origin = zone.rstrip(".") + "."
    head = [f"; The DNS64 test zone {origin} for NSD, written by `xlatperf lab up`:",
            f"; dns64perf++'s names of {network}, each with its A record, no AAAA record.",
            f"$ORIGIN {origin}",
            f"$TTL {ttl}",
            # serial refresh retry expire minimum
            f"@ {soa_ttl} IN SOA {NS_NAME} hostmaster 1 3600 900 604800 {soa_minimum}",
            f"@ IN NS {NS_NAME}",
            f"{NS_NAME} IN {ns_type} {address}"]
    records = [f"{name_of(a)} IN A {a}" for a in network]
    return "\n".join(head + records) + "\n"


def config_text(zone: str, address: str) -> str:
    """NSD's configuration: `zone` from its zone file, on port 53 of `address`."""
    return f"""# NSD for the xlatperf lab (written by lab up)
server:
    ip-address: {address}
    port: 53
    server-count: 1
    # As root, no chroot: every file is in {LAB_DIR}.
    username: ""
    chroot: ""
    zonesdir: "{DIRECTORY}"
    database: ""
    zonelistfile: "{DIRECTORY}/zone.list"
    xfrdfile: "{DIRECTORY}/xfrd.state"
    xfrdir: "{DIRECTORY}"
    pidfile: "{PIDFILE}"
    logfile: "{LOG}"
    verbosity: 0
    hide-version: yes
    # Answers without the zone's NS records beside them: the resolver reaches the zone by its
    # own configuration, and a reply is as small as the tester's authoritative side's.
    minimal-responses: yes
    # Response rate limiting (on in Debian's build, 200 replies/s to one source): every query
    # comes from the one resolver.
    rrl-ratelimit: 0
    rrl-whitelist-ratelimit: 0
remote-control:
    control-enable: no
zone:
    name: "{zone}"
    zonefile: "{zone_file(zone)}"
"""


def start(zone: str, address: str, ns: str) -> int:
    """Writes NSD's files for `zone` and starts it in namespace `ns`, listening on `address`;
    returns its pid."""
    if not shutil.which(PROGRAM):
        raise LabError(f"zone_server=nsd needs {PROGRAM} (Debian package nsd): run scripts/setup.sh")
    os.makedirs(DIRECTORY, exist_ok=True)
    with open(zone_file(zone), "w") as f:
        f.write(zone_text(zone, address=address))
    with open(CONF, "w") as f:
        f.write(config_text(zone, address))
    return daemons.start(PROGRAM, [PROGRAM, "-c", CONF], ns, PIDFILE, LOG)


def processes(ns: str) -> list[int]:
    """NSD's processes in namespace `ns`: the main one and those it forked (xfrd, the server)."""
    return [pid for pid in map(int, run(["ip", "netns", "pids", ns]).split())
            if daemons.is_ours(pid, PROGRAM)]


def pin(ns: str, cpus) -> list[int]:
    """Every NSD process of `ns` may run only on `cpus` (a server NSD forks later, at a reload,
    inherits its parent's); returns their pids."""
    pids = processes(ns)
    for pid in pids:
        pin_process(pid, cpus)
    return pids
