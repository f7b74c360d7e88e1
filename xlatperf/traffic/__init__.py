# SPDX-License-Identifier: BSD-3-Clause
"""The traffic plan: sides, directions, flows of a trial request, frame sizes, the medium's
maximum rate."""
