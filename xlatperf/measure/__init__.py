# SPDX-License-Identifier: BSD-3-Clause
"""The measurer: one trial at a load for a duration (pause, learning trial, DUT MAC resolution,
DUT hooks, RFC 9693 phase 1 and gap) and the recording of every trial."""
