# SPDX-License-Identifier: BSD-3-Clause
"""Several testers in one campaign (docs/testers.md): one engine per tester host, the points
shared out over them, the results in one campaign directory.

    [campaign]
    testers = ["root@tester1", "root@tester2"]           # ssh destinations (tester.ssh), or
    testers = [{name = "a", "tester.ssh" = "root@tester1", "left.port" = "pci:0000:03:00.0"},
               {name = "b", "tester.ssh" = "root@tester2", "dut.ssh" = "root@dut2"}]

A tester is a set of overrides of the testbed's keys ([tester], [left], [right], [dut]: its
host, ports, MACs and DUT), applied last to every point it measures. Each tester runs in a
thread of its own, one point after the other, so one engine per tester at a time.

Points are handed out in units that run wholly on one tester: a point and the points chained
to it (latency and pdv measured at its throughput, on the same testbed). A free tester takes
first the units it measured in part before (they resume there, `points/<id>/tester.json` says
which tester measured a point), then the next unit in campaign order, so faster testers take
more. A tester whose engine cannot start or dies before a point recorded a trial (ssh down, a
port missing) stops taking points: the point goes back for another tester (once), and the
campaign ends with an error naming the tester.

Ctrl-C reaches the main thread only: it interrupts every tester's engine (client.Interruption),
each worker ends its point as after a Ctrl-C (the aborted trial kept, an incomplete summary),
and the KeyboardInterrupt is raised again once all have.
"""

import collections
import re
import signal
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..engine.client import Interruption
from ..measure.store import TRIALS_FILE
from ..util.errors import ConfigError, EngineBadParameter, EngineError
from ..util.files import read_json

TESTER_FILE = "tester.json"       # points/<id>/: the tester that measured the point
POINTS_DIR = "points"
# The keys that describe a testbed; traffic, trial and procedure settings are the points'.
TESTER_SECTIONS = ("tester", "left", "right", "dut")
NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@:%+-]*$")


@dataclass(frozen=True)
class Tester:
    name: str
    overrides: dict          # dotted key -> value, applied last to every point it measures

    def to_dict(self) -> dict:
        return {"name": self.name, "overrides": self.overrides}


def parse_testers(entries, where: str) -> list[Tester]:
    """campaign.testers: ssh destinations or tables of testbed keys (flattened to dotted keys,
    checked to be configuration keys by the caller) with an optional name."""
    shape = ('must be a non-empty list of ssh destinations ("root@tester1") or tables of '
             'testbed keys ({name = "t1", "tester.ssh" = "root@tester1"})')
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{where}: campaign.testers = {entries!r}: {shape}")
    testers: list[Tester] = []
    for number, entry in enumerate(entries, 1):
        key = f"campaign.testers[{number}]"
        if isinstance(entry, str):
            overrides, name = {"tester.ssh": entry}, entry
        elif isinstance(entry, dict):
            overrides = dict(entry)
            name = overrides.pop("name", None)
        else:
            raise ConfigError(f"{where}: {key} = {entry!r}: {shape}")
        for dotted in overrides:
            if dotted.split(".")[0] not in TESTER_SECTIONS:
                raise ConfigError(
                    f"{where}: {key}: {dotted}: a tester sets only testbed keys "
                    f"({', '.join(s + '.*' for s in TESTER_SECTIONS)}); the same for every "
                    "tester goes in [set], what varies in [axes]")
        if name is None:
            name = overrides.get("tester.ssh") or f"tester{number}"
        if not isinstance(name, str) or not NAME.match(name):
            raise ConfigError(f"{where}: {key}.name = {name!r}: must be a name of letters, "
                              "digits and ._@:%+- (it names the tester in the results)")
        for earlier, other in enumerate(testers, 1):
            if other.name == name:
                raise ConfigError(f'{where}: {key}: name = "{name}" is campaign.testers'
                                  f"[{earlier}]'s too: give each tester a name of its own")
        testers.append(Tester(name, overrides))
    return testers


def work_units(points: list) -> list[list]:
    """The points in units that run on one tester, in campaign order: each point with the points
    chained to it (Point.rate_from), which the campaign lists right after it."""
    units: list[list] = []
    unit_of: dict[str, list] = {}
    for point in points:
        unit = unit_of.get(point.rate_from) if point.rate_from is not None else None
        if unit is None:
            unit = []
            units.append(unit)
        unit.append(point)
        unit_of[point.id] = unit
    return units


def _trials_recorded(directory: Path, point) -> int:
    try:
        with open(directory / POINTS_DIR / point.id / TRIALS_FILE, encoding="utf-8") as stream:
            return sum(1 for line in stream if line.strip())
    except OSError:
        return 0


def recorded_tester(directory: Path, point) -> str | None:
    """The name of the tester that measured (some of) a point, from its tester.json."""
    return (read_json(directory / POINTS_DIR / point.id / TESTER_FILE) or {}).get("name")


def owner(directory: Path, unit: list) -> str | None:
    """The tester that has measured trials of a unit's points (it resumes them), else None."""
    for point in unit:
        if _trials_recorded(directory, point):
            name = recorded_tester(directory, point)
            if name is not None:
                return name
    return None


class Dispatcher:
    """Hands out units, thread-safe: to each tester first its own units (owner()), then the
    next unit in campaign order."""

    def __init__(self, units: list[list], names: list[str], owner_of: Callable[[list], str | None]):
        self._lock = threading.Lock()
        self._own = {name: collections.deque() for name in names}
        self._shared: collections.deque = collections.deque()
        self._returned: set[int] = set()        # id() of units given back once already
        self.retired: dict[str, str] = {}        # tester -> why it stopped
        for unit in units:
            name = owner_of(unit)
            (self._own[name] if name in self._own else self._shared).append(unit)

    def next(self, name: str) -> list | None:
        with self._lock:
            if name in self.retired:
                return None
            if self._own[name]:
                return self._own[name].popleft()
            return self._shared.popleft() if self._shared else None

    def retire(self, name: str, rest: list, reason: str) -> bool:
        """Tester `name` stops; `rest` (the unit's points from the one that failed on) goes back
        to the front of the queue, unless it was given back before (then False: a point that
        fails on two testers fails)."""
        with self._lock:
            if id(rest[0]) in self._returned:
                return False
            self._returned.add(id(rest[0]))
            self.retired[name] = reason
            self._shared.appendleft(rest)
            self._shared.extendleft(reversed(self._own[name]))  # theirs: elsewhere, or fail
            self._own[name].clear()
            return True

    def left(self) -> int:
        """Points no tester took."""
        with self._lock:
            return sum(len(u) for u in self._shared) + sum(
                len(u) for queue in self._own.values() for u in queue)


class TaggedReporter:
    """The campaign's reporter as one tester's thread sees it: calls serialised by a lock shared
    by the testers, every dict passed with "tester": its name."""

    def __init__(self, reporter, name: str, lock: threading.Lock):
        self._reporter, self._name, self._lock = reporter, name, lock

    def __getattr__(self, method: str):
        target = getattr(self._reporter, method)
        if not callable(target):
            return target

        def call(*args, **kwargs):
            args = tuple({**a, "tester": self._name} if isinstance(a, dict) else a for a in args)
            with self._lock:
                return target(*args, **kwargs)
        return call


def _stops_the_tester(error) -> bool:
    """An engine that cannot start, dies or does not answer: the tester's fault, not the
    point's (a request the engine refuses as invalid is the point's)."""
    return isinstance(error, EngineError) and not isinstance(error, EngineBadParameter)


# run_point(point, tester, reporter) -> None, or (message, error) when the point failed;
# raises ConfigError (the campaign stops) and KeyboardInterrupt.
PointRunner = Callable[[object, Tester, object], tuple[str, Exception] | None]


def run_on_testers(testers: list[Tester], units: list[list], directory: Path,
                   run_point: PointRunner, reporter=None) -> list[str]:
    """Measure `units` on `testers` in parallel (see the module docstring); returns the failure
    messages. Raises KeyboardInterrupt after every tester stopped (Ctrl-C), or the first
    ConfigError or unexpected error a tester met (the others finish their point first)."""
    dispatcher = Dispatcher(units, [t.name for t in testers], lambda u: owner(directory, u))
    scopes = {t.name: Interruption() for t in testers}
    stop = threading.Event()
    lock = threading.Lock()
    failures: list[str] = []
    fatal: list[BaseException] = []

    done = {t.name: threading.Event() for t in testers}

    def work(tester: Tester) -> None:
        try:
            measure(tester)
        finally:
            done[tester.name].set()

    def measure(tester: Tester) -> None:
        tagged = TaggedReporter(reporter, tester.name, lock) if reporter is not None else None
        with scopes[tester.name]:
            try:
                while not stop.is_set():
                    unit = dispatcher.next(tester.name)
                    if unit is None:
                        return
                    for position, point in enumerate(unit):
                        if stop.is_set():
                            return
                        before = _trials_recorded(directory, point)
                        failed = run_point(point, tester, tagged)
                        if failed is None:
                            continue
                        message, error = failed
                        if (_stops_the_tester(error) and _trials_recorded(directory, point) == before
                                and dispatcher.retire(tester.name, unit[position:], message)):
                            failures.append(f"tester {tester.name} stopped taking points: "
                                            f"{message}")
                            return
                        failures.append(message)
            except KeyboardInterrupt:
                return
            except BaseException as exc:   # noqa: BLE001 (raised again in the main thread)
                fatal.append(exc)
                stop.set()

    threads = [threading.Thread(target=work, args=(t,), name=f"tester {t.name}") for t in testers]
    for thread in threads:
        thread.start()
    # The main thread waits on events, never in Thread.join(): Python 3.11's join, interrupted
    # by Ctrl-C, can mark a thread that still runs as stopped (its bpo-45274 handling releases
    # the running thread's lock), and the process then exits while a tester is still recording
    # its aborted trial.
    try:
        for event in done.values():
            while not event.wait(0.2):
                pass
    except KeyboardInterrupt:
        # A second Ctrl-C must not cut the testers' aborts short.
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
        try:
            stop.set()
            for scope in scopes.values():
                scope.interrupt()
            for event in done.values():
                event.wait()
        finally:
            if main:
                signal.signal(signal.SIGINT, previous)
        raise
    for thread in threads:
        thread.join()
    if fatal:
        raise fatal[0]
    left = dispatcher.left()
    if left:
        failures.append(f"{left} point(s) not measured: no tester left to measure them "
                        f"({', '.join(dispatcher.retired)} stopped)")
    return failures
