# SPDX-License-Identifier: BSD-3-Clause
"""Back-to-back frames (RFC 2544 §26.4, RFC 9004) end to end: the real engine against the
`limit` lab DUT, whose nftables `limit rate r/second burst b packets` is a token bucket of known
size and rate, so the longest burst without loss is known in advance.

The bucket (Linux nft_limit, packet mode, kernels since 5.13): it holds b tokens, each frame
costs one, tokens come back at r per second (in nanoseconds: a frame costs 10^9 / r ns, the
bucket holds b x 10^9 / r ns and gains 1 ns per ns), and it is full when the burst starts (the
pause between bursts, far longer than b / r, refills it). It counts frames, not bytes, so the
frame size and what counts as a frame's length (the wire adds preamble, gap and FCS; tbf would
count the frame without FCS) play no part. Frame i of a burst sent at R frames/s arrives
i / R after the first, when the bucket holds b + r i / R - i tokens (it never fills up again
while R > r); it passes when that is at least 1. So a burst of N frames passes whole when its
last frame, i = N - 1, does:

    N - 1 <= (b - 1) / (1 - r / R)      longest burst  N* = floor((b - 1) / (1 - r / R)) + 1

For b = 2000, r = 20,000 and R = 60,000: N* = floor(1999 x 1.5) + 1 = 2999 frames. R is the
burst's *measured* sending rate (from the engine's send time), not the requested one.

RFC 9004's corrected buffer time recovers the bucket: with the DUT's throughput r,
corrected = N*/R x (1 - r/R) = (b - 1)/R + (1 - r/R)/R, so corrected x R is b within a frame.
"""

import math
import statistics

import pytest
from e2e_util import summary, trials, xlatperf

RATE = 20_000        # r: the bucket's refill rate, the DUT's throughput (frames/s)
BUCKET = 2_000       # b: the bucket's size (frames)
BURST_RATE = 60_000  # R requested: well within what the tester keeps on veth
STEP = 10            # the search's step size (frames)


def longest_burst(bucket: int, rate: float, burst_rate: float) -> int:
    """N*: the longest burst a full token bucket passes whole (module docstring)."""
    return math.floor((bucket - 1) / (1 - rate / burst_rate)) + 1


def test_longest_burst_matches_the_token_bucket(make_lab, tmp_path):
    assert longest_burst(BUCKET, RATE, BURST_RATE) == 2999   # the docstring's example
    config = make_lab("limit", rate=RATE, burst=BUCKET)
    out = tmp_path / "b2b"
    # Five searches (RFC 2544 asks for 50: a key); the pause (0.3 s) refills the bucket
    # (b / r = 0.1 s); bursts up to 0.2 s (12,000 frames); timeout 0.2 s after a lossy burst.
    # A burst whose sender this shared host stole more than max_lag from (20 ms, seen on a
    # busy day in one burst of ten) is sent again, up to 6 times: the test is of the burst
    # arithmetic, not of an idle host.
    xlatperf("back-to-back", "-c", str(config), "--rate", str(BURST_RATE), "--repeat", "5",
             "--set", "back_to_back.max_time=0.2", "--set", f"back_to_back.step={STEP}",
             "--set", "back_to_back.retries=6",
             "--set", f"back_to_back.throughput={RATE}", "--set", "trial.pause=0.3",
             "--set", "trial.timeout=0.2", "--out", str(out), "-q", timeout=400)
    s = summary(out)
    assert s["complete"] and s["procedure"] == "back-to-back" and s["n"] == 5
    # The bucket is judged by the searches the tester bounded neither way, by their median:
    # the DUT is the kernel on a CPU this host shares, and a DUT CPU taken away mid-burst
    # moves one search's answer either way (frames it processes late in a bunch find fewer
    # tokens; a stall that ends the burst later finds more: CI saw one search end at 1,494 of
    # 2,999 while the others agreed). On a host so busy that a burst stays invalid through
    # its retries, the tester says so (tester_limited) and that search is left out.
    judged = [rep for rep in s["repetitions"]
              if rep["found"] and not rep["tester_limited"] and not rep["at_limit"]]
    assert len(judged) >= 3, s["repetitions"]
    for rep in judged:
        # a tester never sends a burst faster than asked (its pace may only fall behind)
        assert rep["sending_rate"] <= 1.01 * BURST_RATE, rep
    # each search against the bucket's N* at its own longest burst's measured rate
    ratios = [rep["longest_burst"] / longest_burst(BUCKET, RATE, rep["sending_rate"])
              for rep in judged]
    assert statistics.median(ratios) == pytest.approx(1.0, abs=0.10), ratios
    # Without the refill the bucket would pass only b frames: the measurement shows it.
    assert statistics.median(rep["longest_burst"] for rep in judged) > 1.3 * BUCKET
    # RFC 9004's corrected buffer time recovers the bucket (each search's own, by the median)
    recovered = [rep["buffer"]["corrected_seconds"] * rep["sending_rate"] for rep in judged]
    assert statistics.median(recovered) == pytest.approx(BUCKET, rel=0.10), recovered
    # ... and the summary's buffer times are RFC 9004's arithmetic on the average burst
    buffer = s["buffer"]
    implied = s["average"] / buffer["ingress_rate"]
    assert buffer["implied_seconds"] == pytest.approx(implied)
    assert buffer["corrected_seconds"] == pytest.approx(
        implied * (1 - RATE / buffer["ingress_rate"]))
    # Every burst asked for exactly N frames and sent them all, or was flagged invalid.
    for record in trials(out):
        if record.get("phase") == "learning":
            continue
        frames = record["burst"]["frames"]
        for direction in record["directions"].values():
            assert direction["planned"] == frames
            assert direction["sent"] == frames or not record["burst"]["valid"]
    # The report's back-to-back section and plot.
    xlatperf("report", str(out))
    markdown = (out / "report" / "report.md").read_text()
    assert "RFC 9004 §7 Table 1" in markdown and "corrected buffer time" in markdown
    assert (out / "report" / "plots" / "bursts_1.png").exists()
