# SPDX-License-Identifier: BSD-3-Clause
"""Reports: Markdown and HTML with the RFC reporting items, result tables and plots.

    from xlatperf.report import write_report
    write_report("results/campaign1")         # -> results/campaign1/report/report.md, .html

The input is any results directory: one procedure's (summary.json at its top), a campaign's
(campaign.json, points/*/summary.json), or a directory holding several of either. The report
is built from the summaries (docs/results.md) and, for delay distributions, the trials they
summarise, so it can be made again at any time.

How the parts fit: collect.py reads the directories; each summary is rendered by the renderer
of its procedure's report family (families.py, chosen by the registry's ProcedureSpec.report)
with its unit's formatting (units.py) and its swept keys' names (axes.py); tables.py builds the
tables, grid.py the two-dimensional ones (RFC 8219 §9.2's DNS64 grid), plots.py the figures,
document.py writes Markdown and HTML.
"""

from pathlib import Path

from ..util.errors import XlatperfError
from ..util.files import utc_timestamp
from .collect import REPORT_DIR, collect, not_measured, varying_keys
from .document import Document
from .grid import grid_tables
from .plots import Plotter, draw_all
from .tables import detail_tables, reporting_items, results_table


def build_report(directory, report_dir: Path, plots: bool = True) -> tuple[Document, list]:
    directory = Path(directory)
    entries = collect(directory)
    if not entries:
        raise XlatperfError(f"{directory}: no summary.json found (nothing measured yet?)")
    axes = varying_keys(entries)
    doc = Document()
    doc.heading(1, f"xlatperf report: {directory.name}")
    doc.paragraph(f"Results in `{directory}`, {len(entries)} measurement(s); report generated "
                  f"{utc_timestamp()}. Rates are frames per second per direction (RFC 2544 §14)"
                  + ("; connection rates (unit cps) are connections per second, table "
                     "capacities numbers of connections (RFC 9693)"
                     if any(e.unit in ("cps", "connections") for e in entries) else "")
                  + ("; DNS rates (unit qps) are queries per second, each a query and its answer "
                     "(RFC 8219 §9)" if any(e.unit == "qps" for e in entries) else "") + "."
                  + (" Delays are in ms in the tables (RFC 8219's unit) and in µs in the plots."
                     if any(e.unit == "ms" for e in entries) else ""))
    incomplete = [e.name for e in entries if not e.summary.get("complete")]
    if incomplete:
        doc.paragraph(f"**Incomplete** (interrupted) measurements: {', '.join(incomplete)}; "
                      "their statistics cover only what was measured.")
    doc.heading(2, "Reporting items")
    doc.table(["item", "value"], reporting_items(entries))
    doc.heading(2, "Results")
    if axes:
        doc.paragraph("Swept configuration keys: " + ", ".join(f"`{k}`" for k in axes) + ".")
    header, rows = results_table(entries, axes)
    doc.table(header, rows, "Summary of every measurement (median over repetitions)")
    for point in not_measured(directory):
        labels = ", ".join(f"{k}={v}" for k, v in point["labels"].items())
        doc.paragraph(f"**Not measured**: point {point['index']} ({point['procedure']}"
                      f"{', ' + labels if labels else ''}): {point['reason']}")
    for grid in grid_tables(entries, axes):
        if grid.primary:
            doc.paragraph(grid.primary)
        doc.table(grid.header, grid.rows, grid.caption)
    written = []
    if plots:
        plotter = Plotter(report_dir / "plots", report_dir)
        draw_all(plotter, entries, axes)
        if plotter.written:
            doc.heading(2, "Figures")
            for png, svg, caption in plotter.written:
                doc.figure(png, svg, caption)
        written = plotter.written
    doc.heading(2, "Details")
    for entry in entries:
        detail_tables(doc, entry, axes)
    return doc, written


def write_report(directory, out_dir=None, plots: bool = True) -> dict:
    """Write report.md, report.html and plots/*.png|svg into out_dir (default DIR/report).
    Returns {"markdown", "html", "plots": [(png, svg, caption)]}."""
    directory = Path(directory)
    report_dir = Path(out_dir) if out_dir else directory / REPORT_DIR
    try:
        report_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise XlatperfError(f"{report_dir}: {exc.strerror or exc}") from None
    doc, written = build_report(directory, report_dir, plots)
    markdown, html_path = report_dir / "report.md", report_dir / "report.html"
    markdown.write_text(doc.markdown(), encoding="utf-8")
    html_path.write_text(doc.html(f"xlatperf report: {directory.name}"), encoding="utf-8")
    return {"markdown": str(markdown), "html": str(html_path),
            "plots": [(str(report_dir / png), str(report_dir / svg), caption)
                      for png, svg, caption in written]}
