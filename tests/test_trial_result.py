# SPDX-License-Identifier: BSD-3-Clause
"""What a trial record keeps of the engine's reply beyond the counts: how the frames were
shared out over several queues, and the loss periods; both survive the record (--resume)."""

from xlatperf.engine.protocol import TrialResult, trial_from_record

PERIOD = {"first_lost_s": 0.1, "last_lost_s": 0.1499, "frames": 500, "last_before_s": 0.0999,
          "first_after_s": 0.15}


def reply(queues: int, losses: bool) -> dict:
    flow = {"name": "forward", "rate": 10000, "planned": 3000, "sent": 3000, "received": 2500,
            "send_time": 0.2999, "max_lag_us": 1.0,
            "streams": [{"kind": "foreground", "sent": 3000, "received": 2500, "duplicates": 0,
                         "reordered": 0, "bad_length": 0, "out_of_range": 0, "frame_size": 64,
                         "rx_frame_size": 64}],
            "queues": [{"queue": q, "planned": 3000 // queues, "sent": 3000 // queues, "send_time": 0.2999,
                        "max_lag_us": 1.0} for q in range(queues)]}
    if losses:
        flow["losses"] = {"periods": 1, "lost": 500, "first": [PERIOD], "longest": PERIOD}
    return {"ok": True, "valid": True, "invalid_reason": None, "elapsed": 0.3, "flows": [flow],
            "ports": [{"index": 1, "foreign": 0, "neighbor_replies": 0,
                       "queues": [{"queue": q, "test_frames": 2500 // queues, "foreign": 0}
                                  for q in range(queues)]}]}


def test_one_queue_and_no_losses_add_nothing_to_the_record():
    record = TrialResult.from_reply(10000, reply(1, False), 0.3).to_dict()
    assert "queues" not in record and "losses" not in record


def test_queue_shares_and_loss_periods_survive_the_record():
    result = TrialResult.from_reply(10000, reply(2, True), 0.3)
    assert result.queues == {"tx": {"forward": [1500, 1500]}, "rx": {"1": [1250, 1250]}}
    assert result.losses == {"forward": {"periods": 1, "lost": 500, "first": [PERIOD], "longest": PERIOD}}
    record = {**result.to_dict(), "duration": 0.3}
    again = trial_from_record(record)
    assert again.queues == result.queues and again.losses == result.losses
