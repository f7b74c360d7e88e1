# SPDX-License-Identifier: BSD-3-Clause
"""`xlatperf import`: siitperf.conf files in the README's format (tests/data/siitperf/, written
for these tests) convert into configurations that load and that the engine accepts."""

import os
import shutil
from pathlib import Path

import pytest

from xlatperf.frames.kinds import trial_frames
from xlatperf.frames.stack import IP_STACKS, IPV4, IPV6
from xlatperf.config.loading import load_config
from xlatperf.config.siitperf import import_siitperf, parse_siitperf
from xlatperf.util.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "siitperf"
ENGINE = ROOT / "engine" / "build" / "xlatperf-engine"
FIXTURES = sorted(p.stem for p in DATA.glob("*.conf"))


@pytest.mark.parametrize("name", FIXTURES)
def test_readme_examples_convert_and_load(name, tmp_path):
    out = tmp_path / f"{name}.toml"
    result = import_siitperf(DATA / f"{name}.conf", out)
    config = load_config(str(out))
    text = out.read_text()
    assert text.startswith("# xlatperf configuration converted from")
    assert all(f"#   - {note}" in text for note in result.notes)
    assert config.left.dut_mac and config.right.dut_mac


def test_stateless_nat64_mapping(tmp_path):
    out = tmp_path / "nat64.toml"
    result = import_siitperf(DATA / "nat64-stateless.conf", out,
                             cmdline="1518 100000 60 2000 10 9")
    config = load_config(str(out))
    left, right = config.left, config.right
    assert (left.ip_version, right.ip_version) == (6, 4)
    assert left.ipv6 == "2001:2::2" and left.virtual_ipv4 == "198.18.0.2"
    assert left.ipv4 == "" and right.virtual_ipv4 == ""     # 0.0.0.0: unused
    assert right.virtual_ipv6 == "2001:2:0:1000::2" and right.ipv4 == "198.19.0.2"
    assert left.mac == "a0:36:9f:c5:fa:1c" and right.dut_mac == "a0:36:9f:c5:e6:5a"
    assert config.traffic.direction == "both"
    assert (config.traffic.frame_size, config.traffic.mix_n,
            config.traffic.mix_m) == (1518, 10, 9)
    assert config.trial.duration == 60.0 and config.trial.timeout == 2.0
    assert config.tester.lcores == "0,2,4,6,8"
    ports = config.ports
    assert ports.forward_src == "random" and ports.reverse_dst_max == 49151
    assert any("Promisc" in n for n in result.notes)
    assert any("xlatperf trial --rate 100000" in n for n in result.notes)


def test_multi_ip_and_stateful_mapping(tmp_path):
    import_siitperf(DATA / "multi-ip-ipv4.conf", tmp_path / "x.toml")
    config = load_config(str(tmp_path / "x.toml"))
    addresses = config.addresses
    assert addresses.left == addresses.right == "random"
    assert addresses.left_max == 0xfeff and addresses.left_offset_ipv4 == 2
    import_siitperf(DATA / "multi-ip-ipv6.conf", tmp_path / "y.toml")
    config6 = load_config(str(tmp_path / "y.toml"))
    assert config6.addresses.left == "increasing"
    assert config6.addresses.right == "decreasing"
    assert config6.addresses.left_offset_ipv6 == 12
    assert config6.traffic.frame_size == 84            # siitperf's minimum, with a note
    import_siitperf(DATA / "stateful-multi-ip.conf", tmp_path / "z.toml")
    stateful = load_config(str(tmp_path / "z.toml"))
    assert stateful.traffic.direction == "reverse"     # Initiator on the right
    assert stateful.ports.reverse_src_max == 1087
    assert stateful.stateful.enabled and stateful.stateful.initiator == "right"
    assert stateful.stateful.enumerate == "both"       # tests/test_siitperf_stateful.py


@pytest.mark.parametrize("line, message", [
    ("IP-L-Vers 5", "line 1: IP-L-Vers 5: must be 4 or 6"),
    ("Num-L-Nets 300", r"Num-L-Nets 300: must be an integer in 1..256"),
    ("Fwd-var-sport 4", r"Fwd-var-sport 4: must be an integer in 0..3"),
    ("IPv4-L-Real 198.18.0.256", "IPv4-L-Real 198.18.0.256: must be an IPv4 address"),
    ("MAC-L-DUT 00:11:22", "must be a MAC address"),
    ("IPv6-L-offset 15", r"must be an integer in 6..14"),
    ("Stateful 3", r"Stateful 3: must be an integer in 0..2"),
    ("Frobnicate 1", "unknown siitperf parameter 'Frobnicate'"),
    ("ip-l-vers 6", "did you mean IP-L-Vers"),
    ("Forward", "Forward has no value"),
])
def test_bad_parameters_are_named(line, message):
    with pytest.raises(ConfigError, match=message):
        parse_siitperf(line + "  # comment\n", "siitperf.conf")


def test_hex_values_comments_and_no_direction(tmp_path):
    assert parse_siitperf("# only a comment\n\n  IP-L-min 0x00ff # hex\n") == {"IP-L-min": 255}
    conf = tmp_path / "none.conf"
    conf.write_text("Forward 0\nReverse 0\n")
    with pytest.raises(ConfigError, match="no active direction"):
        import_siitperf(conf, tmp_path / "none.toml")
    with pytest.raises(ConfigError, match="ipv6_frame_size = 60"):
        import_siitperf(DATA / "nat64-stateless.conf", None, cmdline="60 1000 60 2000 2 2")


@pytest.mark.skipif(os.geteuid() != 0 or not (ENGINE.exists() or shutil.which("xlatperf-engine")),
                    reason="needs root and the built engine")
@pytest.mark.parametrize("name", FIXTURES)
def test_the_engine_accepts_the_converted_configs(name, tmp_path, exclusive_lab):
    """One short trial on null ports (no DUT): the engine takes every converted setting.
    (exclusive_lab: lab tests count the engines running on this machine.) A stateful config's
    phase 1 is sent with its enumeration, but nothing reaches the Responder on null ports, so
    the state table stays empty and the step is invalid without a phase 2."""
    from xlatperf.measure.store import read_trials
    from xlatperf.run.runner import run_procedure
    out = tmp_path / f"{name}.toml"
    import_siitperf(DATA / f"{name}.conf", out)
    converted = load_config(str(out))
    responder_only = []
    if converted.stateful.enabled:
        # 1,000 phase-1 frames cover only part of the enumerated ranges: phase 2 then runs in
        # the Responder's direction alone (its tuples come from the state table), as
        # xlatperf requires.
        responder = "reverse" if converted.stateful.initiator == "left" else "forward"
        responder_only = [f"traffic.direction={responder}"]
    config = load_config(str(out), ['tester.netns=""', "tester.lcores=0,1", "left.port=null",
                                    "right.port=null", "trial.duration=0.1", "trial.pause=0",
                                    "trial.timeout=0.1", "trial.learning=no",
                                    "stateful.connections=1000", "stateful.rate_phase1=10000",
                                    "stateful.timeout_phase1=0.1", *responder_only])
    summary = run_procedure("trial", config, tmp_path / "run", rate=1000)
    assert summary["complete"]
    if config.stateful.enabled:
        # phase 1 (taken again when its state table did not fill), then the step
        *phases1, step = read_trials(tmp_path / "run")
        phase1 = phases1[0]
        assert phases1 and all(r["phase"] == "phase1" for r in phases1)
        assert phase1["phase"] == "phase1" and phase1["connections"] == 1000
        assert sum(d["sent"] for d in phase1["directions"].values()) > 0
        assert not step["valid"] and step["phase2"] == "not run"
        # The step's reason is the last attempt's: a state table that did not fill, unless the
        # tester could not keep that attempt's rate (a busy machine).
        if phases1[-1]["valid"]:
            assert step["invalid_reason"].startswith("failed to fill state table: 0 of 1,000")
        else:
            assert step["invalid_reason"].startswith("phase 1: tester could not keep the rate")
        return
    sent = summary["repetitions"][0]["directions"]
    assert sent and all(d["sent"] > 0 for d in sent.values())
    assert set(sent) == set(["forward", "reverse"] if config.traffic.direction == "both"
                            else [config.traffic.direction])


# siitperf's first argument always names the IPv6 frame (its IPv4 frames are 20 bytes shorter);
# xlatperf's traffic.frame_size names the IPv4 frame when a trial carries no IPv6 frame at all.
@pytest.mark.parametrize("cmdline, frame_size, sent", [
    ("84 1000 60 2000 2 2", 64, {4: 64}),        # pure IPv4: the 64-byte frames siitperf sent
    ("1538 1000 60 2000 2 2", 1518, {4: 1518}),  # siitperf's largest, pure IPv4 only
    ("84 1000 60 2000 2 1", 84, {4: 64, 6: 84}),  # IPv6 background: the size names IPv6 frames
])
def test_pure_ipv4_frame_size_is_converted(cmdline, frame_size, sent, tmp_path):
    out = tmp_path / "ipv4.toml"
    result = import_siitperf(DATA / "multi-ip-ipv4.conf", out, cmdline=cmdline)
    config = load_config(str(out))
    assert config.traffic.frame_size == frame_size
    assert {v: trial_frames(config).frame_size_of(IP_STACKS[v]) for v in sent} == sent
    converted = [n for n in result.notes if "names the IPv4 frame" in n]
    assert len(converted) == (frame_size != int(cmdline.split()[0]))


def test_frame_size_without_cmdline_is_siitperfs_minimum_in_xlatperfs_terms(tmp_path):
    """The conf-file path: no size on a command line, siitperf's minimum 84 (IPv6) is taken,
    i.e. 64-byte frames for a pure IPv4 test and 84 for one with IPv6."""
    for name, size, ipv4_frames in (("multi-ip-ipv4", 64, 64), ("multi-ip-ipv6", 84, None),
                                    ("nat64-stateless", 84, 64)):
        out = tmp_path / f"{name}.toml"
        result = import_siitperf(DATA / f"{name}.conf", out)
        config = load_config(str(out))
        assert config.traffic.frame_size == size, name
        if ipv4_frames is not None:
            assert trial_frames(config).frame_size_of(IP_STACKS[4]) == ipv4_frames, name
        assert any("ipv6_frame_size 84" in n for n in result.notes), name


def test_siitperfs_jumbo_ipv6_rule(tmp_path):
    """1519..1538 only for pure IPv4 traffic, as siitperf refuses it otherwise."""
    with pytest.raises(ConfigError, match=r"ipv6_frame_size = 1538: siitperf allows 84..1518 "
                                          r"here \(left sends IPv6\)"):
        import_siitperf(DATA / "nat64-stateless.conf", None, cmdline="1538 1000 60 2000 2 2")
    with pytest.raises(ConfigError, match="m = 1 < n = 2 sends native IPv6 background"):
        import_siitperf(DATA / "multi-ip-ipv4.conf", None, cmdline="1530 1000 60 2000 2 1")


def test_siitperfs_ipv4_offset_is_xlatperfs_header_difference():
    from xlatperf.config.siitperf import SIITPERF_IPV4_SHORTER
    assert SIITPERF_IPV4_SHORTER == IPV6.ip_bytes - IPV4.ip_bytes
