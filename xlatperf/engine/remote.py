# SPDX-License-Identifier: BSD-3-Clause
"""The engine on another host, over ssh (tester.ssh; docs/testers.md).

    ssh -T -o BatchMode=yes [-p PORT] [-i KEY] [-o OPTION ...] HOST 'sh -c ... ENGINE ARGS'

The JSON-lines protocol passes through ssh's stdin and stdout untouched: -T allocates no
terminal (a terminal would echo the requests and turn "\\n" into "\\r\\n"), and BatchMode never
prompts for a password (stdin is the protocol, nobody could answer).

Before the engine starts, one ssh call (`probe`) looks on the tester host at what the front end
checks locally otherwise: the network namespace, the af_packet/af_xdp interfaces, the free
hugepages (tester.hugepages = "auto") and where the engine is; its errors name the key and the
host. The engine's own safety check (no af_packet/af_xdp on an interface with global addresses
unless --force) runs where the engine runs.

Without a terminal, ssh forwards no signals: the remote command prints the engine's pid on
stderr before it execs the engine (exec keeps the pid; `ip netns exec` execs in place), and the
front end's SIGTERM (abort) and SIGKILL go to that pid through a second ssh connection. When
even that fails, the local ssh is ended: the engine then reads the end of its stdin, which is a
shutdown request, and a write to its closed stdout ends it at the latest.

This module builds commands and reads the probe; xlatperf/engine/client.py runs the engine.
"""

import re
import shlex
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..util.errors import EngineError

PID_MARKER = "xlatperf-remote: engine pid "
PID_LINE = re.compile(r"^xlatperf-remote: engine pid (\d+)$")
# After the user's tester.ssh_options, so those win (ssh takes an option's first value): a dead
# host is an error within seconds, a connection that dies during a long trial within 30 s.
DEFAULT_OPTIONS = ("ConnectTimeout=15", "ServerAliveInterval=10", "ServerAliveCountMax=3")
PROBE_SECONDS = 60.0
SIGNAL_SECONDS = 20.0

# Arguments: NETNS ENGINE INTERFACE... One "key=value" line per finding; "probe=done" last, so
# a probe cut short is not mistaken for a host without problems.
PROBE_SCRIPT = r"""
netns=$1 engine=$2
shift 2
if [ -n "$netns" ] && [ ! -e "/run/netns/$netns" ]; then echo "netns=missing"; fi
for interface in "$@"; do
    if [ -n "$netns" ]; then
        ip -n "$netns" link show dev "$interface" >/dev/null 2>&1 || echo "missing=$interface"
    elif [ ! -e "/sys/class/net/$interface" ]; then
        echo "missing=$interface"
    fi
done
case $engine in
    */*) if [ -f "$engine" ] && [ -x "$engine" ]; then echo "engine=$engine"; fi ;;
    *) found=$(command -v "$engine") && echo "engine=$found" ;;
esac
while read -r line; do
    case $line in HugePages_Free:*|Hugepagesize:*) echo "meminfo=$line" ;; esac
done < /proc/meminfo
echo "probe=done"
"""


@dataclass
class HostFacts:
    """What the probe found on the tester host."""
    netns_exists: bool = True
    missing_interfaces: list[str] = field(default_factory=list)
    engine: str | None = None      # the engine's path there; None: not found
    meminfo: str = ""              # /proc/meminfo's hugepage lines


def where(config) -> str:
    return f"tester host {config.tester.ssh}"


def ssh_command(config, remote_command: str) -> list[str]:
    """ssh's argv that runs `remote_command` (a shell command line) on tester.ssh."""
    tester = config.tester
    argv = ["ssh", "-T", "-o", "BatchMode=yes"]
    if tester.ssh_port:
        argv += ["-p", str(tester.ssh_port)]
    if tester.ssh_identity:
        argv += ["-i", tester.ssh_identity]
    for option in (*tester.ssh_options, *DEFAULT_OPTIONS):
        argv += ["-o", option]
    return argv + [tester.ssh, remote_command]


def engine_script(engine_argv: list[str], runtime_dir: str | None = None) -> str:
    """The remote command line that runs `engine_argv` (the engine command as it would run
    locally): its pid on stderr first, then the engine in place of the shell; `runtime_dir`
    (DPDK's directory of a --no-huge run's file prefix) is removed once the engine has exited,
    however it ended."""
    run = ("sh -c " + shlex.quote(f'echo "{PID_MARKER}$$" >&2; exec "$@"') + " xlatperf-engine "
           + shlex.join(engine_argv))
    if runtime_dir is None:
        return "exec " + run
    return f"{run}; status=$?; rm -rf -- {shlex.quote(runtime_dir)}; exit $status"


def parse_pid(line: str) -> int | None:
    """The engine's pid from the remote command's first stderr line, else None."""
    match = PID_LINE.match(line.strip())
    return int(match.group(1)) if match else None


def probe_command(config, engine: str, interfaces: list[str]) -> list[str]:
    script = shlex.join(["sh", "-c", PROBE_SCRIPT, "xlatperf-probe", config.tester.netns,
                         engine, *interfaces])
    return ssh_command(config, script)


def parse_probe(output: str) -> HostFacts | None:
    """The probe's findings; None when its last line is missing (the probe did not finish)."""
    facts, done, meminfo = HostFacts(), False, []
    for line in output.splitlines():
        key, _, value = line.strip().partition("=")
        if key == "netns":
            facts.netns_exists = False
        elif key == "missing":
            facts.missing_interfaces.append(value)
        elif key == "engine":
            facts.engine = value
        elif key == "meminfo":
            meminfo.append(value)
        elif key == "probe":
            done = True
    facts.meminfo = "\n".join(meminfo)
    return facts if done else None


def _ssh_failure(config, stderr: str, status: int | None) -> EngineError:
    last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
    what = (f"no answer within {PROBE_SECONDS:.0f} s" if status is None
            else f"ssh exited with status {status}")
    return EngineError(f'tester.ssh = "{config.tester.ssh}": {what}'
                       + (f": {last}" if last else "")
                       + (" (check tester.ssh, ssh_port, ssh_identity and ssh_options: the login "
                          "must work as `ssh -o BatchMode=yes`, without a prompt)"
                          if status == 255 else ""))


def probe(config, engine: str, interfaces: list[str]) -> HostFacts:
    """Run the probe on the tester host; EngineError (naming the key) if ssh fails."""
    identity = config.tester.ssh_identity
    if identity and not Path(identity).is_file():
        raise EngineError(f'tester.ssh_identity = "{identity}": no such file')
    try:
        process = subprocess.run(probe_command(config, engine, interfaces), stdin=subprocess.DEVNULL,
                                 capture_output=True, text=True, timeout=PROBE_SECONDS,
                                 start_new_session=True)
    except subprocess.TimeoutExpired as exc:   # its output is bytes whatever text= says
        raise _ssh_failure(config, (exc.stderr or b"").decode(errors="replace"), None) from None
    except OSError as exc:
        raise EngineError(f'tester.ssh = "{config.tester.ssh}": cannot run ssh: '
                          f"{exc.strerror} (install openssh-client)") from None
    facts = parse_probe(process.stdout)
    if process.returncode != 0 or facts is None:
        raise _ssh_failure(config, process.stderr, process.returncode)
    return facts


def signal_engine(config, pid: int, signum: int) -> bool:
    """Send `signum` to the engine's pid on the tester host; False if that failed (ssh down)."""
    name = signal.Signals(signum).name.removeprefix("SIG")
    try:
        # Its own session: a second Ctrl-C on the terminal must not cut this short.
        return subprocess.run(ssh_command(config, f"kill -{name} {pid}"),
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=SIGNAL_SECONDS,
                              start_new_session=True).returncode == 0
    except (subprocess.TimeoutExpired, OSError):
        return False
