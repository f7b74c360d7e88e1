# SPDX-License-Identifier: BSD-3-Clause
"""Configuration loading, --set overrides and validation messages."""

import json
from pathlib import Path

import pytest

from xlatperf.config.loading import default_config, load_config
from xlatperf.util.errors import ConfigError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SIIT_6_4 = ["left.ip_version=6", "traffic.frame_size=84", "left.virtual_ipv4=198.18.0.2",
            "right.virtual_ipv6=2001:2:0:1::2"]


def error_of(*overrides, path=None) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(path, list(overrides))
    return str(info.value)


def test_defaults_are_valid_and_json_ready():
    config = load_config(None)
    assert config == default_config()
    assert config.traffic.frame_size == 64
    assert config.trial.duration == 60.0
    assert config.traffic.src_port == 0xC020
    json.dumps(config.to_dict())


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.name)
def test_examples_load(example):
    load_config(str(example))


# Every message names the key, shows the value and says what is allowed.
@pytest.mark.parametrize("override, message", [
    ("traffic.frame_size=40", "traffic.frame_size = 40: must be an integer in 64..9216"),
    ("traffic.frame_size=9217", "traffic.frame_size = 9217: must be an integer in 64..9216"),
    ("traffic.frame_size=64.5", "traffic.frame_size = 64.5: must be an integer in 64..9216"),
    ("traffic.src_port=70000", "traffic.src_port = 70000: must be an integer in 0..65535"),
    ("traffic.mix_n=0", "traffic.mix_n = 0: must be an integer in 1..1000"),
    ("traffic.mix_m=2", "traffic.mix_m = 2: must be an integer in 1..1 (1 <= mix_m <= mix_n)"),
    ("traffic.direction=sideways",
     'traffic.direction = "sideways": must be one of "forward" | "reverse" | "both"'),
    ("left.ip_version=5", "left.ip_version = 5: must be one of 4 | 6"),
    ("left.ipv4=198.18.0.256", 'left.ipv4 = "198.18.0.256": must be an IPv4 address'),
    ("right.ipv6=2001:2::g", 'right.ipv6 = "2001:2::g": must be an IPv6 address'),
    ("left.virtual_ipv6=10.0.0.1", 'left.virtual_ipv6 = "10.0.0.1": must be an IPv6 address'),
    ("left.dut_mac=02:00:00:00:01", 'left.dut_mac = "02:00:00:00:01": must be a MAC address'),
    ("left.mac=01:00:5e:00:00:01", 'left.mac = "01:00:5e:00:00:01": must be a unicast MAC'),
    ("left.port=eth0", 'left.port = "eth0": must be a port spec: pci:'),
    ("left.port=pci:3:0.0", 'left.port = "pci:3:0.0": must be pci:DOMAIN:BUS:DEVICE.FUNCTION'),
    ("right.port=af_packet:a,b", 'right.port = "af_packet:a,b": must be af_packet:IFACE'),
    ("left.port=af_xdp:averyveryverylongname", "must be af_xdp:IFACE"),
    ("left.port=ring:r-0", 'left.port = "ring:r-0": must be ring:NAME'),
    ("left.port=ring:r0", 'right.port = "af_packet:xlp-tr": must be "ring:r0" too'),
    ("left.speed=fast", 'left.speed = "fast": must be a link speed like "10G"'),
    ("tester.lcores=0", 'tester.lcores = "0": must be a DPDK lcore list'),
    ("tester.lcores=0,0", 'tester.lcores = "0,0": must be a DPDK lcore list'),
    ("tester.lcores=0@0,0@1", 'tester.lcores = "0@0,0@1": must be a DPDK lcore list'),
    ("tester.lcores=0@0,1", 'tester.lcores = "0@0,1": must be a DPDK lcore list'),
    ("tester.queues=0", "tester.queues = 0: must be an integer in 1..64"),
    ("tester.queues=65", "tester.queues = 65: must be an integer in 1..64"),
    ("tester.hugepages=maybe", 'tester.hugepages = "maybe": must be one of "auto" | "yes" | "no"'),
    ("tester.force=yes", 'tester.force = "yes": must be true or false'),
    ("trial.duration=0", "trial.duration = 0: must be a number > 0"),
    ("trial.duration=-5", "trial.duration = -5: must be a number > 0"),
    ("trial.timeout=-1", "trial.timeout = -1: must be a number >= 0"),
    ("trial.finish_early=1", "trial.finish_early = 1: must be true or false"),
    ("throughput.error=0", "throughput.error = 0: must be an integer >= 1"),
    ("throughput.loss_tolerance=1", "throughput.loss_tolerance = 1: must be a number in [0, 1)"),
    ("frame_loss.step=20", "frame_loss.step = 20: must be a number in (0, 10]"),
    ("frame_loss.start=0", "frame_loss.start = 0: must be a number in (0, 100]"),
    ("frame_loss.rates=[1000,0]", "frame_loss.rates = [1000, 0]: must be a list of positive"),
    ("output.repeat=0", "output.repeat = 0: must be an integer >= 1"),
    ("trial.colour=red", "trial.colour: unknown key in [trial] (keys: duration, timeout"),
    ("dutt.port=x", "dutt.port: unknown section [dutt]"),
])
def test_validation_messages(override, message):
    assert message in error_of(override)


def test_unknown_key_in_file(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text("[traffic]\nframe_sise = 64\n")
    assert "traffic.frame_sise: unknown key in [traffic]" in error_of(path=str(path))
    path.write_text("[dutt]\nx = 1\n")
    assert "[dutt]: unknown section" in error_of(path=str(path))


def test_file_errors(tmp_path):
    assert "no such configuration file" in error_of(path=str(tmp_path / "missing.toml"))
    bad = tmp_path / "bad.toml"
    bad.write_text("[trial\n")
    assert f"{bad}: invalid TOML" in error_of(path=str(bad))


def test_set_overrides_parse_toml_else_string(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[trial]\nduration = 30\n[tester]\nnetns = "lab"\n')
    config = load_config(str(path), [
        "trial.duration=10",               # int -> float
        "trial.finish_early=false",        # TOML boolean
        "tester.netns=",                   # empty string
        "tester.lcores=2,3",               # not TOML: taken as a string
        "left.port=null",
        'right.port="null"',               # quoted TOML string
        "left.ipv4=198.18.0.7",
        "frame_loss.rates=[3000, 2000]",
        "throughput.loss_tolerance=1e-3",
    ])
    assert config.trial.duration == 10.0
    assert config.trial.finish_early is False
    assert config.tester.netns == ""
    assert config.tester.lcores == "2,3"
    assert config.left.port == config.right.port == "null"
    assert config.left.ipv4 == "198.18.0.7"
    assert config.frame_loss.rates == (3000, 2000)
    assert config.throughput.loss_tolerance == 0.001
    # a string key keeps the text even when it parses as another TOML type
    assert load_config(None, ["tester.lcores=1", "tester.lcores=0,1"]).tester.lcores == "0,1"
    assert "tester.lcores = \"7\"" in error_of("tester.lcores=7")
    # later assignments win
    assert load_config(None, ["trial.pause=1", "trial.pause=2"]).trial.pause == 2.0


def test_set_syntax_errors():
    assert "expected SECTION.KEY=VALUE" in error_of("duration=10")
    assert "expected SECTION.KEY=VALUE" in error_of("trial.duration")


def test_normalisation():
    config = load_config(None, ["left.dut_mac=02:AA:BB:CC:DD:EE", "left.port=pci:03:00.0",
                                "right.port=pci:0000:04:00.1", "right.ipv6=2001:0002:0::0002"])
    assert config.left.dut_mac == "02:aa:bb:cc:dd:ee"
    assert config.left.port == "pci:0000:03:00.0"
    assert config.right.ipv6 == "2001:2::2"


# -- frame sizes (docs/config.md "Frame size") ------------------------------------------------

def test_minimum_frame_size_ipv4_only_is_64():
    assert load_config(None, ["traffic.frame_size=64"]).traffic.frame_size == 64


@pytest.mark.parametrize("case", [
    ["left.ip_version=6", "right.ip_version=6"],                       # 6/6
    SIIT_6_4[:1] + SIIT_6_4[2:],                                       # 6/4
    ["right.ip_version=6", "left.virtual_ipv6=2001:2::1:2", "right.virtual_ipv4=198.19.0.9"],
    ["traffic.mix_n=2"],                                               # 4/4 with background
])
def test_minimum_frame_size_with_ipv6_is_84(case):
    message = error_of(*case, "traffic.frame_size=64")
    assert message.startswith("traffic.frame_size = 64: must be an integer in 84..9216")
    load_config(None, case + ["traffic.frame_size=84"])


# -- addresses -------------------------------------------------------------------------------

def test_virtual_addresses_required_for_6_4():
    load_config(None, SIIT_6_4)
    missing_right = [o for o in SIIT_6_4 if not o.startswith("right.virtual")]
    message = error_of(*missing_right)
    assert message.startswith('right.virtual_ipv6 = "": must be an IPv6 address')
    assert "forward" in message
    missing_left = [o for o in SIIT_6_4 if not o.startswith("left.virtual")]
    assert error_of(*missing_left).startswith('left.virtual_ipv4 = "": must be an IPv4 address')
    # only the addresses of active directions are needed
    load_config(None, missing_left + ["traffic.direction=forward"])


def test_virtual_addresses_required_for_4_6():
    message = error_of("right.ip_version=6", "traffic.frame_size=84")
    assert message.startswith('right.virtual_ipv4 = "": must be an IPv4 address')


def test_real_addresses_required():
    assert error_of("left.ipv4=").startswith('left.ipv4 = "": must be an IPv4 address')
    assert error_of("left.ip_version=6", "right.ip_version=6", "traffic.frame_size=84",
                    "right.ipv6=").startswith('right.ipv6 = "": must be an IPv6 address')


def test_background_needs_both_ipv6_addresses():
    message = error_of("traffic.mix_n=10", "traffic.mix_m=9", "traffic.frame_size=84",
                       "left.ipv6=")
    assert message.startswith('left.ipv6 = "": must be an IPv6 address: background traffic')
    # without background, a pure IPv4 test needs no IPv6 address
    load_config(None, ["left.ipv6=", "right.ipv6="])


# -- ports -----------------------------------------------------------------------------------

def test_port_order_constraints():
    assert "must differ from left.port" in error_of("left.port=af_packet:a", "right.port=af_packet:a")
    load_config(None, ["left.port=null", "right.port=null"])
    # The engine numbers the ports by side (--ports), so any order of devices will do.
    load_config(None, ["left.port=af_packet:a", "right.port=pci:0000:03:00.0"])
    load_config(None, ["left.port=pci:0000:04:00.0", "right.port=pci:0000:03:00.0"])
    load_config(None, ["left.port=pci:0000:03:00.0", "right.port=af_xdp:veth1"])
    assert "must differ from left.port" in error_of("left.port=pci:0000:03:00.0",
                                                    "right.port=pci:0000:03:00.0,rxq_cqe_comp_en=0")


def test_pci_ports_take_driver_arguments_and_need_hugepages():
    config = load_config(None, ["left.port=pci:03:00.0,rxq_cqe_comp_en=0,txq_inline_max=0",
                                "right.port=pci:0000:04:00.0"])
    assert config.left.port == "pci:0000:03:00.0,rxq_cqe_comp_en=0,txq_inline_max=0"
    assert "KEY=VALUE pairs" in error_of("left.port=pci:0000:03:00.0,bad arg")
    assert error_of("left.port=pci:0000:03:00.0", "tester.hugepages=no").startswith(
        'tester.hugepages = "no": must be "auto" or "yes" with a PCI port')


def test_eal_args_refuse_what_xlatperf_sets_itself():
    assert load_config(None, ['tester.eal_args=["--socket-mem=1024,0", "--iova-mode=va"]']
                       ).tester.eal_args == ("--socket-mem=1024,0", "--iova-mode=va")
    for own in ("-l0-3", "--lcores=0@0", "--no-huge", "-a0000:03:00.0", "--vdev=net_null0",
                "--file-prefix=x"):
        assert "xlatperf sets that itself" in error_of(f'tester.eal_args=["{own}"]'), own
    assert "must be a list of EAL arguments" in error_of('tester.eal_args="--socket-mem=1"')
