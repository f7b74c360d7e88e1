# SPDX-License-Identifier: BSD-3-Clause
"""xlatperf on DPDK's real PCI drivers: two emulated e1000e NICs in a QEMU guest, bound to
vfio-pci through a virtual IOMMU and taken by net_e1000_em, cabled to the lab's router4 DUT on
the host (guest_lab.py). One boot runs every step (a boot costs ~45 s under TCG); each test
asserts on what one step left in the share.

Functional assertions only: TCG runs the guest at a fraction of native speed, so no rate
measured here means anything; what counts is that frames are counted, links come up and the
procedures end as they should.
"""

import fcntl
import json
import math
import sys
import time
from pathlib import Path

import pytest

from guest_lab import cable, guest_config, portable_engine, uncable
from qemu_guest import Guest, GuestResult
from xlatperf import lab

pytestmark = pytest.mark.guest

TEST_LOCK = "/run/xlatperf-tests.lock"   # the lab lock of tests/conftest.py's exclusive_lab
BOOT_AND_RUN_TIMEOUT = 330               # s: the whole guest, from QEMU's start to power-off
TRIAL_RATE, TRIAL_DURATION = 1000, 3

# Each step's output goes to STEP.log and its exit status to STEP.status in the share; a step
# that fails does not stop the next.
SCRIPT = """\
step() {{ name=$1; shift; echo "== $name: $*"; "$@" > "$name.log" 2>&1; echo $? > "$name.status"; \
cat "$name.log"; }}
step devbind dpdk-devbind.py --status-dev net
step trial {python} -m xlatperf trial -c guest.toml -q --rate {rate} --duration {duration} --out trial
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
    with open(TEST_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            lab.lab_up("router4", {"calibrate": "no"}, str(share / "lab.toml"))
            vm = Guest(share=share)
            (share / "guest.toml").write_text(guest_config(
                share / "lab.toml", [vm.pci_address(0), vm.pci_address(1)], engine,
                # The sender's lag under TCG says nothing about the PCI path (module docstring).
                trial={"max_lag": 0.5}))
            started = time.monotonic()
            result = vm.run(SCRIPT.format(python=sys.executable, rate=TRIAL_RATE,
                                          duration=TRIAL_DURATION, max_rate=SEARCH_MAX_RATE,
                                          error=SEARCH_ERROR),
                            timeout=BOOT_AND_RUN_TIMEOUT, cable=cable)
            print(f"guest: script started {result.boot_seconds} s after boot, "
                  f"{time.monotonic() - started:.1f} s in all")
        finally:
            uncable()
            lab.lab_down()
            fcntl.flock(lock, fcntl.LOCK_UN)
    return result


def step(result: GuestResult, name: str) -> str:
    """STEP's output; fails with it (and the console's end) unless the step exited 0."""
    status = result.share / f"{name}.status"
    log = result.share / f"{name}.log"
    output = log.read_text(errors="replace") if log.exists() else ""
    if not status.exists():
        pytest.fail(f"step {name} never ended (guest status {result.status}); console:\n"
                    f"{result.console[-4000:]}")
    assert status.read_text().strip() == "0", f"step {name} failed:\n{output[-4000:]}"
    return output


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines() if line]


def test_guest_boots_and_runs_the_script(guest):
    assert guest.status == 0, f"guest status {guest.status}; console:\n{guest.console[-4000:]}"
    assert guest.boot_seconds is not None


def test_both_nics_are_bound_to_vfio_pci_each_in_an_iommu_group(guest):
    lines = [line for line in guest.console.splitlines() if line.startswith("xlp-guest: nic ")]
    assert len(lines) == 2, guest.console[-4000:]
    groups = set()
    for line, address in zip(lines, ("0000:00:04.0", "0000:00:05.0")):
        assert f"nic {address} 0x8086:0x10d3 driver=vfio-pci" in line, line   # 82574L: e1000e
        groups.add(line.rsplit("iommu_group=", 1)[1])
    assert len(groups) == 2 and "" not in groups
    devbind = step(guest, "devbind")
    assert devbind.count("drv=vfio-pci") == 2, devbind


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
    assert trial["valid"], trial
    for name, direction in trial["directions"].items():
        assert direction["sent"] == TRIAL_RATE * TRIAL_DURATION, (name, direction)
        assert direction["received"] == direction["sent"], (name, direction)
        assert direction["loss_ratio"] == 0, (name, direction)
    assert trial["loss_ratio"] == 0


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
