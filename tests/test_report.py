# SPDX-License-Identifier: BSD-3-Clause
"""`xlatperf report` on campaign and single-procedure results (fake engine): the files, valid
PNG/SVG images, and table numbers equal to the summaries'."""

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from xlatperf.campaign import load_campaign, run_campaign
from xlatperf.config import load_config
from xlatperf.report import format_value, write_report
from xlatperf.runner import run_procedure

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
    """The rows of the Markdown table whose first column is `first_header`."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    header = [cell.strip() for cell in lines[start].strip("|").split("|")]
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")))))
    return rows


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
    assert {"frame_loss_rate", "mix_fps", "mix_ratio", "cdf_repetitions_fps"} <= names
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
    done = subprocess.run([sys.executable, "-m", "xlatperf.cli", "report", str(out), "--out",
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
    missing = subprocess.run([sys.executable, "-m", "xlatperf.cli", "report", str(tmp_path)],
                             capture_output=True, text=True, cwd=ROOT)
    assert missing.returncode == 0  # tmp_path holds tp/ (and r/): a directory of results
    empty = tmp_path / "empty"
    empty.mkdir()
    none = subprocess.run([sys.executable, "-m", "xlatperf.cli", "report", str(empty)],
                          capture_output=True, text=True, cwd=ROOT)
    assert none.returncode == 1 and "no summary.json found" in none.stderr
