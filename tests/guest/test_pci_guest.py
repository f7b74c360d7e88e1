# SPDX-License-Identifier: BSD-3-Clause
"""xlatperf on DPDK's real PCI drivers: two emulated e1000e NICs in a QEMU guest, bound to
vfio-pci through a virtual IOMMU and taken by net_e1000_em, cabled to the lab's router4 DUT on
the host (guest_lab.py), and a third left on its kernel driver. One boot runs every step (a
guest costs 25-40 s under TCG before it runs anything long); each test asserts on what one
step left in the share.

Functional assertions only: TCG runs the guest at a fraction of native speed, so no rate
measured here means anything; what counts is that frames are counted, links come up and the
procedures end as they should.
"""

import json
import math
import sys
import threading
import time
from pathlib import Path

import pytest

from guest_lab import (STEP_FUNCTION, assert_every_frame_counted, cable, doctor_checks, guest_config,
                       lab_for_guest, portable_engine, records, step, step_result)
from qemu_guest import Guest, GuestResult, Nic

pytestmark = pytest.mark.guest

BOOT_AND_RUN_TIMEOUT = 330               # s: the whole guest, from QEMU's start to power-off
TRIAL_RATE, TRIAL_DURATION = 1000, 3
KERNEL_DRIVER_NIC = "0000:00:06.0"
# The link_down step's trial: guest NIC 0's cable is pulled LINK_PULL_AT s into it for 1 s.
LINK_TRIAL_DURATION, LINK_PULL_AT = 6, 2.0

# Each step's output goes to STEP.log and its exit status to STEP.status in the share
# (guest_lab.STEP_FUNCTION); a step that fails does not stop the next.
SCRIPT = """\
step devbind dpdk-devbind.py --status-dev net
step doctor {python} -m xlatperf doctor -c guest.toml --json
step doctor_kernel_driver {python} -m xlatperf doctor -c kernel-driver.toml --json
step trial {python} -m xlatperf trial -c guest.toml -q --rate {rate} --duration {duration} --out trial
step link_down {python} -m xlatperf trial -c guest.toml --json --rate {rate} --duration {link_duration} \
    --out link_down
step throughput {python} -m xlatperf throughput -c guest.toml -q --duration 2 --repeat 1 \
    --set throughput.max_rate={max_rate} --set throughput.error={error} --out throughput
"""
# The search starts above what the guest's tester can send under TCG (about 30,000 frames/s
# here), so that it has to come down: several steps, at rates the tester cannot keep, loses or
# passes, whichever this machine's load makes them.
SEARCH_MAX_RATE, SEARCH_ERROR = 64000, 8000


@pytest.fixture(scope="module")
def guest(tmp_path_factory) -> GuestResult:
    """Boots the guest once, cabled to router4, and runs SCRIPT; the lab lock held meanwhile."""
    share = tmp_path_factory.mktemp("guest")
    engine = portable_engine()
    stop = threading.Event()   # ends the cable puller however the guest ends
    try:
        with lab_for_guest("router4", {}, share / "lab.toml") as lab_toml:
            # A third NIC, uncabled, left on its kernel driver (e1000e): what doctor says of
            # a NIC nobody bound to vfio-pci.
            vm = Guest(nics=[Nic(), Nic(), Nic()], share=share, keep=[KERNEL_DRIVER_NIC])
            (share / "guest.toml").write_text(guest_config(
                lab_toml, [vm.pci_address(0), vm.pci_address(1)], engine,
                # The sender's lag under TCG says nothing about the PCI path (module docstring).
                trial={"max_lag": 0.5}))
            (share / "kernel-driver.toml").write_text(guest_config(
                lab_toml, [vm.pci_address(0), KERNEL_DRIVER_NIC], engine))
            started = time.monotonic()
            puller = threading.Thread(target=pull_cable_mid_trial,
                                      args=(vm, share / "link_down.log", stop), daemon=True)
            puller.start()
            result = vm.run(STEP_FUNCTION + SCRIPT.format(
                python=sys.executable, rate=TRIAL_RATE, duration=TRIAL_DURATION, max_rate=SEARCH_MAX_RATE,
                error=SEARCH_ERROR, link_duration=LINK_TRIAL_DURATION),
                timeout=BOOT_AND_RUN_TIMEOUT, cable=cable)
            print(f"guest: script started {result.boot_seconds} s after boot, "
                  f"{time.monotonic() - started:.1f} s in all")
    finally:
        stop.set()
    return result


def pull_cable_mid_trial(vm: Guest, log: Path, stop: threading.Event) -> None:
    """Takes guest NIC 0's link down for 1 s once the link_down step's trial has run
    LINK_PULL_AT s (its --json progress, read from the share as the guest writes it), as a
    cable pulled and put back would; once."""
    while not stop.wait(0.2):
        for line in log.read_text(errors="replace").splitlines() if log.exists() else []:
            try:
                event = json.loads(line)
            except ValueError:
                continue   # a line still being written
            if event.get("event") == "progress" and (event.get("elapsed") or 0) >= LINK_PULL_AT:
                try:
                    vm.set_link(0, False)
                    time.sleep(1.0)
                    vm.set_link(0, True)
                except (OSError, RuntimeError):
                    pass   # QEMU gone: the link_down test fails on what the guest left
                return


def test_guest_boots_and_runs_the_script(guest):
    assert guest.status == 0, f"guest status {guest.status}; console:\n{guest.console[-4000:]}"
    assert guest.boot_seconds is not None


def test_both_nics_are_bound_to_vfio_pci_each_in_an_iommu_group(guest):
    lines = [line for line in guest.console.splitlines() if line.startswith("xlp-guest: nic ")][:2]
    assert len(lines) == 2, guest.console[-4000:]
    groups = set()
    for line, address in zip(lines, ("0000:00:04.0", "0000:00:05.0")):
        assert f"nic {address} 0x8086:0x10d3 driver=vfio-pci" in line, line   # 82574L: e1000e
        groups.add(line.rsplit("iommu_group=", 1)[1])
    assert len(groups) == 2 and "" not in groups
    devbind = step(guest, "devbind")
    assert devbind.count("drv=vfio-pci") == 2, devbind
    # The third NIC was left on its kernel driver on purpose (the doctor test below).
    assert f"{KERNEL_DRIVER_NIC} " in devbind and "drv=e1000e" in devbind, devbind


def test_doctor_passes_on_the_nics_bound_to_vfio_pci(guest):
    checks = doctor_checks(step(guest, "doctor"))
    assert not [c for c in checks.values() if c["status"] == "fail"], checks
    for address in ("0000:00:04.0", "0000:00:05.0"):
        side = "left" if address.endswith("04.0") else "right"
        assert checks[f"{side} {address}: driver"]["status"] == "ok", checks
        assert checks[f"{side} {address}: IOMMU"]["status"] == "ok", checks
    assert checks["ports: link"]["status"] == "ok", checks


def test_doctor_fails_on_a_nic_left_on_its_kernel_driver_with_the_fix(guest):
    status, output = step_result(guest, "doctor_kernel_driver")
    checks = doctor_checks(output)
    assert status != 0, output
    driver = checks[f"right {KERNEL_DRIVER_NIC}: driver"]
    assert driver["status"] == "fail" and "e1000e" in driver["found"], driver
    assert f"dpdk-devbind.py -b vfio-pci {KERNEL_DRIVER_NIC}" in driver["fix"], driver
    # The engine is not started on a host that failed its checks.
    assert checks["engine: ports"]["status"] == "fail", checks


def test_dpdk_takes_both_nics_with_net_e1000_em(guest):
    step(guest, "trial")
    ports = json.loads((guest.share / "trial" / "summary.json").read_text())["tester"]["ports"]
    assert [(p["name"], p["driver"], p["bus"]) for p in ports] == [
        ("0000:00:04.0", "net_e1000_em", "pci"), ("0000:00:05.0", "net_e1000_em", "pci")]
    for port in ports:
        # The engine waited for the link (tester.link_timeout) and read the speed after it came
        # up: the emulated 82574L's 1 Gbit/s, without a speed set in the config.
        assert port["link"]["up"] and port["link"]["speed_mbps"] == 1000, port


def test_a_trial_through_router4_counts_every_frame(guest):
    step(guest, "trial")
    # The last record is the trial's result; a first attempt invalid for TCG's slowness is
    # taken again by the product (trial.retakes) and marked retaken.
    (trial,) = [r for r in records(guest.share / "trial") if not r.get("retaken")]
    assert_every_frame_counted(trial, TRIAL_RATE * TRIAL_DURATION)


def test_a_link_that_goes_down_mid_trial_invalidates_it_and_the_trial_is_retaken(guest):
    step(guest, "link_down")
    attempts = records(guest.share / "link_down")
    pulled = [a for a in attempts
              if (a["invalid_reason"] or "").startswith("link down during the trial on port 0")]
    assert len(pulled) == 1 and pulled[0]["retaken"], attempts
    # Taken again with the link back up: every frame counted.
    final = attempts[-1]
    assert not final.get("retaken"), attempts
    assert_every_frame_counted(final, TRIAL_RATE * LINK_TRIAL_DURATION)


def test_a_throughput_search_converges(guest):
    step(guest, "throughput")
    summary = json.loads((guest.share / "throughput" / "summary.json").read_text())
    assert summary["procedure"] == "throughput" and summary["complete"], summary
    passing = {r["rate"] for r in records(guest.share / "throughput")
               if r["valid"] and r["loss_ratio"] == 0 and not r.get("retaken")}
    assert summary["median"] > 0 and summary["median"] in passing, summary
    # A binary search of RFC 2544: at most the halvings of the range to within the error, and
    # the first step, each taken again at most trial.retakes times when invalid.
    steps = summary["repetitions"][0]["steps"]
    assert len(steps) <= 2 + math.ceil(math.log2(SEARCH_MAX_RATE / SEARCH_ERROR)), steps
