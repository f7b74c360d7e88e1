# SPDX-License-Identifier: BSD-3-Clause
"""Maximum-size double-tagged frames through DPDK's real PCI drivers, and docs/hardware.md's
first steps as a user takes them: three emulated e1000e NICs in a QEMU guest cabled to the lab's
`vlan` DUT on the host (a router terminating IEEE 802.1ad QinQ on each side: S-tag 10 and C-tag
100 on the left, S-tag 20 and C-tag 200 on the right). One boot runs every step; each test
asserts on what one step left in the share (guest_lab.py).

    guest NIC 0 (0000:00:04.0, vfio-pci)  ── bridge ── xlp-tl ── vlan DUT ── xlp-tr ── bridge ──┬─ guest NIC 1 (05.0, vfio-pci)
                                                                                               └─ guest NIC 2 (06.0, e1000e)

The steps, in order:
- NIC 2 is left on its kernel driver (e1000e) with its interface up (no address: only the
  kernel's IPv6 link-local one and its routes), as a host's network configuration leaves a NIC.
  With a config naming it (`kernel-driver.toml`), `xlatperf doctor` is run, the fix its driver
  check prints is run as printed, and doctor again, until it passes (the script gives up after
  DOCTOR_ROUNDS doctors; one fix must do); then a short trial through the DUT on NIC 0 and NIC 2.
- On NIC 0 and NIC 1 (`guest.toml`): a trial of traffic.frame_size = 1518, the largest standard
  frame (1,526 bytes on the wire with two tags: the engine's default largest frame, MTU 1,508),
  then one of 1522 (1,530 bytes on the wire, MTU 1,512). An 82574 takes frames above 1,522 bytes
  (FCS included) only with its long-packet bit, RCTL.LPE, which DPDK's e1000 PMD sets for an MTU
  above 1,500; QEMU 7.2's e1000e counts the 1,522 without the FCS, so there the second trial is
  the one that fails without it. NIC 2 is bound to vfio-pci by then and idle: the right side's
  bridge delivers the DUT's frames to NIC 1, whose MAC it learned.

Functional assertions only (test_pci_guest.py's docstring): every frame counted, nothing else.
"""

import json
import re
import sys
import time

import pytest

from guest_lab import (STEP_FUNCTION, assert_every_frame_counted, cable, guest_config, lab_for_guest,
                       portable_engine, records, step, step_result)
from qemu_guest import Guest, GuestResult, Nic

pytestmark = pytest.mark.guest

BOOT_AND_RUN_TIMEOUT = 330     # s: the whole guest, from QEMU's start to power-off
LAB_PARAMS = {"left_vlan": "100", "left_outer": "10", "right_vlan": "200", "right_outer": "20"}
KERNEL_DRIVER_NIC = "0000:00:06.0"
DOCTOR_ROUNDS = 3              # doctors the script runs at most (a fix that fixes nothing)
TRIAL_RATE = 1000
TRIAL_DURATION, KERNEL_DRIVER_TRIAL_DURATION = 3, 2
# traffic.frame_size -> (the frame on the wire with two tags, the MTU the engine must set)
FRAME_SIZES = {1518: (1526, 1508), 1522: (1530, 1512)}

SCRIPT = """\
nic={nic}
iface=$(ls /sys/bus/pci/devices/$nic/net)
ip link set "$iface" up
round=1
while :; do
    step doctor_$round {python} -m xlatperf doctor -c kernel-driver.toml
    [ "$(cat doctor_$round.status)" = 0 ] || [ $round -ge {rounds} ] && break
    # The fix under the failing driver check, run as printed (a comment after '#' is not run).
    sed -n '/: driver /{{n;s/^ *fix: //p;}}' doctor_$round.log > fix_$round.sh
    step fix_$round sh fix_$round.sh
    round=$((round + 1))
done
step kernel_driver_trial {python} -m xlatperf trial -c kernel-driver.toml -q --rate {rate} \
    --duration {kd_duration} --out kernel_driver_trial
step qinq_1518 {python} -m xlatperf trial -c guest.toml -q --rate {rate} --duration {duration} \
    --set traffic.frame_size=1518 --out qinq_1518
step qinq_1522 {python} -m xlatperf trial -c guest.toml -q --rate {rate} --duration {duration} \
    --set traffic.frame_size=1522 --out qinq_1522
"""


@pytest.fixture(scope="module")
def guest(tmp_path_factory) -> GuestResult:
    """Boots the guest once, cabled to the vlan DUT (NIC 2 beside NIC 1 on the right), and runs
    SCRIPT; the lab lock held meanwhile."""
    share = tmp_path_factory.mktemp("guest-qinq")
    engine = portable_engine()
    with lab_for_guest("vlan", LAB_PARAMS, share / "lab.toml") as lab_toml:
        vm = Guest(nics=[Nic(), Nic(), Nic()], share=share, keep=[KERNEL_DRIVER_NIC])
        # The sender's lag under TCG says nothing about the PCI path (test_pci_guest.py).
        for name, right in (("guest.toml", vm.pci_address(1)), ("kernel-driver.toml", KERNEL_DRIVER_NIC)):
            (share / name).write_text(guest_config(lab_toml, [vm.pci_address(0), right], engine,
                                                   trial={"max_lag": 0.5}))
        started = time.monotonic()
        result = vm.run(STEP_FUNCTION + SCRIPT.format(
            python=sys.executable, nic=KERNEL_DRIVER_NIC, rounds=DOCTOR_ROUNDS, rate=TRIAL_RATE,
            duration=TRIAL_DURATION, kd_duration=KERNEL_DRIVER_TRIAL_DURATION),
            timeout=BOOT_AND_RUN_TIMEOUT, cable=lambda taps: cable(taps, sides=("left", "right", "right")))
        print(f"guest (qinq): script started {result.boot_seconds} s after boot, "
              f"{time.monotonic() - started:.1f} s in all")
    return result


def doctor_rounds(guest: GuestResult) -> list[tuple[int, str]]:
    """(exit status, output) of each doctor the script ran on kernel-driver.toml."""
    rounds = []
    while (guest.share / f"doctor_{len(rounds) + 1}.status").exists():
        rounds.append(step_result(guest, f"doctor_{len(rounds) + 1}"))
    return rounds


def check_line(output: str, name: str) -> tuple[str, str, str]:
    """(status, found, fix) of the check `name` in doctor's text output."""
    match = re.search(rf"^(OK|WARN|FAIL) +{re.escape(name)} +(.*)\n(?: +fix: (.*))?", output, re.M)
    assert match, f"no check {name!r} in:\n{output}"
    return match.group(1), match.group(2), match.group(3) or ""


def trial_of(guest: GuestResult, name: str) -> tuple[dict, list[dict]]:
    """The run's last trial (the result; earlier attempts are marked retaken) and its summary's
    tester.ports."""
    step(guest, name)
    attempts = records(guest.share / name)
    assert not attempts[-1].get("retaken"), attempts
    summary = json.loads((guest.share / name / "summary.json").read_text())
    return attempts[-1], summary["tester"]["ports"]


def test_guest_boots_and_runs_the_script(guest):
    assert guest.status == 0, f"guest status {guest.status}; console:\n{guest.console[-4000:]}"
    assert f"nic {KERNEL_DRIVER_NIC} 0x8086:0x10d3 driver=e1000e" in guest.console, guest.console[-4000:]


def test_doctor_fails_on_the_nic_left_on_e1000e_and_passes_once_its_fix_is_run(guest):
    rounds = doctor_rounds(guest)
    assert rounds, guest.output[-4000:]
    status, first = rounds[0]
    assert status != 0, first
    found, what, fix = check_line(first, f"right {KERNEL_DRIVER_NIC}: driver")
    assert found == "FAIL" and "kernel driver e1000e" in what, first
    # The bind line, with the interface taken down before (it was up; the kernel's own
    # link-local address and routes are no use of it, so no flush is asked for).
    assert re.fullmatch(rf"ip link set \S+ down && dpdk-devbind.py -b vfio-pci {KERNEL_DRIVER_NIC}", fix), first
    assert check_line(first, "engine: ports")[0] == "FAIL", first   # not started on a failing host
    # That one fix, run as printed, was enough: the second doctor passes, the engine started.
    assert len(rounds) == 2 and rounds[1][0] == 0, "\n".join(output for _, output in rounds)
    last = rounds[1][1]
    assert check_line(last, f"right {KERNEL_DRIVER_NIC}: driver")[:2] == ("OK", "vfio-pci"), last
    assert check_line(last, "ports: link")[0] == "OK", last
    assert re.search(r"^\d+ ok, \d+ warn, 0 fail$", last, re.M), last


def test_a_trial_on_the_nic_bound_by_doctors_fix_counts_every_frame(guest):
    trial, ports = trial_of(guest, "kernel_driver_trial")
    assert [(p["name"], p["driver"]) for p in ports] == [
        ("0000:00:04.0", "net_e1000_em"), (KERNEL_DRIVER_NIC, "net_e1000_em")], ports
    assert_every_frame_counted(trial, TRIAL_RATE * KERNEL_DRIVER_TRIAL_DURATION)


@pytest.mark.parametrize("frame_size", FRAME_SIZES)
def test_maximum_size_double_tagged_frames_are_all_counted(guest, frame_size):
    trial, ports = trial_of(guest, f"qinq_{frame_size}")
    on_the_wire, mtu = FRAME_SIZES[frame_size]
    assert [(p["name"], p["driver"]) for p in ports] == [
        ("0000:00:04.0", "net_e1000_em"), ("0000:00:05.0", "net_e1000_em")], ports
    for port in ports:
        # The engine set the MTU from the largest frame (two tags, FCS: 18 + 8 bytes above it).
        assert (port["mtu"], port["max_frame"]) == (mtu, on_the_wire), port
    assert_every_frame_counted(trial, TRIAL_RATE * TRIAL_DURATION)
