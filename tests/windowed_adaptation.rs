//! Stan's windowed warm-up (`adapt::WindowedAdaptation`): Stan's window schedule, the learned inverse mass against the target's variances, the step size it buys, and its refusals.
#![allow(clippy::needless_range_loop)] // the d = 10 coordinates, indexed as the formulas are

use rand_pcg::Pcg64;
use sgmcmc::LinalgError;
use sgmcmc::adapt::{AdaptationStop, DualAveraging, WindowedAdaptation};
use sgmcmc::kinetic::AdaptiveMass;
use sgmcmc::prelude::*;
use sgmcmc::sampler::{Checkpoint, Observer};
use std::ops::ControlFlow;

const D: usize = 10;

/// Variances log-spaced from 0.01 to 100.
fn variances() -> [f64; D] {
    std::array::from_fn(|i| 10f64.powf(-2.0 + 4.0 * i as f64 / (D - 1) as f64))
}

/// N(0, diag(`variances()`)).
struct Target([f64; D]);

impl Gradient<f64> for Target {
    fn gradient(&mut self, t: &[f64], g: &mut [f64]) {
        for i in 0..D {
            g[i] = t[i] / self.0[i];
        }
    }
}

impl Energy<f64> for Target {
    fn energy(&mut self, t: &[f64]) -> f64 {
        (0..D).map(|i| 0.5 * t[i] * t[i] / self.0[i]).sum()
    }
}

fn model() -> Target {
    Target(variances())
}

/// The proposals after which M⁻¹ changed, over a warm-up of `w` (stepping by hand).
fn mass_updates(w: u64) -> Vec<u64> {
    let mut m = model();
    let (mut theta, mut p, mut work, mut inv) = ([0.1; D], [0.0; D], [0.0; 4 * D], [1.0; D]);
    let params = HmcParams::new(0.05).with_leapfrog_steps(10);
    let mut hmc = Hmc::new(params, &mut theta, &mut p, &mut work).unwrap();
    hmc.set_mass(MassBuffer::diagonal(&mut inv).unwrap())
        .unwrap();
    let mut aw = [0.0; 3 * D];
    let mut warm_up = WindowedAdaptation::new(w, 0.05, &mut aw).unwrap();
    let mut rng = Pcg64::new(3, 3);
    let mut updates = vec![];
    for k in 1..=w + 20 {
        let stats = hmc.step(&mut m, &mut rng).unwrap();
        let before = hmc.mass().inverse_slice().to_vec();
        assert!(warm_up.observe(k, &mut hmc, &stats).is_continue());
        if hmc.mass().inverse_slice() != &before[..] {
            updates.push(k);
        }
    }
    assert_eq!(warm_up.proposals(), w);
    updates
}

/// Stan's default 1000-proposal warm-up updates the metric at the ends of its windows of 25,
/// 50, 100, 200 and 500 proposals after the 75 of the initial buffer: 100, 150, 250, 450 and
/// 950 (the window after 450 would be 400, and the one after it, 800, would not fit before 950,
/// so the 400 stretches to 500); a 100-proposal one falls back to buffers of 15 and
/// 10 and one window ending at 90; one of 10 has no window.
#[test]
fn the_windows_are_stans() {
    assert_eq!(mass_updates(1000), [100, 150, 250, 450, 950]);
    assert_eq!(mass_updates(100), [90]);
    // Below 20 proposals Stan adapts the step size only.
    assert!(mass_updates(10).is_empty());
}

/// A 1000-proposal warm-up from the identity mass, then the learned M⁻¹ and h̄.
fn warm_up(seed: u64, windows: bool) -> ([f64; D], f64) {
    let mut m = model();
    let (mut theta, mut p, mut work, mut inv) = ([0.1; D], [0.0; D], [0.0; 4 * D], [1.0; D]);
    let params = HmcParams::new(0.05).with_leapfrog_steps(10);
    let mut hmc = Hmc::new(params, &mut theta, &mut p, &mut work).unwrap();
    hmc.set_mass(MassBuffer::diagonal(&mut inv).unwrap())
        .unwrap();
    let mut rng = Pcg64::new(seed.into(), 11);
    let h = if windows {
        let mut aw = [0.0; 3 * D];
        let mut adaptation = WindowedAdaptation::new(1000, 0.05, &mut aw).unwrap();
        let flow = hmc.run(&mut m, &mut rng, 1000, &mut adaptation).unwrap();
        assert!(flow.is_continue());
        adaptation.step_size_tuner().final_step_size()
    } else {
        let mut tuner = DualAveraging::new(0.05).unwrap();
        let flow = hmc.run(&mut m, &mut rng, 1000, &mut tuner).unwrap();
        assert!(flow.is_continue());
        // (Plain dual averaging leaves h_t in force; the windowed warm-up sets h̄ itself.)
        hmc.set_step_size(tuner.final_step_size()).unwrap();
        tuner.final_step_size()
    };
    assert_eq!(hmc.step_size(), h);
    let inv: [f64; D] = hmc.mass().inverse_slice().try_into().unwrap();
    (inv, h)
}

/// On N(0, diag(0.01 … 100)) the last window's M⁻¹ is the variances: each ratio M⁻¹ᵢ/σᵢ² is a
/// sample variance of the window's 500 draws over the truth (shrunk by 500/505), whose relative
/// SE is √(2τ/500) = 6.3 % for draws with an integrated autocorrelation time τ ≤ 1 and 11 % for
/// τ = 3; the bound |ln ratio| < 0.4 is about 4 of the latter. The step size this buys is the
/// point: with the identity mass, dual averaging must fit the stiffest coordinate (σ = 0.1);
/// with the learned mass every coordinate has scale ≈ 1. Measured: ratios 0.74–1.18, and h̄
/// 0.67 against 0.14 (4.7×) and 0.66 against 0.14 (4.8×) for the two seeds; the bound 3 on the
/// step ratio leaves room for dual averaging's own noise, and a mass that learned nothing gives
/// 1.
#[test]
fn the_learned_mass_is_the_variances_and_buys_a_larger_step() {
    let var = variances();
    for seed in [1, 2] {
        let (inv, h) = warm_up(seed, true);
        for i in 0..D {
            let ratio = inv[i] / var[i];
            assert!(
                ratio.ln().abs() < 0.4,
                "seed {seed}, coordinate {i}: M⁻¹ {} vs σ² {} (ratio {ratio})",
                inv[i],
                var[i]
            );
        }
        let (identity, h_identity) = warm_up(seed, false);
        assert_eq!(identity, [1.0; D]);
        assert!(
            h > 3.0 * h_identity,
            "seed {seed}: h̄ {h} with the learned mass, {h_identity} with the identity"
        );
    }
}

/// A mass it cannot set (a fixed diagonal) stops the warm-up at the first window, with the
/// sampler's mass as it was; a sampler without acceptance (SGHMC) stops it at once.
#[test]
fn refusals() {
    let mut m = model();
    let (mut theta, mut p, mut work) = ([0.1; D], [0.0; D], [0.0; 4 * D]);
    let fixed = [1.0; D];
    let params = HmcParams::new(0.05).with_leapfrog_steps(10);
    let mut hmc = Hmc::new(params, &mut theta, &mut p, &mut work).unwrap();
    hmc.set_mass(MassBuffer::fixed_diagonal(&fixed).unwrap())
        .unwrap();
    let mut aw = [0.0; 3 * D];
    let mut adaptation = WindowedAdaptation::new(1000, 0.05, &mut aw).unwrap();
    let mut rng = Pcg64::new(1, 1);
    // 99 proposals go through; the 100th ends the first window, and its refusal leaves the
    // adaptation as after the 99th (the state contract): the same checkpoint, bit for bit.
    let flow = hmc.run(&mut m, &mut rng, 99, &mut adaptation).unwrap();
    assert!(flow.is_continue());
    let mut before = vec![0.0; adaptation.checkpoint_len()];
    let scalars = adaptation.save(&mut before).unwrap();
    let flow = hmc.run(&mut m, &mut rng, 1000, &mut adaptation).unwrap();
    assert_eq!(
        flow,
        ControlFlow::Break(AdaptationStop::Mass(LinalgError::ReadOnly))
    );
    assert_eq!(adaptation.proposals(), 99);
    let mut after = vec![0.0; adaptation.checkpoint_len()];
    assert_eq!(adaptation.save(&mut after).unwrap(), scalars);
    assert_eq!(before, after);
    assert_eq!(hmc.mass().inverse_slice(), &[1.0; D]);
    // The identity mass is refused the same way.
    let (mut theta, mut p, mut work) = ([0.1; D], [0.0; D], [0.0; 4 * D]);
    let mut hmc = Hmc::new(params, &mut theta, &mut p, &mut work).unwrap();
    let mut aw = [0.0; 3 * D];
    let mut adaptation = WindowedAdaptation::new(1000, 0.05, &mut aw).unwrap();
    let flow = hmc.run(&mut m, &mut rng, 1000, &mut adaptation).unwrap();
    assert_eq!(
        flow,
        ControlFlow::Break(AdaptationStop::Mass(LinalgError::ReadOnly))
    );
    assert_eq!(adaptation.proposals(), 99);

    assert!(WindowedAdaptation::<f64>::new(1000, 0.0, &mut [0.0; 6]).is_err());
    assert!(WindowedAdaptation::<f64>::new(1000, 0.1, &mut [0.0; 5]).is_err());
    let mut aw = [0.0; 6];
    let w = WindowedAdaptation::<f64>::new(1000, 0.1, &mut aw).unwrap();
    assert_eq!(
        w.with_windows(75, 50, 0).err(),
        Some(ParamError::OutOfRange(Param::AdaptationWindow))
    );
}

/// A warm-up checkpointed in the middle of its third window (proposal 230 of 1000: windows end
/// at 100, 150 and 250) and resumed into a new sampler and a new adaptation continues bit for
/// bit: the same M⁻¹, step size and position after the 1000 proposals.
#[test]
fn a_checkpoint_resumes_the_warm_up_bit_for_bit() {
    let run = |split: Option<u64>| {
        let mut m = model();
        let (mut theta, mut p, mut work, mut inv) = ([0.1; D], [0.0; D], [0.0; 4 * D], [1.0; D]);
        let params = HmcParams::new(0.05).with_leapfrog_steps(10);
        let mut hmc = Hmc::new(params, &mut theta, &mut p, &mut work).unwrap();
        hmc.set_mass(MassBuffer::diagonal(&mut inv).unwrap())
            .unwrap();
        let mut aw = [0.0; 3 * D];
        let mut adaptation = WindowedAdaptation::new(1000, 0.05, &mut aw).unwrap();
        let mut rng = Pcg64::new(5, 5);
        let Some(k) = split else {
            assert!(
                hmc.run(&mut m, &mut rng, 1000, &mut adaptation)
                    .unwrap()
                    .is_continue()
            );
            return (
                hmc.position().to_vec(),
                hmc.mass().inverse_slice().to_vec(),
                hmc.step_size(),
            );
        };
        assert!(
            hmc.run(&mut m, &mut rng, k, &mut adaptation)
                .unwrap()
                .is_continue()
        );
        let mut sampler_data = vec![0.0; hmc.checkpoint_len()];
        let sampler_state = hmc.save(&mut sampler_data).unwrap();
        let mut adaptation_data = vec![0.0; adaptation.checkpoint_len()];
        let adaptation_state = adaptation.save(&mut adaptation_data).unwrap();
        // (The mass and h are the caller's and the settings', not the checkpoint's.)
        let h = hmc.step_size();
        let learned: [f64; D] = hmc.mass().inverse_slice().try_into().unwrap();
        // Resume over new buffers (the old sampler and adaptation are shadowed below).
        let (mut theta, mut p, mut work, mut inv) = ([0.0; D], [0.0; D], [0.0; 4 * D], learned);
        let mut hmc = Hmc::new(params, &mut theta, &mut p, &mut work).unwrap();
        hmc.set_mass(MassBuffer::diagonal(&mut inv).unwrap())
            .unwrap();
        hmc.restore(&sampler_state, &sampler_data).unwrap();
        hmc.set_step_size(h).unwrap();
        let mut aw = [0.0; 3 * D];
        let mut adaptation = WindowedAdaptation::new(1000, 0.05, &mut aw).unwrap();
        adaptation
            .restore(&adaptation_state, &adaptation_data)
            .unwrap();
        assert!(
            hmc.run(&mut m, &mut rng, 1000 - k, &mut adaptation)
                .unwrap()
                .is_continue()
        );
        (
            hmc.position().to_vec(),
            hmc.mass().inverse_slice().to_vec(),
            hmc.step_size(),
        )
    };
    let whole = run(None);
    assert_eq!(run(Some(230)), whole);
    assert_eq!(run(Some(100)), whole);
    // A negative sum of squares is refused, with nothing changed.
    let mut aw = [0.0; 3 * D];
    let mut adaptation = WindowedAdaptation::new(1000, 0.05, &mut aw).unwrap();
    let mut data = vec![0.0; adaptation.checkpoint_len()];
    let state = adaptation.save(&mut data).unwrap();
    data[D] = -1.0;
    assert!(adaptation.restore(&state, &data).is_err());
}
