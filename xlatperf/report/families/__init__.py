# SPDX-License-Identifier: BSD-3-Clause
"""The report families (ProcedureSpec.report), one object each: what a summary's median is (the
quantity on a plot axis), each repetition's result, how the procedure searched (the reporting
item "Search precision"), its detail tables, notes, warnings and its own figures. The report
and the console render the same tables.

FAMILIES is keyed by the family names of the registry; a new procedure of an existing family
needs nothing here, a new family one Family subclass (tests/test_report_all.py checks that every
registered family has one)."""

from ..collect import Entry
from .backtoback import Bursts
from .base import Family, Table
from .delay import Delay
from .interruption import Recovery, Reset
from .scalability import Scalability
from .search import Scan, Search, Trial
from .stateful import Capacity, ConnectionRates

FAMILIES: dict[str, Family] = {"search": Search(), "scan": Scan(), "trial": Trial(),
                               "delay": Delay(), "cps": ConnectionRates(),
                               "capacity": Capacity(), "bursts": Bursts(),
                               "scalability": Scalability(), "recovery": Recovery(),
                               "reset": Reset()}
UNKNOWN = Family()

__all__ = ["FAMILIES", "UNKNOWN", "Family", "Table", "family"]


def family(entry: Entry) -> Family:
    """The renderer of the entry's procedure (a plain one for an unregistered procedure)."""
    return FAMILIES.get(entry.family, UNKNOWN)
