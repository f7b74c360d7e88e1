# SPDX-License-Identifier: BSD-3-Clause
"""The user interface: command line, live console, JSON-lines progress."""
