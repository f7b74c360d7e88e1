# SPDX-License-Identifier: BSD-3-Clause
"""DUT hooks: commands the front end runs at defined points of a measurement.

    [dut]
    ssh = "root@dut"              # "" = run the commands locally (sh -c)
    before_trial = "conntrack -F" # before every trial (stateful tests: before phase 1)
    wait_until = "ping -c 1 -W 1 198.19.0.1"   # then repeated until it exits 0 (e.g. a reboot)
    teardown = "conntrack -F"     # the timed tear-down of teardown-rate
    timeout = 60.0                # seconds per command, and for wait_until altogether

A command runs as `sh -c CMD` on the tester, or as `ssh -o BatchMode=yes HOST CMD` when
`dut.ssh` names a host. Every run is appended to hooks.jsonl in the result directory (and
fsynced): the hook, the command, where it ran, its exit status, duration and output, and the
repetition and step it belongs to. A failing before_trial or wait_until stops the measurement
(MeasurementError): trials on a DUT in an unknown state would not be results.
"""

import json
import os
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..util.errors import MeasurementError
from ..util.files import utc_timestamp

HOOKS_FILE = "hooks.jsonl"
OUTPUT_KEPT = 4000          # characters of a command's output kept in hooks.jsonl
WAIT_INTERVAL = 1.0         # seconds between two wait_until probes
HOOK_NAMES = ("before_trial", "wait_until", "teardown")


@dataclass
class HookRun:
    """One run of a hook command."""
    hook: str
    command: str
    where: str                 # "local" or the ssh host
    exit_status: int | None    # None: it did not finish within dut.timeout
    duration: float            # seconds, wall clock around the command (process start included)
    output: str                # stdout and stderr, the last OUTPUT_KEPT characters
    started: str               # UTC, ISO 8601

    @property
    def ok(self) -> bool:
        return self.exit_status == 0

    def describe(self) -> str:
        status = (f"did not finish within {self.duration:.1f} s" if self.exit_status is None
                  else f"exit {self.exit_status}")
        output = " ".join(self.output.split())[-300:]
        return f"dut.{self.hook} `{self.command}` ({self.where}): {status}" + \
            (f": {output}" if output else "")


def command_line(command: str, ssh: str) -> list[str]:
    """The argv that runs `command` locally or on the ssh host."""
    if ssh:
        return ["ssh", "-o", "BatchMode=yes", ssh, command]
    return ["sh", "-c", command]


class DutHooks:
    """Runs the [dut] commands and logs every run to `log_path` (None: no log).

    context: what the run belongs to (procedure, repetition, step, phase), stored with it."""

    def __init__(self, dut, log_path: str | os.PathLike | None = None,
                 append: bool = False):
        self.dut = dut
        self.log_path = Path(log_path) if log_path is not None else None
        if self.log_path is not None and not append:
            self.log_path.unlink(missing_ok=True)
        self.runs: list[HookRun] = []

    @classmethod
    def from_config(cls, config: dict, directory=None, append: bool = False) -> "DutHooks":
        path = Path(directory) / HOOKS_FILE if directory is not None else None
        return cls(config.dut, path, append)

    def configured(self, hook: str) -> bool:
        return bool(getattr(self.dut, hook))

    def run(self, hook: str, context: dict | None = None, timeout: float | None = None) -> HookRun:
        """Runs the hook's command once; returns the run (whatever its exit status)."""
        command = getattr(self.dut, hook)
        argv = command_line(command, self.dut.ssh)
        limit = self.dut.timeout if timeout is None else timeout
        started = utc_timestamp()
        begin = time.perf_counter()
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, errors="replace",
                                  timeout=limit)
            status, output = done.returncode, done.stdout
        except subprocess.TimeoutExpired as exc:
            out = exc.output or ""
            status, output = None, out if isinstance(out, str) else out.decode(errors="replace")
        except FileNotFoundError:
            status, output = 127, f"{argv[0]}: command not found"
        duration = time.perf_counter() - begin
        run = HookRun(hook=hook, command=command, where=self.dut.ssh or "local",
                      exit_status=status, duration=duration, output=output[-OUTPUT_KEPT:],
                      started=started)
        self._log(run, context)
        return run

    def before_trial(self, context: dict | None = None) -> list[HookRun]:
        """before_trial, then wait_until; raises MeasurementError when either fails."""
        runs = []
        if self.configured("before_trial"):
            run = self.run("before_trial", context)
            runs.append(run)
            if not run.ok:
                raise MeasurementError(f"{run.describe()} (the DUT is not ready for a trial)")
        if self.configured("wait_until"):
            runs.append(self.wait_until(context))
        return runs

    def wait_until(self, context: dict | None = None) -> HookRun:
        """Repeats wait_until every WAIT_INTERVAL s until it exits 0, for at most dut.timeout s
        altogether; returns the successful run."""
        deadline = time.monotonic() + self.dut.timeout
        attempts = 0
        while True:
            attempts += 1
            remaining = max(0.1, deadline - time.monotonic())
            run = self.run("wait_until", {**(context or {}), "attempt": attempts}, remaining)
            if run.ok:
                return run
            if time.monotonic() + WAIT_INTERVAL >= deadline:
                raise MeasurementError(f"{run.describe()}; still failing after {attempts} "
                                       f"attempts in dut.timeout = {self.dut.timeout:g} s")
            time.sleep(WAIT_INTERVAL)

    def timed(self, hook: str, context: dict | None = None) -> HookRun:
        """Runs a hook whose duration is the measurement (teardown); raises MeasurementError
        when it fails, since its duration would then mean nothing."""
        if not self.configured(hook):
            raise MeasurementError(f'dut.{hook} = "": set the command to time (e.g. '
                                   '"conntrack -F" for Linux netfilter)')
        run = self.run(hook, context)
        if not run.ok:
            raise MeasurementError(run.describe())
        return run

    def _log(self, run: HookRun, context: dict | None) -> None:
        self.runs.append(run)
        if self.log_path is None:
            return
        record = {**(context or {}), **asdict(run)}
        with open(self.log_path, "a", encoding="utf-8") as stream:
            stream.write(json.dumps(record, separators=(",", ":")) + "\n")
            stream.flush()
            os.fsync(stream.fileno())
