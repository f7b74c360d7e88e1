# SPDX-License-Identifier: BSD-3-Clause
"""The lab tester's calibrated ceiling: a selftest through the running lab's calibration wire.

    from xlatperf.run.calibration import calibrate_lab
    state = calibrate_lab()      # after xlatperf.lab.lab_up(...); `xlatperf lab up` does this

The wire (xlatperf/lab, `_add_wire`) joins two tester ports of the lab's port type through an
ideal DUT whose work runs on the DUT's CPUs, so the tester does exactly its work in the lab
with a DUT that costs almost nothing. The selftest's throughput there -- the highest rate per
direction at which the tester sent and received every frame, with the lab's ports, lcores and
frame size -- is the tester's ceiling. It is written into the lab's tester config
(tester.ceiling, ceiling_for, ceiling_calibration): a throughput search measures no rate above
it, and every result states it (procedures/search.py).

It is the tester's best case: a DUT that keeps its CPU busy slows the tester's CPU too. On the
2-vCPU lab machine the tester's pace was ~450 k frames/s per direction through the wire,
~345 k through router4, ~290 k through the wire with the DUT CPU kept busy by an idle-class
spinner (BENCHMARKS.md). A search that finds the tester slower in its own run (an invalid
trial's pace) goes by that pace, and a DUT-limited result's margin is taken from the lower of
the two. Calibrating with the DUT CPU kept busy was tried and left: the selftest then lost
frames above ~205 k, while router4 forwarded 344 k without loss.
"""

import datetime
import shutil

from .. import lab
from ..config.dns import ceiling_unit
from ..config.loading import load_config
from ..procedures.ceiling import ceiling_conditions
from ..util.errors import XlatperfError
from .runner import run_procedure


def calibrate_lab(reporter=None) -> dict:
    """Calibrates the running lab's tester ceiling and records it; returns the lab's state."""
    state = lab.lab_state()
    if state is None or not state.get("calibration_config"):
        raise XlatperfError("no lab is up (xlatperf lab up KIND): nothing to calibrate")
    config = load_config(state["calibration_config"])
    shutil.rmtree(lab.CALIBRATION_OUT, ignore_errors=True)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    summary = run_procedure("selftest", config, lab.CALIBRATION_OUT, reporter=reporter)
    # A lab of DNS queries calibrates by RFC 8219 §9.2.1's self-test: its ceiling is the DNS64
    # test rate the self-test allows.
    selftest = summary.get("dns_selftest")
    ceiling = selftest["rate_limit"] if selftest else int(summary.get("median") or 0)
    if ceiling <= 0:
        raise XlatperfError(f"lab {state['kind']} is up, but the tester's ceiling could not be "
                            "calibrated: no trial passed on the calibration wire (results in "
                            f"{lab.CALIBRATION_OUT}); run `xlatperf lab up` again")
    dut_cpus = ",".join(str(c) for c in state["placement"]["dut_cpus"])
    trials = len(summary["repetitions"][0]["steps"]) if summary.get("repetitions") else 0
    # The self-test states the conditions its rate holds for (the DNS64 test's timeout).
    conditions = selftest["ceiling_for"] if selftest else ceiling_conditions(config)
    unit = ceiling_unit(conditions)
    how = (f"xlatperf lab up at {when}: selftest through a tc wire on CPU {dut_cpus} "
           f"({trials} trials of {config.trial.duration:g} s, to within "
           f"{config.throughput.error:,} {unit})" + (f"; {selftest['statement']}" if selftest else ""))
    return lab.record_ceiling(ceiling, conditions, how)

