# SPDX-License-Identifier: BSD-3-Clause
"""`python3 -m xlatperf ...`: the command line (xlatperf/ui/cli.py)."""

import sys

from .ui.cli import main

sys.exit(main())
