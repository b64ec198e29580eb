#!/usr/bin/env python3
"""Bulk transfers over a lossy path: how many timeouts, loss probes and recoveries this
kernel goes through when the relay drops a fixed list of the client's packets, run
after run with the same list, so that the spread of the counts is the kernel's own.

  lossy.py [--runs N] [--from-captures] [CASE ...]   every case when none is named
  lossy.py --make-drops SEED RATE LAST FILE          the drop list (committed)
  lossy.py --scenarios                               scenarios/<case>.toml from it

Each run makes two network namespaces (`<BSV_NS>-c`, `<BSV_NS>-s`), joins them with
relay.py (`--drop-client-nth drops/<list>`), sends the case's bulk transfer from the
client (peer.py bulk), reads the client namespace's TCP counters (nstat; a fresh
namespace counts from zero, so they are this connection's) and its capture, and
removes everything. traces/<case>.csv gets one row per run.
"""

import os
import random
import re
import signal
import subprocess
import sys
import time

import harness
from harness import CLIENT_DEV, CLIENT_IP, PORT, SERVER_DEV, SERVER_IP, sh, ns

HERE = harness.HERE
CLIENT_NS, SERVER_NS = harness.CLIENT_NS, harness.SERVER_NS
# An IPv4 segment with timestamps on a 1500-byte MTU: 1500 - 20 - 20 - 12.
MSS = 1448
DROPS = "drops/2pct-seed1.txt"
# `sack`: the kernel's default (SACK, RACK-TLP, CUBIC); `newreno`: tcp_sack = 0, which
# also turns RACK and the loss probes off (tcp_is_sack in tcp_schedule_loss_probe and
# tcp_rack_mark_lost).
# This machine's kernel defaults to BBR (CONFIG_DEFAULT_TCP_CONG="bbr") and allows only
# reno and bbr to be made a namespace's default; the client sets CUBIC, the model's
# congestion control, on its socket (TCP_CONGESTION, which root may set to any).
CONGESTION = "cubic"
SYSCTLS = {"net.ipv4.tcp_recovery": "1", "net.ipv4.tcp_dsack": "1"}
CASES = {
    "lossy-sack-200ms": dict(sysctls={**SYSCTLS, "net.ipv4.tcp_sack": "1"}, delay_ms=100, segments=1000),
    "lossy-newreno-200ms": dict(sysctls={**SYSCTLS, "net.ipv4.tcp_sack": "0"}, delay_ms=100, segments=1000),
    "lossy-sack-50ms": dict(sysctls={**SYSCTLS, "net.ipv4.tcp_sack": "1"}, delay_ms=25, segments=2000),
    "lossy-newreno-50ms": dict(sysctls={**SYSCTLS, "net.ipv4.tcp_sack": "0"}, delay_ms=25, segments=2000),
}
# The kernel's counters each run records (nstat names), and their column in the trace.
COUNTERS = {
    "TcpExtTCPTimeouts": "timeouts",
    "TcpExtTCPLossProbes": "loss_probes",
    "TcpExtTCPSackRecovery": "sack_recovery",
    "TcpExtTCPRenoRecovery": "reno_recovery",
    "TcpRetransSegs": "retrans_segs",
    "TcpExtTCPSpuriousRTOs": "spurious_rtos",
    "TcpExtTCPDSACKRecv": "dsack_recv",
    "TcpExtTCPLossProbeRecovery": "loss_probe_recovery",
    "TcpExtTCPFastRetrans": "fast_retrans",
    "TcpExtTCPLostRetransmit": "lost_retransmit",
}
COLUMNS = (["run", "transfer_ms", "packets", "dropped", "first_retransmitted", "handshake_ms", "rtt_ms", "window_first", "window_max"]
           + list(COUNTERS.values())
           + ["capture_timeouts", "capture_probes", "capture_retransmits", "retransmits"])


def make_drops(seed, rate, last, path):
    """Each packet number from 2 (1 is the SYN) to `last` with probability `rate`, from
    Python's Mersenne Twister seeded with `seed`. A transfer reaches the numbers up to
    its segments, the SYN and its retransmissions; those past it are never met."""
    rng = random.Random(seed)
    numbers = [n for n in range(2, last + 1) if rng.random() < rate]
    with open(os.path.join(HERE, path), "w") as f:
        f.write(f"# lossy.py --make-drops {seed} {rate} {last}: the client's packets the relay drops,\n")
        f.write("# numbered as [[path.event]] kind = \"drop\" counts them (relay.py, --drop-client-nth)\n")
        for n in numbers:
            f.write(f"{n}\n")
    return numbers


def read_drops(path=DROPS):
    with open(os.path.join(HERE, path)) as f:
        return [int(x) for x in (line.split("#", 1)[0].strip() for line in f) if x]


def nstat(where):
    text = subprocess.run(["ip", "netns", "exec", where, "nstat", "-asz"], capture_output=True, text=True,
                          env={**os.environ, "NSTAT_HISTORY": "/dev/null"}).stdout
    return {k: int(v) for k, v, *_ in (line.split() for line in text.splitlines() if line and line[0] != "#")}


def offloads_off(where, dev):
    # The capture and the relay should see each segment as sent, one MSS a packet.
    if subprocess.run(["which", "ethtool"], capture_output=True).returncode == 0:
        subprocess.run(["ip", "netns", "exec", where, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off"],
                       capture_output=True)


def run_once(name, case, run):
    harness.FIRST_SYN.clear()
    harness.teardown()
    sh("ip", "netns", "add", CLIENT_NS)
    sh("ip", "netns", "add", SERVER_NS)
    procs = []
    stem = f"/tmp/{name}-{run}"
    try:
        for n in (CLIENT_NS, SERVER_NS):
            sh("ip", "-n", n, "link", "set", "lo", "up")
        for key, value in {**harness.DEFAULT_SYSCTLS, **case.get("sysctls", {})}.items():
            ns(CLIENT_NS, "sysctl", "-w", f"{key}={value}")
            got = subprocess.run(["ip", "netns", "exec", CLIENT_NS, "sysctl", "-n", key], capture_output=True,
                                 text=True).stdout.strip()
            assert got == value, f"{key} = {got}, not {value}"
        relay = subprocess.Popen([sys.executable, os.path.join(HERE, "relay.py"), "--client-ns", CLIENT_NS,
                                  "--server-ns", SERVER_NS, "--delay-ms", str(case["delay_ms"]),
                                  "--drop-client-nth", os.path.join(HERE, DROPS)],
                                 stdout=subprocess.PIPE, text=True)
        procs.append(relay)
        assert relay.stdout.readline().strip() == "ready"
        for n, dev, me, peer in ((CLIENT_NS, CLIENT_DEV, CLIENT_IP, SERVER_IP),
                                 (SERVER_NS, SERVER_DEV, SERVER_IP, CLIENT_IP)):
            sh("ip", "-n", n, "addr", "add", f"{me}/32", "peer", f"{peer}/32", "dev", dev)
            sh("ip", "-n", n, "link", "set", dev, "up")
            offloads_off(n, dev)
        dump = subprocess.Popen(["ip", "netns", "exec", CLIENT_NS, "tcpdump", "-i", CLIENT_DEV, "-n", "-s", "128",
                                 "-B", "65536", "--immediate-mode", "-U", "-w", f"{stem}.pcap", "tcp"], stderr=subprocess.PIPE, text=True)
        procs.append(dump)
        while "listening on" not in dump.stderr.readline():
            pass
        server = subprocess.Popen(["ip", "netns", "exec", SERVER_NS, sys.executable, os.path.join(HERE, "peer.py"),
                                   "server", str(PORT)])
        procs.append(server)
        time.sleep(0.5)
        client = subprocess.run(["ip", "netns", "exec", CLIENT_NS, sys.executable, os.path.join(HERE, "peer.py"),
                                 "bulk", SERVER_IP, str(PORT), str(case["segments"] * MSS), CONGESTION],
                                capture_output=True, text=True, timeout=300)
        counters = nstat(CLIENT_NS)
        # The client's FIN and the server's last ACKs, then the capture's last packets.
        time.sleep(1.0)
        dump.terminate()
        lost = [line for line in dump.communicate()[1].splitlines() if "dropped by kernel" in line]
        print(f"{name} run {run}: capture {lost}", file=sys.stderr)
        relay.terminate()
        relay_out = relay.communicate()[0]
        with open(f"{stem}.client", "w") as f:
            f.write(client.stdout)
        with open(f"{stem}.nstat", "w") as f:
            f.write("".join(f"{k} {v}\n" for k, v in sorted(counters.items())))
        with open(f"{stem}.relay", "w") as f:
            f.write(relay_out)
        return summarize(stem, run)
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
                p.wait()
        harness.teardown()


WSCALE = re.compile(r"wscale (\d+)")
WIN = re.compile(r"\bwin (\d+)")


def window_and_rtt(pcap):
    """The server's advertised window, first and largest, in segments (its `win` times
    2^wscale from its SYN-ACK); the handshake's RTT (SYN to SYN-ACK); and the median
    RTT of the data segments sent once and acknowledged by an ACK that advanced by at
    most two segments (one that fills a hole would count the recovery's time too)."""
    text = subprocess.run(["tcpdump", "-r", pcap, "-n", "-tt", "-S"], check=True,
                          capture_output=True, text=True).stdout
    scale, first, largest = 0, None, 0
    syn = handshake = None
    again, rtts = set(), []
    sent = {}
    pending = []  # (end, time sent) of first sendings, in order
    una = None
    for line in text.splitlines():
        m = re.search(r"^(\d+\.\d+) IP (\S+) > (\S+): Flags \[([^\]]*)\]", line)
        if not m:
            continue
        t, src, flags = float(m.group(1)), m.group(2), m.group(4)
        if src.startswith(SERVER_IP + "."):
            if "S" in flags:
                w = WSCALE.search(line)
                scale = int(w.group(1)) if w else 0
                handshake = t - syn if syn is not None and handshake is None else handshake
                continue
            w = WIN.search(line)
            if w:
                win = (int(w.group(1)) << scale) // MSS
                first = win if first is None else first
                largest = max(largest, win)
            a = re.search(r"\back (\d+)", line)
            if a:
                ack = int(a.group(1))
                normal = una is not None and 0 < ack - una <= 2 * MSS
                una = ack if una is None else max(una, ack)
                while pending and pending[0][0] <= ack:
                    end, ts = pending.pop(0)
                    if normal and end not in again:
                        rtts.append(t - ts)
        else:
            if flags == "S" and syn is None:
                syn = t
            s = re.search(r"seq (\d+):(\d+)", line)
            if s:
                end = int(s.group(2))
                if end in sent:
                    again.add(end)
                else:
                    sent[end] = t
                    pending.append((end, t))
    rtts.sort()
    rtt = rtts[len(rtts) // 2] * 1000 if rtts else float("nan")
    return first, largest, (handshake or float("nan")) * 1000, rtt


def classify(pcap, client_out):
    """Each retransmission (a data segment whose sequence number was sent before), with
    what drove it: `r` within 2 ms of an ACK (any, duplicate or SACK too: the ACK's own
    processing sends it, tens of microseconds later in the capture), else a timer: `t`
    for the first unacknowledged segment (the RTO, or RACK's reordering timer), `p` for
    another (a loss probe, or RACK's reordering timer)."""
    text = subprocess.run(["tcpdump", "-r", pcap, "-n", "-tt", "-S"], check=True,
                          capture_output=True, text=True).stdout
    t0 = una = first_lost = None
    last_ack = -1.0
    sent = set()
    out = []
    numbered = 0  # relay.py's count: SYNs and segments with data
    for line in text.splitlines():
        seg = harness.segment(line)
        if seg is None:
            continue
        t, outgoing, _src, flags, seq, _end, ack, length = seg
        if outgoing and flags == "S":
            t0 = t if t0 is None else t0
            isn = int(seq)
            numbered += 1
        if t0 is None:
            continue
        if not outgoing:
            if ack is not None:
                last_ack = t
                una = int(ack) if una is None else max(una, int(ack))
            continue
        if seq is None or int(length) == 0:
            continue
        numbered += 1
        if int(seq) in sent:
            kind = "r" if t - last_ack <= 0.002 else ("t" if int(seq) == una else "p")
            out.append((t - t0, kind))
            if first_lost is None:
                first_lost = (int(seq) - isn - 1) // MSS
        sent.add(int(seq))
    return t0, out, numbered, first_lost


def summarize(stem, run):
    with open(f"{stem}.client") as f:
        client_out = f.read()
    with open(f"{stem}.nstat") as f:
        counters = {k: int(v) for k, v in (line.split() for line in f if line.strip())}
    with open(f"{stem}.relay") as f:
        dropped = sum(1 for line in f if line.startswith("drop "))
    t0, rtx, packets, first_lost = classify(f"{stem}.pcap", client_out)
    done = dict(line.split()[:2] for line in client_out.splitlines()).get("done")
    first, largest, handshake, rtt = window_and_rtt(f"{stem}.pcap")
    row = {
        "run": run,
        "transfer_ms": f"{(float(done) - t0) * 1000:.0f}" if done else "",
        "packets": packets,
        "dropped": dropped,
        "first_retransmitted": first_lost,
        "handshake_ms": f"{handshake:.1f}",
        "rtt_ms": f"{rtt:.1f}",
        "window_first": first,
        "window_max": largest,
        **{col: counters.get(name, 0) for name, col in COUNTERS.items()},
        "capture_timeouts": sum(1 for _, k in rtx if k == "t"),
        "capture_probes": sum(1 for _, k in rtx if k == "p"),
        "capture_retransmits": sum(1 for _, k in rtx if k == "r"),
        "retransmits": " ".join(f"{t * 1000:.0f}{k}" for t, k in rtx),
    }
    return row


def write(name, rows):
    with open(os.path.join(HERE, "traces", f"{name}.csv"), "w") as f:
        f.write(",".join(COLUMNS) + "\n")
        for row in rows:
            f.write(",".join(str(row[c]) for c in COLUMNS) + "\n")


def read_trace(name):
    with open(os.path.join(HERE, "traces", f"{name}.csv")) as f:
        lines = f.read().splitlines()
    head = lines[0].split(",")
    return [dict(zip(head, line.split(","))) for line in lines[1:]]


def scenario(name, case):
    """The scenario of a case: the same path, transfer and drops; its receiver's window
    the largest the kernel's server advertised over the runs."""
    rows = read_trace(name)
    window = max(int(r["window_max"]) for r in rows)
    rtt = sorted(float(r["rtt_ms"]) for r in rows)[len(rows) // 2]
    sack = case["sysctls"]["net.ipv4.tcp_sack"] == "1"
    what = "SACK, RACK-TLP and CUBIC (tcp_sack = 1)" if sack else "NewReno and CUBIC (tcp_sack = 0)"
    lines = [
        f'name = "linux-{name}"',
        f'description = "{case["segments"]} full segments over a {2 * case["delay_ms"]} ms path that drops the '
        f'client\'s packets listed in {DROPS}; {what}."',
        'horizon = "300s"',
        "seed = 1",
        "replications = 1",
        "",
        "[tcp]",
        "clients = 1",
        f"# The largest window the kernel's receiver advertised ({MSS}-byte segments).",
        f"window = {window}",
        f"sack = {str(sack).lower()}",
        f"rack = {str(sack).lower()}",
        'congestion = "cubic"',
        "delayed_ack = true",
        f'workload = {{ kind = "transfer", segments = {case["segments"]} }}',
        "",
        "[tcp.rto]",
        'profile = "linux"',
        "",
        "[path]",
        "# The runs' median RTT of segments sent once (relay.py adds about 0.25 ms a way;",
        "# the handshake's, whose first packets wake the relay, wanders by up to 6 ms).",
        f'base_rtt = "{rtt:.1f}ms"',
    ]
    for n in read_drops():
        lines += ["", "[[path.event]]", 'kind = "drop"', f"nth = {n}"]
    with open(os.path.join(HERE, "scenarios", f"{name}.toml"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    # A stopped run still removes its namespaces and processes (the `finally` above).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    args = sys.argv[1:]
    if args[:1] == ["--make-drops"]:
        seed, rate, last, path = int(args[1]), float(args[2]), int(args[3]), args[4]
        print(f"{len(make_drops(seed, rate, last, path))} drops", file=sys.stderr)
        return
    if args[:1] == ["--scenarios"]:
        for name, case in CASES.items():
            if os.path.exists(os.path.join(HERE, "traces", f"{name}.csv")):
                scenario(name, case)
        return
    runs = 5
    if "--runs" in args:
        i = args.index("--runs")
        runs = int(args[i + 1])
        del args[i:i + 2]
    again = "--from-captures" in args
    names = [a for a in args if a != "--from-captures"] or list(CASES)
    for name in names:
        rows = []
        for run in range(1, runs + 1):
            row = summarize(f"/tmp/{name}-{run}", run) if again else run_once(name, CASES[name], run)
            rows.append(row)
            brief = {k: row[k] for k in ("transfer_ms", "dropped", "timeouts", "loss_probes", "sack_recovery",
                                         "reno_recovery", "retrans_segs", "window_max")}
            print(f"{name} run {run}: {brief}", file=sys.stderr)
        write(name, rows)


if __name__ == "__main__":
    main()
