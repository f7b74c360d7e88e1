# SPDX-License-Identifier: BSD-3-Clause
"""Every procedure's summary is derived from its recorded trials alone: a run interrupted after
any one of its trials and then resumed (--resume; campaigns always resume) gives exactly the
summary of an uninterrupted run. tests/fake_engine.py is a deterministic DUT, so the two runs
measure the same trials."""

import json
import os
import tempfile

import pytest

from fakes import FAKE_ENGINE
from xlatperf.config import load_config
from xlatperf.measure.store import ResultStore, read_trials
from xlatperf.procedures import REGISTRY
from xlatperf.run import run_procedure

BASE = [f"tester.engine={FAKE_ENGINE}", "tester.netns=", "tester.hugepages=no",
        "left.port=null", "right.port=null", "trial.pause=0", "trial.duration=1",
        "output.repeat=2", "throughput.error=100000", "latency.delay=0.5"]
STATEFUL = ["stateful.connections=2000", "stateful.rate_phase1=100000",
            "stateful.timeout_phase1=0", "stateful.error=20000", "stateful.max_rate=400000",
            "ports.forward_src=random", "ports.forward_src_min=1024", "ports.forward_src_max=1123",
            "ports.forward_dst=random", "ports.forward_dst_min=1", "ports.forward_dst_max=20",
            "stateful.capacity_error=500", "dut.before_trial=true", "dut.teardown=true"]

# The fake DUT's outage file, written by the reset case's DUT hook (tests/fake_engine.py).
OUTAGE_FILE = os.path.join(tempfile.gettempdir(), f"xlatperf-resume-outage-{os.getpid()}")

# name: (procedure, extra overrides, rate, fake-DUT environment)
CASES = {
    "trial": ("trial", [], 1000, {}),
    "throughput": ("throughput", [], None, {"FAKE_DUT_LIMIT": "3000000"}),
    "throughput-mlrsearch": ("throughput", ["throughput.mode=mlrsearch",
                                            "throughput.preset=rfc2544,ndr-pdr"], None,
                             {"FAKE_DUT_LIMIT": "3000000"}),
    "throughput-tester-limited": ("throughput", [], None, {"FAKE_TESTER_LIMIT": "2000000"}),
    "mlrsearch-tester-limited": ("throughput", ["throughput.mode=mlrsearch",
                                                "throughput.preset=rfc2544"], None,
                                 {"FAKE_TESTER_LIMIT": "2000000"}),
    "frame-loss": ("frame-loss", [], None, {"FAKE_DUT_LIMIT": "9000000"}),
    "dns64": ("dns64", ["dns.enabled=true", "dns.qtype=A", "traffic.direction=forward", "dns.repeat=2"], None,
              {"FAKE_DUT_LIMIT": "3000000"}),
    "selftest": ("selftest", [], None, {"FAKE_TESTER_LIMIT": "5000000"}),
    "latency": ("latency", [], 5000, {"FAKE_TAGGED_LOST": "1"}),
    "pdv": ("pdv", ["pdv.ipdv=true"], 5000, {}),
    "connection-rate": ("connection-rate", STATEFUL, None, {"FAKE_CONN_RATE": "123456"}),
    "teardown-rate": ("teardown-rate", STATEFUL, None, {}),   # timed: see TIMED
    # Over TCP, closing with FIN (docs/tcp.md): a search whose steps are a load and a close.
    "teardown-rate-fin": ("teardown-rate", [*STATEFUL, "stateful.transport=tcp", "stateful.teardown=fin",
                                            "stateful.max_rate=200000", "stateful.error=100000"], None,
                          {"FAKE_DUT_LIMIT": "150000"}),
    "table-capacity": ("table-capacity", STATEFUL, None,
                       {"FAKE_TABLE_CAPACITY": "1500", "FAKE_CONN_RATE": "200000"}),
    # One repetition (CI time: resuming after each of n trials costs n^2 trials; the cases above
    # cross repetition boundaries): each step a phase 1, then phase 2.
    "throughput-stateful": ("throughput", ["stateful.enabled=true", *STATEFUL, "output.repeat=1"], None,
                            {"FAKE_DUT_LIMIT": "3000000"}),
    "back-to-back": ("back-to-back", ["back_to_back.repeat=2", "back_to_back.max_time=0.05",
                                      "back_to_back.step=2000", "back_to_back.throughput=1000000"],
                     2000000, {"FAKE_DUT_LIMIT": "1000000", "FAKE_DUT_BUFFER": "30000"}),
    "back-to-back-tester-limited": ("back-to-back", ["back_to_back.repeat=2",
                                                     "back_to_back.max_time=0.05",
                                                     "back_to_back.step=5000",
                                                     "back_to_back.retries=1"],
                                    3000000, {"FAKE_TESTER_LIMIT": "2000000"}),
    "scalability": ("scalability", ["scalability.flows=[1, 8]", "addresses.left=increasing",
                                    "addresses.left_max=100"], None,
                    {"FAKE_DUT_LIMIT": "3000000", "FAKE_DUT_CLIENT_PENALTY": "0.1"}),
    "recovery": ("recovery", ["recovery.repeat=2", "recovery.overload=0.5",
                              "recovery.window=0.5"], 1000000,
                 {"FAKE_DUT_LIMIT": "1000000", "FAKE_DUT_RECOVERY": "0.1"}),
    # The hook starts the fake DUT's outage in real time: timed (see TIMED)
    "reset": ("reset", ["reset.repeat=2", f"dut.during_trial=echo 0.1 > {OUTAGE_FILE}",
                        "dut.during_trial_at=0.1"], 100000,
              {"FAKE_TRIAL_SECONDS": "0.3", "FAKE_DUT_OUTAGE_FILE": OUTAGE_FILE}),
}
# What legitimately differs between an uninterrupted and a resumed run.
VOLATILE = {"started", "finished", "resumed", "timestamp", "elapsed", "wall_seconds"}
# Procedures that time a DUT command (dut.teardown) in real time: no two runs agree, so the
# resumed summary is compared with the interrupted run's summary for the repetitions that had
# finished (they must be taken from the records as they were, never measured again).
TIMED = {"teardown-rate", "reset"}


def test_every_registered_procedure_has_a_case():
    assert {procedure for procedure, *_ in CASES.values()} == set(REGISTRY)


def interrupt_at(monkeypatch, n: int) -> None:
    """Ctrl-C right after the n-th trial record (any phase: learning, phase 1, a timed
    tear-down...) reached trials.jsonl."""
    seen = 0
    original = ResultStore.record_trial

    def record_trial(store, record):
        nonlocal seen
        original(store, record)
        seen += 1
        if seen == n:
            raise KeyboardInterrupt
    monkeypatch.setattr(ResultStore, "record_trial", record_trial)


def _stable(value):
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def interruption_points(records: list[dict]) -> list[int]:
    """After which of a run's trial records to interrupt it: around every boundary (the first
    and last record, a repetition's first and last, a campaign point's) and every STRIDE-th
    record between, which takes each kind of record where phases alternate (a stateful step's
    phase 1 and 2). Interrupting after each of n records costs n^2 trials in CI time; the
    records between two boundaries are alike, so a sample of them tells the same."""
    keys = [(r.get("point"), r.get("repetition")) for r in records]
    points = {1, len(records)}
    for n in range(1, len(records)):
        if keys[n] != keys[n - 1]:
            points |= {n, n + 1}
    points |= set(range(1, len(records) + 1, STRIDE))
    return sorted(points)


STRIDE = 3


@pytest.mark.parametrize("case", CASES)
def test_resume_after_any_trial_gives_the_uninterrupted_summary(case, tmp_path, monkeypatch):
    procedure, overrides, rate, environment = CASES[case]
    for name in list(os.environ):
        if name.startswith("FAKE_"):
            monkeypatch.delenv(name)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    config = load_config(None, [*BASE, *overrides])
    clean = run_procedure(procedure, config, tmp_path / "clean", rate=rate)
    assert clean["complete"]
    records = read_trials(tmp_path / "clean")
    assert len(records) >= 2
    for n in interruption_points(records):
        out = tmp_path / f"at{n}"
        with monkeypatch.context() as patch:
            interrupt_at(patch, n)
            with pytest.raises(KeyboardInterrupt):
                run_procedure(procedure, config, out, rate=rate)
        interrupted = json.loads((out / "summary.json").read_text())
        resumed = run_procedure(procedure, config, out, rate=rate, resume=True)
        assert resumed["complete"], f"interrupted after trial {n}"
        if case in TIMED:
            finished = [r for r in interrupted["repetitions"] if r.get("complete", True)]
            expected, got = finished, resumed["repetitions"][:len(finished)]
        else:
            expected, got = clean, resumed
        assert _text(got) == _text(expected), f"interrupted after trial {n}"


def _text(summary) -> str:
    return json.dumps(_stable(summary), sort_keys=True, default=str)


# A campaign that chains latency and pdv to the throughput of each point (docs/campaigns.md):
# interrupted after any trial of any point and run again, every point's summary is the
# uninterrupted run's, and the delay points ran at their own point's throughput.
CHAIN = """
[campaign]
procedures = ["throughput", "latency", "pdv"]
repeat = 2
[axes]
"traffic.frame_size" = [64, 1518]
"""


def test_chained_campaign_resumed_after_any_trial(tmp_path, monkeypatch):
    import tomllib

    from xlatperf.config.loading import parse_override_value
    from xlatperf.run.campaign import run_campaign
    from xlatperf.run.campaignfile import parse_campaign
    for name in list(os.environ):
        if name.startswith("FAKE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("FAKE_SPEED_MBPS", "1000")   # the medium's maximum differs by size
    monkeypatch.setenv("FAKE_DUT_LIMIT", "300000")
    raw = tomllib.loads(CHAIN)
    raw["set"] = {key: parse_override_value(value, *key.split(".", 1))
                  for key, value in (a.split("=", 1) for a in BASE)}
    campaign = parse_campaign(raw, tmp_path / "campaign.toml")

    def summaries(out):
        return {p.id: json.loads((out / "points" / p.id / "summary.json").read_text())
                for p in campaign.points}
    run_campaign(campaign, tmp_path / "clean")
    clean = summaries(tmp_path / "clean")
    throughput = {p.assignments["traffic.frame_size"]: clean[p.id]["median"]
                  for p in campaign.points if p.procedure == "throughput"}
    # the DUT's limit within throughput.error = 100,000; the medium's maximum at 1 Gbit/s
    assert 200000 < throughput[64] <= 300000 and throughput[1518] == 81274
    for point in campaign.points:
        if point.procedure != "throughput":
            rate = clean[point.id]["settings"]["rate"]
            assert rate == int(throughput[point.assignments["traffic.frame_size"]])
            assert clean[point.id]["rate_source"]["point"] == point.rate_from
    # Its boundaries are the points' (each point's repetitions: the cases above).
    records = [{"point": p.id} for p in campaign.points
               for _ in read_trials(tmp_path / "clean" / "points" / p.id)]
    for n in interruption_points(records):
        out = tmp_path / f"at{n}"
        with monkeypatch.context() as patch:
            interrupt_at(patch, n)
            with pytest.raises(KeyboardInterrupt):
                run_campaign(campaign, out)
        run_campaign(campaign, out)
        resumed = summaries(out)
        for point in campaign.points:
            assert _text(resumed[point.id]) == _text(clean[point.id]), \
                f"interrupted after trial {n}, point {point.index}"
