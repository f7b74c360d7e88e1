# SPDX-License-Identifier: BSD-3-Clause
"""RFC 9693 stateful tests without a lab: the configuration rules (siitperf Table I, N and M),
the requests of phase 1, validation and phase 2, the capacity search on simulated DUTs, the
tear-down arithmetic, DUT hooks, and the procedures end to end with tests/fake_engine.py."""

import json
import random
from pathlib import Path

import pytest

from xlatperf.config.loading import load_config
from xlatperf.config.stateful import (check_stateful, enumeration, foreground_frames, gap_seconds,
                                      table_size)
from xlatperf.measure.hooks import DutHooks
from xlatperf.measure.stateful import StatefulTest
from xlatperf.measure.store import read_trials
from xlatperf.procedures.capacity import capacity_search, teardown_rate
from xlatperf.procedures.search import binary_search
from xlatperf.run.runner import run_procedure
from xlatperf.traffic.plan import TrafficPlan
from xlatperf.util.errors import ConfigError, MeasurementError

FAKE_ENGINE = str(Path(__file__).resolve().parent / "fake_engine.py")
PORTS = [{"index": 0, "name": "net_null0", "mac": "02:00:00:00:00:01", "link_speed_mbps": 10000},
         {"index": 1, "name": "net_null1", "mac": "02:00:00:00:00:02", "link_speed_mbps": 10000}]
# A NAT44 setup: 100 x 100 port combinations in the forward (Initiator) direction.
NAT44 = ["stateful.enabled=true", "stateful.connections=10000", "stateful.rate_phase1=100000",
         "stateful.timeout_phase1=0.5", "ports.forward_src=random", "ports.forward_src_min=1024",
         "ports.forward_src_max=1123", "ports.forward_dst=random", "ports.forward_dst_min=1",
         "ports.forward_dst_max=100"]


def cfg(*overrides, base=NAT44):
    return load_config(None, [*base, *overrides])


def rejected(*overrides, base=NAT44) -> str:
    with pytest.raises(ConfigError) as err:
        cfg(*overrides, base=base)
    return str(err.value)


# --- configuration rules ----------------------------------------------------------------------

def test_the_nat44_setup_is_valid_and_enumerates_10000_port_pairs():
    config = cfg()
    e = enumeration(config)
    assert e.combinations == 10000
    assert [(v["field"], v["mode"]) for v in e.vary] == [("src_port", "enumerate"),
                                                         ("dst_port", "enumerate")]
    assert table_size(config) == 10000
    assert gap_seconds(config) == pytest.approx(0.1 + 2 * 0.5)  # N/R + 2T by default


def test_stateful_rules_apply_only_when_enabled():
    load_config(None, ["stateful.connections=5"])  # ports are fixed: fine while disabled
    assert "stateful.enumerate" in rejected("stateful.connections=5", base=["stateful.enabled=true"])


@pytest.mark.parametrize(("overrides", "named"), [
    # Enumeration needs varying fields of the chosen kind.
    (["ports.forward_src=fixed", "ports.forward_dst=fixed"],
     ["stateful.enumerate", "ports.forward_src", "ports.forward_dst"]),
    (["stateful.enumerate=addresses", "ports.forward_src=fixed", "ports.forward_dst=fixed"],
     ["stateful.enumerate", '"addresses"', "addresses.left", "addresses.right"]),
    # Table I: ports only while addresses vary (and the reverse) is refused, naming the keys.
    (["addresses.left=random", "addresses.left_min=2", "addresses.left_max=9"],
     ["stateful.enumerate", "addresses.left", '"both"', '"fixed"', "Table I"]),
    (["stateful.enumerate=addresses", "addresses.right=random"],
     ["stateful.enumerate", "ports.forward_src and ports.forward_dst", '"both"']),
    # N and M.
    (["stateful.connections=10001"], ["stateful.connections", "10,000", "ports.forward_src 100"]),
    (["stateful.table_size=10001"], ["stateful.table_size", "10,000"]),
    (["stateful.connections=5000", "stateful.table_size=5001"], ["stateful.table_size", "5,000"]),
    # D >= N/R + T (methodology item 29).
    (["stateful.gap=0.5"], ["stateful.gap", "N/R + T", "0.6"]),
    # Destination networks would add tuples phase 1 does not enumerate.
    (["addresses.right_nets=4", "addresses.right_offset_ipv4=0"], ["addresses.right_nets"]),
    # The Initiator's frames need their addresses even when only the Responder's direction runs.
    (["traffic.direction=reverse", "right.ip_version=6", "left.virtual_ipv6=2001:2::2",
      "traffic.frame_size=84"], ["right.virtual_ipv4", "Initiator"]),
])
def test_bad_stateful_settings_name_their_keys(overrides, named):
    message = rejected(*overrides)
    for text in named:
        assert text in message, message


def test_allowed_combinations_of_siitperf_table_1():
    # Either one fixed ...
    cfg("stateful.enumerate=ports")
    cfg("stateful.enumerate=addresses", "ports.forward_src=fixed", "ports.forward_dst=fixed",
        "addresses.left=random", "addresses.left_min=2", "addresses.left_max=101",
        "stateful.connections=100")
    # ... or both enumerated in the same order (one stateful.order): 100 x 100 x 8 tuples.
    config = cfg("stateful.enumerate=both", "stateful.order=decreasing", "addresses.left=random",
                 "addresses.left_min=2", "addresses.left_max=9", "stateful.connections=80000")
    assert enumeration(config).combinations == 80000
    # none: phase 1 uses the ordinary variation, whatever varies.
    cfg("stateful.enumerate=none", "addresses.left=random", "stateful.connections=10000000")


def test_background_frames_do_not_count_as_connections():
    assert foreground_frames(10, 10, 9) == 9
    assert foreground_frames(25, 10, 9) == 23
    assert foreground_frames(7, 1, 1) == 7
    # N = 11000 with mix 10/11: 10000 foreground frames, exactly the 10000 combinations.
    config = cfg("stateful.connections=11000", "traffic.mix_n=11", "traffic.mix_m=10",
                 "traffic.frame_size=84")
    assert table_size(config) == 10000
    message = rejected("stateful.connections=11011", "traffic.mix_n=11", "traffic.mix_m=10",
                       "traffic.frame_size=84")
    assert "10,010 of the frames are foreground" in message


# --- requests ---------------------------------------------------------------------------------

def test_phase1_validation_and_phase2_requests():
    config = cfg("addresses.right=random", "addresses.right_min=2", "addresses.right_max=3",
                 "stateful.enumerate=both", "stateful.connections=20000", "traffic.mix_n=1")
    test = StatefulTest(TrafficPlan(config, PORTS))
    phase1 = test.requests.phase1_request(20000, 50000, 20000).to_json()
    assert phase1["duration"] == 0.4 and phase1["timeout"] == 0.5
    (flow,) = phase1["flows"]
    assert (flow["name"], flow["tx_port"], flow["rx_port"], flow["frames"]) == ("forward", 0, 1,
                                                                                20000)
    assert flow["foreground"]["enumerate"] == "random"
    # siitperf's order of significance: source port fastest, then destination port, addresses.
    assert [(v["field"], v["mode"], v["min"], v["max"]) for v in flow["foreground"]["vary"]] == [
        ("src_port", "enumerate", 1024, 1123), ("dst_port", "enumerate", 1, 100),
        ("dst_ip", "enumerate", 2, 3)]
    assert phase1["learn"] == {"port": 1, "flow": 0, "table_size": 20000, "ip_version": 4}

    validation = test.requests.validation_request(20000, 50000).to_json()
    (back,) = validation["flows"]
    assert (back["name"], back["tx_port"], back["frames"]) == ("reverse", 1, 20000)
    assert back["from_table"] == {"port": 1, "selection": "increasing"}
    assert back["foreground"]["vary"] == [] and "background" not in back

    phase2 = test.requests.phase2_flows(TrafficPlan(config, PORTS).flows(1000))
    forward, reverse = phase2
    assert "from_table" not in forward and forward["foreground"]["vary"][0]["mode"] == "random"
    assert reverse["from_table"] == {"port": 1, "selection": "random"}


def test_initiator_on_the_right_swaps_the_roles():
    config = cfg("stateful.initiator=right", "ports.reverse_src=random", "ports.reverse_dst=fixed",
                 "ports.reverse_src_min=2000", "ports.reverse_src_max=2099",
                 "stateful.connections=100")
    test = StatefulTest(TrafficPlan(config, PORTS))
    (flow,) = test.requests.phase1_request(100, 1000, 100).to_json()["flows"]
    assert (flow["name"], flow["tx_port"]) == ("reverse", 1)
    assert test.requests.phase1_request(100, 1000, 100).to_json()["learn"]["port"] == 0
    assert test.report()["initiator"] == "right"
    assert test.report()["source_ports"] == "2000..2099 (100), random, enumerated in phase 1"


# --- searches on simulated DUTs ---------------------------------------------------------------

def simulated_max_rate(capacity: int, rate_limit, error: int, calls: list):
    """max_rate(connections, lo, hi) of a DUT whose table holds `capacity` connections (drop or
    evict: either way a step with more connections fails) and that establishes at most
    rate_limit(connections) per second; measured by binary search like the real procedure."""
    def max_rate(connections, lo, hi):
        calls.append((connections, lo, hi))

        def step(rate):
            class Step:
                pass
            s = Step()
            s.rate, s.valid = rate, True
            ok = connections <= capacity and rate <= rate_limit(connections)
            s.passes = lambda tolerance=0.0: ok
            s.to_dict = lambda: {}
            return s
        return binary_search(step, lo, hi, error).throughput
    return max_rate


@pytest.mark.parametrize("capacity", [1000, 1001, 4095, 65536, 1_000_003, 3_141_592])
@pytest.mark.parametrize("error", [1, 7, 1000])
def test_capacity_search_converges_within_E(capacity, error):
    calls = []
    # The establishment rate drops as the table fills, as it does on real DUTs.
    result = capacity_search(simulated_max_rate(capacity, lambda c: 500_000 - c // 20, 100, calls),
                             c0=1000, rate_max=1_000_000, capacity_error=error, beta=0.2,
                             gamma=0.4)
    assert capacity - error <= result.capacity <= capacity
    assert result.c0 == 1000 and result.r0 > 0
    assert result.history[0]["stage"] == "start"
    assert result.exponential_iterations == sum(h["stage"] == "exponential"
                                                for h in result.history)
    assert result.binary_iterations == sum(h["stage"] == "binary" for h in result.history)
    # Early stop: no probe below beta (gamma) x RS.
    assert all(lo >= 0 for _, lo, _ in calls)


def test_capacity_search_stops_at_the_enumerable_combinations():
    result = capacity_search(simulated_max_rate(10**9, lambda c: 10_000, 100, []), c0=1000,
                             rate_max=100_000, capacity_error=10, beta=0.2, gamma=0.4,
                             limit=6000)
    assert result.limited_by_ranges and result.capacity == 6000


def test_capacity_search_when_c0_fails():
    result = capacity_search(simulated_max_rate(500, lambda c: 10_000, 100, []), c0=1000,
                             rate_max=100_000, capacity_error=10, beta=0.2, gamma=0.4)
    assert result.capacity is None and result.r0 == 0


def test_teardown_arithmetic():
    assert teardown_rate(1_000_000, 2.5, 0.5) == 500_000
    assert teardown_rate(1000, 0.010, 0.010) is None  # not measurable
    assert teardown_rate(1000, 0.009, 0.010) is None


# --- DUT hooks --------------------------------------------------------------------------------

def test_hooks_log_output_status_and_duration(tmp_path):
    dut = load_config(None, ["dut.before_trial=echo flushed", "dut.teardown=sleep 0.05",
                             "dut.wait_until=test -e " + str(tmp_path / "up")])
    (tmp_path / "up").touch()
    hooks = DutHooks(dut, tmp_path / "hooks.jsonl")
    runs = hooks.before("trial", {"repetition": 1, "step": 2})
    assert [r.hook for r in runs] == ["before_trial", "wait_until"] and all(r.ok for r in runs)
    timed = hooks.timed("teardown", {"table": "full"})
    assert 0.05 <= timed.duration < 1.0
    lines = [json.loads(line) for line in (tmp_path / "hooks.jsonl").read_text().splitlines()]
    assert lines[0]["output"] == "flushed\n" and lines[0]["exit_status"] == 0
    assert lines[0]["step"] == 2 and lines[0]["where"] == "local"
    assert lines[2]["table"] == "full" and lines[2]["duration"] >= 0.05


def test_a_failing_hook_stops_the_measurement(tmp_path):
    dut = load_config(None, ["dut.before_trial=echo no table; exit 3"])
    with pytest.raises(MeasurementError) as err:
        DutHooks(dut).before("trial")
    assert "exit 3" in str(err.value) and "no table" in str(err.value)
    dut = load_config(None, ["dut.wait_until=false", "dut.timeout=1.5"])
    with pytest.raises(MeasurementError) as err:
        DutHooks(dut).before("trial")
    assert "dut.wait_until" in str(err.value) and "attempts" in str(err.value)
    with pytest.raises(MeasurementError) as err:
        DutHooks(load_config(None)).timed("teardown")
    assert "dut.teardown" in str(err.value)


def test_ssh_hooks_run_on_the_host():
    from xlatperf.measure.hooks import command_line
    assert command_line("conntrack -F", "root@dut") == ["ssh", "-o", "BatchMode=yes", "root@dut",
                                                        "conntrack -F"]
    assert command_line("conntrack -F", "") == ["sh", "-c", "conntrack -F"]


# --- procedures with the fake engine ----------------------------------------------------------

FAKE = [f"tester.engine={FAKE_ENGINE}", "tester.netns=", "tester.hugepages=no",
        "left.port=null", "right.port=null", "trial.pause=0", "trial.duration=1",
        "stateful.timeout_phase1=0", "stateful.connections=10000", "stateful.error=1000"]


def fake_config(*overrides, hooks=True):
    flush = ["dut.before_trial=true", "dut.teardown=sleep 0.02"] if hooks else []
    return load_config(None, [*NAT44, *FAKE, *flush, *overrides])


def test_stateful_throughput_runs_phase1_before_every_trial(fake, monkeypatch):
    monkeypatch.setenv("FAKE_DUT_LIMIT", "300000")
    monkeypatch.setenv("FAKE_REQUEST_LOG", str(fake / "requests"))
    out = fake / "tp"
    summary = run_procedure("throughput", fake_config("throughput.max_rate=1000000",
                                                      "throughput.error=50000"), out)
    assert 250_000 <= summary["median"] <= 300_000
    records = read_trials(out)
    phases = [r.get("phase") for r in records]
    assert phases[0] == "phase1" and phases.count("phase1") == phases.count(None)
    assert all(records[i + 1]["step"] == r["step"] for i, r in enumerate(records)
               if r.get("phase") == "phase1")
    assert records[0]["state_table"]["entries"] == 10000
    requests = [json.loads(line) for line in (fake / "requests").read_text().splitlines()]
    trials = [r for r in requests if r.get("op") == "trial"]
    assert "learn" in trials[0] and "from_table" in trials[1]["flows"][1]
    hooks = [json.loads(line) for line in (out / "hooks.jsonl").read_text().splitlines()]
    assert len(hooks) == phases.count("phase1") and {h["hook"] for h in hooks} == {"before_trial"}
    items = summary["settings"]["stateful"]
    assert items["connections"] == 10000 and items["combinations"] == 10000
    assert items["source_ports"] == "1024..1123 (100), random, enumerated in phase 1" and items["gap"] == 0.1


def test_a_state_table_that_did_not_fill_is_an_invalid_step(fake, monkeypatch):
    monkeypatch.setenv("FAKE_CONN_RATE", "50000")  # phase 1 at 100 kfps loses half its frames
    out = fake / "trial"
    summary = run_procedure("trial", fake_config(), out, rate=1000)
    (step,) = summary["repetitions"]
    assert step["valid"] is False
    # Taken again stateful.retakes = 2 times (tests/test_stateful_retake.py), then invalid.
    assert step["invalid_reason"] == ("failed to fill state table: 5,000 of 10,000 entries "
                                      "(the last of 3 attempts, stateful.retakes = 2)")
    assert [r.get("phase") for r in read_trials(out)] == ["phase1"] * 3 + [None]  # no phase 2


def test_connection_rate_finds_the_simulated_rate(fake, monkeypatch):
    monkeypatch.setenv("FAKE_CONN_RATE", "123456")
    out = fake / "cps"
    summary = run_procedure("connection-rate", fake_config("stateful.max_rate=1000000"), out)
    assert 123456 - 1000 < summary["median"] <= 123456 and summary["unit"] == "cps"
    steps = summary["repetitions"][0]["steps"]
    assert all(s["validation"] is not None for s in steps if s["passed"])
    records = read_trials(out)
    assert {r["phase"] for r in records} == {"phase1", "validation"}
    # Validation: the Responder alone, every state-table entry once.
    assert all(r["directions"].keys() == {"reverse"} and r["directions"]["reverse"]["sent"]
               == 10000 for r in records if r["phase"] == "validation")


def test_connection_rate_fails_steps_whose_validation_loses(fake, monkeypatch):
    monkeypatch.setenv("FAKE_TABLE_CAPACITY", "9000")  # evicts: phase 1 passes, validation not
    # A coarse search: each validation waits D = N/R after phase 1 started (T = 0 here), which
    # the fake engine's instant phase 1 turns into real sleeping at low rates.
    summary = run_procedure("connection-rate", fake_config("stateful.max_rate=100000",
                                                           "stateful.error=20000"),
                            fake / "out")
    rep = summary["repetitions"][0]
    assert not rep["found"] and rep["connection_rate"] == 0
    assert rep["steps"][0]["failure"] == "validation: 9,000 of 10,000 frames arrived"
    without = run_procedure("connection-rate", fake_config("stateful.max_rate=100000",
                                                           "stateful.validation=false"),
                            fake / "without")
    assert without["median"] == 100000  # without validation eviction goes unnoticed


def test_teardown_rate_logs_both_times(fake):
    out = fake / "teardown"
    summary = run_procedure("teardown-rate", fake_config("output.repeat=2"), out)
    for rep in summary["repetitions"]:
        assert rep["loaded"] and rep["full_seconds"] >= 0.02 and rep["empty_seconds"] >= 0.02
        assert rep["teardown_rate"] == teardown_rate(10000, rep["full_seconds"],
                                                     rep["empty_seconds"]) or \
            rep["teardown_rate"] is None
    assert summary["full_seconds"]["n"] == 2 and summary["settings"]["teardown"] == "sleep 0.02"
    hooks = [json.loads(line) for line in (out / "hooks.jsonl").read_text().splitlines()]
    assert [h.get("table") for h in hooks if h["hook"] == "teardown"] == ["full", "empty"] * 2
    assert [r["phase"] for r in read_trials(out)].count("teardown") == 2


def test_teardown_rate_needs_the_hook(fake):
    with pytest.raises(MeasurementError) as err:
        run_procedure("teardown-rate", fake_config(hooks=False), fake / "out")
    assert "dut.teardown" in str(err.value)


def test_table_capacity_with_the_fake_dut_and_resume(fake, monkeypatch):
    monkeypatch.setenv("FAKE_TABLE_CAPACITY", "37000")
    monkeypatch.setenv("FAKE_CONN_RATE", "200000")
    overrides = ("ports.forward_src_max=1523", "stateful.max_rate=400000",
                 "stateful.error=50000", "stateful.capacity_error=500", "stateful.connections=5000")
    out = fake / "capacity"
    summary = run_procedure("table-capacity", fake_config(*overrides), out)
    rep = summary["repetitions"][0]
    assert 37000 - 500 <= rep["capacity"] <= 37000 and rep["complete"]
    assert rep["c0"] == 5000 and rep["r0"] > 0 and rep["exponential_iterations"] >= 3
    assert {"cs", "rs", "ct", "rt"} <= set(rep["history"][-1])
    # Resuming a finished run replays the recorded steps to the same result.
    again = run_procedure("table-capacity", fake_config(*overrides, "output.repeat=1"), out,
                          resume=True)
    assert again["repetitions"][0]["capacity"] == rep["capacity"]
    assert again["repetitions"][0]["history"] == rep["history"]


def test_cli_stateful_switch_and_commands(fake, monkeypatch):
    from xlatperf.ui.cli import _overrides, build_parser
    args = build_parser().parse_args(["throughput", "-c", "x", "--out", "o", "--stateful"])
    assert "stateful.enabled=true" in _overrides(args)
    for name in ("connection-rate", "teardown-rate", "table-capacity"):
        assert build_parser().parse_args([name, "-c", "x", "--out", "o"]).command == name


def test_random_subset_of_rules_is_consistent():
    """Any accepted setting satisfies the counted rules (N <= combinations, M <= N)."""
    rng = random.Random(5)
    for _ in range(200):
        n = rng.randint(1, 20000)
        m = rng.randint(0, 20000)
        try:
            config = cfg(f"stateful.connections={n}", f"stateful.table_size={m}")
        except ConfigError:
            assert n > 10000 or m > n
            continue
        assert n <= enumeration(config).combinations and table_size(config) <= n
        check_stateful(config)


def test_rfc9693_procedures_refuse_settings_the_rfc_excludes(tmp_path):
    """Issue 17 finding 11 (docs/rfc9693-conformance.md): phase 1 must use all different four
    tuples (§4.5), and every table-capacity probe validates (§4.9)."""
    from xlatperf.procedures import REGISTRY
    plan_config = load_config(None, NAT44)
    plan = TrafficPlan(plan_config, PORTS)
    for name in ("connection-rate", "table-capacity", "teardown-rate"):
        config = plan_config.changed({"stateful.enumerate": "none"})
        with pytest.raises(ConfigError, match='stateful.enumerate = "none"'):
            REGISTRY[name].make(config, TrafficPlan(config, PORTS), None)
    config = plan_config.changed({"stateful.validation": False})
    with pytest.raises(ConfigError, match="stateful.validation = false"):
        REGISTRY["table-capacity"].make(config, plan, None)
    REGISTRY["connection-rate"].make(config, plan, None)   # validation is optional there


def test_a_closing_search_whose_load_failed_measured_no_closing_rate(fake, monkeypatch):
    """Issue 30, defect 3: teardown-rate over TCP closing with FIN, and a DUT that never takes
    the load (phase 1 at stateful.rate_phase1 loses half its handshakes every time). Before, the
    failed load was the DUT failing to close at R, and the search went on down to a closing
    rate of 0; now its step says why it measured nothing and the search ends unfinished."""
    monkeypatch.setenv("FAKE_FILL_FAILURES", "1000")
    out = fake / "fin"
    summary = run_procedure("teardown-rate", fake_config(
        "stateful.transport=tcp", "stateful.teardown=fin", "stateful.max_rate=200000",
        "stateful.error=100000", "output.repeat=1"), out)
    (rep,) = summary["repetitions"]
    assert rep["load_failure"].startswith("phase 1: 5,000 of 10,000 handshakes completed"), rep
    assert not rep["complete"] and rep["steps"] == [] and summary["n"] == 0
    # One search step: its three load attempts (stateful.retakes = 2), then nothing closed.
    phases = [r.get("phase") for r in read_trials(out)]
    assert phases == ["phase1"] * 3 + ["close"], phases


def test_tcp_phase2_stays_within_the_mss_a_clamping_dut_left(fake, monkeypatch):
    """Issue 30, defect 5: the tester announces its MSS in SYNs and SYN-ACKs, and a DUT that
    clamps it to 1,000 bytes leaves phase 2 with data segments of at most 1,000 bytes (RFC 9293
    §3.7.1). A frame size whose segments carry more is refused after phase 1, naming the key and
    the largest size that fits; one within it is measured, the MSS recorded with phase 1."""
    monkeypatch.setenv("FAKE_MSS_CLAMP", "1000")
    monkeypatch.setenv("FAKE_DUT_LIMIT", "300000")
    tcp = ("stateful.transport=tcp", "throughput.max_rate=400000", "throughput.error=100000",
           "output.repeat=1")
    with pytest.raises(ConfigError) as err:
        run_procedure("throughput", fake_config(*tcp, "traffic.frame_size=1518"), fake / "big")
    message = str(err.value)
    assert "traffic.frame_size = 1518" in message and "1,000" not in message, message
    assert "carry 1440 bytes, more than the MSS of 1000" in message, message
    assert "must be at most 1078" in message, message   # 14 + 20 + 40 + 1000 + 4
    summary = run_procedure("throughput", fake_config(*tcp, "traffic.frame_size=1078"), fake / "fits")
    assert summary["n"] == 1
    phase1 = [r for r in read_trials(fake / "fits") if r.get("phase") == "phase1"][0]
    assert phase1["directions"]["forward"]["mss_min"] == 1000          # the SYNs, clamped
    assert phase1["directions"]["forward.syn_ack"]["mss_min"] == 1000  # the SYN-ACKs, clamped


def test_tcp_table_capacity_validates_against_a_dut_that_replaces_its_oldest_entries(fake, monkeypatch):
    """Issue 30, defect 2: the fake DUT keeps 37,000 connections and replaces the oldest beyond
    that (RFC 9693 §4.9), so every handshake completes. Before, table-capacity over TCP took
    the handshakes as its validation and found the search's top; now each probe validates with
    one data segment from the Responder over each learned connection, as over UDP."""
    monkeypatch.setenv("FAKE_TABLE_CAPACITY", "37000")
    monkeypatch.setenv("FAKE_CONN_RATE", "200000")
    monkeypatch.setenv("FAKE_REQUEST_LOG", str(fake / "requests"))
    overrides = ("ports.forward_src_max=1523", "stateful.max_rate=400000", "stateful.error=50000",
                 "stateful.capacity_error=500", "stateful.connections=5000", "stateful.transport=tcp",
                 "output.repeat=1")
    summary = run_procedure("table-capacity", fake_config(*overrides), fake / "capacity")
    rep = summary["repetitions"][0]
    assert 37000 - 500 <= rep["capacity"] <= 37000 and rep["complete"], rep["history"]
    requests = [json.loads(line) for line in (fake / "requests").read_text().splitlines()]
    validations = [r for r in requests if r.get("op") == "trial" and "learn" not in r]
    (flow,) = validations[0]["flows"]
    assert flow["tcp"]["segments"] == "data" and flow["from_table"]["selection"] == "increasing"
    assert flow["foreground"]["frame_size"] == 79  # the smallest IPv4 TCP data frame


def test_summaries_say_what_the_median_leaves_out_or_bounds(fake, monkeypatch, tmp_path):
    """Issue 30, defect 6: a table-capacity median that counts a repetition limited by the
    ranges is a lower bound, and teardown-rate repetitions whose deletion took no longer on the
    full table than on the empty one (T_N <= T_0) are left out of the median: each summary says
    so (before, silently)."""
    monkeypatch.setenv("FAKE_CONN_RATE", "200000")  # no table limit: the ranges' 10,000 stop it
    summary = run_procedure("table-capacity", fake_config(
        "stateful.max_rate=400000", "stateful.error=50000", "stateful.capacity_error=500",
        "stateful.connections=5000", "output.repeat=1"), fake / "capacity")
    assert summary["repetitions"][0]["limited_by_ranges"] and summary["limited_by_ranges"] == 1
    # The deletion: fast on the full table (the first run of each repetition), slow on the empty one.
    mark = tmp_path / "full"
    teardown = f"if [ -e {mark} ]; then rm {mark}; sleep 0.05; else touch {mark}; fi"
    summary = run_procedure("teardown-rate", fake_config("output.repeat=1", f"dut.teardown={teardown}"),
                            fake / "teardown")
    (rep,) = summary["repetitions"]
    assert rep["full_seconds"] < rep["empty_seconds"] and rep["teardown_rate"] is None
    assert summary["not_measurable"] == 1 and summary["n"] == 0
