//! pSGLD (Li et al. 2016): the Γ correction makes a θ-dependent preconditioner exact, its absence gives the predicted bias; errors, checkpoints and settings.

use crate::common::{Gaussian, Moments, Z, assert_moments, run};
use rand_pcg::Pcg64;
use sgmcmc::prelude::*;

/// A diagonal Gaussian whose model also gives its Hessian diagonal 1/σᵢ².
struct Curved(Gaussian);

impl<T: Real> Gradient<T> for Curved {
    fn gradient(&mut self, theta: &[T], grad: &mut [T]) {
        self.0.gradient(theta, grad)
    }
    fn hessian_diagonal(&mut self, _theta: &[T], diagonal: &mut [T]) -> bool {
        for (d, v) in diagonal.iter_mut().zip(&self.0.var) {
            *d = T::from_f64(1.0 / v);
        }
        true
    }
}

fn target() -> Gaussian {
    Gaussian {
        mean: vec![1.0, -2.0, 0.5],
        var: vec![1.0, 0.5, 0.25],
    }
}

/// α = 0 and λ = 1: G(θ) = diag(1 / (1 + |θᵢ − μᵢ|/σᵢ²)) is a function of θ alone.
fn sample<T: Real>(correction: bool, seed: u64) -> Moments {
    let target = target();
    let params = PsgldParams::new(T::from_f64(0.004))
        .with_decay(T::ZERO)
        .with_offset(T::ONE)
        .with_correction(correction);
    let n = target.mean.len();
    let mut theta: Vec<T> = target.mean.iter().map(|&m| T::from_f64(m)).collect();
    let mut work = vec![T::ZERO; Lengths::psgld(n).work];
    let mut psgld = Psgld::new(params, &mut theta, &mut work).unwrap();
    let mut model = Curved(target.clone());
    let mut rng = Pcg64::new(seed.into(), 7);
    run(
        &mut psgld, &mut model, &mut rng, &target, 20_000, 50, 20_000,
    )
    .unwrap()
}

/// With Γ, Euler–Maruyama for dθ = (−G∇U + Γ) dt + √(2G) dW, whose stationary law is e^{−U}
/// (Ma, Chen & Fox 2015): the moments of N(μ, σ²) within `Z` batch-means standard errors (the
/// O(h) discretisation bias at h = 0.004 is far below them: it is checked by the biased case).
fn corrected_is_exact<T: Real>(seed: u64) {
    let m = sample::<T>(true, seed);
    assert_moments("pSGLD with Γ", &m, &target());
}

#[test]
fn the_gamma_correction_makes_a_position_dependent_preconditioner_exact_f64() {
    corrected_is_exact::<f64>(1);
}

#[test]
fn the_gamma_correction_makes_a_position_dependent_preconditioner_exact_f32() {
    corrected_is_exact::<f32>(2);
}

/// Without Γ the stationary law solves G p′ = −G U′ p − G′ p, i.e. p ∝ e^{−U}/G: for coordinate
/// i with x = (θ − μ)/σ, p(x) ∝ φ(x)(λ + |x|/σ), so (E|x| = c = √(2/π), E|x|³ = 2c)
/// E(θ − μ)² = σ² (λ + 2c/σ) / (λ + c/σ): 1.444σ² for σ = λ = 1. The run must give that
/// within `Z` SE, and be more than `Z` SE from σ² (the bias is what Γ removes).
#[test]
fn without_the_gamma_correction_the_bias_is_the_predicted_one() {
    let target = target();
    let m = sample::<f64>(false, 3);
    let c = (2.0 / std::f64::consts::PI).sqrt();
    for i in 0..3 {
        let sd = target.var[i].sqrt();
        let predicted = target.var[i] * (1.0 + 2.0 * c / sd) / (1.0 + c / sd);
        let z = (m.var[i] - predicted) / m.var_se[i];
        assert!(
            z.abs() <= Z,
            "coordinate {i}: variance {:.4} vs predicted {predicted:.4} ({z:.1} SE)",
            m.var[i]
        );
        let z_exact = (m.var[i] - target.var[i]) / m.var_se[i];
        assert!(
            z_exact.abs() > Z,
            "coordinate {i}: the bias is not resolved ({z_exact:.1} SE)"
        );
        assert!((m.mean[i] - target.mean[i]).abs() <= Z * m.mean_se[i]);
    }
}

/// The running mean square is RMSprop's: after one step from V = 0 it is (1 − α) g².
#[test]
fn the_mean_square_is_rmsprops() {
    let (mut theta, mut work) = ([2.0f64, -3.0], [0.0; 10]);
    let params = PsgldParams::new(1e-3).with_decay(0.9);
    let mut psgld = Psgld::new(params, &mut theta, &mut work).unwrap();
    let mut model = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t);
    psgld.step(&mut model, &mut Pcg64::new(1, 1)).unwrap();
    let v = psgld.square_mean();
    assert!((v[0] - 0.1 * 4.0).abs() < 1e-15 && (v[1] - 0.1 * 9.0).abs() < 1e-15);
    assert_eq!(psgld.iteration(), 1);
}

/// Failed steps leave θ and V bit for bit (the state contract), each with its own error.
#[test]
fn refused_steps_leave_theta_and_the_mean_square() {
    let (mut theta, mut work) = ([1.0f64, 2.0], [0.0; 10]);
    let params = PsgldParams::new(1e-2).with_correction(true);
    let mut psgld = Psgld::new(params, &mut theta, &mut work).unwrap();
    let mut curved = Curved(Gaussian::standard(2));
    let mut rng = Pcg64::new(5, 6);
    psgld.run(&mut curved, &mut rng, 10, &mut ()).unwrap();
    let (theta0, v0) = (psgld.position().to_vec(), psgld.square_mean().to_vec());
    let unchanged = |p: &Psgld<'_, f64>| {
        assert_eq!(p.position(), &theta0[..]);
        assert_eq!(p.square_mean(), &v0[..]);
        assert_eq!(p.iteration(), 10);
    };
    // A closure has no Hessian diagonal.
    let mut closure = |t: &[f64], g: &mut [f64]| g.copy_from_slice(t);
    assert_eq!(
        psgld.step(&mut closure, &mut rng),
        Err(StepError::NoHessianDiagonal)
    );
    unchanged(&psgld);
    // A NaN gradient.
    let mut nan = |_: &[f64], g: &mut [f64]| g.fill(f64::NAN);
    assert_eq!(
        psgld.step(&mut nan, &mut rng),
        Err(StepError::NonFiniteGradient { index: 0 })
    );
    unchanged(&psgld);
    // A non-finite Hessian diagonal.
    struct BadCurvature;
    impl Gradient<f64> for BadCurvature {
        fn gradient(&mut self, t: &[f64], g: &mut [f64]) {
            g.copy_from_slice(t)
        }
        fn hessian_diagonal(&mut self, _: &[f64], d: &mut [f64]) -> bool {
            d[0] = 1.0;
            d[1] = f64::INFINITY;
            true
        }
    }
    assert_eq!(
        psgld.step(&mut BadCurvature, &mut rng),
        Err(StepError::NonFiniteHessian { index: 1 })
    );
    unchanged(&psgld);
    // A finite gradient whose square overflows: V would be +∞.
    let mut huge = |_: &[f64], g: &mut [f64]| g.fill(1e200);
    let params = PsgldParams::new(1e-2);
    let (mut theta, mut work) = ([1.0f64, 2.0], [0.0; 10]);
    let mut plain = Psgld::new(params, &mut theta, &mut work).unwrap();
    plain.run(&mut closure, &mut rng, 10, &mut ()).unwrap();
    let (theta1, v1) = (plain.position().to_vec(), plain.square_mean().to_vec());
    assert_eq!(
        plain.step(&mut huge, &mut rng),
        Err(StepError::NonFiniteState {
            buffer: Buffer::Preconditioner,
            index: 0
        })
    );
    assert_eq!(plain.position(), &theta1[..]);
    assert_eq!(plain.square_mean(), &v1[..]);
}

/// A checkpoint holds θ, V and t: resuming repeats the chain bit for bit; a negative V is refused.
#[test]
fn a_checkpoint_resumes_bit_for_bit() {
    let params = PsgldParams::with_schedule(StepSchedule::polynomial(0.01f64, 10.0, 0.55).unwrap())
        .with_correction(true);
    let (mut theta, mut work) = ([0.3f64, -0.7, 1.1], [0.0; 15]);
    let mut psgld = Psgld::new(params, &mut theta, &mut work).unwrap();
    let mut model = Curved(target());
    let mut rng = Pcg64::new(9, 9);
    psgld.run(&mut model, &mut rng, 40, &mut ()).unwrap();
    let mut saved = vec![0.0; psgld.checkpoint_len()];
    let state = psgld.save(&mut saved).unwrap();
    let rng_then = rng.clone();
    psgld.run(&mut model, &mut rng, 40, &mut ()).unwrap();
    let (theta_ref, v_ref) = (psgld.position().to_vec(), psgld.square_mean().to_vec());

    let (mut theta2, mut work2) = ([0.0f64; 3], [0.0; 15]);
    let mut resumed = Psgld::new(params, &mut theta2, &mut work2).unwrap();
    let mut bad = saved.clone();
    bad[4] = -1.0;
    assert_eq!(
        resumed.restore(&state, &bad),
        Err(LayoutError::InvalidValue {
            buffer: Buffer::Checkpoint,
            index: 4
        })
    );
    resumed.restore(&state, &saved).unwrap();
    let mut rng = rng_then;
    resumed.run(&mut model, &mut rng, 40, &mut ()).unwrap();
    assert_eq!(resumed.position(), &theta_ref[..]);
    assert_eq!(resumed.square_mean(), &v_ref[..]);
}

#[test]
fn settings_are_checked() {
    let mut theta = [0.0f64; 2];
    let build =
        |p: PsgldParams<f64>, theta: &mut [f64]| Psgld::new(p, theta, &mut [0.0; 10]).map(|_| ());
    for (params, param) in [
        (PsgldParams::new(0.0), Param::StepSize),
        (
            PsgldParams::new(0.1).with_decay(1.0),
            Param::PreconditionerDecay,
        ),
        (
            PsgldParams::new(0.1).with_decay(-0.1),
            Param::PreconditionerDecay,
        ),
        (
            PsgldParams::new(0.1).with_offset(0.0),
            Param::PreconditionerOffset,
        ),
    ] {
        assert_eq!(
            build(params, &mut theta),
            Err(Error::Param(ParamError::OutOfRange(param)))
        );
    }
    assert_eq!(
        build(PsgldParams::new(0.1).with_decay(f64::NAN), &mut theta),
        Err(Error::Param(ParamError::NonFinite(
            Param::PreconditionerDecay
        )))
    );
    assert_eq!(Lengths::psgld(2).work, 10);
    assert!(matches!(
        Psgld::new(PsgldParams::new(0.1), &mut theta, &mut [0.0; 9]),
        Err(Error::Layout(LayoutError::LengthMismatch { .. }))
    ));
}
