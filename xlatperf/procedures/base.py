# SPDX-License-Identifier: BSD-3-Clause
"""What every procedure is: how it runs one repetition through the measurer, how it
summarises repetitions, and the registry every other layer reads (CLI, campaigns, reports)."""

from dataclasses import dataclass, field
from typing import Any, Callable

from ..engine.protocol import TrialResult, trial_from_record
from ..measure.measurer import Measurer
from ..measure.session import is_step_record
from ..traffic.plan import TrafficPlan


@dataclass
class Repetition:
    number: int                       # 1-based
    steps: list[TrialResult] = field(default_factory=list)
    complete: bool = False


def trial_row(repetition: Repetition, trial: TrialResult, max_rate: int) -> dict:
    row = {"repetition": repetition.number, "rate": trial.rate,
           "percent": round(100 * trial.rate / max_rate, 6), "valid": trial.valid,
           "loss_ratio": trial.loss_ratio}
    for name, counts in trial.directions.items():
        row |= {f"{name}_sent": counts.sent, f"{name}_received": counts.received,
                f"{name}_loss_ratio": counts.loss_ratio}
    return row


class Procedure:
    name = ""

    def __init__(self, config: dict, plan: TrafficPlan, rate: int | None = None):
        self.config, self.plan = config, plan

    def prepare(self, session: Measurer) -> dict:
        """Runs once before the repetitions; returns extra summary fields."""
        return {}

    def begin_repetition(self, earlier: list[Repetition]) -> None:
        """Called before each repetition with the finished ones (measured or resumed)."""

    def run(self, session: Measurer, steps: list) -> None:
        raise NotImplementedError

    def summarize(self, repetitions: list[Repetition]) -> dict:
        """unit, the statistics, per-direction values and `repetitions` (JSON-ready)."""
        raise NotImplementedError

    def csv_rows(self, repetitions: list[Repetition]) -> list[dict]:
        return [trial_row(r, t, self.plan.max_rate) for r in repetitions for t in r.steps]

    def settings(self) -> dict:
        return {}

    def value(self, repetition: Repetition) -> float | None:
        """The repetition's result as one number, for adaptive repetitions (None: unusable)."""
        return None

    def values(self, repetitions: list[Repetition]) -> list[float | None]:
        """Each repetition's value(), for adaptive repetitions; a procedure whose repetitions
        depend on the earlier ones (the tester's ceiling) overrides this instead."""
        return [self.value(r) for r in repetitions]

    def steps_from_records(self, records: list[dict]) -> list:
        """A finished repetition's steps rebuilt from its trials.jsonl records (--resume)."""
        return [trial_from_record(r) for r in records if is_step_record(r)]


def first_loss_ratio(repetition: Repetition) -> float | None:
    first = repetition.steps[0] if repetition.steps else None
    return first.loss_ratio if first is not None and first.valid else None


# --------------------------------------------------------------------------------------------
# The registry: every procedure is described once; the CLI, campaigns, the runner and the
# reports read these descriptions instead of listing procedure names themselves.
# --------------------------------------------------------------------------------------------

RATE_OPTIONS = ("none", "optional", "required")


@dataclass(frozen=True)
class KeyOption:
    """A command-line option of one procedure that sets a configuration key, e.g.
    `--throughput-from DIR` for back_to_back.throughput_from."""
    flag: str                    # "--throughput-from"
    key: str                     # "back_to_back.throughput_from"
    metavar: str
    help: str
    is_list: bool = False        # "1,4,16" on the command line is the TOML list [1, 4, 16]


@dataclass(frozen=True)
class ProcedureSpec:
    name: str                    # the CLI subcommand and the summary's "procedure"
    help: str                    # one line for `xlatperf --help`
    unit: str                    # unit of the summary's median: fps, %, ms, cps, connections
    make: Callable[[dict, TrafficPlan, int | None], Procedure]
    report: str                  # the report's renderer family: search, scan, trial, delay,
                                 # cps, capacity
    rate_option: str = "none"    # --rate: none | optional (default: medium's maximum) |
                                 # required (or --rate-from a throughput result)
    rates_option: bool = False   # --rates R1,R2,... (frame_loss.rates)
    through_dut: bool = True     # False: the tester's ports are wired to each other
    stateful_phase2: bool = True  # stateful.enabled runs phase 1 before each of its trials
    campaign: bool = True        # may be listed in a campaign's procedures
    rate_from: str | None = None  # in a campaign: the procedure whose result at the same point
                                  # gives the rate (latency, pdv: "throughput"; docs/campaigns.md)
    trials_per_repetition: int | None = None  # when fixed (not decided by a search): for
                                              # the live view's time estimate
    # The key holding the number of repetitions (--repeat sets it): back-to-back has its own,
    # with RFC 2544's 50 as the default.
    repeat_key: str = "output.repeat"
    key_options: tuple[KeyOption, ...] = ()   # more CLI options, each setting a key
    # The configuration a run of this procedure measures with, from the one it was given
    # (the DNS selftest's trials are RFC 8219 §9.2.1's); None: the one given.
    adapt_config: Callable[[Any], Any] | None = None

    def __post_init__(self):
        if self.rate_option not in RATE_OPTIONS:
            raise ValueError(f"{self.name}: rate_option {self.rate_option!r}")
