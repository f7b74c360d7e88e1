# SPDX-License-Identifier: BSD-3-Clause
"""The configuration's rules that involve several keys (docs/config.md), run by validate()
(loading.py) once every key passed its own checker; each problem a ConfigError naming the key,
the value and what is allowed."""

import ipaddress

from ..util.errors import key_error
from ..frames.kinds import foreground_addresses, trial_frames
from ..frames.kinds.ipv4aas import dual_dut
from ..frames.stack import MAX_FRAME_SIZE, SENT_TTL
from ..frames.trial import DIRECTIONS, active_directions, direction_sides, has_background, lookup, size_period
from ..frames.imix import mixed_length
from .dns import check_dns
from .ipv4aas import check_ipv4aas
from .limits import MAX_PATTERN, STREAM_IDS, stream_ids_needed
from .mlrgoals import check_frame_timeouts
from .ports import parse_port
from .schema import HOOK_KEYS, MIN_FRAME_SIZE, SCHEMA, VARIABLE_SECTION
from .stateful import check_stateful
from .templates import BRACES_HINT, TemplateError, placeholders, template_value
from .views import ConfigBase

def cross_check(config: ConfigBase) -> None:
    """Every rule that involves several keys of a configuration whose keys all passed."""
    traffic = config.traffic
    check_ipv4aas(config)  # first: the traffic kind, and so the frames, depend on it

    tester = config.tester
    if not tester.ssh:
        for key in ("ssh_port", "ssh_identity", "ssh_options"):
            if getattr(tester, key):
                raise key_error(f"tester.{key}", getattr(tester, key),
                                'takes effect only with tester.ssh = "[user@]host" (the engine '
                                'on another host); remove it or set tester.ssh')

    output = config.output
    if output.repeat_max and output.repeat_max < output.repeat:
        raise key_error("output.repeat_max", output.repeat_max,
                     f"must be 0 (a fixed number of repetitions) or at least output.repeat = "
                     f"{output.repeat} (the minimum)")

    bursts = config.back_to_back
    if bursts.throughput and bursts.throughput_from:
        raise key_error("back_to_back.throughput_from", bursts.throughput_from,
                        f'must be "" when back_to_back.throughput = {bursts.throughput} is set '
                        "(one source for the DUT's throughput)")

    throughput = config.throughput
    if throughput.mode == "mlrsearch":
        if not throughput.preset and not throughput.goals:
            raise key_error("throughput.preset", "", "must name a preset (rfc2544, ndr-pdr) when "
                         "throughput.goals is empty: MLRsearch needs at least one goal")
        if throughput.loss_tolerance:
            raise key_error("throughput.loss_tolerance", throughput.loss_tolerance,
                         "must be 0 with mode = \"mlrsearch\" (each goal has its own loss_ratio)")
        check_frame_timeouts(config, SCHEMA["trial"]["frame_timeout"].check)

    if traffic.mix_m > traffic.mix_n:
        raise key_error("traffic.mix_m", traffic.mix_m,
                     f"must be an integer in 1..{traffic.mix_n} (1 <= mix_m <= mix_n)")

    # Frame size rule of docs/config.md (frames/stack.py): frame_size names the IPv6 frame
    # whenever IPv6 frames are part of the trial (IPv4 frames are then 20 bytes shorter).
    frames = trial_frames(config)
    low = frames.min_frame_size()
    if traffic.frame_size < low and not traffic.imix:
        raise key_error("traffic.frame_size", traffic.frame_size,
                     f"must be an integer in {low}..{MAX_FRAME_SIZE} when the trial "
                     f"carries IPv6 frames (it names the IPv6 frame size; IPv4 frames are 20 bytes "
                     f"shorter, so {low} gives 64-byte IPv4 frames)")

    if traffic.imix:
        _check_imix(config, low)

    # Every address a frame is sent with must be set.
    needed: list[tuple[str, str]] = []
    for direction in active_directions(config):
        source, destination = frames.kind.addresses(config, direction)
        why = frames.kind.address_use(config, direction)
        needed += [(source, why), (destination, why)]
    if has_background(config):
        why = "background traffic (mix_m < mix_n) is native IPv6 between left.ipv6 and right.ipv6"
        needed += [("left.ipv6", why), ("right.ipv6", why)]
    for dotted, why in needed:
        if lookup(config, dotted) == "":
            version = dotted[-1]
            raise key_error(dotted, "", f"must be an IPv{version} address: {why}")

    for side in ("left", "right"):
        kind = parse_port(config.side(side).port).port_kind
        if kind.max_frame is not None and frames.largest_frame > kind.max_frame:
            raise key_error("traffic.frame_size", traffic.frame_size,
                            f"must make frames of at most {kind.max_frame} bytes on the wire (VLAN tags "
                            f"included; here {frames.largest_frame}) with {side}.port = "
                            f'"{config.side(side).port}": DPDK\'s AF_XDP driver receives no frame larger '
                            "than one umem chunk; use af_packet or a PCI port for jumbo frames")
        if config.side(side).vlan_outer and not config.side(side).vlan:
            raise key_error(f"{side}.vlan_outer", config.side(side).vlan_outer,
                            f"needs {side}.vlan (the inner C-tag) too: QinQ is an outer S-tag around "
                            f"a C-tag; for one tag set {side}.vlan alone")

    if config.dut.middle_link_speed and not dual_dut(config):
        raise key_error("dut.middle_link_speed", config.dut.middle_link_speed,
                        'takes effect only with ipv4aas.role = "dual" (a CE and a BR in line, RFC 8219 '
                        "§4.2 Figure 2: the link between them); remove it")

    for key in ("hops", "background_hops"):
        hops = getattr(config.dut, key)
        if hops != "auto" and hops >= SENT_TTL:
            raise key_error(f"dut.{key}", hops, f"must be at most {SENT_TTL - 1}: the test frames are "
                            f"sent with TTL/hop limit {SENT_TTL} (RFC 2544 App. C.2.6.4) and must arrive "
                            "with at least 1")

    _check_variation(config)
    _check_port_order(config)
    _check_hooks(config)
    if config.stateful.enabled:
        check_stateful(config)
    check_dns(config)


def _check_hooks(config) -> None:
    """Every placeholder of every hook command names a key or a DUT variable, and every DUT
    variable is used by a hook: before anything runs, not when the hook's turn comes."""
    variables = config.dut.variables
    used: set[str] = set()
    for hook in HOOK_KEYS:
        command = getattr(config.dut, hook)
        try:
            names = placeholders(command)
        except TemplateError as exc:
            raise key_error(f"dut.{hook}", command, str(exc)) from None
        for name in names:
            try:
                template_value(config, name)
            except KeyError:
                known = ", ".join(f"{{dut.{v}}}" for v in variables) or "none"
                raise key_error(f"dut.{hook}", command,
                                f"placeholder {{{name}}} is neither a configuration key nor a "
                                f"DUT variable (DUT variables: {known}; set one as dut.NAME, "
                                f"e.g. in a campaign's [axes]; {BRACES_HINT})") from None
            section, _, key = name.partition(".")
            if section == VARIABLE_SECTION and key in variables:
                used.add(key)
    settings = ", ".join(k for k in SCHEMA["dut"] if k != "variables")
    for name in variables:
        if name not in used:
            raise key_error(f"dut.{name}", variables[name],
                            f"is not a [dut] setting ({settings}); as a DUT variable it must "
                            f"be used by a hook command as {{dut.{name}}}")


def _check_imix(config, low: int) -> None:
    """The IMIX sizes follow frame_size's range rule (`low`: the trial's smallest size); the
    frame pattern (IMIX period mixed with the foreground/background period) must fit the
    engine's; stateful phase 1 enumerates one stream of frames."""
    traffic = config.traffic
    for size in sorted(set(size_period(config))):
        if not low <= size <= MAX_FRAME_SIZE:
            raise key_error("traffic.imix", traffic.imix,
                            f"has a frame size of {size} bytes; sizes must be in {low}..{MAX_FRAME_SIZE}"
                            + (" when the trial carries IPv6 frames (they name the IPv6 frame)"
                               if low == MIN_FRAME_SIZE[6] else ""))
    n, m = (traffic.mix_n, traffic.mix_m) if has_background(config) else (1, 1)
    period = mixed_length(len(size_period(config)), n, m)
    if period > MAX_PATTERN:
        raise key_error("traffic.imix", traffic.imix,
                        f"repeats after {len(size_period(config))} frames and the mix {m}/{n}: "
                        f"foreground and background frames each through the IMIX's order repeat "
                        f"after {period}, more than the engine's {MAX_PATTERN} frames")
    # The test tag's stream id (1 byte) numbers each direction's streams on each TX queue
    # (docs/protocol.md "Queues and workers"): a stream per size and kind, at least 2.
    streams = len(set(size_period(config))) * (2 if has_background(config) else 1)
    ids = stream_ids_needed(len(active_directions(config)), streams, config.tester.queues)
    if ids > STREAM_IDS:
        raise key_error("traffic.imix", traffic.imix,
                        f"makes {streams} streams per direction; with {len(active_directions(config))} "
                        f"direction(s) and tester.queues = {config.tester.queues} they need {ids} stream "
                        "ids, the test tag has 256: use fewer sizes or queues")
    if config.stateful.enabled:
        raise key_error("traffic.imix", traffic.imix,
                        'must be "" with stateful.enabled = true (RFC 9693 phase 1 enumerates one '
                        "stream of frames)")


def _check_variation(config: dict) -> None:
    for direction in DIRECTIONS:
        for field in ("src", "dst"):
            key = f"ports.{direction}_{field}"
            low, high = (getattr(config.ports, f"{direction}_{field}_{end}") for end in ("min", "max"))
            if getattr(config.ports, f"{direction}_{field}") != "fixed" and low > high:
                raise key_error(f"{key}_min", low, f"must be at most {key}_max = {high}")
    addresses = config.addresses
    for side in ("left", "right"):
        if getattr(addresses, side) != "fixed" and getattr(addresses, f"{side}_min") > getattr(addresses, f"{side}_max"):
            raise key_error(f"addresses.{side}_min", getattr(addresses, f"{side}_min"),
                         f"must be at most addresses.{side}_max = {getattr(addresses, f'{side}_max')}")
        nets = getattr(addresses, f"{side}_nets")
        if nets == 1:
            continue
        # The network byte: IPv4 bits 16-23 (byte 2), IPv6 bits 56-63 (byte 7). It collides
        # with the 16-bit variation when that covers the same byte (IPv4 offset 2).
        if getattr(addresses, side) != "fixed" and getattr(addresses, f"{side}_offset_ipv4") == 2 and \
                _side_uses_version(config, side, 4):
            raise key_error(f"addresses.{side}_nets", nets,
                         f"must be 1 while addresses.{side} varies bytes 2-3 of IPv4 addresses "
                         f"(addresses.{side}_offset_ipv4 = 2 covers the network bits 16-23); "
                         f"set addresses.{side}_offset_ipv4 = 0 or addresses.{side} = \"fixed\"")
        for version, byte in ((4, 2), (6, 7)):
            for key in _destination_keys(config, side, version):
                base = ipaddress.ip_address(lookup(config, key)).packed[byte]
                if base + nets - 1 > 255:
                    raise key_error(f"addresses.{side}_nets", nets,
                                 f"must be at most {256 - base}: {key} = {lookup(config, key)} "
                                 f"has {base} in its network byte, and networks {base}.."
                                 f"{base + nets - 1} must fit in 0..255")


def _side_uses_version(config: dict, side: str, version: int) -> bool:
    return bool(_destination_keys(config, side, version))


def _destination_keys(config: dict, side: str, version: int) -> list[str]:
    """Config keys of the addresses that frames are sent *to* on `side` with IP `version`."""
    keys = []
    for direction in active_directions(config):
        tx, rx = direction_sides(direction)
        if rx != side:
            continue
        if config.side(tx).ip_version == version:
            keys.append(foreground_addresses(config, direction)[1])
        if version == 6 and has_background(config):
            keys.append(f"{side}.ipv6")
    return [k for k in keys if lookup(config, k)]


def _check_port_order(config: dict) -> None:
    """Two ports, one per side (the engine numbers them by side, whatever order DPDK probes
    them in); PCI ports on hugepages."""
    left, right = parse_port(config.left.port), parse_port(config.right.port)
    if (left.port_kind.paired or right.port_kind.paired) and left != right:
        raise key_error("right.port", str(right), f'must be "{left}" too: ring ports come as a pair '
                     "wired to each other, one end on each side")
    if (left.kind, left.name) == (right.kind, right.name) and not (left.port_kind.paired or left.port_kind.shared):
        raise key_error("right.port", str(right), "must differ from left.port (one device cannot be "
                     "both tester ports)")
    if config.tester.hugepages == "no" and (left.port_kind.dma or right.port_kind.dma):
        raise key_error("tester.hugepages", "no", 'must be "auto" or "yes" with a PCI port (its NIC '
                        "reaches the mbufs by DMA, which --no-huge memory cannot give it)")
