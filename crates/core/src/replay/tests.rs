use proptest::prelude::*;

use super::*;
use crate::model::rto::RtoConfig;
use crate::model::rto::tests::any_params;

fn run(profile: RtoProfile, input: &str) -> Result<String, ReplayError> {
    let params = RtoConfig { profile, ..RtoConfig::default() }.resolve().unwrap();
    let mut out = Vec::new();
    replay(input.as_bytes(), &mut out, &params)?;
    Ok(String::from_utf8(out).unwrap())
}

fn err(profile: RtoProfile, input: &str) -> String {
    run(profile, input).unwrap_err().to_string()
}

#[test]
fn replay_rfc6298_golden() {
    let input = "time_s,event,rtt_s\n\
                 0,sample,0.1\n\
                 0.5,sample,0.2\n\
                 1.0,timeout,\n\
                 3.0,timeout,\n\
                 3.5,sample,0.3\n";
    // Row 2: RTTVAR 62.5 ms, SRTT 112.5 ms (RFC 6298 (2.3), see rfc6298.rs).
    // Row 5: RTTVAR = 62.5 + (187.5 − 62.5)/4 = 93.75 ms;
    //        SRTT = 112.5 + (300 − 112.5)/8 = 135.9375 ms -> printed 0.135938;
    //        RTO = 135.9375 + 375 = 510.9375 ms -> 1 s; backoff gone.
    let expected = "time_s,event,rtt_s,srtt_s,rttvar_s,rto_s,backoffs\n\
                    0.000000,sample,0.100000,0.100000,0.050000,1.000000,0\n\
                    0.500000,sample,0.200000,0.112500,0.062500,1.000000,0\n\
                    1.000000,timeout,,0.112500,0.062500,2.000000,1\n\
                    3.000000,timeout,,0.112500,0.062500,4.000000,2\n\
                    3.500000,sample,0.300000,0.135938,0.093750,1.000000,0\n";
    assert_eq!(run(RtoProfile::Rfc6298, input).unwrap(), expected);
}

#[test]
fn replay_linux_golden_with_sequence_numbers() {
    // The decay run of linux.rs, then a timeout. Columns in another order, a comment.
    let input = "event,time_s,rtt_s,snd_una,snd_nxt\n\
                 # handshake skipped\n\
                 sample,0.1,0.1,1000,2000\n\
                 sample,0.3,0.3,1500,3000\n\
                 sample,0.425,0.125,2500,4000\n\
                 sample,0.55,0.125,4500,5000\n\
                 timeout,0.6,,,\n";
    // Kernel fields → printed: srtt_us/8; rttvar_us, mdev_us, mdev_max_us /4.
    // rttvar_us 200000/350000/350000/312500 -> 0.05/0.0875/0.0875/0.078125
    // mdev_us 200000/350000/262500/196875 -> …/0.065625/0.049219 (49218.75 µs)
    // RTO 300/476/476/440 ms, then doubled to 880 ms.
    let expected = "time_s,event,rtt_s,srtt_s,rttvar_s,rto_s,backoffs,mdev_s,mdev_max_s\n\
                    0.100000,sample,0.100000,0.100000,0.050000,0.300000,0,0.050000,0.050000\n\
                    0.300000,sample,0.300000,0.125000,0.087500,0.476000,0,0.087500,0.087500\n\
                    0.425000,sample,0.125000,0.125000,0.087500,0.476000,0,0.065625,0.050000\n\
                    0.550000,sample,0.125000,0.125000,0.078125,0.440000,0,0.049219,0.050000\n\
                    0.600000,timeout,,0.125000,0.078125,0.880000,1,0.049219,0.050000\n";
    assert_eq!(run(RtoProfile::Linux, input).unwrap(), expected);
}

#[test]
fn replay_syn_timeouts_and_established() {
    let input = "time_s,event,rtt_s\n1,syn_timeout,\n3,established,\n";
    let expected = "time_s,event,rtt_s,srtt_s,rttvar_s,rto_s,backoffs\n\
                    1.000000,syn_timeout,,,,2.000000,1\n\
                    3.000000,established,,,,3.000000,1\n";
    assert_eq!(run(RtoProfile::Rfc6298, input).unwrap(), expected);
}

#[test]
fn replay_header_only_gives_header_only() {
    let out = run(RtoProfile::Rfc6298, "time_s,event,rtt_s\n").unwrap();
    assert_eq!(out, "time_s,event,rtt_s,srtt_s,rttvar_s,rto_s,backoffs\n");
}

#[test]
fn replay_errors_name_line_and_column() {
    let r = RtoProfile::Rfc6298;
    let h = "time_s,event,rtt_s\n";
    assert_eq!(
        err(r, &format!("{h}0,sample,0.1\n1,sample,0.1\n2,sample,abc\n")),
        "line 4, column rtt_s: `abc` is not a number of seconds"
    );
    assert_eq!(
        err(r, &format!("{h}1.5,sample,0.1\n1.2,timeout,\n")),
        "line 3, column time_s: 1.2 s is earlier than the previous row's 1.5 s: time must not go backwards"
    );
    assert_eq!(
        err(r, &format!("{h}0,ack,0.1\n")),
        "line 2, column event: `ack` is not an event: expected sample, timeout, syn_timeout, established, retransmit or probe"
    );
    assert_eq!(err(r, &format!("{h}0,sample,\n")), "line 2, column rtt_s: is empty: a sample needs an RTT in seconds");
    assert_eq!(err(r, &format!("{h}0,timeout,1\n")), "line 2, column rtt_s: must be empty for a timeout row");
    assert_eq!(
        err(r, &format!("{h}0,sample,-0.1\n")),
        "line 2, column rtt_s: `-0.1` is negative: expected seconds, zero or more"
    );
    assert_eq!(
        err(r, &format!("{h},sample,0.1\n")),
        "line 2, column time_s: is empty: every row needs a time in seconds"
    );
    assert_eq!(err(r, &format!("{h}0,sample\n")), "line 2: has 2 fields, the header has 3");
    // Comments and blank lines still count as lines.
    assert_eq!(err(r, &format!("{h}# note\n\n0,sample,x\n")), "line 4, column rtt_s: `x` is not a number of seconds");
}

#[test]
fn replay_header_errors() {
    let r = RtoProfile::Rfc6298;
    assert_eq!(err(r, ""), "line 1 (header): the input is empty: expected a header `time_s,event,rtt_s`");
    assert_eq!(
        err(r, "time_s,event,rtt_ms\n"),
        "line 1 (header): unknown column `rtt_ms` (known: time_s, event, rtt_s, snd_una, snd_nxt)"
    );
    assert_eq!(err(r, "time_s,event\n"), "line 1 (header): missing column `rtt_s` (required: time_s, event, rtt_s)");
    assert_eq!(err(r, "time_s,event,rtt_s,time_s\n"), "line 1 (header): column `time_s` appears twice");
    assert_eq!(
        err(r, "time_s,event,rtt_s,snd_una\n"),
        "line 1 (header): snd_una and snd_nxt go together: give both or neither"
    );
}

#[test]
fn replay_sequence_errors() {
    let l = RtoProfile::Linux;
    let h = "time_s,event,rtt_s,snd_una,snd_nxt\n";
    assert_eq!(
        err(l, &format!("{h}0,sample,0.1,10,\n")),
        "line 2, column snd_nxt: is empty but snd_una is not: give both or neither"
    );
    assert_eq!(
        err(l, &format!("{h}0,sample,0.1,x,5\n")),
        "line 2, column snd_una: `x` is not a sequence number (a whole number of bytes)"
    );
    assert_eq!(err(l, &format!("{h}0,sample,0.1,9,5\n")), "line 2, column snd_una: 9 is beyond snd_nxt 5");
}

#[test]
fn replay_reads_quotes_crlf_and_spaces() {
    let input = "time_s , event , rtt_s\r\n 0 , \"sample\" ,\"0.1\"\r\n";
    let out = run(RtoProfile::Rfc6298, input).unwrap();
    assert_eq!(out.lines().nth(1), Some("0.000000,sample,0.100000,0.100000,0.050000,1.000000,0"));
    let h = "time_s,event,rtt_s\n";
    assert_eq!(err(RtoProfile::Rfc6298, &format!("{h}0,\"sample,0.1\n")), "line 2: has an unterminated quoted field");
    assert_eq!(err(RtoProfile::Rfc6298, &format!("{h}0,\"sample\"x,0.1\n")), "line 2: has text after a closing quote");
    let params = RtoConfig::default().resolve().unwrap();
    let e = replay(&b"time_s,event,rtt_s\n0,sample,\xff\n"[..], std::io::sink(), &params).unwrap_err();
    assert_eq!(e.to_string(), "line 2: is not valid UTF-8");
}

#[test]
fn split_fields_follows_rfc_4180_on_one_line() {
    let f = |t: &str| split_fields(t).unwrap();
    assert_eq!(f("a,b,c"), ["a", "b", "c"]);
    assert_eq!(f(" a ,  b,c "), ["a", "b", "c"]);
    assert_eq!(f("a,,"), ["a", "", ""]);
    assert_eq!(f("\"a,b\",\"say \"\"hi\"\"\""), ["a,b", "say \"hi\""]);
    assert_eq!(f(""), [""]);
}

#[test]
fn seconds_parse_exactly() {
    let ns = |t: &str| parse_seconds(t).map(|d| d.as_nanos());
    assert_eq!(ns("1.04"), Some(1_040_000_000));
    assert_eq!(ns("0.000000001"), Some(1));
    assert_eq!(ns("0.0000000015"), Some(2)); // half up at the tenth digit
    assert_eq!(ns("0.00000000149"), Some(1));
    assert_eq!(ns(".5"), Some(500_000_000));
    assert_eq!(ns("2."), Some(2_000_000_000));
    assert_eq!(ns("+3"), Some(3_000_000_000));
    assert_eq!(ns("1e-3"), Some(1_000_000));
    for bad in ["", ".", "abc", "-1", "1.2.3", "inf", "NaN", "1e", "99999999999999999999", "1,5"] {
        assert_eq!(ns(bad), None, "{bad}");
    }
}

#[test]
fn seconds_print_with_six_decimals_rounded_half_up() {
    let f = |n: u64| {
        let mut s = String::new();
        csv_secs(&mut s, SimDuration(n));
        s
    };
    assert_eq!(f(0), "0.000000");
    assert_eq!(f(1_500), "0.000002");
    assert_eq!(f(1_499), "0.000001");
    assert_eq!(f(135_937_500), "0.135938");
    assert_eq!(f(120_000_000_000), "120.000000");
    assert_eq!(f(u64::MAX), "18446744073.709552");
}

proptest! {
    #[test]
    fn replay_never_panics(p in any_params(), text in "(time_s|event|rtt_s|snd_una|snd_nxt|sample|timeout|syn_timeout|established|[0-9.e+-]{0,12}|,|\n|#| |\"|x){0,60}") {
        let _ = replay(text.as_bytes(), std::io::sink(), &p);
    }

    #[test]
    fn replay_never_panics_on_bytes(p in any_params(), bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let mut input = b"time_s,event,rtt_s,snd_una,snd_nxt\n".to_vec();
        input.extend(bytes);
        let _ = replay(&input[..], std::io::sink(), &p);
    }
}

/// A retransmission the timer did not drive is shown but changes nothing: only
/// expiries back off (RFC 6298 5.5) and only samples move SRTT (2.3).
#[test]
fn replayer_shows_a_retransmit_without_touching_the_estimator() {
    let params = RtoConfig { profile: RtoProfile::Rfc6298, ..RtoConfig::default() }.resolve().unwrap();
    let mut r = Replayer::new(Vec::new(), &params).unwrap();
    let ms = |n: u64| SimTime(n * 1_000_000);
    r.event(ms(100), Event::Sample(SimDuration::from_millis(100), None)).unwrap();
    let before = r.rto();
    r.event(ms(150), Event::Retransmit).unwrap();
    assert_eq!(r.rto(), before);
    r.event(ms(1150), Event::Timeout).unwrap();
    assert_eq!(r.rto(), SimDuration(before.as_nanos() * 2));
    assert_eq!(
        String::from_utf8(r.into_inner()).unwrap(),
        "time_s,event,rtt_s,srtt_s,rttvar_s,rto_s,backoffs\n\
         0.100000,sample,0.100000,0.100000,0.050000,1.000000,0\n\
         0.150000,retransmit,,0.100000,0.050000,1.000000,0\n\
         1.150000,timeout,,0.100000,0.050000,2.000000,1\n"
    );
}

/// `rto capture` writes `retransmit` and `probe` rows (a tail loss probe, RFC 8985 §7):
/// read back, they leave the estimator as it was.
#[test]
fn replay_reads_retransmit_and_probe_rows_without_touching_the_estimator() {
    let input = "time_s,event,rtt_s\n0,sample,0.1\n0.5,probe,\n0.6,retransmit,\n";
    let out = run(RtoProfile::Rfc6298, input).unwrap();
    let rows: Vec<&str> = out.lines().collect();
    assert_eq!(rows[2], "0.500000,probe,,0.100000,0.050000,1.000000,0");
    assert_eq!(rows[3], "0.600000,retransmit,,0.100000,0.050000,1.000000,0");
}
