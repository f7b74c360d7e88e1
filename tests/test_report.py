# SPDX-License-Identifier: BSD-3-Clause
"""`xlatperf report` on campaign and single-procedure results (fake engine): the files, valid
PNG/SVG images, and table numbers equal to the summaries'."""

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from xlatperf.config.loading import load_config
from xlatperf.report import write_report
from xlatperf.report.units import format_value
from xlatperf.run.campaign import run_campaign
from xlatperf.run.campaignfile import load_campaign
from xlatperf.run.runner import run_procedure

ROOT = Path(__file__).resolve().parents[1]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def base(fake_config, monkeypatch):
    monkeypatch.setenv("FAKE_DUT_LIMIT", "300000")
    return fake_config


def check_images(plots):
    assert plots
    for png, svg, caption in plots:
        assert Path(png).read_bytes().startswith(PNG_SIGNATURE), png
        root = ET.parse(svg).getroot()
        assert root.tag.endswith("svg"), svg
        assert caption


def table_rows(markdown: str, first_header: str) -> list[dict]:
    """The rows of the (first) Markdown table whose first column is `first_header`."""
    return all_tables(markdown, first_header)[0]


def all_tables(markdown: str, first_header: str) -> list[list[dict]]:
    """The rows of every Markdown table whose first column is `first_header`."""
    lines = markdown.splitlines()
    tables = []
    for start in (i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |")):
        header = [cell.strip() for cell in lines[start].strip("|").split("|")]
        rows = []
        for line in lines[start + 2:]:
            if not line.startswith("|"):
                break
            rows.append(dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")))))
        tables.append(rows)
    return tables


def test_campaign_report(base, tmp_path):
    path = tmp_path / "c.toml"
    # 84 and 1518: the 1/2 mix carries IPv6 background frames, so 64 is not allowed there.
    path.write_text("""
[campaign]
config = "base.toml"
procedures = ["throughput", "frame-loss", "trial"]
repeat = 5
rate = 400000
[axes]
"traffic.frame_size" = [84, 1518]
"traffic.direction" = ["forward", "reverse"]
mix = [{"traffic.mix_n" = 1, "traffic.mix_m" = 1}, {"traffic.mix_n" = 2, "traffic.mix_m" = 1}]
""")
    out = tmp_path / "out"
    run_campaign(load_campaign(path), out)
    written = write_report(out)
    markdown = Path(written["markdown"]).read_text()
    html = Path(written["html"]).read_text()
    assert html.startswith("<!DOCTYPE html>") and "<table>" in html and "<img src=" in html
    for item in ("Frame format", "Frame sizes", "Latency definition", "Media",
                 "Line rate and maximum frame rate", "Traffic direction", "Traffic mix",
                 "Address and port variation", "Repetitions", "Summary statistics",
                 "Trial duration", "Waits", "Search precision", "DUT configuration"):
        assert f"| {item}" in markdown, item
    check_images(written["plots"])
    names = {Path(png).stem for png, _, _ in written["plots"]}
    # One line plot per quantity: throughput, frame-loss's loss at its highest rate, and the
    # trials' loss ratio never share an axis.
    assert {"frame_loss_rate", "mix_throughput", "mix_loss_ratio",
            "mix_frame_loss_rate_at_the_highest_rate", "cdf_repetitions_throughput"} <= names
    assert any(name.startswith("bars_") for name in names)
    campaign = json.loads((out / "campaign.json").read_text())
    rows = table_rows(markdown, "point")
    assert len(rows) == len(campaign["points"]) == 3 * 2 * 2 * 2
    for row, point in zip(rows, campaign["points"]):
        summary = json.loads((out / "points" / point["id"] / "summary.json").read_text())
        assert row["procedure"] == summary["procedure"]
        assert row["frame_size"] == str(summary["config"]["traffic"]["frame_size"])
        for key in ("median", "p1", "p99", "min", "max"):
            assert row[key] == format_value(summary[key], summary["unit"])
            shown = float(row[key].replace(",", "").replace(" %", ""))
            exact = summary[key] * (100 if summary["unit"] == "ratio" else 1)
            assert shown == pytest.approx(exact, rel=1e-5, abs=1e-9)
        assert row["n"] == str(summary["n"]) == "5"


def test_single_procedure_report_and_cli(base, tmp_path):
    config = load_config(str(base), ["output.repeat=3"])
    out = tmp_path / "tp"
    summary = run_procedure("throughput", config, out)
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "xlatperf", "report", str(out), "--out",
                           str(tmp_path / "r")], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    markdown = (tmp_path / "r" / "report.md").read_text()
    row = table_rows(markdown, "point")[0]
    assert row["median"] == f"{summary['median']:,}"
    reps = table_rows(markdown, "repetition")
    assert [r["throughput (fps)"] for r in reps] == \
        [f"{r['throughput']:,}" for r in summary["repetitions"]]
    check_images([(str(tmp_path / "r" / "plots" / "bars_1_throughput.png"),
                   str(tmp_path / "r" / "plots" / "bars_1_throughput.svg"), "x")])
    missing = subprocess.run([sys.executable, "-m", "xlatperf", "report", str(tmp_path)],
                             capture_output=True, text=True, cwd=ROOT)
    assert missing.returncode == 0  # tmp_path holds tp/ (and r/): a directory of results
    empty = tmp_path / "empty"
    empty.mkdir()
    none = subprocess.run([sys.executable, "-m", "xlatperf", "report", str(empty)],
                          capture_output=True, text=True, cwd=ROOT)
    assert none.returncode == 1 and "no summary.json found" in none.stderr


# RFC 9693 procedures in a campaign: a NAT44-like setup (500 x 100 port combinations in the
# Initiator's direction) on the fake engine's stateful DUT.
STATEFUL_CAMPAIGN = """
[campaign]
config = "base.toml"
procedures = ["connection-rate", "teardown-rate", "table-capacity"]
repeat = 1
[set]
"ports.forward_src" = "random"
"ports.forward_src_min" = 1024
"ports.forward_src_max" = 1523
"ports.forward_dst" = "random"
"ports.forward_dst_min" = 1
"ports.forward_dst_max" = 100
"stateful.rate_phase1" = 100000
"stateful.timeout_phase1" = 0.0
"stateful.max_rate" = 400000
"stateful.error" = 50000
"stateful.capacity_error" = 2000
"dut.before_trial" = "true"
"dut.teardown" = "TEARDOWN"
[axes]
"stateful.connections" = [1000, 4000]
"""


def test_stateful_campaign_report(fake_config, tmp_path, monkeypatch):
    from xlatperf.run.campaignfile import PROCEDURE_NAMES
    from xlatperf.run.campaignstatus import campaign_status, format_status
    monkeypatch.setenv("FAKE_CONN_RATE", "200000")
    monkeypatch.setenv("FAKE_TABLE_CAPACITY", "9000")
    assert {"connection-rate", "teardown-rate", "table-capacity"} <= set(PROCEDURE_NAMES)
    # The fake DUT's tear-down: slow on the full table (the first run of each repetition), fast
    # on the empty one, so that T_N > T_0 always.
    mark = tmp_path / "full"
    teardown = f"if [ -e {mark} ]; then rm {mark}; else touch {mark}; sleep 0.05; fi"
    path = tmp_path / "stateful.toml"
    path.write_text(STATEFUL_CAMPAIGN.replace("TEARDOWN", teardown))
    out = tmp_path / "out"
    run_campaign(load_campaign(path), out)
    campaign = json.loads((out / "campaign.json").read_text())
    summaries = [json.loads((out / "points" / p["id"] / "summary.json").read_text())
                 for p in campaign["points"]]
    assert [s["procedure"] for s in summaries] == ["connection-rate"] * 2 + \
        ["teardown-rate"] * 2 + ["table-capacity"] * 2
    assert [s["unit"] for s in summaries] == ["cps"] * 4 + ["connections"] * 2
    assert all(s["complete"] for s in summaries)
    assert 150_000 <= summaries[0]["median"] <= 200_000
    assert 9000 - 2000 <= summaries[4]["median"] <= 9000
    status = format_status(campaign_status(out))
    assert f"{summaries[0]['median']:,.0f} cps" in status
    assert f"{summaries[4]['median']:,.0f} connections" in status
    assert "% loss" not in status
    csv = (out / "results.csv").read_text()
    assert csv.count(",cps,") == 4 and csv.count(",connections,") == 2

    written = write_report(out)
    markdown = Path(written["markdown"]).read_text()
    rows = table_rows(markdown, "point")
    assert [r["unit"] for r in rows] == ["connections/s"] * 4 + ["connections"] * 2
    for row, summary in zip(rows, summaries):
        assert row["procedure"] == summary["procedure"]
        assert row["connections"] == str(summary["config"]["stateful"]["connections"])
        for key in ("median", "p1", "p99", "min", "max"):
            assert row[key] == format_value(summary[key], summary["unit"])
    assert row["median"] == f"{int(summaries[5]['median']):,}"    # connections, exactly
    assert "connection rates (unit cps) are connections per second" in markdown
    precision = next(r["value"] for r in table_rows(markdown, "item")
                     if r["item"] == "Search precision")
    assert "binary search on the phase-1 rate" in precision and "C0 = 1,000" in precision
    assert f"`{teardown}` (local) timed on the full table" in precision
    # Per-repetition details of each procedure.
    details = [table[0] for table in all_tables(markdown, "repetition")]
    assert len(details) == 6
    assert details[0]["connection rate (cps)"] == format_value(
        summaries[0]["repetitions"][0]["connection_rate"], "cps")
    timed = details[2]
    rate = summaries[2]["repetitions"][0]["teardown_rate"]
    assert 0 < rate < 1000 / 0.05 * 1.01                       # N / (T_N - T_0), T_N >= 50 ms
    assert timed["loaded"] == "yes" and timed["tear-down rate (cps)"] == \
        format_value(rate, "cps")
    capacity = details[4]
    found = summaries[4]["repetitions"][0]["capacity"]
    assert capacity["capacity CS (connections)"] == f"{found:,}"
    assert capacity["C0"] == "1,000"
    # The stateful reporting items (RFC 9693) and the plot against the number of connections.
    assert "| Number of connections N; state table size M |" in markdown
    check_images(written["plots"])
    names = {Path(png).stem for png, _, _ in written["plots"]}
    # One plot per procedure against the number of connections; no bars (no frame sizes swept).
    assert {"connections_connections_connection_establishment_rate",
            "connections_connections_connection_tear_down_rate",
            "connections_connections_connection_tracking_table_capacity"} <= names
    assert not any(name.startswith("bars_") for name in names)


# Finding 1 (issue 11): MLRsearch's settings have no binary-search keys (min_rate, error...);
# the report crashed formatting them as numbers, alone and as a campaign point.
def test_mlrsearch_throughput_report(base, tmp_path):
    config = load_config(str(base), ["output.repeat=2", "trial.duration=1",
                                     "throughput.mode=mlrsearch",
                                     "throughput.preset=rfc2544,ndr-pdr"])
    out = tmp_path / "mlr"
    summary = run_procedure("throughput", config, out)
    assert summary["settings"]["mode"] == "mlrsearch"
    markdown = Path(write_report(out)["markdown"]).read_text()
    precision = next(r["value"] for r in table_rows(markdown, "item")
                     if r["item"] == "Search precision")
    assert "MLRsearch" in precision and "1f1d0l0e" in precision, precision
    assert table_rows(markdown, "point")[0]["median"] == format_value(summary["median"], "fps")
    # Each goal's bounds per repetition.
    goals = table_rows(markdown, "goal")
    assert [g["goal"] for g in goals] == ["rfc2544", "ndr", "pdr"]
    assert goals[0]["conditional throughput (fps)"] == format_value(
        summary["goals"][0]["conditional_throughput"]["median"], "fps")

    path = tmp_path / "c.toml"
    path.write_text("""
[campaign]
config = "base.toml"
procedures = ["throughput"]
repeat = 1
[set]
"trial.duration" = 1
[axes]
"throughput.mode" = ["binary", "mlrsearch"]
""")
    campaign = tmp_path / "campaign"
    run_campaign(load_campaign(path), campaign)
    markdown = Path(write_report(campaign)["markdown"]).read_text()
    precision = next(r["value"] for r in table_rows(markdown, "item")
                     if r["item"] == "Search precision")
    assert "binary search in [" in precision and "MLRsearch" in precision, precision


def test_keys_that_differ_only_between_procedures_are_no_axes(tmp_path):
    """Looked at: a directory holding a latency result and a stateful connection-rate result
    plotted latency 'against stateful.capacity_error' (one point) and put every [stateful] key
    into the latency plot titles. Only keys that vary within one procedure are swept axes."""
    from xlatperf.report.collect import Entry, varying_keys

    def entry(name, procedure, **flat):
        config = {"traffic": {"frame_size": flat.get("size", 64)},
                  "stateful": {"capacity_error": flat.get("capacity_error", 1000)}}
        return Entry(name, tmp_path / name, {"procedure": procedure, "config": config})
    entries = [entry("lat", "latency"), entry("cps", "connection-rate", capacity_error=500),
               entry("tp64", "throughput"), entry("tp128", "throughput", size=128)]
    assert varying_keys(entries) == ["traffic.frame_size"]


def test_the_media_row_says_how_a_nics_ports_were_set_up():
    from xlatperf.report.tables import _port_setup
    nic = {"flow_control": {"found": "full", "now": "none"}, "mtu": 1508,
           "descriptors": {"rx": 4096, "tx": 1024}}
    assert _port_setup(nic) == ", flow control off (was full), MTU 1508, 4096/1024 RX/TX descriptors"
    kept = {**nic, "flow_control": {"found": "rx_pause", "now": "rx_pause"}}
    assert _port_setup(kept).startswith(", flow control rx_pause (left as it was), MTU 1508")
    failed = {**nic, "flow_control": {"found": "full", "now": "full", "error": "Operation not supported"}}
    assert "flow control full (could not be turned off: Operation not supported)" in _port_setup(failed)
    assert _port_setup({"flow_control": {"found": "unsupported", "now": "unsupported"}}) == ""  # virtual devices
    assert _port_setup({}) == ""  # a result recorded before ports said so
