# SPDX-License-Identifier: BSD-3-Clause
"""The tester's port types, each declared once (`PortKind`, as frames/technology.py declares the
IPv4aaS technologies): its spec syntax (left.port, right.port), what it is (a PCI NIC, a kernel
interface, a device of the engine's own), the DPDK device it becomes and the EAL arguments that
create it. Everything else asks the declaration, not the kind's name."""

import re
from dataclasses import dataclass
from typing import Callable

from .limits import AF_XDP_MAX_FRAME

# Linux interface names: at most 15 bytes (IFNAMSIZ - 1); ',' and '=' would break the EAL
# --vdev argument, '/' and whitespace are not allowed by the kernel.
_IFACE_RE = re.compile(r"^[^\s/,=:]{1,15}$")
_PCI_RE = re.compile(r"^(?:([0-9a-f]{4}):)?([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$")
# A PCI device's driver arguments (DPDK devargs): key=value pairs separated by commas.
_DEVARGS_RE = re.compile(r"^[A-Za-z0-9_.-]+=[A-Za-z0-9_.:/+-]+(,[A-Za-z0-9_.-]+=[A-Za-z0-9_.:/+-]+)*$")
_RING_RE = re.compile(r"^[A-Za-z0-9_]{1,20}$")

# af_packet's ring slots hold frames of up to about 1968 bytes by default (2048-byte slots
# less the kernel's header); above 1920 bytes the slots are made larger, and the engine
# receives into mbufs that hold a whole slot (engine/src/ports/ports.hpp: the same rule).
AF_PACKET_DEFAULT_MAX_FRAME = 1920
PAGE_SIZE = 4096


@dataclass(frozen=True)
class PortSpec:
    """A parsed port spec: kind is a PortKind's name, name the PCI address, interface or ring
    pair ("" for null); devargs a PCI device's driver arguments ("key=value,..."; mlx5's
    rxq_cqe_comp_en=0, say), passed to DPDK with the address."""
    kind: str
    name: str
    devargs: str = ""

    def __str__(self):
        text = f"{self.kind}:{self.name}" if self.name else self.kind
        return f"{text},{self.devargs}" if self.devargs else text

    @property
    def port_kind(self) -> "PortKind":
        return PORT_KINDS[self.kind]

    def device_name(self, side_index: int) -> str:
        """The DPDK device this port becomes on side `side_index` (0 = left, 1 = right): the
        PCI address, or the vdev name (which the engine reports as the port's `name` in hello)."""
        return self.port_kind.device_name(self, side_index)

    def eal_args(self, side_index: int, queues: int, max_frame: int) -> list[str]:
        """The EAL arguments that create this port with `queues` RX/TX queue pairs for frames up
        to `max_frame` bytes on the wire."""
        return self.port_kind.eal_args(self, side_index, queues, max_frame)


@dataclass(frozen=True)
class PortKind:
    """A port type: `form` its spec syntax; `parse(rest)` the spec after "KIND:" -> (name,
    devargs), raising ValueError saying what is allowed; `dma`: a NIC that reaches the mbufs by
    DMA (hugepages required, DPDK's PCI bus probed); `kernel_interface`: an interface of the
    kernel in tester.netns (its existence checked, its peer's drops read); `paired`: both sides
    name the same one, its two ends (ring); `shared`: both sides may name the same one as two
    devices (null); `max_frame`: the largest frame it receives, when less than any (af_xdp: one
    umem chunk); `vdev`: the DPDK vdev driver name; `eal(port, name, queues, max_frame)` the
    arguments that create it (device `name`)."""
    name: str
    form: str
    parse: Callable[[str], tuple[str, str]]
    eal: Callable[[PortSpec, str, int, int], list[str]]
    dma: bool = False
    kernel_interface: bool = False
    paired: bool = False
    shared: bool = False
    max_frame: int | None = None

    def device_name(self, port: PortSpec, side_index: int) -> str:
        if self.dma:
            return port.name
        if self.paired:  # the engine names its ring pair's ports so
            return f"net_{self.name}_{port.name}{side_index}"
        return f"net_{self.name}{side_index}"

    def eal_args(self, port: PortSpec, side_index: int, queues: int, max_frame: int) -> list[str]:
        return self.eal(port, self.device_name(port, side_index), queues, max_frame)


def _pci(rest: str) -> tuple[str, str]:
    address, _, devargs = rest.partition(",")
    match = _PCI_RE.match(address.lower())
    if not match:
        raise ValueError("must be pci:DOMAIN:BUS:DEVICE.FUNCTION, e.g. pci:0000:03:00.0, optionally "
                         "with the driver's arguments after a comma: pci:0000:03:00.0,rxq_cqe_comp_en=0")
    if devargs and not _DEVARGS_RE.match(devargs):
        raise ValueError("must have its driver arguments as KEY=VALUE pairs separated by commas after "
                         "the address, e.g. pci:0000:03:00.0,rxq_cqe_comp_en=0,txq_inline_max=0")
    domain, bus, device, function = match.groups()
    return f"{domain or '0000'}:{bus}:{device}.{function}", devargs


def _interface(kind: str) -> Callable[[str], tuple[str, str]]:
    def parse(rest: str) -> tuple[str, str]:
        if not _IFACE_RE.match(rest):
            raise ValueError(f"must be {kind}:IFACE with a Linux interface name (1..15 characters, "
                             "no whitespace, '/', ',', '=' or ':')")
        return rest, ""
    return parse


def _ring(rest: str) -> tuple[str, str]:
    # A pair of ports wired to each other through two rte_rings inside the engine
    # (engine option --ring-pair): left and right must name the same pair.
    if not _RING_RE.match(rest):
        raise ValueError("must be ring:NAME with a name of 1..20 letters, digits or '_' "
                         "(the same on both sides: the two ends of one ring pair)")
    return rest, ""


def _null(rest: str) -> tuple[str, str]:
    return "", ""   # parse_port admits "null" alone


def af_packet_ring_args(max_frame: int) -> str:
    """The af_packet PMD's ring geometry for frames up to `max_frame` bytes (jumbo frames):
    slots with room for the frame and the kernel's tpacket header, page-aligned, one per block
    (framesz = blocksz: DPDK 22.11's PMD addresses slot i at i x framesz, so a block must not
    end in padding); "" when the defaults hold the frame."""
    if max_frame <= AF_PACKET_DEFAULT_MAX_FRAME:
        return ""
    slot = -(-(max_frame + 96) // PAGE_SIZE) * PAGE_SIZE
    return f",framesz={slot},blocksz={slot}"


def _pci_eal(port: PortSpec, name: str, queues: int, max_frame: int) -> list[str]:
    return ["-a", f"{port.name},{port.devargs}" if port.devargs else port.name]


def _af_packet_eal(port: PortSpec, name: str, queues: int, max_frame: int) -> list[str]:
    # One socket per queue pair; the PMD joins them in a PACKET_FANOUT_HASH group, so the
    # kernel spreads received frames over the queues by flow hash.
    return ["--vdev", f"{name},iface={port.name},qpairs={queues}{af_packet_ring_args(max_frame)}"]


def _af_xdp_eal(port: PortSpec, name: str, queues: int, max_frame: int) -> list[str]:
    # busy_budget=0: no preferred busy polling. With it (DPDK's default), every empty poll
    # of a queue is a recvfrom() that runs the interface's NAPI on the worker's CPU; a
    # worker polling a lab veth at 150,000 frames/s spent 60 % of its CPU in those
    # syscalls, stalled up to 20 ms and its kernel ring overflowed (BENCHMARKS.md, "4
    # million connections"). The worker polls its queues itself anyway.
    return ["--vdev", f"{name},iface={port.name},busy_budget=0"
            + (f",start_queue=0,queue_count={queues}" if queues > 1 else "")]


def _null_eal(port: PortSpec, name: str, queues: int, max_frame: int) -> list[str]:
    # no-rx=1: otherwise net_null's rx returns empty mbufs at CPU speed, and the receive
    # loop would spend the worker's time on "foreign" frames instead of on generation.
    return ["--vdev", f"{name},no-rx=1"]


def _ring_eal(port: PortSpec, name: str, queues: int, max_frame: int) -> list[str]:
    return []  # created by the engine itself (--ring-pair), not by EAL arguments


PORT_KINDS = {kind.name: kind for kind in (
    PortKind("pci", "pci:0000:03:00.0[,KEY=VALUE...]", _pci, _pci_eal, dma=True),
    PortKind("af_packet", "af_packet:IFACE", _interface("af_packet"), _af_packet_eal, kernel_interface=True),
    PortKind("af_xdp", "af_xdp:IFACE", _interface("af_xdp"), _af_xdp_eal, kernel_interface=True,
             max_frame=AF_XDP_MAX_FRAME),
    PortKind("null", "null", _null, _null_eal, shared=True),
    PortKind("ring", "ring:NAME", _ring, _ring_eal, paired=True),
)}
PORT_FORMS = " | ".join(kind.form for kind in PORT_KINDS.values())


def parse_port(text: str) -> PortSpec:
    """Parse a port spec; raises ValueError saying what is allowed."""
    if not isinstance(text, str):
        raise ValueError(f"must be a port spec: {PORT_FORMS}")
    kind, _, rest = text.partition(":")
    if kind not in PORT_KINDS or (kind == "null") != (text == "null"):
        raise ValueError(f"must be a port spec: {PORT_FORMS}")
    name, devargs = PORT_KINDS[kind].parse(rest)
    return PortSpec(kind, name, devargs)


def port(value):
    """The checker of left.port and right.port: the spec, normalised."""
    return str(parse_port(value))
