//! The potential scale reduction factor R̂ of Gelman & Rubin, plain and split (BDA3 §11.4, as Stan and ArviZ compute it).
//!
//! # Definition (Gelman et al. 2013, BDA3 §11.4, eqs. 11.2–11.4; Stan reference manual, "Potential scale reduction")
//!
//! For `m` chains of `n` draws `x_{c,t}` with chain means `x̄_c`, grand mean `x̄` and chain sample
//! variances `s_c² = Σ_t (x_{c,t} − x̄_c)²/(n−1)`:
//!
//! ```text
//! B    = n/(m−1) · Σ_c (x̄_c − x̄)²        between-chain variance
//! W    = (1/m) Σ_c s_c²                   within-chain variance
//! var⁺ = (n−1)/n · W + B/n                pooled estimate of the posterior variance
//! R̂    = √(var⁺ / W)
//! ```
//!
//! [`split_rhat`] first splits every chain into its first and last `⌊n/2⌋` draws (dropping the
//! middle draw of an odd `n`), so that a trend within one chain shows up as a between-chain
//! difference; this is BDA3's split-R̂, ArviZ's `rhat(method="split")` and `posterior`'s
//! `rhat_basic` (without the rank normalisation and folding of Vehtari et al. 2021).
//!
//! If every value is identical, R̂ = 1 (as in `posterior`); if the chains are each constant but
//! differ (`W = 0 < B`), R̂ = +∞.
//!
//! # What to expect from converged chains
//!
//! With independent draws `(m−1)B/W` is approximately `χ²_{m−1}`-distributed (`B/W ~ F` with
//! `m−1, m(n−1)` degrees of freedom), so `R̂² = (n−1)/n + B/(nW)` gives
//! `R̂ ≈ 1 + (B/W − 1)/(2n)`. For autocorrelated chains `B/W ≈ τ·χ²_{m−1}/(m−1)` with `τ` the
//! integrated autocorrelation time, i.e. `R̂ − 1 ≈ (τ F − 1)/(2n)`: R̂ − 1 shrinks as
//! `1/ESS-per-chain`. The usual threshold is R̂ < 1.01 (Vehtari et al. 2021).
//!
//! # References
//!
//! * A. Gelman, J. B. Carlin, H. S. Stern, D. B. Dunson, A. Vehtari, D. B. Rubin (2013), *Bayesian
//!   Data Analysis*, 3rd ed., CRC Press, §11.4.
//! * A. Gelman, D. B. Rubin (1992), "Inference from iterative simulation using multiple
//!   sequences", *Statistical Science* 7(4), 457–472.
//! * A. Vehtari, A. Gelman, D. Simpson, B. Carpenter, P.-C. Bürkner (2021), "Rank-normalization,
//!   folding, and localization: an improved R̂ for assessing convergence of MCMC", *Bayesian
//!   Analysis* 16(2), 667–718.

use crate::chains::{check_chains, split_chains};
use crate::error::DiagnosticError;

/// An R̂ estimate with its variance components.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RhatEstimate {
    /// The potential scale reduction factor `√(var⁺/W)`.
    pub rhat: f64,
    /// Within-chain variance `W`.
    pub within: f64,
    /// Between-chain variance `B` (already multiplied by `n`).
    pub between: f64,
    /// Pooled variance `var⁺ = (n−1)/n·W + B/n`.
    pub var_plus: f64,
    /// Chains `m` used (after splitting for [`split_rhat`]).
    pub chains: usize,
    /// Draws `n` per chain used (after splitting for [`split_rhat`]).
    pub draws: usize,
}

/// Split-R̂: each chain is split into halves, then [`rhat`] of the `2m` halves.
///
/// Requires at least one chain, all chains of one length `n ≥ 4` and all values finite.
pub fn split_rhat<C: AsRef<[f64]>>(chains: &[C]) -> Result<RhatEstimate, DiagnosticError> {
    check_chains(chains, 1, 4)?;
    Ok(compute(&split_chains(chains)))
}

/// R̂ of the chains as given (BDA3 eq. 11.4, no splitting).
///
/// Requires at least two chains, all of one length `n ≥ 2`, and all values finite.
pub fn rhat<C: AsRef<[f64]>>(chains: &[C]) -> Result<RhatEstimate, DiagnosticError> {
    check_chains(chains, 2, 2)?;
    Ok(compute(chains))
}

/// The formula of the module docs; `chains` checked, `m ≥ 2`, `n ≥ 2`.
fn compute<C: AsRef<[f64]>>(chains: &[C]) -> RhatEstimate {
    let m = chains.len();
    let n = chains[0].as_ref().len();
    let (mf, nf) = (m as f64, n as f64);
    let means: Vec<f64> = chains
        .iter()
        .map(|c| c.as_ref().iter().sum::<f64>() / nf)
        .collect();
    let within = chains
        .iter()
        .zip(&means)
        .map(|(c, mu)| c.as_ref().iter().map(|x| (x - mu).powi(2)).sum::<f64>() / (nf - 1.0))
        .sum::<f64>()
        / mf;
    let grand = means.iter().sum::<f64>() / mf;
    let between = nf * means.iter().map(|x| (x - grand).powi(2)).sum::<f64>() / (mf - 1.0);
    let var_plus = (nf - 1.0) / nf * within + between / nf;
    let first = chains[0].as_ref()[0];
    let rhat = if chains
        .iter()
        .all(|c| c.as_ref().iter().all(|&v| v == first))
    {
        1.0
    } else if within <= 0.0 {
        f64::INFINITY
    } else {
        (var_plus / within).sqrt()
    };
    RhatEstimate {
        rhat,
        within,
        between,
        var_plus,
        chains: m,
        draws: n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{ar1, fixed_two_chains, normals};
    use rand_pcg::Pcg64;

    /// Chains (1,2,3,4) and (2,3,4,5) by hand.
    ///
    /// Plain: means 2.5, 3.5, s² = 5/3 each, so W = 5/3, B = 4·var(2.5, 3.5) = 4·0.5 = 2,
    /// var⁺ = ¾·5/3 + 2/4 = 1.75, R̂ = √(1.75/(5/3)) = √1.05.
    ///
    /// Split: halves (1,2), (3,4), (2,3), (4,5) with means 1.5, 3.5, 2.5, 4.5 and s² = ½ each,
    /// so W = ½, B = 2·var(means) = 2·5/3, var⁺ = ½·½ + 5/3 = 23/12, R̂ = √(23/6).
    #[test]
    fn rhat_hand_computed_small_example() {
        let c = [[1.0, 2.0, 3.0, 4.0], [2.0, 3.0, 4.0, 5.0]];
        let r = rhat(&c).unwrap();
        assert!((r.within - 5.0 / 3.0).abs() < 1e-14 && (r.between - 2.0).abs() < 1e-14);
        assert!((r.rhat - 1.05f64.sqrt()).abs() < 1e-14, "{r:?}");
        let s = split_rhat(&c).unwrap();
        assert_eq!((s.chains, s.draws), (4, 2));
        assert!((s.var_plus - 23.0 / 12.0).abs() < 1e-14);
        assert!((s.rhat - (23.0f64 / 6.0).sqrt()).abs() < 1e-14, "{s:?}");
    }

    /// ArviZ 0.21 on the same two fixed chains of 50 draws as the ESS cross-check:
    /// `arviz.rhat(x, method="split")` = 1.0241980687205277,
    /// `arviz.rhat(x, method="identity")` = 1.0350719349546957.
    #[test]
    fn rhat_matches_arviz_on_a_fixed_two_chain_example() {
        let x = fixed_two_chains();
        assert!((split_rhat(&x).unwrap().rhat - 1.0241980687205277).abs() < 1e-12);
        assert!((rhat(&x).unwrap().rhat - 1.0350719349546957).abs() < 1e-12);
    }

    /// Four chains of the same AR(1) law (φ = 0.5, τ = 3), n = 2000 each, split into m = 8
    /// halves of n = 1000. From the module docs, R̂² ≈ (n−1)/n + τF/n with
    /// F ≈ χ²₇/7, whose 99.9 % quantile is 24.32/7 = 3.47; so with probability ≈ 0.999
    /// R̂ < √(1 + (3·3.47 − 1)/1000) = 1.0047, well within the 1.01 convention.
    /// Independent draws (τ = 1): R̂ < √(1 + 2.47/1000) = 1.0012.
    #[test]
    fn split_rhat_of_chains_from_one_law_is_near_one() {
        let f999 = 24.32 / 7.0;
        for (phi, tau) in [(0.0, 1.0f64), (0.5, 3.0)] {
            let chains: Vec<Vec<f64>> = (0..4).map(|c| ar1(phi, 2000, 77, c)).collect();
            let r = split_rhat(&chains).unwrap();
            let bound = (1.0f64 + (tau * f999 - 1.0) / 1000.0).sqrt();
            println!("phi {phi}: split-R̂ = {:.5} (bound {bound:.5})", r.rhat);
            assert!(r.rhat < bound && r.rhat < 1.01, "{r:?}");
        }
    }

    /// Calibration of the F law behind that bound: for independent N(0,1) chains B/W is
    /// F(m−1, m(n−1)) with mean (m(n−1))/(m(n−1)−2) ≈ 1 and variance ≈ 2/(m−1). Over 400
    /// replicates of m = 4, n = 200 the mean of B/W has sd √(2/3/400) = 0.041: assert within
    /// 4 sd of 1.
    #[test]
    fn rhat_between_within_ratio_is_f_distributed() {
        let mut rng = Pcg64::new(5, 5);
        let reps = 400;
        let mean_ratio = (0..reps)
            .map(|_| {
                let chains: Vec<Vec<f64>> =
                    (0..4).map(|_| normals(200, 0.0, 1.0, &mut rng)).collect();
                let r = rhat(&chains).unwrap();
                r.between / r.within
            })
            .sum::<f64>()
            / reps as f64;
        println!("mean B/W over {reps} replicates: {mean_ratio:.4}");
        assert!((mean_ratio - 1.0).abs() < 4.0 * (2.0 / 3.0 / reps as f64).sqrt());
    }

    /// Chains with means 0, 0, 0, 3 (unit variance, n = 2000): split gives 8 halves, six near 0
    /// and two near 3, so B/n → var(means) = (6·0.75² + 2·2.25²)/7 = 13.5/7 and W → 1:
    /// R̂ → √(1 + 13.5/7) = 1.711. Noise: the half means carry errors e_c of sd 1/√1000, which
    /// move var(means) by (2/7) Σ (μ_c − μ̄) e_c, sd (2/7)√(13.5/1000) = 0.033, and W has sd
    /// √(2/16000) = 0.011; so R̂² moves by ≈ 0.035 and R̂ by ≈ 0.035/(2·1.711) = 0.010.
    /// Assert within 0.05 (5 sd).
    ///
    /// A drift inside a single chain is caught by splitting alone: x_t = ε_t + 3t/2000 has
    /// half means 0.75 and 2.25 (B/n = 1.125) and W = 1 + 1.5²/12 = 1.1875, so
    /// R̂ → √((1.1875 + 1.125)/1.1875) = 1.40; assert > 1.2.
    #[test]
    fn rhat_detects_chains_that_disagree() {
        let mut rng = Pcg64::new(9, 1);
        let chains: Vec<Vec<f64>> = [0.0, 0.0, 0.0, 3.0]
            .iter()
            .map(|&mu| normals(2000, mu, 1.0, &mut rng))
            .collect();
        let r = split_rhat(&chains).unwrap();
        println!("means 0,0,0,3: split-R̂ = {:.4} (expected ≈ 1.711)", r.rhat);
        assert!(
            (r.rhat - (1.0f64 + 13.5 / 7.0).sqrt()).abs() < 0.05,
            "{r:?}"
        );

        let drift: Vec<f64> = normals(2000, 0.0, 1.0, &mut rng)
            .iter()
            .enumerate()
            .map(|(t, x)| x + 3.0 * t as f64 / 2000.0)
            .collect();
        let d = split_rhat(&[&drift]).unwrap();
        println!("one drifting chain: split-R̂ = {:.4}", d.rhat);
        assert!(d.rhat > 1.2, "{d:?}");
    }

    #[test]
    fn rhat_edge_cases_and_bad_input() {
        assert_eq!(split_rhat(&[[2.0; 8], [2.0; 8]]).unwrap().rhat, 1.0);
        assert_eq!(rhat(&[[1.0; 8], [2.0; 8]]).unwrap().rhat, f64::INFINITY);
        assert_eq!(
            rhat(&[[1.0, 2.0, 3.0]]),
            Err(DiagnosticError::TooFewChains { needed: 2, got: 1 })
        );
        assert_eq!(
            split_rhat(&[[1.0, 2.0, 3.0]]),
            Err(DiagnosticError::TooFewSamples { needed: 4, got: 3 })
        );
        assert_eq!(
            split_rhat(&[vec![1.0, f64::NAN, 3.0, 4.0]]),
            Err(DiagnosticError::NonFinite)
        );
        assert!(matches!(
            rhat(&[vec![1.0, 2.0], vec![1.0, 2.0, 3.0]]),
            Err(DiagnosticError::MismatchedLengths { .. })
        ));
    }
}
