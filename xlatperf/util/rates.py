# SPDX-License-Identifier: BSD-3-Clause
"""Link speeds and the maximum theoretical frame rate of a medium."""

import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

# Decimal multipliers, as link speeds are quoted ("10G" = 10^10 bit/s).
_SPEED_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_SPEED_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([kmgt]?)\s*(?:b|bps|bit/s|bit)?\s*$", re.IGNORECASE)

# Preamble + start frame delimiter (8 bytes) and the minimum inter-frame gap (12 bytes):
# the per-frame cost on an Ethernet wire beyond the frame itself (RFC 2544 App. B).
ETHERNET_WIRE_OVERHEAD = 20


def parse_speed(text: str) -> int:
    """Parse a link speed such as "10G", "100M", "2.5G", "1000k" or "10Gbps" into bits/s.

    Units are decimal (k = 10^3, M = 10^6, G = 10^9, T = 10^12); a plain number is bits/s.
    Raises ValueError for anything else, for zero and for fractions of a bit/s.
    """
    match = _SPEED_RE.match(str(text))
    if not match:
        raise ValueError(f"not a link speed: {text!r} (expected e.g. \"10G\", \"100M\")")
    try:
        bits = Decimal(match.group(1)) * _SPEED_UNITS[match.group(2).lower()]
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only valid numbers
        raise ValueError(f"not a link speed: {text!r}") from exc
    if bits <= 0 or bits != bits.to_integral_value():
        raise ValueError(f"not a link speed: {text!r} (must be a positive whole number of bit/s)")
    return int(bits)


def max_frame_rate(line_rate_bps: float, frame_size: int | Fraction, overhead: int = 0) -> int:
    """Maximum theoretical frame rate in frames/s, rounded down.

    FR_max = LineRate / (8 * (X + O + 20)) with X the frame size in bytes (destination MAC to
    FCS), O the encapsulation/translation overhead in bytes (RFC 8219 App. A) and 20 bytes of
    preamble and inter-frame gap per frame (RFC 2544 §20 and App. B, RFC 5180 App. A.1).
    Computed exactly (no float rounding), so 10G and 84-byte frames give 12,019,230. For a mix
    of sizes (IMIX, RFC 6985) X is their mean weighted by how often each is sent (an exact
    Fraction): the line carries frames of X + 20 bytes on average.
    """
    bytes_per_frame = frame_size + overhead + ETHERNET_WIRE_OVERHEAD
    return math.floor(Fraction(line_rate_bps) / (8 * bytes_per_frame))


def format_speed(bits_per_second: int) -> str:
    """Human-readable speed: 10000000000 -> "10 Gbit/s"."""
    for unit, factor in (("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if bits_per_second >= factor:
            value = Fraction(bits_per_second, factor)
            text = f"{float(value):g}"
            return f"{text} {unit}bit/s"
    return f"{bits_per_second} bit/s"
