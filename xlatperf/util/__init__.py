# SPDX-License-Identifier: BSD-3-Clause
"""The bottom layer: errors, units and rates, statistics, file helpers. Imports nothing else
from xlatperf."""
