# SPDX-License-Identifier: BSD-3-Clause
"""xlatperf: benchmarking tester for IPv4/IPv6 routers and translators (RFC 2544/5180/8219)."""

__version__ = "0.1.0"
