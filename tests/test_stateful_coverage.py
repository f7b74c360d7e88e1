# SPDX-License-Identifier: BSD-3-Clause
"""Issue 11 finding 5: RFC 9693 phase 2 must open no connection, so phase 1 must send every
four-tuple the Initiator's phase-2 frames can carry. Fewer connections than combinations made
phase-2 traffic open connections (40-58 % "loss" through nat44 with a small conntrack table).
Phase-2 runs refuse it; the establishment procedures, which send no Initiator traffic after
phase 1, keep any N up to the combinations."""

import random
import re

import pytest
from test_stateful import NAT44, PORTS, fake_config

from xlatperf.config.loading import load_config
from xlatperf.config.stateful import check_phase2, foreground_frames
from xlatperf.measure.stateful import StatefulTest
from xlatperf.measure.store import read_trials
from xlatperf.run.runner import run_procedure
from xlatperf.traffic.plan import TrafficPlan
from xlatperf.util.errors import ConfigError


def phase2_error(*overrides) -> str:
    config = load_config(None, [*NAT44, *overrides])  # loading alone accepts it
    with pytest.raises(ConfigError) as err:
        StatefulTest(TrafficPlan(config, PORTS))
    return str(err.value)


def test_fewer_connections_than_combinations_are_refused_for_phase_2():
    message = phase2_error("stateful.connections=1000")
    for text in ("stateful.connections = 1000", "10,000 combinations", "not 1,000",
                 "ports.forward_src 100 x ports.forward_dst 100", "new connection",
                 "stateful.connections = 10,000", 'traffic.direction = "reverse"'):
        assert text in message, message


def test_with_a_traffic_mix_the_foreground_frames_must_cover_the_combinations():
    mix = ["traffic.mix_n=11", "traffic.mix_m=10", "traffic.frame_size=84"]
    message = phase2_error("stateful.connections=10998", *mix)
    assert "not 9,999 foreground frames (mix 10/11)" in message, message
    assert "stateful.connections = 10,999" in message, message
    StatefulTest(TrafficPlan(load_config(None, [*NAT44, "stateful.connections=10999", *mix]),
                             PORTS))


def test_the_suggested_n_is_the_smallest_that_covers_every_combination():
    rng = random.Random(11)
    for _ in range(300):
        n = rng.randint(2, 50)
        m = rng.randint(1, n)
        combinations = rng.randint(2, 5000)
        config = load_config(None, [*NAT44, f"traffic.mix_n={n}", f"traffic.mix_m={m}",
                                    "stateful.connections=1", "ports.forward_dst=fixed",
                                    "traffic.frame_size=84",
                                    f"ports.forward_src_max={1023 + combinations}"])
        with pytest.raises(ConfigError) as err:
            check_phase2(config)
        needed = int(re.search(r"set stateful\.connections = ([\d,]+),", str(err.value))
                     .group(1).replace(",", ""))
        assert foreground_frames(needed, n, m) == combinations
        assert foreground_frames(needed - 1, n, m) < combinations


def test_without_enumeration_varying_initiator_fields_are_refused_for_phase_2():
    message = phase2_error("stateful.enumerate=none")
    assert "ports.forward_src, ports.forward_dst vary" in message, message
    assert "stateful.enumerate" in message and '"fixed"' in message, message
    nets = phase2_error("stateful.enumerate=none", "ports.forward_src=fixed",
                        "ports.forward_dst=fixed", "addresses.right_nets=4",
                        "addresses.right_offset_ipv4=0")
    assert "addresses.right_nets vary" in nets, nets
    # One fixed four-tuple: any phase 1 sends it.
    StatefulTest(TrafficPlan(load_config(None, [*NAT44, "stateful.enumerate=none",
                                                "ports.forward_src=fixed",
                                                "ports.forward_dst=fixed"]), PORTS))


def test_a_responder_only_phase_2_may_use_fewer_connections():
    """Phase 2 without the Initiator's direction sends only state-table tuples."""
    config = load_config(None, [*NAT44, "stateful.connections=1000", "traffic.direction=reverse"])
    StatefulTest(TrafficPlan(config, PORTS))


def test_a_throughput_run_refuses_before_any_trial(fake):
    out = fake / "tp"
    with pytest.raises(ConfigError) as err:
        run_procedure("throughput", fake_config("stateful.connections=1000"), out)
    assert "stateful.connections = 1000" in str(err.value)
    assert not (out / "trials.jsonl").exists() or read_trials(out) == []


def test_the_establishment_procedures_keep_fewer_connections(fake):
    summary = run_procedure("connection-rate", fake_config("stateful.connections=1000",
                                                           "stateful.max_rate=100000"),
                            fake / "cps")
    assert summary["median"] > 0
    assert summary["settings"]["stateful"]["connections"] == 1000
    assert summary["settings"]["stateful"]["combinations"] == 10000
