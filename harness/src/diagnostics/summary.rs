//! A posterior summary per dimension (mean, sd, MCSE, 5/50/95 % quantiles, ESS, split-R̂) with a `Display` table.
//!
//! For each dimension of a [`Draws`] run, over all `N = mn` draws pooled:
//!
//! * `mean`, `sd` (divisor `N − 1`) and `mcse` = `sd/√ESS` as in [`moments_of`](fn@super::moments_of);
//! * the 5 %, 50 % and 95 % quantiles by linear interpolation between order statistics
//!   (Hyndman & Fan 1996, definition 7 — the default of R's `quantile` and NumPy): with the
//!   sorted values `x_(0) ≤ … ≤ x_(N−1)` and `h = (N − 1)q`,
//!   `Q(q) = x_(⌊h⌋) + (h − ⌊h⌋)(x_(⌊h⌋+1) − x_(⌊h⌋))`;
//! * `ess`: the split-chain Geyer ESS of the mean ([`ess`](fn@super::ess));
//! * `rhat`: split-R̂ ([`split_rhat`](fn@super::split_rhat));
//! * `ess_ar`: R coda's AR spectral ESS ([`ess_spectral_ar`](fn@super::ess_spectral_ar)),
//!   summed over the chains as coda's `effectiveSize` does for an `mcmc.list`. Read it beside
//!   `ess` for SGHMC/SGNHT/SGMGT chains: where θ's autocorrelation oscillates, Geyer's `ess`
//!   understates the ESS (by 4–7× on underdamped full-gradient chains, `docs/ess-estimators.md`).
//!
//! These are the columns of Stan's `stansummary` and ArviZ's `summary`, except that ESS and R̂
//! are the basic (not rank-normalised) versions.
//!
//! Reference: R. J. Hyndman, Y. Fan (1996), "Sample quantiles in statistical packages", *The
//! American Statistician* 50(4), 361–365.

use super::draws::Draws;
use super::moments::moments_of;
use sgmcmc_diagnostics::DiagnosticError;
use sgmcmc_diagnostics::ess_spectral_ar;
use sgmcmc_diagnostics::split_rhat;
use std::fmt;

/// The summary of one dimension.
#[derive(Clone, Debug, PartialEq)]
pub struct DimSummary {
    /// Name of the dimension.
    pub name: String,
    /// Posterior mean estimate.
    pub mean: f64,
    /// Posterior standard deviation estimate.
    pub sd: f64,
    /// Monte Carlo standard error of the mean.
    pub mcse: f64,
    /// 5 % quantile.
    pub q05: f64,
    /// Median.
    pub q50: f64,
    /// 95 % quantile.
    pub q95: f64,
    /// Split-chain effective sample size of the mean.
    pub ess: f64,
    /// Split-R̂.
    pub rhat: f64,
    /// coda's AR spectral ESS of the mean, summed over the chains (NaN when a chain has no
    /// variation, which has no spectral estimate).
    pub ess_ar: f64,
}

/// A posterior summary: one [`DimSummary`] per dimension.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Chains `m`.
    pub chains: usize,
    /// Draws per chain `n`.
    pub draws: usize,
    /// One row per dimension.
    pub rows: Vec<DimSummary>,
}

/// Summarises every dimension of `draws`; `names` (one per dimension) label the rows, `None`
/// labels them `x[0]`, `x[1]`, ….
///
/// Requires `draws.draws() ≥ 4` and, if given, `names.len() = draws.dims()`.
pub fn summarize(draws: &Draws, names: Option<&[&str]>) -> Result<Summary, DiagnosticError> {
    if let Some(names) = names
        && names.len() != draws.dims()
    {
        return Err(DiagnosticError::MismatchedLengths {
            expected: draws.dims(),
            got: names.len(),
        });
    }
    let mut rows = Vec::with_capacity(draws.dims());
    for j in 0..draws.dims() {
        let series = draws
            .dimension(j)
            .ok_or(DiagnosticError::InvalidArgument("dimension out of range"))?;
        let m = moments_of(&series)?;
        let rhat = split_rhat(&series)?.rhat;
        let ess_ar = series
            .iter()
            .map(|chain| ess_spectral_ar(chain).map_or(f64::NAN, |e| e.ess))
            .sum();
        let mut sorted: Vec<f64> = series.into_iter().flatten().collect();
        sorted.sort_by(f64::total_cmp);
        rows.push(DimSummary {
            name: names.map_or_else(|| format!("x[{j}]"), |n| n[j].to_string()),
            mean: m.mean,
            sd: m.sd,
            mcse: m.mean_mcse,
            q05: quantile_sorted(&sorted, 0.05),
            q50: quantile_sorted(&sorted, 0.5),
            q95: quantile_sorted(&sorted, 0.95),
            ess: m.ess_mean,
            rhat,
            ess_ar,
        });
    }
    Ok(Summary {
        chains: draws.chains(),
        draws: draws.draws(),
        rows,
    })
}

/// The `q` quantile (Hyndman–Fan definition 7) of `x`, which need not be sorted.
///
/// Requires `x` non-empty and finite and `0 ≤ q ≤ 1`.
pub fn quantile(x: &[f64], q: f64) -> Result<f64, DiagnosticError> {
    if x.is_empty() {
        return Err(DiagnosticError::TooFewSamples { needed: 1, got: 0 });
    }
    if x.iter().any(|v| !v.is_finite()) {
        return Err(DiagnosticError::NonFinite);
    }
    if !(0.0..=1.0).contains(&q) {
        return Err(DiagnosticError::InvalidArgument(
            "a quantile level must lie in [0, 1]",
        ));
    }
    let mut sorted = x.to_vec();
    sorted.sort_by(f64::total_cmp);
    Ok(quantile_sorted(&sorted, q))
}

/// Definition 7 on sorted, non-empty input, `q ∈ [0, 1]`.
fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} chains × {} draws; ESS and R̂ split-chain (not rank-normalised)",
            self.chains, self.draws
        )?;
        let width = self
            .rows
            .iter()
            .map(|r| r.name.chars().count())
            .max()
            .unwrap_or(0)
            .max(5);
        write!(
            f,
            "{:<width$} {:>11} {:>10} {:>10} {:>11} {:>11} {:>11} {:>9} {:>7} {:>9}",
            "param", "mean", "sd", "mcse", "5%", "50%", "95%", "ess", "r_hat", "ess_ar"
        )?;
        for r in &self.rows {
            write!(
                f,
                "\n{:<width$} {:>11.5} {:>10.5} {:>10.2e} {:>11.5} {:>11.5} {:>11.5} {:>9.0} {:>7.4} {:>9.0}",
                r.name, r.mean, r.sd, r.mcse, r.q05, r.q50, r.q95, r.ess, r.rhat, r.ess_ar
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::testing::normals;
    use rand_pcg::Pcg64;

    #[test]
    fn quantile_definition_7() {
        let x = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(quantile(&x, 0.5), Ok(2.5));
        // h = 3·0.05 = 0.15: 1 + 0.15·(2 − 1).
        assert!((quantile(&x, 0.05).unwrap() - 1.15).abs() < 1e-15);
        assert_eq!(quantile(&x, 1.0), Ok(4.0));
        assert_eq!(quantile(&x, 0.0), Ok(1.0));
        assert_eq!(quantile(&[7.0], 0.3), Ok(7.0));
        assert!(quantile(&x, 1.5).is_err());
        assert!(quantile(&[], 0.5).is_err());
        assert_eq!(quantile(&[f64::NAN], 0.5), Err(DiagnosticError::NonFinite));
    }

    /// Two i.i.d. N(μ, 1) dimensions, 4 × 2500 draws: the quantiles must be near
    /// μ ∓ 1.6449 and μ (the sd of a sample quantile is √(q(1−q)/N)/φ(z_q) ≈ 0.021 at 5 %,
    /// 0.0125 at the median; assert within 0.1), R̂ < 1.01 (see `rhat`), ESS within 20 % of N.
    #[test]
    fn summary_of_iid_normals_and_its_table() {
        let (chains, n) = (4, 2500);
        let mut rng = Pcg64::new(1, 2);
        let a = normals(chains * n, 0.0, 1.0, &mut rng);
        let b = normals(chains * n, 3.0, 1.0, &mut rng);
        let data: Vec<f64> = a.iter().zip(&b).flat_map(|(x, y)| [*x, *y]).collect();
        let draws = Draws::from_flat(data, chains, n, 2).unwrap();
        let s = summarize(&draws, Some(&["alpha", "beta"])).unwrap();
        for (row, mu) in s.rows.iter().zip([0.0, 3.0]) {
            assert!((row.q05 - (mu - 1.6449)).abs() < 0.1, "{row:?}");
            assert!(
                (row.q50 - mu).abs() < 0.1 && (row.mean - mu).abs() < 0.1,
                "{row:?}"
            );
            assert!((row.q95 - (mu + 1.6449)).abs() < 0.1, "{row:?}");
            assert!(
                row.rhat < 1.01 && (row.ess / 10_000.0 - 1.0).abs() < 0.2,
                "{row:?}"
            );
            // i.i.d. draws: coda's AR estimate, summed over the 4 chains, is also N within the
            // same 20 % (its relative sd at n = 2500 per chain is a few per cent).
            assert!((row.ess_ar / 10_000.0 - 1.0).abs() < 0.2, "{row:?}");
        }
        let table = s.to_string();
        println!("{table}");
        assert_eq!(table.lines().count(), 4);
        assert!(table.contains("alpha") && table.contains("beta") && table.contains("r_hat"));
        assert!(table.contains("ess_ar"));
        assert_eq!(summarize(&draws, None).unwrap().rows[1].name, "x[1]");
        assert!(matches!(
            summarize(&draws, Some(&["only one"])),
            Err(DiagnosticError::MismatchedLengths { .. })
        ));
    }
}
