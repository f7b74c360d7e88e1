# SPDX-License-Identifier: BSD-3-Clause
"""Procedures on deterministic simulated DUTs (methodology.md §14, checks 6, 10, 11, 12)."""

import pytest

from xlatperf.engine.protocol import RATE_NOT_KEPT, DirectionCounts, TrialResult
from xlatperf.procedures.search import (binary_search, frame_loss_scan, repeat, scan_rates,
                                        summarize_frame_loss, summarize_throughput)

DURATION = 10  # simulated seconds per trial


def dut(limit=float("inf"), *, reverse_limit=None, tester_limit=float("inf"), loss=None,
        directions=("forward", "reverse")):
    """A run_trial for a DUT that forwards everything at rates <= limit and limit x duration
    frames above it. reverse_limit: a different limit for the reverse direction. tester_limit:
    above it the tester cannot keep the rate (invalid trial, nothing lost). loss(rate): a loss
    ratio instead of the hard limit."""
    calls = []

    def run_trial(rate):
        calls.append(rate)
        counts = {}
        for name in directions:
            sent = rate * DURATION
            cap = reverse_limit if name == "reverse" and reverse_limit is not None else limit
            if loss is not None:
                received = sent - round(sent * loss(rate))
            else:
                received = sent if rate <= cap else int(cap * DURATION)
            counts[name] = DirectionCounts(sent=sent, received=received, planned=sent)
        return TrialResult(rate=rate, valid=rate <= tester_limit, directions=counts,
                           invalid_reason=None if rate <= tester_limit else f"{RATE_NOT_KEPT}: too slow")
    run_trial.calls = calls
    return run_trial


# -- binary search ---------------------------------------------------------------------------

@pytest.mark.parametrize("limit", [1, 999, 1000, 1001, 123_457, 5_000_000, 14_880_951])
@pytest.mark.parametrize("error", [1, 10, 1000, 100_000])
def test_hard_limit_result_in_window(limit, error):
    run = dut(limit)
    result = binary_search(run, 0, 14_880_952, error)
    assert limit - error < result.throughput <= limit
    # Only measured rates are returned, and the search ended on the precision.
    assert result.throughput in run.calls or result.throughput == 0
    assert result.found == (result.throughput > 0)
    assert not result.tester_limited


def test_first_trial_at_max_settles_a_line_rate_dut():
    run = dut()
    result = binary_search(run, 0, 14_880_952, 1000)
    assert run.calls == [14_880_952]
    assert result.throughput == 14_880_952


def test_search_is_binary_and_stops_at_precision():
    run = dut(300_000)
    result = binary_search(run, 0, 1_000_000, 1000)
    assert run.calls[:3] == [1_000_000, 500_000, 250_000]
    # 1 trial at max + ceil(log2(1e6 / 1000)) = 10 halvings
    assert len(run.calls) == 11
    assert result.steps == [s for s in result.steps]  # steps kept in order
    assert [s.rate for s in result.steps] == run.calls


def test_lower_bound_is_not_returned_untested():
    run = dut(limit=100)  # fails everywhere in [1000, 2000]
    result = binary_search(run, 1000, 2000, 10)
    assert result.throughput == 0 and not result.found
    assert all(rate > 1000 for rate in run.calls)


def test_loss_tolerance_is_honoured():
    def loss(rate):
        return 0.0 if rate <= 1_000_000 else 0.0005 if rate <= 2_000_000 else 0.01
    strict = binary_search(dut(loss=loss), 0, 4_000_000, 1000, 0.0)
    assert 999_000 < strict.throughput <= 1_000_000
    tolerant = binary_search(dut(loss=loss), 0, 4_000_000, 1000, 0.001)
    assert 1_999_000 < tolerant.throughput <= 2_000_000
    exactly = binary_search(dut(loss=loss), 0, 4_000_000, 1000, 0.0005)  # equal passes
    assert 1_999_000 < exactly.throughput <= 2_000_000


def test_one_lost_frame_fails_with_zero_tolerance():
    one_lost = TrialResult(100, True, {"forward": DirectionCounts(1000, 999)})
    assert not one_lost.passes(0.0)
    assert one_lost.passes(0.001)
    assert TrialResult(100, True, {"forward": DirectionCounts(1000, 1000)}).passes(0.0)


def test_failure_in_one_direction_fails_the_trial():
    run = dut(limit=10_000_000, reverse_limit=3_000_000)
    result = binary_search(run, 0, 10_000_000, 1000)
    assert 2_999_000 < result.throughput <= 3_000_000
    assert summarize_throughput([result])["directions"]["forward"]["failed_trials"] == 0
    assert summarize_throughput([result])["directions"]["reverse"]["failed_trials"] > 0


def test_invalid_trials_never_pass_and_flag_the_tester():
    run = dut(limit=8_000_000, tester_limit=5_000_000)
    result = binary_search(run, 0, 10_000_000, 1000)
    assert result.throughput <= 5_000_000
    assert result.tester_limited
    assert all(not s.passes() for s in result.steps if not s.valid)
    invalid_but_lossless = TrialResult(1, False, {"forward": DirectionCounts(10, 10)}, "slow")
    assert not invalid_but_lossless.passes(0.5)


def test_anomalies_do_not_pass():
    assert not TrialResult(1, True, {"forward": DirectionCounts(10, 11)}).passes(0.5)
    assert not TrialResult(1, True, {"forward": DirectionCounts(0, 0)}).passes(0.5)
    assert not TrialResult(1, True, {}).passes(0.5)


def test_interrupted_search_keeps_its_steps():
    inner = dut(300_000)

    def run(rate):
        if len(inner.calls) == 3:
            raise KeyboardInterrupt
        return inner(rate)
    steps = []
    with pytest.raises(KeyboardInterrupt):
        binary_search(run, 0, 1_000_000, 1000, steps=steps)
    assert [s.rate for s in steps] == [1_000_000, 500_000, 250_000]


def test_notify_reports_interval():
    seen = []
    binary_search(dut(300_000), 0, 1000, 100, notify=seen.append)
    assert seen[0] == {"rate": 1000, "lo": 0, "hi": 1000}
    assert all(c["lo"] <= c["rate"] <= c["hi"] for c in seen)


def test_bad_search_parameters():
    with pytest.raises(ValueError):
        binary_search(dut(), 0, 1000, 0)
    with pytest.raises(ValueError):
        binary_search(dut(), 1000, 1000, 10)


# -- frame loss ------------------------------------------------------------------------------

MAX = 14_880_952


def test_scan_stops_exactly_after_second_zero_loss_trial():
    run = dut(limit=MAX * 0.55)
    trials = frame_loss_scan(run, MAX)
    percents = [round(100 * t.rate / MAX) for t in trials]
    assert percents == [100, 90, 80, 70, 60, 50, 40]
    assert [t.passes() for t in trials][-2:] == [True, True]
    assert not trials[-3].passes()


def test_scan_steps_are_at_most_ten_percent_of_max():
    trials = frame_loss_scan(dut(limit=0), MAX, 100, 10)  # loses at every rate: full scan
    rates = [t.rate for t in trials]
    assert rates[0] == MAX
    assert len(rates) == 10
    assert all(0 < a - b <= MAX / 10 + 1 for a, b in zip(rates, rates[1:]))


def test_scan_continues_after_a_single_zero_loss_trial():
    lossy = {90, 70}  # percent points where a non-monotone DUT loses frames
    trials = frame_loss_scan(dut(loss=lambda r: 0.1 if round(100 * r / MAX) in lossy else 0),
                             MAX, 90, 10)
    assert [round(100 * t.rate / MAX) for t in trials] == [90, 80, 70, 60, 50]


def test_invalid_zero_loss_trial_does_not_count_towards_stop():
    trials = frame_loss_scan(dut(tester_limit=MAX * 0.85), MAX)
    assert [round(100 * t.rate / MAX) for t in trials] == [100, 90, 80, 70]


def test_scan_rates_exact_percentages():
    assert [p for _, p in scan_rates(1000, 100, 10)] == [100, 90, 80, 70, 60, 50, 40, 30, 20, 10]
    assert [p for _, p in scan_rates(1000, 10, 3.3)][:3] == [10, 6.7, pytest.approx(3.4)]
    assert [r for r, _ in scan_rates(10, 100, 10)] == [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]


def test_explicit_rates_measured_highest_first_without_stop_rule():
    run = dut()
    trials = frame_loss_scan(run, MAX, rates=[1000, 3000, 2000, 3000])
    assert run.calls == [3000, 2000, 1000]
    assert len(trials) == 3


def test_frame_loss_ratio_and_summary():
    trials = frame_loss_scan(dut(limit=MAX // 2), MAX)
    first = trials[0]
    assert first.directions["forward"].loss_ratio == pytest.approx(
        (MAX * DURATION - (MAX // 2) * DURATION) / (MAX * DURATION))
    summary = summarize_frame_loss([trials, trials], MAX)
    assert summary["unit"] == "ratio"
    assert summary["rates"][0]["rate"] == MAX and summary["rates"][0]["percent"] == 100
    assert summary["median"] == summary["rates"][0]["median"] == first.loss_ratio
    assert summary["n"] == 2
    assert set(summary["directions"]) == {"forward", "reverse"}


# -- repetitions -----------------------------------------------------------------------------

def test_repeat_collects_results_and_keeps_finished_ones():
    results = []

    def once(index):
        if index == 2:
            raise KeyboardInterrupt
        return binary_search(dut(1000 * (index + 1)), 0, 10_000, 1)

    with pytest.raises(KeyboardInterrupt):
        repeat(5, once, results)
    assert [r.throughput for r in results] == [1000, 2000]
    summary = summarize_throughput(results)
    assert summary["median"] == 1500 and summary["n"] == 2 and summary["unit"] == "fps"
