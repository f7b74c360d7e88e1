# SPDX-License-Identifier: BSD-3-Clause
"""Sends frames on one interface and reports the frames that arrive on another.

Run inside the lab's tester namespace (standard library only, so it needs no installed package):

    ip netns exec xlp-tester python3 tests/lab_probe.py SEND_IFACE RECV_IFACE < request.json

request.json: {"frames": [hex, ...], "marker": hex, "count": N, "rate": fps, "idle": s}
  frames are sent in turn until `count` frames went out (default: each once), back to back or
  paced at `rate` frames/s; frames that arrive on RECV_IFACE and contain `marker` are counted
  until nothing more arrived for `idle` seconds (default 0.3).
stdout: {"sent": N, "received": N, "frames": [hex of the first 16 received frames]}
"""

import json
import socket
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SO_RCVBUFFORCE = 33  # lets root exceed net.core.rmem_max: paced runs queue many frames


def main() -> None:
    send_iface, recv_iface = sys.argv[1], sys.argv[2]
    req = json.load(sys.stdin)
    frames = [bytes.fromhex(f) for f in req["frames"]]
    marker = bytes.fromhex(req["marker"])
    count = int(req.get("count", len(frames)))
    rate = float(req.get("rate", 0))
    idle = float(req.get("idle", 0.3))

    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    rx.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
    rx.bind((recv_iface, 0))  # bound before sending, so no reply can be missed
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    tx.bind((send_iface, 0))

    start = time.perf_counter()
    for i in range(count):
        if rate:
            deadline = start + i / rate
            while time.perf_counter() < deadline:
                pass  # busy wait: sleep() is far too coarse for kHz pacing
        tx.send(frames[i % len(frames)])

    received = []
    rx.settimeout(idle)
    while True:
        try:
            data, addr = rx.recvfrom(65535)
        except TimeoutError:
            break
        if addr[2] != PACKET_OUTGOING and marker in data:
            received.append(data)
    json.dump({"sent": count, "received": len(received),
               "frames": [f.hex() for f in received[:16]]}, sys.stdout)


if __name__ == "__main__":
    main()
