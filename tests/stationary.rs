//! Stationary distributions of every sampler × integrator × float type on 10-d Gaussians, with and without gradient noise.
//!
//! Fixed seeds; every tolerance is a multiple of a Monte Carlo standard error estimated from the
//! chain itself (batch means, see `common::run`). Step sizes are chosen so the discretisation
//! bias is below one standard error (stated beside each choice).

use crate::common;

use common::{Gaussian, Moments, Z, assert_moments, run};
use rand_pcg::Pcg64;
use sgmcmc::prelude::{
    Hmc, HmcParams, Integrator, MSgnht, MassBuffer, Model, Real, Sghmc, SghmcParams, Sgld,
    SgldParams, Sgnht, SgnhtParams,
};
use sgmcmc::rng::standard_normal_f64;

const DIM: usize = 10;

#[derive(Clone, Copy, Debug)]
enum Kind {
    Sgld,
    Sghmc(Integrator),
    /// SGHMC with the noise estimate B̂ set to the true gradient-noise level B.
    SghmcCorrected(Integrator),
    Sgnht(Integrator),
    MSgnht(Integrator),
    Hmc,
}

const ALL: [Kind; 8] = [
    Kind::Sgld,
    Kind::Sghmc(Integrator::Euler),
    Kind::Sghmc(Integrator::Splitting),
    Kind::Sgnht(Integrator::Euler),
    Kind::Sgnht(Integrator::Splitting),
    Kind::MSgnht(Integrator::Euler),
    Kind::MSgnht(Integrator::Splitting),
    Kind::Hmc,
];

/// Step sizes. SGLD's Euler–Maruyama has a relative variance bias of ω²h/2 on a coordinate of
/// precision ω² (0.5 % for ω² = 10 at h = 10⁻³); the SDE samplers' Euler bias is about Ah/2 +
/// O(ω²h²) (≈ 0.5 % at h = 0.01, A = 1) and splitting's O(h²). The batch-means standard errors
/// of the variances below are 1–10 %, so each bias is under one standard error.
const H_SGLD: f64 = 1e-3;
const H_SDE: f64 = 0.01;
const FRICTION: f64 = 1.0;

/// Runs one sampler on `target` with gradient noise of variance 2B/h per coordinate (B = `noise`).
fn sample<T: Real>(kind: Kind, target: &Gaussian, noise: f64, seed: u64) -> Moments {
    let n = target.mean.len();
    let z = T::ZERO;
    let (mut theta, mut p, mut work) = (vec![z; n], vec![z; n], vec![z; 2 * n]);
    let mut rng = Pcg64::new(seed as u128, 0x5eed);
    let mut noise_rng = Pcg64::new(seed as u128 ^ 0xdead_beef, 0x0150);
    let h = match kind {
        Kind::Sgld => H_SGLD,
        _ => H_SDE,
    };
    let noise_sd = (2.0 * noise / h).sqrt();
    let mut model = |t: &[T], grad: &mut [T]| {
        target.gradient(t, grad);
        if noise > 0.0 {
            for x in grad.iter_mut() {
                *x += T::from_f64(noise_sd * standard_normal_f64(&mut noise_rng));
            }
        }
    };
    // SDE samplers: 10⁶ steps after 10⁵ burn-in, in 50 batches of 2·10⁴ steps, each many times
    // the slowest coordinate's autocorrelation time (≈ σ²_max · ξ / h ≈ 2·10³ steps).
    let (burn, batches, per) = (100_000, 50, 20_000);
    let hh = T::from_f64(h);
    let a = T::from_f64(FRICTION);
    let result = match kind {
        Kind::Sgld => {
            // τ of the slowest coordinate ≈ σ²_max/h = 10⁴ steps: 4·10⁶ steps in batches of 8·10⁴.
            let mut smp = Sgld::new(SgldParams::new(hh), &mut theta, &mut work).unwrap();
            run(&mut smp, &mut model, &mut rng, target, 200_000, 50, 80_000)
        }
        Kind::Sghmc(i) => {
            let prm = SghmcParams::new(hh).with_friction(a).with_integrator(i);
            let mut smp = Sghmc::new(prm, &mut theta, &mut p, &mut work).unwrap();
            run(&mut smp, &mut model, &mut rng, target, burn, batches, per)
        }
        Kind::SghmcCorrected(i) => {
            let prm = SghmcParams::new(hh)
                .with_friction(a + T::from_f64(noise))
                .with_noise_estimate(T::from_f64(noise))
                .with_integrator(i);
            let mut smp = Sghmc::new(prm, &mut theta, &mut p, &mut work).unwrap();
            run(&mut smp, &mut model, &mut rng, target, burn, batches, per)
        }
        Kind::Sgnht(i) => {
            let prm = SgnhtParams::new(hh).with_diffusion(a).with_integrator(i);
            let mut xi = prm.initial_thermostat();
            let mut smp = Sgnht::resume(
                prm,
                &mut theta,
                &mut p,
                std::slice::from_mut(&mut xi),
                &mut work,
            )
            .unwrap();
            run(&mut smp, &mut model, &mut rng, target, burn, batches, per)
        }
        Kind::MSgnht(i) => {
            let prm = SgnhtParams::new(hh).with_diffusion(a).with_integrator(i);
            let mut xi = vec![prm.initial_thermostat(); n];
            let mut work = vec![z; 3 * n];
            let mut smp = MSgnht::resume(prm, &mut theta, &mut p, &mut xi, &mut work).unwrap();
            run(&mut smp, &mut model, &mut rng, target, burn, batches, per)
        }
        Kind::Hmc => {
            // Exact sampler; the diagonal mass M⁻¹ = diag(σ²) makes every coordinate a unit
            // Gaussian in the leapfrog's eyes, so ε = 0.25, L = 8 mixes all of them in a few
            // proposals. 10⁵ proposals in 50 batches.
            let inv_mass: Vec<T> = target.var.iter().map(|&v| T::from_f64(v)).collect();
            let mut hmc_model = Model::new(
                |t: &[T], g: &mut [T]| target.gradient(t, g),
                |t: &[T]| target.energy(t),
            );
            let prm = HmcParams::new(T::from_f64(0.25)).with_leapfrog_steps(8);
            let mut hmc_work = vec![z; 4 * n];
            let mut smp = Hmc::new(prm, &mut theta, &mut p, &mut hmc_work).unwrap();
            smp.set_mass(MassBuffer::fixed_diagonal(&inv_mass).unwrap())
                .unwrap();
            run(&mut smp, &mut hmc_model, &mut rng, target, 2_000, 50, 2_000)
        }
    };
    result.unwrap_or_else(|e| panic!("{kind:?}: {e}"))
}

/// Mean kinetic temperature within 1 ± 0.05 (the bound; its Monte Carlo error here is
/// below 0.005, and the Euler schemes' bias 1/(1 − Ah/2) − 1 ≈ 0.005).
fn assert_temperature(name: &str, kind: Kind, m: &Moments) {
    if !matches!(kind, Kind::Sgld) {
        assert!(
            (m.temperature - 1.0).abs() < 0.05,
            "{name}: kinetic temperature {:.4} not within 1 ± 0.05",
            m.temperature
        );
    }
}

fn check_all<T: Real>(target: &Gaussian, label: &str, seed: u64) {
    for (k, kind) in ALL.into_iter().enumerate() {
        let name = format!("{label} {} {kind:?}", core::any::type_name::<T>());
        let m = sample::<T>(kind, target, 0.0, seed + k as u64);
        assert_moments(&name, &m, target);
        assert_temperature(&name, kind, &m);
        eprintln!(
            "{name}: T_kin {:.4}, max |Δmean|/SE {:.2}, max |Δvar|/SE {:.2}",
            m.temperature,
            max_z(&m.mean, &target.mean, &m.mean_se),
            max_z(&m.var, &target.var, &m.var_se)
        );
    }
}

fn max_z(est: &[f64], truth: &[f64], se: &[f64]) -> f64 {
    est.iter()
        .zip(truth)
        .zip(se)
        .map(|((e, t), s)| (e - t).abs() / s)
        .fold(0.0, f64::max)
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn standard_gaussian_f64() {
    check_all::<f64>(&Gaussian::standard(DIM), "N(0, I)", 100);
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn standard_gaussian_f32() {
    check_all::<f32>(&Gaussian::standard(DIM), "N(0, I)", 200);
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn anisotropic_gaussian_f64() {
    check_all::<f64>(&Gaussian::anisotropic(DIM), "N(μ, diag(0.1..10))", 300);
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn anisotropic_gaussian_f32() {
    check_all::<f32>(&Gaussian::anisotropic(DIM), "N(μ, diag(0.1..10))", 400);
}

/// Gradient noise N(0, 2B/h) per coordinate, B = 1 (Ding et al. 2014 §3): the thermostats absorb it.
fn check_noisy<T: Real>(target: &Gaussian, label: &str, seed: u64) {
    const B: f64 = 1.0;
    for (k, kind) in [
        Kind::Sgnht(Integrator::Euler),
        Kind::Sgnht(Integrator::Splitting),
        Kind::MSgnht(Integrator::Euler),
        Kind::MSgnht(Integrator::Splitting),
        Kind::SghmcCorrected(Integrator::Euler),
        Kind::SghmcCorrected(Integrator::Splitting),
    ]
    .into_iter()
    .enumerate()
    {
        let name = format!("{label} B = {B} {} {kind:?}", core::any::type_name::<T>());
        let m = sample::<T>(kind, target, B, seed + k as u64);
        assert_moments(&name, &m, target);
        assert_temperature(&name, kind, &m);
        if let Kind::Sgnht(_) | Kind::MSgnht(_) = kind {
            // ξ settles at A + B (Ding et al. 2014 §3 and App. B): its time average has a Monte Carlo error
            // well below 0.05 over 10⁶ steps.
            assert!(
                (m.thermostat - (FRICTION + B)).abs() < 0.1,
                "{name}: mean ξ {:.3}, expected A + B = {}",
                m.thermostat,
                FRICTION + B
            );
        }
        eprintln!(
            "{name}: T_kin {:.4}, mean ξ {:.3}",
            m.temperature, m.thermostat
        );
    }
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn noisy_gradient_thermostats_f64() {
    check_noisy::<f64>(&Gaussian::standard(DIM), "N(0, I)", 500);
    check_noisy::<f64>(&Gaussian::anisotropic(DIM), "N(μ, diag(0.1..10))", 600);
}

#[test]
#[ignore = "statistical tier: cargo test -- --ignored"]
fn noisy_gradient_thermostats_f32() {
    check_noisy::<f32>(&Gaussian::anisotropic(DIM), "N(μ, diag(0.1..10))", 700);
}

/// SGHMC without B̂ under gradient noise B heats up: its momentum equilibrates at temperature
/// (A + B)/A = 2 for A = B = 1 (Ding et al. 2014 App. D.2) instead of 1, and θ's variance inflates with it.
/// This is the failure the thermostats exist to fix.
#[test]
fn sghmc_without_noise_estimate_drifts() {
    let target = Gaussian::standard(DIM);
    for (k, i) in [Integrator::Euler, Integrator::Splitting]
        .into_iter()
        .enumerate()
    {
        let m = sample::<f64>(Kind::Sghmc(i), &target, 1.0, 800 + k as u64);
        eprintln!("SGHMC {i:?} under noise: T_kin {:.4}", m.temperature);
        assert!(
            (m.temperature - 2.0).abs() < 0.1,
            "SGHMC {i:?}: temperature {:.4}, expected ≈ (A + B)/A = 2",
            m.temperature
        );
        // θ is sampled at temperature ≈ 2 too: every coordinate's variance is far above 1.
        for (v, se) in m.var.iter().zip(&m.var_se) {
            assert!(
                v - 1.0 > Z * se,
                "SGHMC {i:?}: variance {v:.3} not inflated"
            );
        }
    }
}
