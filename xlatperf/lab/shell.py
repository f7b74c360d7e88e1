# SPDX-License-Identifier: BSD-3-Clause
"""Running the commands that build a lab: one error type that names the command and its
output, and the namespace-aware helpers every lab module uses."""

from __future__ import annotations

import shlex
import subprocess

from ..util.errors import XlatperfError
from .names import MACS


class LabError(XlatperfError):
    """A lab could not be built or removed; the message names the kind, parameter or command."""


def run(cmd: list[str], ns: str | None = None, stdin: str | None = None) -> str:
    """Runs `cmd` (inside namespace `ns`), returns its stdout; raises LabError on failure."""
    if ns is not None:
        cmd = ["ip", "netns", "exec", ns, *cmd]
    try:
        done = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        raise LabError(f"command not found: {cmd[0]} (install it with scripts/setup.sh)") from None
    except subprocess.TimeoutExpired:
        raise LabError(f"`{shlex.join(cmd)}` did not finish within 30 s") from None
    if done.returncode != 0:
        reason = (done.stderr.strip() or done.stdout.strip()).replace("\n", "; ")
        raise LabError(f"`{shlex.join(cmd)}` failed (exit {done.returncode}): {reason}")
    return done.stdout


def ip(ns: str, *args: str) -> None:
    run(["ip", "-n", ns, *args])


def sysctl(ns: str, settings: dict[str, str | int]) -> None:
    # One process per namespace: `ip netns exec` costs a few milliseconds each.
    run(["sysctl", "-q", "-w", *(f"{k}={v}" for k, v in settings.items())], ns=ns)


def read_sys(ns: str, path: str) -> str:
    """A sysfs file as seen from namespace `ns` (`ip netns exec` mounts that namespace's
    /sys/class/net)."""
    return run(["cat", path], ns=ns).strip()


def write_sys(ns: str, path: str, value: str) -> None:
    run(["tee", path], ns=ns, stdin=value + "\n")


def add_veth(ns_a: str, name_a: str, ns_b: str, name_b: str, mtu: int = 1500,
             macs: tuple[str, str] | None = None) -> None:
    """A veth pair between two namespaces, with the MACs of names.MACS (or `macs`) and no
    offloads (the frames stay as sent)."""
    mac_a, mac_b = macs or (MACS[name_a], MACS[name_b])
    # Created inside the namespaces, so no interface ever appears in the host namespace.
    ip(ns_a, "link", "add", name_a, "address", mac_a, "mtu", str(mtu), "type", "veth",
       "peer", "name", name_b, "address", mac_b, "mtu", str(mtu), "netns", ns_b)
    for ns, name in ((ns_a, name_a), (ns_b, name_b)):
        run(["ethtool", "-K", name, "gro", "off", "gso", "off", "tso", "off"], ns=ns)
