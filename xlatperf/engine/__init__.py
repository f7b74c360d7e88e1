# SPDX-License-Identifier: BSD-3-Clause
"""The engine: launching xlatperf-engine (EAL arguments, hugepages), the JSON-lines client,
and the protocol's reply parsing (docs/protocol.md)."""
