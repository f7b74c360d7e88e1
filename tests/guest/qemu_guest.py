# SPDX-License-Identifier: BSD-3-Clause
"""A QEMU (TCG) guest in which DPDK's real PCI drivers take emulated NICs through vfio-pci.

    guest = Guest(share=folder)                 # two e1000e NICs at 0000:00:04.0 and 05.0
    result = guest.run(script, timeout=300, cable=lambda taps: ...)
    result.status, result.output, result.files

QEMU runs in a network namespace of its own (xlp-guest), where it creates one tap per NIC;
`cable(taps)` gets their names while the guest is still paused (QEMU's -S) and may move them
into other namespaces (cabling.py joins them to the lab's tester ports). The guest boots
Debian's kernel (image.py), mounts the host's / read-only with a tmpfs overlay, binds its NICs to
vfio-pci (except those in `keep`), runs `script` (a shell script, written into the share) as
root in that root, and powers off. Whatever happens, close() kills QEMU and removes the namespace;
a namespace left by an earlier run that crashed is removed before a new one is made.

    python3 tests/guest/qemu_guest.py 'lspci; dpdk-devbind.py -s'   # by hand (root)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).parent))
from image import Image, guest_image  # noqa: E402

NETNS = "xlp-guest"
# The recipe of shared/docs/guest-nic.md: Debian's kernel has no VFIO no-IOMMU mode, so the
# guest gets a virtual IOMMU (each NIC its own group); kernel-irqchip=off and intremap=off are
# what intel-iommu accepts under TCG.
MACHINE = ["-accel", "tcg", "-machine", "q35,kernel-irqchip=off",
           "-device", "intel-iommu,intremap=off", "-cpu", "max", "-smp", "2", "-m", "2048"]
CMDLINE = "console=ttyS0 intel_iommu=on iommu=pt panic=-1"
FIRST_NIC_SLOT = 4   # NIC i at 0000:00:0(4+i).0; the 9p devices below them, at 02.0 and 03.0


@dataclass(frozen=True)
class Nic:
    """One emulated NIC: model e1000e (DPDK's net_e1000_em), vmxnet3 (net_vmxnet3) or
    virtio-net-pci (net_virtio; `queues` > 1 gives it several queue pairs)."""
    model: str = "e1000e"
    queues: int = 1
    speed_mbps: int = 0   # virtio-net: the link speed it announces (0: none, DPDK reads it unknown)


@dataclass
class GuestResult:
    status: int | None          # the script's exit status; None: it never finished
    output: str                 # the script's stdout and stderr
    console: str                # the guest's serial console (kernel, init, the script)
    share: Path                 # the share folder: what the script wrote is there
    seconds: float              # QEMU started to QEMU gone
    boot_seconds: float | None  # guest uptime when the script started

    @property
    def files(self) -> list[Path]:
        return sorted(p for p in self.share.rglob("*") if p.is_file())


@dataclass
class Guest:
    nics: list[Nic] = field(default_factory=lambda: [Nic(), Nic()])
    share: Path | None = None         # host folder shared writable; a temporary one if None
    keep: list[str] = field(default_factory=list)   # PCI addresses left on the kernel driver
    hugepages: int = 256              # 2 MiB pages reserved in the guest
    netns: str = NETNS
    image: Image | None = None

    def __post_init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.work = Path(tempfile.mkdtemp(prefix="xlp-guest-"))
        if self.share is None:
            self.share = self.work / "share"
        self.share = Path(self.share).resolve()
        self.share.mkdir(parents=True, exist_ok=True)
        self.taps = [f"xlp-gt{i}" for i in range(len(self.nics))]
        self.started_at = 0.0

    # --- the guest's devices --------------------------------------------------------------

    def pci_address(self, index: int) -> str:
        return f"0000:00:{FIRST_NIC_SLOT + index:02x}.0"

    def mac(self, index: int) -> str:
        return f"02:78:6c:00:03:{index + 1:02x}"   # the lab's plan: 03:xx = guest NICs

    def qemu_command(self, script: Path) -> list[str]:
        image = self.image or guest_image()
        append = (f"{CMDLINE} xlp_run={script} xlp_share={self.share} "
                  f"xlp_hugepages={self.hugepages}")
        if self.keep:
            append += " xlp_keep=" + ",".join(self.keep)
        command = ["qemu-system-x86_64", *MACHINE, "-display", "none", "-vga", "none",
                   "-no-reboot", "-S",
                   "-serial", f"file:{self.work / 'console.log'}", "-monitor", "none",
                   "-qmp", f"unix:{self.work / 'qmp.sock'},server=on,wait=off",
                   "-kernel", str(image.kernel), "-initrd", str(image.initrd), "-append", append]
        for i, nic in enumerate(self.nics):
            slot = f"{FIRST_NIC_SLOT + i:02x}.0"
            netdev = f"tap,id=n{i},ifname={self.taps[i]},script=no,downscript=no"
            device = f"{nic.model},netdev=n{i},addr={slot},mac={self.mac(i)}"
            if nic.model.startswith("virtio"):
                # Without iommu_platform the virtio device bypasses the guest's IOMMU and reads
                # DPDK's IOVAs as guest-physical addresses: its control queue never answers.
                device += ",disable-legacy=on,iommu_platform=on"
                if nic.speed_mbps:
                    device += f",speed={nic.speed_mbps},duplex=full"
            if nic.queues > 1:
                # rss=on: QEMU spreads received frames over the queues by the Toeplitz hash the
                # driver configures (in software, without its eBPF helper), as a NIC's RSS does.
                netdev += f",queues={nic.queues}"
                device += f",mq=on,rss=on,vectors={2 * nic.queues + 2}"
            command += ["-netdev", netdev, "-device", device]
        # The host's / read-only and the share writable; multidevs=remap: both cross file
        # systems, whose inode numbers would otherwise collide in the guest.
        command += ["-fsdev", "local,id=host,path=/,security_model=none,readonly=on,multidevs=remap",
                    "-device", "virtio-9p-pci,fsdev=host,mount_tag=host,addr=02.0",
                    "-fsdev", f"local,id=share,path={self.share},security_model=none,multidevs=remap",
                    "-device", "virtio-9p-pci,fsdev=share,mount_tag=share,addr=03.0"]
        return command

    # --- life cycle -----------------------------------------------------------------------

    def start(self, script: str) -> list[str]:
        """Starts QEMU paused in the guest's namespace with `script` in the share; returns the
        tap names (NIC order) for the caller to cable before resume()."""
        remove_netns(self.netns)
        subprocess.run(["ip", "netns", "add", self.netns], check=True)
        path = self.share / "run.sh"
        path.write_text(script)
        self.started_at = time.monotonic()
        with open(self.work / "qemu.log", "w") as log:   # QEMU keeps its own copy of the fd
            self.process = subprocess.Popen(
                ["ip", "netns", "exec", self.netns, *self.qemu_command(path)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
        deadline = time.monotonic() + 30
        while not all(link_exists(self.netns, tap) for tap in self.taps):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"QEMU did not create its taps:\n{self.qemu_log()}")
            time.sleep(0.1)
        return list(self.taps)

    def resume(self) -> None:
        self.qmp("cont")

    def wait(self, timeout: float) -> GuestResult:
        """Waits for the guest to power off (QEMU then exits); at `timeout` s after start
        it is killed and the result has no status."""
        assert self.process is not None
        try:
            self.process.wait(max(0.0, self.started_at + timeout - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.kill()
        return self.result()

    def run(self, script: str, timeout: float = 300,
            cable: Callable[[list[str]], None] | None = None) -> GuestResult:
        """Boots, runs `script`, powers off; always cleans up."""
        try:
            taps = self.start(script)
            if cable is not None:
                cable(taps)
            self.resume()
            return self.wait(timeout)
        finally:
            self.close()

    def set_link(self, index: int, up: bool) -> None:
        """Takes NIC `index`'s link down or up, as a pulled cable would (QEMU's set_link)."""
        self.qmp("set_link", name=f"n{index}", up=up)

    def qmp(self, command: str, **arguments) -> dict:
        """One QMP command; its answer. (QMP: a greeting, capabilities, then commands.)"""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(10)
            sock.connect(str(self.work / "qmp.sock"))
            stream = sock.makefile("rw")

            def call(name: str, args: dict | None = None) -> dict:
                stream.write(json.dumps({"execute": name, "arguments": args or {}}) + "\n")
                stream.flush()
                while True:
                    reply = json.loads(stream.readline())
                    if "event" not in reply:   # events come between command and reply
                        break
                if "error" in reply:
                    raise RuntimeError(f"QMP {name}: {reply['error']}")
                return reply

            json.loads(stream.readline())      # the greeting
            call("qmp_capabilities")
            return call(command, arguments)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            # QEMU runs in a session of its own under `ip netns exec`: end exactly that group.
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def close(self) -> None:
        self.kill()
        remove_netns(self.netns)
        # QEMU's own files (console, QMP socket, log); a temporary share stays for the caller.
        for name in ("console.log", "qemu.log", "qmp.sock"):
            (self.work / name).unlink(missing_ok=True)
        if not self.share.is_relative_to(self.work):
            shutil.rmtree(self.work, ignore_errors=True)

    def __enter__(self) -> "Guest":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- what came out --------------------------------------------------------------------

    def qemu_log(self) -> str:
        path = self.work / "qemu.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def result(self) -> GuestResult:
        console = self.work / "console.log"
        console_text = console.read_text(errors="replace") if console.exists() else ""
        status_file, output_file = self.share / "exit-status", self.share / "output.log"
        status = (int(status_file.read_text().strip())
                  if status_file.exists() and status_file.read_text().strip() else None)
        boot = re.search(r"xlp-guest: running \S+ at ([\d.]+) s", console_text)
        return GuestResult(
            status=status,
            output=output_file.read_text(errors="replace") if output_file.exists() else "",
            console=console_text + ("\n--- qemu ---\n" + self.qemu_log() if self.qemu_log() else ""),
            share=self.share,
            seconds=time.monotonic() - self.started_at,
            boot_seconds=float(boot.group(1)) if boot else None)


def link_exists(netns: str, name: str) -> bool:
    return subprocess.run(["ip", "-n", netns, "link", "show", name], capture_output=True).returncode == 0


def remove_netns(netns: str) -> None:
    """Removes `netns` with whatever runs in it: a QEMU an earlier run left (only processes
    in that namespace, which only this harness creates, are ended)."""
    if not Path(f"/run/netns/{netns}").exists():
        return
    pids = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True).stdout.split()
    for pid in pids:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 10
    while subprocess.run(["ip", "netns", "pids", netns], capture_output=True,
                         text=True).stdout.split() and time.monotonic() < deadline:
        time.sleep(0.1)
    subprocess.run(["ip", "netns", "del", netns], capture_output=True)


if __name__ == "__main__":
    # By hand: boot with two e1000e NICs (no cables), run the shell command given, print.
    guest = Guest()
    result = guest.run(" ".join(sys.argv[1:]) or "true", timeout=float(os.environ.get("TIMEOUT", 300)))
    print(result.console)
    print(f"exit status {result.status}; boot {result.boot_seconds} s; "
          f"{result.seconds:.1f} s in all; share {result.share}")
    sys.exit(0 if result.status == 0 else 1)
