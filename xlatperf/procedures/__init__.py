# SPDX-License-Identifier: BSD-3-Clause
"""The measurement procedures. Each module defines its procedure class(es) and describes each
once as a ProcedureSpec; REGISTRY, in the order of `xlatperf --help`, is what every layer above
reads (CLI subcommands, campaign validation, the runner's dispatch, report renderers).

To add a procedure: write its module here (a Procedure subclass whose summary is computed from
its recorded steps alone, and its SPEC), add the SPEC below, and add its tests."""

from ..util.errors import ConfigError
from . import backtoback, dns64, frameloss, latency, recovery, scalability, stateful, throughput, trial
from .base import ProcedureSpec

REGISTRY: dict[str, ProcedureSpec] = {spec.name: spec for spec in (
    trial.SPEC, throughput.SPEC, frameloss.SPEC, backtoback.SPEC, throughput.SELFTEST_SPEC,
    latency.LATENCY_SPEC, latency.PDV_SPEC, scalability.SPEC, recovery.RECOVERY_SPEC,
    recovery.RESET_SPEC, *stateful.SPECS, dns64.SPEC)}


def procedure_spec(name: str) -> ProcedureSpec:
    """The registered procedure `name`; ConfigError naming the known ones otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ConfigError(f"procedure {name!r}: must be one of {', '.join(REGISTRY)}") from None
