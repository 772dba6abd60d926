//! Scale-adapted SGHMC (Springenberg et al. 2016): `GradientScale` learns E[∇U²] = 1/σ² on a Gaussian, the frozen mass M⁻¹ = V̂^{−1/2} keeps SGHMC exact, and it mixes the flat coordinate faster.

use crate::common::{Gaussian, Moments, Z, assert_moments, run};
use rand_pcg::Pcg64;
use sgmcmc::adapt::GradientScale;
use sgmcmc::prelude::*;
use sgmcmc::sampler::Checkpoint;

fn target() -> Gaussian {
    Gaussian {
        mean: vec![0.5, -1.0, 2.0],
        var: vec![0.04, 1.0, 25.0],
    }
}

const H: f64 = 0.02;
const FRICTION: f64 = 0.05;

/// The burn-in through the wrapper with w = 1/t throughout (weight 10⁻⁹: a plain mean),
/// recording every gradient's square; returns V̂ and the batch-means mean and SE of g².
fn learn(
    theta: &mut [f64],
    p: &mut [f64],
    work: &mut [f64],
    v: &mut [f64],
) -> (Vec<f64>, Vec<(f64, f64)>) {
    let target = target();
    let n = target.mean.len();
    let mut squares: Vec<Vec<f64>> = vec![vec![]; n];
    let model = |t: &[f64], g: &mut [f64]| {
        target.gradient(t, g);
        for i in 0..n {
            squares[i].push(g[i] * g[i]);
        }
    };
    let mut scaled = GradientScale::new(model, 1e-9, v).unwrap();
    let params = SghmcParams::new(H)
        .with_friction(FRICTION)
        .with_integrator(Integrator::Splitting);
    let mut sghmc = Sghmc::new(params, theta, p, work).unwrap();
    sghmc
        .run(&mut scaled, &mut Pcg64::new(3, 4), 100_000, &mut ())
        .unwrap();
    scaled.freeze();
    let v_hat = scaled.square_mean().to_vec();
    // The wrapper's M⁻¹ is 1/(λ + √V̂), what `sample` uses.
    let mut inv_mass = [0.0; 3];
    scaled.inverse_mass(1e-8, &mut inv_mass).unwrap();
    for i in 0..n {
        assert_eq!(inv_mass[i], 1.0 / (1e-8 + v_hat[i].sqrt()));
    }
    let summary = squares
        .iter()
        .map(|s| {
            let batches = 50;
            let per = s.len() / batches;
            let means: Vec<f64> = s
                .chunks(per)
                .take(batches)
                .map(|c| c.iter().sum::<f64>() / per as f64)
                .collect();
            let m = means.iter().sum::<f64>() / batches as f64;
            let var = means.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (batches - 1) as f64;
            (
                s.iter().sum::<f64>() / s.len() as f64,
                (var / batches as f64).sqrt(),
            )
        })
        .collect();
    (v_hat, summary)
}

/// V̂ is the mean of the gradients' squares (to rounding), and that mean is E[g²] = 1/σ² within
/// `Z` batch-means SE (splitting SGHMC's O(h²) bias at h = 0.02 is ~10⁻² of σ² for the stiffest
/// coordinate, below its SE here).
#[test]
fn the_square_mean_learns_the_inverse_variances() {
    let (mut theta, mut p, mut work, mut v) = ([0.5, -1.0, 2.0], [0.0; 3], [0.0; 6], [0.0; 3]);
    let (v_hat, summary) = learn(&mut theta, &mut p, &mut work, &mut v);
    let target = target();
    for i in 0..3 {
        let (mean, se) = summary[i];
        assert!(
            (v_hat[i] - mean).abs() <= 1e-9 * mean,
            "{i}: V̂ {} vs mean {mean}",
            v_hat[i]
        );
        let expected = 1.0 / target.var[i];
        assert!(
            (mean - expected).abs() <= Z * se,
            "{i}: E[g²] {mean} vs 1/σ² {expected} ({} SE)",
            (mean - expected) / se
        );
    }
}

fn sample(mass: bool, seed: u64) -> Moments {
    let target = target();
    let (mut theta, mut p, mut work, mut v) = ([0.5, -1.0, 2.0], [0.0; 3], [0.0; 6], [0.0; 3]);
    let mut inv_mass = [1.0; 3];
    if mass {
        let (v_hat, _) = learn(&mut theta, &mut p, &mut work, &mut v);
        for i in 0..3 {
            inv_mass[i] = 1.0 / (1e-8 + v_hat[i].sqrt());
        }
    }
    let params = SghmcParams::new(H)
        .with_friction(FRICTION)
        .with_integrator(Integrator::Splitting);
    let (mut theta, mut p) = ([0.5, -1.0, 2.0], [0.0; 3]);
    let mut sghmc = Sghmc::new(params, &mut theta, &mut p, &mut work).unwrap();
    sghmc
        .set_mass(MassBuffer::diagonal(&mut inv_mass).unwrap())
        .unwrap();
    let mut model = |t: &[f64], g: &mut [f64]| target.gradient(t, g);
    run(
        &mut sghmc,
        &mut model,
        &mut Pcg64::new(seed.into(), 9),
        &target,
        5000,
        200,
        10_000,
    )
    .unwrap()
}

/// With the learned mass the chain's moments are N(μ, σ²)'s within `Z` SE; and the mass makes
/// the flattest coordinate's variance mix faster, at the same h and A.
///
/// For a Gaussian coordinate of SGHMC with mass m⁻¹ and friction A (the damping is A·m⁻¹), the
/// integrated autocorrelation time of θ is Aσ² whatever the mass, so the mean's standard error
/// does not change (measured: ratio 1.04). The variance's does: in the underdamped regime (A =
/// 0.05 here) the energy relaxes at the damping rate A·m⁻¹, and M⁻¹ = V̂^{−1/2} ≈ σ = 5 makes it
/// 5 times faster, so the SE of the variance estimate shrinks by √5 ≈ 2.24 (measured 2.09; with
/// batches of 4000 steps, 4 relaxation times of the identity chain, it read 1.84, so the batch
/// length still costs a little). Each SE comes from 200 batch means, with a relative error of
/// 1/√398 = 5 %, so the ratio's is ≈ 7 %: the bound 1.6 is 3 of those below √5, and 8 above
/// the ratio of 1 that an ineffective mass would give.
#[test]
fn the_frozen_scale_mass_is_exact_and_mixes_the_flat_coordinate_faster() {
    let target = target();
    let identity = sample(false, 21);
    let adapted = sample(true, 21);
    assert_moments("scale-adapted SGHMC", &adapted, &target);
    let ratio = identity.var_se[2] / adapted.var_se[2];
    assert!(
        ratio > 1.6,
        "SE of the flat coordinate's variance: identity {} adapted {} (ratio {ratio})",
        identity.var_se[2],
        adapted.var_se[2]
    );
}

#[test]
fn settings_and_buffers_are_checked() {
    let model = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t);
    for w in [0.0, 1.5, f64::NAN] {
        assert!(GradientScale::new(model, w, &mut [0.0; 2]).is_err());
    }
    assert!(GradientScale::new(model, 0.5, &mut []).is_err());
    let mut v = [0.0; 2];
    let mut s = GradientScale::new(model, 0.5, &mut v).unwrap();
    let mut g = [0.0; 2];
    s.gradient(&[2.0, f64::NAN], &mut g);
    // A non-finite entry leaves its V̂ᵢ alone; the other is the first square.
    assert_eq!(s.square_mean(), &[4.0, 0.0]);
    let mut out = [7.0; 2];
    assert!(s.inverse_mass(0.0, &mut out).is_err());
    assert!(s.inverse_mass(1.0, &mut [0.0; 3]).is_err());
    s.inverse_mass(1.0, &mut out).unwrap();
    assert_eq!(out, [1.0 / 3.0, 1.0]);
    s.freeze();
    s.gradient(&[5.0, 5.0], &mut g);
    assert_eq!((s.square_mean(), s.updates()), (&[4.0, 0.0][..], 1));
}

/// V̂, its update count and the frozen flag come back from a checkpoint: the resumed wrapper's
/// V̂ follows the original's bit for bit, and a negative V̂ is refused.
#[test]
fn a_checkpoint_resumes_bit_for_bit() {
    let model = |t: &[f64], g: &mut [f64]| {
        for i in 0..2 {
            g[i] = t[i] * (i + 1) as f64;
        }
    };
    let mut v = [0.0; 2];
    let mut s = GradientScale::new(model, 0.1, &mut v).unwrap();
    let mut g = [0.0; 2];
    for k in 0..7 {
        s.gradient(&[k as f64, 1.0 - k as f64], &mut g);
    }
    let mut saved = vec![0.0; s.checkpoint_len()];
    let state = s.save(&mut saved).unwrap();
    for k in 7..30 {
        s.gradient(&[k as f64, 1.0 / (1.0 + k as f64)], &mut g);
    }
    let mut v2 = [0.0; 2];
    let mut r = GradientScale::new(model, 0.1, &mut v2).unwrap();
    assert!(r.restore(&state, &[-1.0, 0.0]).is_err());
    r.restore(&state, &saved).unwrap();
    assert_eq!(r.updates(), 7);
    for k in 7..30 {
        r.gradient(&[k as f64, 1.0 / (1.0 + k as f64)], &mut g);
    }
    assert_eq!(
        (r.square_mean(), r.updates()),
        (s.square_mean(), s.updates())
    );
}
