# SPDX-License-Identifier: BSD-3-Clause
"""Throw-away tester "hosts" for the ssh tests: each a network namespace of its own with an
sshd inside, listening only on the namespace's end of a veth pair to this namespace, on
link-local addresses (169.254.210.0/24: never routed, so nothing can reach it but this host).
Keys (host and client) are generated into a temporary directory; logins are root with that
key only. Everything is removed again (sshd stopped, namespace and veth deleted, /run/sshd if
it was created here), also what a crashed earlier run left behind (safe to run twice).

    with ssh_hosts(tmp_path, 2) as hosts:
        hosts[0].settings()  # {"tester.ssh": "root@169.254.210.2", ssh_identity, ssh_options}
"""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

NAMESPACE = "xlp-sshtest{}"        # tester host i (1-based)
ROOT_LINK, HOST_LINK = "xlp-sshr{}", "xlp-sshn{}"
PID_FILE = "/run/xlatperf-sshtest{}.pid"  # a fixed place: the next run stops a leftover sshd
SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
PRIVSEP_DIR = Path("/run/sshd")   # sshd refuses to start without it


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, check=check)


def available() -> str | None:
    """Why the ssh tests cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root"
    for tool in (SSHD, shutil.which("ssh"), shutil.which("ssh-keygen")):
        if not tool or not os.access(tool, os.X_OK):
            return "needs openssh-server and openssh-client (scripts/setup.sh)"
    return None


@dataclass
class SshHost:
    index: int
    address: str
    identity: Path
    known_hosts: Path

    @property
    def namespace(self) -> str:
        return NAMESPACE.format(self.index)

    @property
    def target(self) -> str:
        return f"root@{self.address}"

    def settings(self) -> dict:
        """The [tester] keys that reach this host."""
        return {"tester.ssh": self.target, "tester.ssh_identity": str(self.identity),
                "tester.ssh_options": [f"UserKnownHostsFile={self.known_hosts}",
                                       "StrictHostKeyChecking=yes", "ConnectTimeout=5"]}


def _stop_leftover(index: int) -> None:
    pid_file = Path(PID_FILE.format(index))
    try:
        pid = int(pid_file.read_text().strip())
        with open(f"/proc/{pid}/cmdline", "rb") as stream:
            if b"sshd" in stream.read():
                os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError):
        pass
    pid_file.unlink(missing_ok=True)
    _run("ip", "netns", "del", NAMESPACE.format(index), check=False)
    _run("ip", "link", "del", ROOT_LINK.format(index), check=False)


def _addresses(index: int) -> tuple[str, str]:
    base = 4 * index           # a /30 per host: .4i+1 here, .4i+2 in the host's namespace
    return f"169.254.210.{base + 1}", f"169.254.210.{base + 2}"


def _wait_listening(address: str, process: subprocess.Popen, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"sshd exited: {process.stderr.read()}")
        with contextlib.suppress(OSError), socket.create_connection((address, 22), timeout=0.5):
            return
        time.sleep(0.05)
    raise RuntimeError(f"sshd does not listen on {address}:22")


@contextlib.contextmanager
def ssh_hosts(directory: Path, count: int):
    """`count` tester hosts (SshHost), torn down on exit."""
    keys = directory / "ssh"
    keys.mkdir(mode=0o700)
    _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "xlatperf host",
         "-f", str(keys / "host_key"))
    _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "xlatperf test",
         "-f", str(keys / "id"))
    (keys / "authorized_keys").write_text((keys / "id.pub").read_text())
    host_key = (keys / "host_key.pub").read_text().split()
    made_privsep = not PRIVSEP_DIR.exists()
    PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
    daemons: list[subprocess.Popen] = []
    hosts = []
    try:
        for index in range(1, count + 1):
            _stop_leftover(index)
            here, there = _addresses(index)
            namespace, root_link, host_link = (NAMESPACE.format(index), ROOT_LINK.format(index),
                                               HOST_LINK.format(index))
            _run("ip", "netns", "add", namespace)
            _run("ip", "link", "add", root_link, "type", "veth", "peer", "name", host_link,
                 "netns", namespace)
            _run("ip", "addr", "add", f"{here}/30", "dev", root_link)
            _run("ip", "link", "set", root_link, "up")
            _run("ip", "-n", namespace, "addr", "add", f"{there}/30", "dev", host_link)
            _run("ip", "-n", namespace, "link", "set", host_link, "up")
            _run("ip", "-n", namespace, "link", "set", "lo", "up")
            config = keys / f"sshd{index}.conf"
            config.write_text(
                f"ListenAddress {there}:22\nHostKey {keys / 'host_key'}\n"
                f"PidFile {PID_FILE.format(index)}\nAuthorizedKeysFile {keys / 'authorized_keys'}\n"
                "PermitRootLogin prohibit-password\nPubkeyAuthentication yes\n"
                "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
                # the key files live under a temporary directory, not a home directory
                "StrictModes no\nX11Forwarding no\nAllowTcpForwarding no\n"
                "PrintMotd no\nLogLevel ERROR\n")
            daemon = subprocess.Popen(["ip", "netns", "exec", namespace, SSHD, "-D", "-e",
                                       "-f", str(config)], stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      text=True, start_new_session=True)
            daemons.append(daemon)
            _wait_listening(there, daemon)
            known = keys / f"known_hosts{index}"
            known.write_text(f"{there} {host_key[0]} {host_key[1]}\n")
            hosts.append(SshHost(index, there, keys / "id", known))
        yield hosts
    finally:
        for daemon in daemons:
            if daemon.poll() is None:
                os.killpg(daemon.pid, signal.SIGTERM)
            try:
                daemon.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(daemon.pid, signal.SIGKILL)
                daemon.wait()
        for index in range(1, count + 1):
            _stop_leftover(index)
        if made_privsep:
            with contextlib.suppress(OSError):
                PRIVSEP_DIR.rmdir()
