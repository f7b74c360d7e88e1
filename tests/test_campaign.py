# SPDX-License-Identifier: BSD-3-Clause
"""Campaign expansion, resume bookkeeping (ResultStore, run_procedure(resume=True)), adaptive
repetitions and the campaign CLI, with tests/fake_engine.py standing in for the engine."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from xlatperf.config.loading import load_config
from xlatperf.measure.session import Reporter
from xlatperf.measure.store import ResultStore, read_trials
from xlatperf.run.campaign import run_campaign
from xlatperf.run.campaignfile import load_campaign, parse_campaign, point_id
from xlatperf.run.campaignstatus import campaign_status, format_status
from xlatperf.run.runner import run_procedure
from xlatperf.util.errors import ConfigError, EngineError, MeasurementError

ROOT = Path(__file__).resolve().parents[1]
@pytest.fixture
def base(fake_config):
    return fake_config


def campaign_file(tmp_path, text: str) -> Path:
    path = tmp_path / "campaign.toml"
    path.write_text(text)
    return path


# --------------------------------------------------------------------------------------------
# Expansion
# --------------------------------------------------------------------------------------------


def test_cross_product_in_file_order_with_procedures_outermost(base, tmp_path):
    campaign = load_campaign(campaign_file(tmp_path, """
[campaign]
config = "base.toml"
procedures = ["throughput", "frame-loss"]
repeat = 3
[set]
trial.duration = 0.5
[axes]
"traffic.frame_size" = [64, 128, 1518]
traffic.direction = ["forward", "reverse"]
"""))
    assert len(campaign.points) == 2 * 3 * 2
    first = campaign.points[0]
    assert (first.procedure, first.assignments) == (
        "throughput", {"traffic.frame_size": 64, "traffic.direction": "forward"})
    assert campaign.points[1].assignments["traffic.direction"] == "reverse"
    assert campaign.points[6].procedure == "frame-loss"
    assert [p.index for p in campaign.points] == list(range(1, 13))
    config = campaign.config_for(campaign.points[5])
    assert config.traffic.frame_size == 1518 and config.traffic.direction == "reverse"
    assert config.trial.duration == 0.5 and config.output.repeat == 3
    assert len({p.id for p in campaign.points}) == 12


def test_linked_axes_listed_points_and_trial_rates(base, tmp_path):
    campaign = load_campaign(campaign_file(tmp_path, """
[campaign]
config = "base.toml"
procedures = ["trial"]
[axes]
mix = [{"traffic.mix_n" = 1, "traffic.mix_m" = 1}, {traffic = {mix_n = 10, mix_m = 9}}]
rate = [1000, 2000]
[[points]]
"traffic.frame_size" = 84
[[points]]
"traffic.frame_size" = 1518
rate = 500
"""))
    # 2 listed points x 2 mixes x 2 rates; an axis rate wins over a listed one.
    assert len(campaign.points) == 8
    point = campaign.points[3]
    assert point.assignments == {"traffic.frame_size": 84, "traffic.mix_n": 10,
                                 "traffic.mix_m": 9}
    assert point.rate == 2000 and point.labels["mix"] == "9/10"
    assert campaign.config_for(point).traffic.mix_m == 9


def test_ids_are_stable_and_distinct():
    a = point_id("throughput", {"traffic.frame_size": 64}, None)
    assert a == point_id("throughput", {"traffic.frame_size": 64}, None)
    assert a != point_id("throughput", {"traffic.frame_size": 65}, None)
    assert a.startswith("throughput_frame_size-64_")


@pytest.mark.parametrize("text, message", [
    ('[axes]\n"traffic.frame_siz" = [64]', "'traffic.frame_siz' is not a configuration key"),
    ('[axes]\n"traffic.frame_size" = 64', "an axis must be a non-empty list"),
    ('[campaign]\nprocedures = ["latency"]', "campaign.procedures"),
    ('[campaign]\nrepeats = 3', "campaign.repeats: unknown key"),
    ('[sweep]\nx = 1', "unknown table"),
    ('[axes]\nrate = [0]', "must be a positive integer"),
    ('[[points]]\n"traffic.frame_size" = 64\n[axes]\n"traffic.frame_size" = [64]',
     "set both by"),
    ('[[points]]\n"traffic.frame_size" = 64\n[[points]]\n"traffic.frame_size" = 64',
     "occurs twice"),
])
def test_bad_campaigns_are_named(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_campaign(__import__("tomllib").loads(text))


def test_stateful_procedures_are_campaign_procedures():
    campaign = parse_campaign({"campaign": {"procedures": [
        "connection-rate", "teardown-rate", "table-capacity"]},
        "axes": {"stateful.connections": [1000, 2000]}})
    assert [p.procedure for p in campaign.points] == [
        "connection-rate", "connection-rate", "teardown-rate", "teardown-rate",
        "table-capacity", "table-capacity"]
    assert all(p.rate is None for p in campaign.points)
    with pytest.raises(ConfigError, match="connection-rate, teardown-rate, table-capacity"):
        parse_campaign({"campaign": {"procedures": ["connection_rate"]}})


def test_a_bad_combination_is_reported_before_measuring(base, tmp_path):
    path = campaign_file(tmp_path, """
[campaign]
config = "base.toml"
[axes]
"traffic.frame_size" = [84, 40]
""")
    with pytest.raises(ConfigError, match=r"point 2 \(throughput traffic.frame_size=40\): "
                                          r"traffic.frame_size = 40"):
        load_campaign(path)


# --------------------------------------------------------------------------------------------
# Resume bookkeeping
# --------------------------------------------------------------------------------------------


def _trial(repetition, step, **extra):
    return {"procedure": "throughput", "repetition": repetition, "step": step, "rate": 1000,
            "valid": True, "directions": {}, "timestamp": f"t{repetition}.{step}", **extra}


def test_result_store_keeps_finished_repetitions_and_moves_the_rest(tmp_path):
    with ResultStore(tmp_path) as store:
        for step in (1, 2):
            store.record_trial(_trial(1, step))
        store.finish_repetition(1, 2)
        store.record_trial(_trial(2, 1))
        store.record_trial(_trial(2, 2, aborted=True))
    with open(tmp_path / "trials.jsonl", "a") as stream:
        stream.write('{"torn": ')                       # a crash in the middle of a line
    with ResultStore(tmp_path, resume=True) as store:
        assert sorted(store.finished) == [1] and len(store.finished[1]) == 2
        assert store.moved_to_incomplete == 2
        store.record_trial(_trial(2, 1))
        store.finish_repetition(2, 1)
    assert [(t["repetition"], t["step"]) for t in read_trials(tmp_path)] == [(1, 1), (1, 2), (2, 1)]
    moved = read_trials(tmp_path / "incomplete")
    assert [(t["repetition"], t.get("aborted", False)) for t in moved] == [(2, False), (2, True)]
    # Resuming again moves nothing twice and keeps both repetitions.
    with ResultStore(tmp_path, resume=True) as store:
        assert sorted(store.finished) == [1, 2] and store.moved_to_incomplete == 0
    assert len(read_trials(tmp_path / "incomplete")) == 2
    # A marker whose trial count does not match (lost trial) makes the repetition unfinished.
    (tmp_path / "repetitions.jsonl").write_text('{"repetition": 1, "trials": 3}\n')
    with ResultStore(tmp_path, resume=True) as store:
        assert store.finished == {}


class InterruptAt(Reporter):
    """Raises KeyboardInterrupt (a Ctrl-C) when the n-th trial has been recorded."""

    def __init__(self, n):
        self.n, self.seen = n, 0

    def after_trial(self, record, result):
        self.seen += 1
        if self.seen == self.n:
            raise KeyboardInterrupt


def test_run_procedure_resumes_by_repetition(base, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_DUT_LIMIT", "3000000")
    config = load_config(str(base), ["output.repeat=3"])
    clean = run_procedure("throughput", config, tmp_path / "clean")
    trials_per_repetition = len(clean["repetitions"][0]["steps"])
    out = tmp_path / "resumed"
    with pytest.raises(KeyboardInterrupt):
        run_procedure("throughput", config, out,
                      reporter=InterruptAt(trials_per_repetition + 3))
    interrupted = json.loads((out / "summary.json").read_text())
    assert not interrupted["complete"] and interrupted["n"] == 1
    summary = run_procedure("throughput", config, out, resume=True)
    assert summary["complete"] and summary["n"] == 3
    assert summary["resumed"] == {"repetitions": 1, "incomplete_trials": 3}
    for key in ("median", "p1", "p99", "min", "max"):
        assert summary[key] == clean[key]
    trials = read_trials(out)
    assert len(trials) == 3 * trials_per_repetition
    assert len({(t["repetition"], t["step"]) for t in trials}) == len(trials)
    assert len(read_trials(out / "incomplete")) == 3
    # Resuming a finished run measures nothing more; another configuration is refused.
    again = run_procedure("throughput", config, out, resume=True)
    assert again["n"] == 3 and len(read_trials(out)) == len(trials)
    other = load_config(str(base), ["output.repeat=3", "traffic.frame_size=128"])
    with pytest.raises(ConfigError, match="traffic.frame_size = 64, now 128: cannot resume"):
        run_procedure("throughput", other, out, resume=True)


def test_adaptive_repetitions_with_the_fake_engine(base, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_DUT_LIMIT", "3000000")
    config = load_config(str(base), ["output.repeat=3", "output.repeat_max=12"])
    summary = run_procedure("throughput", config, tmp_path / "a")
    # Identical results: the 95 % median interval exists from 6 results on, and is [x, x].
    assert summary["n"] == 6
    rule = summary["repetition_rule"]
    assert rule["stopped"] == "consistent" and rule["minimum"] == 3 and rule["maximum"] == 12
    assert rule["interval"] == [summary["median"], summary["median"]]


# --------------------------------------------------------------------------------------------
# run_campaign with a stand-in for run_procedure
# --------------------------------------------------------------------------------------------


def test_run_campaign_skips_finished_points_and_records_failures(base, tmp_path):
    campaign = load_campaign(campaign_file(tmp_path, """
[campaign]
config = "base.toml"
procedures = ["trial"]
rate = 1000
[axes]
"traffic.frame_size" = [64, 128, 256]
"""))
    calls = []

    def fake_run(procedure, config, out_dir, *, rate, reporter, engine_path, resume):
        calls.append(config.traffic.frame_size)
        assert resume and rate == 1000
        if config.traffic.frame_size == 128 and len(calls) < 4:
            raise EngineError("engine exited with status 1: no such interface")
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "summary.json").write_text(json.dumps(
            {"procedure": procedure, "complete": True, "unit": "ratio", "median": 0.0, "n": 1,
             "config": config.to_dict()}))
        return {}

    with pytest.raises(MeasurementError, match=r"1 of 3 points failed .*point 2"):
        run_campaign(campaign, tmp_path / "out", run=fake_run)
    status = campaign_status(tmp_path / "out")
    assert [p["state"] for p in status["points"]] == ["done", "failed", "done"]
    assert "no such interface" in format_status(status)
    run_campaign(campaign, tmp_path / "out", run=fake_run)
    assert calls == [64, 128, 256, 128]
    assert campaign_status(tmp_path / "out")["counts"]["done"] == 3
    csv = (tmp_path / "out" / "results.csv").read_text().splitlines()
    assert len(csv) == 4 and csv[0].startswith("index,procedure,state,traffic.frame_size")


# --------------------------------------------------------------------------------------------
# The CLI, interrupted and resumed (fake engine)
# --------------------------------------------------------------------------------------------


def _all_trials(out: Path) -> dict[str, list[str]]:
    found = {}
    for point in sorted((out / "points").iterdir()):
        path = point / "trials.jsonl"
        found[point.name] = path.read_text().splitlines() if path.exists() else []
    return found


def _wait_for_trials(out: Path, count: int, process, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (out / "points").exists() and \
                sum(len(v) for v in _all_trials(out).values()) >= count:
            return
        if process.poll() is not None:
            raise AssertionError(f"campaign ended early: {process.communicate()}")
        time.sleep(0.05)
    raise AssertionError("no progress")


def test_cli_campaign_interrupted_twice_then_finished(base, tmp_path):
    path = campaign_file(tmp_path, """
[campaign]
config = "base.toml"
procedures = ["trial"]
repeat = 3
rate = 100000
[set]
"trial.duration" = 1.0
[axes]
"traffic.frame_size" = [64, 1518]
"traffic.direction" = ["forward", "reverse"]
""")
    out = tmp_path / "out"
    env = {**os.environ, "FAKE_TRIAL_SECONDS": "0.2"}
    command = [sys.executable, "-m", "xlatperf", "campaign", "run", str(path), "--out",
               str(out), "-q"]
    seen: set[tuple[str, str]] = set()
    for stop, after in ((signal.SIGINT, 4), (signal.SIGKILL, 8)):
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, cwd=ROOT)
        _wait_for_trials(out, after, process)
        time.sleep(0.1)    # into the next trial
        process.send_signal(stop)
        _, err = process.communicate(timeout=30)
        assert process.returncode == (130 if stop == signal.SIGINT else -9), err
        seen |= {(p, line) for p, lines in _all_trials(out).items() for line in lines}
        status = subprocess.run([sys.executable, "-m", "xlatperf", "campaign", "status",
                                 str(out)], capture_output=True, text=True, cwd=ROOT)
        assert status.returncode == 0 and "pending" in status.stdout
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    final = _all_trials(out)
    assert len(final) == 4
    for point, lines in final.items():
        records = [json.loads(line) for line in lines]
        assert sorted(r["repetition"] for r in records) == [1, 2, 3]
        assert not any(r.get("aborted") for r in records)
        summary = json.loads((out / "points" / point / "summary.json").read_text())
        assert summary["complete"] and summary["n"] == 3
    # Nothing that was recorded was lost: it is in the results or in incomplete/.
    for point, line in seen:
        incomplete = out / "points" / point / "incomplete" / "trials.jsonl"
        kept = incomplete.read_text().splitlines() if incomplete.exists() else []
        assert line in final[point] or line in kept
    aborted = [json.loads(line) for point in final
               for line in ((out / "points" / point / "incomplete" / "trials.jsonl").read_text()
                            .splitlines() if (out / "points" / point / "incomplete").exists()
                            else [])]
    assert any(r.get("aborted") for r in aborted)   # the Ctrl-C'd trial was kept, marked
    status = campaign_status(out)
    assert status["counts"] == {"done": 4, "partial": 0, "failed": 0, "pending": 0}


def test_cli_json_progress_and_statistics_log(base, tmp_path):
    env = {**os.environ, "FAKE_TRIAL_SECONDS": "1.2", "FAKE_DUT_LIMIT": "3000000"}
    done = subprocess.run([sys.executable, "-m", "xlatperf", "trial", "-c", str(base),
                           "--rate", "1000", "--repeat", "2", "--json", "--out",
                           str(tmp_path / "j")], env=env, capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "started" and kinds[-1] == "finished"
    assert kinds.count("trial") == 2 and kinds.count("repetition") == 2 and "progress" in kinds
    assert events[-1]["complete"] and events[-1]["n"] == 2
    logged = subprocess.run([sys.executable, "-m", "xlatperf", "trial", "-c", str(base),
                             "--rate", "1000", "--log-interval", "0.5", "--out",
                             str(tmp_path / "l")], env=env, capture_output=True, text=True,
                            cwd=ROOT, timeout=60)
    assert logged.returncode == 0, logged.stderr
    log_lines = [line for line in logged.stdout.splitlines() if "rate 1,000 fps" in line
                 and "elapsed" in line]
    assert log_lines, logged.stdout
