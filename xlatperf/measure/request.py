# SPDX-License-Identifier: BSD-3-Clause
"""TrialRequest: the one place an engine `trial` request (docs/protocol.md) is built. The
measured trial, the learning trial and RFC 9693's phase 1 and validation differ only in their
flows, duration, timeout and extras; what every request takes from the configuration (the
seed, the validity rule, the capture) is filled in here once."""

from dataclasses import dataclass

PROGRESS_INTERVAL = 1.0  # seconds between the engine's progress events


@dataclass
class TrialRequest:
    flows: list[dict]
    duration: float                   # seconds of sending
    timeout: float                    # RFC 2544 §23 d: receiving continues this long after
    seed: int
    finish_early: bool = True
    max_lag: float | None = None      # the schedule validity rule's tolerance; None: siitperf's
    delay: dict | None = None         # delay measurements (docs/delay.md)
    losses: bool = False              # report each direction's loss periods
    learn: dict | None = None         # RFC 9693 phase 1: fill the Responder's state table
    capture: dict | None = None       # a pcapng sample of the received frames
    dns: dict | None = None           # DNS queries' zone and authoritative ports (docs/dns.md)
    progress_interval: float = PROGRESS_INTERVAL

    @classmethod
    def from_config(cls, config, flows: list[dict], duration: float, *,
                    timeout: float | None = None, finish_early: bool = True,
                    **more) -> "TrialRequest":
        """A request with what every trial of the measurement shares: traffic.seed, the
        validity rule (trial.validity, trial.max_lag) and the capture ([capture])."""
        trial = config.trial
        capture = config.capture
        timeout = trial.timeout if timeout is None else timeout
        if config.dns.enabled:
            # A query's answer counts until dns.timeout after it was sent: the trial waits that
            # long for the last one's, whatever trial.timeout is (docs/dns.md).
            timeout = max(timeout, config.dns.timeout)
        return cls(flows=flows, duration=duration, timeout=timeout,
                   seed=config.traffic.seed, finish_early=finish_early,
                   max_lag=trial.max_lag if trial.validity == "schedule" else None,
                   capture=({"frames": capture.frames, "stride": capture.stride,
                             "snaplen": capture.snaplen, "foreign": capture.foreign}
                            if capture.enabled else None),
                   **more)

    def to_json(self) -> dict:
        """The request as the engine reads it (without `id` and `op`, which the client adds)."""
        request = {"duration": self.duration, "timeout": self.timeout,
                   "finish_early": self.finish_early,
                   "progress_interval": self.progress_interval, "seed": self.seed,
                   "flows": self.flows}
        optional = {"max_lag": self.max_lag, "delay": self.delay or None,
                    "losses": self.losses or None, "learn": self.learn,
                    "capture": self.capture, "dns": self.dns}
        return request | {key: value for key, value in optional.items() if value is not None}
