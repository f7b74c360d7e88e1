# SPDX-License-Identifier: BSD-3-Clause
"""The adaptive-repetition rule (xlatperf/run/adaptive.py) on synthetic result sequences."""

import random
from math import comb

import pytest

from xlatperf.config.loading import load_config
from xlatperf.run.adaptive import decide, median_interval, minimum_for_interval
from xlatperf.util.errors import ConfigError


def run_until_stop(results, minimum, maximum, tolerance=0.01, confidence=0.95):
    """Feed results one repetition at a time, as run_procedure does; returns (n, decision)."""
    done = []
    while True:
        decision = decide(done, len(done), minimum, maximum, tolerance, confidence)
        if decision.stop:
            return len(done), decision
        done.append(results[len(done)])


def test_interval_is_the_textbook_order_statistic_interval():
    # n = 20 at 95 %: [X(6), X(15)], coverage 1 - 2 P(B(20, 1/2) <= 5) = 0.9586.
    interval = median_interval(list(range(1, 21)), 0.95)
    assert (interval.lower, interval.upper, interval.k) == (6, 15, 6)
    assert interval.coverage == pytest.approx(1 - 2 * sum(comb(20, i) for i in range(6)) / 2**20)
    # n = 6: only [min, max] (coverage 1 - 2/64 = 0.969); n = 5 has no 95 % interval at all.
    assert median_interval([5, 1, 4, 2, 6, 3], 0.95).coverage == pytest.approx(62 / 64)
    assert median_interval([1, 2, 3, 4, 5], 0.95) is None
    assert minimum_for_interval(0.95) == 6 and minimum_for_interval(0.99) == 8


def test_interval_coverage_holds_for_a_skewed_distribution():
    rng = random.Random(7)
    true_median = 2 ** 0.5   # median of exp(N(ln 2 / 2, 1)) = sqrt 2: skewed, no normality
    hits = 0
    for _ in range(2000):
        sample = [rng.lognormvariate(0.34657359, 1.0) for _ in range(15)]
        interval = median_interval(sample, 0.95)
        hits += interval.lower <= true_median <= interval.upper
    assert hits / 2000 >= 0.95 - 0.015   # nominal coverage 0.965 for n = 15, k = 4


def test_tight_results_stop_as_soon_as_the_interval_exists():
    rng = random.Random(1)
    tight = [1_000_000 + rng.randint(-2000, 2000) for _ in range(20)]
    n, decision = run_until_stop(tight, minimum=3, maximum=20)
    assert n == 6 and decision.reason == "consistent"
    assert decision.interval.width <= 0.01 * decision.median
    # A larger minimum is honoured.
    assert run_until_stop(tight, minimum=10, maximum=20)[0] == 10


def test_bimodal_results_run_to_the_maximum():
    # TAYGA in the SIIT paper: some repetitions near the real throughput, others far lower.
    rng = random.Random(2)
    bimodal = [rng.choice((310_000 + rng.randint(-3000, 3000), 50_000 + rng.randint(-3000, 3000)))
               for _ in range(20)]
    n, decision = run_until_stop(bimodal, minimum=3, maximum=20)
    assert n == 20 and decision.reason == "maximum"
    assert decision.interval.width > 0.01 * decision.median


def test_scattered_but_unimodal_results_need_more_repetitions_than_tight_ones():
    rng = random.Random(3)
    scattered = [1_000_000 * (1 + rng.gauss(0, 0.01)) for _ in range(40)]
    n, decision = run_until_stop(scattered, minimum=3, maximum=40, tolerance=0.02)
    assert 6 < n <= 40


def test_zero_median_needs_identical_results_and_unusable_ones_do_not_count():
    assert run_until_stop([0.0] * 10, minimum=3, maximum=10)[0] == 6
    losses = [0.0, 0.0, 1e-6, 0.0, 0.0, 0.0, 2e-6, 0.0, 0.0, 0.0]
    n, decision = run_until_stop(losses, minimum=3, maximum=10)
    assert n == 10 and decision.reason == "maximum"
    # None (e.g. an invalid trial) counts towards the maximum but not the interval.
    with_none = [None, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0]
    n, decision = run_until_stop(with_none, minimum=3, maximum=8)
    assert n == 7 and decision.n == 6


def test_config_keys_and_their_check():
    output = load_config(None).output
    assert output.repeat_max == 0 and output.repeat_confidence == 0.95
    load_config(None, ["output.repeat=5", "output.repeat_max=20"])
    with pytest.raises(ConfigError, match="output.repeat_max = 3: must be 0 .* at least "
                                          "output.repeat = 5"):
        load_config(None, ["output.repeat=5", "output.repeat_max=3"])
    with pytest.raises(ConfigError, match="output.repeat_confidence"):
        load_config(None, ["output.repeat_confidence=1.0"])
