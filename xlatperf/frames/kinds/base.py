# SPDX-License-Identifier: BSD-3-Clause
"""What a traffic kind says about a trial: the header stacks of each direction's frames as the
tester sends and receives them, and the configuration keys of their addresses."""

from ..stack import Stack


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

    def side_stack(self, config, side: str) -> Stack:
        """The header stack of the frames on a side's wire (its outermost header is the one
        the side's neighbours are resolved with)."""
        return Stack((config.side(side).ip_version,))

    def stream_keys(self, config, direction: str) -> dict:
        """Protocol keys a direction's foreground streams carry besides addresses, ports and
        sizes (`tunnel`, `ce`: docs/protocol.md)."""
        return {}

    def address_use(self, config, direction: str) -> str:
        """Why a direction's frames need the addresses of `addresses` (for the error that names
        a missing one)."""
        return f"{direction} foreground frames use it"
