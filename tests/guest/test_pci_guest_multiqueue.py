# SPDX-License-Identifier: BSD-3-Clause
"""Several queues per port through a real PCI driver: two emulated virtio-net NICs with 4 queue
pairs each and RSS, in a QEMU guest, bound to vfio-pci and taken by DPDK's net_virtio, cabled
to the lab's router4 DUT on the host (guest_lab.py). The tester runs with tester.queues = 4:
its worker sends on every TX queue and polls every RX queue, and the NIC's RSS (QEMU's, in
software, by the Toeplitz key and redirection table the driver programs) spreads the DUT's
frames, whose RFC 4814 ports differ, over the RX queues. One boot runs every step; each test
asserts on what one step left in the share.

    guest NIC 0 (0000:00:04.0, virtio-net, 4 queues) ── bridge ── xlp-tl ── router4 ── xlp-tr ── bridge ── guest NIC 1 (05.0)

The virtio devices sit behind the guest's IOMMU (iommu_platform=on, qemu_guest.py): without it
they read DPDK's IOVAs as guest-physical addresses and the first control-queue command at port
start never completes.

Functional assertions only (test_pci_guest.py's docstring): frames counted per queue, nothing
about rates.
"""

import json
import sys

import pytest

from guest_lab import (STEP_FUNCTION, assert_every_frame_counted, cable, doctor_checks, guest_config,
                       lab_for_guest, portable_engine, records, step)
from qemu_guest import Guest, GuestResult, Nic

pytestmark = pytest.mark.guest

BOOT_AND_RUN_TIMEOUT = 300     # s: the whole guest, from QEMU's start to power-off
QUEUES = 4
LINK_SPEED_MBPS = 10000        # what the virtio NICs announce (VIRTIO_NET_F_SPEED_DUPLEX)
TRIAL_RATE, TRIAL_DURATION = 2000, 3

SCRIPT = """\
step devbind dpdk-devbind.py --status-dev net
step doctor {python} -m xlatperf doctor -c guest.toml --json
step trial {python} -m xlatperf trial -c guest.toml -q --rate {rate} --duration {duration} --out trial
"""


@pytest.fixture(scope="module")
def guest(tmp_path_factory) -> GuestResult:
    """Boots the guest once, cabled to router4, and runs SCRIPT; the lab lock held meanwhile."""
    share = tmp_path_factory.mktemp("guest-multiqueue")
    engine = portable_engine()
    with lab_for_guest("router4", {}, share / "lab.toml") as lab_toml:
        vm = Guest(nics=[Nic("virtio-net-pci", QUEUES, LINK_SPEED_MBPS)] * 2, share=share)
        (share / "guest.toml").write_text(guest_config(
            lab_toml, [vm.pci_address(0), vm.pci_address(1)], engine,
            tester={"queues": QUEUES},
            # RFC 4814's random ports: flows whose hashes differ, for RSS to spread.
            ports={f"{direction}_{end}": "random" for direction in ("forward", "reverse")
                   for end in ("src", "dst")},
            # The sender's lag under TCG says nothing about the PCI path.
            trial={"max_lag": 0.5}))
        result = vm.run(STEP_FUNCTION + SCRIPT.format(
            python=sys.executable, rate=TRIAL_RATE, duration=TRIAL_DURATION),
            timeout=BOOT_AND_RUN_TIMEOUT, cable=cable)
        print(f"guest (virtio-net, {QUEUES} queues): script started {result.boot_seconds} s after "
              f"boot, {result.seconds:.1f} s in all")
    return result


def summary_ports(guest: GuestResult) -> list[dict]:
    step(guest, "trial")
    return json.loads((guest.share / "trial" / "summary.json").read_text())["tester"]["ports"]


def test_both_virtio_nics_are_bound_to_vfio_pci(guest):
    assert guest.status == 0, f"guest status {guest.status}; console:\n{guest.console[-4000:]}"
    lines = [line for line in guest.console.splitlines() if line.startswith("xlp-guest: nic ")]
    assert len(lines) == 2, guest.console[-4000:]
    for line, address in zip(lines, ("0000:00:04.0", "0000:00:05.0")):
        assert f"nic {address} 0x1af4:0x1041 driver=vfio-pci" in line, line   # virtio 1.0 net


def test_dpdk_takes_them_with_net_virtio_and_every_queue_and_the_announced_speed(guest):
    ports = summary_ports(guest)
    assert [(p["name"], p["driver"], p["bus"]) for p in ports] == [
        ("0000:00:04.0", "net_virtio", "pci"), ("0000:00:05.0", "net_virtio", "pci")]
    for port in ports:
        assert port["link"]["up"] and port["link"]["speed_mbps"] == LINK_SPEED_MBPS, port
        assert port["rx_queues"] == port["tx_queues"] == QUEUES, port
        # RSS over addresses and UDP ports, its redirection table spread over all 4 queues.
        assert port["rx_spread"] == "rss", port
        assert "ipv4-udp" in port["rss"]["offered"], port
        share = port["rss"]["reta_share"]
        assert len(share) == QUEUES and min(share) > 0, port


def test_doctor_passes_with_rss_over_every_queue(guest):
    checks = doctor_checks(step(guest, "doctor"))
    assert not [c for c in checks.values() if c["status"] == "fail"], checks
    assert checks["ports: RSS"]["status"] == "ok", checks["ports: RSS"]
    assert checks["ports: link"]["status"] == "ok", checks["ports: link"]


def test_a_trial_counts_every_frame_sent_on_every_queue_and_received_on_every_queue(guest):
    step(guest, "trial")
    (trial,) = [r for r in records(guest.share / "trial") if not r.get("retaken")]
    assert_every_frame_counted(trial, TRIAL_RATE * TRIAL_DURATION)
    queues = trial["queues"]
    # The worker shared each direction's frames over the 4 TX queues ...
    for direction, sent in queues["tx"].items():
        assert len(sent) == QUEUES and min(sent) > 0, (direction, sent)
        assert sum(sent) == trial["directions"][direction]["sent"], (direction, sent)
    # ... and the NIC's RSS spread the DUT's frames over the 4 RX queues of each port.
    for port, received in queues["rx"].items():
        assert len(received) == QUEUES and min(received) > 0, (port, received)
    assert sum(sum(received) for received in queues["rx"].values()) == sum(
        d["received"] for d in trial["directions"].values()), queues
