# SPDX-License-Identifier: BSD-3-Clause
"""Measurer: what a procedure may call, declared. TrialSession (measure/session.py) is the
measurer of a measurement; the scalability procedure's per-n view of it implements the same
protocol. Nothing else of the session, the engine, the hooks or the reporter is for
procedures."""

from typing import Callable, Protocol, runtime_checkable

from ..engine.protocol import TrialResult
from .request import TrialRequest


@runtime_checkable
class Measurer(Protocol):
    @property
    def tester(self) -> dict:
        """The engine's hello reply: ports, lcores, timestamp capabilities."""

    def run_trial(self, rate: int, duration: float | None = None,
                  annotate: Callable[[TrialResult], dict] | None = None, *,
                  delay: dict | None = None, frames: int | None = None, plan=None,
                  losses: bool = False, rate_steps: list[dict] | None = None,
                  retakes: int | None = None) -> TrialResult:
        """One step: a trial at `rate` (retaken when the tester, not the DUT, spoiled it),
        recorded."""

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
