# SPDX-License-Identifier: BSD-3-Clause
"""`trial`: one elementary trial per repetition."""

from ..measure.measurer import TrialSpec
from .base import Procedure, ProcedureSpec, first_loss_ratio
from .search import summarize_trials


class SingleTrial(Procedure):
    """`trial`: one elementary trial per repetition at --rate (default: the medium's maximum)."""
    name = "trial"

    def __init__(self, config, plan, rate=None):
        super().__init__(config, plan)
        self.rate = plan.max_rate if rate is None else rate
        plan.check_rate(self.rate, "--rate")

    def run(self, session, steps):
        session.notify({"rate": self.rate})
        steps.append(session.run_trial(TrialSpec(self.rate)))

    def summarize(self, repetitions):
        summary = summarize_trials([t for r in repetitions for t in r.steps])
        summary["repetitions"] = [{"repetition": r.number, "complete": r.complete,
                                   **(r.steps[0].to_dict() if r.steps else {})}
                                  for r in repetitions]
        return summary

    def settings(self):
        return {"rate": self.rate}

    def value(self, repetition):
        return first_loss_ratio(repetition)


SPEC = ProcedureSpec("trial", "one elementary trial", unit="ratio", make=SingleTrial,
                     report="trial", rate_option="optional",
                     trials_per_repetition=1)
