# SPDX-License-Identifier: BSD-3-Clause
"""RFC 9693's connection tracking table capacity search (methodology §12.9, siitperf's cttc.sh)
and the tear-down rate (§12.8), as pure functions."""

import math
from dataclasses import dataclass, field
from typing import Callable


@dataclass
class CapacityResult:
    c0: int
    r0: int
    capacity: int | None          # CS at the end (None: not even C0 could be established)
    rate: int | None              # RS at the end
    history: list[dict] = field(default_factory=list)   # {stage, cs, rs, ct, rt}
    exponential_iterations: int = 0
    binary_iterations: int = 0
    limited_by_ranges: bool = False  # CT reached the enumerable combinations
    complete: bool = True

    def to_dict(self) -> dict:
        return {"capacity": self.capacity, "rate": self.rate, "c0": self.c0, "r0": self.r0,
                "exponential_iterations": self.exponential_iterations,
                "binary_iterations": self.binary_iterations,
                "limited_by_ranges": self.limited_by_ranges, "complete": self.complete,
                "history": self.history}


MaxRate = Callable[[int, int, int], int]


def capacity_search(max_rate: MaxRate, c0: int, rate_max: int, capacity_error: int,
                    beta: float, gamma: float, limit: int | None = None,
                    result: CapacityResult | None = None) -> CapacityResult:
    """cttc.sh's algorithm: max_rate(connections, lo, hi) is the maximum connection establishment
    rate (with validation) measured in (lo, hi], 0 when none passes there; lo = floor(beta x RS)
    or floor(gamma x RS) skips the rates whose outcome is already decided (siitperf's early
    stop). Exponential search doubling CS until RT < beta x RS, then binary search between CS
    and CT until CT - CS <= E; CS is the capacity. `limit`: no more connections can be
    enumerated (the search stops there with limited_by_ranges). `result`: filled in as the
    search goes, so a caller keeps the history of a search that raised."""
    result = result or CapacityResult(c0=c0, r0=0, capacity=None, rate=None)
    r0 = max_rate(c0, 0, rate_max)
    result.r0 = r0
    result.history.append({"stage": "start", "cs": c0, "rs": r0, "ct": c0, "rt": r0})
    if r0 <= 0:
        return result
    cs, rs = c0, r0
    while True:
        ct = 2 * cs if limit is None else min(2 * cs, limit)
        if ct <= cs:
            result.limited_by_ranges = True
            result.capacity, result.rate = cs, rs
            return result
        result.exponential_iterations += 1
        rt = max_rate(ct, math.floor(beta * rs), rs)
        result.history.append({"stage": "exponential", "cs": cs, "rs": rs, "ct": ct, "rt": rt})
        if rt < beta * rs:
            break
        cs, rs = ct, rt
    while ct - cs > capacity_error:
        c = (cs + ct) // 2
        result.binary_iterations += 1
        r = max_rate(c, math.floor(gamma * rs), rs)
        result.history.append({"stage": "binary", "cs": cs, "rs": rs, "ct": c, "rt": r})
        if r < gamma * rs:
            ct = c
        else:
            cs, rs = c, r
    result.capacity, result.rate = cs, rs
    return result


# --------------------------------------------------------------------------------------------
# Connection tear-down rate (RFC 9693; methodology §12.8)
# --------------------------------------------------------------------------------------------


def teardown_rate(connections: int, full_seconds: float, empty_seconds: float) -> float | None:
    """N / (T_N - T_0): connections deleted per second, net of the command's own cost measured
    on an empty table; None when T_N <= T_0 (the deletion was not measurable)."""
    net = full_seconds - empty_seconds
    return connections / net if net > 0 else None
