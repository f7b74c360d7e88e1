#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A stand-in for xlatperf-engine that speaks protocol 1 (docs/protocol.md) without DPDK, for
testing the front end. Its behaviour comes from environment variables:

  FAKE_DUT_LIMIT        the simulated DUT forwards every frame at rates <= this (fps), and
                        LIMIT x duration frames above it (default: no limit)
  FAKE_TESTER_LIMIT     above this rate the trial is invalid, as if the tester could not keep it
  FAKE_TRIAL_SECONDS    real seconds a trial takes (default 0), progress events every interval
  FAKE_SPEED_MBPS       link speed reported for every port (default 10000)
  FAKE_FAIL             print this to stderr and exit 1 at start (e.g. a missing interface)
  FAKE_REQUEST_LOG      append every request line to this file
  FAKE_DELAY_NS         one-way delay of every frame for delay measurements (default 10000):
                        tagged frame j has FAKE_DELAY_NS + j, the histogram spans [D, 2 D]
  FAKE_TAGGED_LOST      how many tagged frames (the first ones) are reported lost
  FAKE_CONN_RATE        stateful DUT: phase-1 frames (a trial with `learn`) above this rate
                        establish only CONN_RATE x duration connections; the rest are lost
  FAKE_TABLE_CAPACITY   stateful DUT: its connection table keeps the last CAPACITY connections
                        (evicting older ones), so frames from the state table built on an evicted
                        connection are lost; every phase 1 starts from an empty table
  FAKE_FILL_FAILURES    stateful DUT: the first K phase-1 trials of the engine process lose
                        half their frames (a state table that did not fill, to be retaken)
"""

import json
import os
import signal
import sys
import time

aborted = False
state_tables = {}   # port -> learned entries (the engine's Responder state tables)
phase1_trials = 0   # phase-1 trials (with `learn`) so far, for FAKE_FILL_FAILURES


def on_signal(signum, frame):
    global aborted
    aborted = True


def ports_from_eal_args(args):
    names = []
    for index, arg in enumerate(args):
        if arg in ("--vdev", "-a") and index + 1 < len(args):
            names.append(args[index + 1].split(",")[0])
    return names


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def run_trial(request):
    limit = float(os.environ.get("FAKE_DUT_LIMIT", "inf"))
    tester_limit = float(os.environ.get("FAKE_TESTER_LIMIT", "inf"))
    seconds = float(os.environ.get("FAKE_TRIAL_SECONDS", "0"))
    interval = float(request.get("progress_interval", 1.0))
    duration = float(request["duration"])
    flows = request["flows"]
    if not 1e-3 <= duration <= 1e6:  # the engine's range (its trial parser, engine/src/)
        send({"id": request["id"], "ok": False,
              "error": f"duration = {duration:g}: must be a number in 0.001..1000000.0"})
        return
    start = time.monotonic()
    next_event = interval
    while time.monotonic() - start < seconds and not aborted:
        time.sleep(0.01)
        elapsed = time.monotonic() - start
        if elapsed >= next_event:
            next_event += interval
            fraction = elapsed / seconds
            send({"id": request["id"], "event": "progress", "elapsed": elapsed * duration / seconds,
                  "flows": [{"name": f["name"], "sent": int(f["rate"] * duration * fraction),
                             "received": int(min(f["rate"], limit) * duration * fraction)}
                            for f in flows]})
    valid, reason = True, None
    if aborted:
        valid, reason = False, "aborted"
    elif any(f["rate"] > tester_limit for f in flows):
        valid, reason = False, ("tester could not keep the rate: sending took longer than "
                                "duration x (1 + 1e-5)")
    problem = stateful_problem(request)
    if problem:
        send({"id": request["id"], "ok": False, "error": problem})
        return
    replies = []
    for flow in flows:
        planned = flow.get("frames") or round(flow["rate"] * duration)
        sent = planned if valid else planned // 2
        received = sent if flow["rate"] <= limit else min(sent, int(limit * duration))
        received = stateful_received(request, flow, sent, received)
        stream = {"kind": "foreground", "sent": sent, "received": received,
                  "duplicates": 0, "reordered": 0, "bad_length": 0}
        if "delay" in request:
            received = delay_data(request["delay"], stream)
        replies.append({"name": flow["name"], "rate": flow["rate"], "planned": planned,
                        "sent": sent, "received": received,
                        # A frame count is sent on the engine's schedule: the last frame is
                        # due (frames - 1) / rate after the start, maybe well inside duration.
                        "send_time": (planned - 1) / flow["rate"] if "frames" in flow
                        else duration,
                        "streams": [stream]})
    reply = {"id": request["id"], "ok": True, "valid": valid, "invalid_reason": reason,
             "elapsed": duration, "flows": replies, "ports": [{"index": 1, "foreign": 0}]}
    if "learn" in request:
        learn = request["learn"]
        entries = min(learn["table_size"], replies[learn["flow"]]["received"])
        state_tables[learn["port"]] = entries
        reply["state_table"] = {"port": learn["port"], "entries": entries,
                                "capacity": learn["table_size"], "ip_version": learn["ip_version"]}
    send(reply)


def stateful_problem(request):
    """The engine's checks of the stateful keys (docs/protocol.md), or None."""
    for index, flow in enumerate(request["flows"]):
        if "frames" in flow and (flow["frames"] - 1) / flow["rate"] > request["duration"]:
            return f"flows[{index}].frames: must be at most duration x rate + 1"
        if "from_table" in flow:
            if "background" in flow or flow["foreground"].get("vary"):
                return f"flows[{index}].from_table: no background, no vary fields"
            if flow["from_table"]["port"] not in state_tables:
                return f"flows[{index}].from_table: port has no state table"
        if any(v["mode"] == "enumerate" for v in flow["foreground"].get("vary", [])) != \
                ("enumerate" in flow["foreground"]):
            return f"flows[{index}].foreground.enumerate: needs vary fields with mode enumerate"
    learn = request.get("learn")
    if learn is not None:
        if learn.get("ip_version") not in (4, 6):
            return "learn.ip_version: must be 4 or 6"
        if request["flows"][learn["flow"]]["rx_port"] != learn["port"]:
            return "learn.port: must be the rx_port of the flow"
    return None


def stateful_received(request, flow, sent, received):
    """The simulated stateful DUT: connection establishment rate and table capacity."""
    global phase1_trials
    capacity = float(os.environ.get("FAKE_TABLE_CAPACITY", "inf"))
    if "learn" in request:
        conn_rate = float(os.environ.get("FAKE_CONN_RATE", "inf"))
        if flow["rate"] > conn_rate:
            received = min(received, int(sent * conn_rate / flow["rate"]))
        phase1_trials += 1
        if phase1_trials <= int(os.environ.get("FAKE_FILL_FAILURES", "0")):
            received = min(received, sent // 2)
    elif "from_table" in flow:
        entries = state_tables[flow["from_table"]["port"]]
        kept = min(entries, capacity)
        received = min(received, sent if kept == entries else int(sent * kept / entries))
    return received


def delay_data(delay, stream):
    """Fills in the delay measurements of docs/protocol.md; returns the received count."""
    base = float(os.environ.get("FAKE_DELAY_NS", "10000"))
    received = stream["received"]
    if delay.get("frame_timeout"):
        late = received if base > delay["frame_timeout"] * 1e9 else 0
        stream["late"], stream["received"] = late, received - late
        received -= late
    if delay.get("tagged"):
        count, lost = delay["tagged"], int(os.environ.get("FAKE_TAGGED_LOST", "0"))
        delays = [None if j < lost else base + j for j in range(count)]
        if stream.get("late"):
            delays = [None] * count
        stream["tagged"] = {"count": count, "lost": sum(d is None for d in delays),
                            "delays_ns": delays}
    if delay.get("histogram") and received:
        stream["delay"] = {"count": received, "min_ns": base, "max_ns": 2 * base,
                           "mean_ns": 1.5 * base, "p50_ns": 1.5 * base, "p99_ns": 1.99 * base,
                           "p999_ns": 1.999 * base, "relative_error": 2 ** -11,
                           "buckets": [[base, 1.5 * base, received // 2],
                                       [1.5 * base, 2 * base + 1, received - received // 2]]}
        if delay.get("ipdv"):
            stream["ipdv"] = {"count": received - 1, "min_ns": -base / 2, "median_ns": 0.0,
                              "max_ns": base / 2}
    return received


def main():
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if os.environ.get("FAKE_FAIL"):
        print("EAL: Detected CPU lcores: 2", file=sys.stderr)
        print(os.environ["FAKE_FAIL"], file=sys.stderr)
        return 1
    args = sys.argv[1:]
    eal = args[:args.index("--")] if "--" in args else args
    names = ports_from_eal_args(eal)
    speed = int(os.environ.get("FAKE_SPEED_MBPS", "10000"))
    log = os.environ.get("FAKE_REQUEST_LOG")
    print("fake engine: started with " + " ".join(args), file=sys.stderr)
    for line in sys.stdin:
        if log:
            with open(log, "a") as stream:
                stream.write(line)
        request = json.loads(line)
        op = request.get("op")
        if op == "hello":
            send({"id": request["id"], "ok": True, "protocol": 1, "engine": "0.0.0-fake",
                  "dpdk": "DPDK 22.11.11", "tsc_hz": 2_000_000_000,
                  "lcores": {"main": 0, "workers": [1]},
                  "timestamps": {"software": "tsc", "resolution_ns": 0.5, "hardware": False},
                  "ports": [{"index": i, "name": name, "driver": name.rstrip("0123456789"),
                             "mac": f"02:00:00:00:00:0{i + 1}", "link_speed_mbps": speed,
                             "link_up": True, "rx_queues": 1, "tx_queues": 1,
                             "hw_timestamp": False} for i, name in enumerate(names)]})
        elif op == "addresses":
            send({"id": request["id"], "ok": True})
        elif op == "trial":
            run_trial(request)
        elif op == "shutdown":
            send({"id": request["id"], "ok": True})
            return 0
        else:
            send({"id": request["id"], "ok": False, "error": f"unknown op {op!r}"})
        if aborted:
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
