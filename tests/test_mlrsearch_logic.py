# SPDX-License-Identifier: BSD-3-Clause
"""MLRsearch (xlatperf/procedures/mlr*.py): the RFC 9971 classification against the worked examples
of methodology.md §13/§14 (items 33-36), conditional throughput, stopping by width, and whole
searches on deterministic simulated DUTs compared with the classic binary search."""

import random

import pytest

from xlatperf.config.loading import load_config
from xlatperf.engine.protocol import DirectionCounts, TrialResult
from xlatperf.procedures.mlrgoals import deviations, goals_from_config
from xlatperf.procedures.mlrclassify import (LOWER, UNDECIDED, UPPER, Goal, Trial, classify,
                                             conditional_throughput, relevant_bounds,
                                             trial_from_result)
from xlatperf.procedures.mlrsearch import Search, mlrsearch
from xlatperf.procedures.mlrtargets import targets_for
from xlatperf.procedures.search import binary_search
from xlatperf.util.errors import ConfigError


def goal(label_final, label_sum, loss, exceed, **kw):
    return Goal(loss_ratio=loss, exceed_ratio=exceed, final_duration=label_final,
                duration_sum=label_sum, **kw)


RFC2544 = goal(60, 60, 0.0, 0.0)          # 60f60d0l0e
TST009 = goal(60, 120, 0.0, 0.5)          # 60f120d0l50e
ONE_S_FINAL = goal(1, 120, 0.005, 0.5)    # 1f120d0.5l50e


def trials(*groups):
    """trials((59, 1, 0.0), (1, 1, 0.01)) -> 59 x (1 s, 0 %) + 1 x (1 s, 1 %)."""
    return [Trial(duration, loss) for count, duration, loss in groups for _ in range(count)]


# -- classification: the digest's examples (§14 item 33) --------------------------------------

def test_one_lossy_second_among_sixty_is_upper_for_rfc2544_undecided_for_tst009():
    load = trials((59, 1, 0.0), (1, 1, 0.01))
    assert classify(RFC2544, load) == UPPER
    assert classify(TST009, load) == UNDECIDED


def test_half_lossy_one_second_trials_are_a_lower_bound_for_1s_final():
    load = trials((60, 1, 0.0), (60, 1, 0.01))
    assert classify(ONE_S_FINAL, load) == LOWER


def test_labels():
    assert RFC2544.label == "60f60d0l0e"
    assert TST009.label == "60f120d0l50e"
    assert ONE_S_FINAL.label == "1f120d0.5l50e"


# -- classification: cases worked out by hand from the pseudocode -----------------------------

def test_no_trials_is_undecided():
    for g in (RFC2544, TST009, ONE_S_FINAL):
        assert classify(g, []) == UNDECIDED


def test_rfc2544_goal_is_exactly_the_rfc_pass_criterion():
    assert classify(RFC2544, trials((1, 60, 0.0))) == LOWER
    assert classify(RFC2544, trials((1, 60, 1e-9))) == UPPER
    # a short trial with loss is already an upper bound (no full-length trial needed) ...
    assert classify(RFC2544, trials((1, 1, 1e-6))) == UPPER
    # ... but short trials without loss never make a lower bound
    assert classify(RFC2544, trials((100, 1, 0.0))) == UNDECIDED
    # one lossy trial among many good full-length ones: still an upper bound
    assert classify(RFC2544, trials((5, 60, 0.0), (1, 60, 0.001))) == UPPER


def test_exceed_ratio_half_needs_two_full_trials_to_decide_a_lossy_load():
    assert classify(TST009, trials((1, 60, 0.0))) == LOWER
    assert classify(TST009, trials((1, 60, 0.01))) == UNDECIDED
    assert classify(TST009, trials((1, 60, 0.01), (1, 60, 0.0))) == LOWER   # spike outweighed
    assert classify(TST009, trials((2, 60, 0.01))) == UPPER


def test_short_low_loss_trials_balance_short_high_loss_ones():
    # 1f120d0.5l50e: 1 s trials are full-length; 61 high of 121 s exceeds half
    assert classify(ONE_S_FINAL, trials((60, 1, 0.0), (61, 1, 0.01))) == UPPER
    # a goal whose 1 s trials are short: 10 high, 10 low short seconds balance to no excess
    g = goal(10, 20, 0.0, 0.5)
    assert classify(g, trials((10, 1, 0.0), (10, 1, 0.01))) == UNDECIDED
    assert classify(g, trials((10, 1, 0.0), (10, 1, 0.01), (2, 10, 0.0))) == LOWER
    # with excess: 30 high - 10 low = 20 s effective high >= 20 s sum x 0.5
    assert classify(g, trials((10, 1, 0.0), (31, 1, 0.01))) == UPPER


def test_loss_equal_to_goal_loss_ratio_is_low_loss():
    g = goal(1, 1, 0.005, 0.0)
    assert classify(g, trials((1, 1, 0.005))) == LOWER
    assert classify(g, trials((1, 1, 0.00501))) == UPPER


# -- conditional throughput (§14 item 34) ------------------------------------------------------

def test_conditional_throughput_examples():
    load = 1_000_000
    full = trials((1, 60, 0.0), (1, 60, 0.001))
    assert conditional_throughput(TST009, load, full) == 1_000_000
    assert conditional_throughput(goal(60, 120, 0.0, 0.2), load, full) == pytest.approx(999_000)


def test_conditional_throughput_without_enough_trials_is_zero():
    # 60 s of full trials cannot cover the 0.5 x 120 s quantile walk past the first trial...
    assert conditional_throughput(TST009, 100, trials((1, 60, 0.0))) == 100
    # ...but with exceed 0 and only 60 of 120 s measured, the walk runs out: q = 1
    assert conditional_throughput(goal(60, 120, 0.0, 0.0), 100, trials((1, 60, 0.0))) == 0
    # short trials do not count
    assert conditional_throughput(RFC2544, 100, trials((10, 1, 0.0))) == 0


def test_relevant_bounds_resolve_loss_inversion_conservatively():
    classes = {100: LOWER, 200: UPPER, 300: LOWER, 400: UPPER, 150: UNDECIDED}
    assert relevant_bounds(classes) == (100, 200)
    assert relevant_bounds({100: LOWER, 200: LOWER}) == (200, None)
    assert relevant_bounds({100: UPPER, 200: LOWER}) == (None, 100)


# -- targets ---------------------------------------------------------------------------------

def test_targets_grow_durations_and_halve_widths_towards_the_goal():
    targets = targets_for(goal(60, 120, 0.0, 0.5, width=1000, initial_duration=1))
    assert [round(t.duration, 2) for t in targets] == [1, 7.75, 60]
    assert [t.width for t in targets] == [4000, 2000, 1000]
    assert [t.duration_sum for t in targets][:2] == [t.duration for t in targets][:2]
    assert [t.duration_sum for t in targets][-1] == 120 and targets[-1].final
    assert targets_for(RFC2544)[0].final   # no initial duration: one target
    # a short trial of more than a quarter of the final one is not worth it: no short trials
    assert [t.duration for t in targets_for(goal(2, 4, 0.0, 0.5, initial_duration=1))] == [2]
    assert [t.duration for t in targets_for(goal(4, 8, 0.0, 0.5, initial_duration=1))] == [1, 4]


# -- whole searches on simulated DUTs -----------------------------------------------------------

MAX = 14_880_952


def dut(limit, *, burst=0, spikes=(), loss=None, noise=0.0, after=None):
    """run_trial(load, duration=10) of a deterministic DUT: forwards at most limit x duration
    + burst frames per direction; `loss(rate)` instead gives a loss ratio; trials whose number
    (1-based, counted over the DUT's life) is in `spikes` lose 1 % more (a rare spike).
    noise: the limit of each trial varies by up to this fraction (pseudorandom, seeded).
    after: (seconds, limit) - the DUT slows down to that limit after so many seconds."""
    calls = []
    rng = random.Random(7)

    def run_trial(rate, duration=10.0):
        calls.append((rate, duration))
        sent = round(rate * duration)
        if loss is not None:
            received = sent - round(sent * min(1.0, loss(rate)))
        else:
            this = limit * (1 + noise * (2 * rng.random() - 1))
            capacity = this * duration
            if after is not None and duration > after[0]:
                capacity = this * after[0] + after[1] * (duration - after[0])
            received = min(sent, round(capacity) + burst)
        if len(calls) in spikes:
            received = max(0, received - max(1, sent // 100))
        counts = {name: DirectionCounts(sent=sent, received=received, planned=sent)
                  for name in ("forward", "reverse")}
        return TrialResult(rate=rate, valid=True, directions=counts)
    run_trial.calls = calls
    return run_trial


def rfc2544_goal(width, final=60.0, initial=1.0):
    return Goal(0.0, 0.0, final, final, width=width, initial_duration=initial, name="rfc2544")


def ndr_goal(width, final=60.0, initial=1.0):
    return Goal(0.0, 0.5, final, 2 * final, width=width, initial_duration=initial, name="ndr")


def pdr_goal(width, final=60.0, initial=1.0):
    return Goal(0.005, 0.5, final, 2 * final, width=width, initial_duration=initial, name="pdr")


def binary(run, width, final=60.0, tolerance=0.0):
    return binary_search(lambda rate: run(rate, final), 0, MAX, width, tolerance).throughput


@pytest.mark.parametrize("limit", [1, 999, 123_457, 5_000_000, 14_880_951])
def test_hard_limit_rfc2544_preset_equals_binary_search_at_unit_width(limit):
    result = mlrsearch(dut(limit), [rfc2544_goal(1)], 1, MAX)
    (g,) = result.goals
    assert g.relevant_lower_bound == binary(dut(limit), 1) == limit
    assert g.relevant_upper_bound == limit + 1 and g.regular


@pytest.mark.parametrize("limit", [1001, 123_457, 5_000_000])
@pytest.mark.parametrize("width", [10, 1000])
def test_hard_limit_stops_by_width(limit, width):
    run = dut(limit)
    (g,) = mlrsearch(run, [rfc2544_goal(width)], 1, MAX).goals
    assert limit - width < g.relevant_lower_bound <= limit
    assert g.relevant_upper_bound - g.relevant_lower_bound <= width
    assert abs(g.relevant_lower_bound - binary(dut(limit), width)) < width
    # the bounds were measured, the lower one with a full-length trial
    assert (g.relevant_lower_bound, 60.0) in run.calls
    assert any(rate == g.relevant_upper_bound for rate, _ in run.calls)


def test_relative_width():
    g = Goal(0.0, 0.0, 10, 10, width=0.01, relative_width=True, initial_duration=1)
    (r,) = mlrsearch(dut(500_000), [g], 1, MAX).goals
    assert r.regular and r.relevant_upper_bound - r.relevant_lower_bound <= 0.01 * \
        r.relevant_upper_bound
    assert 495_000 <= r.relevant_lower_bound <= 500_000


def test_gradually_rising_loss_rfc2544_equals_binary_and_pdr_is_found():
    def loss(rate):       # no loss up to 1 Mfps, then 1 % more loss per 100 kfps
        return max(0.0, (rate - 1_000_000) / 10_000_000)
    (g,) = mlrsearch(dut(0, loss=loss), [rfc2544_goal(1)], 1, MAX).goals
    assert g.relevant_lower_bound == binary(dut(0, loss=loss), 1) == 1_000_000
    pdr = Goal(0.005, 0.5, 60, 120, width=100, initial_duration=1, name="pdr")
    ndr = Goal(0.0, 0.5, 60, 120, width=100, initial_duration=1, name="ndr")
    result = mlrsearch(dut(0, loss=loss), [rfc2544_goal(100), ndr, pdr], 1, MAX)
    rfc, n, p = result.goals
    assert 999_900 < rfc.relevant_lower_bound <= 1_000_000
    assert 999_900 < n.relevant_lower_bound <= 1_000_000
    # PDR: loss <= 0.5 % up to 1.05 Mfps
    assert 1_049_900 < p.relevant_lower_bound <= 1_050_000
    assert p.conditional_throughput <= p.relevant_lower_bound
    assert binary(dut(0, loss=loss), 100, tolerance=0.005) - p.relevant_lower_bound < 100
    assert all(r.regular for r in result.goals)


def first_lossless_final(result, final=60.0):
    """(trial number, load) of a search's first full-length trial without loss."""
    return next((i, load) for i, (load, t) in enumerate(result.trials, 1)
                if t.duration >= final and t.loss_ratio == 0)


TST009_GOAL = Goal(0.0, 0.5, 60, 120, width=1000, initial_duration=1, name="tst009")


def test_exceed_ratio_makes_the_result_robust_to_a_rare_spike():
    limit, width = 1_000_000, 1000
    # The spike hits the first full-length trial without loss: the final lower bound.
    clean = mlrsearch(dut(limit), [TST009_GOAL], 1, MAX)
    number, load = first_lossless_final(clean)
    assert load == clean.goals[0].relevant_lower_bound
    tolerant = mlrsearch(dut(limit, spikes={number}), [TST009_GOAL], 1, MAX).goals[0]
    # exceed 0.5 over two final trials: a second trial at that load outweighs the spike
    assert tolerant.relevant_lower_bound == load and tolerant.regular
    assert tolerant.relevant_upper_bound == clean.goals[0].relevant_upper_bound
    # zero exceed: the spike makes that load an upper bound, the result drops below it
    clean = mlrsearch(dut(limit), [rfc2544_goal(width)], 1, MAX)
    number, load = first_lossless_final(clean)
    strict = mlrsearch(dut(limit, spikes={number}), [rfc2544_goal(width)], 1, MAX).goals[0]
    assert strict.relevant_lower_bound < load == strict.relevant_upper_bound
    assert strict.regular and limit - 2 * width < strict.relevant_lower_bound
    # the binary search is as fragile as the zero-exceed goal: a spike in the trial at its
    # result costs it a lower result too
    clean = dut(limit)
    reference = binary(clean, width)
    at_result = [rate for rate, _ in clean.calls].index(reference) + 1
    assert binary(dut(limit, spikes={at_result}), width) < reference


def test_a_spike_at_the_shared_lower_bound_moves_only_the_zero_exceed_goal():
    limit, width = 1_000_000, 1000
    goals = [rfc2544_goal(width), ndr_goal(width), pdr_goal(width)]
    clean = mlrsearch(dut(limit), goals, 1, MAX)
    number, load = first_lossless_final(clean)
    spiked = mlrsearch(dut(limit, spikes={number}), goals, 1, MAX)
    rfc, ndr, pdr = spiked.goals
    assert all(g.regular for g in spiked.goals)
    assert rfc.relevant_upper_bound == load > rfc.relevant_lower_bound
    for before, after in zip(clean.goals[1:], (ndr, pdr)):
        assert after.relevant_lower_bound == before.relevant_lower_bound
        assert after.relevant_upper_bound - after.relevant_lower_bound <= width


def test_a_spike_in_the_first_trial_costs_trials_not_the_result():
    # Trial 1 is at the maximum load; a spike there makes its forwarding rate 15 % too low.
    # The full-length trials there pass, so the search scouts upwards with short trials whose
    # steps double (external search) until one loses frames, then aims again.
    limit, width = 1_000_000, 1000
    run = dut(limit, spikes={1})
    result = mlrsearch(run, [rfc2544_goal(width)], 1, MAX)
    (g,) = result.goals
    assert g.regular and limit - width < g.relevant_lower_bound <= limit
    assert binary(dut(limit, spikes={1}), width) == binary(dut(limit), width)
    first_final = next(i for i, (_, d) in enumerate(run.calls) if d == 60)
    scouts = [rate for rate, d in run.calls[first_final + 1:] if d == 1.0]
    steps = [b - a for a, b in zip(scouts, scouts[1:])]
    assert steps[:4] == [width, 2 * width, 4 * width, 8 * width]
    assert len(run.calls) < 20


def test_token_bucket_dut_short_trials_overstate_but_the_final_trials_decide():
    # 5 % burst at 1 s, 0.083 % at 60 s: the 1 s trials pass above the limit
    run = dut(100_000, burst=5000)
    (g,) = mlrsearch(run, [rfc2544_goal(100)], 1, MAX).goals
    assert abs(g.relevant_lower_bound - binary(dut(100_000, burst=5000), 100)) < 100


def test_line_rate_dut_is_irregular_max_load_lower_bound():
    (g,) = mlrsearch(dut(MAX), [rfc2544_goal(1000)], 1, MAX).goals
    assert g.relevant_lower_bound == MAX and g.relevant_upper_bound is None
    assert not g.regular and "maximum load" in g.irregular_reason


def test_dead_dut_is_irregular_min_load_upper_bound():
    result = mlrsearch(dut(0), [rfc2544_goal(1000)], 1, MAX)
    (g,) = result.goals
    assert g.relevant_lower_bound is None and g.relevant_upper_bound == 1
    assert not g.regular and "minimum load" in g.irregular_reason


def test_first_trial_is_at_max_load_and_second_at_its_forwarding_rate():
    run = dut(123_457)
    mlrsearch(run, [rfc2544_goal(1000)], 1, MAX)
    middle = targets_for(rfc2544_goal(1000))[1].duration       # 7.75 s
    assert run.calls[0] == (MAX, 1.0)
    assert run.calls[1] == (123_457, middle)


def test_short_trials_forwarding_rates_are_extrapolated_to_the_final_duration():
    # A DUT with a queue: it forwards limit x duration + burst frames. The forwarding rate of
    # 1 s and 7.75 s trials (limit + burst / duration) gives limit and burst; the first
    # full-length trial is aimed a quarter width below limit + burst / 60.
    limit, burst, width = 1_000_000, 50_000, 1000
    run = dut(limit, burst=burst)
    (g,) = mlrsearch(run, [rfc2544_goal(width)], 1, MAX).goals
    first_final = next(rate for rate, d in run.calls if d == 60)
    assert abs(first_final - (limit + burst / 60 - width / 4)) <= 2
    assert g.relevant_lower_bound == first_final and g.regular
    assert len(run.calls) == 4          # 1 s at max, 7.75 s, a lower and an upper bound


def test_external_search_when_a_bound_is_invalidated():
    # The DUT slows down to 95 % after 10 s: the 1 s and 7.75 s trials predict a lower bound
    # that the first full-length trial invalidates (it becomes an upper bound); its forwarding
    # rate puts the next one below, where it holds.
    limit, width = 1_000_000, 1000
    run = dut(limit, after=(10, 950_000))
    (g,) = mlrsearch(run, [rfc2544_goal(width)], 1, MAX).goals
    finals = [rate for rate, d in run.calls if d >= 60]
    assert finals[0] > 990_000 and g.relevant_upper_bound <= finals[0]
    expected = (10 * limit + 50 * 950_000) / 60          # what 60 s trials forward
    assert g.regular and expected - width < g.relevant_lower_bound <= expected
    assert abs(g.relevant_lower_bound - binary(dut(limit, after=(10, 950_000)), width)) < width


def wall_time(trials, pause=5.0, wait=2.0):
    """Seconds of a search's trials: each trial, the RFC's 2 s wait after one with loss, and
    a 5 s pause between trials (bench/mlrsearch_vs_binary.py does the same)."""
    trials = list(trials)
    return (sum(d + (wait if lossy else 0.0) for d, lossy in trials)
            + pause * (len(trials) - 1))


@pytest.mark.parametrize("limit", [20_000, 123_457, 1_000_000, 5_555_555])
@pytest.mark.parametrize("burst", [0, 0.05])
def test_multi_goal_search_takes_a_third_of_one_binary_search(limit, burst):
    """The issue's target at 60 s trials: RFC 2544 + NDR + PDR in at most 1/3 of the wall time
    of ONE classic binary search (loss 0), at the same final trial duration and width."""
    burst = round(limit * burst)
    goals = [rfc2544_goal(1000), ndr_goal(1000), pdr_goal(1000)]
    result = mlrsearch(dut(limit, burst=burst), goals, 1, MAX)
    assert all(g.regular for g in result.goals)
    strict = dut(limit, burst=burst)
    steps = binary_search(lambda r: strict(r, 60.0), 0, MAX, 1000).steps
    binary_wall = wall_time((60.0, s.loss_ratio > 0) for s in steps)
    mlr_wall = wall_time((t.duration, t.loss_ratio > 0) for _, t in result.trials)
    assert mlr_wall <= binary_wall / 3
    # and the rfc2544 goal agrees with that binary search within the width
    assert abs(result.goals[0].relevant_lower_bound - max(
        s.rate for s in steps if s.loss_ratio == 0)) < 1000


GRADUAL = dict(loss=lambda rate: max(0.0, (rate - 1_000_000) / 10_000_000))


@pytest.mark.parametrize("kind, dut_args, slack", [
    ("hard limit", dict(limit=1_000_000), 0),
    ("queue", dict(limit=1_000_000, burst=50_000), 0),
    ("noisy limit", dict(limit=1_000_000, burst=50_000, noise=0.0002), 400),
    ("gradual loss", dict(limit=0, **GRADUAL), 0),
])
@pytest.mark.parametrize("together", [False, True])
def test_rfc2544_goal_agrees_with_binary_search_on_simulated_duts(kind, dut_args, slack,
                                                                   together):
    """The heuristics (forwarding-rate estimates, aimed bounds, merged upper-bound trials,
    scouting) leave the rfc2544 goal within the width of the binary search (plus the noise of
    a noisy DUT), alone and together with NDR and PDR."""
    width = 1000
    goals = [rfc2544_goal(width)] + ([ndr_goal(width), pdr_goal(width)] if together else [])
    result = mlrsearch(dut(**dut_args), goals, 1, MAX)
    assert all(g.regular for g in result.goals), result.goals
    rfc = result.goals[0]
    reference = binary(dut(**dut_args), width)
    assert abs(rfc.relevant_lower_bound - reference) < width + slack
    assert rfc.relevant_upper_bound - rfc.relevant_lower_bound <= width
    if together:
        rfc, ndr, pdr = result.goals
        assert abs(ndr.relevant_lower_bound - rfc.relevant_lower_bound) < width + slack
        tolerant = binary(dut(**dut_args), width, tolerance=0.005)
        assert abs(pdr.relevant_lower_bound - tolerant) < width + slack


@pytest.mark.parametrize("kind, dut_args", [
    ("hard limit", dict(limit=1_000_000)),
    ("noisy limit", dict(limit=1_000_000, burst=50_000, noise=0.0002)),
    ("gradual loss", dict(limit=0, **GRADUAL)),
])
def test_ndr_and_pdr_results_survive_a_rare_spike(kind, dut_args):
    """A spike in any one trial leaves the exceed-0.5 goals' results within the width of the
    spike-free ones (those bounds are regular, and not dragged down by the spike)."""
    width = 1000
    goals = [ndr_goal(width), pdr_goal(width)]
    clean = mlrsearch(dut(**dut_args), goals, 1, MAX).goals
    trials = len(mlrsearch(dut(**dut_args), goals, 1, MAX).trials)
    for number in range(2, trials + 1):
        spiked = mlrsearch(dut(**dut_args, spikes={number}), goals, 1, MAX).goals
        for before, after in zip(clean, spiked):
            assert after.regular
            assert abs(after.relevant_lower_bound - before.relevant_lower_bound) <= width, \
                (number, before, after)


def test_merged_trial_decides_an_exceed_half_upper_bound_in_one_trial():
    # NDR 60f120d0l50e: an upper bound needs more than 60 s of high-loss trials. At the load
    # expected to fail, one trial of 60 + 1 s does it (instead of 60 s and another trial).
    run = dut(1_000_000)
    (g,) = mlrsearch(run, [ndr_goal(1000)], 1, MAX).goals
    at_upper = [d for rate, d in run.calls if rate == g.relevant_upper_bound]
    assert at_upper == [61.0]
    at_lower = [d for rate, d in run.calls if rate == g.relevant_lower_bound]
    assert at_lower == [60.0]     # where no loss is expected: final trials (spike tolerance)


def test_zero_exceed_upper_bound_from_a_short_trial_when_short_trials_lose_there():
    run = dut(1_000_000)              # no queue: a 1 s trial above the limit loses frames
    (g,) = mlrsearch(run, [rfc2544_goal(1000)], 1, MAX).goals
    assert [d for rate, d in run.calls if rate == g.relevant_upper_bound] == [1.0]
    run = dut(1_000_000, burst=50_000)   # a 1 s trial passes 5 % above the limit: 60 s
    (g,) = mlrsearch(run, [rfc2544_goal(1000)], 1, MAX).goals
    assert [d for rate, d in run.calls if rate == g.relevant_upper_bound] == [60.0]


@pytest.mark.parametrize("limit", [17_777, 19_001, 123_457])
def test_no_short_trial_at_a_load_a_full_trial_measured_where_short_trials_pass(limit):
    """Issue 30: through a DUT with a queue (the lab's `limit`: nftables' token bucket), a short
    trial passes a little above the limit. Re-measuring a load that a full-length trial left
    undecided with a short trial then decides nothing (it can only settle an upper bound by
    losing), so the search measures it with full-length trials (before: two of the eight trials
    of rfc2544 + ndr-pdr at 4 s, width 500, were such 1 s trials)."""
    run = dut(limit, burst=limit // 2)   # half a second of the limit: a 1 s trial passes 1.5x it
    goals = [rfc2544_goal(500, final=4.0), ndr_goal(500, final=4.0), pdr_goal(500, final=4.0)]
    result = mlrsearch(run, goals, 1, 150_000)
    assert all(g.regular for g in result.goals), result.goals
    full_before = set()
    for rate, duration in run.calls:
        assert not (duration < 4.0 and rate in full_before), run.calls
        if duration >= 4.0:
            full_before.add(rate)


@pytest.mark.parametrize(("limit", "burst", "width", "top"), [(31_337, 1_750, 200, 167_923),
                                                          (17_777, 1_100, 500, 189_849)])
def test_a_trial_at_a_load_another_goal_expects_to_lose_serves_that_goal_too(limit, burst, width, top):
    """Issue 30, the `limit` lab's cases (its token bucket modelled): the load a width above the
    lower bound loses a few 0.1 %, too much for the NDR, not for the PDR. The PDR aims its
    trial there; the NDR, whose estimate expects the load to lose too much, needs F + initial
    there to decide it with one trial (exceed ratio 0.5), so the trial is that long, and no load
    is measured twice (before: a second 4 s trial there for the NDR, 6 and 5 trials)."""
    run = dut(limit, burst=burst)
    goals = [rfc2544_goal(width, final=4.0), ndr_goal(width, final=4.0), pdr_goal(width, final=4.0)]
    result = mlrsearch(run, goals, 1, top)
    assert all(g.regular for g in result.goals), result.goals
    loads = [rate for rate, _ in run.calls]
    assert len(loads) == len(set(loads)) == 4, run.calls
    assert run.calls[-1][1] == 5.0


def test_trial_limit_stops_an_endless_search():
    result = mlrsearch(dut(123_457), [rfc2544_goal(1)], 1, MAX, max_trials=3)
    assert not result.complete and len(result.trials) == 3 and "limit" in result.stop_reason


def test_search_rejects_bad_ranges_and_goals():
    with pytest.raises(ValueError):
        Search([], 1, 10)
    with pytest.raises(ValueError):
        Search([RFC2544], 10, 10)
    with pytest.raises(ValueError, match="exceed_ratio"):
        Goal(0.0, 1.0, 60, 60)
    with pytest.raises(ValueError, match="initial_duration"):
        Goal(0.0, 0.0, 60, 60, initial_duration=61)


# -- configuration ------------------------------------------------------------------------------

def test_presets_follow_trial_duration_error_and_initial_duration():
    config = load_config(None, ["throughput.mode=mlrsearch", "throughput.preset=rfc2544,ndr-pdr",
                                "trial.duration=2", "throughput.error=200",
                                "throughput.initial_duration=0.5", "trial.pause=1"])
    goals = goals_from_config(config)
    assert [g.title for g in goals] == ["rfc2544", "ndr", "pdr"]
    assert [g.label for g in goals] == ["2f2d0l0e", "2f4d0l50e", "2f4d0.5l50e"]
    assert all(g.width == 200 and not g.relative_width and g.initial_duration == 0.5
               for g in goals)
    text = " ".join(deviations(config, goals))
    assert "final trials of 2 s" in text and "0.5 s" in text and "pauses" in text
    # 1 s trials against 2 s final ones are not used (less than 4x shorter): not listed
    config = load_config(None, ["throughput.mode=mlrsearch", "throughput.preset=rfc2544,ndr-pdr",
                                "trial.duration=2"])
    text = " ".join(deviations(config, goals_from_config(config)))
    assert "final trials of 2 s" in text and "search trials from" not in text


def test_user_goals():
    config = load_config(None, [
        "throughput.mode=mlrsearch", "throughput.preset=",
        'throughput.goals=[{name="x", loss_ratio=0.001, exceed_ratio=0.5, final_duration=10, '
        'duration_sum=30, width=0.005, initial_duration=1}, {loss_ratio=0, exceed_ratio=0, '
        'final_duration=5, duration_sum=5, width_fps=50}]'])
    x, y = goals_from_config(config)
    assert (x.title, x.relative_width, x.width, x.initial_duration) == ("x", True, 0.005, 1.0)
    assert (y.title, y.relative_width, y.width, y.initial_duration) == ("5f5d0l0e", False, 50,
                                                                        None)


@pytest.mark.parametrize("assignment, message", [
    ("throughput.mode=fast", 'throughput.mode = "fast": must be one of "binary" | "mlrsearch"'),
    ("throughput.preset=ndr", 'throughput.preset = "ndr": must be "" or a comma-separated'),
    ("throughput.goals=[{loss_ratio=1, exceed_ratio=0, final_duration=1, duration_sum=1}]",
     "throughput.goals[0].loss_ratio = 1: must be a number in [0, 1)"),
    ("throughput.goals=[{loss_ratio=0, exceed_ratio=0, final_duration=0, duration_sum=1}]",
     "throughput.goals[0].final_duration = 0: must be a number > 0"),
    ("throughput.goals=[{loss_ratio=0, exceed_ratio=0, final_duration=1}]",
     "throughput.goals[0].duration_sum: missing"),
    ("throughput.goals=[{loss_ratio=0, exceed_ratio=0, final_duration=1, duration_sum=1, "
     "initial_duration=2}]", "throughput.goals[0].initial_duration = 2: must be a number in [0, 1]"),
    ("throughput.goals=[{loss_ratio=0, exceed_ratio=0, final_duration=1, duration_sum=1, "
     "speed=2}]", "throughput.goals[0].speed: unknown goal key"),
    ("throughput.goals=[{loss_ratio=0, exceed_ratio=0, final_duration=1, duration_sum=1, "
     "frame_timeout=-1}]", "throughput.goals[0].frame_timeout = -1: must be a number >= 0"),
    ("throughput.goals=[{loss_ratio=0, exceed_ratio=0, final_duration=1, duration_sum=1, "
     "width=0.1, width_fps=10}]", "throughput.goals[0].width_fps = 10: must be 0 when width"),
    ("throughput.loss_tolerance=0.1", "throughput.loss_tolerance = 0.1: must be 0 with mode"),
])
def test_config_errors_name_key_value_and_range(assignment, message):
    with pytest.raises(ConfigError) as error:
        load_config(None, ["throughput.mode=mlrsearch", assignment])
    assert message in str(error.value)


def test_mlrsearch_needs_a_goal():
    with pytest.raises(ConfigError, match="throughput.preset"):
        load_config(None, ["throughput.mode=mlrsearch", "throughput.preset="])
    # the binary default does not care
    assert load_config(None, ["throughput.preset="]).throughput.mode == "binary"


# -- the procedure with the fake engine (tests/fake_engine.py) ----------------------------------

def test_procedure_writes_goals_trace_and_deviations(tmp_path, monkeypatch):
    import csv
    import json
    from pathlib import Path

    from xlatperf.run.runner import run_procedure

    fake = Path(__file__).resolve().parent / "fake_engine.py"
    for name in [n for n in __import__("os").environ if n.startswith("FAKE_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("FAKE_DUT_LIMIT", "1234567")
    path = tmp_path / "fake.toml"
    path.write_text(f'[tester]\nnetns = ""\nhugepages = "no"\nengine = "{fake}"\n'
                    '[left]\nport = "null"\n[right]\nport = "null"\n'
                    '[trial]\nduration = 10.0\npause = 0.0\n'
                    '[throughput]\nerror = 10000\nmode = "mlrsearch"\n'
                    'preset = "rfc2544,ndr-pdr"\n')
    out = tmp_path / "out"
    summary = run_procedure("throughput", load_config(str(path), ["output.repeat=2"]), str(out))
    assert summary["complete"] and summary["mode"] == "mlrsearch" and summary["n"] == 2
    assert summary["primary_goal"] == "rfc2544"
    assert 1_224_567 < summary["median"] <= 1_234_567
    assert [g["name"] for g in summary["goals"]] == ["rfc2544", "ndr", "pdr"]
    for g in summary["goals"]:
        assert g["regular"] and g["unit"] == "fps" and g["width_unit"] == "fps"
        assert g["relevant_upper_bound"]["median"] - g["median"] <= 10000
    settings = summary["settings"]
    assert settings["mode"] == "mlrsearch" and settings["max_load"] == 14_880_952
    assert settings["min_load"] == 1 and len(settings["goals"]) == 3
    assert any("final trials of 10 s" in d for d in settings["deviations"])
    records = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]
    records = [r for r in records if r.get("phase") != "learning"]
    steps = sum(len(r["steps"]) for r in summary["repetitions"])
    assert len(records) == steps
    assert records[0]["rate"] == 14_880_952 and records[0]["duration"] == 1.0
    assert records[0]["mlrsearch"]["goals"]["rfc2544"] == {
        "class": "upper", "relevant_lower_bound": None, "relevant_upper_bound": 14_880_952}
    last = [r for r in records if r["repetition"] == 1][-1]["mlrsearch"]["goals"]["rfc2544"]
    first_rep = summary["repetitions"][0]["goals"][0]
    assert (last["relevant_lower_bound"], last["relevant_upper_bound"]) == \
        (first_rep["relevant_lower_bound"], first_rep["relevant_upper_bound"])
    rows = list(csv.DictReader((out / "summary.csv").open()))
    assert len(rows) == 6 and rows[0]["goal"] == "rfc2544"


# -- per-frame timeout goals ---------------------------------------------------------------------

GOAL = "{loss_ratio=0, exceed_ratio=0, final_duration=1, duration_sum=1, width_fps=10000%s}"


def test_goals_carry_a_per_frame_timeout():
    """A goal's frame_timeout; the presets and goals without it take trial.frame_timeout."""
    config = load_config(None, ["throughput.mode=mlrsearch", "throughput.preset=",
                                f"throughput.goals=[{GOAL % ', frame_timeout=0.01'}]"])
    (g,) = goals_from_config(config)
    assert g.frame_timeout == 0.01 and g.to_dict()["frame_timeout"] == 0.01
    assert any("later than 0.01 s" in d for d in deviations(config, [g]))
    config = load_config(None, ["throughput.mode=mlrsearch", "trial.frame_timeout=0.5",
                                f"throughput.goals=[{GOAL % ''}, {GOAL % ', frame_timeout=0.5'}]"])
    assert [g.frame_timeout for g in goals_from_config(config)] == [0.5, 0.5, 0.5]
    assert not any("later than" in d for d in deviations(load_config(None, [
        "throughput.mode=mlrsearch"]), goals_from_config(load_config(None, [
            "throughput.mode=mlrsearch"]))))


@pytest.mark.parametrize("assignments, message", [
    # the rfc2544 preset takes trial.frame_timeout = 0: one trial cannot serve both
    ([f"throughput.goals=[{GOAL % ', frame_timeout=0.01'}]"],
     "throughput.goals[0].frame_timeout = 0.01: must be the per-frame timeout of every goal of "
     "the search (preset rfc2544: trial.frame_timeout = 0, none): the engine applies one "
     "per-frame timeout to a trial"),
    (["throughput.preset=", f"throughput.goals=[{GOAL % ', frame_timeout=0.01'}, "
      f"{GOAL % ', frame_timeout=0.02'}]"],
     "throughput.goals[1].frame_timeout = 0.02: must be the per-frame timeout of every goal"),
    (["throughput.preset=", f"throughput.goals=[{GOAL % ', frame_timeout=4000'}]"],
     "throughput.goals[0].frame_timeout = 4000: must be a number in [0, 3600]"),
])
def test_goals_with_different_frame_timeouts_are_refused(assignments, message):
    with pytest.raises(ConfigError) as error:
        load_config(None, ["throughput.mode=mlrsearch", *assignments])
    assert message in str(error.value)
    # the binary search has no goals: the same keys are no error there
    load_config(None, ["throughput.mode=binary", *assignments])


def test_per_frame_timeout_goal_counts_late_frames_as_lost(tmp_path, monkeypatch):
    """Every trial of the search carries the goals' frame timeout: with every frame 5 µs late
    (tests/fake_engine.py) a 1 µs goal finds no lower bound, a 1 s goal the DUT's limit."""
    import json
    from pathlib import Path

    from xlatperf.measure.store import read_trials
    from xlatperf.run.runner import run_procedure

    fake = Path(__file__).resolve().parent / "fake_engine.py"
    for name in [n for n in __import__("os").environ if n.startswith("FAKE_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("FAKE_DUT_LIMIT", "1234567")
    monkeypatch.setenv("FAKE_DELAY_NS", "5000")
    log = tmp_path / "requests.jsonl"
    monkeypatch.setenv("FAKE_REQUEST_LOG", str(log))
    base = [f'tester.engine="{fake}"', 'tester.netns=""', 'tester.hugepages="no"',
            'left.port="null"', 'right.port="null"', "trial.pause=0", "trial.duration=1",
            "throughput.mode=mlrsearch", "throughput.preset="]
    late = run_procedure("throughput", load_config(None, base + [
        f"throughput.goals=[{GOAL % ', frame_timeout=1e-6'}]"]), tmp_path / "late")
    (goal,) = late["goals"]
    assert goal["frame_timeout"] == 1e-6 and goal["median"] == 0 and not goal["regular"]
    assert late["repetitions"][0]["goals"][0]["irregular_reason"] == \
        "the minimum load is an upper bound"
    assert late["settings"]["frame_timeout"] == 1e-6
    assert late["settings"]["loss_criterion"].startswith("per-frame timeout 1e-06 s of the goals")
    trials = [json.loads(line) for line in log.read_text().splitlines()
              if json.loads(line).get("op") == "trial"]
    assert trials and all(t["delay"] == {"frame_timeout": 1e-6} for t in trials)
    assert all(d["late"] > 0 and d["received"] == 0
               for r in read_trials(tmp_path / "late") for d in r["directions"].values())
    on_time = run_procedure("throughput", load_config(None, base + [
        f"throughput.goals=[{GOAL % ', frame_timeout=1'}]"]), tmp_path / "on-time")
    assert 1_224_567 < on_time["median"] <= 1_234_567


def test_the_trial_loss_ratio_adds_the_directions_as_rfc9971_does():
    """RFC 9971 §4.5.5-4.5.6: frames forwarded over frames sent, aggregated over the SUT's
    outputs (issue 17 finding 11; it was the worst direction's)."""
    result = TrialResult(1000, True, {"forward": DirectionCounts(1000, 1000),
                                      "reverse": DirectionCounts(1000, 990)}, duration=1.0)
    assert trial_from_result(result, 1.0).loss_ratio == pytest.approx(0.005)
    invalid = TrialResult(1000, False, {"forward": DirectionCounts(1000, 1000)}, duration=1.0)
    assert trial_from_result(invalid, 1.0).loss_ratio == 1.0


def test_an_invalid_first_trial_still_tells_what_the_dut_forwarded():
    """Issue 17 (bench/mlrsearch_vs_binary.py at 4 s): on a busy host the first trial, at the
    tester's calibrated ceiling, is often invalid (the sender fell behind) while the DUT lost
    92 % of it. It counts as loss ratio 1 for every goal, but the frames the DUT forwarded still
    steer: the next trial goes to that rate, not half the range down."""
    loads = []

    def run_trial(load, duration):
        loads.append((load, duration))
        forwarded = min(load, 20_000) * duration
        sent = round(load * duration)
        return TrialResult(load, load < 100_000, {"forward": DirectionCounts(
            sent, round(forwarded))}, duration=duration,
            invalid_reason=None if load < 100_000 else "tester could not keep the rate: ...")
    result = mlrsearch(run_trial, [rfc2544_goal(200, 4.0), ndr_goal(200, 4.0),
                                   pdr_goal(200, 4.0)], 1, 253_000)
    assert loads[0] == (253_000, 1.0)
    assert loads[1][0] < 25_000, loads
    assert all(abs(g.relevant_lower_bound - 20_000) <= 200 for g in result.goals), result
