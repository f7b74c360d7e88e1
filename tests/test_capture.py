# SPDX-License-Identifier: BSD-3-Clause
"""[capture]: the configuration's keys, the trial request's `capture`, and the pcapng files the
front end writes from the engine's reply (one per trial and receiving port, named in the
trial's record), with the fake engine."""

import base64
import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from xlatperf.config.loading import load_config
from xlatperf.measure.session import capture_files
from xlatperf.util.errors import ConfigError, EngineError

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("assignment, message", [
    ("capture.frames=0", "capture.frames = 0: must be an integer in 1..4096"),
    ("capture.frames=5000", "capture.frames = 5000: must be an integer in 1..4096"),
    ("capture.snaplen=32", "capture.snaplen = 32: must be an integer in 64..65535"),
    ("capture.stride=0", "capture.stride = 0: must be an integer in 1..1000000"),
    ('capture.enabled="yes"', 'capture.enabled = "yes": must be true or false'),
])
def test_bad_capture_settings_name_key_value_and_range(assignment, message):
    with pytest.raises(ConfigError) as error:
        load_config(None, [assignment])
    assert message in str(error.value)


def packets(path: Path) -> list[tuple[int, int]]:
    """(captured, original length) of each Enhanced Packet Block of a pcapng file."""
    data = path.read_bytes()
    assert data[:4] == b"\x0a\x0d\x0d\x0a"
    found, at = [], 0
    while at < len(data):
        kind, length = struct.unpack_from("<II", data, at)
        assert length >= 12 and struct.unpack_from("<I", data, at + length - 4)[0] == length
        if kind == 6:
            found.append(struct.unpack_from("<II", data, at + 20))
        at += length
    return found


def test_a_trial_with_capture_writes_a_file_per_port_named_in_its_record(fake_config, tmp_path):
    out = tmp_path / "cap"
    done = subprocess.run([sys.executable, "-m", "xlatperf", "trial", "-c", str(fake_config),
                           "--set", "capture.enabled=true", "--set", "capture.frames=7",
                           "--set", "capture.snaplen=64", "--set", "traffic.frame_size=128", "--rate", "1000", "--duration", "1",
                           "--out", str(out), "-q"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]
    measured = [r for r in records if r.get("phase") != "learning"]
    assert measured
    for record in measured:
        captures = record["captures"]
        assert set(captures) == {"0", "1"}     # both directions: both ports receive
        for port, capture in captures.items():
            assert capture["file"] == f"captures/r{record['repetition']}-s{record['step']}-port{port}.pcapng"
            assert capture["frames"] == 7 and capture["missed"] == 0
            assert packets(out / capture["file"]) == [(64, 124)] * 7  # cut at the snap length
    assert '"pcapng":' not in (out / "trials.jsonl").read_text()  # the files, not base64, are kept


def test_without_capture_no_request_key_and_no_files(fake_config, tmp_path):
    out = tmp_path / "plain"
    done = subprocess.run([sys.executable, "-m", "xlatperf", "trial", "-c", str(fake_config),
                           "--rate", "1000", "--duration", "1", "--out", str(out), "-q"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert not (out / "captures").exists()
    assert all("captures" not in json.loads(line)
               for line in (out / "trials.jsonl").read_text().splitlines())


def test_capture_files_decode_and_refuse_what_is_not_base64():
    written = {}

    def name_of(port, data):
        written[port] = data
        return f"captures/x-port{port}.pcapng"

    reply = {"ports": [{"index": 1, "capture": {"frames": 2, "missed": 1,
                                                "pcapng": base64.b64encode(b"\n\r\r\nabc").decode()}},
                       {"index": 0}]}
    assert capture_files(reply, name_of) == {"1": {"file": "captures/x-port1.pcapng", "frames": 2,
                                                   "missed": 1}}
    assert written == {1: b"\n\r\r\nabc"}
    assert "pcapng" not in reply["ports"][0]
    with pytest.raises(EngineError, match="capture of port 1 is not base64"):
        capture_files({"ports": [{"index": 1, "capture": {"pcapng": "not base64!"}}]}, name_of)
