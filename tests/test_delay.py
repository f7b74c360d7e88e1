# SPDX-License-Identifier: BSD-3-Clause
"""Delay measurements (issue 4, docs/delay.md): RFC 8219 latency (TL, WCL), PDV and IPDV
arithmetic against exact computations, the summaries, the configuration checks, and the
latency/pdv procedures and per-frame timeout with tests/fake_engine.py as the engine."""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from xlatperf.config.loading import load_config
from xlatperf.engine.protocol import DirectionCounts, TrialResult, trial_from_record
from xlatperf.measure.store import read_trials
from xlatperf.procedures.delay import (INF, bucket_of_rank, check_latency_setup, foreground_frames,
                                       ipdv_of, latency_of, latency_trial, pdv_of, pdv_trial,
                                       rate_from_results, summarize_infinite, summarize_latency,
                                       summarize_pdv, tagged_capacity, timestamp_method,
                                       typical_latency, worst_case_latency)
from xlatperf.run.runner import run_procedure
from xlatperf.util.errors import ConfigError

FAKE_ENGINE = str(Path(__file__).resolve().parent / "fake_engine.py")
MS = 1e6  # ns


# -- TL and WCL (RFC 8219 §7.2, RFC 2330 §11.3; methodology §14 items 13-15) -----------------


def test_tl_and_wcl_of_1_to_1000_ms():
    delays = [float(ms) for ms in range(1, 1001)]
    random.Random(4).shuffle(delays)
    assert typical_latency(delays) == 500.5          # even N: mean of sorted[499], sorted[500]
    assert worst_case_latency(delays) == 999         # sorted[ceil(999.0) - 1] = sorted[998]


def test_wcl_rank_for_500_and_50000_samples():
    assert worst_case_latency(list(range(1, 501))) == 500        # ceil(499.5) - 1 = 499: the max
    assert worst_case_latency(list(range(1, 50001))) == 49950    # sorted[49949]
    assert typical_latency(list(range(1, 501))) == 250.5


@pytest.mark.parametrize("delays, tl, wcl", [
    ([7.0], 7.0, 7.0),                       # N = 1
    ([3.0, 8.0], 5.5, 8.0),                  # N = 2: ceil(1.998) - 1 = 1
    ([5.0, 5.0, 5.0, 5.0], 5.0, 5.0),        # ties
    ([1.0, 2.0, 2.0, 3.0], 2.0, 3.0),
    ([2.0, 1.0, 2.0], 2.0, 2.0),             # odd N: the middle one
])
def test_tl_and_wcl_of_tiny_sets_and_ties(delays, tl, wcl):
    assert typical_latency(delays) == tl
    assert worst_case_latency(delays) == wcl


def tagged(delays_ms):
    values = [None if d is None else d * MS for d in delays_ms]
    return {"count": len(values), "lost": values.count(None), "delays_ns": values}


def test_lost_tagged_frames_count_as_infinity():
    # 1000 tags, the largest lost: the 999th value is still finite.
    info = latency_of(tagged([*range(1, 1000), None]))
    assert info["lost"] == 1 and info["tagged"] == 1000
    assert info["wcl_ms"] == 999 and info["tl_ms"] == 500.5
    # Two lost: more than 0.1 % of the tags, WCL is infinite -> null, never a finite value.
    info = latency_of(tagged([None, *range(2, 1000), None]))
    assert info["lost"] == 2 and info["wcl_ns"] is None and info["wcl_ms"] is None
    assert info["tl_ms"] == 501.5        # median of 2..999 plus two +inf: (501 + 502) / 2
    assert info["min_ns"] == 2 * MS and info["max_ns"] == 999 * MS
    # 500 tags (RFC 8219's minimum): WCL is the largest, so one lost tag makes it infinite.
    assert latency_of(tagged([*range(1, 500), None]))["wcl_ms"] is None
    # Half of them lost: TL infinite too (the mean of a finite and an infinite middle value).
    info = latency_of(tagged([1, None, 2, None]))
    assert info["tl_ms"] is None and info["wcl_ms"] is None
    assert latency_of(tagged([None]))["tl_ms"] is None
    assert typical_latency([1.0, INF, INF]) == INF


def test_latency_of_no_tags():
    info = latency_of({"count": 0, "lost": 0, "delays_ns": []})
    assert info["tagged"] == 0 and info["tl_ns"] is None and info["wcl_ns"] is None


# -- PDV and IPDV (RFC 8219 §7.3) -----------------------------------------------------------


HISTOGRAM = {"count": 1000, "min_ns": 12000.0, "max_ns": 90000.0, "mean_ns": 15000.0,
             "p50_ns": 14000.0, "p99_ns": 30000.0, "p999_ns": 52000.0,
             "relative_error": 2 ** -11,
             "buckets": [[12000.0, 12001.0, 500], [14000.0, 14010.0, 400],
                         [30000.0, 30020.0, 99], [90000.0, 90050.0, 1]]}


def test_pdv_from_a_histogram_object():
    info = pdv_of(HISTOGRAM)
    assert info["pdv_ns"] == 40000.0 and info["pdv_ms"] == 0.04
    assert info["frames"] == 1000 and info["min_ns"] == 12000.0 and info["p999_ns"] == 52000.0
    empty = pdv_of({"count": 0, "min_ns": 0, "p999_ns": 0, "buckets": []})
    assert empty["pdv_ns"] is None and empty["frames"] == 0
    # A constant delay: p99.9 = min (the histogram's midpoint is clamped to min and max).
    assert pdv_of({**HISTOGRAM, "p999_ns": 12000.0})["pdv_ns"] == 0


def test_bucket_of_rank():
    assert bucket_of_rank(HISTOGRAM["buckets"], 1) == (12000.0, 12001.0)
    assert bucket_of_rank(HISTOGRAM["buckets"], 500) == (12000.0, 12001.0)
    assert bucket_of_rank(HISTOGRAM["buckets"], 501) == (14000.0, 14010.0)
    assert bucket_of_rank(HISTOGRAM["buckets"], 999) == (30000.0, 30020.0)   # p99.9 of 1000
    assert bucket_of_rank(HISTOGRAM["buckets"], 1000) == (90000.0, 90050.0)
    with pytest.raises(ValueError):
        bucket_of_rank(HISTOGRAM["buckets"], 1001)


def test_ipdv_min_median_max():
    info = ipdv_of({"count": 999, "min_ns": -2500.0, "median_ns": 0.0, "max_ns": 3000.0})
    assert (info["min_ms"], info["median_ms"], info["max_ms"]) == (-0.0025, 0.0, 0.003)
    assert info["pairs"] == 999
    assert ipdv_of({"count": 0, "min_ns": 0, "median_ns": 0, "max_ns": 0})["median_ms"] is None


# -- Summaries over repetitions (RFC 8219 §7.2 step 5, §7.3, §12) ---------------------------


def latency_trial_result(forward_ms, reverse_ms=None, valid=True, rate=1000):
    delay = {"forward": {"tagged": tagged(forward_ms)}}
    directions = {"forward": DirectionCounts(sent=rate, received=rate)}
    if reverse_ms is not None:
        delay["reverse"] = {"tagged": tagged(reverse_ms)}
        directions["reverse"] = DirectionCounts(sent=rate, received=rate)
    return TrialResult(rate=rate, valid=valid, directions=directions, delay=delay)


def test_summarize_latency_medians_of_tl_and_wcl():
    trials = [latency_trial_result([1, 2, 3], [2, 4, 6]),
              latency_trial_result([2, 3, 4], [1, 1, 1]),
              latency_trial_result([3, 4, 5], [9, 9, 9]),
              latency_trial_result([100, 100, 100], [100, 100, 100], valid=False)]
    s = summarize_latency(trials)
    assert s["unit"] == "ms" and s["invalid"] == 1 and s["n"] == 3
    forward, reverse = s["directions"]["forward"], s["directions"]["reverse"]
    assert forward["typical_latency"]["median"] == 3 and forward["typical_latency"]["n"] == 3
    assert forward["worst_case_latency"]["median"] == 4
    assert (forward["typical_latency"]["min"], forward["typical_latency"]["max"]) == (2, 4)
    assert reverse["typical_latency"]["median"] == 4      # TLs 4, 1, 9
    # Top level: each trial's worse direction (TL 4, 2, 9; WCL 6, 4, 9).
    assert s["median"] == 4 and s["typical_latency"]["median"] == 4
    assert s["worst_case_latency"]["median"] == 6
    assert forward["tagged"] == 9 and forward["lost_tagged"] == 0
    json.dumps(s, allow_nan=False)


def test_summarize_latency_with_infinite_wcl():
    trials = [latency_trial_result([1, 2, None]), latency_trial_result([1, 2, 3]),
              latency_trial_result([1, None, None])]
    s = summarize_latency(trials)
    wcl = s["directions"]["forward"]["worst_case_latency"]
    assert wcl["infinite"] == 2 and wcl["n"] == 3
    assert wcl["median"] is None and wcl["min"] == 3 and wcl["max"] is None
    assert wcl["dispersion"] is None
    tl = s["directions"]["forward"]["typical_latency"]
    assert tl["median"] == 2 and tl["max"] is None and tl["infinite"] == 1
    assert s["directions"]["forward"]["lost_tagged"] == 3
    json.dumps(s, allow_nan=False)


def test_summarize_infinite():
    assert summarize_infinite([1.0, 2.0, INF])["median"] == 2.0
    both = summarize_infinite([INF, INF])
    assert both["median"] is None and both["infinite"] == 2 and both["n"] == 2
    assert summarize_infinite([])["n"] == 0
    plain = summarize_infinite([1.0, 3.0])
    assert plain["median"] == 2.0 and plain["dispersion"] == 1.0 and plain["infinite"] == 0


def pdv_trial_result(forward_pdv_ns, reverse_pdv_ns, ipdv=True, valid=True):
    delay = {}
    for name, pdv in (("forward", forward_pdv_ns), ("reverse", reverse_pdv_ns)):
        delay[name] = {"histogram": {**HISTOGRAM, "p999_ns": HISTOGRAM["min_ns"] + pdv}}
        if ipdv:
            delay[name]["ipdv"] = {"count": 999, "min_ns": -pdv, "median_ns": 0.0,
                                   "max_ns": pdv}
    directions = {name: DirectionCounts(sent=1000, received=1000) for name in delay}
    return TrialResult(rate=1000, valid=valid, directions=directions, delay=delay)


def test_summarize_pdv_and_ipdv():
    trials = [pdv_trial_result(1000, 5000), pdv_trial_result(2000, 1000),
              pdv_trial_result(3000, 1000), pdv_trial_result(9e9, 9e9, valid=False)]
    s = summarize_pdv(trials)
    assert s["unit"] == "ms" and s["invalid"] == 1 and s["n"] == 3
    forward = s["directions"]["forward"]
    assert forward["pdv"]["median"] == 0.002 and forward["pdv"]["n"] == 3
    assert forward["ipdv"]["min"]["median"] == -0.002
    assert forward["ipdv"]["median"]["median"] == 0
    assert forward["ipdv"]["max"]["median"] == 0.002
    assert forward["frames"] == 3000
    assert s["median"] == 0.003                              # worse direction: 5, 2, 3 µs
    assert (s["min"], s["max"]) == (0.002, 0.005)
    assert "ipdv" not in summarize_pdv([pdv_trial_result(1, 1, ipdv=False)])["directions"][
        "forward"]


def test_latency_and_pdv_trials_with_a_fake_runner():
    steps, notes = [], []

    def run_trial(rate):
        return latency_trial_result(list(range(1, 11)), rate=rate)
    result, info = latency_trial(run_trial, 5000, steps=steps, notify=notes.append)
    assert steps == [result] and notes == [{"rate": 5000}]
    assert info["forward"]["tl_ms"] == 5.5 and info["forward"]["wcl_ms"] == 10
    result, info = pdv_trial(lambda rate: pdv_trial_result(100, 200), 5000)
    assert info["forward"]["pdv_ns"] == 100 and info["reverse"]["ipdv"]["max_ns"] == 200


# -- Trial results: late frames and delay data ------------------------------------------------


REPLY = {"valid": True, "invalid_reason": None, "elapsed": 2.0, "flows": [
    {"name": "forward", "sent": 100, "received": 90, "planned": 100, "streams": [
        {"kind": "foreground", "sent": 80, "received": 72, "late": 8,
         "tagged": {"count": 2, "lost": 1, "delays_ns": [5000.0, None]},
         "delay": HISTOGRAM, "ipdv": {"count": 70, "min_ns": -1, "median_ns": 0, "max_ns": 1}},
        {"kind": "background", "sent": 20, "received": 18, "late": 2, "delay": HISTOGRAM}]}]}


def test_trial_result_keeps_late_frames_and_delay_data():
    result = TrialResult.from_reply(100, REPLY)
    assert result.directions["forward"].late == 10
    assert result.directions["forward"].to_dict()["late"] == 10
    delay = result.delay["forward"]
    assert delay["tagged"]["delays_ns"] == [5000.0, None]
    assert delay["histogram"] is HISTOGRAM and delay["ipdv"]["count"] == 70
    assert delay["background"] == {"histogram": HISTOGRAM}
    record = json.loads(json.dumps(result.to_dict()))
    back = trial_from_record(record)
    assert back.delay == result.delay and back.directions == result.directions
    # Without delay measurements nothing changes in the record.
    plain = TrialResult.from_reply(100, {"valid": True, "flows": [
        {"name": "forward", "sent": 1, "received": 1, "streams": [{"kind": "foreground"}]}]})
    assert "delay" not in plain.to_dict() and "late" not in plain.to_dict()["directions"][
        "forward"]


# -- Configuration and checks ----------------------------------------------------------------


def config_error(*overrides) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(None, list(overrides))
    return str(info.value)


def test_config_keys_and_errors():
    config = load_config(None)
    assert config.trial.frame_timeout == 0.0
    assert config.latency.to_dict() == {"timestamps": 500, "delay": 60.0}
    assert config.pdv.to_dict() == {"ipdv": False}
    assert config_error("trial.frame_timeout=-1") == \
        "trial.frame_timeout = -1: must be a number in [0, 3600]"
    assert config_error("latency.timestamps=0") == \
        "latency.timestamps = 0: must be an integer in 1..1000000"
    assert config_error("latency.delay=-0.5") == "latency.delay = -0.5: must be a number >= 0"
    assert config_error("pdv.ipdv=1") == "pdv.ipdv = 1: must be true or false"
    assert "unknown key in [latency]" in config_error("latency.tags=5")


def test_tagged_frames_must_fit_after_the_delay():
    assert foreground_frames(5000, 2.0) == 10000
    assert foreground_frames(5000, 2.0, 10, 9) == 9000
    assert foreground_frames(7, 1.0, 10, 9) == 7
    assert tagged_capacity(5000, 2.0, 0.5) == 7500
    assert tagged_capacity(1000, 3.0, 1.0, 2, 1) == 1000       # 1500 foreground, first 500
    config = load_config(None, ["trial.duration=2", "latency.delay=0.5"])
    check_latency_setup(config, 5000)
    check_latency_setup(load_config(None, ["trial.duration=2", "latency.delay=1.5",
                                           "latency.timestamps=500"]), 1000)  # exactly 500
    message = str(pytest.raises(ConfigError, check_latency_setup, config, 300).value)
    assert message.startswith("latency.timestamps = 500: must be at most 450: at 300 frames/s")
    assert "(duration - delay) x rate >= timestamps" in message
    # The defaults (60 s trials, tags after 60 s) cannot work: say what to set.
    message = str(pytest.raises(ConfigError, check_latency_setup, load_config(None), 1000).value)
    assert message.startswith("latency.delay = 60: must be below trial.duration = 60 s")
    assert "--duration 120" in message


def test_timestamp_method_text():
    hello = {"timestamps": {"software": "tsc", "resolution_ns": 0.476, "hardware": False}}
    assert timestamp_method(hello) == \
        "software TSC timestamps at burst boundaries, resolution 0.476 ns"
    assert "hardware" in timestamp_method({"timestamps": {"software": "tsc", "hardware": True}})


def test_rate_from_results(tmp_path):
    (tmp_path / "summary.json").write_text(json.dumps({"procedure": "throughput",
                                                       "median": 123456.5}))
    assert rate_from_results(tmp_path) == 123456
    (tmp_path / "summary.json").write_text(json.dumps({"procedure": "throughput",
                                                       "median": 0}))
    assert "no throughput was found" in str(pytest.raises(ConfigError, rate_from_results,
                                                          tmp_path).value)
    (tmp_path / "summary.json").write_text(json.dumps({"procedure": "pdv", "median": 1}))
    assert "not a throughput" in str(pytest.raises(ConfigError, rate_from_results,
                                                   tmp_path).value)
    assert "cannot read" in str(pytest.raises(ConfigError, rate_from_results,
                                              tmp_path / "missing").value)


# -- The procedures with the fake engine ------------------------------------------------------


FAKE = ["tester.netns=", "tester.hugepages=no", f"tester.engine={FAKE_ENGINE}", "left.port=null",
        "right.port=null", "trial.pause=0", "trial.duration=2", "latency.delay=0.5",
        "output.repeat=3"]


@pytest.fixture
def fake_env(monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.startswith("FAKE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("FAKE_REQUEST_LOG", str(tmp_path / "requests.log"))
    return tmp_path


def requests(tmp_path):
    return [json.loads(line) for line in (tmp_path / "requests.log").read_text().splitlines()
            if json.loads(line).get("op") == "trial"]


def test_latency_procedure(fake_env):
    out = fake_env / "lat"
    summary = run_procedure("latency", load_config(None, FAKE), out, rate=5000)
    assert summary["procedure"] == "latency" and summary["complete"] and summary["n"] == 3
    for request in requests(fake_env):
        assert request["delay"] == {"tagged": 500, "tagged_start": 0.5}
    # Fake delays 10000 + j ns for j = 0..499: TL = 10249.5 ns, WCL = the largest, 10499 ns.
    forward = summary["directions"]["forward"]
    assert forward["typical_latency"]["median"] == pytest.approx(0.0102495)
    assert forward["worst_case_latency"]["median"] == pytest.approx(0.010499)
    assert summary["median"] == pytest.approx(0.0102495)
    settings = summary["settings"]
    assert settings["rate"] == 5000 and settings["timestamps"] == 500
    assert settings["timestamp_method"] == \
        "software TSC timestamps at burst boundaries, resolution 0.5 ns"
    assert settings["loss_criterion"] == "global timeout 2 s"
    assert any("shorter than RFC 8219 §7.2's 120 s" in w for w in summary["warnings"])
    assert any("at least 20 repetitions" in w for w in summary["warnings"])
    records = read_trials(out)
    assert len(records) == 3
    assert records[0]["delay"]["forward"]["tagged"]["count"] == 500
    assert records[0]["latency"]["forward"]["tl_ns"] == 10249.5
    rep = summary["repetitions"][0]["directions"]["forward"]
    assert rep["tl_ms"] == pytest.approx(0.0102495) and rep["sent"] == 10000
    assert "delays_ns" not in json.dumps(summary)            # raw delays stay in trials.jsonl
    csv = (out / "summary.csv").read_text().splitlines()
    assert csv[0].startswith("repetition,rate,valid,loss_ratio,forward_tl_ms,forward_wcl_ms")
    json.loads((out / "summary.json").read_text())


def test_latency_with_lost_tags_reports_infinite_wcl(fake_env, monkeypatch):
    monkeypatch.setenv("FAKE_TAGGED_LOST", "2")
    summary = run_procedure("latency", load_config(None, FAKE + ["traffic.direction=forward"]),
                            fake_env / "lat", rate=5000)
    wcl = summary["directions"]["forward"]["worst_case_latency"]
    assert wcl["median"] is None and wcl["infinite"] == 3
    assert summary["directions"]["forward"]["lost_tagged"] == 6
    assert any("2 of 500 tagged frames" not in w and "6 of 1500 tagged frames were lost" in w
               for w in summary["warnings"])
    assert "Infinity" not in (fake_env / "lat" / "summary.json").read_text()
    assert "Infinity" not in (fake_env / "lat" / "trials.jsonl").read_text()


def test_latency_rejects_too_few_frames_after_the_delay(fake_env):
    with pytest.raises(ConfigError, match="latency.timestamps = 500: must be at most 450"):
        run_procedure("latency", load_config(None, FAKE), fake_env / "x", rate=300)
    with pytest.raises(ConfigError, match="latency needs a rate"):
        run_procedure("latency", load_config(None, FAKE), fake_env / "y")


def test_pdv_procedure(fake_env):
    out = fake_env / "pdv"
    summary = run_procedure("pdv", load_config(None, FAKE + ["pdv.ipdv=true"]), out, rate=5000)
    for request in requests(fake_env):
        assert request["delay"] == {"histogram": True, "ipdv": True}
    forward = summary["directions"]["forward"]
    assert forward["pdv"]["median"] == pytest.approx(0.00999)     # 1.999 D - D, D = 10 µs
    assert forward["ipdv"]["min"]["median"] == pytest.approx(-0.005)
    assert forward["ipdv"]["max"]["median"] == pytest.approx(0.005)
    assert summary["settings"]["ipdv"] is True
    records = read_trials(out)
    assert records[0]["delay"]["forward"]["histogram"]["buckets"]      # for CDF plots
    assert records[0]["pdv"]["forward"]["pdv_ns"] == pytest.approx(9990)


def test_frame_timeout_goes_to_every_trial_and_counts_late_frames(fake_env, monkeypatch):
    monkeypatch.setenv("FAKE_DELAY_NS", "5000")
    config = load_config(None, FAKE + ["output.repeat=1", "trial.frame_timeout=1e-6"])
    summary = run_procedure("trial", config, fake_env / "t", rate=1000)
    assert requests(fake_env)[-1]["delay"] == {"frame_timeout": 1e-6}
    assert summary["median"] == 1.0              # every frame later than 1 µs: all lost
    record = read_trials(fake_env / "t")[0]
    assert record["directions"]["forward"]["late"] == 2000
    assert summary["settings"]["loss_criterion"] == \
        "per-frame timeout 1e-06 s (within the global timeout 2 s)"
    config = load_config(None, FAKE + ["output.repeat=1", "trial.frame_timeout=1",
                                       "throughput.error=100000"])
    summary = run_procedure("throughput", config, fake_env / "tp")
    assert summary["median"] > 0
    assert all(r["delay"] == {"frame_timeout": 1.0} for r in requests(fake_env)[1:])
    assert read_trials(fake_env / "tp")[0]["directions"]["forward"]["late"] == 0
    # Without a frame timeout the request has no delay object and records no `late`.
    run_procedure("trial", load_config(None, FAKE + ["output.repeat=1"]), fake_env / "u",
                  rate=1000)
    assert "delay" not in requests(fake_env)[-1]
    assert "late" not in read_trials(fake_env / "u")[0]["directions"]["forward"]


def test_resume_keeps_the_delay_data(fake_env):
    out = fake_env / "lat"
    run_procedure("latency", load_config(None, FAKE), out, rate=5000)
    config = load_config(None, FAKE[:-1] + ["output.repeat=4"])
    summary = run_procedure("latency", config, out, rate=5000, resume=True)
    assert summary["n"] == 4 and len(requests(fake_env)) == 4
    assert summary["directions"]["forward"]["typical_latency"]["n"] == 4


def cli(*argv):
    done = subprocess.run([sys.executable, "-m", "xlatperf", *argv], capture_output=True,
                          text=True, timeout=60)
    return done.returncode, done.stdout, done.stderr


def test_cli_latency_and_pdv(fake_env):
    config = fake_env / "fake.toml"
    config.write_text(f'[tester]\nnetns = ""\nhugepages = "no"\nengine = "{FAKE_ENGINE}"\n'
                      '[left]\nport = "null"\n[right]\nport = "null"\n[trial]\npause = 0.0\n')
    status, out, err = cli("latency", "-c", str(config), "--rate", "5000", "--duration", "2",
                           "--set", "latency.delay=0.5", "--repeat", "2",
                           "--out", str(fake_env / "lat"))
    assert status == 0, err
    # The fake engine's tagged frame j is 10,000 + j ns late: TL (median of 500) 10,249.5 ns.
    assert "TL" in out and "WCL" in out and "0.0102495" in out and "resolution 0.5 ns" in out
    status, out, err = cli("latency", "-c", str(config), "--out", str(fake_env / "x"))
    assert status == 2 and err == \
        "xlatperf: error: one of the arguments --rate --rate-from is required\n"
    status, out, err = cli("latency", "-c", str(config), "--rate", "5000", "--out",
                           str(fake_env / "y"), "-q")
    assert status == 1 and err.startswith("xlatperf: error: latency.delay = 60: must be below "
                                          "trial.duration = 60 s") and err.count("\n") == 1
    (fake_env / "tp").mkdir()
    (fake_env / "tp" / "summary.json").write_text(json.dumps({"procedure": "throughput",
                                                              "median": 4000}))
    status, out, err = cli("pdv", "-c", str(config), "--rate-from", str(fake_env / "tp"),
                           "--duration", "1", "--set", "pdv.ipdv=true",
                           "--out", str(fake_env / "pdv"))
    assert status == 0, err
    assert "PDV" in out and "IPDV median" in out
    summary = json.loads((fake_env / "pdv" / "summary.json").read_text())
    assert summary["settings"]["rate"] == 4000


def test_json_progress_leaves_the_raw_delay_data_to_trials_jsonl(fake_env):
    import io

    from xlatperf.ui.progress import JsonLinesReporter
    stream = io.StringIO()
    run_procedure("pdv", load_config(None, FAKE + ["output.repeat=1"]), fake_env / "p",
                  rate=5000, reporter=JsonLinesReporter(stream))
    (trial,) = [json.loads(line) for line in stream.getvalue().splitlines()
                if json.loads(line)["event"] == "trial"]
    assert "delay" not in trial and trial["pdv"]["forward"]["pdv_ns"] > 0
    assert "delay" in read_trials(fake_env / "p")[0]
