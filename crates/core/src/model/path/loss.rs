//! Loss decisions. Every packet consumes exactly one 64-bit draw from its direction's
//! loss stream, whatever the model: the high 32 bits move the Gilbert–Elliott chain, the
//! low 32 bits decide the loss. So the k-th packet sees the k-th draw under every loss
//! model, and a packet lost at Bernoulli p is also lost at any p' ≥ p.
//!
//! Probabilities are resolved to multiples of 2⁻³² (compared as integers, exact and
//! fast); 0 never and 1 always happen.

use super::config::{LossConfig, stationary_bad};

/// 2³²: the number of values of a 32-bit half draw.
const HALF_RANGE: f64 = (1u64 << 32) as f64;

/// `p` as a count of 32-bit values below which the event happens: P = threshold / 2³².
fn threshold(p: f64) -> u64 {
    // NaN (refused by validation) clamps to NaN and `as` turns it into 0: never.
    (p.clamp(0.0, 1.0) * HALF_RANGE).round() as u64
}

/// The Gilbert–Elliott chain state of one direction of one path: one byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum ChainState {
    /// No packet sent yet: the first packet draws its state from the stationary
    /// distribution, so short connections see the long-run loss rate from the start.
    #[default]
    Unstarted,
    Good,
    Bad,
}

/// A `LossConfig` with probabilities turned into integer thresholds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum LossModel {
    None,
    Bernoulli { lose: u64 },
    GilbertElliott { start_bad: u64, enter_bad: u64, leave_bad: u64, lose_good: u64, lose_bad: u64 },
}

impl LossModel {
    pub(crate) fn new(config: &LossConfig) -> LossModel {
        match *config {
            LossConfig::None => LossModel::None,
            LossConfig::Bernoulli { p } => LossModel::Bernoulli { lose: threshold(p) },
            LossConfig::GilbertElliott { p_enter_bad, p_leave_bad, loss_good, loss_bad } => LossModel::GilbertElliott {
                start_bad: threshold(stationary_bad(p_enter_bad, p_leave_bad)),
                enter_bad: threshold(p_enter_bad),
                leave_bad: threshold(p_leave_bad),
                lose_good: threshold(loss_good),
                lose_bad: threshold(loss_bad),
            },
        }
    }

    /// Whether the packet that owns `draw` is lost; advances the chain one step first,
    /// so the packet is judged in the state it is sent in.
    pub(crate) fn is_lost(&self, state: &mut ChainState, draw: u64) -> bool {
        let step = draw >> 32;
        let coin = draw & 0xFFFF_FFFF;
        match *self {
            LossModel::None => false,
            LossModel::Bernoulli { lose } => coin < lose,
            LossModel::GilbertElliott { start_bad, enter_bad, leave_bad, lose_good, lose_bad } => {
                let bad = match *state {
                    ChainState::Unstarted => step < start_bad,
                    ChainState::Good => step < enter_bad,
                    ChainState::Bad => step >= leave_bad,
                };
                *state = if bad { ChainState::Bad } else { ChainState::Good };
                coin < if bad { lose_bad } else { lose_good }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{Purpose, Seeds, SimRng};
    use rand::Rng;

    fn rng(seed: u64) -> SimRng {
        Seeds::new(seed).stream(0, 0, Purpose::LossForward)
    }

    /// Loss outcomes of `n` consecutive packets on one fresh chain.
    fn outcomes(config: &LossConfig, seed: u64, n: usize) -> Vec<bool> {
        let model = LossModel::new(config);
        let mut state = ChainState::default();
        let mut r = rng(seed);
        (0..n).map(|_| model.is_lost(&mut state, r.next_u64())).collect()
    }

    fn rate(xs: &[bool]) -> f64 {
        xs.iter().filter(|&&x| x).count() as f64 / xs.len() as f64
    }

    /// Mean length of the runs of consecutive losses.
    fn mean_burst(xs: &[bool]) -> f64 {
        let lost = xs.iter().filter(|&&x| x).count();
        let bursts = xs.iter().enumerate().filter(|&(i, &x)| x && (i == 0 || !xs[i - 1])).count();
        lost as f64 / bursts as f64
    }

    fn ge(p_enter_bad: f64, p_leave_bad: f64, loss_good: f64, loss_bad: f64) -> LossConfig {
        LossConfig::GilbertElliott { p_enter_bad, p_leave_bad, loss_good, loss_bad }
    }

    #[test]
    fn no_loss_and_certain_loss_are_exact() {
        assert!(!outcomes(&LossConfig::None, 1, 10_000).contains(&true));
        assert!(!outcomes(&LossConfig::Bernoulli { p: 0.0 }, 1, 10_000).contains(&true));
        assert!(!outcomes(&LossConfig::Bernoulli { p: 1.0 }, 1, 10_000).contains(&false));
        assert!(!outcomes(&ge(0.5, 0.5, 1.0, 1.0), 1, 10_000).contains(&false));
    }

    #[test]
    fn bernoulli_loss_rate_is_p() {
        let xs = outcomes(&LossConfig::Bernoulli { p: 0.05 }, 2, 1_000_000);
        // SE = √(p(1−p)/n) ≈ 0.00022: tolerance ≈ 5 SE.
        let r = rate(&xs);
        assert!((r - 0.05).abs() < 0.001, "rate {r}");
        // Independent losses: runs have mean length 1/(1−p) ≈ 1.05.
        let b = mean_burst(&xs);
        assert!((b - 1.0 / 0.95).abs() < 0.01, "mean burst {b}");
    }

    #[test]
    fn gilbert_elliott_loss_rate_is_the_stationary_mixture() {
        let config = ge(0.01, 0.2, 0.01, 0.8);
        let bad = 0.01 / 0.21;
        let want = (1.0 - bad) * 0.01 + bad * 0.8;
        assert!((config.mean_loss_rate() - want).abs() < 1e-15);
        let r = rate(&outcomes(&config, 3, 1_000_000));
        // The chain is autocorrelated (eigenvalue 1 − 0.21 = 0.79): the SE of the time in
        // the bad state over 1e6 steps is √(π_b·π_g·(1.79/0.21)/1e6) ≈ 6.2e-4, so the loss
        // rate has SE ≈ 0.79 · 6.2e-4 ≈ 5e-4. Tolerance 0.003 ≈ 6 SE.
        assert!((r - want).abs() < 0.003, "rate {r}, want {want}");
    }

    #[test]
    fn gilbert_elliott_losses_come_in_bursts_of_mean_length_one_over_p_leave_bad() {
        let xs = outcomes(&ge(0.01, 0.2, 0.0, 1.0), 4, 1_000_000);
        // About 1e6 · π_bad / 5 ≈ 9500 bursts, geometric with sd √0.8/0.2 ≈ 4.5: the SE of
        // their mean is ≈ 0.046 packets. Tolerance 0.25 ≈ 5 SE.
        let b = mean_burst(&xs);
        assert!((b - 5.0).abs() < 0.25, "mean burst {b}");
        // A Bernoulli process with the same loss rate has runs of ≈ 1.05.
        assert!(b > 4.0 * mean_burst(&outcomes(&LossConfig::Bernoulli { p: rate(&xs) }, 4, 1_000_000)));
    }

    #[test]
    fn gilbert_elliott_chain_starts_in_its_stationary_distribution() {
        // The first packet of many fresh chains: lost at the long-run rate, not at the
        // good-state rate a chain that starts "good" would give (0 here).
        let config = ge(0.01, 0.09, 0.0, 1.0); // π_bad = 0.1
        let model = LossModel::new(&config);
        let n = 20_000;
        let first_lost = (0..n).filter(|&seed| model.is_lost(&mut ChainState::default(), rng(seed).next_u64())).count();
        // SE = √(0.1·0.9/2e4) ≈ 0.0021: tolerance ≈ 5 SE.
        let r = first_lost as f64 / n as f64;
        assert!((r - 0.1).abs() < 0.01, "first-packet loss rate {r}");
    }

    #[test]
    fn gilbert_elliott_with_equal_state_losses_is_bernoulli_draw_for_draw() {
        let a = outcomes(&ge(0.3, 0.4, 0.2, 0.2), 5, 50_000);
        let b = outcomes(&LossConfig::Bernoulli { p: 0.2 }, 5, 50_000);
        assert_eq!(a, b);
    }

    #[test]
    fn a_packet_lost_at_p_is_lost_at_every_larger_p() {
        let low = outcomes(&LossConfig::Bernoulli { p: 0.05 }, 6, 100_000);
        let high = outcomes(&LossConfig::Bernoulli { p: 0.2 }, 6, 100_000);
        assert!(low.iter().zip(&high).all(|(&l, &h)| !l || h));
    }
}
