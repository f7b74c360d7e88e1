# SPDX-License-Identifier: BSD-3-Clause
"""The engine on tester hosts over ssh, with real sshd's (tests/e2e/sshd_lab.py: each "host" a
network namespace of its own with an sshd on a link-local veth address): a trial through ssh
on an in-engine ring pair, the tester host's checks (a missing namespace; the engine's own
refusal of an interface with a global address), Ctrl-C during a trial (the remote engine
stops), and a campaign over two tester hosts, one on a ring pair and one driving the lab's
kernel router (router4) through af_packet in the lab's tester namespace, with its points
measured in parallel into one results directory (docs/testers.md)."""

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from e2e_util import summary, trials, xlatperf
from sshd_lab import available, ssh_hosts
from xlatperf import lab
from xlatperf.engine.protocol import RATE_NOT_KEPT
from xlatperf.util.files import toml_value

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "engine" / "build" / "xlatperf-engine"

pytestmark = pytest.mark.skipif(available() is not None, reason=str(available()))


def toml_lines(settings: dict) -> str:
    return "".join(f'"{key}" = {toml_value(value)}\n' for key, value in settings.items())


def ring_tester(name: str) -> dict:
    """A tester whose two ports are an in-engine ring pair: no DUT, exact counts."""
    return {"tester.netns": "", "left.port": f"ring:{name}", "right.port": f"ring:{name}",
            "left.speed": "100G", "right.speed": "100G",
            "left.dut_mac": "02:00:00:00:00:02", "right.dut_mac": "02:00:00:00:00:01"}


def engines_running(marker: str) -> list[int]:
    """Engine processes (any namespace: they are all this host's) with `marker` (a ring or
    interface name) in their command line, zombies excepted."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            zombie = (entry / "stat").read_text().rsplit(") ", 1)[-1].startswith("Z")
        except OSError:
            continue
        if argv[0].endswith(b"xlatperf-engine") and any(marker.encode() in a for a in argv) \
                and not zombie:
            found.append(int(entry.name))
    return found


def wait_gone(marker: str, seconds: float = 10.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while engines_running(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    return engines_running(marker)


@pytest.fixture
def hosts(exclusive_lab, tmp_path):
    if not ENGINE.exists():
        pytest.fail("xlatperf-engine is not built (run scripts/setup.sh)")
    with ssh_hosts(tmp_path, 2) as made:
        yield made


def write_tester(tmp_path: Path, name: str, settings: dict) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text("[tester]\n" + "".join(
        f"{key.split('.', 1)[1]} = {toml_value(value)}\n"
        for key, value in settings.items() if key.startswith("tester.")) + "".join(
        f"[{side}]\n" + "".join(f"{key.split('.', 1)[1]} = {toml_value(value)}\n"
                                for key, value in settings.items() if key.startswith(side + "."))
        for side in ("left", "right")))
    return path


def test_trial_over_ssh_and_the_tester_hosts_checks(hosts, tmp_path):
    host = hosts[0]
    ring = f"xlpssh{os.getpid()}"
    settings = {**host.settings(), "tester.engine": str(ENGINE), "tester.lcores": "0,1",
                **ring_tester(ring)}
    config = write_tester(tmp_path, "remote", settings)
    out = tmp_path / "out"
    rate, duration = 100_000, 0.5
    xlatperf("trial", "-c", str(config), "--rate", str(rate), "--duration", str(duration),
             "--set", "trial.pause=0", "--set", "traffic.direction=forward", "--out", str(out),
             "-q")
    [record] = trials(out)
    forward = record["directions"]["forward"]
    assert forward["sent"] == forward["received"] == int(rate * duration)
    # Valid, or (on a busy host) invalid because the sender fell behind: never for another reason.
    assert record["valid"] or str(record.get("invalid_reason")).startswith(RATE_NOT_KEPT), record
    result = summary(out)
    assert result["complete"] and result["config"]["tester"]["ssh"] == host.target
    assert "xlatperf-remote: engine pid" in (out / "engine.log").read_text()
    assert wait_gone(ring) == []

    # The front end's checks look at the tester host, the engine's own check runs there.
    # (the namespace of the ports' kernel interfaces: ring ports have none and need none)
    missing = xlatperf("trial", "-c", str(config), "--rate", "1000", "--duration", "0.1",
                       "--set", "tester.netns=xlp-sshtest-none", "--set", "left.port=af_packet:xlp-any",
                       "--set", "right.port=null", "--out", str(tmp_path / "x"), check=False)
    assert missing.returncode == 1
    assert ('tester.netns = "xlp-sshtest-none": no such network namespace on tester host '
            f"{host.target}") in missing.stderr
    # (this kernel has no dummy interfaces: a veth pair inside the host's namespace)
    subprocess.run(["ip", "-n", host.namespace, "link", "add", "xlpglobal0", "type", "veth",
                    "peer", "name", "xlpglobal1"], check=True)
    subprocess.run(["ip", "-n", host.namespace, "addr", "add", "192.0.2.1/24", "dev",
                    "xlpglobal0"], check=True)
    for link in ("xlpglobal0", "xlpglobal1"):
        subprocess.run(["ip", "-n", host.namespace, "link", "set", link, "up"], check=True)
    refused = xlatperf("trial", "-c", str(config), "--rate", "1000", "--duration", "0.1",
                       "--set", "left.port=af_packet:xlpglobal0", "--set", "right.port=null",
                       "--out", str(tmp_path / "y"), check=False)
    assert refused.returncode == 1
    assert "refusing port on interface 'xlpglobal0'" in refused.stderr, refused.stderr
    assert "192.0.2.1" in refused.stderr and "force" in refused.stderr
    assert wait_gone("xlpglobal0") == []


def test_ctrl_c_stops_the_remote_engine(hosts, tmp_path):
    host = hosts[1]
    ring = f"xlpsshc{os.getpid()}"
    settings = {**host.settings(), "tester.engine": str(ENGINE), "tester.lcores": "0,1",
                "tester.hugepages": "no", **ring_tester(ring)}
    config = write_tester(tmp_path, "remote", settings)
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "xlatperf", "trial", "-c", str(config), "--rate", "10000",
         "--duration", "60", "--set", "trial.pause=0", "--out", str(out), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    for line in process.stdout:                       # until the trial runs
        if json.loads(line).get("event") == "progress":
            break
    else:
        pytest.fail(f"no progress: {process.communicate()}")
    assert len(engines_running(ring)) == 1
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert time.monotonic() - started < 20            # not the trial's 60 s
    assert wait_gone(ring, 5) == []
    [record] = trials(out)
    assert record["aborted"] and record["invalid_reason"] == "aborted"
    # The --no-huge run's DPDK runtime directory went with the engine, on the tester host.
    assert not list(Path("/var/run/dpdk").glob(f"xlatperf{process.pid}-*"))


def test_campaign_over_two_tester_hosts(hosts, tmp_path):
    """Two tester hosts, two testbeds: host 1 an in-engine ring pair, host 2 the lab's kernel
    router (router4) through af_packet in the lab's tester namespace. The campaign's points
    are shared out and measured at the same time; one results directory says who measured
    what."""
    ring = f"xlpsshm{os.getpid()}"
    try:
        lab.lab_up("router4", {}, str(tmp_path / "router4.toml"))
        ring_host, lab_host = hosts
        common = {key: value for key, value in ring_host.settings().items()
                  if key != "tester.ssh"}
        common_options = common.pop("tester.ssh_options")
        testers = [
            {"name": "ring", "tester.ssh": ring_host.target, **ring_tester(ring),
             "tester.ssh_options": common_options, "tester.lcores": "0@1,1@0"},
            {"name": "router4", "tester.ssh": lab_host.target,
             "tester.ssh_options": lab_host.settings()["tester.ssh_options"],
             "tester.lcores": "0@0,1@1"},
        ]
        campaign = tmp_path / "two.toml"
        campaign.write_text(
            '[campaign]\nconfig = "router4.toml"\nprocedures = ["trial"]\nrepeat = 1\n'
            "testers = [" + ", ".join(
                "{" + ", ".join(f'"{k}" = {toml_value(v)}' for k, v in t.items()) + "}"
                for t in testers) + "]\n"
            "[set]\n" + toml_lines({"tester.engine": str(ENGINE), "tester.hugepages": "no",
                                    "tester.ssh_identity": common["tester.ssh_identity"],
                                    "trial.duration": 0.5, "trial.timeout": 0.3,
                                    "trial.pause": 0.1, "traffic.direction": "forward"})
            + '[axes]\n"traffic.frame_size" = [64, 512, 1280]\nrate = [5000, 10000]\n')
        out = tmp_path / "out"
        done = xlatperf("campaign", "run", str(campaign), "--out", str(out), "-q",
                        timeout=300)
        status = xlatperf("campaign", "status", str(out), "--json")
    finally:
        lab.lab_down()
    assert wait_gone(ring) == [] and wait_gone("xlp-tl") == []
    assert done.returncode == 0
    points = json.loads(status.stdout)["points"]
    assert len(points) == 6 and all(p["state"] == "done" for p in points)
    by_tester = {}
    for point in points:
        by_tester.setdefault(point["tester"], []).append(point)
        result = summary(out / "points" / point["id"])
        tester = "ring" if result["config"]["left"]["port"].startswith("ring:") else "router4"
        assert point["tester"] == tester
        assert result["config"]["tester"]["ssh"] == hosts[0 if tester == "ring" else 1].target
        for record in trials(out / "points" / point["id"]):
            forward = record["directions"]["forward"]
            if record.get("phase") == "learning":
                continue
            assert forward["sent"] == int(point["rate"] * 0.5)
            assert forward["received"] == forward["sent"]      # the kernel forwards 10 kfps
    assert set(by_tester) == {"ring", "router4"}
    # Measured at the same time: some point of one tester overlaps one of the other.

    def span(point):
        result = summary(out / "points" / point["id"])
        return tuple(datetime.fromisoformat(result[k]) for k in ("started", "finished"))
    assert any(span(a)[0] < span(b)[1] and span(b)[0] < span(a)[1]
               for a in by_tester["ring"] for b in by_tester["router4"])
    rows = (out / "results.csv").read_text().splitlines()
    assert len(rows) == 7 and rows[0].endswith(",tester,id")
