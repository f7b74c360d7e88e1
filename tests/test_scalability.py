# SPDX-License-Identifier: BSD-3-Clause
"""RFC 8219 §10 overload scalability: the degradation figures of §10.2.1, and the procedure
through the CLI with tests/fake_engine.py, whose DUT loses throughput with more clients."""

import json

import pytest

from xlatperf.measure.store import read_trials
from xlatperf.engine.protocol import TrialResult, trial_from_record
from xlatperf.procedures.scalability import degradation, shares
from xlatperf.ui import cli

# -- RFC 8219 §10.2.1 ---------------------------------------------------------------------------


def test_degradation_of_a_higher_is_better_benchmark():
    """Throughput: Xpd = (X1 - Xn) / X1 x 100. 1,000,000 fps with one flow and 750,000 fps
    with n flows: (1,000,000 - 750,000) / 1,000,000 x 100 = 25 %."""
    assert degradation(1_000_000, 750_000) == pytest.approx(25.0)
    assert degradation(1_000_000, 1_000_000) == 0.0
    # An improvement is a negative degradation.
    assert degradation(1_000_000, 1_100_000) == pytest.approx(-10.0)


def test_degradation_of_a_lower_is_better_benchmark():
    """Latency: Xpd = (Xn - X1) / X1 x 100. 0.040 ms with one flow, 0.050 ms with n flows:
    (0.050 - 0.040) / 0.040 x 100 = 25 %."""
    assert degradation(0.040, 0.050, higher_is_better=False) == pytest.approx(25.0)
    assert degradation(0.040, 0.030, higher_is_better=False) == pytest.approx(-25.0)


def test_degradation_needs_a_single_flow_result():
    assert degradation(0, 10) is None
    assert degradation(None, 10) is None
    assert degradation(10, None) is None


# -- the procedure ---------------------------------------------------------------------------------

LIMIT = 3_000_000
PENALTY = 0.02
ERROR = 10_000
CLIENTS = ["--set", "addresses.left=increasing", "--set", "addresses.left_min=10",
           "--set", "addresses.left_max=200"]


@pytest.fixture
def fake_dut(monkeypatch, tmp_path):
    for name in ("FAKE_DUT_LIMIT", "FAKE_DUT_CLIENT_PENALTY", "FAKE_TESTER_LIMIT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("FAKE_DUT_LIMIT", str(LIMIT))
    monkeypatch.setenv("FAKE_DUT_CLIENT_PENALTY", str(PENALTY))
    log = tmp_path / "requests.log"
    monkeypatch.setenv("FAKE_REQUEST_LOG", str(log))
    return log


def limit(n: int) -> float:
    """The fake DUT's throughput with n clients."""
    return LIMIT / (1 + PENALTY * (n - 1))


def test_throughput_and_degradation_per_number_of_flows(fake_config, fake_dut, tmp_path,
                                                         capsys):
    out = tmp_path / "sc"
    assert cli.main(["scalability", "-c", str(fake_config), "--out", str(out), "--repeat", "2",
                     "--flows", "1,4,32", "--duration", "1",
                     "--set", f"throughput.error={ERROR}", *CLIENTS]) == 0
    printed = capsys.readouterr().out
    assert "n=32" in printed and "RFC 8219 §10.2" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["unit"] == "%" and summary["largest_flows"] == 32
    by_n = {f["flows"]: f for f in summary["flows"]}
    assert list(by_n) == [1, 4, 32]
    for n, found in by_n.items():
        assert limit(n) - ERROR < found["throughput"] <= limit(n), n
        # the RFC's figure from the medians, and within what the search's precision allows
        expected = (1 - limit(n) / LIMIT) * 100
        assert found["degradation_percent"] == pytest.approx(
            (by_n[1]["throughput"] - found["throughput"]) / by_n[1]["throughput"] * 100)
        assert abs(found["degradation_percent"] - expected) < 100 * ERROR / limit(1) * 2
    assert by_n[1]["degradation_percent"] == 0.0
    assert summary["median"] == pytest.approx(by_n[32]["degradation_percent"])  # equal reps
    assert [r["degradation_percent"] for r in summary["repetitions"]] == \
        pytest.approx([by_n[32]["degradation_percent"]] * 2)
    # Each trial is tagged with its n and sent from exactly n client addresses.
    records = [r for r in read_trials(out) if r.get("phase") != "learning"]
    assert {r["network_flows"] for r in records} == {1, 4, 32}
    requests = [json.loads(line) for line in fake_dut.read_text().splitlines()]
    trials = [r for r in requests if r.get("op") == "trial" and r["flows"][0]["rate"] != 10000]
    for request, record in zip(trials[-len(records):], records):
        n = record["network_flows"]
        for flow in request["flows"]:
            (vary,) = flow["foreground"]["vary"]
            assert (vary["min"], vary["max"]) == (10, 10 + n - 1)
            assert vary["field"] == ("src_ip" if flow["name"] == "forward" else "dst_ip")
    csv = (out / "summary.csv").read_text().splitlines()
    assert csv[0].startswith("repetition,flows,throughput_fps") and len(csv) == 1 + 2 * 3


def test_a_throughput_at_the_configured_top_is_named_a_lower_bound(fake_config, fake_dut, tmp_path,
                                                                   capsys):
    """throughput.max_rate between limit(4) and limit(1): n = 1 passes at the setting, so its
    throughput (and the degradation figures) measure the setting; n = 4 fails below it."""
    top = int(limit(4)) + 50_000
    out = tmp_path / "sc"
    assert cli.main(["scalability", "-c", str(fake_config), "--out", str(out), "--flows", "1,4",
                     "--duration", "1", "--set", f"throughput.error={ERROR}", "--set",
                     f"throughput.max_rate={top}", *CLIENTS]) == 0
    summary = json.loads((out / "summary.json").read_text())
    note = summary["range_limited"]
    assert note.startswith("at n = 1 the throughput is a lower bound set by throughput.max_rate")
    assert f"{top:,}" in note and "not the DUT" in note
    assert note in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("settings, message", [
    ([], 'addresses.left = "fixed"'),
    ([*CLIENTS, "--set", "addresses.right=random"], "addresses.right = 'random'"),
    ([*CLIENTS, "--set", "ports.forward_src=random"], "ports.forward_src = 'random'"),
    ([*CLIENTS, "--flows", "1,1000"], "at most 191 flows"),
    ([*CLIENTS, "--flows", "2,4"], "scalability.flows = [2, 4]: must be a list"),
    ([*CLIENTS, "--flows", "1,8,4"], "starting with 1"),
])
def test_bad_settings_name_the_key(fake_config, tmp_path, capsys, settings, message):
    status = cli.main(["scalability", "-c", str(fake_config), "--out", str(tmp_path / "o"), "-q",
                       *settings])
    assert status == 1
    assert message in capsys.readouterr().err


# -- RFC 8219 §10.2.2: flows started one after another ---------------------------------------------


def test_shares_add_up_to_the_rate():
    assert shares(10, 4) == [3, 3, 2, 2]
    assert shares(8, 4) == [2, 2, 2, 2]
    assert shares(3, 4) == [1, 1, 1, 0]       # R < n: the last client sends nothing
    assert sum(shares(1_234_567, 63)) == 1_234_567


def test_a_direction_of_several_flows_adds_their_counts_up():
    """The engine reply of 2 clients' forward flows: one direction, the counts summed, each
    flow's kept; the pace of an invalid trial is the share of its planned frames it sent."""
    reply = {"valid": False, "invalid_reason": "tester could not keep the rate: ...",
             "flows": [{"name": "forward", "rate": 500, "planned": 1000, "sent": 1000,
                        "received": 990, "streams": [{"kind": "foreground", "duplicates": 1}]},
                       {"name": "forward", "rate": 0, "planned": 500, "sent": 250,
                        "received": 250, "streams": [{"kind": "foreground", "duplicates": 2}]}]}
    result = TrialResult.from_reply(1000, reply, duration=2.0)
    forward = result.directions["forward"]
    assert (forward.sent, forward.received, forward.planned, forward.duplicates) == \
        (1250, 1240, 1500, 3)
    assert [f["sent"] for f in forward.flows] == [1000, 250]
    assert result.achieved_rate == pytest.approx(1000 * 1250 / 1500)
    again = trial_from_record(result.to_dict())
    assert again.directions["forward"].flows == forward.flows


STAGGERED = ["--set", "scalability.start_interval=0.5"]


def test_incremental_start_staggers_the_clients(fake_config, fake_dut, tmp_path, capsys):
    """RFC 8219 §10.2.2: each client its own flow per direction from its fixed address,
    client i sending its share of the trial's rate from i x t on, the trial longer by
    (n - 1) x t; the throughput over the aggregate rate and its degradation as with t = 0."""
    out = tmp_path / "inc"
    assert cli.main(["scalability", "-c", str(fake_config), "--out", str(out),
                     "--flows", "1,4", "--duration", "1", "--set", f"throughput.error={ERROR}",
                     *CLIENTS, *STAGGERED]) == 0
    printed = capsys.readouterr().out
    assert "T = 0.5 s apart" in printed and "§10.2.2" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["start_interval_s"] == 0.5
    assert "incremental" in summary["settings"]["start"]
    by_n = {f["flows"]: f for f in summary["flows"]}
    for n, found in by_n.items():
        assert limit(n) - ERROR < found["throughput"] <= limit(n), n
    expected = (1 - limit(4) / LIMIT) * 100
    assert abs(by_n[4]["degradation_percent"] - expected) < 100 * ERROR / limit(1) * 2
    records = [r for r in read_trials(out) if r.get("phase") != "learning"]
    requests = [json.loads(line) for line in fake_dut.read_text().splitlines()]
    trials = [r for r in requests if r.get("op") == "trial"][-len(records):]
    assert {r["network_flows"] for r in records} == {1, 4}
    for request, record in zip(trials, records):
        n, rate = record["network_flows"], record["rate"]
        assert record["start_interval"] == 0.5
        assert request["duration"] == pytest.approx(1 + (n - 1) * 0.5)
        assert record["duration"] == pytest.approx(1 + (n - 1) * 0.5)
        assert len(request["flows"]) == 2 * n
        for name, field in (("forward", "src_ip"), ("reverse", "dst_ip")):
            clients = [f for f in request["flows"] if f["name"] == name]
            assert len(clients) == n
            started = [f["rate_steps"][0]["rate"] if f.get("rate_steps") else f["rate"]
                       for f in clients]
            assert started == shares(rate, n)
            for i, flow in enumerate(clients):
                stream = flow["foreground"]
                assert stream["vary"] == []    # a fixed address per client ...
                assert stream[field].endswith(f".{10 + i}")   # ... its 16-bit part 10 + i
                if i == 0:
                    assert "rate_steps" not in flow and flow["rate"] == started[0]
                else:
                    assert flow["rate"] == 0
                    assert flow["rate_steps"] == [{"at": pytest.approx(0.5 * i),
                                                   "rate": started[i]}]
            # the record adds the clients up, and keeps each one's counts
            direction = record["directions"][name]
            if n > 1:
                assert [f["planned"] for f in direction["flows"]] == \
                    [round(s * (1 + (n - 1) * 0.5 - 0.5 * i)) for i, s in enumerate(started)]
                assert direction["sent"] == sum(f["sent"] for f in direction["flows"])


@pytest.mark.parametrize("settings, message", [
    # 2 directions of one stream (2 stream ids each), one queue: 256 / 4 = 64 ids, and the
    # engine's 127 flows make at most 63 clients.
    (["--flows", "1,64"], "scalability.flows = [1, 64]: with scalability.start_interval = 0.5"),
    (["--flows", "1,64"], "n must be in 1..63"),
    (["--flows", "1,33", "--set", "tester.queues=2"], "n must be in 1..32"),
    (["--flows", "1,4", "--set", "scalability.start_interval=400000"],
     "scalability.start_interval = 400000: trial.duration + (n - 1) x t = "),
    (["--set", "scalability.start_interval=-1"], "scalability.start_interval = -1"),
])
def test_bad_incremental_settings_name_the_key(fake_config, tmp_path, capsys, settings, message):
    status = cli.main(["scalability", "-c", str(fake_config), "--out", str(tmp_path / "o"), "-q",
                       *CLIENTS, *STAGGERED, *settings])
    assert status == 1
    assert message in capsys.readouterr().err
