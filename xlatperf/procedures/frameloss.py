# SPDX-License-Identifier: BSD-3-Clause
"""RFC 2544 §26.3 frame loss rate: a scan down from the maximum, or listed rates."""

from ..measure.measurer import TrialSpec
from .base import Procedure, ProcedureSpec, first_loss_ratio
from .search import frame_loss_scan, summarize_frame_loss


class FrameLoss(Procedure):
    """RFC 2544 §26.3: scan from frame_loss.start % of the maximum down by frame_loss.step %
    until two consecutive zero-loss trials, or the explicit frame_loss.rates."""
    name = "frame-loss"

    def __init__(self, config, plan, rate=None):
        super().__init__(config, plan)
        self.settings_ = config.frame_loss.to_dict()
        for listed in self.settings_["rates"]:
            plan.check_rate(listed, "frame_loss.rates")

    def run(self, session, steps):
        s = self.settings_
        frame_loss_scan(lambda rate: session.run_trial(TrialSpec(rate)), self.plan.max_rate, s["start"], s["step"],
                        s["rates"] or None, steps=steps, notify=session.notify)

    def summarize(self, repetitions):
        summary = summarize_frame_loss([r.steps for r in repetitions], self.plan.max_rate)
        summary["repetitions"] = [{"repetition": r.number, "complete": r.complete,
                                   "points": [t.to_dict() for t in r.steps]}
                                  for r in repetitions]
        return summary

    def settings(self):
        return {**self.settings_, "max_rate": self.plan.max_rate}

    def value(self, repetition):
        return first_loss_ratio(repetition)  # the highest rate: the summary's top level


SPEC = ProcedureSpec("frame-loss", "RFC 2544 frame loss rate scan", unit="ratio", make=FrameLoss,
                     report="scan", rates_option=True)
