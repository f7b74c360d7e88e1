# SPDX-License-Identifier: BSD-3-Clause
"""Issue 11 finding 7: a phase 1 whose state table did not fill is taken again (siitperf's
binary-rate-alg.sh-sf retakes it) instead of failing the step and pushing a search down;
every attempt is recorded, so a resumed run derives the same summary; and the establishment
procedures validate D after phase 1 started, as siitperf's cttc.sh does."""

import json

import pytest
from test_stateful import fake_config

from xlatperf.measure.session import Reporter
from xlatperf.measure.store import read_trials
from xlatperf.run.runner import run_procedure

SEARCH = ("throughput.max_rate=1000000", "throughput.error=50000")


def hooks(out) -> list[dict]:
    return [json.loads(line) for line in (out / "hooks.jsonl").read_text().splitlines()]


def test_a_failed_fill_is_retaken_and_the_search_is_not_pushed_down(fake, monkeypatch):
    monkeypatch.setenv("FAKE_DUT_LIMIT", "300000")
    clean = run_procedure("throughput", fake_config(*SEARCH), fake / "clean")
    # The first two phase-1 trials (both of the first step) lose half their frames.
    monkeypatch.setenv("FAKE_FILL_FAILURES", "2")
    out = fake / "retaken"
    summary = run_procedure("throughput", fake_config(*SEARCH), out)
    assert summary["median"] == clean["median"] and 250_000 <= summary["median"] <= 300_000
    records = read_trials(out)
    first = [r for r in records if r["step"] == 1]
    assert [(r.get("phase"), r.get("attempt")) for r in first] == [
        ("phase1", 1), ("phase1", 2), ("phase1", 3), (None, None)]
    assert [r["state_table"]["entries"] for r in first[:3]] == [5000, 5000, 10000]
    # The DUT's table is emptied before every attempt.
    assert [(h["step"], h.get("attempt")) for h in hooks(out)][:3] == [(1, None), (1, 2), (1, 3)]
    assert summary["settings"]["stateful"]["retakes"] == 2
    # Resuming the finished run derives the same summary from the records.
    again = run_procedure("throughput", fake_config(*SEARCH), out, resume=True)
    assert again["median"] == summary["median"]
    assert again["repetitions"] == summary["repetitions"]


def test_retakes_are_bounded_and_the_step_then_invalid(fake, monkeypatch):
    monkeypatch.setenv("FAKE_FILL_FAILURES", "100")
    out = fake / "trial"
    summary = run_procedure("trial", fake_config("stateful.retakes=1"), out, rate=1000)
    (step,) = summary["repetitions"]
    assert step["valid"] is False
    assert step["invalid_reason"] == ("failed to fill state table: 5,000 of 10,000 entries "
                                      "(the last of 2 attempts, stateful.retakes = 1)")
    assert [r.get("phase") for r in read_trials(out)] == ["phase1", "phase1", None]
    assert read_trials(out)[-1]["phase2"] == "not run"


def test_a_phase1_the_tester_could_not_send_is_retaken_too(fake, monkeypatch):
    """Frames the tester did not send are tuples phase 2 would open (the engine cuts a late
    sender off); in a phase-2 procedure R is only a safe rate, so phase 1 is taken again."""
    monkeypatch.setenv("FAKE_TESTER_LIMIT", "50000")  # phase 1 at 100,000 fps: invalid
    out = fake / "trial"
    summary = run_procedure("trial", fake_config(), out, rate=1000)
    (step,) = summary["repetitions"]
    reason = step["invalid_reason"]
    assert reason.startswith("phase 1: ") and "sending took longer than duration" in reason
    assert reason.endswith(" (the last of 3 attempts, stateful.retakes = 2)"), reason
    assert [r.get("attempt") for r in read_trials(out)] == [1, 2, 3, None]


def test_no_retakes_when_set_to_zero(fake, monkeypatch):
    monkeypatch.setenv("FAKE_FILL_FAILURES", "1")
    out = fake / "trial"
    summary = run_procedure("trial", fake_config("stateful.retakes=0"), out, rate=1000)
    assert summary["repetitions"][0]["invalid_reason"] == \
        "failed to fill state table: 5,000 of 10,000 entries"
    assert [r.get("phase") for r in read_trials(out)] == ["phase1", None]


def test_retakes_key_range_is_checked():
    from xlatperf.config.loading import load_config
    from xlatperf.util.errors import ConfigError
    with pytest.raises(ConfigError) as err:
        load_config(None, ["stateful.retakes=-1"])
    assert "stateful.retakes" in str(err.value) and "0..100" in str(err.value)


def test_teardown_rate_retakes_a_failed_load(fake, monkeypatch):
    monkeypatch.setenv("FAKE_FILL_FAILURES", "1")
    out = fake / "teardown"
    summary = run_procedure("teardown-rate", fake_config(), out)
    (rep,) = summary["repetitions"]
    assert rep["loaded"] and rep["load_attempts"] == 2 and rep["full_seconds"] >= 0.02
    phases = [(r["step"], r["phase"]) for r in read_trials(out)]
    assert phases == [(1, "phase1"), (2, "phase1"), (2, "validation"), (2, "teardown")]
    again = run_procedure("teardown-rate", fake_config(), out, resume=True)
    assert again["repetitions"] == summary["repetitions"]


class Timeline(Reporter):
    def __init__(self):
        self.events = []

    def before_trial(self, context):
        if context.get("phase"):
            self.events.append(context["phase"])

    def pausing(self, seconds):
        self.events.append(seconds)


def test_connection_rate_validates_d_after_phase1(fake, monkeypatch):
    """cttc.sh: phase 1 at r, then the validation phase 2 from D = N/r + 2T (T = 0.25 s)."""
    monkeypatch.setenv("FAKE_CONN_RATE", "150000")
    timeline = Timeline()
    summary = run_procedure("connection-rate", fake_config(
        "stateful.max_rate=200000", "stateful.error=100000", "stateful.timeout_phase1=0.25"),
        fake / "cps", reporter=timeline)
    steps = summary["repetitions"][0]["steps"]
    assert [(s["rate"], s["passed"]) for s in steps] == [(200000, False), (100000, True)]
    # 10,000 connections at 100,000 fps: D = 0.1 + 0.5 s after phase 1 started.
    *_, phase1, pause, validation = timeline.events
    assert (phase1, validation) == ("phase1", "validation") and 0.5 < pause <= 0.6
    assert summary["settings"]["stateful"]["validation_start"] == "D after phase 1 started"
