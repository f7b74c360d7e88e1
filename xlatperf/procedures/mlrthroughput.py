# SPDX-License-Identifier: BSD-3-Clause
"""The `throughput` procedure with `throughput.mode = "mlrsearch"` (docs/mlrsearch.md):
one MLRsearch per repetition over [max(1, min_rate), max_rate or the medium's maximum], with
the goals of throughput.preset and throughput.goals. Every trial's record in trials.jsonl
carries `mlrsearch`: the target it was measured for and, per goal, the load's class and the
relevant bounds after it."""

from ..util.stats import summarize
from ..measure.measurer import TrialSpec
from .search import SearchResult
from .ceiling import tester_bound
from .throughputsearch import ThroughputSearch
from .mlrgoals import deviations, goals_from_config, search_frame_timeout
from .mlrclassify import classify, relevant_bounds, trial_from_result
from .mlrsearch import DEFAULT_MAX_TRIALS, Search, mlrsearch

LOSS_DEFINITION = ("RFC 9971's: (sent - received) / sent over all directions together; an "
                   "invalid trial (the tester could not keep the rate) counts as 1")


class MlrThroughput(ThroughputSearch):
    """The MLRsearch strategy of ThroughputSearch."""
    lowest_load = 1
    max_trials = DEFAULT_MAX_TRIALS   # per repetition (a safeguard; see _stop_reason)

    def __init__(self, config, plan, rate=None):
        super().__init__(config, plan, rate)
        self.goals = goals_from_config(config)
        self.loss_tolerance = min(g.loss_ratio for g in self.goals)  # for the live view only
        # The goals' per-frame timeout. The session applies trial.frame_timeout to every
        # trial; goals that set their own override it in each request.
        self.frame_timeout = search_frame_timeout(self.goals)
        self.delay = ({"frame_timeout": self.frame_timeout}
                      if self.frame_timeout != config.trial.frame_timeout else None)

    # -- the tester's ceiling ---------------------------------------------------------------------

    def max_load(self, earlier) -> int:
        """The search's upper end after the repetitions `earlier`: below the lowest rate the
        tester could not keep in them (a trial there would only show the tester's limit
        again), as long as that leaves a range to search."""
        ceiling = self.ceiling_before(earlier)
        if ceiling is None or ceiling - 1 <= self.lo:
            return self.hi
        return min(self.hi, ceiling - 1)

    def begin_repetition(self, earlier):
        super().begin_repetition(earlier)
        self.current_max = self.max_load(earlier)

    # -- running ---------------------------------------------------------------------------------

    def run(self, session, steps):
        search = Search(self.goals, self.lo, self.current_max)
        context: dict = {}

        def notify(info: dict) -> None:
            context.clear()
            context.update(info)
            session.notify(info)

        def run_trial(load: int, duration: float):
            def annotate(result) -> dict:
                trials = search.by_load.get(load, []) + [trial_from_result(result, duration)]
                by_load = {**search.by_load, load: trials}
                goals = {}
                for goal in self.goals:
                    lower, upper = relevant_bounds(
                        {at: classify(goal, ts) for at, ts in by_load.items()})
                    goals[goal.title] = {"class": classify(goal, trials),
                                         "relevant_lower_bound": lower,
                                         "relevant_upper_bound": upper}
                return {"mlrsearch": {"target": {k: context.get(k) for k in
                                                 ("goal", "level", "final")},
                                      "goals": goals}}
            return session.run_trial(TrialSpec(load, duration, delay=self.delay), annotate=annotate)

        mlrsearch(run_trial, self.goals, self.lo, self.current_max, steps=steps, notify=notify,
                  max_trials=self.max_trials, search=search)

    # -- results ---------------------------------------------------------------------------------

    def replay(self, repetition, earlier) -> Search:
        """The repetition's search rebuilt from its steps (each with its requested duration)
        and the repetitions before it, so a summary is the same whether the steps were just
        measured or read back from trials.jsonl by --resume."""
        search = Search(self.goals, self.lo, self.max_load(earlier))
        for step in repetition.steps:
            search.add(step.rate, trial_from_result(step, step.duration))
        return search

    def _stop_reason(self, repetition, search: Search) -> str:
        if not repetition.complete:
            return "interrupted"
        # The trial limit is a safeguard: the goals it left unmet are irregular results.
        if len(search.trials) >= self.max_trials and search.next_trial() is not None:
            return f"trial limit ({self.max_trials}) reached"
        return "goals met"

    def _goal_results(self, repetition, earlier):
        search = self.replay(repetition, earlier)
        return search, (search.results() if search.trials else [])

    def verdict(self, repetition, earlier) -> SearchResult:
        search, goals = self._goal_results(repetition, earlier)
        first = goals[0] if goals else None
        lower = first.relevant_lower_bound if first else None
        upper = first.relevant_upper_bound if first else None
        # The primary goal's search ended against the tester: its relevant upper bound is a
        # load with a trial the tester could not send, or there is none because the search
        # reached a maximum lowered to below an earlier repetition's ceiling, or the
        # calibrated one.
        limited = (any(s.rate == upper and tester_bound(s) for s in repetition.steps)
                   if upper is not None else
                   lower is not None and lower == search.max_load
                   and (search.max_load < self.hi or self.hi == self.calibrated))
        return SearchResult(throughput=lower or 0, found=lower is not None,
                            tester_limited=limited, steps=repetition.steps,
                            loss_tolerance=self.goals[0].loss_ratio,
                            complete=repetition.complete,
                            tester_ceiling=self.ceiling_before([*earlier, repetition]))

    def details(self, repetition, verdict, earlier) -> dict:
        search, goals = self._goal_results(repetition, earlier)
        trials = search.trials
        return {"repetition": repetition.number, "complete": repetition.complete,
                "throughput": verdict.throughput, "found": verdict.found,
                "regular": bool(goals) and goals[0].regular,
                "tester_limited": verdict.tester_limited,
                "tester_ceiling": verdict.tester_ceiling,
                "max_load": search.max_load,
                "stop_reason": self._stop_reason(repetition, search),
                "trial_seconds": sum(t.duration for _, t in trials),
                "goals": [g.to_dict() for g in goals],
                "steps": [{**s.to_dict(), "duration": t.duration}
                          for s, (_, t) in zip(repetition.steps, trials)]}

    def _repetitions(self, repetitions) -> list[dict]:
        return [self.details(r, v, repetitions[:i])
                for i, (r, v) in enumerate(zip(repetitions, self.verdicts(repetitions)))]

    def extra_summary(self, repetitions, verdicts) -> dict:
        complete = [r for r in self._repetitions(repetitions) if r["complete"]]
        goals = []
        for index, goal in enumerate(self.goals):
            results = [r["goals"][index] for r in complete if len(r["goals"]) > index]
            stats = summarize([g["relevant_lower_bound"] or 0 for g in results])
            goals.append({**goal.to_dict(), "unit": "fps", **stats,
                          "relevant_upper_bound": summarize(
                              [g["relevant_upper_bound"] for g in results
                               if g["relevant_upper_bound"] is not None]),
                          "conditional_throughput": summarize(
                              [g["conditional_throughput"] for g in results
                               if g["conditional_throughput"] is not None]),
                          "regular": bool(results) and all(g["regular"] for g in results),
                          "irregular": sorted({g["irregular_reason"] for g in results
                                               if g["irregular_reason"]})})
        return {"mode": "mlrsearch", "primary_goal": self.goals[0].title, "goals": goals}

    def csv_rows(self, repetitions):
        rows = []
        for r in self._repetitions(repetitions):
            for g in r["goals"]:
                rows.append({"repetition": r["repetition"], "goal": g["name"],
                             "label": g["label"],
                             "relevant_lower_bound_fps": g["relevant_lower_bound"],
                             "relevant_upper_bound_fps": g["relevant_upper_bound"],
                             "conditional_throughput_fps": g["conditional_throughput"],
                             "regular": g["regular"], "irregular_reason": g["irregular_reason"],
                             "complete": r["complete"], "trials": len(r["steps"]),
                             "trial_seconds": r["trial_seconds"]})
        return rows

    def settings(self):
        return {"mode": "mlrsearch", "min_load": self.lo, "max_load": self.hi,
                "unit": "frames/s per direction",
                "goals": [g.to_dict() for g in self.goals],
                "primary_goal": self.goals[0].title,
                "tester_ceiling_rule": "the maximum load of a repetition is below the lowest "
                                       "rate the tester could not keep earlier in the run",
                "first_trial": "at the maximum load, with the shortest initial trial duration "
                               "(the final one where it is less than 4 times the initial)",
                "upper_bound_trials": "where a load is expected to lose too much and one final "
                                      "trial cannot decide it, one trial long enough to: final "
                                      "+ initial trial duration for an exceed ratio of 0.5 over "
                                      "two final trials (ndr, pdr)",
                "trial_loss_ratio": LOSS_DEFINITION,
                **self._frame_timeout_settings(),
                "effective_duration": "the trial duration",
                "deviations": deviations(self.config, self.goals)}

    def _frame_timeout_settings(self) -> dict:
        """The goals' per-frame timeout replaces trial.frame_timeout in the summary's
        settings when a goal set its own."""
        if self.delay is None:
            return {}
        timeout = self.config.trial.timeout
        criterion = (f"per-frame timeout {self.frame_timeout:g} s of the goals (within the "
                     f"global timeout {timeout:g} s)" if self.frame_timeout else
                     f"global timeout {timeout:g} s (the goals' frame_timeout = 0)")
        return {"frame_timeout": self.frame_timeout, "loss_criterion": criterion}
