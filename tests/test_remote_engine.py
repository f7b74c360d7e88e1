# SPDX-License-Identifier: BSD-3-Clause
"""The engine on another host over ssh (tester.ssh, xlatperf/engine/remote.py): the ssh and
remote command lines, the probe, and the engine client through tests/fake_ssh (which runs the
remote command here, as sshd would) with the fake engine; Interruption from another thread.
The same with a real sshd: tests/e2e/test_remote_ssh.py."""

import os
import shlex
import subprocess
import threading
import time
from pathlib import Path

import pytest

from xlatperf.config.loading import load_config
from xlatperf.engine import remote
from xlatperf.engine.client import Engine, Interruption, check_ports_exist, hugepage_bytes
from xlatperf.util.errors import ConfigError, EngineError

TESTS = Path(__file__).resolve().parent
FAKE_ENGINE = str(TESTS / "fake_engine.py")
REMOTE = ["tester.ssh=root@tester1", "tester.netns=", "tester.hugepages=no",
          f"tester.engine={FAKE_ENGINE}", "left.port=null", "right.port=null"]


def config_with(*overrides):
    return load_config(None, [*REMOTE, *overrides])


@pytest.fixture
def fake_ssh(tmp_path, monkeypatch):
    """`ssh` on the PATH is tests/fake_ssh; returns the file its invocations are logged to."""
    for name in list(os.environ):
        if name.startswith("FAKE_"):
            monkeypatch.delenv(name)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ssh").symlink_to(TESTS / "fake_ssh")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    log = tmp_path / "ssh.log"
    monkeypatch.setenv("FAKE_SSH_LOG", str(log))
    return log


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stream:
            return stream.read().split(") ")[-1][0] != "Z"
    except OSError:
        return False


# -- configuration ------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["host", "root@tester-1.lab", "u@192.0.2.1", "u@2001:db8::1",
                                   "u@fe80::1%eth0"])
def test_ssh_targets_accepted(value):
    assert load_config(None, [f"tester.ssh={value}"]).tester.ssh == value


@pytest.mark.parametrize("value", ["-oProxyCommand=x", "root@host cmd", "a@b@c", "@host"])
def test_ssh_targets_refused_with_the_key(value):
    with pytest.raises(ConfigError, match=r'tester.ssh = .*: must be "" \(the engine runs on '
                                          r'this host\) or an ssh destination'):
        load_config(None, [f"tester.ssh={value}"])


def test_ssh_settings_need_tester_ssh():
    with pytest.raises(ConfigError, match=r"tester.ssh_port = 2222: takes effect only with "
                                          r"tester.ssh"):
        load_config(None, ["tester.ssh_port=2222"])
    with pytest.raises(ConfigError, match=r"tester.ssh_port = 70000: must be an integer in "
                                          r"0..65535"):
        load_config(None, ["tester.ssh=h", "tester.ssh_port=70000"])
    with pytest.raises(ConfigError, match=r'tester.ssh_options = \["-F/x"\]: must be a list of '
                                          r'ssh options "Name=value"'):
        load_config(None, ["tester.ssh=h", 'tester.ssh_options=["-F/x"]'])


# -- command lines ------------------------------------------------------------------------------

def test_ssh_command_options_in_order():
    config = config_with("tester.ssh_port=2222", "tester.ssh_identity=/keys/id",
                         'tester.ssh_options=["ConnectTimeout=3", "UserKnownHostsFile=/k h"]')
    argv = remote.ssh_command(config, "true")
    # BatchMode first (it must hold), the user's options before the defaults (first one wins)
    assert argv[:8] == ["ssh", "-T", "-o", "BatchMode=yes", "-p", "2222", "-i", "/keys/id"]
    options = [argv[i + 1] for i, a in enumerate(argv) if a == "-o"]
    assert options == ["BatchMode=yes", "ConnectTimeout=3", "UserKnownHostsFile=/k h",
                       *remote.DEFAULT_OPTIONS]
    assert argv[-2:] == ["root@tester1", "true"]
    assert remote.ssh_command(config_with(), "x")[:5] == ["ssh", "-T", "-o", "BatchMode=yes", "-o"]


def test_engine_script_keeps_every_argument_and_prints_the_pid(tmp_path):
    """The remote command line, run by a POSIX shell, execs exactly the engine's argv (spaces,
    quotes, $ and ; stay literal), after printing its pid, which stays the engine's."""
    show = tmp_path / "show"
    show.write_text('#!/bin/sh\necho "pid $$"\nfor a in "$@"; do echo "[$a]"; done\n')
    show.chmod(0o755)
    argv = [str(show), "-l", "0,1", "a b", "it's", "$HOME", "x;y", "--vdev", "net_null0,no-rx=1"]
    done = subprocess.run(["sh", "-c", remote.engine_script(argv)], capture_output=True, text=True)
    pid = remote.parse_pid(done.stderr.splitlines()[0])
    assert done.stdout.splitlines() == [f"pid {pid}"] + [f"[{a}]" for a in argv[1:]]


def test_engine_script_removes_the_runtime_directory_and_keeps_the_status(tmp_path):
    runtime = tmp_path / "dpdk run" / "xlatperf1-1"
    runtime.mkdir(parents=True)
    script = remote.engine_script(["sh", "-c", "exit 3"], str(runtime))
    assert subprocess.run(["sh", "-c", script]).returncode == 3
    assert not runtime.exists() and runtime.parent.exists()


def test_parse_pid():
    assert remote.parse_pid("xlatperf-remote: engine pid 4242\n") == 4242
    assert remote.parse_pid("EAL: xlatperf-remote: engine pid 4242") is None
    assert remote.parse_pid("") is None


def test_parse_probe_and_hugepages():
    facts = remote.parse_probe("netns=missing\nmissing=xlp-tl\nengine=/usr/bin/xlatperf-engine\n"
                               "meminfo=HugePages_Free:     300\nmeminfo=Hugepagesize:    2048 kB\n"
                               "probe=done\n")
    assert not facts.netns_exists and facts.missing_interfaces == ["xlp-tl"]
    assert facts.engine == "/usr/bin/xlatperf-engine"
    assert hugepage_bytes(facts.meminfo) == 300 * 2 * 2**20
    assert remote.parse_probe("engine=/x\n") is None     # cut short: no verdict


def test_probe_script_on_this_host(fake_ssh, tmp_path):
    """The probe's shell script itself, run here: a missing namespace and interface, the engine
    found by path and on the PATH, and this host's hugepage lines."""
    config = config_with()
    facts = remote.probe(config, FAKE_ENGINE, ["lo", "xlpnope0"])
    assert facts.netns_exists and facts.missing_interfaces == ["xlpnope0"]
    assert facts.engine == FAKE_ENGINE
    assert "Hugepagesize" in facts.meminfo
    assert remote.probe(config, "sh", []).engine == subprocess.run(
        ["sh", "-c", "command -v sh"], capture_output=True, text=True).stdout.strip()
    assert remote.probe(config, "/nonexistent/engine", []).engine is None
    facts = remote.probe(config_with("tester.netns=xlp-no-such-ns"), FAKE_ENGINE, ["xlp-tl"])
    assert not facts.netns_exists


def test_checks_name_the_key_and_the_host():
    facts = remote.HostFacts(netns_exists=False)
    config = config_with("tester.netns=xlp-tester", "left.port=af_xdp:xlp-tl")
    with pytest.raises(EngineError, match='tester.netns = "xlp-tester": no such network '
                                          'namespace on tester host root@tester1'):
        check_ports_exist(config, facts)
    config = config_with("left.port=af_packet:eth9")
    with pytest.raises(EngineError, match=r'left.port = "af_packet:eth9": no such interface eth9 '
                                          r'on tester host root@tester1'):
        check_ports_exist(config, remote.HostFacts(missing_interfaces=["eth9"]))


# -- the engine client over (fake) ssh --------------------------------------------------------------

def trial_request(duration=1.0):
    return {"duration": duration, "timeout": 0.1, "finish_early": True, "progress_interval": 0.05,
            "flows": [{"name": "forward", "tx_port": 0, "rx_port": 1, "rate": 1000,
                       "mix": {"n": 1, "m": 1},
                       "foreground": {"ip_version": 4, "src_mac": "02:00:00:00:00:01",
                                      "dst_mac": "02:00:00:00:00:02", "src_ip": "198.18.0.2",
                                      "dst_ip": "198.19.0.2", "frame_size": 64}}]}


def test_engine_over_ssh_hello_trial_shutdown(fake_ssh, tmp_path):
    log = tmp_path / "engine.log"
    with Engine(config_with("tester.ssh_port=2222"), log_path=log) as engine:
        hello = engine.hello()
        assert [p["name"] for p in hello["ports"]] == ["net_null0", "net_null1"]
        reply = engine.trial(trial_request())
        assert reply["valid"] and reply["flows"][0]["received"] == 1000
        pid = engine._remote_pid
        assert pid is not None and alive(pid)
    assert not engine.running and not alive(pid)
    assert engine.command[:2] == ["ssh", "-T"] and engine.command[-2] == "root@tester1"
    calls = fake_ssh.read_text().splitlines()
    assert len(calls) == 2 and "xlatperf-probe" in calls[0]    # the probe, then the engine
    assert f"exec {FAKE_ENGINE}" not in calls[1] and "-p 2222" in calls[1]
    # --no-huge: a file prefix of its own, removed on the tester host by the remote command
    script = engine.command[-1]
    words = shlex.split(script.partition("; status=$?")[0])
    prefix = words[words.index("--file-prefix") + 1]
    assert prefix.startswith(f"xlatperf{os.getpid()}-")
    assert f"rm -rf -- /var/run/dpdk/{prefix}" in script
    assert "xlatperf-remote: engine pid" in log.read_text()


def test_abort_over_ssh_stops_the_remote_engine(fake_ssh, monkeypatch):
    """abort() during a trial: SIGTERM reaches the engine through a second ssh connection (no
    signal crosses ssh without a terminal); it answers "aborted" and exits."""
    monkeypatch.setenv("FAKE_TRIAL_SECONDS", "30")
    engine = Engine(config_with()).start()
    engine.hello()

    def interrupting(event):
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        engine.trial(trial_request(30.0), on_progress=interrupting)
    pid = engine._remote_pid
    started = time.monotonic()
    reply = engine.abort()
    assert reply["valid"] is False and reply["invalid_reason"] == "aborted"
    assert time.monotonic() - started < 10
    assert not engine.running and not alive(pid)
    assert f"kill -TERM {pid}" in fake_ssh.read_text()


def test_ssh_failure_names_the_key(fake_ssh, monkeypatch):
    monkeypatch.setenv("FAKE_SSH_FAIL", "Connection refused")
    with pytest.raises(EngineError, match=r'tester.ssh = "root@tester1": ssh exited with status '
                                          r'255: ssh: connect to host root@tester1 port 22: '
                                          r'Connection refused'):
        Engine(config_with()).start()


def test_missing_identity_and_engine(fake_ssh, tmp_path):
    with pytest.raises(EngineError, match=r'tester.ssh_identity = ".*/nokey": no such file'):
        Engine(config_with(f"tester.ssh_identity={tmp_path}/nokey")).start()
    with pytest.raises(EngineError, match=r'tester.engine = "/opt/none": no executable file '
                                          r'there on tester host root@tester1'):
        Engine(config_with("tester.engine=/opt/none")).start()


def test_interruption_from_another_thread(fake_ssh, monkeypatch):
    """A worker thread measures; the main thread interrupts it (as on Ctrl-C): the worker's
    trial request raises KeyboardInterrupt, abort() returns the aborted reply, the remote
    engine is gone; a new engine in the interrupted scope does not start."""
    monkeypatch.setenv("FAKE_TRIAL_SECONDS", "30")
    outcome, started = {}, threading.Event()
    scope = Interruption()

    def worker():
        with scope:
            engine = Engine(config_with()).start()
            outcome["engine"] = engine
            engine.hello()
            try:
                started.set()
                engine.trial(trial_request(30.0))
            except KeyboardInterrupt:
                outcome["reply"] = engine.abort()
            try:
                Engine(config_with()).start()
            except KeyboardInterrupt:
                outcome["second"] = "refused"

    thread = threading.Thread(target=worker)
    thread.start()
    assert started.wait(30)
    time.sleep(0.3)
    scope.interrupt()
    thread.join(30)
    assert not thread.is_alive()
    assert outcome["reply"]["invalid_reason"] == "aborted"
    assert outcome["second"] == "refused"
    engine = outcome["engine"]
    assert not engine.running and not alive(engine._remote_pid)
