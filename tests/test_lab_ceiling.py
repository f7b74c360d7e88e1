# SPDX-License-Identifier: BSD-3-Clause
"""The tester's calibrated ceiling (tester.ceiling, written by `xlatperf lab up`) with the fake
engine: a throughput search never measures above it, a DUT faster than the tester is reported
as a lower bound set by the tester, a slower one as DUT-limited with the tester's margin, every
result states the ceiling, and another set-up than the calibrated one does not apply it."""

import pytest

from fakes import console_text

from xlatperf.config import load_config
from xlatperf.measure.store import read_trials
from xlatperf.procedures.ceiling import calibrated_ceiling, ceiling_conditions, search_range_top
from xlatperf.report import write_report
from xlatperf.run import run_procedure
from xlatperf.util.errors import ConfigError

# The fake config's set-up, spelled out (tests/fakes.py: null ports, defaults elsewhere).
FAKE_SETUP = "null/null ports, 64-byte frames, direction both, lcores 0,1"
CEILING = 300_000
CALIBRATED = [f"tester.ceiling={CEILING}", f"tester.ceiling_for={FAKE_SETUP}",
              "tester.ceiling_calibration=a test, just now"]


def test_the_ceiling_applies_only_to_the_set_up_it_was_calibrated_for(fake_config):
    config = load_config(str(fake_config), CALIBRATED)
    assert ceiling_conditions(config) == FAKE_SETUP
    assert calibrated_ceiling(config).applies
    assert search_range_top(config, 14_880_952) == (CEILING, CEILING)
    assert search_range_top(config, 200_000) == (200_000, None)   # below it: no cap
    for change in ("traffic.frame_size=128", "traffic.direction=forward", "tester.lcores=0,2"):
        other = load_config(str(fake_config), [*CALIBRATED, change])
        ceiling = calibrated_ceiling(other)
        assert not ceiling.applies and "not applied" in ceiling.statement()
        assert search_range_top(other, 14_880_952) == (14_880_952, None)
    # A ceiling set by hand for no particular set-up applies to any.
    anywhere = load_config(str(fake_config), [f"tester.ceiling={CEILING}"])
    assert calibrated_ceiling(anywhere).applies
    assert calibrated_ceiling(load_config(str(fake_config))) is None


def test_a_dut_faster_than_the_tester_is_never_measured_above_the_ceiling(
        fake_config, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_DUT_LIMIT", "5000000")   # the DUT: far faster than the ceiling
    config = load_config(str(fake_config), [*CALIBRATED, "output.repeat=2"])
    out = tmp_path / "tp"
    summary = run_procedure("throughput", config, out)
    rates = [t["rate"] for t in read_trials(out)]
    assert rates and max(rates) <= CEILING
    assert summary["median"] == CEILING and summary["tester_limited"]
    assert f"calibrated ceiling of {CEILING:,} frames/s" in summary["lower_bound"]
    assert "dut_limited" not in summary
    stated = summary["settings"]["tester_ceiling"]
    assert stated["fps"] == CEILING and stated["applies"]
    text = console_text(summary)
    assert stated["statement"] in " ".join(text.split()) and "lower bound" in text
    write_report(out, tmp_path / "report", plots=False)
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "Tester ceiling" in markdown and stated["statement"] in markdown


def test_a_dut_slower_than_the_tester_is_dut_limited_with_the_margin(fake_config, tmp_path,
                                                                      monkeypatch):
    monkeypatch.setenv("FAKE_DUT_LIMIT", "100000")
    config = load_config(str(fake_config), [*CALIBRATED, "throughput.error=1000"])
    out = tmp_path / "tp"
    summary = run_procedure("throughput", config, out)
    assert max(t["rate"] for t in read_trials(out)) <= CEILING
    assert not summary["tester_limited"] and "lower_bound" not in summary
    assert 99_000 < summary["median"] <= 100_000
    margin = CEILING / summary["median"]
    assert f"tester margin of {margin:.2f}x" in summary["dut_limited"]
    assert "set by the DUT" in console_text(summary)


def test_another_set_up_is_not_capped(fake_config, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_DUT_LIMIT", "5000000")
    config = load_config(str(fake_config), [*CALIBRATED, "traffic.frame_size=128"])
    out = tmp_path / "tp"
    summary = run_procedure("throughput", config, out)
    assert read_trials(out)[0]["rate"] > CEILING   # the medium's maximum, as without it
    assert "not applied" in summary["settings"]["tester_ceiling"]["statement"]


def test_mlrsearch_loads_stay_at_or_below_the_ceiling(fake_config, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_DUT_LIMIT", "5000000")
    config = load_config(str(fake_config), [*CALIBRATED, "throughput.mode=mlrsearch",
                                            "throughput.preset=rfc2544", "trial.duration=1"])
    out = tmp_path / "mlr"
    summary = run_procedure("throughput", config, out)
    assert max(t["rate"] for t in read_trials(out)) <= CEILING
    assert summary["median"] == CEILING and summary["tester_limited"]
    assert "calibrated ceiling" in summary["lower_bound"]


def test_the_selftest_measures_the_tester_itself_uncapped(fake_config, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_TESTER_LIMIT", "1000000")
    config = load_config(str(fake_config), CALIBRATED)
    summary = run_procedure("selftest", config, tmp_path / "self")
    assert summary["median"] > CEILING


def test_a_minimum_rate_at_the_ceiling_names_the_ceiling(fake_config, tmp_path):
    config = load_config(str(fake_config), [*CALIBRATED, f"throughput.min_rate={CEILING}"])
    with pytest.raises(ConfigError) as err:
        run_procedure("throughput", config, tmp_path / "tp")
    assert "throughput.min_rate" in str(err.value) and "tester.ceiling" in str(err.value)


def test_the_margin_is_taken_from_a_lower_ceiling_the_run_showed(fake_config, tmp_path,
                                                                  monkeypatch):
    """A tester that, in the run, could not send faster than 200,000 frames/s (below its
    calibrated 300,000): the DUT's 100,000 is DUT-limited, with a margin of 2x, not 3x."""
    monkeypatch.setenv("FAKE_TESTER_LIMIT", "200000")
    monkeypatch.setenv("FAKE_DUT_LIMIT", "100000")
    config = load_config(str(fake_config), [*CALIBRATED, "throughput.error=1000"])
    summary = run_procedure("throughput", config, tmp_path / "tp")
    assert summary["tester_ceiling"] == 200_000 and not summary["tester_limited"]
    margin = 200_000 / summary["median"]
    assert "ceiling in this run of 200,000 frames/s" in summary["dut_limited"]
    assert f"tester margin of {margin:.2f}x" in summary["dut_limited"]


def test_a_ceiling_calibrated_with_fixed_64_byte_frames_does_not_apply_to_other_traffic(
        fake_config):
    """Issue 17 finding 9: IMIX, VLAN tags, queues and varying addresses or ports cost the
    sender more per frame than the calibration's traffic: its ceiling does not apply there."""
    for change in ("traffic.imix=64:7,594:4,1518:1", "left.vlan=10", "tester.queues=2",
                   "addresses.left=random", "ports.forward_src=increasing"):
        config = load_config(str(fake_config), [*CALIBRATED, change])
        ceiling = calibrated_ceiling(config)
        assert not ceiling.applies, change
        assert "not applied: this run's set-up is" in ceiling.statement(), change
        assert search_range_top(config, 14_880_952) == (14_880_952, None), change
