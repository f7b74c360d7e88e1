# SPDX-License-Identifier: BSD-3-Clause
"""IMIX (RFC 6985): a flow whose frames cycle through several sizes in a fixed, repeating
order, instead of one `traffic.frame_size`.

`traffic.imix` takes either notation:

* sizes with weights, e.g. "64:7,594:4,1518:1" (the "Simple IMIX"; also written "simple"): one
  period holds weight-many frames of each size, interleaved by smooth weighted round robin so
  that every size recurs as evenly as its weight allows (never a run of all 64-byte frames
  followed by all large ones): for 7:4:1 the period is
  64 594 64 64 594 64 1518 64 594 64 594 64;
* an IMIX genome (RFC 6985 §4): one letter per frame, in sending order, a = 64, b = 128,
  c = 256, d = 512, e = 1024, f = 1280, g = 1518 bytes, e.g. "aaaaaaadddg".

Either way the order is fixed and repeats (RFC 6985 §3: a repeatable, reportable sequence);
the frame sizes follow `traffic.frame_size`'s rule (they name the IPv6 frame when IPv6
frames are sent; IPv4 frames are 20 bytes shorter).
"""

import math
import re

GENOME = {"a": 64, "b": 128, "c": 256, "d": 512, "e": 1024, "f": 1280, "g": 1518}
NAMED = {"simple": "64:7,594:4,1518:1"}
MAX_PERIOD = 1000   # frames in one period of the order
MAX_SIZES = 16      # distinct sizes (the engine has 32 streams per flow: foreground and background)

_WEIGHTS_RE = re.compile(r"^\d+:\d+(,\d+:\d+)*$")
ALLOWED = ('must be "" (one frame_size), "simple", sizes with weights like "64:7,594:4,1518:1", '
           f"or an RFC 6985 genome of the letters a-g like \"aaaaaaadddg\"; at most {MAX_SIZES} "
           f"sizes and {MAX_PERIOD} frames per period")


def interleave(weights: list[int]) -> list[int]:
    """Smooth weighted round robin: indices into `weights`, each `weight` times per period,
    spread evenly (at every step the index with the largest accumulated credit, the first on a
    tie, is taken and pays the period's length)."""
    credit, total, order = [0] * len(weights), sum(weights), []
    for _ in range(total):
        for i, w in enumerate(weights):
            credit[i] += w
        best = max(range(len(weights)), key=lambda i: (credit[i], -i))
        credit[best] -= total
        order.append(best)
    return order


def imix_period(text: str) -> list[int]:
    """One period of the frame sizes in sending order; raises ValueError saying what is allowed."""
    text = NAMED.get(text, text).replace(" ", "")
    if _WEIGHTS_RE.match(text):
        pairs = [tuple(int(x) for x in item.split(":")) for item in text.split(",")]
        sizes = [size for size, _ in pairs]
        if len(set(sizes)) != len(sizes) or any(w < 1 for _, w in pairs):
            raise ValueError(ALLOWED + " (each size once, weights >= 1)")
        if sum(w for _, w in pairs) > MAX_PERIOD:  # before interleaving a huge period
            raise ValueError(ALLOWED)
        period = [sizes[i] for i in interleave([w for _, w in pairs])]
    elif text and set(text) <= set(GENOME):
        period = [GENOME[letter] for letter in text]
    else:
        raise ValueError(ALLOWED)
    if len(set(period)) > MAX_SIZES or len(period) > MAX_PERIOD:
        raise ValueError(ALLOWED)
    return period


def check_imix(value):
    """The schema's checker of traffic.imix: the text, normalised (no spaces, lower case)."""
    if not isinstance(value, str):
        raise ValueError(ALLOWED)
    value = value.replace(" ", "").lower()
    if value:
        imix_period(value)
    return value


def mixed_length(period: int, n: int, m: int) -> int:
    """Frames after which mixed_pattern repeats: n frames of the mix times the fewest mix
    periods after which both kinds have been through the IMIX's period a whole number of times
    (m foreground and n - m background frames per mix period)."""
    return n * math.lcm(period // math.gcd(m, period), period // math.gcd(n - m, period))


def mixed_pattern(period: list[int], n: int, m: int) -> list[tuple[bool, int]]:
    """(foreground?, size) of a flow's frames k = 0 .. mixed_length - 1: frame k is foreground
    iff k % n < m (RFC 8219 §5.3), and the foreground and the background frames each take the
    IMIX's sizes in its order, so that translated and native frames each have the IMIX's sizes
    in its proportions (sizing frame k by period[k % len] instead would, e.g. for mix 2/1 and
    the Simple IMIX, send every 1518-byte frame in the foreground)."""
    taken, frames = [0, 0], []
    for k in range(mixed_length(len(period), n, m)):
        kind = 0 if k % n < m else 1
        frames.append((kind == 0, period[taken[kind] % len(period)]))
        taken[kind] += 1
    return frames
