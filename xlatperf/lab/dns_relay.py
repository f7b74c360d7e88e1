# SPDX-License-Identifier: BSD-3-Clause
"""The lab's faulty DNS64 (`dns64-bind --param fault=...`): a UDP relay in front of a correct
resolver that spoils every N-th reply in one way the client must catch (docs/dns.md "The
client's verdict on a reply"), where no resolver can be configured to: its EDNS(0) OPT record
dropped, RA cleared, the question's letters in the other case, the answer's record written twice,
or the reply sent twice. As the lab's other faulty DUTs (lab/kinds/base.py fault_params), fault i
spoils the replies whose number modulo 100 lies in [i x share, (i + 1) x share): exactly its
share. The other replies pass as the resolver wrote them.

It listens on the resolver's address, port 53, passes each query on to the resolver's port with
an ID of its own (the tester's IDs repeat over its source ports) and each reply back to the
query's sender with the sender's ID. Run by the lab as a daemon:

    python3 -m xlatperf.lab.dns_relay --listen ADDR --resolver-port PORT --faults F,G --share P --pidfile P
"""

from __future__ import annotations

import argparse
import os
import selectors
import socket
import sys

# Each fault: what it does to a reply.
FAULTS = {"no_edns": "the OPT record dropped", "no_ra": "RA cleared",
          "question_case": "the question's letters in the other case",
          "duplicate_record": "the answer's record twice", "duplicate_reply": "the reply sent twice"}
# The name the relay runs under (lab/daemons.py PROGRAMS).
PROGRAM = "xlp-dns-relay"
HEADER = 12
TYPE_OPT = 41
FLAG_RA = 0x0080


def name_end(msg: bytes, at: int) -> int:
    """Where the (possibly compressed) name at `at` ends in the message."""
    while True:
        length = msg[at]
        if length & 0xC0 == 0xC0:
            return at + 2
        at += 1 + length
        if length == 0:
            return at


def record_end(msg: bytes, at: int) -> int:
    """Where the resource record at `at` ends."""
    fixed = name_end(msg, at)
    return fixed + 10 + int.from_bytes(msg[fixed + 8:fixed + 10], "big")


def count(msg: bytes, section: int) -> int:
    """The header's count of section 0 (question) .. 3 (additional)."""
    return int.from_bytes(msg[4 + 2 * section:6 + 2 * section], "big")


def with_count(msg: bytes, section: int, n: int) -> bytes:
    return msg[:4 + 2 * section] + n.to_bytes(2, "big") + msg[6 + 2 * section:]


def records(msg: bytes) -> tuple[int, list[tuple[int, int, int]]]:
    """Where the question section ends, and each record's (section, start, end) after it."""
    at = HEADER
    for _ in range(count(msg, 0)):
        at = name_end(msg, at) + 4
    question_end, found = at, []
    for section in (1, 2, 3):
        for _ in range(count(msg, section)):
            end = record_end(msg, at)
            found.append((section, at, end))
            at = end
    return question_end, found


def spoil(msg: bytes, fault: str) -> list[bytes]:
    """The replies a reply becomes with `fault` (the reply itself where the fault has nothing to
    spoil: no OPT record, no answer)."""
    if fault == "duplicate_reply":
        return [msg, msg]
    if fault == "no_ra":
        flags = int.from_bytes(msg[2:4], "big") & ~FLAG_RA
        return [msg[:2] + flags.to_bytes(2, "big") + msg[4:]]
    if fault == "question_case":   # every letter of the question's name in the other case
        end = name_end(msg, HEADER)
        name = bytes(b ^ 0x20 if chr(b).isalpha() else b for b in msg[HEADER:end])
        return [msg[:HEADER] + name + msg[end:]]
    _, found = records(msg)
    if fault == "no_edns":
        for section, start, end in found:
            if section == 3 and int.from_bytes(msg[name_end(msg, start):name_end(msg, start) + 2], "big") == TYPE_OPT:
                return [with_count(msg[:start] + msg[end:], 3, count(msg, 3) - 1)]
    if fault == "duplicate_record":
        # The first answer again right after itself: what follows only points backwards.
        answers = [(start, end) for section, start, end in found if section == 1]
        if answers:
            start, end = answers[0]
            return [with_count(msg[:end] + msg[start:end] + msg[end:], 1, count(msg, 1) + 1)]
    return [msg]


def sockets(listen: str, resolver_port: int) -> tuple[socket.socket, socket.socket]:
    """The clients' socket (port 53 of `listen`) and the one to the resolver."""
    family = socket.AF_INET6 if ":" in listen else socket.AF_INET
    clients = socket.socket(family, socket.SOCK_DGRAM)
    clients.bind((listen, 53))
    upstream = socket.socket(family, socket.SOCK_DGRAM)
    upstream.connect((listen, resolver_port))
    return clients, upstream


def relay(clients: socket.socket, upstream: socket.socket, faults: list[str], share: int) -> None:
    pending: dict[int, tuple[tuple, bytes]] = {}   # our ID: the sender and its ID
    next_id = replies = 0
    selector = selectors.DefaultSelector()
    selector.register(clients, selectors.EVENT_READ)
    selector.register(upstream, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select():
            if key.fileobj is clients:
                query, sender = clients.recvfrom(65535)
                if len(query) < HEADER:
                    continue
                pending[next_id] = (sender, query[:2])
                upstream.send(next_id.to_bytes(2, "big") + query[2:])
                next_id = (next_id + 1) & 0xFFFF
            else:
                reply = upstream.recv(65535)
                if len(reply) < HEADER or (entry := pending.pop(int.from_bytes(reply[:2], "big"), None)) is None:
                    continue
                sender, sender_id = entry
                reply = sender_id + reply[2:]
                fault = (replies % 100) // share
                replies += 1
                for out in spoil(reply, faults[fault]) if fault < len(faults) else [reply]:
                    clients.sendto(out, sender)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen", required=True)
    parser.add_argument("--resolver-port", type=int, required=True)
    parser.add_argument("--faults", type=lambda text: text.split(","), required=True)
    parser.add_argument("--share", type=int, required=True)
    parser.add_argument("--pidfile", required=True)
    args = parser.parse_args(argv)
    if not set(args.faults) <= set(FAULTS) or not 1 <= args.share * len(args.faults) <= 100:
        parser.error(f"--faults: of {', '.join(FAULTS)}; --share x faults: 1..100")
    # A daemon: the parent returns once the child has bound its port and written its pid file.
    read, write = os.pipe()
    if os.fork():
        os.close(write)
        ok = os.read(read, 1) == b"1"
        sys.exit(0 if ok else 1)
    os.close(read)
    os.setsid()
    try:
        clients, upstream = sockets(args.listen, args.resolver_port)
        with open(args.pidfile, "w") as f:
            f.write(f"{os.getpid()}\n")
    except OSError as e:
        print(f"dns relay: {e}", file=sys.stderr)
        os.write(write, b"0")
        os._exit(1)
    os.write(write, b"1")
    os.close(write)
    relay(clients, upstream, args.faults, args.share)

if __name__ == "__main__":
    main()
