# SPDX-License-Identifier: BSD-3-Clause
"""The report's two-dimensional tables (report/grid.py): RFC 8219 §9.2's DNS64 grid from a
campaign over dns.cache_share and dns.aaaa_share (fake engine), its cells equal to the points'
summaries, its headings in % of names, the primary result at 0 % + 0 % or the statement that
this REQUIRED point was not measured; and the same table for any two crossed numeric keys."""

import json
import os
import shutil
from pathlib import Path

import pytest

from fakes import FAKE_CONFIG
from test_report import all_tables, check_images
from xlatperf.report import write_report
from xlatperf.report.collect import collect, varying_keys
from xlatperf.report.grid import grid_tables
from xlatperf.report.units import format_value
from xlatperf.run.campaign import run_campaign
from xlatperf.run.campaignfile import load_campaign

CORNER = "repeated (cached) names ↓ / names with a AAAA record →"
# The fake DUT's limit (FAKE_DUT_LIMIT_FILE), written before each repetition: higher with more
# cache hits, lower with more AAAA records, and 0, 5 or 10 % above that by repetition, so that
# every point has its own median and its percentiles differ from it.
HOOK = ("python3 -c \"import pathlib; c = pathlib.Path('COUNTER'); n = int(c.read_text()) if "
        "c.exists() else 0; c.write_text(str(n + 1)); print(int(100000 * (1 + {dns.cache_share}) * "
        "(1 - 0.3 * {dns.aaaa_share}) * (1 + 0.05 * (n % 3))))\" > LIMIT")
CAMPAIGN = """
[campaign]
config = "base.toml"
procedures = ["dns64"]
repeat = 3
[set]
"dns.enabled" = true
"dns.server" = "2001:2::1"      # a DNS64 server: RFC 8219 §9.2's set-up
"dns.timeout" = 0.1
"trial.duration" = 1.0
"traffic.direction" = "forward"
"left.ip_version" = 6
"right.ip_version" = 6
"traffic.frame_size" = 84
"throughput.error" = 1000
"throughput.max_rate" = 400000
"dut.before_repetition" = '''HOOK'''
[axes]
"dns.cache_share" = [0.0, 0.5]
"dns.aaaa_share" = [0.0, 1.0]
"""


@pytest.fixture(scope="module")
def grid(tmp_path_factory) -> Path:
    """The campaign's directory: 2 x 2 points of 3 repetitions."""
    root = tmp_path_factory.mktemp("grid")
    (root / "base.toml").write_text(FAKE_CONFIG)
    hook = HOOK.replace("COUNTER", str(root / "counter")).replace("LIMIT", str(root / "limit"))
    (root / "c.toml").write_text(CAMPAIGN.replace("HOOK", hook))
    with pytest.MonkeyPatch.context() as patch:
        for name in [n for n in os.environ if n.startswith("FAKE_")]:
            patch.delenv(name)
        patch.setenv("FAKE_DUT_LIMIT_FILE", str(root / "limit"))
        run_campaign(load_campaign(root / "c.toml"), root / "out")
    return root / "out"


def summaries(directory: Path) -> dict[tuple, dict]:
    """Each point's summary by its (cache share, AAAA share)."""
    found = {}
    for path in (directory / "points").glob("*/summary.json"):
        summary = json.loads(path.read_text())
        found[summary["config"]["dns"]["cache_share"], summary["config"]["dns"]["aaaa_share"]] = summary
    return found


def cell(summary: dict) -> str:
    return " ".join([format_value(summary["median"], "qps"),
                     f"[{format_value(summary['p1'], 'qps')} – {format_value(summary['p99'], 'qps')}]"])


def grid_table(markdown: str) -> list[dict]:
    (rows,) = all_tables(markdown, CORNER)
    return rows


def test_dns64_grid_table_and_primary_result(grid):
    written = write_report(grid)
    markdown = Path(written["markdown"]).read_text()
    found = summaries(grid)
    assert len(found) == 4
    rows = grid_table(markdown)
    # Rows: repeated names; columns: names with a AAAA record; headings in %.
    assert [list(row) for row in rows] == [[CORNER, "0 %", "100 %"]] * 2
    assert [row[CORNER] for row in rows] == ["0 %", "50 %"]
    for row, cache in zip(rows, (0.0, 0.5)):
        for column, aaaa in (("0 %", 0.0), ("100 %", 1.0)):
            assert row[column] == cell(found[cache, aaaa])
    assert any(s["p1"] < s["median"] < s["p99"] for s in found.values())   # the hook's spread
    assert len({s["median"] for s in found.values()}) == 4
    assert ("*dns64 (RFC 8219 §9.2): median throughput (queries/s) [1st – 99th percentile] of 3 "
            "repetitions; rows: repeated (cached) names (% of the queries; dns.cache_share); "
            "columns: names with a AAAA record (% of the names; dns.aaaa_share)*") in markdown
    origin = found[0.0, 0.0]
    assert (f"**Primary result**, the REQUIRED 0 % + 0 % point (RFC 8219 §9.2; dns64: repeated (cached) "
            f"names 0 %, names with a AAAA record 0 %): median {format_value(origin['median'], 'qps')} "
            f"queries/s, 1st percentile {format_value(origin['p1'], 'qps')}, 99th percentile "
            f"{format_value(origin['p99'], 'qps')} (n = 3; RFC 8219 §9.2 asks for at least 20 "
            "repetitions).") in markdown
    assert "not measured" not in markdown.split("## Results")[1]
    # The one-dimensional excerpts: a line plot over each share in %, each line stating the
    # other share's fixed value.
    check_images(written["plots"])
    plots = {Path(png).stem: (Path(svg).read_text(), caption) for png, svg, caption in written["plots"]}
    # The points are in the table and the line plots: no chart of one bar each.
    assert not [name for name in plots if name.startswith("bars_")]
    svg, caption = plots["vs_aaaa_share_throughput"]
    assert caption == "Median against names with a AAAA record (dns.aaaa_share)"
    assert "names with a AAAA record (% of the names; dns.aaaa_share)" in svg
    assert "dns64, repeated (cached) names 0 %" in svg and "dns64, repeated (cached) names 50 %" in svg
    svg, caption = plots["vs_cache_share_throughput"]
    assert "repeated (cached) names (% of the queries; dns.cache_share)" in svg
    assert "dns64, names with a AAAA record 100 %" in svg


def test_required_point_not_measured(grid, tmp_path):
    copy = tmp_path / "grid"
    shutil.copytree(grid, copy, ignore=shutil.ignore_patterns("report"))
    for path in (copy / "points").glob("*/summary.json"):
        dns = json.loads(path.read_text())["config"]["dns"]
        if (dns["cache_share"], dns["aaaa_share"]) == (0.0, 0.0):
            path.unlink()
    markdown = Path(write_report(copy, plots=False)["markdown"]).read_text()
    assert ("**The REQUIRED 0 % + 0 % point was not measured** (RFC 8219 §9.2; dns64: repeated "
            "(cached) names 0 %, names with a AAAA record 0 %): the primary result, the median there, "
            "is missing.") in markdown
    assert "Primary result" not in markdown
    rows = grid_table(markdown)
    found = summaries(copy)
    assert rows[0]["0 %"] == "not measured" and rows[0]["100 %"] == cell(found[0.0, 1.0])
    assert rows[1]["0 %"] == cell(found[0.5, 0.0])


def test_one_swept_share_is_an_excerpt_at_the_other(grid, tmp_path):
    """Only the AAAA share swept: one row, whose heading gives the fixed share of repeated names
    (RFC 8219 §9.2: "the fixed value MUST be given")."""
    copy = tmp_path / "grid"
    shutil.copytree(grid, copy, ignore=shutil.ignore_patterns("report"))
    for path in (copy / "points").glob("*/summary.json"):
        if json.loads(path.read_text())["config"]["dns"]["cache_share"] == 0.0:
            path.unlink()
    markdown = Path(write_report(copy, plots=False)["markdown"]).read_text()
    found = summaries(copy)
    assert grid_table(markdown) == [{CORNER: "50 %", "0 %": cell(found[0.5, 0.0]),
                                     "100 %": cell(found[0.5, 1.0])}]
    assert "**The REQUIRED 0 % + 0 % point was not measured**" in markdown


def _result(root: Path, name: str, median: int, n: int = 5, procedure: str = "throughput",
            **config) -> None:
    """A summary.json with the given [section] keys (constructed, as docs/results.md
    describes)."""
    sections: dict = {}
    for key, value in config.items():
        section, _, option = key.partition("__")
        sections.setdefault(section, {})[option] = value
    directory = root / name
    directory.mkdir(parents=True)
    (directory / "summary.json").write_text(json.dumps({
        "procedure": procedure, "unit": "fps", "complete": True, "median": median,
        "p1": median - 100, "p99": median + 100, "n": n, "config": sections}))


def test_any_two_crossed_numeric_keys_make_a_table(tmp_path):
    for size in (84, 1518):
        for cores in (1, 2):
            if (size, cores) != (1518, 2):
                _result(tmp_path, f"s{size}c{cores}", 1000 * size + cores, n=5 if cores == 1 else 7,
                        traffic__frame_size=size, dut__cores=cores)
    entries = collect(tmp_path)
    (table,) = grid_tables(entries, varying_keys(entries))
    assert table.header == ["traffic.frame_size ↓ / dut.cores →", "1", "2"]
    # Repetition counts that differ are in every cell; a missing combination says so.
    assert table.rows == [["84", "84,001 [83,901 – 84,101], n = 5", "84,002 [83,902 – 84,102], n = 7"],
                          ["1518", "1,518,001 [1,517,901 – 1,518,101], n = 5", "not measured"]]
    assert table.primary is None
    assert table.caption == ("throughput: median throughput (frames/s per direction) [1st – 99th "
                             "percentile]; rows: traffic.frame_size; columns: dut.cores")


def test_keys_swept_together_or_three_numeric_keys_make_no_table(tmp_path):
    for cores in (1, 2, 4):   # a named axis: cores with their queues, a diagonal
        _result(tmp_path / "linked", f"c{cores}", 1000 * cores, dut__cores=cores, dut__queues=cores)
    for size in (84, 1518):
        for cores in (1, 2):
            for flows in (1, 10):
                _result(tmp_path / "three", f"s{size}c{cores}f{flows}", size + cores + flows,
                        traffic__frame_size=size, dut__cores=cores, dut__flows=flows)
    for directory in ("linked", "three"):
        entries = collect(tmp_path / directory)
        assert grid_tables(entries, varying_keys(entries)) == [], directory


def test_no_primary_result_without_a_dns64_server(tmp_path):
    """Queries resolved through a DUT that knows no DNS (dns.server = ""): the grid's table, but
    RFC 8219 §9.2's primary result is a DNS64 server's."""
    for cache in (0.0, 0.5):
        _result(tmp_path, f"c{cache}", 1000, procedure="dns64", dns__server="", dns__qtype="A",
                dns__cache_share=cache, dns__aaaa_share=0.0)
    entries = collect(tmp_path)
    (table,) = grid_tables(entries, varying_keys(entries))
    assert table.header == [CORNER, "0 %"] and [row[0] for row in table.rows] == ["0 %", "50 %"]
    assert table.primary is None
