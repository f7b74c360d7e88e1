# SPDX-License-Identifier: BSD-3-Clause
"""Campaign studies with tests/fake_engine.py (docs/campaigns.md): latency and pdv chained to
the throughput of their own point, and DUT hooks before and after each point, repetition and
trial, templated with the point's values, with DUT counters in the trial records."""

import json
from pathlib import Path

import pytest

from xlatperf.config.loading import load_config
from xlatperf.measure.store import read_trials
from xlatperf.report.report import write_report
from xlatperf.run.campaign import SUPERSEDED_DIR, run_campaign
from xlatperf.run.campaignfile import load_campaign
from xlatperf.run.campaignstatus import SKIPPED_FILE, campaign_status, format_status
from xlatperf.run.runner import run_procedure
from xlatperf.util.errors import ConfigError, MeasurementError

SHORT = """
"trial.duration" = 1.0
"latency.delay" = 0.5
"latency.timestamps" = 100
"throughput.error" = 1000
"""


def campaign(tmp_path: Path, text: str):
    path = tmp_path / "campaign.toml"
    path.write_text(text)
    return load_campaign(path)


def summary(out: Path, point) -> dict:
    return json.loads((out / "points" / point.id / "summary.json").read_text())


# --------------------------------------------------------------------------------------------
# Chaining latency and pdv to the throughput of the same point
# --------------------------------------------------------------------------------------------

CHAIN = f"""
[campaign]
config = "base.toml"
procedures = ["throughput", "latency", "pdv"]
repeat = 3
[set]
{SHORT}
[per_procedure.latency]
"trial.duration" = 2.0
[axes]
"traffic.frame_size" = [64, 512, 1518]
"""


def test_each_delay_point_runs_at_the_throughput_of_its_own_point(fake_config, tmp_path,
                                                                    monkeypatch):
    # At 100 Mbit/s the medium's maximum, and so the throughput, differs by frame size.
    monkeypatch.setenv("FAKE_SPEED_MBPS", "100")
    loaded = campaign(tmp_path, CHAIN)
    assert [(p.procedure, p.assignments["traffic.frame_size"]) for p in loaded.points] == [
        (procedure, size) for size in (64, 512, 1518)
        for procedure in ("throughput", "latency", "pdv")]
    # [per_procedure.latency] applies to the latency points only.
    durations = {p.procedure: loaded.config_for(p).trial.duration for p in loaded.points}
    assert durations == {"throughput": 1.0, "latency": 2.0, "pdv": 1.0}
    out = tmp_path / "out"
    run_campaign(loaded, out)
    rates = {}
    for point in loaded.points:
        s = summary(out, point)
        size = point.assignments["traffic.frame_size"]
        if point.procedure == "throughput":
            rates[size] = s["median"]
            continue
        source = s["rate_source"]
        assert s["settings"]["rate"] == source["rate"] == int(rates[size])
        assert source["point"] == point.rate_from and source["n"] == 3
        assert source["statistic"].startswith("median of the throughput's repetitions")
        assert not source["tester_limited"] and "note" not in source
        assert {r["rate"] for r in read_trials(out / "points" / point.id)} == {int(rates[size])}
    assert rates[64] > rates[512] > rates[1518] > 0          # three different rates
    rows = (out / "results.csv").read_text().splitlines()
    assert rows[0].split(",")[-3:] == ["rate", "note", "id"]
    assert rows[2].split(",")[1] == "latency" and f",{int(rates[64])}," in rows[2]
    # The report shows each delay point's rate and where it came from.
    markdown = Path(write_report(out)["markdown"]).read_text()
    assert f"measured at {int(rates[512]):,} frames/s, the throughput of throughput point 4" \
        in markdown
    assert "at each point's throughput rate" in markdown


def test_no_throughput_no_delay_measurement(fake_config, tmp_path, monkeypatch):
    """A DUT that passes nothing has no throughput rate: its delay points are skipped with the
    reason (status, results.csv, report), never measured at some other rate."""
    monkeypatch.setenv("FAKE_DUT_LIMIT", "0")
    loaded = campaign(tmp_path, CHAIN.replace("[64, 512, 1518]", "[64]"))
    out = tmp_path / "out"
    status = run_campaign(loaded, out)
    assert [p["state"] for p in status["points"]] == ["done", "skipped", "skipped"]
    assert status["counts"]["skipped"] == 2
    for point in loaded.points[1:]:
        assert not (out / "points" / point.id / "trials.jsonl").exists()
        reason = json.loads((out / "points" / point.id / SKIPPED_FILE).read_text())["reason"]
        assert "throughput point 1: no throughput was found there (median: 0 frames/s)" in \
            reason
    assert "point 2 (latency) not measured: throughput point 1: no throughput" in \
        format_status(status)
    assert "no throughput was found" in (out / "results.csv").read_text()
    assert "**Not measured**: point 3 (pdv, traffic.frame_size=64)" in \
        Path(write_report(out)["markdown"]).read_text()


def test_a_tester_limited_throughput_is_measured_at_and_flagged(fake_config, tmp_path,
                                                               monkeypatch):
    monkeypatch.setenv("FAKE_TESTER_LIMIT", "2000000")
    loaded = campaign(tmp_path, CHAIN.replace("[64, 512, 1518]", "[64]").replace(
        '"throughput", "latency", "pdv"', '"throughput", "latency"'))
    out = tmp_path / "out"
    run_campaign(loaded, out)
    throughput, latency = (summary(out, p) for p in loaded.points)
    assert throughput["tester_limited"]
    source = latency["rate_source"]
    assert source["tester_limited"] and source["rate"] == int(throughput["median"])
    assert "lower bound set by the tester" in source["note"]
    assert "lower bound set by the tester" in (out / "results.csv").read_text()
    assert "below the DUT's unknown throughput" in \
        Path(write_report(out)["markdown"]).read_text()


def test_a_delay_point_follows_its_throughput_when_that_is_measured_again(
        fake_config, tmp_path, monkeypatch):
    """Raising `repeat` adds throughput repetitions; when their median moves, the delay point
    measured at the old rate is moved to superseded/ and measured at the new one."""
    text = CHAIN.replace("[64, 512, 1518]", "[64]").replace(
        '"throughput", "latency", "pdv"', '"throughput", "latency"')
    monkeypatch.setenv("FAKE_DUT_LIMIT", "300000")
    out = tmp_path / "out"
    first = campaign(tmp_path, text.replace("repeat = 3", "repeat = 1"))
    run_campaign(first, out)
    old_rate = summary(out, first.points[1])["settings"]["rate"]
    monkeypatch.setenv("FAKE_DUT_LIMIT", "200000")
    second = campaign(tmp_path, text)
    assert campaign_status(out)["counts"]["done"] == 2
    run_campaign(second, out)
    throughput, latency = (summary(out, p) for p in second.points)
    assert throughput["n"] == 3 and int(throughput["median"]) < old_rate
    assert latency["settings"]["rate"] == int(throughput["median"]) and latency["n"] == 3
    assert [t["rate"] for t in read_trials(out / "points" / second.points[1].id)] == \
        [latency["settings"]["rate"]] * 3
    (moved,) = (out / SUPERSEDED_DIR).iterdir()
    assert moved.name.startswith(f"{second.points[1].id}_rate-{old_rate}_")
    assert json.loads((moved / "summary.json").read_text())["settings"]["rate"] == old_rate


def test_a_setting_that_does_not_fit_the_chained_rate_fails_that_point_only(
        fake_config, tmp_path, monkeypatch):
    """latency.timestamps must fit in (duration - delay) x rate: known only once the rate is;
    the point fails with the reason and the campaign goes on."""
    monkeypatch.setenv("FAKE_DUT_LIMIT", "50")
    loaded = campaign(tmp_path, CHAIN.replace("[64, 512, 1518]", "[64]").replace(
        '"throughput.error" = 1000', '"throughput.error" = 10'))
    out = tmp_path / "out"
    with pytest.raises(MeasurementError, match=r"1 of 3 points failed .*latency.timestamps"):
        run_campaign(loaded, out)
    assert [p["state"] for p in campaign_status(out)["points"]] == ["done", "failed", "done"]


def test_chained_procedures_need_their_rate_source(fake_config, tmp_path):
    with pytest.raises(ConfigError, match=r'latency takes its rate from the throughput '
                                          r'measured at the same point: list "throughput"'):
        campaign(tmp_path, CHAIN.replace('"throughput", "latency", "pdv"', '"latency"'))
    with pytest.raises(ConfigError, match=r"\[per_procedure.frame-loss\]: must be a table of "
                                          r"overrides for one of campaign.procedures"):
        campaign(tmp_path, CHAIN + '[per_procedure.frame-loss]\n"trial.duration" = 1\n')


def test_rate_from_on_the_command_line_records_its_source(fake_config, tmp_path, monkeypatch):
    from xlatperf.ui.cli import main
    monkeypatch.setenv("FAKE_DUT_LIMIT", "300000")
    common = ["-c", str(fake_config), "--set", "trial.duration=1", "--set", "latency.delay=0.5",
              "-q"]
    assert main(["throughput", *common, "--out", str(tmp_path / "tp")]) == 0
    assert main(["latency", *common, "--rate-from", str(tmp_path / "tp"),
                 "--out", str(tmp_path / "lat")]) == 0
    lat = json.loads((tmp_path / "lat" / "summary.json").read_text())
    tp = json.loads((tmp_path / "tp" / "summary.json").read_text())
    assert lat["rate_source"]["rate"] == lat["settings"]["rate"] == int(tp["median"])
    assert lat["rate_source"]["directory"] == str(tmp_path / "tp")


# --------------------------------------------------------------------------------------------
# DUT hooks: stages, templates, counters
# --------------------------------------------------------------------------------------------


def hook_config(base: Path, log: Path, *more: str):
    def logging(stage: str) -> str:
        return f"dut.{stage}=echo {stage} {{output.repeat}} >> {log}"
    return load_config(str(base), [
        *(logging(stage) for stage in ("before_point", "before_repetition", "before_trial",
                                       "after_trial", "after_repetition", "after_point")),
        f"dut.counters=echo counters >> {log}; echo sampled=1; echo frame_size={{traffic.frame_size}}",
        "output.repeat=2", "trial.duration=1", *more])


def test_hooks_run_before_and_after_each_point_repetition_and_trial(fake_config, tmp_path):
    log = tmp_path / "hooks.log"
    config = hook_config(fake_config, log, "traffic.frame_size=128")
    run_procedure("trial", config, tmp_path / "out", rate=1000)
    trial = ["before_trial 2", "counters", "after_trial 2"]
    assert log.read_text().splitlines() == [
        "before_point 2",
        "before_repetition 2", *trial, "after_repetition 2",
        "before_repetition 2", *trial, "after_repetition 2",
        "after_point 2"]
    records = read_trials(tmp_path / "out")
    assert [r["dut_counters"] for r in records] == [{"sampled": 1, "frame_size": 128}] * 2
    logged = [json.loads(line) for line in
              (tmp_path / "out" / "hooks.jsonl").read_text().splitlines()]
    assert logged[0]["hook"] == "before_point" and logged[0]["command"] == \
        f"echo before_point 2 >> {log}"
    assert {(r["hook"], r.get("repetition")) for r in logged} >= {
        ("before_repetition", 1), ("after_repetition", 2)}


def test_a_throughput_search_samples_counters_after_every_step(fake_config, tmp_path,
                                                              monkeypatch):
    monkeypatch.setenv("FAKE_DUT_LIMIT", "3000000")
    config = hook_config(fake_config, tmp_path / "hooks.log", "output.repeat=1")
    run_procedure("throughput", config, tmp_path / "out")
    records = read_trials(tmp_path / "out")
    assert len(records) > 3 and all(r["dut_counters"]["sampled"] == 1 for r in records)
    lines = (tmp_path / "hooks.log").read_text().splitlines()
    assert lines.count("before_trial 1") == lines.count("after_trial 1") == len(records)


def test_failing_hooks(fake_config, tmp_path):
    # A failing counters command is recorded with the trial, which still counts.
    config = load_config(str(fake_config), ["dut.counters=echo broken >&2; exit 4",
                                            "trial.duration=1"])
    s = run_procedure("trial", config, tmp_path / "a", rate=1000)
    (record,) = read_trials(tmp_path / "a")
    assert "exit 4" in record["dut_counters_error"] and "broken" in record["dut_counters_error"]
    assert s["complete"] and s["n"] == 1
    # A failing after_trial stops the measurement: the DUT is in an unknown state.
    config = load_config(str(fake_config), ["dut.after_trial=exit 5", "trial.duration=1"])
    with pytest.raises(MeasurementError, match=r"dut.after_trial `exit 5` \(local\): exit 5 "
                                               r"\(after the trial\)"):
        run_procedure("trial", config, tmp_path / "b", rate=1000)
    # wait_until follows a before_point that ran (it may have restarted the DUT).
    flag = tmp_path / "up"
    config = load_config(str(fake_config), [f"dut.before_point=touch {flag}",
                                            f"dut.wait_until=test -e {flag}",
                                            "trial.duration=1"])
    run_procedure("trial", config, tmp_path / "c", rate=1000)
    hooks = [json.loads(line)["hook"] for line in
             (tmp_path / "c" / "hooks.jsonl").read_text().splitlines()]
    assert hooks == ["before_point", "wait_until", "wait_until"]   # then before the trial


CORES = """
[campaign]
config = "base.toml"
procedures = ["throughput"]
repeat = 2
[set]
"trial.duration" = 1.0
"throughput.error" = 1000
# The DUT's forwarding capacity follows its cores, with a diminishing return (shell arithmetic)
"dut.before_point" = "echo {{dut.cores}} {{dut.mask}} >> {seen}; echo $(( 100000 * {{dut.cores}} - 5000 * {{dut.cores}} * {{dut.cores}} )) > {limit}"
"dut.counters" = "echo cores={{dut.cores}}; echo limit=$(cat {limit})"
[axes]                                # the cores and the CPU mask that goes with them
cores = [{{"dut.cores" = 1, "dut.mask" = "0x1"}}, {{"dut.cores" = 2, "dut.mask" = "0x3"}},
         {{"dut.cores" = 4, "dut.mask" = "0xf"}}, {{"dut.cores" = 8, "dut.mask" = "0xff"}}]
"""


def test_a_campaign_over_dut_cores_with_a_scale_up_report(fake_config, tmp_path, monkeypatch):
    seen, limit = tmp_path / "seen", tmp_path / "limit"
    monkeypatch.setenv("FAKE_DUT_LIMIT_FILE", str(limit))
    loaded = campaign(tmp_path, CORES.format(seen=seen, limit=limit))
    out = tmp_path / "out"
    run_campaign(loaded, out)
    assert seen.read_text().splitlines() == ["1 0x1", "2 0x3", "4 0xf", "8 0xff"]
    medians = {}
    for point in loaded.points:
        cores = point.assignments["dut.cores"]
        capacity = 100000 * cores - 5000 * cores * cores
        for record in read_trials(out / "points" / point.id):
            assert record["dut_counters"] == {"cores": cores, "limit": capacity}
        s = summary(out, point)
        assert s["config"]["dut"]["variables"] == {"cores": cores,
                                                   "mask": point.assignments["dut.mask"]}
        assert capacity - 1000 < s["median"] <= capacity
        medians[cores] = s["median"]
    assert medians[1] < medians[2] < medians[4] < medians[8]
    written = write_report(out)
    plots = {Path(png).name for png, _, _ in written["plots"]}
    assert "scaleup_cores_throughput.png" in plots
    # One series: the mask, linked to the cores, is part of the x value, not a series.
    svg = (out / "report" / "plots" / "scaleup_cores_throughput.svg").read_text()
    assert "speed-up" in svg and "relative scale-up" in svg and "mask" not in svg
    markdown = Path(written["markdown"]).read_text()
    assert "Swept configuration keys: `dut.cores`, `dut.mask`" in markdown
    assert "| DUT hooks (commands as configured" in markdown and "before_point: `echo" in \
        markdown
    assert "point 4: throughput, cores 8, mask 0xff: DUT counters after each trial" in markdown
    assert "| limit | 480000 | 480000 | 480,000 | 480,000 |" in markdown
