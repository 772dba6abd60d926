//! Stationary moments of HMC-EM, SGHMC-EM, SGNHT-EM (004 Alg. 1–3), SG-NPHMC (Alg. 4) and SG-NPHMC-EM (Alg. 5), and where their learned M⁻¹ goes.
//!
//! Targets: the 10-d Gaussian with variances 0.1…10 of tests/stationary.rs (diagonal masses)
//! and a 5-d Gaussian with unit variances and all correlations 0.9 (dense masses; every
//! covariance entry is checked). Fixed seeds; every tolerance is `Z` = 5 batch-means standard
//! errors of the recorded θ (one record per E-step), estimated from the chain itself.
//!
//! **What the learned mass should do.** At stationarity every one of these samplers draws its
//! momentum from N(0, M) for the current M (HMC and SGHMC-EM by the redraw, SGNHT and the
//! Nosé–Poincaré samplers by their invariant law), so the M-step's estimate Cov(p)⁻¹ is M⁻¹
//! itself up to Monte Carlo noise: any M is a fixed point of eq. 5 in expectation, and M⁻¹
//! performs a κ-damped random walk around its start (plus the shrinkage's pull toward
//! tr/d · I) — once the estimate is unbiased (`Mcem`'s bias correction of the inverse
//! covariance, which assumes independent samples). The tests check that M⁻¹ stays finite, SPD
//! and inside the eigenvalue bounds, and, for the samplers that redraw p every E-step (nearly
//! independent samples), within a factor 2 of its start (each M-step's estimate has relative
//! SD ≈ √(2/S_count) ≤ 0.14 per diagonal entry at S_count ≥ 100, and the blend averages several
//! of them). See `redraws` for the others.

mod common;

use common::{DenseGaussian, Gaussian, assert_cov, run_cov};
use rand_pcg::Pcg64;
use sgmcmc::adapt::{MStepParams, Mcem, McemParams, McemWorkspace, SampleSize};
use sgmcmc::kinetic::{AdaptiveMass, MassBuffer, MassShape};
use sgmcmc::linalg::cholesky_in_place;
use sgmcmc::rng::standard_normal_f64;
use sgmcmc::sampler::{
    Hmc, HmcParams, HmcWorkspace, SgNphmc, SgNphmcParams, Sghmc, SghmcParams, Sgnht, SgnhtParams,
};
use sgmcmc::{ChainState, Integrator, Model, Sampler, Workspace};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    HmcEm,
    SghmcEm,
    SgnhtEm,
    /// SG-NPHMC without MCEM (Alg. 4: redraw p, q every L steps).
    Nphmc,
    SgNphmcEm,
}

/// SG-NPHMC-EM is not in the stationarity list: see `sg_nphmc_em_runs_with_finite_masses`.
const ALL: [Kind; 4] = [Kind::HmcEm, Kind::SghmcEm, Kind::SgnhtEm, Kind::Nphmc];

/// M-step: k₀ = 0, κ_k = k^−0.75, shrinkage 0.05, eigenvalue bounds [10⁻², 10²].
const BOUNDS: (f64, f64) = (1e-2, 1e2);

fn m_step() -> MStepParams<f64> {
    MStepParams::new(0.0, 0.75, 0.05, BOUNDS.0, BOUNDS.1).unwrap()
}

/// The outcome of one run: the moments, the final M⁻¹, S_count and the number of M-steps.
struct Outcome {
    moments: common::CovMoments,
    inv_mass: Vec<f64>,
    sample_count: u64,
    m_steps: u64,
}

/// Runs `kind` on `target` from M⁻¹ = I (diagonal or dense buffer).
///
/// Step sizes, chosen so the discretisation bias is below one batch-means SE (the SE of a
/// variance is 2–5 % here):
/// * HMC-EM: exact (MH); ε = 0.07, LP_S = 10 (ω·t ≤ 2.2 < π for every ω ≤ 3.2 here);
/// * SGHMC-EM: h = 0.01, A = 1, LP_S = 10, splitting integrator (the dense mass with its
///   eigendecomposition): Alg. 3 redraws p before every E-step, which with the Euler integrator
///   biases θ by O(1/LP_S) (`Mcem` docs: 0.91 σ² at LP_S = 10 for ω² = 10); splitting's bias is
///   O(h²);
/// * SGNHT-EM: Euler, h = 0.01, A = 1, LP_S = 10, no redraw: bias ≈ A·h/2 · λ_max(M⁻¹) ≈ 1 %;
/// * SG-NPHMC (Alg. 4): ε = 0.05, L = 10, no noise: leapfrog bias O((εω)²) ≈ 2 % at ω = 3.2
///   on the stiffest coordinate (0.1 variance: ≈ 0.002 absolute, SE ≈ 0.004);
/// * SG-NPHMC-EM: ε = 0.05, LP_S = 10, no redraw; a noisy value Ũ = U + N(0, 2A/ε) with A = 1
///   (B = 0), the paper's value-noise model, which makes the thermostat momentum q a Langevin
///   variable (Nosé–Hoover–Langevin) and the chain ergodic on a Gaussian (plain Nosé–Hoover
///   dynamics without noise are not).
fn sample(
    kind: Kind,
    target: &DenseGaussian,
    dense: bool,
    size: SampleSize<f64>,
    seed: u64,
) -> Outcome {
    let d = target.dim();
    let shape = if dense {
        MassShape::Dense
    } else {
        MassShape::Diagonal
    };
    let mut minv = vec![0.0; if dense { d * d } else { d }];
    for i in 0..d {
        minv[if dense { i * d + i } else { i }] = 1.0;
    }
    let mut factor = vec![0.0; d * d];
    let mut eigen = vec![0.0; 2 * d * d + d];
    let mass = if dense {
        MassBuffer::dense_with_eigen(&mut minv, &mut factor, &mut eigen, d).unwrap()
    } else {
        MassBuffer::diagonal(&mut minv).unwrap()
    };
    let mut theta = target.mean.clone();
    let (mut p, mut g, mut s, mut v) = (vec![0.0; d], vec![0.0; d], vec![0.0; d], vec![0.0; d]);
    let (mut t0, mut g0, mut p0) = (vec![0.0; d], vec![0.0; d], vec![0.0; d]);
    let mut buf = vec![0.0; McemWorkspace::<f64>::len(d, shape)];
    let mut rng = Pcg64::new(seed as u128, 0xe1);
    let mut noise_rng = Pcg64::new(seed as u128 ^ 0x5151, 0x7);
    let eps: f64 = 0.05;
    let energy_sd = if kind == Kind::SgNphmcEm {
        (2.0 * 1.0 / eps).sqrt()
    } else {
        0.0
    };
    let mut model = Model::new(
        |t: &[f64], gr: &mut [f64]| target.gradient(t, gr),
        |t: &[f64]| target.energy(t) + energy_sd * standard_normal_f64(&mut noise_rng),
    );
    let params = |lp: u32| McemParams::new(lp, m_step(), size).unwrap();
    macro_rules! em {
        ($smp:expr, $lp:expr, $burn:expr, $per:expr) => {{
            let work = McemWorkspace::new(&mut buf, d, shape).unwrap();
            let mut em = Mcem::new($smp, params($lp), work).unwrap();
            // Alg. 2 and 5 initialise p (and q, s = 1) before the loop: p ~ N(0, M), q ~ N(0, Q).
            em.resample_momentum(&mut rng);
            let moments = run_cov(&mut em, &mut model, &mut rng, target, $burn, 50, $per).unwrap();
            Outcome {
                moments,
                inv_mass: em.inverse_mass().to_vec(),
                sample_count: em.sample_count(),
                m_steps: em.m_steps(),
            }
        }};
    }
    match kind {
        Kind::HmcEm => {
            let work = HmcWorkspace::with_mass_scratch(&mut g, &mut t0, &mut g0, &mut p0, &mut v);
            let smp = Hmc::with_mass(
                HmcParams::new(0.07, 10).unwrap(),
                mass,
                &mut theta,
                &mut p,
                work,
            )
            .unwrap();
            // 10⁵ E-steps (proposals) in 50 batches.
            em!(smp, 10, 5_000, 2_000)
        }
        Kind::SghmcEm => {
            let work = Workspace::with_mass_scratch(&mut g, &mut s, &mut v);
            let prm = SghmcParams::new(0.01, 1.0).unwrap();
            let smp = Sghmc::with_mass(prm, Integrator::Splitting, mass, &mut theta, &mut p, work)
                .unwrap();
            // 10⁶ inner steps (10⁵ E-steps) after 10⁵; the slowest coordinate relaxes in ~10³
            // inner steps, a batch is 2·10⁴.
            em!(smp, 10, 10_000, 2_000)
        }
        Kind::SgnhtEm => {
            let work = Workspace::with_mass_scratch(&mut g, &mut s, &mut v);
            let prm = SgnhtParams::new(0.01, 1.0).unwrap();
            let smp =
                Sgnht::with_mass(prm, Integrator::Euler, mass, &mut theta, &mut p, work).unwrap();
            em!(smp, 10, 10_000, 2_000)
        }
        Kind::Nphmc => {
            let work = HmcWorkspace::with_mass_scratch(&mut g, &mut t0, &mut g0, &mut p0, &mut v);
            let prm = SgNphmcParams::new(eps, 1.0, 0.0, 0.0, 10).unwrap();
            let mut smp = SgNphmc::with_mass(prm, mass, &mut theta, &mut p, work).unwrap();
            let moments =
                run_cov(&mut smp, &mut model, &mut rng, target, 5_000, 50, 2_000).unwrap();
            Outcome {
                moments,
                inv_mass: smp.mass().inverse_slice().to_vec(),
                sample_count: 0,
                m_steps: 0,
            }
        }
        Kind::SgNphmcEm => {
            let work = HmcWorkspace::with_mass_scratch(&mut g, &mut t0, &mut g0, &mut p0, &mut v);
            let prm = SgNphmcParams::new(eps, 1.0, 1.0, 0.0, 10).unwrap();
            let smp = SgNphmc::with_mass(prm, mass, &mut theta, &mut p, work).unwrap();
            em!(smp, 10, 10_000, 4_000)
        }
    }
}

/// Finite, SPD (Cholesky succeeds), every diagonal entry inside the bounds and within a factor
/// 2 of its start 1 (module docs).
fn check_learned(name: &str, o: &Outcome, d: usize, independent: bool) {
    let m = &o.inv_mass;
    assert!(
        m.iter().all(|x| x.is_finite()),
        "{name}: non-finite M⁻¹ {m:?}"
    );
    let dense = m.len() == d * d && d > 1;
    let diag: Vec<f64> = (0..d)
        .map(|i| if dense { m[i * d + i] } else { m[i] })
        .collect();
    if dense {
        let mut c = m.clone();
        assert!(cholesky_in_place(&mut c, d).is_ok(), "{name}: M⁻¹ not SPD");
    }
    for &x in &diag {
        assert!(
            x >= BOUNDS.0 && x <= BOUNDS.1,
            "{name}: {x} outside the bounds"
        );
        assert!(
            !independent || (0.5..=2.0).contains(&x),
            "{name}: diag(M⁻¹) = {diag:?} left [0.5, 2]"
        );
    }
    println!(
        "{name}: diag(M⁻¹) = [{}], S_count {}, M-steps {}",
        diag.iter()
            .map(|x| format!("{x:.3}"))
            .collect::<Vec<_>>()
            .join(", "),
        o.sample_count,
        o.m_steps
    );
}

/// Whether the E-step redraws p (HMC-EM, SGHMC-EM; SG-NPHMC learns nothing), so the stored
/// momenta are nearly independent and the factor-2 check applies. SGNHT-EM and SG-NPHMC-EM
/// store momenta LP_S·h = 0.1 (resp. 0.5) time units apart without a redraw: strongly
/// autocorrelated (effective sample size a few per batch of 100), and then even the
/// bias-corrected inverse covariance overestimates M⁻¹ (E[Σ̂⁻¹] grows as the effective n
/// approaches d + 2), so theory predicts an upward drift; for them only finiteness, SPD and the
/// bounds are asserted, and the drift is printed.
fn redraws(kind: Kind) -> bool {
    matches!(kind, Kind::HmcEm | Kind::SghmcEm | Kind::Nphmc)
}

fn size_for(kind: Kind, k: usize) -> SampleSize<f64> {
    // Alternate the adaptive rule (paper-style: from 100, α = 0.25, S_I = 10) and a fixed S_count.
    match (kind, k % 2) {
        (_, 0) => SampleSize::adaptive(100, 0.25, 10).unwrap(),
        _ => SampleSize::fixed(100).unwrap(),
    }
}

#[test]
fn em_samplers_on_anisotropic_target_diagonal_mass() {
    let target = DenseGaussian::from_diagonal(&Gaussian::anisotropic(10));
    for (k, kind) in ALL.into_iter().enumerate() {
        let o = sample(kind, &target, false, size_for(kind, k), 500 + k as u64);
        let name = format!("{kind:?} diagonal, 10-d");
        check_learned(&name, &o, 10, redraws(kind));
        assert_cov(&name, &o.moments, &target);
    }
}

#[test]
fn em_samplers_on_correlated_target_dense_mass() {
    let target = DenseGaussian::equicorrelated(5, 0.9);
    for (k, kind) in ALL.into_iter().enumerate() {
        let o = sample(kind, &target, true, size_for(kind, k + 1), 600 + k as u64);
        let name = format!("{kind:?} dense, ρ = 0.9");
        check_learned(&name, &o, 5, redraws(kind));
        assert_cov(&name, &o.moments, &target);
    }
}

/// SG-NPHMC-EM (Alg. 5: no redraw, H₀ re-zeroed every E-step, M and Q learned).
///
/// **Stationarity is not shown.** Without noise (A = B = 0, exact Ũ and ∇Ũ) Alg. 5 is
/// deterministic Nosé–Hoover dynamics, which is not ergodic on a Gaussian; with the paper's
/// value-noise model (Ũ = U + N(0, 2A/ε), A = 1, ε = 0.05) we measured Var θ₀ = 3.73 against 1
/// (5 SE = 0.64) on the correlated target with a dense mass, and a `ThermostatBreakdown` on the
/// 10-d diagonal one: the noise terms −A s q/Q and the value noise balance only at s = 1, while
/// s wanders to 5–20 without the redraw (Q was learned down to ≈ 0.07). What is asserted here is
/// what the wrapper guarantees: in the noise-free configuration 2·10⁴ E-steps run without error
/// on both targets, and M⁻¹ and Q stay finite, SPD and inside the bounds.
#[test]
fn sg_nphmc_em_runs_with_finite_masses() {
    for dense in [false, true] {
        let target = if dense {
            DenseGaussian::equicorrelated(5, 0.9)
        } else {
            DenseGaussian::from_diagonal(&Gaussian::anisotropic(10))
        };
        let d = target.dim();
        let shape = if dense {
            MassShape::Dense
        } else {
            MassShape::Diagonal
        };
        let mut minv = vec![0.0; if dense { d * d } else { d }];
        for i in 0..d {
            minv[if dense { i * d + i } else { i }] = 1.0;
        }
        let mut factor = vec![0.0; d * d];
        let mass = if dense {
            MassBuffer::dense(&mut minv, &mut factor, d).unwrap()
        } else {
            MassBuffer::diagonal(&mut minv).unwrap()
        };
        let mut theta = target.mean.clone();
        let (mut p, mut g, mut v) = (vec![0.0; d], vec![0.0; d], vec![0.0; d]);
        let (mut t0, mut g0, mut p0) = (vec![0.0; d], vec![0.0; d], vec![0.0; d]);
        let mut buf = vec![0.0; McemWorkspace::<f64>::len(d, shape)];
        let mut rng = Pcg64::new(700 + dense as u128, 0xe1);
        let mut model = Model::new(
            |t: &[f64], gr: &mut [f64]| target.gradient(t, gr),
            |t: &[f64]| target.energy(t),
        );
        let work = HmcWorkspace::with_mass_scratch(&mut g, &mut t0, &mut g0, &mut p0, &mut v);
        let prm = SgNphmcParams::new(0.05, 1.0, 0.0, 0.0, 10).unwrap();
        let smp = SgNphmc::with_mass(prm, mass, &mut theta, &mut p, work).unwrap();
        let params = McemParams::new(10, m_step(), SampleSize::fixed(100).unwrap()).unwrap();
        let work = McemWorkspace::new(&mut buf, d, shape).unwrap();
        let mut em = Mcem::new(smp, params, work).unwrap();
        em.resample_momentum(&mut rng);
        for i in 0..20_000 {
            if let Err(e) = em.step(&mut model, &mut rng) {
                panic!("SG-NPHMC-EM (dense {dense}) failed at E-step {i}: {e}");
            }
        }
        let q_mass = em.sampler().params().thermostat_mass();
        assert!(q_mass.is_finite() && (1.0 / BOUNDS.1..=1.0 / BOUNDS.0).contains(&q_mass));
        let o = Outcome {
            moments: common::CovMoments {
                mean: vec![],
                mean_se: vec![],
                cov: vec![],
                cov_se: vec![],
            },
            inv_mass: em.inverse_mass().to_vec(),
            sample_count: em.sample_count(),
            m_steps: em.m_steps(),
        };
        assert_eq!(o.m_steps, 200);
        check_learned(
            &format!("SgNphmcEm dense {dense}, Q = {q_mass:.3}"),
            &o,
            d,
            false,
        );
    }
}

/// A stand-in sampler whose "E-step" draws p ~ N(0, Σ*) from a fixed Σ* = LLᵀ, whatever M is:
/// the M-step's input with a known answer, M⁻¹ → Σ*⁻¹.
struct Mock<'a> {
    theta: Vec<f64>,
    p: Vec<f64>,
    mass: MassBuffer<'a, f64>,
    /// Lower Cholesky factor of Σ* (row-major).
    chol: Vec<f64>,
}

impl ChainState<f64> for Mock<'_> {
    fn position(&self) -> &[f64] {
        &self.theta
    }
    fn momentum(&self) -> &[f64] {
        &self.p
    }
    fn phase_mut(&mut self) -> (&mut [f64], &mut [f64]) {
        (&mut self.theta, &mut self.p)
    }
    fn resample_momentum<R: rand_core::Rng + ?Sized>(&mut self, _rng: &mut R) {}
}

impl AdaptiveMass<f64> for Mock<'_> {
    fn mass(&self) -> sgmcmc::kinetic::Mass<'_, f64> {
        self.mass.mass()
    }
    fn set_inverse_mass(&mut self, m: &[f64]) -> Result<(), sgmcmc::LinalgError> {
        self.mass.set_inverse_mass(m)
    }
}

impl<M: ?Sized> sgmcmc::adapt::EmSampler<f64, M> for Mock<'_> {
    const TEST: sgmcmc::adapt::TestFunction = sgmcmc::adapt::TestFunction::Hmc;
    fn e_step<R: rand_core::Rng + ?Sized>(
        &mut self,
        _model: &mut M,
        rng: &mut R,
        _steps: u32,
    ) -> Result<sgmcmc::StepStats<f64>, sgmcmc::StepError> {
        let d = self.p.len();
        let z: Vec<f64> = (0..d).map(|_| standard_normal_f64(rng)).collect();
        for i in 0..d {
            self.p[i] = (0..=i).map(|j| self.chol[i * d + j] * z[j]).sum();
        }
        Ok(sgmcmc::StepStats {
            step_size: 0.0,
            kinetic_temperature: None,
            thermostat: None,
            acceptance: None,
            accepted: None,
        })
    }
}

/// With momenta from a fixed N(0, Σ*), κ_k = 1/k (k₀ = 0, exponent 1: M⁻¹ is then exactly the
/// plain average of the k estimates) and no shrinkage, 400 M-steps of S_count = 100 must bring
/// M⁻¹ to Σ*⁻¹. One estimate's diagonal entry has relative SD √(2/(ν − d − 3)), ν = n − 1
/// (inverse Wishart; 0.145 for d = 1, 0.148 for d = 5), so the average of 400 has SE ≈ 0.0074
/// per entry; each ratio diag(M⁻¹)ᵢ / (Σ*⁻¹)ᵢᵢ must be within 5 SE of 1 with the bias correction.
/// Without it the ratios are inflated by (n − 1)/(n − 3) = 1.021 (diagonal) and
/// (n − 1)/(n − d − 2) = 1.065 (dense, d = 5): the mean ratio over coordinates must then miss 1
/// by more than 5 SE of a mean (diagonal: independent coordinates, SE/√10; dense: at most the
/// per-entry SE).
#[test]
fn m_step_learns_the_momentum_precision_and_the_bias_correction_is_needed() {
    for dense in [false, true] {
        let (d, sigma) = if dense {
            (5, DenseGaussian::equicorrelated(5, 0.9))
        } else {
            let g = Gaussian::anisotropic(10);
            (10, DenseGaussian::from_diagonal(&g))
        };
        // Cholesky of Σ* (f64, tiny).
        let mut chol = sigma.cov.clone();
        cholesky_in_place(&mut chol, d).unwrap();
        let se = 0.148 / 400f64.sqrt();
        for corrected in [true, false] {
            let shape = if dense {
                MassShape::Dense
            } else {
                MassShape::Diagonal
            };
            let mut minv = vec![0.0; if dense { d * d } else { d }];
            for i in 0..d {
                minv[if dense { i * d + i } else { i }] = 1.0;
            }
            let mut factor = vec![0.0; d * d];
            let mass = if dense {
                MassBuffer::dense(&mut minv, &mut factor, d).unwrap()
            } else {
                MassBuffer::diagonal(&mut minv).unwrap()
            };
            let mock = Mock {
                theta: vec![0.0; d],
                p: vec![0.0; d],
                mass,
                chol: chol.clone(),
            };
            let m_step = MStepParams::new(0.0, 1.0, 0.0, 1e-4, 1e4).unwrap();
            let params = McemParams::new(1, m_step, SampleSize::fixed(100).unwrap())
                .unwrap()
                .with_bias_correction(corrected);
            let mut buf = vec![0.0; McemWorkspace::<f64>::len(d, shape)];
            let work = McemWorkspace::new(&mut buf, d, shape).unwrap();
            let mut em = Mcem::new(mock, params, work).unwrap();
            let mut rng = Pcg64::new(900 + dense as u128, 3);
            let mut model = |_: &[f64], _: &mut [f64]| {};
            for _ in 0..40_000 {
                em.step(&mut model, &mut rng).unwrap();
            }
            assert_eq!(em.m_steps(), 400);
            let m = em.inverse_mass();
            let ratios: Vec<f64> = (0..d)
                .map(|i| {
                    let mi = if dense { m[i * d + i] } else { m[i] };
                    mi / sigma.precision[i * d + i]
                })
                .collect();
            let mean = ratios.iter().sum::<f64>() / d as f64;
            println!(
                "dense {dense}, corrected {corrected}: diag(M⁻¹)/diag(Σ*⁻¹) mean {mean:.4}, {ratios:.4?}"
            );
            if corrected {
                for (i, r) in ratios.iter().enumerate() {
                    assert!(
                        (r - 1.0).abs() <= 5.0 * se,
                        "coordinate {i}: ratio {r:.4}, 5 SE = {:.4}",
                        5.0 * se
                    );
                }
            } else {
                let se_mean = if dense { se } else { se / (d as f64).sqrt() };
                assert!(
                    mean - 1.0 > 5.0 * se_mean,
                    "uncorrected mean ratio {mean:.4} within 5 SE {:.4}",
                    5.0 * se_mean
                );
            }
        }
    }
}

/// The adaptive S_count mechanics: every M-step comes after exactly the S_count in force at
/// the time, and S_count never shrinks (S ← S + ⌈S/S_I⌉ or unchanged).
#[test]
fn adaptive_sample_count_bookkeeping() {
    let target = DenseGaussian::from_diagonal(&Gaussian::anisotropic(10));
    let d = 10;
    let mut minv = vec![1.0; d];
    let mass = MassBuffer::diagonal(&mut minv).unwrap();
    let mut theta = target.mean.clone();
    let (mut p, mut g, mut s) = (vec![0.0; d], vec![0.0; d], vec![0.0; d]);
    let prm = SgnhtParams::new(0.01, 1.0).unwrap();
    let smp = Sgnht::with_mass(
        prm,
        Integrator::Splitting,
        mass,
        &mut theta,
        &mut p,
        Workspace::new(&mut g, &mut s),
    )
    .unwrap();
    let size = SampleSize::adaptive(20, 0.25, 3).unwrap();
    let params = McemParams::new(5, m_step(), size).unwrap();
    let mut buf = vec![0.0; McemWorkspace::<f64>::len(d, MassShape::Diagonal)];
    let work = McemWorkspace::new(&mut buf, d, MassShape::Diagonal).unwrap();
    let mut em = Mcem::new(smp, params, work).unwrap();
    let mut rng = Pcg64::new(31, 4);
    let mut model = |t: &[f64], gr: &mut [f64]| target.gradient(t, gr);
    let (mut since, mut current, mut grew) = (0u64, em.sample_count(), 0);
    for _ in 0..50_000 {
        let before = em.m_steps();
        em.step(&mut model, &mut rng).unwrap();
        since += 1;
        if em.m_steps() > before {
            assert_eq!(
                since, current,
                "M-step after {since} E-steps, S_count was {current}"
            );
            let next = em.sample_count();
            assert!(next == current || next == current + current.div_ceil(3));
            grew += (next > current) as u32;
            current = next;
            since = 0;
        } else {
            assert_eq!(em.sample_count(), current);
        }
    }
    println!(
        "adaptive S_count: {} M-steps, grew {grew} times, now {current}",
        em.m_steps()
    );
    assert!(em.m_steps() >= 5);
}
