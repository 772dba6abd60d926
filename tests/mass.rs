//! Tests of `sgmcmc::kinetic::Mass`: draws p ~ N(0, M) have covariance M, ∇K and K against a naive reference, and errors instead of panics.
//!
//! The covariance test uses d = 4, standard deviations (0.5, 1, 2, 4) and correlations
//! 0.9^|i−j| (0.9 between neighbours), 10⁶ draws per float type and constructor. With the
//! mean known to be 0, the estimator Ŝᵢⱼ = (1/n) Σ pᵢpⱼ is unbiased with variance
//! (MᵢᵢMⱼⱼ + Mᵢⱼ²)/n (Isserlis), so each entry must lie within 5 SE = 5·√((MᵢᵢMⱼⱼ + Mᵢⱼ²)/n) of
//! Mᵢⱼ, and each sample mean within 5·√(Mᵢᵢ/n) of 0 (two-sided false-alarm probability
//! 5.7·10⁻⁷ per statistic; 14 statistics per run). `covariance_check_rejects_a_wrong_factor`
//! shows the check fails when the draws use M⁻¹ instead of M.

use rand_core::SeedableRng;
use rand_pcg::Pcg64;
use sgmcmc::kinetic::Mass;
use sgmcmc::linalg::spd_inverse;
use sgmcmc::rng::{fill_standard_normal, fill_step_normals};
use sgmcmc::{Buffer, LayoutError, LinalgError, Real};

const D: usize = 4;
const N: usize = 1_000_000;
const SD: [f64; D] = [0.5, 1.0, 2.0, 4.0];

fn pcg(k: u64) -> Pcg64 {
    Pcg64::seed_from_u64(0x3a55_0000 + k)
}

/// Mᵢⱼ = sdᵢ sdⱼ 0.9^|i−j|.
fn target_mass() -> [f64; D * D] {
    let mut m = [0.0; D * D];
    for i in 0..D {
        for j in 0..D {
            m[i * D + j] = SD[i] * SD[j] * 0.9f64.powi((i as i32 - j as i32).abs());
        }
    }
    m
}

/// Draws n momenta and checks mean and covariance against `m` (f64) entry by entry; returns
/// the largest |z| seen.
fn covariance_z<T: Real>(mass: &Mass<'_, T>, m: &[f64], seed: u64) -> f64 {
    let mut rng = pcg(seed);
    let mut p = [T::ZERO; D];
    let mut sum = [0.0f64; D];
    let mut cross = [0.0f64; D * D];
    for _ in 0..N {
        mass.sample(&mut rng, &mut p);
        for i in 0..D {
            let pi = p[i].to_f64();
            sum[i] += pi;
            for j in 0..=i {
                cross[i * D + j] += pi * p[j].to_f64();
            }
        }
    }
    let n = N as f64;
    let mut worst = 0.0f64;
    for i in 0..D {
        let z = (sum[i] / n) / (m[i * D + i] / n).sqrt();
        worst = worst.max(z.abs());
        for j in 0..=i {
            let (mii, mjj, mij) = (m[i * D + i], m[j * D + j], m[i * D + j]);
            let se = ((mii * mjj + mij * mij) / n).sqrt();
            let z = (cross[i * D + j] / n - mij) / se;
            worst = worst.max(z.abs());
        }
    }
    worst
}

fn dense_covariance<T: Real>(seed: u64) {
    let m = target_mass();
    let m_t: Vec<T> = m.iter().map(|&x| T::from_f64(x)).collect();

    // From the precision (computed here by spd_inverse, in T).
    let mut precision = vec![T::ZERO; D * D];
    spd_inverse(&m_t, D, &mut precision).unwrap();
    let mut factor = vec![T::ZERO; D * D];
    let mass = Mass::dense(&precision, &mut factor, D).unwrap();
    let z = covariance_z(&mass, &m, seed);
    println!("{} dense: max |z| = {z:.3}", core::any::type_name::<T>());
    assert!(z < 5.0, "max |z| = {z}");

    // From M directly.
    let (mut precision2, mut factor2) = (vec![T::ZERO; D * D], vec![T::ZERO; D * D]);
    let mass2 = Mass::dense_from_mass(&m_t, &mut precision2, &mut factor2, D).unwrap();
    assert_eq!(mass2.precision(), Some(&precision[..]));
    let z = covariance_z(&mass2, &m, seed + 1);
    println!(
        "{} dense_from_mass: max |z| = {z:.3}",
        core::any::type_name::<T>()
    );
    assert!(z < 5.0, "max |z| = {z}");
}

#[test]
fn dense_draws_have_covariance_m_f64() {
    dense_covariance::<f64>(0);
}

#[test]
fn dense_draws_have_covariance_m_f32() {
    dense_covariance::<f32>(10);
}

#[test]
fn diagonal_and_identity_draws_have_covariance_m() {
    let inv: [f64; D] = SD.map(|s| 1.0 / (s * s));
    let mut m = [0.0; D * D];
    for i in 0..D {
        m[i * D + i] = SD[i] * SD[i];
    }
    let z = covariance_z(&Mass::diagonal(&inv).unwrap(), &m, 20);
    assert!(z < 5.0, "diagonal: max |z| = {z}");
    let mut eye = [0.0; D * D];
    for i in 0..D {
        eye[i * D + i] = 1.0;
    }
    let z = covariance_z(&Mass::<f32>::identity(), &eye, 21);
    assert!(z < 5.0, "identity: max |z| = {z}");
}

#[test]
fn covariance_check_rejects_a_wrong_factor() {
    // Sampling with M⁻¹ as if it were M: the covariance is then M⁻¹, far from M.
    let m = target_mass();
    let mut factor = [0.0; D * D];
    let wrong = Mass::dense(&m, &mut factor, D).unwrap();
    let z = covariance_z(&wrong, &m, 30);
    assert!(z > 5.0, "max |z| = {z}");
}

#[test]
fn gradient_and_energy_match_naive_reference() {
    let m = target_mass();
    let mut precision = [0.0; D * D];
    spd_inverse(&m, D, &mut precision).unwrap();
    let mut factor = [0.0; D * D];
    let mass = Mass::dense(&precision, &mut factor, D).unwrap();
    let mut rng = pcg(40);
    for _ in 0..100 {
        let mut p = [0.0f64; D];
        fill_standard_normal(&mut rng, &mut p);
        let mut g = [0.0; D];
        mass.kinetic_gradient(&p, &mut g);
        let mut energy = 0.0;
        for i in 0..D {
            let gi: f64 = (0..D).map(|j| precision[i * D + j] * p[j]).sum();
            assert!((g[i] - gi).abs() < 1e-13 * gi.abs().max(1.0));
            energy += 0.5 * p[i] * gi;
        }
        assert!((mass.energy(&p) - energy).abs() < 1e-13 * energy.max(1.0));
        // The factor reproduces the precision: CCᵀ = M⁻¹.
        let c = mass.factor().unwrap();
        for i in 0..D {
            for j in 0..D {
                let cct: f64 = (0..D).map(|k| c[i * D + k] * c[j * D + k]).sum();
                assert!((cct - precision[i * D + j]).abs() < 1e-13);
            }
        }
    }
    // Diagonal and identity.
    let inv = [1.0f32, 4.0, 0.25, 2.0];
    let diag = Mass::diagonal(&inv).unwrap();
    let p = [1.0f32, -1.0, 2.0, 0.5];
    let mut g = [0.0f32; D];
    diag.kinetic_gradient(&p, &mut g);
    assert_eq!(g, [1.0, -4.0, 0.5, 1.0]);
    assert_eq!(diag.energy(&p), 0.5 * (1.0 + 4.0 + 1.0 + 0.5));
    Mass::<f32>::identity().kinetic_gradient(&p, &mut g);
    assert_eq!(g, p);
    assert_eq!(Mass::<f32>::identity().energy(&p), 0.5 * 6.25);
}

#[test]
fn sample_draws_exactly_d_normals_in_order() {
    // The identity draw is the samplers' normal fill itself; the dense draw uses the same d
    // normals.
    let (mut a, mut b) = (pcg(50), pcg(50));
    let mut p = [0.0f64; D];
    let mut z = [0.0f64; D];
    Mass::identity().sample(&mut a, &mut p);
    fill_step_normals(&mut b, &mut z);
    assert_eq!(p, z);
    let m = target_mass();
    let (mut precision, mut factor) = ([0.0; D * D], [0.0; D * D]);
    let mass = Mass::dense_from_mass(&m, &mut precision, &mut factor, D).unwrap();
    mass.sample(&mut a, &mut p);
    fill_step_normals(&mut b, &mut z);
    mass.scale_standard_normal(&mut z);
    assert_eq!(p, z);
}

#[test]
fn errors_and_wrong_lengths_do_not_panic() {
    use LinalgError::*;
    assert_eq!(
        Mass::diagonal(&[1.0f64, f64::NAN]),
        Err(NonFinite { index: 1 })
    );
    assert_eq!(
        Mass::diagonal(&[1.0f64, -2.0]),
        Err(NotPositiveDefinite { pivot: 1 })
    );
    let mut f = [0.0f64; 4];
    assert_eq!(
        Mass::dense(&[1.0, 0.5, 0.4, 1.0], &mut f, 2),
        Err(NotSymmetric { row: 1, col: 0 })
    );
    assert_eq!(
        Mass::dense(&[1.0, 0.0, 0.0, f64::INFINITY], &mut f, 2),
        Err(NonFinite { index: 3 })
    );
    assert_eq!(
        Mass::dense(&[1.0, 2.0, 2.0, 1.0], &mut f, 2),
        Err(NotPositiveDefinite { pivot: 1 })
    );
    assert_eq!(
        Mass::dense(&[1.0, 0.0, 0.0, 1.0], &mut [0.0; 3], 2),
        Err(DimensionMismatch {
            expected: 4,
            found: 3
        })
    );
    assert_eq!(
        Mass::dense(&[1.0, 0.0, 0.0], &mut f, 2),
        Err(DimensionMismatch {
            expected: 4,
            found: 3
        })
    );
    let (mut pr, mut fa) = ([0.0f64; 4], [0.0f64; 4]);
    assert_eq!(
        Mass::dense_from_mass(&[1.0, 2.0, 2.0, 1.0], &mut pr, &mut fa, 2),
        Err(NotPositiveDefinite { pivot: 1 })
    );

    // check_dim, dim, and wrong lengths at run time: NaN, nothing drawn.
    let eye = [1.0f64, 0.0, 0.0, 1.0];
    let mut f = [0.0; 4];
    let mass = Mass::dense(&eye, &mut f, 2).unwrap();
    assert_eq!(mass.dim(), Some(2));
    assert_eq!(Mass::<f64>::identity().dim(), None);
    assert!(Mass::<f64>::identity().check_dim(7).is_ok());
    assert_eq!(
        mass.check_dim(3),
        Err(LayoutError::LengthMismatch {
            buffer: Buffer::InverseMass,
            expected: 3,
            found: 2
        })
    );
    assert!(mass.energy(&[1.0; 3]).is_nan());
    let mut out = [0.0; 3];
    mass.kinetic_gradient(&[1.0; 3], &mut out);
    assert!(out.iter().all(|x| x.is_nan()));
    let mut out = [0.0; 2];
    Mass::<f64>::identity().kinetic_gradient(&[1.0; 3], &mut out);
    assert!(out.iter().all(|x| x.is_nan()));
    let (mut a, b) = (pcg(60), pcg(60));
    let mut out = [0.0; 5];
    mass.sample(&mut a, &mut out);
    assert!(out.iter().all(|x| x.is_nan()));
    assert_eq!(a, b, "a rejected sample must not draw");
    let diag = Mass::diagonal(&[1.0f32, 2.0]).unwrap();
    assert!(diag.energy(&[1.0]).is_nan());

    // Dimension 0 is accepted and harmless.
    let mut empty: [f64; 0] = [];
    let zero = Mass::dense(&[], &mut empty, 0).unwrap();
    assert_eq!(zero.energy(&[]), 0.0);
}
