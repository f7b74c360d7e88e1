# SPDX-License-Identifier: BSD-3-Clause
"""Capture end to end: a trial through TAYGA (the siit lab) with [capture] enabled writes a
pcapng file per port that tshark reads: the right port received the forward frames translated
into IPv4, the left port the reverse frames translated into IPv6, with the lab's mapped
addresses, the configured UDP ports, correct checksums, the test tag, and receive times of
the trial."""

import shutil
import subprocess
import time

import pytest

from e2e_util import trials, xlatperf

FAST = ["--set", "trial.pause=0", "--set", "trial.timeout=0.5"]
FIELDS = ["frame.len", "frame.time_epoch", "ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "udp.srcport",
          "udp.dstport", "ip.checksum.status", "udp.checksum.status", "udp.payload"]


def decoded(path) -> list[dict]:
    """tshark's fields of every frame of a capture file, checksums verified."""
    done = subprocess.run(["tshark", "-r", str(path), "-o", "ip.check_checksum:TRUE",
                           "-o", "udp.check_checksum:TRUE", "-T", "fields", "-E", "separator=/t",
                           *[arg for field in FIELDS for arg in ("-e", field)]],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [dict(zip(FIELDS, line.split("\t"))) for line in done.stdout.splitlines()]


def test_a_capture_through_siit_shows_the_translated_frames_to_tshark(make_lab, tmp_path):
    if shutil.which("tshark") is None:
        pytest.fail("tshark is not installed (scripts/setup.sh installs it)")
    config = make_lab("siit")
    out = tmp_path / "out"
    started = time.time()
    xlatperf("trial", "-c", str(config), "--rate", "2000", "--duration", "1", *FAST,
             "--set", "traffic.frame_size=84", "--set", "capture.enabled=true",
             "--set", "capture.frames=50", "--set", "capture.stride=4", "--out", str(out), "-q")
    ended = time.time()
    [record] = [r for r in trials(out) if r.get("phase") != "learning"]
    assert record["valid"] and record["loss_ratio"] == 0, record
    files = record["captures"]
    assert set(files) == {"0", "1"}
    # Forward: 2001:2::2 -> 2001:2:0:1::2 leaves the left port, TAYGA's explicit mappings make
    # it 198.18.0.2 -> 198.19.0.2 on the right; reverse: 198.19.0.2 -> 198.18.0.2 arrives on
    # the left as 2001:2:0:1::2 -> 2001:2::2.
    expected = {"1": ("ip", "198.18.0.2", "198.19.0.2", 64), "0": ("ipv6", "2001:2:0:1::2", "2001:2::2", 84)}
    for port, (family, src, dst, size) in expected.items():
        assert files[port]["frames"] == 50 and files[port]["missed"] == 0, files[port]
        frames = decoded(out / files[port]["file"])
        assert len(frames) == 50, frames[:3]
        other = "ipv6" if family == "ip" else "ip"
        for frame in frames:
            assert (frame[f"{family}.src"], frame[f"{family}.dst"]) == (src, dst), frame
            assert frame[f"{other}.src"] == "", frame        # translated, not tunnelled
            assert int(frame["frame.len"]) == size - 4, frame  # without the FCS
            assert {frame["udp.srcport"], frame["udp.dstport"]} == {"49184", "7"}, frame
            assert frame["udp.checksum.status"] == "1", frame  # tshark: 1 = good
            if family == "ip":
                assert frame["ip.checksum.status"] == "1", frame
            assert frame["udp.payload"].replace(":", "").startswith(b"XLAT".hex()), frame
            assert started <= float(frame["frame.time_epoch"]) <= ended, (frame, started, ended)
        times = [float(f["frame.time_epoch"]) for f in frames]
        assert times == sorted(times)
        # Every 4th of the first 200 frames (2000 fps, sent evenly: about 0.1 s of the trial).
        assert 0.05 < times[-1] - times[0] < 0.2, (times[0], times[-1])


def test_bad_capture_settings_fail_before_the_engine_starts(tmp_path):
    config = tmp_path / "empty.toml"
    config.write_text("")
    done = xlatperf("trial", "-c", str(config), "--set", "capture.frames=0", "--rate", "1000", "--out", str(tmp_path / "x"),
                    "-q", check=False)
    assert done.returncode != 0
    assert "capture.frames = 0: must be an integer in 1..4096" in done.stderr
