# SPDX-License-Identifier: BSD-3-Clause
"""Summary statistics for repeated measurements (RFC 8219 §12, RFC 2330 §11.3)."""

import math
from fractions import Fraction
from typing import Sequence


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile as RFC 2330 §11.3 defines it: the smallest value x such that at
    least p % of the values are <= x, i.e. sorted(values)[ceil(p/100 * N) - 1].

    p must be in (0, 100]. The value is always one of the samples (no interpolation).
    """
    if not values:
        raise ValueError("percentile of an empty set")
    if not 0 < p <= 100:
        raise ValueError(f"percentile p = {p}: must be in (0, 100]")
    ordered = sorted(values)
    # Exact arithmetic: with floats, 99.9/100 * 1000 is 999.0000000000001 and ceil() gives 1000.
    rank = math.ceil(Fraction(str(p)) * len(ordered) / 100)
    return ordered[max(rank, 1) - 1]


def median(values: Sequence[float]) -> float:
    """Median; for an even number of values, the mean of the two middle ones."""
    if not values:
        raise ValueError("median of an empty set")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def summarize(values: Sequence[float]) -> dict:
    """median, 1st and 99th percentile, min, max, dispersion and the sample size n.

    dispersion = (max - min) / median (None when the median is 0, where it is undefined).
    With no values every statistic is None and n = 0, so a summary can always be written.
    With fewer than 100 values p1 = min and p99 = max: report n with them (RFC 2330: differences
    finer than 1/N are meaningless).
    """
    if not values:
        return {"median": None, "p1": None, "p99": None, "min": None, "max": None,
                "dispersion": None, "n": 0}
    mid = median(values)
    low, high = min(values), max(values)
    return {
        "median": mid,
        "p1": percentile(values, 1),
        "p99": percentile(values, 99),
        "min": low,
        "max": high,
        "dispersion": None if mid == 0 else (high - low) / mid,
        "n": len(values),
    }
