# SPDX-License-Identifier: BSD-3-Clause
"""Back-to-back frames (RFC 2544 §26.4, RFC 9004): the buffer time calculation against a worked
example, one burst's validity and measured rate, the search on the burst length against a
simulated buffering DUT, and the procedure through the CLI with tests/fake_engine.py."""

import json
import math

import pytest

from xlatperf.engine.protocol import RATE_NOT_KEPT, DirectionCounts, TrialResult
from xlatperf.procedures.backtoback import (BurstResult, BurstStep, buffer_times,
                                            burst_search, corrected_buffer_time,
                                            implied_buffer_time)
from xlatperf.measure.store import read_trials
from xlatperf.ui import cli

# -- RFC 9004 §6.4 ------------------------------------------------------------------------------


def test_buffer_time_worked_example():
    """Worked by hand from RFC 9004 §6.4 (not taken from the RFC: its Table 1 gives no
    throughput). 10 Gbit/s Ethernet, 64-byte frames: the Max Theoretical Frame Rate is
    10^10 / (8 x (64 + 20)) = 14,880,952 frames/s (RFC 2544 App. B, rounded down). An average
    longest burst of 30,000 frames and a measured throughput of 10,000,000 frames/s give

        implied   = 30,000 / 14,880,952                       = 0.002016000 s
                    (14,880,952 x 0.002016 = 29,999.999)
        corrected = 0.002016000 - 0.002016000 x 10,000,000 / 14,880,952
                  = 0.002016000 x (1 - 0.672000)              = 0.000661248 s
                    (10,000,000 / 14,880,952 = 0.67200001; 0.002016 x 0.328 = 0.000661248)

    Physically: while the 2.016 ms burst came in, the DUT forwarded 10^7 x 0.002016 = 20,160
    frames, so 30,000 - 20,160 = 9,840 frames were buffered: 9,840 / 14,880,952 =
    0.000661248 s."""
    implied = implied_buffer_time(30_000, 14_880_952)
    assert implied == pytest.approx(0.002016000, rel=1e-6)
    corrected = corrected_buffer_time(implied, 10_000_000, 14_880_952)
    assert corrected == pytest.approx(0.000661248, rel=1e-5)
    assert corrected == pytest.approx(9_840 / 14_880_952, rel=1e-5)


def test_buffer_time_simple_example():
    """1,000,000 frames/s into a DUT forwarding 600,000 frames/s, longest burst 50,000 frames:
    implied 50,000 / 10^6 = 0.05 s; in those 0.05 s the DUT forwarded 30,000 frames, so the
    buffer held 20,000 frames: corrected 0.05 - 0.05 x 0.6 = 0.02 s."""
    assert buffer_times(50_000, 1_000_000, 600_000) == {
        "implied_seconds": pytest.approx(0.05), "corrected_seconds": pytest.approx(0.02),
        "note": None}


def test_buffer_times_without_throughput_or_with_a_line_rate_dut():
    found = buffer_times(50_000, 1_000_000, None)
    assert found["implied_seconds"] == pytest.approx(0.05)
    assert found["corrected_seconds"] is None and "no throughput" in found["note"]
    # RFC 9004 §6.1: a DUT forwarding at the burst's rate buffers nothing.
    found = buffer_times(50_000, 1_000_000, 1_000_000)
    assert found["corrected_seconds"] is None and "not a buffer measurement" in found["note"]
    assert buffer_times(None, 1_000_000, 10)["implied_seconds"] is None
    assert buffer_times(10, None, 10)["implied_seconds"] is None


# -- one burst ------------------------------------------------------------------------------------


def burst(frames, rate, *, received=None, sent=None, send_time=None, valid=True):
    sent = frames if sent is None else sent
    counts = {name: DirectionCounts(sent=sent, received=sent if received is None else received,
                                    planned=frames) for name in ("forward", "reverse")}
    trial = TrialResult(rate=rate, valid=valid, directions=counts,
                        invalid_reason=None if valid else f"{RATE_NOT_KEPT}: slow")
    due = (frames - 1) / rate if send_time is None else send_time
    return BurstStep(frames, trial, {"forward": due, "reverse": due})


def test_a_burst_sent_on_time_is_valid_and_its_rate_is_measured():
    step = burst(1000, 100_000, send_time=0.01)
    assert step.valid and step.passes()
    # 1000 frames span 999 intervals of 10 µs
    assert step.sending_rate == pytest.approx(99_900)   # (1000 - 1) frames / 0.01 s
    assert not burst(1000, 100_000, received=999).passes()


def test_a_short_burst_sent_late_is_invalid_even_when_the_engine_accepted_it():
    """50 frames at 1 Mfps last 50 µs, under the engine's shortest trial (1 ms), so the engine
    checked the send time against 1 ms; the burst itself must leave within N/R (1 + 1e-5)."""
    late = burst(50, 1_000_000, send_time=0.0002)
    assert late.trial.valid and not late.valid and not late.passes()
    assert "more than N/R" in late.invalid_reason
    assert burst(50, 1_000_000, send_time=0.00005).valid


def test_a_burst_with_frames_missing_is_invalid():
    cut = burst(1000, 100_000, sent=900, valid=False)
    assert not cut.valid and cut.invalid_reason.startswith(RATE_NOT_KEPT)
    short = burst(1000, 100_000, sent=900)   # the engine said valid, yet frames are missing
    assert not short.valid and "900 of 1,000" in short.invalid_reason


def test_one_frame_has_no_sending_rate():
    assert burst(1, 100_000, send_time=0.0).sending_rate is None


# -- the search ----------------------------------------------------------------------------------


def buffering_dut(buffer, limit, rate, tester=lambda frames, attempt: True):
    """A DUT with a buffer of `buffer` frames emptied at `limit` frames/s (RFC 9004 §4's
    model): a burst of N frames at `rate` loses none while N <= buffer + limit x N / rate.
    tester(frames, attempt) False: the tester could not send that burst."""
    calls = []

    def run_burst(frames):
        attempt = sum(1 for f in calls if f == frames) + 1
        calls.append(frames)
        kept = tester(frames, attempt)
        passed = min(frames, math.floor(buffer + limit * frames / rate))
        return burst(frames, rate, received=passed, sent=frames if kept else frames // 2,
                     valid=kept)
    run_burst.calls = calls
    return run_burst


def longest_passing(buffer, limit, rate):
    return math.floor(buffer / (1 - limit / rate))


@pytest.mark.parametrize("buffer, limit, step", [(1000, 0, 1), (1000, 500_000, 1),
                                                  (30_000, 900_000, 10), (7, 0, 1),
                                                  (12_345, 250_000, 100)])
def test_search_finds_the_longest_burst_within_the_step(buffer, limit, step):
    rate = 1_000_000
    run = buffering_dut(buffer, limit, rate)
    steps = []
    burst_search(run, 1_000_000, step, 2, steps=steps)
    result = BurstResult.from_steps(steps, 1_000_000)
    expected = longest_passing(buffer, limit, rate)
    assert expected - step < result.longest <= expected
    assert result.found and not result.tester_limited and not result.at_limit
    assert run.calls[0] == 1_000_000                     # the longest burst first
    assert len(run.calls) <= 1 + math.ceil(math.log2(1_000_000 / step))
    assert result.sending_rate == pytest.approx(rate, rel=1e-5)


def test_search_ends_at_once_when_the_longest_burst_passes():
    run = buffering_dut(10**9, 0, 1_000_000)
    steps = []
    burst_search(run, 50_000, 1, 2, steps=steps)
    result = BurstResult.from_steps(steps, 50_000)
    assert run.calls == [50_000] and result.longest == 50_000 and result.at_limit


def test_an_invalid_burst_is_sent_again_and_is_no_dut_result():
    """The first attempt at each length fails on the tester; the retry passes: the result is
    the same as without tester trouble, and each length was sent twice."""
    run = buffering_dut(1000, 0, 1_000_000, tester=lambda frames, attempt: attempt > 1)
    steps = []
    burst_search(run, 4096, 1, 1, steps=steps)
    result = BurstResult.from_steps(steps, 4096)
    assert result.longest == 1000 and not result.tester_limited
    assert all(run.calls.count(f) == 2 for f in set(run.calls))


def test_bursts_the_tester_cannot_send_bound_the_result_as_a_lower_bound():
    """Bursts longer than 600 frames never leave the tester: the DUT (buffer 1000) is not the
    limit, and the result says so."""
    run = buffering_dut(1000, 0, 1_000_000, tester=lambda frames, attempt: frames <= 600)
    steps = []
    burst_search(run, 4096, 1, 2, steps=steps)
    result = BurstResult.from_steps(steps, 4096)
    assert result.longest == 600 and result.tester_limited
    assert run.calls.count(4096) == 3                     # first try and two retries


def test_no_burst_passes():
    run = buffering_dut(0, 0, 1_000_000)
    steps = []
    burst_search(run, 1000, 1, 0, steps=steps)
    result = BurstResult.from_steps(steps, 1000)
    assert result.longest == 0 and not result.found and result.sending_rate is None
    assert min(run.calls) == 1


# -- the procedure, through the CLI and the fake engine ----------------------------------------------

FAKE_RATE = 2_000_000
FAKE_LIMIT = 1_000_000
FAKE_BUFFER = 30_000


@pytest.fixture
def fake_dut(monkeypatch):
    for name in ("FAKE_DUT_LIMIT", "FAKE_DUT_BUFFER", "FAKE_TESTER_LIMIT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("FAKE_DUT_LIMIT", str(FAKE_LIMIT))
    monkeypatch.setenv("FAKE_DUT_BUFFER", str(FAKE_BUFFER))


def test_procedure_measures_the_simulated_buffer(fake_config, fake_dut, tmp_path, capsys):
    out = tmp_path / "b2b"
    assert cli.main(["back-to-back", "-c", str(fake_config), "--out", str(out), "--repeat", "3",
                     "--rate", str(FAKE_RATE), "--set", "back_to_back.max_time=0.1",
                     "--set", "back_to_back.step=10",
                     "--set", f"back_to_back.throughput={FAKE_LIMIT}"]) == 0
    printed = capsys.readouterr().out
    assert "burst of 200,000 frames at 2,000,000 fps" in printed
    assert "RFC 9004 §7 Table 1" in printed
    summary = json.loads((out / "summary.json").read_text())
    expected = longest_passing(FAKE_BUFFER, FAKE_LIMIT, FAKE_RATE)        # 60,000 frames
    assert summary["unit"] == "frames" and summary["n"] == 3
    assert expected - 10 < summary["average"] <= expected
    assert summary["settings"]["repeat"] == 3 and summary["settings"]["longest_burst"] == 200_000
    # The measured rate: the fake engine reports send_time = (N - 1) / rate.
    rate = summary["sending_rate"]["longest_bursts"]
    assert rate == pytest.approx(FAKE_RATE, rel=1e-9)
    buffer = summary["buffer"]
    assert buffer["implied_seconds"] == pytest.approx(summary["average"] / rate)
    # The simulated DUT's buffer, in time at the burst's rate: 30,000 / 2e6 = 15 ms.
    assert buffer["corrected_seconds"] == pytest.approx(FAKE_BUFFER / FAKE_RATE, rel=1e-3)
    assert buffer["throughput_source"] == "back_to_back.throughput"
    # Every burst asked for its frame count and lasted N / R.
    trials = read_trials(out)
    assert all(t["directions"]["forward"]["planned"] == t["burst"]["frames"] for t in trials)
    assert all(t["duration"] == pytest.approx(max(t["burst"]["frames"] / FAKE_RATE, 1e-3))
               for t in trials)
    assert (out / "summary.csv").read_text().startswith("repetition,longest_burst_frames,")


def test_repetitions_default_to_rfc_2544s_fifty(fake_config):
    from xlatperf.config import load_config
    from xlatperf.procedures import REGISTRY
    config = load_config(str(fake_config))
    spec = REGISTRY["back-to-back"]
    assert config.value(spec.repeat_key) == 50 and config.output.repeat == 1


def test_throughput_from_a_throughput_result(fake_config, fake_dut, tmp_path, capsys):
    tp = tmp_path / "tp"
    assert cli.main(["throughput", "-c", str(fake_config), "--out", str(tp), "-q",
                     "--set", "throughput.error=1000"]) == 0
    measured = json.loads((tp / "summary.json").read_text())["median"]
    out = tmp_path / "b2b"
    assert cli.main(["back-to-back", "-c", str(fake_config), "--out", str(out), "-q",
                     "--repeat", "1", "--rate", str(FAKE_RATE), "--throughput-from", str(tp),
                     "--set", "back_to_back.max_time=0.1", "--set", "back_to_back.step=100"]) == 0
    buffer = json.loads((out / "summary.json").read_text())["buffer"]
    assert buffer["throughput"] == int(measured)
    assert str(tp) in buffer["throughput_source"]
    # RFC 9004 §5: the throughput must come from the same traffic.
    status = cli.main(["back-to-back", "-c", str(fake_config), "--out", str(tmp_path / "x"),
                       "-q", "--throughput-from", str(tp), "--set", "traffic.frame_size=128"])
    err = capsys.readouterr().err
    assert status == 1 and "traffic.frame_size = 64" in err and "RFC 9004 §5" in err
    status = cli.main(["back-to-back", "-c", str(fake_config), "--out", str(tmp_path / "y"),
                       "-q", "--throughput-from", str(out)])
    assert status == 1 and "not a throughput measurement" in capsys.readouterr().err


def test_bad_settings_name_the_key(fake_config, tmp_path, capsys):
    status = cli.main(["back-to-back", "-c", str(fake_config), "--out", str(tmp_path / "o"),
                       "--set", "back_to_back.throughput=5", "--set",
                       "back_to_back.throughput_from=somewhere"])
    assert status == 1 and "back_to_back.throughput_from" in capsys.readouterr().err
    status = cli.main(["back-to-back", "-c", str(fake_config), "--out", str(tmp_path / "o"),
                       "--rate", "10", "--set", "back_to_back.max_time=0.01"])
    assert status == 1 and "back_to_back.max_time = 0.01" in capsys.readouterr().err
    status = cli.main(["back-to-back", "-c", str(fake_config), "--out", str(tmp_path / "o"),
                       "--set", "back_to_back.max_time=100"])
    assert status == 1 and "back_to_back.max_time = 100" in capsys.readouterr().err
    status = cli.main(["back-to-back", "-c", str(fake_config), "--out", str(tmp_path / "imix"),
                       "--set", 'traffic.imix="simple"'])
    err = capsys.readouterr().err
    assert status == 1 and 'traffic.imix = "simple"' in err and "per frame size" in err
    assert (tmp_path / "imix" / "trials.jsonl").read_text() == ""   # refused before any trial


def test_throughput_from_refuses_bounds_and_loss_tolerant_results(fake_config, fake_dut,
                                                                 tmp_path, capsys,
                                                                 monkeypatch):
    """Issue 17 finding 4: a tester-limited or range-limited median is a lower bound, and a
    throughput with a loss tolerance is not RFC 9004 §5's zero-loss one: refused, with why."""
    cases = {"tester": (["--set", "throughput.error=1000"], "lower bound set by the tester"),
             "range": (["--set", "throughput.max_rate=100000"], "throughput.max_rate"),
             "tolerant": (["--set", "throughput.loss_tolerance=0.001"], "zero-loss"),
             "vlan": (["--set", "left.vlan=10"], "left.vlan = 10")}
    for name, (options, reason) in cases.items():
        if name == "tester":
            monkeypatch.setenv("FAKE_TESTER_LIMIT", "1000000")
        else:
            monkeypatch.delenv("FAKE_TESTER_LIMIT", raising=False)
        tp = tmp_path / name
        assert cli.main(["throughput", "-c", str(fake_config), "--out", str(tp), "-q",
                         *options]) == 0
        capsys.readouterr()
        status = cli.main(["back-to-back", "-c", str(fake_config), "--out",
                           str(tmp_path / f"b2b-{name}"), "-q", "--throughput-from", str(tp)])
        err = capsys.readouterr().err
        assert status == 1 and reason in err and "back_to_back.throughput_from" in err, (name, err)


def test_a_burst_rate_below_the_maximum_is_labelled_as_rfc9004_section_7_says():
    """Issue 17 finding 4: bursts at R = 1 Mfps on a 10GE medium (14,880,952 fps): the figure
    at R is RFC 9004 §7's actual buffer time, labelled, and §6.4's Corrected DUT Buffer Time at
    the maximum is given too (actual = corrected x maximum / R)."""
    found = buffer_times(50_000, 1_000_000, 600_000, max_rate=14_880_952)
    assert found["corrected_seconds"] == pytest.approx(0.02)
    assert found["rfc9004_corrected_seconds"] == pytest.approx(0.02 * 1_000_000 / 14_880_952)
    assert found["label"].startswith("actual buffer time at 1,000,000 frames/s (RFC 9004 §7")
    # At the maximum itself the two are one: no label.
    assert "label" not in buffer_times(50_000, 1_000_000, 600_000, max_rate=1_000_000)
