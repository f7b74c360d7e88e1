# SPDX-License-Identifier: BSD-3-Clause
"""The output directory of a measurement.

    trials.jsonl   every elementary trial, appended and fsynced the moment it finishes, so a
                   crash or Ctrl-C loses nothing that was measured
    summary.json   the procedure's result (written atomically: temporary file + rename)
    summary.csv    one row per repetition (per repetition and rate for frame-loss)
    engine.log     the engine's stderr (DPDK and engine logs)

A new measurement into an existing directory replaces these files.
"""

import csv
import datetime
import io
import json
import os
from pathlib import Path

from .errors import XlatperfError

TRIALS_FILE = "trials.jsonl"
SUMMARY_FILE = "summary.json"
CSV_FILE = "summary.csv"
ENGINE_LOG_FILE = "engine.log"


def utc_timestamp() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    with open(temporary, "w", encoding="utf-8") as stream:
        stream.write(text)
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(temporary, path)


class ResultStore:
    """Writes one measurement's files under `directory` (created if needed)."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            for stale in (SUMMARY_FILE, CSV_FILE):
                (self.directory / stale).unlink(missing_ok=True)
            self._trials = open(self.directory / TRIALS_FILE, "w", encoding="utf-8")
        except OSError as exc:
            raise XlatperfError(f"--out {directory}: {exc.strerror or exc}") from None

    @property
    def engine_log(self) -> Path:
        return self.directory / ENGINE_LOG_FILE

    def record_trial(self, record: dict) -> None:
        """Append one trial record and make sure it is on disk before returning."""
        self._trials.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._trials.flush()
        os.fsync(self._trials.fileno())

    def write_summary(self, summary: dict, csv_rows: list[dict]) -> None:
        _write_atomically(self.directory / SUMMARY_FILE, json.dumps(summary, indent=2) + "\n")
        _write_atomically(self.directory / CSV_FILE, rows_to_csv(csv_rows))

    def close(self) -> None:
        self._trials.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def rows_to_csv(rows: list[dict]) -> str:
    """CSV with the union of the rows' keys as header, in first-seen order."""
    header: list[str] = []
    for row in rows:
        header += [key for key in row if key not in header]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: "" if value is None else value for key, value in row.items()})
    return buffer.getvalue()


def read_trials(directory: str | os.PathLike) -> list[dict]:
    """The trial records of a result directory (a torn last line is skipped)."""
    records = []
    with open(Path(directory) / TRIALS_FILE, encoding="utf-8") as stream:
        for line in stream:
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return records
