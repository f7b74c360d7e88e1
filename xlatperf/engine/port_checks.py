# SPDX-License-Identifier: BSD-3-Clause
"""The engine half of `xlatperf doctor`: the ports as the engine set them up, judged from its
hello (docs/protocol.md "hello"; docs/hardware.md): links, MTU, RSS, flow control,
promiscuous and all-multicast, the drop and pause counters the driver offers, timestamps.

A measurement runs the same checks right after hello and refuses to start on a failing one
(`require_ready_ports`), with the line doctor would print. `doctor` runs both halves.
"""

import os

from ..util.errors import XlatperfError
from ..util.rates import parse_speed
from .client import Engine
from .doctor import Check, failed, host_checks, refuse, remote_host_checks

SIDES = ("left", "right")


def _where(config, index: int, port: dict) -> str:
    side = SIDES[index] if index < len(SIDES) else f"port {index}"
    return f"{side} port {port.get('name', index)}"


def _is_nic(port: dict) -> bool:
    return port.get("bus") == "pci"


def link_check(config, hello: dict) -> Check:
    """Every link up within tester.link_timeout, full duplex, both at one speed, and at the
    configured `speed` where one is set."""
    ports = hello.get("ports", [])
    down = [f"{_where(config, i, p)} down after {p.get('link', {}).get('wait', 0):.1f} s"
            for i, p in enumerate(ports) if not p.get("link", {}).get("up", p.get("link_up"))]
    if down:
        return Check("ports: link", "fail", "; ".join(down),
                     "check the cable, the DUT's interface and its speed setting; a link that takes "
                     f"longer: tester.link_timeout = {max(2 * config.tester.link_timeout, 30):g}")
    speeds = [p.get("link_speed_mbps", 0) for p in ports]
    found = ", ".join(f"{_where(config, i, p)} {p.get('link_speed_mbps', 0):,} Mbit/s"
                      + ("" if p.get("link", {}).get("full_duplex", True) else " HALF duplex")
                      + f" (up after {p.get('link', {}).get('wait', 0):.1f} s)" for i, p in enumerate(ports))
    half = [i for i, p in enumerate(ports) if not p.get("link", {}).get("full_duplex", True) and _is_nic(p)]
    if half:
        return Check("ports: link", "warn", found, "half duplex halves what a link carries each way: set the "
                     "DUT's interface and the tester's to full duplex (autonegotiation on both ends)")
    for i, side in enumerate(SIDES[:len(ports)]):
        expected = config.side(side).speed
        if expected and _is_nic(ports[i]) and speeds[i] and parse_speed(expected) != speeds[i] * 10**6:
            return Check("ports: link", "warn", found,
                         f'{side}.speed = "{expected}" but the link runs at {speeds[i]:,} Mbit/s: the maximum '
                         f'frame rate follows {side}.speed; set it to "" to take the link\'s')
    if len(set(speeds)) > 1 and all(speeds):
        return Check("ports: link", "warn", found, "the two links run at different speeds: a bidirectional "
                     "test's maximum frame rate is the slower one's; check the DUT's interfaces")
    return Check("ports: link", "ok", found, "")


def mtu_check(config, hello: dict) -> Check:
    """The MTU that takes the run's largest frame, on every NIC port."""
    short = []
    found = []
    for i, p in enumerate(hello.get("ports", [])):
        need = p.get("max_frame", 0) - 18
        found.append(f"{_where(config, i, p)} MTU {p.get('mtu', '?')} for frames up to {p.get('max_frame', '?')} B")
        if _is_nic(p) and p.get("mtu", 0) < need:
            short.append(f"{_where(config, i, p)}: MTU {p.get('mtu')} < {need}")
    if short:
        return Check("ports: MTU", "fail", "; ".join(short), "the engine sets the MTU itself: a driver that "
                     "refuses it cannot take the frames; lower traffic.frame_size or the VLAN tags")
    return Check("ports: MTU", "ok", "; ".join(found), "")


def flow_control_check(config, hello: dict) -> Check:
    """Pause frames off (tester.flow_control = "off"), or left on by choice."""
    found, failed, kept = [], [], []
    counted = True   # every port that kept pause frames on counts those it receives
    for i, p in enumerate(hello.get("ports", [])):
        flow = p.get("flow_control") or {}
        now = flow.get("now", "unsupported")
        found.append(f"{_where(config, i, p)} {now}" + (f" (was {flow['found']})" if flow.get("found") not in
                                                           (None, now) else ""))
        if flow.get("error"):
            failed.append(f"{_where(config, i, p)}: could not turn it off ({flow['error']})")
            counted = counted and bool((p.get("xstats") or {}).get("pause"))
        elif now not in ("none", "unsupported"):
            kept.append(_where(config, i, p))
    if failed:
        # Fatal only where pause frames would also go uncounted: then a DUT could slow the
        # tester without a trace.
        return Check("ports: flow control", "warn" if counted else "fail", "; ".join(failed),
                     "turn pause frames off on the DUT's interfaces (a DUT that sends none cannot slow the "
                     "tester) or through the NIC's kernel interface (mlx5: ethtool -A IFACE rx off tx off)" +
                     ("; pause frames received are counted and reported" if counted else
                      '; or accept them with tester.flow_control = "keep": the DUT can then slow the tester unseen'))
    if kept:
        return Check("ports: flow control", "warn", "; ".join(found),
                     'tester.flow_control = "off": with pause frames on, a DUT that sends them slows the '
                     "tester's sender while every drop counter reads zero")
    return Check("ports: flow control", "ok", "; ".join(found), "")


def receive_modes_check(config, hello: dict) -> Check:
    """Promiscuous (frames to other MACs are seen) and all-multicast (IPv6 neighbour
    solicitations to solicited-node groups)."""
    refused = [f"{_where(config, i, p)}: " + " and ".join(mode for mode in ("promiscuous", "allmulticast")
                                                          if not p.get(mode, True))
               for i, p in enumerate(hello.get("ports", []))
               if _is_nic(p) and not (p.get("promiscuous", True) and p.get("allmulticast", True))]
    if refused:
        return Check("ports: promiscuous, all-multicast", "warn", "refused on " + "; ".join(refused),
                     "an SR-IOV VF needs trust on its PF: ip link set dev PF vf N trust on; without "
                     "all-multicast the DUT's IPv6 neighbour solicitations may not arrive (set left/right.dut_mac)")
    return Check("ports: promiscuous, all-multicast", "ok", "on where the driver has them", "")


def rss_check(config, hello: dict) -> Check:
    """With several queues, how the NIC spreads frames over them."""
    queues = config.tester.queues
    ports = hello.get("ports", [])
    if queues == 1:
        return Check("ports: RSS", "ok", "one queue per port: nothing to spread", "")
    found, uneven = [], []
    for i, p in enumerate(ports):
        share = (p.get("rss") or {}).get("reta_share") or []
        found.append(f"{_where(config, i, p)} {p.get('rx_spread', '?')}" +
                     (f", redirection table {share}" if share else ""))
        if p.get("rx_spread") == "none" or (share and 0 in share):
            uneven.append(_where(config, i, p))
    if uneven:
        return Check("ports: RSS", "warn", "; ".join(found), f"tester.queues = {queues}: some RX queues get no "
                     "frames on " + ", ".join(uneven) + " (a NIC without RSS, or a redirection table that leaves "
                     "a queue out): one worker receives everything")
    return Check("ports: RSS", "ok", "; ".join(found), "")


def counters_check(config, hello: dict) -> Check:
    """Which drop and pause counters the driver offers (the engine reads them around every
    trial)."""
    found, blind = [], []
    for i, p in enumerate(hello.get("ports", [])):
        xstats = p.get("xstats") or {}
        found.append(f"{_where(config, i, p)}: {xstats.get('offered', 0)} extended statistics; drops "
                     f"{', '.join(xstats.get('drops') or []) or 'imissed and rx_nombuf only'}; pause "
                     f"{', '.join(xstats.get('pause') or []) or 'none'}")
        flow = (p.get("flow_control") or {}).get("found", "unsupported")
        if _is_nic(p) and flow != "unsupported" and not xstats.get("pause"):
            blind.append(_where(config, i, p))
    if blind:
        return Check("ports: drop and pause counters", "warn", "; ".join(found),
                     "no pause frame counter on " + ", ".join(blind) + ": pause frames the DUT sends cannot be "
                     "reported; turn flow control off on the DUT as well")
    return Check("ports: drop and pause counters", "ok", "; ".join(found), "")


def timestamps_check(config, hello: dict) -> Check:
    """What the NICs offer for hardware timestamps (docs/delay.md): information."""
    found = []
    for i, p in enumerate(hello.get("ports", [])):
        ts = p.get("timestamps") or {}
        offered = [name for name, key in (("RX timestamp offload", "rx_offload"), ("IEEE 1588 timesync", "timesync"),
                                          ("device clock", "read_clock")) if ts.get(key)]
        found.append(f"{_where(config, i, p)}: {', '.join(offered) or 'none'}")
    return Check("ports: hardware timestamps", "ok", "; ".join(found) +
                 " (delays are software TSC timestamps: docs/delay.md)", "")


ENGINE_CHECKS = (link_check, mtu_check, flow_control_check, receive_modes_check, rss_check, counters_check,
                 timestamps_check)


def engine_checks(config, hello: dict) -> list[Check]:
    """The ports as the engine's hello shows them, judged."""
    return [check(config, hello) for check in ENGINE_CHECKS]


def require_ready_ports(config, hello: dict) -> None:
    """Before a measurement: raises EngineError with doctor's line for every failing check."""
    refuse(engine_checks(config, hello))


def doctor(config, root: str | os.PathLike = "/", engine_path: str | None = None) -> list[Check]:
    """Every check: the host's (the engine's host: with tester.ssh its files are read through
    ssh), then, unless one of those failed, the engine's on its started ports."""
    checks = remote_host_checks(config) if config.tester.ssh else host_checks(config, root)
    if failed(checks):
        return checks + [Check("engine: ports", "fail", "not started: the host checks above failed",
                               "fix those first")]
    try:
        with Engine(config, engine_path=engine_path) as engine:
            hello = engine.hello()
    except XlatperfError as exc:
        return checks + [Check("engine: ports", "fail", f"the engine did not start its ports: {exc}",
                               "the host checks above and the engine's message name the cause")]
    return checks + engine_checks(config, hello)
