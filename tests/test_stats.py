# SPDX-License-Identifier: BSD-3-Clause
"""Percentiles per RFC 2330 §11.3, median and summaries (methodology.md §9, §14 check 14)."""

import random

import pytest

from xlatperf.util.stats import median, percentile, summarize


def test_one_to_thousand():
    values = list(range(1, 1001))
    random.Random(1).shuffle(values)  # order of the input must not matter
    assert percentile(values, 99.9) == 999   # ceil(0.999 * 1000) - 1 = index 998
    assert median(values) == 500.5
    assert percentile(values, 50) == 500
    assert percentile(values, 1) == 10
    assert percentile(values, 99) == 990
    assert percentile(values, 100) == 1000
    assert percentile(values, 0.1) == 1
    assert percentile(values, 0.05) == 1


def test_tiny_sets():
    assert percentile([7], 1) == percentile([7], 99) == median([7]) == 7
    assert percentile([2, 1], 1) == 1
    assert percentile([2, 1], 50) == 1
    assert percentile([2, 1], 51) == 2
    assert percentile([2, 1], 99) == 2
    assert median([2, 1]) == 1.5
    assert median([3, 1, 2]) == 2


def test_ties():
    values = [1, 1, 1, 2]
    assert percentile(values, 75) == 1
    assert percentile(values, 76) == 2
    assert median(values) == 1
    assert median([5, 5, 5, 5]) == 5
    assert summarize([5, 5, 5])["dispersion"] == 0


def test_float_percent_is_exact():
    # 99.9 / 100 * 1000 is 999.0000000000001 in floats; the rank must still be 999.
    assert percentile(list(range(1, 1001)), 99.9) == 999
    assert percentile(list(range(1, 101)), 29) == 29


def test_bad_arguments():
    for p in (0, -1, 100.01):
        with pytest.raises(ValueError):
            percentile([1, 2], p)
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        median([])


def test_summarize():
    s = summarize([110, 90, 100])
    assert s == {"median": 100, "p1": 90, "p99": 110, "min": 90, "max": 110,
                 "dispersion": pytest.approx(0.2), "n": 3}
    s = summarize(list(range(1, 201)))
    assert (s["p1"], s["p99"], s["median"]) == (2, 198, 100.5)
    assert summarize([0, 0, 1])["dispersion"] is None  # median 0: undefined
    assert summarize([]) == {"median": None, "p1": None, "p99": None, "min": None,
                             "max": None, "dispersion": None, "n": 0}
