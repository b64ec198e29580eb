//! Linux's packetdrill scripts that pin a timer, replayed in the tcp world. Each test
//! names its script (repository, path, the commit the copy was read at), builds the
//! scenario the script's network amounts to, and checks the trace against the times the
//! script expects, to the millisecond. The chapter `docs/packetdrill.md` lists every
//! script surveyed, with the reason the others are not here yet.
//!
//! The scripts run the kernel against a scripted peer; here the peer is the path. A
//! segment the script never answers is one sent into a blackout, and the answer the
//! script injects is the path's echo one RTT later. Times are counted from the first
//! SYN, where packetdrill counts from the script's start (they differ by the few ms the
//! script spends before `connect`).

use std::path::Path;

use super::common::{run, text, trace};

/// Runs `body` (a `[tcp]` and `[path]` section) as a one-connection scenario and
/// returns the traced connection's rows.
fn replay(horizon: &str, body: &str) -> Vec<Row> {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("pd.toml");
    let scenario = format!(
        "name = \"pd\"\ndescription = \"a packetdrill script's network\"\nhorizon = \"{horizon}\"\nseed = 1\n\
         replications = 1\n{body}"
    );
    std::fs::write(&file, scenario).unwrap();
    let out = tmp.path().join("out");
    let o = run(&["run", file.to_str().unwrap(), "--quiet", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "stdout: {}\nstderr: {}", text(&o.stdout), text(&o.stderr));
    rows(&out)
}

/// One trace row: when (ns), what, and the segment it concerns (empty for the SYN).
#[derive(Debug, Clone, PartialEq)]
struct Row {
    ns: u64,
    event: String,
    segment: String,
}

fn rows(dir: &Path) -> Vec<Row> {
    trace(dir, "base")
        .into_iter()
        .map(|r| Row { ns: nanos(&r["time_s"]), event: r["event"].clone(), segment: r["segment"].clone() })
        .collect()
}

/// `time_s` as written ("1.020000000") in whole nanoseconds, so a comparison is exact.
fn nanos(time_s: &str) -> u64 {
    let (s, frac) = time_s.split_once('.').unwrap_or((time_s, "0"));
    let frac = format!("{frac:0<9}");
    s.parse::<u64>().unwrap() * 1_000_000_000 + frac[..9].parse::<u64>().unwrap()
}

const MS: u64 = 1_000_000;

/// When the connection put a SYN on the wire: the first one and every retransmission.
fn syns(rows: &[Row]) -> Vec<u64> {
    rows.iter()
        .take_while(|r| r.event != "established")
        .filter(|r| (r.event == "send" || r.event == "retransmit") && r.segment.is_empty())
        .map(|r| r.ns)
        .collect()
}

fn first(rows: &[Row], event: &str) -> u64 {
    rows.iter().find(|r| r.event == event).unwrap_or_else(|| panic!("no `{event}` in the trace: {rows:#?}")).ns
}

/// What the sender put on the wire after the handshake, as (time, event, segment).
fn data(rows: &[Row]) -> Vec<(u64, &str, &str)> {
    rows.iter()
        .skip_while(|r| r.event != "established")
        .filter(|r| matches!(r.event.as_str(), "send" | "retransmit" | "probe"))
        .map(|r| (r.ns, r.event.as_str(), r.segment.as_str()))
        .collect()
}

/// A client whose first SYN is lost, `rtt` away from the peer, with the script's
/// `tcp_timestamps=0`: the SYN-ACK comes one RTT after the retransmission the 1 s
/// initial RTO sends (`TCP_TIMEOUT_INIT`, armed by `tcp_connect`, fired by
/// `tcp_retransmit_timer`), and the data goes out with the ACK of the SYN-ACK.
fn first_syn_lost(rtt: &str) -> Vec<Row> {
    replay(
        "5s",
        &format!(
            "[tcp]\nclients = 1\nworkload = {{ kind = \"transfer\", segments = 1 }}\n\
             [tcp.rto]\nprofile = \"linux\"\ntimestamps = false\n\
             [path]\nbase_rtt = \"{rtt}\"\n[[path.blackout]]\nat = \"0s\"\nduration = \"500ms\"\n"
        ),
    )
}

/// google/packetdrill `gtests/net/tcp/fastopen/client/syn-data-timeout.pkt` (commit
/// e85a4bf32272b988d7ffd63138f3e62025a6af99), its second test: the SYN-data goes out at
/// 0, goes unanswered, `+1 > S 0:0(0)` is the SYN again 1 s later, `+.02 < S.` the
/// SYN-ACK 20 ms after that, and `+0 > P. 1:1001` the data at once. Fast Open changes
/// what the SYNs carry, not when they go.
#[test]
fn syn_data_timeout_resends_the_syn_after_the_initial_one_second_rto() {
    let rows = first_syn_lost("20ms");
    assert_eq!(syns(&rows), vec![0, 1000 * MS], "{rows:#?}");
    assert_eq!(first(&rows, "established"), 1020 * MS);
    assert_eq!(data(&rows).first(), Some(&(1020 * MS, "send", "0")), "{rows:#?}");
}

/// google/packetdrill `gtests/net/tcp/fastopen/client/cookie-req-timeout.pkt` (commit
/// bfc96251310f80b92b57b33a30d4251317e3b9ba), both of its lost-SYN tests: `> S` at 0,
/// `+1 > S` the retransmission at 1 s, `+.01 < S.` the SYN-ACK 10 ms later.
#[test]
fn cookie_req_timeout_resends_the_syn_at_one_second_and_connects_one_rtt_later() {
    let rows = first_syn_lost("10ms");
    assert_eq!(syns(&rows), vec![0, 1000 * MS], "{rows:#?}");
    assert_eq!(first(&rows, "established"), 1010 * MS);
}

/// A client whose first `lost` SYNs go unanswered, 100 ms from the peer, with the
/// kernel's defaults (timestamps on, `tcp_syn_linear_timeouts` = 4): every
/// retransmission waits `TCP_TIMEOUT_INIT`, 1 s, because `tcp_retransmit_timer` does not
/// double the RTO while `icsk_retransmits` is within the linear timeouts.
fn syns_lost(lost: u64) -> Vec<Row> {
    // The blackout ends half a second before the SYN that gets through.
    let blackout_ms = lost * 1000 - 500;
    replay(
        "10s",
        &format!(
            "[tcp]\nclients = 1\nworkload = {{ kind = \"transfer\", segments = 1 }}\n\
             [tcp.rto]\nprofile = \"linux\"\n\
             [path]\nbase_rtt = \"100ms\"\n[[path.blackout]]\nat = \"0s\"\nduration = \"{blackout_ms}ms\"\n"
        ),
    )
}

/// torvalds/linux `tools/testing/selftests/net/packetdrill/tcp_accecn_syn_ace_flags_drop.pkt`
/// (commit 37a93dd5c49b5fda807fd204edf2547c3493319c): the SYN at 0, `+1~+1.1 > SEWA` and
/// `+1~+1.1 > S` two retransmissions each 1 to 1.1 s after the one before, `+0.1 < S.`
/// the SYN-ACK 100 ms after the third, and `connect` returning by 2.1 s. The kernel's
/// linear timeouts put both at exactly 1 s; the ECN fallback changes the flags only.
/// `tcp_accecn_syn_ace_flags_acked_after_retransmit.pkt` (commit
/// c17ee635fd3a482b2ad2bf5e269755c2eae5f25e) sends its SYNs at the same times and differs
/// only in the SYN-ACK's flags, so this network replays it too.
#[test]
fn accecn_syn_ace_flags_drop_sends_three_syns_one_second_apart() {
    let rows = syns_lost(2);
    assert_eq!(syns(&rows), vec![0, 1000 * MS, 2000 * MS], "{rows:#?}");
    assert_eq!(first(&rows, "established"), 2100 * MS);
}

/// torvalds/linux `tools/testing/selftests/net/packetdrill/tcp_accecn_multiple_syn_drop.pkt`
/// (commit 37a93dd5c49b5fda807fd204edf2547c3493319c): the SYN at 0 and three
/// retransmissions, each `+.02~+1.1` after the one before, the SYN-ACK `+0.1` after the
/// fourth SYN, `connect` returning by 3.1 s. Linear timeouts: 0, 1, 2, 3 s.
#[test]
fn accecn_multiple_syn_drop_sends_four_syns_one_second_apart() {
    let rows = syns_lost(3);
    assert_eq!(syns(&rows), vec![0, 1000 * MS, 2000 * MS, 3000 * MS], "{rows:#?}");
    assert_eq!(first(&rows, "established"), 3100 * MS);
}

/// google/packetdrill `gtests/net/tcp/cubic/cubic-rto-ss-ca-cwnd-bump.pkt` (commit
/// 8d63bbc7d6273f86e826ac16dbc3c38d4a41b129), up to the ACK of the retransmission: a
/// 100 ms path without timestamps, the handshake and one segment each give a 100 ms
/// sample, so `tcp_rtt_estimator` leaves srtt 100 ms and rttvar `tcp_rto_min` 200 ms, and
/// `__tcp_set_rto` an RTO of 300 ms. The second segment goes out at T and is lost. Its
/// loss probe would wait 2·srtt + `tcp_rto_min` (one segment out) = 400 ms, so
/// `tcp_schedule_loss_probe` clamps it to the RTO: `+.3~+.303 >` the probe at T + 300 ms
/// ("RTO is shorter, so TLP scheduled in its place"). `tcp_send_loss_probe` re-arms the
/// full RTO from then: `+.3~+.303 >` the retransmission at T + 600 ms, and `+.1 <` its ACK
/// at T + 700 ms. The script's server sends the data; here the client does, over the
/// same RTT, which is all the timers see.
#[test]
fn cubic_rto_ss_ca_cwnd_bump_probes_at_the_rto_then_times_out_one_rto_later() {
    let rows = replay(
        "5s",
        "[tcp]\nclients = 1\nwindow = 1\nworkload = { kind = \"transfer\", segments = 2 }\n\
         [tcp.rto]\nprofile = \"linux\"\ntimestamps = false\n\
         [path]\nbase_rtt = \"100ms\"\n[[path.blackout]]\nat = \"200ms\"\nduration = \"500ms\"\n",
    );
    let t = 200 * MS;
    assert_eq!(
        data(&rows),
        vec![
            (100 * MS, "send", "0"),
            (t, "send", "1"),
            (t + 300 * MS, "probe", "1"),
            (t + 600 * MS, "retransmit", "1")
        ],
        "{rows:#?}"
    );
    assert_eq!(first(&rows, "timeout"), t + 600 * MS);
    assert_eq!(first(&rows, "finished"), t + 700 * MS, "the retransmission's ACK ends the transfer");
}

/// The packetdrill script Eric Dumazet posted to netdev on 2 January 2024 (Message-ID
/// <CANn89i+ad_7nisbJ8Z6Xcpv1jUjUvhfZLmpmGZ-2tJJNyN4v3A@mail.gmail.com>, "Re: [PATCH
/// net-next] tcp: Revert no longer abort SYN_SENT when receiving some ICMP"), with
/// `tcp_syn_retries=12` and `tcp_syn_linear_timeouts=4`, up to its first ICMP that
/// changes anything: SYNs at 0, +1, +1, +1, then (the ICMP at 3.5 s "is ignored while in
/// linear timeout mode") +0.5 after it, at 4 s, then +1, +2, +4: 5, 7 and 11 s, the RTO
/// doubling once the linear timeouts are spent. From 11.5 s its ICMPs undo backoffs
/// (RFC 6069, `tcp_ld_RTO_revert`), which needs scripted ICMP on the path.
#[test]
fn syn_linear_timeouts_then_doubling_as_in_the_rfc6069_script_before_its_icmps() {
    let rows = replay(
        "11500ms",
        "[tcp]\nclients = 1\nworkload = { kind = \"transfer\", segments = 1 }\n\
         [tcp.rto]\nprofile = \"linux\"\nsyn_retries = 12\nsyn_linear_timeouts = 4\n\
         [path]\nbase_rtt = \"100ms\"\n[[path.blackout]]\nat = \"0s\"\nduration = \"60s\"\n",
    );
    let expected: Vec<u64> = [0, 1000, 2000, 3000, 4000, 5000, 7000, 11000].iter().map(|ms| ms * MS).collect();
    assert_eq!(syns(&rows), expected, "{rows:#?}");
    assert!(rows.iter().all(|r| r.event != "aborted"), "12 SYN retries outlast 11.5 s: {rows:#?}");
}

/// A 2019 client (no linear SYN timeouts) with `TCP_USER_TIMEOUT` set, whose SYNs all
/// go unanswered.
fn syn_sent_with_user_timeout(user_timeout: &str) -> Vec<Row> {
    replay(
        "20s",
        &format!(
            "[tcp]\nclients = 1\nworkload = {{ kind = \"transfer\", segments = 1 }}\n\
             [tcp.rto]\nprofile = \"linux\"\nsyn_linear_timeouts = 0\nuser_timeout = \"{user_timeout}\"\n\
             [path]\nbase_rtt = \"100ms\"\n[[path.blackout]]\nat = \"0s\"\nduration = \"60s\"\n"
        ),
    )
}

/// The packetdrill script Eric Dumazet posted to netdev on 27 September 2019 (Message-ID
/// <CANn89iKhKTXukDArB3gLt=jSxL3kdtvtVNA0omrpn4w6-EyXzQ@mail.gmail.com>, "Re: [PATCH net]
/// tcp: better handle TCP_USER_TIMEOUT in SYN_SENT state"): with `TCP_USER_TIMEOUT` 8000
/// and no answer, `> S` at 0, `+1`, `+2`, `+4`: SYNs at 0, 1, 3 and 7 s, no other, and
/// `+10 write(...) = -1 ETIMEDOUT`: the socket is dead by 17 s. The kernel's code says
/// when: the timer re-armed at 7 s waits for the user timeout's remaining 1 s rather
/// than the 8 s RTO (`tcp_clamp_rto_to_user_timeout`), and that expiry finds 8 s gone
/// since the first SYN (`retransmits_timed_out`), so the abort is at 8 s.
#[test]
fn user_timeout_in_syn_sent_ends_the_syns_at_seven_seconds_and_aborts_at_eight() {
    let rows = syn_sent_with_user_timeout("8s");
    assert_eq!(syns(&rows), vec![0, 1000 * MS, 3000 * MS, 7000 * MS], "{rows:#?}");
    let aborted = first(&rows, "aborted");
    assert!(aborted <= 17_000 * MS, "the script finds the socket dead at 17 s: {rows:#?}");
    assert_eq!(aborted, 8000 * MS, "tcp_clamp_rto_to_user_timeout: 7 s + the 1 s left");
}

/// The C selftest Marek Majkowski posted in the same thread ("[PATCH] selftests/net:
/// TCP_USER_TIMEOUT in SYN-SENT state", 27 September 2019), which counts the SYNs a
/// listener drops before `connect` fails: 2 with a 200 ms user timeout ("kicks in on
/// first retransmission": the first expiry, with no retransmission yet, never times out
/// in `retransmits_timed_out`), 2 with 1500 ms, 3 with 3500 ms.
#[test]
fn user_timeout_in_syn_sent_counts_the_syns_of_the_2019_selftest() {
    for (user_timeout, expected) in [("200ms", 2), ("1500ms", 2), ("3500ms", 3)] {
        let rows = syn_sent_with_user_timeout(user_timeout);
        assert_eq!(syns(&rows).len(), expected, "user_timeout {user_timeout}: {rows:#?}");
        assert!(rows.iter().any(|r| r.event == "aborted"), "user_timeout {user_timeout}: {rows:#?}");
    }
}

#[test]
fn trace_times_are_read_to_the_nanosecond() {
    assert_eq!(nanos("1.020000000"), 1020 * MS);
    assert_eq!(nanos("0.000000001"), 1);
    assert_eq!(nanos("12.5"), 12_500 * MS);
}

/// The chapter's table names the test that replays each script: every name it gives is a
/// test here, and every replaying test is named there, so neither can drift from the other.
#[test]
fn the_chapter_names_every_replaying_test_and_only_those() {
    let root = super::common::root();
    let chapter = std::fs::read_to_string(root.join("docs/packetdrill.md")).unwrap();
    let source = std::fs::read_to_string(root.join("tests/integration/packetdrill.rs")).unwrap();
    let named: std::collections::BTreeSet<&str> =
        chapter.split("`packetdrill::").skip(1).map(|rest| rest.split('`').next().unwrap()).collect();
    let tests: std::collections::BTreeSet<&str> = source
        .split("#[test]\n")
        .skip(1)
        // An `#[ignore = "…"]` line may stand between the attribute and the function.
        .map(|rest| rest.split("fn ").nth(1).unwrap().split('(').next().unwrap())
        .filter(|name| {
            !matches!(
                *name,
                "trace_times_are_read_to_the_nanosecond" | "the_chapter_names_every_replaying_test_and_only_those"
            )
        })
        .collect();
    assert!(!tests.is_empty(), "no replaying test found in the source");
    assert_eq!(named, tests, "docs/packetdrill.md and tests/integration/packetdrill.rs disagree");
}
