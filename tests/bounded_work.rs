//! Bounded work per step: every sampler's step terminates with a generator stuck at a constant word (the ziggurat's and every rejection loop's attempts are bounded).

use crate::common;

use common::ConstRng;
use sgmcmc::kinetic::MonomialGamma;
use sgmcmc::prelude::*;

/// Words that pin the ziggurat to a wedge or the tail, or the uniforms to their ends.
const WORDS: [u64; 5] = [
    0,
    u64::MAX,
    0x8000_0000_0000_0000,
    0x5555_5555_5555_5555,
    0xff,
];
const N: usize = 3;
const STEPS: usize = 3;

fn model() -> impl Energy<f64> {
    Model::new(
        |t: &[f64], g: &mut [f64]| g.copy_from_slice(t),
        |t: &[f64]| 0.5 * t.iter().map(|x| x * x).sum::<f64>(),
    )
}

/// Steps `STEPS` times; each step must return (its result, Ok or Err, does not matter here).
fn drive<S: Sampler<f64, M>, M>(s: &mut S, m: &mut M, word: u64) {
    let mut rng = ConstRng(word);
    for _ in 0..STEPS {
        let _ = s.step(m, &mut rng);
    }
}

#[test]
fn every_sampler_terminates_with_a_stuck_generator() {
    for word in WORDS {
        let mut m = model();
        let (mut theta, mut p, mut work) = (vec![0.5; N], vec![0.1; N], vec![0.0; 4 * N]);
        let mut s = Sgld::new(SgldParams::new(0.01), &mut theta, &mut work[..2 * N]).unwrap();
        drive(&mut s, &mut m, word);
        for scheme in [Integrator::Euler, Integrator::Splitting] {
            let prm = SghmcParams::new(0.01).with_integrator(scheme);
            let mut s = Sghmc::new(prm, &mut theta, &mut p, &mut work[..2 * N]).unwrap();
            drive(&mut s, &mut m, word);
            let prm = SgnhtParams::new(0.01).with_integrator(scheme);
            let mut xi = prm.initial_thermostat();
            let mut s = Sgnht::resume(
                prm,
                &mut theta,
                &mut p,
                std::slice::from_mut(&mut xi),
                &mut work[..2 * N],
            )
            .unwrap();
            drive(&mut s, &mut m, word);
            let mut xis = vec![prm.initial_thermostat(); N];
            let mut s =
                MSgnht::resume(prm, &mut theta, &mut p, &mut xis, &mut work[..3 * N]).unwrap();
            drive(&mut s, &mut m, word);
            // SGMGT redrawing p and ξ at every step, with sharply softened kinetic energies
            // (c = 0.05: eq. 12 at a = 2 samples by rejection, acceptance ≥ e^{−2/c} = e^{−40},
            // so every draw runs into MonomialGamma::MAX_PROPOSALS; at a = 1 it draws directly
            // from two Gamma variates) and with the stiff one (Gamma draws).
            for kinetic in [
                MonomialGamma::softened(2.0, 0.05),
                MonomialGamma::softened(1.0, 0.05),
                MonomialGamma::stiff(2.0),
            ] {
                let prm = SgmgtParams::sgmgt_d(0.01)
                    .with_kinetic(kinetic)
                    .with_resampling_steps(1, 1)
                    .with_integrator(scheme);
                let mut xis = vec![0.0; N];
                let mut s =
                    Sgmgt::resume(prm, &mut theta, &mut p, &mut xis, &mut work[..3 * N]).unwrap();
                drive(&mut s, &mut m, word);
            }
        }
        let prm = HmcParams::new(0.1).with_leapfrog_steps(5);
        let mut s = Hmc::new(prm, &mut theta, &mut p, &mut work).unwrap();
        drive(&mut s, &mut m, word);
    }
}
