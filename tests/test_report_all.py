# SPDX-License-Identifier: BSD-3-Clause
"""`xlatperf report` renders every registered procedure (issue 11): a result of each, made with
tests/fake_engine.py, alone, all of them in one directory, and a campaign mixing several, in
Markdown, HTML and plots; titles, axis labels and units are checked against the procedure's
registered unit, and the numbers on the delay plots against what the fake engine measured.

The figures are inspected as matplotlib drew them (Figure.savefig is wrapped to record each
axis's title, labels and data), and the SVGs by their text."""

import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import matplotlib.figure
import pytest

from fakes import FAKE_CONFIG, FAKE_ENGINE
from xlatperf.config import load_config
from xlatperf.procedures import REGISTRY
from xlatperf.report import write_report
from xlatperf.report.families import FAMILIES
from xlatperf.run import run_procedure
from xlatperf.run.campaign import run_campaign
from xlatperf.run.campaignfile import load_campaign
from xlatperf.report.collect import collect
from xlatperf.ui.console import render_summary

# The port ranges the RFC 9693 procedures enumerate (500 x 100 four-tuples) are set for every
# procedure, so that the results of all procedures differ only in a few keys (fewer swept axes
# in the report of all of them together: fewer plots to draw).
BASE = [f"tester.engine={FAKE_ENGINE}", "tester.netns=", "tester.hugepages=no",
        "left.port=null", "right.port=null", "trial.pause=0", "trial.duration=1",
        "output.repeat=5", "throughput.error=100000", "latency.delay=0.5",
        "ports.forward_src=random", "ports.forward_src_min=1024", "ports.forward_src_max=1523",
        "ports.forward_dst=random", "ports.forward_dst_min=1", "ports.forward_dst_max=100",
        "stateful.connections=1000", "stateful.rate_phase1=100000", "stateful.timeout_phase1=0",
        "stateful.error=100000", "stateful.max_rate=400000", "stateful.capacity_error=1000"]
STATEFUL = ["dut.before_trial=true"]
STATEFUL_DUT = {"FAKE_CONN_RATE": "200000", "FAKE_TABLE_CAPACITY": "3000"}
# The fake engine's delays (FAKE_DELAY_NS, default 10,000 ns): tagged frame j is 10,000 + j ns,
# every frame's histogram spans 10,000..20,000 ns.
DELAY_NS = 10_000

# name: (procedure, overrides, rate, fake-DUT environment)
CASES = {
    "throughput": ("throughput", [], None, {"FAKE_DUT_LIMIT": "3000000"}),
    "throughput-mlrsearch": ("throughput", ["throughput.mode=mlrsearch",
                                            "throughput.preset=rfc2544,ndr-pdr"], None,
                             {"FAKE_DUT_LIMIT": "3000000"}),
    "frame-loss": ("frame-loss", [], None, {"FAKE_DUT_LIMIT": "9000000"}),
    "dns64": ("dns64", ["dns.enabled=true", "dns.qtype=A", "traffic.direction=forward", "dns.repeat=5"], None,
              {"FAKE_DUT_LIMIT": "3000000"}),
    "trial": ("trial", [], 1000, {}),
    "selftest": ("selftest", [], None, {"FAKE_TESTER_LIMIT": "5000000"}),
    "latency": ("latency", [], 5000, {"FAKE_TAGGED_LOST": "1"}),
    "pdv": ("pdv", ["pdv.ipdv=true"], 5000, {}),
    "connection-rate": ("connection-rate", STATEFUL, None, STATEFUL_DUT),
    "teardown-rate": ("teardown-rate", [*STATEFUL, "dut.teardown=TEARDOWN"], None, {}),
    "table-capacity": ("table-capacity", STATEFUL, None, STATEFUL_DUT),
    "back-to-back": ("back-to-back", ["back_to_back.repeat=5", "back_to_back.max_time=0.05",
                                      "back_to_back.step=1000",
                                      "back_to_back.throughput=1000000"], 2000000,
                     {"FAKE_DUT_LIMIT": "1000000", "FAKE_DUT_BUFFER": "30000"}),
    "scalability": ("scalability", ["scalability.flows=[1, 4, 16]", "addresses.left=increasing",
                                    "ports.forward_src=fixed", "ports.forward_dst=fixed"], None,
                    {"FAKE_DUT_LIMIT": "3000000", "FAKE_DUT_CLIENT_PENALTY": "0.05"}),
    "recovery": ("recovery", ["recovery.repeat=5", "recovery.overload=0.5",
                              "recovery.window=0.5"], 1000000,
                 {"FAKE_DUT_LIMIT": "1000000", "FAKE_DUT_RECOVERY": "0.1"}),
    "reset": ("reset", ["reset.repeat=5", "dut.during_trial=echo 0.1 > OUTAGE",
                        "dut.during_trial_at=0.1"], 100000,
              {"FAKE_TRIAL_SECONDS": "0.3", "FAKE_DUT_OUTAGE_FILE": "OUTAGE"}),
}
# The unit each registered unit is shown in: the results table's column, and the parenthesis
# of a plot axis that shows such a value. A new unit must be added here (KeyError otherwise).
TABLE_UNIT = {"fps": "frames/s per direction", "ratio": "loss ratio, shown in %", "ms": "ms",
              "cps": "connections/s", "connections": "connections", "frames": "frames",
              "%": "%", "s": "s", "qps": "queries/s"}
AXIS_UNIT = {"fps": "(frames/s per direction)", "ratio": "(%)", "ms": "(µs)",
             "cps": "(connections/s)", "connections": "(connections)", "frames": "(frames)",
             "%": "(%)", "s": "(s)", "qps": "(queries/s)"}
# Axis labels of dimensionless axes; every other axis label names its unit in parentheses, or
# is a swept configuration key (in the key's own unit).
UNITLESS = ("repetition", "cumulative fraction of ")

CAMPAIGN = """
[campaign]
config = "base.toml"
procedures = ["throughput", "frame-loss", "trial", "connection-rate", "teardown-rate",
              "table-capacity"]
repeat = 5
rate = 400000
[set]
SETTINGS
[[points]]
"throughput.mode" = "binary"
[[points]]
"throughput.mode" = "mlrsearch"
"""


def test_every_registered_procedure_has_a_case_and_a_renderer():
    assert {procedure for procedure, *_ in CASES.values()} == set(REGISTRY)
    assert {spec.unit for spec in REGISTRY.values()} <= set(TABLE_UNIT) & set(AXIS_UNIT)
    families = {spec.report for spec in REGISTRY.values()}
    assert families <= set(FAMILIES)


def _environment(patch, environment: dict) -> None:
    for name in list(os.environ):
        if name.startswith("FAKE_"):
            patch.delenv(name)
    for name, value in environment.items():
        patch.setenv(name, value)


def _teardown_hook(directory: Path) -> str:
    """The fake DUT's tear-down: slow on the full table (the first run of each repetition), fast
    on the empty one, so that T_N > T_0 and every repetition has a rate."""
    mark = directory / "full"
    return f"if [ -e {mark} ]; then rm {mark}; else touch {mark}; sleep 0.05; fi"


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """Every case's result under ROOT/all/<case>/, and a campaign under ROOT/campaign/."""
    root = tmp_path_factory.mktemp("report_all")
    hook = _teardown_hook(root)
    with pytest.MonkeyPatch.context() as patch:
        outage = str(root / "outage")    # the reset case's fake DUT outage file
        for case, (procedure, overrides, rate, environment) in CASES.items():
            _environment(patch, {k: v.replace("OUTAGE", outage) for k, v in environment.items()})
            overrides = [o.replace("TEARDOWN", hook).replace("OUTAGE", outage)
                         for o in overrides]
            summary = run_procedure(procedure, load_config(None, [*BASE, *overrides]),
                                    root / "all" / case, rate=rate)
            assert summary["complete"] and summary["median"] is not None, case
        _environment(patch, {"FAKE_DUT_LIMIT": "3000000", **STATEFUL_DUT})
        base = root / "base.toml"
        base.write_text(FAKE_CONFIG)
        settings = [o for o in BASE[5:] if not o.startswith("output.")] + [
            *STATEFUL, "dut.teardown=TEARDOWN", "throughput.preset=rfc2544,ndr-pdr"]
        path = root / "campaign.toml"
        path.write_text(CAMPAIGN.replace("SETTINGS", "\n".join(
            _toml(o.replace("TEARDOWN", hook)) for o in settings)))
        run_campaign(load_campaign(path), root / "campaign")
    return root


def _toml(override: str) -> str:
    """A --set override as a campaign [set] line: numbers as numbers, anything else a string."""
    key, value = override.split("=", 1)
    for kind in (int, float):
        try:
            return f'"{key}" = {kind(value)}'
        except ValueError:
            pass
    return f'"{key}" = {json.dumps(value)}'


class Figures:
    """What Figure.savefig was asked to save: per file name (without suffix), each axis's
    title, labels, legend texts and the data of its lines."""

    def __init__(self, patch):
        self.seen: dict[str, list[dict]] = {}
        original = matplotlib.figure.Figure.savefig

        def savefig(figure, name, *args, **kwargs):
            self.seen[Path(str(name)).stem] = [{
                "title": ax.get_title(), "x": ax.get_xlabel(), "y": ax.get_ylabel(),
                "legend": [t.get_text() for t in ax.get_legend().get_texts()]
                if ax.get_legend() else [],
                "lines": [(list(line.get_xdata()), list(line.get_ydata()))
                          for line in ax.get_lines()]}
                for ax in figure.get_axes()]
            return original(figure, name, *args, **kwargs)
        patch.setattr(matplotlib.figure.Figure, "savefig", savefig)


def _report(directory: Path, out: Path) -> tuple[dict, str, str, Figures]:
    with pytest.MonkeyPatch.context() as patch:
        figures = Figures(patch)
        written = write_report(directory, out)
    return (written, Path(written["markdown"]).read_text(), Path(written["html"]).read_text(),
            figures)


def _results_rows(markdown: str) -> list[dict]:
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| point |"))
    header = [c.strip() for c in lines[start].strip("|").split("|")]
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(header, (c.strip() for c in line.strip("|").split("|")))))
    return rows


def _svg_text(svg: str) -> str:
    return " ".join("".join(e.itertext()) for e in ET.parse(svg).getroot().iter()
                    if e.tag.endswith("text"))


def _check_documents(written: dict, markdown: str, html: str, figures: Figures,
                     units: list[str]) -> None:
    """Every plot is in both documents, saved as PNG and SVG, titled, and labelled with units;
    the results table names each measurement's unit."""
    assert html.startswith("<!DOCTYPE html>") and "<h2>Reporting items</h2>" in html
    assert [r["unit"] for r in _results_rows(markdown)] == [TABLE_UNIT[u] for u in units]
    for png, svg, caption in written["plots"]:
        name = Path(png).stem
        assert f"plots/{name}.png" in markdown and f'src="plots/{name}.svg"' in html, name
        assert Path(png).read_bytes().startswith(b"\x89PNG"), name
        axes = figures.seen[name]
        assert caption and any(ax["title"] for ax in axes), name
        text = _svg_text(svg)
        for ax in axes:
            for label in (ax["x"], ax["y"]):
                assert label.startswith(UNITLESS) or label.endswith(")") or \
                    re.fullmatch(r"[a-z0-9_]+\.[a-z0-9_]+", label), (name, label)
                assert label in text, (name, label)   # what the SVG shows


def _value_axes(figures: Figures, unit: str) -> list[str]:
    """The axis labels of the saved figures that show a value in `unit`."""
    return [label for axes in figures.seen.values() for ax in axes for label in (ax["x"], ax["y"])
            if label.endswith(AXIS_UNIT[unit])]


@pytest.mark.parametrize("case", CASES)
def test_each_procedure_alone(case, results, tmp_path):
    procedure = CASES[case][0]
    spec = REGISTRY[procedure]
    written, markdown, html, figures = _report(results / "all" / case, tmp_path / "report")
    assert markdown.startswith(f"# xlatperf report: {case}\n")
    assert f"<title>xlatperf report: {case}</title>" in html
    _check_documents(written, markdown, html, figures, [spec.unit])
    row = _results_rows(markdown)[0]
    assert row["procedure"] == procedure and row["median"] not in ("-", "")
    # Each result is plotted at least once, on an axis in its unit (5 repetitions: at least
    # the distribution of the repetitions' results).
    assert _value_axes(figures, spec.unit), (case, list(figures.seen))
    if spec.report == "delay":
        for axes in figures.seen.values():
            for ax in axes:
                assert "loss" not in (ax["x"] + ax["y"]).lower(), ax


@pytest.mark.parametrize("case", CASES)
def test_the_console_shows_the_reports_tables(case, results):
    """The console renders the family's own tables (report/families): every caption, column
    and cell of the report's detail tables, and every note and warning, are in the console's
    result."""
    from rich.console import Console
    (entry,) = collect(results / "all" / case)
    console = Console(record=True, width=2000)
    console.print(render_summary(entry.summary))
    shown = console.export_text()
    found = FAMILIES[entry.family]
    tables = found.details(entry)
    assert tables, case     # every registered family has a detail table
    for header, rows, caption in tables:
        # A caption wider than its table is wrapped over lines, as a title.
        assert " ".join(caption.split()) in " ".join(shown.split()), (case, caption)
        for text in header + [cell for row in rows for cell in row]:
            assert text in shown, (case, caption, text)
    for text in found.notes(entry) + found.warnings(entry):
        assert text in shown, (case, text)
    assert f"search: {found.precision(entry)}" in shown


def _delay_plots(figures: Figures, kind: str) -> list[dict]:
    return [ax for name, axes in figures.seen.items() if kind in name for ax in axes]


def test_latency_plots_show_the_delays(results, tmp_path):
    """Finding 2: TL and WCL per repetition and the tagged frames' delays, in µs."""
    summary = json.loads((results / "all" / "latency" / "summary.json").read_text())
    written, markdown, html, figures = _report(results / "all" / "latency", tmp_path / "r")
    (per_repetition,) = _delay_plots(figures, "latency_per_repetition")
    assert per_repetition["x"] == "repetition" and per_repetition["y"] == "latency (µs)"
    tl = summary["repetitions"][0]["directions"]["forward"]["tl_ms"]
    forward = per_repetition["legend"].index("TL forward")
    xs, ys = per_repetition["lines"][forward]
    assert xs == [1, 2, 3, 4, 5] and ys == pytest.approx([1000 * tl] * 5)
    # The one lost tag per trial makes every WCL infinite: said, not drawn as a number.
    assert "WCL forward (∞ in 5 of 5: lost tagged frames, not drawn)" in per_repetition["legend"]
    (distribution,) = _delay_plots(figures, "distribution")
    assert distribution["x"] == "one-way delay (µs)"
    assert distribution["y"] == "cumulative fraction of tagged frames"
    xs, ys = distribution["lines"][0]
    tagged = summary["settings"]["timestamps"]
    # Tagged frame j has 10,000 + j ns; frame 0 of each trial is lost (+∞).
    assert min(xs) == pytest.approx((DELAY_NS + 1) / 1000)
    assert max(xs) == pytest.approx((DELAY_NS + tagged - 1) / 1000)
    assert max(ys) == pytest.approx((tagged - 1) / tagged)      # the curve ends below 1
    assert "loss ratio" not in _svg_text(written["plots"][0][1])


def test_pdv_plots_show_the_delay_variation(results, tmp_path):
    """Finding 2: PDV and IPDV per repetition, every frame's delay from the histograms, in µs."""
    summary = json.loads((results / "all" / "pdv" / "summary.json").read_text())
    written, markdown, html, figures = _report(results / "all" / "pdv", tmp_path / "r")
    (per_repetition,) = _delay_plots(figures, "delay_variation_per_repetition")
    assert per_repetition["y"] == "delay variation (µs)"
    assert {"PDV forward", "IPDV min forward", "IPDV median forward", "IPDV max forward",
            "PDV reverse"} <= set(per_repetition["legend"])
    pdv = summary["repetitions"][0]["directions"]["forward"]["pdv_ms"]
    _, ys = per_repetition["lines"][per_repetition["legend"].index("PDV forward")]
    assert ys == pytest.approx([1000 * pdv] * 5)
    (distribution,) = _delay_plots(figures, "distribution")
    assert distribution["x"] == "one-way delay (µs)"
    assert distribution["y"] == "cumulative fraction of received frames"
    xs, ys = distribution["lines"][0]
    # The fake histogram: half the frames in [D, 1.5 D), half in [1.5 D, 2 D + 1 ns).
    assert xs == pytest.approx([DELAY_NS / 1000, 1.5 * DELAY_NS / 1000,
                                (2 * DELAY_NS + 1) / 1000])
    assert ys == pytest.approx([0, 0.5, 1])
    assert any("25,000" in text for text in distribution["legend"])   # 5 trials x 5,000


def test_all_procedures_in_one_directory(results, tmp_path):
    written, markdown, html, figures = _report(results / "all", tmp_path / "report")
    rows = _results_rows(markdown)
    assert sorted(r["point"] for r in rows) == sorted(CASES)
    units = [REGISTRY[CASES[r["point"]][0]].unit for r in rows]
    _check_documents(written, markdown, html, figures, units)
    for unit in set(units):
        assert _value_axes(figures, unit), unit
    # Different quantities never share an axis: one distribution plot per quantity.
    cdfs = {name: axes[0]["x"] for name, axes in figures.seen.items()
            if name.startswith("cdf_repetitions_")}
    assert len(set(cdfs.values())) == len(cdfs) >= 6
    # Delays are never called loss ratios.
    for name, axes in figures.seen.items():
        labels = " ".join(ax["x"] + ax["y"] for ax in axes)
        if "latency" in labels or "PDV" in labels or "delay" in labels:
            assert "loss" not in labels, name


def test_campaign_mixing_procedures(results, tmp_path):
    out = results / "campaign"
    campaign = json.loads((out / "campaign.json").read_text())
    written, markdown, html, figures = _report(out, tmp_path / "report")
    rows = _results_rows(markdown)
    assert len(rows) == len(campaign["points"]) == 6 * 2
    procedures = [json.loads((out / "points" / p["id"] / "summary.json").read_text())
                  ["procedure"] for p in campaign["points"]]
    assert [r["procedure"] for r in rows] == procedures
    _check_documents(written, markdown, html, figures,
                     [REGISTRY[p].unit for p in procedures])
    precision = next(line for line in markdown.splitlines()
                     if line.startswith("| Search precision |"))
    assert "binary search in [" in precision and "MLRsearch" in precision
    for unit in ("fps", "ratio", "cps", "connections"):
        assert _value_axes(figures, unit), unit
