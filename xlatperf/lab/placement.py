# SPDX-License-Identifier: BSD-3-Clause
"""Where a lab's work runs: the tester's worker lcores on their CPUs, the DUT on the others.

On veth, the kernel work of a frame runs on whatever CPU hands it on: without steering, the
DUT's whole receive, forwarding and transmit path (and the delivery to the tester's receiving
socket) runs inside the engine worker's own send call, on the worker's CPU. The tester then
measures itself: its pace falls to what one CPU does for tester and DUT together, and the
other CPU idles. So the lab derives a placement from tester.lcores (the first lcore is DPDK's
main lcore, which sleeps while a trial runs; the others are workers that poll, each on its
own CPU) and steers the DUT's work to the CPUs no worker uses:

* RPS on every DUT veth end (and on the ends of the lab's tc wires): a frame the tester sends
  is queued to a DUT CPU's backlog, and the DUT's receive, forwarding, nftables/conntrack and
  transmit run there in softirq. The DUT's transmit to a tester port then delivers to the
  tester's socket (af_packet) or runs the port's XDP program (af_xdp) on the DUT CPU too.
* Processes that are part of the DUT (TAYGA) get the DUT CPUs as their affinity.

What was measured on the 2-vCPU lab machine (BENCHMARKS.md, "Lab: tester ceiling and DUT
placement"): RPS to the other CPU raised the tester's pace through router4 from ~114 k to
~180 k frames/s per direction (af_packet) and from ~172 k to ~360 k (af_xdp). Threaded NAPI
on the DUT's veths (which needs GRO or XDP on them to have NAPI at all) moved the work as well,
but the kthread drained veth's 256-frame ring late and the DUT lost frames at rates RPS
forwards without loss, so the lab does not use it. XPS only chooses among a device's transmit
queues; a veth here has one, and its transmit runs in the caller's context either way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..config.checkers import expand_lcores, lcores as check_lcores
from .shell import LabError, read_sys, run, write_sys

ONLINE_CPUS = "/sys/devices/system/cpu/online"


@dataclass(frozen=True)
class Placement:
    lcores: str                      # tester.lcores, as the lab writes it into the config
    main_cpu: int                    # DPDK's main lcore (sleeps while a trial runs)
    worker_cpus: tuple[int, ...]     # the engine's worker lcores: they poll, 100 % each
    dut_cpus: tuple[int, ...]        # where the DUT's packet processing runs

    def describe(self) -> str:
        """One sentence for `lab up`'s output and the config's comment."""
        shared = (" (the main lcore's CPU: it sleeps while a trial runs)"
                  if self.dut_cpus == (self.main_cpu,) else "")
        return (f"tester worker lcore(s) on CPU {cpu_list(self.worker_cpus)}, DUT packet "
                f"processing on CPU {cpu_list(self.dut_cpus)}{shared} "
                f"(tester.lcores = \"{self.lcores}\")")

    def to_dict(self) -> dict:
        return {"lcores": self.lcores, "main_cpu": self.main_cpu,
                "worker_cpus": list(self.worker_cpus), "dut_cpus": list(self.dut_cpus)}


def parse_cpu_list(text: str) -> list[int]:
    """"0-2,5" (the kernel's CPU list format) -> [0, 1, 2, 5]."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        if part:
            first, _, last = part.partition("-")
            cpus.extend(range(int(first), int(last or first) + 1))
    return cpus


def cpu_list(cpus) -> str:
    return ",".join(str(c) for c in sorted(cpus))


def online_cpus() -> list[int]:
    with open(ONLINE_CPUS) as f:
        return parse_cpu_list(f.read())


def plan_placement(lcores: str, online: list[int]) -> Placement:
    """The DUT gets every online CPU that no worker lcore uses, leaving out the main lcore's CPU
    when others remain (it sleeps during trials, but starts and ends them)."""
    try:
        lcores = check_lcores(lcores)
    except ValueError as exc:
        raise LabError(f"lcores={lcores!r} is invalid; allowed: {exc} (tester.lcores)") from None
    cores = expand_lcores(lcores)
    offline = [c for c in cores if c not in online]
    if offline:
        raise LabError(f"lcores={lcores!r}: CPU {cpu_list(offline)} is not online (online: "
                       f"{cpu_list(online)})")
    main, workers = cores[0], tuple(cores[1:])
    dut = tuple(c for c in online if c not in workers and c != main) or (main,)
    return Placement(lcores, main, workers, dut)


def cpu_mask(cpus) -> str:
    """The kernel's bitmap format for sysfs masks: hex, 32-bit groups separated by commas."""
    value = sum(1 << c for c in cpus)
    digits = f"{value:x}"
    digits = digits.rjust(-(-len(digits) // 8) * 8, "0")
    return ",".join(digits[i:i + 8] for i in range(0, len(digits), 8))


def parse_cpu_mask(text: str) -> set[int]:
    value = int(text.replace(",", "") or "0", 16)
    return {bit for bit in range(value.bit_length()) if value >> bit & 1}


def _rx_queues(ns: str, dev: str) -> list[str]:
    return [q for q in run(["ls", f"/sys/class/net/{dev}/queues"], ns=ns).split()
            if q.startswith("rx-")]


def steer_receive(ns: str, devices, cpus) -> None:
    """RPS: the receive processing of `devices` (in namespace `ns`) runs on `cpus`."""
    mask = cpu_mask(cpus)
    for dev in devices:
        for queue in _rx_queues(ns, dev):
            write_sys(ns, f"/sys/class/net/{dev}/queues/{queue}/rps_cpus", mask)


def receive_cpus(ns: str, dev: str) -> set[int]:
    """The CPUs RPS sends `dev`'s received frames to, read back from sysfs (all its receive
    queues); empty when RPS is off (the frames stay on the CPU that handed them on)."""
    cpus: set[int] = set()
    for queue in _rx_queues(ns, dev):
        cpus |= parse_cpu_mask(read_sys(ns, f"/sys/class/net/{dev}/queues/{queue}/rps_cpus"))
    return cpus


def _tasks(pid: int) -> list[int]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def pin_process(pid: int, cpus) -> None:
    """Every thread of `pid` may run only on `cpus`."""
    tasks = _tasks(pid)
    if not tasks:
        raise LabError(f"cannot pin process {pid} to CPU {cpu_list(cpus)}: it is gone")
    for task in tasks:
        os.sched_setaffinity(task, set(cpus))


def process_cpus(pid: int) -> set[int]:
    """The CPUs the threads of `pid` may run on, read back from the kernel."""
    cpus: set[int] = set()
    for task in _tasks(pid):
        try:
            cpus |= os.sched_getaffinity(task)
        except OSError:   # the thread ended meanwhile
            pass
    return cpus
