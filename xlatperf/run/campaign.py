# SPDX-License-Identifier: BSD-3-Clause
"""Running a campaign: one procedure (or several) over the cross product of sweep axes,
resumable. The campaign file and its points are campaignfile.py's, the state of a campaign
directory campaignstatus.py's.

    from xlatperf.run.campaign import run_campaign
    from xlatperf.run.campaignfile import load_campaign
    from xlatperf.run.campaignstatus import campaign_status
    campaign = load_campaign("tp-sizes.toml")
    run_campaign(campaign, "results/tp-sizes")      # again after an interruption: resumes

latency and pdv are chained (ProcedureSpec.rate_from): each of their points runs right after
the throughput point of the same combination, at the median of that throughput's repetitions
(procedures.delay.rate_from_summary); with no throughput to measure at (0, or the throughput
point not done) the point is skipped with the reason in its skipped.json, and a point measured
at a rate that is no longer its throughput's (the throughput was measured again) is moved to
DIR/superseded/ and measured anew.

Every point is a result directory DIR/points/<id>/ as `xlatperf PROCEDURE --out` writes it,
plus repetitions.jsonl. A point is finished when its summary.json says "complete": true with
the campaign's [output] settings; otherwise it is resumed at the granularity of repetitions
(runner.run_procedure(resume=True)): finished repetitions are kept, the trials of an
unfinished one move to the point's incomplete/ directory and the repetition runs again.
"""

import json
import threading
from pathlib import Path

from ..measure.store import rows_to_csv
from ..util.errors import ConfigError, MeasurementError, XlatperfError
from ..util.files import read_json, utc_timestamp, write_atomically
from .campaignfile import Campaign, Point
from .campaignstatus import (CAMPAIGN_FILE, ERROR_FILE, POINTS_DIR, SKIPPED_FILE, campaign_status,
                             chained_rate, point_state, recorded_rate, results_rows)
from .testers import TESTER_FILE, Tester, run_on_testers, work_units

RESULTS_FILE = "results.csv"
SUPERSEDED_DIR = "superseded"     # chained points measured at a rate that is no longer theirs


def _write_campaign_file(directory: Path, campaign: Campaign, outputs: dict) -> None:
    stored = {"file": str(campaign.path) if campaign.path else None,
              "base_config": str(campaign.base_config) if campaign.base_config else None,
              "campaign": campaign.raw, "overrides": campaign.overrides,
              "updated": utc_timestamp(),
              **({"testers": [t.to_dict() for t in campaign.testers]} if campaign.testers else {}),
              "points": [{**p.to_dict(), "output": outputs[p.id]} for p in campaign.points]}
    write_atomically(directory / CAMPAIGN_FILE, json.dumps(stored, indent=2, default=str) + "\n")


def _supersede(directory: Path, point: Point, rate: int) -> Path:
    """Moves a chained point measured at `rate` (no longer its throughput's) out of the way:
    nothing measured is deleted, and the point is measured anew at the new rate."""
    target = directory / SUPERSEDED_DIR / (
        f"{point.id}_rate-{rate}_{utc_timestamp().replace(':', '')}")
    target.parent.mkdir(parents=True, exist_ok=True)
    (directory / POINTS_DIR / point.id).rename(target)
    return target


class _PointRunner:
    """Measures one campaign point (resumes it, skips it when done or, chained, without a
    rate), from the campaign's thread or from one tester's (run/testers.py)."""

    def __init__(self, campaign: Campaign, directory: Path, outputs: dict, run, engine_path):
        self.campaign, self.directory, self.outputs = campaign, directory, outputs
        self.run, self.engine_path = run, engine_path
        self.by_id = {p.id: {**p.to_dict(), "output": outputs[p.id]} for p in campaign.points}
        self._results_lock = threading.Lock()   # results.csv: one writer at a time

    def _write_results(self) -> None:
        with self._results_lock:
            write_atomically(self.directory / RESULTS_FILE,
                             rows_to_csv(results_rows(self.directory)))

    def _fail(self, point: Point, point_dir: Path, exc: Exception) -> tuple[str, Exception]:
        point_dir.mkdir(parents=True, exist_ok=True)
        write_atomically(point_dir / ERROR_FILE,
                         json.dumps({"error": str(exc), "time": utc_timestamp()}) + "\n")
        return f"point {point.index} ({point.describe()}): {exc}", exc

    def measure(self, point: Point, tester: Tester | None,
                reporter) -> tuple[str, Exception] | None:
        """None, or (message, error) when the point failed (its error.json written). Raises
        ConfigError for a point whose configuration is wrong (the campaign stops) and
        KeyboardInterrupt."""
        directory = self.directory
        point_dir = directory / POINTS_DIR / point.id
        rate, extra = point.rate, {}
        if point.rate_from is not None:
            source = chained_rate(directory, self.by_id[point.rate_from])
            if source["rate"] is None:
                point_dir.mkdir(parents=True, exist_ok=True)
                write_atomically(point_dir / SKIPPED_FILE, json.dumps(
                    {"reason": source["reason"], "rate_source": source,
                     "time": utc_timestamp()}, default=str) + "\n")
                self._write_results()
                return None
            (point_dir / SKIPPED_FILE).unlink(missing_ok=True)
            measured_at = recorded_rate(point_dir) if point_dir.exists() else None
            if measured_at is not None and measured_at != source["rate"]:
                _supersede(directory, point, measured_at)
            rate, extra = source["rate"], {"rate_source": source}
        state = point_state(point_dir, self.outputs[point.id])
        if state["state"] == "done":
            return None
        if tester is not None:
            measured_by = (read_json(point_dir / TESTER_FILE) or {}).get("name")
            if measured_by not in (None, tester.name) and state["trials"]:
                return self._fail(point, point_dir, MeasurementError(
                    f"measured in part on tester {measured_by}, which is not measuring in this "
                    f"run: run the campaign again with it, or move {point_dir} away to measure "
                    "the point anew"))
        if reporter is not None:
            reporter.point({"index": point.index, "count": len(self.campaign.points),
                            "id": point.id, "procedure": point.procedure,
                            "labels": point.labels, "state": state["state"],
                            "repetitions_done": state["repetitions"],
                            **({"rate": rate} if extra else {})})
        (point_dir / ERROR_FILE).unlink(missing_ok=True)
        config = self.campaign.config_for(point, tester)
        if tester is not None:
            point_dir.mkdir(parents=True, exist_ok=True)
            write_atomically(point_dir / TESTER_FILE, json.dumps(
                {"name": tester.name, "ssh": config.tester.ssh,
                 "time": utc_timestamp()}) + "\n")
        try:
            self.run(point.procedure, config, point_dir, rate=rate, reporter=reporter,
                     engine_path=self.engine_path, resume=True, **extra)
        except ConfigError as exc:
            if not extra:
                raise ConfigError(f"point {point.index} ({point.describe()}): {exc}") from None
            # A chained point's rate is known only now: a setting that does not fit it (too
            # few frames for latency.timestamps) fails this point, not the campaign.
            return self._fail(point, point_dir, exc)
        except XlatperfError as exc:
            return self._fail(point, point_dir, exc)
        finally:
            self._write_results()
        return None


def run_campaign(campaign: Campaign, out_dir, *, reporter=None, engine_path: str | None = None,
                 run=None) -> dict:
    """Run every point of `campaign` that is not finished yet into out_dir/points/<id>/ and
    return campaign_status(out_dir). An interrupted campaign (Ctrl-C, kill, crash) resumes
    when run again into the same directory. A point that fails (engine or measurement error)
    is recorded in its error.json and the campaign goes on; MeasurementError is raised at the
    end if any point failed. ConfigError and KeyboardInterrupt stop the campaign at once.
    A chained point (latency, pdv) runs at its throughput's rate (chained_rate); without one
    it is skipped (skipped.json says why: not a failure, the campaign's result says it).

    With campaign.testers the points are shared out over the testers, measured in parallel
    (run/testers.py); each point's tester.json names the tester that measured it.

    run: the function that measures one point (default runner.run_procedure), for tests."""
    if run is None:
        from .runner import run_procedure as run
    directory = Path(out_dir)
    try:
        (directory / POINTS_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise XlatperfError(f"--out {out_dir}: {exc.strerror or exc}") from None
    outputs = {p.id: campaign.config_for(p).output.to_dict() for p in campaign.points}
    _write_campaign_file(directory, campaign, outputs)
    points = _PointRunner(campaign, directory, outputs, run, engine_path)
    if campaign.testers:
        failures = run_on_testers(campaign.testers, work_units(campaign.points), directory,
                                  points.measure, reporter)
    else:
        failures = [failed[0] for point in campaign.points
                    if (failed := points.measure(point, None, reporter)) is not None]
    if failures:
        raise MeasurementError(f"{len(failures)} of {len(campaign.points)} points failed "
                               f"(run again to retry them): {failures[0]}")
    return campaign_status(directory)
