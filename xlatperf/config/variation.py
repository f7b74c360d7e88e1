# SPDX-License-Identifier: BSD-3-Clause
"""What varies from frame to frame, as the configuration says it: the protocol `vary` list of a
direction (RFC 4814 ports, the multiple-IP draft's 16-bit address parts, RFC 2544 §12
destination networks). The traffic plan sends it; the stateful rules enumerate it."""

import ipaddress

from ..frames.kinds import foreground_addresses
from ..frames.trial import direction_sides, lookup


def varying_fields(config: dict, direction: str, version: int) -> list[dict]:
    """The protocol `vary` list of a direction's frames of one IP version: RFC 4814 ports,
    the 16-bit address parts of the sending side (source) and the receiving side (destination,
    real or virtual alike), and RFC 2544 §12 destination networks."""
    tx, rx = direction_sides(direction)
    fields = []
    for field in ("src", "dst"):
        mode = getattr(config.ports, f"{direction}_{field}")
        if mode != "fixed":
            fields.append({"field": f"{field}_port", "mode": mode,
                           "min": getattr(config.ports, f"{direction}_{field}_min"),
                           "max": getattr(config.ports, f"{direction}_{field}_max")})
    addresses = config.addresses
    for field, side in (("src_ip", tx), ("dst_ip", rx)):
        if getattr(addresses, side) != "fixed":
            fields.append({"field": field, "mode": getattr(addresses, side),
                           "offset": getattr(addresses, f"{side}_offset_ipv{version}"),
                           "min": getattr(addresses, f"{side}_min"), "max": getattr(addresses, f"{side}_max")})
    nets = getattr(addresses, f"{rx}_nets")
    if nets > 1:
        byte = NETWORK_BYTE[version]
        base = ipaddress.ip_address(_destination(config, direction, version)).packed[byte]
        fields.append({"field": "dst_ip", "offset": byte, "bits": 8, "mode": "random",
                       "min": base, "max": base + nets - 1})
    return fields


def received_fields(config: dict, direction: str, sent: int,
                    received: int) -> tuple[list[dict], set[str]]:
    """The varying fields of a direction's frames sent in IP version `sent` as they arrive in
    `received` (the protocol's `rx.vary`, without `mode`), and the address fields whose
    arrival cannot be stated (so not checked). A port stays the same port. An address's 16-bit
    part is the same value at the received version's offset (addresses.SIDE_offset_ipvX: the
    configuration's word-for-word mapping of a side's real and virtual addresses); RFC 2544
    §12's network byte has no such counterpart across a translation."""
    tx, rx = direction_sides(direction)
    fields, unstated = [], set()
    for entry in varying_fields(config, direction, sent):
        entry = {key: value for key, value in entry.items() if key != "mode"}
        if entry["field"] in ("src_ip", "dst_ip") and received != sent:
            if entry.get("bits", 16) != 16:
                unstated.add(entry["field"])
                continue
            side = tx if entry["field"] == "src_ip" else rx
            entry["offset"] = getattr(config.addresses, f"{side}_offset_ipv{received}")
        fields.append(entry)
    return [entry for entry in fields if entry["field"] not in unstated], unstated


# RFC 2544 §12 / siitperf Num-{L,R}-Nets: bits 16-23 of IPv4, 56-63 of IPv6 addresses.
NETWORK_BYTE = {4: 2, 6: 7}


def _destination(config: dict, direction: str, version: int) -> str:
    tx, rx = direction_sides(direction)
    if version == config.side(tx).ip_version:
        return lookup(config, foreground_addresses(config, direction)[1])
    return config.side(rx).ipv6  # background frames: native IPv6
