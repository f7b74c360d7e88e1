# SPDX-License-Identifier: BSD-3-Clause
"""The lab kinds, one LabKind each (lab/kinds/base.py), in a module per family of DUTs that
share their code: `router` (router4, router6, limit, lossy, bridge), `vlan`, `tayga` (siit), `nat`
(nat44, nat66, nat64, 464xlat, clat, dslite-aftr), `softwire` (mape-br, mapt-br, lwaftr),
`customer_edge` (b4, lwb4, mape-ce, mapt-ce), `dual` (dslite-dual, mape-dual, mapt-dual),
`sixrd` (6rd-br, 6rd-ce, 6rd-dual: 6rd's BR, CE and the two in line, on softwire's, customer_edge's
and dual's bases),
`resolver` (dns64-bind, dns64-unbound, dns64-pdns), `loopback`. A new kind is a LabKind subclass listed in KINDS, which
drives parameter validation and `xlatperf lab up --help`."""

from __future__ import annotations

import textwrap
from typing import Any

from .base import COMMON_PARAMS, LabKind
from .customer_edge import B4, LwB4, MapECe, MapTCe
from .dual import DsLiteDual, MapEDual, MapTDual
from .loopback import Loopback
from .nat import Clat, DsLiteAftr, Nat44, Nat64, Nat66, Xlat464
from .resolver import Bind, PowerDns, Unbound
from .router import Bridge, Limit, Lossy, Router4, Router6
from .sixrd import SixrdBr, SixrdCe, SixrdDual
from .softwire import LwAftr, MapEBr, MapTBr
from .tayga import Siit
from .vlan import Vlan

KINDS: dict[str, LabKind] = {kind.name: kind for kind in (
    Router4(), Router6(), Siit(), Nat44(), Nat66(), Nat64(), Vlan(), Loopback(), Limit(),
    Lossy(), Bridge(), Xlat464(), Clat(), DsLiteAftr(), MapEBr(), MapTBr(), LwAftr(), B4(), LwB4(), MapECe(), MapTCe(), DsLiteDual(), MapEDual(), MapTDual(),
    SixrdBr(), SixrdCe(), SixrdDual(),
    Bind(), Unbound(), PowerDns())}

__all__ = ["COMMON_PARAMS", "KINDS", "LabKind", "format_kinds"]


def format_kinds(width: int = 100) -> str:
    """The kinds and their parameters as text, for `xlatperf lab up --help`: each kind with its
    description and its own parameters (NAME=DEFAULT, what it does, what is allowed), then the
    parameters every kind takes."""
    def wrap(first: str, text: str, indent: str) -> list[str]:
        return textwrap.wrap(first + text, width, initial_indent=indent,
                             subsequent_indent=indent + "    ", break_on_hyphens=False)

    def params(spec: dict[str, dict[str, Any]]) -> list[str]:
        return [line for name, param in spec.items()
                for line in wrap(f"{name}={param['default']}  ",
                                 f"{param['help']}; allowed: {param['allowed']}", "    ")]

    lines = []
    for kind in KINDS.values():
        lines += wrap(f"{kind.name}: ", kind.description, "")
        lines += params(kind.kind_params)
    lines.append("every kind also takes:")
    lines += params(COMMON_PARAMS)
    return "\n".join(lines)
