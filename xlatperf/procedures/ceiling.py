# SPDX-License-Identifier: BSD-3-Clause
"""What limited a throughput result: the tester's ceiling, as a run shows it (a rate the sender
could not keep, in enough attempts) or as calibrated (tester.ceiling, written by `xlatperf lab
up`), and the sentences that say whether a result is the DUT's or a bound set by the tester,
by throughput.max_rate or by a dual DUT's middle link. The searches (search.py) read them."""

import math
from dataclasses import dataclass

from ..frames.trial import side_vlan
from ..config.dns import DNS_QUERIES, ceiling_unit
from ..config.ports import parse_port


def rate_not_kept(step) -> bool:
    # Steps are TrialResults or look like one (RFC 9693's EstablishmentStep: a phase 1 the
    # tester could not send at its rate also bounds a connection-rate search).
    return bool(getattr(step, "rate_not_kept", False))


def tester_bound(step) -> bool:
    """Whether a step that did not pass failed by the tester's doing, not the DUT's: invalid
    because of the tester (its pacing, its ports' drops, TCP replies its TX queue did not take),
    with no more loss than that explains. A trial that also showed the DUT losing frames on its
    own is the DUT's failure."""
    if not (rate_not_kept(step) or getattr(step, "dropped_by_tester", False)
            or getattr(step, "replies_not_sent", False)):
        return False
    beyond = getattr(step, "lost_beyond_tester_fault", None)
    return not (beyond is not None and beyond())


# An invalid trial shows a ceiling only when its sender fell clearly short of the rate. A
# sender that sent (nearly) every frame but finished a few microseconds late is at the edge of
# what it can do: that trial fails, but a later repetition may pass the same rate, so it must
# not bound the rest of the run (each repetition would then only go lower).
CLEAR_SHORTFALL = 1e-3
# ... and only when the shortfall repeats: in this many attempts of the step (the step's own
# and the ones taken again before it, trial.retakes), one scheduling hiccup being no ceiling.
# Below the tester's calibrated ceiling, which says it can send faster, one more.
CEILING_EVIDENCE = 2
CEILING_EVIDENCE_BELOW_CALIBRATION = 3


def unreachable_from(step, calibrated: int | None = None) -> int | None:
    """The rate a step shows the tester cannot reach, or None. An invalid trial's sender is cut
    off at the validity rule's limit, so what it sent by then is its pace; it is a ceiling when
    every attempt of the step (CEILING_EVIDENCE of them at least, more below the `calibrated`
    ceiling) fell clearly short of the rate, and the DUT lost no more than the tester's fault
    explains. The ceiling is the fastest pace the attempts showed.
    A sender that met its capacity (TrialResult.capacity_shown: far short of its schedule for
    longer than a hiccup) shows it in one attempt, whatever the DUT lost besides: the DUT lost
    that at the sender's pace, not at the rate asked, and no trial above the pace can be valid.
    Not below the calibrated ceiling, which says the tester can send faster."""
    if not rate_not_kept(step):
        return None
    below_calibration = bool(calibrated) and step.rate <= calibrated
    if getattr(step, "capacity_shown", False) and not below_calibration:
        return max(1, math.floor(step.achieved_rate))
    if not tester_bound(step):
        return None
    needed = CEILING_EVIDENCE_BELOW_CALIBRATION if below_calibration else CEILING_EVIDENCE
    earlier = getattr(step, "earlier_attempts", ())
    paces = [getattr(step, "achieved_rate", None)] + [a.get("achieved_rate") for a in earlier]
    if len(paces) < needed or any(p is None or p >= step.rate * (1 - CLEAR_SHORTFALL)
                                  for p in paces):
        return None
    return max(1, math.floor(max(paces)))


def tester_ceiling(steps, known: int | None = None, calibrated: int | None = None) -> int | None:
    """The lowest rate the tester has shown it cannot send at (unreachable_from), among
    `steps` and an earlier `known` one; None when none."""
    rates = [r for r in (unreachable_from(s, calibrated) for s in steps) if r is not None]
    return min(rates + ([known] if known is not None else []), default=None)


# --------------------------------------------------------------------------------------------
# The tester's calibrated ceiling (tester.ceiling, written by `xlatperf lab up`): the highest
# rate per direction at which the tester, through an ideal DUT, sent and received every frame.
# A throughput search measures no rate above it; a DUT that passes at it is faster than this
# tester can show.
# --------------------------------------------------------------------------------------------


def sending_version(config) -> int:
    """The IP version of the side that sends a one-direction run's frames (a DNS client's)."""
    side = "right" if config.traffic.direction == "reverse" else "left"
    return config.side(side).ip_version


def ceiling_conditions(config, dns_timeout: float | None = None) -> str:
    """The tester set-up a calibrated ceiling holds for: port types, frame sizes (one, or the
    IMIX; or DNS queries), VLAN tags, directions, lcores, queues and which address and port fields vary (the
    sender's cost per frame). A run with another set-up does not apply it. dns_timeout: the
    DNS64 test's timeout where it is not the config's (its self-test's config has a quarter)."""
    kinds = "/".join(parse_port(config.side(side).port).kind for side in ("left", "right"))
    traffic = config.traffic
    # DNS queries are no test frames of a size: a frames' ceiling holds nothing for them, and
    # theirs (RFC 8219 §9.2.1's self-test) is for a timeout and the client's IP version.
    sizes = (f"{DNS_QUERIES} over IPv{sending_version(config)} (timeout {dns_timeout or config.dns.timeout:g} s)"
             if config.dns.enabled else
             f"IMIX {traffic.imix}" if traffic.imix else f"{traffic.frame_size}-byte frames")
    tags = {side: side_vlan(config, side) for side in ("left", "right")}
    varying = [f"addresses.{side} {getattr(config.addresses, side)}" for side in
               ("left", "right") if getattr(config.addresses, side) != "fixed"]
    varying += [f"ports.{key} {getattr(config.ports, key)}" for key in
                ("forward_src", "forward_dst", "reverse_src", "reverse_dst")
                if getattr(config.ports, key) != "fixed"]
    return ", ".join([f"{kinds} ports", sizes,
                      *([f"VLAN tags left {len(tags['left'])} right {len(tags['right'])}"]
                        if any(tags.values()) else []),
                      f"direction {traffic.direction}", f"lcores {config.tester.lcores}",
                      *([f"queues {config.tester.queues}"] if config.tester.queues > 1 else []),
                      *([f"varying {' '.join(varying)}"] if varying else [])])


@dataclass(frozen=True)
class CalibratedCeiling:
    fps: int              # frames/s per direction (DNS queries/s where its conditions are DNS's)
    conditions: str       # the set-up it was calibrated for ("" = any)
    calibration: str      # how and when
    run_conditions: str   # this run's set-up

    @property
    def applies(self) -> bool:
        return not self.conditions or self.conditions == self.run_conditions

    @property
    def unit(self) -> str:
        return ceiling_unit(self.conditions)

    def statement(self) -> str:
        """The one sentence every result of the run states about the tester's ceiling."""
        text = f"tester ceiling {self.fps:,} {self.unit}"
        details = "; ".join(part for part in (self.conditions, self.calibration and
                                              f"calibrated by {self.calibration}") if part)
        if details:
            text += f" ({details})"
        if not self.applies:
            text += f"; not applied: this run's set-up is {self.run_conditions}"
        return text

    def to_dict(self) -> dict:
        return {"fps": self.fps, "unit": self.unit, "for": self.conditions, "calibration": self.calibration,
                "applies": self.applies, "statement": self.statement()}


def calibrated_ceiling(config) -> CalibratedCeiling | None:
    """The configured tester ceiling (tester.ceiling), or None when there is none."""
    tester = config.tester
    if not tester.ceiling:
        return None
    return CalibratedCeiling(tester.ceiling, tester.ceiling_for, tester.ceiling_calibration,
                             ceiling_conditions(config))


def ceiling_setting(config) -> dict | None:
    """What every result of a run records about the tester's calibrated ceiling (its summary's
    settings.tester_ceiling; the console and the report print its statement)."""
    ceiling = calibrated_ceiling(config)
    return ceiling.to_dict() if ceiling is not None else None


def search_range_top(config, max_rate: int) -> tuple[int, int | None]:
    """A throughput search's upper end: `max_rate`, lowered to the tester's calibrated ceiling
    when one applies to this run; and that ceiling when it lowered the end (else None)."""
    ceiling = calibrated_ceiling(config)
    if ceiling is None or not ceiling.applies or ceiling.fps >= max_rate:
        return max_rate, None
    return ceiling.fps, ceiling.fps


def configured_top(config, hi: int, medium_max: int, calibrated: int | None) -> int | None:
    """The search's upper end `hi` when it is the setting throughput.max_rate, below the
    medium's maximum and not lowered to the calibrated ceiling: a pass there measured the
    setting, not the DUT (range_limited); else None."""
    settings = config.throughput
    return hi if settings.max_rate and hi < medium_max and calibrated is None else None


def range_limited(values, top: int | None, medium_max: int | None,
                  rate_unit: str = "frames/s") -> dict:
    """{"range_limited": one sentence} when a repetition passed at the configured top
    (configured_top), for the summary, the console and the report; {} otherwise."""
    if top is None or not any(v >= top for v in values):
        return {}
    return {"range_limited": (
        f"a lower bound set by throughput.max_rate = {top:,} {rate_unit}, not a property of the "
        "DUT: the DUT passed the highest rate the search tried, so its throughput may be "
        f"higher; raise throughput.max_rate (the medium allows {medium_max:,}) to find it")}


def middle_link_limited(values, medium_max: int | None, limit: str | None,
                        rate_unit: str = "frames/s") -> dict:
    """{"middle_link_limited": one sentence} when a repetition passed at the medium's maximum
    `medium_max` and a dual DUT's middle link sets it (`limit` says how), for the summary, the
    console and the report; {} otherwise."""
    if limit is None or medium_max is None or not any(v >= medium_max for v in values):
        return {}
    return {"middle_link_limited": (
        f"a lower bound set by the link between the dual DUT's CE and BR, not by the DUT: it passed "
        f"at {medium_max:,} {rate_unit}, {limit}, the most that link carries; over a faster link "
        "(dut.middle_link_speed states its speed) its throughput may be higher")}


def mostly_tester_limited(flags: list[bool]) -> bool:
    """Whether a summary of repetitions is tester-limited: each repetition is judged by its own
    search, and the median is a bound set by the tester when at least half of them are (one
    late trial in one of ten searches does not make the others' result the tester's)."""
    return bool(flags) and 2 * sum(flags) >= len(flags)


def lower_bound(steps, limited: bool, calibrated: int | None = None,
                rate_unit: str = "frames/s") -> dict:
    """{"lower_bound": one sentence} when the result is tester-limited, for the summary, the
    console and the report; {} otherwise. calibrated: the calibrated tester ceiling, when a
    search passed at it."""
    rates = [s.rate for s in steps if rate_not_kept(s)]
    if not limited or not (rates or calibrated):
        return {}
    ceiling = tester_ceiling(steps)
    # A tester whose pace varies (a stateful phase 2 sending from its state table, a busy CPU)
    # may have kept a rate above the pace it showed at a failing step: then only the rate it
    # could not keep is a true statement.
    kept = max((s.rate for s in steps if not rate_not_kept(s)), default=0)
    if calibrated is not None:
        shown = (f"cannot send faster than its calibrated ceiling of {calibrated:,} {rate_unit}, "
                 "and the DUT passed at it")
    elif ceiling is not None and ceiling >= kept:
        shown = f"could not send faster than {ceiling:,} {rate_unit} in this run (invalid trials)"
    else:
        above = [r for r in rates if r > kept]
        shown = f"could not keep {min(above or rates):,} {rate_unit} in this run (invalid trials)"
    return {"lower_bound": (
        f"a lower bound set by the tester, not a property of the DUT: the tester {shown}, so "
        "the DUT's throughput may be higher; measure with a faster tester set-up (more cores, "
        "another port type) to find it")}


def dut_limited(throughput: float, calibrated: int, shown: int | None = None,
                rate_unit: str = "frames/s") -> dict:
    """{"dut_limited": one sentence}: a result the DUT set, below the tester's calibrated
    ceiling, with the tester's margin over it. shown: a lower rate the tester could not keep
    in this run (its ceiling is then that one)."""
    if throughput <= 0:
        return {}
    if shown is not None and shown < calibrated:
        ceiling, which = shown, (f"ceiling in this run of {shown:,} {rate_unit} (the rate it could "
                                 f"not send faster than; calibrated {calibrated:,})")
    else:
        ceiling, which = calibrated, f"calibrated ceiling of {calibrated:,} {rate_unit}"
    return {"dut_limited": (
        f"set by the DUT, not the tester: {throughput:,.0f} {rate_unit} is "
        f"{100 * throughput / ceiling:.0f} % of the tester's {which} (a tester margin of "
        f"{ceiling / throughput:.2f}x)")}
