# SPDX-License-Identifier: BSD-3-Clause
"""Command line.

    xlatperf PROCEDURE -c FILE [--set KEY=VALUE ...] [--duration S] [--repeat N] --out DIR
        PROCEDURE: trial [--rate R] | throughput | frame-loss [--rates R1,R2,...] | selftest
                 | back-to-back [--rate R] [--throughput-from THROUGHPUT_DIR]   (RFC 9004)
                 | scalability [--flows 1,4,16,...]   (RFC 8219 §10)
                 | latency --rate R | pdv --rate R   (or --rate-from THROUGHPUT_DIR)
                 | recovery --rate R | reset --rate R   (or --rate-from; RFC 2544 §26.5, §26.6)
                 | connection-rate | teardown-rate | table-capacity   (RFC 9693, docs/stateful.md)
        --stateful: RFC 9693 phase 1 before every trial (stateful.enabled = true)
    xlatperf campaign run FILE --out DIR     (resumes when DIR holds an interrupted run)
    xlatperf campaign status DIR
    xlatperf report DIR [--out REPORT_DIR]
    xlatperf import SIITPERF_CONF -o OUT.toml [--cmdline "SIZE RATE DURATION TIMEOUT n m ..."]
    xlatperf lab up KIND [--param NAME=VALUE ...] --config-out FILE
    xlatperf lab down

Exit status: 0 when the measurement completed; 1 on an error, with exactly one line
`xlatperf: error: <reason>` on stderr; 2 for a usage error (same one-line form); 130 when
interrupted (Ctrl-C), after writing the incomplete summary.
"""

import argparse
import json
import os
import shutil
import signal
import sys
import threading

from .. import __version__
from ..config.compliance import compliance_warnings
from ..config.loading import load_config
from ..engine.client import memory_of
from ..procedures import REGISTRY
from ..util.errors import XlatperfError

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(XlatperfError):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse prints the usage and then the error; the contract is one line."""

    def error(self, message):
        raise UsageError(message)


class _LabParser(_Parser):
    """The lab's actions. With kinds_help, the help ends with the lab kinds and their
    parameters from the lab's registry, imported only then (the lab is imported when used)."""

    def __init__(self, *args, kinds_help: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.kinds_help = kinds_help

    def format_help(self) -> str:
        if self.kinds_help:
            from ..lab.kinds import format_kinds
            width = max(shutil.get_terminal_size().columns - 2, 60)   # as argparse's own text
            self.epilog = ("kinds (KIND: what it is, then its parameters as NAME=DEFAULT, for "
                           "--param NAME=VALUE):\n\n" + format_kinds(width))
        return super().format_help()


def _assignment(text: str) -> str:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=VALUE")
    return text


def _rate_list(text: str) -> list[int]:
    try:
        rates = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        rates = []
    if not rates or any(rate <= 0 for rate in rates):
        raise argparse.ArgumentTypeError(
            f"{text!r}: must be a comma-separated list of positive integers (frames/s)")
    return rates


def _literal(text: str) -> str:
    """A help text from elsewhere (a procedure's registration) as argparse prints it: argparse
    %-formats help strings, so a "110 %" would break every --help."""
    return text.replace("%", "%%")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="xlatperf", description="Benchmarking tester for IPv4/IPv6 routers "
                     "and translators (RFC 2544, RFC 5180, RFC 8219).")
    parser.add_argument("--version", action="version", version=f"xlatperf {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    common = _Parser(add_help=False)
    common.add_argument("-c", "--config", required=True, metavar="FILE",
                        help="TOML configuration (docs/config.md)")
    common.add_argument("--set", dest="overrides", action="append", default=[],
                        type=_assignment, metavar="KEY=VALUE",
                        help="override a configuration key, e.g. trial.duration=10 (repeatable)")
    common.add_argument("--duration", type=float, metavar="S",
                        help="seconds of sending per trial (trial.duration)")
    common.add_argument("--repeat", type=int, metavar="N",
                        help="repetitions of the whole procedure (output.repeat; "
                             "back-to-back: back_to_back.repeat)")
    common.add_argument("--out", required=True, metavar="DIR",
                        help="result directory (trials.jsonl, summary.json, summary.csv)")
    common.add_argument("--stateful", action="store_true",
                        help="RFC 9693 stateful test: phase 1 (connections, state table) before "
                             "every trial (stateful.enabled = true; docs/stateful.md)")
    common.add_argument("--resume", action="store_true",
                        help="keep the finished repetitions of an interrupted run into --out "
                             "and run only the rest")
    display = _Parser(add_help=False)
    display.add_argument("-q", "--quiet", action="store_true",
                         help="print nothing but errors (results are in --out)")
    display.add_argument("--json", action="store_true",
                         help="print progress as JSON lines (docs/campaigns.md) instead")
    display.add_argument("--log-interval", type=float, metavar="S",
                         help="also log a status line every S seconds during trials")

    for spec in REGISTRY.values():  # one subcommand per registered procedure
        command = commands.add_parser(spec.name, parents=[common, display], help=_literal(spec.help))
        if spec.rate_option == "optional":
            command.add_argument("--rate", type=int, metavar="R",
                                 help="frames/s per direction (default: the medium's maximum)")
        elif spec.rate_option == "required":
            rate = command.add_mutually_exclusive_group(required=True)
            rate.add_argument("--rate", type=int, metavar="R",
                              help="frames/s per direction, normally the measured throughput")
            rate.add_argument("--rate-from", metavar="DIR",
                              help="use the throughput (median) of a throughput result "
                                   "directory")
        if spec.rates_option:
            command.add_argument("--rates", type=_rate_list, metavar="R1,R2,...",
                                 help="explicit rates in frames/s instead of the scan "
                                      "(frame_loss.rates)")
        for option in spec.key_options:   # options that set one of the procedure's keys
            command.add_argument(option.flag, dest=_option_dest(option), metavar=option.metavar,
                                 help=_literal(f"{option.help} ({option.key})"))

    campaign = commands.add_parser("campaign", help="sweeps over configuration keys")
    campaign_commands = campaign.add_subparsers(dest="campaign_command", required=True,
                                                metavar="ACTION")
    campaign_run = campaign_commands.add_parser(
        "run", parents=[display], help="run (or resume) a campaign file (docs/campaigns.md)")
    campaign_run.add_argument("file", metavar="FILE")
    campaign_run.add_argument("--out", required=True, metavar="DIR")
    campaign_status = campaign_commands.add_parser("status", help="progress of a campaign")
    campaign_status.add_argument("directory", metavar="DIR")
    campaign_status.add_argument("--json", action="store_true", help="print JSON")

    report = commands.add_parser("report", help="Markdown/HTML report and plots of results")
    report.add_argument("directory", metavar="DIR",
                        help="a result directory (one procedure) or a campaign directory")
    report.add_argument("--out", metavar="REPORT_DIR", help="default: DIR/report")
    report.add_argument("--no-plots", action="store_true", help="tables only (no matplotlib)")

    importer = commands.add_parser("import", help="convert a siitperf.conf (docs/siitperf.md)")
    importer.add_argument("file", metavar="SIITPERF_CONF")
    importer.add_argument("-o", "--output", required=True, metavar="OUT.toml")
    importer.add_argument("--cmdline", metavar="ARGS",
                          help="siitperf-tp's command line arguments to convert too: "
                               "\"SIZE RATE DURATION TIMEOUT n m\", with Stateful 1|2 "
                               "followed by \"N M R T D\"")

    doctor = commands.add_parser("doctor", help="is this host ready to measure with the config's ports? "
                                 "(docs/hardware.md)")
    doctor.add_argument("-c", "--config", required=True, metavar="FILE", help="TOML configuration (docs/config.md)")
    doctor.add_argument("--set", dest="overrides", action="append", default=[], type=_assignment,
                        metavar="KEY=VALUE", help="override a configuration key (repeatable)")
    doctor.add_argument("--json", action="store_true", help="print the checks as a JSON list")
    doctor.add_argument("--root", default="/", help=argparse.SUPPRESS)  # a fake /sys and /proc (tests)

    lab = commands.add_parser("lab", help="network-namespace testbeds")
    lab_commands = lab.add_subparsers(dest="lab_command", required=True, metavar="ACTION",
                                      parser_class=_LabParser)
    up = lab_commands.add_parser("up", help="build a testbed and write a config for it",
                                 kinds_help=True,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    up.add_argument("kind", metavar="KIND", help="the lab kind (listed below)")
    up.add_argument("--param", dest="params", action="append", default=[], type=_assignment,
                    metavar="NAME=VALUE", help="testbed parameter (repeatable)")
    up.add_argument("--config-out", required=True, metavar="FILE")
    lab_commands.add_parser("down", help="remove the testbed")
    return parser


def _option_dest(option) -> str:
    return "key_" + option.key.replace(".", "_")


def _option_value(option, text: str) -> str:
    """A key option's text as a --set value: a string key's text as it is; a list as TOML."""
    if option.is_list:
        return "[" + ", ".join(part.strip() for part in text.split(",") if part.strip()) + "]"
    return text


def _overrides(args) -> list[str]:
    """--set assignments first, then the dedicated options (which therefore win)."""
    overrides = list(args.overrides)
    spec = REGISTRY.get(args.command)
    if args.duration is not None:
        overrides.append(f"trial.duration={args.duration!r}")
    if args.repeat is not None:   # output.repeat, or the procedure's own repetition key
        overrides.append(f"{spec.repeat_key if spec else 'output.repeat'}={args.repeat}")
    for option in spec.key_options if spec else ():
        value = getattr(args, _option_dest(option), None)
        if value is not None:
            overrides.append(f"{option.key}={_option_value(option, value)}")
    if getattr(args, "rates", None):
        overrides.append(f"frame_loss.rates={args.rates!r}")
    if getattr(args, "stateful", False):
        overrides.append("stateful.enabled=true")
    return overrides


def _reporter(args):
    """The display chosen by -q / --json / --log-interval (None: quiet)."""
    if args.log_interval is not None and args.log_interval <= 0:
        raise UsageError(f"--log-interval {args.log_interval:g}: must be > 0 seconds")
    if args.json:
        from .progress import JsonLinesReporter
        return JsonLinesReporter(log_interval=args.log_interval)
    if args.quiet:
        return None
    # Imported here so `xlatperf lab ...` and --help do not need rich.
    from .console import ConsoleReporter
    return ConsoleReporter(log_interval=args.log_interval)


def run_measurement(args) -> int:
    from ..run.runner import run_procedure

    config = load_config(args.config, _overrides(args))
    for warning in compliance_warnings(config):  # before a long run, not only in its result
        print(f"xlatperf: warning: {warning}", file=sys.stderr)
    # "auto" that falls back to --no-huge says so (results state it too: tester.memory).
    if config.tester.hugepages == "auto" and not config.tester.ssh and (memory := memory_of(config)) != "hugepages":
        print(f"xlatperf: note: the engine runs on {memory}", file=sys.stderr)
    rate, source = getattr(args, "rate", None), None
    if getattr(args, "rate_from", None):
        from ..procedures.delay import rate_source_of
        source = rate_source_of(args.rate_from)
        rate = source["rate"]
    reporter = _reporter(args)
    try:
        summary = run_procedure(args.command, config, args.out, rate=rate,
                                reporter=reporter, resume=args.resume, rate_source=source)
    finally:
        if reporter is not None:
            reporter.close()
    if reporter is not None and hasattr(reporter, "console"):
        from .console import render_summary
        reporter.console.print(render_summary(summary))
        reporter.console.print(f"results: {os.path.join(args.out, 'summary.json')}")
    return EXIT_OK


def run_campaign_command(args) -> int:
    from ..run.campaign import run_campaign
    from ..run.campaignfile import load_campaign
    from ..run.campaignstatus import campaign_status, format_status

    if args.campaign_command == "status":
        status = campaign_status(args.directory)
        if args.json:
            print(json.dumps(status, indent=2, default=str))
        else:
            print(format_status(status))
        return EXIT_OK
    loaded = load_campaign(args.file)
    reporter = _reporter(args)
    try:
        status = run_campaign(loaded, args.out, reporter=reporter)
    finally:
        if reporter is not None:
            reporter.close()
    if not args.quiet and not args.json:
        print(format_status(status))
    return EXIT_OK


def run_report(args) -> int:
    from ..report.report import write_report

    written = write_report(args.directory, args.out, plots=not args.no_plots)
    print(f"report: {written['markdown']} and {written['html']}, "
          f"{len(written['plots'])} plot(s)")
    return EXIT_OK


def run_import(args) -> int:
    from ..config.siitperf import import_siitperf

    result = import_siitperf(args.file, args.output, cmdline=args.cmdline)
    for note in result.notes:
        print(f"xlatperf: note: {note}", file=sys.stderr)
    print(f"wrote {args.output}")
    return EXIT_OK


def run_doctor(args) -> int:
    """Every check, one line each (or JSON); exit 1 when one failed."""
    from ..engine.doctor import failed, render
    from ..engine.port_checks import doctor

    checks = doctor(load_config(args.config, list(args.overrides)), root=args.root)
    print(json.dumps([check.to_dict() for check in checks], indent=2) if args.json else render(checks))
    return EXIT_ERROR if failed(checks) else EXIT_OK


def run_lab(args) -> int:
    from .. import lab  # imported only when used

    try:
        if args.lab_command == "up":
            params = dict(param.split("=", 1) for param in args.params)
            state = lab.lab_up(args.kind, params, args.config_out)
            if state["params"]["calibrate"]:
                from ..run.calibration import calibrate_lab
                print("calibrating the tester's ceiling: a selftest through the calibration "
                      "wire (calibrate=no skips it) ...", flush=True)
                state = calibrate_lab()
            print("\n".join(lab.describe(state)))
        else:
            lab.lab_down()
    except lab.LabError as exc:
        raise XlatperfError(str(exc)) from None
    return EXIT_OK


def _one_line(text: str) -> str:
    return "; ".join(part.strip() for part in str(text).splitlines() if part.strip())


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    if threading.current_thread() is threading.main_thread():
        # `kill` (a harness timeout, a stopped job) ends a measurement like Ctrl-C does: the
        # engine is aborted and what was measured is kept.
        signal.signal(signal.SIGTERM, _interrupt)
    args = None
    try:
        args = build_parser().parse_args(argv)
        handlers = {"lab": run_lab, "campaign": run_campaign_command, "report": run_report,
                    "import": run_import, "doctor": run_doctor}
        return handlers.get(args.command, run_measurement)(args)
    except UsageError as exc:
        print(f"xlatperf: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except XlatperfError as exc:
        print(f"xlatperf: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        out = getattr(args, "out", None)
        where = f"; incomplete results in {out}" if out else ""
        print(f"xlatperf: error: interrupted{where}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug: keep the one-line contract, traceback on request
        if os.environ.get("XLATPERF_DEBUG"):
            raise
        print(f"xlatperf: error: internal error: {type(exc).__name__}: {_one_line(exc)} "
              "(set XLATPERF_DEBUG=1 for a traceback)", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
