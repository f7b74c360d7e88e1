# SPDX-License-Identifier: BSD-3-Clause
"""RFC 8219 §10 overload scalability: the degradation figures of §10.2.1, and the procedure
through the CLI with tests/fake_engine.py, whose DUT loses throughput with more clients."""

import json

import pytest

from xlatperf.measure.store import read_trials
from xlatperf.procedures.scalability import degradation
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
