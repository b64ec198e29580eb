//! `backoffsim presets`: the retry presets as an aligned table — name, what it is, the
//! key numbers (from the resolved policy, so they cannot drift from the model) and
//! where the facts were read.

use std::io::Write;

use super::CliError;
use crate::model::retry::presets::PRESETS;
use crate::model::retry::{AttemptLimit, BudgetPolicy, CapApplies, Jitter, RetryPolicy, RetryPolicyConfig};

/// The numbers that matter, in one short line.
pub fn key_numbers(p: &RetryPolicy) -> String {
    let mut s =
        if p.multiplier == 1.0 { format!("{} fixed", p.base) } else { format!("{} ×{}", p.base, p.multiplier) };
    if let Some(c) = p.cap {
        s += &format!(", cap {c}");
        if p.cap_applies == CapApplies::AfterJitter && !matches!(p.jitter, Jitter::Decorrelated | Jitter::Span) {
            s += " after jitter";
        }
    }
    s += &match p.jitter {
        Jitter::None => ", no jitter".to_string(),
        Jitter::Proportional { fraction } => format!(", ±{}%", fraction * 100.0),
        Jitter::Additive { max } => format!(", +U(0, {max})"),
        j => format!(", {} jitter", j.mode()),
    };
    match p.limit {
        AttemptLimit::Attempts(n) => s += &format!("; {n} attempts"),
        AttemptLimit::Retries(1) => s += "; 1 retry",
        AttemptLimit::Retries(n) => s += &format!("; {n} retries"),
        AttemptLimit::Unlimited => {}
    }
    if let Some(d) = p.deadline {
        s += &format!("; {d} deadline ({})", p.deadline_rule);
    }
    match p.budget {
        BudgetPolicy::None => {}
        BudgetPolicy::AwsQuota { capacity, retry_cost, .. } => s += &format!("; quota {capacity}/{retry_cost}"),
        BudgetPolicy::GrpcThrottle { max_tokens, .. } => s += &format!("; throttling {max_tokens} tokens"),
        BudgetPolicy::EnvoyConcurrent { max_retries } => s += &format!("; ≤ {max_retries} retries in flight"),
        BudgetPolicy::Finagle { percent_can_retry, .. } => s += &format!("; budget {}%", percent_can_retry * 100.0),
    }
    if p.rate_limiter.is_some() {
        s += "; rate limiter";
    }
    s
}

pub fn presets() -> Result<(), CliError> {
    let mut rows: Vec<[String; 4]> = vec![["NAME".into(), "WHAT".into(), "KEY NUMBERS".into(), "SOURCE".into()]];
    for pr in PRESETS {
        let policy = RetryPolicyConfig::preset(pr.name)
            .resolve()
            .map_err(|e| CliError::Failed(format!("preset {} does not resolve: {e:?}", pr.name)))?;
        rows.push([pr.name.to_string(), pr.what.to_string(), key_numbers(&policy), pr.source.to_string()]);
    }
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    let widths = [width(0), width(1), width(2)];
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for r in &rows {
        let mut line = String::new();
        for (i, cell) in r.iter().enumerate() {
            if i < 3 {
                let pad = widths[i] - cell.chars().count();
                line += cell;
                line += &" ".repeat(pad + 2);
            } else {
                line += cell;
            }
        }
        writeln!(out, "{}", line.trim_end()).map_err(CliError::from_stdout)?;
    }
    out.flush().map_err(CliError::from_stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(name: &str) -> String {
        key_numbers(&RetryPolicyConfig::preset(name).resolve().unwrap())
    }

    #[test]
    fn key_numbers_say_what_matters() {
        assert_eq!(numbers("seed-loop"), "1s ×2, cap 30s, full jitter; 5 attempts");
        assert_eq!(numbers("gcs-python"), "1s ×2, cap 1min, full jitter; 2min deadline (give-up-before-crossing)");
        assert_eq!(numbers("gcloud"), "1s ×2, cap 32s after jitter, +U(0, 1s); 23 retries");
        assert_eq!(numbers("aws-standard"), "50ms ×2, cap 20s, full jitter; 3 attempts; quota 500/14");
        assert_eq!(numbers("finagle-budget"), "0s fixed, no jitter; budget 20%");
    }
}
