# SPDX-License-Identifier: BSD-3-Clause
"""Several testers in one campaign (xlatperf/run/testers.py, docs/testers.md): parsing
campaign.testers, the units a point and its chained points form, the dispatcher, and campaigns
over two testers with a stand-in for run_procedure (concurrency, resume on the same tester, a
tester that stops) and through the CLI with the fake engine behind tests/fake_ssh (Ctrl-C
stops both testers' engines; the run resumes). The same with real sshd's:
tests/e2e/test_remote_ssh.py."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from xlatperf.run.campaign import run_campaign
from xlatperf.run.campaignfile import load_campaign
from xlatperf.run.campaignstatus import campaign_status, format_status
from xlatperf.run.testers import Dispatcher, parse_testers, work_units
from xlatperf.util.errors import ConfigError, EngineError, EngineExited, MeasurementError

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"


def campaign_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "campaign.toml"
    path.write_text(text)
    return path


TWO = """
[campaign]
config = "base.toml"
procedures = ["trial"]
rate = 1000
testers = ["root@tester1", {name = "b", tester = {ssh = "root@tester2"}, "left.port" = "ring:b", "right.port" = "ring:b"}]
[axes]
"traffic.frame_size" = [64, 128, 256, 512]
"""


# -- parsing -------------------------------------------------------------------------------------

def test_testers_are_ssh_targets_or_tables_of_testbed_keys(fake_config, tmp_path):
    campaign = load_campaign(campaign_file(tmp_path, TWO))
    assert [t.name for t in campaign.testers] == ["root@tester1", "b"]
    assert campaign.testers[1].overrides == {"tester.ssh": "root@tester2",
                                             "left.port": "ring:b", "right.port": "ring:b"}
    point = campaign.points[0]
    assert campaign.config_for(point).tester.ssh == "root@tester1"     # the first by default
    config = campaign.config_for(point, campaign.testers[1])
    assert (config.tester.ssh, config.left.port) == ("root@tester2", "ring:b")
    assert config.traffic.frame_size == 64
    assert parse_testers([{"tester.netns": "a"}, {"tester.netns": "b"}], "x")[1].name == "tester2"


@pytest.mark.parametrize("testers, message", [
    ("[]", r"campaign.testers = \[\]: must be a non-empty list"),
    ("[3]", r"campaign.testers\[1\] = 3: must be a non-empty list"),
    ('[{"traffic.frame_size" = 84}]', r"campaign.testers\[1\]: traffic.frame_size: a tester sets "
                                      r"only testbed keys \(tester.\*, left.\*, right.\*, dut.\*\)"),
    ('["root@a", "root@a"]', r'campaign.testers\[2\]: name = "root@a" is campaign.testers\[1\]\'s '
                             r"too"),
    ('[{name = "a b"}]', r"campaign.testers\[1\].name = 'a b': must be a name"),
    ('[{"tester.shh" = "x"}]', r"'tester.shh' is not a configuration key"),
    ('[{name = "t", "tester.ssh" = "-x"}]', r'on tester t: tester.ssh = "-x": must be ""'),
])
def test_bad_testers_are_named(fake_config, tmp_path, testers, message):
    with pytest.raises(ConfigError, match=message):
        load_campaign(campaign_file(tmp_path, f"""
[campaign]
config = "base.toml"
testers = {testers}
"""))


def test_a_swept_key_cannot_be_a_testers_too(fake_config, tmp_path):
    with pytest.raises(ConfigError, match=r"tester.lcores is set both by campaign.testers\[1\] "
                                          r"and by \[axes\]"):
        load_campaign(campaign_file(tmp_path, """
[campaign]
config = "base.toml"
testers = [{"tester.lcores" = "0,1"}]
[axes]
"tester.lcores" = ["0,1", "0-2"]
"""))


# -- units and the dispatcher --------------------------------------------------------------------

def test_chained_points_stay_with_their_throughput(fake_config, tmp_path):
    campaign = load_campaign(campaign_file(tmp_path, """
[campaign]
config = "base.toml"
procedures = ["throughput", "latency", "pdv", "frame-loss"]
testers = ["a@t1", "b@t2"]
[axes]
"traffic.frame_size" = [64, 1518]
"""))
    units = work_units(campaign.points)
    assert [[p.procedure for p in u] for u in units] == [
        ["throughput", "latency", "pdv"], ["throughput", "latency", "pdv"],
        ["frame-loss"], ["frame-loss"]]
    assert all(len({p.assignments["traffic.frame_size"] for p in u}) == 1 for u in units)


def test_dispatcher_gives_owned_units_first_and_gives_a_unit_back_once():
    units = [["u1"], ["u2"], ["u3"]]
    dispatcher = Dispatcher(units, ["a", "b"], lambda u: "b" if u == ["u3"] else None)
    assert dispatcher.next("b") == ["u3"]            # its own, measured in part before
    assert dispatcher.next("a") == ["u1"]
    assert dispatcher.retire("a", ["u1"], "engine did not start")
    assert dispatcher.next("a") is None and dispatcher.retired == {"a": "engine did not start"}
    assert dispatcher.next("b") == ["u1"]            # given back, first in line
    assert not dispatcher.retire("b", ["u1"], "again")   # fails on a second tester: a failure
    assert dispatcher.next("b") == ["u2"] and dispatcher.next("b") is None
    assert dispatcher.left() == 0


# -- campaigns over two testers, with a stand-in for run_procedure ------------------------------

def fake_runner(log: list, barrier: threading.Barrier | None = None, fail=None):
    """A run_procedure stand-in that records (tester, frame size, thread) and writes a done
    summary; `barrier`: the first points of both testers wait for each other (they must run
    at the same time); fail(config) may raise."""
    lock = threading.Lock()

    def run(procedure, config, out_dir, *, rate, reporter, engine_path, resume, **extra):
        with lock:
            log.append((config.tester.ssh, procedure, config.traffic.frame_size,
                        threading.current_thread().name))
            first = len(log) <= 2
        if barrier is not None and first:
            barrier.wait(timeout=10)
        if fail is not None:
            fail(config, out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "summary.json").write_text(json.dumps(
            {"procedure": procedure, "complete": True, "unit": "fps", "median": 1000.0,
             "n": 1, "config": config.to_dict(), "settings": {"rate": rate}}))
        return {}
    return run


def test_points_are_shared_out_and_run_in_parallel(fake_config, tmp_path):
    campaign = load_campaign(campaign_file(tmp_path, TWO))
    log: list = []
    status = run_campaign(campaign, tmp_path / "out", run=fake_runner(log, threading.Barrier(2)))
    assert status["counts"]["done"] == 4
    assert sorted(size for _, _, size, _ in log) == [64, 128, 256, 512]   # each once
    assert {ssh for ssh, _, _, _ in log} == {"root@tester1", "root@tester2"}
    assert {thread for _, _, _, thread in log} == {"tester root@tester1", "tester b"}
    by_tester = {p["tester"] for p in status["points"]}
    assert by_tester == {"root@tester1", "b"} and status["testers"] == ["root@tester1", "b"]
    for point in status["points"]:
        recorded = json.loads((tmp_path / "out" / "points" / point["id"] / "tester.json").read_text())
        assert recorded["name"] == point["tester"]
    table = format_status(status)
    assert "on testers root@tester1, b" in table and table.splitlines()[1].endswith("tester")
    header = (tmp_path / "out" / "results.csv").read_text().splitlines()[0]
    assert header.endswith(",tester,id")
    stored = json.loads((tmp_path / "out" / "campaign.json").read_text())
    assert stored["testers"][1]["overrides"]["left.port"] == "ring:b"
    log.clear()
    run_campaign(campaign, tmp_path / "out", run=fake_runner(log))   # all done: nothing runs
    assert log == []


def test_the_console_names_the_tester_of_each_point(fake_config, tmp_path):
    from rich.console import Console

    from xlatperf.ui.console import ConsoleReporter
    campaign = load_campaign(campaign_file(tmp_path, TWO))
    reporter = ConsoleReporter(console=Console(record=True, width=200))
    status = run_campaign(campaign, tmp_path / "out", reporter=reporter,
                          run=fake_runner([], threading.Barrier(2)))
    text = reporter.console.export_text()
    assert len(status["points"]) == 4
    for point in status["points"]:
        assert f"{point['index']}/4 on tester {point['tester']}: trial " in text, text


def test_chained_points_run_on_the_tester_of_their_throughput(fake_config, tmp_path):
    campaign = load_campaign(campaign_file(tmp_path, """
[campaign]
config = "base.toml"
procedures = ["throughput", "latency"]
testers = ["a@t1", "b@t2"]
[axes]
"traffic.frame_size" = [64, 128, 256, 512]
"""))
    log: list = []
    run_campaign(campaign, tmp_path / "out", run=fake_runner(log))
    testers = {}
    for ssh, procedure, size, _ in log:
        testers.setdefault(size, set()).add(ssh)
    assert len(log) == 8 and all(len(t) == 1 for t in testers.values())


def test_a_point_measured_in_part_resumes_on_its_tester(fake_config, tmp_path):
    campaign = load_campaign(campaign_file(tmp_path, TWO))
    out = tmp_path / "out"

    def cut_short(config, out_dir):      # tester b's first point: one trial, then the crash
        if config.tester.ssh == "root@tester2" and not (out / "crashed").exists():
            (out / "crashed").write_text("")
            out_dir.mkdir(parents=True, exist_ok=True)
            (out_dir / "trials.jsonl").write_text('{"repetition": 1}\n')
            raise MeasurementError("the DUT went away")
    with pytest.raises(MeasurementError, match="point"):
        run_campaign(campaign, out, run=fake_runner([], fail=cut_short))
    status = campaign_status(out)
    [partial] = [p for p in status["points"] if p["state"] == "failed"]
    assert partial["tester"] == "b"
    # Resumed with the testers listed the other way round: still b measures it.
    reordered = load_campaign(campaign_file(tmp_path, TWO.replace(
        'testers = ["root@tester1", {name = "b", tester = {ssh = "root@tester2"}, "left.port" = '
        '"ring:b", "right.port" = "ring:b"}]',
        'testers = [{name = "b", tester = {ssh = "root@tester2"}, "left.port" = "ring:b", '
        '"right.port" = "ring:b"}, "root@tester1"]')))
    assert reordered.testers[0].name == "b"
    log: list = []
    run_campaign(reordered, out, run=fake_runner(log))
    assert [(ssh, size) for ssh, _, size, _ in log] == [
        ("root@tester2", partial["assignments"]["traffic.frame_size"])]
    # Without b, nobody else may finish what b began: that point fails, naming b.
    (out / "points" / partial["id"] / "summary.json").unlink()
    only_a = load_campaign(campaign_file(tmp_path, TWO.replace(
        ', {name = "b", tester = {ssh = "root@tester2"}, "left.port" = "ring:b", "right.port" = '
        '"ring:b"}', "")))
    with pytest.raises(MeasurementError, match=r"measured in part on tester b, which is not "
                                               r"measuring in this run"):
        run_campaign(only_a, out, run=fake_runner([]))


def test_a_tester_whose_engine_cannot_start_stops_and_the_others_measure(fake_config, tmp_path):
    campaign = load_campaign(campaign_file(tmp_path, TWO))

    def unreachable(config, out_dir):
        if config.tester.ssh == "root@tester2":
            raise EngineError('tester.ssh = "root@tester2": ssh exited with status 255: '
                              "Connection refused")
    log: list = []
    with pytest.raises(MeasurementError, match=r"tester b stopped taking points: point \d .*"
                                               r"Connection refused"):
        run_campaign(campaign, tmp_path / "out", run=fake_runner(log, fail=unreachable))
    status = campaign_status(tmp_path / "out")
    assert status["counts"]["done"] == 4            # tester 1 measured every point
    assert {p["tester"] for p in status["points"]} == {"root@tester1"}


def test_a_point_that_kills_every_engine_fails_after_two_testers(fake_config, tmp_path):
    campaign = load_campaign(campaign_file(tmp_path, TWO))

    def poison(config, out_dir):
        if config.traffic.frame_size == 256:
            raise EngineExited("engine exited with status 139", 139)
    with pytest.raises(MeasurementError):
        run_campaign(campaign, tmp_path / "out", run=fake_runner([], fail=poison))
    states = {p["assignments"]["traffic.frame_size"]: p["state"]
              for p in campaign_status(tmp_path / "out")["points"]}
    assert states == {64: "done", 128: "done", 256: "failed", 512: "done"}


def test_a_configuration_error_stops_every_tester(fake_config, tmp_path):
    campaign = load_campaign(campaign_file(tmp_path, TWO))

    def bad(config, out_dir):
        raise ConfigError("trial.duration = 0: must be > 0")
    with pytest.raises(ConfigError, match="trial.duration"):
        run_campaign(campaign, tmp_path / "out", run=fake_runner([], fail=bad))


# -- the CLI over two (fake) ssh testers, with the fake engine: Ctrl-C and resume -----------------

def engines_running(engine: str) -> list[int]:
    """Processes running `engine` (argv[0], or argv[1] of an interpreter), zombies excepted."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as stream:
                    argv = stream.read().split(b"\0")
                with open(f"/proc/{entry}/stat") as stream:
                    zombie = stream.read().rsplit(") ", 1)[-1].startswith("Z")
            except OSError:
                continue
            if engine.encode() in argv[:2] and not zombie:
                found.append(int(entry))
    return found


def test_cli_ctrl_c_stops_both_testers_and_the_campaign_resumes(fake_config, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ssh").symlink_to(TESTS / "fake_ssh")
    engine = tmp_path / f"engine-{os.getpid()}"     # in every engine's command line
    engine.symlink_to(TESTS / "fake_engine.py")
    marker = str(engine)
    path = campaign_file(tmp_path, f"""
[campaign]
config = "base.toml"
procedures = ["trial"]
rate = 1000
repeat = 2
testers = ["root@tester1", "root@tester2"]
[set]
"trial.duration" = 1.0
"tester.engine" = "{engine}"
[axes]
"traffic.frame_size" = [64, 128, 256]
""")
    out = tmp_path / "out"
    requests = tmp_path / "requests.log"  # every engine's requests
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "FAKE_TRIAL_SECONDS": "10", "FAKE_SSH_LOG": str(tmp_path / "ssh.log"),
           "FAKE_REQUEST_LOG": str(requests)}
    command = [sys.executable, "-m", "xlatperf", "campaign", "run", str(path), "--out", str(out),
               "-q"]
    process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while len(engines_running(marker)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(engines_running(marker)) == 2, "two engines at once, one per tester"
    # Interrupted while a trial runs: each takes 10 s, so the first trial request is in flight
    # when the signal comes, however long the engines took to start on a busy machine (a 0.5 s
    # trial could end before a loaded CI machine delivered the signal: then nothing was aborted).
    deadline = time.monotonic() + 30
    while '"trial"' not in (requests.read_text() if requests.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert '"trial"' in requests.read_text(), "a trial request reached an engine"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert engines_running(marker) == []
    aborted = [json.loads(line) for trials in out.glob("points/*/trials.jsonl")
               for line in trials.read_text().splitlines() if '"aborted"' in line]
    assert aborted                                    # a trial in flight, kept as aborted
    assert "kill -TERM" in (tmp_path / "ssh.log").read_text()
    done = subprocess.run(command, env={**env, "FAKE_TRIAL_SECONDS": "0.5"}, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    status = campaign_status(out)
    assert status["counts"]["done"] == 3
    assert {p["tester"] for p in status["points"]} <= {"root@tester1", "root@tester2"}
    for point in status["points"]:
        summary = json.loads((out / "points" / point["id"] / "summary.json").read_text())
        assert summary["n"] == 2 and summary["config"]["tester"]["ssh"] == point["tester"]
    assert engines_running(marker) == []
