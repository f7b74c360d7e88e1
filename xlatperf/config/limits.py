# SPDX-License-Identifier: BSD-3-Clause
"""The engine's limits that configuration checks (its hello `limits`; docs/protocol.md "trial",
"Queues and workers"), below the schema so that every check can import them."""

MAX_QUEUES = 64  # the engine's limit (hello limits.max_queues): stream ids of the test tag
# DPDK 22.11's AF_XDP PMD receives a frame into one 2048-byte umem chunk less the XDP headroom
# (no multi-buffer frames): larger frames are lost (measured on veth: 1792 bytes arrive, 1800 not).
AF_XDP_MAX_FRAME = 1792
# Tunnel headers a stream's frames may nest around their IP packet (hello limits.max_tunnels).
MAX_TUNNELS = 2
MAX_CAPTURE_FRAMES = 4096  # frames per port and trial the engine samples at most (CapturePlan::kMaxFrames)
MAX_PATTERN = 65536  # the longest frame pattern of a flow in the engine (kMaxPattern)
# The engine's limits on a trial request (hello limits; docs/protocol.md "trial", "Queues and
# workers"): its flows, its duration in seconds, and the test tag's stream ids, one per stream
# of every flow on every TX queue (each flow counting at least 2 streams).
MAX_FLOWS = 127
MAX_DURATION = 1_000_000.0
STREAM_IDS = 256


def stream_ids_needed(flows: int, streams_per_flow: int, queues: int) -> int:
    """The test tag's stream ids a trial of `flows` flows needs (the engine's rule): one per
    stream of every flow on every TX queue, each flow counting at least 2."""
    return flows * max(2, streams_per_flow) * queues
