#!/usr/bin/env python3
"""Measures this kernel's TCP timers, one case at a time, and writes each case's timer
events to traces/<case>.csv. Needs root, ip(8), tcpdump and /dev/net/tun.

  harness.py [--from-captures] [CASE ...]   every case when none is named

Each case makes two network namespaces (bsv-c, the client; bsv-s, the server; the
prefix from BSV_NS), joins them with relay.py, sets the case's sysctls in the client's
namespace (and the server's, where a case names them), captures on the client's TUN
device (the server's for the SYN-ACK case) and removes everything afterwards.
"""

import ast
import csv
import os
import re
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# BSV_NS names the namespaces (bsv-c and bsv-s by default), so that two runs on one
# machine do not tear down each other's.
NS_PREFIX = os.environ.get("BSV_NS", "bsv")
CLIENT_NS, SERVER_NS = f"{NS_PREFIX}-c", f"{NS_PREFIX}-s"
CLIENT_DEV, SERVER_DEV = "bsv-tc", "bsv-ts"
CLIENT_IP, SERVER_IP, PORT = "10.23.0.1", "10.23.0.2", 5001

# Every case: the client's sysctls (beside the defaults below), the relay's one-way
# delay and schedule (seconds from the first SYN), the route's rto_min, the client's
# TCP_USER_TIMEOUT and how long it writes.
# The client's write interval. 130 ms keeps every write well away (over 40 ms) from
# the instant the first loss probe or RTO of a blackout falls due (304 ms after a write
# with the default rto_min, 604 ms with 500 ms): a write that lands within a jiffy of
# it decides whether the probe goes out there or only once the window is full, in the
# kernel as in the model, and the comparison would measure that race.
INTERVAL_S = 0.13
DEFAULT_SYSCTLS = {
    "net.ipv4.tcp_timestamps": "1",
    "net.ipv4.tcp_early_retrans": "3",
    "net.ipv4.tcp_frto": "2",
    "net.ipv4.tcp_syn_retries": "6",
    "net.ipv4.tcp_retries2": "15",
    "net.ipv4.tcp_syn_linear_timeouts": "4",
}
CASES = {
    "syn-dropped-3": dict(sysctls={"net.ipv4.tcp_syn_retries": "3"}, blackout=["0:inf"], seconds=1),
    "syn-dropped-5": dict(sysctls={"net.ipv4.tcp_syn_retries": "5"}, blackout=["0:inf"], seconds=1),
    "blackout-timestamps": dict(blackout=["5:8"], seconds=20),
    "blackout-no-timestamps": dict(sysctls={"net.ipv4.tcp_timestamps": "0"}, blackout=["5:8"], seconds=20),
    "blackout-rto-min-500ms": dict(rto_min="500ms", blackout=["5:8"], seconds=20),
    "rtt-step": dict(delay_at=["5:200"], seconds=12),
    "user-timeout-5s": dict(user_timeout_ms=5000, blackout=["5:inf"], seconds=30),
    "retries2-4": dict(sysctls={"net.ipv4.tcp_retries2": "4"}, blackout=["5:inf"], seconds=30),
    # The server's application never reads; its receive buffer (SO_RCVBUF 2048, which
    # the kernel doubles) fills and the client probes the closed window.
    "zero-window": dict(server_rcvbuf=2048, server_read_after_s=1000, server_quickack=True, seconds=20),
    # The same, the path dark from 8 s for good: the probes go unanswered.
    "zero-window-retries2-4": dict(sysctls={"net.ipv4.tcp_retries2": "4"}, server_rcvbuf=2048,
                                   server_read_after_s=1000, server_quickack=True, blackout=["8:inf"],
                                   seconds=40),
    # Every packet from the client after its first SYN is lost; the server's listener
    # resends its SYN-ACK and drops the request. Captured on the server's side.
    "synack-retries-2": dict(server_sysctls={"net.ipv4.tcp_synack_retries": "2"}, drop_client_after_syn=True,
                             capture="server", seconds=12),
}


def sh(*cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def ns(name, *cmd):
    return sh("ip", "netns", "exec", name, *cmd, stdout=subprocess.DEVNULL)


def teardown():
    for name in (CLIENT_NS, SERVER_NS):
        subprocess.run(["ip", "netns", "del", name], stderr=subprocess.DEVNULL)


def run_case(name, case):
    FIRST_SYN.clear()
    teardown()
    sh("ip", "netns", "add", CLIENT_NS)
    sh("ip", "netns", "add", SERVER_NS)
    procs = []
    try:
        for n in (CLIENT_NS, SERVER_NS):
            sh("ip", "-n", n, "link", "set", "lo", "up")
        sysctls = {**DEFAULT_SYSCTLS, **case.get("sysctls", {})}
        for key, value in sysctls.items():
            ns(CLIENT_NS, "sysctl", "-w", f"{key}={value}")
        for key, value in case.get("server_sysctls", {}).items():
            ns(SERVER_NS, "sysctl", "-w", f"{key}={value}")
        relay_cmd = [sys.executable, os.path.join(HERE, "relay.py"), "--client-ns", CLIENT_NS,
                     "--server-ns", SERVER_NS, "--delay-ms", str(case.get("delay_ms", 50))]
        for d in case.get("delay_at", []):
            relay_cmd += ["--delay-at", d]
        for b in case.get("blackout", []):
            relay_cmd += ["--blackout", b]
        if case.get("drop_client_after_syn"):
            relay_cmd += ["--drop-client-after-syn"]
        relay = subprocess.Popen(relay_cmd, stdout=subprocess.PIPE, text=True)
        procs.append(relay)
        assert relay.stdout.readline().strip() == "ready"
        for n, dev, me, peer in ((CLIENT_NS, CLIENT_DEV, CLIENT_IP, SERVER_IP),
                                 (SERVER_NS, SERVER_DEV, SERVER_IP, CLIENT_IP)):
            sh("ip", "-n", n, "addr", "add", f"{me}/32", "peer", f"{peer}/32", "dev", dev)
            sh("ip", "-n", n, "link", "set", dev, "up")
        if case.get("server_quickack"):
            # RTAX_QUICKACK (tcp_in_quickack_mode): the server ACKs every segment at once,
            # as the model's receiver does; delayed ACKs would stretch the client's RTT
            # samples, and its RTO, by up to the delayed-ACK timer.
            sh("ip", "-n", SERVER_NS, "route", "replace", f"{CLIENT_IP}/32", "dev", SERVER_DEV,
               "quickack", "1")
        if "rto_min" in case:
            sh("ip", "-n", CLIENT_NS, "route", "replace", f"{SERVER_IP}/32", "dev", CLIENT_DEV,
               "rto_min", case["rto_min"])
        pcap = f"/tmp/{name}.pcap"
        on_server = case.get("capture") == "server"
        cap_ns, cap_dev = (SERVER_NS, SERVER_DEV) if on_server else (CLIENT_NS, CLIENT_DEV)
        dump = subprocess.Popen(["ip", "netns", "exec", cap_ns, "tcpdump", "-i", cap_dev, "-n",
                                 "-U", "-w", pcap, "tcp"], stderr=subprocess.PIPE, text=True)
        procs.append(dump)
        while "listening on" not in dump.stderr.readline():
            pass
        server_cmd = ["ip", "netns", "exec", SERVER_NS, sys.executable, os.path.join(HERE, "peer.py"),
                      "server", str(PORT)]
        if case.get("server_rcvbuf"):
            server_cmd += ["--rcvbuf", str(case["server_rcvbuf"])]
        if case.get("server_read_after_s"):
            server_cmd += ["--read-after-s", str(case["server_read_after_s"])]
        server = subprocess.Popen(server_cmd)
        procs.append(server)
        time.sleep(0.5)
        cmd = ["ip", "netns", "exec", CLIENT_NS, sys.executable, os.path.join(HERE, "peer.py"),
               "client", SERVER_IP, str(PORT), str(case["seconds"])]
        cmd += ["--interval-s", str(INTERVAL_S)]
        if case.get("user_timeout_ms"):
            cmd += ["--user-timeout-ms", str(case["user_timeout_ms"])]
        client = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        states = poll_ss(client, SERVER_NS if on_server else CLIENT_NS)
        out = client.communicate()[0]
        time.sleep(0.3)
        dump.terminate()
        dump.wait()
        with open(f"/tmp/{name}.client", "w") as f:
            f.write(out)
        with open(f"/tmp/{name}.states", "w") as f:
            f.write(repr(states))
        events = case_events(case, pcap, out, states)
        write(name, events)
        write_states(name, states, events, on_server)
        return events
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
                p.wait()
        teardown()


SS_FIELDS = ("rto", "rtt", "cwnd", "unacked", "backoff")


def poll_ss(client, where):
    """The socket's state from `ss -tian` every 50 ms while the client runs, as
    (wall-clock time, {field: value}): what the kernel believed, beside what it sent.
    On the server's side `state` is the request's (SYN-RECV) while it is held."""
    states = []
    while client.poll() is None:
        text = subprocess.run(["ip", "netns", "exec", where, "ss", "-tian", "dst",
                               SERVER_IP if where == CLIENT_NS else CLIENT_IP],
                              capture_output=True, text=True).stdout
        t = time.time()
        fields = {}
        lines = text.splitlines()
        if len(lines) > 1 and lines[1].split():
            fields["state"] = lines[1].split()[0]
        for key in SS_FIELDS:
            m = re.search(rf"\b{key}:([\d.]+)", text)
            if m:
                fields[key] = m.group(1)
        states.append((t, fields))
        time.sleep(0.05)
    return states


def write_states(name, states, events, server_side=False):
    t0 = FIRST_SYN.get("t")
    if t0 is None:
        return
    with open(os.path.join(HERE, "traces", f"{name}.ss.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        if server_side:
            # The server's request: its state at each poll that changed it (empty: gone).
            w.writerow(["time_ms", "state"])
            last = None
            for t, fields in states:
                if fields.get("state", "") != last:
                    last = fields.get("state", "")
                    w.writerow([f"{(t - t0) * 1000:.0f}", last])
            return
        w.writerow(["time_ms", "rto_ms", "rtt_ms", "cwnd", "unacked", "backoff"])
        last = None
        for t, fields in states:
            row = [fields.get(k, "") for k in SS_FIELDS]
            if row != last and any(row):
                w.writerow([f"{(t - t0) * 1000:.0f}", *row])
                last = row


FIRST_SYN = {}

LINE = re.compile(r"^(\d+\.\d+) IP (\S+) > (\S+): Flags \[([^\]]*)\](?:, seq (\d+)(?::(\d+))?)?"
                  r"(?:, ack (\d+))?.*length (\d+)")


def segment(line):
    """A tcpdump header line's (time, sent by the client, source, flags, seq, end, ack,
    length), or None for a line that is not a TCP segment."""
    m = LINE.match(line)
    if not m:
        return None
    t, src, _dst, flags, seq, end, ack, length = m.groups()
    return float(t), src.startswith(CLIENT_IP + "."), src, flags, seq, end, ack, length


def classify(pcap, client_out):
    """The client's timer events in the capture: each SYN, and each retransmission,
    told apart by what the ACKs had said when it left (`timeout`: the first
    unacknowledged segment again, long after the last ACK that advanced, which only the
    retransmission timer does; `probe`: a later segment again the same way, the tail
    loss probe; `retransmit`: one right after an ACK, a recovery driven by ACKs)."""
    text = subprocess.run(["tcpdump", "-r", pcap, "-n", "-tt", "-S"], check=True,
                          capture_output=True, text=True).stdout
    events = []
    t0 = None
    snd_una = None
    last_advance = -1.0
    sent = {}  # seq -> last time sent
    sends = []  # first transmissions
    for line in text.splitlines():
        seg = segment(line)
        if seg is None:
            continue
        t, outgoing, _src, flags, seq, _end, ack, length = seg
        if outgoing and flags == "S":
            if t0 is None:
                t0 = t
                FIRST_SYN["t"] = t
                events.append((0.0, "syn"))
            else:
                events.append((t - t0, "syn_retransmit"))
            continue
        if t0 is None:
            continue
        if not outgoing:
            if ack is not None and (snd_una is None or int(ack) > snd_una):
                snd_una = int(ack)
                last_advance = t
            if "S" in flags:
                events.append((t - t0, "established"))
            continue
        if int(length) == 0 or seq is None:
            continue
        seq = int(seq)
        if seq not in sent:
            sends.append(t - t0)
        if seq in sent:
            # ACK-driven recovery follows its ACK within a millisecond or two; a timer
            # fires at least a PTO (tens of ms) after the last ACK that advanced.
            if t - last_advance > 0.010:
                kind = "timeout" if seq == snd_una else "probe"
            else:
                kind = "retransmit"
            events.append((t - t0, kind))
        sent[seq] = t
    for line in client_out.splitlines():
        word, when, *rest = line.split()
        if word == "error" and t0 is not None:
            events.append((float(when) - t0, "aborted"))
    return events, sends


def tcpdump_lines(pcap):
    """(header line, packet bytes) for each packet of the capture."""
    text = subprocess.run(["tcpdump", "-r", pcap, "-n", "-tt", "-S", "-x"], check=True,
                          capture_output=True, text=True).stdout
    packets = []
    for line in text.splitlines():
        if line.startswith("\t"):
            hexes = line.split(":", 1)[1].split()
            packets[-1][1].extend(bytes.fromhex("".join(hexes)))
        else:
            packets.append((line, bytearray()))
    return packets


WIN = re.compile(r"\bwin (\d+)")


def classify_zero_window(pcap, client_out):
    """The client's zero-window probing: `zero_window` when its probe timer was armed
    (`tcp_check_probe_timer`: the first ACK closing the window with nothing in flight if
    data was waiting then, else the next write), each `window_probe` (a segment without
    data whose sequence number is SND.UNA - 1, `tcp_xmit_probe_skb`), `window_probe_data`
    (a probe that carries the part of a write that fits a window smaller than it,
    `tcp_write_wakeup`) and `aborted`."""
    client = dict(line.split()[:2] for line in client_out.splitlines())
    connected = float(client["connected"])
    events = []
    t0 = isn = snd_una = snd_nxt = None
    armed = False
    for line, packet in tcpdump_lines(pcap):
        seg = segment(line)
        if seg is None:
            continue
        t, outgoing, _src, flags, seq, end, ack, length = seg
        ihl = (packet[0] & 0x0F) * 4
        raw_seq = struct.unpack("!I", packet[ihl + 4:ihl + 8])[0]
        if outgoing and flags == "S":
            if t0 is None:
                t0, isn = t, int(seq)
                snd_una = snd_nxt = isn + 1
                FIRST_SYN["t"] = t
                events.append((0.0, "syn"))
            continue
        if t0 is None:
            continue
        if not outgoing:
            if ack is not None:
                snd_una = max(snd_una, int(ack))
            if "S" in flags:
                events.append((t - t0, "established"))
                continue
            win = int(WIN.search(line).group(1))
            if not armed and win == 0 and snd_una == snd_nxt and snd_nxt > isn + 1:
                # peer.py writes 100 bytes at connected + n * INTERVAL_S, n = 0, 1, ...
                writes = int((t - connected) // INTERVAL_S) + 1
                if 100 * writes > snd_nxt - isn - 1:
                    at = t
                else:
                    at = connected + writes * INTERVAL_S
                events.append((at - t0, "zero_window"))
                armed = True
            continue
        if int(length) == 0:
            if "F" not in flags and snd_nxt > isn + 1 and raw_seq == (snd_una - 1) % 2**32:
                events.append((t - t0, "window_probe"))
            continue
        seq, end = int(seq), int(end)
        if end > snd_nxt:
            if int(length) < 100:
                events.append((t - t0, "window_probe_data"))
            snd_nxt = end
    for word, when, *_ in (line.split() for line in client_out.splitlines()):
        if word == "error":
            events.append((float(when) - t0, "aborted"))
    return events


def classify_synack(pcap, states):
    """The server's side of a handshake whose ACK never comes: the client's first
    `syn`, the listener's `synack` and each `synack_retransmit` (`reqsk_timer_handler`,
    `inet_rtx_syn_ack`), and from `ss` the last poll that saw the request
    (`request_seen`, SYN-RECV) and the first that did not (`request_gone`): the
    request was dropped between the two (`syn_ack_recalc`, `inet_csk_reqsk_queue_drop`)."""
    events = []
    t0 = None
    for line, _packet in tcpdump_lines(pcap):
        seg = segment(line)
        if seg is None:
            continue
        t, outgoing, src, flags = seg[:4]
        if outgoing and flags == "S" and t0 is None:
            t0 = t
            FIRST_SYN["t"] = t
            events.append((0.0, "syn"))
        elif src.startswith(SERVER_IP + ".") and flags == "S." and t0 is not None:
            seen = any(k == "synack" for _, k in events)
            events.append((t - t0, "synack_retransmit" if seen else "synack"))
    seen = [t for t, f in states if f.get("state") == "SYN-RECV"]
    if seen and t0 is not None:
        events.append((seen[-1] - t0, "request_seen"))
        gone = [t for t, f in states if t > seen[-1] and f.get("state") != "SYN-RECV"]
        if gone:
            events.append((gone[0] - t0, "request_gone"))
    events.sort()
    return events


def case_events(case, pcap, client_out, states=()):
    if case.get("capture") == "server":
        return classify_synack(pcap, states)
    if case.get("server_rcvbuf"):
        events = classify_zero_window(pcap, client_out)
        events += [(float(b.split(":")[0]), "blackout") for b in case.get("blackout", [])]
        events.sort()
        return events
    events, sends = classify(pcap, client_out)
    # The relay's schedule counts from the first SYN, as the trace does. Beside each
    # change, the first segment sent after it: the send that armed the timer the
    # change then lets expire, and the instant a comparison counts from.
    changes = [(float(b.split(":")[0]), "blackout") for b in case.get("blackout", [])]
    changes += [(float(d.split(":")[0]), "rtt_change") for d in case.get("delay_at", [])]
    for at, kind in changes:
        events.append((at, kind))
        after = [t for t in sends if t >= at]
        if after:
            events.append((after[0], "send"))
        # The last new segment before the change's first timeout: once the window is
        # full, the loss probe timer it set decides when the RTO fires.
        timeouts = [t for t, k in events if k == "timeout" and t >= at]
        if timeouts:
            before = [t for t in sends if at <= t < timeouts[0]]
            if before:
                events.append((before[-1], "last_send"))
    events.sort()
    return events


def write(name, events):
    with open(os.path.join(HERE, "traces", f"{name}.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["time_ms", "event"])
        for t, kind in events:
            w.writerow([f"{t * 1000:.0f}", kind])


def main():
    # --from-captures: classify the captures a previous run left in /tmp again.
    again = "--from-captures" in sys.argv
    names = [a for a in sys.argv[1:] if a != "--from-captures"] or list(CASES)
    for name in names:
        if again:
            FIRST_SYN.clear()
            with open(f"/tmp/{name}.client") as f:
                client_out = f.read()
            states = []
            if os.path.exists(f"/tmp/{name}.states"):
                with open(f"/tmp/{name}.states") as f:
                    states = ast.literal_eval(f.read())
            events = case_events(CASES[name], f"/tmp/{name}.pcap", client_out, states)
            write(name, events)
            if states:
                write_states(name, states, events, CASES[name].get("capture") == "server")
        else:
            events = run_case(name, CASES[name])
        timers = [f"{t * 1000:.0f} {k}" for t, k in events if k not in ("syn", "established")]
        print(f"{name}: {', '.join(timers[:16])}", file=sys.stderr)


if __name__ == "__main__":
    main()
