# SPDX-License-Identifier: BSD-3-Clause
"""The engine half of doctor (xlatperf/engine/port_checks.py): each check passing on a hello of
well set-up ports and failing or warning on one that is not, with its fix; a measurement refuses
to start on a failing one (the fake engine's hello)."""

import pytest

from xlatperf.config import load_config
from xlatperf.engine.port_checks import engine_checks, require_ready_ports
from xlatperf.run import run_procedure
from xlatperf.util.errors import EngineError

CONFIG = load_config(None, ["left.port=pci:0000:3b:00.0", "right.port=pci:0000:3b:00.1", "tester.netns=",
                            "tester.hugepages=yes"])


def nic(index: int, **changes) -> dict:
    port = {"index": index, "name": f"0000:3b:00.{index}", "driver": "net_i40e", "bus": "pci", "socket": 0,
            "link_speed_mbps": 10000, "link_up": True,
            "link": {"up": True, "speed_mbps": 10000, "full_duplex": True, "autoneg": True, "wait": 2.4},
            "rx_spread": "none", "mtu": 1508, "max_frame": 1526, "descriptors": {"rx": 4096, "tx": 1024},
            "rss": {"offered": ["ipv4-udp"], "reta_size": 512, "reta_share": []},
            "flow_control": {"found": "full", "now": "none"}, "promiscuous": True, "allmulticast": True,
            "xstats": {"offered": 90, "drops": ["rx_dropped_packets"], "pause": ["rx_xoff_packets"]},
            "timestamps": {"rx_offload": False, "timesync": True, "read_clock": False}}
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(port.get(key), dict):
            port[key] = {**port[key], **value}
        else:
            port[key] = value
    return port


def hello(*ports) -> dict:
    return {"ports": list(ports) or [nic(0), nic(1)]}


def by_name(checks) -> dict:
    return {check.name: check for check in checks}


def test_well_set_up_ports_pass_every_check():
    checks = engine_checks(CONFIG, hello())
    assert [c.status for c in checks] == ["ok"] * len(checks), [c for c in checks if c.status != "ok"]
    found = by_name(checks)
    assert "left port 0000:3b:00.0 10,000 Mbit/s (up after 2.4 s)" in found["ports: link"].found
    assert "IEEE 1588 timesync" in found["ports: hardware timestamps"].found


def test_a_link_still_down_fails_and_stops_a_measurement():
    down = hello(nic(0), nic(1, link={"up": False, "wait": 10.0}, link_up=False, link_speed_mbps=0))
    check = by_name(engine_checks(CONFIG, down))["ports: link"]
    assert check.status == "fail" and check.found == "right port 0000:3b:00.1 down after 10.0 s"
    assert "tester.link_timeout = 30" in check.fix
    with pytest.raises(EngineError, match="ports: link: right port 0000:3b:00.1 down after 10.0 s"):
        require_ready_ports(CONFIG, down)


@pytest.mark.parametrize("ports, name, status, fix", [
    ((nic(0), nic(1, link_speed_mbps=25000)), "ports: link", "warn", "different speeds"),
    ((nic(0), nic(1, link={"full_duplex": False})), "ports: link", "warn", "full duplex"),
    ((nic(0), nic(1, mtu=1500)), "ports: MTU", "fail", "lower traffic.frame_size"),
    ((nic(0), nic(1, flow_control={"now": "full", "error": "Operation not supported"}, xstats={"pause": []})),
     "ports: flow control", "fail", 'tester.flow_control = "keep"'),
    ((nic(0), nic(1, flow_control={"now": "full", "error": "Operation not supported"})),
     "ports: flow control", "warn", "pause frames received are counted and reported"),
    ((nic(0), nic(1, flow_control={"now": "full"})), "ports: flow control", "warn", 'tester.flow_control = "off"'),
    ((nic(0), nic(1, promiscuous=False)), "ports: promiscuous, all-multicast", "warn", "trust on"),
    ((nic(0), nic(1, xstats={"pause": []})), "ports: drop and pause counters", "warn", "no pause frame counter"),
])
def test_each_fault_is_named_with_its_fix(ports, name, status, fix):
    check = by_name(engine_checks(CONFIG, hello(*ports)))[name]
    assert check.status == status and fix in check.fix, check


def test_a_configured_speed_the_link_does_not_run_at_is_named():
    config = load_config(None, ["left.port=pci:0000:3b:00.0", "right.port=pci:0000:3b:00.1", "tester.netns=",
                                "tester.hugepages=yes", "left.speed=25G"])
    check = by_name(engine_checks(config, hello()))["ports: link"]
    assert check.status == "warn" and 'left.speed = "25G" but the link runs at 10,000 Mbit/s' in check.fix


def test_rss_that_leaves_a_queue_out_is_named():
    config = load_config(None, ["left.port=pci:0000:3b:00.0", "right.port=pci:0000:3b:00.1", "tester.netns=",
                                "tester.hugepages=yes", "tester.queues=2", "tester.lcores=0,1,2"])
    spread = {"rx_spread": "rss", "rss": {"reta_share": [256, 256]}}
    assert by_name(engine_checks(config, hello(nic(0, **spread), nic(1, **spread))))["ports: RSS"].status == "ok"
    skewed = nic(1, rx_spread="rss", rss={"reta_share": [512, 0]})
    check = by_name(engine_checks(config, hello(nic(0, **spread), skewed)))["ports: RSS"]
    assert check.status == "warn" and "right port 0000:3b:00.1" in check.fix


def test_virtual_devices_are_not_held_to_a_nics_rules():
    virtual = {"bus": "vdev", "mtu": 1500, "flow_control": {"found": "unsupported", "now": "unsupported"},
               "promiscuous": True, "allmulticast": False, "xstats": {"pause": [], "drops": []}}
    checks = engine_checks(CONFIG, hello(nic(0, **virtual), nic(1, **virtual)))
    assert [c.status for c in checks] == ["ok"] * len(checks), [c for c in checks if c.status != "ok"]


def test_a_measurement_refuses_to_start_on_a_link_that_stayed_down(fake_config, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_LINK_DOWN", "1")
    config = load_config(str(fake_config), ["output.repeat=1"])
    with pytest.raises(EngineError, match="the tester is not ready .* ports: link: right port .* down"):
        run_procedure("trial", config, tmp_path / "t", rate=1000)
    assert not (tmp_path / "t" / "trials.jsonl").exists() or not (tmp_path / "t" / "trials.jsonl").read_text()
