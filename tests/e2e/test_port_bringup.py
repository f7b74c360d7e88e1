# SPDX-License-Identifier: BSD-3-Clause
"""The engine's ports as a real NIC needs them, on DPDK's virtual devices that have a link of
their own: net_tap (its link follows the kernel interface, so a test can take it down and up)
and net_memif (down until a peer connects: the timeout path). The engine binary is driven over
its protocol directly, in a network namespace of the test's own; nothing leaves it."""

import json
import os
import subprocess
import threading
import time

import pytest

from conftest import ENGINE

NETNS = "xlp-ports"
TAPS = ("xlp-tap0", "xlp-tap1")
MEMIF_SOCKET = "/run/xlp-memif-test.sock"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")


def ip(*args: str) -> None:
    subprocess.run(["ip", "-n", NETNS, *args], check=True)


class EngineProcess:
    """The engine started with raw EAL arguments in NETNS, spoken to line by line."""

    def __init__(self, eal: list[str], own: list[str]):
        command = ["ip", "netns", "exec", NETNS, str(ENGINE), "-l", "0,1", "--no-huge", "-m", "512",
                   "--file-prefix", f"xlpports{os.getpid()}", "--no-pci", "--no-telemetry",
                   "--log-level=*:warning", *eal, "--", *own]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, bufsize=1)
        self.next_id = 1

    def request(self, op: str, **fields) -> dict:
        request_id, self.next_id = self.next_id, self.next_id + 1
        self.process.stdin.write(json.dumps({"id": request_id, "op": op, **fields}) + "\n")
        self.process.stdin.flush()
        for line in self.process.stdout:
            message = json.loads(line)
            if message.get("id") == request_id and "event" not in message:
                return message
        raise AssertionError(f"engine exited: {self.process.stderr.read()}")

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.request("shutdown")
            finally:
                self.process.stdin.close()
        self.process.wait(timeout=30)


@pytest.fixture
def netns(exclusive_lab):
    subprocess.run(["ip", "netns", "del", NETNS], stderr=subprocess.DEVNULL)
    subprocess.run(["ip", "netns", "add", NETNS], check=True)
    yield
    subprocess.run(["ip", "netns", "del", NETNS], check=True)


@pytest.fixture
def taps(netns):
    """The engine on two net_tap ports whose kernel interfaces are wired to each other (tc
    mirred both ways): what one port sends the other receives."""
    engine = EngineProcess([f"--vdev=net_tap{i},iface={name}" for i, name in enumerate(TAPS)],
                           ["--link-timeout", "2"])
    try:
        hello = engine.request("hello")
        for here, there in (TAPS, TAPS[::-1]):
            ip("link", "set", here, "up")
            tc = ["ip", "netns", "exec", NETNS, "tc"]
            subprocess.run([*tc, "qdisc", "add", "dev", here, "ingress"], check=True)
            subprocess.run([*tc, "filter", "add", "dev", here, "parent", "ffff:", "protocol", "all", "u32",
                            "match", "u32", "0", "0", "action", "mirred", "egress", "redirect", "dev", there],
                           check=True)
        yield engine, hello
    finally:
        engine.close()


def trial(engine: EngineProcess, duration: float = 3.0) -> tuple[dict, float]:
    flow = {"name": "forward", "tx_port": 0, "rx_port": 1, "rate": 1000,
            "foreground": {"ip_version": 4, "src_mac": "02:00:00:00:00:01", "dst_mac": "02:00:00:00:00:02",
                           "src_ip": "198.18.0.2", "dst_ip": "198.19.0.2", "frame_size": 64}}
    started = time.monotonic()
    # max_lag: the schedule rule with room for a busy shared CPU (what these tests judge is the
    # link, not whether the sender kept its schedule).
    reply = engine.request("trial", duration=duration, timeout=1.0, finish_early=True, progress_interval=0,
                           max_lag=0.5, flows=[flow])
    return reply, time.monotonic() - started


def later(seconds: float, *args: str) -> threading.Thread:
    thread = threading.Timer(seconds, ip, args)
    thread.start()
    return thread


def test_a_tap_port_says_what_it_offers_and_carries_a_trial(taps):
    engine, hello = taps
    for port, name in zip(hello["ports"], ("net_tap0", "net_tap1")):
        assert port["name"] == name and port["link"]["up"]
        # net_tap has flow control, always "none": turning it off is accepted as it is.
        assert port["flow_control"] == {"found": "none", "now": "none"}
        assert port["xstats"]["offered"] >= 8   # ethdev's basic statistics, every driver
        assert port["promiscuous"]
    reply, _ = trial(engine)
    assert reply["valid"], reply["invalid_reason"]
    assert reply["flows"][0]["sent"] == reply["flows"][0]["received"] == 3000


def test_a_link_that_comes_up_late_is_waited_for(taps):
    engine, _ = taps
    ip("link", "set", TAPS[1], "down")
    timer = later(1.0, "link", "set", TAPS[1], "up")
    reply, took = trial(engine, duration=1.0)
    timer.join()
    assert reply["ok"] and reply["valid"], reply
    assert reply["flows"][0]["received"] == 1000
    assert took >= 1.9   # the wait for the link, then the 1-s trial


def test_a_link_still_down_after_the_wait_fails_the_request(taps):
    engine, _ = taps
    ip("link", "set", TAPS[1], "down")
    reply, took = trial(engine, duration=1.0)
    assert not reply["ok"] and reply["error"]["type"] == "execution_failure"
    assert reply["error"]["message"] == ("link down on port 1 (net_tap1) (waited 2.0 s, "
                                         "tester.link_timeout)")
    assert took >= 2.0


def test_a_link_that_goes_down_mid_trial_invalidates_it(taps):
    engine, _ = taps
    down = later(0.8, "link", "set", TAPS[1], "down")
    up = later(1.8, "link", "set", TAPS[1], "up")   # a second down: the 50-ms polls see it
    reply, _ = trial(engine, duration=3.0)
    down.join()
    up.join()
    assert reply["ok"] and not reply["valid"]
    assert reply["invalid_reason"].startswith("link down during the trial on port 1")
    (port,) = [p for p in reply["ports"] if p["index"] == 1]
    assert port["link_down"] >= 1
    # The next trial, with the link back, is valid.
    reply, _ = trial(engine, duration=1.0)
    assert reply["valid"], reply["invalid_reason"]


def test_a_memif_port_without_its_peer_stays_down(netns):
    engine = EngineProcess([f"--vdev=net_memif0,role=server,socket={MEMIF_SOCKET}", "--vdev=net_null0,no-rx=1"],
                           ["--link-timeout", "1"])
    try:
        hello = engine.request("hello")
        memif, null = hello["ports"]
        assert memif["xstats"]["offered"] >= 8 and null["xstats"]["offered"] >= 8
        assert not memif["link"]["up"] and memif["link"]["wait"] >= 1.0
        assert null["link"]["up"]
        reply, _ = trial(engine, duration=1.0)
        assert not reply["ok"]
        assert reply["error"]["message"].startswith("link down on port 0 (net_memif0)")
    finally:
        engine.close()
        if os.path.exists(MEMIF_SOCKET):
            os.unlink(MEMIF_SOCKET)


def test_every_driver_offers_ethdevs_basic_statistics(netns):
    """The engine reads each port's extended statistics around every trial: every driver has at
    least ethdev's eight basic ones (rx_good_packets ... rx_mbuf_allocation_errors)."""
    ip("link", "add", "xlp-pa", "type", "veth", "peer", "name", "xlp-pb")
    ip("link", "add", "xlp-xa", "type", "veth", "peer", "name", "xlp-xb")
    for name in ("xlp-pa", "xlp-pb", "xlp-xa", "xlp-xb"):
        ip("link", "set", name, "up")
    engine = EngineProcess(["--vdev=net_null0,no-rx=1", "--vdev=net_af_packet0,iface=xlp-pa",
                            "--vdev=net_af_xdp0,iface=xlp-xa", f"--vdev=net_tap0,iface={TAPS[0]}"],
                           ["--link-timeout", "2"])
    try:
        hello = engine.request("hello")
        offered = {port["driver"]: port["xstats"]["offered"] for port in hello["ports"]}
        assert set(offered) == {"net_null", "net_af_packet", "net_af_xdp", "net_tap"}, offered
        assert all(count >= 8 for count in offered.values()), offered
    finally:
        engine.close()
