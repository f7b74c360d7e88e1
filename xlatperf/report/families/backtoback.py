# SPDX-License-Identifier: BSD-3-Clause
"""Family "bursts": RFC 2544 §26.4 / RFC 9004 back-to-back frames, with the DUT buffer times of
RFC 9004 §6.4."""

from ..collect import Entry
from ..figure import Plotter, dress
from ..units import axis_label, format_value
from .base import Family, per_repetition, rate, seconds, steps, text, yes


class Bursts(Family):
    key = "longest_burst"
    complete_only = True
    COLUMNS = [("repetition", text("repetition")),
               ("longest burst (frames)", text("longest_burst", "frames")),
               ("sending rate (fps)", lambda rep, entry: format_value(
                   rep.get("sending_rate") and round(rep["sending_rate"]), "fps")),
               ("bursts", steps), ("found", yes("found")),
               ("tester limited", yes("tester_limited")),
               ("at the search limit", yes("at_limit")), ("complete", yes("complete"))]

    def quantity(self, entry):
        return "longest burst without loss"

    def precision(self, entry):
        s = entry.settings
        return (f"binary search on the burst length in [1, {rate(s.get('longest_burst'))}] "
                f"frames (bursts at {rate(s.get('rate'))} frames/s, at most "
                f"{s.get('max_time')} s) until upper − lower ≤ {rate(s.get('step'))} frames "
                f"(RFC 9004 §6.2 minimum step size); a burst the tester could not send is sent "
                f"again up to {s.get('retries')} times")

    def details(self, entry):
        summary, s = entry.summary, entry.settings
        buffer, rates = summary.get("buffer") or {}, summary.get("sending_rate") or {}
        sizes = ", ".join(dict.fromkeys(f"{d.get('frame_size')}"
                                        for d in summary.get("directions", {}).values()))
        spread = ", ".join(format_value(summary.get(k), "frames") for k in ("min", "max")) + \
            f", {seconds(summary.get('stdev'))}"
        header = ["frame size (bytes)", "average longest burst (frames)",
                  "min, max, standard deviation", "N (searches)",
                  "bursts' measured sending rate (fps)", "Max Theoretical Frame Rate (fps)",
                  "throughput (fps)", "implied buffer time (s)", "corrected buffer time (s)"]
        ingress = rates.get("longest_bursts")
        row = [sizes, format_value(summary.get("average"), "frames"), spread,
               str(summary.get("n")), format_value(ingress and round(ingress), "fps"),
               format_value(rates.get("medium_maximum"), "fps"),
               format_value(buffer.get("throughput"), "fps"),
               seconds(buffer.get("implied_seconds")), seconds(buffer.get("corrected_seconds"))]
        caption = ("back-to-back frames (RFC 9004 §7 Table 1, with the buffer times of §6.4); "
                   f"step size {rate(s.get('step'))} frames, longest burst searched "
                   f"{rate(s.get('longest_burst'))} frames")
        return [(header, [row], caption),
                per_repetition(entry, self.COLUMNS, "longest burst per repetition (search)")]

    def notes(self, entry):
        summary, s = entry.summary, entry.settings
        buffer = summary.get("buffer") or {}
        notes = [f"buffer times: {s.get('buffer_time')}; throughput: "
                 f"{buffer.get('throughput_source') or 'none given'}"]
        if buffer.get("note"):
            notes.append(buffer["note"])
        if buffer.get("label"):
            notes.append(f"the corrected buffer time is the {buffer['label']}")
        return notes

    def warnings(self, entry):
        summary = entry.summary
        found = []
        if summary.get("at_limit"):
            found.append("a search ended at its upper limit (back_to_back.max_time x rate): "
                         "the result is likely invalid, repeat with a higher limit "
                         "(RFC 9004 §6.2)")
        if summary.get("tester_limited"):
            found.append("a search was bounded by bursts the tester could not send at the "
                         "rate: its result is a lower bound set by the tester")
        return found + super().warnings(entry)

    def draw(self, plotter, entry, label, number):
        burst_plot(plotter, entry, label, number)


def burst_plot(plotter: Plotter, entry: Entry, label: str, number: int) -> None:
    """The longest burst of each search with their average (the RFC 2544 §26.4 benchmark),
    and each search's implied and corrected DUT buffer time (RFC 9004 §6.4) with the
    summary's, computed from the average."""
    reps = [r for r in entry.summary.get("repetitions", []) if r.get("complete")]
    if not reps:
        return
    summary = entry.summary
    fig, (bursts, buffer) = plotter.figure(2, height=3.6)
    xs = [r["repetition"] for r in reps]
    bursts.plot(xs, [r["longest_burst"] for r in reps], marker="o", linestyle="",
                label="longest burst of each search")
    if summary.get("average") is not None:
        bursts.axhline(summary["average"], color="black", linestyle="--",
                       label=f"average {summary['average']:,.1f} frames (the benchmark)")
    if summary.get("at_limit"):
        bursts.axhline(entry.settings.get("longest_burst"), color="red", linestyle=":",
                       label="the search's upper limit: results there are likely invalid")
    dress(bursts, "repetition", axis_label("longest burst without loss", "frames"),
          integer_x=True, ylim=(0, None),
          title=f"Back-to-back frames (RFC 2544 §26.4, RFC 9004): {label}")
    for number_style, (key, name) in enumerate((("implied_seconds", "implied"),
                                                ("corrected_seconds", "corrected"))):
        points = [(r["repetition"], 1000 * r["buffer"][key]) for r in reps
                  if (r.get("buffer") or {}).get(key) is not None]
        if not points:
            continue
        colour = f"C{number_style}"
        buffer.plot([x for x, _ in points], [y for _, y in points], marker="o", linestyle="",
                    color=colour, label=f"{name} buffer time of each search")
        overall = (summary.get("buffer") or {}).get(key)
        if overall is not None:
            buffer.axhline(1000 * overall, color=colour, linestyle="--",
                           label=f"{name} buffer time of the average: {1000 * overall:.4g} ms")
    dress(buffer, "repetition", "DUT buffer time (ms)", integer_x=True, ylim=(0, None))
    plotter.save(fig, f"bursts_{number}",
                 f"Longest burst per repetition and DUT buffer time, RFC 9004 §6.4 ({label})")
