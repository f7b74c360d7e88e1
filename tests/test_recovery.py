# SPDX-License-Identifier: BSD-3-Clause
"""System recovery (RFC 2544 §26.5) and reset (RFC 2544 §26.6, RFC 6201): the times computed
from loss periods against examples worked by hand, the overload rates, the during_trial hook,
and both procedures through run_procedure and the CLI with tests/fake_engine.py."""

import json
import time

import pytest

from xlatperf.config import load_config
from xlatperf.measure.hooks import DutHooks
from xlatperf.measure.store import read_trials
from xlatperf.procedures.lossperiods import recovery, reset_time
from xlatperf.procedures.recovery import overload_rates
from xlatperf.run import run_procedure
from xlatperf.ui import cli
from xlatperf.util.errors import ConfigError, MeasurementError

from fakes import FAKE_ENGINE


def period(first_lost, last_lost, frames, before, after):
    return {"first_lost_s": first_lost, "last_lost_s": last_lost, "frames": frames,
            "last_before_s": before, "first_after_s": after}


def losses(*periods, total=None):
    """The engine's `losses` listing `periods` (all of them unless `total` says more)."""
    longest = max(periods, key=lambda p: p["frames"]) if periods else None
    return {"periods": total or len(periods), "lost": sum(p["frames"] for p in periods),
            "first": list(periods), "longest": longest}


# -- RFC 2544 §26.5: the recovery time from loss periods ----------------------------------------
#
# The worked examples share one trial: throughput 10,000 frames/s, so the overload rate is
# 11,000 and the reduced rate 5,500 frames/s; Timestamp A = 60 s. Frames before A are due at
# k / 11,000 (the last one at 60 - 1/11,000 = 59.9999091 s), the frames after it at
# 60 + j / 5,500 (60.0001818 s, ...).

A, OVER, REDUCED = 60.0, 11_000, 5_500


def test_no_loss_is_no_overload_not_recovery_at_once():
    found = recovery(losses(), A, OVER, REDUCED)
    assert found["overloaded"] is False and found["recovered"] is None and found["determined"]
    assert found["recovery_time"] is None and found["timestamp_b"] is None
    assert found["lost_before"] == 0 and found["lost_after"] == 0


def test_loss_only_before_timestamp_a():
    """The overload loses 9 of every 100 frames up to its very last frame (59.9999091 s): no
    frame sent at the reduced rate is lost, so B does not exist and the recovery time is 0."""
    last = 60 - 1 / OVER
    found = recovery(losses(period(1.0, 1.0, 1, 0.9999, 1.0001),
                            period(last, last, 1, last - 1 / OVER, 60.0)), A, OVER, REDUCED)
    assert found["recovered"] and found["recovery_time"] == 0.0
    assert found["lost_before"] == 2 and found["lost_after"] == 0


def test_a_period_across_timestamp_a():
    """The DUT drops everything from 59.95 s until 60.05 s: the 550 overload frames due at
    59.95, ..., 59.9999091 s and the 275 reduced-rate frames due at 60, 60.000182, ...,
    60 + 274/5,500 = 60.0498182 s. B is the last of them: recovery time 274/5,500 =
    0.0498182 s, 275 frames lost after A."""
    b = 60 + 274 / REDUCED
    found = recovery(losses(period(59.95, b, 825, 59.95 - 1 / OVER, 60.05)), A, OVER, REDUCED)
    assert found["recovered"]
    assert found["timestamp_b"] == pytest.approx(60.0498182, abs=1e-7)
    assert found["recovery_time"] == pytest.approx(0.0498182, abs=1e-7)
    assert found["lost_after"] == 275 and found["lost_before"] == 550


def test_the_last_of_several_periods_after_a_gives_timestamp_b():
    """Losses at 59.99 s (before A), 60.01 s and 60.2 s (two frames: 60.2 and 60.2001818 s):
    B = 60.2001818 s, recovery time 0.2001818 s; 3 frames lost after A."""
    found = recovery(losses(period(59.99, 59.99, 1, 59.9899, 59.9901),
                            period(60.01, 60.01, 1, 60.0098, 60.0102),
                            period(60.2, 60.2 + 1 / REDUCED, 2, 60.2 - 1 / REDUCED,
                                   60.2 + 2 / REDUCED)), A, OVER, REDUCED)
    assert found["recovery_time"] == pytest.approx(0.2 + 1 / REDUCED)
    assert found["lost_after"] == 3 and found["lost_before"] == 1


def test_loss_to_the_end_is_not_recovered_within_the_window():
    """Everything from 59.5 s to the end (60 + 9.9998 s, a 10 s window) is lost: not recovered;
    the recovery time is at least 9.9998 s."""
    end = 60 + (10 * REDUCED - 1) / REDUCED
    found = recovery(losses(period(59.5, end, 5500 + 55_000, 59.4999, None)), A, OVER, REDUCED)
    assert found["recovered"] is False and found["determined"]
    assert found["recovery_time"] is None
    assert found["at_least"] == pytest.approx(9.9998, abs=1e-4)
    assert "not recovered within the window" in found["note"]


def test_undetermined_when_the_last_period_after_a_is_not_listed():
    """150 periods, the engine lists the first 100, all before A: B is unknown."""
    listed = [period(50 + i / 100, 50 + i / 100, 1, 0, 0) for i in range(100)]
    found = recovery(losses(*listed, total=150), A, OVER, REDUCED)
    assert found["determined"] is False and found["recovered"] is None
    assert found["recovery_time"] is None and found["at_least"] is None
    assert found["lost_after"] is None
    assert "first 100 of 150 loss periods" in found["note"]
    # ... with listed periods after A, their last one bounds it from below.
    listed[-1] = period(60.5, 60.5, 1, 60.49, 60.51)
    assert recovery(losses(*listed, total=150), A, OVER, REDUCED)["at_least"] == \
        pytest.approx(0.5)


def test_a_longest_period_to_the_end_decides_even_when_not_listed():
    """Only the trial's last period can last to its end: when it is the longest, the engine
    reports it apart, and the DUT did not recover."""
    listed = [period(50 + i / 100, 50 + i / 100, 1, 0, 0) for i in range(100)]
    report = losses(*listed, total=300)
    report["longest"] = period(61.0, 69.9998, 49_000, 60.9998, None)
    found = recovery(report, A, OVER, REDUCED)
    assert found["recovered"] is False and found["determined"]
    assert found["at_least"] == pytest.approx(9.9998)


def test_overload_and_reduced_rates():
    assert overload_rates(10_000, 14_880_952) == (11_000, 5_500)
    assert overload_rates(9_999, 14_880_952) == (10_999, 5_500)   # 10,998.9; 5,499.5 rounded
    # RFC 2544: 110 % or the medium's maximum, whichever is lower
    assert overload_rates(14_000_000, 14_880_952) == (14_880_952, 7_440_476)
    assert overload_rates(1, 100) == (1, 1)


# -- RFC 6201: the reset time from loss periods --------------------------------------------------


def test_reset_time_by_both_methods():
    """100,000 frames/s; the DUT forwards nothing from 10.00001 s to 10.29999 s: 30,000 frames
    lost, the last before at 10.0 s, the first after at 10.3 s. Timestamp method: 10.3 - 10.0
    = 0.3 s; frame-loss method: 30,000 / 100,000 = 0.3 s."""
    found = reset_time(losses(period(10.00001, 10.29999, 30_000, 10.0, 10.3)), 100_000)
    assert found["timestamp_method"] == pytest.approx(0.3)
    assert found["frame_loss_method"] == pytest.approx(0.3)
    assert found["back"] and found["interrupted"] and found["other_lost"] == 0


def test_other_loss_counts_in_the_frame_loss_method_only():
    """Three frames lost elsewhere: the frame-loss method says 30,003 / 100,000 = 0.30003 s,
    the timestamp method still 0.3 s."""
    found = reset_time(losses(period(2.0, 2.00002, 3, 1.99999, 2.00003),
                              period(10.00001, 10.29999, 30_000, 10.0, 10.3)), 100_000)
    assert found["timestamp_method"] == pytest.approx(0.3)
    assert found["frame_loss_method"] == pytest.approx(0.30003)
    assert found["other_lost"] == 3 and found["periods"] == 2


def test_reset_without_loss_not_back_or_from_the_start():
    none = reset_time(losses(), 1000)
    assert none["timestamp_method"] == 0.0 and not none["interrupted"]
    assert "no interruption" in none["note"]
    gone = reset_time(losses(period(5.0, 9.999, 5000, 4.999, None)), 1000)
    assert gone["timestamp_method"] is None and gone["back"] is False
    assert gone["frame_loss_method"] == pytest.approx(5.0)
    early = reset_time(losses(period(0.0, 0.5, 501, None, 0.501)), 1000)
    assert early["timestamp_method"] is None and early["back"]


# -- the during_trial hook -------------------------------------------------------------------------


def test_during_trial_runs_its_command_at_its_time(tmp_path):
    config = load_config(None, ["dut.during_trial=echo {traffic.frame_size} > "
                                f"{tmp_path}/ran", "dut.during_trial_at=0.2"])
    hooks = DutHooks.from_config(config, tmp_path)
    during = hooks.during_trial({"repetition": 1})
    during.start()
    assert not (tmp_path / "ran").exists()
    record = during.finish(trial_seconds=1.0)["during_trial"]
    assert (tmp_path / "ran").read_text() == "64\n"
    assert 0.2 <= record["started_s"] < 0.5 and record["within_trial"]
    assert record["exit_status"] == 0 and record["at_s"] == 0.2
    logged = json.loads((tmp_path / "hooks.jsonl").read_text())
    assert logged["hook"] == "during_trial" and logged["repetition"] == 1
    assert logged["at_s"] == 0.2 and logged["command"] == f"echo 64 > {tmp_path}/ran"
    # after a trial shorter than the wait, it ran after the trial: said so
    during = hooks.during_trial()
    during.start()
    assert during.finish(trial_seconds=0.01)["during_trial"]["within_trial"] is False


def test_during_trial_cancelled_before_its_time_never_runs(tmp_path):
    config = load_config(None, [f"dut.during_trial=touch {tmp_path}/ran",
                                "dut.during_trial_at=0.3"])
    during = DutHooks.from_config(config, tmp_path).during_trial()
    during.start()
    during.cancel()
    time.sleep(0.4)
    assert not (tmp_path / "ran").exists()
    assert DutHooks.from_config(load_config(None, []), tmp_path).during_trial() is None


def test_a_failing_during_trial_stops_the_measurement(tmp_path):
    config = load_config(None, ["dut.during_trial=exit 3"])
    during = DutHooks.from_config(config, tmp_path).during_trial()
    during.start()
    with pytest.raises(MeasurementError, match=r"dut.during_trial `exit 3` \(local\): exit 3"):
        during.finish(1.0)


def test_during_trial_placeholders_are_checked_before_anything_runs():
    with pytest.raises(ConfigError, match=r"dut.during_trial = .*\{dut.nope\}"):
        load_config(None, ["dut.during_trial=reload {dut.nope}"])


# -- the procedures with the fake engine -----------------------------------------------------------

BASE = [f"tester.engine={FAKE_ENGINE}", "tester.netns=", "tester.hugepages=no",
        "left.port=null", "right.port=null", "trial.pause=0"]


@pytest.fixture
def fake_dut(fake, monkeypatch):
    """Sets the fake engine's DUT behaviour: fake_dut(NAME=value, ...)."""
    def setup(**settings):
        for name, value in settings.items():
            monkeypatch.setenv(f"FAKE_{name}", str(value))
    return setup


def test_recovery_measures_the_simulated_recovery_time(fake, fake_dut):
    """The fake DUT forwards 1,000,000 frames/s and loses everything for 0.25 s after an
    overload: overload 1,100,000 frames/s for 1 s, then 550,000; the frames due in [1, 1.25) s
    are lost, the last at 1 + 137,499 / 550,000 s: recovery time 0.25 - 1/550,000 s."""
    log = fake / "requests.jsonl"
    fake_dut(DUT_LIMIT=1_000_000, DUT_RECOVERY=0.25, REQUEST_LOG=log)
    config = load_config(None, [*BASE, "recovery.overload=1", "recovery.window=0.5",
                                "recovery.repeat=3"])
    s = run_procedure("recovery", config, fake / "rec", rate=1_000_000)
    assert s["complete"] and s["unit"] == "s" and s["n"] == 3 and s["recovered"] == 3
    expected = 0.25 - 1 / 550_000
    assert s["median"] == pytest.approx(expected) and s["average"] == pytest.approx(expected)
    assert s["rates"]["overload"] == 1_100_000 and s["rates"]["reduced"] == 550_000
    rep = s["repetitions"][0]["directions"]["forward"]
    # 1.1 M sent before A, the DUT forwarded 1 M of them; 137,500 lost after A
    assert rep["lost_before"] == 100_000 and rep["lost_after"] == 137_500
    assert s["directions"]["forward"]["recovery_time"]["average"] == pytest.approx(expected)
    assert s["settings"]["duration"] == 1.5 and "last lost frame" in s["settings"]["timestamp_b"]
    trials = [json.loads(line) for line in log.read_text().splitlines()
              if json.loads(line)["op"] == "trial"]
    assert len(trials) == 3
    for request in trials:
        assert request["losses"] is True and request["duration"] == 1.5
        for flow in request["flows"]:
            assert flow["rate"] == 1_100_000
            assert flow["rate_steps"] == [{"at": 1.0, "rate": 550_000}]
    records = read_trials(fake / "rec")
    assert records[0]["recovery"]["forward"]["recovery_time"] == pytest.approx(expected)
    assert records[0]["losses"]["forward"]["periods"] == 1


def test_recovery_not_within_the_window_and_undetermined(fake, fake_dut):
    fake_dut(DUT_LIMIT=1_000_000, DUT_RECOVERY=1.0)
    config = load_config(None, [*BASE, "recovery.overload=1", "recovery.window=0.5",
                                "recovery.repeat=2"])
    s = run_procedure("recovery", config, fake / "slow", rate=1_000_000)
    assert s["not_recovered"] == 2 and s["median"] is None and s["n"] == 0
    assert any("did not recover within the 0.5 s window" in w for w in s["warnings"])
    assert s["repetitions"][0]["status"] == "not recovered"
    # 150 short loss periods during the overload, then recovery: the last period after A is
    # past the first 100 the engine lists, but among the last 100
    fake_dut(DUT_RECOVERY=0.1, DUT_LOSS_PERIODS=150)
    s = run_procedure("recovery", config, fake / "many", rate=1_000_000)
    assert s["undetermined"] == 0 and s["recovered"] == 2
    assert s["median"] == pytest.approx(0.1, abs=0.01)


def test_recovery_capped_at_the_medium_maximum(fake, fake_dut):
    config = load_config(None, [*BASE, "recovery.overload=0.1", "recovery.window=0.1",
                                "recovery.repeat=1"])
    s = run_procedure("recovery", config, fake / "max", rate=14_000_000)
    assert s["rates"]["overload"] == 14_880_952 and s["rates"]["overload_is_medium_maximum"]
    # The fake DUT forwards everything: at the medium's maximum it is not overloaded either.
    assert s["median"] is None and s["not_overloaded"] == 1


def test_reset_measures_the_outage_the_hook_caused(fake, fake_dut):
    """The hook writes 0.3 into the fake DUT's outage file 0.2 s into each (1 s) trial: every
    flow loses the frames of the next 0.3 s. At 100,000 frames/s: 30,000 frames; timestamp
    method 0.3 s + one frame interval, frame-loss method 0.3 s."""
    outage = fake / "outage"
    fake_dut(TRIAL_SECONDS=1, DUT_OUTAGE_FILE=outage)
    config = load_config(None, [*BASE, "trial.duration=2", f"dut.during_trial=echo 0.3 > {outage}",
                                "dut.during_trial_at=0.2", "reset.repeat=2",
                                "reset.type=power", "reset.description=PDU outlet 3 off"])
    s = run_procedure("reset", config, fake / "reset", rate=100_000)
    assert s["complete"] and s["back"] == 2 and s["n"] == 2
    assert s["median"] == pytest.approx(0.3 + 1e-5)
    assert s["frame_loss_method"]["median"] == pytest.approx(0.3)
    assert s["reset"] == {"type": "power", "description": "PDU outlet 3 off"}
    for rep in s["repetitions"]:
        for d in rep["directions"].values():
            assert d["lost"] == 30_000 and d["periods"] == 1
            # the outage began when the hook ran: 0.2 s of 1 s real time is 0.4 s of the trial
            assert 0.35 < d["longest"]["first_lost_s"] < 0.7
    records = read_trials(fake / "reset")
    assert all(r["during_trial"]["within_trial"] for r in records)
    runs = [json.loads(line) for line in (fake / "reset" / "hooks.jsonl").read_text().splitlines()]
    assert [r["hook"] for r in runs] == ["during_trial"] * 2
    # RFC 6201: at least 10 resets; RFC 2544 §26.6: the minimum frame size (64 here: no note)
    assert any("at least 10 times" in w for w in s["warnings"])
    assert not any("minimum-size frames" in w for w in s["warnings"])


def test_reset_without_interruption_and_with_large_frames(fake, fake_dut):
    config = load_config(None, [*BASE, "trial.duration=1", "dut.during_trial=true",
                                "reset.repeat=1", "traffic.frame_size=128"])
    s = run_procedure("reset", config, fake / "none", rate=1000)
    assert s["median"] == 0.0 and s["not_interrupted"] == 1
    assert any("minimum-size frames (64 bytes here)" in w for w in s["warnings"])


@pytest.mark.parametrize("overrides, message", [
    ([], r'dut.during_trial = "": set the command that resets the DUT'),
    (["dut.during_trial=reboot", "dut.during_trial_at=5", "trial.duration=5"],
     r"dut.during_trial_at = 5: must be below trial.duration = 5 s"),
])
def test_reset_configuration_errors(fake, overrides, message):
    config = load_config(None, [*BASE, *overrides])
    with pytest.raises(ConfigError, match=message):
        run_procedure("reset", config, fake / "bad", rate=1000)


def test_both_need_a_rate_and_take_it_from_a_throughput_result(fake, fake_dut, capsys):
    fake_dut(DUT_LIMIT=2_000_000)
    (fake / "base.toml").write_text("\n".join(
        [f'[tester]\nengine = "{FAKE_ENGINE}"\nnetns = ""\nhugepages = "no"',
         '[left]\nport = "null"', '[right]\nport = "null"',
         "[trial]\npause = 0.0\nduration = 1.0", "[throughput]\nerror = 100000"]))
    assert cli.main(["recovery", "-c", str(fake / "base.toml"), "--out", str(fake / "x")]) == 2
    assert "one of the arguments --rate --rate-from is required" in capsys.readouterr().err
    assert cli.main(["throughput", "-c", str(fake / "base.toml"), "--out", str(fake / "tp"),
                     "-q"]) == 0
    assert cli.main(["recovery", "-c", str(fake / "base.toml"), "--rate-from", str(fake / "tp"),
                     "--set", "recovery.overload=0.5", "--set", "recovery.window=0.5",
                     "--repeat", "2", "--out", str(fake / "rec")]) == 0
    out = capsys.readouterr().out
    assert "forward recovered in 0 s" in out and "RFC 2544 §26.5 reporting format" in out
    s = json.loads((fake / "rec" / "summary.json").read_text())
    throughput = json.loads((fake / "tp" / "summary.json").read_text())["median"]
    assert s["settings"]["rate"] == int(throughput) and s["rate_source"]["procedure"] == \
        "throughput"
    assert s["n"] == 2     # --repeat sets recovery.repeat
    assert cli.main(["reset", "-c", str(fake / "base.toml"), "--rate-from", str(fake / "tp"),
                     "--set", "dut.during_trial=true", "--repeat", "1",
                     "--out", str(fake / "reset")]) == 0
    assert "forward no frame lost" in capsys.readouterr().out


def test_a_campaign_chains_recovery_and_reset_to_the_throughput(fake, fake_dut):
    from xlatperf.run.campaign import run_campaign
    from xlatperf.run.campaignfile import load_campaign
    fake_dut(DUT_LIMIT=300_000)
    (fake / "c.toml").write_text(f"""
[campaign]
procedures = ["throughput", "recovery", "reset"]
[set]
"tester.engine" = "{FAKE_ENGINE}"
"tester.netns" = ""
"tester.hugepages" = "no"
"left.port" = "null"
"right.port" = "null"
"trial.pause" = 0
"trial.duration" = 1
"throughput.error" = 100000
"recovery.overload" = 0.5
"recovery.window" = 0.5
"recovery.repeat" = 1
"reset.repeat" = 1
[per_procedure.reset]
"dut.during_trial" = "true"
[axes]
"traffic.frame_size" = [64, 128]
""")
    campaign = load_campaign(fake / "c.toml")
    assert [p.procedure for p in campaign.points] == ["throughput", "recovery", "reset"] * 2
    run_campaign(campaign, fake / "out")
    for point in campaign.points:
        s = json.loads((fake / "out" / "points" / point.id / "summary.json").read_text())
        assert s["complete"], point.id
        if point.procedure != "throughput":
            source = json.loads((fake / "out" / "points" / point.rate_from / "summary.json")
                                .read_text())
            assert s["settings"]["rate"] == int(source["median"])


def test_a_dut_that_lost_nothing_was_not_overloaded_and_has_no_recovery_time():
    """Issue 17 finding 5: no loss at the overload rate is no overload, not "recovered, 0 s"."""
    none_lost = {"periods": 0, "lost": 0, "first": [], "last": [], "longest": None}
    r = recovery(none_lost, 60.0, 110_000, 55_000)
    assert r["overloaded"] is False and r["recovered"] is None
    assert r["recovery_time"] is None and r["note"].startswith("not overloaded")


def test_a_run_whose_dut_was_never_overloaded_says_so(fake, fake_dut):
    fake_dut(DUT_LIMIT=10_000_000)   # far above the throughput given
    config = load_config(None, [*BASE, "recovery.overload=1", "recovery.window=0.5",
                                "recovery.repeat=2"])
    summary = run_procedure("recovery", config, fake / "rec", rate=1_000_000)
    assert summary["not_overloaded"] == 2 and summary["recovered"] == 0
    assert summary["median"] is None
    assert any("not overloaded" in note for note in summary["warnings"])


def test_frames_lost_without_loss_periods_are_undetermined_not_zero():
    """Issue 17 finding 6: a reply without loss periods for a direction that lost frames
    (several flows per direction, an older engine) leaves recovery and reset undetermined."""
    r = recovery(None, 60.0, 110_000, 55_000)
    assert r["determined"] is False and r["recovered"] is None and r["recovery_time"] is None
    assert "no loss periods" in r["note"]
    reset = reset_time(None, 100_000)
    assert reset["determined"] is False
    assert reset["timestamp_method"] is None and reset["frame_loss_method"] is None
