# SPDX-License-Identifier: BSD-3-Clause
"""What every report family shares: the Family base (a summary's quantity, each repetition's
result, how the procedure searched, its detail tables, notes, warnings and figures) and the
cell helpers its tables are written with."""

from typing import Callable

from ...engine.protocol import NOT_LOST, REFUSED, foreign_beyond_noise
from ...traffic.plan import PORT_INDEX
from ..collect import Entry
from ..figure import Plotter
from ..units import format_value

# A detail table: (header, rows, caption); a cell function gets (repetition, entry).
Cell = Callable[[dict, Entry], str]


Table = tuple[list[str], list[list[str]], str]


def text(key: str, unit: str | None = None) -> Cell:
    return lambda rep, entry: format_value(rep.get(key), unit) if unit else str(rep.get(key))


def yes(key: str) -> Cell:
    return lambda rep, entry: "yes" if rep.get(key) else "no"


def steps(rep: dict, entry: Entry) -> str:
    return str(len(rep.get("steps", [])))


def per_repetition(entry: Entry, columns: list[tuple[str, Cell]], caption: str) -> Table:
    rows = [[cell(r, entry) for _, cell in columns] for r in entry.summary.get("repetitions", [])]
    return [header for header, _ in columns], rows, caption


class Family:
    """One report family (ProcedureSpec.report): everything the report and the console show of
    a measurement of it. The defaults: a plain result per repetition under `key`, no detail
    table, no figure."""
    key = "value"
    complete_only = False    # as the summary's statistics: only complete repetitions count
    # The result belongs to a traffic direction (False: RFC 9693 roles), so it has a bar per
    # direction in the bar charts.
    per_direction = True

    def quantity(self, entry: Entry) -> str:
        return "result"

    def repetition_values(self, entry: Entry) -> list[float]:
        """Each repetition's result (what the statistics summarise), in the summary's unit."""
        reps = entry.summary.get("repetitions", [])
        values = [r.get(self.key) for r in reps if r.get("complete") or not self.complete_only]
        return [v for v in values if v is not None]

    def precision(self, entry: Entry) -> str:
        return "-"

    def details(self, entry: Entry) -> list[Table]:
        return []

    def notes(self, entry: Entry) -> list[str]:
        """What the reader needs to read the result (settings, where a rate came from)."""
        return []

    def warnings(self, entry: Entry) -> list[str]:
        """What qualifies the result (a bound, not a value; a likely invalid result; a
        configuration whose frames a compliant DUT drops)."""
        return list(entry.summary.get("config_warnings", [])) + list(entry.summary.get("warnings", [])) + \
            refused_warnings(entry)

    def draw(self, plotter: Plotter, entry: Entry, label: str, number: int) -> None:
        """The measurement's own figures (`number`: its place among its family's entries)."""


# Each side by its engine port index as records name them ("0": left).
PORT_SIDES = {str(index): side for side, index in PORT_INDEX.items()}


def refused_warnings(entry: Entry) -> list[str]:
    """The test frames the receiver refused (REFUSED: another CE's, a bad checksum, a wrong
    TTL, ...), per direction and kind over the measurement's trials: the DUT's errors, in the
    loss; and the other frames that tell of the DUT: fragments, foreign frames beyond a link's
    noise, pause frames."""
    refused: dict[tuple[str, str], int] = {}
    for record in entry.trials:
        for name, direction in record.get("directions", {}).items():
            for key, _, why in REFUSED:
                refused[name, why] = refused.get((name, why), 0) + (direction.get(key) or 0)
    fragments: dict[str, int] = {}
    foreign: dict[str, int] = {}
    pause: dict[str, int] = {}
    for record in entry.trials:
        for port, count in record.get("fragmented", {}).items():
            fragments[port] = fragments.get(port, 0) + count
        for port, count in foreign_beyond_noise(record).items():
            foreign[port] = foreign.get(port, 0) + count
        for port, counters in (record.get("pause_received") or {}).items():
            pause[port] = pause.get(port, 0) + sum(counters.values())
    lost = {why: key not in NOT_LOST for key, _, why in REFUSED}
    return [f"{count:,} {name} frames {why}: "
            + ("counted as lost, not received" if lost[why] else "the trial fails on them")
            for (name, why), count in refused.items() if count] + \
        [f"{count:,} IP fragments arrived on the {PORT_SIDES.get(port, 'port ' + port)} port: test frames "
         "the DUT fragmented are no test frames (counted as lost)" for port, count in fragments.items() if count] + \
        [f"{count:,} frames on the {PORT_SIDES.get(port, 'port ' + port)} port were no test frames, far more than a "
         "link carries anyway (ARP/ND): test frames the DUT damaged beyond recognition?" for port, count in foreign.items()] + \
        [f"{count:,} pause frames (IEEE 802.3x / PFC) arrived on the {PORT_SIDES.get(port, 'port ' + port)} port: "
         "the DUT asked the tester to stop sending (its buffers were full); with tester.flow_control = \"off\" "
         "the tester did not" for port, count in pause.items() if count]


def rate(value) -> str:
    return "-" if value is None else f"{value:,}"


def seconds(value) -> str:
    return "-" if value is None else f"{value:.6g}"


def percent(value) -> str:
    return "-" if value is None else f"{value:.4g}"


def frame_sizes(entry: Entry) -> str:
    return ", ".join(dict.fromkeys(str(d.get("frame_size"))
                                   for d in entry.summary.get("directions", {}).values()))


def directions(entry: Entry) -> list[str]:
    return list(dict.fromkeys(name for rep in entry.summary.get("repetitions", [])
                              for name in rep.get("directions", {})))
