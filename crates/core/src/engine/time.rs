//! Simulated time: integer nanoseconds, so that a run is exact and the same on every
//! machine. Floating point appears only at the edges (scenario input, CSV output).

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Nanoseconds per unit, for conversions at the edges.
pub const NANOS_PER_SEC: u64 = 1_000_000_000;
pub const NANOS_PER_MILLI: u64 = 1_000_000;
pub const NANOS_PER_MICRO: u64 = 1_000;

/// An instant of simulated time: nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of simulated time in nanoseconds. Never negative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimDuration(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub fn as_nanos(self) -> u64 {
        self.0
    }

    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }

    /// Time elapsed since `earlier`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }

    pub fn saturating_add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);
    pub const MAX: SimDuration = SimDuration(u64::MAX);

    pub const fn from_nanos(n: u64) -> Self {
        SimDuration(n)
    }
    pub const fn from_micros(us: u64) -> Self {
        SimDuration(us * NANOS_PER_MICRO)
    }
    pub const fn from_millis(ms: u64) -> Self {
        SimDuration(ms * NANOS_PER_MILLI)
    }
    pub const fn from_secs(s: u64) -> Self {
        SimDuration(s * NANOS_PER_SEC)
    }

    /// Rounds to the nearest nanosecond; negative or non-finite input gives `None`.
    pub fn from_secs_f64(s: f64) -> Option<Self> {
        if !s.is_finite() || s < 0.0 {
            return None;
        }
        let ns = (s * NANOS_PER_SEC as f64).round();
        if ns >= u64::MAX as f64 {
            return None;
        }
        Some(SimDuration(ns as u64))
    }

    pub fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_micros(self) -> u64 {
        self.0 / NANOS_PER_MICRO
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }

    pub fn saturating_mul(self, k: u64) -> SimDuration {
        SimDuration(self.0.saturating_mul(k))
    }

    pub fn saturating_sub(self, other: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_sub(other.0))
    }

    /// The longest duration a scenario may write: 876,600 h (100 years of 365.25 days),
    /// below 2⁶² ns, so that adding a few of them never overflows a `SimTime`.
    pub const MAX_PARSED: SimDuration = SimDuration(876_600 * 3600 * NANOS_PER_SEC);

    /// Parses a duration as people write them: one or more spans of a number and a
    /// unit, `250ms`, `1.5s`, `2min`, `1h30m`, `1h 30min`, `2 minutes`, `1.5h` (the
    /// grammar of the `humantime` crate: ns, us/µs, ms, s/sec/seconds, m/min/minutes,
    /// h/hr/hours, d/days, w/weeks). A bare number is not accepted: the unit is what
    /// makes a scenario readable, and guessing it is how off-by-1000 bugs are born.
    pub fn parse(text: &str) -> Result<SimDuration, String> {
        const UNITS: &str = "units: ns, us, ms, s, min, h, d; spans may be combined, e.g. \"1h 30min\"";
        let t = text.trim();
        if t.starts_with('-') {
            return Err(format!("`{text}` is negative: a duration must be zero or more"));
        }
        if has_exponent(t) {
            return Err(match exponent_suggestion(t) {
                Some(d) => format!("`{text}` uses an exponent, which a duration does not take: write \"{d}\""),
                None => format!(
                    "`{text}` uses an exponent: write the number out with a unit that fits, e.g. \"1500ms\" or \"2h\""
                ),
            });
        }
        let parsed = humantime::parse_duration(t).map_err(|e| match e {
            humantime::DurationError::UnknownUnit { unit, value, .. } if unit.is_empty() => {
                format!("`{text}` has no unit: write e.g. \"{value}s\" or \"{value}ms\" ({UNITS})")
            }
            humantime::DurationError::UnknownUnit { unit, .. } => format!("`{text}` has an unknown unit `{unit}` ({UNITS})"),
            humantime::DurationError::NumberOverflow => format!(
                "`{text}` is finer than a nanosecond or too long: durations count whole nanoseconds, \
                 at most {} h",
                SimDuration::MAX_PARSED.0 / NANOS_PER_SEC / 3600
            ),
            humantime::DurationError::Empty => format!("`{text}` is not a duration: expected a number and a unit, e.g. \"250ms\""),
            humantime::DurationError::InvalidCharacter(_) | humantime::DurationError::NumberExpected(_) => {
                format!("`{text}` is not a duration: expected numbers each followed by a unit, e.g. \"250ms\" or \"1h 30min\"")
            }
        })?;
        match u64::try_from(parsed.as_nanos()) {
            Ok(ns) if ns <= SimDuration::MAX_PARSED.0 => Ok(SimDuration(ns)),
            _ => Err(format!(
                "`{text}` is longer than a scenario may use: at most {} h (about 100 years), so that sums of \
                 durations cannot overflow simulated time",
                SimDuration::MAX_PARSED.0 / NANOS_PER_SEC / 3600
            )),
        }
    }
}

/// Whether a number in the text is written with an exponent (`1e3`, `2.5E-2`).
fn has_exponent(text: &str) -> bool {
    let b = text.as_bytes();
    (1..b.len()).any(|i| {
        let digit_before = b[i - 1].is_ascii_digit() || b[i - 1] == b'.';
        let after = &b[i + 1..];
        let digit_after = match after {
            [b'+' | b'-', d, ..] | [d, ..] => d.is_ascii_digit(),
            [] => false,
        };
        matches!(b[i], b'e' | b'E') && digit_before && digit_after
    })
}

/// What `1e3ms` means, written the way `parse` reads it (`1s`), for the error that refuses
/// the exponent; `None` when the text is not one number with an exponent and one unit.
fn exponent_suggestion(text: &str) -> Option<SimDuration> {
    let unit_at = text.rfind(|c: char| c.is_ascii_digit() || c == '.')? + 1;
    let (number, unit) = text.split_at(unit_at);
    let value: f64 = number.trim().parse().ok().filter(|v: &f64| v.is_finite() && *v >= 0.0)?;
    let unit = unit.trim();
    let one = humantime::parse_duration(&format!("1{unit}")).ok()?;
    let ns = (value * one.as_nanos() as f64).round();
    (ns <= SimDuration::MAX_PARSED.0 as f64).then_some(SimDuration(ns as u64))
}

/// Sums saturate at the end of representable time (about 584 years) instead of wrapping
/// into the past: a backoff that overflows lands beyond every horizon, where the
/// scheduler drops it, rather than at time zero.
impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        self.0 = self.0.saturating_add(d.0);
    }
}

impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    /// Panics in debug builds if `rhs` is later: use `saturating_since` where that can happen.
    fn sub(self, rhs: SimTime) -> SimDuration {
        SimDuration(self.0 - rhs.0)
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(d.0))
    }
}

impl AddAssign for SimDuration {
    fn add_assign(&mut self, d: SimDuration) {
        self.0 = self.0.saturating_add(d.0);
    }
}

impl Sub for SimDuration {
    type Output = SimDuration;
    fn sub(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0 - d.0)
    }
}

/// Formats in the same human form that `parse` reads, choosing the largest unit that
/// keeps the value exact, so a resolved parameter dump can be pasted back into a scenario.
impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns == 0 {
            return write!(f, "0s");
        }
        for (unit, scale) in [
            ("h", 3600 * NANOS_PER_SEC),
            ("min", 60 * NANOS_PER_SEC),
            ("s", NANOS_PER_SEC),
            ("ms", NANOS_PER_MILLI),
            ("us", NANOS_PER_MICRO),
        ] {
            if ns.is_multiple_of(scale) {
                return write!(f, "{}{unit}", ns / scale);
            }
        }
        write!(f, "{ns}ns")
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

impl Serialize for SimDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SimDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = SimDuration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration string with a unit, e.g. \"250ms\", \"1.5s\" or \"2min\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<SimDuration, E> {
                SimDuration::parse(v).map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<SimDuration, E> {
                Err(E::custom(format!(
                    "a bare number ({v}) is not a duration: write it with a unit, e.g. \"{v}s\" or \"{v}ms\""
                )))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<SimDuration, E> {
                self.visit_i64(v as i64)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<SimDuration, E> {
                Err(E::custom(format!(
                    "a bare number ({v}) is not a duration: write it with a unit, e.g. \"{v}s\" or \"{v}ms\""
                )))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_unit() {
        assert_eq!(SimDuration::parse("250ms").unwrap(), SimDuration::from_millis(250));
        assert_eq!(SimDuration::parse("1.5s").unwrap(), SimDuration::from_millis(1500));
        assert_eq!(SimDuration::parse("2min").unwrap(), SimDuration::from_secs(120));
        assert_eq!(SimDuration::parse("100us").unwrap(), SimDuration::from_micros(100));
        assert_eq!(SimDuration::parse("7ns").unwrap(), SimDuration::from_nanos(7));
        assert_eq!(SimDuration::parse("1h").unwrap(), SimDuration::from_secs(3600));
        assert_eq!(SimDuration::parse(" 3 s ").unwrap(), SimDuration::from_secs(3));
    }

    #[test]
    fn parses_durations_as_people_write_them() {
        let ninety_minutes = SimDuration::from_secs(5400);
        for text in ["1h30m", "1h 30min", "1.5h", "90 minutes", "1 hour 30 minutes", "5400s"] {
            assert_eq!(SimDuration::parse(text).unwrap(), ninety_minutes, "{text}");
        }
        assert_eq!(SimDuration::parse("2 minutes").unwrap(), SimDuration::from_secs(120));
        assert_eq!(SimDuration::parse("1d").unwrap(), SimDuration::from_secs(86_400));
        assert_eq!(SimDuration::parse("100µs").unwrap(), SimDuration::from_micros(100));
        // Decimal fractions are exact, not rounded through a float.
        assert_eq!(SimDuration::parse("0.1s").unwrap(), SimDuration::from_millis(100));
        assert_eq!(SimDuration::parse("1.000000001s").unwrap(), SimDuration::from_nanos(1_000_000_001));
    }

    #[test]
    fn rejects_negative_unitless_and_unknown_units() {
        assert!(SimDuration::parse("-1s").unwrap_err().contains("negative"));
        assert!(SimDuration::parse("5").unwrap_err().contains("no unit"));
        assert!(SimDuration::parse("5 fortnights").unwrap_err().contains("unknown unit"));
        assert!(SimDuration::parse("ms").is_err());
        assert!(SimDuration::parse("").is_err());
    }

    #[test]
    fn refuses_exponents_nan_infinity_and_anything_longer_than_100_years() {
        assert!(SimDuration::parse("1e30s").unwrap_err().contains("exponent"), "{:?}", SimDuration::parse("1e30s"));
        assert!(SimDuration::parse("1E-3s").unwrap_err().contains("exponent"));
        // The refusal says what the user meant, in the form a scenario takes.
        assert!(SimDuration::parse("1e3ms").unwrap_err().contains("write \"1s\""), "{:?}", SimDuration::parse("1e3ms"));
        assert!(SimDuration::parse("2.5e2 ms").unwrap_err().contains("write \"250ms\""));
        assert!(SimDuration::parse("nan").is_err());
        assert!(SimDuration::parse("inf s").is_err());
        // 100 years is the most; one nanosecond more, or u64::MAX ns in seconds, is refused.
        assert_eq!(SimDuration::parse("876600h").unwrap(), SimDuration::MAX_PARSED);
        assert!(SimDuration::parse("876600.000001h").unwrap_err().contains("at most 876600 h"));
        assert!(SimDuration::parse("1.0000000001s").unwrap_err().contains("finer than a nanosecond"));
        assert!(SimDuration::parse("18446744073s").unwrap_err().contains("longer than a scenario may use"));
        // Three of the longest still fit a SimTime, so adding durations cannot overflow.
        assert!(SimDuration::MAX_PARSED.0.checked_mul(3).is_some());
    }

    #[test]
    fn display_round_trips_through_parse() {
        for d in [0, 1, 1_000, 1_500_000, 2 * NANOS_PER_SEC, 120 * NANOS_PER_SEC, 1_040_000_000] {
            let d = SimDuration(d);
            assert_eq!(SimDuration::parse(&d.to_string()).unwrap(), d, "{d}");
        }
        assert_eq!(SimDuration::from_secs(120).to_string(), "2min");
        assert_eq!(SimDuration::from_millis(1040).to_string(), "1040ms");
    }

    #[test]
    fn sums_saturate_at_the_end_of_time_instead_of_wrapping_into_the_past() {
        let near_end = SimTime(u64::MAX - 5);
        assert_eq!(near_end + SimDuration::MAX, SimTime::MAX);
        assert_eq!(SimDuration(u64::MAX - 1) + SimDuration(2), SimDuration::MAX);
        let mut t = near_end;
        t += SimDuration(10);
        assert_eq!(t, SimTime::MAX);
        let mut d = SimDuration::MAX;
        d += SimDuration(1);
        assert_eq!(d, SimDuration::MAX);
    }
}
