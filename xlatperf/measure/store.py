# SPDX-License-Identifier: BSD-3-Clause
"""The output directory of a measurement.

    trials.jsonl   every elementary trial, appended and fsynced the moment it finishes, so a
                   crash or Ctrl-C loses nothing that was measured
    summary.json   the procedure's result (written atomically: temporary file + rename)
    summary.csv    one row per repetition (per repetition and rate for frame-loss)
    engine.log     the engine's stderr (DPDK and engine logs)
    repetitions.jsonl  one line per finished repetition (written after its last trial)
    incomplete/trials.jsonl  on resume: trials of repetitions that had not finished
    captures/      with [capture] enabled: a pcapng file per trial and receiving port, named
                   in the trial's record (r<repetition>-s<step>[-<phase>]-port<index>.pcapng)

A new measurement into an existing directory replaces these files, unless it resumes
(ResultStore(directory, resume=True)): then the finished repetitions are kept and the trials
of an unfinished one are moved to incomplete/, so trials.jsonl never holds a repetition twice.
"""

import csv
import io
import json
import os
from pathlib import Path

from ..util.errors import XlatperfError
from ..util.files import read_jsonl, read_lines, utc_timestamp, write_atomically

TRIALS_FILE = "trials.jsonl"
SUMMARY_FILE = "summary.json"
CSV_FILE = "summary.csv"
ENGINE_LOG_FILE = "engine.log"
REPETITIONS_FILE = "repetitions.jsonl"
INCOMPLETE_DIR = "incomplete"
CAPTURE_DIR = "captures"


class ResultStore:
    """Writes one measurement's files under `directory` (created if needed).

    resume=True keeps the repetitions that finished in an earlier run into the same directory
    (`finished`: repetition number -> its trial records, numbers 1..k) and moves the trials
    of any other repetition to incomplete/trials.jsonl."""

    def __init__(self, directory: str | os.PathLike, resume: bool = False):
        self.directory = Path(directory)
        self.finished: dict[int, list[dict]] = {}
        self.moved_to_incomplete = 0
        self.trials_recorded = 0
        self._captures_written: set[str] = set()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            if resume:
                self._recover()
            else:
                for stale in (SUMMARY_FILE, CSV_FILE, REPETITIONS_FILE):
                    (self.directory / stale).unlink(missing_ok=True)
            mode = "a" if resume else "w"
            self._trials = open(self.directory / TRIALS_FILE, mode, encoding="utf-8")
            self._repetitions = open(self.directory / REPETITIONS_FILE, mode, encoding="utf-8")
        except OSError as exc:
            raise XlatperfError(f"--out {directory}: {exc.strerror or exc}") from None

    def _recover(self) -> None:
        """Keep repetitions 1..k whose end marker is in repetitions.jsonl with as many trials
        as trials.jsonl holds for them; move every other trial to incomplete/trials.jsonl."""
        markers = {m["repetition"]: m for m in read_jsonl(self.directory / REPETITIONS_FILE)
                   if isinstance(m.get("repetition"), int)}
        lines = read_lines(self.directory / TRIALS_FILE)
        by_repetition: dict[int, list[str]] = {}
        for line in lines:
            by_repetition.setdefault(json.loads(line).get("repetition"), []).append(line)
        number = 1
        while number in markers and len(by_repetition.get(number, [])) == markers[number]["trials"]:
            number += 1
        kept = [line for line in lines if 1 <= json.loads(line).get("repetition", 0) < number]
        kept_set = set(kept)
        stale = [line for line in lines if line not in kept_set]
        if stale:
            incomplete = self.directory / INCOMPLETE_DIR
            incomplete.mkdir(exist_ok=True)
            known = set(read_lines(incomplete / TRIALS_FILE))
            with open(incomplete / TRIALS_FILE, "a", encoding="utf-8") as stream:
                for line in stale:
                    if line not in known:
                        stream.write(line + "\n")
                stream.flush()
                os.fsync(stream.fileno())
            self.moved_to_incomplete = len(stale)
        write_atomically(self.directory / TRIALS_FILE, "".join(line + "\n" for line in kept))
        write_atomically(self.directory / REPETITIONS_FILE,
                          "".join(json.dumps(markers[n], separators=(",", ":")) + "\n"
                                  for n in range(1, number)))
        for line in kept:
            record = json.loads(line)
            self.finished.setdefault(record["repetition"], []).append(record)
        for n in range(1, number):
            self.finished.setdefault(n, [])

    def write_capture(self, name: str, data: bytes) -> str:
        """Writes a capture file under captures/ and returns its path relative to the
        directory (as the trial record names it). A name already written in this run gets a
        suffix (-2, -3, ...): every record keeps its own file."""
        directory = self.directory / CAPTURE_DIR
        directory.mkdir(exist_ok=True)
        stem, number = name, 1
        while f"{CAPTURE_DIR}/{name}" in self._captures_written:
            number += 1
            name = f"{stem}-{number}"
        relative = f"{CAPTURE_DIR}/{name}"
        self._captures_written.add(relative)
        try:
            write_atomically(self.directory / f"{relative}.pcapng", data)
        except OSError as exc:
            raise XlatperfError(f"--out {self.directory}: cannot write {relative}.pcapng: "
                                f"{exc.strerror or exc}") from None
        return relative + ".pcapng"

    @property
    def engine_log(self) -> Path:
        return self.directory / ENGINE_LOG_FILE

    def record_trial(self, record: dict) -> None:
        """Append one trial record and make sure it is on disk before returning."""
        self._trials.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._trials.flush()
        os.fsync(self._trials.fileno())
        self.trials_recorded += 1   # in this run (resumed records not counted)

    def finish_repetition(self, number: int, trials: int) -> None:
        """Mark repetition `number` (with `trials` trial records) as finished; called after its
        last trial is on disk, so a resumed run can keep it."""
        marker = {"repetition": number, "trials": trials, "timestamp": utc_timestamp()}
        self._repetitions.write(json.dumps(marker, separators=(",", ":")) + "\n")
        self._repetitions.flush()
        os.fsync(self._repetitions.fileno())

    def write_summary(self, summary: dict, csv_rows: list[dict]) -> None:
        write_atomically(self.directory / SUMMARY_FILE, json.dumps(summary, indent=2) + "\n")
        write_atomically(self.directory / CSV_FILE, rows_to_csv(csv_rows))

    def close(self) -> None:
        self._trials.close()
        self._repetitions.close()

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
