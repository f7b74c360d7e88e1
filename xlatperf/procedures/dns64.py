# SPDX-License-Identifier: BSD-3-Clause
"""RFC 8219 §9.2 DNS64 performance, and resolved queries through any DUT (docs/dns.md): the
throughput searches (binary or MLRsearch) over query rates, with DNS queries as the trial's
frames ([dns]). A query counts when its answer came within dns.timeout and was valid (the
engine's verdict: the expected synthesis or record, the query's ID and question, no error)."""

from ..util.errors import key_error
from .base import Procedure, ProcedureSpec
from .throughput import make_throughput


def _dns64(config, plan, rate=None) -> Procedure:
    if not config.dns.enabled:
        raise key_error("dns.enabled", False, "must be true for dns64: its trials are DNS queries "
                                              "(docs/dns.md)")
    procedure = make_throughput(config, plan, rate)
    # The same search (over queries/s, as any of DNS queries): its summary and records name it.
    procedure.name = SPEC.name
    return procedure


SPEC = ProcedureSpec("dns64", "RFC 8219 §9 DNS64 performance, or resolved queries through any DUT: the highest "
                     "rate of queries all validly answered in time", unit="qps", make=_dns64, report="search",
                     # RFC 8219 §9.2: "repeated at least 20 times" (the median, 1st and 99th percentiles)
                     repeat_key="dns.repeat")
