# SPDX-License-Identifier: BSD-3-Clause
"""Reports: Markdown/HTML documents, tables and plots of result directories."""

from .report import write_report

__all__ = ["write_report"]
