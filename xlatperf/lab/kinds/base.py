# SPDX-License-Identifier: BSD-3-Clause
"""What a lab kind is: `LabKind`, the base of every kind in lab/kinds/ (its parameters, the tools
it needs, how its DUT is built and placed on the CPUs, the tester config sections it writes),
the parameters every kind takes, and the parsers parameters are checked with.

A parameter is a dict: `default` (a string, as parameters arrive from the command line),
`allowed` and `help` (for the error messages and `xlatperf lab up --help`), and `parse`, which
turns the text into its value or raises ValueError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...config.schema import SCHEMA
from ...frames.technology import Role, Technology
from ..names import DUT_NS, DUT_PORTS
from ..placement import Placement, steer_receive
from ..shell import LabError

DEFAULT_LCORES = SCHEMA["tester"]["lcores"].default


def integer(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text, 10)
        if not low <= value <= high:
            raise ValueError
        return value
    return parse


def choice(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in choices:
            raise ValueError
        return text
    return parse


def auto_or(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """"auto" (a value the kind derives in `resolve`), or what `parse` accepts."""
    return lambda text: "auto" if text == "auto" else parse(text)


def yes_no(text: str) -> bool:
    return choice("yes", "no")(text) == "yes"


# Faulty reference DUTs (issue 29: every check the receiver makes must be seen to fail when it
# should). `faulty` names the DUT's faults; each spoils its own `faulty_share` percent of the
# packets the DUT forwards in each direction, apart from the others' (fault i takes the packets
# whose draw from 0..99 is in [i * share, (i + 1) * share)), so that one run shows each fault in
# its own counter at its share.
def fault_params(what: str, faults: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The `faulty` and `faulty_share` parameters of a kind whose DUT (`what`) can have
    `faults` (name -> what it does)."""
    def parse(text: str) -> tuple[str, ...]:
        if text == "none":
            return ()
        names = tuple(name.strip() for name in text.split(","))
        if len(set(names)) != len(names) or any(name not in faults for name in names):
            raise ValueError
        return names

    described = "; ".join(f"{name}: {does}" for name, does in faults.items())
    return {
        "faulty": {"default": "none", "allowed": "none, or a list of " + ", ".join(faults),
                   "help": f"a faulty {what} for the tester's header checks ({described}), each on "
                           "its own faulty_share of the frames",
                   "parse": parse},
        "faulty_share": {"default": "auto", "allowed": "auto (100 divided among the faults) or an integer 1..100",
                         "help": "percent of the frames of each direction each fault spoils",
                         "parse": auto_or(integer(1, 100))},
    }


def resolve_faults(kind: str, p: dict[str, Any]) -> None:
    """faulty_share "auto" divided among the faults; their shares must fit in 100 %."""
    if "faulty" not in p:  # a kind without faults
        return
    faults = p["faulty"]
    if p["faulty_share"] == "auto":
        p["faulty_share"] = 100 // len(faults) if faults else 0
    if len(faults) * p["faulty_share"] > 100:
        raise LabError(f"lab kind {kind!r}: faulty_share={p['faulty_share']} for {len(faults)} faults "
                       f"is {len(faults) * p['faulty_share']} %; allowed: at most {100 // len(faults)} "
                       f"each (each fault spoils frames of its own)")


def fault_defines(p: dict[str, Any]) -> list[str]:
    """The -D parameters of a BPF DUT's faults (lab/bpf/tunnel.h): the share, and each fault's
    place 1.. in the list as FAULT_<NAME>."""
    faults = p.get("faulty", ())
    return ([f"-DFAULT_SHARE={p['faulty_share']}"] +
            [f"-DFAULT_{name.upper()}={place}" for place, name in enumerate(faults, 1)]) if faults else []


# The faults of the reference BPF DUTs (lab/bpf/tunnel.h), and the one of those whose tunnels
# must carry the traffic class over (DS-Lite, lw4o6: RFC 6333 §7.1, RFC 7596).
BPF_FAULTS = {"ttl": "no TTL/hop limit decrement", "tos": "the TOS/traffic class zeroed",
              "checksum": "a checksum not adjusted"}
TUNNEL_TOS_FAULT = {"tunnel_tos": "the tunnel's traffic class 0, the inner TOS kept"}
# ... and of those that translate IPv6 into IPv4 (MAP-T): on its share of the packets RFC 6145
# §5.1's DF rule where the rest follow RFC 7915 §5.1's, a mix that checks.df_small always fails.
TRANSLATOR_DF_FAULT = {"df": "DF set on a translated IPv4 packet of at most 1,260 bytes"}


def bpf_faults(technology: Technology) -> dict[str, str]:
    """The faults of a reference BPF DUT of `technology`."""
    return BPF_FAULTS | (TUNNEL_TOS_FAULT if technology.tunnel_carries_tos else {}) | \
        (TRANSLATOR_DF_FAULT if technology.translates else {})


# Every kind: how the tester is set up against it (lab/__init__.py, "CPUs, ports, ceiling").
COMMON_PARAMS = {
    "ports": {"default": "auto", "allowed": "auto, af_xdp or af_packet",
              "help": "the tester's port type; auto = af_xdp where the kernel offers AF_XDP "
                      "sockets (the faster one on veth) and no jumbo mtu is set, else "
                      "af_packet",
              "parse": choice("auto", "af_xdp", "af_packet")},
    "lcores": {"default": DEFAULT_LCORES,
               "allowed": 'a DPDK lcore list like "0,1" (main lcore, then workers)',
               "help": "tester.lcores of the config; the DUT's packet processing goes to the "
                       "CPUs no worker lcore uses",
               "parse": lambda text: text},   # checked against the online CPUs by plan_placement
    "calibrate": {"default": "yes", "allowed": "yes or no",
                  "help": "measure the tester's ceiling after building (`xlatperf lab up`: a "
                          "selftest through the calibration wire, about 15 s)",
                  "parse": yes_no},
}


class LabKind:
    """One kind of lab. lab/__init__.py builds what every kind shares (the namespaces, the
    veths between the tester's and the DUT's ports, the calibration wire) and the tester config
    around the kind's sections; the kind builds its DUT in the DUT namespace (DUT_NS, ports
    DUT_PORTS) and says how the tester addresses it. `p` is always the resolved parameters
    (`parse`)."""
    name = ""
    description = ""          # one line, for `xlatperf lab up --help`
    kind_params: dict[str, dict[str, Any]] = {}   # the kind's own; COMMON_PARAMS come after
    tools: dict[str, str] = {}   # commands beyond the wiring's -> the Debian package with them
    # False: no DUT namespace; the tester's own ports are joined by a tc wire (loopback), and
    # build and place are not called.
    has_dut = True
    steered_by = "RPS on its veth ends"   # how place() moves the DUT's work (config comment)
    more_namespaces: tuple[str, ...] = ()  # besides DUT_NS (a dual DUT's CE), removed by lab down
    # The IPv4aaS technology and the role its DUT plays in it (frames/technology.py); None for
    # the other kinds.
    technology: Technology | None = None
    role: Role | None = None

    @property
    def params(self) -> dict[str, dict[str, Any]]:
        return {**self.kind_params, **COMMON_PARAMS}

    def parse(self, params: dict[str, str]) -> dict[str, Any]:
        """The validated parameters, defaults filled in, converted and resolved."""
        spec = self.params
        for name in params:
            if name not in spec:
                allowed = ", ".join(sorted(spec)) or "none"
                raise LabError(f"lab kind {self.name!r} has no parameter {name!r}; "
                               f"allowed: {allowed}")
        resolved: dict[str, Any] = {}
        for name, param in spec.items():
            text = str(params.get(name, param["default"])).strip()
            try:
                resolved[name] = param["parse"](text)
            except ValueError:
                raise LabError(f"lab kind {self.name!r}: {name}={text!r} is invalid; "
                               f"allowed: {param['allowed']}") from None
        resolve_faults(self.name, resolved)
        self.resolve(resolved)
        return resolved

    def resolve(self, p: dict[str, Any]) -> None:
        """Fills in the values the kind derives from others (an "auto"), in place."""

    def veth_mtu(self, p: dict[str, Any]) -> int:
        """The MTU of the lab's veths."""
        return p.get("mtu", 1500)

    def build(self, p: dict[str, Any]) -> None:
        """Builds the DUT in DUT_NS, whose ports are up and cabled to the tester's."""
        raise NotImplementedError

    def place(self, placement: Placement) -> None:
        """Puts the DUT's packet processing on the DUT CPUs (placement.py): RPS on its veth
        ends."""
        steer_receive(DUT_NS, DUT_PORTS, placement.dut_cpus)

    def tester_sections(self, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """The kind's tester config sections: "left" and "right" (the keys beyond the port and
        its MAC), then any whole sections of its own (they follow the common ones)."""
        raise NotImplementedError

    def checks(self) -> dict[str, Any]:
        """The [checks] keys a known, named deviation of the DUT needs (none by default)."""
        return {}

    def hops(self, p: dict[str, Any]) -> int | None:
        """How much the DUT decrements the TTL/hop limit, when not what dut.hops = "auto" says
        (1 per router or translator): a DUT whose namespace routes a frame more than once, or
        none (the tester's ports cabled to each other). Written into the config as dut.hops."""
        return None

    def ipv4aas_section(self) -> dict[str, str]:
        """The tester config's [ipv4aas] keys that name the technology and the role."""
        return {"technology": self.technology.key, "role": self.role.key}

    def config_notes(self, p: dict[str, Any]) -> list[str]:
        """Comment lines for the tester config's header."""
        return []
