# SPDX-License-Identifier: BSD-3-Clause
"""What the engine's loss periods say about an interruption (docs/recovery.md): the system
recovery time of RFC 2544 §26.5 and the reset time of RFC 2544 §26.6 as RFC 6201 updates it.

A loss period is a run of consecutive frames of one direction, in its sending order, that never
arrived (docs/protocol.md, "Loss periods"): the scheduled send times of its first and last lost
frame (`first_lost_s`, `last_lost_s`, s after the trial's start), the number of frames, and the
send times of the last frame that arrived before it (`last_before_s`, None when the run starts
with the trial) and of the first that arrived after it (`first_after_s`, None when it lasts to
the trial's end). The engine lists the first LISTED periods of a trial in sending order, the
last LISTED (`last`) and, apart, the longest; `periods` and `lost` count them all.

Every time here is a *send* time from the tester's schedule: the tester cannot know when a lost
frame would have arrived, and the frames around a loss period left it on the same schedule."""

LISTED = 100   # the engine lists a flow's first and last 100 loss periods (docs/protocol.md)


# What a direction without loss periods in its reply, although it lost frames, says.
UNLISTED = ("undetermined: frames were lost, but the engine's reply lists no loss periods for "
            "this direction (several flows per direction, or an engine without loss periods)")


def _listed_all(losses: dict) -> bool:
    return losses.get("periods", 0) == len(losses.get("first") or [])


# --------------------------------------------------------------------------------------------
# RFC 2544 §26.5: system recovery
# --------------------------------------------------------------------------------------------


def recovery(losses: dict | None, at: float, overload_rate: float,
             recovery_rate: float) -> dict:
    """The recovery of one direction after the rate dropped from `overload_rate` to
    `recovery_rate` at `at` s (Timestamp A).

    Timestamp B is the send time of the last lost frame sent at or after A; the recovery time
    is B − A, 0 when no frame sent at the reduced rate was lost. The frames sent before A are
    due at most 1 / overload_rate before it (the schedule is exact across the step), so a
    frame counts as sent at or after A when it is due later than A − 0.5 / overload_rate (the
    send times are the engine's TSC ticks, rounded).

    Returns {"recovery_time": s or None, "timestamp_b": s or None, "recovered": bool or None,
    "overloaded": bool or None, "determined": bool, "lost_after": frames lost among those sent
    at or after A (None when not known), "lost_before": likewise before A, "at_least": a lower
    bound of the recovery time when it is not known, "note"}. `recovered` is False when the
    loss lasts to the trial's end (not recovered within the window), None when the report
    cannot tell. `overloaded` is False when no frame of the trial was lost: the DUT was never
    overloaded, so there is nothing it recovered from (no recovery time). `losses` None (the
    reply lists no loss periods although frames were lost) is undetermined, never "no loss".
    """
    result = {"recovery_time": None, "timestamp_b": None, "recovered": None,
              "overloaded": None, "determined": True, "lost_after": None, "lost_before": None,
              "at_least": None, "note": None}
    if losses is None:
        return result | {"determined": False, "note": UNLISTED}
    if losses.get("lost", 0) == 0:
        return result | {"overloaded": False, "lost_after": 0, "lost_before": 0,
                         "note": "not overloaded: the DUT lost no frame at the overload rate "
                                 "(nor after it), so it had nothing to recover from: the "
                                 "throughput given is below the DUT's, or recovery.overload is "
                                 "too short to fill its buffers; no recovery time"}
    result["overloaded"] = True
    threshold = at - 0.5 / overload_rate
    listed = losses.get("first") or []
    complete = _listed_all(losses)
    after = [p for p in listed if p["last_lost_s"] >= threshold]
    if complete:
        result["lost_after"] = sum(_frames_from(p, at, threshold, recovery_rate) for p in after)
        result["lost_before"] = losses.get("lost", 0) - result["lost_after"]
    latest = losses.get("last") or []
    if not complete and latest:
        # The trial's last periods: the last one after A is the last one listed, if any is.
        after = [p for p in latest if p["last_lost_s"] >= threshold]
        if latest[0]["last_lost_s"] < threshold:  # every period after A is listed
            result["lost_after"] = sum(_frames_from(p, at, threshold, recovery_rate) for p in after)
            result["lost_before"] = losses.get("lost", 0) - result["lost_after"]
        complete = True
    last = after[-1] if after and complete else None
    longest = losses.get("longest")
    if last is None and not complete and longest and longest["first_after_s"] is None \
            and longest["last_lost_s"] >= threshold:
        # Only the trial's last period can last to its end: the longest is that one.
        last = longest
    if last is not None and last["first_after_s"] is None:
        result |= {"recovered": False, "timestamp_b": last["last_lost_s"],
                   "at_least": max(0.0, last["last_lost_s"] - at),
                   "note": "not recovered within the window: frames were lost up to the end "
                           "of the trial"}
        return result
    if complete:
        b = last["last_lost_s"] if last is not None else None
        return result | {"recovered": True, "timestamp_b": b,
                         "recovery_time": max(0.0, b - at) if b is not None else 0.0}
    # The engine listed only the first periods: the last one after A is not among them.
    seen = [p["last_lost_s"] for p in after]
    return result | {"determined": False,
                     "at_least": max(0.0, max(seen) - at) if seen else None,
                     "note": f"undetermined: the engine lists the first {len(listed)} of "
                             f"{losses.get('periods')} loss periods, and the last one sent "
                             "at or after Timestamp A is not among them"}


def _frames_from(period: dict, at: float, threshold: float, rate: float) -> int:
    """How many of a period's frames were sent at or after A: all when it starts after A;
    for a period across A, those due at A, A + 1/rate, ... up to its last lost frame."""
    if period["first_lost_s"] >= threshold:
        return period["frames"]
    return min(period["frames"], round((period["last_lost_s"] - at) * rate) + 1)


# --------------------------------------------------------------------------------------------
# RFC 2544 §26.6 / RFC 6201: reset
# --------------------------------------------------------------------------------------------


def reset_time(losses: dict | None, offered_rate: float) -> dict:
    """The reset time of one direction from its loss periods, by both methods of RFC 6201:

    * timestamp method: first_after_s − last_before_s of the longest loss period, the send
      times of the last frame forwarded before the interruption and of the first forwarded
      after it (RFC 2544 §26.6's Timestamps A and B, by send time: equal to the difference of
      their arrival times when the two frames crossed the DUT with the same delay);
    * frame-loss method: every frame lost in the trial / the offered rate (RFC 6201: it
      assumes that the DUT loses no frame but in the interruption; `other_lost` shows loss
      outside the longest period).

    Returns {"timestamp_method": s or None, "frame_loss_method": s, "interrupted",
    "back" (frames arrived again before the trial ended), "lost", "periods", "longest",
    "other_lost", "determined", "note"}. The timestamp method is None when the longest period
    starts with the trial (no frame before it) or lasts to its end (the DUT was not back within
    the trial). `losses` None (no loss periods in the reply although frames were lost) is
    undetermined: both methods None, never 0 s.
    """
    if losses is None:
        return {"timestamp_method": None, "frame_loss_method": None, "interrupted": None,
                "back": None, "lost": None, "periods": None, "longest": None,
                "other_lost": None, "determined": False, "note": UNLISTED}
    lost = losses.get("lost", 0)
    longest = losses.get("longest")
    result = {"timestamp_method": None, "frame_loss_method": lost / offered_rate,
              "interrupted": bool(longest), "back": True, "lost": lost,
              "periods": losses.get("periods", 0), "longest": longest,
              "other_lost": lost - (longest["frames"] if longest else 0), "determined": True,
              "note": None}
    if not longest:
        return result | {"timestamp_method": 0.0,
                         "note": "no frame was lost: no interruption seen"}
    if longest["first_after_s"] is None:
        return result | {"back": False,
                         "note": "frames were lost up to the end of the trial: the DUT was not "
                                 "back within it (lengthen trial.duration)"}
    if longest["last_before_s"] is None:
        return result | {"note": "the interruption began with the trial's first frame: no "
                                 "Timestamp A (dut.during_trial_at too early?)"}
    return result | {"timestamp_method": longest["first_after_s"] - longest["last_before_s"]}
