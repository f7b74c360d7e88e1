# SPDX-License-Identifier: BSD-3-Clause
"""A throughput search spends no trial at or above a rate the tester has already shown, in
this run, that it cannot send at, and its summary says plainly when the result is a lower bound
set by the tester rather than a property of the DUT (issue 11, finding 9)."""

from pathlib import Path

from xlatperf.config import load_config
from xlatperf.engine.protocol import RATE_NOT_KEPT, DirectionCounts, TrialResult
from xlatperf.measure.session import retakeable
from xlatperf.measure.store import read_trials
from xlatperf.procedures.search import SearchResult, binary_search, summarize_throughput
from xlatperf.procedures.ceiling import lower_bound, unreachable_from
from xlatperf.report import write_report
from xlatperf.run import run_procedure


def pace(record: dict) -> int:
    """The frames per second a recorded trial's slowest direction was sent at (over the
    validity rule's window: duration + trial.max_lag)."""
    window = record["duration"] + record.get("max_lag", 0)
    return round(min(d["sent"] for d in record["directions"].values()) / window)


def simulated(tester_limit: int, dut_limit: int, attempts: int = 3):
    """A trial runner: invalid above tester_limit (the tester fell behind, in every one of
    `attempts` attempts, as the session's retakes would show), loss above dut_limit (also in a
    trial the tester could not send at its rate, when its pace is above dut_limit), and the
    list of rates it was asked for."""
    asked = []

    def run_trial(rate):
        asked.append(rate)
        if rate > tester_limit:   # 1-s trials: cut off having sent at the tester's pace
            sent = tester_limit
            earlier = tuple({"attempt": k, "invalid_reason": RATE_NOT_KEPT,
                             "achieved_rate": float(sent)} for k in range(1, attempts))
            return TrialResult(rate, False, {"forward": DirectionCounts(sent, min(sent, dut_limit))},
                               invalid_reason=f"{RATE_NOT_KEPT}: flow forward sent ...",
                               duration=1.0, attempt=attempts, earlier_attempts=earlier)
        received = rate if rate <= dut_limit else dut_limit
        return TrialResult(rate, True, {"forward": DirectionCounts(rate, received)},
                           duration=1.0)
    return run_trial, asked


def test_a_search_below_a_known_ceiling_never_measures_it():
    run_trial, asked = simulated(tester_limit=600_000, dut_limit=10**9)
    first = binary_search(run_trial, 0, 1_000_000, 10_000)
    # The first trial shows the tester's pace (600,000): every later one stays below it.
    assert asked[0] == 1_000_000 and all(r < 600_000 for r in asked[1:])
    assert first.tester_limited and first.tester_ceiling == 600_000
    assert 600_000 - 10_000 < first.throughput <= 600_000
    asked.clear()
    second = binary_search(run_trial, 0, 1_000_000, 10_000, ceiling=first.tester_ceiling)
    assert asked and max(asked) < first.tester_ceiling
    assert second.tester_limited and 600_000 - 10_000 < second.throughput <= 600_000
    assert len(asked) == len(first.steps) - 1    # the trial at the maximum is not repeated


def test_one_short_trial_is_no_ceiling_until_its_retake_repeats_it():
    """Issue 17 finding 1: a hiccup is not a ceiling. A trial that fell short once (no retake
    showed the same) bounds its own search's result but sets no ceiling for the run."""
    run_trial, asked = simulated(tester_limit=600_000, dut_limit=10**9, attempts=1)
    once = binary_search(run_trial, 0, 1_000_000, 10_000)
    assert once.tester_ceiling is None and once.tester_limited
    # ... nor does a shortfall repeated twice below an applying calibrated ceiling (3 needed)
    run_trial, asked = simulated(tester_limit=600_000, dut_limit=10**9, attempts=2)
    twice = binary_search(run_trial, 0, 700_000, 10_000, calibrated=700_000)
    assert twice.tester_ceiling is None
    thrice = binary_search(simulated(600_000, 10**9, attempts=3)[0], 0, 700_000, 10_000,
                           calibrated=700_000)
    assert thrice.tester_ceiling == 600_000


def test_a_sender_that_met_its_capacity_shows_it_at_once_whatever_the_dut_lost():
    """Issue 30 (searches that waste no trial), the 464xlat lab without calibration: a first
    trial at 14,880,952 fps whose sender managed 553,888 frames/s, while the DUT lost frames
    too, is a capacity limit, not a hiccup: not taken again, and the next trial is below that
    pace (before: 7.44, 3.72, 1.86 and 0.93 Mfps, four more invalid trials)."""
    for dut_limit in (10**9, 500_000):  # the DUT keeps up with the sender, or loses at its pace
        run_trial, asked = simulated(tester_limit=553_888, dut_limit=dut_limit, attempts=1)
        assert run_trial(14_880_952).capacity_shown and not retakeable(run_trial(14_880_952))
        asked.clear()
        result = binary_search(run_trial, 0, 14_880_952, 10_000)
        assert asked[0] == 14_880_952 and all(r < 553_888 for r in asked[1:]), asked
        assert result.tester_ceiling == 553_888
        if dut_limit > 553_888:  # every rate below the pace passed: the tester bounds the result
            assert result.tester_limited and 553_888 - 10_000 < result.throughput <= 553_888
        else:                    # the DUT's own failures bound it
            assert not result.tester_limited and 500_000 - 10_000 < result.throughput <= 500_000


def test_a_hiccup_is_told_apart_from_the_senders_capacity():
    """Issue 17's retakes stay for hiccups: a sender that reached more than a tenth of its
    schedule, or lacked less time than a busy host takes (a short trial), is taken again and
    sets no ceiling on one attempt; below the calibrated ceiling no shortfall is a capacity."""
    def cut_off(rate, sent, duration):
        return TrialResult(rate, False, {"forward": DirectionCounts(sent, sent)},
                           invalid_reason=f"{RATE_NOT_KEPT}: flow forward sent ...", duration=duration)
    half = cut_off(1_000_000, 600_000, 1.0)       # 0.6 of the schedule
    short = cut_off(1_000_000, 40_000, 0.1)       # 0.4 of it, but only 60 ms lacked
    gross = cut_off(1_000_000, 50_000, 1.0)       # 0.05 of it for 0.95 s
    busy = cut_off(1_000_000, 300_000, 1.0)       # 0.3 of it: a busy host, retaken
    assert not half.capacity_shown and retakeable(half) and unreachable_from(half) is None
    assert not short.capacity_shown and retakeable(short) and unreachable_from(short) is None
    assert not busy.capacity_shown and retakeable(busy)
    assert gross.capacity_shown and not retakeable(gross) and unreachable_from(gross) == 50_000
    assert unreachable_from(gross, calibrated=2_000_000) is None
    valid_but_lossy = TrialResult(1_000_000, True, {"forward": DirectionCounts(1_000_000, 1)}, duration=1.0)
    assert not valid_but_lossy.capacity_shown


def test_a_late_trial_whose_dut_lost_more_than_the_lag_explains_is_the_duts_failure():
    """Issue 17 finding 1, the demo's case: a trial at 104,453 fps fell 1,050 frames behind
    once and the DUT lost 1.7 %: the loss is the DUT's, so the bound above the result is the
    DUT's, not the tester's, and no ceiling comes of it."""
    rate = 104_453
    late = TrialResult(rate, False, {"forward": DirectionCounts(
        2 * rate - 1_050, round((2 * rate - 1_050) * 0.983), max_lag_us=10_052.0)},
        invalid_reason=f"{RATE_NOT_KEPT}: flow forward sent ...", duration=2.0, attempt=3,
        earlier_attempts=({"achieved_rate": rate - 525.0},) * 2)
    passed = TrialResult(102_303, True, {"forward": DirectionCounts(204_606, 204_606)},
                         duration=2.0)
    result = SearchResult.from_steps([late, passed], 0.0)
    assert result.throughput == 102_303
    assert not result.tester_limited and result.tester_ceiling is None


def test_one_late_search_of_ten_does_not_mark_the_summary():
    """Issue 17 finding 1: tester_limited is each repetition's; the summary is a lower bound
    only when most repetitions are."""
    dut = [SearchResult(100_000, True, False, [])] * 9
    late = [SearchResult(90_000, True, True, [])]
    summary = summarize_throughput(dut + late)
    assert summary["tester_limited"] is False and summary["tester_limited_repetitions"] == 1
    assert "lower_bound" not in summary
    assert summary["partly_tester_limited"].startswith("1 of 10 repetitions ended against")
    assert summarize_throughput(late * 5 + dut[:5])["tester_limited"] is True


def test_a_dut_limit_below_the_tester_ceiling_is_not_tester_limited():
    run_trial, _ = simulated(tester_limit=800_000, dut_limit=300_000)
    result = binary_search(run_trial, 0, 1_000_000, 10_000)
    # The first trial at the maximum was invalid, but a valid trial with loss bounded the
    # result: the DUT's throughput was found.
    assert not result.steps[0].valid
    assert not result.tester_limited and 290_000 < result.throughput <= 300_000


def test_run_spends_no_trial_above_the_ceiling_and_says_lower_bound(fake_config, tmp_path,
                                                                      monkeypatch):
    monkeypatch.setenv("FAKE_TESTER_LIMIT", "1000000")
    config = load_config(str(fake_config), ["output.repeat=3"])
    out = tmp_path / "tp"
    summary = run_procedure("throughput", config, out)
    trials = read_trials(out)
    # The fake tester keeps 1,000,000 fps: the first trial (at the medium's maximum) is cut
    # off having sent at that pace, and no later trial of the run is at or above it.
    # A sender that reached a fifteenth of its schedule met its capacity: it is not taken again
    # (trial.retakes are for hiccups).
    assert not any(t.get("retaken") for t in trials)
    first, *rest = trials
    assert first["rate"] > 10 * 1_000_000 and "earlier_attempts" not in first
    # (The sender is cut off at duration + trial.max_lag: 1.001 s.)
    assert not first["valid"] and pace(first) == 1_000_000
    assert rest and all(t["rate"] < 1_000_000 for t in rest)
    assert summary["tester_ceiling"] == 1_000_000
    assert summary["tester_limited"] is True
    assert summary["lower_bound"].startswith("a lower bound set by the tester")
    assert "could not send faster than 1,000,000 frames/s" in summary["lower_bound"]
    assert all(r["tester_limited"] for r in summary["repetitions"])


def test_dut_limited_run_has_no_lower_bound_note(fake_config, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_TESTER_LIMIT", "5000000")
    monkeypatch.setenv("FAKE_DUT_LIMIT", "2000000")
    config = load_config(str(fake_config), ["output.repeat=2"])
    summary = run_procedure("throughput", config, tmp_path / "tp")
    assert summary["tester_limited"] is False and "lower_bound" not in summary
    assert 2_000_000 - 10_000 < summary["median"] <= 2_000_000


def test_mlrsearch_stays_below_the_ceiling_and_says_lower_bound(fake_config, tmp_path,
                                                                 monkeypatch):
    monkeypatch.setenv("FAKE_TESTER_LIMIT", "1000000")
    config = load_config(str(fake_config), ["output.repeat=3", "throughput.mode=mlrsearch",
                                            "throughput.preset=rfc2544", "trial.duration=1"])
    out = tmp_path / "mlr"
    summary = run_procedure("throughput", config, out)
    trials = read_trials(out)
    ceiling = min(pace(t) for t in trials if not t["valid"])
    later = [t["rate"] for t in trials if t["repetition"] > 1]
    assert ceiling == 1_000_000 and later and max(later) < ceiling
    assert summary["tester_ceiling"] == ceiling and summary["tester_limited"] is True
    assert summary["lower_bound"].startswith("a lower bound set by the tester")
    assert all(r["tester_limited"] for r in summary["repetitions"])
    assert 1_000_000 - 10_000 < summary["median"] <= 1_000_000


def test_a_sender_just_late_sets_no_ceiling_for_the_run():
    """At the edge of its capacity the tester sends every frame but finishes microseconds late:
    that trial fails, but it shows no rate the tester cannot reach (a later repetition may pass
    it), so it must not bound the following repetitions."""
    def run_trial(rate):
        late = rate > 600_000   # every frame sent, the last one a little after the limit
        return TrialResult(rate, not late, {"forward": DirectionCounts(rate, rate)},
                           invalid_reason=f"{RATE_NOT_KEPT}: ... 10.000118 s" if late else None,
                           duration=1.0)
    result = binary_search(run_trial, 0, 1_000_000, 10_000)
    assert result.tester_limited and result.tester_ceiling is None
    assert 600_000 - 10_000 < result.throughput <= 600_000
    note = summarize_throughput([result])["lower_bound"]
    assert f"could not keep {min(s.rate for s in result.steps if not s.valid):,}" in note


def test_the_report_marks_a_tester_limited_result(fake_config, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_TESTER_LIMIT", "100000")
    config = load_config(str(fake_config), ["output.repeat=2"])
    run_procedure("throughput", config, tmp_path / "tp")
    written = write_report(tmp_path / "tp", tmp_path / "report")
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "lower bound set by the tester" in markdown
    (svg,) = [svg for png, svg, caption in written["plots"] if "bars" in svg]
    text = Path(svg).read_text()
    # The bar is hatched and says why; the medium's maximum (149 x the result) is named, not
    # drawn as a line that would flatten the bar.
    assert "lower bound: the tester" in text and "off the scale" in text


def test_a_pass_at_the_configured_top_is_a_lower_bound_set_by_the_setting(fake_config, tmp_path,
                                                                            monkeypatch):
    """A search whose upper end is throughput.max_rate, below the medium's maximum, and that
    passed there measured the setting: the summary, the console and the report say so; a DUT
    that fails below it, or a search up to the medium's maximum, gets no such note."""
    from rich.console import Console

    from xlatperf.ui.console import render_summary
    monkeypatch.setenv("FAKE_DUT_LIMIT", "2000000")
    config = load_config(str(fake_config), ["throughput.max_rate=1000000"])
    summary = run_procedure("throughput", config, tmp_path / "capped")
    assert summary["median"] == 1_000_000 and summary["tester_limited"] is False
    note = summary["range_limited"]
    assert "throughput.max_rate = 1,000,000 frames/s" in note and "may be higher" in note
    console = Console(record=True, width=300)
    console.print(render_summary(summary))
    assert "warning: the throughput is a lower bound set by throughput.max_rate" in console.export_text()
    write_report(tmp_path / "capped", tmp_path / "report")
    assert "lower bound set by throughput.max_rate" in (tmp_path / "report" / "report.md").read_text()
    for settings in (["throughput.max_rate=3000000"], []):   # the DUT fails below the top
        summary = run_procedure("throughput", load_config(str(fake_config), settings),
                                tmp_path / f"free{len(settings)}")
        assert "range_limited" not in summary and summary["median"] <= 2_000_000


def test_a_tester_whose_pace_varies_is_said_to_have_failed_the_rate_not_a_lower_pace():
    """Seen through the lab's dslite-dual (phase 2 sends from the state table): the tester kept
    140,272 frames/s, then sent at most 130,457 at 140,914 in three attempts. The result is a
    lower bound, and the statement names the rate it could not keep, never a pace below a rate
    it kept."""
    def failing(rate, pace):
        earlier = tuple({"attempt": k, "invalid_reason": RATE_NOT_KEPT, "achieved_rate": float(pace - k)}
                        for k in (1, 2))
        return TrialResult(rate, False, {"forward": DirectionCounts(pace, pace)},
                           invalid_reason=f"{RATE_NOT_KEPT}: flow forward sent ...", duration=1.0,
                           attempt=3, earlier_attempts=earlier)
    steps = [TrialResult(140_272, True, {"forward": DirectionCounts(140_272, 140_272)}, duration=1.0),
             failing(140_914, 130_457), failing(144_948, 141_500)]
    result = SearchResult.from_steps(steps, 0.0)
    assert result.throughput == 140_272 and result.tester_limited
    statement = lower_bound(steps, result.tester_limited)["lower_bound"]
    assert "could not keep 140,914 frames/s in this run" in statement, statement
    assert "130,457" not in statement
