# SPDX-License-Identifier: BSD-3-Clause
"""Measurer: what a procedure may call, declared, and TrialSpec, the one value a trial is.
TrialSession (measure/session.py) is the measurer of a measurement; views of it (MeasurerView:
RFC 9693's phase 1 before each trial, the scalability procedure's per-n view) change some of
its members and leave the rest to it. Nothing else of the session, the engine, the hooks or the
reporter is for procedures."""

from dataclasses import dataclass, replace
from typing import Any, Callable, Protocol, runtime_checkable

from ..engine.protocol import TrialResult
from .request import TrialRequest


@dataclass(frozen=True)
class TrialSpec:
    """One trial as a procedure asks for it; the request, the pause, the DUT's hooks, the
    records and the retakes are the measurer's."""
    rate: int                       # frames/s per direction (before the first rate step)
    # Default trial.duration, or frames / rate with `frames` (at least the engine's shortest).
    duration: float | None = None
    # The request's delay measurements (latency, pdv: docs/protocol.md), on top of
    # trial.frame_timeout, which applies to every trial.
    delay: dict | None = None
    frames: int | None = None       # every flow sends exactly this many (a burst)
    losses: bool = False            # each direction's loss periods reported
    rate_steps: tuple[dict, ...] = ()  # ({"at": s, "rate": fps}, ...) for every direction
    # The flows of another plan on the measurement's ports (the scalability procedure's n
    # clients); None: the measurement's own.
    plan: Any = None
    # What each attempt does first, after the step's pause and before_trial hook:
    # prepare(measurer, rate, flows) -> the flows to send, or a TrialResult that ends the step
    # unsent (RFC 9693: phase 1 and the gap D; Phase2Measurer).
    prepare: Callable | None = None

    def with_plan(self, plan) -> "TrialSpec":
        return replace(self, plan=plan)


class MeasurerView:
    """A measurer that is `inner` with some members changed by a subclass: every member it does
    not define is `inner`'s (one mechanism for every view, no member forwarded by hand)."""

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


@runtime_checkable
class Measurer(Protocol):
    @property
    def tester(self) -> dict:
        """The engine's hello reply: ports, lcores, timestamp capabilities."""

    def run_trial(self, spec: TrialSpec, annotate: Callable[[TrialResult], dict] | None = None, *,
                  retakes: int | None = None) -> TrialResult:
        """One step: the trial `spec` describes (retaken when the tester, not the DUT, spoiled
        it, up to `retakes` times: default trial.retakes), recorded; annotate(result) -> extra
        fields for its record."""

    def run_request(self, request: TrialRequest, rate: int, phase: str,
                    annotate: Callable[[TrialResult], dict] | None = None) -> TrialResult:
        """A request the procedure built itself (RFC 9693 phase 1, validation), recorded with
        `phase` in the current step."""

    def begin_step(self) -> None:
        """What precedes a step the procedure builds from run_request: pause, learning trial,
        the DUT's before_trial hook."""

    def end_step(self) -> None:
        """What follows such a step: the DUT's after_trial hook."""

    def begin_phase(self, phase: str | None) -> None:
        """Label the records of the following trials."""

    def notify(self, context: dict) -> None:
        """Tell the live view what the next trial is for (rate, lo/hi, goal, ...)."""

    def timed_hook(self, hook: str, context: dict):
        """Run and time one of the DUT's hook commands (RFC 9693 tear-down)."""

    def record(self, result: TrialResult, duration: float, phase: str | None = None,
               extra: dict | None = None) -> dict:
        """Append a record of the current step (a step's own record)."""
