# SPDX-License-Identifier: BSD-3-Clause
"""The Linux kernel as a router (RFC 2544, RFC 5180): router4 and router6, and the reference
DUTs built on it with an nftables forward chain: `limit` (a known throughput: a token bucket
per direction) and `lossy` (a known loss ratio: random drops). The router's tester addresses
are one per side, or many (draft-lencse-bmwg-multiple-ip-addresses), directly connected or
behind a next hop (`gateway`).
"""

from __future__ import annotations

import math
import time
from typing import Any

from ..names import DUT_NS, GATEWAYS, MACS
from ..shell import LabError, ip, run
from .base import LabKind, auto_or, choice, fault_params, integer, yes_no
from .common import load_nft, router_sides, setup_direct_router, setup_router

FAMILY = {"default": "4", "allowed": "4 or 6", "help": "IP version routed by the DUT",
          "parse": lambda text: int(choice("4", "6")(text))}
# Multiple IP addresses (draft-lencse-bmwg-multiple-ip-addresses): how many per side, and
# whether the DUT reaches them directly or through a gateway.
ADDRESSES = {"default": "1", "allowed": "an integer 1..65533",
             "help": "tester addresses per side, varied pseudorandomly (1 = a single pair)",
             "parse": integer(1, 65533)}
ROUTER_PARAMS = {
    "addresses": ADDRESSES,
    "gateway": {"default": "no", "allowed": "yes or no",
                "help": "the DUT routes each side's test range to a next hop (draft Figs. 3 "
                        "and 5)",
                "parse": yes_no},
    "mtu": {"default": "1500", "allowed": "an integer 1280..65535",
            "help": "MTU of the DUT's and the tester's veths (jumbo frames: 9216)",
            "parse": integer(1280, 65535)},
    "set_flow_label": {"default": "no", "allowed": "yes or no",
                       "help": "IPv6: the router sets a flow label on packets that arrive without one, "
                               "as RFC 6437 §3 lets a forwarding node (a correct DUT; the tester then "
                               "sends none: traffic.flow_label = 0)",
                       "parse": yes_no},
}
# The label set_flow_label writes, and the one the flow_label fault writes over a non-zero one.
SET_FLOW_LABEL, FAULTY_FLOW_LABEL = 0x54321, 0x11111

# Faulty variants of the router: an nftables postrouting rule per DUT port spoils the shares of
# the frames it forwards after the kernel routed them correctly (common.fault_params). `numgen
# inc` counts per rule, so each share is exact per direction.
FAULTS = {
    "ttl": ("ip ttl set 10", "ip6 hoplimit set 10"),          # the TTL as the tester sent it
    "tos": ("ip dscp set cs0", "ip6 dscp set cs0"),            # DSCP zeroed
    "address": ("ip saddr set 198.18.9.9", "ip6 saddr set 2001:2::9:9"),  # another source, sums fixed
    "checksum": ("udp checksum set 4660", "udp checksum set 4660"),        # a wrong UDP checksum
    # The ECN field spoilt both ways (RFC 3168 §5): a Not-ECT packet marked CE (a router drops
    # it instead), an ECT or CE one bleached to Not-ECT.
    "ecn": ("ip ecn not-ect ip ecn set ce accept; ip ecn set not-ect",
            "ip6 ecn not-ect ip6 ecn set ce accept; ip6 ecn set not-ect"),
    # A non-zero flow label rewritten (RFC 6437 §3: MUST NOT); IPv4 has none.
    "flow_label": (None, f"ip6 flowlabel != 0 ip6 flowlabel set {FAULTY_FLOW_LABEL:#x}"),
}
# A fault below IP: the frame leaves with another Ethernet source than the DUT port's MAC, the
# one the tester resolved (as from another box, or another interface of the DUT). Written at the
# ports' egress hook (netdev), where the Ethernet header is there to change.
LINK_FAULTS = {"src_mac": "ether saddr set 02:78:6c:00:ee:ee"}
FAULTY_PARAMS = fault_params("router", {"ttl": "no TTL decrement", "tos": "DSCP zeroed",
                                        "ecn": "Not-ECT marked CE, ECT bleached to Not-ECT",
                                        "src_mac": "frames sent from another MAC than the resolved one",
                                        "address": "another source address", "checksum": "a wrong UDP checksum",
                                        "flow_label": f"IPv6 only: a non-zero flow label rewritten to "
                                                      f"{FAULTY_FLOW_LABEL:#x}"})


def faulty_ruleset(faults: tuple[str, ...], version: int, percent: int, set_flow_label: bool = False) -> str:
    """nftables ruleset of a faulty router: fault i on the frames i * percent .. (i + 1) *
    percent - 1 of every 100 of each direction's; with `set_flow_label` (IPv6) a label on every
    packet that arrives without one, first."""
    column = 0 if version == 4 else 1
    family = "ipv4" if version == 4 else "ipv6"
    slices = {name: f"{i * percent}-{(i + 1) * percent - 1}" if percent > 1 else f"{i}"
              for i, name in enumerate(faults)}
    ip_faults = [name for name in faults if name not in LINK_FAULTS]
    chains = "".join(f"\tchain fault_{name} {{ {FAULTS[name][column]}; }}\n" for name in ip_faults)
    verdicts = ", ".join(f"{slices[name]} : jump fault_{name}" for name in ip_faults)
    rules = "".join(f'\t\toifname "{dev}" meta nfproto {family} meta l4proto udp numgen inc mod 100 '
                    f'vmap {{ {verdicts} }}\n' for dev in ("xlp-dl", "xlp-dr")) if ip_faults else ""
    # The link faults' slices of the same frames, counted alike at each port's egress.
    link = "".join(f'\tchain {name}_{dev} {{ type filter hook egress device "{dev}" priority filter; '
                   f'meta l4proto udp numgen inc mod 100 {slices[name]} {LINK_FAULTS[name]}; }}\n'
                   for name in faults if name in LINK_FAULTS for dev in ("xlp-dl", "xlp-dr"))
    if set_flow_label:
        rules = (f'\t\toifname {{ "xlp-dl", "xlp-dr" }} ip6 flowlabel 0 ip6 flowlabel set {SET_FLOW_LABEL:#x}\n'
                 + rules)
    return ("table inet xlp {\n"
            f"{chains}"
            "\tchain faults {\n"
            "\t\ttype filter hook postrouting priority mangle; policy accept;\n"
            f"{rules}"
            "\t}\n"
            "}\n" + (f"table netdev xlp_link {{\n{link}}}\n" if link else ""))


# limit: the token bucket holds BURST_SECONDS of frames at the limit rate, at least BURST_MIN.
BURST_SECONDS = 0.05
BURST_MIN = 100
# lossy: numgen draws from 0..LOSS_SCALE-1; a frame is dropped when the draw < round(loss*scale).
LOSS_SCALE = 65536


def ratio(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:  # also rejects nan
        raise ValueError
    return value


def auto_burst(rate: int) -> int:
    """Token bucket size of the `limit` DUT for `rate` frames/s.

    nftables' packet `limit` is a token bucket that refills at `rate` and holds `burst` frames
    (kernel >= 5.x semantics). Two errors pull in opposite directions:

    * Below the limit, frames that arrive bunched up (the tester or the kernel was descheduled
      for d seconds and then catches up) find at most `burst` tokens: no loss needs
      burst >= d * rate.
    * Above the limit, a trial of T seconds at rate r passes burst + rate*T frames, so the
      highest zero-loss rate a throughput search finds is rate * (1 + burst / (rate*T)).

    burst = rate * 0.05 s absorbs 50 ms of scheduling jitter -- several time slices on a busy
    2-core machine -- and overstates the throughput by 0.05 s / T: 5 % for T = 1 s, 0.5 % for
    T = 10 s. The floor of 100 frames covers the engine's send bursts at low rates.
    """
    return max(BURST_MIN, math.ceil(rate * BURST_SECONDS))


def limit_ruleset(rate: int, burst: int) -> str:
    """nftables ruleset of the `limit` DUT: each direction passes `rate` frames/s."""
    # One limit per direction: every rule's limit keeps its own token bucket.
    rules = "".join(
        f'\t\tiifname "{dev}" limit rate {rate}/second burst {burst} packets counter accept\n'
        f'\t\tiifname "{dev}" counter drop\n'
        for dev in ("xlp-dl", "xlp-dr"))
    return _ruleset(rules, "accept")


def loss_threshold(loss: float) -> int:
    """The numgen threshold for `loss`: the effective loss ratio is threshold / 65536.

    So the loss ratio is quantised to steps of 1/65536 (1.5e-5): 0.01 becomes 655/65536 =
    0.0099945, and a ratio below 7.6e-6 becomes 0.
    """
    return round(loss * LOSS_SCALE)


def lossy_ruleset(loss: float) -> str:
    """nftables ruleset of the `lossy` DUT: each frame is dropped with probability `loss`."""
    threshold = loss_threshold(loss)
    # numgen's result is 16 bits wide, so nft rejects "< 65536": loss 1 drops unconditionally.
    if threshold >= LOSS_SCALE:
        match = ""
    else:
        match = f"numgen random mod {LOSS_SCALE} < {threshold} "
    rules = "".join(
        f'\t\tiifname "{dev}" {match}counter drop\n'
        f'\t\tiifname "{dev}" counter accept\n'
        for dev in ("xlp-dl", "xlp-dr"))
    return _ruleset(rules, "accept")


def _ruleset(rules: str, policy: str) -> str:
    return ("table inet xlp {\n"
            "\tchain forward {\n"
            f"\t\ttype filter hook forward priority filter; policy {policy};\n"
            f"{rules}"
            "\t}\n"
            "}\n")


class Router(LabKind):
    """The kernel routing between the sides; `version` None: the `family` parameter says."""
    version: int | None = None
    kind_params = {**ROUTER_PARAMS, **FAULTY_PARAMS}

    def ip_version(self, p: dict[str, Any]) -> int:
        return self.version or p["family"]

    def build(self, p: dict[str, Any]) -> None:
        version = self.ip_version(p)
        if p["gateway"]:
            left, right = GATEWAYS[version]
            setup_router(left=[left[:2]], right=[right[:2]])
            for _, next_hop, test_range in (left, right):
                ip(DUT_NS, f"-{version}", "route", "add", test_range, "via", next_hop)
        else:
            setup_direct_router(version, p["addresses"])
        if p.get("faulty") or p["set_flow_label"]:
            load_nft(faulty_ruleset(p.get("faulty", ()), version, p.get("faulty_share", 0), p["set_flow_label"]))

    def resolve(self, p: dict[str, Any]) -> None:
        if self.ip_version(p) == 4 and (p["set_flow_label"] or "flow_label" in p.get("faulty", ())):
            what = "set_flow_label=yes" if p["set_flow_label"] else "faulty=flow_label"
            raise LabError(f"lab kind {self.name!r}: {what} needs IPv6 (an IPv4 header has no flow label); "
                           "allowed: router6, or router with family=6")

    def tester_sections(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return router_sides(self.ip_version(p), p["gateway"])


class Router4(Router):
    name = "router4"
    description = "Linux kernel as IPv4 router (RFC 2544)"
    version = 4


class Router6(Router):
    name = "router6"
    description = "Linux kernel as IPv6 router (RFC 5180)"
    version = 6


def _forwarding(dev: str) -> bool:
    """Whether bridge port `dev` of the DUT's namespace forwards (`bridge link show`)."""
    return any(line.split()[1].startswith(f"{dev}") and "state forwarding" in line
               for line in run(["bridge", "link", "show"], ns=DUT_NS).splitlines() if line.strip())


# The destination a flooding bridge's tester sends to (flood=yes): no interface of the lab has it
# and no frame comes from it, so the bridge never learns where it is.
NOBODYS_MAC = "02:78:6c:00:ff:ff"


class Bridge(LabKind):
    """A reference DUT that is no router: a Linux bridge between the sides forwards each frame
    as it came, TTL and all. Measured as a router it must be reported as faulty (`bad_ttl`,
    issue 29); the tester addresses its frames to the other tester port's MAC, which the bridge
    learns and forwards to. With flood=yes the tester addresses them to a MAC nobody has
    (NOBODYS_MAC): the bridge floods them as unknown unicast, and the other tester port, which
    runs promiscuous, gets frames that are not addressed to it (`bad_address`, issue 42)."""
    name = "bridge"
    description = "a Linux bridge measured as a router: forwards without a TTL decrement (faulty)"
    kind_params = {
        "family": FAMILY,
        "flood": {"default": "no", "allowed": "yes or no",
                  "help": f"the tester sends to {NOBODYS_MAC}, a MAC nobody has: the bridge floods "
                          "every frame to the other tester port, not addressed to it (faulty)",
                  "parse": yes_no},
    }

    def build(self, p: dict[str, Any]) -> None:
        ip(DUT_NS, "link", "add", "xlp-br", "type", "bridge")
        for dev in ("xlp-dl", "xlp-dr"):
            ip(DUT_NS, "link", "set", dev, "master", "xlp-br")
            if p["flood"]:  # the kernel's default, stated: unknown unicast goes out of every port
                ip(DUT_NS, "link", "set", dev, "type", "bridge_slave", "flood", "on")
            ip(DUT_NS, "link", "set", dev, "up")
        ip(DUT_NS, "link", "set", "xlp-br", "up")
        # A new port forwards only once its carrier is seen (a fraction of a second): frames
        # sent before would be lost, not judged.
        deadline = time.monotonic() + 10
        while not all(_forwarding(dev) for dev in ("xlp-dl", "xlp-dr")):
            if time.monotonic() > deadline:
                raise LabError("the bridge's ports did not reach the forwarding state in 10 s")
            time.sleep(0.05)

    def tester_sections(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        sides = router_sides(p["family"])
        for side, other in (("left", "xlp-tr"), ("right", "xlp-tl")):
            sides[side]["dut_mac"] = NOBODYS_MAC if p["flood"] else MACS[other]
            sides[side].pop(f"dut_ipv{p['family']}", None)
        return sides


class Limit(Router):
    name = "limit"
    description = "router plus an nftables 'limit rate': a DUT with a known throughput"
    kind_params = {
        "rate": {"default": "10000", "allowed": "an integer 1..100000000",
                 "help": "frames/s the DUT passes per direction",
                 "parse": integer(1, 100_000_000)},
        "family": FAMILY,
        **ROUTER_PARAMS,
        "burst": {"default": "auto", "allowed": "auto or an integer 1..100000000",
                  "help": f"token bucket size in frames; auto = max({BURST_MIN}, "
                          f"rate*{BURST_SECONDS}) ({BURST_SECONDS * 1000:g} ms at the rate)",
                  "parse": auto_or(integer(1, 100_000_000))},
    }
    tools = {"nft": "nftables"}

    def resolve(self, p: dict[str, Any]) -> None:
        if p["burst"] == "auto":
            p["burst"] = auto_burst(p["rate"])

    def build(self, p: dict[str, Any]) -> None:
        super().build(p)
        load_nft(limit_ruleset(p["rate"], p["burst"]))


class Lossy(Router):
    name = "lossy"
    description = "router plus nftables 'numgen random' drops: a DUT with a known loss ratio"
    kind_params = {
        "loss": {"default": "0.01", "allowed": "a number 0..1",
                 "help": f"probability of dropping each frame, per direction "
                         f"(applied as round(loss*{LOSS_SCALE})/{LOSS_SCALE})",
                 "parse": ratio},
        "family": FAMILY,
        **ROUTER_PARAMS,
    }
    tools = {"nft": "nftables"}

    def build(self, p: dict[str, Any]) -> None:
        super().build(p)
        load_nft(lossy_ruleset(p["loss"]))

    def config_notes(self, p: dict[str, Any]) -> list[str]:
        t = loss_threshold(p["loss"])
        return [f"# Effective loss ratio per direction: {t}/{LOSS_SCALE} = {t / LOSS_SCALE:.7f}"]
