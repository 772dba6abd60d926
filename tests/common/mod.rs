//! Shared helpers of the statistical integration tests: Gaussian targets, noisy gradients, batch-means moments.
#![allow(dead_code, clippy::needless_range_loop)]

use rand_core::{Infallible, TryRng};
use rand_pcg::Pcg64;
use sgmcmc::sampler::Sampler;
use sgmcmc::{Real, StepError};

/// A generator returning the same 64-bit word forever (its low half for `next_u32`).
pub struct ConstRng(pub u64);

impl TryRng for ConstRng {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.0 as u32)
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.0)
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        dst.fill(self.0 as u8);
        Ok(())
    }
}

/// A diagonal Gaussian N(μ, diag(σ²)).
#[derive(Clone, Debug)]
pub struct Gaussian {
    pub mean: Vec<f64>,
    pub var: Vec<f64>,
}

impl Gaussian {
    /// The 10-d standard Gaussian.
    pub fn standard(n: usize) -> Self {
        Gaussian {
            mean: vec![0.0; n],
            var: vec![1.0; n],
        }
    }
    /// 10-d, variances log-spaced from 0.1 to 10, means spread over [−2, 2].
    pub fn anisotropic(n: usize) -> Self {
        let var = (0..n)
            .map(|i| 10f64.powf(-1.0 + 2.0 * i as f64 / (n - 1) as f64))
            .collect();
        let mean = (0..n)
            .map(|i| -2.0 + 4.0 * i as f64 / (n - 1) as f64)
            .collect();
        Gaussian { mean, var }
    }
    /// ∇U(θ) = (θ − μ)/σ², written in T.
    pub fn gradient<T: Real>(&self, theta: &[T], grad: &mut [T]) {
        for i in 0..theta.len() {
            grad[i] = (theta[i] - T::from_f64(self.mean[i])) / T::from_f64(self.var[i]);
        }
    }
    /// U(θ) = ½ Σ (θ − μ)²/σ².
    pub fn energy<T: Real>(&self, theta: &[T]) -> T {
        let mut u = T::ZERO;
        for i in 0..theta.len() {
            let d = theta[i] - T::from_f64(self.mean[i]);
            u += T::HALF * d * d / T::from_f64(self.var[i]);
        }
        u
    }
}

/// Per-coordinate batch-means estimates of E[θᵢ] and E[(θᵢ − μᵢ)²], with their Monte Carlo
/// standard errors (the standard deviation of the batch estimates over √batches, which accounts
/// for the chain's autocorrelation as long as a batch is much longer than the autocorrelation
/// time).
#[derive(Debug)]
pub struct Moments {
    pub mean: Vec<f64>,
    pub mean_se: Vec<f64>,
    pub var: Vec<f64>,
    pub var_se: Vec<f64>,
    pub temperature: f64,
    pub thermostat: f64,
}

/// Runs `burn` steps, then `batches × per_batch` steps, collecting batch means.
pub fn run<T, G, S>(
    sampler: &mut S,
    model: &mut G,
    rng: &mut Pcg64,
    target: &Gaussian,
    burn: usize,
    batches: usize,
    per_batch: usize,
) -> Result<Moments, StepError>
where
    T: Real,
    G: ?Sized,
    S: Sampler<T, G>,
{
    let n = target.mean.len();
    sampler
        .run(model, rng, burn as u64, &mut ())
        .map_err(|e| e.error)?;
    let mut bm = vec![vec![0.0; batches]; n];
    let mut bv = vec![vec![0.0; batches]; n];
    let (mut temp, mut xi) = (0.0, 0.0);
    for b in 0..batches {
        sampler
            .run_with(model, rng, per_batch as u64, |_, sampler, s| {
                temp += s.kinetic_temperature.map_or(0.0, |t| t.to_f64());
                xi += s.thermostat.map_or(0.0, |t| t.to_f64());
                for (i, x) in sampler.position().iter().enumerate() {
                    let x = x.to_f64();
                    bm[i][b] += x;
                    bv[i][b] += (x - target.mean[i]).powi(2);
                }
            })
            .map_err(|e| e.error)?;
    }
    let total = (batches * per_batch) as f64;
    let summarise = |v: &[f64]| {
        let m: Vec<f64> = v.iter().map(|s| s / per_batch as f64).collect();
        let mean = m.iter().sum::<f64>() / batches as f64;
        let var = m.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (batches - 1) as f64;
        (mean, (var / batches as f64).sqrt())
    };
    let (mut mean, mut mean_se, mut var, mut var_se) = (vec![], vec![], vec![], vec![]);
    for i in 0..n {
        let (m, se) = summarise(&bm[i]);
        mean.push(m);
        mean_se.push(se);
        let (v, se) = summarise(&bv[i]);
        var.push(v);
        var_se.push(se);
    }
    Ok(Moments {
        mean,
        mean_se,
        var,
        var_se,
        temperature: temp / total,
        thermostat: xi / total,
    })
}

/// Number of standard errors a per-coordinate estimate may deviate: with 10 coordinates × 2
/// statistics × ~60 runs ≈ 1200 assertions, a 5σ bound has a family-wise false-alarm probability
/// of about 1200 × 5.7·10⁻⁷ ≈ 7·10⁻⁴ for a correct sampler (the seeds are fixed, so CI is
/// deterministic either way).
pub const Z: f64 = 5.0;

/// Asserts every coordinate's mean and variance within `Z` Monte Carlo standard errors.
pub fn assert_moments(name: &str, m: &Moments, target: &Gaussian) {
    for i in 0..target.mean.len() {
        let (dm, dv) = (m.mean[i] - target.mean[i], m.var[i] - target.var[i]);
        assert!(
            dm.abs() <= Z * m.mean_se[i],
            "{name}: coordinate {i}: mean {:.4} vs {:.4} (|Δ| = {:.4} > {Z} SE = {:.4})",
            m.mean[i],
            target.mean[i],
            dm.abs(),
            Z * m.mean_se[i]
        );
        assert!(
            dv.abs() <= Z * m.var_se[i],
            "{name}: coordinate {i}: variance {:.4} vs {:.4} (|Δ| = {:.4} > {Z} SE = {:.4})",
            m.var[i],
            target.var[i],
            dv.abs(),
            Z * m.var_se[i]
        );
    }
}

/// A Gaussian N(μ, Σ) with a dense covariance, for the mass-matrix tests.
#[derive(Clone, Debug)]
pub struct DenseGaussian {
    pub mean: Vec<f64>,
    /// Σ, row-major d × d.
    pub cov: Vec<f64>,
    /// Σ⁻¹, row-major d × d.
    pub precision: Vec<f64>,
}

impl DenseGaussian {
    /// d-dimensional, unit variances, every correlation `rho`: Σ = (1 − ρ) I + ρ 11ᵀ, whose
    /// inverse is (I − ρ/(1 − ρ + dρ) 11ᵀ)/(1 − ρ); means spread over [−1, 1].
    pub fn equicorrelated(d: usize, rho: f64) -> Self {
        let mut cov = vec![rho; d * d];
        let mut precision = vec![0.0; d * d];
        let c = rho / (1.0 - rho + d as f64 * rho);
        for i in 0..d {
            cov[i * d + i] = 1.0;
            for j in 0..d {
                precision[i * d + j] = ((i == j) as u8 as f64 - c) / (1.0 - rho);
            }
        }
        let mean = (0..d)
            .map(|i| -1.0 + 2.0 * i as f64 / (d - 1).max(1) as f64)
            .collect();
        DenseGaussian {
            mean,
            cov,
            precision,
        }
    }
    /// The diagonal Gaussian `g` as a dense one.
    pub fn from_diagonal(g: &Gaussian) -> Self {
        let d = g.mean.len();
        let (mut cov, mut precision) = (vec![0.0; d * d], vec![0.0; d * d]);
        for i in 0..d {
            cov[i * d + i] = g.var[i];
            precision[i * d + i] = 1.0 / g.var[i];
        }
        DenseGaussian {
            mean: g.mean.clone(),
            cov,
            precision,
        }
    }
    pub fn dim(&self) -> usize {
        self.mean.len()
    }
    /// ∇U = Σ⁻¹(θ − μ).
    pub fn gradient<T: Real>(&self, theta: &[T], grad: &mut [T]) {
        let d = self.dim();
        for i in 0..d {
            let mut s = 0.0;
            for j in 0..d {
                s += self.precision[i * d + j] * (theta[j].to_f64() - self.mean[j]);
            }
            grad[i] = T::from_f64(s);
        }
    }
    /// U = ½ (θ − μ)ᵀΣ⁻¹(θ − μ).
    pub fn energy<T: Real>(&self, theta: &[T]) -> T {
        let d = self.dim();
        let mut u = 0.0;
        for i in 0..d {
            for j in 0..d {
                u += 0.5
                    * (theta[i].to_f64() - self.mean[i])
                    * self.precision[i * d + j]
                    * (theta[j].to_f64() - self.mean[j]);
            }
        }
        T::from_f64(u)
    }
}

/// Batch-means estimates of E[θᵢ] and of every E[(θᵢ − μᵢ)(θⱼ − μⱼ)] (row-major d × d), with
/// their Monte Carlo standard errors.
#[derive(Debug)]
pub struct CovMoments {
    pub mean: Vec<f64>,
    pub mean_se: Vec<f64>,
    pub cov: Vec<f64>,
    pub cov_se: Vec<f64>,
}

/// Runs `burn` steps, then `batches × per_batch` steps; `observe` maps the sampler to the θ to
/// record (usually its position).
pub fn run_cov<T, G, S>(
    sampler: &mut S,
    model: &mut G,
    rng: &mut Pcg64,
    target: &DenseGaussian,
    burn: usize,
    batches: usize,
    per_batch: usize,
) -> Result<CovMoments, StepError>
where
    T: Real,
    G: ?Sized,
    S: Sampler<T, G>,
{
    let d = target.dim();
    sampler
        .run(model, rng, burn as u64, &mut ())
        .map_err(|e| e.error)?;
    let mut bm = vec![vec![0.0; batches]; d];
    let mut bc = vec![vec![0.0; batches]; d * d];
    let mut x = vec![0.0; d];
    for b in 0..batches {
        sampler
            .run_with(model, rng, per_batch as u64, |_, sampler, _| {
                for (i, t) in sampler.position().iter().enumerate() {
                    x[i] = t.to_f64() - target.mean[i];
                    bm[i][b] += t.to_f64();
                }
                for i in 0..d {
                    for j in 0..=i {
                        bc[i * d + j][b] += x[i] * x[j];
                    }
                }
            })
            .map_err(|e| e.error)?;
    }
    let summarise = |v: &[f64]| {
        let m: Vec<f64> = v.iter().map(|s| s / per_batch as f64).collect();
        let mean = m.iter().sum::<f64>() / batches as f64;
        let var = m.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (batches - 1) as f64;
        (mean, (var / batches as f64).sqrt())
    };
    let (mut mean, mut mean_se) = (vec![0.0; d], vec![0.0; d]);
    let (mut cov, mut cov_se) = (vec![0.0; d * d], vec![0.0; d * d]);
    for i in 0..d {
        (mean[i], mean_se[i]) = summarise(&bm[i]);
        for j in 0..=i {
            let (c, se) = summarise(&bc[i * d + j]);
            cov[i * d + j] = c;
            cov[j * d + i] = c;
            cov_se[i * d + j] = se;
            cov_se[j * d + i] = se;
        }
    }
    Ok(CovMoments {
        mean,
        mean_se,
        cov,
        cov_se,
    })
}

/// Asserts every mean and every covariance entry (i ≥ j) within `Z` Monte Carlo standard errors.
pub fn assert_cov(name: &str, m: &CovMoments, target: &DenseGaussian) {
    let d = target.dim();
    for i in 0..d {
        let dm = m.mean[i] - target.mean[i];
        assert!(
            dm.abs() <= Z * m.mean_se[i],
            "{name}: mean {i}: {:.4} vs {:.4} (|Δ| = {:.4} > {Z} SE = {:.4})",
            m.mean[i],
            target.mean[i],
            dm.abs(),
            Z * m.mean_se[i]
        );
        for j in 0..=i {
            let k = i * d + j;
            let dc = m.cov[k] - target.cov[k];
            assert!(
                dc.abs() <= Z * m.cov_se[k],
                "{name}: cov ({i}, {j}): {:.4} vs {:.4} (|Δ| = {:.4} > {Z} SE = {:.4})",
                m.cov[k],
                target.cov[k],
                dc.abs(),
                Z * m.cov_se[k]
            );
        }
    }
}
