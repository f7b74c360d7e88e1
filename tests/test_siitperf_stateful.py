# SPDX-License-Identifier: BSD-3-Clause
"""`xlatperf import` of siitperf's stateful tests: Stateful, Responder-tuples, Enumerate-ports
and Enumerate-ips become the [stateful] section, siitperf-tp's N M R T D arguments its phase-1
keys, and the combinations xlatperf refuses (siitperf's Table I) are errors naming the
parameters. Every converted file loads and passes the stateful rules (check_stateful)."""

from pathlib import Path

import pytest

from xlatperf.config.loading import load_config
from xlatperf.config.siitperf import import_siitperf
from xlatperf.config.stateful import check_stateful, enumeration, gap_seconds, table_size
from xlatperf.util.errors import ConfigError

DATA = Path(__file__).resolve().parent / "data" / "siitperf"
ORDERS = {1: "increasing", 2: "decreasing", 3: "random"}


def nat44(stateful=1, ports=0, ips=0, port_var=3, ip_var=0, extra="") -> str:
    """A stateful NAT44 siitperf.conf: the Initiator's ports 1024..1087 x 1..64 and, with
    ip_var, addresses 1..16 on both sides."""
    prefix = "Fwd" if stateful != 2 else "Rev"
    return f"""
IP-L-Vers 4
IP-R-Vers 4
IPv4-L-Real 198.18.0.2
IPv4-R-Real 198.19.0.2
MAC-L-DUT 02:00:00:00:01:01
MAC-R-DUT 02:00:00:00:01:02
Forward 1
Reverse 1
{prefix}-var-sport {port_var}
{prefix}-var-dport {port_var}
{prefix}-sport-min 1024
{prefix}-sport-max 1087
{prefix}-dport-min 1
{prefix}-dport-max 64
IP-L-var {ip_var}
IP-R-var {ip_var}
IP-L-min 1
IP-L-max 16
IP-R-min 1
IP-R-max 16
Stateful {stateful}
Enumerate-ports {ports}
Enumerate-ips {ips}
{extra}
"""


def convert(tmp_path, text, cmdline=None):
    conf, out = tmp_path / "siitperf.conf", tmp_path / "out.toml"
    conf.write_text(text)
    result = import_siitperf(conf, out, cmdline=cmdline)
    config = load_config(str(out))
    check_stateful(config)
    return result, config


def refused(tmp_path, text, cmdline=None) -> str:
    conf = tmp_path / "siitperf.conf"
    conf.write_text(text)
    with pytest.raises(ConfigError) as err:
        import_siitperf(conf, tmp_path / "out.toml", cmdline=cmdline)
    return str(err.value)


def test_stateful_nat64_fixture(tmp_path):
    result = import_siitperf(DATA / "nat64-stateful.conf", tmp_path / "nat64.toml")
    config = load_config(str(tmp_path / "nat64.toml"))
    check_stateful(config)
    s = config.stateful
    assert s.enabled and s.initiator == "left" and s.selection == "increasing"
    assert (s.enumerate, s.order) == ("ports", "random")
    # 64,512 source ports x one destination port: fewer than the default N, so N is all of them.
    assert enumeration(config).combinations == s.connections == 64512
    assert config.traffic.direction == "reverse"          # Forward 0, Reverse 1
    text = (tmp_path / "nat64.toml").read_text()
    assert 'initiator = "left"  # Stateful' in text
    assert "connections = 64512  # the enumerable combinations" in text
    note = next(n for n in result.notes if n.startswith("N M R T D"))
    for key in ("stateful.connections (N)", "stateful.table_size (M)",
                "stateful.rate_phase1 (R)", "stateful.timeout_phase1 (T)", "stateful.gap (D)"):
        assert key in note
    assert not any("no stateful tests" in n for n in result.notes)


def test_stateful_multi_ip_fixture(tmp_path):
    result = import_siitperf(DATA / "stateful-multi-ip.conf", tmp_path / "z.toml")
    config = load_config(str(tmp_path / "z.toml"))
    check_stateful(config)
    s = config.stateful
    assert (s.initiator, s.enumerate, s.order, s.selection) == \
        ("right", "both", "random", "random")
    assert config.traffic.direction == "reverse"           # Forward 0, Reverse 0
    assert enumeration(config).combinations == 64 * 64 * 16 * 16
    assert s.connections == 1_000_000                         # the default fits
    assert any(n.startswith("Forward 0 and Reverse 0") for n in result.notes)


@pytest.mark.parametrize("stateful, initiator", [(1, "left"), (2, "right")])
@pytest.mark.parametrize("ports, ips, ip_var, enumerate", [
    (0, 0, 0, "none"), (1, 0, 0, "ports"), (2, 0, 0, "ports"), (3, 0, 0, "ports"),
    (0, 0, 3, "none"), (0, 1, 3, "addresses"), (2, 2, 3, "both"), (3, 3, 3, "both")])
def test_enumeration_and_roles(tmp_path, stateful, initiator, ports, ips, ip_var, enumerate):
    port_var = 0 if enumerate == "addresses" else 3
    _, config = convert(tmp_path, nat44(stateful, ports, ips, port_var, ip_var))
    s = config.stateful
    assert (s.enabled, s.initiator, s.enumerate) == (True, initiator, enumerate)
    if enumerate != "none":
        assert s.order == ORDERS[ports or ips]
        assert enumeration(config).combinations == {
            "ports": 64 * 64, "addresses": 16 * 16, "both": 64 * 64 * 16 * 16}[enumerate]
        assert s.connections <= enumeration(config).combinations


@pytest.mark.parametrize("tuples, selection", [(0, "fixed"), (1, "increasing"),
                                               (2, "decreasing"), (3, "random")])
def test_responder_tuples(tmp_path, tuples, selection):
    result, config = convert(tmp_path, nat44(ports=3, extra=f"Responder-tuples {tuples}"))
    assert config.stateful.selection == selection
    # The README's example spells it Responder-ports.
    _, alias = convert(tmp_path, nat44(ports=3, extra=f"Responder-ports {tuples}"))
    assert alias.stateful.selection == selection
    _, missing = convert(tmp_path, nat44(ports=3))
    assert missing.stateful.selection == "random"


def test_siitperf_table_1(tmp_path):
    """Ports and addresses both vary: only 0/0 and equal non-zero values are accepted."""
    for ports in range(4):
        for ips in range(4):
            text = nat44(ports=ports, ips=ips, ip_var=3)
            if ports == ips:
                _, config = convert(tmp_path, text)
                assert config.stateful.enumerate == ("both" if ports else "none")
            else:
                message = refused(tmp_path, text)
                assert f"Enumerate-ports {ports}" in message and f"Enumerate-ips {ips}" in message


@pytest.mark.parametrize("text, named", [
    (nat44(ports=3, ips=1, ip_var=3),
     ["Enumerate-ports 3 and Enumerate-ips 1", "must be equal", "Enumerate-ips 0 or 3"]),
    (nat44(ports=3, port_var=0),
     ["Enumerate-ports 3 with Fwd-var-sport 0 and Fwd-var-dport 0", "1..3"]),
    (nat44(stateful=2, ports=2, port_var=0),
     ["Enumerate-ports 2 with Rev-var-sport 0 and Rev-var-dport 0"]),
    (nat44(ips=3, port_var=0),
     ["Enumerate-ips 3 with IP-L-var 0 and IP-R-var 0", "1..3"]),
    (nat44(ports=3, ip_var=3),
     ["Enumerate-ports 3 with Enumerate-ips 0 while IP-L-var 3 and IP-R-var 3",
      "set Enumerate-ips 3"]),
    (nat44(ips=2, ip_var=2),
     ["Enumerate-ips 2 with Enumerate-ports 0 while Fwd-var-sport 3 and Fwd-var-dport 3",
      "set Enumerate-ports 2"]),
    (nat44(stateful=0, ports=3), ["Enumerate-ports 3 with Stateful 0", "Stateful 1 or 2"]),
    (nat44(ports=3, extra="Num-R-Nets 4"), ["Num-R-Nets 4 with Enumerate-ports 3",
                                            "Num-R-Nets 1"]),
])
def test_refused_combinations_name_the_parameters(tmp_path, text, named):
    message = refused(tmp_path, text)
    for part in named:
        assert part in message


def test_one_fixed_port_is_noted(tmp_path):
    text = nat44(ports=3).replace("Fwd-var-dport 3", "Fwd-var-dport 0")
    result, config = convert(tmp_path, text)
    assert enumeration(config).combinations == 64
    assert any(n.startswith("Enumerate-ports 3 with Fwd-var-dport 0") for n in result.notes)


def test_stateless_ignores_responder_tuples(tmp_path):
    conf = tmp_path / "s.conf"
    conf.write_text(nat44(stateful=0, extra="Responder-tuples 2"))
    result = import_siitperf(conf, tmp_path / "s.toml")
    assert not load_config(str(tmp_path / "s.toml")).stateful.enabled
    assert any(n.startswith("Responder-tuples 2: only used by stateful") for n in result.notes)


def test_stateful_command_line(tmp_path):
    result, config = convert(tmp_path, nat44(ports=3),
                             cmdline="84 100000 30 2000 10 9 2000 1500 50000 500 1000 7 8")
    s = config.stateful
    assert (s.connections, s.table_size, s.rate_phase1) == (2000, 1500, 50000)
    assert (s.timeout_phase1, s.gap) == (0.5, 1.0)         # milliseconds -> seconds
    assert gap_seconds(config) == 1.0 and table_size(config) == 1500
    assert (config.traffic.mix_n, config.traffic.mix_m) == (10, 9)
    assert config.trial.duration == 30.0
    assert not any(n.startswith("N M R T D") for n in result.notes)
    assert any(n.startswith("further arguments 7 8") for n in result.notes)
    text = (tmp_path / "out.toml").read_text()
    assert "gap = 1.0  # D (ms)" in text and "connections = 2000  # N" in text


@pytest.mark.parametrize("cmdline, named", [
    ("84 100000 30 2000 2 2", ["expected at least 11 values", "N M R T D", "Stateful 1"]),
    ("84 100000 30 2000 2 2 x 1 1 1 1", ["N = 'x'", "must be an integer", "1..4294967295"]),
    ("84 100000 30 2000 2 2 2000 0 50000 500 1000", ["M = 0", "1..4294967295"]),
    ("84 100000 30 2000 2 2 2000 100 50000 2001 5000", ["T = 2001", "1..2000"]),
    ("84 100000 30 2000 2 2 2000 100 20000 500 500", ["D = 500", "1000·N/R + T = 600 ms"]),
    ("84 100000 30 2000 2 1 2000 1500 50000 500 1000",
     ["M = 1,500", "at most the 1,000 foreground frames"]),
    # More phase-1 frames than enumerable combinations: xlatperf's rule, traced back to N.
    ("84 1000 30 2000 2 2 5000 100 50000 500 1000",
     ["stateful.connections = 5000", "at most 4,096", "from siitperf's N"]),
])
def test_stateful_command_line_errors(tmp_path, cmdline, named):
    message = refused(tmp_path, nat44(ports=3), cmdline=cmdline)
    for part in named:
        assert part in message


def test_without_output_the_conversion_is_still_checked(tmp_path):
    conf = tmp_path / "c.conf"
    conf.write_text(nat44(ports=3))
    with pytest.raises(ConfigError, match="from siitperf's N"):
        import_siitperf(conf, None, cmdline="84 1000 30 2000 2 2 5000 100 50000 500 1000")
    assert import_siitperf(conf, None).config["stateful"]["enumerate"] == "ports"
