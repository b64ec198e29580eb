#!/usr/bin/env python3
"""Packet captures of a sender, with the kernel's own view of its RTO beside them:
fixtures for reading a capture and deriving the retransmission timer from it.

  capture.py [CASE ...]                 every case when none is named; needs root
  capture.py --summary [CASE ...]       the README table's rows from the committed files
  capture.py client ADDR PORT SECONDS INTERVAL_S POLL_S CSV
                                        (run by the above inside the client's namespace)

Each case makes two network namespaces (`<BSC_NS>-c`, `<BSC_NS>-s`, `bsc` by default),
joins them with relay.py (delay, a delay change, a blackout), captures on the client's
TUN device with tcpdump (`-s 128`, raw IP) and runs the client below, which writes
100 bytes every INTERVAL_S and polls its own socket's TCP_INFO every POLL_S into a CSV.
Both clocks are CLOCK_REALTIME (tcpdump's timestamps, `time.time_ns()`), so a reader
can line the polls up with the packets. Writes captures/<case>.pcap (or .pcapng) and
captures/<case>.tcpinfo.csv, and removes the namespaces.
"""

import os
import re
import select
import socket
import struct
import subprocess
import sys
import time

# The namespaces' prefix must be set before harness reads it.
os.environ["BSV_NS"] = os.environ.get("BSC_NS", "bsc")

import harness  # noqa: E402
from harness import CLIENT_DEV, CLIENT_IP, PORT, SERVER_DEV, SERVER_IP, sh, ns  # noqa: E402

HERE = harness.HERE
OUT = os.path.join(HERE, "captures")
CLIENT_NS, SERVER_NS = harness.CLIENT_NS, harness.SERVER_NS
NS_PREFIX = harness.NS_PREFIX
SNAPLEN = 128
# This kernel defaults to BBR; CUBIC is set on the socket, as lossy.py does.
CONGESTION = "cubic"
INTERVAL_S = 0.03
POLL_S = 0.02
SECONDS = 25

# delay_ms: the relay's one-way delay; delay_at / blackout: relay.py's schedule,
# seconds from the first SYN; fmt: pcap (microseconds), pcap-nano or pcapng (nanoseconds);
# iface: where tcpdump listens (the client's TUN device unless named); seconds: how long
# the client writes.
CASES = {
    "steady-100ms": dict(delay_ms=50, fmt="pcap"),
    "steady-100ms-no-timestamps": dict(delay_ms=50, sysctls={"net.ipv4.tcp_timestamps": "0"}, fmt="pcap-nano"),
    "rtt-step-50-200ms": dict(delay_ms=25, delay_at=["10:100"], fmt="pcapng"),
    "blackout-3s": dict(delay_ms=50, blackout=["10:3"], fmt="pcap"),
    "blackout-3s-no-timestamps": dict(delay_ms=50, blackout=["10:3"], sysctls={"net.ipv4.tcp_timestamps": "0"},
                                      fmt="pcap"),
    # Captured on `any`: the Linux cooked link type (LINUX_SLL2) instead of raw IP.
    "steady-100ms-sll2": dict(delay_ms=50, iface="any", seconds=10, fmt="pcap"),
}

# struct tcp_info (include/uapi/linux/tcp.h), up to tcpi_data_segs_out: 8 u8 (the last
# two hold bit fields), 24 u32 from tcpi_rto to tcpi_total_retrans, 4 u64 from
# tcpi_pacing_rate, then u32 segs_out, segs_in, notsent_bytes, min_rtt, data_segs_in,
# data_segs_out. Every field is naturally aligned, so "=" (no padding) matches.
TCP_INFO = struct.Struct("=8B24I4Q6I")
U8 = ["state", "ca_state", "retransmits", "probes", "backoff", "options", "wscale", "flags"]
U32 = ["rto", "ato", "snd_mss", "rcv_mss", "unacked", "sacked", "lost", "retrans", "fackets",
       "last_data_sent", "last_ack_sent", "last_data_recv", "last_ack_recv", "pmtu", "rcv_ssthresh",
       "rtt", "rttvar", "snd_ssthresh", "snd_cwnd", "advmss", "reordering", "rcv_rtt", "rcv_space",
       "total_retrans"]
U64 = ["pacing_rate", "max_pacing_rate", "bytes_acked", "bytes_received"]
TAIL = ["segs_out", "segs_in", "notsent_bytes", "min_rtt", "data_segs_in", "data_segs_out"]
# The CSV's columns: a poll's wall-clock time, then tcp_info fields, each with its unit
# (tcp_get_info: rto and ato in microseconds from jiffies; rtt = srtt_us >> 3, rttvar =
# mdev_us >> 2, min_rtt in microseconds; last_* in milliseconds).
COLUMNS = [
    ("time_ns", None), ("state", "state"), ("ca_state", "ca_state"), ("retransmits", "retransmits"),
    ("probes", "probes"), ("backoff", "backoff"), ("options", "options"), ("rto_us", "rto"),
    ("rtt_us", "rtt"), ("rttvar_us", "rttvar"), ("min_rtt_us", "min_rtt"), ("ato_us", "ato"),
    ("snd_mss", "snd_mss"), ("unacked", "unacked"), ("sacked", "sacked"), ("lost", "lost"),
    ("retrans", "retrans"), ("total_retrans", "total_retrans"), ("snd_cwnd", "snd_cwnd"),
    ("snd_ssthresh", "snd_ssthresh"), ("last_data_sent_ms", "last_data_sent"),
    ("last_ack_recv_ms", "last_ack_recv"), ("segs_out", "segs_out"), ("segs_in", "segs_in"),
    ("data_segs_out", "data_segs_out"), ("bytes_acked", "bytes_acked"),
]


def tcp_info(s):
    raw = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO.size)
    if len(raw) < TCP_INFO.size:
        raise SystemExit(f"TCP_INFO gave {len(raw)} bytes, expected {TCP_INFO.size}")
    return dict(zip(U8 + U32 + U64 + TAIL, TCP_INFO.unpack(raw)))


def client(addr, port, seconds, interval, poll, path):
    """Connects, then writes 100 bytes every `interval` and reads TCP_INFO every `poll`,
    both on absolute schedules from when connect() returns, until `seconds` have passed
    and everything written is acknowledged (or 10 s more). TCP_NODELAY: one write, one
    segment, when the window allows."""
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, CONGESTION.encode())
    got = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).split(b"\0")[0].decode()
    assert got == CONGESTION, got
    s.connect((addr, port))
    t0 = time.time()
    print(f"connected {t0:.6f}", flush=True)
    s.setblocking(False)
    with open(path, "w") as f:
        f.write(",".join(c for c, _ in COLUMNS) + "\n")
        writes = polls = 0
        while True:
            now = time.time()
            info = None
            if now >= t0 + polls * poll:
                stamp = time.time_ns()
                info = tcp_info(s)
                f.write(",".join(str(stamp) if k is None else str(info[k]) for _, k in COLUMNS) + "\n")
                polls += 1
            if now - t0 >= seconds:
                info = info or tcp_info(s)
                if info["unacked"] == 0 or now - t0 >= seconds + 10:
                    break
            elif now >= t0 + writes * interval:
                try:
                    s.send(b"x" * 100)
                except BlockingIOError:
                    pass
                writes += 1
            nxt = min(t0 + polls * poll, t0 + writes * interval if now - t0 < seconds else float("inf"))
            left = nxt - time.time()
            if left > 0:
                r, _, _ = select.select([s], [], [], left)
                if r:
                    try:
                        if s.recv(65536) == b"":
                            break
                    except BlockingIOError:
                        pass
    print(f"done {time.time():.6f} writes {writes} polls {polls}", flush=True)
    s.close()


def pcap_to_pcapng(src, dst):
    """Rewrites a pcap file as pcapng (tcpdump 4.99 writes only pcap): a Section Header
    Block, one Interface Description Block (if_tsresol from the pcap's magic) and an
    Enhanced Packet Block per record, little-endian."""
    with open(src, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    nano = {0xA1B2C3D4: False, 0xA1B23C4D: True}[magic]
    _, _, _, _, snaplen, linktype = struct.unpack("<HHiIII", data[4:24])

    def block(kind, body):
        body += b"\0" * (-len(body) % 4)
        n = 12 + len(body)
        return struct.pack("<II", kind, n) + body + struct.pack("<I", n)

    def option(code, value):
        return struct.pack("<HH", code, len(value)) + value + b"\0" * (-len(value) % 4)

    out = [block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)
                 + option(4, b"capture.py (tcpdump 4.99.3 pcap, rewritten)") + option(0, b""))]
    out.append(block(1, struct.pack("<HHI", linktype, 0, snaplen)
                     + option(9, bytes([9 if nano else 6])) + option(0, b"")))
    i = 24
    while i < len(data):
        sec, frac, incl, orig = struct.unpack("<IIII", data[i:i + 16])
        ts = sec * (10**9 if nano else 10**6) + frac
        out.append(block(6, struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, incl, orig)
                         + data[i + 16:i + 16 + incl]))
        i += 16 + incl
    with open(dst, "wb") as f:
        f.write(b"".join(out))


def run_case(name, case):
    harness.teardown()
    sh("ip", "netns", "add", CLIENT_NS)
    sh("ip", "netns", "add", SERVER_NS)
    procs = []
    raw = f"/tmp/{NS_PREFIX}-{name}.pcap"
    csv_path = os.path.join(OUT, f"{name}.tcpinfo.csv")
    try:
        for n in (CLIENT_NS, SERVER_NS):
            sh("ip", "-n", n, "link", "set", "lo", "up")
        for key, value in {**harness.DEFAULT_SYSCTLS, **case.get("sysctls", {})}.items():
            ns(CLIENT_NS, "sysctl", "-w", f"{key}={value}")
        relay_cmd = [sys.executable, os.path.join(HERE, "relay.py"), "--client-ns", CLIENT_NS,
                     "--server-ns", SERVER_NS, "--delay-ms", str(case["delay_ms"])]
        for d in case.get("delay_at", []):
            relay_cmd += ["--delay-at", d]
        for b in case.get("blackout", []):
            relay_cmd += ["--blackout", b]
        relay = subprocess.Popen(relay_cmd, stdout=subprocess.PIPE, text=True)
        procs.append(relay)
        assert relay.stdout.readline().strip() == "ready"
        for n, dev, me, peer in ((CLIENT_NS, CLIENT_DEV, CLIENT_IP, SERVER_IP),
                                 (SERVER_NS, SERVER_DEV, SERVER_IP, CLIENT_IP)):
            sh("ip", "-n", n, "addr", "add", f"{me}/32", "peer", f"{peer}/32", "dev", dev)
            sh("ip", "-n", n, "link", "set", dev, "up")
        precision = [] if case["fmt"] == "pcap" else ["--time-stamp-precision=nano"]
        dump = subprocess.Popen(["ip", "netns", "exec", CLIENT_NS, "tcpdump", "-i", case.get("iface", CLIENT_DEV), "-n",
                                 "-s", str(SNAPLEN), *precision, "--immediate-mode", "-U", "-w", raw, "tcp"],
                                stderr=subprocess.PIPE, text=True)
        procs.append(dump)
        while "listening on" not in dump.stderr.readline():
            pass
        server = subprocess.Popen(["ip", "netns", "exec", SERVER_NS, sys.executable, os.path.join(HERE, "peer.py"),
                                   "server", str(PORT)])
        procs.append(server)
        time.sleep(0.5)
        out = subprocess.run(["ip", "netns", "exec", CLIENT_NS, sys.executable, os.path.abspath(__file__),
                              "client", SERVER_IP, str(PORT), str(case.get("seconds", SECONDS)), str(INTERVAL_S), str(POLL_S),
                              csv_path], capture_output=True, text=True, timeout=case.get("seconds", SECONDS) + 60)
        time.sleep(0.5)
        dump.terminate()
        lost = [line for line in dump.communicate()[1].splitlines() if "dropped by kernel" in line]
        relay.terminate()
        relay_out = relay.communicate()[0]
        print(f"{name}: {out.stdout.strip()} | {' '.join(lost)} | relay: {relay_out.strip()}", file=sys.stderr)
        if out.returncode != 0:
            raise SystemExit(out.stderr)
        if case["fmt"] == "pcapng":
            pcap_to_pcapng(raw, os.path.join(OUT, f"{name}.pcapng"))
        else:
            sh("cp", raw, os.path.join(OUT, f"{name}.pcap"))
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
                p.wait()
        harness.teardown()



def summary(name, case):
    """One README table row: the file, what tcpdump reads back from it, the polls'
    range of rto and backoff, and the client's retransmissions (tcpi_total_retrans)."""
    ext = "pcapng" if case["fmt"] == "pcapng" else "pcap"
    path = os.path.join(OUT, f"{name}.{ext}")
    read = subprocess.run(["tcpdump", "-r", path, "-n"], check=True, capture_output=True, text=True)
    lines = read.stdout.splitlines()
    link = re.search(r"link-type (\S+)", read.stderr).group(1)
    with open(os.path.join(OUT, f"{name}.tcpinfo.csv")) as f:
        head = f.readline().strip().split(",")
        rows = [dict(zip(head, map(int, line.split(",")))) for line in f]
    rtos = sorted({r["rto_us"] // 1000 for r in rows})
    ts = "on" if rows[0]["options"] & 1 else "off"  # TCPI_OPT_TIMESTAMPS
    path_text = f"{2 * case['delay_ms']} ms RTT"
    for d in case.get("delay_at", []):
        at, ms = d.split(":")
        path_text += f", {2 * int(ms)} ms from {at} s"
    for b in case.get("blackout", []):
        at, length = b.split(":")
        path_text += f", dark {at}–{float(at) + float(length):g} s"
    return (f"| `{name}.{ext}` | {case['fmt']} | {link} | {path_text} | timestamps {ts} | {len(lines)} | "
            f"{os.path.getsize(path)} | {len(rows)} | {rtos[0]}–{rtos[-1]} ms | "
            f"{max(r['backoff'] for r in rows)} | {rows[-1]['total_retrans']} |")


def main():
    args = sys.argv[1:]
    if args[:1] == ["--summary"]:
        for name in args[1:] or list(CASES):
            print(summary(name, CASES[name]))
        return
    if args[:1] == ["client"]:
        addr, port, seconds, interval, poll, path = args[1:7]
        client(addr, int(port), float(seconds), float(interval), float(poll), path)
        return
    os.makedirs(OUT, exist_ok=True)
    for name in args or list(CASES):
        run_case(name, CASES[name])


if __name__ == "__main__":
    main()
