# SPDX-License-Identifier: BSD-3-Clause
"""What a traffic kind says about a trial: the header stacks of each direction's frames as the
tester sends and receives them, the configuration keys of their addresses, and what the DUT must
have written into them when they arrive."""

from dataclasses import dataclass

from ..stack import Stack, ip_packet_bytes

# RFC 7915 §5.1: an IPv4 packet translated from IPv6 (without a Fragment header) has DF clear
# up to this size and set above it. RFC 6145, which it obsoleted and which translators in use
# still follow (TAYGA among them), set DF always: up to this size checks.df_small says which.
DF_ABOVE = 1260
# What df() says of a translated IPv4 packet of at most DF_ABOVE bytes: its DF flag is counted,
# frame by frame, and the direction judged by checks.df_small (traffic/plan.py, engine/protocol.py).
SMALL_TRANSLATED = "small translated"


def translated_df(rx_frame_size: int) -> bool | str:
    """The DF flag an IPv4 frame of `rx_frame_size` bytes translated from IPv6 must carry: set
    above 1260 bytes (RFC 7915 §5.1 and RFC 6145 §5.1 agree); SMALL_TRANSLATED below, where the
    two RFCs differ."""
    return True if ip_packet_bytes(rx_frame_size) > DF_ABOVE else SMALL_TRANSLATED


@dataclass(frozen=True)
class Received:
    """What a direction's foreground frames arrive with through the DUT, as far as a kind can
    state it; traffic/plan.py builds the protocol's `rx` from it (docs/protocol.md "Header
    checks"), with the configuration's own rules (checks.*, dut.hops, a stateful NAT). What
    is not stated is not checked: a frame's IP version, tunnel and checksums always are."""
    # The configuration keys of the addresses the frames arrive with, e.g. "right.ipv4".
    src: str | None = None
    dst: str | None = None
    # They arrive with the UDP ports they were sent with.
    ports: bool = False
    # The TTL/hop limit is what was sent less the DUT's hops, the TOS/traffic class as sent.
    ttl_tos: bool = False
    # Of those hops, the tunnel exit points, which may hand the inner packet on without a
    # decrement: RFC 2473 §3.1 decrements at the entry point and leaves the exit open (§3.3),
    # and real exits differ (Linux forwards the decapsulated packet, a decrement; Snabb's
    # lwAFTR decrements only when it encapsulates). The TTL is then in a range that wide.
    tunnel_exits: int = 0
    # The configuration keys of the tunnel header's addresses (frames that arrive in one).
    tunnel_src: str | None = None
    tunnel_dst: str | None = None
    # The tunnel's traffic class is the inner TOS (RFC 6333 §7.1, RFC 7596 §5.2/§6.2).
    tunnel_carries_tos: bool = False
    # The DUT's own stateful NAT rewrites the Initiator's source and the Responder's
    # destination whatever stateful.enabled says (DS-Lite's AFTR, RFC 6333 §6.6).
    nat: bool = False


class TrafficKind:
    """One kind of traffic (kinds/__init__.py lists them). A kind reads the configuration it is
    given; the frame size rule and the maximum frame rate follow from its stacks."""
    name = ""
    summary = ""

    def applies(self, config) -> bool:
        """Whether this configuration describes traffic of this kind."""
        raise NotImplementedError

    def stacks(self, config, direction: str) -> tuple[Stack, Stack]:
        """(sent, received) header stacks of the direction's foreground frames."""
        raise NotImplementedError

    def addresses(self, config, direction: str) -> tuple[str, str]:
        """(source key, destination key) of the direction's foreground frames, e.g.
        ("left.ipv6", "right.virtual_ipv6")."""
        raise NotImplementedError

    def received(self, config, direction: str) -> Received:
        """What the direction's foreground frames arrive with through the DUT."""
        raise NotImplementedError

    def df(self, config, direction: str, rx_frame_size: int) -> bool | str | None:
        """The Don't Fragment flag the direction's foreground frames of `rx_frame_size` bytes
        must arrive with (IPv4 arrivals); SMALL_TRANSLATED: as checks.df_small rules; None: not
        checked."""
        return None

    def middle_stack(self, config, direction: str) -> Stack | None:
        """The header stack of the direction's foreground frames on the link between a dual
        DUT's two boxes (RFC 8219 §4.2 Figure 2: IPvY between DUT 1 and DUT 2), whose medium
        limits the frame rate too (RFC 8219 §5.1); None: the DUT is one box."""
        return None

    def side_stack(self, config, side: str) -> Stack:
        """The header stack of the frames on a side's wire (its outermost header is the one
        the side's neighbours are resolved with)."""
        return Stack.of_ip(config.side(side).ip_version)

    def stream_keys(self, config, direction: str) -> dict:
        """Protocol keys a direction's foreground streams carry besides addresses, ports and
        sizes (`tunnel`, `ce`: docs/protocol.md)."""
        return {}

    def address_use(self, config, direction: str) -> str:
        """Why a direction's frames need the addresses of `addresses` (for the error that names
        a missing one)."""
        return f"{direction} foreground frames use it"
