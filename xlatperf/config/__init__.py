# SPDX-License-Identifier: BSD-3-Clause
"""Configuration: the schema (every key, default and rule), loading TOML with --set overrides,
the derived facts, the RFC 9693 and MLRsearch rules, and the siitperf.conf import."""

from .schema import SCHEMA
from .loading import default_config, load_config, validate
from .ports import parse_port

__all__ = ["SCHEMA", "default_config", "load_config", "parse_port", "validate"]
