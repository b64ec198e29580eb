#!/usr/bin/env python3
"""The two ends of a measured connection, run inside their namespaces.

  peer.py server PORT [--rcvbuf BYTES] [--read-after-s S]
                                  accept and read until the peer goes away; with
                                  --rcvbuf a small receive buffer (set before listen, so
                                  the handshake's window follows it), and with
                                  --read-after-s an application that reads nothing
                                  for that long after accept
  peer.py client ADDR PORT SECONDS [--user-timeout-ms MS] [--interval-s S]
  peer.py bulk ADDR PORT BYTES CC write BYTES at once, as fast as the socket takes
                                  them, and wait until the peer has acknowledged all;
                                  CC the congestion control (TCP_CONGESTION)

The client connects, then writes 100 bytes every interval on an absolute schedule
counted from when connect() returns (the scenario's `steady` workload: one segment
per interval from the established time), with TCP_NODELAY so that Nagle never holds a
write back. It prints what the capture cannot show, one line each, wall-clock seconds:
`connected T`, `error T ERRNO` (the moment the kernel gave up) or `done T`.
"""

import fcntl
import select
import socket
import struct
import sys
import time

SIOCOUTQ = 0x5411  # bytes not yet acknowledged by the peer (sent or not)


def server(port, rcvbuf, read_after_s):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.bind(("0.0.0.0", port))
    s.listen(1)
    c, _ = s.accept()
    # A stalled application: the receive buffer fills, the window closes, and the
    # peer's kernel answers the sender's zero-window probes on its own.
    time.sleep(read_after_s)
    while c.recv(65536):
        pass


def client(addr, port, seconds, user_timeout_ms, interval):
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if user_timeout_ms:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, user_timeout_ms)
    try:
        s.connect((addr, port))
    except OSError as e:
        print(f"error {time.time():.6f} {e.errno}", flush=True)
        return
    t0 = time.time()
    print(f"connected {t0:.6f}", flush=True)
    n = 0
    s.setblocking(False)
    while time.time() - t0 < seconds:
        try:
            s.send(b"x" * 100)
        except BlockingIOError:
            pass
        except OSError as e:
            print(f"error {time.time():.6f} {e.errno}", flush=True)
            return
        n += 1
        # Wait for the next write, waking at once if the socket fails (an error makes it
        # readable), so that the give-up is timed to the poll, not to the next write.
        while True:
            left = t0 + n * interval - time.time()
            if left <= 0:
                break
            r, _, _ = select.select([s], [], [], left)
            if r:
                err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    print(f"error {time.time():.6f} {err}", flush=True)
                    return
                try:
                    if s.recv(65536) == b"":
                        print(f"error {time.time():.6f} eof", flush=True)
                        return
                except BlockingIOError:
                    pass
                except OSError as e:
                    print(f"error {time.time():.6f} {e.errno}", flush=True)
                    return
    print(f"done {time.time():.6f}", flush=True)


def bulk(addr, port, size, congestion):
    """The scenarios' `transfer` workload: the whole transfer written at once after the
    handshake. `done` is when the last byte is acknowledged, polled every millisecond."""
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, congestion.encode())
    got = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).split(b"\0")[0].decode()
    assert got == congestion, got
    s.connect((addr, port))
    print(f"connected {time.time():.6f}", flush=True)
    s.sendall(b"x" * size)
    while struct.unpack("i", fcntl.ioctl(s, SIOCOUTQ, b"\0" * 4))[0] > 0:
        time.sleep(0.001)
    print(f"done {time.time():.6f}", flush=True)
    s.close()


if __name__ == "__main__":
    if sys.argv[1] == "bulk":
        bulk(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    elif sys.argv[1] == "server":
        args = sys.argv[2:]
        rb = int(args[args.index("--rcvbuf") + 1]) if "--rcvbuf" in args else 0
        ra = float(args[args.index("--read-after-s") + 1]) if "--read-after-s" in args else 0.0
        server(int(args[0]), rb, ra)
    else:
        args = sys.argv[2:]
        ut = int(args[args.index("--user-timeout-ms") + 1]) if "--user-timeout-ms" in args else 0
        iv = float(args[args.index("--interval-s") + 1]) if "--interval-s" in args else 0.1
        client(args[0], int(args[1]), float(args[2]), ut, iv)
