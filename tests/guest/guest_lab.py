# SPDX-License-Identifier: BSD-3-Clause
"""The guest cabled to a lab DUT on the host, and what xlatperf in the guest needs.

    lab namespace xlp-tester                                   lab namespace xlp-dut
    xlp-gt0 (tap of guest NIC 0, 0000:00:04.0) ─ bridge xlp-gb0 ─ xlp-tl ── veth ── xlp-dl
    xlp-gt1 (tap of guest NIC 1, 0000:00:05.0) ─ bridge xlp-gb1 ─ xlp-tr ── veth ── xlp-dr

The taps leave the guest's namespace for the lab's tester namespace, where each is bridged to
one of the tester's veth ends: frames from guest NIC 0 reach the DUT's left side and the DUT's
right side reaches guest NIC 1. Nothing is cabled anywhere else, so every frame stays in the
namespaces of the guest and of the lab. The bridges have no address and IPv6 off, so the host
adds no frame of its own (as the lab's tester side).

The engine the guest runs is a portable build (engine/build-portable, XLP_NATIVE=OFF): the
host's -march=native build dies with SIGILL on TCG's CPU, which has no AVX-512.
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PORTABLE_BUILD = ROOT / "engine" / "build-portable"
PORTABLE_ENGINE = PORTABLE_BUILD / "xlatperf-engine"
TESTER_NS = "xlp-tester"                    # the lab's names (xlatperf/lab/names.py)
TESTER_PORTS = ("xlp-tl", "xlp-tr")
BRIDGES = ("xlp-gb0", "xlp-gb1")


def portable_engine() -> Path:
    """engine/build-portable/xlatperf-engine, (re)built when missing or older than a source.
    Only the engine target: the unit tests run from the host build."""
    sources = [p for d in ("src", "CMakeLists.txt") for p in
               ((ROOT / "engine" / d).rglob("*") if (ROOT / "engine" / d).is_dir() else [ROOT / "engine" / d])]
    newest = max(p.stat().st_mtime for p in sources if p.is_file())
    if PORTABLE_ENGINE.exists() and PORTABLE_ENGINE.stat().st_mtime >= newest:
        return PORTABLE_ENGINE
    if not (PORTABLE_BUILD / "build.ninja").exists():
        _run("cmake", "-S", str(ROOT / "engine"), "-B", str(PORTABLE_BUILD), "-G", "Ninja",
             "-DCMAKE_BUILD_TYPE=Release", "-DXLP_NATIVE=OFF", "-DXLP_TESTS=OFF")
    _run("cmake", "--build", str(PORTABLE_BUILD), "--target", "xlatperf-engine")
    PORTABLE_ENGINE.touch()   # ninja may find nothing to do after a source's mtime changed
    return PORTABLE_ENGINE


def cable(taps: list[str]) -> None:
    """Joins the guest's first two taps to the lab's tester ports (module docstring)."""
    for tap, port, bridge in zip(taps, TESTER_PORTS, BRIDGES):
        _run("ip", "-n", "xlp-guest", "link", "set", tap, "netns", TESTER_NS)
        ns = ["ip", "-n", TESTER_NS]
        _run(*ns, "link", "add", bridge, "type", "bridge", "stp_state", "0",
             "mcast_snooping", "0")
        for dev in (bridge, tap):
            _run("ip", "netns", "exec", TESTER_NS, "sysctl", "-q", "-w",
                 f"net.ipv6.conf.{dev}.disable_ipv6=1")
        _run(*ns, "link", "set", tap, "master", bridge)
        _run(*ns, "link", "set", port, "master", bridge)
        for dev in (tap, port, bridge):
            _run(*ns, "link", "set", dev, "up")


def uncable() -> None:
    """Removes the bridges (the taps go with QEMU; the lab's veths stay as the lab made them)."""
    for bridge in BRIDGES:
        subprocess.run(["ip", "-n", TESTER_NS, "link", "del", bridge], capture_output=True)


def guest_config(lab_config: Path, pci: list[str], engine: Path, **sections: dict) -> str:
    """The guest's tester config from the lab's: the same addresses and DUT, the guest's PCI
    NICs as ports, in the guest's own network namespace (none), with hugepages, on the
    guest's two CPUs. `sections` add or replace keys, e.g. trial={"max_lag": 0.5}."""
    lab = tomllib.loads(lab_config.read_text())
    config = {
        "tester": {"netns": "", "hugepages": "yes", "lcores": "0@0,1@1", "engine": str(engine)},
        "left": {k: v for k, v in lab["left"].items() if k not in ("port", "mac")},
        "right": {k: v for k, v in lab["right"].items() if k not in ("port", "mac")},
        "trial": dict(lab.get("trial", {})),
    }
    # The lab's tester MACs belong to its veth ends; the guest sends with its NICs' own.
    config["left"]["port"], config["right"]["port"] = (f"pci:{address}" for address in pci)
    for name, keys in sections.items():
        config.setdefault(name, {}).update(keys)
    return "".join(f"[{name}]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in keys.items()) + "\n"
                   for name, keys in config.items())


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(str(value))   # a TOML basic string is a JSON string for these values


def _run(*args: str) -> None:
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()}")
