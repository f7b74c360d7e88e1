# SPDX-License-Identifier: BSD-3-Clause
"""Families "recovery" and "reset": RFC 2544 §26.5 system recovery, and §26.6 / RFC 6201 reset
(both timed from the loss periods the engine reports)."""

from ..collect import Entry
from ..figure import Plotter, direction_style, dress
from ..units import axis_label
from .base import Family, directions, frame_sizes, per_repetition, rate, seconds, text, yes


def _recovered(d: dict) -> str:
    """One direction's recovery in a repetition."""
    if d.get("recovered"):
        return seconds(d.get("recovery_time"))
    bound = f" (≥ {seconds(d['at_least'])})" if d.get("at_least") is not None else ""
    return ("not recovered" if d.get("recovered") is False else "undetermined") + bound


class Recovery(Family):
    key = "recovery_time"
    complete_only = True

    def quantity(self, entry):
        return "system recovery time"

    def precision(self, entry):
        s = entry.settings
        return (f"overload at {rate(s.get('overload_rate'))} frames/s for {s.get('overload')} "
                f"s, then {rate(s.get('reduced_rate'))} frames/s for {s.get('window')} s; "
                f"recovery time B − A, Timestamp B: {s.get('timestamp_b')}")

    def details(self, entry):
        summary, s = entry.summary, entry.settings
        names = directions(entry)
        per_direction = summary.get("directions", {})
        header = (["frame size (bytes)", "throughput rate (fps)", "overload rate (fps)",
                   "reduced rate (fps)"]
                  + [f"recovery time {name} (s, average)" for name in names]
                  + ["recovery time (s, average)", "recovered / repetitions"])
        row = ([frame_sizes(entry), rate(s.get("rate")), rate(s.get("overload_rate")),
                rate(s.get("reduced_rate"))]
               + [seconds(((per_direction.get(name) or {}).get("recovery_time") or {})
                           .get("average")) for name in names]
               + [seconds(summary.get("average")),
                  f"{summary.get('recovered', 0)} / {len(summary.get('repetitions', []))}"])
        columns = [("repetition", text("repetition")), ("status", text("status")),
                   ("recovery time (s)", lambda rep, e: seconds(rep.get("recovery_time")))]
        for name in names:
            columns += [
                (f"{name}: recovery (s)",
                 lambda rep, e, n=name: _recovered(rep["directions"].get(n, {}))),
                (f"{name}: Timestamp B (s)", lambda rep, e, n=name: seconds(
                    rep["directions"].get(n, {}).get("timestamp_b"))),
                (f"{name}: lost before / after A", lambda rep, e, n=name: " / ".join(
                    "-" if v is None else f"{v:,}" for v in (
                        rep["directions"].get(n, {}).get("lost_before"),
                        rep["directions"].get(n, {}).get("lost_after"))))]
        columns.append(("complete", yes("complete")))
        return [(header, [row], "system recovery (RFC 2544 §26.5 reporting format; Timestamp A "
                                f"= {s.get('overload')} s)"),
                per_repetition(entry, columns, "system recovery per repetition")]

    def notes(self, entry):
        s = entry.settings
        return [f"Timestamp A: {s.get('timestamp_a')}; Timestamp B: {s.get('timestamp_b')}"]

    def draw(self, plotter, entry, label, number):
        recovery_plot(plotter, entry, label, number)


class Reset(Family):
    key = "reset_time"
    complete_only = True

    def quantity(self, entry):
        return "reset time"

    def precision(self, entry):
        s = entry.settings
        return (f"one trial of {s.get('duration')} s at {rate(s.get('rate'))} frames/s per "
                f"repetition, the reset (dut.during_trial) {s.get('reset_at')} s into it; "
                "reset time from the longest loss period")

    def details(self, entry):
        summary, s = entry.summary, entry.settings
        frame_loss = summary.get("frame_loss_method") or {}
        reset = summary.get("reset") or {}
        header = ["reset type", "description", "frame size (bytes)", "rate (fps)",
                  "reset time, timestamp method (s, average)",
                  "reset time, frame-loss method (s, average)", "min, max (timestamp, s)",
                  "N (resets)"]
        row = [str(reset.get("type")), reset.get("description") or "-", frame_sizes(entry),
               rate(s.get("rate")), seconds(summary.get("average")),
               seconds(frame_loss.get("average")),
               f"{seconds(summary.get('min'))}, {seconds(summary.get('max'))}",
               str(summary.get("n"))]
        columns = [("repetition", text("repetition")), ("status", text("status")),
                   ("reset time, timestamp (s)", lambda rep, e: seconds(rep.get("reset_time"))),
                   ("frame loss (s)", lambda rep, e: seconds(rep.get("frame_loss_method")))]
        for name in directions(entry):
            columns += [
                (f"{name}: timestamp, frame loss (s)", lambda rep, e, n=name: ", ".join(
                    seconds(rep["directions"].get(n, {}).get(k))
                    for k in ("timestamp_method", "frame_loss_method"))),
                (f"{name}: lost (periods)", lambda rep, e, n=name: "{:,} ({:,})".format(
                    rep["directions"].get(n, {}).get("lost", 0),
                    rep["directions"].get(n, {}).get("periods", 0)))]
        columns.append(("complete", yes("complete")))
        return [(header, [row], "reset (RFC 2544 §26.6 / RFC 6201: one statement per reset "
                                "type)"),
                per_repetition(entry, columns, "reset time per repetition")]

    def notes(self, entry):
        s = entry.settings
        methods = s.get("methods") or {}
        return [f"{s.get('timestamps')}; timestamp method: {methods.get('timestamp')}; "
                f"frame-loss method: {methods.get('frame_loss')}"]

    def draw(self, plotter, entry, label, number):
        reset_plot(plotter, entry, label, number)


def recovery_plot(plotter: Plotter, entry: Entry, label: str, number: int) -> None:
    """Each repetition's recovery time per direction with their average (RFC 2544 §26.5); a
    repetition not recovered within the window, or undetermined, at its lower bound, hollow."""
    reps = [r for r in entry.summary.get("repetitions", []) if r.get("complete")]
    if not reps:
        return
    fig, (ax,) = plotter.figure()
    names = list(dict.fromkeys(n for r in reps for n in r.get("directions", {})))
    for i, name in enumerate(names):
        style = direction_style(name)
        found = [(r["repetition"], r["directions"][name]) for r in reps
                 if name in r.get("directions", {})]
        done = [(x, d["recovery_time"]) for x, d in found if d.get("recovered")]
        ax.plot([x for x, _ in done], [y for _, y in done], linestyle="", color=f"C{i}",
                marker=style.get("marker", "o"), label=f"recovery time {name}")
        bounded = [(x, d["at_least"]) for x, d in found
                   if not d.get("recovered") and d.get("at_least") is not None]
        if bounded:
            ax.plot([x for x, _ in bounded], [y for _, y in bounded], linestyle="",
                    color=f"C{i}", marker="^", fillstyle="none", markersize=9,
                    label=f"{name}: not recovered or undetermined, at least")
    average = entry.summary.get("average")
    if average is not None:
        ax.axhline(average, color="black", linestyle="--",
                   label=f"average {average:.6g} s over {entry.summary.get('n')} repetition(s)")
    dress(ax, "repetition", axis_label("system recovery time", "s"), integer_x=True,
          ylim=(0, None), title=f"System recovery (RFC 2544 §26.5): {label}")
    plotter.save(fig, f"recovery_{number}",
                 f"System recovery time B − A per repetition and direction ({label})")


def reset_plot(plotter: Plotter, entry: Entry, label: str, number: int) -> None:
    """Each repetition's reset time per direction by RFC 6201's two methods, and the
    averages."""
    reps = [r for r in entry.summary.get("repetitions", []) if r.get("complete")]
    if not reps:
        return
    fig, (ax,) = plotter.figure()
    names = list(dict.fromkeys(n for r in reps for n in r.get("directions", {})))
    methods = (("timestamp_method", "timestamp method", "o"),
               ("frame_loss_method", "frame-loss method", "x"))
    for i, name in enumerate(names):
        for key, what, marker in methods:
            points = [(r["repetition"], r["directions"][name][key]) for r in reps
                      if r.get("status") == "back" and name in r.get("directions", {})]
            ax.plot([x for x, _ in points], [y for _, y in points], linestyle="",
                    color=f"C{i}", marker=marker, label=f"{what}, {name}")
    summary = entry.summary
    for key, value, style in (("timestamp method", summary.get("average"), "--"),
                              ("frame-loss method",
                               (summary.get("frame_loss_method") or {}).get("average"), ":")):
        if value is not None:
            ax.axhline(value, color="black", linestyle=style,
                       label=f"average, {key}: {value:.6g} s")
    reset = summary.get("reset") or {}
    dress(ax, "repetition", axis_label("reset time", "s"), integer_x=True, ylim=(0, None),
          title=f"Reset ({reset.get('type')}; RFC 2544 §26.6, RFC 6201): {label}")
    plotter.save(fig, f"reset_{number}",
                 f"Reset time per repetition and direction, timestamp and frame-loss methods "
                 f"({label})")
