# SPDX-License-Identifier: BSD-3-Clause
"""DNS64 servers as DUTs (RFC 8219 §9, docs/dns.md): `dns64-bind` (BIND 9 with `dns64`),
`dns64-unbound` (Unbound with `module-config: "dns64 iterator"`) and `dns64-pdns` (PowerDNS
Recursor with `dns64-prefix`), Debian's packages, in the DUT namespace. The tester's left side is the client (IPv6, the resolver listens on the DUT's left
address), the right side the authoritative server of the test zone, which the resolver reaches
over IPv4 (or IPv6: `upstream`) as the zone's only server (BIND's static-stub zone, Unbound's
stub zone, PowerDNS's forward zone). The written config runs `xlatperf dns64` against it.

With `zone_server=nsd` the zone's server is NSD instead (lab/nsd.py), in the DUT namespace on a
loopback address of the `upstream` IP version, serving dns64perf++'s names of 198.18.0.0/15:
a DNS64 whose authoritative server is not xlatperf's. The tester's right side then answers
nothing (dns.authoritative = false) and the queries ask those names (dns.names = "dns64perf").

The DUT namespace has no default route: whatever else a resolver would ask (the root's
servers) cannot leave it."""

from __future__ import annotations

import ipaddress
import os
import sys
from typing import Any

from ...config.dns import rfc6052_prefix
from ...config.schema import SCHEMA
from .. import daemons, nsd
from ..dns_relay import FAULTS, PROGRAM
from ..names import DUT_NS, DUT_PORTS, LAB_DIR, V4_RIGHT, V6_LEFT, V6_RIGHT, host
from ..placement import Placement, pin_process
from ..shell import LabError, run
from .base import LabKind, choice, fault_params, integer, resolve_faults, yes_no
from .common import setup_router
from .nat import NAT64_RESPONDER_AS_6

ZONE = "dns64perf.test"
# The DNS64 prefix: the tester config's default, a network-specific prefix (RFC 6052 §3.1 lets it
# represent the non-global 198.18.0.0/15 of dns.a_records; the Well-Known Prefix may not).
PREFIX = SCHEMA["dns"]["synthesis"].default
WRONG_PREFIX = "2001:db8:6464::/96"   # a faulty DNS64's
RESOLVER_MAX_RATE = 20_000       # queries/s: the search's first trial (throughput.max_rate)
RESOLVER_PAUSE = 2.0             # s between trials (trial.pause)

RESOLVER_PARAMS = {
    "upstream": {"default": "4", "allowed": "4 or 6",
                 "help": "IP version over which the resolver asks the test zone's server (zone_server)",
                 "parse": lambda text: int(choice("4", "6")(text))},
    "zone_server": {"default": "tester", "allowed": "tester or nsd",
                    "help": "the test zone's authoritative server: the tester's right side, or NSD in the "
                            f"DUT namespace ({nsd.ADDRESSES[4]} or {nsd.ADDRESSES[6]} by upstream) serving "
                            f"dns64perf++'s names of {nsd.A_RECORDS} (A records only; the tester config "
                            "then asks them: dns.names = \"dns64perf\")",
                    "parse": choice("tester", "nsd")},
    "cache": {"default": "64", "allowed": "an integer 1..4096",
              "help": "the resolver's cache size in MiB (the cache-hit grid's: RFC 8219 §9.2)",
              "parse": integer(1, 4096)},
    "wrong_prefix": {"default": "no", "allowed": "yes or no",
                     "help": f"a faulty DNS64: it synthesizes with {WRONG_PREFIX}, the tester config "
                             f"expects {PREFIX} (every answer must be reported wrong, none lost)",
                     "parse": yes_no},
}


class Resolver(LabKind):
    """A DNS64 resolver daemon (`program`) in the DUT namespace; the kernel routes nothing."""
    program = ""
    kind_params = RESOLVER_PARAMS
    tools = {"ethtool": "ethtool"}
    steered_by = "RPS on its veth ends and the resolver's affinity"
    # Whether it gives a synthesized AAAA record its A record's TTL, not the lesser of that and
    # the negative AAAA answer's as RFC 6147 §5.1.7 says (seen: 3600 s where BIND gives 300 s).
    synthesis_ttl_of_a = False

    def checks(self) -> dict[str, Any]:
        """A resolver that gives a synthesis its A record's TTL is held to that bound (still
        caught above it: a raised minimum TTL), and the config says so."""
        return {"dns_ttl": "a_record"} if self.synthesis_ttl_of_a else {}

    @property
    def pidfile(self) -> str:
        return os.path.join(LAB_DIR, f"{self.program}.pid")

    @property
    def conf(self) -> str:
        return os.path.join(LAB_DIR, f"{self.program}.conf")

    @property
    def log(self) -> str:
        return os.path.join(LAB_DIR, f"{self.program}.log")

    def authoritative(self, p: dict[str, Any]) -> str:
        """The address the resolver asks: the tester's right side, or NSD's."""
        if p["zone_server"] == "nsd":
            return nsd.ADDRESSES[p["upstream"]]
        return V4_RIGHT[1] if p["upstream"] == 4 else V6_RIGHT[1]

    def build(self, p: dict[str, Any]) -> None:
        setup_router(left=[V6_LEFT], right=[V4_RIGHT if p["upstream"] == 4 else V6_RIGHT])
        # The resolver's own datagrams leave with their checksums complete, as a NIC would send
        # them: a veth hands a checksum it was to offload to its peer unwritten (CHECKSUM_PARTIAL),
        # which the tester's receiver rightly takes for a bad one.
        for dev in DUT_PORTS:
            run(["ethtool", "-K", dev, "tx", "off"], ns=DUT_NS)
        os.makedirs(os.path.join(LAB_DIR, self.program), exist_ok=True)
        with open(self.conf, "w") as f:
            f.write(self.config_text(p, WRONG_PREFIX if p["wrong_prefix"] else self.prefix(p)))
        if p["zone_server"] == "nsd":   # the zone's server first: the resolver may ask at once
            nsd.start(ZONE, self.authoritative(p), DUT_NS)
        daemons.start(self.program, self.command(), DUT_NS, self.pidfile, self.log)

    def place(self, placement: Placement) -> None:
        super().place(placement)
        pid = daemons.read_pid(self.pidfile)
        if pid is None or not daemons.is_ours(pid, self.program):
            raise LabError(f"{self.program} is not running: cannot pin it to the DUT CPUs")
        pin_process(pid, placement.dut_cpus)
        # NSD, where build started it (zone_server=nsd; a lab up removed any earlier one's files).
        if os.path.exists(nsd.PIDFILE) and not nsd.pin(DUT_NS, placement.dut_cpus):
            raise LabError(f"{nsd.PROGRAM} is not running: cannot pin it to the DUT CPUs")

    def tester_sections(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        right = ({"ip_version": 4, "ipv4": V4_RIGHT[1], "dut_ipv4": host(V4_RIGHT[0]),
                  # The tester's right side as a NAT64 would reach it (never sent to: the queries
                  # go to the resolver); in the lab's network-specific prefix, as nat64's.
                  "virtual_ipv6": NAT64_RESPONDER_AS_6}
                 if p["upstream"] == 4 else {"ip_version": 6, "ipv6": V6_RIGHT[1], "dut_ipv6": host(V6_RIGHT[0])})
        return {"left": {"ip_version": 6, "ipv6": V6_LEFT[1], "dut_ipv6": host(V6_LEFT[0]), "dut_mac": ""},
                "right": {**right, "dut_mac": ""},
                "traffic": {"frame_size": 84, "direction": "forward"},
                "dns": {"enabled": True, "server": host(V6_LEFT[0]), "zone": ZONE, "synthesis": self.prefix(p),
                        **self.dns64_lists(p), **self.zone_keys(p)},
                # A resolver that was overloaded answers its backlog for seconds after (replies
                # foreign to the next trial): the search starts within its reach on the lab's
                # one DUT CPU (a few thousand queries/s), and the pause lets a backlog drain.
                "trial": {"pause": RESOLVER_PAUSE},
                "throughput": {"max_rate": RESOLVER_MAX_RATE}}

    @staticmethod
    def zone_keys(p: dict[str, Any]) -> dict[str, Any]:
        """The tester config's [dns] keys for the zone's server: none for the tester's own; NSD's
        serves dns64perf++'s names of its prefix, and the tester's right side answers nothing."""
        if p["zone_server"] != "nsd":
            return {}
        return {"authoritative": False, "names": "dns64perf", "a_records": nsd.A_RECORDS}

    def config_notes(self, p: dict[str, Any]) -> list[str]:
        notes = [f"# DUT: {self.description}; its configuration: {self.conf}."]
        if p["zone_server"] == "nsd":
            notes.append(f"# The test zone's server is not the tester's right side but NSD in the DUT namespace, "
                         f"at {self.authoritative(p)} port 53")
            notes.append(f"# (its configuration {nsd.CONF}, its zone file {nsd.zone_file(ZONE)}: "
                         f"dns64perf++'s names of {nsd.A_RECORDS}).")
        return notes

    def prefix(self, p: dict[str, Any]) -> str:
        """The DNS64 prefix the resolver synthesizes with (and the tester config expects)."""
        return p.get("prefix", PREFIX)

    def dns64_lists(self, p: dict[str, Any]) -> dict[str, Any]:
        """The tester config's [dns] keys for what the resolver maps (the tester expects RFC
        6147's default exclusion whatever the resolver does: a DNS64 that ignores it is caught)."""
        return {"mapped": [p["mapped"]]} if p.get("mapped", "any") != "any" else {}

    def config_text(self, p: dict[str, Any], prefix: str) -> str:
        raise NotImplementedError

    def command(self) -> list[str]:
        raise NotImplementedError


def ipv4_prefix(text: str) -> str:
    return str(ipaddress.IPv4Network(text, strict=True))


def ipv6_prefix(text: str) -> str:
    return str(ipaddress.IPv6Network(text, strict=True))


class Bind(Resolver):
    name = "dns64-bind"
    description = "BIND 9 as a DNS64 server (RFC 6147), the test zone's server the tester's right side"
    program = "named"
    tools = {**Resolver.tools, "named": "bind9"}
    kind_params = {
        **RESOLVER_PARAMS,
        "prefix": {"default": PREFIX, "allowed": "an RFC 6052 prefix (/32, /40, /48, /56, /64 or /96)",
                   "help": "the DNS64 prefix; the tester config expects it (dns.synthesis)",
                   "parse": rfc6052_prefix},
        "exclude": {"default": "default", "allowed": "default, none, or an IPv6 prefix",
                    "help": "the AAAA records BIND treats as none (RFC 6147 §5.1.4): default (BIND's own: "
                            "::ffff:0:0/96), none (a DNS64 that excludes nothing, which the tester's default "
                            "dns.exclude catches), or a prefix",
                    "parse": lambda text: text if text in ("default", "none") else ipv6_prefix(text)},
        "mapped": {"default": "any", "allowed": "any, or an IPv4 prefix",
                   "help": "the IPv4 addresses BIND synthesizes from (its `mapped`): NODATA for the others; "
                           "the tester config says the same (dns.mapped)",
                   "parse": lambda text: text if text == "any" else ipv4_prefix(text)},
        # Faults no resolver can be configured to have: a relay in front of BIND (lab/dns_relay.py).
        **fault_params("DNS64 (a relay in front of BIND that spoils its replies)", FAULTS),
    }
    relay_pidfile = os.path.join(LAB_DIR, "dns-relay.pid")
    RESOLVER_PORT = 5300   # BIND's, behind the relay

    def build(self, p: dict[str, Any]) -> None:
        resolve_faults(self.name, p)
        super().build(p)
        if p["faulty"]:
            daemons.start(PROGRAM, ["bash", "-c", f"exec -a {PROGRAM} {sys.executable} -m xlatperf.lab.dns_relay "
                                  f"--listen {host(V6_LEFT[0])} --resolver-port {self.RESOLVER_PORT} "
                                  f"--faults {','.join(p['faulty'])} --share {p['faulty_share']} "
                                  f"--pidfile {self.relay_pidfile}"],
                          DUT_NS, self.relay_pidfile, os.path.join(LAB_DIR, "dns-relay.log"))

    def place(self, placement: Placement) -> None:
        super().place(placement)
        if (pid := daemons.read_pid(self.relay_pidfile)) is not None and daemons.is_ours(pid, PROGRAM):
            pin_process(pid, placement.dut_cpus)

    def command(self) -> list[str]:
        # One worker thread (-n 1): the DUT has the CPUs no tester lcore uses; as root (no -u).
        return ["named", "-c", self.conf, "-n", "1"]

    @staticmethod
    def dns64_options(p: dict[str, Any]) -> str:
        """The dns64 block's exclude and mapped lists, where the parameters set them."""
        options = ""
        if p["exclude"] != "default":
            options += f" exclude {{ {p['exclude']}; }};"
        if p["mapped"] != "any":
            options += f" mapped {{ {p['mapped']}; }};"
        return options

    def config_text(self, p: dict[str, Any], prefix: str) -> str:
        return f"""// BIND for the xlatperf lab (written by lab up)
options {{
    directory "{LAB_DIR}/named";
    pid-file "{self.pidfile}";
    listen-on-v6 port {self.RESOLVER_PORT if p["faulty"] else 53} {{ {host(V6_LEFT[0])}; }};
    listen-on {{ none; }};
    recursion yes;
    allow-query {{ any; }};
    allow-recursion {{ any; }};
    dnssec-validation no;
    dns64 {prefix} {{ clients {{ any; }};{self.dns64_options(p)} }};
    max-cache-size {p['cache']}m;
    empty-zones-enable no;
    notify no;
    querylog no;
    edns-udp-size 1232;
    max-udp-size 1232;
}};
logging {{ channel lab {{ file "{self.log}"; severity warning; }}; category default {{ lab; }}; }};
zone "{ZONE}" {{ type static-stub; server-addresses {{ {self.authoritative(p)}; }}; }};
"""


class Unbound(Resolver):
    name = "dns64-unbound"
    description = "Unbound as a DNS64 server (RFC 6147), the test zone's server the tester's right side"
    program = "unbound"
    tools = {**Resolver.tools, "unbound": "unbound"}
    kind_params = {**RESOLVER_PARAMS,
                   "refuse": {"default": "no", "allowed": "yes or no",
                              "help": "a resolver that refuses every query (access-control refuse): REFUSED "
                                      "with the header alone, no question (the tester must count each by its "
                                      "RCODE, none lost)",
                              "parse": yes_no},
                   "min_ttl": {"default": "0", "allowed": "an integer 0..86400 (seconds)",
                               "help": "cache-min-ttl: a faulty resolver that answers with at least this TTL "
                                       "(above the records' dns.ttl: every answer bad_ttl)",
                               "parse": integer(0, 86400)},
                   "serve_expired": {"default": "no", "allowed": "yes or no",
                                     "help": "serve-expired: a faulty resolver that answers a name whose "
                                             "records expired from its cache at once, with a TTL of 30 s "
                                             "(serve-expired-reply-ttl), and asks upstream only after",
                                     "parse": yes_no}}
    synthesis_ttl_of_a = True   # Unbound 1.17's dns64 module copies the A RRset's TTL

    def command(self) -> list[str]:
        return ["unbound", "-c", self.conf]

    def config_text(self, p: dict[str, Any], prefix: str) -> str:
        half = max(1, p["cache"] // 2)
        return f"""# Unbound for the xlatperf lab (written by lab up)
server:
    interface: {host(V6_LEFT[0])}
    access-control: ::/0 {"refuse" if p["refuse"] else "allow"}
    do-ip4: yes
    do-ip6: yes
    module-config: "dns64 iterator"
    dns64-prefix: {prefix}
    num-threads: 1
    msg-cache-size: {half}m
    rrset-cache-size: {half}m
    qname-minimisation: no
    do-not-query-localhost: no
    edns-buffer-size: 1232
    cache-min-ttl: {p["min_ttl"]}
    serve-expired: {"yes" if p["serve_expired"] else "no"}
    # Unbound answers the special-use TLDs (RFC 6761: test.) itself with NXDOMAIN by default.
    local-zone: "{ZONE.rsplit('.', 1)[-1]}." nodefault
    chroot: ""
    username: ""
    directory: "{LAB_DIR}/unbound"
    pidfile: "{self.pidfile}"
    use-syslog: no
    logfile: "{self.log}"
    do-daemonize: yes
    verbosity: 0
remote-control:
    control-enable: no
stub-zone:
    name: "{ZONE}"
    stub-addr: {self.authoritative(p)}
"""


class PowerDns(Resolver):
    name = "dns64-pdns"
    description = ("PowerDNS Recursor as a DNS64 server (RFC 6147), the test zone's server the "
                   "tester's right side")
    program = "pdns_recursor"
    tools = {**Resolver.tools, "pdns_recursor": "pdns-recursor"}
    # It sizes its caches in entries, not bytes: `cache` MiB are taken as this many entries per
    # MiB of each (its record cache and its packet cache), about a kilobyte an entry.
    ENTRIES_PER_MIB = 1024
    synthesis_ttl_of_a = True   # PowerDNS Recursor 4.8 gives a synthesis its A record's TTL

    def command(self) -> list[str]:
        # It reads recursor.conf of --config-dir and writes its pid file, <program>.pid, into
        # its socket-dir (LAB_DIR): the config names both.
        return ["pdns_recursor", f"--config-dir={os.path.dirname(self.conf)}"]

    def build(self, p: dict[str, Any]) -> None:
        os.makedirs(os.path.join(LAB_DIR, "pdns"), exist_ok=True)
        super().build(p)

    @property
    def conf(self) -> str:
        return os.path.join(LAB_DIR, "pdns", "recursor.conf")

    @staticmethod
    def query_source(p: dict[str, Any]) -> str:
        """The address it asks the zone's server from: the DUT's right side's towards the tester,
        the namespace's loopback towards NSD."""
        if p["zone_server"] == "nsd":
            return "127.0.0.1" if p["upstream"] == 4 else "::1"
        return host(V4_RIGHT[0]) if p["upstream"] == 4 else host(V6_RIGHT[0])

    def config_text(self, p: dict[str, Any], prefix: str) -> str:
        entries = p["cache"] * self.ENTRIES_PER_MIB
        return f"""# PowerDNS Recursor for the xlatperf lab (written by lab up)
local-address={host(V6_LEFT[0])}
allow-from=::/0
dns64-prefix={prefix}
forward-zones={ZONE}={self.authoritative(p)}
# Its default list refuses to ask the documentation and private ranges, the lab's among them.
dont-query=
query-local-address={self.query_source(p)}
threads=1
# It stops asking a server that missed this many answers in a row (for 60 s, answering SERVFAIL
# itself): an overloaded trial would fail the next ones. 0: never (each trial stands alone).
server-down-max-fails=0
dnssec=off
qname-minimization=no
max-cache-entries={entries}
max-packetcache-entries={entries}
edns-outgoing-bufsize=1232
udp-truncation-threshold=1232
daemon=yes
socket-dir={LAB_DIR}
disable-syslog=yes
quiet=yes
loglevel=3
"""
