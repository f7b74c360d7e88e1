# SPDX-License-Identifier: BSD-3-Clause
"""The engine's protocol transcripts (engine/tests/transcripts/*.jsonl, replayed against the real
engine by engine/tests/test_transcripts.cpp) replayed through the fake engine, so the two cannot
drift; the front end's mirrored constants checked against the engine's hello limits; the
client's version check and typed errors.

A line is {"name", "request", "reply", "match", "exact"?}: "exact" lines must get the identical
reply; "shape" lines the same keys and JSON types recursively (each list element shaped like the
transcript list's first element) and equal values at the JSON pointers listed in "exact"."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from xlatperf.config.limits import (MAX_CAPTURE_FRAMES, MAX_DURATION, MAX_FLOWS, MAX_PATTERN, MAX_QUEUES, MAX_TUNNELS,
                                    STREAM_IDS)
from xlatperf.frames.stack import IP_HEADERS, MAX_FRAME_SIZE
from xlatperf.config.schema import MIN_FRAME_SIZE
from xlatperf.config.stateful import foreground_frames
from xlatperf.engine.protocol import PROTOCOL_VERSION, check_version, error_from_reply
from xlatperf.util.errors import (EngineBadParameter, EngineError, EngineExecutionFailure)

ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPTS = sorted((ROOT / "engine" / "tests" / "transcripts").glob("*.jsonl"))
FAKE_ENGINE = Path(__file__).resolve().parent / "fake_engine.py"


def lines_of(path: Path) -> list[dict]:
    return [json.loads(text) for text in path.read_text().splitlines() if text.strip()]


def transcript_line(name: str) -> dict:
    for path in TRANSCRIPTS:
        for line in lines_of(path):
            if line["name"] == name:
                return line
    raise AssertionError(f"no transcript line named {name!r}")


def json_type(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}[type(value)]


def shape_difference(want, got, path: str = "reply") -> str:
    """Empty when `got` has the shape of `want`; else where and how it differs."""
    if json_type(want) != json_type(got):
        return f"{path}: {json_type(got)} instead of {json_type(want)}"
    if isinstance(want, dict):
        for key in want:
            if key not in got:
                return f"{path}.{key}: missing"
        for key, value in got.items():
            if key not in want:
                return f"{path}.{key}: not in the transcript"
            difference = shape_difference(want[key], value, f"{path}.{key}")
            if difference:
                return difference
    elif isinstance(want, list) and want:
        for index, value in enumerate(got):
            difference = shape_difference(want[0], value, f"{path}[{index}]")
            if difference:
                return difference
    return ""


def at_pointer(document, pointer: str):
    """RFC 6901 JSON pointer (no escapes are used in the transcripts)."""
    for part in pointer.split("/")[1:]:
        document = document[int(part)] if isinstance(document, list) else document[part]
    return document


def test_shape_difference_finds_each_kind_of_difference():
    want = {"a": 1, "b": [{"c": "x"}], "d": None}
    assert shape_difference(want, {"a": 2.5, "b": [{"c": "y"}, {"c": "z"}], "d": None}) == ""
    assert shape_difference(want, {"a": "1", "b": [], "d": None}) == "reply.a: string instead of number"
    assert shape_difference(want, {"a": 1, "b": [{"c": "x"}, {"c": 1}], "d": None}) == \
        "reply.b[1].c: number instead of string"
    assert shape_difference(want, {"a": 1, "b": [], "d": None, "e": 0}) == "reply.e: not in the transcript"
    assert shape_difference(want, {"a": 1, "b": []}) == "reply.d: missing"
    assert shape_difference({"a": True}, {"a": 1}) == "reply.a: number instead of boolean"


def test_transcripts_cover_the_protocol():
    names = [path.stem for path in TRANSCRIPTS]
    assert {"basics", "trial", "stateful", "bad_requests"} <= set(names)
    errors = [line for path in TRANSCRIPTS for line in lines_of(path)
              if line["match"] == "exact" and not line["reply"]["ok"]]
    assert len(errors) >= 10
    assert {line["reply"]["error"]["type"] for line in errors} == {"bad_parameter", "execution_failure"}


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda path: path.stem)
def test_fake_engine_replays_the_transcript(path):
    """The lines of a file run in order on one fake engine (phase 1 fills the state table a
    later line uses), as on the real engine."""
    process = subprocess.Popen(
        [sys.executable, str(FAKE_ENGINE), "--vdev", "net_null0", "--vdev", "net_null1", "--"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        for line in lines_of(path):
            request = line["request"]
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            while True:
                reply = json.loads(process.stdout.readline())
                if reply.get("id") == request.get("id") and "event" not in reply:
                    break
            want = line["reply"]
            if line["match"] == "exact":
                assert reply == want, line["name"]
            else:
                assert line["match"] == "shape"
                assert shape_difference(want, reply) == "", (line["name"], reply)
                for pointer in line.get("exact", []):
                    assert at_pointer(reply, pointer) == at_pointer(want, pointer), (line["name"], pointer)
            if request.get("op") == "shutdown":
                break
    finally:
        process.stdin.close()
        process.wait(timeout=10)


def test_mirrored_constants_equal_the_engines_limits():
    hello = transcript_line("hello")
    assert hello["reply"]["protocol"] == PROTOCOL_VERSION
    limits = hello["reply"]["limits"]
    assert MIN_FRAME_SIZE == {4: limits["min_frame_size"]["ipv4"], 6: limits["min_frame_size"]["ipv6"]}
    assert MAX_FRAME_SIZE == limits["max_frame_size"]
    assert MAX_QUEUES == limits["max_queues"]
    assert MAX_TUNNELS == limits["max_tunnels"]
    # The front end's IP header layers are the engine's declarations (core/layers/), by name.
    assert [(layer.name, version, layer.header_bytes) for version, layer in IP_HEADERS.items()] == [
        (h["name"], h["version"], h["bytes"]) for h in limits["ip_headers"]]
    assert (MAX_FLOWS, MAX_DURATION, STREAM_IDS, MAX_PATTERN, MAX_CAPTURE_FRAMES) == (
        limits["max_flows"], limits["max_duration"], limits["stream_ids"], limits["max_pattern"],
        limits["max_capture_frames"])
    # The minimum frame holds Ethernet, IP, UDP, the tag and the FCS (the tag's layout: the
    # engine's, docs/protocol.md).
    tag = limits["tag"]
    assert tag["size"] == tag["timestamp"]["offset"] + tag["timestamp"]["size"]
    for version, ip_header in ((4, 20), (6, 40)):
        assert MIN_FRAME_SIZE[version] == 14 + ip_header + 8 + tag["size"] + 4


def test_foreground_frame_rule_equals_the_engines_counts():
    line = transcript_line("trial mixing foreground and background")
    mix = line["request"]["flows"][0]["mix"]
    flow = line["reply"]["flows"][0]
    assert "/flows/0/streams/0/sent" in line["exact"]  # the C++ replay checks these counts
    foreground = foreground_frames(flow["planned"], mix["n"], mix["m"])
    assert [s["sent"] for s in flow["streams"]] == [foreground, flow["planned"] - foreground]


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.7", "2.10"])
def test_same_major_any_minor_is_accepted(version):
    check_version(version)


@pytest.mark.parametrize("version", ["3.0", "1.0", 1, None, "2"])
def test_another_major_is_refused_naming_both_versions(version):
    with pytest.raises(EngineError) as info:
        check_version(version)
    assert f"engine speaks protocol {version!r}" in str(info.value)
    assert f"this front end speaks protocol {PROTOCOL_VERSION!r}" in str(info.value)


def test_typed_errors_become_exception_classes():
    bad = transcript_line("rate 0")["reply"]
    error = error_from_reply("trial", bad)
    assert type(error) is EngineBadParameter
    assert error.key == "flows[0].rate"
    assert str(error) == "engine refused trial: flows[0].rate = 0: must be an integer in 1..1000000000"
    failure = error_from_reply("trial", transcript_line("from_table on a port without a state table")["reply"])
    assert type(failure) is EngineExecutionFailure
    assert isinstance(failure, EngineError)
    assert error_from_reply("hello", transcript_line("unknown key in hello")["reply"]).key == "verbose"
