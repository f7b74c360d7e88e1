# SPDX-License-Identifier: BSD-3-Clause
"""Starting and talking to xlatperf-engine (docs/protocol.md; the version: protocol.py).

    with Engine(config, log_path="out/engine.log") as engine:
        hello = engine.hello()
        reply = engine.trial({"duration": 10.0, "timeout": 2.0, "flows": [...]},
                             on_progress=print)

The engine runs in its own session (start_new_session=True), so a Ctrl-C on the terminal
reaches only the front end, which then decides: `abort()` sends SIGTERM, the engine answers the
running trial with `"valid": false, "invalid_reason": "aborted"`, stops its ports and exits.
With tester.ssh the engine runs on another host, through ssh (engine/remote.py). A thread
other than the one measuring stops the engines of a measuring thread with an Interruption
(several testers in one campaign, run/testers.py).
"""

import collections
import itertools
import json
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
import weakref
from pathlib import Path
from typing import Callable

from ..frames.kinds import trial_frames
from ..config.ports import parse_port
from ..util.errors import EngineError, EngineExited
from . import remote
from .protocol import check_version, error_from_reply

ENGINE_NAME = "xlatperf-engine"
# The repository's build tree: <repo>/engine/build (this file is <repo>/xlatperf/engine/client.py).
REPO_ENGINE = Path(__file__).resolve().parents[2] / "engine" / "build" / ENGINE_NAME
# Without this much free hugepage memory, "auto" runs the EAL with --no-huge.
MIN_HUGEPAGE_BYTES = 512 * 2**20
NO_HUGE_MEMORY_MB = 1024
DPDK_RUNTIME_DIR = "/var/run/dpdk"
STDERR_LINES_KEPT = 40
# Slack on top of a trial's duration + timeout before the front end gives up on the reply.
REPLY_SLACK_SECONDS = 60.0
STARTUP_TIMEOUT_SECONDS = 120.0   # EAL init and port start (af_xdp, real NICs can be slow)
# --file-prefix of --no-huge runs: one per engine, so engines started by one front end at the
# same time (several testers of a campaign on one host) do not share DPDK's runtime directory.
_ENGINE_NUMBERS = itertools.count(1)
MAX_FRAME_DEFAULT = 1526          # the engine's --max-frame-size default: 1518 + two VLAN tags


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------

def free_hugepage_bytes(meminfo_path: str = "/proc/meminfo") -> int:
    """HugePages_Free × Hugepagesize from /proc/meminfo (0 when unreadable)."""
    try:
        with open(meminfo_path) as stream:
            return hugepage_bytes(stream.read())
    except OSError:
        return 0


def hugepage_bytes(meminfo: str) -> int:
    """HugePages_Free × Hugepagesize from the text of a /proc/meminfo (0 when absent)."""
    fields = {}
    for line in meminfo.splitlines():
        name, _, rest = line.partition(":")
        fields[name.strip()] = rest.split()
    try:
        free = int(fields["HugePages_Free"][0])
        size_kib = int(fields["Hugepagesize"][0])  # "2048 kB"
    except (KeyError, IndexError, ValueError):
        return 0
    return free * size_kib * 1024


def has_pci_port(config: dict) -> bool:
    """Whether a port is a NIC that reaches the mbufs by DMA (hugepages; DPDK's PCI bus)."""
    return any(parse_port(spec).port_kind.dma for spec in (config.left.port, config.right.port))


def use_hugepages(config: dict, free_bytes: int | None = None) -> bool:
    """Whether the EAL runs on hugepages: tester.hugepages, and with "auto" whether enough are
    free. A PCI port's NIC reads and writes the mbufs by DMA, which --no-huge memory cannot
    give it: "auto" then never falls back (config validation refuses "no" with one)."""
    mode = config.tester.hugepages
    if mode != "auto":
        return mode == "yes"
    if free_bytes is None:
        free_bytes = free_hugepage_bytes()
    if free_bytes >= MIN_HUGEPAGE_BYTES:
        return True
    if has_pci_port(config):
        raise EngineError(f'tester.hugepages = "auto": a PCI port needs hugepages (its NIC reaches '
                          f"the mbufs by DMA), and {free_bytes // 2**20} MiB are free, less than "
                          f"{MIN_HUGEPAGE_BYTES // 2**20} MiB; reserve them, e.g. "
                          "echo 512 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages "
                          "(xlatperf doctor names the NIC's NUMA node)")
    return False


def memory_of(config: dict, free_bytes: int | None = None) -> str:
    """The EAL's memory as a result states it: "hugepages", or --no-huge and why."""
    if config.tester.hugepages == "auto" and free_bytes is None:
        free_bytes = free_hugepage_bytes()
    if use_hugepages(config, free_bytes):
        return "hugepages"
    if config.tester.hugepages == "no":
        return 'no hugepages (tester.hugepages = "no"): --no-huge'
    return (f'no hugepages (tester.hugepages = "auto": {free_bytes // 2**20} MiB free, under '
            f"{MIN_HUGEPAGE_BYTES // 2**20} MiB): --no-huge")


def eal_args(config: dict, free_bytes: int | None = None,
             file_prefix: str | None = None) -> list[str]:
    """EAL arguments for the tester ports of `config`, then tester.eal_args. The engine numbers
    the ports by side (--ports), whatever order DPDK probes the devices in.

    free_bytes: free hugepage memory (None: read /proc/meminfo), for hugepages = "auto".
    file_prefix: DPDK's --file-prefix of a --no-huge run (default: xlatperf<pid>).
    """
    if use_hugepages(config, free_bytes):
        memory = ["--in-memory"]  # no hugepage files or runtime directory left behind
    else:
        # --in-memory needs hugepages (DPDK refuses it with --no-huge); a private file prefix
        # keeps concurrent engines apart instead.
        memory = ["--no-huge", "-m", str(NO_HUGE_MEMORY_MB),
                  "--file-prefix", file_prefix or f"xlatperf{os.getpid()}"]
    lcores = config.tester.lcores
    args = ["--lcores" if "@" in lcores else "-l", lcores, *memory, "--no-telemetry", "--log-level=*:notice"]
    if not has_pci_port(config):
        args.append("--no-pci")
    largest = trial_frames(config).largest_frame
    for index, spec in enumerate([config.left.port, config.right.port]):
        args += parse_port(spec).eal_args(index, config.tester.queues, largest)
    return args + list(config.tester.eal_args)


def find_engine(config: dict) -> str:
    """Path of the engine binary: tester.engine, $XLATPERF_ENGINE, the build tree, PATH."""
    candidates = [("tester.engine", config.tester.engine),
                  ("$XLATPERF_ENGINE", os.environ.get("XLATPERF_ENGINE", ""))]
    for origin, path in candidates:
        if path:
            if not (os.path.isfile(path) and os.access(path, os.X_OK)):
                raise EngineError(f"{origin} = {path}: no executable file there")
            return path
    if REPO_ENGINE.is_file() and os.access(REPO_ENGINE, os.X_OK):
        return str(REPO_ENGINE)
    found = shutil.which(ENGINE_NAME)
    if found:
        return found
    raise EngineError(f"{ENGINE_NAME} not found: build engine/ (cmake), or set tester.engine "
                      "or $XLATPERF_ENGINE")


def engine_command(config: dict, engine_path: str, free_bytes: int | None = None,
                   file_prefix: str | None = None) -> list[str]:
    """[ip netns exec NETNS] ENGINE EAL-ARGS -- [--force]"""
    command = []
    if engine_netns(config):
        command += ["ip", "netns", "exec", engine_netns(config)]
    tester = config.tester
    # The engine numbers the ports as the sides are (0 = left, 1 = right), by their device
    # names, whatever order DPDK probed them in.
    names = ",".join(parse_port(config.side(side).port).device_name(index)
                     for index, side in enumerate(("left", "right")))
    command += [engine_path, *eal_args(config, free_bytes, file_prefix),
                "--", "--queues", str(tester.queues), "--ports", names,
                "--link-timeout", f"{tester.link_timeout:g}", "--flow-control", tester.flow_control,
                "--rx-descriptors", str(tester.rx_descriptors), "--tx-descriptors", str(tester.tx_descriptors)]
    largest = trial_frames(config).largest_frame
    if largest > MAX_FRAME_DEFAULT:  # jumbo frames: ports set up for them
        command += ["--max-frame-size", str(largest)]
    if config.tester.force:
        command.append("--force")
    left = parse_port(config.left.port)
    if left.port_kind.paired:   # the engine creates the pair itself
        command += ["--ring-pair", left.name]
    return command


def kernel_interfaces(config: dict) -> list[str]:
    """The kernel interfaces the tester ports use (af_packet, af_xdp)."""
    return [port.name for port in map(parse_port, (config.left.port, config.right.port))
            if port.port_kind.kernel_interface]


def engine_netns(config: dict) -> str:
    """The network namespace the engine runs in: tester.netns, the namespace of its ports'
    kernel interfaces; "" when no port has one (PCI, null and ring ports live in none, so the
    lab's default namespace is not required of them)."""
    return config.tester.netns if kernel_interfaces(config) else ""


def check_ports_exist(config: dict, facts: remote.HostFacts | None = None) -> None:
    """Fail early, with the port's name, when a network namespace or an af_packet/af_xdp
    interface is missing (DPDK's own message for that is obscure). facts: what the probe found
    on the tester host (tester.ssh); None: look on this host."""
    netns = engine_netns(config)
    host = f" on {remote.where(config)}" if facts is not None else ""
    if netns and not (facts.netns_exists if facts is not None
                      else os.path.exists(f"/run/netns/{netns}")):
        raise EngineError(f'tester.netns = "{netns}": no such network namespace{host} '
                          '(create it, e.g. with "xlatperf lab up", or set tester.netns = "")')
    for side in ("left", "right"):
        port = parse_port(config.side(side).port)
        if not port.port_kind.kernel_interface:
            continue
        where = (f" in network namespace {netns}" if netns else "") + host
        if facts is not None:
            exists = port.name not in facts.missing_interfaces
        elif netns:
            exists = subprocess.run(["ip", "-n", netns, "link", "show", "dev", port.name],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
        else:
            exists = os.path.exists(f"/sys/class/net/{port.name}")
        if not exists:
            raise EngineError(f"{side}.port = \"{port}\": no such interface {port.name}{where}")


# --------------------------------------------------------------------------------------------
# The running engine
# --------------------------------------------------------------------------------------------

class Interruption:
    """Ctrl-C for the engines of another thread. A Ctrl-C reaches only the main thread; when
    measurements run in worker threads (several testers in one campaign), the main thread
    calls interrupt() on each worker's Interruption:

        with Interruption() as interruption:     # in the worker thread
            run_procedure(...)                   # its engines register themselves

    interrupt() sends every engine started in that scope SIGTERM (as abort() does), and the
    worker's pending request, and any request after it, raises KeyboardInterrupt in the worker:
    run_procedure then ends the measurement as after a Ctrl-C (the aborted trial recorded, an
    incomplete summary written)."""

    _local = threading.local()

    def __init__(self):
        self._lock = threading.Lock()
        self._engines: weakref.WeakSet = weakref.WeakSet()
        self.requested = False
        self._previous = None

    def __enter__(self) -> "Interruption":
        self._previous = getattr(Interruption._local, "scope", None)
        Interruption._local.scope = self
        return self

    def __exit__(self, *exc) -> None:
        Interruption._local.scope = self._previous

    @classmethod
    def current(cls) -> "Interruption | None":
        return getattr(cls._local, "scope", None)

    def register(self, engine: "Engine") -> bool:
        """Adds an engine; True if the scope is interrupted already."""
        with self._lock:
            self._engines.add(engine)
            return self.requested

    def interrupt(self) -> None:
        with self._lock:
            self.requested = True
            engines = list(self._engines)
        for engine in engines:
            engine.interrupt()


def exit_signal_text(signum: int) -> str:
    """The signal that ended the engine, with what it likely means where that is known."""
    try:
        name = signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
    if signum == signal.SIGILL:
        return (f"{name} (an instruction this CPU lacks: the engine was built for another CPU, "
                "e.g. with -march=native on a newer one; build it on this host, or with "
                "cmake -DXLP_NATIVE=OFF for any x86-64 CPU)")
    return name


class Engine:
    """One engine process for a whole campaign (EAL and ports are initialised once).

    Requests are strictly sequential. If the engine exits or stops answering, the pending
    call raises EngineError carrying the last lines of the engine's stderr.
    """

    def __init__(self, config: dict, *, log_path: str | os.PathLike | None = None,
                 engine_path: str | None = None, check_ports: bool = True):
        self.config = config
        self.log_path = log_path
        self.engine_path = engine_path
        self.check_ports = check_ports
        self.command: list[str] = []           # the command line the engine was started with
        self.memory = ""                       # the EAL's memory (memory_of), once started
        self.info: dict | None = None          # the hello reply
        self._process: subprocess.Popen | None = None
        self._replies: queue.Queue = queue.Queue()   # stdout lines; None at end of file
        self._stderr_tail: collections.deque = collections.deque(maxlen=STDERR_LINES_KEPT)
        self._threads: list[threading.Thread] = []
        self._next_id = 1
        self._pending_id: int | None = None     # id of the request whose reply is outstanding
        self._stdout_closed = False
        self._remote_pid: int | None = None     # tester.ssh: the engine's pid on that host
        self._interrupted = False               # Interruption.interrupt() was called
        self._interrupted_reply: dict | None = None  # the reply that came in after it
        scope = Interruption.current()
        if scope is not None and scope.register(self):
            self._interrupted = True

    # -- life cycle ------------------------------------------------------------------------------

    def start(self) -> "Engine":
        if self._interrupted:
            raise KeyboardInterrupt
        if self.config.tester.ssh:
            self.command = command = self._remote_command()
        else:
            if self.check_ports:
                check_ports_exist(self.config)
            free_bytes = free_hugepage_bytes()
            self.memory = memory_of(self.config, free_bytes)
            self.command = command = engine_command(
                self.config, self.engine_path or find_engine(self.config), free_bytes,
                file_prefix=f"xlatperf{os.getpid()}-{next(_ENGINE_NUMBERS)}")
        log = open(self.log_path, "w", encoding="utf-8", errors="replace") if self.log_path else None
        try:
            self._process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, encoding="utf-8", errors="replace", bufsize=1, start_new_session=True)
        except OSError as exc:
            if log:
                log.close()
            raise EngineError(f"cannot start {command[0]}: {exc.strerror}") from None
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True, name="engine-stdout"),
            threading.Thread(target=self._read_stderr, args=(log,), daemon=True,
                             name="engine-stderr"),
        ]
        for thread in self._threads:
            thread.start()
        return self

    def _remote_command(self) -> list[str]:
        """The ssh command line that starts the engine on tester.ssh, after the probe."""
        config = self.config
        engine = self.engine_path or config.tester.engine or ENGINE_NAME
        facts = remote.probe(config, engine, kernel_interfaces(config))
        if self.check_ports:
            check_ports_exist(config, facts)
        if facts.engine is None:
            if engine != ENGINE_NAME:
                raise EngineError(f'tester.engine = "{engine}": no executable file there on '
                                  f"{remote.where(config)}")
            raise EngineError(f"{ENGINE_NAME} not found on the PATH of {remote.where(config)}: "
                              "install it there (scripts/setup.sh), or set tester.engine to its "
                              "path on that host")
        prefix = f"xlatperf{os.getpid()}-{next(_ENGINE_NUMBERS)}"
        self.memory = memory_of(config, hugepage_bytes(facts.meminfo))
        command = engine_command(config, facts.engine, hugepage_bytes(facts.meminfo), prefix)
        runtime = (f"{DPDK_RUNTIME_DIR}/{prefix}" if "--file-prefix" in command else None)
        return remote.ssh_command(config, remote.engine_script(command, runtime))

    def __enter__(self) -> "Engine":
        return self.start()

    def __exit__(self, exc_type, exc, traceback) -> None:
        if exc_type is not None and issubclass(exc_type, KeyboardInterrupt):
            self.abort()
        else:
            self.shutdown()

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def stderr_tail(self) -> list[str]:
        return list(self._stderr_tail)

    # -- requests ----------------------------------------------------------------------------------

    def hello(self) -> dict:
        """Handshake; returns (and keeps in .info) the hello reply. Checks the protocol version."""
        reply = self.request("hello", reply_timeout=STARTUP_TIMEOUT_SECONDS)
        check_version(reply.get("protocol"))
        self._check_port_names(reply.get("ports", []))
        self.info = reply
        return reply

    def addresses(self, ports: list[dict]) -> None:
        """Tell the engine which addresses each port answers ARP/ND for:
        ports = [{"port": 0, "ranges": [{"ip_version": 4, "address": "198.18.0.2"}]}, ...]."""
        self.request("addresses", {"ports": ports})

    def trial(self, request: dict, on_progress: Callable[[dict], None] | None = None) -> dict:
        """Run one elementary trial. `request` holds the trial fields (duration, timeout,
        finish_early, progress_interval, flows); progress events go to on_progress. Returns the
        final reply (check its `valid`)."""
        budget = float(request.get("duration", 0)) + float(request.get("timeout", 0))
        return self.request("trial", request, on_event=on_progress,
                            reply_timeout=budget + REPLY_SLACK_SECONDS)

    def request(self, op: str, fields: dict | None = None, *,
                on_event: Callable[[dict], None] | None = None,
                reply_timeout: float | None = None) -> dict:
        """Send one request {"id", "op", **fields} and wait for its final reply; events go to
        on_event. Raises EngineBadParameter or EngineExecutionFailure for `ok: false`,
        EngineExited for an early exit, EngineError for no reply within reply_timeout seconds."""
        if self._process is None:
            raise EngineError("engine not started")
        if self._interrupted:
            raise KeyboardInterrupt
        request_id = self._next_id
        self._next_id += 1
        self._send({"id": request_id, "op": op, **(fields or {})})
        self._pending_id = request_id
        try:
            reply = self._await_reply(request_id, on_event, reply_timeout)
        except EngineError:
            if self._interrupted:     # stopped by interrupt(): a Ctrl-C, not a failure
                raise KeyboardInterrupt from None
            raise
        if self._interrupted:         # the aborted trial's reply, for abort() to return
            self._interrupted_reply = reply
            raise KeyboardInterrupt
        self._pending_id = None
        if not reply.get("ok", False):
            raise error_from_reply(op, reply, self.stderr_tail)
        return reply

    def shutdown(self, timeout: float = 10.0) -> None:
        """Ask the engine to stop its ports and exit; kill it if it does not within timeout.
        With a request still in flight (its caller failed), this is an abort()."""
        if self._process is None:
            return
        if self._pending_id is not None:
            self.abort(timeout)
            return
        if self.running and not self._stdout_closed:
            try:
                self._send({"id": self._next_id, "op": "shutdown"})
                self._await_reply(self._next_id, None, timeout)
            except EngineError:
                pass  # exiting anyway; the wait below settles it
            self._next_id += 1
        self._finish(timeout)

    def abort(self, timeout: float = 10.0) -> dict | None:
        """SIGTERM: the engine aborts a running trial, stops its ports and exits. Returns the
        aborted trial's final reply if a request was in flight (else None)."""
        if self._process is None:
            return None
        reply, self._interrupted_reply = self._interrupted_reply, None
        if self.running and reply is None:
            self._signal(signal.SIGTERM)
            if self._pending_id is not None:
                try:
                    reply = self._await_reply(self._pending_id, None, timeout)
                except EngineError:
                    reply = None
        self._pending_id = None
        self._finish(timeout)
        return reply

    def interrupt(self) -> None:
        """From another thread (Interruption): SIGTERM, and KeyboardInterrupt in the thread
        that waits for this engine's reply, now or at its next request."""
        self._interrupted = True
        if self.running:
            self._signal(signal.SIGTERM)

    # -- plumbing ---------------------------------------------------------------------------------

    def _send(self, message: dict) -> None:
        line = json.dumps(message, separators=(",", ":")) + "\n"
        try:
            self._process.stdin.write(line)
            self._process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            self._raise_exited()

    def _await_reply(self, request_id: int, on_event, timeout: float | None) -> dict:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                line = self._replies.get(timeout=remaining)
            except queue.Empty:
                raise EngineError(f"engine gave no reply within {timeout:.0f} s", self.stderr_tail)
            if line is None:
                self._stdout_closed = True
                self._raise_exited()
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                raise EngineError(f"engine wrote a line that is not JSON: {line[:200]!r}",
                                  self.stderr_tail) from None
            if message.get("id") != request_id:
                continue  # a late event or reply of an earlier request
            if "event" in message:
                if on_event is not None:
                    on_event(message)
                continue
            return message

    def _raise_exited(self):
        try:
            status = self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            status = None
        for thread in self._threads[1:]:
            thread.join(timeout=2)  # collect the last stderr lines
        tail = self.stderr_tail
        last = next((line for line in reversed(tail) if line.strip()), "")
        what = "engine exited" if status is None else f"engine exited with status {status}"
        if status is not None and status < 0:
            what = f"engine killed by {exit_signal_text(-status)}"
        raise EngineExited(f"{what}: {last}" if last else what, status, tail)

    def _read_stdout(self) -> None:
        for line in self._process.stdout:
            line = line.strip()
            if line:
                self._replies.put(line)
        self._replies.put(None)

    def _read_stderr(self, log) -> None:
        try:
            for line in self._process.stderr:
                pid = (remote.parse_pid(line) if self._remote_pid is None
                       and self.config.tester.ssh else None)
                if pid is not None:
                    self._remote_pid = pid      # logged, but no engine message for errors
                else:
                    self._stderr_tail.append(line.rstrip("\n"))
                if log:
                    log.write(line)
                    log.flush()
        finally:
            if log:
                log.close()

    def _signal(self, signum: int) -> None:
        if self.config.tester.ssh and self._remote_pid is not None:
            # No signal crosses ssh without a terminal: a second connection delivers it. If
            # that fails, ending the local ssh below ends the engine's stdin and stdout.
            delivered = remote.signal_engine(self.config, self._remote_pid, signum)
            if delivered and signum != signal.SIGKILL:
                return
        try:
            # Own session and process group (start_new_session), so this reaches the engine
            # (`ip netns exec` execs it in place) and nothing else.
            os.killpg(self._process.pid, signum)
        except ProcessLookupError:
            pass

    def _finish(self, timeout: float) -> None:
        process = self._process
        try:
            process.stdin.close()  # end of stdin is a shutdown request as well
        except (BrokenPipeError, OSError):
            pass
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGKILL)
            process.wait()
        for thread in self._threads:
            thread.join(timeout=2)
        if "--file-prefix" in self.command and not self.config.tester.ssh:
            # --no-huge runs: DPDK's runtime directory (on a tester host: engine_script's)
            prefix = self.command[self.command.index("--file-prefix") + 1]
            shutil.rmtree(os.path.join(DPDK_RUNTIME_DIR, prefix), ignore_errors=True)

    def _check_port_names(self, ports: list[dict]) -> None:
        """Port 0 must be left and port 1 right (the engine orders them by --ports); flows rely
        on it."""
        if len(ports) < 2:
            raise EngineError(f"engine reports {len(ports)} port(s), expected 2 (left, right)",
                              self.stderr_tail)
        for index, side in enumerate(("left", "right")):
            expected = parse_port(self.config.side(side).port).device_name(index)
            reported = str(ports[index].get("name", ""))
            if reported and not (reported == expected or reported.endswith(expected)
                                 or expected.endswith(reported)):
                raise EngineError(f"DPDK port {index} is {reported}, but {side}.port "
                                  f"({self.config.side(side).port}) should be {expected}")
