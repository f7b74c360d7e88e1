# SPDX-License-Identifier: BSD-3-Clause
"""The traffic kinds, and the frame facts of a trial that follow from its kind.

Exactly one kind applies to a configuration (kind_of checks it). A new kind is a module here
with a TrafficKind subclass, listed in KINDS, whose `applies` excludes the others'
(docs/architecture.md, "Where to add a traffic kind")."""

from dataclasses import dataclass

from ..stack import IPV6, VLAN_TAG_BYTES, Stack, Transport, frame_size, named_stack, size_name
from ..trial import active_directions, has_background, side_vlan, size_period
from .base import SMALL_TRANSLATED, Received, TrafficKind
from .ipv4aas import EncapsulationTraffic, EncapsulatingCeTraffic, MapTTraffic, MapTCeTraffic, dual_dut
from .native import NativeTraffic
from .siit import SiitTraffic

KINDS: list[TrafficKind] = [EncapsulationTraffic(), MapTTraffic(), EncapsulatingCeTraffic(), MapTCeTraffic(),
                            NativeTraffic(), SiitTraffic()]
# Background frames (traffic.mix_m < mix_n, RFC 8219 §5.3) are native IPv6 between the sides'
# real IPv6 addresses: the DUT forwards them untranslated.
BACKGROUND = IPV6

__all__ = ["KINDS", "BACKGROUND", "TrafficKind", "Received", "SMALL_TRANSLATED", "TrialFrames", "kind_of",
           "trial_frames", "foreground_addresses", "wire_version", "dut_hops"]


def kind_of(config) -> TrafficKind:
    """The one traffic kind that applies: the kinds' conditions exclude each other, so their
    order in KINDS does not matter (a kind that overlapped another would fail here, not be
    silently skipped)."""
    applying = [kind for kind in KINDS if kind.applies(config)]
    if len(applying) != 1:
        raise AssertionError(f"traffic kinds {[k.name for k in applying]} apply to one configuration; "
                             "exactly one must")
    return applying[0]


@dataclass(frozen=True)
class TrialFrames:
    """The frames of a configuration's trials, resolved once from it (trial_frames): its
    traffic kind, the header stacks each active direction's foreground frames are sent and
    received with, every stack the trial's frames have (the native IPv6 background's too), the
    stack the configured sizes name (frames/stack.py's rule), the configured sizes (an IMIX's
    period, or traffic.frame_size) and the VLAN tags of the more tagged side. The traffic plan,
    the configuration's rules, the session and the engine's command line read it instead of
    recomputing it from the configuration per stream and per size."""
    kind: TrafficKind
    directions: dict[str, tuple[Stack, Stack]]   # active direction -> (sent, received)
    stacks: tuple[Stack, ...]
    named: Stack
    sizes: tuple[int, ...]                        # size_period: frame k has sizes[k % len]
    frame_size: int                               # traffic.frame_size
    vlan_tags: int

    def frame_size_of(self, stack: Stack, size: int | None = None) -> int:
        """Size in bytes (destination MAC to FCS, without VLAN tags) of the trial's frames of
        `stack` built from the configured size `size` (traffic.frame_size by default, or one of
        an IMIX's sizes): the frame size rule of frames/stack.py."""
        return frame_size(self.frame_size if size is None else size, stack, self.named)

    def size_name_of(self, stack: Stack, size: int) -> int:
        """The configured size that frames of `stack` and `size` bytes were built from, so that
        a size names the same frames in both directions and before and after translation or
        encapsulation (IPv4 frames of 64 bytes and IPv6 frames of 84 bytes of a SIIT trial are
        both of the size 84)."""
        return size_name(size, stack, self.named)

    def min_frame_size(self, transport: Transport | None = None) -> int:
        """The smallest configured size that gives every frame of the trial room for the test
        tag: 64, or 84 when the sizes name IPv6 frames; with `transport`, room for that
        transport's frames (TCP data: its header with the tag option and a byte of payload)."""
        return max(size_name((s.carrying(transport) if transport else s).min_frame, s, self.named)
                   for s in self.stacks)

    @property
    def largest_frame(self) -> int:
        """The largest frame a trial sends or receives, in bytes on the wire (FCS and VLAN tags
        included): what the engine's ports must be set up for."""
        largest = max(self.sizes)
        return max(self.frame_size_of(s, largest) for s in self.stacks) + VLAN_TAG_BYTES * self.vlan_tags


def trial_frames(config) -> TrialFrames:
    """The frames of the configuration's trials (TrialFrames), resolved from it."""
    kind = kind_of(config)
    directions = {direction: kind.stacks(config, direction) for direction in active_directions(config)}
    stacks = tuple(dict.fromkeys([s for pair in directions.values() for s in pair]
                                 + ([BACKGROUND] if has_background(config) else [])))
    return TrialFrames(kind=kind, directions=directions, stacks=stacks, named=named_stack(stacks),
                       sizes=tuple(size_period(config)), frame_size=config.traffic.frame_size,
                       vlan_tags=max(len(side_vlan(config, side)) for side in ("left", "right")))


def wire_version(config, side: str) -> int:
    """The IP version of the outermost header on a side's wire: what its neighbours (the DUT)
    are resolved with."""
    return kind_of(config).side_stack(config, side).outer


def foreground_addresses(config, direction: str) -> tuple[str, str]:
    """(source key, destination key) of a direction's foreground frames (the kind's)."""
    return kind_of(config).addresses(config, direction)


def dut_hops(config, background: bool = False) -> int:
    """How much the DUT decrements the TTL/hop limit of the foreground frames (dut.hops) or of
    the background ones (dut.background_hops): "auto" is 1 for a router, a translator or a NAT,
    2 for a dual DUT (a CE and a BR in line, RFC 8219 §4.2 Figure 2), and 0 between the two
    ports of an in-engine ring pair (`ring:NAME` on both sides: a cable, no DUT)."""
    hops = config.dut.background_hops if background else config.dut.hops
    if hops != "auto":
        return hops
    if ring_pair(config):
        return 0
    return 2 if dual_dut(config) else 1


def ring_pair(config) -> bool:
    """Whether the tester's two ports are the two ends of one in-engine ring pair."""
    left, right = config.left.port, config.right.port
    return left == right and left.startswith("ring:")
