//! Stationary moments of HMC-EM, SGHMC-EM, SGNHT-EM (Roychowdhury & Parthasarathy 2017 Alg. 1–3), SG-NPHMC (Alg. 4) and SG-NPHMC-EM (default E-step: one Alg. 4 block; the printed Alg. 5 is measured biased), and where their learned M⁻¹ goes.
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
//! of them). See `redraws` for the others. One systematic pull remains: the covariance
//! shrinkage (λ = 0.05 toward tr Σ̂/d · I) lowers the precision estimate of a finite sample
//! (it lifts Σ̂'s small sample eigenvalues), about 1 % per unit of Σκ_k for d = 5, n = 100 — we
//! measured SG-NPHMC-EM's dense M⁻¹ going from I to 0.71–0.89 I over 2100 M-steps (8 seeds,
//! Σκ ≈ 27) with λ = 0.05 and staying at 0.90–1.10 I with λ = 0. Samplers whose stored momenta
//! are autocorrelated are pulled the other way (see `redraws`).

use crate::common;

use common::{DenseGaussian, Gaussian, assert_cov, run_cov};
use rand_pcg::Pcg64;
use sgmcmc::StepError;
use sgmcmc::adapt::{Mcem, McemParams, NphmcEStep, SampleSize};
use sgmcmc::kinetic::{AdaptiveMass, MassShape};
use sgmcmc::linalg::cholesky_in_place;
use sgmcmc::prelude::{
    ChainState, Hmc, HmcParams, Integrator, MassBuffer, Model, Sampler, SgNphmc, SgNphmcParams,
    Sghmc, SghmcParams, Sgnht, SgnhtParams,
};
use sgmcmc::rng::standard_normal_f64;
use sgmcmc::sampler::StepStats;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    HmcEm,
    SghmcEm,
    SgnhtEm,
    /// SG-NPHMC without MCEM (Alg. 4: redraw p, q every L steps).
    Nphmc,
    /// SG-NPHMC-EM with the stationary E-step (the default [`NphmcEStep::Redraw`]: one Alg. 4
    /// block per E-step; departs from the printed Alg. 5). Diagonal mass: noisy gradients
    /// ∇Ũ = ∇U + N(0, 2B/ε) with B = 0.1 and exact values (A = 0); dense mass: exact (a dense
    /// mass needs B = 0).
    SgNphmcEm,
    /// The same E-step with the paper's value-noise model Ũ = U + N(0, 2A/ε), A = 1, exact
    /// gradients (the configuration of `SgNphmcEmPrinted`, for the side-by-side comparison).
    SgNphmcEmValueNoise,
    /// SG-NPHMC-EM as printed (Alg. 5, [`NphmcEStep::Printed`]: no redraw), value noise A = 1.
    /// Not stationary: see `printed_sg_nphmc_em_is_biased`.
    SgNphmcEmPrinted,
}

/// The printed Alg. 5 is not in the stationarity list: see `printed_sg_nphmc_em_is_biased`.
const ALL: [Kind; 5] = [
    Kind::HmcEm,
    Kind::SghmcEm,
    Kind::SgnhtEm,
    Kind::Nphmc,
    Kind::SgNphmcEm,
];

/// M-step: k₀ = 0, κ_k = k^−0.75, shrinkage 0.05, eigenvalue bounds [10⁻², 10²].
const BOUNDS: (f64, f64) = (1e-2, 1e2);

/// The M-step settings of these tests: κ_k = k^−0.75, λ = 0.05, eigenvalues in `BOUNDS`.
fn with_m_step(params: McemParams<f64>) -> McemParams<f64> {
    params
        .with_m_step_schedule(0.0, 0.75)
        .with_shrinkage(0.05)
        .with_precision_bounds(BOUNDS.0, BOUNDS.1)
}

/// The length of an MCEM workspace for dimension d and a mass of the given shape (the same for
/// every wrapped sampler).
fn em_len(d: usize, shape: MassShape) -> usize {
    Mcem::<f64, Hmc<'static, f64>>::workspace_len(d, shape)
}

/// SG-NPHMC's settings in the order (ε, Q, A, B, L).
fn nphmc_params(eps: f64, q: f64, a: f64, b: f64, steps: u32) -> SgNphmcParams<f64> {
    SgNphmcParams::new(eps)
        .with_thermostat_mass(q)
        .with_energy_noise(a)
        .with_gradient_noise(b)
        .with_leapfrog_steps(steps)
}

/// The outcome of one run: the moments, the final M⁻¹, S_count and the number of M-steps.
struct Outcome {
    moments: common::CovMoments,
    inv_mass: Vec<f64>,
    sample_count: u64,
    m_steps: u64,
    /// SG-NPHMC-EM: the learned thermostat mass Q.
    q_mass: Option<f64>,
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
/// * SG-NPHMC-EM (default E-step, one Alg. 4 block per E-step): ε = 0.05, LP_S = 10, as
///   SG-NPHMC; on the diagonal target with noisy gradients (B = 0.1, variance 2B/ε = 4 per
///   coordinate: the friction −(B/√s)M⁻¹p balances it at s = 1, and s stays within tens of
///   percent of 1 over a block of 0.5 time units); dense: exact (B = 0 is required);
/// * the value-noise configurations (printed and default E-step side by side): Ũ = U +
///   N(0, 2A/ε), A = 1, B = 0, the paper's value-noise model.
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
    let mut factor = vec![0.0; MassBuffer::<f64>::dense_work_len(d)];
    let mut eigen = vec![0.0; 2 * d * d + d];
    let mass = if dense {
        MassBuffer::dense_with_eigen(&mut minv, &mut factor, &mut eigen, d).unwrap()
    } else {
        MassBuffer::diagonal(&mut minv).unwrap()
    };
    let mut theta = target.mean.clone();
    let mut p = vec![0.0; d];
    // The sampler's workspace: 4d for HMC and SG-NPHMC, 2d for SGHMC and SGNHT.
    let mut work = vec![0.0; 4 * d];
    let mut buf = vec![0.0; em_len(d, shape)];
    let mut rng = Pcg64::new(seed as u128, 0xe1);
    let mut noise_rng = Pcg64::new(seed as u128 ^ 0x5151, 0x7);
    let eps: f64 = 0.05;
    // Value noise of variance 2A/ε (A = 1) and gradient noise of variance 2B/ε (B = 0.1) per
    // coordinate: the noise an E-step's corrections −A s q/Q and −(B/√s) M⁻¹p compensate at s = 1
    // (Roychowdhury & Parthasarathy 2017 App. 6.2.2; one ε-step adds ε·N(0, 2A/ε) = N(0, 2Aε) to q).
    let value_noise = matches!(kind, Kind::SgNphmcEmValueNoise | Kind::SgNphmcEmPrinted);
    let (a_noise, b_noise) = match kind {
        _ if value_noise => (1.0, 0.0),
        Kind::SgNphmcEm if !dense => (0.0, 0.1),
        _ => (0.0, 0.0),
    };
    let energy_sd: f64 = (2.0 * a_noise / eps).sqrt();
    let grad_sd: f64 = (2.0 * b_noise / eps).sqrt();
    let mut grad_rng = Pcg64::new(seed as u128 ^ 0x9a9a, 0x3);
    let mut model = Model::new(
        |t: &[f64], gr: &mut [f64]| {
            target.gradient(t, gr);
            if grad_sd > 0.0 {
                for x in gr.iter_mut() {
                    *x += grad_sd * standard_normal_f64(&mut grad_rng);
                }
            }
        },
        |t: &[f64]| target.energy(t) + energy_sd * standard_normal_f64(&mut noise_rng),
    );
    let variant = if kind == Kind::SgNphmcEmPrinted {
        NphmcEStep::Printed
    } else {
        NphmcEStep::Redraw
    };
    let params = |lp: u32| {
        with_m_step(McemParams::new(lp))
            .with_sample_size(size)
            .with_nphmc_e_step(variant)
    };
    macro_rules! em {
        ($smp:expr, $lp:expr, $burn:expr, $per:expr) => {
            em!($smp, $lp, $burn, $per, |_| None)
        };
        ($smp:expr, $lp:expr, $burn:expr, $per:expr, $q:expr) => {{
            let mut em = Mcem::new($smp, params($lp), &mut buf).unwrap();
            // Alg. 2 and 5 initialise p (and q, s = 1) before the loop: p ~ N(0, M), q ~ N(0, Q).
            em.resample_momentum(&mut rng);
            let moments = run_cov(&mut em, &mut model, &mut rng, target, $burn, 50, $per).unwrap();
            Outcome {
                moments,
                inv_mass: em.inverse_mass().to_vec(),
                sample_count: em.sample_count(),
                m_steps: em.m_steps(),
                q_mass: $q(&em),
            }
        }};
    }
    match kind {
        Kind::HmcEm => {
            let prm = HmcParams::new(0.07).with_leapfrog_steps(10);
            let mut smp = Hmc::new(prm, &mut theta, &mut p, &mut work).unwrap();
            smp.set_mass(mass).unwrap();
            // 10⁵ E-steps (proposals) in 50 batches.
            em!(smp, 10, 5_000, 2_000)
        }
        Kind::SghmcEm => {
            let prm = SghmcParams::new(0.01)
                .with_friction(1.0)
                .with_integrator(Integrator::Splitting);
            let mut smp = Sghmc::new(prm, &mut theta, &mut p, &mut work[..2 * d]).unwrap();
            smp.set_mass(mass).unwrap();
            // 10⁶ inner steps (10⁵ E-steps) after 10⁵; the slowest coordinate relaxes in ~10³
            // inner steps, a batch is 2·10⁴.
            em!(smp, 10, 10_000, 2_000)
        }
        Kind::SgnhtEm => {
            let prm = SgnhtParams::new(0.01)
                .with_diffusion(1.0)
                .with_integrator(Integrator::Euler);
            let mut xi = prm.initial_thermostat();
            let mut smp = Sgnht::resume(
                prm,
                &mut theta,
                &mut p,
                std::slice::from_mut(&mut xi),
                &mut work[..2 * d],
            )
            .unwrap();
            smp.set_mass(mass).unwrap();
            em!(smp, 10, 10_000, 2_000)
        }
        Kind::Nphmc => {
            let prm = nphmc_params(eps, 1.0, 0.0, 0.0, 10);
            let mut smp = SgNphmc::new(prm, &mut theta, &mut p, &mut work).unwrap();
            smp.set_mass(mass).unwrap();
            let moments =
                run_cov(&mut smp, &mut model, &mut rng, target, 5_000, 50, 2_000).unwrap();
            Outcome {
                moments,
                inv_mass: smp.mass().inverse_slice().to_vec(),
                sample_count: 0,
                m_steps: 0,
                q_mass: None,
            }
        }
        Kind::SgNphmcEm | Kind::SgNphmcEmValueNoise | Kind::SgNphmcEmPrinted => {
            let prm = nphmc_params(eps, 1.0, a_noise, b_noise, 10);
            let mut smp = SgNphmc::new(prm, &mut theta, &mut p, &mut work).unwrap();
            smp.set_mass(mass).unwrap();
            em!(smp, 10, 10_000, 4_000, |em: &Mcem<
                '_,
                f64,
                SgNphmc<'_, f64>,
            >| Some(
                em.sampler().params().thermostat_mass()
            ))
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
    // SG-NPHMC-EM's Q⁻¹ is blended like a diagonal M⁻¹ entry (same κ_k, bounds and unbiasing)
    // from the stored q, whose law is N(0, Q) at stationarity: the same checks apply to it.
    if let Some(q) = o.q_mass {
        assert!(
            q.is_finite() && (1.0 / BOUNDS.1..=1.0 / BOUNDS.0).contains(&q),
            "{name}: Q = {q} outside the bounds"
        );
        assert!(
            !independent || (0.5..=2.0).contains(&q),
            "{name}: Q = {q} left [0.5, 2]"
        );
    }
    println!(
        "{name}: diag(M⁻¹) = [{}], Q {:?}, S_count {}, M-steps {}",
        diag.iter()
            .map(|x| format!("{x:.3}"))
            .collect::<Vec<_>>()
            .join(", "),
        o.q_mass,
        o.sample_count,
        o.m_steps
    );
}

/// Whether the E-step redraws p (HMC-EM, SGHMC-EM, SG-NPHMC-EM with the default Alg. 4 block;
/// SG-NPHMC learns nothing), so the stored momenta are nearly independent and the factor-2 check
/// applies (to Q too). SGNHT-EM and the printed SG-NPHMC-EM store momenta LP_S·h = 0.1 (resp. 0.5) time units apart without a redraw: strongly
/// autocorrelated (effective sample size a few per batch of 100), and then even the
/// bias-corrected inverse covariance overestimates M⁻¹ (E[Σ̂⁻¹] grows as the effective n
/// approaches d + 2), so theory predicts an upward drift; for them only finiteness, SPD and the
/// bounds are asserted, and the drift is printed.
fn redraws(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::HmcEm | Kind::SghmcEm | Kind::Nphmc | Kind::SgNphmcEm
    )
}

fn size_for(kind: Kind, k: usize) -> SampleSize<f64> {
    // Alternate the adaptive rule (paper-style: from 100, α = 0.25, S_I = 10) and a fixed S_count.
    match (kind, k % 2) {
        (_, 0) => SampleSize::adaptive(100, 0.25, 10).unwrap(),
        _ => SampleSize::fixed(100).unwrap(),
    }
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
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
#[ignore = "statistical tier: cargo test -- --ignored"]
fn em_samplers_on_correlated_target_dense_mass() {
    let target = DenseGaussian::equicorrelated(5, 0.9);
    for (k, kind) in ALL.into_iter().enumerate() {
        let o = sample(kind, &target, true, size_for(kind, k + 1), 600 + k as u64);
        let name = format!("{kind:?} dense, ρ = 0.9");
        check_learned(&name, &o, 5, redraws(kind));
        assert_cov(&name, &o.moments, &target);
    }
}

/// The printed SG-NPHMC-EM (Roychowdhury & Parthasarathy 2017 Alg. 5, [`NphmcEStep::Printed`]: no redraw of p, q or s, H₀
/// re-zeroed every E-step, M and Q learned) is not stationary for θ; the default E-step (one
/// Alg. 4 block) is. Why (`sgmcmc::adapt::NphmcEStep` docs): with the paper's noise terms the
/// invariant density of the App. 6.2 SDE is e^{−H_NP} on (θ, p, s, q), whose θ-marginal
/// φ(U(θ) − H₀) is not e^{−U}.
///
/// Both are run with the same seed in the paper's value-noise configuration (Ũ = U +
/// N(0, 2A/ε), A = 1, ε = 0.05, LP_S = 10, fixed S_count = 100, 2·10⁵ E-steps after 10⁴) on the
/// correlated 5-d target with a dense mass. Asserted:
/// * printed: biased — the mean over the five coordinates of Var θᵢ − 1 exceeds 5 batch-means SE
///   of that mean, bounded by the largest per-coordinate SE (the coordinates are correlated at
///   ρ = 0.9, so no √5 is taken);
/// * default E-step: every mean and covariance entry within 5 SE (`assert_cov`); M⁻¹ and Q only
///   finite, SPD and inside the bounds (with this value noise the stored p/s is overdispersed —
///   the noisy Ũ enters H₀ and q̇, and −A s q/Q balances it only at s = 1 — so M⁻¹ drifts down,
///   to diag 0.40–0.50 here, and Q up to ≈ 96 against the bound 100; with exact values or
///   gradient noise they stay near their start, see the stationarity tests).
///
/// Measured (seed 650): printed Var θᵢ = 2.57–2.75 (SE 0.14; mean excess 1.61 = 11 SE),
/// Cov(θ₀, θⱼ) = 2.49–2.59 against 0.9; default E-step Var θᵢ = 1.02–1.03 (SE 0.027),
/// Cov(θ₀, θⱼ) = 0.93 against 0.9 (an earlier measurement of the printed variant, another seed:
/// Var θ₀ = 3.73).
///
/// On the 10-d diagonal target the printed chain breaks down instead (`ThermostatBreakdown`,
/// s wandering to 5–20 and Q learned down to ≈ 0.07 in an earlier measurement), so it is not run.
#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn printed_sg_nphmc_em_is_biased() {
    let target = DenseGaussian::equicorrelated(5, 0.9);
    let d = target.dim();
    let size = SampleSize::fixed(100).unwrap();
    for kind in [Kind::SgNphmcEmPrinted, Kind::SgNphmcEmValueNoise] {
        let o = sample(kind, &target, true, size, 650);
        let m = &o.moments;
        let vars: Vec<f64> = (0..d).map(|i| m.cov[i * d + i]).collect();
        let ses: Vec<f64> = (0..d).map(|i| m.cov_se[i * d + i]).collect();
        let covs: Vec<f64> = (1..d).map(|i| m.cov[i * d]).collect();
        let excess = vars.iter().map(|v| v - 1.0).sum::<f64>() / d as f64;
        let se = ses.iter().cloned().fold(0.0, f64::max);
        let name = format!("{kind:?} dense, ρ = 0.9");
        println!(
            "{name}: Var θ = {vars:.3?} (SE {ses:.3?}), Cov(θ₀, θⱼ) = {covs:.3?} (target 0.9), mean Var excess {excess:.3}"
        );
        check_learned(&name, &o, d, false);
        if kind == Kind::SgNphmcEmPrinted {
            assert!(
                excess.abs() > 5.0 * se,
                "printed SG-NPHMC-EM looks unbiased: mean Var θ − 1 = {excess:.3}, 5 SE = {:.3}",
                5.0 * se
            );
        } else {
            assert_cov(&name, m, &target);
        }
    }
}

/// The printed SG-NPHMC-EM without noise (A = B = 0, exact Ũ and ∇Ũ) is deterministic
/// Nosé–Hoover dynamics between M-steps, not ergodic on a Gaussian, so no moments are checked;
/// what is asserted is what the wrapper guarantees: 2·10⁴ E-steps run without error on both
/// targets, and M⁻¹ and Q stay finite, SPD and inside the bounds.
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
        let mut factor = vec![0.0; MassBuffer::<f64>::dense_work_len(d)];
        let mass = if dense {
            MassBuffer::dense(&mut minv, &mut factor, d).unwrap()
        } else {
            MassBuffer::diagonal(&mut minv).unwrap()
        };
        let mut theta = target.mean.clone();
        let (mut p, mut work) = (vec![0.0; d], vec![0.0; SgNphmc::<f64>::workspace_len(d)]);
        let mut buf = vec![0.0; em_len(d, shape)];
        let mut rng = Pcg64::new(700 + dense as u128, 0xe1);
        let mut model = Model::new(
            |t: &[f64], gr: &mut [f64]| target.gradient(t, gr),
            |t: &[f64]| target.energy(t),
        );
        let prm = nphmc_params(0.05, 1.0, 0.0, 0.0, 10);
        let mut smp = SgNphmc::new(prm, &mut theta, &mut p, &mut work).unwrap();
        smp.set_mass(mass).unwrap();
        let params = with_m_step(McemParams::new(10))
            .with_sample_size(SampleSize::fixed(100).unwrap())
            .with_nphmc_e_step(NphmcEStep::Printed);
        let mut em = Mcem::new(smp, params, &mut buf).unwrap();
        em.resample_momentum(&mut rng);
        // Deterministic Nosé–Poincaré dynamics can reach a state where the thermostat update
        // has no admissible root: a documented error after which nothing has moved. Whether
        // and when depends on the initial momentum (within 2·10⁴ E-steps: 3 of 10 seeds on the
        // diagonal target before the vectorised noise, 6 of 10 after; once it happens it recurs
        // within a few E-steps even with p redrawn). So the run stops at the first breakdown,
        // if any, and what is checked is what the wrapper guarantees: that error and no other,
        // θ and p untouched by it, and finite, SPD, in-bounds masses from the M-steps done.
        fn before<C: ChainState<f64>>(c: &C) -> (Vec<f64>, Vec<f64>) {
            (c.position().to_vec(), c.momentum().to_vec())
        }
        let mut last = before(&em);
        let mut completed = 0u64;
        let mut observer = |_: u64, em: &mut _, _: &StepStats<f64>| last = before(em);
        let run = em.run(&mut model, &mut rng, 20_000, &mut observer);
        match run {
            Ok(_) => completed = 20_000,
            Err(e) => {
                assert_eq!(
                    e.error,
                    StepError::ThermostatBreakdown,
                    "dense {dense}: {e}"
                );
                assert_eq!(before(&em), last, "a failed E-step changed θ or p");
                completed += e.completed;
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
            q_mass: Some(q_mass),
        };
        assert_eq!(o.m_steps, completed / 100);
        check_learned(
            &format!("SgNphmcEmPrinted noise-free, dense {dense}"),
            &o,
            d,
            false,
        );
    }
}

/// The M-step's input with a known answer: an E-step whose momentum is p ~ N(0, Σ*) from a fixed
/// Σ* = LLᵀ, whatever M is, so that M⁻¹ → Σ*⁻¹. (`EmSampler` is sealed, so a stand-in sampler
/// cannot be wrapped any more; SGNHT-EM is rigged instead.) LP_S = 1 Euler step of SGNHT with
/// h = 1 and no injected noise (A = 0), started from p = 0 and ξ = 0 (reset after every E-step,
/// together with θ), on a "model" that ignores θ and returns the gradient −z with z = Lζ,
/// ζ ~ N(0, I) from its own generator: the kick p′ = p − ξhM⁻¹p − h∇Ũ + 0·ζ is z exactly, for
/// any M, and z is the sequence the stand-in sampler drew from the same seed.
fn fixed_momentum_model(chol: Vec<f64>, d: usize, seed: u128) -> impl FnMut(&[f64], &mut [f64]) {
    let mut rng = Pcg64::new(seed, 3);
    move |_: &[f64], g: &mut [f64]| {
        let z: Vec<f64> = (0..d).map(|_| standard_normal_f64(&mut rng)).collect();
        for i in 0..d {
            let p: f64 = (0..=i).map(|j| chol[i * d + j] * z[j]).sum();
            g[i] = -p;
        }
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
            let mut factor = vec![0.0; MassBuffer::<f64>::dense_work_len(d)];
            let mass = if dense {
                MassBuffer::dense(&mut minv, &mut factor, d).unwrap()
            } else {
                MassBuffer::diagonal(&mut minv).unwrap()
            };
            let (mut theta, mut p, mut xi) = (vec![0.0; d], vec![0.0; d], 0.0);
            let mut work = vec![0.0; Sgnht::<f64>::workspace_len(d)];
            let prm = SgnhtParams::new(1.0)
                .with_diffusion(0.0)
                .with_integrator(Integrator::Euler);
            let mut smp = Sgnht::resume(
                prm,
                &mut theta,
                &mut p,
                std::slice::from_mut(&mut xi),
                &mut work,
            )
            .unwrap();
            smp.set_mass(mass).unwrap();
            let params = McemParams::new(1)
                .with_m_step_schedule(0.0, 1.0)
                .with_shrinkage(0.0)
                .with_precision_bounds(1e-4, 1e4)
                .with_sample_size(SampleSize::fixed(100).unwrap())
                .with_bias_correction(corrected);
            let mut buf = vec![0.0; em_len(d, shape)];
            let mut em = Mcem::new(smp, params, &mut buf).unwrap();
            // The sampler's own (zero-weighted) normals come from `rng`; z from the model's.
            let mut rng = Pcg64::new(900 + dense as u128, 4);
            let mut model = fixed_momentum_model(chol.clone(), d, 900 + dense as u128);
            em.run_with(&mut model, &mut rng, 40_000, |_, em, _| {
                let (theta, p) = em.phase_mut();
                theta.fill(0.0);
                p.fill(0.0);
                em.sampler_mut().set_thermostat(0.0).unwrap();
            })
            .unwrap();
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
    let (mut p, mut work) = (vec![0.0; d], vec![0.0; Sgnht::<f64>::workspace_len(d)]);
    let prm = SgnhtParams::new(0.01)
        .with_diffusion(1.0)
        .with_integrator(Integrator::Splitting);
    let mut xi = prm.initial_thermostat();
    let mut smp = Sgnht::resume(
        prm,
        &mut theta,
        &mut p,
        std::slice::from_mut(&mut xi),
        &mut work,
    )
    .unwrap();
    smp.set_mass(mass).unwrap();
    let size = SampleSize::adaptive(20, 0.25, 3).unwrap();
    let params = with_m_step(McemParams::new(5)).with_sample_size(size);
    let mut buf = vec![0.0; em_len(d, MassShape::Diagonal)];
    let mut em = Mcem::new(smp, params, &mut buf).unwrap();
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
