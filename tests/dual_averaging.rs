//! HMC step-size adaptation by dual averaging: the mean acceptance after the warm-up reaches its target on 10-d Gaussians; bad settings are named; a sampler without an acceptance stops the warm-up.

use rand_pcg::Pcg64;
use sgmcmc::adapt::{AdaptationStop, DualAveraging};
use sgmcmc::prelude::*;
use std::ops::ControlFlow;

/// N(0, diag σ²) in 10 dimensions.
struct DiagonalGaussian([f64; 10]);

impl Gradient<f64> for DiagonalGaussian {
    fn gradient(&mut self, t: &[f64], g: &mut [f64]) {
        for ((g, t), v) in g.iter_mut().zip(t).zip(self.0) {
            *g = t / v;
        }
    }
}

impl Energy<f64> for DiagonalGaussian {
    fn energy(&mut self, t: &[f64]) -> f64 {
        t.iter().zip(self.0).map(|(t, v)| 0.5 * t * t / v).sum()
    }
}

/// The warm-up as an observer: [`DualAveraging`] sets each next h; this records the acceptance
/// of the proposals from `from` on.
struct Recording<'a> {
    tuner: &'a mut DualAveraging<f64>,
    from: u64,
    sum: f64,
}

impl<S: StepSize<f64>> Observer<S, f64> for Recording<'_> {
    type Stop = AdaptationStop;
    fn observe(&mut self, step: u64, s: &mut S, stats: &StepStats<f64>) -> ControlFlow<Self::Stop> {
        if step >= self.from {
            self.sum += stats.acceptance.unwrap_or(f64::NAN);
        }
        self.tuner.observe(step, s, stats)
    }
}

/// The 10-d Gaussians of the other HMC tests: variances 0.1 … 10, log-spaced (condition number
/// 100, tests/stationary.rs), and the isotropic one. For δ = 0.65 and 0.8, a warm-up of 2000
/// proposals (L = 10) drives the mean acceptance of its last 1000 to δ within 0.05, as dual
/// averaging promises (H̄ₜ → 0 means the running mean of δ − αₜ vanishes). The Monte Carlo error of
/// that mean is below 0.01 (α ∈ [0, 1], sd ≤ 0.5, and the autocorrelation of α dies within a few
/// proposals: 0.5/√(1000/4) ≈ 0.03 at worst, 0.01 as measured), so 0.05 is the tolerance
/// with the estimate's noise inside it. Sampling afterwards at the fixed h̄ can accept more or
/// less often than δ (printed here, and in the note): near the leapfrog's stability limit the
/// acceptance is steep in h, and the warm-up's h fluctuates around h̄.
#[test]
fn the_warm_up_reaches_the_target_acceptance() {
    let iso = [1.0; 10];
    let mut stiff = [0.0; 10];
    for (i, v) in stiff.iter_mut().enumerate() {
        *v = 10f64.powf(-1.0 + 2.0 * i as f64 / 9.0);
    }
    for (name, var) in [("variances 0.1-10", stiff), ("isotropic", iso)] {
        for (k, target) in [0.65, 0.8].into_iter().enumerate() {
            let mut model = DiagonalGaussian(var);
            let (mut theta, mut p, mut work) = ([1.0f64; 10], [0.0; 10], [0.0; 40]);
            let params = HmcParams::new(0.5).with_leapfrog_steps(10);
            let mut hmc = Hmc::new(params, &mut theta, &mut p, &mut work).unwrap();
            let mut rng = Pcg64::new(7 + k as u128, 11);
            let mut tuner = DualAveraging::new(0.5)
                .unwrap()
                .with_target(target)
                .unwrap();
            let mut recording = Recording {
                tuner: &mut tuner,
                from: 1000,
                sum: 0.0,
            };
            let flow = hmc.run(&mut model, &mut rng, 2000, &mut recording).unwrap();
            assert_eq!(flow, ControlFlow::Continue(()));
            let late = recording.sum / 1000.0;
            assert_eq!(tuner.count(), 2000);
            let h = tuner.final_step_size();
            hmc.set_step_size(h).unwrap();
            let mut sum = 0.0;
            hmc.run_with(&mut model, &mut rng, 4000, |_, _, s| {
                sum += s.acceptance.unwrap();
            })
            .unwrap();
            println!(
                "{name}, δ = {target}: warm-up's last 1000 accept {late:.3}; h̄ = {h:.4} accepts {:.3}",
                sum / 4000.0
            );
            assert!(
                (late - target).abs() <= 0.05,
                "{name}, δ = {target}: mean acceptance {late} in the warm-up's last 1000"
            );
        }
    }
}

#[test]
fn bad_settings_are_named() {
    use sgmcmc::{Param, ParamError};
    assert_eq!(
        DualAveraging::new(0.0f64).unwrap_err(),
        ParamError::OutOfRange(Param::StepSize)
    );
    assert_eq!(
        DualAveraging::new(f64::NAN).unwrap_err(),
        ParamError::NonFinite(Param::StepSize)
    );
    let da = DualAveraging::new(0.1f64).unwrap();
    for bad in [0.0, 1.0, -0.2] {
        assert_eq!(
            da.with_target(bad).unwrap_err(),
            ParamError::OutOfRange(Param::TargetAcceptance)
        );
    }
    assert_eq!(
        da.with_schedule(0.0, 10.0, 0.75).unwrap_err(),
        ParamError::OutOfRange(Param::AdaptationRate)
    );
    assert_eq!(
        da.with_schedule(0.05, -1.0, 0.75).unwrap_err(),
        ParamError::OutOfRange(Param::AdaptationOffset)
    );
    assert_eq!(
        da.with_schedule(0.05, 10.0, 0.5).unwrap_err(),
        ParamError::OutOfRange(Param::AdaptationDecay)
    );
    assert_eq!(
        da.with_schedule(0.05, f64::INFINITY, 0.75).unwrap_err(),
        ParamError::NonFinite(Param::AdaptationOffset)
    );
    assert!(da.with_schedule(0.05, 0.0, 1.0).is_ok());
}

/// SGHMC reports no acceptance: the warm-up stops at its first step, h unchanged. Every
/// proposal rejected drives h down, every one accepted drives it up, and h stays finite.
#[test]
fn the_warm_up_needs_an_acceptance_and_moves_h_the_right_way() {
    let (mut theta, mut p, mut work) = ([1.0f64; 3], [0.0; 3], [0.0; 6]);
    let mut s = Sghmc::new(SghmcParams::new(0.1), &mut theta, &mut p, &mut work).unwrap();
    let mut tuner = DualAveraging::new(0.1).unwrap();
    let flow = s
        .run(
            &mut |t: &[f64], g: &mut [f64]| g.copy_from_slice(t),
            &mut Pcg64::new(1, 1),
            100,
            &mut tuner,
        )
        .unwrap();
    assert_eq!(flow, ControlFlow::Break(AdaptationStop::NoAcceptance));
    assert_eq!(s.step_size(), 0.1);
    assert_eq!(tuner.count(), 0);

    let (mut down, mut up) = (
        DualAveraging::new(1.0f32).unwrap(),
        DualAveraging::new(1.0f32).unwrap(),
    );
    for _ in 0..100_000 {
        down.update(0.0);
        up.update(f32::NAN.min(1.0)); // NaN counts as 0 too
        up.update(1.0);
    }
    assert!(down.final_step_size() < 1e-3 && down.final_step_size() > 0.0);
    assert!(down.step_size().is_finite() && up.step_size().is_finite());
}

/// A step size the sampler refuses stops the warm-up with the tuner as it was before the
/// proposal (its update is committed only once the sampler took the new h).
#[test]
fn a_refused_step_size_leaves_the_tuner_unchanged() {
    struct Refusing;
    impl sgmcmc::sampler::StepSize<f64> for Refusing {
        fn step_size(&self) -> f64 {
            0.1
        }
        fn set_step_size(&mut self, _: f64) -> Result<(), ParamError> {
            Err(ParamError::OutOfRange(Param::StepSize))
        }
    }
    let mut tuner = DualAveraging::new(0.1).unwrap();
    let before = tuner;
    let stats = StepStats {
        step_size: 0.1,
        kinetic_temperature: None,
        thermostat: None,
        acceptance: Some(0.3),
        accepted: Some(true),
    };
    let flow = sgmcmc::sampler::Observer::observe(&mut tuner, 0, &mut Refusing, &stats);
    assert_eq!(
        flow,
        std::ops::ControlFlow::Break(AdaptationStop::StepSize(ParamError::OutOfRange(
            Param::StepSize
        )))
    );
    assert_eq!(tuner, before);
}
