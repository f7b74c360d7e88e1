# SPDX-License-Identifier: BSD-3-Clause
"""Several RX/TX queue pairs per port with the real engine: in-engine ring pairs and net_null
(exact per-queue counts with one and two workers), and af_packet on the loopback lab, where
the kernel's fanout hash spreads RFC 4814 random traffic over the RX queues and the stateful
Responder learns on two queues."""

import pytest

from e2e_util import COUNTS_NOT_PACING, summary, trials, xlatperf
from xlatperf.config.loading import load_config
from xlatperf.engine.client import Engine

# The main lcore sleeps through a trial, so on a 2-CPU host it can share CPU 0 with a second
# worker.
WORKERS = {1: "0,1", 2: "0@0,1@1,2@0"}
# The fanout under test is af_packet's, whatever port type the lab prefers (its veths have one
# queue each, which af_xdp would bind one socket to).
AF_PACKET = ["--set", 'left.port="af_packet:xlp-tl"', "--set", 'right.port="af_packet:xlp-tr"']


def ring_config(tmp_path, name: str, queues: int, workers: int):
    path = tmp_path / f"{name}.toml"
    path.write_text(f'[tester]\nnetns = ""\nlcores = "{WORKERS[workers]}"\nqueues = {queues}\n'
                    f'[left]\nport = "ring:{name}"\nspeed = "100G"\ndut_mac = "02:00:00:00:00:02"\n'
                    f'[right]\nport = "ring:{name}"\nspeed = "100G"\ndut_mac = "02:00:00:00:00:01"\n'
                    + COUNTS_NOT_PACING)
    return path


@pytest.mark.parametrize("queues", [2, 4])
@pytest.mark.parametrize("workers", [1, 2])
def test_ring_pair_queues_carry_exact_shares(exclusive_lab, tmp_path, queues, workers):
    """TX queue q of one ring port feeds RX queue q of the other: each queue's share is exact
    and arrives whole, in both directions at once, and the trial keeps its rate."""
    config = ring_config(tmp_path, f"mq{queues}w{workers}", queues, workers)
    out = tmp_path / "out"
    rate, duration = 200_000, 0.5
    xlatperf("trial", "-c", str(config), "--rate", str(rate), "--duration", str(duration),
             "--set", "trial.pause=0", "--out", str(out), "-q")
    [record] = trials(out)
    assert record["valid"], record
    frames = int(rate * duration)
    shares = [len(range(q, frames, queues)) for q in range(queues)]
    assert record["queues"]["tx"] == {"forward": shares, "reverse": shares}
    # Port 1 receives the forward direction, port 0 the reverse one.
    assert record["queues"]["rx"] == {"1": shares, "0": shares}
    for direction in record["directions"].values():
        assert direction["sent"] == direction["received"] == frames
        assert direction["duplicates"] == direction["reordered"] == 0
    assert summary(out)["complete"]


def test_engine_reports_queues_as_configured_and_net_null_sends_exact_shares(exclusive_lab, tmp_path):
    path = tmp_path / "null.toml"
    path.write_text(f'[tester]\nnetns = ""\nlcores = "{WORKERS[2]}"\nqueues = 2\n'
                    '[left]\nport = "null"\nspeed = "100G"\ndut_mac = "02:00:00:00:00:02"\n'
                    '[right]\nport = "null"\nspeed = "100G"\ndut_mac = "02:00:00:00:00:01"\n'
                    '[traffic]\ndirection = "forward"\n')
    config = load_config(str(path))
    with Engine(config, log_path=tmp_path / "engine.log") as engine:
        hello = engine.hello()
        assert [(p["rx_queues"], p["tx_queues"]) for p in hello["ports"]] == [(2, 2), (2, 2)]
        assert all(p["max_queues"] >= 2 for p in hello["ports"])
        assert hello["lcores"]["workers"] == [1, 2]
        mac = "02:00:00:00:00:02"
        # The schedule rule with a tolerance no preemption reaches: the shares are asserted,
        # not the pacing of senders on CPUs shared with everything else.
        reply = engine.trial({
            "duration": 0.2, "timeout": 0.01, "max_lag": 0.5,
            "flows": [{"name": "forward", "tx_port": 0, "rx_port": 1, "rate": 1_000_000,
                       "foreground": {"ip_version": 4, "src_mac": mac, "dst_mac": mac, "src_ip": "198.18.0.2",
                                      "dst_ip": "198.19.0.2", "frame_size": 64}}]})
    assert reply["valid"], reply["invalid_reason"]
    flow = reply["flows"][0]
    assert [q["sent"] for q in flow["queues"]] == [100_000, 100_000]
    # Never ahead of the schedule: a lane's last frame leaves no earlier than it is due.
    assert all(q["send_time"] >= (2 * q["planned"] - 2 + q["queue"]) / 1_000_000
               for q in flow["queues"])


def test_af_packet_fanout_spreads_random_ports_over_rx_queues(make_lab, tmp_path):
    """RFC 4814 pseudorandom ports over af_packet with two queue pairs: the kernel's flow hash
    (PACKET_FANOUT_HASH) sends frames of different port pairs to different RX queues, and the
    receive queues' counts add up to every frame sent."""
    config = make_lab("loopback")
    out = tmp_path / "out"
    xlatperf("trial", "-c", str(config), "--rate", "20000", "--duration", "0.5",
             "--set", "tester.queues=2", *AF_PACKET, "--set", "traffic.direction=forward",
             "--set", "ports.forward_src=random", "--set", "ports.forward_dst=random",
             "--set", "trial.pause=0", "--out", str(out), "-q")
    [record] = trials(out)
    assert record["valid"], record
    forward = record["directions"]["forward"]
    assert forward["sent"] == forward["received"] == 10_000
    rx = record["queues"]["rx"]["1"]
    assert sum(rx) == 10_000
    assert min(rx) > 2_000, rx  # about half each


def test_stateful_responder_learns_on_two_queues(make_lab, tmp_path):
    """Phase 1's 200 four-tuples arrive spread over the Responder port's two RX queues (kernel
    fanout); the queues' tables merge into one with every tuple, and phase 2's two lanes send
    from it."""
    path = make_lab("loopback")
    config = load_config(str(path), ["tester.queues=2", *AF_PACKET[1::2]])
    left_mac, right_mac = config.left.mac, config.right.mac
    tuples = 200

    def stream(src, dst, src_mac, dst_mac, **extra):
        return {"ip_version": 4, "src_mac": src_mac, "dst_mac": dst_mac, "src_ip": src, "dst_ip": dst,
                "frame_size": 64, **extra}

    vary = [{"field": "src_port", "mode": "enumerate", "min": 1024, "max": 1073},
            {"field": "dst_port", "mode": "enumerate", "min": 80, "max": 83}]
    with Engine(config, log_path=tmp_path / "engine.log") as engine:
        engine.hello()
        phase1 = engine.trial({
            "duration": tuples / 1000, "timeout": 0.5, "seed": 7,
            "learn": {"port": 1, "flow": 0, "ip_version": 4, "table_size": tuples},
            "flows": [{"name": "initiator", "tx_port": 0, "rx_port": 1, "rate": 1000, "frames": tuples,
                       "foreground": stream("198.18.0.2", "198.19.0.2", left_mac, right_mac,
                                            vary=vary, enumerate="random")}]})
        assert phase1["valid"] and phase1["flows"][0]["received"] == tuples
        assert phase1["state_table"]["entries"] == tuples
        per_queue = [q["test_frames"] for q in phase1["ports"][0]["queues"]]
        assert sum(per_queue) == tuples and min(per_queue) > 0, per_queue
        phase2 = engine.trial({
            "duration": 0.5, "timeout": 0.5,
            "flows": [{"name": "responder", "tx_port": 1, "rx_port": 0, "rate": 2000,
                       "from_table": {"port": 1, "selection": "increasing"},
                       "foreground": stream("198.19.0.2", "198.18.0.2", right_mac, left_mac)}]})
    assert phase2["valid"] and phase2["flows"][0]["received"] == 1000
    assert [q["sent"] for q in phase2["flows"][0]["queues"]] == [500, 500]
