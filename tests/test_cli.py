# SPDX-License-Identifier: BSD-3-Clause
"""The CLI contract, with tests/fake_engine.py standing in for the engine: exit codes, the
one-line error, result files, Ctrl-C."""

import json
import os
import signal
import subprocess
import sys
import time
import types

import pytest

from xlatperf.measure.store import read_trials
from xlatperf.ui import cli


@pytest.fixture
def config(fake_config):
    return str(fake_config)


def run(*argv):
    """Run the CLI in a subprocess: (exit status, stdout, stderr)."""
    done = subprocess.run([sys.executable, "-m", "xlatperf", *argv], capture_output=True,
                          text=True, timeout=60)
    return done.returncode, done.stdout, done.stderr


def test_usage_error_is_one_line():
    status, _, err = run("throughput", "-c", "x.toml")
    assert status == 2
    assert err == "xlatperf: error: the following arguments are required: --out\n"
    status, _, err = run("frobnicate")
    assert status == 2 and err.count("\n") == 1 and err.startswith("xlatperf: error: ")


def test_every_help_page_prints(capsys):
    """--help of xlatperf and of every subcommand prints its page (argparse %-formats help
    texts: a procedure's "110 %" once broke the top-level page)."""
    parser = cli.build_parser()
    commands = [a for a in parser._actions if isinstance(a, cli.argparse._SubParsersAction)][0]
    pages = [[]] + [[name] for name in commands.choices]
    for page in pages:
        with pytest.raises(SystemExit) as done:
            cli.main(page + ["--help"])
        assert done.value.code == 0, page
        assert capsys.readouterr().out.startswith("usage: xlatperf"), page
    assert "recovery from an overload at 110 % of the throughput" in " ".join(
        subprocess.run([sys.executable, "-m", "xlatperf", "--help"], capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": "200"}).stdout.split())


def test_lab_up_help_lists_every_kind_and_its_parameters(monkeypatch, capsys):
    from xlatperf.lab import KINDS
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as done:
        cli.main(["lab", "up", "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())   # as if unwrapped
    for kind in KINDS.values():
        assert f"{kind.name}: {kind.description}" in text
        for name, param in kind.params.items():
            assert f"{name}={param['default']} {param['help']}; allowed: {param['allowed']}" in text


def test_config_error_is_one_line(config, tmp_path, capsys):
    status = cli.main(["throughput", "-c", config, "--out", str(tmp_path / "o"),
                       "--set", "traffic.frame_size=40"])
    err = capsys.readouterr().err
    assert status == 1
    assert err == "xlatperf: error: traffic.frame_size = 40: must be an integer in 64..9216\n"


def test_engine_error_is_one_line(config, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_FAIL", "port af_packet:xlp-tl: no such interface")
    status = cli.main(["trial", "-c", config, "--out", str(tmp_path / "o"), "-q"])
    assert status == 1
    assert capsys.readouterr().err == ("xlatperf: error: engine exited with status 1: "
                                       "port af_packet:xlp-tl: no such interface\n")


def test_throughput(config, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_DUT_LIMIT", "3000000")
    out = tmp_path / "tp"
    status = cli.main(["throughput", "-c", config, "--out", str(out), "--repeat", "3",
                       "--duration", "2"])
    assert status == 0
    assert "throughput per repetition" in capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert summary["procedure"] == "throughput" and summary["complete"] is True
    assert summary["unit"] == "fps" and summary["n"] == 3
    assert 2_990_000 < summary["median"] <= 3_000_000
    for key in ("p1", "p99", "min", "max", "dispersion", "repetitions", "directions",
                "config", "tester", "settings"):
        assert key in summary
    assert summary["settings"]["duration"] == 2.0
    assert summary["settings"]["error"] == 10000
    assert summary["tester"]["engine"] == "0.0.0-fake"
    assert summary["directions"]["forward"]["max_rate"] == 14_880_952
    trials = read_trials(out)
    assert len(trials) == sum(len(r["steps"]) for r in summary["repetitions"])
    assert trials[0]["rate"] == 14_880_952 and trials[0]["repetition"] == 1
    assert (out / "summary.csv").read_text().startswith("repetition,throughput_fps,")


def test_frame_loss_explicit_rates(config, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_DUT_LIMIT", "2000000")
    out = tmp_path / "flr"
    assert cli.main(["frame-loss", "-c", config, "--out", str(out), "-q",
                     "--rates", "1000000,3000000,4000000"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["unit"] == "ratio"
    assert [r["rate"] for r in summary["rates"]] == [4_000_000, 3_000_000, 1_000_000]
    assert summary["median"] == summary["rates"][0]["median"] == 0.5
    assert summary["rates"][2]["median"] == 0


def test_trial_and_rate_limit(config, tmp_path, capsys):
    out = tmp_path / "t"
    assert cli.main(["trial", "-c", config, "--out", str(out), "-q", "--rate", "1000"]) == 0
    assert json.loads((out / "summary.json").read_text())["median"] == 0.0
    assert cli.main(["trial", "-c", config, "--out", str(out), "-q", "--rate", "20000000"]) == 1
    assert "--rate = 20000000: must be at most 14880952" in capsys.readouterr().err


def test_selftest(config, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_TESTER_LIMIT", "5000000")
    out = tmp_path / "self"
    assert cli.main(["selftest", "-c", config, "--out", str(out), "-q"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["check"]["passed"] is True
    assert 4_990_000 < summary["median"] <= 5_000_000
    assert summary["tester_limited"] is True
    monkeypatch.setenv("FAKE_DUT_LIMIT", "10")  # frames lost even at the check's low rate
    assert cli.main(["selftest", "-c", config, "--out", str(out), "-q"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("xlatperf: error: selftest: the 2 s check trial at 10000 fps failed")
    assert err.count("\n") == 1 and "are the ports wired to each other?" in err
    # Every frame arrives but the sender cannot keep even the check's rate: a busy host, not
    # the wiring.
    monkeypatch.delenv("FAKE_DUT_LIMIT")
    monkeypatch.setenv("FAKE_TESTER_LIMIT", "6000")
    assert cli.main(["selftest", "-c", config, "--out", str(out), "-q"]) == 1
    err = capsys.readouterr().err
    assert "tester could not keep the rate" in err and "is the tester's host busy?" in err, err


def test_ctrl_c_keeps_results(config, tmp_path):
    out = tmp_path / "int"
    env = dict(os.environ, FAKE_DUT_LIMIT="3000000", FAKE_TRIAL_SECONDS="0.3")
    process = subprocess.Popen([sys.executable, "-m", "xlatperf", "throughput", "-c", config,
                                "--out", str(out), "-q"], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # wait until two trials are on disk
        if (out / "trials.jsonl").exists() and len(read_trials(out)) >= 2:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert err == f"xlatperf: error: interrupted; incomplete results in {out}\n"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is False
    assert summary["repetitions"][0]["complete"] is False
    trials = read_trials(out)
    assert len(trials) >= 2
    assert sum(len(r["steps"]) for r in summary["repetitions"]) == len(
        [t for t in trials if not t.get("aborted")])


def test_lab_commands_call_the_lab_module(monkeypatch, capsys):
    calls = []

    class LabError(Exception):
        pass

    def lab_up(kind, params, config_out):
        calls.append(("up", kind, params, config_out))
        if kind == "bad":
            raise LabError("unknown lab kind 'bad'")
        return {"params": {"calibrate": False}}   # the lab's state (no calibration here)

    fake = types.SimpleNamespace(lab_up=lab_up, lab_down=lambda: calls.append(("down",)),
                                 LabError=LabError, describe=lambda state: ["lab is up"])
    monkeypatch.setitem(sys.modules, "xlatperf.lab", fake)
    monkeypatch.setattr("xlatperf.lab", fake, raising=False)
    assert cli.main(["lab", "up", "router4", "--param", "rate=1000", "--param", "a=b=c",
                     "--config-out", "lab.toml"]) == 0
    assert cli.main(["lab", "down"]) == 0
    assert calls == [("up", "router4", {"rate": "1000", "a": "b=c"}, "lab.toml"), ("down",)]
    assert cli.main(["lab", "up", "bad", "--config-out", "x"]) == 1
    assert capsys.readouterr().err == "xlatperf: error: unknown lab kind 'bad'\n"


def test_requests_sent_to_the_engine(config, tmp_path, monkeypatch):
    log = tmp_path / "requests.jsonl"
    monkeypatch.setenv("FAKE_REQUEST_LOG", str(log))
    assert cli.main(["trial", "-c", config, "--out", str(tmp_path / "o"), "-q", "--rate", "5000",
                     "--set", "left.ip_version=6", "--set", "traffic.frame_size=84",
                     "--set", "left.virtual_ipv4=198.18.0.2",
                     "--set", "right.virtual_ipv6=2001:2:0:1::2", "--set", "trial.timeout=0.5",
                     "--set", "trial.finish_early=false"]) == 0
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["op"] for r in requests] == ["hello", "addresses", "trial", "shutdown"]
    assert [r["id"] for r in requests] == [1, 2, 3, 4]
    trial = requests[2]
    assert (trial["duration"], trial["timeout"], trial["finish_early"]) == (10.0, 0.5, False)
    forward, reverse = trial["flows"]
    assert (forward["rate"], forward["tx_port"], forward["rx_port"]) == (5000, 0, 1)
    assert forward["foreground"]["frame_size"] == 84
    assert forward["foreground"]["rx_frame_size"] == 64
    assert forward["foreground"]["src_mac"] == "02:00:00:00:00:01"  # the port's MAC from hello
    assert reverse["foreground"]["dst_ip"] == "198.18.0.2"


def test_unwritable_output_directory(config, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert cli.main(["trial", "-c", config, "--out", str(blocker / "sub"), "-q"]) == 1
    assert capsys.readouterr().err.startswith(f"xlatperf: error: --out {blocker / 'sub'}: ")
