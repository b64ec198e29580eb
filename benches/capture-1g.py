#!/usr/bin/env python3
"""Writes a large pcap for timing `backoffsim rto capture`: one TCP connection, a
handshake, then full-sized data segments cut to a 128-byte snap length, an ACK for every
second one 50 ms later, and one segment in 1,000 sent twice in a row. Usage:
benches/capture-1g.py OUT.pcap [SIZE_MB] (1024 by default)."""
import struct
import sys

out, size_mb = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1024
SNAP, MSS = 128, 1448
C, S = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def frame(src, dst, sport, dport, seq, ack, flags, payload_len):
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, 5 << 4, flags, 65535, 0, 0)
    total = 20 + len(tcp) + payload_len
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, 6, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    eth = b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x08\x00"
    whole = eth + ip + tcp + bytes(payload_len)
    return whole[:SNAP], len(whole)


def record(f, t_us, pkt):
    data, orig = pkt
    f.write(struct.pack("<IIII", t_us // 1_000_000, t_us % 1_000_000, len(data), orig) + data)


with open(out, "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, SNAP, 1))
    t, isn, srv = 1_000_000, 1000, 5000
    record(f, t, frame(C, S, 40000, 443, isn, 0, 0x02, 0))
    record(f, t + 50_000, frame(S, C, 443, 40000, srv, isn + 1, 0x12, 0))
    t += 50_000
    record(f, t, frame(C, S, 40000, 443, isn + 1, srv + 1, 0x10, 0))
    seq, k = isn + 1, 0
    pending = []  # (time, ack) to write in order
    while f.tell() < size_mb * 1024 * 1024:
        t += 100
        # ACKs due by now go first, so that the file's timestamps never go backwards.
        while pending and pending[0][0] <= t:
            at, a = pending.pop(0)
            record(f, at, frame(S, C, 443, 40000, srv + 1, a, 0x10, 0))
        record(f, t, frame(C, S, 40000, 443, seq, srv + 1, 0x18, MSS))
        k += 1
        if k % 1000 == 0:
            record(f, t + 1, frame(C, S, 40000, 443, seq, srv + 1, 0x18, MSS))
        seq += MSS
        if k % 2 == 0:
            pending.append((t + 50_000, seq))
