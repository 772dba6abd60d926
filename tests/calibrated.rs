//! Stationarity of the calibrated samplers under synthetic minibatch noise of known anisotropic and correlated covariance.
//!
//! The model is a Gaussian target whose gradient is a "minibatch" of b per-example gradients
//! gᵢ = ∇U(θ)/N + ηᵢ with ηᵢ ~ N(0, S) i.i.d. (S known), scaled by N/b: ∇Ũ = ∇U + (N/b)Σηᵢ,
//! whose noise has covariance V = N²S/b (sampling with replacement from an infinite
//! population), i.e. B = ½hV in Chen et al. 2014's units. The model reports Σgᵢ and Σgᵢ⊙gᵢ (or
//! Σgᵢgᵢᵀ), and [`Calibrated`] estimates V from them online (`docs/gradient-noise.md`).
//!
//! Each test checks every coordinate's mean and variance (and, for correlated noise, every
//! covariance) within 5 batch-means standard errors of the target, and shows that the same
//! assertion fails without the estimate (or with the diagonal estimate under correlated
//! noise), so it has the power to see the bias it is about.

use crate::common;

use common::{CovMoments, DenseGaussian, Gaussian, Moments, Z, run, run_cov};
use rand_pcg::Pcg64;
use sgmcmc::adapt::NoiseShape;
use sgmcmc::adapt::{Calibrated, CalibratedParams, Correction};
use sgmcmc::gradient::{Batch, Gradient, MinibatchGradient, Moments as BatchMoments, Sampling};
use sgmcmc::kinetic::MonomialGamma;
use sgmcmc::prelude::*;

/// Examples N the "likelihood" is split into, and the minibatch size b.
const POPULATION: usize = 1000;
const BATCH: usize = 8;

/// A Gaussian target with synthetic per-example gradient noise of covariance S = LLᵀ.
struct NoisyGaussian {
    target: DenseGaussian,
    /// Lower Cholesky factor of S (row-major d × d).
    noise_factor: Vec<f64>,
    rng: Pcg64,
    full: Vec<f64>,
    z: Vec<f64>,
    eta: Vec<f64>,
}

impl NoisyGaussian {
    /// Noise whose minibatch gradient has covariance V = `v` (row-major; S = bV/N²) at b = BATCH.
    fn new(target: DenseGaussian, v: &[f64], seed: u64) -> Self {
        let d = target.dim();
        let scale = BATCH as f64 / (POPULATION as f64).powi(2);
        let mut s: Vec<f64> = v.iter().map(|x| x * scale).collect();
        sgmcmc::linalg::cholesky_in_place(&mut s, d).unwrap();
        NoisyGaussian {
            target,
            noise_factor: s,
            rng: Pcg64::new(seed as u128, 0x0015e),
            full: vec![0.0; d],
            z: vec![0.0; d],
            eta: vec![0.0; d],
        }
    }
}

impl MinibatchGradient<f64> for NoisyGaussian {
    fn gradient_with_moments(
        &mut self,
        theta: &[f64],
        grad: &mut [f64],
        m: BatchMoments<'_, f64>,
    ) -> Batch {
        let d = theta.len();
        self.target.gradient(theta, &mut self.full);
        m.sum.fill(0.0);
        m.squares.fill(0.0);
        for _ in 0..BATCH {
            for z in self.z.iter_mut() {
                *z = f64::standard_normal(&mut self.rng);
            }
            for r in 0..d {
                let row = &self.noise_factor[r * d..r * d + r + 1];
                let eta: f64 = row.iter().zip(&self.z).map(|(l, z)| l * z).sum();
                self.eta[r] = self.full[r] / POPULATION as f64 + eta;
            }
            for r in 0..d {
                m.sum[r] += self.eta[r];
                if m.dense {
                    for c in 0..d {
                        m.squares[r * d + c] += self.eta[r] * self.eta[c];
                    }
                } else {
                    m.squares[r] += self.eta[r] * self.eta[r];
                }
            }
        }
        let scale = POPULATION as f64 / BATCH as f64;
        for (g, s) in grad.iter_mut().zip(m.sum.iter()) {
            *g = scale * s;
        }
        Batch {
            size: BATCH,
            population: POPULATION,
            sampling: Sampling::WithReplacement,
        }
    }
}

/// The same noisy gradient for an uncalibrated sampler.
impl Gradient<f64> for NoisyGaussian {
    fn gradient(&mut self, theta: &[f64], grad: &mut [f64]) {
        let d = theta.len();
        let (mut sum, mut squares) = (vec![0.0; d], vec![0.0; d]);
        let m = BatchMoments {
            sum: &mut sum,
            squares: &mut squares,
            dense: false,
        };
        self.gradient_with_moments(theta, grad, m);
    }
}

const D: usize = 4;
const H: f64 = 0.05;
const BURN: usize = 20_000;
const BATCHES: usize = 50;
const PER_BATCH: usize = 20_000;

/// The target of the anisotropic test: variances 0.25, 1, 2, 4, means −1 … 1.
fn anisotropic_target() -> Gaussian {
    Gaussian {
        mean: vec![-1.0, -0.3, 0.4, 1.0],
        var: vec![0.25, 1.0, 2.0, 4.0],
    }
}

/// Diagonal noise with B = ½hV = 1.5, 0.8, 0.3, 0.05 at step size h: largest on the stiff
/// coordinate, as in a regression whose stiff directions carry the most per-example spread.
fn anisotropic_noise(h: f64) -> Vec<f64> {
    let b = [1.5, 0.8, 0.3, 0.05];
    let mut v = vec![0.0; D * D];
    for j in 0..D {
        v[j * D + j] = 2.0 * b[j] / h;
    }
    v
}

/// The step size of a run and how many times the default number of steps it takes: SGMGT-D
/// runs at h = 0.01, since its first-order θ term has an Euler–Maruyama variance bias of
/// about σ_θh/(2σ²) on a coordinate of variance σ² (2.5 % on the stiff one at h = 0.05, more
/// than 5 SE here; 0.5 % at h = 0.01, as in `tests/sgmgt.rs`), with 5× the steps.
fn step_size(kind: Kind) -> (f64, usize) {
    match kind {
        Kind::SgmgtD => (0.01, 5),
        _ => (H, 1),
    }
}

/// Which sampler a run uses.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Sghmc,
    Sgnht,
    MSgnht,
    SgmgtD,
}

/// Runs `kind` on the anisotropic target with the estimate (`shape`) or without it (`None`).
fn anisotropic(
    kind: Kind,
    shape: Option<NoiseShape>,
    correction: Correction,
    seed: u64,
) -> Moments {
    let target = anisotropic_target();
    let dense_target = DenseGaussian::from_diagonal(&target);
    let (h, _) = step_size(kind);
    let mut model = NoisyGaussian::new(dense_target, &anisotropic_noise(h), seed);
    sample(kind, (shape, correction), &target, &mut model, seed)
}

fn sample(
    kind: Kind,
    (shape, correction): (Option<NoiseShape>, Correction),
    target: &Gaussian,
    model: &mut NoisyGaussian,
    seed: u64,
) -> Moments {
    let mut rng = Pcg64::new(seed as u128, 0xca1);
    let (h, longer) = step_size(kind);
    let (burn, per_batch) = (BURN * longer, PER_BATCH * longer);
    let (mut theta, mut p, mut xi_v) = (target.mean.clone(), vec![0.0; D], vec![1.0; D]);
    let mut xi = 1.0;
    let mut work = vec![0.0; 3 * D];
    let shape_or = shape.unwrap_or(NoiseShape::Diagonal);
    let mut est = vec![0.0; shape_or.len(D)];
    let mut scratch = vec![0.0; Calibrated::<f64, Sghmc<f64>>::workspace_len(shape_or, D)];
    let params = CalibratedParams::new()
        .with_shape(shape_or)
        .with_correction(correction);
    macro_rules! go {
        ($s:expr) => {{
            let s = $s;
            match shape {
                Some(_) => {
                    let mut c = Calibrated::new(s, params, &mut est, &mut scratch).unwrap();
                    run(&mut c, model, &mut rng, target, burn, BATCHES, per_batch)
                }
                None => {
                    let mut s = s;
                    run::<f64, _, _>(&mut s, model, &mut rng, target, burn, BATCHES, per_batch)
                }
            }
            .unwrap()
        }};
    }
    match kind {
        Kind::Sghmc => {
            go!(Sghmc::new(SghmcParams::new(H), &mut theta, &mut p, &mut work[..2 * D]).unwrap())
        }
        Kind::Sgnht => {
            go!(Sgnht::resume(
                SgnhtParams::new(H),
                &mut theta,
                &mut p,
                std::slice::from_mut(&mut xi),
                &mut work[..2 * D]
            )
            .unwrap())
        }
        Kind::MSgnht => go!(MSgnht::resume(
            SgnhtParams::new(H),
            &mut theta,
            &mut p,
            &mut xi_v,
            &mut work
        )
        .unwrap()),
        Kind::SgmgtD => {
            let params = sgmgt_d_params(h);
            let mut s = Sgmgt::resume(params, &mut theta, &mut p, &mut xi_v, &mut work).unwrap();
            s.resample_momentum(&mut rng);
            go!(s)
        }
    }
}

/// SGMGT-D with the θ term strong enough for its B̂ to matter (σ_θ = 0.25, as
/// `docs/sgmgt-noise-estimate.md`'s measurements), softened kinetics a = 1, c = 5, p redrawn
/// every 100 steps.
fn sgmgt_d_params(h: f64) -> SgmgtParams<f64> {
    SgmgtParams::new(h)
        .with_sigma_theta(0.25)
        .with_resampling_steps(100, 0)
        .with_kinetic(MonomialGamma::softened(1.0, 5.0))
}

/// The largest |estimate − target| / SE over the coordinates' means and variances.
fn worst_z(m: &Moments, target: &Gaussian) -> f64 {
    (0..target.mean.len())
        .flat_map(|i| {
            [
                (m.mean[i] - target.mean[i]).abs() / m.mean_se[i],
                (m.var[i] - target.var[i]).abs() / m.var_se[i],
            ]
        })
        .fold(0.0, f64::max)
}

fn report(label: &str, m: &Moments, target: &Gaussian) {
    let ratios: Vec<String> = (0..D)
        .map(|i| {
            format!(
                "{:.3}±{:.3}",
                m.var[i] / target.var[i],
                m.var_se[i] / target.var[i]
            )
        })
        .collect();
    eprintln!(
        "{label}: var/target [{}], worst |Δ|/SE {:.1}",
        ratios.join(", "),
        worst_z(m, target)
    );
}

/// With anisotropic diagonal noise (B from 0.05 to 1.5 against A = 1) every sampler with the
/// diagonal estimate has every coordinate's mean and variance within 5 SE; SGHMC and SGNHT
/// without it miss by far more (SGHMC's stiff coordinate runs at temperature ≈ (A + B)/A,
/// SGNHT's one thermostat leaves the quiet coordinates cold).
#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn anisotropic_noise_is_absorbed_by_the_diagonal_estimate() {
    let target = anisotropic_target();
    let (sub, fric) = (Correction::Subtract, Correction::Friction);
    let diag = Some(NoiseShape::Diagonal);
    let runs: Vec<(Kind, Option<NoiseShape>, Correction, Moments)> = std::thread::scope(|scope| {
        let jobs = [
            (Kind::Sghmc, diag, sub, 11),
            (Kind::Sgnht, diag, sub, 12),
            (Kind::MSgnht, diag, sub, 13),
            (Kind::SgmgtD, diag, sub, 14),
            (Kind::Sghmc, diag, fric, 17),
            (Kind::Sgnht, diag, fric, 18),
            (Kind::MSgnht, diag, fric, 19),
            (Kind::Sghmc, None, sub, 15),
            (Kind::Sgnht, None, sub, 16),
        ]
        .map(|(kind, shape, correction, seed)| {
            scope.spawn(move || {
                let m = anisotropic(kind, shape, correction, seed);
                (kind, shape, correction, m)
            })
        });
        jobs.map(|j| j.join().unwrap()).into_iter().collect()
    });
    for (kind, shape, correction, m) in &runs {
        report(&format!("{kind:?} {shape:?} {correction:?}"), m, &target);
    }
    for (kind, shape, _, m) in &runs {
        let z = worst_z(m, &target);
        match shape {
            Some(_) => assert!(
                z <= Z,
                "{kind:?} with the estimate: worst |Δ|/SE {z:.1} > {Z}"
            ),
            None => assert!(
                z > 4.0 * Z,
                "{kind:?} without the estimate: worst |Δ|/SE only {z:.1}"
            ),
        }
    }
}

/// Correlated noise: V with correlation 0.9 between every pair and B from 0.3 to 1.2.
fn correlated_noise() -> Vec<f64> {
    // (At the Gaussian samplers' h = H.)
    let b = [1.2, 0.9, 0.6, 0.3];
    let mut v = vec![0.0; D * D];
    for r in 0..D {
        for c in 0..D {
            let rho = if r == c { 1.0 } else { 0.9 };
            v[r * D + c] = rho * 2.0 * (b[r] * b[c]).sqrt() / H;
        }
    }
    v
}

fn correlated(
    kind: Kind,
    shape: Option<NoiseShape>,
    correction: Correction,
    seed: u64,
) -> CovMoments {
    let target = DenseGaussian::equicorrelated(D, 0.5);
    let mut model = NoisyGaussian::new(target.clone(), &correlated_noise(), seed);
    let mut rng = Pcg64::new(seed as u128, 0xc0);
    let (mut theta, mut p, mut xi_v) = (target.mean.clone(), vec![0.0; D], vec![1.0; D]);
    let mut xi = 1.0;
    let mut work = vec![0.0; 3 * D];
    let shape_or = shape.unwrap_or(NoiseShape::Diagonal);
    let mut est = vec![0.0; shape_or.len(D)];
    let mut scratch = vec![0.0; Calibrated::<f64, Sghmc<f64>>::workspace_len(shape_or, D)];
    let params = CalibratedParams::new()
        .with_shape(shape_or)
        .with_correction(correction);
    macro_rules! go {
        ($s:expr) => {{
            let s = $s;
            match shape {
                Some(_) => {
                    let mut c = Calibrated::new(s, params, &mut est, &mut scratch).unwrap();
                    run_cov(
                        &mut c, &mut model, &mut rng, &target, BURN, BATCHES, PER_BATCH,
                    )
                }
                None => {
                    let mut s = s;
                    run_cov::<f64, _, _>(
                        &mut s, &mut model, &mut rng, &target, BURN, BATCHES, PER_BATCH,
                    )
                }
            }
            .unwrap()
        }};
    }
    match kind {
        Kind::Sghmc => {
            go!(Sghmc::new(SghmcParams::new(H), &mut theta, &mut p, &mut work[..2 * D]).unwrap())
        }
        Kind::Sgnht => {
            go!(Sgnht::resume(
                SgnhtParams::new(H),
                &mut theta,
                &mut p,
                std::slice::from_mut(&mut xi),
                &mut work[..2 * D]
            )
            .unwrap())
        }
        Kind::MSgnht => go!(MSgnht::resume(
            SgnhtParams::new(H),
            &mut theta,
            &mut p,
            &mut xi_v,
            &mut work
        )
        .unwrap()),
        Kind::SgmgtD => unreachable!("SGMGT-D takes the diagonal only"),
    }
}

/// The largest |estimate − target| / SE over the means and covariance entries.
fn worst_cov_z(m: &CovMoments, target: &DenseGaussian) -> f64 {
    let d = target.dim();
    let means = (0..d).map(|i| (m.mean[i] - target.mean[i]).abs() / m.mean_se[i]);
    let covs = (0..d * d).map(|k| (m.cov[k] - target.cov[k]).abs() / m.cov_se[k]);
    means.chain(covs).fold(0.0, f64::max)
}

/// With noise correlated across coordinates (ρ = 0.9) the dense estimate makes SGHMC, SGNHT and
/// mSGNHT stationary for the target: every mean and covariance entry within 5 SE. The diagonal
/// estimate, and mSGNHT's per-coordinate thermostats without any estimate, leave the
/// off-diagonal noise in and miss.
#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn correlated_noise_is_absorbed_by_the_dense_estimate() {
    let target = DenseGaussian::equicorrelated(D, 0.5);
    let (sub, fric) = (Correction::Subtract, Correction::Friction);
    let dense = Some(NoiseShape::Dense);
    let runs: Vec<(Kind, Option<NoiseShape>, Correction, CovMoments)> =
        std::thread::scope(|scope| {
            let jobs = [
                (Kind::Sghmc, dense, sub, 21),
                (Kind::Sgnht, dense, sub, 22),
                (Kind::MSgnht, dense, sub, 23),
                (Kind::Sghmc, dense, fric, 26),
                (Kind::Sgnht, dense, fric, 27),
                (Kind::MSgnht, dense, fric, 28),
                (Kind::Sghmc, Some(NoiseShape::Diagonal), sub, 24),
                (Kind::MSgnht, None, sub, 25),
            ]
            .map(|(kind, shape, correction, seed)| {
                scope.spawn(move || {
                    let m = correlated(kind, shape, correction, seed);
                    (kind, shape, correction, m)
                })
            });
            jobs.map(|j| j.join().unwrap()).into_iter().collect()
        });
    for (kind, shape, correction, m) in &runs {
        let var: Vec<String> = (0..D).map(|i| format!("{:.3}", m.cov[i * D + i])).collect();
        eprintln!(
            "{kind:?} {shape:?} {correction:?}: variances [{}], cov(0,1) {:.3}, worst |Δ|/SE {:.1}",
            var.join(", "),
            m.cov[1],
            worst_cov_z(m, &target)
        );
    }
    for (kind, shape, _, m) in &runs {
        let z = worst_cov_z(m, &target);
        if *shape == Some(NoiseShape::Dense) {
            assert!(z <= Z, "{kind:?} dense: worst |Δ|/SE {z:.1} > {Z}");
        } else {
            assert!(z > 2.0 * Z, "{kind:?} {shape:?}: worst |Δ|/SE only {z:.1}");
        }
    }
}

/// A model whose moments are unusable in a chosen way, to check the state contract.
struct BadMoments {
    size: usize,
    nan: bool,
}

impl Gradient<f64> for BadMoments {
    fn gradient(&mut self, theta: &[f64], grad: &mut [f64]) {
        grad.copy_from_slice(theta);
    }
}

impl MinibatchGradient<f64> for BadMoments {
    fn gradient_with_moments(
        &mut self,
        theta: &[f64],
        grad: &mut [f64],
        m: BatchMoments<'_, f64>,
    ) -> Batch {
        grad.copy_from_slice(theta);
        m.sum.copy_from_slice(theta);
        let n = theta.len();
        if m.dense {
            // Σgᵢgᵢᵀ = 2ttᵀ + M with Σgᵢ = t and b = 2: Σgᵢgᵢᵀ − (Σgᵢ)(Σgᵢ)ᵀ/b = 1.5ttᵀ + M,
            // positive definite for M with 1 on the diagonal and 0.25 off it.
            for r in 0..n {
                for c in 0..n {
                    m.squares[r * n + c] =
                        2.0 * theta[r] * theta[c] + if r == c { 1.0 } else { 0.25 };
                }
            }
        } else {
            for (q, t) in m.squares.iter_mut().zip(theta) {
                *q = 2.0 * t * t + 1.0;
            }
        }
        if self.nan {
            let last = m.squares.len() - 1;
            m.squares[last] = f64::NAN;
        }
        Batch {
            size: self.size,
            population: 10,
            sampling: Sampling::WithoutReplacement,
        }
    }
}

/// Unusable moments end the step with a `StepError` naming the fault (`BatchTooSmall`, …) and
/// leave θ, p, the estimate and its update count exactly as they were, for both corrections and
/// both shapes (the friction form's first half-flow of p is undone); usable ones then step on.
#[test]
fn unusable_moments_leave_the_state_untouched() {
    for (shape, correction) in [
        (NoiseShape::Diagonal, Correction::Subtract),
        (NoiseShape::Dense, Correction::Subtract),
        (NoiseShape::Diagonal, Correction::Friction),
        (NoiseShape::Dense, Correction::Friction),
    ] {
        let (mut theta, mut p, mut work) = ([0.5f64, -1.0], [0.3, 0.2], [0.0; 4]);
        let sghmc = Sghmc::new(SghmcParams::new(0.1), &mut theta, &mut p, &mut work).unwrap();
        let mut est = vec![0.0; shape.len(2)];
        let mut scratch = vec![0.0; Calibrated::<f64, Sghmc<f64>>::workspace_len(shape, 2)];
        let params = CalibratedParams::new()
            .with_shape(shape)
            .with_correction(correction);
        let mut s = Calibrated::new(sghmc, params, &mut est, &mut scratch).unwrap();
        let mut rng = Pcg64::new(5, 6);
        let mut good = BadMoments {
            size: 2,
            nan: false,
        };
        s.step(&mut good, &mut rng).unwrap();
        s.step(&mut good, &mut rng).unwrap();
        let before = (
            s.position().to_vec(),
            s.momentum().to_vec(),
            s.estimate().variance().to_vec(),
            s.estimate().updates(),
        );
        assert!(
            before.2.iter().any(|&v| v > 0.0),
            "{shape:?}: an estimate to discount"
        );
        for (bad, expected) in [
            (
                BadMoments {
                    size: 1,
                    nan: false,
                },
                StepError::BatchTooSmall { size: 1 },
            ),
            (
                BadMoments {
                    size: 11,
                    nan: false,
                },
                StepError::BatchExceedsPopulation {
                    size: 11,
                    population: 10,
                },
            ),
            (
                BadMoments { size: 2, nan: true },
                StepError::NonFiniteNoiseEstimate {
                    index: if shape == NoiseShape::Dense { 3 } else { 1 },
                },
            ),
        ] {
            let mut bad = bad;
            assert_eq!(
                s.step(&mut bad, &mut rng),
                Err(expected),
                "{shape:?} {correction:?}"
            );
            let after = (
                s.position().to_vec(),
                s.momentum().to_vec(),
                s.estimate().variance().to_vec(),
                s.estimate().updates(),
            );
            assert_eq!(before, after, "{shape:?} {correction:?}");
        }
        s.step(&mut good, &mut rng).unwrap();
        assert_eq!(s.estimate().updates(), 3);
    }
}

/// Buffers of the wrong length, and the friction correction with a mass that is not the
/// identity, are refused by name.
#[test]
fn wrong_buffers_are_refused() {
    let (mut theta, mut p, mut work) = ([0.5f64, -1.0], [0.3, 0.2], [0.0; 4]);
    let mut sghmc = Sghmc::new(SghmcParams::new(0.1), &mut theta, &mut p, &mut work).unwrap();
    let mut inv_mass = [2.0, 0.5];
    sghmc
        .set_mass(MassBuffer::diagonal(&mut inv_mass).unwrap())
        .unwrap();
    let (mut est, mut scratch) = ([0.0; 2], [0.0; 8]);
    let params = CalibratedParams::new()
        .with_shape(NoiseShape::Diagonal)
        .with_correction(Correction::Friction);
    let err = Calibrated::new(sghmc, params, &mut est, &mut scratch).unwrap_err();
    assert_eq!(err, sgmcmc::Error::Layout(LayoutError::UnsupportedMass));

    let (mut theta, mut p, mut work) = ([0.5f64, -1.0], [0.3, 0.2], [0.0; 4]);
    let sghmc = Sghmc::new(SghmcParams::new(0.1), &mut theta, &mut p, &mut work).unwrap();
    let (mut est, mut scratch) = ([0.0; 3], [0.0; 8]);
    let params = CalibratedParams::new().with_shape(NoiseShape::Diagonal);
    let err = Calibrated::new(sghmc, params, &mut est, &mut scratch).unwrap_err();
    assert_eq!(
        err,
        sgmcmc::Error::Layout(LayoutError::LengthMismatch {
            buffer: Buffer::NoiseEstimates,
            expected: 2,
            found: 3
        })
    );
    let (mut theta, mut p, mut work) = ([0.5f64, -1.0], [0.3, 0.2], [0.0; 4]);
    let sghmc = Sghmc::new(SghmcParams::new(0.1), &mut theta, &mut p, &mut work).unwrap();
    let (mut est, mut scratch) = ([0.0; 4], [0.0; 8]);
    let params = CalibratedParams::new().with_shape(NoiseShape::Dense);
    // Dense: 4n + 3n² = 20.
    let err = Calibrated::new(sghmc, params, &mut est, &mut scratch).unwrap_err();
    assert!(matches!(
        err,
        sgmcmc::Error::Layout(LayoutError::LengthMismatch {
            buffer: Buffer::Workspace,
            expected: 20,
            found: 8
        })
    ));
}

/// Issue 33, F3: with a subnormal step size 1/h overflows, and the shaped noise e·(1/h) was
/// 0·∞ = NaN: every step failed as `NonFiniteGradient { index: 0 }`, while the unwrapped
/// sampler steps. Now every shape and correction steps, with a finite state.
#[test]
fn subnormal_step_size_steps_like_the_unwrapped_sampler() {
    let h = f64::from_bits(1); // 5e-324
    for (shape, correction) in [
        (NoiseShape::Diagonal, Correction::Subtract),
        (NoiseShape::Dense, Correction::Subtract),
        (NoiseShape::Diagonal, Correction::Friction),
        (NoiseShape::Dense, Correction::Friction),
    ] {
        let (mut theta, mut p, mut work) = ([0.5f64, -1.0], [0.3, 0.2], [0.0; 4]);
        let sghmc = Sghmc::new(SghmcParams::new(h), &mut theta, &mut p, &mut work).unwrap();
        let mut est = vec![0.0; shape.len(2)];
        let mut scratch = vec![0.0; Calibrated::<f64, Sghmc<f64>>::workspace_len(shape, 2)];
        let params = CalibratedParams::new()
            .with_shape(shape)
            .with_correction(correction);
        let mut s = Calibrated::new(sghmc, params, &mut est, &mut scratch).unwrap();
        let mut rng = Pcg64::new(5, 7);
        let mut model = BadMoments {
            size: 2,
            nan: false,
        };
        for k in 0..3 {
            let step = s.step(&mut model, &mut rng);
            assert!(step.is_ok(), "{shape:?} {correction:?}, step {k}: {step:?}");
        }
        assert!(
            s.position()
                .iter()
                .chain(s.momentum())
                .all(|x| x.is_finite()),
            "{shape:?} {correction:?}"
        );
    }
}

/// Issue 33, F4: a model that reports a negative sum of squares (here Σgᵢ₀² = −1e12) gave a
/// dense estimate a negative V̂₀₀, which reached SGMGT-D's θ term as a negative noise estimate
/// (max|θ| went from 0.2 to 5e10, every step `Ok`). Now the step is refused by name, in both
/// shapes, with the state untouched; a model that reports its moments correctly then steps on.
#[test]
fn negative_sum_of_squares_is_refused() {
    struct NegativeSquares {
        negative: bool,
    }
    impl Gradient<f64> for NegativeSquares {
        fn gradient(&mut self, theta: &[f64], grad: &mut [f64]) {
            grad.copy_from_slice(theta);
        }
    }
    impl MinibatchGradient<f64> for NegativeSquares {
        fn gradient_with_moments(
            &mut self,
            theta: &[f64],
            grad: &mut [f64],
            m: BatchMoments<'_, f64>,
        ) -> Batch {
            grad.copy_from_slice(theta);
            m.sum.copy_from_slice(theta);
            m.squares.fill(0.0);
            let n = theta.len();
            let stride = if m.dense { n + 1 } else { 1 };
            for (j, t) in theta.iter().enumerate() {
                m.squares[j * stride] = 2.0 * t * t + 1.0;
            }
            if self.negative {
                m.squares[0] = -1e12;
            }
            Batch {
                size: 2,
                population: 10,
                sampling: Sampling::WithoutReplacement,
            }
        }
    }
    for shape in [NoiseShape::Diagonal, NoiseShape::Dense] {
        let (mut theta, mut p, mut xi, mut work) = ([0.2f64, -0.1], [0.3, 0.2], [0.0; 2], [0.0; 6]);
        let sgmgt =
            Sgmgt::resume(sgmgt_d_params(0.01), &mut theta, &mut p, &mut xi, &mut work).unwrap();
        let mut est = vec![0.0; shape.len(2)];
        let mut scratch = vec![0.0; Calibrated::<f64, Sgmgt<f64>>::workspace_len(shape, 2)];
        let mut s = Calibrated::new(
            sgmgt,
            CalibratedParams::new()
                .with_shape(shape)
                .with_correction(Correction::Subtract),
            &mut est,
            &mut scratch,
        )
        .unwrap();
        let mut rng = Pcg64::new(5, 8);
        let mut good = NegativeSquares { negative: false };
        s.step(&mut good, &mut rng).unwrap();
        let before = (
            s.position().to_vec(),
            s.momentum().to_vec(),
            s.estimate().variance().to_vec(),
            s.estimate().updates(),
        );
        let mut bad = NegativeSquares { negative: true };
        assert_eq!(
            s.step(&mut bad, &mut rng),
            Err(StepError::NegativeSquares { index: 0 }),
            "{shape:?}"
        );
        let after = (
            s.position().to_vec(),
            s.momentum().to_vec(),
            s.estimate().variance().to_vec(),
            s.estimate().updates(),
        );
        assert_eq!(before, after, "{shape:?}");
        s.step(&mut good, &mut rng).unwrap();
        assert_eq!(s.estimate().updates(), 2, "{shape:?}");
    }
}

/// A calibrated sampler runs on a step schedule: every step reports the schedule's h_t (the
/// wrapper reads h from its sampler at each step), a refused h changes nothing, and on a
/// constant schedule `run_scheduled` is `run`, bit for bit.
#[test]
fn calibrated_runs_on_a_step_schedule() {
    use sgmcmc::sampler::run_scheduled;
    let shape = NoiseShape::Dense;
    let run = |schedule: Option<&StepSchedule<f64>>| {
        let (mut theta, mut p, mut work) = ([0.5f64, -1.0], [0.3, 0.2], [0.0; 4]);
        let sghmc = Sghmc::new(SghmcParams::new(0.05), &mut theta, &mut p, &mut work).unwrap();
        let mut est = vec![0.0; shape.len(2)];
        let mut scratch = vec![0.0; Calibrated::<f64, Sghmc<f64>>::workspace_len(shape, 2)];
        let params = CalibratedParams::new().with_shape(shape);
        let mut seen = Vec::new();
        let mut s = Calibrated::new(sghmc, params, &mut est, &mut scratch).unwrap();
        let mut model = BadMoments {
            size: 2,
            nan: false,
        };
        let mut rng = Pcg64::new(5, 7);
        let mut obs = |k: u64, _: &mut Calibrated<f64, Sghmc<f64>>, st: &StepStats<f64>| {
            seen.push((k, st.step_size))
        };
        match schedule {
            Some(c) => run_scheduled(&mut s, c, 0, &mut model, &mut rng, 60, &mut obs).unwrap(),
            None => s.run(&mut model, &mut rng, 60, &mut obs).unwrap(),
        };
        let h = s.step_size();
        for bad in [0.0, -1.0, f64::NAN] {
            assert!(s.set_step_size(bad).is_err(), "{bad} accepted");
            assert_eq!(s.step_size().to_bits(), h.to_bits(), "changed by {bad}");
        }
        let (theta, p) = (s.position().to_vec(), s.momentum().to_vec());
        (theta, p, seen)
    };
    let constant = StepSchedule::constant(0.05).unwrap();
    let (plain, scheduled) = (run(None), run(Some(&constant)));
    assert_eq!(format!("{plain:?}"), format!("{scheduled:?}"));

    let cyclical = StepSchedule::cyclical(0.1, 25, 0.5).unwrap();
    let (theta, p, seen) = run(Some(&cyclical));
    assert_eq!(seen.len(), 60);
    for (i, &(k, h)) in seen.iter().enumerate() {
        assert_eq!(k, i as u64);
        assert_eq!(h, cyclical.at(i as u64), "iteration {i}");
    }
    assert!(theta.iter().chain(&p).all(|x| x.is_finite()));
}
