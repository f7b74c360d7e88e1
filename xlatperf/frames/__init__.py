# SPDX-License-Identifier: BSD-3-Clause
"""The frame model of the front end: header stacks and their sizes (stack.py), and the traffic
kinds (kinds/), each of which says which stacks a trial's frames have on each side and which
addresses they carry. Below the configuration layer: a kind reads the configuration it is
given and imports none of it."""
