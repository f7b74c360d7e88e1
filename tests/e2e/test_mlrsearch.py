# SPDX-License-Identifier: BSD-3-Clause
"""MLRsearch end to end (issue 7): against the `limit` DUT with a known rate, the rfc2544
preset and the classic binary search agree within the width; every trial of the search is in
trials.jsonl with its duration, loss and classification; the report states mode, goals and
deviations."""

import os
import time

import pytest

from xlatperf import lab
from xlatperf.config.loading import load_config
from xlatperf.measure.store import read_trials
from xlatperf.run.runner import run_procedure

LIMIT = 20000
WIDTH = 200
# Short trials (the preset's final trial duration follows trial.duration) and a short timeout.
COMMON = ["trial.duration=2", "trial.timeout=0.5", f"throughput.error={WIDTH}",
          f"throughput.max_rate={2 * LIMIT}"]
ATTEMPTS = 2   # a busy 2-core machine can make the tester miss its send deadline: retry once


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
def test_rfc2544_preset_agrees_with_binary_search_on_limit(exclusive_lab, tmp_path):
    config_path = str(tmp_path / "limit.toml")
    try:
        lab.lab_up("limit", {"rate": str(LIMIT)}, config_path)
        for _ in range(ATTEMPTS):
            started = time.monotonic()
            binary = run_procedure("throughput", load_config(config_path, COMMON),
                                   str(tmp_path / "binary"))
            binary_wall = time.monotonic() - started
            started = time.monotonic()
            mlr = run_procedure("throughput", load_config(
                config_path, COMMON + ["throughput.mode=mlrsearch",
                                       "throughput.preset=rfc2544,ndr-pdr"]),
                str(tmp_path / "mlr"))
            mlr_wall = time.monotonic() - started
            if not binary["tester_limited"] and not mlr["tester_limited"]:
                break
    finally:
        lab.lab_down()
    print(f"wall time: binary {binary_wall:.1f} s, mlrsearch (rfc2544+ndr-pdr) {mlr_wall:.1f} s")

    assert binary["complete"] and mlr["complete"]
    assert not binary["tester_limited"] and not mlr["tester_limited"]
    rfc, ndr, pdr = mlr["goals"]
    assert [g["name"] for g in (rfc, ndr, pdr)] == ["rfc2544", "ndr", "pdr"]
    assert rfc["label"] == "2f2d0l0e" and pdr["loss_ratio"] == 0.005
    assert all(g["regular"] for g in (rfc, ndr, pdr)), mlr["goals"]
    # Agreement: each search brackets the DUT's boundary within one width, but a real DUT's
    # boundary moves a little between trials (the token bucket lets up to 50 ms of frames
    # through on top of the rate, depending on its state: up to 2.5 % at 2 s), so the two
    # results may lie on either side of it: at most two widths apart. (On deterministic
    # simulated DUTs tests/test_mlrsearch_logic.py asserts equality within one width.)
    assert abs(rfc["median"] - binary["median"]) <= 2 * WIDTH, (rfc, binary["median"])
    for value in (rfc["median"], binary["median"]):
        assert 0.97 * LIMIT <= value <= 1.06 * LIMIT
    assert rfc["relevant_upper_bound"]["median"] - rfc["median"] <= WIDTH
    assert ndr["median"] >= rfc["median"] - WIDTH and pdr["median"] >= ndr["median"] - WIDTH

    # The report: mode, every goal attribute, deviations from RFC 2544's trial procedure.
    settings = mlr["settings"]
    assert settings["mode"] == "mlrsearch" and binary["settings"]["mode"] == "binary"
    for goal in settings["goals"]:
        for key in ("loss_ratio", "exceed_ratio", "final_trial_duration", "duration_sum",
                    "width", "width_unit", "initial_trial_duration"):
            assert key in goal
    assert any("final trials of 2 s" in d for d in settings["deviations"])
    assert any("2 s" in d for d in binary["settings"]["deviations"])

    # The search trace: every trial with load, duration, loss and each goal's class after it.
    # (a trial taken again, its sender held up on a busy host, is recorded as retaken: no step)
    records = [r for r in read_trials(tmp_path / "mlr") if r.get("phase") != "learning" and not r.get("retaken")]
    assert len(records) == len(mlr["repetitions"][0]["steps"])
    # 1 s initial trials are not worth it against 2 s final ones: the first trial is at the
    # maximum load with the final duration; an upper bound of ndr/pdr (exceed 0.5 over two
    # final trials) is decided by one trial of final + initial duration (3 s).
    assert records[0]["rate"] == 2 * LIMIT and records[0]["duration"] == 2.0
    assert {r["duration"] for r in records} <= {2.0, 3.0}
    assert 2.0 in {r["duration"] for r in records}
    for record in records:
        assert record["loss_ratio"] is not None
        assert set(record["mlrsearch"]["goals"]) == {"rfc2544", "ndr", "pdr"}
        assert {g["class"] for g in record["mlrsearch"]["goals"].values()} <= \
            {"lower", "upper", "undecided"}
