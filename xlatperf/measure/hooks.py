# SPDX-License-Identifier: BSD-3-Clause
"""DUT hooks: commands the front end runs at defined points of a measurement.

    [dut]
    ssh = "root@dut"              # "" = run the commands locally (sh -c)
    before_point = "set-cpus {dut.cores}"   # before each measurement (a campaign point)
    before_repetition = ""        # before each repetition
    before_trial = "conntrack -F" # before every trial (stateful tests: before phase 1)
    wait_until = "ping -c 1 -W 1 198.19.0.1"   # then repeated until it exits 0 (e.g. a reboot)
    during_trial = "reload"       # during every trial, while the engine sends: started
    during_trial_at = 5.0         # this many s after the trial request went to the engine
    counters = "echo conntrack=$(conntrack -C)"  # after every trial: key=value lines recorded
    after_trial = ""              # after every trial (after counters)
    after_repetition = ""
    after_point = ""              # after the measurement ended (not after an error or Ctrl-C)
    teardown = "conntrack -F"     # the timed tear-down of teardown-rate
    timeout = 60.0                # seconds per command, and for wait_until altogether
    cores = 4                     # a DUT variable: any other [dut] key, for {dut.cores}

Commands are templates (xlatperf/config/templates.py): {section.key} is the measurement's
value of any configuration key, {dut.NAME} a DUT variable, {{ and }} literal braces; the
configuration's validation refuses an unknown placeholder before anything runs. A command runs
as `sh -c CMD` on the tester, or as `ssh -o BatchMode=yes HOST CMD` when `dut.ssh` names a
host. Every run is appended to hooks.jsonl in the result directory (and fsynced): the hook,
the command as run, where it ran, its exit status, duration and output, and the point,
repetition and step it belongs to. A failing command stops the measurement
(MeasurementError): trials on a DUT in an unknown state would not be results. The exception is
`counters`, which only observes: its failure is recorded with the trial, and the trial counts.

`during_trial` is the one hook that runs while a trial runs (RFC 2544 §26.6 / RFC 6201: the
reset of the `reset` procedure; any procedure's trials run it when it is set): a thread waits
`during_trial_at` s from the moment the trial request is sent, then runs the command; the
trial's reply is awaited as usual, then the hook's end (DuringTrial.finish). Its run is in
hooks.jsonl with `at_s`, the time it started after the request, and the trial's record says
when it ran and whether it started before the trial's reply came.
"""

import json
import os
import re
import subprocess
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..config.schema import HOOK_KEYS
from ..config.templates import template_value
from ..config.templates import render
from ..util.errors import ConfigError, MeasurementError
from ..util.files import utc_timestamp

HOOKS_FILE = "hooks.jsonl"
OUTPUT_KEPT = 4000          # characters of a command's output kept in hooks.jsonl
WAIT_INTERVAL = 1.0         # seconds between two wait_until probes
HOOK_NAMES = HOOK_KEYS
# The stages with a before_STAGE and an after_STAGE hook, outermost first. A "point" is one
# measurement: one `xlatperf PROCEDURE` run, or one procedure of a campaign point.
STAGES = ("point", "repetition", "trial")
COUNTER_LINE = re.compile(r"^\s*([A-Za-z0-9_.-]+)\s*=\s*(.*?)\s*$")
NUMBER_LINE = re.compile(r"^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$")


@dataclass
class HookRun:
    """One run of a hook command."""
    hook: str
    command: str               # as run: placeholders replaced
    where: str                 # "local" or the ssh host
    exit_status: int | None    # None: it did not finish within dut.timeout
    duration: float            # seconds, wall clock around the command (process start included)
    output: str                # stdout and stderr as written, the last OUTPUT_KEPT characters
    started: str               # UTC, ISO 8601
    stderr: str = ""           # counters: its stderr apart (output is then its stdout alone)

    @property
    def ok(self) -> bool:
        return self.exit_status == 0

    def describe(self) -> str:
        status = (f"did not finish within {self.duration:.1f} s" if self.exit_status is None
                  else f"exit {self.exit_status}")
        output = " ".join(f"{self.output} {self.stderr}".split())[-300:]
        return f"dut.{self.hook} `{self.command}` ({self.where}): {status}" + \
            (f": {output}" if output else "")


def command_line(command: str, ssh: str) -> list[str]:
    """The argv that runs `command` locally or on the ssh host."""
    if ssh:
        return ["ssh", "-o", "BatchMode=yes", ssh, command]
    return ["sh", "-c", command]


def _number(text: str):
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse_counters(output: str) -> dict:
    """The DUT counters in a command's stdout: `key=value` lines (a number when the value is
    one, else the text), and lines that are a bare number (`conntrack -C`) as value, value_2,
    ... in order. Other lines are ignored (hooks.jsonl keeps the whole output)."""
    counters: dict = {}
    bare = 0
    for line in output.splitlines():
        match = COUNTER_LINE.match(line)
        if match:
            counters[match.group(1)] = _number(match.group(2))
        elif NUMBER_LINE.match(line):
            bare += 1
            counters["value" if bare == 1 else f"value_{bare}"] = _number(line.strip())
    return counters


class DutHooks:
    """Runs the [dut] commands of `config`, with its values in their placeholders, and logs
    every run to `log_path` (None: no log).

    context: what the run belongs to (procedure, repetition, step, phase), stored with it."""

    def __init__(self, config, log_path: str | os.PathLike | None = None,
                 append: bool = False):
        self.config = config
        self.dut = config.dut
        self.log_path = Path(log_path) if log_path is not None else None
        if self.log_path is not None and not append:
            self.log_path.unlink(missing_ok=True)
        self.runs: list[HookRun] = []
        self._log_lock = threading.Lock()     # during_trial logs from its own thread

    @classmethod
    def from_config(cls, config, directory=None, append: bool = False) -> "DutHooks":
        path = Path(directory) / HOOKS_FILE if directory is not None else None
        return cls(config, path, append)

    def configured(self, hook: str) -> bool:
        return bool(getattr(self.dut, hook))

    def command(self, hook: str) -> str:
        """The hook's command with the configuration's values in its placeholders."""
        template = getattr(self.dut, hook)
        try:
            return render(template, lambda name: template_value(self.config, name))
        except (KeyError, ValueError) as exc:   # validate() refuses these; a Config built
            raise ConfigError(f"dut.{hook} = {template!r}: {exc}") from None   # otherwise

    def run(self, hook: str, context: dict | None = None, timeout: float | None = None) -> HookRun:
        """Runs the hook's command once; returns the run (whatever its exit status). The
        counters hook's stdout is kept apart from its stderr: it is parsed."""
        command = self.command(hook)
        argv = command_line(command, self.dut.ssh)
        limit = self.dut.timeout if timeout is None else timeout
        started = utc_timestamp()
        begin = time.perf_counter()
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE if hook == "counters" else
                                  subprocess.STDOUT, text=True, errors="replace",
                                  timeout=limit)
            status, output, errors = done.returncode, done.stdout, done.stderr or ""
        except subprocess.TimeoutExpired as exc:
            status, output, errors = None, _text(exc.stdout), _text(exc.stderr)
        except FileNotFoundError:
            status, output, errors = 127, f"{argv[0]}: command not found", ""
        duration = time.perf_counter() - begin
        run = HookRun(hook=hook, command=command, where=self.dut.ssh or "local",
                      exit_status=status, duration=duration, output=output[-OUTPUT_KEPT:],
                      started=started, stderr=errors[-OUTPUT_KEPT:])
        self._log(run, context)
        return run

    def _required(self, hook: str, context: dict | None, why: str) -> HookRun:
        run = self.run(hook, context)
        if not run.ok:
            raise MeasurementError(f"{run.describe()} ({why})")
        return run

    def before(self, stage: str, context: dict | None = None) -> list[HookRun]:
        """before_STAGE, then wait_until (before every trial, and after a before_point or
        before_repetition that ran: it may have restarted the DUT); MeasurementError when
        either fails."""
        runs = []
        hook = f"before_{stage}"
        if self.configured(hook):
            runs.append(self._required(hook, context, f"the DUT is not ready for the {stage}"))
        if self.configured("wait_until") and (stage == "trial" or runs):
            runs.append(self.wait_until(context))
        return runs

    def after(self, stage: str, context: dict | None = None) -> HookRun | None:
        """after_STAGE; MeasurementError when it fails (the DUT is in an unknown state)."""
        hook = f"after_{stage}"
        if not self.configured(hook):
            return None
        return self._required(hook, context, f"after the {stage}")

    def sample(self, context: dict | None = None) -> dict:
        """The counters hook, for a trial's record: {"dut_counters": {...}} from its stdout
        (parse_counters), {"dut_counters_error": why} when it failed, {} when not set."""
        if not self.configured("counters"):
            return {}
        run = self.run("counters", context)
        if not run.ok:
            return {"dut_counters_error": run.describe()}
        return {"dut_counters": parse_counters(run.output)}

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

    def during_trial(self, context: dict | None = None) -> "DuringTrial | None":
        """The during_trial hook for one trial, not yet started; None when it is not set."""
        if not self.configured("during_trial"):
            return None
        return DuringTrial(self, self.dut.during_trial_at, context)

    def _log(self, run: HookRun, context: dict | None) -> None:
        with self._log_lock:
            self.runs.append(run)
            if self.log_path is None:
                return
            record = {**(context or {}), **asdict(run)}
            with open(self.log_path, "a", encoding="utf-8") as stream:
                stream.write(json.dumps(record, separators=(",", ":")) + "\n")
                stream.flush()
                os.fsync(stream.fileno())


class DuringTrial:
    """One run of the during_trial hook: start() when the trial request is sent; a thread
    waits `at` s, then runs the command (dut.timeout applies). finish() after the trial's
    reply waits for the command and returns what the trial's record keeps; cancel() (the
    trial failed or was interrupted) keeps a command that has not started from starting, and
    lets one that has finish: it may be bringing the DUT back."""

    def __init__(self, hooks: DutHooks, at: float, context: dict | None):
        self.hooks, self.at, self.context = hooks, at, dict(context or {})
        self._cancelled = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dut.during_trial")
        self._begin: float | None = None
        self.started_s: float | None = None    # when the command started, s after start()
        self.run: HookRun | None = None

    def start(self) -> None:
        self._begin = time.perf_counter()
        self._thread.start()

    def _run(self) -> None:
        if self._cancelled.wait(self.at):
            return
        self.started_s = time.perf_counter() - self._begin
        self.run = self.hooks.run("during_trial", {**self.context, "at_s": self.at,
                                                   "started_s": round(self.started_s, 6)})

    def cancel(self) -> None:
        self._cancelled.set()

    def finish(self, trial_seconds: float) -> dict:
        """Waits for the command; {"during_trial": {at_s, started_s, within_trial, duration,
        exit_status}} for the trial's record (trial_seconds: from the request to the reply).
        MeasurementError when it failed: the DUT is in an unknown state."""
        self._thread.join()
        run = self.run
        if run is None:
            raise MeasurementError("dut.during_trial: did not run")
        if not run.ok:
            raise MeasurementError(f"{run.describe()} (during the trial)")
        return {"during_trial": {"at_s": self.at, "started_s": round(self.started_s, 6),
                                 "within_trial": self.started_s < trial_seconds,
                                 "duration": round(run.duration, 6),
                                 "exit_status": run.exit_status}}


def _text(data) -> str:
    if data is None:
        return ""
    return data if isinstance(data, str) else data.decode(errors="replace")
