# SPDX-License-Identifier: BSD-3-Clause
"""DUT hook templates (xlatperf/config/templates.py) and DUT variables (docs/campaigns.md, "DUT
hooks"): placeholders, escaped braces, values as they go into a command, and the errors that
stop a measurement or a campaign before its first trial."""

import pytest

from xlatperf.config.loading import load_config, validate
from xlatperf.config.templates import template_value
from xlatperf.config.templates import TemplateError, format_value, parse, placeholders, render
from xlatperf.measure.hooks import DutHooks, parse_counters
from xlatperf.run.campaignfile import parse_campaign
from xlatperf.util.errors import ConfigError


def test_placeholders_and_literal_text():
    assert parse("ip link set {left.port} up") == [
        ("text", "ip link set "), ("name", "left.port"), ("text", " up")]
    assert placeholders("{dut.cores} {traffic.frame_size} {dut.cores}") == [
        "dut.cores", "traffic.frame_size"]
    assert parse("") == [] and placeholders("conntrack -F") == []
    assert render("a{x.y}b{x.y}", {"x.y": 7}.__getitem__) == "a7b7"


def test_doubled_braces_are_literal_braces():
    assert render("awk '{{print $1}}' {{}} ${{HOME}}", {}.__getitem__) == \
        "awk '{print $1}' {} ${HOME}"
    assert render("{{{dut.cores}}}", {"dut.cores": 4}.__getitem__) == "{4}"
    assert placeholders("{{dut.cores}}") == []     # escaped: not a placeholder
    assert render("}}{{", {}.__getitem__) == "}{"


@pytest.mark.parametrize("template, message", [
    ("awk '{print $1}'", "{print $1} is not a placeholder"),
    ("echo ${HOME}", "{HOME} is not a placeholder"),
    ("echo {dut.cores", "'{' at character 6 is never closed"),
    ("echo }", "a single '}' at character 6"),
    ("echo {}", "{} is not a placeholder"),
    ("echo {Dut.Cores}", "{Dut.Cores} is not a placeholder"),
])
def test_malformed_templates_say_where_and_how_to_escape(template, message):
    with pytest.raises(TemplateError) as error:
        parse(template)
    assert message in str(error.value) and "write {{ and }} for literal braces" in \
        str(error.value)


def test_values_as_they_go_into_a_command():
    assert [format_value(v) for v in (4, 1.0, 0.25, 1234567.0, True, False, "a b")] == \
        ["4", "1", "0.25", "1234567", "true", "false", "a b"]
    assert format_value([1, 2]) == "[1,2]" and format_value((1, "x")) == '[1,"x"]'


def test_config_keys_and_dut_variables_as_placeholders():
    config = load_config(None, ["dut.cores=4", "dut.governor=performance",
                                "dut.before_point=set-cpus {dut.cores} {dut.governor} "
                                "{traffic.frame_size} {trial.duration} {left.port}",
                                "traffic.frame_size=128", "trial.duration=2.5"])
    assert dict(config.dut.variables) == {"cores": 4, "governor": "performance"}
    assert config.to_dict()["dut"]["variables"] == {"cores": 4, "governor": "performance"}
    assert template_value(config, "dut.cores") == 4
    hooks = DutHooks(config)
    assert hooks.command("before_point") == "set-cpus 4 performance 128 2.5 af_packet:xlp-tl"
    # A configuration written back (summary.json) validates to the same one (resume, changed()).
    assert validate(config.to_dict()) == config
    # In a file: [dut] cores = 4, or the table [dut.variables].
    assert validate({"dut": {"variables": {"cores": 2}, "before_trial": "x {dut.cores}"}}) \
        .dut.variables["cores"] == 2


@pytest.mark.parametrize("overrides, key, message", [
    (["dut.before_trial=echo {dut.core}"], "dut.before_trial",
     "placeholder {dut.core} is neither a configuration key nor a DUT variable"),
    (["dut.cores=4", "dut.after_point=echo {dut.core}"], "dut.after_point",
     "(DUT variables: {dut.cores}"),
    (["dut.counters=echo {traffic.framesize}"], "dut.counters",
     "placeholder {traffic.framesize}"),
    (["dut.before_point=echo {dut.variables}"], "dut.before_point",
     "placeholder {dut.variables}"),
    (["dut.wait_until=awk '{print}'"], "dut.wait_until", "{print} is not a placeholder"),
    (["dut.cores=4"], "dut.cores", "as a DUT variable it must be used by a hook command as "
                                   "{dut.cores}"),
    # A misspelt hook key is an unused variable, not silently ignored.
    (["dut.befor_trial=conntrack -F"], "dut.befor_trial", "is not a [dut] setting"),
    (["dut.cores=[1, 2]", "dut.before_trial={dut.cores}"], "dut.cores",
     "must be a string, a number or a boolean"),
])
def test_template_errors_name_the_hook_key_and_the_placeholder(overrides, key, message):
    with pytest.raises(ConfigError) as error:
        load_config(None, overrides)
    assert str(error.value).startswith(f"{key} = ") and message in str(error.value)


def test_a_variable_set_twice_is_refused():
    with pytest.raises(ConfigError, match=r"dut.cores = 2: is set twice"):
        validate({"dut": {"cores": 2, "variables": {"cores": 3},
                          "before_trial": "{dut.cores}"}})


def test_a_campaign_refuses_an_unknown_placeholder_before_any_trial(tmp_path):
    (tmp_path / "base.toml").write_text("")
    (tmp_path / "c.toml").write_text('''
[campaign]
config = "base.toml"
procedures = ["trial"]
[set]
"dut.before_point" = "set-cpus {dut.core}"
[axes]
"dut.cores" = [1, 2]
''')
    from xlatperf.run.campaignfile import load_campaign
    with pytest.raises(ConfigError) as error:
        load_campaign(tmp_path / "c.toml")
    text = str(error.value)
    assert "point 1 (trial dut.cores=1)" in text and "dut.before_point" in text and \
        "{dut.core}" in text
    # DUT variables are campaign axes like any key; a misspelt section is not.
    campaign = parse_campaign({"campaign": {"procedures": ["trial"]},
                               "axes": {"dut.cores": [1, 2]}})
    assert [p.assignments for p in campaign.points] == [{"dut.cores": 1}, {"dut.cores": 2}]
    with pytest.raises(ConfigError, match="'dutt.cores' is not a configuration key"):
        parse_campaign({"campaign": {"procedures": ["trial"]}, "axes": {"dutt.cores": [1]}})


def test_counters_from_key_value_lines_and_bare_numbers():
    assert parse_counters("conntrack=4000\nname = eth0 \nnoise line\n12\n3.5\n") == {
        "conntrack": 4000, "name": "eth0", "value": 12, "value_2": 3.5}
    assert parse_counters("") == {}
