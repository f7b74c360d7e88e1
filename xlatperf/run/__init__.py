# SPDX-License-Identifier: BSD-3-Clause
"""Running procedures: the repetition loop and summaries (runner), adaptive repetitions,
campaigns (resumable sweeps)."""

from .runner import run_procedure

__all__ = ["run_procedure"]
