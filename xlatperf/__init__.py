# SPDX-License-Identifier: BSD-3-Clause
"""xlatperf: benchmarking tester for IPv4/IPv6 routers and translators (RFC 2544/5180/8219).

The command line is a thin layer over this API (docs/campaigns.md, "Python API"):

    from xlatperf import load_config, run_procedure, load_campaign, run_campaign, write_report

    for size in (84, 1518):
        config = load_config("lab.toml", [f"traffic.frame_size={size}", "output.repeat=20"])
        summary = run_procedure("throughput", config, f"results/tp-{size}")
        print(size, summary["median"], summary["p1"], summary["p99"])
    write_report("results")                             # results/report/report.md, .html

    run_campaign(load_campaign("sizes.toml"), "results/sizes")   # resumable sweeps
    write_report("results/sizes")

Names (imported on first use, so `import xlatperf` stays light):
    load_config, validate             configuration (xlatperf.config)
    run_procedure, Reporter           measurements (xlatperf.run, xlatperf.measure)
    REGISTRY                          the procedures (xlatperf.procedures)
    load_campaign, parse_campaign     the campaign file (xlatperf.run.campaignfile)
    run_campaign, campaign_status     resumable sweeps (xlatperf.run.campaign, .campaignstatus)
    write_report                      Markdown/HTML reports and plots (xlatperf.report)
    import_siitperf                   siitperf.conf conversion (xlatperf.config.siitperf)
    decide, median_interval           adaptive repetitions (xlatperf.run.adaptive)
    binary_search, frame_loss_scan    the procedures as functions of a trial runner
    XlatperfError, ConfigError, EngineError, MeasurementError

The package is layered (docs/architecture.md): util < config, lab < engine < traffic <
measure < procedures < report < run < ui; a module imports only from its own layer and the
layers below it (tests/test_layers.py).
"""

__version__ = "0.1.0"

_EXPORTS = {
    "load_config": "config.loading", "validate": "config.loading",
    "run_procedure": "run.runner", "Reporter": "measure.session", "REGISTRY": "procedures",
    "load_campaign": "run.campaignfile", "parse_campaign": "run.campaignfile",
    "run_campaign": "run.campaign", "campaign_status": "run.campaignstatus",
    "write_report": "report.report",
    "import_siitperf": "config.siitperf",
    "decide": "run.adaptive", "median_interval": "run.adaptive",
    "binary_search": "procedures.search", "frame_loss_scan": "procedures.search",
    "XlatperfError": "util.errors", "ConfigError": "util.errors", "EngineError": "util.errors",
    "MeasurementError": "util.errors",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'xlatperf' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(__all__)
