//! Numbers and durations as people read them, for every text a person reads: plot labels,
//! reports and `explain`. Machine output (CSV, JSON) keeps plain numbers in seconds and
//! never goes through here, so rounding here can never change a result.

use crate::engine::time::SimDuration;

/// A number for a tick label or a table: at most `sig` significant digits, no trailing
/// zeros, never scientific notation for the magnitudes plots show.
pub fn fmt_num(v: f64, sig: usize) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    fmt_decimals(v, decimals(v, sig))
}

/// The decimals that show `sig` significant digits of `v` (none for 0).
pub fn decimals(v: f64, sig: usize) -> usize {
    if v == 0.0 || !v.is_finite() {
        return 0;
    }
    let mag = v.abs().log10().floor() as i32;
    (sig as i32 - 1 - mag).max(0) as usize
}

/// `v` with at most `decimals` decimals, trailing zeros dropped.
pub fn fmt_decimals(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if s == "-0" { "0".into() } else { s }
}

/// `v` to `sig` significant digits, but no finer than `spread` (a half-width) shown to
/// as many: a mean of differences that cancel is float noise beside its interval, and
/// reads as 0 rather than -0.0000000000000007.
pub fn fmt_num_beside(v: f64, spread: f64, sig: usize) -> String {
    if !v.is_finite() || spread == 0.0 || !spread.is_finite() {
        return fmt_num(v, sig);
    }
    fmt_decimals(v, decimals(v, sig).min(decimals(spread, sig)))
}

/// "a", "a or b", "a, b or c": a list of alternatives in a sentence.
pub fn or_list(items: &[String]) -> String {
    joined(items, "or")
}

/// "a", "a and b", "a, b and c": a list in a sentence.
pub fn and_list(items: &[String]) -> String {
    joined(items, "and")
}

fn joined(items: &[String], word: &str) -> String {
    match items.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} {word} {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Seconds as a person says them, to three significant digits: `300 ms`, `3.28 s`,
/// `2 min`.
pub fn fmt_secs(s: f64) -> String {
    fmt_secs_sig(s, 3)
}

/// Seconds as a person says them, to `sig` significant digits, in the largest unit that
/// keeps the number above 1 (minutes from 2 min, hours from 2 h, days from 2 d, so that
/// 90 s stays `90 s` rather than `1.5 min`).
pub fn fmt_secs_sig(s: f64, sig: usize) -> String {
    if s == 0.0 || !s.is_finite() {
        return if s == 0.0 { "0 s".into() } else { format!("{s} s") };
    }
    // The unit is chosen after rounding, so that 0.9996 s reads `1 s`, not `1000 ms`.
    let a = fmt_num(s.abs(), sig).parse::<f64>().unwrap_or(s.abs());
    let (scale, unit) = if a < 1e-3 {
        (1e-6, "µs")
    } else if a < 1.0 {
        (1e-3, "ms")
    } else if a < 120.0 {
        (1.0, "s")
    } else if a < 2.0 * 3600.0 {
        (60.0, "min")
    } else if a < 2.0 * 86_400.0 {
        (3600.0, "h")
    } else {
        (86_400.0, "d")
    };
    format!("{} {unit}", fmt_num(s / scale, sig))
}

/// A duration as a person says it (`3.28 s`, `250 ms`, `2 min`); see [`fmt_secs`].
pub fn duration(d: SimDuration) -> String {
    fmt_secs(d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_their_significant_digits_and_drop_trailing_zeros() {
        assert_eq!(fmt_num(0.1, 4), "0.1");
        assert_eq!(fmt_num(14600.0, 4), "14600");
        assert_eq!(fmt_num(28331.3, 4), "28331");
        assert_eq!(fmt_num(0.078587, 4), "0.07859");
        assert_eq!(fmt_num(-0.5, 2), "-0.5");
        assert_eq!(fmt_num(0.0, 4), "0");
    }

    #[test]
    fn a_mean_beside_its_interval_shows_no_digits_finer_than_the_interval() {
        // calls-reset's goodput_end: differences that cancel leave -7.1e-16 beside ±0.0176.
        assert_eq!(fmt_num_beside(-7.105e-16, 0.0176, 4), "0");
        assert_eq!(fmt_num_beside(0.012345, 0.0176, 4), "0.01235");
        assert_eq!(fmt_num_beside(12.3456, 0.5, 4), "12.35");
        assert_eq!(fmt_num_beside(12.3456, 500.0, 4), "12.3");
        assert_eq!(fmt_num_beside(2.5, 0.0, 4), "2.5");
    }

    #[test]
    fn durations_read_in_the_unit_a_person_would_say() {
        assert_eq!(fmt_secs(0.3), "300 ms");
        assert_eq!(fmt_secs(32.0), "32 s");
        assert_eq!(fmt_secs(0.00025), "250 µs");
        assert_eq!(fmt_secs(90.0), "90 s");
        assert_eq!(fmt_secs(120.0), "2 min");
        assert_eq!(fmt_secs(900.0), "15 min");
        assert_eq!(fmt_secs(3.0 * 3600.0), "3 h");
        assert_eq!(fmt_secs(4_194_304.0), "48.5 d");
        assert_eq!(fmt_secs(-1.5), "-1.5 s");
    }

    #[test]
    fn odd_nanosecond_durations_read_as_three_significant_digits() {
        assert_eq!(duration(SimDuration::from_nanos(3_276_800_000)), "3.28 s");
        assert_eq!(duration(SimDuration::from_nanos(13_421_772_800)), "13.4 s");
        assert_eq!(duration(SimDuration::from_millis(250)), "250 ms");
        assert_eq!(duration(SimDuration::from_secs(120)), "2 min");
        assert_eq!(duration(SimDuration::ZERO), "0 s");
    }

    #[test]
    fn the_unit_is_chosen_after_rounding() {
        assert_eq!(fmt_secs(0.9996), "1 s");
        assert_eq!(fmt_secs(119.7), "2 min");
        assert_eq!(fmt_secs_sig(119.7, 4), "119.7 s");
    }
}
