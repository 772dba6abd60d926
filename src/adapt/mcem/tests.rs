//! Tests of the MCEM building blocks (Roychowdhury & Parthasarathy 2017, §3).
//!
//! Welford statistics against a two-pass reference, the M-step's SPD and eigenvalue-bound
//! guarantees under adversarial samples (proptest), convergence of the iterated M-step to the
//! (inverse-Wishart-biased) precision with a Monte-Carlo tolerance, the Poisson subsampling
//! offsets and the E-step sample-size rule.

#![allow(clippy::needless_range_loop)]

use super::m_step::{MStep, MStepParams};
use super::moments::MomentStats;
use super::sample_size::{PoissonOffsets, PostMStepQ, SampleSize, TestStats, z_critical};
use super::test_function::{hmc_test_function, sgnht_test_function};
use crate::error::StepError;
use crate::kinetic::Mass;
use crate::linalg::cholesky_in_place;
use crate::real::Real;
use crate::rng::standard_normal_f64;
use crate::{LinalgError, Param, ParamError};
use proptest::prelude::*;
use rand_core::SeedableRng;
use rand_pcg::Pcg64;
use std::vec;
use std::vec::Vec;

/// The M-step parameters (k₀, α, λ, m_min, m_max), validated.
fn mstep_params<T: Real>(
    offset: T,
    exponent: T,
    shrinkage: T,
    m_min: T,
    m_max: T,
) -> Result<MStepParams<T>, ParamError> {
    let p = MStepParams::new()
        .with_offset(offset)
        .with_exponent(exponent)
        .with_shrinkage(shrinkage)
        .with_bounds(m_min, m_max);
    p.validate().map(|()| p)
}

fn pcg(k: u64) -> Pcg64 {
    Pcg64::seed_from_u64(0x4ce3_0000 + k)
}

/// Two-pass mean and co-moment in f64.
fn two_pass(samples: &[Vec<f64>], d: usize) -> (Vec<f64>, Vec<f64>) {
    let n = samples.len() as f64;
    let mut mean = vec![0.0; d];
    for s in samples {
        for i in 0..d {
            mean[i] += s[i] / n;
        }
    }
    let mut c = vec![0.0; d * d];
    for s in samples {
        for i in 0..d {
            for j in 0..d {
                c[i * d + j] += (s[i] - mean[i]) * (s[j] - mean[j]);
            }
        }
    }
    (mean, c)
}

fn random_samples(rng: &mut Pcg64, n: usize, d: usize, offset: f64) -> Vec<Vec<f64>> {
    (0..n)
        .map(|_| {
            let z: Vec<f64> = (0..d).map(|_| standard_normal_f64(rng)).collect();
            // Correlated, with different scales and a common offset.
            (0..d)
                .map(|i| {
                    offset + (i as f64 + 1.0) * z[i] + if i > 0 { 0.7 * z[i - 1] } else { 0.0 }
                })
                .collect()
        })
        .collect()
}

#[test]
fn welford_matches_two_pass_f64() {
    let (d, n) = (5, 1000);
    let samples = random_samples(&mut pcg(1), n, d, 100.0);
    let (mean_ref, c_ref) = two_pass(&samples, d);
    let (mut mean, mut c) = (vec![0.0f64; d], vec![0.0f64; d * d]);
    let mut stats = MomentStats::dense(&mut mean, &mut c).unwrap();
    for s in &samples {
        stats.push(s).unwrap();
    }
    assert_eq!(stats.count(), n as u64);
    for i in 0..d {
        assert!((stats.mean()[i] - mean_ref[i]).abs() < 1e-11 * 100.0);
        for j in 0..d {
            let (a, b) = (stats.comoment()[i * d + j], c_ref[i * d + j]);
            assert!((a - b).abs() < 1e-10 * n as f64, "({i},{j}) {a} vs {b}");
            assert_eq!(a, stats.comoment()[j * d + i], "exact symmetry");
        }
    }
    // Diagonal statistics: the diagonal of the dense co-moment.
    let (mut mean_d, mut c_d) = (vec![0.0f64; d], vec![0.0f64; d]);
    let mut diag = MomentStats::diagonal(&mut mean_d, &mut c_d).unwrap();
    for s in &samples {
        diag.push(s).unwrap();
    }
    for i in 0..d {
        assert!((diag.comoment()[i] - c_ref[i * d + i]).abs() < 1e-10 * n as f64);
    }
}

#[test]
fn welford_matches_two_pass_f32() {
    let (d, n) = (4, 2000);
    let samples = random_samples(&mut pcg(2), n, d, 10.0);
    let (mean_ref, c_ref) = two_pass(&samples, d);
    let (mut mean, mut c) = (vec![0.0f32; d], vec![0.0f32; d * d]);
    let mut stats = MomentStats::dense(&mut mean, &mut c).unwrap();
    for s in &samples {
        let p: Vec<f32> = s.iter().map(|&x| x as f32).collect();
        stats.push(&p).unwrap();
    }
    for i in 0..d {
        assert!((stats.mean()[i] as f64 - mean_ref[i]).abs() < 1e-4 * 10.0);
        for j in 0..d {
            let scale = (c_ref[i * d + i] * c_ref[j * d + j]).sqrt();
            let err = (stats.comoment()[i * d + j] as f64 - c_ref[i * d + j]).abs();
            assert!(err < 1e-4 * scale, "({i},{j}) err {err} scale {scale}");
        }
    }
}

#[test]
fn push_rejects_bad_samples_and_m_step_errors_leave_state() {
    let (mut mean, mut c) = ([0.0f64; 2], [0.0f64; 4]);
    let mut stats = MomentStats::dense(&mut mean, &mut c).unwrap();
    assert_eq!(
        stats.push(&[1.0, f64::NAN]),
        Err(LinalgError::NonFinite { index: 1 })
    );
    assert!(matches!(
        stats.push(&[1.0]),
        Err(LinalgError::DimensionMismatch { .. })
    ));
    assert_eq!(stats.count(), 0);
    stats.push(&[1.0, 2.0]).unwrap();
    let mut m_step = MStep::new(mstep_params(0.0, 1.0, 0.1, 1e-2, 1e2).unwrap());
    let mut inv = [1.0, 0.0, 0.0, 1.0];
    let mut scratch = [0.0; 4];
    assert_eq!(
        m_step.update(&mut stats, &mut inv, &mut scratch),
        Err(StepError::TooFewMomentumSamples { count: 1 })
    );
    assert_eq!(stats.count(), 1);
    assert_eq!(inv, [1.0, 0.0, 0.0, 1.0]);
    assert!(matches!(
        m_step.update(&mut stats, &mut inv[..3], &mut scratch),
        Err(StepError::MassLayout(_))
    ));
    let mut asym = [1.0, 0.5, 0.0, 1.0];
    stats.push(&[0.0, 1.0]).unwrap();
    assert!(matches!(
        m_step.update(&mut stats, &mut asym, &mut scratch),
        Err(StepError::MassLayout(LinalgError::NotSymmetric { .. }))
    ));
    assert_eq!(m_step.steps(), 0);
    assert!(m_step.update(&mut stats, &mut inv, &mut scratch).is_ok());
    assert_eq!(m_step.steps(), 1);
    assert_eq!(stats.count(), 0);
}

#[test]
fn params_are_validated() {
    let ok = |o: f64, a: f64, l: f64, lo: f64, hi: f64| mstep_params(o, a, l, lo, hi);
    assert!(ok(0.0, 1.0, 0.0, 1.0, 1.0).is_ok());
    assert_eq!(
        ok(-1.0, 1.0, 0.0, 1.0, 2.0),
        Err(ParamError::OutOfRange(Param::MStepOffset))
    );
    assert_eq!(
        ok(0.0, 1.1, 0.0, 1.0, 2.0),
        Err(ParamError::OutOfRange(Param::MStepExponent))
    );
    assert_eq!(
        ok(0.0, 0.5, 0.0, 1.0, 2.0),
        Err(ParamError::OutOfRange(Param::MStepExponent))
    );
    assert_eq!(
        ok(0.0, 1.0, 1.5, 1.0, 2.0),
        Err(ParamError::OutOfRange(Param::Shrinkage))
    );
    assert_eq!(
        ok(0.0, 1.0, 0.0, 2.0, 1.0),
        Err(ParamError::OutOfRange(Param::PrecisionBounds))
    );
    assert_eq!(
        ok(0.0, 1.0, 0.0, 0.0, 1.0),
        Err(ParamError::OutOfRange(Param::PrecisionBounds))
    );
    assert_eq!(
        ok(0.0, 1.0, 0.0, 1.0, f64::INFINITY),
        Err(ParamError::NonFinite(Param::PrecisionBounds))
    );
    assert_eq!(
        ok(f64::NAN, 1.0, 0.0, 1.0, 2.0),
        Err(ParamError::NonFinite(Param::MStepOffset))
    );
    // κ_k = (k + k₀)^−α: in (0, 1], decreasing, Σκ = ∞ and Σκ² < ∞ for α ∈ (½, 1].
    let p = ok(2.0, 0.75, 0.0, 1.0, 2.0).unwrap();
    assert!((p.kappa(1) - 3f64.powf(-0.75)).abs() < 1e-15);
    assert!((1..100).all(|k| p.kappa(k + 1) < p.kappa(k) && p.kappa(k) <= 1.0));
    assert_eq!(
        PoissonOffsets::new(0.5f64, 1.0),
        Err(ParamError::OutOfRange(Param::SubsampleRate))
    );
    assert_eq!(
        PoissonOffsets::new(1.0f64, 0.0),
        Err(ParamError::OutOfRange(Param::SubsampleExponent))
    );
    assert_eq!(
        SampleSize::<f64>::fixed(1),
        Err(ParamError::OutOfRange(Param::SampleCount))
    );
    assert_eq!(
        SampleSize::adaptive(10, 1.0f64, 3),
        Err(ParamError::OutOfRange(Param::ConfidenceLevel))
    );
    assert_eq!(
        SampleSize::adaptive(10, 0.25f64, 0),
        Err(ParamError::OutOfRange(Param::SampleGrowth))
    );
}

/// Whether the symmetric `a` (d × d) minus `shift`·I is positive definite, by Cholesky.
fn pd_after_shift(a: &[f64], d: usize, shift: f64, negate: bool) -> bool {
    let mut b: Vec<f64> = a.iter().map(|&x| if negate { -x } else { x }).collect();
    for i in 0..d {
        b[i * d + i] -= shift;
    }
    cholesky_in_place(&mut b, d).is_ok()
}

/// Adversarial batches: kind 0 Gaussian at scale 10^e, 1 collinear, 2 one repeated sample,
/// 3 per-coordinate scales 10^±e mixed, 4 collinear plus a constant offset.
fn adversarial(kind: u8, e: i32, d: usize, n: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = pcg(1000 + seed);
    let s = 10f64.powi(e);
    let v: Vec<f64> = (0..d).map(|_| standard_normal_f64(&mut rng)).collect();
    let r: Vec<f64> = (0..d).map(|_| standard_normal_f64(&mut rng) * s).collect();
    (0..n)
        .map(|_| match kind {
            0 => (0..d).map(|_| s * standard_normal_f64(&mut rng)).collect(),
            1 => {
                let c = s * standard_normal_f64(&mut rng);
                v.iter().map(|&x| c * x).collect()
            }
            2 => r.clone(),
            3 => (0..d)
                .map(|i| {
                    let sc = if i % 2 == 0 { s } else { 1.0 / s };
                    sc * standard_normal_f64(&mut rng)
                })
                .collect(),
            _ => {
                let c = standard_normal_f64(&mut rng);
                v.iter().map(|&x| s + c * x).collect()
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn m_step_keeps_precision_spd_and_bounded(
        kind in 0u8..5,
        e in -150i32..=150,
        d in 1usize..=16,
        n in 2usize..=40,
        lambda in prop_oneof![Just(0.0f64), Just(1.0f64), 0.0f64..=1.0],
        offset in 0.0f64..5.0,
        seed in 0u64..1_000_000,
    ) {
        let (m_min, m_max) = (1e-2, 1e2);
        let params = mstep_params(offset, 0.75, lambda, m_min, m_max).unwrap();
        let mut dense_step = MStep::new(params);
        let mut diag_step = MStep::new(params);
        let mut inv: Vec<f64> = (0..d * d).map(|k| if k % (d + 1) == 0 { 1.0 } else { 0.0 }).collect();
        let mut inv_diag = vec![1.0f64; d];
        let mut scratch = vec![0.0f64; d * d];
        let (mut mean, mut c) = (vec![0.0f64; d], vec![0.0f64; d * d]);
        let (mut mean_d, mut c_d) = (vec![0.0f64; d], vec![0.0f64; d]);
        for batch in 0..3u64 {
            let samples = adversarial(kind, e, d, n, seed.wrapping_add(batch));
            {
                let mut stats = MomentStats::dense(&mut mean, &mut c).unwrap();
                for s in &samples { stats.push(s).unwrap(); }
                dense_step.update(&mut stats, &mut inv, &mut scratch).unwrap();
            }
            {
                let mut stats = MomentStats::diagonal(&mut mean_d, &mut c_d).unwrap();
                for s in &samples { stats.push(s).unwrap(); }
                diag_step.update(&mut stats, &mut inv_diag, &mut []).unwrap();
            }
            // Dense: symmetric, factorable, and m_min(1 − δ) I ≤ M⁻¹ ≤ m_max(1 + δ) I with δ
            // the documented rounding slack (d ε m_max/m_min ≈ 4e-11 at d = 16; δ = 1e-9).
            for i in 0..d { for j in 0..d { prop_assert_eq!(inv[i * d + j], inv[j * d + i]); } }
            let mut f = inv.clone();
            prop_assert!(cholesky_in_place(&mut f, d).is_ok());
            prop_assert!(pd_after_shift(&inv, d, m_min * (1.0 - 1e-9), false));
            prop_assert!(pd_after_shift(&inv, d, -m_max * (1.0 + 1e-9), true));
            prop_assert!(Mass::dense(&inv, &mut f, d).is_ok());
            // Diagonal: exactly within the bounds.
            prop_assert!(inv_diag.iter().all(|&x| (m_min..=m_max).contains(&x)));
        }
    }

    #[test]
    fn m_step_f32_keeps_precision_spd_and_bounded(
        kind in 0u8..5,
        e in -15i32..=15,
        d in 1usize..=16,
        n in 2usize..=30,
        lambda in 0.0f32..=1.0,
        seed in 0u64..1_000_000,
    ) {
        let (m_min, m_max) = (1e-2f32, 1e2f32);
        let mut step = MStep::new(mstep_params(0.0f32, 1.0, lambda, m_min, m_max).unwrap());
        let mut inv: Vec<f32> = (0..d * d).map(|k| if k % (d + 1) == 0 { 1.0 } else { 0.0 }).collect();
        let mut scratch = vec![0.0f32; d * d];
        let (mut mean, mut c) = (vec![0.0f32; d], vec![0.0f32; d * d]);
        for batch in 0..2u64 {
            let samples = adversarial(kind, e, d, n, seed.wrapping_add(batch));
            let mut stats = MomentStats::dense(&mut mean, &mut c).unwrap();
            for s in &samples {
                let p: Vec<f32> = s.iter().map(|&x| x as f32).collect();
                stats.push(&p).unwrap();
            }
            step.update(&mut stats, &mut inv, &mut scratch).unwrap();
            let inv64: Vec<f64> = inv.iter().map(|&x| x as f64).collect();
            // f32 slack: d ε m_max/m_min ≈ 2e-2 at d = 16; δ = 5e-2.
            prop_assert!(pd_after_shift(&inv64, d, m_min as f64 * (1.0 - 5e-2), false));
            prop_assert!(pd_after_shift(&inv64, d, -(m_max as f64) * (1.0 + 5e-2), true));
            let mut f = inv.clone();
            prop_assert!(cholesky_in_place(&mut f, d).is_ok());
        }
    }
}

/// p ~ N(0, M_true), batches of S, κ_k = 1/k (α = 1, k₀ = 0: the iterate is the average of the
/// batch estimates), no shrinkage, bounds that never bind. For iid Gaussian p the inverse
/// sample covariance of a batch of S has mean c·M_true⁻¹ with c = (S − 1)/(S − d − 2) (dense;
/// inverse Wishart) or (S − 1)/(S − 3) (diagonal, per coordinate), and asymptotic variance
/// (PᵢᵢPⱼⱼ + Pᵢⱼ²)/S per entry (P = M_true⁻¹); after K batches the average has that over K, and
/// each entry must lie within 5 SE of c·Pᵢⱼ. The bias c − 1 (4% at S = 100, d = 3) is what the
/// paper's plain inverse-covariance estimate converges to; it shrinks as S_count grows.
#[test]
fn iterated_m_step_converges_to_the_precision() {
    const D: usize = 3;
    let m_true = [2.0, 0.8, 0.3, 0.8, 1.0, 0.2, 0.3, 0.2, 0.5];
    let (mut precision, mut factor) = ([0.0; D * D], [0.0; D * D]);
    let mass = Mass::dense_from_mass(&m_true, &mut precision, &mut factor, D).unwrap();
    let p_true = mass.precision().unwrap().to_vec();
    let (s, k_batches) = (100usize, 400usize);
    let params = mstep_params(0.0, 1.0, 0.0, 1e-4, 1e4).unwrap();
    let mut dense_step = MStep::new(params);
    let mut diag_step = MStep::new(params);
    let mut inv = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let mut inv_diag = [1.0; D];
    let mut scratch = [0.0; D * D];
    let (mut mean, mut c, mut mean_d, mut c_d) = ([0.0; D], [0.0; D * D], [0.0; D], [0.0; D]);
    let mut rng = pcg(7);
    let mut p = [0.0; D];
    for _ in 0..k_batches {
        let mut stats = MomentStats::dense(&mut mean, &mut c).unwrap();
        let mut diag = MomentStats::diagonal(&mut mean_d, &mut c_d).unwrap();
        for _ in 0..s {
            mass.sample(&mut rng, &mut p);
            stats.push(&p).unwrap();
            diag.push(&p).unwrap();
        }
        dense_step
            .update(&mut stats, &mut inv, &mut scratch)
            .unwrap();
        diag_step.update(&mut diag, &mut inv_diag, &mut []).unwrap();
    }
    let nk = (s * k_batches) as f64;
    let c_dense = (s as f64 - 1.0) / (s as f64 - D as f64 - 2.0);
    for i in 0..D {
        for j in 0..D {
            let pij = p_true[i * D + j];
            let se = ((p_true[i * D + i] * p_true[j * D + j] + pij * pij) / nk).sqrt();
            let err = inv[i * D + j] - c_dense * pij;
            assert!(
                err.abs() < 5.0 * se,
                "dense ({i},{j}): {} vs {} (se {se})",
                inv[i * D + j],
                c_dense * pij
            );
        }
        // Diagonal: estimates 1/M_ii (not P_ii), variance 2/(M_ii² S) per batch.
        let c_diag = (s as f64 - 1.0) / (s as f64 - 3.0);
        let target = c_diag / m_true[i * D + i];
        let se = (2.0 / nk).sqrt() / m_true[i * D + i];
        assert!(
            (inv_diag[i] - target).abs() < 5.0 * se,
            "diag {i}: {} vs {target}",
            inv_diag[i]
        );
    }
}

#[test]
fn poisson_offsets_have_the_printed_law() {
    let (nu, dexp) = (2.0f64, 0.5f64);
    let (reps, s_max) = (4000usize, 10u64);
    let mut rng = pcg(11);
    let mut offsets = PoissonOffsets::new(nu, dexp).unwrap();
    let mut sum_t = vec![0.0f64; s_max as usize];
    for _ in 0..reps {
        offsets.reset();
        let mut prev = 0u64;
        for s in 0..s_max as usize {
            let t = offsets.next_offset(&mut rng);
            assert!(t > prev, "strictly increasing");
            prev = t;
            sum_t[s] += t as f64;
        }
        assert_eq!(offsets.drawn(), s_max);
        assert_eq!(offsets.current(), prev);
    }
    // E t_s = s + ν Σ_{i ≤ s} iᵈ, Var t_s = ν Σ_{i ≤ s} iᵈ (independent Poissons).
    let mut lam = 0.0;
    for s in 1..=s_max as usize {
        lam += nu * (s as f64).powf(dexp);
        let mean = sum_t[s - 1] / reps as f64;
        let se = (lam / reps as f64).sqrt();
        assert!(
            (mean - (s as f64 + lam)).abs() < 5.0 * se,
            "t_{s}: {mean} vs {}",
            s as f64 + lam
        );
    }
    let d = PoissonOffsets::<f32>::with_defaults();
    assert_eq!(d, PoissonOffsets::new(1.0f32, 1.0).unwrap());
}

#[test]
fn sample_size_rule_and_test_functions() {
    assert!((z_critical(0.05f64) - 1.959_964).abs() < 5e-4);
    assert!((z_critical(0.25f32) - 1.150_349).abs() < 5e-4);
    assert!((z_critical(0.01f64) - 2.575_829).abs() < 5e-4);
    assert_eq!(z_critical(0.0f64), 0.0);

    let (p, minv_p, grad) = ([1.0f64, -2.0], [0.5, -1.0], [3.0, 4.0]);
    let mut q = [0.0; 4];
    hmc_test_function(&minv_p, &grad, &mut q).unwrap();
    assert_eq!(q, [0.5, -1.0, 3.0, 4.0]);
    let mut q5 = [0.0; 5];
    sgnht_test_function(&p, &minv_p, &grad, 2.0, &mut q5).unwrap();
    assert_eq!(q5, [0.5, -1.0, 4.0, 2.0, 2.5]);
    assert!(sgnht_test_function(&p, &minv_p, &grad, 2.0, &mut q).is_err());

    // m_S and v_S as printed (biased variance), interval m_S ± z v_S.
    let (mut m, mut v) = ([0.0f64; 1], [0.0f64; 1]);
    let mut ts = TestStats::new(&mut m, &mut v).unwrap();
    for x in [1.0, 2.0, 3.0, 4.0] {
        ts.push(&[x]).unwrap();
    }
    assert_eq!(ts.mean(), &[2.5]);
    assert!((ts.variance(0) - 1.25).abs() < 1e-15);
    let z = 1.0;
    assert!(ts.contains(&[2.5 + 1.25], z));
    assert!(!ts.contains(&[2.5 + 1.26], z));

    let mut fixed = SampleSize::fixed(300).unwrap();
    assert_eq!(fixed.after_m_step(&ts, &[2.5]), 300);
    let mut adaptive = SampleSize::adaptive(300, 0.25f64, 3).unwrap();
    assert_eq!(adaptive.after_m_step(&ts, &[100.0]), 300); // outside: unchanged
    assert_eq!(adaptive.after_m_step(&ts, &[2.5]), 400); // inside: S + S/S_I
    assert_eq!(adaptive.after_m_step(&ts, &[2.5]), 534); // 400 + ⌈400/3⌉
    assert_eq!(adaptive.after_m_step(&ts, &[2.5]), 712); // 534 + 534/3, no rounding
    // A rule built by hand with S_I = 0 (the variants' fields are public) is refused by
    // `validate` (so by `McemParams::validate` and `Mcem::new`); were it used anyway, it grows as
    // with S_I = 1 instead of dividing by zero.
    let mut hand_built = SampleSize::Adaptive {
        count: 300,
        growth: 0,
        z: 1.0f64,
    };
    assert_eq!(
        hand_built.validate(),
        Err(ParamError::OutOfRange(Param::SampleGrowth))
    );
    assert_eq!(hand_built.after_m_step(&ts, &[2.5]), 600);
    let mut huge = SampleSize::Adaptive {
        count: u64::MAX - 1,
        growth: 1,
        z: 1.0f64,
    };
    assert_eq!(huge.after_m_step(&ts, &[2.5]), u64::MAX); // saturates
}

/// The post-M-step q from the subsample means equals the subsample mean of q evaluated sample by
/// sample with the new M⁻¹ (dense and diagonal), for both test functions.
#[test]
fn post_m_step_q_equals_the_mean_of_reevaluated_q() {
    const D: usize = 3;
    let mut rng = pcg(21);
    let states: Vec<(Vec<f64>, Vec<f64>, f64)> = (0..25)
        .map(|_| {
            let p = (0..D).map(|_| standard_normal_f64(&mut rng)).collect();
            let g = (0..D)
                .map(|_| 3.0 * standard_normal_f64(&mut rng))
                .collect();
            (p, g, standard_normal_f64(&mut rng))
        })
        .collect();
    let dense_inv = [2.0, 0.3, -0.1, 0.3, 1.0, 0.2, -0.1, 0.2, 0.5];
    let diag_inv = [2.0, 1.0, 0.5];
    for (inv, dense_stats) in [
        (&dense_inv[..], true),
        (&diag_inv[..], true),
        (&diag_inv[..], false),
    ] {
        let (mut a, mut b, mut c) = ([0.0; D], [0.0; D], [0.0; D]);
        let mut pp = vec![0.0; if dense_stats { D * D } else { D }];
        let mut post = PostMStepQ::new(&mut a, &mut b, &mut c, &mut pp).unwrap();
        let (mut ref_h, mut ref_s) = ([0.0; 2 * D], [0.0; 2 * D + 1]);
        for (p, g, xi) in &states {
            post.push(p, g, *xi).unwrap();
            let mut mp = [0.0; D];
            for i in 0..D {
                mp[i] = if inv.len() == D {
                    inv[i] * p[i]
                } else {
                    (0..D).map(|j| inv[i * D + j] * p[j]).sum()
                };
            }
            let (mut qh, mut qs) = ([0.0; 2 * D], [0.0; 2 * D + 1]);
            hmc_test_function(&mp, g, &mut qh).unwrap();
            sgnht_test_function(p, &mp, g, *xi, &mut qs).unwrap();
            for k in 0..2 * D {
                ref_h[k] += qh[k] / states.len() as f64;
            }
            for k in 0..2 * D + 1 {
                ref_s[k] += qs[k] / states.len() as f64;
            }
        }
        assert_eq!(post.count(), 25);
        let (mut h, mut s) = ([0.0; 2 * D], [0.0; 2 * D + 1]);
        post.hmc(inv, &mut h).unwrap();
        post.sgnht(inv, &mut s).unwrap();
        for k in 0..2 * D {
            assert!(
                (h[k] - ref_h[k]).abs() < 1e-12,
                "hmc {k}: {} vs {}",
                h[k],
                ref_h[k]
            );
        }
        for k in 0..2 * D + 1 {
            assert!(
                (s[k] - ref_s[k]).abs() < 1e-12,
                "sgnht {k}: {} vs {}",
                s[k],
                ref_s[k]
            );
        }
    }
    // A dense M⁻¹ needs dense second moments for the quadratic term.
    let (mut a, mut b, mut c, mut pp) = ([0.0; D], [0.0; D], [0.0; D], [0.0; D]);
    let post = PostMStepQ::new(&mut a, &mut b, &mut c, &mut pp).unwrap();
    assert!(post.sgnht(&dense_inv, &mut [0.0; 2 * D + 1]).is_err());
    assert!(post.hmc(&dense_inv, &mut [0.0; 2 * D]).is_ok());
}
