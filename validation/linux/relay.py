#!/usr/bin/env python3
"""A path between two network namespaces: reads IP packets from a TUN device in one
and writes them to a TUN device in the other after a fixed one-way delay, in order.

This kernel has no sch_netem, so the delay, its changes and the blackouts are made
here. The schedule counts from the first SYN the relay sees, so that it lines up with
a scenario's time 0 (the first SYN) without any clock shared with the endpoints.

  relay.py --client-ns NS --server-ns NS --delay-ms 50
           [--delay-at SECONDS:MS ...] [--blackout START:DURATION ...]
           [--drop-client-after-syn] [--drop-client-nth FILE]

A blackout drops every packet read during it, both ways (a duration of `inf` never
ends). --drop-client-after-syn drops every packet from the client after its first
SYN (its ACKs, data and SYNs sent again), so that only the server's timers run.
--drop-client-nth drops the client's packets whose number is listed in FILE (one a
line, `#` starts a comment). The numbering is the model's (`[[path.event]] kind =
"drop"`, `nth`): from 1 at the first SYN, each SYN and each segment that carries data,
first sent or sent again; a pure ACK or a bare FIN takes no number, since the model's
sender sends neither.
Prints `ready` once both TUN devices exist, then one line per schedule change.
"""

import argparse
import ctypes
import fcntl
import heapq
import os
import select
import signal
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
CLONE_NEWNET = 0x40000000

libc = ctypes.CDLL(None, use_errno=True)


def setns(fd):
    # Python 3.11's os has no setns; the TUN device must be created inside the namespace.
    if libc.setns(fd, CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns")


def open_tun(ns, name):
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{ns}", os.O_RDONLY)
    try:
        setns(target)
        fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    finally:
        setns(home)
        os.close(home)
        os.close(target)
    return fd


def is_first_syn(packet):
    # IPv4, TCP, SYN without ACK: the client's connection attempt.
    if len(packet) < 40 or packet[0] >> 4 != 4 or packet[9] != 6:
        return False
    tcp = (packet[0] & 0x0F) * 4
    return len(packet) > tcp + 13 and packet[tcp + 13] & 0x12 == 0x02


def numbered(packet):
    """Whether a client packet takes a number: a SYN, or a segment with data."""
    if len(packet) < 40 or packet[0] >> 4 != 4 or packet[9] != 6:
        return False
    ihl = (packet[0] & 0x0F) * 4
    total = struct.unpack("!H", packet[2:4])[0]
    doff = (packet[ihl + 12] >> 4) * 4
    return bool(packet[ihl + 13] & 0x02) or total - ihl - doff > 0


def read_numbers(path):
    numbers = set()
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                numbers.add(int(line))
    return numbers


def pair(text):
    a, b = text.split(":")
    return float(a), float(b)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--client-ns", required=True)
    p.add_argument("--server-ns", required=True)
    p.add_argument("--client-dev", default="bsv-tc")
    p.add_argument("--server-dev", default="bsv-ts")
    p.add_argument("--delay-ms", type=float, required=True)
    p.add_argument("--delay-at", type=pair, action="append", default=[])
    p.add_argument("--blackout", type=pair, action="append", default=[])
    p.add_argument("--drop-client-after-syn", action="store_true")
    p.add_argument("--drop-client-nth")
    args = p.parse_args()
    drop_nth = read_numbers(args.drop_client_nth) if args.drop_client_nth else set()
    counted = 0

    client = open_tun(args.client_ns, args.client_dev)
    server = open_tun(args.server_ns, args.server_dev)
    other = {client: server, server: client}
    print("ready", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    start = None
    queue = []  # (release time, sequence, destination fd, packet): FIFO among equal times
    seq = 0
    last_release = {client: 0.0, server: 0.0}
    delay_changes = sorted(args.delay_at)
    delay = args.delay_ms / 1000.0
    reported = set()

    while True:
        now = time.monotonic()
        timeout = max(0.0, queue[0][0] - now) if queue else 0.05
        readable, _, _ = select.select([client, server], [], [], min(timeout, 0.05))
        now = time.monotonic()
        for fd in readable:
            while True:
                try:
                    packet = os.read(fd, 65536)
                except BlockingIOError:
                    break
                if start is None and fd == client and is_first_syn(packet):
                    start = now
                    print(f"first_syn {time.time():.6f}", flush=True)
                elif start is not None and fd == client and args.drop_client_after_syn:
                    continue
                if start is not None and fd == client and numbered(packet):
                    counted += 1
                    if counted in drop_nth:
                        print(f"drop {counted} at {now - start:.6f}", flush=True)
                        continue
                t = now - start if start is not None else -1.0
                d = delay
                for at, ms in delay_changes:
                    if start is not None and t >= at:
                        d = ms / 1000.0
                        if at not in reported:
                            reported.add(at)
                            print(f"delay {ms} at {t:.6f}", flush=True)
                dark = start is not None and any(b <= t < b + length for b, length in args.blackout)
                if dark:
                    continue
                dest = other[fd]
                # A lower delay after a change must not reorder the packets behind it.
                release = max(now + d, last_release[dest])
                last_release[dest] = release
                heapq.heappush(queue, (release, seq, dest, packet))
                seq += 1
        now = time.monotonic()
        while queue and queue[0][0] <= now:
            _, _, dest, packet = heapq.heappop(queue)
            try:
                os.write(dest, packet)
            except OSError:
                pass


if __name__ == "__main__":
    main()
