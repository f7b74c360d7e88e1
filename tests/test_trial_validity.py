# SPDX-License-Identifier: BSD-3-Clause
"""Issue 17, findings 1-3 and 8 through the measurer and the fake engine: a trial invalid by
the tester's doing is taken again (trial.retakes), every attempt recorded; the pacing rule
(trial.validity, trial.max_lag) and the lag are in every record; the tester's own drops make a
trial invalid; an aborted trial is recorded with the running request's duration."""

import json
import os
import signal
import subprocess
import sys
import time

from xlatperf.config import load_config
from xlatperf.engine.protocol import TrialResult, frames_dropped_by_tester
from xlatperf.measure.peer_drops import VethPeer, VethPeers, with_peer_drops
from xlatperf.measure.store import read_trials
from xlatperf.report.collect import collect
from xlatperf.report.families.base import refused_warnings
from xlatperf.run import run_procedure


def test_a_hiccup_is_taken_again_and_both_attempts_are_recorded(fake_config, tmp_path,
                                                                  monkeypatch):
    """Finding 1/2: the sender fell 5 ms behind once (trial.max_lag 1 ms): the attempt is
    invalid, with its lag and lagged frames; the retake passes and is the step."""
    monkeypatch.setenv("FAKE_HICCUPS", "1:0.005:0.5")
    config = load_config(str(fake_config), ["output.repeat=1"])
    summary = run_procedure("trial", config, tmp_path / "t", rate=1_000_000)
    first, second = read_trials(tmp_path / "t")
    assert first["retaken"] is True and not first["valid"]
    assert first["invalid_reason"].startswith("tester could not keep the rate: flow forward "
                                              "fell 5.000 ms behind")
    assert first["max_lag"] == 0.001
    assert first["directions"]["forward"]["max_lag_us"] == 5000.0
    assert first["directions"]["forward"]["lagged"] == 4000    # (5 - 1) ms x 1 Mfps
    assert second["valid"] and second["attempt"] == 2 and "retaken" not in second
    (earlier,) = second["earlier_attempts"]
    assert earlier["attempt"] == 1 and earlier["max_lag_us"] == 5000.0
    assert summary["invalid"] == 0 and summary["n"] == 1


def test_retakes_are_bounded_and_the_last_attempt_stays_invalid(fake_config, tmp_path,
                                                                monkeypatch):
    monkeypatch.setenv("FAKE_HICCUPS", "9:0.005:0.5")
    config = load_config(str(fake_config), ["output.repeat=1", "trial.retakes=1"])
    summary = run_procedure("trial", config, tmp_path / "t", rate=1_000_000)
    trials = read_trials(tmp_path / "t")
    assert [t.get("retaken", False) for t in trials] == [True, False]
    assert not trials[-1]["valid"] and summary["invalid"] == 1


def test_the_siitperf_rule_fails_a_hiccup_at_the_end_the_schedule_rule_tolerates(
        fake_config, tmp_path, monkeypatch):
    """Finding 2: 30 µs late at the very end of a 2 s trial (within trial.max_lag) is a valid
    trial by the schedule; siitperf's end-time rule (20 µs) fails it."""
    for rule, valid in (("schedule", True), ("siitperf", False)):
        monkeypatch.setenv("FAKE_HICCUPS", "1:0.00003")
        config = load_config(str(fake_config), ["output.repeat=1", "trial.duration=2",
                                                f"trial.validity={rule}", "trial.retakes=0"])
        run_procedure("trial", config, tmp_path / rule, rate=1_000_000)
        (record,) = read_trials(tmp_path / rule)
        assert record["valid"] is valid, rule
        assert ("max_lag" in record) is (rule == "schedule")


def test_frames_the_tester_dropped_itself_make_the_trial_invalid(fake_config, tmp_path,
                                                                 monkeypatch):
    """Finding 3: the receiving port missed 500 frames (imissed): not the DUT's loss."""
    monkeypatch.setenv("FAKE_TESTER_DROPS", "1:500")
    config = load_config(str(fake_config), ["output.repeat=1", "traffic.direction=forward"])
    summary = run_procedure("trial", config, tmp_path / "t", rate=1_000_000)
    first, second = read_trials(tmp_path / "t")
    assert first["retaken"] and first["invalid_reason"].startswith("tester dropped frames: "
                                                                   "port 1 missed 500")
    assert first["port_drops"]["1"]["imissed"] == 500
    assert first["directions"]["forward"]["received"] == first["directions"]["forward"]["sent"] - 500
    assert second["valid"] and summary["median"] == 0.0


def test_a_trial_whose_link_went_down_is_invalid_and_taken_again(fake_config, tmp_path, monkeypatch):
    """A link that went down during a trial (the engine polls the links): its losses are the
    link's, neither the DUT's nor a pass; the trial is taken again."""
    monkeypatch.setenv("FAKE_LINK_FLAPS", "1")
    config = load_config(str(fake_config), ["output.repeat=1", "traffic.direction=forward"])
    run_procedure("trial", config, tmp_path / "t", rate=1000)
    first, second = read_trials(tmp_path / "t")
    assert first["retaken"] and not first["valid"]
    assert first["invalid_reason"] == "link down during the trial on port 1 (1 time)"
    assert second["valid"] and "retaken" not in second


def test_pause_frames_the_dut_sent_are_recorded(fake_config, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_PAUSE_FRAMES", "7")
    config = load_config(str(fake_config), ["output.repeat=1", "traffic.direction=forward"])
    run_procedure("trial", config, tmp_path / "t", rate=1000)
    (record,) = read_trials(tmp_path / "t")
    assert record["valid"] and record["pause_received"] == {"1": {"rx_xoff_packets": 7}}
    (entry,) = collect(tmp_path / "t")
    assert any(w.startswith("7 pause frames (IEEE 802.3x / PFC) arrived on the right port: the DUT asked")
               for w in refused_warnings(entry))


def test_an_aborted_trial_is_recorded_with_its_own_duration(fake_config, tmp_path):
    """Finding 8: MLRsearch's first trial is 1 s long (throughput.initial_duration), not
    trial.duration (60 s): interrupted, its record has the running request's duration."""
    out, log = tmp_path / "mlr", tmp_path / "requests.jsonl"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("FAKE_")},
           "FAKE_DUT_LIMIT": "3000000", "FAKE_TRIAL_SECONDS": "5",
           "FAKE_REQUEST_LOG": str(log)}
    process = subprocess.Popen(
        [sys.executable, "-m", "xlatperf", "throughput", "-c", str(fake_config), "--out",
         str(out), "-q", "--set", "throughput.mode=mlrsearch", "--set", "trial.duration=60"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not (out / "trials.jsonl").exists():
        time.sleep(0.05)
    time.sleep(0.5)     # the first trial is running (5 s of fake trial)
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=30)
    (aborted,) = [t for t in read_trials(out) if t.get("aborted")]
    running = [json.loads(line) for line in log.read_text().splitlines()
               if json.loads(line).get("op") == "trial"][-1]
    assert aborted["duration"] == running["duration"] != 60
    assert json.loads((out / "summary.json").read_text())["complete"] is False


def test_the_measurer_protocol_is_what_the_session_and_its_views_offer():
    """Issue 17's structure: procedures call a declared Measurer; TrialSession implements it,
    and its views (RFC 9693's phase 1 before each trial, the scalability procedure's per-n view)
    are measurers that change some members and take the rest from the session (MeasurerView:
    nothing forwarded by hand that could drift). Issue 30: a trial is one TrialSpec."""
    import inspect

    from xlatperf.measure.measurer import Measurer, MeasurerView
    from xlatperf.measure.session import TrialSession
    from xlatperf.measure.stateful import Phase2Measurer
    from xlatperf.procedures.scalability import _ClientsSession

    declared = {name for name, _ in inspect.getmembers(Measurer)
                if not name.startswith("_")}
    assert Measurer in TrialSession.__mro__
    for name in declared:
        assert getattr(TrialSession, name) is not getattr(Measurer, name), name
    session = TrialSession.__new__(TrialSession)   # the members are what is checked, no engine
    session.engine = None
    views = (Phase2Measurer(session, test=None), _ClientsSession(session, None, 1, []))
    for view in views:
        assert isinstance(view, MeasurerView) and isinstance(view, Measurer)
        assert type(view).run_trial is not TrialSession.run_trial   # what the view changes
        assert view.begin_step == session.begin_step             # the rest: the session's
    signature = inspect.signature(Measurer.run_trial)
    for implementation in (TrialSession, Phase2Measurer, _ClientsSession):
        assert inspect.signature(implementation.run_trial).parameters.keys() == signature.parameters.keys()


def test_an_af_xdp_ports_overlapping_counters_are_counted_once():
    """On a veth the kernel interface's rx_dropped counts every frame the AF_XDP socket could
    not take, those DPDK's PMD also counts as imissed (no fill buffer) among them."""
    assert frames_dropped_by_tester({"imissed": 300, "kernel_rx_dropped": 300, "rx_nombuf": 0}) == 300
    assert frames_dropped_by_tester({"imissed": 0, "kernel_rx_dropped": 1662, "rx_nombuf": 2}) == 1664
    assert frames_dropped_by_tester({"imissed": 500, "rx_nombuf": 0}) == 500  # no kernel interface (a NIC)
    # The sockets' own count (sock_diag) overlaps both; their full RX rings only it sees.
    assert frames_dropped_by_tester({"imissed": 300, "kernel_rx_dropped": 0, "xsk_lost": 420}) == 420
    # A veth peer's tx_dropped holds the frames the port's interface refused (rx_dropped there
    # too, a frame above its MTU), besides those it never offered (the XDP ring full).
    assert frames_dropped_by_tester({"kernel_rx_dropped": 500, "peer_tx_dropped": 500}) == 500
    assert frames_dropped_by_tester({"imissed": 3, "peer_tx_dropped": 7, "rx_nombuf": 1}) == 8


def test_what_a_ports_veth_peer_could_not_deliver_is_the_testers_drop():
    """A DUT's veth end counts as tx_dropped the frames the tester's end would not take (its
    XDP ring was full, the frame above its MTU): the trial is made invalid as the tester's, so
    that it is taken again, and the count is recorded with the port's drops."""
    peers = VethPeers([VethPeer(1, "xlp-dut", "xlp-dr")])
    reply = {"valid": True, "ports": [{"index": 0, "drops": {"imissed": 0}}, {"index": 1, "drops": {"imissed": 0}}]}
    unchanged = with_peer_drops(reply, peers, {1: 40}, {1: 40})
    assert unchanged is reply
    spoiled = with_peer_drops(reply, peers, {1: 40}, {1: 45})
    assert spoiled["valid"] is False
    assert spoiled["invalid_reason"] == ("tester dropped frames: port 1's veth peer xlp-dr could not hand 5 frames "
                                         "to it (its tx_dropped: the tester's port did not take them)")
    assert spoiled["ports"][1]["drops"] == {"imissed": 0, "peer_tx_dropped": 5, "peer_interface": "xlp-dut/xlp-dr"}
    assert reply["valid"] is True and "peer_tx_dropped" not in reply["ports"][1]["drops"]   # not changed in place
    result = TrialResult.from_reply(1000, {**spoiled, "flows": []})
    assert result.dropped_by_tester and result.port_drops == {"1": spoiled["ports"][1]["drops"]}
    # An invalid trial keeps the engine's reason, the tester's drops it found followed by these;
    # a counter that went down (a new veth) is nothing.
    invalid = {**reply, "valid": False, "invalid_reason": "rate not kept"}
    assert with_peer_drops(invalid, peers, {1: 40}, {1: 45})["invalid_reason"] == "rate not kept"
    dropped = {**reply, "valid": False, "invalid_reason": "tester dropped frames: port 1 missed 5"}
    assert with_peer_drops(dropped, peers, {1: 40}, {1: 45})["invalid_reason"] == (
        "tester dropped frames: port 1 missed 5; port 1's veth peer xlp-dr could not hand 5 frames to it (its "
        "tx_dropped: the tester's port did not take them)")
    assert with_peer_drops(reply, peers, {1: 40}, {1: 3}) is reply
