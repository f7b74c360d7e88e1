# SPDX-License-Identifier: BSD-3-Clause
"""The exception family of the front end.

Library code raises these and never prints or exits; only the CLI turns them into the one-line
`xlatperf: error: ...` message and an exit status.
"""

import json


class XlatperfError(Exception):
    """Root of every error the front end reports to the user."""


class ConfigError(XlatperfError):
    """A configuration value (or a parameter derived from one) is not acceptable.

    The message names the key, the value and what is allowed, e.g.
    `traffic.frame_size = 40: must be an integer in 64..9216`.
    """


class EngineError(XlatperfError):
    """The engine could not be started, failed a request, or exited unexpectedly.

    `stderr_tail` holds the last lines the engine wrote to stderr (DPDK and engine logs).
    """

    def __init__(self, message: str, stderr_tail: list[str] | None = None):
        super().__init__(message)
        self.stderr_tail = list(stderr_tail or [])


class EngineBadParameter(EngineError):
    """The engine refused a request as invalid (protocol error type `bad_parameter`): unknown
    op or key, a value out of range. `key` names the key at fault when one is (e.g.
    "flows[0].rate"), else None."""

    def __init__(self, message: str, key: str | None = None, stderr_tail: list[str] | None = None):
        super().__init__(message, stderr_tail)
        self.key = key


class EngineExecutionFailure(EngineError):
    """The engine could not carry out a valid request (protocol error type
    `execution_failure`): a port error, no neighbour reply, no state table yet."""


class EngineExited(EngineError):
    """The engine process ended while the front end was waiting for it; `returncode` is its
    exit status (None if it could not be collected)."""

    def __init__(self, message: str, returncode: int | None = None,
                 stderr_tail: list[str] | None = None):
        super().__init__(message, stderr_tail)
        self.returncode = returncode


class MeasurementError(XlatperfError):
    """A procedure cannot produce a result (e.g. the selftest's zero-loss check failed)."""


def show_value(value) -> str:
    """A value the way it would be written in TOML (strings quoted), for error messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def key_error(key: str, value, requirement: str) -> ConfigError:
    """The one shape of a configuration error: `key = value: what is allowed`."""
    return ConfigError(f"{key} = {show_value(value)}: {requirement}")
