# SPDX-License-Identifier: BSD-3-Clause
"""The state of a campaign directory, read from its files alone: each point's state, the rate
a chained point is to be measured at, `campaign_status` and its plain-text table, and the rows
of results.csv.

DIR/campaign.json holds the campaign and its points. Every point is a result directory
DIR/points/<id>/ as `xlatperf PROCEDURE --out` writes it, plus repetitions.jsonl, and
error.json when it failed or skipped.json when a chained point had no rate to measure at. A
point is done when its summary.json says "complete": true with the campaign's [output]
settings, and stale when it is chained and was measured at another rate than its throughput's
now.
"""

from pathlib import Path

from ..measure.session import AUXILIARY_PHASES
from ..measure.store import REPETITIONS_FILE, SUMMARY_FILE, TRIALS_FILE, read_trials
from ..procedures.delay import rate_from_summary
from ..util.errors import XlatperfError
from ..util.files import read_json
from .testers import TESTER_FILE

CAMPAIGN_FILE = "campaign.json"
POINTS_DIR = "points"
ERROR_FILE = "error.json"
SKIPPED_FILE = "skipped.json"     # a chained point with no rate to measure at, and why


def _count_lines(path: Path) -> int:
    try:
        with open(path, encoding="utf-8") as stream:
            return sum(1 for line in stream if line.strip())
    except OSError:
        return 0


def point_state(directory: Path, output: dict | None = None, rate: int | None = None) -> dict:
    """state: done | stale | partial | pending | failed | skipped, with finished repetitions
    and trials. `output`: the [output] section the point must have been measured with to
    count as done; `rate`: the rate a chained point must have been measured at (else stale)."""
    summary = read_json(directory / SUMMARY_FILE)
    error = read_json(directory / ERROR_FILE)
    skipped = read_json(directory / SKIPPED_FILE)
    repetitions = _count_lines(directory / REPETITIONS_FILE)
    trials = _count_lines(directory / TRIALS_FILE)
    state = "pending"
    if summary is not None and summary.get("complete") and (
            output is None or (summary.get("config") or {}).get("output") == output):
        state = "done"
        if rate is not None and recorded_rate(directory) not in (None, rate):
            state = "stale"
    elif error is not None:
        state = "failed"
    elif skipped is not None:
        state = "skipped"
    elif repetitions or trials:
        state = "partial"
    return {"state": state, "repetitions": repetitions, "trials": trials,
            "summary": summary, "error": (error or {}).get("error") or
            (skipped or {}).get("reason")}


def recorded_rate(directory: Path) -> int | None:
    """The rate a fixed-rate procedure (trial, latency, pdv) measured a point at: its
    summary's, else its first measuring trial's (a run killed before its first summary)."""
    summary = read_json(directory / SUMMARY_FILE)
    rate = ((summary or {}).get("settings") or {}).get("rate")
    if rate is not None or not (directory / TRIALS_FILE).exists():
        return rate
    return next((r.get("rate") for r in read_trials(directory)
                 if r.get("phase") not in AUXILIARY_PHASES), None)


def chained_rate(directory: Path, source: dict) -> dict:
    """The rate of a chained point, from the point it takes its rate from (`source`: its
    campaign.json entry with "output"): procedures.delay.rate_from_summary of that point's
    summary when it is done (with "point" and "index" added), else rate None and why."""
    state = point_state(directory / POINTS_DIR / source["id"], source.get("output"))
    where = {"point": source["id"], "index": source["index"]}
    if state["state"] != "done":
        return {"rate": None, **where,
                "reason": f"its {source['procedure']} point {source['index']} is "
                          f"{state['state']}: no rate to measure at yet"}
    found = rate_from_summary(state["summary"])
    if found["rate"] is None:
        found["reason"] = f"{source['procedure']} point {source['index']}: {found['reason']}"
    return {**found, **where}


def campaign_status(directory) -> dict:
    """The campaign stored in `directory` and the state of each point."""
    directory = Path(directory)
    stored = read_json(directory / CAMPAIGN_FILE)
    if stored is None:
        raise XlatperfError(f"{directory}: not a campaign directory (no {CAMPAIGN_FILE})")
    by_id = {p["id"]: p for p in stored["points"]}
    rows = []
    for point in stored["points"]:
        rate = None
        if point.get("rate_from") in by_id:
            rate = chained_rate(directory, by_id[point["rate_from"]])["rate"]
        state = point_state(directory / POINTS_DIR / point["id"], point.get("output"), rate)
        summary = state.pop("summary") or {}
        rows.append({**point, **state, "unit": summary.get("unit"),
                     "median": summary.get("median"), "n": summary.get("n")})
        if stored.get("testers"):     # which tester measured it (run/testers.py)
            rows[-1]["tester"] = (read_json(directory / POINTS_DIR / point["id"] / TESTER_FILE)
                                  or {}).get("name")
    counts = {s: sum(1 for r in rows if r["state"] == s)
              for s in ("done", "partial", "failed", "pending", "skipped", "stale")}
    for rare in ("skipped", "stale"):     # states of chained points only: named when present
        if not counts[rare]:
            del counts[rare]
    return {"directory": str(directory), "file": stored.get("file"), "points": rows,
            "counts": counts, "total": len(rows),
            **({"testers": [t["name"] for t in stored["testers"]]} if stored.get("testers")
               else {})}


def format_status(status: dict) -> str:
    """A plain-text table of campaign_status()."""
    lines = [f"campaign {status['file'] or ''} in {status['directory']}: "
             + ", ".join(f"{count} {state}" for state, count in status["counts"].items())
             + f" of {status['total']} points"
             + (f" on testers {', '.join(status['testers'])}" if status.get("testers") else "")]
    header = ("#", "state", "reps", "trials", "procedure", "point", "median", "n")
    testers = "testers" in status
    if testers:
        header += ("tester",)
    rows = []
    for p in status["points"]:
        median = p["median"]
        if median is None:
            shown = "-"
        elif p["unit"] == "ratio":
            shown = f"{100 * median:.4g} % loss"
        elif p["unit"] == "ms":
            shown = f"{1000 * median:,.1f} µs"
        else:  # fps; cps and connections of the stateful procedures
            shown = f"{median:,.0f} {p['unit']}"
        rows.append((str(p["index"]), p["state"], str(p["repetitions"]), str(p["trials"]),
                     p["procedure"],
                     " ".join(f"{k}={v}" for k, v in p["labels"].items()) or "-",
                     shown, "-" if p["n"] is None else str(p["n"]))
                    + ((p["tester"] or "-",) if testers else ()))
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    for row in [header] + rows:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    for p in status["points"]:
        if p["state"] == "failed":
            lines.append(f"point {p['index']} failed: {p['error']}")
        elif p["state"] == "skipped":
            lines.append(f"point {p['index']} ({p['procedure']}) not measured: {p['error']}")
        elif p["state"] == "stale":
            lines.append(f"point {p['index']} ({p['procedure']}) was measured at another rate "
                         "than its throughput's: `campaign run` measures it again")
    return "\n".join(lines)


def results_rows(directory) -> list[dict]:
    """One row per point with its axis values and statistics (results.csv); `rate` is the
    rate a fixed-rate point was measured at (a chained latency or pdv point: its throughput's),
    `note` why a point was not measured or what to know about its rate."""
    status = campaign_status(directory)
    rows = []
    for p in status["points"]:
        summary = read_json(Path(directory) / POINTS_DIR / p["id"] / SUMMARY_FILE) or {}
        row = {"index": p["index"], "procedure": p["procedure"], "state": p["state"],
               **{k: v for k, v in p["labels"].items()}, "unit": summary.get("unit")}
        for key in ("median", "p1", "p99", "min", "max", "dispersion", "n"):
            row[key] = summary.get(key)
        row["rate"] = (summary.get("settings") or {}).get("rate")
        source = summary.get("rate_source") or {}
        row["note"] = p["error"] if p["state"] in ("skipped", "failed") else source.get("note")
        if "testers" in status:
            row["tester"] = p["tester"]
        row["id"] = p["id"]
        rows.append(row)
    return rows
