# SPDX-License-Identifier: BSD-3-Clause
"""Every example in README.md and docs/*.md does what the text says it does.

* `xlatperf ...` lines in fenced code blocks run, in order, through the CLI against
  tests/fake_engine.py in a directory of their own (one per document), so a later example can
  use what an earlier one wrote (`--rate-from results/tp`). `xlatperf lab up` is checked
  without building anything: argparse, then the lab's own kind and parameter validation, and
  the config it would write (with the fake engine's ports) lands in --config-out; `lab down` is
  parsed only.
* A line with placeholders (`FILE`, `DIR`, `[--opt ...]`, `a|b`) is a synopsis: every
  subcommand it names must exist and every option it names must belong to it.
* ```python blocks run with the same files present; ```toml blocks must load as a
  configuration or, with [campaign], as a campaign whose every point validates. A toml block
  whose first line is `# NAME.toml` is that file for the examples after it.
* lab.toml, the file most examples read, is the README's `xlatperf lab up router4` config,
  and KIND.toml that of each lab kind, present from the start.
"""

import argparse
import os
import re
import shlex
import tomllib
from pathlib import Path

import pytest

from xlatperf import lab
from xlatperf.config.loading import load_config, validate
from xlatperf.procedures import REGISTRY
from xlatperf.run.campaignfile import parse_campaign
from xlatperf.ui import cli
from xlatperf.util.files import toml_value

ROOT = Path(__file__).resolve().parent.parent
FAKE_ENGINE = ROOT / "tests" / "fake_engine.py"
DOCUMENTS = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))

# Examples that cannot run here as written, with the reason. Keep it short.
NOT_RUN: dict[str, str] = {}

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
# Placeholders and metasyntax of a synopsis.
SYNOPSIS = re.compile(r"[\[\]|()…]|\.\.\.|(?<![\w.=-])[A-Z][A-Z0-9_]*(?:[=,][A-Z0-9_,.]*)?(?![\w.])")


def fenced_blocks(path: Path) -> list[tuple[int, str, str]]:
    """(line number, language, text) of every fenced code block."""
    text = path.read_text()
    return [(text[:m.start()].count("\n") + 1, m.group(1), m.group(2))
            for m in FENCE.finditer(text)]


def commands(block: str) -> list[str]:
    """The `xlatperf ...` lines of a block, continuation lines joined, comments removed."""
    lines, current = [], ""
    for line in block.splitlines():
        current += line.rstrip("\\").strip() + " " if line.rstrip().endswith("\\") else line
        if line.rstrip().endswith("\\"):
            continue
        if current.strip().startswith("xlatperf "):
            lines.append(" ".join(shlex.split(current, comments=True)))
        current = ""
    return lines


def examples(path: Path) -> list[tuple[str, str, str]]:
    """(where, kind, text) in document order; kind: command | synopsis | python | toml."""
    found = []
    for line, language, block in fenced_blocks(path):
        where = f"{path.name}:{line}"
        if language in ("python", "py"):
            found.append((where, "python", block))
        elif language == "toml":
            found.append((where, "toml", block))
        else:
            for command in commands(block):
                found.append((where, "synopsis" if SYNOPSIS.search(command) else "command",
                              command))
    return found


# -- the stand-in lab -----------------------------------------------------------------------------

def fake_lab_config(kind: str, params: dict[str, str]) -> str:
    """The config `xlatperf lab up KIND` writes, on the fake engine's null ports: the DUT MACs
    set (the fake engine resolves none), no pause, DUT hooks that do nothing, and a fast
    RFC 9693 phase 1 (the measurer waits out the gap D = N/R + 2T in real time)."""
    sections = lab.tester_config(kind, lab.resolve_params(kind, params))
    sections["tester"] = {"netns": "", "hugepages": "no", "engine": str(FAKE_ENGINE)}
    for side, mac in (("left", "02:00:00:00:01:01"), ("right", "02:00:00:00:01:02")):
        sections[side] |= {"port": "null", "dut_mac": mac}
    sections.setdefault("trial", {})["pause"] = 0.0
    if "dut" in sections:
        sections["dut"] |= {"before_trial": "true", "teardown": "true"}
    if "stateful" in sections:
        sections["stateful"] |= {"rate_phase1": 1_000_000, "timeout_phase1": 0.001}
    lines = []
    for section, keys in sections.items():
        lines.append(f"[{section}]")
        lines += [f"{key} = {toml_value(value)}" for key, value in keys.items()]
    return "\n".join(lines) + "\n"


@pytest.fixture
def lab_dir(tmp_path, monkeypatch):
    for name in list(os.environ):
        if name.startswith("FAKE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("FAKE_DUT_LIMIT", "1000000")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lab.toml").write_text(fake_lab_config("router4", {}))
    for kind in lab.KINDS:
        (tmp_path / f"{kind}.toml").write_text(fake_lab_config(kind, {}))
    return tmp_path


# -- checking one example ---------------------------------------------------------------------------

def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return actions[0].choices if actions else {}


def check_synopsis(command: str) -> None:
    """Every subcommand named exists; every option belongs to the (last) subcommand; every
    concrete --set assignment is a valid key and value."""
    words = command.split()[1:]
    parsers = [cli.build_parser()]
    while words and subparsers(parsers[0]):
        word = words[0].strip("[]()")
        names = subparsers(parsers[0])
        if word == "PROCEDURE":
            chosen = list(REGISTRY)
        else:
            chosen = word.split("|")
        unknown = [name for name in chosen if name not in names]
        assert not unknown, f"{command!r}: unknown command(s) {unknown}"
        parsers = [names[name] for name in chosen]
        words = words[1:]
        if len(parsers) > 1:
            break
    options = re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", " ".join(words))
    for parser in parsers:
        known = set(parser._option_string_actions)
        missing = [o for o in options if o not in known]
        assert not missing, f"{command!r}: {parser.prog} has no option(s) {missing}"
    for assignment in re.findall(r"--set ([\w.]+=[^\s\])]+)", command):
        if not SYNOPSIS.search(assignment):
            load_config(None, [assignment])


def run_command(command: str) -> None:
    argv = shlex.split(command)[1:]
    if argv[:2] == ["lab", "up"]:
        args = cli.build_parser().parse_args(argv)
        params = dict(p.split("=", 1) for p in args.params)
        Path(args.config_out).write_text(fake_lab_config(args.kind, params))
        load_config(args.config_out)
        return
    if argv[:2] == ["lab", "down"]:
        cli.build_parser().parse_args(argv)
        return
    status = cli.main(argv + (["-q"] if argv[0] in REGISTRY or argv[:2] == ["campaign", "run"]
                              else []))
    assert status == 0, f"{command!r} exited with {status}"


def check_toml(text: str, directory: Path) -> None:
    first = text.splitlines()[0] if text.strip() else ""
    name = re.fullmatch(r"#\s*([\w.-]+\.toml)\s*", first)
    raw = tomllib.loads(text)
    if "campaign" in raw:
        parse_campaign(raw, directory / (name.group(1) if name else "campaign.toml"))
    else:
        validate(raw)
    if name:
        (directory / name.group(1)).write_text(text)


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_examples(document, lab_dir, capsys):
    ran = 0
    for where, kind, text in examples(document):
        if where in NOT_RUN:
            continue
        try:
            if kind == "synopsis":
                check_synopsis(text)
            elif kind == "command":
                run_command(text)
            elif kind == "python":
                exec(compile(text, where, "exec"), {"__name__": "__doc_example__"})
            else:
                check_toml(text, lab_dir)
        except Exception as exc:
            out = capsys.readouterr()
            raise AssertionError(f"{where}: {kind} example fails: {exc}\n{text}\n"
                                 f"{out.err[-2000:]}") from exc
        ran += 1
    assert ran or document.name not in ("README.md",), f"{document.name}: no examples found"


def test_the_checks_catch_unknown_options_keys_and_procedures(lab_dir):
    """The test above would fail on a wrong example."""
    for bad in ("xlatperf throughput -c lab.toml --frobnicate --out results/x",
                "xlatperf throughput -c lab.toml --set trial.frobnicate=1 --out results/x",
                "xlatperf frobnicate -c lab.toml --out results/x",
                "xlatperf lab up router5 --config-out x.toml",
                "xlatperf lab up limit --param speed=3 --config-out x.toml"):
        with pytest.raises(BaseException):
            run_command(bad)
    for bad in ("xlatperf throughput -c FILE [--frobnicate] --out DIR",
                "xlatperf throughput|frobnicate -c FILE --out DIR",
                "xlatperf PROCEDURE -c FILE [--set trial.frobnicate=1] --out DIR"):
        with pytest.raises(BaseException):
            check_synopsis(bad)
    with pytest.raises(BaseException):
        check_toml("[trial]\nfrobnicate = 1\n", lab_dir)
    assert [kind for _, kind, _ in examples(ROOT / "docs" / "delay.md")][:3] == ["synopsis"] * 3
