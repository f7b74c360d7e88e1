# SPDX-License-Identifier: BSD-3-Clause
"""EAL arguments, engine lookup, and the engine client against tests/fake_engine.py."""

import os
import stat
from pathlib import Path

import pytest

from xlatperf.config.loading import load_config
from xlatperf.config.ports import af_packet_ring_args
from xlatperf.engine import client as engine_module
from xlatperf.engine.client import (MIN_HUGEPAGE_BYTES, Engine, check_ports_exist, eal_args,
                                    engine_command, find_engine, free_hugepage_bytes)
from xlatperf.engine.protocol import PROTOCOL_VERSION
from xlatperf.util.errors import EngineError, EngineExited

FAKE_ENGINE = str(Path(__file__).resolve().parent / "fake_engine.py")
PLENTY = MIN_HUGEPAGE_BYTES  # free hugepage memory that is just enough
NONE = 0


def args_for(*overrides, free=PLENTY):
    return eal_args(load_config(None, list(overrides)), free)


def test_af_packet_pair():
    assert args_for() == [
        "-l", "0,1", "--in-memory", "--no-telemetry", "--log-level=*:notice", "--no-pci",
        "--vdev", "net_af_packet0,iface=xlp-tl,qpairs=1",
        "--vdev", "net_af_packet1,iface=xlp-tr,qpairs=1"]


def test_af_xdp_and_null():
    args = args_for("left.port=af_xdp:veth0", "right.port=null", "tester.lcores=2-4")
    assert args[:2] == ["-l", "2-4"]
    assert args[-4:] == ["--vdev", "net_af_xdp0,iface=veth0,busy_budget=0", "--vdev", "net_null1,no-rx=1"]


def test_pci_ports():
    args = args_for("left.port=pci:0000:03:00.0", "right.port=pci:0000:03:00.1")
    assert "--no-pci" not in args
    assert args[-4:] == ["-a", "0000:03:00.0", "-a", "0000:03:00.1"]
    args = args_for("left.port=pci:03:00.0", "right.port=af_packet:eth1")
    assert "--no-pci" not in args
    assert args[-4:] == ["-a", "0000:03:00.0", "--vdev", "net_af_packet1,iface=eth1,qpairs=1"]


def test_hugepages():
    assert "--no-huge" not in args_for(free=PLENTY)
    auto_without = args_for(free=PLENTY - 1)
    assert auto_without[auto_without.index("--no-huge"):][:3] == ["--no-huge", "-m", "1024"]
    assert "--no-huge" in args_for("tester.hugepages=no", free=PLENTY)
    assert "--no-huge" not in args_for("tester.hugepages=yes", free=NONE)


def test_free_hugepage_bytes(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24000000 kB\nHugePages_Total:     512\n"
                       "HugePages_Free:      300\nHugepagesize:       2048 kB\n")
    assert free_hugepage_bytes(str(meminfo)) == 300 * 2 * 2**20
    meminfo.write_text("MemTotal:       24000000 kB\n")
    assert free_hugepage_bytes(str(meminfo)) == 0
    assert free_hugepage_bytes(str(tmp_path / "missing")) == 0


def test_engine_command_netns_and_force():
    config = load_config(None, ["tester.force=true", "tester.hugepages=yes"])
    command = engine_command(config, "/opt/xlatperf-engine")
    assert command[:5] == ["ip", "netns", "exec", "xlp-tester", "/opt/xlatperf-engine"]
    own = command[command.index("--"):]
    assert own == ["--", "--queues", "1", "--ports", "net_af_packet0,net_af_packet1", "--link-timeout", "10",
                   "--flow-control", "off", "--rx-descriptors", "4096", "--tx-descriptors", "1024", "--force"]
    config = load_config(None, ["tester.netns=", "tester.hugepages=yes"])
    command = engine_command(config, "/opt/e")
    assert command[0] == "/opt/e" and "--force" not in command


def test_ports_without_a_kernel_interface_need_no_namespace():
    # The default tester.netns (the lab's) is not asked of PCI, null or ring ports.
    for ports in (["left.port=pci:0000:03:00.0", "right.port=pci:0000:04:00.0"], ["left.port=null", "right.port=null"]):
        config = load_config(None, ["tester.hugepages=yes", *ports])
        assert engine_command(config, "/e")[0] == "/e"
        check_ports_exist(config)   # no "no such network namespace"


def test_port_options_reach_the_engine_and_the_eal():
    config = load_config(None, ["tester.hugepages=yes", "left.port=pci:0000:05:00.0,txq_inline_max=0",
                                "right.port=pci:0000:04:00.0", "tester.link_timeout=2.5",
                                "tester.flow_control=keep", "tester.rx_descriptors=512",
                                'tester.eal_args=["--socket-mem=1024,0"]'])
    command = engine_command(config, "/e")
    own = command[command.index("--"):]
    # The engine numbers left and right by name, not in the PCI order DPDK probes them in.
    assert own[own.index("--ports") + 1] == "0000:05:00.0,0000:04:00.0"
    assert own[own.index("--link-timeout") + 1] == "2.5"
    assert own[own.index("--flow-control") + 1] == "keep"
    assert own[own.index("--rx-descriptors") + 1] == "512"
    eal = command[:command.index("--")]
    assert eal[eal.index("-a") + 1] == "0000:05:00.0,txq_inline_max=0"
    assert eal[-1] == "--socket-mem=1024,0" and "--no-pci" not in eal


def test_a_pci_port_never_falls_back_to_memory_without_hugepages():
    config = load_config(None, ["left.port=pci:0000:03:00.0"])
    with pytest.raises(EngineError, match='tester.hugepages = "auto": a PCI port needs hugepages'):
        eal_args(config, free_bytes=0)
    assert "--no-huge" in eal_args(load_config(None), free_bytes=0)  # a virtual device may


def test_queues_reach_the_ports_and_the_engine():
    args = args_for("tester.queues=4")
    assert "net_af_packet0,iface=xlp-tl,qpairs=4" in args
    assert args_for("left.port=af_xdp:veth0", "tester.queues=2")[-4:-2] == [
        "--vdev", "net_af_xdp0,iface=veth0,busy_budget=0,start_queue=0,queue_count=2"]
    config = load_config(None, ["tester.queues=3", "tester.hugepages=yes"])
    command = engine_command(config, "/opt/e")
    assert command[command.index("--queues") + 1] == "3"


def test_jumbo_frames_enlarge_af_packet_slots_and_reach_the_engine():
    # Up to 1526 bytes on the wire (1518 + two VLAN tags) the defaults hold the frame.
    assert "--max-frame-size" not in engine_command(load_config(None, ["traffic.frame_size=1518",
                                                                       "right.vlan=2", "right.vlan_outer=3"]), "/e")
    assert "net_af_packet0,iface=xlp-tl,qpairs=1" in args_for("traffic.frame_size=1518")
    # 9000-byte frames with one tag: 9004 bytes; af_packet slots of 9004 + 96, page-aligned,
    # one per block.
    config = load_config(None, ["traffic.frame_size=9000", "left.vlan=5", "tester.hugepages=yes"])
    assert engine_command(config, "/e")[-2:] == ["--max-frame-size", "9004"]
    assert "net_af_packet1,iface=xlp-tr,qpairs=1,framesz=12288,blocksz=12288" in args_for(
        "traffic.frame_size=9000", "left.vlan=5")
    assert af_packet_ring_args(1920) == "" and af_packet_ring_args(1921) == ",framesz=4096,blocksz=4096"


def test_lcores_mapped_to_cpus_use_the_lcores_option():
    # Two workers on a 2-CPU host: the main lcore (which sleeps) shares CPU 0 with worker 2.
    args = args_for("tester.lcores=0@0,1@1,2@0")
    assert args[:2] == ["--lcores", "0@0,1@1,2@0"]


def _executable(path: Path) -> str:
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_find_engine_order(tmp_path, monkeypatch):
    configured, from_env = _executable(tmp_path / "a"), _executable(tmp_path / "b")
    monkeypatch.setenv("XLATPERF_ENGINE", from_env)
    assert find_engine(load_config(None, [f"tester.engine={configured}"])) == configured
    assert find_engine(load_config(None)) == from_env
    monkeypatch.delenv("XLATPERF_ENGINE")
    monkeypatch.setattr(engine_module, "REPO_ENGINE", tmp_path / "absent")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EngineError, match="xlatperf-engine not found"):
        find_engine(load_config(None))
    in_path = _executable(tmp_path / "xlatperf-engine")
    assert find_engine(load_config(None)) == in_path
    with pytest.raises(EngineError, match="tester.engine = /nonexistent: no executable"):
        find_engine(load_config(None, ["tester.engine=/nonexistent"]))


# -- the engine client, against the fake engine ----------------------------------------------

FAKE_CONFIG = ["tester.netns=", "tester.hugepages=no", f"tester.engine={FAKE_ENGINE}",
               "left.port=null", "right.port=null", "trial.duration=1"]


@pytest.fixture
def fake_env(monkeypatch):
    for name in list(os.environ):
        if name.startswith("FAKE_"):
            monkeypatch.delenv(name)
    return monkeypatch


def trial_request(rate=1000):
    return {"duration": 1.0, "timeout": 0.1, "finish_early": True, "progress_interval": 0.05,
            "flows": [{"name": "forward", "tx_port": 0, "rx_port": 1, "rate": rate,
                       "mix": {"n": 1, "m": 1},
                       "foreground": {"ip_version": 4, "src_mac": "02:00:00:00:00:01",
                                      "dst_mac": "02:00:00:00:00:02", "src_ip": "198.18.0.2",
                                      "dst_ip": "198.19.0.2", "frame_size": 64}}]}


def test_hello_trial_shutdown(fake_env, tmp_path):
    fake_env.setenv("FAKE_TRIAL_SECONDS", "0.2")
    log = tmp_path / "engine.log"
    with Engine(load_config(None, FAKE_CONFIG), log_path=log) as engine:
        hello = engine.hello()
        assert hello["protocol"] == PROTOCOL_VERSION
        assert [p["name"] for p in hello["ports"]] == ["net_null0", "net_null1"]
        events = []
        reply = engine.trial(trial_request(), on_progress=events.append)
        assert reply["valid"] and reply["flows"][0]["received"] == 1000
        assert events and events[0]["event"] == "progress"
    assert not engine.running
    assert "fake engine: started with -l 0,1" in log.read_text()


def test_early_exit_reports_last_stderr_line(fake_env):
    fake_env.setenv("FAKE_FAIL", "port af_packet:xlp-tl: no such interface")
    engine = Engine(load_config(None, FAKE_CONFIG)).start()
    with pytest.raises(EngineExited) as info:
        engine.hello()
    assert info.value.returncode == 1
    assert str(info.value) == ("engine exited with status 1: "
                               "port af_packet:xlp-tl: no such interface")
    assert info.value.stderr_tail[-2:] == ["EAL: Detected CPU lcores: 2",
                                           "port af_packet:xlp-tl: no such interface"]
    engine.shutdown()


def test_an_engine_built_for_another_cpu_is_named_as_such(tmp_path):
    # An engine built with -march=native on a newer CPU dies of SIGILL on an older one.
    engine_path = tmp_path / "xlatperf-engine"
    engine_path.write_text("#!/bin/sh\nkill -ILL $$\n")
    engine_path.chmod(0o755)
    config = load_config(None, [*FAKE_CONFIG, f"tester.engine={engine_path}"])
    engine = Engine(config).start()
    with pytest.raises(EngineExited) as info:
        engine.hello()
    assert str(info.value).startswith("engine killed by SIGILL (an instruction this CPU lacks")
    assert "-DXLP_NATIVE=OFF" in str(info.value)
    engine.shutdown()


def test_abort_after_interrupted_trial(fake_env):
    fake_env.setenv("FAKE_TRIAL_SECONDS", "30")
    engine = Engine(load_config(None, FAKE_CONFIG)).start()
    engine.hello()

    def interrupting(event):
        raise KeyboardInterrupt  # as if Ctrl-C arrived while the trial ran
    with pytest.raises(KeyboardInterrupt):
        engine.trial(trial_request(), on_progress=interrupting)
    reply = engine.abort()
    assert reply["valid"] is False and reply["invalid_reason"] == "aborted"
    assert not engine.running


def test_port_name_mismatch(fake_env):
    config = load_config(None, FAKE_CONFIG)
    engine = Engine(config, check_ports=False).start()
    # as if DPDK had numbered the ports differently from the config
    engine.config = config.changed({"left.port": "af_packet:eth0", "right.port": "null"})
    with pytest.raises(EngineError, match="DPDK port 0 is net_null0, but left.port"):
        engine.hello()
    engine.shutdown()


def test_missing_netns_and_interface(fake_env):
    config = load_config(None, FAKE_CONFIG + ["tester.netns=xlp-does-not-exist", "left.port=af_xdp:lo"])
    with pytest.raises(EngineError, match='tester.netns = "xlp-does-not-exist": no such network'):
        Engine(config).start()
    config = load_config(None, FAKE_CONFIG + ["left.port=af_packet:xlpnope0"])
    with pytest.raises(EngineError, match='left.port = "af_packet:xlpnope0": no such interface'):
        Engine(config).start()


def test_the_memory_the_engine_runs_on_is_stated():
    from xlatperf.engine.client import memory_of
    assert memory_of(load_config(None, ["tester.hugepages=yes"])) == "hugepages"
    assert memory_of(load_config(None, ["tester.hugepages=no"])) == 'no hugepages (tester.hugepages = "no"): --no-huge'
    assert memory_of(load_config(None), free_bytes=300 * 2**20) == (
        'no hugepages (tester.hugepages = "auto": 300 MiB free, under 512 MiB): --no-huge')
    assert memory_of(load_config(None), free_bytes=MIN_HUGEPAGE_BYTES) == "hugepages"
