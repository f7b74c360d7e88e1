# SPDX-License-Identifier: BSD-3-Clause
"""The lab's daemons: DUT software that runs as a process in a lab namespace (TAYGA, BIND,
Unbound, PowerDNS Recursor, and NSD serving a resolver's test zone), started with its files under LAB_DIR and stopped by `lab down`. A process counts as
the lab's only when it runs one of the lab's programs with a file of LAB_DIR on its command
line, so a stale pid file never has another process killed."""

from __future__ import annotations

import contextlib
import glob
import os
import signal
import subprocess
import time

from . import dns_relay
from .names import LAB_DIR
from .shell import LabError, run

# The programs the lab runs as daemons (each a Debian package's, and the lab's faulty DNS64
# relay, lab/dns_relay.py, under its own name). "nsd": lab/nsd.py's (which imports this module).
PROGRAMS = ("tayga", "named", "unbound", "pdns_recursor", "nsd", dns_relay.PROGRAM)
STOP_SECONDS = 3.0


def read_pid(path: str) -> int | None:
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def tail(path: str, lines: int = 5) -> str:
    """The last lines of a daemon's log, for an error message."""
    try:
        with open(path) as f:
            text = f.read().strip().splitlines()[-lines:]
    except OSError:
        return "(no output)"
    return "; ".join(text) or "(no output)"


def is_ours(pid: int, program: str | None = None) -> bool:
    """Whether `pid` is a live lab daemon (of `program`, or any of PROGRAMS)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
        with open(f"/proc/{pid}/stat") as f:
            zombie = f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False
    name = os.path.basename(argv[0]).decode(errors="replace")
    # (the file may be an option's value: --config-dir=/run/xlatperf-lab/...)
    return (not zombie and (name == program if program else name in PROGRAMS)
            and any(LAB_DIR.encode() + b"/" in a for a in argv))


def start(program: str, argv: list[str], ns: str, pidfile: str, log: str) -> int:
    """Runs `argv` (a daemon that forks and writes `pidfile`) in namespace `ns`, its output into
    `log`; returns the daemon's pid once it lives. LabError when it does not come up."""
    with open(log, "w") as out:   # no pipe of ours held by the daemon
        done = subprocess.run(["ip", "netns", "exec", ns, *argv], stdin=subprocess.DEVNULL, stdout=out,
                              stderr=out, timeout=30)
    if done.returncode != 0:
        raise LabError(f"{program} failed to start (exit {done.returncode}): {tail(log)}")
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        pid = read_pid(pidfile)
        if pid is not None and is_ours(pid, program):
            return pid
        time.sleep(0.02)
    raise LabError(f"{program} did not come up (no live process in {pidfile}): {tail(log)}")


def stop_all(namespaces: tuple[str, ...]) -> None:
    """Ends every lab daemon: those of LAB_DIR's pid files and those in `namespaces`."""
    pids = {pid for path in glob.glob(os.path.join(LAB_DIR, "*.pid")) if (pid := read_pid(path)) is not None}
    for ns in namespaces:
        if os.path.exists(f"/run/netns/{ns}"):
            pids.update(int(p) for p in run(["ip", "netns", "pids", ns]).split())
    pids = {p for p in pids if is_ours(p)}
    for p in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGTERM)
    deadline = time.monotonic() + STOP_SECONDS
    while pids and time.monotonic() < deadline:
        pids = {p for p in pids if is_ours(p)}
        time.sleep(0.02)
    for p in pids:  # still there after STOP_SECONDS
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGKILL)
