# SPDX-License-Identifier: BSD-3-Clause
"""How the report names a swept configuration key and writes its values, in the plots' axes,
series and titles, the points' labels and the two-dimensional tables' headings: a key that is a
share (0..1) of something by what it counts, in % (SHARES), any other key by its last part and
its value as configured."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Share:
    what: str   # what the share counts ("names with a AAAA record")
    of: str     # what it is a share of ("names")


# RFC 8219 §9.2 states its two DNS64 axes as percentages of names, "the proportion of the
# repeated domain names" and of "the DNS names having AAAA records": so does the report.
SHARES = {
    "dns.cache_share": Share("repeated (cached) names", "queries"),
    "dns.aaaa_share": Share("names with a AAAA record", "names"),
}


def short(key: str) -> str:
    return key.split(".")[-1]


def value_text(key: str, value) -> str:
    """A value of the key as a heading writes it: "20 %" for a share, else as configured."""
    if key in SHARES and isinstance(value, (int, float)):
        return f"{100 * value:g} %"
    return str(value)


def setting(key: str, value) -> str:
    """The key at a value as a label states it: "names with a AAAA record 20 %",
    "frame_size 84"."""
    return f"{key_name(key) if key in SHARES else short(key)} {value_text(key, value)}"


def key_name(key: str) -> str:
    """What the key is, in short: "names with a AAAA record", or the key itself."""
    return SHARES[key].what if key in SHARES else key


def key_title(key: str) -> str:
    """What the key is, for a plot's title: "names with a AAAA record (dns.aaaa_share)", or the
    key itself."""
    return f"{SHARES[key].what} ({key})" if key in SHARES else key


def axis_position(key: str, value):
    """Where a value of the key lies on a plot axis: a share in %, any other value as it is."""
    return 100 * value if key in SHARES else value


def axis_title(key: str) -> str:
    """A plot axis of the key's values, or a table's dimension: "names with a AAAA record (% of the names;
    dns.aaaa_share)", or the key itself."""
    if key in SHARES:
        return f"{SHARES[key].what} (% of the {SHARES[key].of}; {key})"
    return key


def numeric(values) -> bool:
    """Whether the key's values are numbers (a plot axis, a table's dimension)."""
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
