# SPDX-License-Identifier: BSD-3-Clause
"""The guest cabled to a lab DUT on the host, what xlatperf in the guest needs, and what the
guest test modules share (the lab held while a guest runs, the steps' files in the share).

    lab namespace xlp-tester                                   lab namespace xlp-dut
    xlp-gt0 (tap of guest NIC 0, 0000:00:04.0) ─ bridge xlp-gb0 ─ xlp-tl ── veth ── xlp-dl
    xlp-gt1 (tap of guest NIC 1, 0000:00:05.0) ─ bridge xlp-gb1 ─ xlp-tr ── veth ── xlp-dr

The taps leave the guest's namespace for the lab's tester namespace, where each is bridged to
one of the tester's veth ends: frames from guest NIC 0 reach the DUT's left side and the DUT's
right side reaches guest NIC 1. A third NIC may join a side's bridge too, as a second switch
port would (`cable(taps, sides=("left", "right", "right"))`); a tap no side names stays
uncabled in the guest's namespace. Nothing is cabled anywhere else, so every frame stays in the
namespaces of the guest and of the lab. The bridges have no address and IPv6 off, so the host
adds no frame of its own (as the lab's tester side).

Each tap takes the MTU of the tester port it is bridged to (the bridge follows its ports'). A
bridge forwards a frame to a port only if it is at most the port's MTU + 18 bytes long, not
counting the outer VLAN tag (the kernel keeps that one in the frame's metadata once received).
At a tap's default MTU of 1,500, QinQ frames of 1,530 bytes on the wire (1,526 without FCS,
1,522 counted) were dropped on their way from the DUT to the guest, every one of them, while
those of 1,526 (1,518 counted) passed; the lab's veths, 8 bytes larger for QinQ (vlan.py), take
both.

The engine the guest runs is a portable build (engine/build-portable, XLP_NATIVE=OFF): the
host's -march=native build dies with SIGILL on TCG's CPU, which has no AVX-512.
"""

from __future__ import annotations

import fcntl
import json
import subprocess
import tomllib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from qemu_guest import GuestResult
from xlatperf import lab

ROOT = Path(__file__).resolve().parents[2]
PORTABLE_BUILD = ROOT / "engine" / "build-portable"
PORTABLE_ENGINE = PORTABLE_BUILD / "xlatperf-engine"
TESTER_NS = "xlp-tester"                    # the lab's names (xlatperf/lab/names.py)
TESTER_PORTS = {"left": "xlp-tl", "right": "xlp-tr"}
BRIDGES = {"left": "xlp-gb0", "right": "xlp-gb1"}
TEST_LOCK = "/run/xlatperf-tests.lock"      # the lab lock of tests/conftest.py's exclusive_lab

# The shell function the guest scripts run each step with: STEP's output goes to STEP.log and
# its exit status to STEP.status in the share (the script's folder); a step that fails does not
# stop the next.
STEP_FUNCTION = """\
step() { name=$1; shift; echo "== $name: $*"; "$@" > "$name.log" 2>&1; echo $? > "$name.status"; \
cat "$name.log"; }
"""


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


def cable(taps: list[str], sides: Sequence[str] = ("left", "right")) -> None:
    """Joins tap i to the lab's tester port of side `sides[i]`, through that side's bridge, at
    the port's MTU (module docstring); the taps beyond `sides` stay uncabled."""
    ns = ["ip", "-n", TESTER_NS]
    for tap, side in zip(taps, sides):
        port, bridge = TESTER_PORTS[side], BRIDGES[side]
        if not _link_exists(TESTER_NS, bridge):
            _run(*ns, "link", "add", bridge, "type", "bridge", "stp_state", "0",
                 "mcast_snooping", "0")
            _disable_ipv6(bridge)
            _run(*ns, "link", "set", port, "master", bridge)
        _run("ip", "-n", "xlp-guest", "link", "set", tap, "netns", TESTER_NS)
        _disable_ipv6(tap)
        _run(*ns, "link", "set", tap, "mtu", str(_mtu(TESTER_NS, port)))
        _run(*ns, "link", "set", tap, "master", bridge)
        for dev in (tap, port, bridge):
            _run(*ns, "link", "set", dev, "up")


def uncable() -> None:
    """Removes the bridges (the taps go with QEMU; the lab's veths stay as the lab made them)."""
    for bridge in BRIDGES.values():
        subprocess.run(["ip", "-n", TESTER_NS, "link", "del", bridge], capture_output=True)


@contextmanager
def lab_for_guest(kind: str, params: dict[str, str], config_out: Path) -> Iterator[Path]:
    """The lab lock held and the lab `kind` built (its tester config at `config_out`) for as
    long as a guest cabled to it runs; then the bridges and the lab removed, the lock released."""
    with open(TEST_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            lab.lab_up(kind, {**params, "calibrate": "no"}, str(config_out))
            yield config_out
        finally:
            uncable()
            lab.lab_down()
            fcntl.flock(lock, fcntl.LOCK_UN)


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


# --- what the steps left in the share ---------------------------------------------------------

def step_result(result: GuestResult, name: str) -> tuple[int, str]:
    """STEP's exit status and output; fails (with the console's end) if it never ended."""
    status, log = result.share / f"{name}.status", result.share / f"{name}.log"
    if not status.exists():
        pytest.fail(f"step {name} never ended (guest status {result.status}); console:\n"
                    f"{result.console[-4000:]}")
    return int(status.read_text()), log.read_text(errors="replace") if log.exists() else ""


def step(result: GuestResult, name: str) -> str:
    """STEP's output; fails with it unless the step exited 0."""
    status, output = step_result(result, name)
    assert status == 0, f"step {name} exited {status}:\n{output[-4000:]}"
    return output


def doctor_checks(output: str) -> dict[str, dict]:
    """`xlatperf doctor --json`'s checks by name."""
    try:
        return {check["name"]: check for check in json.loads(output)}
    except ValueError:
        pytest.fail(f"doctor printed no JSON:\n{output[-4000:]}")


def records(out: Path) -> list[dict]:
    """A run's trials.jsonl."""
    return [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines() if line]


def assert_every_frame_counted(trial: dict, frames: int) -> None:
    """A valid trial whose every direction sent `frames` and received each once, none of them
    refused (of another length, on another VLAN, ...)."""
    assert trial["valid"], trial
    for name, direction in trial["directions"].items():
        assert direction["sent"] == frames, (name, direction)
        assert direction["received"] == direction["sent"], (name, direction)
        assert direction["loss_ratio"] == 0, (name, direction)
        refused = {key: count for key in ("bad_length", "bad_vlan", "duplicates", "out_of_range")
                   if (count := direction.get(key))}
        assert not refused, (name, direction)
    assert trial["loss_ratio"] == 0, trial


# --- helpers --------------------------------------------------------------------------------

def _link_exists(netns: str, name: str) -> bool:
    return subprocess.run(["ip", "-n", netns, "link", "show", name], capture_output=True).returncode == 0


def _mtu(netns: str, name: str) -> int:
    proc = subprocess.run(["ip", "-j", "-n", netns, "link", "show", name], capture_output=True, text=True,
                          check=True)
    return int(json.loads(proc.stdout)[0]["mtu"])


def _disable_ipv6(dev: str) -> None:
    _run("ip", "netns", "exec", TESTER_NS, "sysctl", "-q", "-w", f"net.ipv6.conf.{dev}.disable_ipv6=1")


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
